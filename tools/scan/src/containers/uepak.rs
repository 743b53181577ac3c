//! Unreal Engine pak files (`*.pak`, versions 3–11): the footer at the end, the index (v ≥ 10:
//! encoded entries and the full directory index), every member as an inner buffer. Stored
//! members are sub-ranges of the pak; Oodle-compressed members are decoded block by block.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::{oodle, ContainerReader, Found, Inner, Input, Sniff};
use crate::bytes::{range, u32le, u64le};
use crate::error::{ReadError, ReadResult, WarnKind};

/// Footer magic (u32).
pub const MAGIC: u32 = 0x5A6F_12E1;

/// Versions read: 3 (compression blocks, encryption flag) to 11.
pub const VERSIONS: std::ops::RangeInclusive<u32> = 3..=11;

/// Footer bytes from the magic on without the compression-method names: magic, version, index
/// offset, index size, index SHA-1.
const FOOTER_FIXED: usize = 44;

/// What follows the fixed footer bytes, by version: (extra bytes, method names, frozen byte).
/// v8 wrote 4 or 5 names, v9 a frozen-index byte before them.
const FOOTER_TAILS: [(usize, usize, bool); 4] = [
    (160, 5, false),
    (161, 5, true),
    (128, 4, false),
    (0, 0, false),
];

/// Version from which compression-block offsets are relative to the entry (`RelativeChunkOffsets`).
const RELATIVE_BLOCKS: u32 = 5;

/// Version from which the index has encoded entries and a full directory index.
const PATH_HASH_INDEX: u32 = 10;

/// The registry's pak reader: found by its footer; every member, scanned again as `//path`.
pub const READER: ContainerReader = ContainerReader {
    name: "uepak",
    sniff: Sniff::By(|i| footer(i.bytes).is_some()),
    read,
};

/// The pak footer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Footer {
    /// Offset of the magic.
    pub at: usize,
    /// Pak version.
    pub version: u32,
    /// Index offset and size.
    pub index: (u64, u64),
    /// The index is AES-encrypted.
    pub encrypted_index: bool,
    /// Compression method names (method i + 1 of an entry is name i).
    pub methods: Vec<String>,
}

impl Footer {
    /// Entries in full form store the method as one byte (v8 with four method names, 4.22).
    pub fn method_byte(&self) -> bool {
        self.version == 8 && self.methods.len() == 4
    }
}

/// The footer of the pak `b`, if there is one: the magic where a known footer layout puts it,
/// with a version that has that layout.
pub fn footer(b: &[u8]) -> Option<Footer> {
    FOOTER_TAILS.iter().find_map(|&(extra, names, frozen)| {
        let at = b.len().checked_sub(FOOTER_FIXED + extra)?;
        if u32le(b, at)? != MAGIC {
            return None;
        }
        let version = u32le(b, at + 4)?;
        let fits = match version {
            3..=7 => extra == 0,
            8 => extra == 128 || extra == 160,
            9 => frozen,
            10..=11 => extra == 160 && !frozen,
            _ => false,
        };
        if !fits {
            return None;
        }
        let names_at = at + FOOTER_FIXED + usize::from(frozen);
        let methods = (0..names)
            .map(|k| {
                let n = &b[names_at + 32 * k..names_at + 32 * (k + 1)];
                let len = n.iter().position(|&c| c == 0).unwrap_or(32);
                String::from_utf8_lossy(&n[..len]).into_owned()
            })
            .collect();
        Some(Footer {
            at,
            version,
            index: (u64le(b, at + 8)?, u64le(b, at + 16)?),
            encrypted_index: version >= 4 && at >= 1 && b[at - 1] != 0,
            methods,
        })
    })
}

/// One member as the index describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Offset of the member's header copy in the pak.
    pub offset: u64,
    /// Stored size (after compression).
    pub size: u64,
    /// Decoded size.
    pub raw: u64,
    /// Compression method: 0 none, else footer method `method − 1` (v < 8: UE's flags).
    pub method: u32,
    /// Compression blocks: byte ranges in the pak.
    pub blocks: Vec<std::ops::Range<u64>>,
    /// Decoded bytes per block (the last may be shorter).
    pub block_size: u64,
    /// AES-encrypted.
    pub encrypted: bool,
}

/// A bounds-checked reader over `b` from `at`; errors name the offset in `b`.
struct Cursor<'b> {
    b: &'b [u8],
    at: usize,
}

