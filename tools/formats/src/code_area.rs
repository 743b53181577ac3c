//! Where the instructions are: NVN code areas, uam `*.code.bin` files and DKSH containers.
//!
//! * NVN graphics code area: 0x30-byte header (magic 0x12345678), the SPH at +0x30,
//!   instructions at +0x80. NVN compute: header magic 0x12345679, instructions at +0x100.
//! * deko3d/uam DKSH code section, graphics: 0x30 bytes of filler text, SPH at +0x30,
//!   instructions at +0x80 (same geometry as NVN); compute: instructions at +0.
//! * uam `*.code.bin` (this project's corpus): graphics = SPH at +0, instructions at +0x50;
//!   compute = instructions at +0.

use crate::code::{Layout, COMPUTE_MAGIC, GFX_MAGIC, HEADER_SIZE};
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

/// Why a container could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LayoutError {
    /// The input is shorter than its header says.
    Truncated {
        /// Bytes the header asks for.
        need: usize,
        /// Bytes there are.
        have: usize,
    },
    /// A DKSH header field is out of range.
    BadDksh(String),
}

impl std::fmt::Display for LayoutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LayoutError::Truncated { need, have } => {
                write!(f, "truncated input: need {need:#x} bytes, have {have:#x}")
            }
            LayoutError::BadDksh(m) => write!(f, "bad DKSH header: {m}"),
        }
    }
}

impl std::error::Error for LayoutError {}

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    b.get(off..off + 4)
        .map(|s| u32::from_le_bytes(s.try_into().expect("4 bytes")))
}

fn plausible_sph(b: &[u8], off: usize) -> Option<Sph> {
    Sph::parse(b.get(off..)?).filter(|s| s.plausible())
}

/// Locates the program of a single code area (NVN layout, uam code section or uam
/// `*.code.bin`).
pub fn locate_code_area(b: &[u8]) -> Program {
    let end = b.len() & !7;
    match u32_at(b, 0) {
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
        return Program {
            kind: "graphics code (SPH at 0)",
            sph: Some(sph),
            code_start: SPH_SIZE.min(end),
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

/// Whether the bytes start with a DKSH header.
pub fn is_dksh(b: &[u8]) -> bool {
    b.starts_with(b"DKSH")
}

/// Locates every program of a DKSH container. Each program's code runs from its entry
/// point (after the SPH for graphics) to the next program or the `c[1]` data, whichever
/// comes first, else to the end of the code section.
pub fn locate_dksh(b: &[u8]) -> Result<Vec<Program>, LayoutError> {
    let need = |n: usize| {
        if b.len() < n {
            Err(LayoutError::Truncated {
                need: n,
                have: b.len(),
            })
        } else {
            Ok(())
        }
    };
    need(0x18)?;
    let control_sz = u32_at(b, 8).unwrap_or(0) as usize;
    let code_sz = u32_at(b, 12).unwrap_or(0) as usize;
    let programs_off = u32_at(b, 16).unwrap_or(0) as usize;
    let num = u32_at(b, 20).unwrap_or(0) as usize;
    if num > 64 {
        return Err(LayoutError::BadDksh(format!("{num} programs")));
    }
    let code_end = control_sz
        .checked_add(code_sz)
        .ok_or_else(|| LayoutError::BadDksh("sizes overflow".into()))?;
    need(code_end)?;
    need(programs_off + num * 64)?;
    let mut starts = Vec::new();
    for i in 0..num {
        let h = programs_off + i * 64;
        let ty = u32_at(b, h).unwrap_or(0);
        let entry = u32_at(b, h + 4).unwrap_or(0) as usize;
        let cb1_off = u32_at(b, h + 12).unwrap_or(0) as usize;
        let cb1_sz = u32_at(b, h + 16).unwrap_or(0) as usize;
        if entry >= code_sz {
            return Err(LayoutError::BadDksh(format!(
                "program {i}: entry point {entry:#x} outside code"
            )));
        }
        starts.push((ty, entry, if cb1_sz > 0 { Some(cb1_off) } else { None }));
    }
    let mut out = Vec::new();
    for (i, &(ty, entry, cb1)) in starts.iter().enumerate() {
        let compute = ty == 5;
        let (sph, first) = if compute {
            (None, entry)
        } else {
            (Sph::parse(&b[control_sz + entry..]), entry + SPH_SIZE)
        };
        let mut end = code_sz;
        for &(_, e, _) in &starts {
            if e > entry && e < end {
                end = e.saturating_sub(if compute { 0 } else { 0x30 });
            }
        }
        if let Some(c) = cb1 {
            if c > entry && c < end {
                end = c;
            }
        }
        let _ = i;
        let kinds = [
            "vertex",
            "fragment",
            "geometry",
            "tess-control",
            "tess-eval",
            "compute",
        ];
        let kind = kinds.get(ty as usize).copied().unwrap_or("unknown");
        let start = (control_sz + first).min(control_sz + end);
        out.push(Program {
            kind,
            sph,
            code_start: start,
            code_end: (control_sz + end) & !7,
        });
    }
    Ok(out)
}
