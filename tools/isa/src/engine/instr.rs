//! A decoded instruction of any ISA: a form of its table plus the word's bits, with typed
//! accessors. Decoding, building and re-encoding are table lookups and bit pieces only.

use super::form::Form;
use super::table::Table;
use super::Isa;
use crate::error::Error;
use crate::field::Field;
use crate::modifier::Modifier;
use crate::table_syntax::Kind;
use crate::word::Word;
use std::marker::PhantomData;

/// Index of a form in its table.
pub type FormId = u16;

/// A decoded instruction of ISA `I` (for Maxwell: [`crate::Instr`]). Cheap to copy; operands
/// are read on demand from the bits through the form's field table, which the instruction
/// points to (every field read would otherwise look the form up in the table again).
#[derive(Clone, Copy)]
pub struct Instr<I: Isa> {
    bits: I::Word,
    form: FormId,
    /// `I::table().forms[form]`.
    def: &'static Form<I>,
    isa: PhantomData<I>,
}

// The form's entry follows from its id: equality and hashing need only the id and the bits.
impl<I: Isa> PartialEq for Instr<I> {
    fn eq(&self, other: &Self) -> bool {
        self.bits == other.bits && self.form == other.form
    }
}

impl<I: Isa> Eq for Instr<I> {}

impl<I: Isa> std::hash::Hash for Instr<I> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.bits.hash(h);
        self.form.hash(h);
    }
}

impl<I: Isa> std::fmt::Debug for Instr<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instr")
            .field("bits", &self.bits)
            .field("form", &self.form)
            .finish()
    }
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

#[inline]
fn enums_ok<I: Isa>(t: &Table<I>, f: &Form<I>, bits: I::Word) -> bool {
    f.checked.iter().all(|&k| {
        let d = &f.fields[k as usize];
        let Kind::Enum(e) = d.kind else { return true };
        t.valid[e as usize]
            .get(d.extract(bits) as usize)
            .copied()
            .unwrap_or(false)
    })
}

fn name_of<I: Isa>(form: FormId) -> &'static str {
    &I::table().forms[form as usize].name
}

impl<I: Isa> Instr<I> {
    /// Decodes one instruction word found at byte `offset` of its stream (for the error).
    #[inline]
    pub fn decode_at(bits: I::Word, offset: u64) -> Result<Self, Error> {
        let t = I::table();
        for c in t.candidates(bits) {
            if bits & c.mask == c.value
                && (!c.checked || enums_ok(t, &t.forms[c.form as usize], bits))
            {
                return Ok(Instr {
                    bits,
                    form: c.form,
                    def: &t.forms[c.form as usize],
                    isa: PhantomData,
                });
            }
        }
        Err(Error::UnknownEncoding {
            offset,
            bits: bits.to_u128(),
        })
    }

    /// Decodes one instruction word.
    #[inline]
    pub fn decode(bits: I::Word) -> Result<Self, Error> {
        Self::decode_at(bits, 0)
    }

    /// Finds a form's id by its table name (e.g. `"FADD_R"`).
    pub fn form_id(name: &str) -> Option<FormId> {
        I::table().form_by_name(name).map(|i| i as FormId)
    }

    /// Builds an instruction of form `form` (see [`Instr::form_id`]) from field values; fields
    /// not given are zero. Values are logical (sign-extended, scaled), as [`Instr::get`]
    /// returns. The result is what the built word decodes to (a more specific form may claim
    /// it).
    pub fn build(form: FormId, values: &[(Field, i64)]) -> Result<Self, Error> {
        let f = I::table()
            .forms
            .get(form as usize)
            .ok_or_else(|| Error::NoForm(format!("#{form}")))?;
        let mut bits = f.value;
        for &(field, v) in values {
            let d = f.field(field).ok_or(Error::NoField {
                form: name_of::<I>(form),
                field,
            })?;
            let raw = d.to_raw(v).ok_or(Error::FieldRange {
                form: name_of::<I>(form),
                field,
                value: v,
            })?;
            bits = d.insert(bits, raw);
        }
        Self::decode(bits)
    }

    /// Encodes the instruction to its word, from the form's fixed bits and the value of every
    /// field (a real re-encode, not a copy of the decoded word).
    pub fn encode(&self) -> I::Word {
        let f = self.form_def();
        let mut bits = f.value;
        for d in &f.fields {
            bits = d.insert(bits, d.extract(self.bits));
        }
        bits
    }