impl<'b> Cursor<'b> {
    fn take(&mut self, n: u64, what: &str) -> ReadResult<&'b [u8]> {
        let r = range(self.b, self.at as u64, n, what)?;
        self.at = r.end;
        Ok(&self.b[r])
    }
    fn u32(&mut self, what: &str) -> ReadResult<u32> {
        let s = self.take(4, what)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn u64(&mut self, what: &str) -> ReadResult<u64> {
        let lo = self.u32(what)? as u64;
        Ok(lo | (self.u32(what)? as u64) << 32)
    }
    /// A u32 when `narrow`, else a u64.
    fn var(&mut self, narrow: bool, what: &str) -> ReadResult<u64> {
        if narrow {
            self.u32(what).map(u64::from)
        } else {
            self.u64(what)
        }
    }
    /// A count of elements of at least `min` bytes each, checked against the bytes left.
    fn count(&mut self, min: u64, what: &str) -> ReadResult<usize> {
        let at = self.at;
        let n = self.u32(what)? as u64;
        if n.saturating_mul(min) > (self.b.len() - self.at) as u64 {
            return Err(ReadError::new(
                WarnKind::BadHeader,
                at,
                format!("{what} {n} does not fit the bytes left"),
            ));
        }
        Ok(n as usize)
    }
    /// An FString: i32 length with the NUL (negative: UTF-16 code units), the characters.
    fn string(&mut self, what: &str) -> ReadResult<String> {
        let at = self.at;
        let n = self.u32(what)? as i32;
        let s = if n >= 0 {
            let s = self.take(n as u64, what)?;
            String::from_utf8_lossy(s.strip_suffix(&[0]).unwrap_or(s)).into_owned()
        } else {
            let units = (n as i64).unsigned_abs();
            let s = self.take(units * 2, what)?;
            let u: Vec<u16> = s
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect();
            String::from_utf16_lossy(u.strip_suffix(&[0]).unwrap_or(&u))
        };
        if s.contains(['\t', '\n', '\r']) {
            return Err(ReadError::new(
                WarnKind::BadHeader,
                at,
                format!("{what} holds a tab or line break"),
            ));
        }
        Ok(s)
    }
}

/// Bytes of the header copy UE writes before a member's data (the entry's full form).
pub fn header_len(f: &Footer, compressed: bool, blocks: usize) -> u64 {
    let method = if f.method_byte() { 1 } else { 4 };
    let blocks = if compressed {
        4 + 16 * blocks as u64
    } else {
        0
    };
    8 * 3 + method + 20 + blocks + 1 + 4
}

/// An entry in its full form (the legacy index, a v ≥ 10 index's unencoded list, the header
/// copy in front of the data, whose offset field is 0).
fn full_entry(c: &mut Cursor, f: &Footer) -> ReadResult<Entry> {
    let offset = c.u64("entry offset")?;
    let size = c.u64("entry size")?;
    let raw = c.u64("entry raw size")?;
    let method = if f.method_byte() {
        c.take(1, "entry compression")?[0] as u32
    } else {
        c.u32("entry compression")?
    };
    c.take(20, "entry SHA-1")?;
    let mut blocks = Vec::new();
    if method != 0 {
        let n = c.count(16, "compression block count")?;
        for _ in 0..n {
            let (s, e) = (c.u64("block start")?, c.u64("block end")?);
            let base = if f.version >= RELATIVE_BLOCKS {
                offset
            } else {
                0
            };
            blocks.push(base.saturating_add(s)..base.saturating_add(e));
        }
    }
    let encrypted = c.take(1, "entry flags")?[0] & 1 != 0;
    let block_size = c.u32("compression block size")? as u64;
    Ok(Entry {
        offset,
        size,
        raw,
        method,
        blocks,
        block_size,
        encrypted,
    })
}

/// An entry of a v ≥ 10 index's encoded-entries blob: a u32 of bit fields (block size / 2 KiB
/// in bits 0–5, 0x3F = a u32 follows; block count 6–21; encrypted 22; method 23–28; 32-bit
/// size 29, raw size 30, offset 31), then offset, raw size, size (when compressed), and the
/// block sizes (unless one unencrypted block).
fn encoded_entry(c: &mut Cursor, f: &Footer) -> ReadResult<Entry> {
    let bits = c.u32("encoded entry")?;
    let mut block_size = (bits & 0x3F) as u64;
    block_size = if block_size == 0x3F {
        c.u32("block size")? as u64
    } else {
        block_size << 11
    };
    let nblocks = ((bits >> 6) & 0xFFFF) as usize;
    let encrypted = bits & (1 << 22) != 0;
    let method = (bits >> 23) & 0x3F;
    let offset = c.var(bits & (1 << 31) != 0, "entry offset")?;
    let raw = c.var(bits & (1 << 30) != 0, "entry raw size")?;
    let size = if method != 0 {
        c.var(bits & (1 << 29) != 0, "entry size")?
    } else {
        raw
    };
    let mut blocks = Vec::new();
    let mut start = offset.saturating_add(header_len(f, method != 0, nblocks));
    if nblocks == 1 && !encrypted {
        blocks.push(start..start.saturating_add(size));
        block_size = raw;
    } else {
        for _ in 0..nblocks {
            let n = c.u32("block size")? as u64;
            blocks.push(start..start.saturating_add(n));
            start = start.saturating_add(if encrypted { n.next_multiple_of(16) } else { n });
        }
    }
    Ok(Entry {
        offset,
        size,
        raw,
        method,
        blocks,
        block_size,
        encrypted,
    })
}

