//! `.nv.info` / `.nv.info.K` attribute records (`EIATTR_*`).
//!
//! Each record starts with a format byte and an attribute byte. Formats 1–3 (`EIFMT_NVAL`,
//! `EIFMT_BVAL`, `EIFMT_HVAL`) take four bytes in all, the value in the last two; format 4
//! (`EIFMT_SVAL`) is followed by a 16-bit length and that many bytes.

use crate::Error;

/// `EIATTR_PARAM_CBANK`: symbol of bank 0, then `param_base | param_size << 16`.
pub const PARAM_CBANK: u8 = 0x0a;
/// `EIATTR_FRAME_SIZE`: per-thread stack frame bytes (global `.nv.info`, by symbol).
pub const FRAME_SIZE: u8 = 0x11;
/// `EIATTR_MIN_STACK_SIZE` (global `.nv.info`, by symbol).
pub const MIN_STACK_SIZE: u8 = 0x12;
/// `EIATTR_KPARAM_INFO`: one per kernel parameter.
pub const KPARAM_INFO: u8 = 0x17;
/// `EIATTR_CBANK_PARAM_SIZE`: parameter bytes (16-bit value).
pub const CBANK_PARAM_SIZE: u8 = 0x19;
/// `EIATTR_MAXREG_COUNT`: register limit (16-bit value).
pub const MAXREG_COUNT: u8 = 0x1b;
/// `EIATTR_EXIT_INSTR_OFFSETS`: `.text` offsets of EXIT instructions.
pub const EXIT_INSTR_OFFSETS: u8 = 0x1c;
/// `EIATTR_CRS_STACK_SIZE`: call/return/sync stack bytes.
pub const CRS_STACK_SIZE: u8 = 0x1e;
/// `EIATTR_MAX_STACK_SIZE` (global `.nv.info`, by symbol).
pub const MAX_STACK_SIZE: u8 = 0x23;
/// `EIATTR_REGCOUNT`: registers used (global `.nv.info`, by symbol).
pub const REGCOUNT: u8 = 0x2f;
/// `EIATTR_INDIRECT_BRANCH_TARGETS`: BRX sites and their possible targets.
pub const INDIRECT_BRANCH_TARGETS: u8 = 0x34;

/// One decoded attribute record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attr {
    /// Format byte (1 = none, 2 = byte, 3 = half word, 4 = sized bytes).
    pub format: u8,
    /// Attribute code (`EIATTR_*`).
    pub code: u8,
    /// Inline 16-bit value for formats 1–3 (0 for format 1).
    pub value: u16,
    /// Payload for format 4.
    pub data: Vec<u8>,
    /// File offset of the record.
    pub file_offset: u64,
}

impl Attr {
    /// The attribute's name as NVIDIA's tools print it (`EIATTR_0xNN` when unknown).
    pub fn name(&self) -> String {
        attr_name(self.code)
    }

