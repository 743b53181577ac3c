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
    const PRINTS_SNAN: bool = true;

    #[inline]
    fn table() -> &'static Table<Ampere> {
        static T: OnceLock<Table<Ampere>> = OnceLock::new();
        T.get_or_init(|| Table::parse_files(TABLE_FILES).unwrap_or_else(|e| panic!("{e}")))
    }

    fn opcode(mnemonic: &str) -> Option<Opcode> {
        Opcode::from_name(mnemonic)
    }

    fn mnemonic(op: Opcode) -> &'static str {
        op.name()
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

/// One listing line as nvdisasm prints it for SM86: the offset comment, the guard
/// right-aligned in front of the instruction column, the text and ` ;` (`NOP ;` too).
pub fn format_line(offset: u64, text: &str) -> String {
    let (guard, body) = match text.split_once(' ') {
        Some((g, b)) if g.starts_with('@') => (g, b),
        _ => ("", text),
    };
    format!("        /*{offset:04x}*/{guard:>18} {body} ;")
}

/// nvdisasm's text of a bare code stream (`nvdisasm -b SM86`, without its `.headerflags`
/// lines), one line per instruction; `UNKNOWN 0x...` for words that do not decode. With
/// `hex`, as `nvdisasm -hex` prints it: the low 64 bits after each line, the high 64 bits on
/// a line of their own, in one column two blanks after the longest line.
pub fn listing(code: &[u8], hex: bool) -> String {
    let mut lines = Vec::new();
    for (offset, r, s) in instructions(code) {
        let text = match &r {
            Ok(i) => i.print(offset, s.reuse),
            Err(Error::UnknownEncoding { bits, .. }) => format!("UNKNOWN {bits:#034x}"),
            Err(e) => format!("UNKNOWN ({e})"),
        };
        let word = code
            .get(offset as usize..offset as usize + 16)
            .and_then(u128::from_le_slice)
            .unwrap_or(0);
        lines.push((format_line(offset, &text), word));
    }
    let col = lines.iter().map(|(l, _)| l.len()).max().unwrap_or(0) + 2;
    let mut out = String::new();
    for (line, word) in lines {
        if hex {
            let (lo, hi) = (word as u64, (word >> 64) as u64);
            out.push_str(&format!(
                "{line:<col$}/* {lo:#018x} */\n{:col$}/* {hi:#018x} */\n",
                ""
            ));
        } else {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines and `-hex` columns as nvdisasm 13.5 prints them for these three words.
    #[test]
    fn listing_like_nvdisasm() {
        let words: [u128; 3] = [
            0x000fc200000000000000000000007918,
            0x000e2400000021000000000000037919,
            0x000fea0003800000000000000000094d,
        ];
        let code: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let l = listing(&code, false);
        let lines: Vec<&str> = l.lines().collect();
        assert_eq!(lines[0], "        /*0000*/                   NOP ;");
        assert_eq!(
            lines[1],
            "        /*0010*/                   S2R R3, SR_TID.X ;"
        );
        let h = listing(&code[..32], true);
        let hl: Vec<&str> = h.lines().collect();
        assert_eq!(
            hl[0],
            "        /*0000*/                   NOP ;               /* 0x0000000000007918 */"
        );
        assert_eq!(
            hl[1],
            "                                                       /* 0x000fc20000000000 */"
        );
        assert_eq!(
            hl[2],
            "        /*0010*/                   S2R R3, SR_TID.X ;  /* 0x0000000000037919 */"
        );
    }

    #[test]
    fn guard_is_right_aligned() {
        assert_eq!(
            format_line(0x20, "@P0 EXIT"),
            "        /*0020*/               @P0 EXIT ;"
        );
    }
}
