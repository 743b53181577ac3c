//! zstd frames (`*.zs`): streaming decode with an output cap; dictionary frames are reported.

use std::io::Read;

use crate::error::{ReadError, ReadResult, WarnKind};

/// zstd frame magic.
pub const MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// Whether `b` starts with a zstd frame.
pub fn is(b: &[u8]) -> bool {
    b.starts_with(&MAGIC)
}

/// The Dictionary_ID of the frame at the start of `b` (0 = none), if the header is readable.
pub fn dictionary_id(b: &[u8]) -> Option<u32> {
    let fhd = *b.get(4)?;
    let did_size = [0usize, 1, 2, 4][(fhd & 3) as usize];
    let single_segment = fhd & 0x20 != 0;
    let at = 5 + usize::from(!single_segment);
    let d = b.get(at..at + did_size)?;
    let mut v = 0u32;
    for (i, &x) in d.iter().enumerate() {
        v |= (x as u32) << (8 * i);
    }
    Some(v)
}

/// Decodes all frames of `b`, producing at most `cap` bytes.
pub fn decode(b: &[u8], cap: u64) -> ReadResult<Vec<u8>> {
    match dictionary_id(b) {
        None => {
            return Err(ReadError::new(
                WarnKind::Truncated,
                0,
                "zstd frame header cut short",
            ))
        }
        Some(0) => {}
        Some(id) => {
            return Err(ReadError::new(
                WarnKind::NeedsDictionary,
                0,
                format!("frame uses dictionary {id:#x}"),
            ))
        }
    }
    let mut dec = ::zstd::stream::read::Decoder::with_buffer(b)
        .map_err(|e| ReadError::new(WarnKind::DecodeFailed, 0, e.to_string()))?;
    // Bound the decoder's window so a hostile header cannot make it reserve more than 128 MiB.
    dec.window_log_max(27)
        .map_err(|e| ReadError::new(WarnKind::DecodeFailed, 0, e.to_string()))?;
    let mut out = Vec::with_capacity((b.len() * 4).min(cap as usize).min(64 << 20));
    let n = dec
        .take(cap.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| {
            ReadError::new(
                WarnKind::DecodeFailed,
                0,
                format!("after {:#x} output bytes: {e}", out.len()),
            )
        })?;
    if n as u64 > cap {
        return Err(ReadError::new(
            WarnKind::SizeCap,
            0,
            format!("decompresses to more than {cap:#x} bytes"),
        ));
    }
    Ok(out)
}
