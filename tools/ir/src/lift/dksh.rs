//! The DKSH container (deko3d shader module, `tests/corpus/dksh/README.md` §2): one
//! program's code, constant data and the program-header fields the translation needs.

use super::abi::{Abi, Config};
use super::layout::{BindingLayout, Gfx};
use crate::shader::Stage;
use std::collections::BTreeMap;

/// One program of a DKSH file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DkshProgram {
    /// The stage (program header `type`).
    pub stage: Stage,
    /// Graphics: the SPH followed by the instructions; compute: the instructions.
    pub code: Vec<u8>,
    /// The c\[1\] data (compiler constants) as words.
    pub cbuf1: Vec<u32>,
    /// Registers per thread.
    pub num_gprs: u32,
    /// Fragment: early fragment tests.
    pub early_fragment_tests: bool,
    /// Tess-eval: domain | spacing << 4 | output primitive << 8 (`None` for other stages).
    pub tess_param: Option<u32>,
    /// Compute: workgroup size.
    pub local_size: [u32; 3],
    /// Compute: shared bytes.
    pub shared_bytes: u32,
    /// Per-thread local bytes the program declares: compute `local_pos_mem_sz`, graphics the
    /// SPH's local-memory sizes (low + high).
    pub local_bytes: u32,
}

fn u32_at(b: &[u8], off: usize) -> Result<u32, String> {
    b.get(off..off + 4)
        .map(|s| u32::from_le_bytes(s.try_into().expect("4")))
        .ok_or_else(|| format!("DKSH: truncated at {off:#x}"))
}

/// Parses the first program of a DKSH file.
pub fn parse(b: &[u8]) -> Result<DkshProgram, String> {
    if u32_at(b, 0)? != 0x4853_4B44 {
        return Err("DKSH: bad magic at 0x0".into());
    }
    let control = u32_at(b, 8)? as usize;
    let code_sz = u32_at(b, 12)? as usize;
    let progs = u32_at(b, 16)? as usize;
    if u32_at(b, 20)? == 0 {
        return Err("DKSH: no programs (offset 0x14)".into());
    }
    let code_end = control
        .checked_add(code_sz)
        .filter(|&e| e <= b.len())
        .ok_or_else(|| format!("DKSH: code section {control:#x}+{code_sz:#x} past the end"))?;
    let section = &b[control..code_end];
    let p = progs;
    let stage = match u32_at(b, p)? {
        0 => Stage::Vertex,
        1 => Stage::Fragment,
        2 => Stage::Geometry,
        3 => Stage::TessControl,
        4 => Stage::TessEval,
        5 => Stage::Compute,
        t => return Err(format!("DKSH: program type {t} at {p:#x}")),
    };
    let entry = u32_at(b, p + 4)? as usize;
    let num_gprs = u32_at(b, p + 8)?;
    let c1_off = u32_at(b, p + 12)? as usize;
    let c1_sz = u32_at(b, p + 16)? as usize;
    let code_stop = if c1_sz > 0 && c1_off > entry {
        c1_off
    } else {
        section.len()
    };
    let code = section
        .get(entry..code_stop.min(section.len()))
        .ok_or_else(|| format!("DKSH: entry point {entry:#x} outside the code section"))?
        .to_vec();
    let cbuf1 = if c1_sz > 0 {
        let d = section
            .get(c1_off..c1_off + c1_sz)
            .ok_or_else(|| format!("DKSH: c[1] data {c1_off:#x}+{c1_sz:#x} outside the code"))?;
        d.chunks(4)
            .map(|c| {
                let mut w = [0u8; 4];
                w[..c.len()].copy_from_slice(c);
                u32::from_le_bytes(w)
            })
            .collect()
    } else {
        Vec::new()
    };
    let u = p + 24;
    let mut prog = DkshProgram {
        stage,
        code,
        cbuf1,
        num_gprs,
        early_fragment_tests: false,
        tess_param: None,
        local_size: [1, 1, 1],
        shared_bytes: 0,
        local_bytes: 0,
    };
    match stage {
        Stage::Fragment => prog.early_fragment_tests = b.get(u + 1).copied().unwrap_or(0) != 0,
        Stage::TessEval => prog.tess_param = Some(u32_at(b, u)?),
        Stage::Compute => {
            prog.local_size = [u32_at(b, u)?, u32_at(b, u + 4)?, u32_at(b, u + 8)?];
            prog.shared_bytes = u32_at(b, u + 12)?;
            prog.local_bytes = u32_at(b, u + 16)?;
        }
        _ => {}
    }
    if stage != Stage::Compute {
        if let Ok(sph) = dmsh_isa::sph_info::SphInfo::parse(&prog.code) {
            prog.local_bytes = sph_local_bytes(&sph);
        }
    }
    Ok(prog)
}

/// Per-thread local bytes an SPH declares: below and above the stack pointer (the
/// call/return stack's bytes are the hardware's, not the program's).
pub fn sph_local_bytes(sph: &dmsh_isa::sph_info::SphInfo) -> u32 {
    sph.local_memory_low.saturating_add(sph.local_memory_high)
}

/// The lifting configuration of a graphics stage under a binding layout: constant banks
/// (c0 driver data and the uniform buffers bound at run time, c1 embedded), the SPH from the
/// code (and its declared local-memory size), and float I/O unless the caller sets types.
pub fn graphics_config(
    stage: Stage,
    code: &[u8],
    cbuf1: &[u32],
    layout: BindingLayout,
    key: &str,
) -> Result<Config, String> {
    let sph = dmsh_isa::sph_info::SphInfo::parse(code)
        .map_err(|e| format!("shader {key}: offset 0x0: program header (SPH): {e}"))?;
    let abi = if layout.name == "nvn" {
        Abi::Nvn
    } else {
        Abi::Deko3d
    };
    let mut cfg = Config::compute(abi, [1, 1, 1]);
    cfg.stage = stage;
    cfg.declared_local_bytes = sph_local_bytes(&sph);
    cfg.buffer_banks.insert(0, (0, 0x10000));
    // The handle bank (NVN c[2]: texture, image and sampler tables) is run-time data the
    // replay fills: read as a buffer where the code reads it as data (tex_dyn handles).
    cfg.buffer_banks.insert(layout.tex_bank, (0, 0x10000));
    for b in layout.first_ubo_bank..18u8 {
        cfg.buffer_banks.insert(b, (0, 0x10000));
    }
    let mut embedded = BTreeMap::new();
    embedded.insert(1u8, cbuf1.to_vec());
    cfg.embedded_banks = embedded;
    cfg.gfx = Some(Gfx::new(sph, layout, key));
    Ok(cfg)
}
