//! The encoding table: parsed once from `maxwell.tbl` (data, not code) into forms with
//! fixed opcode bits, named fields and a printing template, plus a lookup index.
//!
//! Table syntax (one item per line, `#` starts a comment line):
//!
//! * `enum NAME e0 e1 ...` — a modifier enum: entry *i* is printed for value *i*;
//!   `_` prints nothing, `?` marks an encoding nvdisasm rejects (the decoder refuses it).
//! * `def NAME text` — a text macro; `$NAME` in a later template is replaced by `text`.
//! * `FORM HEX [noguard] TEMPLATE` — an instruction form. `HEX` holds the fixed bits; every
//!   bit that no field covers must equal `HEX` (so the mask is implied by the fields). The
//!   mnemonic is the leading word of the template. Unless `noguard` is given, the form has
//!   the guard predicate `Guard` (bits 16-18) and `GuardNeg` (bit 19).
//!
//! Template placeholders, `{...}` (anything else is printed as is; runs of blanks collapse):
//!
//! * `{Name@lo_len+lo_len*4:STYLE}` defines field `Name` from bit pieces (low piece first;
//!   `_len` defaults by style: 8 for `R`, 3 for `P`, 1 otherwise; `*k` scales the value)
//!   and prints it with `STYLE`. Without `@` the field must exist already or have a default
//!   place (`Rd` 0, `Ra` 8, `Rb` 20, `Rc` 39). Styles: `R` register, `P` predicate,
//!   `X` unsigned hex, `S` signed hex, `N` unsigned decimal, `F` 20-bit float (f32 high
//!   bits), `D` 20-bit double (f64 high bits), `F32` 32-bit float, `T` branch target,
//!   `H` hidden (kept for the round trip, not printed).
//! * `{Name@..=TEXT}` a flag: prints `TEXT` when the field is non-zero.
//! * `{Name@..#ENUM}` an enum modifier.
//! * `{A+B:M}` memory operand from register field `A` and offset field `B`
//!   (`[RZ]`, `[0x10]`, `[R2]`, `[R2+0x10]` as nvdisasm writes them).
//! * `{~k}` prints `.reuse` when reuse bit `k` of the scheduling word is set.

use crate::field::Field;
use crate::opcode::Opcode;
use std::collections::HashMap;
use std::sync::OnceLock;

/// The table source, kept as data next to the code.
pub const TABLE_SOURCE: &str = include_str!("maxwell.tbl");

/// How a field's raw bits turn into a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// General register, 255 = RZ.
    Reg,
    /// Predicate register, 7 = PT.
    Pred,
    /// Unsigned integer.
    Uint,
    /// Signed (two's complement over the field's width) integer.
    Sint,
    /// One-bit flag.
    Flag,
    /// Modifier enum (index into [`Table::enums`]).
    Enum(u16),
    /// High 20 bits of an f32 (19 bits + sign).
    F20,
    /// High 20 bits of an f64 (19 bits + sign).
    D20,
    /// A full 32-bit float.
    F32,
    /// Signed branch offset relative to the next instruction.
    Target,
}

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

/// How a placeholder prints.
#[derive(Clone, Debug, PartialEq)]
pub enum Style {
    /// Register name.
    Reg,
    /// Predicate name.
    Pred,
    /// Predicate name and `, `, nothing for `PT`.
    PredComma,
    /// `, ` and predicate name, nothing for `PT`.
    CommaPredOnly,
    /// Text when the field is not all ones (e.g. a register that is not RZ).
    NotAllOnes(String),
    /// Unsigned hex.
    Hex,
    /// Signed hex.
    SHex,
    /// Unsigned decimal.
    Dec,
    /// f32 from 20 high bits.
    F20,
    /// f64 from 20 high bits.
    D20,
    /// f32 from 32 bits.
    F32,
    /// f16 from 16 bits.
    F16,
    /// Absolute branch target.
    Target,
    /// Nothing.
    Hidden,
    /// Nothing (a signed field).
    HiddenSigned,
    /// Text when non-zero.
    Flag(String),
    /// Enum entry text.
    Enum(u16),
    /// Memory operand from a register field and an offset field.
    Mem(u8),
    /// Indexed constant-buffer offset (`R2+0x10`, `0x0` for RZ and zero).
    CbufMem(u8),
    /// ` 0x..` (signed), nothing when zero.
    OptImm,
    /// `, 0x..` (signed), nothing when zero.
    OptImmComma,
    /// Register and `, `, nothing for `RZ`.
    RegComma,
    /// `, ` and register, nothing for `RZ`.
    CommaReg,
    /// The register `n` above the field's (RZ stays RZ).
    RegPlus(u8),
    /// `{b,a,..}`: the numbers of the set bits, highest first.
    BitSet,
    /// `, b,a`: the numbers of the set bits, highest first; nothing when none.
    BitList,
    /// An f16 immediate whose sign comes from a separate negation field (index).
    NegFloat16(u8),
    /// `, !P0` from a negation field (index) and a predicate: nothing for `PT`.
    CommaPred(u8),
}

