//! RE Engine PAKs (`KPKA`, Monster Hunter Rise): the entries whose first 4 decoded bytes are
//! `SDF\0`, inflated (raw deflate or zstd) and scanned again as `//hash_<path hash>`.
//!
//! A PAK names its entries by path hash only. Patch PAKs (`re_chunk_000.pak.patch_001.pak`, …)
//! hold newer copies of paths of the base PAK; [`superseded`] works out, across the files of a
//! title, which copies a newer PAK replaces, and the scan of a PAK skips those
//! ([`Input::superseded`](super::Input::superseded)).

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use ::zstd::zstd_safe::{DCtx, DParameter, InBuffer, OutBuffer, ResetDirective};
use flate2::{Decompress, FlushDecompress, Status};
use rayon::prelude::*;

use super::{ContainerReader, Found, Inner, Input, Sniff};
use crate::bytes::{need_u32, need_u64, range, u16le};
use crate::error::{ReadError, ReadResult, WarnKind};

/// PAK magic.
pub const MAGIC: &[u8; 4] = b"KPKA";

/// The magic of the entries the reader inflates (shader definitions, [`super::sdf`]).
pub const WANTED: &[u8; 4] = b"SDF\0";

/// The registry's KPKA reader: every `SDF\0` entry not superseded by a newer PAK, in table order.
pub const READER: ContainerReader = ContainerReader {
    name: "kpka",
    sniff: Sniff::Magic(0, MAGIC),
    read,
};

/// Path hashes (`upper << 32 | lower`) of one PAK whose newest copy lies in another PAK.
pub type Superseded = HashSet<u64>;

/// How an entry's bytes are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// As they are (also encrypted resources, which no peek takes for SDF).
    Stored,
    /// Raw deflate (no zlib header).
    Deflate,
    /// One or more zstd frames.
    Zstd,
}

impl Method {
    /// The method of a v4 attribute word: low 4 bits 1 deflate, 2 zstd; with any bit from 16
    /// up set the entry is a resource kept as it is.
    pub fn of(attributes: u64) -> Method {
        match (attributes & 0xF, attributes >> 16) {
            (1, 0) => Method::Deflate,
            (2, 0) => Method::Zstd,
            _ => Method::Stored,
        }
    }
}

/// One entry of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Path hash, `upper << 32 | lower` (the hashes of the upper- and lower-case path).
    pub hash: u64,
    /// Offset of the stored bytes in the PAK.
    pub offset: u64,
    /// Stored size.
    pub stored: u64,
    /// Decoded size.
    pub size: u64,
    /// How the bytes are stored.
    pub method: Method,
    /// Offset of the entry in the PAK (where its errors point).
    pub at: usize,
}

/// Entry sizes by major version: v4 (48 bytes, minor 0 / 1), v2 (24 bytes, stored only).
const ENTRY_SIZE: [(u8, usize); 2] = [(4, 48), (2, 24)];

/// Reads the header and entry table of the PAK at the start of `b`.
pub fn entries(b: &[u8]) -> ReadResult<Vec<Entry>> {
    range(b, 0, 16, "KPKA header")?;
    let major = b[4];
    let esize = ENTRY_SIZE
        .iter()
        .find(|(m, _)| *m == major)
        .map(|&(_, s)| s)
        .ok_or_else(|| {
            ReadError::new(
                WarnKind::BadHeader,
                4,
                format!("PAK version {major}.{} (read: 2, 4)", b[5]),
            )
        })?;
    let features = u16le(b, 6).unwrap_or(0);
    if features != 0 {
        // 8: the table is encrypted (a key blob follows it); other bits change the layout.
        return Err(ReadError::new(
            WarnKind::BadHeader,
            6,
            format!("feature flags {features:#x} (encrypted or unknown table layout)"),
        ));
    }
    let count = need_u32(b, 8, "file count")? as u64;
    range(b, 16, count.saturating_mul(esize as u64), "entry table")?;
    let mut out = Vec::with_capacity(count as usize);
    for i in 0..count as usize {
        let at = 16 + i * esize;
        let u = |o: usize| need_u64(b, at + o, "entry field");
        let e = if esize == 48 {
            Entry {
                hash: (need_u32(b, at + 4, "path hash")? as u64) << 32
                    | need_u32(b, at, "path hash")? as u64,
                offset: u(8)?,
                stored: u(0x10)?,
                size: u(0x18)?,
                method: Method::of(u(0x20)?),
                at,
            }
        } else {
            let size = u(8)?;
            Entry {
                hash: u(0x10)?,
                offset: u(0)?,
                stored: size,
                size,
                method: Method::Stored,
                at,
            }
        };
        out.push(e);
    }
    Ok(out)
}

/// The number in a patch PAK's name (`….patch_003.pak` → 3); 0 for a base PAK.
pub fn patch_number(name: &str) -> u32 {
    name.strip_suffix(".pak")
        .and_then(|s| s.rsplit_once(".patch_"))
        .and_then(|(_, n)| n.parse().ok())
        .unwrap_or(0)
}

