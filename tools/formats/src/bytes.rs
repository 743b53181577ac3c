//! Bounds-checked little-endian field readers: every read of untrusted bytes goes through these.

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

/// Rounds `v` up to a multiple of `a` (a power of two).
pub fn align_up(v: usize, a: usize) -> usize {
    (v + a - 1) & !(a - 1)
}
