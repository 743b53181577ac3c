//! An ISA's table at run time: its forms and the lookup index, built from the checked parse
//! of [`crate::table_syntax`].

use super::form::{guard_quick, quick, slots, FieldDef, Form};
use super::Isa;
use crate::field::Field;
use crate::table_syntax::{self, Syntax};
use crate::word::Word;

/// The field vocabulary shared by every ISA's table.
pub const FIELDS_SOURCE: &str = include_str!("../fields.tbl");

/// The parsed table of ISA `I` with its lookup index.
#[derive(Debug)]
pub struct Table<I: Isa> {
    /// Every form, in table order.
    pub forms: Vec<Form<I>>,
    /// Modifier enums: name and entries.
    pub enums: Vec<(String, Vec<String>)>,
    /// Which entries of each enum are valid (not `?`), by enum and value.
    pub valid: Vec<Vec<bool>>,
    /// Candidate forms per value of the index bits, most specific first.
    index: Vec<(u32, u32)>,
    cands: Candidates<I>,
}

/// The candidates of every bucket, bucket after bucket.
type Candidates<I> = Vec<Candidate<<I as Isa>::Word>>;

/// One entry of the lookup index: what a word must match, kept next to the other candidates
/// of its bucket so that decoding reads one small array instead of every form's record.
#[derive(Clone, Copy, Debug)]
pub struct Candidate<W> {
    /// The form's fixed-bit mask.
    pub mask: W,
    /// Its fixed bits.
    pub value: W,
    /// The form.
    pub form: u16,
    /// Whether an enum field must be checked on decode ([`Form::checked`] is not empty).
    pub checked: bool,
}

impl<I: Isa> Table<I> {
    /// Candidate forms for a word, most specific first.
    #[inline]
    pub fn candidates(&self, bits: I::Word) -> &[Candidate<I::Word>] {
        let (s, e) = self.index[bits.bits(I::INDEX.0, I::INDEX.1) as usize];
        &self.cands[s as usize..e as usize]
    }

    /// Finds a form by name.
    pub fn form_by_name(&self, name: &str) -> Option<usize> {
        self.forms.iter().position(|f| f.name == name)
    }

    /// Parses a table source (`file` names it in errors) against the field vocabulary
    /// ([`FIELDS_SOURCE`]).
    pub fn parse(file: &str, src: &str) -> Result<Table<I>, String> {
        let fields =
            table_syntax::parse_fields("fields.tbl", FIELDS_SOURCE).map_err(|e| e.to_string())?;
        let syn = table_syntax::parse(fields, file, src).map_err(|e| e.to_string())?;
        Table::from_syntax(syn)
    }

    /// Parses a table kept in several files (`(name, source)`, read in order as one text).
    pub fn parse_files(files: &[(&str, &str)]) -> Result<Table<I>, String> {
        let fields =
            table_syntax::parse_fields("fields.tbl", FIELDS_SOURCE).map_err(|e| e.to_string())?;
        let syn = table_syntax::parse_files(fields, files).map_err(|e| e.to_string())?;
        Table::from_syntax(syn)
    }

    /// The run-time tables of a checked parse.
    pub fn from_syntax(syn: Syntax) -> Result<Table<I>, String> {
        if syn.word_bits != I::Word::BITS {
            return Err(format!(
                "table {} has {}-bit words, the ISA {}",
                syn.isa,
                syn.word_bits,
                I::Word::BITS
            ));
        }
        let at = (syn.index.0 as u32, syn.index.1 as u32);
        if at != I::INDEX {
            return Err(format!(
                "table {} indexes bits {at:?}, the ISA {:?}",
                syn.isa,
                I::INDEX
            ));
        }
        let mut forms = Vec::with_capacity(syn.forms.len());
        for f in &syn.forms {
            forms.push(form(&syn, f)?);
        }
        let (index, cands) = lookup(&forms, at);
        Ok(Table {
            forms,
            enums: syn
                .enums
                .iter()
                .map(|e| (e.name.clone(), e.entries.clone()))
                .collect(),
            valid: syn
                .enums
                .iter()
                .map(|e| e.variant_of.iter().map(Option::is_some).collect())
                .collect(),
            index,
            cands,
        })
    }
}

/// One run-time form of a checked one (names resolved to the generated enums).
fn form<I: Isa>(syn: &Syntax, f: &table_syntax::FormSyn) -> Result<Form<I>, String> {
    let opcode = I::opcode(&f.mnemonic)
        .ok_or_else(|| format!("mnemonic {} is not in the generated enum", f.mnemonic))?;
    let fields = f
        .fields
        .iter()
        .map(|d| {
            let name = &syn.fields[d.field].name;
            Ok(FieldDef {
                field: Field::from_name(name)
                    .ok_or_else(|| format!("field {name} is not in the generated enum"))?,
                single: FieldDef::single_of(&d.pieces),
                pieces: d.pieces.clone(),
                width: d.width,
                kind: d.kind,
                shift: d.shift,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let slot = slots(&fields);
    let quick = quick(&fields, &slot);
    Ok(Form {
        name: f.name.clone(),
        opcode,
        mask: I::Word::from_u128(f.mask),
        value: I::Word::from_u128(f.value),
        slot,
        guard_quick: guard_quick(&quick),
        quick,
        fields,
        template: f.template.clone(),
        checked: f.checked.clone(),
        tex_phase: f.tex_phase,
    })
}

/// The lookup index: per value of the index bits, the forms that can match it, most
/// specific (most fixed bits) first, table order among equals.
fn lookup<I: Isa>(forms: &[Form<I>], (lo, len): (u32, u32)) -> (Vec<(u32, u32)>, Candidates<I>) {
    let mut order: Vec<usize> = (0..forms.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(forms[i].mask.count_ones()));
    let mut index = Vec::with_capacity(1 << len);
    let mut cands = Vec::new();
    for b in 0..1u64 << len {
        let start = cands.len() as u32;
        for &i in &order {
            let f = &forms[i];
            let tm = f.mask.bits(lo, len);
            if b & tm == f.value.bits(lo, len) & tm {
                cands.push(Candidate {
                    mask: f.mask,
                    value: f.value,
                    form: i as u16,
                    checked: !f.checked.is_empty(),
                });
            }
        }
        index.push((start, cands.len() as u32));
    }
    (index, cands)
}
