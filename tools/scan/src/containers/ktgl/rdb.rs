//! KTGL RDB archives (Age of Calamity `asset/system.rdb`, data in `asset/system.rdb.bin*`):
//! IDRK records, each self-describing (0x30-byte header, type blob, content). Only records
//! whose content starts with a G2S or `_DOK0000` magic are read: zlib-chunked content is
//! peeked first and inflated only then.

use std::borrow::Cow;

use super::zlib;
use crate::bytes::{need_u32, need_u64, range, u32le};
use crate::containers::{ContainerReader, Found, Inner, Input, Sniff};
use crate::error::{ReadError, ReadResult, WarnKind};

/// IDRK record magic.
pub const RECORD: &[u8; 4] = b"IDRK";

/// RDB index magic.
pub const INDEX: &[u8; 4] = b"_DRK";

/// What the names of RDB data files contain (`system.rdb.bin0`).
pub const DATA_FILE: &str = ".rdb.bin";

/// Content magics of the records read, with the member name's extension. (The seed also gives
/// their type-info KTIDs, G2S 0x7BCD279F and `_DOK` 0x20A6A0BB; the magic decides.)
pub const SHADER_MAGICS: [(&[u8; 8], &str); 2] = [(b"_S2G3000", "g2s"), (b"_DOK0000", "dok")];

/// Flag: content stored as zlib chunks.
pub const ZLIB: u32 = 0x10_0000;

/// Flag: content stored as LZ4 chunks (not read: the seed names only zlib).
pub const LZ4: u32 = 0x20_0000;

/// Size of a record's fixed part.
pub const HEAD: usize = 0x30;

/// The registry's RDB reader. A buffer that is one record (a member found here) gives its
/// decoded content (`|rdb`); an RDB index or data file gives its shader records as members
/// (`//<file KTID>.g2s`), decoded in parallel one layer deeper.
pub const READER: ContainerReader = ContainerReader {
    name: "rdb",
    sniff: Sniff::By(takes),
    read: |i| read(i.bytes, i.cap),
};

/// Whether `i` is a record, an index or a data file (`*.rdb.bin*`, whatever comes first in it).
fn takes(i: &Input) -> bool {
    i.bytes.starts_with(RECORD)
        || i.bytes.starts_with(INDEX)
        || i.name
            .rsplit('/')
            .next()
            .is_some_and(|n| n.contains(DATA_FILE))
}

/// One IDRK record's header fields and where its content lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Whole record size (the next record follows at the next 4-byte boundary).
    pub size: usize,
    /// Content bytes, relative to the record start.
    pub content: std::ops::Range<usize>,
    /// Decompressed content size.
    pub raw_size: u64,
    /// File KTID.
    pub ktid: u32,
    /// Type-info KTID.
    pub type_ktid: u32,
    /// Flags (0x10_0000 zlib, 0x20_0000 LZ4).
    pub flags: u32,
}

/// Parses the IDRK record at the start of `b`: the sizes must fit inside `b`.
pub fn record(b: &[u8]) -> ReadResult<Record> {
    if !b.starts_with(RECORD) {
        return Err(ReadError::new(WarnKind::BadHeader, 0, "no IDRK magic"));
    }
    let size = need_u64(b, 8, "IDRK entry size")?;
    let stored = need_u64(b, 0x10, "IDRK content size")?;
    let raw_size = need_u64(b, 0x18, "IDRK decompressed size")?;
    let flags = need_u32(b, 0x2C, "IDRK flags")?;
    let whole = range(b, 0, size, "IDRK record")?;
    let start = size
        .checked_sub(stored)
        .filter(|&s| s >= HEAD as u64)
        .ok_or_else(|| {
            ReadError::new(
                WarnKind::BadHeader,
                0x10,
                format!("content of {stored:#x} bytes does not fit a record of {size:#x}"),
            )
        })?;
    Ok(Record {
        size: whole.end,
        content: start as usize..whole.end,
        raw_size,
        ktid: u32le(b, 0x24).unwrap_or(0),
        type_ktid: u32le(b, 0x28).unwrap_or(0),
        flags,
    })
}

