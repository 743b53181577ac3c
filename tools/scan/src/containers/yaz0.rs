//! Yaz0 streams (`*.szs`, `*.s*`): Nintendo's LZ77 variant, decoded with bounds checks.

use super::{ContainerReader, Found, Sniff};
use crate::bytes::u32be;
use crate::error::{ReadError, ReadResult, WarnKind};

/// Yaz0 magic.
pub const MAGIC: &[u8; 4] = b"Yaz0";

/// The registry's Yaz0 reader: decodes the stream into one layer (`|yaz0`).
pub const READER: ContainerReader = ContainerReader {
    name: "yaz0",
    sniff: Sniff::Magic(0, MAGIC),
    read: |i| decode(i.bytes, i.cap).map(Found::layer),
};

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

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(size: u32, body: &[u8]) -> Vec<u8> {
        let mut v = b"Yaz0".to_vec();
        v.extend_from_slice(&size.to_be_bytes());
        v.extend_from_slice(&[0; 8]);
        v.extend_from_slice(body);
        v
    }

    #[test]
    fn literals_and_overlapping_runs() {
        // 2 literals 'a' 'b', then a back-reference of 0x12 + 3 = 21 bytes at distance 2.
        let z = stream(23, &[0b1100_0000, b'a', b'b', 0x00, 0x01, 0x03]);
        assert_eq!(
            decode(&z, 1 << 20).unwrap(),
            b"ab".repeat(12)[..23].to_vec()
        );
        // Short form: (b1 >> 4) + 2 = 3 bytes at distance 1.
        let z = stream(4, &[0b1000_0000, b'x', 0x10, 0x00]);
        assert_eq!(decode(&z, 1 << 20).unwrap(), b"xxxx");
    }

    #[test]
    fn bad_streams() {
        let before_start = stream(4, &[0b0000_0000, 0x10, 0x05]);
        assert_eq!(
            decode(&before_start, 1 << 20).unwrap_err().kind,
            WarnKind::DecodeFailed
        );
        let cut = stream(10, &[0xFF, b'a']);
        assert_eq!(decode(&cut, 1 << 20).unwrap_err().kind, WarnKind::Truncated);
        assert_eq!(
            decode(&stream(100, &[0xFF; 40]), 10).unwrap_err().kind,
            WarnKind::SizeCap
        );
        assert_eq!(decode(b"Yaz0", 10).unwrap_err().kind, WarnKind::Truncated);
    }
}