/// One piece of a printing template.
#[derive(Clone, Debug)]
pub enum Tok {
    /// Literal text.
    Text(String),
    /// A field (index into [`Form::fields`]) printed with a style.
    Field(u8, Style),
    /// `.reuse` when the reuse bit is set.
    Reuse(u8),
    /// `.T` / `.P`: nvdisasm's texture-phase marker (from the stream context).
    TexPhase,
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
    /// Candidate forms per value of the top `INDEX_BITS` bits, most specific first.
    index: Vec<(u32, u32)>,
    cands: Vec<u16>,
}

/// Number of top bits used to bucket forms.
const INDEX_BITS: u32 = 12;

impl Table {
    /// Candidate forms for a word, most specific first.
    #[inline]
    pub fn candidates(&self, bits: u64) -> &[u16] {
        let (s, e) = self.index[(bits >> (64 - INDEX_BITS)) as usize];
        &self.cands[s as usize..e as usize]
    }

    /// Finds a form by name.
    pub fn form_by_name(&self, name: &str) -> Option<usize> {
        self.forms.iter().position(|f| f.name == name)
    }
}

/// The table, parsed on first use.
#[inline]
pub fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| parse(TABLE_SOURCE).unwrap_or_else(|e| panic!("maxwell.tbl: {e}")))
}

fn default_place(f: Field) -> Option<(u8, u8)> {
    Some(match f {
        Field::Rd => (0, 8),
        Field::Ra => (8, 8),
        Field::Rb => (20, 8),
        Field::Rc => (39, 8),
        _ => return None,
    })
}

fn parse_style(s: &str, enums: &HashMap<String, u16>) -> Result<Style, String> {
    Ok(match s {
        "R" => Style::Reg,
        "P" => Style::Pred,
        "Q" => Style::PredComma,
        "q" => Style::CommaPredOnly,
        "X" => Style::Hex,
        "S" => Style::SHex,
        "N" => Style::Dec,
        "F" => Style::F20,
        "D" => Style::D20,
        "F32" => Style::F32,
        "F16" => Style::F16,
        "T" => Style::Target,
        "H" => Style::Hidden,
        "h" => Style::HiddenSigned,
        "O" => Style::OptImm,
        "o" => Style::OptImmComma,
        "Z" => Style::RegComma,
        "z" => Style::CommaReg,
        "R1" => Style::RegPlus(1),
        "R2" => Style::RegPlus(2),
        "R3" => Style::RegPlus(3),
        "B" => Style::BitSet,
        "b" => Style::BitList,
        _ => {
            if let Some(rest) = s.strip_prefix('#') {
                Style::Enum(
                    *enums
                        .get(rest)
                        .ok_or_else(|| format!("unknown enum {rest}"))?,
                )
            } else if let Some(rest) = s.strip_prefix('!') {
                Style::NotAllOnes(rest.to_string())
            } else if let Some(rest) = s.strip_prefix('=') {
                Style::Flag(rest.to_string())
            } else {
                return Err(format!("unknown style {s}"));
            }
        }
    })
}

fn kind_for(style: &Style) -> Kind {
    match style {
        Style::Reg | Style::RegComma | Style::CommaReg | Style::RegPlus(_) => Kind::Reg,
        Style::Pred | Style::PredComma | Style::CommaPredOnly => Kind::Pred,
        Style::SHex | Style::HiddenSigned | Style::OptImm => Kind::Sint,
        Style::F20 => Kind::F20,
        Style::D20 => Kind::D20,
        Style::F32 => Kind::F32,
        Style::Target => Kind::Target,
        Style::Flag(_) => Kind::Flag,
        Style::Enum(e) => Kind::Enum(*e),
        _ => Kind::Uint,
    }
}

