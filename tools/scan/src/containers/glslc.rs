//! GLSLC compiler outputs (magic 0x19866891, total size at +0x44): one control section with
//! the code area right after it. Read in `main` when the profile sets `shader_main_glslc`.

use super::{ContainerReader, Found, Sniff};
use crate::bytes::{align_up, u32le};
use crate::control::CONTROL_MAGIC;
use crate::error::{ReadError, WarnKind};
use crate::shader::{extract_with, ContainerKind, Hit, Hits, Spot, Work};

/// GLSLC output magic (little endian bytes 91 68 86 19).
pub const MAGIC: u32 = 0x1986_6891;

/// The registry's GLSLC reader: every output in a main's image, when the profile asks; each
/// output counts as one container opened.
pub const READER: ContainerReader = ContainerReader {
    name: ContainerKind::Glslc.as_str(),
    sniff: Sniff::By(|i| i.glslc_in_main),
    read: |i| {
        let hits = scan(i.bytes);
        Ok(Found::Shaders {
            kind: ContainerKind::Glslc,
            opened: hits.shaders.len() as u64,
            hits,
        })
    },
};

/// Finds and reads every GLSLC output in `b`. Candidates failing the checks are not outputs.
pub fn scan(b: &[u8]) -> Hits {
    let ctls = control_positions(b);
    let mut work = Work::for_container(b.len());
    let mut hits = Hits::default();
    let mut n = 0usize;
    for at in memchr::memmem::find_iter(b, &MAGIC.to_le_bytes()) {
        if let Ok(mut h) = read_at(b, at, &ctls, &mut work) {
            h.index = format!("out{n}");
            n += 1;
            hits.shaders.push(h);
        }
    }
    hits
}

/// 4-byte-aligned offsets of every control-section magic in `b`, ascending.
fn control_positions(b: &[u8]) -> Vec<usize> {
    memchr::memmem::find_iter(b, &CONTROL_MAGIC.to_le_bytes())
        .filter(|p| p % 4 == 0)
        .collect()
}

/// Reads the GLSLC output at `at`.
pub fn read_one(b: &[u8], at: usize) -> Result<Hit, ReadError> {
    read_at(b, at, &control_positions(b), &mut Work::unlimited())
}

fn read_at(b: &[u8], at: usize, ctls: &[usize], work: &mut Work) -> Result<Hit, ReadError> {
    let total = u32le(b, at + 0x44)
        .ok_or_else(|| ReadError::new(WarnKind::Truncated, at, "GLSLC header cut short"))?
        as usize;
    let end = at
        .checked_add(total)
        .filter(|&e| total >= 0x100 && e <= b.len())
        .ok_or_else(|| {
            ReadError::new(
                WarnKind::Truncated,
                at + 0x44,
                format!("output size {total:#x} does not fit"),
            )
        })?;
    // The first control section after the header, found in the precomputed list (a scan per
    // candidate would be quadratic on hostile input).
    let first = ctls.partition_point(|&c| c < at + 0x50);
    let c = match ctls.get(first) {
        Some(&c) if c + 4 <= end => c,
        _ => {
            return Err(ReadError::new(
                WarnKind::BadShader,
                at,
                "no control section in the output",
            ))
        }
    };
    let len = u32le(b, c + 0x20).unwrap_or(0) as usize;
    let mut last = ReadError::new(
        WarnKind::BadShader,
        at,
        "no code area after the control section",
    );
    for code in [c + len, align_up(c + len, 0x10), align_up(c + len, 0x100)] {
        let spot = Spot {
            ctl: c,
            ctl_end: end,
            ctl_size: None,
            code,
            code_end: end,
            claimed: None,
            allow_bare: true,
        };
        match extract_with(b, spot, work) {
            Ok(piece) => {
                return Ok(Hit {
                    piece,
                    offset: at as u64,
                    index: String::new(),
                })
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}
