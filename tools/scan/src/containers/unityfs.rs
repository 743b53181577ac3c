//! UnityFS bundles: the header, the blocks info (raw, LZMA or LZ4), the data blocks (raw, LZMA
//! or LZ4, each decoded to its stated size under the layer cap), and the directory's nodes, which
//! become members (serialized files, resources).

use std::borrow::Cow;

use super::unity::cursor::Cursor;
use super::{ContainerReader, Found, Inner, Sniff};
use crate::error::{ReadError, ReadResult, WarnKind};

/// UnityFS signature.
pub const MAGIC: &[u8; 8] = b"UnityFS\0";

/// The registry's UnityFS reader: every directory node, scanned again as `//path`.
pub const READER: ContainerReader = ContainerReader {
    name: "unityfs",
    sniff: Sniff::Magic(0, MAGIC),
    read: |i| read(i.bytes, i.cap),
};

/// Compression of a block or of the blocks info (low six bits of its flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// Stored.
    None,
    /// LZMA: 5-byte properties, then the raw stream.
    Lzma,
    /// LZ4 or LZ4HC block.
    Lz4,
}

impl Codec {
    fn of(flags: u32, at: usize) -> ReadResult<Codec> {
        match flags & 0x3F {
            0 => Ok(Codec::None),
            1 => Ok(Codec::Lzma),
            2 | 3 => Ok(Codec::Lz4),
            c => Err(ReadError::new(
                WarnKind::DecodeFailed,
                at,
                format!("compression {c} (LZHAM?) not read"),
            )),
        }
    }
}

/// Decodes `src` (`codec`) to exactly `size` bytes.
pub fn decode(src: &[u8], codec: Codec, size: u64, at: usize) -> ReadResult<Vec<u8>> {
    let fail = |d: String| ReadError::new(WarnKind::DecodeFailed, at, d);
    let n = size as usize;
    match codec {
        Codec::None => {
            if src.len() != n {
                return Err(fail(format!(
                    "stored block of {:#x} bytes states {size:#x}",
                    src.len()
                )));
            }
            Ok(src.to_vec())
        }
        Codec::Lz4 => {
            if size > (src.len() as u64).saturating_mul(255).saturating_add(16) {
                return Err(ReadError::new(
                    WarnKind::SizeCap,
                    at,
                    format!("{:#x} LZ4 bytes cannot give {size:#x}", src.len()),
                ));
            }
            let mut out = vec![0u8; n];
            match lz4_flex::block::decompress_into(src, &mut out) {
                Ok(k) if k == n => Ok(out),
                Ok(k) => Err(fail(format!("LZ4 gives {k:#x} bytes, {size:#x} stated"))),
                Err(e) => Err(fail(format!("LZ4: {e}"))),
            }
        }
        Codec::Lzma => {
            let mut out = Bounded {
                v: Vec::with_capacity(n.min(src.len().saturating_mul(64)).min(64 << 20)),
                max: n,
            };
            let opts = lzma_rs::decompress::Options {
                unpacked_size: lzma_rs::decompress::UnpackedSize::UseProvided(Some(size)),
                // The dictionary never needs to be larger than the output.
                memlimit: Some(n.max(4096)),
                allow_incomplete: false,
            };
            lzma_rs::lzma_decompress_with_options(&mut &src[..], &mut out, &opts)
                .map_err(|e| fail(format!("LZMA: {e}")))?;
            if out.v.len() != n {
                return Err(fail(format!(
                    "LZMA gives {:#x} bytes, {size:#x} stated",
                    out.v.len()
                )));
            }
            Ok(out.v)
        }
    }
}

/// A writer that refuses bytes past `max`.
struct Bounded {
    v: Vec<u8>,
    max: usize,
}

