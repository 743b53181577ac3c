//! The engine every ISA shares: decode, encode and print driven by one table per ISA, generic
//! over the instruction word ([`crate::word::Word`]: `u64` for Maxwell, `u128` for Ampere).
//!
//! An ISA is a type implementing [`Isa`]: its word, its generated `Opcode` enum and its
//! parsed table ([`Table`]). Everything else — [`Instr`] with its accessors, [`Instr::encode`],
//! the nvdisasm printer ([`crate::print`]) — is written once here. What is not in the table
//! stays with the ISA: Maxwell's scheduling words (one per three instructions) are
//! [`crate::stream`]'s business, its constant-buffer operand rule [`crate::Instr::cbuf`].
//!
//! Adding an ISA (Ampere next): a table `src/<isa>.tbl` (header `isa <isa> 128`, its `index`,
//! `guard` and `place` lines), a line in `build.rs`'s `ISAS` (generates its `Opcode` and
//! `mods` into `OUT_DIR`), and a module with a unit type implementing [`Isa`].

mod form;
mod instr;
mod table;
#[cfg(test)]
mod tests;

pub use form::{FieldDef, Form, QUICK_ABSENT, QUICK_PIECES};
pub use instr::{FormId, Instr, Pred, Reg};
pub use table::{Candidate, Table, FIELDS_SOURCE};

use crate::word::Word;
use std::fmt::Debug;
use std::hash::Hash;

/// An instruction set: its word, its mnemonics and its table.
pub trait Isa: Copy + Eq + Hash + Debug + Default + Send + Sync + 'static {
    /// The instruction word.
    type Word: Word;
    /// The mnemonic enum generated from the table.
    type Opcode: Copy + Eq + Hash + Debug + Send + Sync + 'static;
    /// The bits `(lo, len)` that bucket the forms for lookup: the table's `index` line (a
    /// constant, so that the lookup shift is one instruction; the table must agree).
    const INDEX: (u32, u32);
    /// Whether the ISA's nvdisasm prints a signalling NaN immediate as `SNAN` (13.5 for SM86
    /// does; 11.8 for SM50-53 prints every NaN as `QNAN`).
    const PRINTS_SNAN: bool = false;

    /// The table, parsed once (the build script has checked it).
    fn table() -> &'static Table<Self>;

    /// The opcode of a mnemonic of the table.
    fn opcode(mnemonic: &str) -> Option<Self::Opcode>;

    /// The mnemonic of an opcode (as the table writes it).
    fn mnemonic(op: Self::Opcode) -> &'static str;
}
