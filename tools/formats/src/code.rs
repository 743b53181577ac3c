//! Code areas: header magics, the SPH stage, and the compute program-start rule.

use crate::bytes::{u32le, u64le};
use crate::control::{Control, Gen};
use crate::stage::Stage;

/// Magic of a graphics code area (0x30-byte header, SPH at +0x30, instructions at +0x80).
pub const GFX_MAGIC: u32 = 0x1234_5678;
/// Size of a code area's header; in a graphics code area the SPH follows it.
pub const HEADER_SIZE: usize = 0x30;
/// Magic of a compute code area (0x30-byte header, zero padding, instructions at +0x100).
pub const COMPUTE_MAGIC: u32 = 0x1234_5679;
/// Maxwell EXIT.
pub const EXIT: u64 = 0xe300_0000_0007_000f;
/// Maxwell BRA to itself (as NVN's compiler ends programs).
pub const BRA_SELF: u64 = 0xe240_0fff_ff87_000f;
/// Maxwell BRA to itself with the predicate form uam writes.
pub const BRA_SELF_UAM: u64 = 0xe240_0fff_ff07_000f;

/// How the code area is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Layout {
    /// 0x12345678 header, SPH at +0x30.
    Graphics,
    /// 0x12345679 header, instructions at +0x100.
    ComputeHeader,
    /// Headerless compute, instructions at +0.
    ComputeBare,
    /// NVN2 (Ampere) code, SPH (graphics) at +0.
    Nvn2,
}

impl Layout {
    /// The name in shader_facts.tsv.
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::Graphics => "graphics",
            Layout::ComputeHeader => "compute_header",
            Layout::ComputeBare => "compute_bare",
            Layout::Nvn2 => "nvn2",
        }
    }

    /// Offset of the SPH, for the layouts that carry one (an NVN2 compute program has none
    /// even so).
    pub fn sph_start(self) -> Option<usize> {
        match self {
            Layout::Graphics => Some(HEADER_SIZE),
            Layout::Nvn2 => Some(0),
            Layout::ComputeHeader | Layout::ComputeBare => None,
        }
    }

    /// Offset of the first instruction.
    pub fn start(self) -> usize {
        match self {
            Layout::Graphics => 0x80,
            Layout::ComputeHeader => 0x100,
            Layout::ComputeBare | Layout::Nvn2 => 0,
        }
    }
}

/// Stage from SPH word 0, if it is a valid SPH (type 1 VTG or 2 pixel, shader type 1..5, and
/// the two agree).
pub fn sph_stage(word0: u32) -> Option<Stage> {
    let sph_type = word0 & 0x1f;
    let stage = Stage::from_sph_type((word0 >> 10) & 0xf)?;
    match (sph_type, stage) {
        (2, Stage::Fragment) => Some(stage),
        (1, s) if s != Stage::Fragment => Some(s),
        _ => None,
    }
}

/// Checks a compute program's start at `start` of `code`, instructions ending at `end`:
/// the first non-zero word sits at a 32-byte group start and looks like a scheduling word
/// (bit 63 clear), and every EXIT / branch-to-self sits in an instruction slot. At least one
/// of those must exist.
pub fn check_compute_start(code: &[u8], start: usize, end: usize) -> Result<(), String> {
    let end = end.min(code.len());
    let mut first = None;
    let mut ends = 0usize;
    let mut p = start;
    while p + 8 <= end {
        let w = u64le(code, p).unwrap_or(0);
        if w != 0 && first.is_none() {
            first = Some((p, w));
        }
        if w == EXIT || w == BRA_SELF || w == BRA_SELF_UAM {
            if (p - start).is_multiple_of(32) {
                return Err(format!(
                    "EXIT / BRA-self at +{p:#x} sits in a scheduling slot"
                ));
            }
            ends += 1;
        }
        p += 8;
    }
    let Some((fp, fw)) = first else {
        return Err("no instructions".into());
    };
    if !(fp - start).is_multiple_of(32) || fw >> 63 != 0 {
        return Err(format!(
            "first non-zero word {fw:#018x} at +{fp:#x} is not a scheduling word"
        ));
    }
    if ends == 0 {
        return Err("no EXIT or branch-to-self in the program".into());
    }
    Ok(())
}

/// Validates a code area against its control section and finds the stage.
/// `claimed` is the stage the container says (BNSH slot, NDSR type), `allow_bare` whether the
/// container may hold headerless compute code.
pub fn classify(
    ctl: &Control,
    code: &[u8],
    claimed: Option<Stage>,
    allow_bare: bool,
) -> Result<(Stage, Layout), String> {
    if code.len() < ctl.code_size || ctl.code_size == 0 {
        return Err(format!(
            "code size {:#x} does not fit in {:#x} bytes",
            ctl.code_size,
            code.len()
        ));
    }
    let code = &code[..ctl.code_size];
    if ctl.c1_offset > ctl.code_size {
        return Err(format!(
            "c1 offset {:#x} beyond code size {:#x}",
            ctl.c1_offset, ctl.code_size
        ));
    }
    let instr_end = if ctl.c1_offset > 0 && ctl.c1_size > 0 {
        ctl.c1_offset
    } else {
        ctl.code_size
    };
    if ctl.gen == Gen::Nvn2 {
        let stage = match claimed {
            Some(s) => s,
            None => match u32le(code, 0).and_then(sph_stage) {
                Some(s) => s,
                None if ctl.threads[0] != 0 => Stage::Compute,
                None => return Err("NVN2 stage unknown".into()),
            },
        };
        return Ok((stage, Layout::Nvn2));
    }
    let magic = u32le(code, 0).unwrap_or(0);
    let (stage, layout) = if magic == GFX_MAGIC {
        let w0 = u32le(code, HEADER_SIZE).ok_or("code area shorter than its SPH")?;
        if code.len() < Layout::Graphics.start() {
            return Err("graphics code area shorter than 0x80".into());
        }
        let s = sph_stage(w0).ok_or_else(|| format!("SPH word 0 {w0:#x} invalid"))?;
        (s, Layout::Graphics)
    } else if magic == COMPUTE_MAGIC {
        if code.len() <= Layout::ComputeHeader.start() {
            return Err("compute code area has no instructions after its header".into());
        }
        if code[HEADER_SIZE..Layout::ComputeHeader.start()]
            .iter()
            .any(|&b| b != 0)
        {
            return Err("compute header padding 0x30..0x100 is not zero".into());
        }
        check_compute_start(code, Layout::ComputeHeader.start(), instr_end)?;
        (Stage::Compute, Layout::ComputeHeader)
    } else if allow_bare && ctl.threads[0] != 0 {
        check_compute_start(code, 0, instr_end)?;
        (Stage::Compute, Layout::ComputeBare)
    } else {
        return Err(format!(
            "code area magic {magic:#x} is neither 0x12345678 nor 0x12345679"
        ));
    };
    // A compute thread group is at most 1024 per dimension; all zero means a variable group
    // size (GLSL local_size_variable), allowed only where the 0x12345679 header names compute.
    let zero = ctl.threads == [0; 3];
    if stage == Stage::Compute
        && (ctl.threads.iter().any(|&t| t > 1024)
            || (!zero && ctl.threads.contains(&0))
            || (zero && layout == Layout::ComputeBare))
    {
        return Err(format!("compute thread group {:?} invalid", ctl.threads));
    }
    if let Some(c) = claimed {
        if c != stage {
            return Err(format!("container says {c}, code says {stage}"));
        }
    }
    Ok((stage, layout))
}
