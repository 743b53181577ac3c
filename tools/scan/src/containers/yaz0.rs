//! Yaz0 streams (`*.szs`, `*.s*`): Nintendo's LZ77 variant, decoded with bounds checks.

use crate::bytes::u32be;
use crate::error::{ReadError, ReadResult, WarnKind};

/// Yaz0 magic.
pub const MAGIC: &[u8; 4] = b"Yaz0";

/// Whether `b` starts with a Yaz0 header.
pub fn is(b: &[u8]) -> bool {
    b.starts_with(MAGIC)
}

/// Decodes the Yaz0 stream of `b`; the announced size must be ≤ `cap` and ≤ 0x111 × the input.
pub fn decode(b: &[u8], cap: u64) -> ReadResult<Vec<u8>> {
    let size = u32be(b, 4)
        .ok_or_else(|| ReadError::new(WarnKind::Truncated, 0, "Yaz0 header cut short"))?
        as usize;
    if b.len() < 0x10 {
        return Err(ReadError::new(
            WarnKind::Truncated,
            0,
            "Yaz0 header cut short",
        ));
    }
    if size as u64 > cap {
        return Err(ReadError::new(
            WarnKind::SizeCap,
            4,
            format!("announces {size:#x} bytes, limit {cap:#x}"),
        ));
    }
    if size > (b.len() - 0x10).saturating_mul(0x111) + 8 {
        return Err(ReadError::new(
            WarnKind::BadHeader,
            4,
            format!("announces {size:#x} bytes from {:#x} input", b.len()),
        ));
    }
    let mut out: Vec<u8> = Vec::with_capacity(size);
    let mut src = 0x10usize;
    let trunc = |at: usize, have: usize| {
        ReadError::new(
            WarnKind::Truncated,
            at,
            format!("stream ends after {have:#x} of {size:#x} bytes"),
        )
    };
    'outer: while out.len() < size {
        let Some(&group) = b.get(src) else {
            return Err(trunc(src, out.len()));
        };
        src += 1;
        for bit in (0..8).rev() {
            if out.len() >= size {
                break 'outer;
            }
            if group >> bit & 1 == 1 {
                let Some(&c) = b.get(src) else {
                    return Err(trunc(src, out.len()));
                };
                out.push(c);
                src += 1;
            } else {
                let (Some(&b1), Some(&b2)) = (b.get(src), b.get(src + 1)) else {
                    return Err(trunc(src, out.len()));
                };
                let dist = (((b1 & 0x0f) as usize) << 8 | b2 as usize) + 1;
                let len = if b1 >> 4 == 0 {
                    let Some(&b3) = b.get(src + 2) else {
                        return Err(trunc(src, out.len()));
                    };
                    src += 3;
                    b3 as usize + 0x12
                } else {
                    src += 2;
                    (b1 >> 4) as usize + 2
                };
                if dist > out.len() {
                    return Err(ReadError::new(
                        WarnKind::DecodeFailed,
                        src,
                        format!(
                            "back-reference {dist:#x} before the output start ({:#x})",
                            out.len()
                        ),
                    ));
                }
                let len = len.min(size - out.len());
                // The copy repeats the `dist` bytes before it. Copy from that fixed start in
                // chunks that double (each a multiple of `dist` until the last), so a long run
                // with a short period costs a few copies, not one per period.
                let from = out.len() - dist;
                let mut left = len;
                while left > 0 {
                    let n = left.min(out.len() - from);
                    out.extend_from_within(from..from + n);
                    left -= n;
                }
            }
        }
    }
    Ok(out)
}
