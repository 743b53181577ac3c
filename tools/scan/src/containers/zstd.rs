//! zstd frames (`*.zs`): streaming decode with an output cap; dictionary frames are reported.

use std::cell::RefCell;

use ::zstd::zstd_safe::{DCtx, DParameter, InBuffer, OutBuffer, ResetDirective};

use super::bounded::{self, Bound, Peek, Step};
use super::{ContainerReader, Found, Sniff};
use crate::error::{ReadError, ReadResult, WarnKind};

/// zstd frame magic.
pub const MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// The registry's zstd reader: decodes the frames into one layer (`|zstd`).
pub const READER: ContainerReader = ContainerReader {
    name: "zstd",
    sniff: Sniff::Magic(0, &MAGIC),
    read: |i| decode(i.bytes, i.cap).map(Found::layer),
};

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

fn zerr(off: usize, code: usize) -> ReadError {
    ReadError::new(
        WarnKind::DecodeFailed,
        off,
        ::zstd::zstd_safe::get_error_name(code).to_string(),
    )
}

thread_local! {
    /// One decompression context per worker thread, reused across files.
    static DCTX: RefCell<DCtx<'static>> = RefCell::new(DCtx::create());
}

/// Refuses a frame header that is cut short or names a dictionary.
fn check_header(b: &[u8]) -> ReadResult<()> {
    match dictionary_id(b) {
        None => Err(ReadError::new(
            WarnKind::Truncated,
            0,
            "zstd frame header cut short",
        )),
        Some(0) => Ok(()),
        Some(id) => Err(ReadError::new(
            WarnKind::NeedsDictionary,
            0,
            format!("frame uses dictionary {id:#x}"),
        )),
    }
}

/// Runs `f` on this thread's context, reset, with the window bounded so a hostile header
/// cannot make the decoder reserve more than 128 MiB.
fn with_context<R>(f: impl FnOnce(&mut DCtx<'static>) -> ReadResult<R>) -> ReadResult<R> {
    DCTX.with_borrow_mut(|d| {
        d.reset(ResetDirective::SessionAndParameters)
            .map_err(|c| zerr(0, c))?;
        d.set_parameter(DParameter::WindowLogMax(27))
            .map_err(|c| zerr(0, c))?;
        f(d)
    })
}

/// Streams the frames `b` onto the end of `out` within `limit` bytes (`exact`: exactly that
/// many), with an optional peek, as [`bounded::run`] does; error offsets are inside `b`.
pub fn stream(
    b: &[u8],
    out: &mut Vec<u8>,
    limit: usize,
    exact: bool,
    peek: Peek<impl FnOnce(&[u8]) -> bool>,
) -> ReadResult<bool> {
    check_header(b)?;
    let bound = Bound {
        limit,
        exact,
        input: b.len(),
        stream: "zstd frame",
    };
    with_context(|d| {
        let mut input = InBuffer::around(b);
        bounded::run(out, bound, peek, |out| {
            let pos = out.len();
            // The output buffer sets `out`'s length to what the decoder wrote.
            let hint = {
                let mut ob = OutBuffer::around_pos(out, pos);
                d.decompress_stream(&mut ob, &mut input)
            }
            .map_err(|c| zerr(input.pos(), c))?;
            Ok(Step {
                read: input.pos(),
                end: hint == 0 && input.pos() == b.len(),
            })
        })
    })
}

/// Decodes all frames of `b`, producing at most `cap` bytes.
pub fn decode(b: &[u8], cap: u64) -> ReadResult<Vec<u8>> {
    if let Some(out) = one_shot(b, cap)? {
        return Ok(out);
    }
    // Streaming (no stated size, or several frames), growing the output up to the cap.
    let cap = usize::try_from(cap).unwrap_or(usize::MAX);
    let mut out = Vec::with_capacity(
        (b.len() * 4)
            .clamp(1 << 12, 1 << 24)
            .min(cap.saturating_add(1)),
    );
    stream(b, &mut out, cap, false, bounded::NO_PEEK)?;
    Ok(out)
}

/// One frame that states its size (one-shot encoders), within `cap`: decoded in one call into
/// a buffer of exactly that size; `None` for other frames.
fn one_shot(b: &[u8], cap: u64) -> ReadResult<Option<Vec<u8>>> {
    check_header(b)?;
    let (Ok(Some(size)), Ok(frame_len)) = (
        ::zstd::zstd_safe::get_frame_content_size(b),
        ::zstd::zstd_safe::find_frame_compressed_size(b),
    ) else {
        return Ok(None);
    };
    if size > cap {
        return Err(ReadError::new(
            WarnKind::SizeCap,
            0,
            format!("frame states {size:#x} bytes, limit {cap:#x}"),
        ));
    }
    if frame_len != b.len() {
        return Ok(None);
    }
    with_context(|d| {
        let mut out = Vec::with_capacity(size as usize);
        let n = d.decompress(&mut out, b).map_err(|c| zerr(0, c))?;
        if n as u64 != size {
            return Err(ReadError::new(
                WarnKind::DecodeFailed,
                0,
                format!("decodes to {n:#x} bytes, frame states {size:#x}"),
            ));
        }
        Ok(Some(out))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dictionary_id_and_garbage() {
        // FHD 0x01: one Dictionary_ID byte, not single-segment (window byte first).
        let f = [0x28, 0xB5, 0x2F, 0xFD, 0x01, 0x00, 0x2A];
        assert_eq!(dictionary_id(&f), Some(0x2A));
        assert_eq!(
            decode(&f, 1 << 20).unwrap_err().kind,
            WarnKind::NeedsDictionary
        );
        assert_eq!(
            decode(&MAGIC, 1 << 20).unwrap_err().kind,
            WarnKind::Truncated
        );
        let mut g = MAGIC.to_vec();
        g.extend_from_slice(&[0x00, 0x58, 0xFF, 0xFF, 0xFF, 0xFF]);
        assert!(decode(&g, 1 << 20).is_err());
    }
}
