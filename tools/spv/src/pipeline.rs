//! The translation pipeline: every step from machine code to SPIR-V and its reflection, in
//! the order [`steps`] lists them — lift, each pass of `dmsh_ir::passes::PASSES`, the handle
//! check, structurize, the barrier rule, emission, Metal argument indices.
//!
//! `DMSH_DEBUG=print,verify` (or [`Debug`] in [`Options`]) prints the IR after each step that
//! changes it (`print`) and runs `dmsh_ir::passes::ssa::verify` after each (`verify`; a
//! failure is a [`TranslateError::Verify`] naming the step). `print=STEP` prints after that
//! step only.

use crate::emit::emit_planned;
use crate::{Error, Options, Output, TranslateError};
use dmsh_ir::structure::Structured;
use dmsh_ir::{Function, Shader};

/// Debug switches of the pipeline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Debug {
    /// Print the IR to stderr after every step that changes it.
    pub print: bool,
    /// Print only after this step (with `print`).
    pub only: Option<&'static str>,
    /// Run the SSA verifier after every IR step.
    pub verify: bool,
}

impl Debug {
    /// Parses `print`, `print=STEP`, `verify` (comma-separated); unknown words are ignored.
    pub fn parse(s: &str) -> Debug {
        let mut d = Debug::default();
        for w in s.split(',').map(str::trim) {
            match w.split_once('=') {
                Some(("print", step)) => {
                    d.print = true;
                    d.only = steps().into_iter().find(|&n| n == step);
                }
                _ if w == "print" => d.print = true,
                _ if w == "verify" => d.verify = true,
                _ => {}
            }
        }
        d
    }

    /// The switches `DMSH_DEBUG` sets (read once per process).
    pub fn from_env() -> Debug {
        static ENV: std::sync::OnceLock<Debug> = std::sync::OnceLock::new();
        *ENV.get_or_init(|| {
            std::env::var("DMSH_DEBUG")
                .map(|s| Debug::parse(&s))
                .unwrap_or_default()
        })
    }

    /// After an IR step: print and/or verify as asked.
    fn after(&self, step: &'static str, f: &Function) -> Result<(), TranslateError> {
        if self.print && self.only.is_none_or(|o| o == step) {
            eprintln!("; ---- IR after {step} ----\n{f}");
        }
        if self.verify {
            dmsh_ir::passes::ssa::verify(f).map_err(|msg| TranslateError::Verify { step, msg })?;
        }
        Ok(())
    }

    /// A step that decides without changing the IR: print its decision (made into text only
    /// when printed: translation without `DMSH_DEBUG` formats nothing).
    fn note(&self, step: &'static str, what: impl FnOnce() -> String) {
        if self.print && self.only.is_none_or(|o| o == step) {
            eprintln!("; ---- {step}: {}", what());
        }
    }
}

/// The steps in the order they run.
pub fn steps() -> Vec<&'static str> {
    let mut v = vec!["lift"];
    v.extend(dmsh_ir::passes::PASSES.iter().map(|(n, _)| *n));
    v.extend([
        "tensor",
        "warp_shared",
        "check_handles",
        "structurize",
        "barrier_rule",
        "emit",
        "metal_indices",
    ]);
    v
}

/// How the control flow is emitted, decided before emission.
pub struct Plan {
    /// The structurizer's tree (`None`: one block, or the dispatcher loop).
    pub tree: Option<Structured>,
    /// A barrier follows a divergent exit (`dmsh_ir::uniform::barrier`): the structurable
    /// graph is emitted through the barrier-synchronised dispatcher instead.
    pub barrier_split: bool,
}

impl Plan {
    /// Whether the blocks go through a dispatcher loop.
    pub fn dispatcher(&self, f: &Function) -> bool {
        f.blocks.len() > 1 && self.tree.is_none()
    }
}

/// Structurize (more than one block) and the exit-divergent barrier rule.
fn plan(f: &Function, dbg: &Debug) -> Plan {
    let tree = (f.blocks.len() > 1)
        .then(|| dmsh_ir::structure::structurize(f))
        .and_then(|r| match r {
            Ok(t) => Some(t),
            Err(e) => {
                dbg.note("structurize", || format!("dispatcher ({e})"));
                None
            }
        });
    if let Some(t) = &tree {
        dbg.note("structurize", || format!("structured, {} gotos", t.gotos));
    }
    // Both barrier rules walk the instructions; most functions have no barrier at all (and
    // no flag saying they may).
    let barriers = tree.is_some() && f.barrier_ops && dmsh_ir::uniform::barrier::any_barrier_op(f);
    // Named barriers (ids other than 0, thread counts, arrivals) are counted by the
    // synchronised dispatcher only.
    let named = barriers && f.named_barriers();
    if named {
        dbg.note("barrier_rule", || {
            "named barriers: synchronised dispatcher".into()
        });
    }
    let barrier_split =
        named || barriers && dmsh_ir::uniform::barrier::exit_divergent_barrier(f).is_some();
    if barrier_split && !named {
        dbg.note("barrier_rule", || {
            "barrier after a divergent exit: synchronised dispatcher".into()
        });
    }
    Plan {
        tree: tree.filter(|_| !barrier_split),
        barrier_split,
    }
}

