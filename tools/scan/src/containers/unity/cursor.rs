//! A bounds-checked reader of Unity's fields in either byte order, failing with `Truncated`
//! errors that name the field and its offset.

use crate::error::{ReadError, ReadResult, WarnKind};

/// A position in a buffer read in one byte order.
#[derive(Debug, Clone, Copy)]
pub struct Cursor<'b> {
    /// The buffer.
    pub b: &'b [u8],
    /// The next byte to read.
    pub pos: usize,
    /// Big endian.
    pub be: bool,
}

impl<'b> Cursor<'b> {
    /// A cursor at `pos` of `b`.
    pub fn new(b: &'b [u8], pos: usize, be: bool) -> Self {
        Cursor { b, pos, be }
    }

    /// The next `n` bytes (`what` names them in the error).
    pub fn bytes(&mut self, n: usize, what: &str) -> ReadResult<&'b [u8]> {
        let s = self
            .pos
            .checked_add(n)
            .and_then(|end| self.b.get(self.pos..end))
            .ok_or_else(|| {
                ReadError::new(
                    WarnKind::Truncated,
                    self.pos,
                    format!("{what} ({n:#x} bytes) past the end ({:#x})", self.b.len()),
                )
            })?;
        self.pos += n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, what: &str) -> ReadResult<[u8; N]> {
        let mut a: [u8; N] = self.bytes(N, what)?.try_into().unwrap();
        if !self.be {
            a.reverse();
        }
        Ok(a)
    }

    /// u8.
    pub fn u8(&mut self, what: &str) -> ReadResult<u8> {
        Ok(self.bytes(1, what)?[0])
    }

    /// u16.
    pub fn u16(&mut self, what: &str) -> ReadResult<u16> {
        self.array(what).map(u16::from_be_bytes)
    }

    /// u32.
    pub fn u32(&mut self, what: &str) -> ReadResult<u32> {
        self.array(what).map(u32::from_be_bytes)
    }

    /// i32.
    pub fn i32(&mut self, what: &str) -> ReadResult<i32> {
        self.array(what).map(i32::from_be_bytes)
    }

    /// u64.
    pub fn u64(&mut self, what: &str) -> ReadResult<u64> {
        self.array(what).map(u64::from_be_bytes)
    }

    /// A NUL-terminated string of at most 4 KiB (lossy UTF-8).
    pub fn cstr(&mut self, what: &str) -> ReadResult<String> {
        let tail = self.b.get(self.pos..).unwrap_or_default();
        let n = tail
            .iter()
            .take(4096)
            .position(|&c| c == 0)
            .ok_or_else(|| {
                ReadError::new(WarnKind::Truncated, self.pos, format!("{what}: no NUL"))
            })?;
        let s = String::from_utf8_lossy(&tail[..n]).into_owned();
        self.pos += n + 1;
        Ok(s)
    }

    /// A count of things of at least `min_size` bytes each, checked against the bytes left.
    pub fn count(&mut self, min_size: usize, what: &str) -> ReadResult<usize> {
        let at = self.pos;
        let n = self.i32(what)?;
        let left = self.b.len().saturating_sub(self.pos);
        match usize::try_from(n) {
            Ok(n) if n.saturating_mul(min_size.max(1)) <= left => Ok(n),
            _ => Err(ReadError::new(
                WarnKind::BadHeader,
                at,
                format!("{what} {n} does not fit in the {left:#x} bytes left"),
            )),
        }
    }

    /// Moves to the next multiple of `a` (a power of two).
    pub fn align(&mut self, a: usize) {
        self.pos = self.pos.saturating_add(a - 1) & !(a - 1);
    }
}
