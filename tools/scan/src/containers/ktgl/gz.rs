//! KTGL "gz" tables (Three Houses LINKDATA entries, loose `*.gz` files): u32 chunk size
//! (0x4000 / 0x10000 / 0x20000), u32 chunk count, u32 decompressed size, u32 stored chunk
//! lengths; chunks from the next 0x80 boundary, each 0x80-aligned: u32 length + zlib stream,
//! or stored raw when it is the rest of the output.

use super::zlib;
use crate::bytes::{align_up, range, u32le};
use crate::containers::{ContainerReader, Found, Sniff};
use crate::error::{ReadError, ReadResult, WarnKind};

/// The path suffix of a decoded table (`…|ktgl_gz`), which the KTGL reader takes.
pub const LAYER_SUFFIX: &str = "|ktgl_gz";

/// Chunk sizes a table may state.
pub const CHUNK_SIZES: [u32; 3] = [0x4000, 0x1_0000, 0x2_0000];

/// The registry's reader of KTGL "gz" tables: the decoded bytes, one layer (`|ktgl_gz`).
pub const READER: ContainerReader = ContainerReader {
    name: "ktgl_gz",
    sniff: Sniff::By(|i| header(i.bytes).is_some()),
    read: |i| decode(i.bytes, i.cap).map(Found::layer),
};

/// A table's header fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Decompressed bytes per chunk (the last one may be shorter).
    pub chunk_size: u32,
    /// Number of chunks.
    pub count: u32,
    /// Decompressed size.
    pub total: u32,
    /// Offset of the first chunk.
    pub first: usize,
}

/// The header at the start of `b`, when it is a consistent table: a known chunk size, as many
/// chunks as the size needs, the length table inside `b`, and a first chunk that starts a
/// zlib stream (or, as the only chunk, is stored raw).
pub fn header(b: &[u8]) -> Option<Header> {
    let chunk_size = u32le(b, 0)?;
    let count = u32le(b, 4)?;
    let total = u32le(b, 8)?;
    if !CHUNK_SIZES.contains(&chunk_size) || total == 0 || count != total.div_ceil(chunk_size) {
        return None;
    }
    let first = align_up(12 + 4 * count as usize, 0x80);
    let zlib_first = b.get(first + 4..).is_some_and(zlib::has_header);
    let raw_only = count == 1 && (u32le(b, first) == Some(total) || u32le(b, 12) == Some(total));
    (first + 4 <= b.len() && (zlib_first || raw_only)).then_some(Header {
        chunk_size,
        count,
        total,
        first,
    })
}

/// Decodes the table at the start of `b` to at most `cap` bytes.
pub fn decode(b: &[u8], cap: u64) -> ReadResult<Vec<u8>> {
    let h =
        header(b).ok_or_else(|| ReadError::new(WarnKind::BadHeader, 0, "not a KTGL gz table"))?;
    if u64::from(h.total) > cap {
        return Err(ReadError::new(
            WarnKind::SizeCap,
            8,
            format!("table states {:#x} bytes, limit {cap:#x}", h.total),
        ));
    }
    let total = h.total as usize;
    let mut out = Vec::with_capacity(total);
    let mut at = h.first;
    for i in 0..h.count as usize {
        let len = u32le(b, 12 + 4 * i).unwrap_or(0) as usize;
        let chunk = &b[range(b, at as u64, len as u64, "gz chunk")?];
        let left = total - out.len();
        // A chunk stored raw is the rest of the output: after its length word (as KTGL's
        // writer stores it) or, as some readers take it, the whole chunk.
        let raw = match u32le(chunk, 0) {
            Some(n) if n as usize == left && chunk.len() >= 4 + left => Some(&chunk[4..4 + left]),
            _ if len == left => Some(chunk),
            _ => None,
        };
        let mark = out.len();
        let z = chunk.get(4..).unwrap_or_default();
        let limit = left.min(h.chunk_size as usize);
        match (zlib::inflate(z, at + 4, limit, &mut out), raw) {
            (Ok(()), _) => {}
            (Err(_), Some(r)) => {
                out.truncate(mark);
                out.extend_from_slice(r);
            }
            (Err(e), None) => {
                let at = e.offset as usize;
                return Err(e.within(at, format!("chunk {i}")));
            }
        }
        at = align_up(at + len, 0x80);
    }
    if out.len() != total {
        return Err(ReadError::new(
            WarnKind::DecodeFailed,
            8,
            format!("decodes to {:#x} bytes, table states {total:#x}", out.len()),
        ));
    }
    Ok(out)
}