    /// The word as decoded.
    pub fn bits(&self) -> I::Word {
        self.bits
    }

    /// The form's index in the table.
    pub fn form(&self) -> FormId {
        self.form
    }

    /// The form's table entry.
    #[inline]
    pub fn form_def(&self) -> &'static Form<I> {
        self.def
    }

    /// The form's name, e.g. `FADD_R`.
    pub fn form_name(&self) -> &'static str {
        &self.form_def().name
    }

    /// The mnemonic.
    #[inline]
    pub fn opcode(&self) -> I::Opcode {
        self.form_def().opcode
    }

    /// The guard predicate and whether it is negated (`@!P0` = `(Pred(0), true)`);
    /// `(PT, false)` for unguarded instructions.
    #[inline]
    pub fn guard(&self) -> (Pred, bool) {
        match self.form_def().guard_raw(self.bits) {
            Some((p, n)) => (Pred(p as u8), n != 0),
            None => (Pred::PT, false),
        }
    }

    /// Whether the guard is a uniform predicate (`@UP0`; the table's `uguard` forms).
    pub fn guard_is_uniform(&self) -> bool {
        self.form_def()
            .field(Field::Guard)
            .is_some_and(|d| d.kind == Kind::UPred)
    }

    /// The mnemonic (`IMAD`; the form name says which form of it).
    pub fn mnemonic(&self) -> &'static str {
        I::mnemonic(self.opcode())
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
    #[inline]
    pub fn get(&self, f: Field) -> Option<i64> {
        self.form_def()
            .field(f)
            .map(|d| d.to_value(d.extract(self.bits)))
    }

    /// A register field.
    #[inline]
    pub fn reg(&self, f: Field) -> Option<Reg> {
        let d = self.form_def().field(f)?;
        (d.kind == Kind::Reg).then(|| Reg(d.extract(self.bits) as u8))
    }

    /// A predicate field.
    #[inline]
    pub fn pred(&self, f: Field) -> Option<Pred> {
        let d = self.form_def().field(f)?;
        (d.kind == Kind::Pred).then(|| Pred(d.extract(self.bits) as u8))
    }

    /// A uniform register field (`Reg(63)` is URZ).
    #[inline]
    pub fn ureg(&self, f: Field) -> Option<Reg> {
        let d = self.form_def().field(f)?;
        (d.kind == Kind::UReg).then(|| Reg(d.extract(self.bits) as u8))
    }

    /// A uniform predicate field (`Pred(7)` is UPT).
    #[inline]
    pub fn upred(&self, f: Field) -> Option<Pred> {
        let d = self.form_def().field(f)?;
        (d.kind == Kind::UPred).then(|| Pred(d.extract(self.bits) as u8))
    }

    /// A one-bit flag (false when the form lacks it).
    #[inline]
    pub fn flag(&self, f: Field) -> bool {
        self.raw(f).unwrap_or(0) != 0
    }

    /// The printed text of an enum modifier (e.g. `".RM"`, `""` for the default); `None`
    /// when the form lacks the field or it is not an enum.
    pub fn modifier(&self, f: Field) -> Option<&'static str> {
        let d = self.form_def().field(f)?;
        match d.kind {
            Kind::Enum(e) => I::table().enums[e as usize]
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
    #[inline]
    pub fn modifier_as<M: Modifier<Isa = I>>(&self, f: Field) -> Option<M> {
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
    #[inline]
    pub fn imm32(&self, f: Field) -> Option<u32> {
        let d = self.form_def().field(f)?;
        let raw = d.extract(self.bits);
        Some(match d.kind {
            Kind::F20 => (raw as u32) << 12,
            Kind::D20 => ((raw << 44) >> 32) as u32,
            _ => d.to_value(raw) as u32,
        })
    }

    /// Absolute branch target for an instruction at byte `addr`: the next instruction's
    /// address plus the offset (`addr + 8 + offset` for 64-bit words).
    pub fn target(&self, addr: u64) -> Option<u64> {
        let d = self.form_def().field(Field::Target)?;
        if d.kind != Kind::Target {
            return None;
        }
        Some((addr as i64 + I::Word::BYTES as i64 + d.to_value(d.extract(self.bits))) as u64)
    }

    /// Returns a copy with one field changed.
    pub fn with(&self, f: Field, value: i64) -> Result<Self, Error> {
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
        Self::decode(bits).map(|_| Instr {
            bits,
            form: self.form,
            def: self.def,
            isa: PhantomData,
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