/// The members of a pak by path, and the entries that could not be read.
pub type Listing = (Footer, BTreeMap<String, Entry>, Vec<ReadError>);

/// Lists the members of the pak `b` by path (mount point + directory + file name); a path
/// listed twice keeps its later entry. An entry that cannot be read is a problem; the others
/// are listed.
pub fn entries(b: &[u8]) -> ReadResult<Listing> {
    let f =
        footer(b).ok_or_else(|| ReadError::new(WarnKind::BadHeader, b.len(), "no pak footer"))?;
    if !VERSIONS.contains(&f.version) {
        return Err(ReadError::new(
            WarnKind::BadHeader,
            f.at + 4,
            format!("pak version {} is not read (3–11 are)", f.version),
        ));
    }
    if f.encrypted_index {
        return Err(ReadError::new(
            WarnKind::BadHeader,
            f.at - 1,
            "the pak index is AES-encrypted (needs the title's key)",
        ));
    }
    let ir = range(b, f.index.0, f.index.1, "pak index")?;
    let mut c = Cursor {
        b: &b[..ir.end],
        at: ir.start,
    };
    let mount = c.string("mount point")?;
    let mount = mount.trim_start_matches("../").trim_start_matches('/');
    let mut out = BTreeMap::new();
    let mut problems = Vec::new();
    if f.version < PATH_HASH_INDEX {
        let n = c.count(4 + 53, "entry count")?;
        for _ in 0..n {
            let name = c.string("file name")?;
            out.insert(format!("{mount}{name}"), full_entry(&mut c, &f)?);
        }
        return Ok((f, out, problems));
    }
    c.u32("entry count")?;
    c.u64("path hash seed")?;
    if c.u32("path hash index flag")? != 0 {
        c.take(8 + 8 + 20, "path hash index")?;
    }
    let fdi = if c.u32("directory index flag")? != 0 {
        let (off, size) = (c.u64("directory index")?, c.u64("directory index")?);
        c.take(20, "directory index SHA-1")?;
        Some(range(b, off, size, "full directory index")?)
    } else {
        None
    };
    let enc_len = c.u32("encoded entries size")? as u64;
    let enc_at = c.at;
    let encoded = c.take(enc_len, "encoded entries")?;
    let n = c.count(53, "unencoded entry count")?;
    let mut list = Vec::with_capacity(n);
    for _ in 0..n {
        list.push(full_entry(&mut c, &f)?);
    }
    let Some(fdi) = fdi else {
        return Err(ReadError::new(
            WarnKind::BadHeader,
            ir.start,
            "the index has no full directory index (names only as path hashes)",
        ));
    };
    let mut d = Cursor {
        b: &b[..fdi.end],
        at: fdi.start,
    };
    let dirs = d.count(8, "directory count")?;
    for _ in 0..dirs {
        let dir = d.string("directory name")?;
        let dir = dir.trim_start_matches('/');
        let files = d.count(8, "file count")?;
        for _ in 0..files {
            let name = d.string("file name")?;
            let loc_at = d.at;
            let loc = d.u32("entry location")? as i32;
            let path = format!("{mount}{dir}{name}");
            let e = if loc >= 0 {
                let mut e = Cursor {
                    b: encoded,
                    at: loc as usize,
                };
                encoded_entry(&mut e, &f).map_err(|x| ReadError {
                    detail: format!("{path}: {}", x.detail),
                    ..x.shifted(enc_at)
                })
            } else {
                let k = (loc as i64).unsigned_abs() as usize - 1;
                list.get(k).cloned().ok_or_else(|| {
                    ReadError::new(
                        WarnKind::BadHeader,
                        loc_at,
                        format!("{path}: entry location {loc} outside the index"),
                    )
                })
            };
            match e {
                Ok(e) => {
                    out.insert(path, e);
                }
                Err(x) => problems.push(x),
            }
        }
    }
    Ok((f, out, problems))
}