/// Parses the table source.
pub fn parse(src: &str) -> Result<Table, String> {
    let mut enums: Vec<(String, Vec<String>)> = Vec::new();
    let mut enum_ix: HashMap<String, u16> = HashMap::new();
    let mut defs: Vec<(String, String)> = Vec::new();
    let mut forms = Vec::new();
    for (ln, line) in src.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |m: String| format!("line {}: {m}", ln + 1);
        if let Some(rest) = line.strip_prefix("enum ") {
            let mut it = rest.split_whitespace();
            let name = it.next().ok_or_else(|| err("enum without name".into()))?;
            let entries: Vec<String> = it
                .map(|e| {
                    if e == "_" {
                        String::new()
                    } else {
                        e.replace('^', " ")
                    }
                })
                .collect();
            enum_ix.insert(name.to_string(), enums.len() as u16);
            enums.push((name.to_string(), entries));
            continue;
        }
        if let Some(rest) = line.strip_prefix("def ") {
            let (name, text) = rest.split_once(' ').ok_or_else(|| err("bad def".into()))?;
            let text = expand(text.trim(), &defs);
            defs.push((name.to_string(), text));
            continue;
        }
        let (name, rest) = line
            .split_once(char::is_whitespace)
            .ok_or_else(|| err("bad form".into()))?;
        let rest = rest.trim_start();
        let (hex, rest) = rest
            .split_once(char::is_whitespace)
            .ok_or_else(|| err("bad form".into()))?;
        let value = u64::from_str_radix(hex.trim_start_matches("0x"), 16)
            .map_err(|e| err(e.to_string()))?;
        let mut rest = rest.trim_start();
        let mut guard = true;
        if let Some(r) = rest.strip_prefix("noguard ") {
            guard = false;
            rest = r.trim_start();
        }
        let template = expand(rest, &defs);
        let form = parse_form(name, value, guard, &template, &enum_ix, &enums).map_err(err)?;
        forms.push(form);
    }
    let mut names = HashMap::new();
    for (i, f) in forms.iter().enumerate() {
        if names.insert(f.name.clone(), i).is_some() {
            return Err(format!("duplicate form {}", f.name));
        }
    }
    // Index: bucket by top bits, most specific first.
    let nb = 1usize << INDEX_BITS;
    let shift = 64 - INDEX_BITS;
    let mut order: Vec<usize> = (0..forms.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(forms[i].mask.count_ones()));
    let mut index = Vec::with_capacity(nb);
    let mut cands = Vec::new();
    for b in 0..nb as u64 {
        let start = cands.len() as u32;
        for &i in &order {
            let f = &forms[i];
            let tm = f.mask >> shift;
            if (b & tm) == (f.value >> shift) & tm {
                cands.push(i as u16);
            }
        }
        index.push((start, cands.len() as u32));
    }
    Ok(Table {
        forms,
        enums,
        index,
        cands,
    })
}

fn expand(text: &str, defs: &[(String, String)]) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(p) = rest.find('$') {
        out.push_str(&rest[..p]);
        let tail = &rest[p + 1..];
        let n = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        let name = &tail[..n];
        match defs.iter().rev().find(|(k, _)| k == name) {
            Some((_, v)) => out.push_str(v),
            None => {
                out.push('$');
                out.push_str(name);
            }
        }
        rest = &tail[n..];
    }
    out.push_str(rest);
    out
}

