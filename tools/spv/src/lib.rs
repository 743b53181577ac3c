//! dmsh-spv: SPIR-V emission from dmsh IR, plus the reflection record.
//!
//! [`translate`] / [`translate_graphics`] run the whole pipeline ([`pipeline`]: lift, the
//! passes, structurize, the barrier rule, emission, Metal indices); emission turns a lifted
//! `Shader` into SPIR-V 1.5 words for Vulkan 1.2 and a
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
//! result stepped by one ulp according to the sign of the exact residual. With
//! [`F64Mode::Soft`] (Metal) there is no f64 at all: f64 values are `uvec2` bit patterns and
//! f64 arithmetic, directed rounding and the exact FMA are exact routines on 32-bit integers
//! (`soft/`, docs/ir.md "Soft f64").

mod emit;
mod float;
pub mod lower;
pub mod pipeline;
pub mod reflect;
mod soft;

pub use pipeline::{emit, translate, translate_graphics, Debug};
pub use reflect::{IoVar, Reflection, Resource};

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

/// How 32-lane warp operations (SHFL, VOTE, REDUX, MATCH, the tensor exchanges) are
/// translated.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum WarpMode {
    /// Subgroup operations: right where subgroups are 32 lanes wide (NVIDIA, Apple's
    /// simdgroups); the reflection's `warp_ops` says the shader needs that.
    #[default]
    Subgroup,
    /// Workgroup memory and barriers over groups of 32 invocations (dmsh-ir's `warp_shared`
    /// lowering): exact on any subgroup size, compute shaders with a fixed workgroup size
    /// only; for testing on lavapipe (8-lane subgroups). Reflection: `warp_emulated`.
    Workgroup,
}

impl WarpMode {
    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            WarpMode::Subgroup => "subgroup",
            WarpMode::Workgroup => "workgroup",
        }
    }
}

/// How the tensor instructions (HMMA, IMMA) are translated.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum TensorMode {
    /// Exact emulation: each lane gathers the A and B elements its D elements need with
    /// shuffles and computes them (dmsh-ir's `tensor` lowering). Works everywhere.
    #[default]
    SubgroupEmulation,
    /// SPV_KHR_cooperative_matrix operations through workgroup memory, for targets that have
    /// them with 32-lane subgroups; with [`WarpMode::Workgroup`] the emulation is used anyway.
    CooperativeMatrix,
}

impl TensorMode {
    /// The reflection's and the command line's name.
    pub fn name(self) -> &'static str {
        match self {
            TensorMode::SubgroupEmulation => "subgroup_emulation",
            TensorMode::CooperativeMatrix => "cooperative_matrix",
        }
    }
}

/// How 64-bit floating point is translated.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum F64Mode {
    /// SPIR-V `Float64` types and instructions (Vulkan targets with `shaderFloat64`).
    #[default]
    Native,
    /// No 64-bit float type at all (Metal has none): f64 values are `uvec2` bit patterns and
    /// every f64 operation, and every place the emitter would round through f64 (f32 directed
    /// rounding, exact FMA, conversions), is an exact software routine on 32-bit integers,
    /// emitted once per module as a SPIR-V function (`soft/`, docs/ir.md "Soft f64").
    Soft,
}

impl F64Mode {
    /// The reflection name.
    pub fn name(self) -> &'static str {
        match self {
            F64Mode::Native => "native",
            F64Mode::Soft => "soft",
        }
    }
}

/// Back-end options.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Fused multiply-add translation.
    pub fma: FmaMode,
    /// 64-bit floating point: native or exact software routines.
    pub f64: F64Mode,
    /// The pipeline's debug switches (default: from `DMSH_DEBUG`, see [`pipeline`]).
    pub debug: Debug,
    /// Which form of the shader to emit (a lowered geometry pipeline's passes, [`lower`]).
    pub form: lower::Form,
    /// Warp operations through subgroups or emulated in workgroup memory.
    pub warp: WarpMode,
    /// Tensor instructions emulated or as cooperative-matrix operations.
    pub tensor: TensorMode,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            fma: FmaMode::default(),
            f64: F64Mode::default(),
            debug: Debug::from_env(),
            form: lower::Form::default(),
            warp: WarpMode::default(),
            tensor: TensorMode::default(),
        }
    }
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

/// Why a translation failed.
#[derive(Debug, thiserror::Error)]
pub enum TranslateError {
    /// Lifting failed (undecodable or unsupported instruction, bad branch).
    #[error(transparent)]
    Lift(#[from] dmsh_ir::lift::LiftError),
    /// Emission failed.
    #[error(transparent)]
    Emit(#[from] Error),
    /// The SSA verifier rejected the IR after a step (`DMSH_DEBUG=verify`).
    #[error("IR after {step} fails verification: {msg}")]
    Verify {
        /// The step after which the IR was checked.
        step: &'static str,
        /// The verifier's message.
        msg: String,
    },
}
