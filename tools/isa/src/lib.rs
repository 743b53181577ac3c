//! dmsh-isa: NVIDIA GPU instructions described as data: decoder, bit-exact encoder and an
//! nvdisasm-exact printer. Maxwell (sm_50–53, Tegra X1) and Ampere ([`ampere`]: sm_86-class,
//! Switch 2) share one engine, generic over the instruction word and the ISA's table
//! ([`engine`], [`Word`], [`Isa`]): Ampere's 128-bit instructions are a second table, not a
//! second decoder.
//!
//! The instruction set is one table of encodings per ISA, `src/maxwell.tbl` (see
//! [`table_syntax`] for its language), over one field vocabulary, `src/fields.tbl`: each form
//! lists its fixed opcode bits, its named fields (bit ranges and kinds) and nvdisasm's printing
//! template. The build script checks the tables and generates [`Field`], [`Opcode`] and the
//! typed modifiers ([`mods`]) from them. Decoder, encoder and printer are generic code over
//! the table.
//!
//! # Reading a code stream
//!
//! Maxwell code is a stream of little-endian 64-bit words. Every 4th word (byte offset a
//! multiple of 0x20) is a scheduling word for the next three instructions ([`Ctrl`]:
//! stall, yield, barriers, wait mask, operand reuse). [`stream::instructions`] skips them:
//!
//! ```
//! use dmsh_isa::{mods, stream, Field, Opcode};
//! // ctrl word, MOV R1, c[0x0][0x20], S2R R0, SR_TID.X, EXIT
//! let words: [u64; 4] = [0x001cfc00e22007f6, 0x4c98078000870001, 0xf0c8000002170000, 0xe30000000007000f];
//! let code: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
//! for (offset, instr, sched) in stream::instructions(&code) {
//!     let i = instr.expect("decodes");              // Err(Error::UnknownEncoding{offset, bits})
//!     let (guard, negated) = i.guard();             // (Pred::PT, false) when unguarded
//!     match i.opcode() {
//!         Opcode::Mov => {
//!             assert_eq!(i.reg(Field::Rd).unwrap().0, 1);
//!             let c = i.cbuf().unwrap();            // c[0x0][0x20]
//!             assert_eq!((c.bank, c.offset), (0, 0x20));
//!         }
//!         Opcode::S2r => {
//!             let sr = i.modifier_as::<mods::Sreg>(Field::Sreg); // typed: match variants
//!             assert_eq!(sr, Some(mods::Sreg::SrTidX));
//!             assert_eq!(sr.unwrap().to_string(), "SR_TID.X"); // nvdisasm's text
//!         }
//!         _ => {}
//!     }
//!     println!("/*{offset:04x}*/ {} ;", i.print(offset, sched.reuse));
//!     let _ = (guard, negated);
//!     assert_eq!(i.encode(), i.bits());             // bit-exact re-encode
//! }
//! ```
//!
//! # Operands and modifiers
//!
//! A decoded [`Instr`] is its form ([`Instr::form_name`], [`Instr::opcode`]) plus the word.
//! Every operand and modifier is a named [`Field`]; the same name means the same thing in
//! every form:
//!
//! * registers: [`Instr::reg`] with `Field::Rd`, `Ra`, `Rb`, `Rc` (`Reg(255)` is RZ);
//! * predicates: [`Instr::pred`] with `Pd`, `Pd2`, `Pa`, `Pb`, `Pc` (+ `NotA`.. flags);
//! * immediates: [`Instr::get`] (`Field::Imm`, sign-extended where signed),
//!   [`Instr::float`] / [`Instr::imm32`] for float immediates;
//! * constant buffers: [`Instr::cbuf`] (`CbufBank`, `CbufOffset` in bytes);
//! * branch targets: [`Instr::target`] (absolute byte offset in the stream);
//! * flags: [`Instr::flag`] (`Ftz`, `Sat`, `Cc`, `X`, `NegA`, `AbsB`, ...);
//! * enum modifiers: [`Instr::modifier_as`] gives the typed variant
//!   (`Some(mods::Rnd::Rm)`, [`mods`]), [`Instr::modifier`] nvdisasm's text (`".RM"`,
//!   `"SR_TID.X"`), [`Instr::get`] its index.
//!
//! To build or change instructions use [`Instr::build`] with [`form_id`], or [`Instr::with`].

#![warn(missing_docs)]

/// Where the instructions are in NVN code areas, uam code.bin and DKSH files (dmsh-formats).
pub mod code_area {
    pub use dmsh_formats::code_area::*;
}
pub mod ampere;
pub mod engine;
pub mod error;
pub mod field;
pub mod instr;
pub mod listing;
pub mod maxwell;
pub mod modifier;
pub mod mods;
pub mod opcode;
pub mod print;
pub mod sched;
/// The SPH's raw words (dmsh-formats, the one SPH decoder).
pub mod sph {
    pub use dmsh_formats::sph::header::*;
}
/// The typed SPH decode (dmsh-formats, the one SPH decoder).
pub mod sph_info {
    pub use dmsh_formats::sph::info::*;
}
pub mod stream;
pub mod table;
pub mod table_syntax;
pub mod word;

pub use engine::Isa;
pub use error::Error;
pub use field::Field;
pub use instr::{decode, decode_at, form_id, Cbuf, FormId, Instr, Pred, Reg};
pub use maxwell::Maxwell;
pub use modifier::Modifier;
pub use opcode::Opcode;
pub use sched::{Ctrl, Sched};
pub use word::Word;
