//! Bounds-checked field readers: the plain ones of dmsh-formats, and readers that fail with
//! the scanner's `Truncated` error naming what was read.

pub use dmsh_formats::bytes::*;

use crate::error::{ReadError, ReadResult, WarnKind};

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
