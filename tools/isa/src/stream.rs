//! Walking a Maxwell code stream: every 4th 64-bit word (offset multiple of 0x20) is a
//! scheduling word for the three instructions after it.

use crate::error::Error;
use crate::instr::{decode_at, Instr};
use crate::sched::{Ctrl, Sched};

/// One 8-byte slot of a code stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Slot {
    /// A scheduling word.
    Ctrl(Ctrl),
    /// An instruction (or why it did not decode) with its scheduling field.
    Instr(Result<Instr, Error>, Sched),
}

/// A slot with its byte offset and raw word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// Byte offset from the start of the stream.
    pub offset: u64,
    /// The little-endian 64-bit word.
    pub word: u64,
    /// What the word is.
    pub slot: Slot,
}

/// Iterates over the slots of a bare instruction stream (as `nvdisasm -b SM53` reads it).
/// A trailing partial word is ignored.
pub fn slots(code: &[u8]) -> impl Iterator<Item = Item> + '_ {
    let mut ctrl = Ctrl::default();
    code.chunks_exact(8).enumerate().map(move |(i, c)| {
        let word = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        let offset = (i * 8) as u64;
        let slot = if i % 4 == 0 {
            ctrl = Ctrl::decode(word);
            Slot::Ctrl(ctrl)
        } else {
            Slot::Instr(decode_at(word, offset), ctrl.slots[i % 4 - 1])
        };
        Item { offset, word, slot }
    })
}

/// Iterates over the instructions only: `(offset, decoded, scheduling field)`.
pub fn instructions(code: &[u8]) -> impl Iterator<Item = (u64, Result<Instr, Error>, Sched)> + '_ {
    slots(code).filter_map(|it| match it.slot {
        Slot::Instr(r, s) => Some((it.offset, r, s)),
        Slot::Ctrl(_) => None,
    })
}

/// nvdisasm's texture-phase markers for a stream's instructions (one entry per instruction
/// of [`instructions`]): a texture instruction whose scheduling field has the yield bit set
/// prints `.T` when another texture instruction follows before the phase ends, `.P` when it
/// is the last of its phase (observed rule, right on 140 of 141 corpus cases: the phase ends
/// at a stall of 15 on the texture instruction itself, a `DEPBAR`, `SAM`/`RAM` or control
/// flow). `None` for everything else.
pub fn tex_phases(items: &[(u64, Result<Instr, Error>, Sched)]) -> Vec<Option<bool>> {
    use crate::Opcode as O;
    let ends = |i: &Instr| {
        matches!(
            i.opcode(),
            O::Depbar
                | O::Sam
                | O::Ram
                | O::Exit
                | O::Bra
                | O::Sync
                | O::Ssy
                | O::Pbk
                | O::Brk
                | O::Cont
                | O::Ret
                | O::Cal
                | O::Kil
                | O::Bar
                | O::Pcnt
                | O::Brx
                | O::Jmx
                | O::Jmp
                | O::Pret
        )
    };
    let mut out = vec![None; items.len()];
    let mut next_is_tex = false; // scanning backwards: does a texture op come before a phase end?
    for k in (0..items.len()).rev() {
        if let Ok(i) = &items[k].1 {
            if i.form_def().tex_phase {
                if items[k].2.yield_flag {
                    // A full stall (15) always ends the phase.
                    out[k] = Some(!next_is_tex || items[k].2.stall == 15);
                }
                next_is_tex = true;
            } else if ends(i) {
                next_is_tex = false;
            }
        }
    }
    out
}

/// Formats one listing line as nvdisasm does: the offset comment, the guard right-aligned
/// in front of the instruction column, the text and ` ;`.
pub fn format_line(offset: u64, text: &str) -> String {
    let (guard, body) = match text.split_once(' ') {
        Some((g, b)) if g.starts_with('@') => (g, b),
        _ => ("", text),
    };
    // nvdisasm writes a bare NOP as `NOP;` (no blank before the semicolon).
    let semi = if body == "NOP" { ";" } else { " ;" };
    format!("        /*{offset:04x}*/{guard:>18} {body}{semi}")
}

/// Disassembles a stream into nvdisasm-style lines
/// (`        /*0008*/                   MOV R1, c[0x0][0x20] ;`), scheduling words not printed.
/// Words that do not decode are shown as `UNKNOWN 0x...`.
pub fn listing(code: &[u8]) -> String {
    let mut out = String::new();
    let items: Vec<_> = instructions(code).collect();
    let phases = tex_phases(&items);
    let n = items.len();
    let mut pair_open = false;
    for (k, ((off, r, s), tp)) in items.into_iter().zip(phases).enumerate() {
        let ctx = crate::print::Context {
            reuse: s.reuse,
            tex_phase: tp,
        };
        let text = match r {
            Ok(i) => i.print_ctx(off, ctx),
            Err(Error::UnknownEncoding { bits, .. }) => format!("UNKNOWN {bits:#018x}"),
            Err(e) => format!("UNKNOWN ({e})"),
        };
        let line = format_line(off, &text);
        if pair_open {
            // Second of a dual-issue pair: nvdisasm closes the brace instead of the ` ;`.
            out.push_str(line.strip_suffix(" ;").unwrap_or(&line));
            out.push_str("         }");
            pair_open = false;
        } else if s.dual_issue() && k + 1 < n {
            // First of a pair: `{` sits in the guard column, nine blanks after the offset.
            let (head, rest) = line.split_at(16);
            out.push_str(head);
            out.push_str("         {");
            out.push_str(&rest[10..]);
            pair_open = true;
        } else {
            out.push_str(&line);
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_like_nvdisasm() {
        assert_eq!(
            format_line(8, "MOV R1, c[0x0][0x20]"),
            "        /*0008*/                   MOV R1, c[0x0][0x20] ;"
        );
        assert_eq!(
            format_line(0x58, "@P0 MOV R0, RZ"),
            "        /*0058*/               @P0 MOV R0, RZ ;"
        );
    }

    /// Zero padding lists as nvdisasm 12.4 lists it (`NOP;`), not as unknown words.
    #[test]
    fn zero_padding_lists_as_nops() {
        let l = listing(&[0u8; 64]);
        let lines: Vec<&str> = l.lines().collect();
        assert_eq!(lines.len(), 6);
        assert_eq!(lines[0], "        /*0008*/                   NOP;");
        assert_eq!(lines[5], "        /*0038*/                   NOP;");
        assert!(instructions(&[0u8; 64]).all(|(_, r, _)| r.is_ok()));
    }

    #[test]
    fn dual_issue_braces_like_nvdisasm() {
        // XMAD.PSL.CBCC R5, R0.H1, R3.H1, R1 and LDC.64 R0, c[0x0][0x170], dual-issued.
        let words: [u64; 4] = [
            0x001fb800e02007f0,
            0x5b30009800370005,
            0xef9500001707ff00,
            0x50b0000000070f00,
        ];
        let code: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let l = listing(&code);
        let lines: Vec<&str> = l.lines().collect();
        assert_eq!(
            lines[0],
            "        /*0008*/         {         XMAD.PSL.CBCC R5, R0.H1, R3.H1, R1 ;"
        );
        assert_eq!(
            lines[1],
            "        /*0010*/                   LDC.64 R0, c[0x0][0x170]         }"
        );
        assert_eq!(lines[2], "        /*0018*/                   NOP;");
    }
}
