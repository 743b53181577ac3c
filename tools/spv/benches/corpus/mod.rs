//! The 92 corpus shaders as benchmark jobs, configured as the corpus tests configure them
//! (shared by the benches of dmsh-spv and dmsh-msl; the including crate declares `common`,
//! tools/spv/tests/common).

#![allow(dead_code)] // each including bench uses part of it

use super::common;
use dmsh_ir::lift::{dksh, BindingLayout, Config};
use dmsh_spv::{translate, translate_graphics, Options, Output};

/// CPU time consumed by this thread, in seconds.
pub fn cpu_now() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if r != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// One corpus shader: name, code (graphics: SPH + instructions), configuration, and whether
/// it takes the graphics path (`lift_graphics` / `translate_graphics`).
pub struct Job {
    /// The kernel or file name.
    pub name: String,
    /// Code (graphics: SPH + instructions).
    pub code: Vec<u8>,
    /// The lifting configuration.
    pub cfg: Config,
    /// Whether it takes the graphics path.
    pub graphics: bool,
}

impl Job {
    /// Guest instruction slots (excluding scheduling words and the SPH).
    pub fn insts(&self) -> usize {
        if self.cfg.arch == dmsh_ir::lift::Arch::Ampere {
            return self.code.len() / 16;
        }
        let sph = if self.graphics {
            dmsh_isa::sph::SPH_SIZE
        } else {
            0
        };
        (self.code.len() - sph) / 8 * 3 / 4
    }

    /// The instruction bytes (the code after the SPH for graphics).
    pub fn instrs(&self) -> &[u8] {
        if self.graphics {
            &self.code[dmsh_isa::sph::SPH_SIZE..]
        } else {
            &self.code
        }
    }

    pub fn translate(&self, opts: &Options) -> Result<Output, dmsh_spv::TranslateError> {
        if self.graphics {
            translate_graphics(&self.code, &self.cfg, opts)
        } else {
            translate(&self.code, &self.cfg, opts)
        }
    }

    pub fn lift(&self) -> dmsh_ir::Shader {
        let l = dmsh_ir::lift::lifter(self.cfg.arch);
        if self.graphics {
            l.lift_graphics(&self.code, &self.cfg).expect("lifts")
        } else {
            l.lift_compute(&self.code, &self.cfg).expect("lifts")
        }
    }
}

/// The 92 corpus shaders: the sm53 kernels of tests/corpus/sass and every DKSH program of
/// tests/corpus/dksh (compute and graphics), configured as the corpus tests configure them.
pub fn corpus() -> Vec<Job> {
    let mut jobs: Vec<Job> = Vec::new();
    for (name, path) in common::sass_kernels() {
        let c = dmsh_cubin::read(&path).expect("cubin");
        let k = c.kernel(&name).expect("kernel");
        let cfg = common::cuda_config(k, common::io_block(&name).unwrap_or([32, 1, 1]));
        jobs.push(Job {
            name,
            code: k.code.clone(),
            cfg,
            graphics: false,
        });
    }
    for (name, code, ls, shared, local) in common::dksh_compute() {
        jobs.push(Job {
            name,
            code,
            cfg: common::deko3d_config(ls, shared, local),
            graphics: false,
        });
    }
    let dir = common::root().join("tests/corpus/dksh");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("dksh dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "dksh"))
        .collect();
    files.sort();
    for p in files {
        let bytes = std::fs::read(&p).expect("dksh");
        let prog = dksh::parse(&bytes).expect("dksh parses");
        if prog.stage == dmsh_ir::Stage::Compute {
            continue;
        }
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let mut cfg = dksh::graphics_config(
            prog.stage,
            &prog.code,
            &prog.cbuf1,
            BindingLayout::deko3d(prog.stage),
            &name,
        )
        .expect("graphics config");
        if let Some(g) = cfg.gfx.as_mut() {
            g.early_fragment_tests = prog.early_fragment_tests;
            if let Some(t) = prog.tess_param {
                g.tess_from_container(t);
            }
        }
        jobs.push(Job {
            name,
            code: prog.code,
            cfg,
            graphics: true,
        });
    }
    jobs
}

/// The sm86 builds of the sass kernels (ptxas for Ampere, the same PTX as the sm53 jobs).
pub fn corpus_sm86() -> Vec<Job> {
    let mut jobs = Vec::new();
    for (name, _) in common::sass_kernels() {
        let path = common::root().join(format!("tests/corpus/sass/{name}.sm86.cubin"));
        let Ok(c) = dmsh_cubin::read(&path) else {
            continue;
        };
        let k = c.kernel(&name).expect("kernel");
        let cfg = common::cuda_config(k, common::io_block(&name).unwrap_or([32, 1, 1]));
        jobs.push(Job {
            name,
            code: k.code.clone(),
            cfg,
            graphics: false,
        });
    }
    jobs
}
