//! Ampere's source operands by position. The ALU forms put their second and third sources
//! in several places (a register, an immediate, `c[bank][offset]`, `cx[URn][offset]`, a
//! uniform register; NAK's sm70 encoder calls these the `ALUSrc` kinds); which one a form
//! has is read from its table template, never from the form's name: a register source is
//! followed by its reuse marker (`{~1}` for B, `{~2}` for C; an alias form prints `RZ{~1}`
//! for a fixed zero register), any other source is the form's immediate, constant or
//! uniform-register field.

use super::super::{Cx, Result};
use crate::ir::Value;
use dmsh_isa::ampere::{Ampere, Instr};
use dmsh_isa::engine::Isa;
use dmsh_isa::table_syntax::{Kind, Tok};
use dmsh_isa::Field;
use std::sync::OnceLock;

/// Where one source operand of an instruction comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    /// A register (255: RZ).
    Reg(u8),
    /// A uniform register (63: URZ).
    UReg(u8),
    /// An immediate: the 32-bit pattern it stands for.
    Imm(u32),
    /// `c[bank][offset]` (offset in bytes).
    Cbuf(u8, u32),
    /// `cx[URn][offset]`: the bank index in a uniform register.
    CbufU(u8, u32),
}

/// The kind of source slot k (0 A, 1 B, 2 C) of a form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    /// A register: its field, `None` for a fixed RZ.
    Reg(Option<Field>),
    /// Not a register (or no reuse marker): one of the form's other source fields.
    Other,
}

/// Per form, the kinds of its three source slots.
fn slots(i: &Instr) -> [Slot; 3] {
    static BY_FORM: OnceLock<Vec<[Slot; 3]>> = OnceLock::new();
    let by_form = BY_FORM.get_or_init(|| {
        Ampere::table()
            .forms
            .iter()
            .map(|form| {
                let mut s = [Slot::Other; 3];
                for (k, t) in form.template.iter().enumerate() {
                    let Tok::Reuse(n) = t else { continue };
                    let reg = match k.checked_sub(1).map(|p| &form.template[p]) {
                        Some(Tok::Field(idx, _)) => {
                            let d = &form.fields[*idx as usize];
                            (d.kind == Kind::Reg).then_some(d.field)
                        }
                        _ => None,
                    };
                    if let Some(slot) = s.get_mut(*n as usize) {
                        *slot = Slot::Reg(reg);
                    }
                }
                s
            })
            .collect()
    });
    by_form[i.form() as usize]
}

/// Source `k` (0 A, 1 B, 2 C) of `i`.
pub fn src(i: &Instr, k: usize) -> Src {
    let slot = slots(i)[k.min(2)];
    if let Slot::Reg(f) = slot {
        return Src::Reg(f.and_then(|f| i.reg(f)).map_or(255, |r| r.0));
    }
    let regf = [Field::Ra, Field::Rb, Field::Rc][k.min(2)];
    if k == 0 {
        return Src::Reg(i.reg(Field::Ra).map_or(255, |r| r.0));
    }
    if let Some(off) = i.get(Field::CbufOffset) {
        let off = off as u32;
        if let Some(b) = i.get(Field::CbufBank) {
            return Src::Cbuf(b as u8, off);
        }
        if let Some(u) = i.ureg(Field::CbufUReg).or_else(|| i.ureg(Field::URb)) {
            return Src::CbufU(u.0, off);
        }
    }
    if let Some(v) = i.imm32(Field::Imm) {
        return Src::Imm(v);
    }
    let uf = if k == 1 { Field::URb } else { Field::URc };
    if let Some(u) = i.ureg(uf) {
        return Src::UReg(u.0);
    }
    Src::Reg(i.reg(regf).map_or(255, |r| r.0))
}

/// Whether source `k` of `i` is a register (or a fixed RZ).
pub fn is_reg(i: &Instr, k: usize) -> bool {
    matches!(src(i, k), Src::Reg(_))
}

impl Cx<'_> {
    /// The 32-bit value of source `k` of `i` (`extra` bytes further into a constant bank,
    /// or the register `extra / 4` above, for the high word of a 64-bit operand).
    pub fn asrc(&mut self, i: &Instr, k: usize) -> Result<Value> {
        self.asrc_at(i, k, 0)
    }

    /// [`Cx::asrc`] of the word `word` (0 low, 1 high) of a 64-bit source.
    pub fn asrc_at(&mut self, i: &Instr, k: usize, word: u32) -> Result<Value> {
        Ok(match src(i, k) {
            Src::Reg(255) => self.c32(0),
            Src::Reg(r) => self.reg(r.saturating_add(word as u8)),
            Src::UReg(63) => self.c32(0),
            Src::UReg(u) => self.ureg(u.saturating_add(word as u8)),
            // A 64-bit immediate source is the 32-bit pattern in the high word (DADD's
            // immediates: the f64's high 32 bits).
            Src::Imm(v) => self.c32(if word == 0 { v } else { 0 }),
            Src::Cbuf(b, off) => self.const_word(b, off + 4 * word),
            Src::CbufU(u, off) => {
                return Err(self.unsupported(
                    i,
                    format!("constant bank indexed by UR{u} (cx[UR{u}][{off:#x}])"),
                ))
            }
        })
    }

    /// Source `k` of `i` as a 64-bit value (a register pair, a uniform pair, two constant
    /// words; an immediate is the high word of the pattern, as for DADD/DMUL/DFMA).
    pub fn asrc64(&mut self, i: &Instr, k: usize) -> Result<Value> {
        if let Src::Imm(v) = src(i, k) {
            return Ok(self.c64((v as u64) << 32));
        }
        let lo = self.asrc_at(i, k, 0)?;
        let hi = self.asrc_at(i, k, 1)?;
        Ok(self.pack(lo, hi))
    }

    /// Reads a predicate operand `f` with its negation field (`PT` when absent), for forms
    /// whose predicates may be uniform (`UPa`) or not.
    pub fn apred(&mut self, i: &Instr, f: Field, neg: Field) -> Value {
        let ng = i.flag(neg);
        if let Some(p) = i.upred(f) {
            return self.upred(p.0, ng);
        }
        let n = i.pred(f).map(|p| p.0).unwrap_or(7);
        self.pred(n, ng)
    }

    /// Writes the predicate destination `f` (a predicate or a uniform predicate).
    pub fn set_apred(&mut self, i: &Instr, f: Field, v: Value) {
        if let Some(p) = i.upred(f) {
            self.set_upred(p.0, v);
        } else if let Some(p) = i.pred(f) {
            self.set_pred(p.0, v);
        }
    }

    /// Writes the destination `Rd` or `URd` of `i`.
    pub fn set_dst(&mut self, i: &Instr, v: Value) {
        if let Some(u) = i.ureg(Field::URd) {
            self.set_ureg(u.0, v);
        } else {
            self.set_rd(i, v);
        }
    }

    /// Writes a 64-bit result to the destination pair `Rd, Rd+1` (or `URd, URd+1`).
    pub fn set_dst64(&mut self, i: &Instr, v: Value) {
        let v = self.cast(crate::ir::Type::U64, v);
        let lo = self.lo(v);
        let hi = self.hi(v);
        if let Some(u) = i.ureg(Field::URd) {
            if u.0 < 63 {
                self.set_ureg(u.0, lo);
                self.set_ureg(u.0 + 1, hi);
            }
        } else {
            let n = self.rf(i, Field::Rd);
            if n != 255 {
                self.set_reg(n, lo);
                self.set_reg(n.saturating_add(1), hi);
            }
        }
    }
}