    /// Little-endian u32 at byte `i` of the payload.
    pub fn u32_at(&self, i: usize) -> Option<u32> {
        let b = self.data.get(i..i.checked_add(4)?)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// The payload as little-endian u32 words (a trailing partial word is ignored).
    pub fn words(&self) -> Vec<u32> {
        self.data
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    }
}

/// The name of an `EIATTR_*` code.
pub fn attr_name(code: u8) -> String {
    const NAMES: [&str; 0x38] = [
        "EIATTR_ERROR",
        "EIATTR_PAD",
        "EIATTR_IMAGE_SLOT",
        "EIATTR_JUMPTABLE_RELOCS",
        "EIATTR_CTAIDZ_USED",
        "EIATTR_MAX_THREADS",
        "EIATTR_IMAGE_OFFSET",
        "EIATTR_IMAGE_SIZE",
        "EIATTR_TEXTURE_NORMALIZED",
        "EIATTR_SAMPLER_INIT",
        "EIATTR_PARAM_CBANK",
        "EIATTR_SMEM_PARAM_OFFSETS",
        "EIATTR_CBANK_PARAM_OFFSETS",
        "EIATTR_SYNC_STACK",
        "EIATTR_TEXID_SAMPID_MAP",
        "EIATTR_EXTERNS",
        "EIATTR_REQNTID",
        "EIATTR_FRAME_SIZE",
        "EIATTR_MIN_STACK_SIZE",
        "EIATTR_SAMPLER_FORCE_UNNORMALIZED",
        "EIATTR_BINDLESS_IMAGE_OFFSETS",
        "EIATTR_BINDLESS_TEXTURE_BANK",
        "EIATTR_BINDLESS_SURFACE_BANK",
        "EIATTR_KPARAM_INFO",
        "EIATTR_SMEM_PARAM_SIZE",
        "EIATTR_CBANK_PARAM_SIZE",
        "EIATTR_QUERY_NUMATTRIB",
        "EIATTR_MAXREG_COUNT",
        "EIATTR_EXIT_INSTR_OFFSETS",
        "EIATTR_S2RCTAID_INSTR_OFFSETS",
        "EIATTR_CRS_STACK_SIZE",
        "EIATTR_NEED_CNP_WRAPPER",
        "EIATTR_NEED_CNP_PATCH",
        "EIATTR_EXPLICIT_CACHING",
        "EIATTR_ISTYPEP_USED",
        "EIATTR_MAX_STACK_SIZE",
        "EIATTR_SUQ_USED",
        "EIATTR_LD_CACHEMOD_INSTR_OFFSETS",
        "EIATTR_LOAD_CACHE_REQUEST",
        "EIATTR_ATOM_SYS_INSTR_OFFSETS",
        "EIATTR_COOP_GROUP_INSTR_OFFSETS",
        "EIATTR_COOP_GROUP_MASK_REGIDS",
        "EIATTR_SW1850030_WAR",
        "EIATTR_WMMA_USED",
        "EIATTR_HAS_PRE_V10_OBJECT",
        "EIATTR_ATOMF16_EMUL_INSTR_OFFSETS",
        "EIATTR_ATOM16_EMUL_INSTR_REG_MAP",
        "EIATTR_REGCOUNT",
        "EIATTR_SW2393858_WAR",
        "EIATTR_INT_WARP_WIDE_INSTR_OFFSETS",
        "EIATTR_SHARED_SCRATCH",
        "EIATTR_STATISTICS",
        "EIATTR_INDIRECT_BRANCH_TARGETS",
        "EIATTR_SW2861232_WAR",
        "EIATTR_SW_WAR",
        "EIATTR_CUDA_API_VERSION",
    ];
    match NAMES.get(code as usize) {
        Some(n) => (*n).to_string(),
        None => format!("EIATTR_{code:#04x}"),
    }
}

/// Splits an `.nv.info*` section into records. `base` is the section's file offset.
pub fn parse(bytes: &[u8], base: u64) -> Result<Vec<Attr>, Error> {
    let mut out = Vec::new();
    let mut i = 0usize;
    while i < bytes.len() {
        let at = base + i as u64;
        let Some(h) = bytes.get(i..i + 4) else {
            return Err(Error::Truncated {
                what: "nv.info record",
                offset: at,
            });
        };
        let (format, code, v) = (h[0], h[1], u16::from_le_bytes([h[2], h[3]]));
        match format {
            1..=3 => {
                out.push(Attr {
                    format,
                    code,
                    value: if format == 1 { 0 } else { v },
                    data: Vec::new(),
                    file_offset: at,
                });
                i += 4;
            }
            4 => {
                let end = i + 4 + v as usize;
                let data = bytes.get(i + 4..end).ok_or(Error::Truncated {
                    what: "nv.info payload",
                    offset: at,
                })?;
                out.push(Attr {
                    format,
                    code,
                    value: 0,
                    data: data.to_vec(),
                    file_offset: at,
                });
                i = end;
            }
            _ => {
                return Err(Error::Malformed {
                    offset: at,
                    msg: format!("nv.info record format {format:#x} is unknown"),
                })
            }
        }
    }
    Ok(out)
}
