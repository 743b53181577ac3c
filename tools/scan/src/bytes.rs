//! Bounds-checked little-endian field readers: every read of untrusted bytes goes through these.

use crate::error::{ReadError, ReadResult, WarnKind};

/// u16 little endian at `off`, or `None` past the end.
pub fn u16le(b: &[u8], off: usize) -> Option<u16> {
    b.get(off..off.checked_add(2)?)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
}

/// u32 little endian at `off`, or `None` past the end.
pub fn u32le(b: &[u8], off: usize) -> Option<u32> {
    b.get(off..off.checked_add(4)?)
        .map(|s| u32::from_le_bytes(s.try_into().unwrap()))
}

/// u64 little endian at `off`, or `None` past the end.
pub fn u64le(b: &[u8], off: usize) -> Option<u64> {
    b.get(off..off.checked_add(8)?)
        .map(|s| u64::from_le_bytes(s.try_into().unwrap()))
}

/// u32 big endian at `off`, or `None` past the end.
pub fn u32be(b: &[u8], off: usize) -> Option<u32> {
    b.get(off..off.checked_add(4)?)
        .map(|s| u32::from_be_bytes(s.try_into().unwrap()))
}

/// u32 little endian at `off`, or a `Truncated` error naming `what`.
pub fn need_u32(b: &[u8], off: usize, what: &str) -> ReadResult<u32> {
    u32le(b, off)
        .ok_or_else(|| ReadError::new(WarnKind::Truncated, off, format!("{what} past the end")))
}

/// u64 little endian at `off`, or a `Truncated` error naming `what`.
pub fn need_u64(b: &[u8], off: usize, what: &str) -> ReadResult<u64> {
    u64le(b, off)
        .ok_or_else(|| ReadError::new(WarnKind::Truncated, off, format!("{what} past the end")))
}

/// `b[start..start+len]` with overflow and bounds checks, or a `Truncated` error.
pub fn range(b: &[u8], start: u64, len: u64, what: &str) -> ReadResult<std::ops::Range<usize>> {
    let end = start.checked_add(len);
    match end {
        Some(end) if end <= b.len() as u64 => Ok(start as usize..end as usize),
        _ => Err(ReadError::new(
            WarnKind::Truncated,
            start.min(usize::MAX as u64) as usize,
            format!(
                "{what} ({len:#x} bytes at {start:#x}) runs past the end ({:#x})",
                b.len()
            ),
        )),
    }
}

/// Rounds `v` up to a multiple of `a` (a power of two).
pub fn align_up(v: usize, a: usize) -> usize {
    (v + a - 1) & !(a - 1)
}