impl std::io::Write for Bounded {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        if self.v.len() + b.len() > self.max {
            return Err(std::io::Error::other("more output than stated"));
        }
        self.v.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Whether flag 0x200 means padding before the blocks (2020.3.34+, 2021.3.2+, 2022.1.1+);
/// before, it meant Unity-China encryption.
fn padding_flag(engine: &str) -> bool {
    let v: Vec<u32> = engine
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .take(3)
        .map(|s| s.parse().unwrap_or(0))
        .collect();
    let v = (
        v.first().copied().unwrap_or(0),
        v.get(1).copied().unwrap_or(0),
        v.get(2).copied().unwrap_or(0),
    );
    v >= (2023, 0, 0)
        || (v >= (2022, 1, 1))
        || (v.0 == 2021 && v >= (2021, 3, 2))
        || (v.0 == 2020 && v >= (2020, 3, 34))
}

/// One directory node: its path and byte range in the decoded data.
#[derive(Debug, Clone)]
struct Node {
    path: String,
    start: u64,
    size: u64,
}

/// Reads the bundle `b`, decoding at most `cap` bytes of data.
pub fn read(b: &[u8], cap: u64) -> ReadResult<Found<'static>> {
    let mut c = Cursor::new(b, 8, true);
    let format = c.u32("format version")?;
    c.cstr("player version")?;
    let engine = c.cstr("engine version")?;
    c.u64("bundle size")?;
    let info_c = c.u32("blocks-info size")? as u64;
    let info_u = c.u32("blocks-info raw size")? as u64;
    let flags_at = c.pos;
    let flags = c.u32("flags")?;
    if format >= 7 {
        c.align(16);
    }
    if flags & 0x200 != 0 && !padding_flag(&engine) {
        return Err(ReadError::new(
            WarnKind::BadHeader,
            flags_at,
            "flag 0x200: Unity-China encrypted bundle, not read",
        ));
    }
    let info_at = if flags & 0x80 != 0 {
        (b.len() as u64).saturating_sub(info_c)
    } else {
        c.pos as u64
    };
    let r = crate::bytes::range(b, info_at, info_c, "blocks info")?;
    if info_u > cap.min(64 << 20) {
        return Err(ReadError::new(
            WarnKind::SizeCap,
            flags_at - 4,
            format!("blocks info of {info_u:#x} bytes"),
        ));
    }
    let info = decode(&b[r.clone()], Codec::of(flags, flags_at)?, info_u, r.start)?;
    let mut data_at = if flags & 0x80 != 0 { c.pos } else { r.end };
    if flags & 0x200 != 0 {
        data_at = data_at.saturating_add(15) & !15;
    }
    // The blocks info is big endian; its errors name offsets inside it.
    let inner = |e: ReadError| {
        let what = format!("blocks info +{:#x}", e.offset);
        e.within(r.start, what)
    };
    let mut ic = Cursor::new(&info, 16, true);
    let nb = ic.count(10, "block count").map_err(inner)?;
    let mut blocks = Vec::with_capacity(nb);
    let mut total = 0u64;
    for _ in 0..nb {
        let u = ic.u32("block size").map_err(inner)? as u64;
        let cs = ic.u32("block stored size").map_err(inner)? as u64;
        let f = ic.u16("block flags").map_err(inner)? as u32;
        total += u;
        blocks.push((u, cs, f));
    }
    if total > cap {
        return Err(ReadError::new(
            WarnKind::SizeCap,
            r.start,
            format!("blocks decode to {total:#x} bytes, limit {cap:#x}"),
        ));
    }
    let nn = ic.count(21, "node count").map_err(inner)?;
    let mut nodes = Vec::with_capacity(nn);
    let mut problems = Vec::new();
    let mut sum = 0u64;
    for _ in 0..nn {
        let start = ic.u64("node offset").map_err(inner)?;
        let size = ic.u64("node size").map_err(inner)?;
        ic.u32("node flags").map_err(inner)?;
        let path = ic.cstr("node path").map_err(inner)?;
        if start.checked_add(size).is_none_or(|e| e > total) || sum + size > cap {
            problems.push(ReadError::new(WarnKind::BadHeader, r.start, format!("node {path}: {size:#x} bytes at {start:#x} outside the {total:#x} decoded (or over the cap)")));
            continue;
        }
        sum += size;
        nodes.push(Node { path, start, size });
    }
    let mut out: Vec<Vec<u8>> = nodes
        .iter()
        .map(|n| Vec::with_capacity(n.size as usize))
        .collect();
    let (mut pos, mut at) = (0u64, data_at);
    for (k, &(u, cs, f)) in blocks.iter().enumerate() {
        let block = crate::bytes::range(b, at as u64, cs, "data block").and_then(|src| {
            at = src.end;
            decode(&b[src.clone()], Codec::of(f, src.start)?, u, src.start)
        });
        let block = match block {
            Ok(v) => v,
            Err(e) => {
                // The nodes decoded so far are still read.
                problems.push(ReadError {
                    detail: format!("block {k}: {}", e.detail),
                    ..e
                });
                break;
            }
        };
        for (n, o) in nodes.iter().zip(out.iter_mut()) {
            let (s, e) = (n.start.max(pos), (n.start + n.size).min(pos + u));
            if s < e {
                o.extend_from_slice(&block[(s - pos) as usize..(e - pos) as usize]);
            }
        }
        pos += u;
    }
    let inner = nodes
        .into_iter()
        .zip(out)
        .filter(|(n, v)| v.len() as u64 == n.size)
        .map(|(n, v)| Inner {
            member: Some(n.path),
            bytes: Cow::Owned(v),
        })
        .collect();
    Ok(Found::Inner { inner, problems })
}