/// For the PAKs of one title, each given as its entries' path hashes in the order newest-copy
/// ranking puts them (oldest first), the hashes of each PAK that a later PAK also holds.
pub fn superseded(paks: &[Vec<u64>]) -> Vec<Superseded> {
    let mut newest: HashMap<u64, usize> = HashMap::new();
    for (p, hashes) in paks.iter().enumerate() {
        for &h in hashes {
            newest.insert(h, p);
        }
    }
    paks.iter()
        .enumerate()
        .map(|(p, hashes)| {
            hashes
                .iter()
                .copied()
                .filter(|h| newest.get(h) != Some(&p))
                .collect()
        })
        .collect()
}

/// An SDF entry found by the peek: its stored bytes and how to decode them.
struct Wanted<'b> {
    entry: Entry,
    data: &'b [u8],
}

fn read<'b>(i: &Input<'b>) -> ReadResult<Found<'b>> {
    let all = entries(i.bytes)?;
    let skip = |e: &Entry| i.superseded.is_some_and(|s| s.contains(&e.hash));
    // Peek at every entry (in parallel: a PAK holds many thousands).
    let peeked: Vec<Option<ReadResult<Wanted<'b>>>> = all
        .par_iter()
        .filter(|e| !skip(e))
        .map(|e| peek(i.bytes, e))
        .collect();
    let mut problems = Vec::new();
    let mut wanted = Vec::new();
    // Each decoded entry is at most the cap; together they are at most the file's budget,
    // taken in table order (deterministic).
    let mut left = i.budget;
    for w in peeked.into_iter().flatten() {
        match w {
            Err(e) => problems.push(e),
            Ok(w) if w.entry.method != Method::Stored && w.entry.size > left.min(i.cap) => {
                problems.push(ReadError::new(
                    WarnKind::SizeCap,
                    w.entry.at + 0x18,
                    format!(
                        "entry {}: {:#x} bytes decoded, limit {:#x} ({left:#x} left of the file's budget)",
                        name(&w.entry),
                        w.entry.size,
                        i.cap
                    ),
                ));
            }
            Ok(w) => {
                if w.entry.method != Method::Stored {
                    left -= w.entry.size;
                }
                wanted.push(w);
            }
        }
    }
    let decoded: Vec<ReadResult<Inner<'b>>> = wanted.into_par_iter().map(decode).collect();
    let mut inner = Vec::with_capacity(decoded.len());
    for d in decoded {
        match d {
            Ok(m) => inner.push(m),
            Err(e) => problems.push(e),
        }
    }
    Ok(Found::Inner { inner, problems })
}

/// The member name of an entry.
fn name(e: &Entry) -> String {
    format!("hash_{:016x}", e.hash)
}

/// The entry's stored bytes if its first 4 decoded bytes are `SDF\0`; `None` for other entries.
fn peek<'b>(b: &'b [u8], e: &Entry) -> Option<ReadResult<Wanted<'b>>> {
    let r = match range(b, e.offset, e.stored, "entry data") {
        Ok(r) => r,
        Err(x) => {
            return Some(Err(ReadError::new(
                x.kind,
                e.at + 8,
                format!("entry {}: {}", name(e), x.detail),
            )))
        }
    };
    let data = &b[r];
    if e.method != Method::Stored && e.size < WANTED.len() as u64 {
        return None; // too short to be a definition: not even peeked at
    }
    let head = match e.method {
        Method::Stored => Ok(data.get(..4).map(|h| h.to_vec()).unwrap_or_default()),
        Method::Deflate => inflate(data, 4, false),
        Method::Zstd => zstd_head(data),
    };
    match head {
        Ok(h) if h == WANTED => Some(Ok(Wanted { entry: *e, data })),
        Ok(_) => None,
        Err(x) => Some(Err(ReadError::new(
            x.kind,
            e.offset as usize + x.offset as usize,
            format!("entry {}: {}", name(e), x.detail),
        ))),
    }
}

