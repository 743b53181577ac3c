//! dmsh-spv: SPIR-V emission from dmsh IR, plus the reflection record.
//!
//! [`emit`] turns a lifted [`Shader`] into SPIR-V 1.5 words for Vulkan 1.2 and a
//! [`Reflection`] (see `docs/reflection.md`). Guest registers, predicates, condition codes and
//! the reconvergence stack become `Function` variables; each IR block becomes a piece of
//! straight code. A function with one block is emitted as is; otherwise the structurizer's
//! tree (`dmsh_ir::structure`) becomes SPIR-V selection and loop constructs (`structured.rs`).
//! Only when structuring fails (a jump target known only at run time, an irreducible graph)
//! the blocks become the cases of a dispatcher loop (`loop { switch (pc) { … } }`), which is
//! valid structured control flow for any graph (the reflection's `control_flow` says which).
//!
//! Exactness: float add and multiply carry `NoContraction`; fused multiply-add is emulated
//! exactly (TwoSum + round-to-odd in f64 for f32; Dekker TwoProduct for f64) unless
//! [`FmaMode::Native`] is chosen; directed rounding (`.RZ/.RM/.RP`) is the round-to-nearest
//! result stepped by one ulp according to the sign of the exact residual.

mod emit;
mod float;
pub mod reflect;

pub use emit::emit;
pub use reflect::{IoVar, Reflection, Resource};

use dmsh_ir::Shader;

/// How fused multiply-add is translated.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum FmaMode {
    /// Exact emulation, correct on any Vulkan implementation (lavapipe's `Fma` is not fused).
    #[default]
    Exact,
    /// `OpExtInst Fma`, for targets that fuse (Apple, NVIDIA).
    Native,
}

impl FmaMode {
    /// The reflection name.
    pub fn name(self) -> &'static str {
        match self {
            FmaMode::Exact => "exact",
            FmaMode::Native => "native",
        }
    }
}

/// Back-end options.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Fused multiply-add translation.
    pub fma: FmaMode,
}

/// Emitted SPIR-V and its reflection.
#[derive(Clone, Debug)]
pub struct Output {
    /// SPIR-V words.
    pub words: Vec<u32>,
    /// The binding contract.
    pub reflection: Reflection,
}

/// Why emission failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The IR contains something the back end cannot express.
    #[error("unsupported in SPIR-V emission: {0}")]
    Unsupported(String),
    /// rspirv's builder refused an instruction (a back-end bug).
    #[error("SPIR-V builder: {0}")]
    Builder(String),
}

/// Translates and emits in one call: convenience for tests and tools.
pub fn emit_shader(shader: &Shader, opts: &Options) -> Result<Output, Error> {
    emit(shader, opts)
}

/// Why a translation failed.
#[derive(Debug, thiserror::Error)]
pub enum TranslateError {
    /// Lifting failed (undecodable or unsupported instruction, bad branch).
    #[error(transparent)]
    Lift(#[from] dmsh_ir::lift::LiftError),
    /// Emission failed.
    #[error(transparent)]
    Emit(#[from] Error),
}

/// The whole translation of one code stream: lift, run the passes, emit.
pub fn translate(
    code: &[u8],
    cfg: &dmsh_ir::lift::Config,
    opts: &Options,
) -> Result<Output, TranslateError> {
    let mut shader = dmsh_ir::lift::lift(code, cfg)?;
    dmsh_ir::passes::run_all(&mut shader.func);
    if let Some(e) = dmsh_ir::passes::handles::error(&shader.func) {
        return Err(e.into());
    }
    Ok(emit(&shader, opts)?)
}

/// Translates a graphics program (the 0x50-byte SPH followed by its instructions) with a
/// graphics configuration (`cfg.gfx` set, e.g. from `dmsh_ir::lift::dksh::graphics_config`).
pub fn translate_graphics(
    code: &[u8],
    cfg: &dmsh_ir::lift::Config,
    opts: &Options,
) -> Result<Output, TranslateError> {
    let mut shader = dmsh_ir::lift::lift_graphics(code, cfg)?;
    dmsh_ir::passes::run_all(&mut shader.func);
    if let Some(e) = dmsh_ir::passes::handles::error(&shader.func) {
        return Err(e.into());
    }
    Ok(emit(&shader, opts)?)
}