/// The member-name extension of a record whose content starts with a shader magic, peeking at
/// the first chunk of zlib content; `None` for every other record.
pub fn shader_ext(b: &[u8], r: &Record) -> Option<&'static str> {
    let c = &b[r.content.clone()];
    let head: Cow<[u8]> = if r.flags & ZLIB != 0 {
        let (at, n) = first_chunk(c, r.raw_size)?;
        Cow::Owned(zlib::peek(c.get(at..at + n)?, 8)?)
    } else if r.flags & LZ4 != 0 {
        return None;
    } else {
        Cow::Borrowed(c)
    };
    SHADER_MAGICS
        .iter()
        .find(|(m, _)| head.starts_with(*m))
        .map(|(_, e)| *e)
}

/// Where the chunks of zlib content `c` start: after the optional u32 decompressed size.
fn chunks_start(c: &[u8], raw_size: u64) -> usize {
    let prefix =
        u32le(c, 0).map(u64::from) == Some(raw_size) && c.get(8..).is_some_and(zlib::has_header);
    if prefix {
        4
    } else {
        0
    }
}

/// Offset and length of the first chunk of zlib content `c`.
fn first_chunk(c: &[u8], raw_size: u64) -> Option<(usize, usize)> {
    let p = chunks_start(c, raw_size);
    Some((p + 4, u32le(c, p)? as usize))
}

/// The decoded content of record `r` of `b` (at most `cap` bytes): borrowed when stored plain.
pub fn content<'b>(b: &'b [u8], r: &Record, cap: u64) -> ReadResult<Cow<'b, [u8]>> {
    let c = &b[r.content.clone()];
    if r.flags & LZ4 != 0 {
        return Err(ReadError::new(
            WarnKind::DecodeFailed,
            0x2C,
            "LZ4-chunked IDRK content is not read",
        ));
    }
    if r.flags & ZLIB == 0 {
        return Ok(Cow::Borrowed(c));
    }
    if r.raw_size > cap {
        return Err(ReadError::new(
            WarnKind::SizeCap,
            0x18,
            format!("record states {:#x} bytes, limit {cap:#x}", r.raw_size),
        ));
    }
    let total = r.raw_size as usize;
    let mut out = Vec::with_capacity(total);
    let base = r.content.start;
    let mut p = chunks_start(c, r.raw_size);
    while p + 4 <= c.len() {
        let n = u32le(c, p).unwrap_or(0) as usize;
        p += 4;
        if n == 0 {
            break;
        }
        let chunk = range(c, p as u64, n as u64, "zlib chunk").map_err(|e| e.shifted(base))?;
        zlib::inflate(&c[chunk], base + p, total - out.len(), &mut out)?;
        p += n;
    }
    if out.len() != total {
        return Err(ReadError::new(
            WarnKind::DecodeFailed,
            base,
            format!(
                "decodes to {:#x} bytes, record states {total:#x}",
                out.len()
            ),
        ));
    }
    Ok(Cow::Owned(out))
}

/// Reads an RDB buffer: one record (its decoded content when it is a shader record), or a
/// file of records (every shader record as a member). A record that does not parse is a
/// problem; the search goes on after its magic.
pub fn read(b: &[u8], cap: u64) -> ReadResult<Found<'_>> {
    if b.starts_with(RECORD) {
        if let Ok(r) = record(b) {
            if r.size.next_multiple_of(4) >= b.len() {
                return Ok(match shader_ext(b, &r) {
                    Some(_) => Found::layer(content(b, &r, cap)?),
                    None => Found::Inner {
                        inner: Vec::new(),
                        problems: Vec::new(),
                    },
                });
            }
        }
    }
    let mut inner = Vec::new();
    let mut problems = Vec::new();
    let mut at = 0;
    while let Some(found) = memchr::memmem::find(&b[at..], RECORD) {
        let p = at + found;
        if p % 4 != 0 {
            at = p + 1;
            continue;
        }
        match record(&b[p..]) {
            Ok(r) => {
                if let Some(ext) = shader_ext(&b[p..], &r) {
                    inner.push(Inner {
                        member: Some(format!("{:08x}.{ext}", r.ktid)),
                        bytes: Cow::Borrowed(&b[p..p + r.size]),
                    });
                }
                at = p + r.size.max(4);
            }
            Err(e) => {
                problems.push(e.shifted(p));
                at = p + 4;
            }
        }
    }
    Ok(Found::Inner { inner, problems })
}
