//! Jump tables in a constant bank known at translation time.
//!
//! Compiler output reaches a `switch` through `LDC Rt, c[bank][Ri + off]` followed by
//! `BRX Rt` (or `JMX Rt`): the table holds targets relative to the branch's base. When the
//! bank is embedded (cubin compiler banks; NVN's c1, the code area's constant segment given
//! by the control section), the targets are read here so the indirect branch's possible
//! destinations become block leaders and the structurizer can make it a `Switch`. A cubin
//! lists the targets itself (`EIATTR_INDIRECT_BRANCH_TARGETS`); this is for containers that
//! do not.
//!
//! The table's length is not in the code (the index may be bounded by a compare, a modulo or
//! nothing), so entries are read from `off` while each is a valid instruction address of the
//! code, up to [`MAX_ENTRIES`]. Reading past the real table can only add cases the branch
//! never takes at run time.

use super::Config;
use dmsh_isa::mods::{Ldcm, Ldcsz};
use dmsh_isa::{Field, Instr, Opcode};

/// Most table entries read.
pub const MAX_ENTRIES: usize = 1024;
/// Instructions looked at before the branch for the `LDC` that loads its register.
const LOOK_BACK: usize = 16;

/// The targets (byte offsets of instruction slots, past a scheduling word; ascending) an indirect
/// branch `br` at byte `off` may reach through a jump table in an embedded bank of `cfg`;
/// empty when its register is not loaded from one. `get(o)` is the decoded instruction at
/// byte `o`, `ok(t)` whether `t` is a valid target (an instruction of the code).
pub fn targets(
    cfg: &Config,
    off: u32,
    br: &Instr,
    get: impl Fn(u32) -> Option<Instr>,
    ok: impl Fn(u32) -> bool,
) -> Vec<u32> {
    let Some(rt) = br.reg(Field::Ra) else {
        return Vec::new();
    };
    if rt.is_rz() {
        return Vec::new();
    }
    let imm = br.get(Field::Imm).unwrap_or(0) as u32;
    let base = if br.opcode() == Opcode::Brx {
        (off + 8).wrapping_add(imm)
    } else {
        imm
    };
    let Some((bank, start)) = table_load(off, rt.0, &get) else {
        return Vec::new();
    };
    let Some(words) = cfg.embedded_banks.get(&bank) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for &w in words.iter().skip(start).take(MAX_ENTRIES) {
        let t = base.wrapping_add(w);
        // A target naming a scheduling word continues after it (as the branch does).
        let t = if t % 32 == 0 { t.wrapping_add(8) } else { t };
        if t % 8 != 0 || !ok(t) {
            break;
        }
        out.push(t);
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The (bank, first word) of the `LDC` that last wrote register `rt` before the branch at
/// `off`, in the straight code just before it; None when another instruction writes it, a
/// control transfer or a guard intervenes, or the load is not a plain 32-bit `LDC`.
fn table_load(off: u32, rt: u8, get: &impl Fn(u32) -> Option<Instr>) -> Option<(u8, usize)> {
    let mut at = off;
    for _ in 0..LOOK_BACK {
        at = prev(at)?;
        let i = get(at)?;
        if super::ctrl::ends_block(i.opcode()) {
            return None;
        }
        let Some(rd) = i.reg(Field::Rd) else {
            continue;
        };
        // A write to rt, or a wide write (64/128-bit loads, doubles) that may cover it,
        // ends the search.
        if rd.is_rz() || rd.0 > rt || rt - rd.0 > 3 || (rd.0 != rt && !wide(&i, at)) {
            continue;
        }
        let plain_ldc = i.opcode() == Opcode::Ldc
            && rd.0 == rt
            && i.guard().0.is_pt()
            && !i.guard().1
            && matches!(
                i.modifier_as::<Ldcsz>(Field::Size),
                Some(Ldcsz::Default) | None
            )
            && matches!(
                i.modifier_as::<Ldcm>(Field::Mode),
                Some(Ldcm::Default) | None
            );
        if !plain_ldc {
            return None;
        }
        let c = i.cbuf()?;
        if c.offset < 0 || c.offset % 4 != 0 {
            return None;
        }
        return Some((c.bank as u8, c.offset as usize / 4));
    }
    None
}

/// Whether `i` may write more than one register from its `Rd` (checked only for the few
/// instructions just before an indirect branch). A conservative reading of the printed text
/// (any `.64`, `.128` or `F64` modifier, whatever its field and enum, or a D-opcode) rather
/// than a per-opcode list of size enums.
fn wide(i: &Instr, at: u32) -> bool {
    let text = i.print(at as u64, 0);
    let mnemonic = text.split_whitespace().find(|w| !w.starts_with('@'));
    mnemonic.is_some_and(|m| m.starts_with('D'))
        || text.contains(".64")
        || text.contains(".128")
        || text.contains("F64")
        || i.has(Field::Rd2)
}

/// The instruction slot before `at` (skipping scheduling words), None at the start.
fn prev(at: u32) -> Option<u32> {
    let p = at.checked_sub(8)?;
    if p % 32 == 0 {
        p.checked_sub(8)
    } else {
        Some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lift::Abi;
    use dmsh_isa::{form_id, Instr};

    fn build(form: &str, fields: &[(Field, i64)]) -> Instr {
        let mut v = vec![(Field::Guard, 7)];
        v.extend_from_slice(fields);
        Instr::build(form_id(form).expect(form), &v).expect("builds")
    }

    /// 0x08: `LDC R4, c[1][R4 + 0x8]`, 0x10: `other` (if any), 0x18: `BRX R4 -0x20` (base 0);
    /// instructions up to 0x100. Returns the targets found.
    fn run(bank_words: Option<Vec<u32>>, other: Option<Instr>) -> Vec<u32> {
        let mut cfg = Config::compute(Abi::Nvn, [1, 1, 1]);
        if let Some(w) = bank_words {
            cfg.embedded_banks.insert(1, w);
        }
        let ldc = build(
            "LDC",
            &[
                (Field::Rd, 4),
                (Field::Ra, 4),
                (Field::Imm, 8),
                (Field::CbufBank, 1),
                (Field::Size, 4),
            ],
        );
        let nop = build("NOP", &[]);
        let brx = build("BRX", &[(Field::Ra, 4), (Field::Imm, -0x20)]);
        let at = move |o: u32| -> Option<Instr> {
            match o {
                0x08 => Some(ldc),
                0x10 => Some(other.unwrap_or(nop)),
                0x18 => Some(brx),
                o if o < 0x100 && o % 32 != 0 => Some(nop),
                _ => None,
            }
        };
        targets(&cfg, 0x18, &brx, at, |t| t < 0x100 && t % 32 != 0)
    }

    #[test]
    fn table_entries_until_the_first_non_target() {
        // Words 0, 1 are not the table (it starts at byte 8); 0x20 names a scheduling word
        // and continues at 0x28; 0x1_0000 is past the code and ends the table.
        let words = vec![0xdead, 0xbeef, 0x48, 0x20, 0x30, 0x48, 0x1_0000, 0x50];
        assert_eq!(run(Some(words), None), vec![0x28, 0x30, 0x48]);
    }

    #[test]
    fn no_table_without_an_embedded_bank_or_with_another_writer() {
        assert!(run(None, None).is_empty());
        let mov = build("MOV32I", &[(Field::Rd, 4), (Field::Imm, 0x40)]);
        assert!(run(Some(vec![0, 0, 0x48]), Some(mov)).is_empty());
        // A write to another register between them does not matter.
        let mov5 = build("MOV32I", &[(Field::Rd, 5), (Field::Imm, 0x40)]);
        assert_eq!(run(Some(vec![0, 0, 0x48]), Some(mov5)), vec![0x48]);
        // An LDC offset past the bank reads nothing.
        assert!(run(Some(vec![0x48]), None).is_empty());
    }
}
