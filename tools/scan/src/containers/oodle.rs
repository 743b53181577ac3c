//! Oodle decoding for the Unreal readers (not a reader itself): the pure-Rust `oozextract`
//! decoder (MIT), bounded by the stated raw size, which is checked against `Input::cap` and
//! against what the compressed bytes can expand to before anything is allocated.

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use oozextract::Extractor;

use crate::error::{ReadError, ReadResult, WarnKind};

/// Output bytes per Oodle block of the large-block decoders (Kraken, Mermaid, Leviathan); the
/// decoder reads a 2-byte block header at least once per this many output bytes.
pub const LARGE_BLOCK: u64 = 0x40000;

/// Decoder types of block-header byte 1 (bits 0–6) taken, and their names: the formats UE's
/// Oodle compressors write (Selkie shares Mermaid's type; Hydra picks among these). The older
/// small-block types (2 LZB16, 5 LZNA, 0xB Bitknit) are refused: UE does not write them, and
/// oozextract 0.5.7's whole-match quantum, which only they use, overflows a shift on hostile
/// input in builds with overflow checks.
pub const DECODERS: [(u8, &str); 3] = [(0x6, "Kraken"), (0xA, "Mermaid"), (0xC, "Leviathan")];

/// The decoder an Oodle block header names, if `b` starts with a valid one: byte 0's low
/// nibble 0xC and bits 4–5 zero, byte 1's low 7 bits one of [`DECODERS`].
pub fn decoder(b: &[u8]) -> Option<&'static str> {
    let (&b0, &b1) = (b.first()?, b.get(1)?);
    if b0 & 0x0F != 0x0C || b0 & 0x30 != 0 {
        return None;
    }
    DECODERS
        .iter()
        .find(|(t, _)| *t == b1 & 0x7F)
        .map(|(_, n)| *n)
}

/// The most bytes `n` compressed bytes can decode to: every 0x40000 output bytes start with a
/// 2-byte block header (a memset quantum is the densest block: 6 bytes for 0x40000).
pub fn max_raw(n: usize) -> u64 {
    (n as u64 / 2).saturating_mul(LARGE_BLOCK)
}

thread_local! {
    /// One decoder per worker thread (it owns 768 KiB of scratch), reused across shaders.
    static DECODER: RefCell<Extractor> = RefCell::new(Extractor::new());
}

/// Decodes the Oodle stream `src` to exactly `raw` bytes. A `raw` over `cap`, or over what
/// `src` can expand to ([`max_raw`]), is refused before allocating; a stream that does not
/// decode to `raw` bytes (a raw size that lies) is a `DecodeFailed` error. Offsets are
/// relative to `src`.
pub fn decode(src: &[u8], raw: u64, cap: u64) -> ReadResult<Vec<u8>> {
    let Some(name) = decoder(src) else {
        return Err(ReadError::new(
            WarnKind::DecodeFailed,
            0,
            format!("no Oodle block header ({:02x?})", &src[..src.len().min(2)]),
        ));
    };
    if raw > cap {
        return Err(ReadError::new(
            WarnKind::SizeCap,
            0,
            format!("Oodle raw size {raw:#x} over the limit {cap:#x}"),
        ));
    }
    if raw > max_raw(src.len()) {
        return Err(ReadError::new(
            WarnKind::SizeCap,
            0,
            format!(
                "Oodle raw size {raw:#x} is more than {:#x} compressed bytes can hold",
                src.len()
            ),
        ));
    }
    let mut out = vec![0u8; raw as usize];
    let r = DECODER.with_borrow_mut(|d| {
        let r = catch_unwind(AssertUnwindSafe(|| d.read_from_slice(src, &mut out)));
        if r.is_err() {
            *d = Extractor::new();
        }
        r
    });
    match r {
        Ok(Ok(n)) if n == out.len() => Ok(out),
        Ok(Ok(n)) => Err(ReadError::new(
            WarnKind::DecodeFailed,
            0,
            format!("{name} stream decodes to {n:#x} bytes, raw size says {raw:#x}"),
        )),
        Ok(Err(e)) => Err(ReadError::new(
            WarnKind::DecodeFailed,
            0,
            format!("{name} stream does not decode to the raw size {raw:#x}: {e}"),
        )),
        Err(_) => Err(ReadError::new(
            WarnKind::DecodeFailed,
            0,
            format!("{name} decoder failed on this stream"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_and_bounds() {
        assert_eq!(decoder(&[0x8C, 0x0A]), Some("Mermaid"));
        assert_eq!(decoder(&[0xCC, 0x06]), Some("Kraken"));
        assert_eq!(decoder(&[0x8D, 0x0A]), None);
        assert_eq!(decoder(&[0xBC, 0x0A]), None);
        assert_eq!(decoder(&[0x8C, 0x0D]), None);
        assert_eq!(decoder(&[0x8C, 0x05]), None);
        assert_eq!(max_raw(6), 3 * LARGE_BLOCK);
        let e = decode(&[0x8C, 0x0A, 0x07, 0xFF, 0xFF, 0xAB], 1 << 40, 1 << 30).unwrap_err();
        assert_eq!(e.kind, WarnKind::SizeCap);
        let e = decode(&[0x8C, 0x0A, 0x07, 0xFF, 0xFF, 0xAB], 1 << 29, 1 << 30).unwrap_err();
        assert_eq!(e.kind, WarnKind::SizeCap);
        assert_eq!(
            decode(b"LSLG", 4, 1 << 20).unwrap_err().kind,
            WarnKind::DecodeFailed
        );
    }

    /// A Kraken stream found by the fuzz target: oozextract 0.5.7 fails an `assert!` on its
    /// Huffman table (decoder/huffman.rs, make_lut); the panic is caught and is a decode failure,
    /// and the thread's decoder still works afterwards.
    #[test]
    fn decoder_panic_is_a_decode_failure() {
        let hostile: [u8; 90] = [
            0x0c, 0x06, 0x00, 0x00, 0x53, 0x40, 0x01, 0x00, 0x00, 0x23, 0x2d, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f,
            0x7f, 0x7f, 0x7f, 0x00, 0x00, 0x12, 0x34, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00,
            0x5b, 0x00, 0x03, 0x00, 0x00, 0x21, 0x00, 0x00, 0x00, 0x00, 0x00, 0x21, 0x00, 0x00,
            0x00, 0x3b, 0x45, 0x6e, 0x27, 0x69, 0x6e, 0x65, 0x2f, 0x50, 0x72, 0x69, 0x76, 0x61,
            0x74, 0xe1, 0x07, 0x22, 0x05, 0x02,
        ];
        let e = decode(&hostile, 360, 1 << 24).unwrap_err();
        assert_eq!(e.kind, WarnKind::DecodeFailed);
        let ok = decode(&[0x8C, 0x0A, 0x07, 0xFF, 0xFF, 0xAB], 100, 1 << 20).unwrap();
        assert_eq!(ok, vec![0xAB; 100]);
    }
}
