//! Bounded streaming decodes: a decoder's steps write into one buffer that never grows past a
//! stated bound (one byte past it shows a stream longer than stated), with an optional peek at
//! the first bytes before the buffer grows, and the size checks and errors the readers share.
//! Raw deflate is here too (KPKA entries, KTGL zlib chunks); zstd's step is in [`super::zstd`].

use std::cell::RefCell;

use flate2::{Decompress, FlushDecompress, Status};

use crate::error::{ReadError, ReadResult, WarnKind};

/// How much a decode may give, and how its errors name the stream.
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    /// The most bytes the decode may add to the buffer.
    pub limit: usize,
    /// Whether it must add exactly `limit` bytes (a size the container states).
    pub exact: bool,
    /// The length of the compressed input (where a stream that stops early points).
    pub input: usize,
    /// What the stream is called in errors ("deflate stream", "zstd frame").
    pub stream: &'static str,
}

/// A look at the first decoded bytes: how many, and whether to decode the rest.
pub type Peek<F> = Option<(usize, F)>;

/// Where a decoder step left off.
#[derive(Debug, Clone, Copy)]
pub struct Step {
    /// Input bytes consumed so far (where errors of the step's output point).
    pub read: usize,
    /// Whether the stream has ended.
    pub end: bool,
}

/// Runs `step` (which decodes into the spare capacity of the buffer it is given) until the
/// stream ends, adding at most `b.limit` bytes to `out`. With `peek = Some((n, first))`, the
/// buffer holds at most `n` new bytes until `first`, given them (fewer if the stream is
/// shorter), agrees; `Ok(false)` when it does not. Errors: more than the limit
/// ([`WarnKind::SizeCap`]); an end short of an exact limit ([`WarnKind::DecodeFailed`]); a
/// stream that stops before its end ([`WarnKind::Truncated`] when the size was stated, else
/// [`WarnKind::DecodeFailed`]).
pub fn run(
    out: &mut Vec<u8>,
    b: Bound,
    peek: Peek<impl FnOnce(&[u8]) -> bool>,
    mut step: impl FnMut(&mut Vec<u8>) -> ReadResult<Step>,
) -> ReadResult<bool> {
    let start = out.len();
    let mut peek = peek;
    if let Some((n, _)) = &peek {
        out.reserve_exact((*n).min(b.limit.saturating_add(1)));
    }
    let mut read = 0;
    loop {
        let produced = out.len() - start;
        if peek.is_none() && out.len() == out.capacity() {
            let room = b.limit.saturating_add(1) - produced;
            out.reserve_exact(if b.exact {
                room
            } else {
                room.min(produced.max(1 << 16))
            });
        }
        let before = (out.len(), read);
        let s = step(out)?;
        read = s.read;
        let produced = out.len() - start;
        let full = out.len() == out.capacity();
        if let Some((_, first)) = peek.take_if(|(n, _)| full || produced >= *n || s.end) {
            if !first(&out[start..]) {
                return Ok(false);
            }
        }
        if produced > b.limit {
            let detail = match b.exact {
                true => format!("decodes to more than the {:#x} bytes stated", b.limit),
                false => format!("decodes to more than {:#x} bytes", b.limit),
            };
            return Err(ReadError::new(WarnKind::SizeCap, s.read, detail));
        }
        if s.end {
            if b.exact && produced != b.limit {
                return Err(ReadError::new(
                    WarnKind::DecodeFailed,
                    s.read,
                    format!("decodes to {produced:#x} bytes, {:#x} stated", b.limit),
                ));
            }
            return Ok(true);
        }
        if before == (out.len(), s.read) && !full {
            let kind = match b.exact {
                true => WarnKind::Truncated,
                false => WarnKind::DecodeFailed,
            };
            return Err(ReadError::new(
                kind,
                b.input,
                format!("{} ends early, after {produced:#x} output bytes", b.stream),
            ));
        }
    }
}

thread_local! {
    /// One raw-deflate state per worker thread, reused across streams.
    static INFLATE: RefCell<Decompress> = RefCell::new(Decompress::new(false));
}

/// Inflates the raw deflate stream `data` onto the end of `out` within `limit` (`exact`: to
/// exactly that many bytes), as [`run`] does; error offsets are inside `data`.
pub fn inflate(
    data: &[u8],
    out: &mut Vec<u8>,
    limit: usize,
    exact: bool,
    peek: Peek<impl FnOnce(&[u8]) -> bool>,
) -> ReadResult<bool> {
    let b = Bound {
        limit,
        exact,
        input: data.len(),
        stream: "deflate stream",
    };
    INFLATE.with_borrow_mut(|d| {
        d.reset(false);
        run(out, b, peek, |out| {
            let input = &data[(d.total_in() as usize).min(data.len())..];
            let status = d
                .decompress_vec(input, out, FlushDecompress::None)
                .map_err(|x| {
                    ReadError::new(
                        WarnKind::DecodeFailed,
                        d.total_in() as usize,
                        format!("deflate: {x}"),
                    )
                })?;
            Ok(Step {
                read: d.total_in() as usize,
                end: status == Status::StreamEnd,
            })
        })
    })
}

/// No peek, for [`run`] and [`inflate`].
pub const NO_PEEK: Peek<fn(&[u8]) -> bool> = None;

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn deflate(b: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(b).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn exact_and_capped_sizes_short_streams_and_the_peek() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 13) as u8).collect();
        let z = deflate(&data);
        let n = data.len();
        let mut out = vec![7u8];
        assert!(inflate(&z, &mut out, n, true, NO_PEEK).unwrap());
        assert_eq!(&out[1..], &data[..]);
        let kind = |limit, exact, z: &[u8]| {
            let e = inflate(z, &mut Vec::new(), limit, exact, NO_PEEK).unwrap_err();
            (e.kind, e.offset)
        };
        assert_eq!(kind(n - 1, true, &z).0, WarnKind::SizeCap);
        assert_eq!(kind(n - 1, false, &z).0, WarnKind::SizeCap);
        assert_eq!(kind(n + 1, true, &z).0, WarnKind::DecodeFailed);
        assert!(inflate(&z, &mut Vec::new(), n + 1, false, NO_PEEK).unwrap());
        let half = &z[..z.len() / 2];
        let at = half.len() as u64;
        assert_eq!(kind(n, true, half), (WarnKind::Truncated, at));
        assert_eq!(kind(n, false, half), (WarnKind::DecodeFailed, at));
        // The peek sees the first 4 bytes before the buffer grows; a refusal stops there.
        let (mut out, mut seen) = (Vec::new(), Vec::new());
        let peek = Some((4, |h: &[u8]| {
            seen = h.to_vec();
            false
        }));
        assert!(!inflate(&z, &mut out, 1 << 30, true, peek).unwrap());
        assert_eq!((&seen[..], out.capacity()), (&data[..4], 4));
    }
}
