//! A decoded instruction: a form of the table plus the word's bits, with typed accessors.

use crate::error::Error;
use crate::field::Field;
use crate::modifier::Modifier;
use crate::opcode::Opcode;
use crate::table::{table, Form, Kind};

/// Index of a form in the table.
pub type FormId = u16;

/// A decoded Maxwell instruction. Cheap to copy; operands are read on demand from the bits
/// through the form's field table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Instr {
    bits: u64,
    form: FormId,
}

/// A register operand: `R0`..`R254`, or `RZ` (255).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reg(pub u8);

impl Reg {
    /// The zero register.
    pub const RZ: Reg = Reg(255);
    /// Whether this is `RZ`.
    pub fn is_rz(self) -> bool {
        self.0 == 255
    }
}

/// A predicate operand: `P0`..`P6`, or `PT` (7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pred(pub u8);

impl Pred {
    /// The always-true predicate.
    pub const PT: Pred = Pred(7);
    /// Whether this is `PT`.
    pub fn is_pt(self) -> bool {
        self.0 == 7
    }
}

/// A constant-buffer operand `c[bank][offset]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cbuf {
    /// Bank index.
    pub bank: u32,
    /// Byte offset (may be negative when indexed by a register).
    pub offset: i64,
    /// Index register, if the form has one (`LDC`), else `None`.
    pub index: Option<Reg>,
}

/// Decodes one 64-bit instruction word (not a scheduling word).
#[inline]
pub fn decode(bits: u64) -> Result<Instr, Error> {
    decode_at(bits, 0)
}

/// Decodes one instruction word found at byte `offset` of its stream (for the error).
#[inline]
pub fn decode_at(bits: u64, offset: u64) -> Result<Instr, Error> {
    let t = table();
    for &i in t.candidates(bits) {
        let f = &t.forms[i as usize];
        if bits & f.mask == f.value && enums_ok(t, f, bits) {
            return Ok(Instr { bits, form: i });
        }
    }
    Err(Error::UnknownEncoding { offset, bits })
}

#[inline]
fn enums_ok(t: &crate::table::Table, f: &Form, bits: u64) -> bool {
    f.checked.iter().all(|&k| {
        let d = &f.fields[k as usize];
        let Kind::Enum(e) = d.kind else { return true };
        t.valid[e as usize]
            .get(d.extract(bits) as usize)
            .copied()
            .unwrap_or(false)
    })
}

impl Instr {
    /// Builds an instruction of form `form` (see [`form_id`]) from field values; fields not
    /// given are zero. Values are logical (sign-extended, scaled), as [`Instr::get`] returns.
    /// The result is what the built word decodes to (a more specific form may claim it).
    pub fn build(form: FormId, values: &[(Field, i64)]) -> Result<Instr, Error> {
        let t = table();
        let f = t
            .forms
            .get(form as usize)
            .ok_or_else(|| Error::NoForm(format!("#{form}")))?;
        let mut bits = f.value;
        for &(field, v) in values {
            let d = f.field(field).ok_or(Error::NoField {
                form: name_of(form),
                field,
            })?;
            let raw = d.to_raw(v).ok_or(Error::FieldRange {
                form: name_of(form),
                field,
                value: v,
            })?;
            bits = d.insert(bits, raw);
        }
        decode(bits)
    }

    /// Encodes the instruction to its 64-bit word, from the form's fixed bits and the value
    /// of every field (a real re-encode, not a copy of the decoded word).
    pub fn encode(&self) -> u64 {
        let f = self.form_def();
        let mut bits = f.value;
        for d in &f.fields {
            bits = d.insert(bits, d.extract(self.bits));
        }
        bits
    }

    /// The word as decoded.
    pub fn bits(&self) -> u64 {
        self.bits
    }

    /// The form's index in the table.
    pub fn form(&self) -> FormId {
        self.form
    }