fn read<'b>(i: &Input<'b>) -> ReadResult<Found<'b>> {
    let b = i.bytes;
    let (f, list, mut problems) = entries(b)?;
    let mut inner = Vec::new();
    let mut left = i.cap;
    for (name, e) in list {
        let at = e.offset.min(usize::MAX as u64) as usize;
        let fail = |kind, d: String| ReadError::new(kind, at, format!("{name}: {d}"));
        if e.encrypted {
            problems.push(fail(WarnKind::BadHeader, "AES-encrypted, skipped".into()));
            continue;
        }
        match member(b, &f, &e, left) {
            Ok(bytes) => {
                if let Cow::Owned(v) = &bytes {
                    left -= v.len() as u64;
                }
                inner.push(Inner {
                    member: Some(name),
                    bytes,
                });
            }
            Err(x) => problems.push(ReadError {
                detail: format!("{name}: {}", x.detail),
                ..x
            }),
        }
    }
    Ok(Found::Inner { inner, problems })
}

/// The bytes of member `e`: its header copy must agree with the index; stored data is a
/// sub-range, Oodle blocks are decoded (at most `cap` bytes in all); other methods are refused.
fn member<'b>(b: &'b [u8], f: &Footer, e: &Entry, cap: u64) -> ReadResult<Cow<'b, [u8]>> {
    let mut c = Cursor {
        b,
        at: range(b, e.offset, 0, "member")?.start,
    };
    let copy = full_entry(&mut c, f)?;
    if (copy.size, copy.raw, copy.method) != (e.size, e.raw, e.method) {
        return Err(ReadError::new(
            WarnKind::BadHeader,
            e.offset as usize,
            format!(
                "header copy says {:#x} / {:#x} bytes, method {}; the index {:#x} / {:#x}, {}",
                copy.size, copy.raw, copy.method, e.size, e.raw, e.method
            ),
        ));
    }
    if e.method == 0 {
        if e.size != e.raw {
            return Err(ReadError::new(
                WarnKind::BadHeader,
                e.offset as usize,
                "stored member with a raw size unlike its size",
            ));
        }
        return Ok(Cow::Borrowed(
            &b[range(b, c.at as u64, e.size, "member data")?],
        ));
    }
    let name = method_name(f, e.method);
    if !name.eq_ignore_ascii_case("oodle") {
        return Err(ReadError::new(
            WarnKind::DecodeFailed,
            e.offset as usize,
            format!("compression method {name} is not read"),
        ));
    }
    if e.raw > cap {
        return Err(ReadError::new(
            WarnKind::SizeCap,
            e.offset as usize,
            format!("raw size {:#x} over the limit {cap:#x}", e.raw),
        ));
    }
    if e.block_size == 0 || (e.blocks.len() as u64).saturating_mul(e.block_size) < e.raw {
        return Err(ReadError::new(
            WarnKind::BadHeader,
            e.offset as usize,
            format!(
                "{} blocks of {:#x} bytes do not hold {:#x}",
                e.blocks.len(),
                e.block_size,
                e.raw
            ),
        ));
    }
    let mut out = Vec::with_capacity(e.raw.min(oodle::max_raw(e.size as usize)) as usize);
    for blk in &e.blocks {
        let want = (e.raw - out.len() as u64).min(e.block_size);
        let r = range(
            b,
            blk.start,
            blk.end.saturating_sub(blk.start),
            "compression block",
        )?;
        let at = r.start;
        let v = oodle::decode(&b[r], want, cap).map_err(|x| x.shifted(at))?;
        out.extend_from_slice(&v);
    }
    if out.len() as u64 != e.raw {
        return Err(ReadError::new(
            WarnKind::DecodeFailed,
            e.offset as usize,
            format!(
                "blocks decode to {:#x} bytes, raw size {:#x}",
                out.len(),
                e.raw
            ),
        ));
    }
    Ok(Cow::Owned(out))
}

/// The name of compression method `m` (1-based into the footer's names; v < 8 has UE's flags).
fn method_name(f: &Footer, m: u32) -> String {
    if f.version < 8 {
        return match m {
            1 => "Zlib".into(),
            _ => format!("flags {m:#x}"),
        };
    }
    f.methods
        .get(m as usize - 1)
        .cloned()
        .unwrap_or_else(|| format!("#{m}"))
}
