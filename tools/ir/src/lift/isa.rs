//! The lifter interface: one implementation per instruction set, behind which the passes, the
//! structurizer and the SPIR-V back end are shared. `dmsh_spv::pipeline` lifts through
//! [`lifter`]`(cfg.arch)`.
//!
//! What is Maxwell's own stays behind [`Maxwell`]: the scheduling word every 32 bytes, the
//! reconvergence stack (`SSY`/`PBK`/`PCNT`/`CAL` push, `SYNC`/`BRK`/`CONT`/`RET` pop, lifted
//! to `Op::StackPush` / `Op::StackPop`; the `static_stack` pass removes them and does nothing
//! for code without them) and the CC flags. [`Ampere`]'s: 16-byte words, uniform registers
//! and predicates (their own register files), `BSSY`/`BSYNC` convergence, `CALL`/`RET`
//! (lifted to the same call-stack push and pop).

use super::{Config, Result};
use crate::shader::Shader;

/// An instruction set the translator lifts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Arch {
    /// Maxwell (sm_53, the Switch's Tegra X1): 64-bit instructions, scheduling words.
    #[default]
    Maxwell,
    /// Ampere (sm_86-class, Switch 2): 128-bit instructions, uniform registers.
    Ampere,
}

impl Arch {
    /// The name tools and errors use (`sm53`).
    pub fn name(self) -> &'static str {
        match self {
            Arch::Maxwell => "sm53",
            Arch::Ampere => "sm86",
        }
    }

    /// The instruction set of an `sm_NN` number (a cubin's `e_flags`): Maxwell for 5x,
    /// Ampere for 8x; `None` for the generations dmsh does not translate.
    pub fn from_sm(sm: u32) -> Option<Arch> {
        match sm {
            50..=53 => Some(Arch::Maxwell),
            80..=89 => Some(Arch::Ampere),
            _ => None,
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

/// The Ampere lifter ([`super::ampere`]).
pub struct Ampere;

impl Lifter for Ampere {
    fn arch(&self) -> Arch {
        Arch::Ampere
    }
    fn lift_compute(&self, code: &[u8], cfg: &Config) -> Result<Shader> {
        super::ampere::lift(code, cfg)
    }
    fn lift_graphics(&self, code: &[u8], cfg: &Config) -> Result<Shader> {
        super::ampere::lift_graphics(code, cfg)
    }
}

/// The lifter of `arch`.
pub fn lifter(arch: Arch) -> &'static dyn Lifter {
    match arch {
        Arch::Maxwell => &Maxwell,
        Arch::Ampere => &Ampere,
    }
}
