//! A DKSH program (deko3d shader module, `tests/corpus/dksh/README.md` §2) as the translation
//! takes it: one program's code, constant data and the program-header fields it needs, read
//! through [`dmsh_formats::dksh`]; and the lifting configuration of a graphics stage.

use super::abi::{Abi, Config};
use super::layout::{BindingLayout, Gfx};
use crate::shader::Stage;
use dmsh_formats::dksh::Dksh;
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

/// Parses the first program of a DKSH file (the container is read by
/// [`dmsh_formats::dksh`]; an error names the offset).
pub fn parse(b: &[u8]) -> Result<DkshProgram, String> {
    let d = Dksh::parse(b).map_err(|e| e.to_string())?;
    let Some(p) = d.programs.first() else {
        return Err("DKSH: offset 0x14: no programs".into());
    };
    let stage = p
        .stage()
        .ok_or_else(|| format!("DKSH: offset {:#x}: program type {}", p.offset, p.kind))?;
    let cbuf1 = d
        .cbuf1(0)
        .map_err(|e| e.to_string())?
        .chunks(4)
        .map(|c| {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            u32::from_le_bytes(w)
        })
        .collect();
    let mut prog = DkshProgram {
        stage,
        code: d.program_code(0).to_vec(),
        cbuf1,
        num_gprs: p.num_gprs,
        early_fragment_tests: false,
        tess_param: None,
        local_size: [1, 1, 1],
        shared_bytes: 0,
        local_bytes: 0,
    };
    match stage {
        Stage::Fragment => prog.early_fragment_tests = p.early_fragment_tests(),
        Stage::TessEval => prog.tess_param = Some(p.tess_param()),
        Stage::Compute => {
            prog.local_size = p.block_dims();
            prog.shared_bytes = p.shared_bytes();
            prog.local_bytes = p.local_bytes();
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
    let abi = match layout.name.as_str() {
        "nvn" => Abi::Nvn,
        "nvk" => Abi::Nvk,
        _ => Abi::Deko3d,
    };
    let mut cfg = Config::compute(abi, [1, 1, 1]);
    cfg.stage = stage;
    cfg.declared_local_bytes = sph_local_bytes(&sph);
    cfg.buffer_banks.insert(0, (0, 0x10000));
    // The handle bank (NVN c[2]: texture, image and sampler tables) is run-time data the
    // replay fills: read as a buffer where the code reads it as data (tex_dyn handles).
    cfg.buffer_banks.insert(layout.tex_bank, (0, 0x10000));
    cfg.buffer_banks.insert(layout.image_bank, (0, 0x10000));
    for b in layout.first_ubo_bank..18u8 {
        cfg.buffer_banks.insert(b, (0, 0x10000));
    }
    let mut embedded = BTreeMap::new();
    embedded.insert(1u8, cbuf1.to_vec());
    cfg.embedded_banks = embedded;
    cfg.gfx = Some(Gfx::new(sph, layout, key));
    Ok(cfg)
}
