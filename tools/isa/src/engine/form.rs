//! Forms and their fields: where a field's bits are in the word and what they mean.

use super::Isa;
use crate::field::Field;
use crate::table_syntax::{Kind, Tok};
use crate::word::Word;

/// One named field of a form: where its bits are and what they mean.
#[derive(Clone, Debug)]
pub struct FieldDef {
    /// The field's name.
    pub field: Field,
    /// Bit pieces `(lo, len)`, lowest piece first.
    pub pieces: Vec<(u8, u8)>,
    /// Total width in bits.
    pub width: u8,
    /// Interpretation.
    pub kind: Kind,
    /// The logical value is the raw value times `1 << shift`.
    pub shift: u8,
    /// `(lo, len)` when [`FieldDef::pieces`] is one piece (most fields), so that
    /// [`FieldDef::extract`] is one shift and mask ([`FieldDef::single_of`] computes it).
    pub single: Option<(u8, u8)>,
}

impl FieldDef {
    /// The [`FieldDef::single`] piece of a piece list.
    pub fn single_of(pieces: &[(u8, u8)]) -> Option<(u8, u8)> {
        match *pieces {
            [p] => Some(p),
            _ => None,
        }
    }

    /// Extracts the raw (unscaled, unsigned) bits of this field from its pieces.
    #[inline]
    pub fn extract<W: Word>(&self, bits: W) -> u64 {
        if let Some((lo, len)) = self.single {
            return bits.bits(lo as u32, len as u32);
        }
        let mut v = 0u64;
        let mut at = 0u32;
        for &(lo, len) in &self.pieces {
            v |= bits.bits(lo as u32, len as u32) << at;
            at += len as u32;
        }
        v
    }

    /// Places raw bits of this field into a word (other bits untouched).
    #[inline]
    pub fn insert<W: Word>(&self, bits: W, raw: u64) -> W {
        let mut out = bits;
        let mut at = 0u32;
        for &(lo, len) in &self.pieces {
            out = out.with_bits(lo as u32, len as u32, raw >> at);
            at += len as u32;
        }
        out
    }

    /// The bits of the word this field covers.
    pub fn mask<W: Word>(&self) -> W {
        self.insert(W::ZERO, !0)
    }

    /// Whether the logical value is signed.
    pub fn signed(&self) -> bool {
        matches!(self.kind, Kind::Sint | Kind::Target)
    }

    /// Raw bits to logical value (sign-extended and scaled).
    pub fn to_value(&self, raw: u64) -> i64 {
        let v = if self.signed() && self.width < 64 {
            let s = 64 - self.width as u32;
            ((raw << s) as i64) >> s
        } else {
            raw as i64
        };
        v << self.shift
    }

    /// Logical value to raw bits; `None` if it does not fit.
    pub fn to_raw(&self, value: i64) -> Option<u64> {
        if self.shift > 0 && value & ((1i64 << self.shift) - 1) != 0 {
            return None;
        }
        let v = value >> self.shift;
        let w = self.width as u32;
        if w >= 64 {
            return Some(v as u64);
        }
        let ok = if self.signed() {
            v >= -(1i64 << (w - 1)) && v < (1i64 << (w - 1))
        } else {
            v >= 0 && (v as u64) < (1u64 << w)
        };
        ok.then(|| (v as u64) & ((1u64 << w) - 1))
    }
}

/// One instruction form of ISA `I`: an opcode with one operand-kind variant.
#[derive(Clone, Debug)]
pub struct Form<I: Isa> {
    /// Form name (unique), e.g. `FADD_R`.
    pub name: String,
    /// The mnemonic.
    pub opcode: I::Opcode,
    /// Bits that must match `value`.
    pub mask: I::Word,
    /// The fixed bits.
    pub value: I::Word,
    /// Named fields.
    pub fields: Vec<FieldDef>,
    /// Printing template.
    pub template: Vec<Tok>,
    /// Enum fields whose entries include `?` (checked on decode).
    pub checked: Vec<u8>,
    /// Whether the form is a texture instruction that carries nvdisasm's `.T`/`.P` marker.
    pub tex_phase: bool,
    /// Index into [`Form::fields`] by `Field as usize` (`u8::MAX`: absent), so that field
    /// lookups are one load instead of a scan.
    pub slot: Vec<u8>,
    /// Single-piece extraction by `Field as usize`: `lo | len << 7` ([`QUICK_ABSENT`]: the form
    /// lacks the field; [`QUICK_PIECES`]: several pieces, see [`Form::fields`]), so that the
    /// common raw read is one load and a shift.
    pub quick: Vec<u16>,
    /// The [`Form::quick`] entries of [`Field::Guard`] and [`Field::GuardNeg`], kept here so
    /// that the guard, read for every instruction, takes no table lookups.
    pub guard_quick: [u16; 2],
}

