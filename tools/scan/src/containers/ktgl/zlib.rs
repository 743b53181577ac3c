//! One KTGL zlib chunk: a 2-byte zlib header (0x78 …) and a raw deflate stream, inflated with
//! a stated output bound. The Adler-32 trailer is not read (KTGL writers may leave it out).

use crate::containers::bounded;
use crate::error::{ReadError, ReadResult, WarnKind};

/// Whether `z` starts with a zlib header: deflate with a 32 KiB window (0x78), check bits
/// valid, no preset dictionary.
pub fn has_header(z: &[u8]) -> bool {
    match z {
        [0x78, flg, ..] => (0x7800 | u16::from(*flg)) % 31 == 0 && flg & 0x20 == 0,
        _ => false,
    }
}

fn header(z: &[u8], at: usize) -> ReadResult<&[u8]> {
    if has_header(z) {
        Ok(&z[2..])
    } else {
        Err(ReadError::new(
            WarnKind::DecodeFailed,
            at,
            "chunk does not start with a zlib header (78 xx)",
        ))
    }
}

/// Inflates the zlib chunk `z` (found at offset `at`, for errors) onto the end of `out`,
/// adding at most `limit` bytes: more is a [`WarnKind::SizeCap`] error, a stream that ends
/// early or does not decode a [`WarnKind::DecodeFailed`] one.
pub fn inflate(z: &[u8], at: usize, limit: usize, out: &mut Vec<u8>) -> ReadResult<()> {
    let src = header(z, at)?;
    bounded::inflate(src, out, limit, false, bounded::NO_PEEK)
        .map(|_| ())
        .map_err(|e| ReadError::new(e.kind, at, e.detail))
}

/// The first `n` bytes the zlib chunk `z` inflates to (fewer when it is shorter, or stops
/// early), or `None` when it has no zlib header or does not decode that far.
pub fn peek(z: &[u8], n: usize) -> Option<Vec<u8>> {
    let src = header(z, 0).ok()?;
    let mut out = Vec::new();
    // A peek that refuses what it is shown stops the decode after `n` bytes or the stream's end.
    let stop = Some((n, |_: &[u8]| false));
    match bounded::inflate(src, &mut out, n, true, stop) {
        Err(e) if e.kind != WarnKind::Truncated => None,
        _ => {
            out.truncate(n);
            Some(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn zlib(b: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(b).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn inflates_within_the_limit_and_refuses_more() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 7) as u8).collect();
        let z = zlib(&data);
        let mut out = vec![9u8];
        inflate(&z, 0, data.len(), &mut out).unwrap();
        assert_eq!(&out[1..], &data[..]);
        let mut small = Vec::new();
        assert_eq!(
            inflate(&z, 5, data.len() - 1, &mut small).unwrap_err().kind,
            WarnKind::SizeCap
        );
        assert!(small.capacity() <= data.len() + (1 << 17));
        assert_eq!(
            inflate(&z[..z.len() / 2], 0, data.len(), &mut Vec::new())
                .unwrap_err()
                .kind,
            WarnKind::DecodeFailed
        );
        assert!(inflate(b"\x78\x00junk", 0, 10, &mut Vec::new()).is_err());
        assert!(inflate(b"PK\x03\x04", 0, 10, &mut Vec::new()).is_err());
        assert_eq!(peek(&z, 4).unwrap(), &data[..4]);
        assert_eq!(peek(&zlib(b"ab"), 8).unwrap(), b"ab");
        assert_eq!(peek(b"nope", 8), None);
    }
}
