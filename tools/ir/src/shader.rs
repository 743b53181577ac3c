//! A lifted shader: the IR function plus everything the back end needs to bind it.

use crate::ir::Function;

/// The shader stage (one definition for every crate: dmsh-formats).
pub use dmsh_formats::Stage;

/// Where the words of a guest constant bank come from at run time.
#[derive(Clone, Debug, PartialEq)]
pub enum BankSource {
    /// Known at translation time; embedded in the SPIR-V.
    Embedded(Vec<u32>),
    /// A uniform buffer the runner binds: guest byte `guest_offset` is byte 0 of the
    /// buffer, which holds `size` bytes.
    Buffer {
        /// The guest byte offset that maps to byte 0 of the buffer.
        guest_offset: u32,
        /// Size in bytes.
        size: u32,
    },
}

/// A constant bank as the shader sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Bank {
    /// The guest bank number.
    pub bank: u8,
    /// Where its data comes from.
    pub source: BankSource,
}

/// A lifted shader, ready for a back end.
#[derive(Clone, Debug)]
pub struct Shader {
    /// The code.
    pub func: Function,
    /// The stage.
    pub stage: Stage,
    /// Compute workgroup size.
    pub local_size: [u32; 3],
    /// Workgroup-shared memory in bytes.
    pub shared_bytes: u32,
    /// Per-thread local memory in bytes.
    pub local_bytes: u32,
    /// Constant banks the code reads.
    pub banks: Vec<Bank>,
    /// The name of the binding ABI (`nvn`, `cuda`, `deko3d`).
    pub abi: &'static str,
    /// Number of guest instructions lifted.
    pub guest_insts: usize,
    /// Graphics stages: the SPH, binding layout and I/O types the code was lifted with.
    pub gfx: Option<crate::lift::Gfx>,
}