    /// The form's table entry.
    #[inline]
    pub fn form_def(&self) -> &'static Form {
        &table().forms[self.form as usize]
    }

    /// The form's name, e.g. `FADD_R`.
    pub fn form_name(&self) -> &'static str {
        &self.form_def().name
    }

    /// The mnemonic.
    pub fn opcode(&self) -> Opcode {
        self.form_def().opcode
    }

    /// The guard predicate and whether it is negated (`@!P0` = `(Pred(0), true)`);
    /// `(PT, false)` for unguarded instructions.
    pub fn guard(&self) -> (Pred, bool) {
        let form = self.form_def();
        match (
            form.raw(Field::Guard, self.bits),
            form.raw(Field::GuardNeg, self.bits),
        ) {
            (Some(p), Some(n)) => (Pred(p as u8), n != 0),
            _ => (Pred::PT, false),
        }
    }

    /// Whether the form has this field.
    pub fn has(&self, f: Field) -> bool {
        self.form_def().field(f).is_some()
    }

    /// The raw bits of a field (unscaled, not sign-extended).
    #[inline]
    pub fn raw(&self, f: Field) -> Option<u64> {
        self.form_def().raw(f, self.bits)
    }

    /// The logical value of a field: sign-extended for signed immediates and branch
    /// offsets, scaled (constant-buffer offsets in bytes), raw bits for floats
    /// (see [`Instr::float`]), entry index for enums.
    pub fn get(&self, f: Field) -> Option<i64> {
        self.form_def()
            .field(f)
            .map(|d| d.to_value(d.extract(self.bits)))
    }

    /// A register field.
    pub fn reg(&self, f: Field) -> Option<Reg> {
        let d = self.form_def().field(f)?;
        (d.kind == Kind::Reg).then(|| Reg(d.extract(self.bits) as u8))
    }

    /// A predicate field.
    pub fn pred(&self, f: Field) -> Option<Pred> {
        let d = self.form_def().field(f)?;
        (d.kind == Kind::Pred).then(|| Pred(d.extract(self.bits) as u8))
    }

    /// A one-bit flag (false when the form lacks it).
    pub fn flag(&self, f: Field) -> bool {
        self.raw(f).unwrap_or(0) != 0
    }

    /// The printed text of an enum modifier (e.g. `".RM"`, `""` for the default), or the
    /// flag's text when set.
    pub fn modifier(&self, f: Field) -> Option<&'static str> {
        let d = self.form_def().field(f)?;
        match d.kind {
            Kind::Enum(e) => table().enums[e as usize]
                .1
                .get(d.extract(self.bits) as usize)
                .map(|s| s.as_str()),
            _ => None,
        }
    }

    /// An enum modifier as its typed variant: `i.modifier_as::<mods::Rnd>(Field::Rnd)` is
    /// `Some(mods::Rnd::Rm)` for `FADD.RM`. `None` when the form lacks the field or its field
    /// uses another enum of the table (each enum is its own type: FSETP's and ISETP's `Cmp`
    /// are `mods::Fcmp` and `mods::Icmp`).
    pub fn modifier_as<M: Modifier>(&self, f: Field) -> Option<M> {
        let d = self.form_def().field(f)?;
        match d.kind {
            Kind::Enum(e) if e == M::ENUM => M::from_value(d.extract(self.bits)),
            _ => None,
        }
    }

    /// A float immediate as f64 (F20, D20 and F32 fields), `None` for other kinds.
    pub fn float(&self, f: Field) -> Option<f64> {
        let d = self.form_def().field(f)?;
        let raw = d.extract(self.bits);
        Some(match d.kind {
            Kind::F20 => f32::from_bits((raw as u32) << 12) as f64,
            Kind::F32 => f32::from_bits(raw as u32) as f64,
            Kind::D20 => f64::from_bits(raw << 44),
            _ => return None,
        })
    }

    /// The 32-bit pattern an immediate operand stands for: F20 → f32 bits, D20 → the high
    /// word of the f64, integers as is (truncated to 32 bits).
    pub fn imm32(&self, f: Field) -> Option<u32> {
        let d = self.form_def().field(f)?;
        let raw = d.extract(self.bits);
        Some(match d.kind {
            Kind::F20 => (raw as u32) << 12,
            Kind::D20 => ((raw << 44) >> 32) as u32,
            _ => d.to_value(raw) as u32,
        })
    }

    /// The constant-buffer operand, if the form has one (for `LDC` the offset is `Imm` and
    /// the index register `Ra`).
    pub fn cbuf(&self) -> Option<Cbuf> {
        let bank = self.get(Field::CbufBank)? as u32;
        let ldc = matches!(self.opcode(), Opcode::Ldc);
        let offset = if ldc {
            self.get(Field::Imm)?
        } else {
            self.get(Field::CbufOffset)?
        };
        let index = if ldc { self.reg(Field::Ra) } else { None };
        Some(Cbuf {
            bank,
            offset,
            index,
        })
    }

    /// Absolute branch target for an instruction at byte `addr` (`addr + 8 + offset`).
    pub fn target(&self, addr: u64) -> Option<u64> {
        let d = self.form_def().field(Field::Target)?;
        if d.kind != Kind::Target {
            return None;
        }
        Some((addr as i64 + 8 + d.to_value(d.extract(self.bits))) as u64)
    }

    /// Returns a copy with one field changed.
    pub fn with(&self, f: Field, value: i64) -> Result<Instr, Error> {
        let d = self.form_def().field(f).ok_or(Error::NoField {
            form: self.form_name(),
            field: f,
        })?;
        let raw = d.to_raw(value).ok_or(Error::FieldRange {
            form: self.form_name(),
            field: f,
            value,
        })?;
        let bits = d.insert(self.bits, raw);
        decode(bits).map(|_| Instr {
            bits,
            form: self.form,
        })
    }

    /// Every field of the form with its logical value, in table order.
    pub fn fields(&self) -> impl Iterator<Item = (Field, i64)> + '_ {
        self.form_def()
            .fields
            .iter()
            .map(move |d| (d.field, d.to_value(d.extract(self.bits))))
    }
}

