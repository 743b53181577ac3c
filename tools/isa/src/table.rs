//! The encoding table: `maxwell.tbl` (data, not code), parsed once at first use by the
//! table language of [`crate::table_syntax`] (the build script checks it with the same parser,
//! so a table mistake fails the build) into forms with fixed opcode bits, named fields and a
//! printing template, plus a lookup index.

use crate::field::Field;
use crate::opcode::Opcode;
use crate::table_syntax::{self, Syntax};
use std::sync::OnceLock;

pub use crate::table_syntax::{Kind, Style, Tok};

/// The table source, kept as data next to the code.
pub const TABLE_SOURCE: &str = include_str!("maxwell.tbl");

/// The field vocabulary shared by every ISA's table.
pub const FIELDS_SOURCE: &str = include_str!("fields.tbl");

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
}

impl FieldDef {
    /// Extracts the raw (unscaled, unsigned) bits of this field.
    #[inline]
    pub fn extract(&self, bits: u64) -> u64 {
        let mut v = 0u64;
        let mut at = 0u32;
        for &(lo, len) in &self.pieces {
            let m = if len == 64 { !0 } else { (1u64 << len) - 1 };
            v |= ((bits >> lo) & m) << at;
            at += len as u32;
        }
        v
    }

    /// Places raw bits of this field into a word (other bits untouched).
    #[inline]
    pub fn insert(&self, bits: u64, raw: u64) -> u64 {
        let mut out = bits;
        let mut at = 0u32;
        for &(lo, len) in &self.pieces {
            let m = if len == 64 { !0 } else { (1u64 << len) - 1 };
            out = (out & !(m << lo)) | (((raw >> at) & m) << lo);
            at += len as u32;
        }
        out
    }

    /// The bits of the word this field covers.
    pub fn mask(&self) -> u64 {
        self.insert(0, !0)
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

/// One instruction form: an opcode with one operand-kind variant.
#[derive(Clone, Debug)]
pub struct Form {
    /// Form name (unique), e.g. `FADD_R`.
    pub name: String,
    /// The mnemonic.
    pub opcode: Opcode,
    /// Bits that must match `value`.
    pub mask: u64,
    /// The fixed bits.
    pub value: u64,
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
}

/// [`Form::quick`]: the form has no such field.
pub const QUICK_ABSENT: u16 = u16::MAX;
/// [`Form::quick`]: the field has several bit pieces.
pub const QUICK_PIECES: u16 = u16::MAX - 1;

/// The [`Form::quick`] table of a field list and its slots.
fn quick(fields: &[FieldDef], slot: &[u8]) -> Vec<u16> {
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

/// The [`Form::slot`] table of a field list.
fn slots(fields: &[FieldDef]) -> Vec<u8> {
    let mut slot = vec![u8::MAX; Field::ALL.len()];
    for (i, d) in fields.iter().enumerate().rev() {
        if let Some(s) = slot.get_mut(d.field as usize) {
            *s = i.min(u8::MAX as usize - 1) as u8;
        }
    }
    slot
}

impl Form {
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
    pub fn raw(&self, f: Field, bits: u64) -> Option<u64> {
        match self.quick.get(f as usize).copied().unwrap_or(QUICK_ABSENT) {
            QUICK_ABSENT => None,
            QUICK_PIECES => self.field(f).map(|d| d.extract(bits)),
            q => {
                let (lo, len) = ((q & 0x7f) as u32, (q >> 7) as u32);
                let m = if len >= 64 { !0 } else { (1u64 << len) - 1 };
                Some((bits >> lo) & m)
            }
        }
    }
}

/// The parsed table with its lookup index.
#[derive(Debug)]
pub struct Table {
    /// Every form, in table order.
    pub forms: Vec<Form>,
    /// Modifier enums: name and entries.
    pub enums: Vec<(String, Vec<String>)>,
    /// Which entries of each enum are valid (not `?`), by enum and value.
    pub valid: Vec<Vec<bool>>,
    /// The bits `(lo, len)` that bucket the forms.
    index_bits: (u32, u32),
    /// Candidate forms per value of the index bits, most specific first.
    index: Vec<(u32, u32)>,
    cands: Vec<u16>,
}

impl Table {
    /// Candidate forms for a word, most specific first.
    #[inline]
    pub fn candidates(&self, bits: u64) -> &[u16] {
        let (lo, len) = self.index_bits;
        let (s, e) = self.index[((bits >> lo) & ((1 << len) - 1)) as usize];
        &self.cands[s as usize..e as usize]
    }

    /// Finds a form by name.
    pub fn form_by_name(&self, name: &str) -> Option<usize> {
        self.forms.iter().position(|f| f.name == name)
    }
}

/// The table, parsed on first use (the build script has checked it: parsing cannot fail).
#[inline]
pub fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| parse(TABLE_SOURCE).unwrap_or_else(|e| panic!("{e}")))
}

/// Parses a table source against the field vocabulary ([`FIELDS_SOURCE`]).
pub fn parse(src: &str) -> Result<Table, String> {
    let fields =
        table_syntax::parse_fields("fields.tbl", FIELDS_SOURCE).map_err(|e| e.to_string())?;
    let syn = table_syntax::parse(fields, "maxwell.tbl", src).map_err(|e| e.to_string())?;
    from_syntax(syn)
}

/// The lookup tables of a checked table.
fn from_syntax(syn: Syntax) -> Result<Table, String> {
    let field_of = |i: usize| {
        Field::from_name(&syn.fields[i].name)
            .ok_or_else(|| format!("field {} is not in the generated enum", syn.fields[i].name))
    };
    let mut forms = Vec::with_capacity(syn.forms.len());
    for f in &syn.forms {
        let opcode = Opcode::from_name(&f.mnemonic)
            .ok_or_else(|| format!("mnemonic {} is not in the generated enum", f.mnemonic))?;
        let fields = f
            .fields
            .iter()
            .map(|d| {
                Ok(FieldDef {
                    field: field_of(d.field)?,
                    pieces: d.pieces.clone(),
                    width: d.width,
                    kind: d.kind,
                    shift: d.shift,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let slot = slots(&fields);
        let quick = quick(&fields, &slot);
        forms.push(Form {
            name: f.name.clone(),
            opcode,
            mask: f.mask as u64,
            value: f.value as u64,
            slot,
            quick,
            fields,
            template: f.template.clone(),
            checked: f.checked.clone(),
            tex_phase: f.tex_phase,
        });
    }
    // Index: bucket by the index bits, most specific first.
    let (lo, len) = (syn.index.0 as u32, syn.index.1 as u32);
    let mut order: Vec<usize> = (0..forms.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(forms[i].mask.count_ones()));
    let mut index = Vec::with_capacity(1 << len);
    let mut cands = Vec::new();
    for b in 0..1u64 << len {
        let start = cands.len() as u32;
        for &i in &order {
            let f = &forms[i];
            let tm = (f.mask >> lo) & ((1 << len) - 1);
            if (b & tm) == (f.value >> lo) & tm {
                cands.push(i as u16);
            }
        }
        index.push((start, cands.len() as u32));
    }
    let enums = syn
        .enums
        .iter()
        .map(|e| (e.name.clone(), e.entries.clone()))
        .collect();
    let valid = syn
        .enums
        .iter()
        .map(|e| e.variant_of.iter().map(Option::is_some).collect())
        .collect();
    Ok(Table {
        forms,
        enums,
        valid,
        index_bits: (lo, len),
        index,
        cands,
    })
}