/// Decodes a wanted entry to exactly its stated size.
fn decode(w: Wanted<'_>) -> ReadResult<Inner<'_>> {
    let e = &w.entry;
    let bytes = match e.method {
        Method::Stored => Ok(Cow::Borrowed(w.data)),
        Method::Deflate => inflate(w.data, e.size as usize, true).map(Cow::Owned),
        Method::Zstd => super::zstd::decode(w.data, e.size).and_then(|v| {
            if v.len() as u64 == e.size {
                Ok(Cow::Owned(v))
            } else {
                Err(ReadError::new(
                    WarnKind::DecodeFailed,
                    w.data.len(),
                    format!(
                        "decodes to {:#x} bytes, entry states {:#x}",
                        v.len(),
                        e.size
                    ),
                ))
            }
        }),
    };
    bytes
        .map(|bytes| Inner {
            member: Some(name(e)),
            bytes,
        })
        .map_err(|x| {
            ReadError::new(
                x.kind,
                e.offset as usize + x.offset as usize,
                format!("entry {}: {}", name(e), x.detail),
            )
        })
}

thread_local! {
    /// One raw-deflate state per worker thread, reused across entries.
    static INFLATE: RefCell<Decompress> = RefCell::new(Decompress::new(false));
    /// One zstd context per worker thread for peeks.
    static PEEK: RefCell<DCtx<'static>> = RefCell::new(DCtx::create());
}

/// Inflates the raw deflate stream `data`: its first `n` bytes (fewer if it is shorter), or,
/// with `exact`, all of it, which must be exactly `n` bytes. Never writes more than `n + 1`.
/// Error offsets are inside `data`.
pub fn inflate(data: &[u8], n: usize, exact: bool) -> ReadResult<Vec<u8>> {
    INFLATE.with_borrow_mut(|d| {
        d.reset(false);
        let mut out = Vec::with_capacity(n + usize::from(exact));
        loop {
            let before = (d.total_in(), out.len());
            let input = &data[(d.total_in() as usize).min(data.len())..];
            let status = d
                .decompress_vec(input, &mut out, FlushDecompress::Finish)
                .map_err(|x| {
                    ReadError::new(WarnKind::DecodeFailed, d.total_in() as usize, x.to_string())
                })?;
            let full = out.len() == out.capacity();
            if !exact && (full || status == Status::StreamEnd) {
                return Ok(out);
            }
            if out.len() > n {
                return Err(ReadError::new(
                    WarnKind::SizeCap,
                    d.total_in() as usize,
                    format!("decodes to more than the {n:#x} bytes the entry states"),
                ));
            }
            if status == Status::StreamEnd {
                if out.len() == n {
                    return Ok(out);
                }
                return Err(ReadError::new(
                    WarnKind::DecodeFailed,
                    d.total_in() as usize,
                    format!("decodes to {:#x} bytes, entry states {n:#x}", out.len()),
                ));
            }
            if before == (d.total_in(), out.len()) {
                return Err(ReadError::new(
                    WarnKind::Truncated,
                    data.len(),
                    format!("deflate stream ends after {:#x} output bytes", out.len()),
                ));
            }
        }
    })
}

/// The first 4 decoded bytes of the zstd frames `data` (fewer if they are shorter).
fn zstd_head(data: &[u8]) -> ReadResult<Vec<u8>> {
    let zerr = |at: usize, c: usize| {
        ReadError::new(
            WarnKind::DecodeFailed,
            at,
            ::zstd::zstd_safe::get_error_name(c).to_string(),
        )
    };
    PEEK.with_borrow_mut(|d| {
        d.reset(ResetDirective::SessionAndParameters)
            .map_err(|c| zerr(0, c))?;
        d.set_parameter(DParameter::WindowLogMax(27))
            .map_err(|c| zerr(0, c))?;
        let mut head = [0u8; 4];
        let mut out = OutBuffer::around(&mut head[..]);
        let mut input = InBuffer::around(data);
        loop {
            let before = (out.pos(), input.pos());
            let hint = d
                .decompress_stream(&mut out, &mut input)
                .map_err(|c| zerr(input.pos(), c))?;
            if out.pos() == 4 || hint == 0 || before == (out.pos(), input.pos()) {
                break;
            }
        }
        let n = out.pos();
        Ok(head[..n].to_vec())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_numbers_and_superseded_copies() {
        assert_eq!(patch_number("re_chunk_000.pak"), 0);
        assert_eq!(patch_number("re_chunk_000.pak.patch_001.pak"), 1);
        assert_eq!(patch_number("dir/re_chunk_000.pak.patch_012.pak"), 12);
        assert_eq!(patch_number("x.patch_zz.pak"), 0);
        let s = superseded(&[vec![1, 2, 3], vec![2], vec![3, 4]]);
        assert_eq!(s[0], Superseded::from([2, 3]));
        assert!(s[1].is_empty() && s[2].is_empty());
    }

    #[test]
    fn methods_and_headers() {
        assert_eq!(Method::of(1), Method::Deflate);
        assert_eq!(Method::of(2), Method::Zstd);
        assert_eq!(Method::of(0x1_0001), Method::Stored);
        assert_eq!(Method::of(0), Method::Stored);
        let mut h = b"KPKA\x04\0\x08\0\0\0\0\0\0\0\0\0".to_vec();
        assert_eq!(entries(&h).unwrap_err().offset, 6);
        h[6] = 0;
        h[8] = 1; // one entry, no table
        assert_eq!(entries(&h).unwrap_err().kind, WarnKind::Truncated);
        h[4] = 3;
        assert_eq!(entries(&h).unwrap_err().offset, 4);
    }

    #[test]
    fn inflate_of_garbage_and_empty_input() {
        assert!(inflate(&[0xFF; 8], 16, true).is_err());
        assert_eq!(inflate(&[], 4, true).unwrap_err().kind, WarnKind::Truncated);
        assert!(zstd_head(b"nope").is_err());
    }
}