fn parse_form(
    name: &str,
    value: u64,
    guard: bool,
    template: &str,
    enum_ix: &HashMap<String, u16>,
    enums: &[(String, Vec<String>)],
) -> Result<Form, String> {
    let mn_end = template
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(template.len());
    let mnemonic = &template[..mn_end];
    let opcode =
        Opcode::from_name(mnemonic).ok_or_else(|| format!("unknown mnemonic {mnemonic}"))?;
    let mut fields: Vec<FieldDef> = Vec::new();
    if guard {
        fields.push(FieldDef {
            field: Field::Guard,
            pieces: vec![(16, 3)],
            width: 3,
            kind: Kind::Pred,
            shift: 0,
        });
        fields.push(FieldDef {
            field: Field::GuardNeg,
            pieces: vec![(19, 1)],
            width: 1,
            kind: Kind::Flag,
            shift: 0,
        });
    }
    let mut toks = Vec::new();
    let mut text = String::new();
    let template = template.replace("%TP", "{%TP}");
    let mut rest = template.as_str();
    while let Some(p) = rest.find('{') {
        text.push_str(&rest[..p]);
        let close = rest[p..].find('}').ok_or("unclosed {")? + p;
        let ph = &rest[p + 1..close];
        rest = &rest[close + 1..];
        if !text.is_empty() {
            toks.push(Tok::Text(std::mem::take(&mut text)));
        }
        if ph == "%TP" {
            toks.push(Tok::TexPhase);
            continue;
        }
        if let Some(k) = ph.strip_prefix('~') {
            toks.push(Tok::Reuse(k.parse().map_err(|_| "bad reuse slot")?));
            continue;
        }
        // Split name[@spec] and style.
        let split = ph.find([':', '=', '#']).unwrap_or(ph.len());
        let (head, style_s) = ph.split_at(split);
        let style_s = style_s.strip_prefix(':').unwrap_or(style_s);
        if let Some((a, b)) = head.split_once('&') {
            let fa = Field::from_name(a).ok_or_else(|| format!("unknown field {a}"))?;
            let fb = Field::from_name(b).ok_or_else(|| format!("unknown field {b}"))?;
            let ia = fields
                .iter()
                .position(|d| d.field == fa)
                .ok_or("mem: register field not defined")?;
            let ib = fields
                .iter()
                .position(|d| d.field == fb)
                .ok_or("mem: offset field not defined")?;
            let st = match style_s {
                "q" => Style::CommaPred(ia as u8),
                "C" => Style::CbufMem(ia as u8),
                "n" => Style::NegFloat16(ia as u8),
                _ => Style::Mem(ia as u8),
            };
            toks.push(Tok::Field(ib as u8, st));
            continue;
        }
        let (fname, spec) = match head.split_once('@') {
            Some((n, s)) => (n, Some(s)),
            None => (head, None),
        };
        let field = Field::from_name(fname).ok_or_else(|| format!("unknown field {fname}"))?;
        let style = if style_s.is_empty() {
            match field {
                Field::Rd | Field::Ra | Field::Rb | Field::Rc | Field::Rd2 => Style::Reg,
                Field::Pd | Field::Pd2 | Field::Pa | Field::Pb | Field::Pc => Style::Pred,
                _ => Style::Hex,
            }
        } else {
            parse_style(style_s, enum_ix)?
        };
        let existing = fields.iter().position(|d| d.field == field);
        let idx = match (existing, spec) {
            (Some(i), None) => i,
            (Some(_), Some(_)) => return Err(format!("field {fname} defined twice")),
            (None, _) => {
                let (pieces, shift) = match spec {
                    Some(s) => parse_spec(s, &style)?,
                    None => (
                        vec![default_place(field).ok_or_else(|| format!("field {fname} needs @"))?],
                        0,
                    ),
                };
                let width = pieces.iter().map(|p| p.1).sum();
                let mut kind = kind_for(&style);
                if style == Style::Target {
                    kind = Kind::Target;
                }
                // Register and predicate operands keep their kind whatever the style.
                match field {
                    Field::Rd | Field::Rd2 | Field::Ra | Field::Rb | Field::Rc => kind = Kind::Reg,
                    Field::Pd | Field::Pd2 | Field::Pa | Field::Pb | Field::Pc => kind = Kind::Pred,
                    _ => {}
                }
                fields.push(FieldDef {
                    field,
                    pieces,
                    width,
                    kind,
                    shift,
                });
                fields.len() - 1
            }
        };
        toks.push(Tok::Field(idx as u8, style));
    }
    text.push_str(rest);
    if !text.is_empty() {
        toks.push(Tok::Text(text));
    }
    let mut covered = 0u64;
    for d in &fields {
        let m = d.mask();
        if covered & m != 0 {
            return Err(format!("{name}: field {:?} overlaps another", d.field));
        }
        covered |= m;
    }
    let mask = !covered;
    if value & !mask != 0 {
        return Err(format!(
            "{name}: fixed value {value:#x} has bits inside fields ({:#x})",
            value & !mask
        ));
    }
    let checked = fields
        .iter()
        .enumerate()
        .filter(|(_, d)| match d.kind {
            Kind::Enum(e) => {
                let n = enums[e as usize].1.len();
                n < (1usize << d.width.min(16)) || enums[e as usize].1.iter().any(|s| s == "?")
            }
            _ => false,
        })
        .map(|(i, _)| i as u8)
        .collect();
    let tex_phase = toks.iter().any(|t| matches!(t, Tok::TexPhase));
    let slot = slots(&fields);
    let quick = quick(&fields, &slot);
    Ok(Form {
        name: name.to_string(),
        opcode,
        mask,
        value,
        slot,
        quick,
        fields,
        template: toks,
        checked,
        tex_phase,
    })
}

fn parse_spec(s: &str, style: &Style) -> Result<(Vec<(u8, u8)>, u8), String> {
    let (s, shift) = match s.split_once('*') {
        Some((a, k)) => {
            let k: u32 = k.parse().map_err(|_| "bad scale")?;
            if !k.is_power_of_two() {
                return Err("scale must be a power of two".into());
            }
            (a, k.trailing_zeros() as u8)
        }
        None => (s, 0),
    };
    let dl = match style {
        Style::Reg | Style::RegComma | Style::CommaReg | Style::RegPlus(_) => 8,
        Style::Pred | Style::PredComma | Style::CommaPredOnly => 3,
        _ => 1,
    };
    let mut pieces = Vec::new();
    for p in s.split('+') {
        let (lo, len) = match p.split_once('_') {
            Some((a, b)) => (a.parse::<u8>(), b.parse::<u8>()),
            None => (p.parse::<u8>(), Ok(dl)),
        };
        let (lo, len) = (
            lo.map_err(|_| format!("bad spec {s}"))?,
            len.map_err(|_| format!("bad spec {s}"))?,
        );
        if len == 0 || lo as u32 + len as u32 > 64 {
            return Err(format!("bad spec {s}"));
        }
        pieces.push((lo, len));
    }
    Ok((pieces, shift))
}
