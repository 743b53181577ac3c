//! RE Engine PAKs (`KPKA`, Monster Hunter Rise): the entries whose first 4 decoded bytes are
//! `SDF\0`, inflated (raw deflate or zstd) and scanned again as `//hash_<path hash>`.
//!
//! A PAK names its entries by path hash only. Patch PAKs (`re_chunk_000.pak.patch_001.pak`, …)
//! hold newer copies of paths of the base PAK; [`superseded`] works out, across the files of a
//! title, which copies a newer PAK replaces, and the scan of a PAK skips those
//! ([`Input::superseded`](super::Input::superseded)).

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::{bounded, ContainerReader, Found, Inner, Input, Sniff};
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

fn read<'b>(i: &Input<'b>) -> ReadResult<Found<'b>> {
    let all = entries(i.bytes)?;
    let skip = |e: &Entry| i.superseded.is_some_and(|s| s.contains(&e.hash));
    // What is left of the file's budget; each decoded entry is reserved from it before its
    // buffer grows past the 4 peeked bytes.
    let left = AtomicU64::new(i.budget);
    let found: Vec<Option<ReadResult<Inner<'b>>>> = all
        .par_iter()
        .filter(|e| !skip(e))
        .map(|e| member(i, e, &left))
        .collect();
    let mut inner = Vec::new();
    let mut problems = Vec::new();
    for f in found.into_iter().flatten() {
        match f {
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

/// The entry as a member if its first 4 decoded bytes are `SDF\0` (`None` for other entries):
/// stored bytes borrowed, compressed ones decoded to exactly the stated size, which must fit
/// the cap and what is left of the budget.
fn member<'b>(i: &Input<'b>, e: &Entry, left: &AtomicU64) -> Option<ReadResult<Inner<'b>>> {
    let named = |x: ReadError, base: usize| {
        let at = base.saturating_add(x.offset as usize);
        x.within(at, format!("entry {}", name(e)))
    };
    let data = match range(i.bytes, e.offset, e.stored, "entry data") {
        Ok(r) => &i.bytes[r],
        Err(x) => return Some(Err(named(ReadError { offset: 0, ..x }, e.at + 8))),
    };
    // Whether to decode the rest: an SDF whose size fits the cap and what is left of the budget
    // (reserved here). A refusal is kept for the caller.
    let refused = Cell::new(None);
    let admit = |head: &[u8]| {
        if !head.starts_with(WANTED) {
            return false;
        }
        let fits = e.size <= i.cap
            && left
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |l| {
                    l.checked_sub(e.size)
                })
                .is_ok();
        if !fits {
            refused.set(Some(ReadError::new(
                WarnKind::SizeCap,
                e.at + 0x18,
                format!(
                    "entry {}: {:#x} bytes decoded, limit {:#x} ({:#x} left of the file's budget)",
                    name(e),
                    e.size,
                    i.cap,
                    left.load(Ordering::Relaxed)
                ),
            )));
        }
        fits
    };
    let size = e.size as usize;
    let decoded = match e.method {
        Method::Stored => {
            return data.starts_with(WANTED).then(|| {
                Ok(Inner {
                    member: Some(name(e)),
                    bytes: Cow::Borrowed(data),
                })
            })
        }
        _ if e.size < WANTED.len() as u64 => return None, // too short to be a definition
        Method::Deflate => inflate(data, size, admit),
        Method::Zstd => unzstd(data, size, admit),
    };
    match decoded {
        Ok(None) => refused.take().map(Err),
        Ok(Some(v)) => Some(Ok(Inner {
            member: Some(name(e)),
            bytes: Cow::Owned(v),
        })),
        Err(x) => Some(Err(named(x, e.offset as usize))),
    }
}

/// Inflates the raw deflate stream `data` to exactly `size` bytes, unless `first`, given its
/// first 4 decoded bytes (fewer if the stream is shorter), says no (`None`). The buffer grows
/// past those 4 bytes only after `first` agreed (so `first` is where the caller bounds `size`),
/// and never past `size + 1`. Error offsets are inside `data`.
pub fn inflate(
    data: &[u8],
    size: usize,
    first: impl FnOnce(&[u8]) -> bool,
) -> ReadResult<Option<Vec<u8>>> {
    let mut out = Vec::new();
    let peek = Some((WANTED.len(), first));
    Ok(bounded::inflate(data, &mut out, size, true, peek)?.then_some(out))
}

/// The same for zstd frames `data` (a window of at most 2^27 bytes, no dictionaries).
pub fn unzstd(
    data: &[u8],
    size: usize,
    first: impl FnOnce(&[u8]) -> bool,
) -> ReadResult<Option<Vec<u8>>> {
    let mut out = Vec::new();
    let peek = Some((WANTED.len(), first));
    Ok(super::zstd::stream(data, &mut out, size, true, peek)?.then_some(out))
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
        let yes = |_: &[u8]| true;
        assert!(inflate(&[0xFF; 8], 16, yes).is_err());
        assert_eq!(inflate(&[], 4, yes).unwrap_err().kind, WarnKind::Truncated);
        assert!(unzstd(b"nope", 4, yes).is_err());
        assert_eq!(
            unzstd(&super::super::zstd::MAGIC, 4, yes).unwrap_err().kind,
            WarnKind::Truncated
        );
    }
}
