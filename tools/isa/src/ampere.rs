//! Ampere (sm_86-class: Switch 2's GPU) as an instance of the shared [`crate::engine`]:
//! 128-bit words, the table `src/ampere/*.tbl` ([`TABLE_FILES`], read in order as one text)
//! and its generated [`Opcode`] and [`mods`]. Unlike Maxwell's, every instruction word
//! carries its own scheduling bits (bits 105-127, field `Ctrl`, [`sched`]); a code stream is
//! a plain sequence of 16-byte instructions ([`instructions`]).
//!
//! ```
//! use dmsh_isa::ampere::{self, Opcode};
//! // S2R R3, SR_TID.X; NOP
//! let words: [u128; 2] = [0x000e2400000021000000000000037919, 0x000fc200000000000000000000007918];
//! let code: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
//! let text: Vec<String> = ampere::instructions(&code)
//!     .map(|(offset, i, sched)| i.unwrap().print(offset, sched.reuse))
//!     .collect();
//! assert_eq!(text, ["S2R R3, SR_TID.X", "NOP"]);
//! let i = ampere::decode(words[0]).unwrap();
//! assert_eq!((i.opcode(), i.encode()), (Opcode::S2r, words[0]));
//! ```

use crate::engine::{self, Isa, Table};
use crate::error::Error;
use crate::sched::Sched;
use crate::word::Word;
use std::sync::OnceLock;

/// The `Opcode` enum of Ampere: one variant per mnemonic of the table, generated at build
/// time (names as for Maxwell's [`crate::Opcode`]).
pub mod opcode {
    include!(concat!(env!("OUT_DIR"), "/ampere_opcode.rs"));
}

/// The typed modifier enums of Ampere's table, one per `enum` line, generated at build time
/// (naming rule: [`crate::modifier`]).
pub mod mods {
    include!(concat!(env!("OUT_DIR"), "/ampere_mods.rs"));
}

pub use opcode::Opcode;

/// The table's files, in reading order (the build script reads the same list).
pub const TABLE_FILES: &[(&str, &str)] = &[
    ("ampere/header.tbl", include_str!("ampere/header.tbl")),
    ("ampere/int.tbl", include_str!("ampere/int.tbl")),
    ("ampere/uniform.tbl", include_str!("ampere/uniform.tbl")),
    ("ampere/float.tbl", include_str!("ampere/float.tbl")),
    ("ampere/mem.tbl", include_str!("ampere/mem.tbl")),
    ("ampere/tex.tbl", include_str!("ampere/tex.tbl")),
    ("ampere/ctrl.tbl", include_str!("ampere/ctrl.tbl")),
];

/// The Ampere ISA (a marker type).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Ampere;

/// A decoded Ampere instruction.
pub type Instr = engine::Instr<Ampere>;

impl Isa for Ampere {
    type Word = u128;
    type Opcode = Opcode;
    const INDEX: (u32, u32) = (0, 12);

    #[inline]
    fn table() -> &'static Table<Ampere> {
        static T: OnceLock<Table<Ampere>> = OnceLock::new();
        T.get_or_init(|| Table::parse_files(TABLE_FILES).unwrap_or_else(|e| panic!("{e}")))
    }

    fn opcode(mnemonic: &str) -> Option<Opcode> {
        Opcode::from_name(mnemonic)
    }
}

/// The scheduling bits' place: bits 105-127 (stall 105-108, yield 109, write barrier
/// 110-112, read barrier 113-115, wait mask 116-121, reuse 122-125; 126-127 unused).
pub const SCHED_BITS: (u32, u32) = (105, 23);

/// The scheduling field of an instruction word (the same layout as one of Maxwell's three
/// per scheduling word).
#[inline]
pub fn sched(word: u128) -> Sched {
    Sched::from_bits(word.bits(SCHED_BITS.0, 21) as u32)
}

/// Decodes one instruction word.
#[inline]
pub fn decode(word: u128) -> Result<Instr, Error> {
    Instr::decode(word)
}

/// Decodes one instruction word found at byte `offset` of its stream (for the error).
#[inline]
pub fn decode_at(word: u128, offset: u64) -> Result<Instr, Error> {
    Instr::decode_at(word, offset)
}

/// The instructions of a bare code stream (as `nvdisasm -b SM86` reads it): `(offset,
/// decoded, scheduling field)` per 16 bytes. A trailing partial word is ignored.
pub fn instructions(code: &[u8]) -> impl Iterator<Item = (u64, Result<Instr, Error>, Sched)> + '_ {
    code.chunks_exact(16).enumerate().map(|(i, c)| {
        let w = u128::from_le_bytes(c.try_into().expect("16 bytes"));
        let offset = (i * 16) as u64;
        (offset, decode_at(w, offset), sched(w))
    })
}

/// nvdisasm-style text of a bare code stream, one `/*offset*/ TEXT ;` line per instruction
/// (`UNKNOWN 0x...` for words that do not decode).
pub fn listing(code: &[u8]) -> String {
    let mut out = String::new();
    for (offset, r, s) in instructions(code) {
        let text = match r {
            Ok(i) => i.print(offset, s.reuse),
            Err(Error::UnknownEncoding { bits, .. }) => format!("UNKNOWN {bits:#034x}"),
            Err(e) => format!("UNKNOWN ({e})"),
        };
        out.push_str(&crate::stream::format_line(offset, &text));
        out.push('\n');
    }
    out
}
