//! dmsh-ir: the translator's intermediate representation, the lifting of decoded
//! machine instructions into it, and the passes that run on it.
//!
//! (The long design description lives in `docs/ir.md` and is summarised here.)
//!
//! # Shape
//!
//! A [`Shader`](shader::Shader) holds one [`Function`](ir::Function) plus what a back end
//! needs to bind it (stage, workgroup size, shared and local sizes, constant banks and where
//! their data comes from). A function is an arena of [`Inst`](ir::Inst)s — an [`Op`](ir::Op),
//! a result [`Type`](ir::Type) and up to four argument [`Value`](ir::Value)s (a value *is*
//! the index of its defining instruction) — and a list of [`Block`](ir::Block)s, each a flat
//! list of values in execution order and a [`Terminator`](ir::Terminator). Block 0 is the
//! entry.
//!
//! # Guest state
//!
//! Guest state is accessed through explicit operations, as in yuzu's IR: `Get(Reg)` /
//! `Set(Reg)` address a register by file and index ([`Reg`], [`RegFile`]): GPRs R0–R254 (RZ
//! never reaches the IR: reads become the constant 0, writes are dropped), predicates P0–P6
//! (PT is the constant `true`), the condition codes of Maxwell's carry chain (`.CC` / `.X`),
//! and for Ampere uniform registers, uniform predicates and convergence barriers; Maxwell's
//! lifter also emits `StackPush`/`StackPop` for the
//! per-thread reconvergence and call stack (`SSY`/`SYNC`, `PBK`/`BRK`, `PCNT`/`CONT`,
//! `CAL`/`RET`). The `ssa` pass turns registers, predicates and flags into SSA values
//! (Braun et al.'s construction with trivial-phi removal): state reads become the values that
//! reach them, writes disappear, and values cross blocks. Where definitions meet, a block
//! starts with phis: `Op::Phi(k)`, whose incoming `(predecessor, value)` pairs are
//! [`Function::phi_in`](ir::Function::phi_in)`[k]` (an instruction has only four argument
//! slots). Every use is dominated by its definition (a phi operand: the end of its
//! predecessor); constants have no position. A function that still has a `Dynamic` jump
//! (targets unknown) keeps guest state in variables across blocks instead
//! ([`Function::ssa`](ir::Function::ssa) false); the back end emits both.
//!
//! # Operations
//!
//! Operations are close to SPIR-V's (integer, float with an explicit [`Round`](ir::Round)ing
//! mode, conversions, memory per [`Space`](ir::Space), atomics, barriers, warp operations,
//! system values). Maxwell's rules (shift clamping, FTZ, saturation, NaN behaviour of min/max,
//! F2I saturation, XMAD's 16-bit halves, the carry chain…) are spelled out by the lifter with
//! these primitives, so the back end only has to be exact about each primitive (for directed
//! rounding and fused multiply-add it emulates exactly, see `dmsh-spv`).
//!
//! # Control flow
//!
//! A block ends in a static `Jump`/`Branch`/`Switch`, a `Dynamic` jump to a guest byte
//! address computed at run time (reconvergence stack pops, returns, `BRX`), `Exit` or `Kill`.
//! Predicated instructions with effects (stores, atomics, branches) split blocks; predicated
//! register writes become selects.
//!
//! [`structure`] makes that graph static and structured: the first pass resolves the
//! reconvergence/call stack at translation time (pops become jumps, subroutines are copied
//! per call site, `BRX` through a known jump table becomes a `Switch`), the second splits
//! nodes of irreducible loops, and
//! [`structure::structurize`] turns the static graph into a tree of if / switch / loop with
//! break and continue ([`structure::Node`]) that maps one-to-one onto SPIR-V's structured
//! control flow, using a goto variable only where a branch leaves several constructs. Back ends
//! fall back to a dispatcher loop when it fails (see `docs/ir.md`, "Control flow").
//! [`uniform`] computes workgroup uniformity of SSA values and finds barriers that some
//! invocations may skip by ending first ([`uniform::barrier::exit_divergent_barrier`]); back
//! ends run those through the barrier-synchronised dispatcher (`docs/ir.md`, "Barriers").
//!
//! # Passes
//!
//! [`passes::PASSES`] lists them in order; each is one module with a unit test on a small
//! hand-built function. Two lowerings run after them when the back end asks
//! (`dmsh_spv::pipeline`): [`passes::tensor`] turns the warp matrix multiply-accumulate
//! ([`Op::Mma`](ir::Op::Mma), HMMA / IMMA) into shuffles and per-lane arithmetic, and
//! [`passes::warp_shared`] emulates 32-lane warp operations through workgroup memory
//! (`docs/ir.md`, "Tensor instructions", "Warp operations in workgroup memory").

pub mod const_reads;
pub mod dom;
pub mod gfx;
pub mod hash;
pub mod interval;
pub mod ir;
pub mod lift;
pub mod passes;
pub mod shader;
pub mod structure;
pub mod uniform;

pub use gfx::*;
pub use ir::*;
pub use shader::*;
