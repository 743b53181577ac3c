//! Where the instructions are: NVN code areas, uam `*.code.bin` files and DKSH containers.
//!
//! * NVN graphics code area: 0x30-byte header (magic 0x12345678), the SPH at +0x30,
//!   instructions at +0x80. NVN compute: header magic 0x12345679, instructions at +0x100.
//! * deko3d/uam DKSH code section, graphics: 0x30 bytes of filler text, SPH at +0x30,
//!   instructions at +0x80 (same geometry as NVN); compute: instructions at +0.
//! * uam `*.code.bin` (this project's corpus): graphics = SPH at +0, instructions at +0x50;
//!   compute = instructions at +0.

use crate::code::{Layout, COMPUTE_MAGIC, GFX_MAGIC, HEADER_SIZE};
pub use crate::dksh::is_dksh;
use crate::dksh::{Dksh, DkshError};
use crate::sph::{Sph, SPH_SIZE};

/// One program found in a code area or container.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// What it is, for listings (e.g. `"NVN graphics code area"`).
    pub kind: &'static str,
    /// The SPH for graphics programs.
    pub sph: Option<Sph>,
    /// Byte offset of the first instruction in the input.
    pub code_start: usize,
    /// Byte offset one past the last instruction byte considered.
    pub code_end: usize,
}

fn plausible_sph(b: &[u8], off: usize) -> Option<Sph> {
    Sph::parse(b.get(off..)?).filter(|s| s.plausible())
}

/// Locates the program of a single code area (NVN layout, uam code section or uam
/// `*.code.bin`).
pub fn locate_code_area(b: &[u8]) -> Program {
    let end = b.len() & !7;
    match crate::bytes::u32le(b, 0) {
        Some(GFX_MAGIC) => {
            return Program {
                kind: "NVN graphics code area",
                sph: plausible_sph(b, HEADER_SIZE),
                code_start: Layout::Graphics.start().min(end),
                code_end: end,
            }
        }
        Some(COMPUTE_MAGIC) => {
            return Program {
                kind: "NVN compute code area",
                sph: None,
                code_start: Layout::ComputeHeader.start().min(end),
                code_end: end,
            }
        }
        _ => {}
    }
    if let Some(sph) = plausible_sph(b, HEADER_SIZE) {
        return Program {
            kind: "graphics code area (0x30 header, SPH at 0x30)",
            sph: Some(sph),
            code_start: Layout::Graphics.start().min(end),
            code_end: end,
        };
    }
    if let Some(sph) = plausible_sph(b, 0) {
        // 0x50 bytes for a v3 SPH (uam / NVN), 0x80 for v4 (NAK sm86 / NVN2).
        let code_start = sph.size().min(end);
        return Program {
            kind: "graphics code (SPH at 0)",
            sph: Some(sph),
            code_start,
            code_end: end,
        };
    }
    Program {
        kind: "compute code",
        sph: None,
        code_start: 0,
        code_end: end,
    }
}

/// Locates every program of a DKSH container ([`crate::dksh`]): each program's instructions
/// run from its entry point (after the SPH for graphics) to [`Dksh::program_end`], rounded
/// down to whole instructions.
pub fn locate_dksh(b: &[u8]) -> Result<Vec<Program>, DkshError> {
    let d = Dksh::parse(b)?;
    let base = d.control_size;
    let kinds = [
        "vertex",
        "fragment",
        "geometry",
        "tess-control",
        "tess-eval",
        "compute",
    ];
    Ok(d.programs
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let (sph, first) = if p.is_compute() {
                (None, p.entry)
            } else {
                (Sph::parse(&b[base + p.entry..]), p.entry + SPH_SIZE)
            };
            let end = d.program_end(k);
            Program {
                kind: kinds.get(p.kind as usize).copied().unwrap_or("unknown"),
                sph,
                code_start: base + first.min(end),
                code_end: (base + end) & !7,
            }
        })
        .collect())
}