/// [`Form::quick`]: the form has no such field.
pub const QUICK_ABSENT: u16 = u16::MAX;
/// [`Form::quick`]: the field has several bit pieces.
pub const QUICK_PIECES: u16 = u16::MAX - 1;

/// The [`Form::quick`] table of a field list and its slots.
pub(crate) fn quick(fields: &[FieldDef], slot: &[u8]) -> Vec<u16> {
    slot.iter()
        .map(|&i| match fields.get(i as usize) {
            None => QUICK_ABSENT,
            Some(d) => match d.pieces[..] {
                [(lo, len)] => lo as u16 | (len as u16) << 7,
                _ => QUICK_PIECES,
            },
        })
        .collect()
}

/// The [`Form::guard_quick`] pair of a [`Form::quick`] table.
pub(crate) fn guard_quick(quick: &[u16]) -> [u16; 2] {
    [Field::Guard, Field::GuardNeg].map(|f| quick.get(f as usize).copied().unwrap_or(QUICK_ABSENT))
}

/// The [`Form::slot`] table of a field list.
pub(crate) fn slots(fields: &[FieldDef]) -> Vec<u8> {
    let mut slot = vec![u8::MAX; Field::ALL.len()];
    for (i, d) in fields.iter().enumerate().rev() {
        if let Some(s) = slot.get_mut(d.field as usize) {
            *s = i.min(u8::MAX as usize - 1) as u8;
        }
    }
    slot
}

impl<I: Isa> Form<I> {
    /// The index of a field in [`Form::fields`].
    #[inline]
    pub fn field_index(&self, f: Field) -> Option<usize> {
        match self.slot.get(f as usize) {
            Some(&i) if i != u8::MAX => Some(i as usize),
            _ => None,
        }
    }

    /// The definition of a field, if this form has it.
    #[inline]
    pub fn field(&self, f: Field) -> Option<&FieldDef> {
        self.field_index(f).map(|i| &self.fields[i])
    }

    /// The raw (unscaled, unsigned) bits of field `f` in `bits`, if this form has it.
    #[inline]
    pub fn raw(&self, f: Field, bits: I::Word) -> Option<u64> {
        self.raw_quick(
            f,
            self.quick.get(f as usize).copied().unwrap_or(QUICK_ABSENT),
            bits,
        )
    }

    /// [`Form::raw`] of field `f` whose [`Form::quick`] entry is `q`.
    #[inline]
    fn raw_quick(&self, f: Field, q: u16, bits: I::Word) -> Option<u64> {
        match q {
            QUICK_ABSENT => None,
            QUICK_PIECES => self.field(f).map(|d| d.extract(bits)),
            q => Some(bits.bits((q & 0x7f) as u32, (q >> 7) as u32)),
        }
    }

    /// The raw bits of the guard predicate and its negation flag in `bits`, if this form has
    /// both.
    #[inline]
    pub fn guard_raw(&self, bits: I::Word) -> Option<(u64, u64)> {
        let [p, n] = self.guard_quick;
        // Both fields in one piece (every form of the tables): two shifts and masks, inlined
        // where the guard is read (for every instruction lifted).
        if p < QUICK_PIECES && n < QUICK_PIECES {
            let piece = |q: u16| bits.bits((q & 0x7f) as u32, (q >> 7) as u32);
            return Some((piece(p), piece(n)));
        }
        self.guard_raw_pieces(bits)
    }

    /// [`Form::guard_raw`] where a field is absent or has several pieces.
    #[inline(never)]
    fn guard_raw_pieces(&self, bits: I::Word) -> Option<(u64, u64)> {
        let [p, n] = self.guard_quick;
        Some((
            self.raw_quick(Field::Guard, p, bits)?,
            self.raw_quick(Field::GuardNeg, n, bits)?,
        ))
    }
}
