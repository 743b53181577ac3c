//! NVN control sections (Switch 1 and NVN2): magic, lengths and the fields the tables need.

use crate::bytes::{align_up, u32le};

/// Magic of a control section (u32 at +0).
pub const CONTROL_MAGIC: u32 = 0x9876_1234;
/// Version word (+0x4) of NVN2 (Switch 2) control sections.
pub const NVN2_VERSION: u32 = 0xC9;
/// Smallest Switch 1 control length the seed tool accepts (KTGL writes 0x848 / 0x850).
pub const MIN_CONTROL_LEN: usize = 0x760;
/// Switch 1 keys hash at most this many control bytes.
pub const KEY_CONTROL_LEN: usize = 0x880;
/// NVN2 keys hash this many control bytes (with +0x30..+0x34 zeroed).
pub const NVN2_KEY_CONTROL_LEN: usize = 0x48;

/// Which NVN generation a control section belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Gen {
    /// Switch 1 (Maxwell, 64-bit instructions).
    Nvn1,
    /// Switch 2 (Ampere, 128-bit instructions).
    Nvn2,
}

impl Gen {
    /// The name in the tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Gen::Nvn1 => "nvn1",
            Gen::Nvn2 => "nvn2",
        }
    }
}

/// The fields of a control section the scanner uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Control {
    /// Generation.
    pub gen: Gen,
    /// Length of the section (what `<key>.control` holds).
    pub len: usize,
    /// How many leading bytes the key hashes.
    pub hash_len: usize,
    /// Code area size the section announces (Switch 1: +0x704; NVN2: +0x44).
    pub code_size: usize,
    /// Offset of the c1 data in the code area (Switch 1: +0x700; NVN2: +0x40).
    pub c1_offset: usize,
    /// Size of the c1 data (Switch 1: +0x6FC; NVN2: +0x44 − +0x40).
    pub c1_size: usize,
    /// Register count (Switch 1: +0x70C; NVN2: +0x4C).
    pub regs: u32,
    /// Compute thread-group size (Switch 1: +0x748; NVN2: +0x58).
    pub threads: [u32; 3],
    /// Compute shared-memory bytes (Switch 1: +0x754; NVN2: not known, 0).
    pub shared: u32,
    /// NVN stage number at +0x714 (Switch 1 only).
    pub nvn_stage: Option<u32>,
    /// Code-area offset of the first instruction (Switch 1: +0x708, meaningful for compute
    /// code areas with the 0x12345679 header; NVN2: 0).
    pub entry: usize,
    /// Scratch (local memory) bytes per warp (Switch 1: +0x710; NVN2: not known, 0). An upper
    /// bound of 32 × the per-thread local size: like DKSH's it may include the call stack.
    pub scratch_per_warp: u32,
    /// Where the instructions end in the code area, the SPH included (NVN2: +0x38; the c1
    /// segment follows from +0x40). `None` for Switch 1 sections, which do not say.
    pub instr_end: Option<usize>,
}

/// Why bytes are not a usable control section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotControl(pub String);

fn rd(b: &[u8], off: usize) -> Result<u32, NotControl> {
    u32le(b, off).ok_or_else(|| NotControl(format!("control field +{off:#x} past the end")))
}

/// Parses the control section at the start of `b` (`b` runs to the end of what the container
/// allows). `size_hint` is the control size the container records, if any.
pub fn parse(b: &[u8], size_hint: Option<usize>) -> Result<Control, NotControl> {
    if rd(b, 0)? != CONTROL_MAGIC {
        return Err(NotControl("no control magic 0x98761234".into()));
    }
    if rd(b, 4)? == NVN2_VERSION {
        return parse_nvn2(b, size_hint);
    }
    let len = rd(b, 0x20)? as usize;
    if !len.is_multiple_of(4) {
        return Err(NotControl(format!(
            "control length {len:#x} is not a multiple of 4"
        )));
    }
    if len < MIN_CONTROL_LEN {
        return Err(NotControl(format!(
            "control length {len:#x} below {MIN_CONTROL_LEN:#x}"
        )));
    }
    if len > b.len() {
        return Err(NotControl(format!(
            "control length {len:#x} runs past the end ({:#x})",
            b.len()
        )));
    }
    if let Some(h) = size_hint {
        if h < len.min(KEY_CONTROL_LEN) {
            return Err(NotControl(format!(
                "container control size {h:#x} < control length {len:#x}"
            )));
        }
    }
    Ok(Control {
        gen: Gen::Nvn1,
        len,
        hash_len: len.min(KEY_CONTROL_LEN),
        code_size: rd(b, 0x704)? as usize,
        c1_offset: rd(b, 0x700)? as usize,
        c1_size: rd(b, 0x6FC)? as usize,
        regs: rd(b, 0x70C)?,
        threads: [rd(b, 0x748)?, rd(b, 0x74C)?, rd(b, 0x750)?],
        shared: rd(b, 0x754)?,
        nvn_stage: Some(rd(b, 0x714)?),
        entry: rd(b, 0x708)? as usize,
        scratch_per_warp: rd(b, 0x710)?,
        instr_end: None,
    })
}

fn parse_nvn2(b: &[u8], size_hint: Option<usize>) -> Result<Control, NotControl> {
    let own = rd(b, 0x30)? as usize;
    let len = if own != 0 {
        own
    } else {
        size_hint.unwrap_or(0xD8)
    };
    if !len.is_multiple_of(4) || len < 0x64 {
        return Err(NotControl(format!("NVN2 control length {len:#x} unusable")));
    }
    if len > b.len() {
        return Err(NotControl(format!(
            "NVN2 control length {len:#x} runs past the end ({:#x})",
            b.len()
        )));
    }
    let instr = rd(b, 0x38)? as usize;
    let rounded = rd(b, 0x40)? as usize;
    let code_size = rd(b, 0x44)? as usize;
    if instr == 0 || rounded != align_up(instr, 0x100) || code_size < rounded {
        return Err(NotControl(format!(
            "NVN2 lengths inconsistent: instructions {instr:#x}, rounded {rounded:#x}, code {code_size:#x}"
        )));
    }
    Ok(Control {
        gen: Gen::Nvn2,
        len,
        hash_len: NVN2_KEY_CONTROL_LEN,
        code_size,
        c1_offset: rounded,
        c1_size: code_size - rounded,
        regs: rd(b, 0x4C)?,
        threads: [rd(b, 0x58)?, rd(b, 0x5C)?, rd(b, 0x60)?],
        shared: 0,
        nvn_stage: None,
        entry: 0,
        scratch_per_warp: 0,
        instr_end: Some(instr),
    })
}