fn name_of(form: FormId) -> &'static str {
    &table().forms[form as usize].name
}

/// Finds a form's id by its table name (e.g. `"FADD_R"`).
pub fn form_id(name: &str) -> Option<FormId> {
    table().form_by_name(name).map(|i| i as FormId)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mods;

    #[test]
    fn operands_of_known_words() {
        // MOV R1, c[0x0][0x20]
        let i = decode(0x4c98078000870001).unwrap();
        assert_eq!(i.opcode(), Opcode::Mov);
        assert_eq!(i.reg(Field::Rd), Some(Reg(1)));
        assert_eq!(
            i.cbuf(),
            Some(Cbuf {
                bank: 0,
                offset: 0x20,
                index: None
            })
        );
        // LDC.64 R2, c[0x0][R2+0x140]
        let i = decode(0xef95000014070202).unwrap();
        assert_eq!(
            i.cbuf(),
            Some(Cbuf {
                bank: 0,
                offset: 0x140,
                index: Some(Reg(2))
            })
        );
        // @!P0 BRA 0x170 at 0xd0
        let i = decode(0xe24000000988000f).unwrap();
        assert_eq!(i.guard(), (Pred(0), true));
        assert_eq!(i.target(0xd0), Some(0x170));
        // ISETP.EQ.U32.AND P0, PT, R4, -0x1, PT
        let i = decode(0x376403fffff70407).unwrap();
        assert_eq!(i.get(Field::Imm), Some(-1));
        assert_eq!(i.modifier(Field::Cmp), Some(".EQ"));
        assert_eq!(i.modifier_as(Field::Cmp), Some(mods::Icmp::Eq));
        assert_eq!(i.modifier_as(Field::Signed), Some(mods::U32::U32));
        assert_eq!(
            i.modifier_as::<mods::Fcmp>(Field::Cmp),
            None,
            "ISETP's Cmp is ICMP"
        );
        assert_eq!(
            i.modifier_as::<mods::Rnd>(Field::Rnd),
            None,
            "no such field"
        );
        assert_eq!(i.pred(Field::Pd2), Some(Pred::PT));
        // FMUL R15, R6, 0.25
        let i = decode(0x3868003e8007060f).unwrap();
        assert_eq!(i.float(Field::Imm), Some(0.25));
        assert_eq!(i.imm32(Field::Imm), Some(0.25f32.to_bits()));
    }

    /// The all-zero word (padding after a program's final self-branch) is what nvdisasm 12.4
    /// prints for it (`-b SM53`): a bare `NOP`, an ordinary no-op, re-encoding to zero.
    #[test]
    fn zero_word_is_nop() {
        let i = decode(0).expect("the zero word decodes");
        assert_eq!(i.opcode(), Opcode::Nop);
        assert_eq!(i.print(0x8, 0), "NOP");
        assert_eq!(i.guard(), (Pred::PT, false));
        assert_eq!(i.encode(), 0);
        // nvdisasm also prints NOP for bit 63 alone (which would otherwise be `@P0 LD.U8 R0,
        // [R0], P0`); the bit is kept for the round trip.
        let j = decode(1 << 63).expect("bit 63 alone decodes");
        assert_eq!(
            (j.opcode(), j.form(), j.print(0x8, 0)),
            (Opcode::Nop, i.form(), "NOP".into())
        );
        assert_eq!(j.encode(), 1 << 63);
        // Any other bit: nvdisasm rejects the word (0x1, 0x70000) or it is another instruction.
        assert!(decode(1).is_err());
        assert!(decode(0x7_0000).is_err());
        assert_eq!(decode((1 << 63) | 1).map(|i| i.opcode()), Ok(Opcode::Ld));
    }

    #[test]
    fn build_and_with() {
        let f = form_id("IADD_R").unwrap();
        let i = Instr::build(
            f,
            &[
                (Field::Rd, 3),
                (Field::Ra, 4),
                (Field::Rb, 5),
                (Field::Guard, 7),
            ],
        )
        .unwrap();
        assert_eq!(i.print(0, 0), "IADD R3, R4, R5");
        let j = i.with(Field::X, 1).unwrap();
        assert_eq!(j.print(0, 0), "IADD.X R3, R4, R5");
        assert_eq!(j.encode(), j.bits());
        assert!(matches!(
            i.with(Field::Rd, 256),
            Err(Error::FieldRange { .. })
        ));
        assert!(matches!(i.with(Field::Lut, 1), Err(Error::NoField { .. })));
        assert!(matches!(
            decode(0xffff_ffff_ffff_ffff),
            Err(Error::UnknownEncoding { .. })
        ));
    }
}