/// Lifts a compute kernel (instructions from byte 0) and runs every step.
pub fn translate(
    code: &[u8],
    cfg: &dmsh_ir::lift::Config,
    opts: &Options,
) -> Result<Output, TranslateError> {
    let sh = dmsh_ir::lift::lifter(cfg.arch).lift_compute(code, cfg)?;
    run(sh, opts)
}

/// Lifts a graphics program (the 0x50-byte SPH followed by its instructions; `cfg.gfx` set,
/// e.g. by `dmsh_ir::lift::dksh::graphics_config`) and runs every step.
pub fn translate_graphics(
    code: &[u8],
    cfg: &dmsh_ir::lift::Config,
    opts: &Options,
) -> Result<Output, TranslateError> {
    let sh = dmsh_ir::lift::lifter(cfg.arch).lift_graphics(code, cfg)?;
    run(sh, opts)
}

/// Every step after lifting.
fn run(sh: Shader, opts: &Options) -> Result<Output, TranslateError> {
    let sh = passes(sh, opts)?;
    Ok(finish(&sh, opts, &opts.debug)?)
}

/// The IR steps after lifting: every pass in order, with the debug switches (snapshot tests and
/// tools that want the IR emission starts from call this, then [`emit`]).
pub fn passes(mut sh: Shader, opts: &Options) -> Result<Shader, TranslateError> {
    let dbg = opts.debug;
    dbg.after("lift", &sh.func)?;
    for (name, pass) in dmsh_ir::passes::PASSES {
        pass(&mut sh.func);
        dbg.after(name, &sh.func)?;
    }
    // The tensor instructions: emulated with shuffles unless emitted as cooperative-matrix
    // operations (which the workgroup warp emulation cannot carry).
    let coop = opts.tensor == crate::TensorMode::CooperativeMatrix
        && opts.warp == crate::WarpMode::Subgroup;
    let mut changed = false;
    if !coop && dmsh_ir::passes::tensor::run(&mut sh.func) {
        changed = true;
        dbg.after("tensor", &sh.func)?;
    }
    if opts.warp == crate::WarpMode::Workgroup {
        match dmsh_ir::passes::warp_shared::run(&mut sh) {
            Ok(Some(_)) => {
                changed = true;
                dbg.after("warp_shared", &sh.func)?;
            }
            Ok(None) => {}
            Err(e) => return Err(Error::Unsupported(format!("warp emulation: {e}")).into()),
        }
    }
    if changed {
        dmsh_ir::passes::const_fold::run(&mut sh.func);
        dmsh_ir::passes::dce::run(&mut sh.func);
    }
    Ok(sh)
}

/// The steps after the passes: handle check, planning, emission, Metal indices.
fn finish(sh: &Shader, opts: &Options, dbg: &Debug) -> Result<Output, Error> {
    if let Some(e) = dmsh_ir::passes::handles::error(&sh.func) {
        return Err(Error::Unsupported(e.to_string()));
    }
    let plan = plan(&sh.func, dbg);
    let mut out = emit_planned(sh, &plan, opts)?;
    dbg.note("emit", || format!("{} words", out.words.len()));
    out.reflection.metal = crate::reflect::assign_metal_indices(&mut out.reflection.resources);
    dbg.note("metal_indices", || format!("{:?}", out.reflection.metal));
    Ok(out)
}

/// Emits a shader whose passes already ran (benchmarks and tools that time or print the
/// steps themselves): the steps after the passes, without debug output.
pub fn emit(sh: &Shader, opts: &Options) -> Result<Output, Error> {
    finish(sh, opts, &Debug::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_switches_parse() {
        let d = Debug::parse("print,verify");
        assert!(d.print && d.verify && d.only.is_none());
        let d = Debug::parse("print=ssa");
        assert!(d.print && !d.verify && d.only == Some("ssa"));
        assert!(Debug::parse("verify, bogus").verify);
        assert_eq!(Debug::parse(""), Debug::default());
    }

    #[test]
    fn steps_list_every_pass_between_lift_and_emission() {
        let s = steps();
        assert_eq!(s.first(), Some(&"lift"));
        assert_eq!(s.last(), Some(&"metal_indices"));
        for (p, _) in dmsh_ir::passes::PASSES {
            assert!(s.contains(p), "{p}");
        }
        let pos = |n: &str| s.iter().position(|x| *x == n).unwrap();
        assert!(pos("dce") < pos("structurize") && pos("structurize") < pos("emit"));
    }
}
