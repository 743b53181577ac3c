//! The lifter interface: one implementation per instruction set, behind which the passes, the
//! structurizer and the SPIR-V back end are shared. `dmsh_spv::pipeline` lifts through
//! [`lifter`]`(cfg.arch)`; the Ampere lifter (128-bit words, uniform registers) becomes a
//! second [`Arch`] and a second implementation here.
//!
//! What is Maxwell's own stays behind [`Maxwell`]: the scheduling word every 32 bytes, the
//! reconvergence stack (`SSY`/`PBK`/`PCNT`/`CAL` push, `SYNC`/`BRK`/`CONT`/`RET` pop, lifted
//! to `Op::StackPush` / `Op::StackPop`, which only this lifter emits; the `static_stack` pass
//! removes them and does nothing for code without them), the CC flags and P0–P6.

use super::{Config, Result};
use crate::shader::Shader;

/// An instruction set the translator lifts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Arch {
    /// Maxwell (sm_53, the Switch's Tegra X1): 64-bit instructions, scheduling words.
    #[default]
    Maxwell,
}

impl Arch {
    /// The name tools and errors use (`sm53`).
    pub fn name(self) -> &'static str {
        match self {
            Arch::Maxwell => "sm53",
        }
    }
}

/// Turns one instruction set's code into the shared IR.
pub trait Lifter: Sync {
    /// The instruction set.
    fn arch(&self) -> Arch;
    /// Lifts a compute kernel (instructions from byte 0).
    fn lift_compute(&self, code: &[u8], cfg: &Config) -> Result<Shader>;
    /// Lifts a graphics program (the shader program header, then its instructions).
    fn lift_graphics(&self, code: &[u8], cfg: &Config) -> Result<Shader>;
}

/// The Maxwell lifter (this module's parent: one module per instruction family).
pub struct Maxwell;

impl Lifter for Maxwell {
    fn arch(&self) -> Arch {
        Arch::Maxwell
    }
    fn lift_compute(&self, code: &[u8], cfg: &Config) -> Result<Shader> {
        super::lift(code, cfg)
    }
    fn lift_graphics(&self, code: &[u8], cfg: &Config) -> Result<Shader> {
        super::lift_graphics(code, cfg)
    }
}

/// The lifter of `arch`.
pub fn lifter(arch: Arch) -> &'static dyn Lifter {
    match arch {
        Arch::Maxwell => &Maxwell,
    }
}
