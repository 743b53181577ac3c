//! The encoding-table language, shared by the build script (which checks every table and
//! generates the `Field`, `Opcode` and modifier enums from it) and the crate (which builds the
//! decoding tables from the same parse). Plain `std`, no crate paths: `build.rs` includes this
//! file with `#[path]`.
//!
//! Two kinds of source are read:
//!
//! * the field vocabulary (`src/fields.tbl`), shared by every ISA: one line per field,
//!   `NAME[:CLASS] doc`, `CLASS` being `reg` (a general register) or `pred` (a predicate);
//! * one table per ISA (`src/maxwell.tbl`). Its header names the ISA and its word:
//!   `isa NAME BITS` (64 or 128), `index LO_LEN` (the bits that bucket the forms for lookup),
//!   `guard LO_LEN BIT` (the guard predicate `Guard` and its negation `GuardNeg`, which every
//!   form has unless `noguard`), `place NAME@LO_LEN ...` (where a field used without `@` is).
//!   Then, one item per line (`#` starts a comment line):
//!   - `enum NAME e0 e1 ...`: a modifier enum, entry *i* printed for value *i*; `_` prints
//!     nothing, `?` marks an encoding nvdisasm rejects (the decoder refuses it), `^` stands for
//!     a blank; `TEXT=Name` names the entry's typed variant explicitly (see [`variant_name`]);
//!   - `def NAME text`: a text macro, `$NAME` in later lines;
//!   - `FORM HEX [noguard] TEMPLATE`: an instruction form; the mnemonic is the template's
//!     leading word, `HEX` the fixed bits (every bit no field covers must equal `HEX`).
//!
//! Template placeholders, `{...}`, anything else printed as is (runs of blanks collapse):
//! `{Name@lo_len+lo_len*k:STYLE}` defines a field from bit pieces (low piece first; `_len`
//! defaults by style: 8 for `R`, 3 for `P`, 1 otherwise; `*k` scales the value), `{Name}` /
//! `{Name:STYLE}` prints a defined field again (or one with a default place), `{Name@b=TEXT}`
//! is a one-bit flag, `{Name@..#ENUM}` an enum modifier, `{A&B}` / `{A&B:C}` / `{A&B:q}` /
//! `{A&B:n}` combine two fields (memory operand, indexed constant offset, `, !P0`, signed f16),
//! `{~k}` prints `.reuse` for reuse bit `k`, `%TP` the texture-phase marker.
//!
//! Every mistake is an [`Error`] naming the file and line: a malformed line, an unknown
//! field, enum, style or macro, a field defined twice or wider than its kind allows, an enum
//! with more entries than its field can select, overlapping fields, fixed bits inside a field,
//! bits outside the word, duplicate names, an enum no form uses or one equal to another.

use std::collections::HashMap;
use std::fmt;

/// A table mistake: where and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The file (as given to [`parse`]).
    pub file: String,
    /// The 1-based line (0: the file as a whole).
    pub line: usize,
    /// What is wrong.
    pub msg: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.msg)
    }
}

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
    /// Modifier enum (index into the table's enums).
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
    /// A field (index into the form's fields) printed with a style.
    Field(u8, Style),
    /// `.reuse` when the reuse bit is set.
    Reuse(u8),
    /// `.T` / `.P`: nvdisasm's texture-phase marker (from the stream context).
    TexPhase,
}

/// What a field of the vocabulary is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// A general register (default style `R`, kind [`Kind::Reg`] whatever the style).
    Reg,
    /// A predicate (default style `P`, kind [`Kind::Pred`] whatever the style).
    Pred,
    /// Anything else (default style `X`).
    Other,
}

/// One name of the field vocabulary.
#[derive(Clone, Debug)]
pub struct FieldDecl {
    /// The name (a `Field` variant).
    pub name: String,
    /// Register, predicate or other.
    pub class: Class,
    /// Its documentation line.
    pub doc: String,
    /// Its line in the vocabulary.
    pub line: usize,
}

/// Parses the field vocabulary.
pub fn parse_fields(file: &str, src: &str) -> Result<Vec<FieldDecl>, Error> {
    let mut out: Vec<FieldDecl> = Vec::new();
    for (ln, line) in src.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |msg: String| Error {
            file: file.to_string(),
            line: ln + 1,
            msg,
        };
        let (head, doc) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let (name, class) = match head.split_once(':') {
            None => (head, Class::Other),
            Some((n, "reg")) => (n, Class::Reg),
            Some((n, "pred")) => (n, Class::Pred),
            Some((_, c)) => return Err(err(format!("unknown field class {c} (reg, pred)"))),
        };
        if !is_camel(name) {
            return Err(err(format!("field name {name} is not CamelCase")));
        }
        let doc = doc.trim();
        if doc.is_empty() {
            return Err(err(format!("field {name} has no documentation")));
        }
        if out.iter().any(|d| d.name == name) {
            return Err(err(format!("field {name} declared twice")));
        }
        out.push(FieldDecl {
            name: name.to_string(),
            class,
            doc: doc.to_string(),
            line: ln + 1,
        });
    }
    Ok(out)
}

/// A modifier enum of a table.
#[derive(Clone, Debug)]
pub struct EnumDecl {
    /// The table's name, e.g. `FTYPE`.
    pub name: String,
    /// Its line.
    pub line: usize,
    /// Printed text per value (`""` for `_`, `"?"` for a rejected value).
    pub entries: Vec<String>,
    /// Typed variant per value: index into [`EnumDecl::variants`], `None` for `?`.
    pub variant_of: Vec<Option<u16>>,
    /// The distinct typed variants, in order of first value: (Rust name, printed text).
    pub variants: Vec<(String, String)>,
}

impl EnumDecl {
    /// The generated Rust type name (see [`type_name`]).
    pub fn type_name(&self) -> String {
        type_name(&self.name)
    }
}

/// One field of a form.
#[derive(Clone, Debug)]
pub struct FieldSyn {
    /// Index into the field vocabulary.
    pub field: usize,
    /// Bit pieces `(lo, len)`, lowest piece first.
    pub pieces: Vec<(u8, u8)>,
    /// Total width in bits (at most 64).
    pub width: u8,
    /// Interpretation.
    pub kind: Kind,
    /// The logical value is the raw value times `1 << shift`.
    pub shift: u8,
}

/// One instruction form.
#[derive(Clone, Debug)]
pub struct FormSyn {
    /// Form name, e.g. `FADD_R`.
    pub name: String,
    /// Its line.
    pub line: usize,
    /// The mnemonic (leading word of the template).
    pub mnemonic: String,
    /// Bits that must match `value` (the bits no field covers).
    pub mask: u128,
    /// The fixed bits.
    pub value: u128,
    /// The fields, the guard's first.
    pub fields: Vec<FieldSyn>,
    /// Printing template.
    pub template: Vec<Tok>,
    /// Enum fields (indices) whose value must be checked on decode (holes or `?`).
    pub checked: Vec<u8>,
    /// Whether the template carries the texture-phase marker.
    pub tex_phase: bool,
}

/// A parsed, checked table.
#[derive(Clone, Debug)]
pub struct Syntax {
    /// The field vocabulary it was checked against.
    pub fields: Vec<FieldDecl>,
    /// The ISA's name (`isa` line).
    pub isa: String,
    /// Word width in bits: 64 or 128.
    pub word_bits: u32,
    /// The bits `(lo, len)` that bucket forms for lookup.
    pub index: (u8, u8),
    /// Modifier enums, in table order.
    pub enums: Vec<EnumDecl>,
    /// Forms, in table order.
    pub forms: Vec<FormSyn>,
}

impl Syntax {
    /// The distinct mnemonics, sorted.
    pub fn mnemonics(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.forms.iter().map(|f| f.mnemonic.as_str()).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Index of a field of the vocabulary by name.
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|d| d.name == name)
    }
}

/// The Rust name of a table enum (`FTYPE` → `Ftype`) or mnemonic (`HADD2_32I` → `Hadd2_32i`):
/// first letter upper case, the rest lower case.
pub fn type_name(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        out.push(if i == 0 {
            c.to_ascii_uppercase()
        } else {
            c.to_ascii_lowercase()
        });
    }
    out
}

/// The typed variant of an enum entry, from nvdisasm's text: the runs of letters and digits,
/// each with its first letter upper case and the rest lower case, joined (`.F16` → `F16`,
/// `.U32.U32` → `U32U32`, `SR_TID.X` → `SrTidX`, `.F16x2.FTZ.RN` → `F16x2FtzRn`); a name that
/// would start with a digit gets `N` in front (`.64` → `N64`, `2D` → `N2d`, `???6` → `N6`);
/// `_` (prints nothing) is `Default`. `None` when the text has no letter or digit (`-`): such
/// an entry needs an explicit `TEXT=Name`.
pub fn variant_name(text: &str) -> Option<String> {
    if text.is_empty() {
        return Some("Default".to_string());
    }
    let mut out = String::new();
    for part in text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|p| !p.is_empty())
    {
        out.push_str(&type_name(part));
    }
    if out.is_empty() {
        return None;
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'N');
    }
    Some(out)
}

fn is_camel(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_uppercase()) && s.chars().all(|c| c.is_ascii_alphanumeric())
}

/// Parses one ISA table against the field vocabulary. `file` only names the source in errors.
pub fn parse(fields: Vec<FieldDecl>, file: &str, src: &str) -> Result<Syntax, Error> {
    Parser::new(fields, file).run(src)
}

struct Header {
    isa: Option<(String, u32)>,
    index: Option<(u8, u8)>,
    guard: Option<((u8, u8), u8)>,
    places: HashMap<usize, (u8, u8)>,
}

struct Parser {
    fields: Vec<FieldDecl>,
    file: String,
    header: Header,
    enums: Vec<EnumDecl>,
    enum_ix: HashMap<String, u16>,
    defs: Vec<(String, String)>,
    forms: Vec<FormSyn>,
}

/// A message and the line it belongs to.
type LineResult<T> = Result<T, String>;

impl Parser {
    fn new(fields: Vec<FieldDecl>, file: &str) -> Parser {
        Parser {
            fields,
            file: file.to_string(),
            header: Header {
                isa: None,
                index: None,
                guard: None,
                places: HashMap::new(),
            },
            enums: Vec::new(),
            enum_ix: HashMap::new(),
            defs: Vec::new(),
            forms: Vec::new(),
        }
    }

    fn error(&self, line: usize, msg: String) -> Error {
        Error {
            file: self.file.clone(),
            line,
            msg,
        }
    }

    fn run(mut self, src: &str) -> Result<Syntax, Error> {
        for (ln, line) in src.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            self.line(ln + 1, line).map_err(|m| self.error(ln + 1, m))?;
        }
        self.finish()
    }

    fn word_bits(&self) -> LineResult<u32> {
        match &self.header.isa {
            Some((_, b)) => Ok(*b),
            None => Err("the table must start with `isa NAME BITS`".into()),
        }
    }

    fn line(&mut self, ln: usize, line: &str) -> LineResult<()> {
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        match word {
            "isa" => {
                let (name, bits) = rest.split_once(' ').ok_or("isa NAME BITS")?;
                let bits: u32 = bits.trim().parse().map_err(|_| "bad word width")?;
                if bits != 64 && bits != 128 {
                    return Err(format!("word width {bits}: 64 or 128"));
                }
                if self.header.isa.is_some() {
                    return Err("isa given twice".into());
                }
                self.header.isa = Some((name.to_string(), bits));
            }
            "index" => {
                let bits = self.word_bits()?;
                let p = single_piece(rest, bits)?;
                if p.1 > 16 {
                    return Err("index wider than 16 bits".into());
                }
                self.header.index = Some(p);
            }
            "guard" => {
                let bits = self.word_bits()?;
                let (g, n) = rest.split_once(' ').ok_or("guard LO_LEN BIT")?;
                let g = single_piece(g, bits)?;
                let n = single_piece(n.trim(), bits)?;
                if g.1 != 3 || n.1 != 1 {
                    return Err("guard: a 3-bit predicate and a 1-bit negation".into());
                }
                self.header.guard = Some((g, n.0));
            }
            "place" => {
                let bits = self.word_bits()?;
                for p in rest.split_whitespace() {
                    let (name, spec) = p.split_once('@').ok_or("place NAME@LO_LEN")?;
                    let f = self.field(name)?;
                    self.header.places.insert(f, single_piece(spec, bits)?);
                }
            }
            "enum" => self.enum_line(ln, rest)?,
            "def" => {
                let (name, text) = rest.split_once(' ').ok_or("bad def")?;
                let text = self.expand(text.trim())?;
                self.defs.push((name.to_string(), text));
            }
            _ => {
                let form = self.form_line(ln, word, rest)?;
                if self.forms.iter().any(|f| f.name == form.name) {
                    return Err(format!("form {} defined twice", form.name));
                }
                self.forms.push(form);
            }
        }
        Ok(())
    }

    fn field(&self, name: &str) -> LineResult<usize> {
        self.fields
            .iter()
            .position(|d| d.name == name)
            .ok_or_else(|| format!("unknown field {name} (declare it in the field vocabulary)"))
    }

    fn enum_line(&mut self, ln: usize, rest: &str) -> LineResult<()> {
        let mut it = rest.split_whitespace();
        let name = it.next().ok_or("enum without name")?;
        if self.enum_ix.contains_key(name) {
            return Err(format!("enum {name} defined twice"));
        }
        let mut d = EnumDecl {
            name: name.to_string(),
            line: ln,
            entries: Vec::new(),
            variant_of: Vec::new(),
            variants: Vec::new(),
        };
        for e in it {
            let (e, explicit) = match e.rsplit_once('=') {
                Some((t, n)) if is_camel(n) => (t, Some(n.to_string())),
                Some(_) => return Err(format!("enum {name}: bad variant name in {e}")),
                None => (e, None),
            };
            if e == "?" {
                d.entries.push("?".into());
                d.variant_of.push(None);
                continue;
            }
            let text = if e == "_" {
                String::new()
            } else {
                e.replace('^', " ")
            };
            let vname = match explicit.or_else(|| variant_name(&text)) {
                Some(v) => v,
                None => {
                    return Err(format!(
                        "enum {name}: entry `{e}` needs a name (`{e}=Name`)"
                    ))
                }
            };
            let k = match d.variants.iter().position(|(v, _)| *v == vname) {
                Some(k) if d.variants[k].1 == text => k,
                Some(k) => {
                    return Err(format!(
                    "enum {name}: `{}` and `{text}` are both variant {vname} (name one: TEXT=Name)",
                    d.variants[k].1
                ))
                }
                None => {
                    d.variants.push((vname, text.clone()));
                    d.variants.len() - 1
                }
            };
            d.entries.push(text);
            d.variant_of.push(Some(k as u16));
        }
        if d.variants.is_empty() {
            return Err(format!("enum {name} has no valid entry"));
        }
        if let Some(o) = self
            .enums
            .iter()
            .find(|o| o.entries == d.entries && o.variants == d.variants)
        {
            return Err(format!(
                "enum {name} has the same entries as {} (line {}): use that one",
                o.name, o.line
            ));
        }
        if let Some(o) = self.enums.iter().find(|o| o.type_name() == d.type_name()) {
            return Err(format!(
                "enums {name} and {} have the same Rust name",
                o.name
            ));
        }
        self.enum_ix
            .insert(name.to_string(), self.enums.len() as u16);
        self.enums.push(d);
        Ok(())
    }

    fn expand(&self, text: &str) -> LineResult<String> {
        let mut out = String::new();
        let mut rest = text;
        while let Some(p) = rest.find('$') {
            out.push_str(&rest[..p]);
            let tail = &rest[p + 1..];
            let n = tail
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(tail.len());
            let name = &tail[..n];
            match self.defs.iter().rev().find(|(k, _)| k == name) {
                Some((_, v)) => out.push_str(v),
                None => return Err(format!("unknown macro ${name}")),
            }
            rest = &tail[n..];
        }
        out.push_str(rest);
        Ok(out)
    }

    fn form_line(&self, ln: usize, name: &str, rest: &str) -> LineResult<FormSyn> {
        let bits = self.word_bits()?;
        let (hex, rest) = rest
            .split_once(char::is_whitespace)
            .ok_or_else(|| format!("bad form line (FORM HEX [noguard] TEMPLATE): {name}"))?;
        let value = u128::from_str_radix(hex.trim_start_matches("0x"), 16)
            .map_err(|e| format!("{name}: bad fixed bits {hex}: {e}"))?;
        if bits < 128 && value >> bits != 0 {
            return Err(format!("{name}: fixed bits {hex} wider than {bits} bits"));
        }
        let mut rest = rest.trim_start();
        let mut guard = true;
        if let Some(r) = rest.strip_prefix("noguard ") {
            guard = false;
            rest = r.trim_start();
        }
        let template = self.expand(rest)?;
        self.form(ln, name, value, guard, &template)
            .map_err(|m| format!("{name}: {m}"))
    }

    fn form(
        &self,
        line: usize,
        name: &str,
        value: u128,
        guard: bool,
        template: &str,
    ) -> LineResult<FormSyn> {
        let bits = self.word_bits()?;
        let mn_end = template
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(template.len());
        let mnemonic = &template[..mn_end];
        if !mnemonic.starts_with(|c: char| c.is_ascii_uppercase()) {
            return Err(format!(
                "template does not start with a mnemonic: {template}"
            ));
        }
        let mut fields: Vec<FieldSyn> = Vec::new();
        if guard {
            let ((glo, glen), nbit) = self
                .header
                .guard
                .ok_or("the table has no `guard` line: say noguard")?;
            fields.push(FieldSyn {
                field: self.field("Guard")?,
                pieces: vec![(glo, glen)],
                width: glen,
                kind: Kind::Pred,
                shift: 0,
            });
            fields.push(FieldSyn {
                field: self.field("GuardNeg")?,
                pieces: vec![(nbit, 1)],
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
            toks.push(self.placeholder(ph, &mut fields, bits)?);
        }
        text.push_str(rest);
        if text.contains('}') {
            return Err("unopened }".into());
        }
        if !text.is_empty() {
            toks.push(Tok::Text(text));
        }
        let word_mask = if bits == 128 {
            !0u128
        } else {
            (1u128 << bits) - 1
        };
        let mut covered = 0u128;
        for d in &fields {
            let m = pieces_mask(&d.pieces);
            if covered & m != 0 {
                return Err(format!(
                    "field {} overlaps another",
                    self.fields[d.field].name
                ));
            }
            covered |= m;
        }
        let mask = !covered & word_mask;
        if value & !mask != 0 {
            return Err(format!(
                "fixed value {value:#x} has bits inside fields ({:#x})",
                value & !mask
            ));
        }
        let checked = fields
            .iter()
            .enumerate()
            .filter(|(_, d)| match d.kind {
                Kind::Enum(e) => {
                    let en = &self.enums[e as usize];
                    en.entries.len() < (1usize << d.width.min(16)) || en.variant_of.contains(&None)
                }
                _ => false,
            })
            .map(|(i, _)| i as u8)
            .collect();
        let tex_phase = toks.iter().any(|t| matches!(t, Tok::TexPhase));
        Ok(FormSyn {
            name: name.to_string(),
            line,
            mnemonic: mnemonic.to_string(),
            mask,
            value,
            fields,
            template: toks,
            checked,
            tex_phase,
        })
    }

    fn placeholder(&self, ph: &str, fields: &mut Vec<FieldSyn>, bits: u32) -> LineResult<Tok> {
        if ph == "%TP" {
            return Ok(Tok::TexPhase);
        }
        if let Some(k) = ph.strip_prefix('~') {
            let k: u8 = k.parse().map_err(|_| format!("bad reuse slot {k}"))?;
            if k > 7 {
                return Err(format!("reuse slot {k} above 7"));
            }
            return Ok(Tok::Reuse(k));
        }
        // Split name[@spec] and style.
        let split = ph.find([':', '=', '#']).unwrap_or(ph.len());
        let (head, style_s) = ph.split_at(split);
        let style_s = style_s.strip_prefix(':').unwrap_or(style_s);
        let defined = |f: usize| fields.iter().position(|d| d.field == f);
        if let Some((a, b)) = head.split_once('&') {
            let ia = defined(self.field(a)?).ok_or(format!("{{{ph}}}: field {a} not defined"))?;
            let ib = defined(self.field(b)?).ok_or(format!("{{{ph}}}: field {b} not defined"))?;
            let st = match style_s {
                "q" => Style::CommaPred(ia as u8),
                "C" => Style::CbufMem(ia as u8),
                "n" => Style::NegFloat16(ia as u8),
                "" => Style::Mem(ia as u8),
                s => return Err(format!("{{{ph}}}: unknown pair style {s}")),
            };
            return Ok(Tok::Field(ib as u8, st));
        }
        let (fname, spec) = match head.split_once('@') {
            Some((n, s)) => (n, Some(s)),
            None => (head, None),
        };
        let field = self.field(fname)?;
        let class = self.fields[field].class;
        let style = if style_s.is_empty() {
            match class {
                Class::Reg => Style::Reg,
                Class::Pred => Style::Pred,
                Class::Other => Style::Hex,
            }
        } else {
            self.style(style_s)?
        };
        let idx = match (defined(field), spec) {
            (Some(i), None) => i,
            (Some(_), Some(_)) => return Err(format!("field {fname} defined twice")),
            (None, _) => {
                let (pieces, shift) =
                    match spec {
                        Some(s) => parse_spec(s, &style, bits)?,
                        None => (
                            vec![*self.header.places.get(&field).ok_or_else(|| {
                                format!("field {fname} needs @ (no default place)")
                            })?],
                            0,
                        ),
                    };
                let width: u32 = pieces.iter().map(|p| p.1 as u32).sum();
                if width > 64 {
                    return Err(format!("field {fname} is {width} bits wide (at most 64)"));
                }
                let width = width as u8;
                let kind = match class {
                    Class::Reg => Kind::Reg,
                    Class::Pred => Kind::Pred,
                    Class::Other => kind_for(&style),
                };
                self.check_width(fname, kind, width)?;
                fields.push(FieldSyn {
                    field,
                    pieces,
                    width,
                    kind,
                    shift,
                });
                fields.len() - 1
            }
        };
        if let Style::Enum(e) = style {
            let n = self.enums[e as usize].entries.len();
            let w = fields[idx].width;
            if w < 16 && n > 1 << w {
                return Err(format!(
                    "enum {} has {n} entries, field {fname} only {w} bits",
                    self.enums[e as usize].name
                ));
            }
        }
        Ok(Tok::Field(idx as u8, style))
    }

    /// Widths a kind allows: flags 1 bit, predicates 3, registers 8, 20-bit floats 20,
    /// 32-bit floats 32.
    fn check_width(&self, fname: &str, kind: Kind, width: u8) -> LineResult<()> {
        let want = match kind {
            Kind::Flag => 1,
            Kind::Pred => 3,
            Kind::Reg => 8,
            Kind::F20 | Kind::D20 => 20,
            Kind::F32 => 32,
            _ => return Ok(()),
        };
        if width != want {
            return Err(format!(
                "field {fname} ({kind:?}) is {width} bits wide, not {want}"
            ));
        }
        Ok(())
    }

    fn style(&self, s: &str) -> LineResult<Style> {
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
                        *self
                            .enum_ix
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

    fn finish(self) -> Result<Syntax, Error> {
        let whole = |msg: String| Error {
            file: self.file.clone(),
            line: 0,
            msg,
        };
        let (isa, word_bits) = self
            .header
            .isa
            .clone()
            .ok_or_else(|| whole("no `isa NAME BITS` line".into()))?;
        let index = self
            .header
            .index
            .ok_or_else(|| whole("no `index LO_LEN` line".into()))?;
        if self.forms.is_empty() {
            return Err(whole("no forms".into()));
        }
        for (k, e) in self.enums.iter().enumerate() {
            let used = self.forms.iter().any(|f| {
                f.template
                    .iter()
                    .any(|t| matches!(t, Tok::Field(_, Style::Enum(x)) if *x as usize == k))
            });
            if !used {
                return Err(self.error(e.line, format!("enum {} is never used", e.name)));
            }
        }
        Ok(Syntax {
            fields: self.fields,
            isa,
            word_bits,
            index,
            enums: self.enums,
            forms: self.forms,
        })
    }
}

/// The vocabulary fields no table uses (guard fields count as used by tables with a guard).
pub fn unused_fields<'a>(fields: &'a [FieldDecl], tables: &[Syntax]) -> Vec<&'a FieldDecl> {
    let mut used = vec![false; fields.len()];
    for t in tables {
        for f in &t.forms {
            for d in &f.fields {
                used[d.field] = true;
            }
        }
    }
    fields
        .iter()
        .zip(used)
        .filter(|(_, u)| !u)
        .map(|(d, _)| d)
        .collect()
}

/// The word bits a list of pieces covers.
pub fn pieces_mask(pieces: &[(u8, u8)]) -> u128 {
    pieces.iter().fold(0u128, |m, &(lo, len)| {
        let p = if len >= 128 { !0 } else { (1u128 << len) - 1 };
        m | p << lo
    })
}

fn single_piece(s: &str, bits: u32) -> LineResult<(u8, u8)> {
    match parse_spec(s, &Style::Hex, bits)? {
        (p, 0) if p.len() == 1 => Ok(p[0]),
        _ => Err(format!("{s}: one piece LO_LEN expected")),
    }
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

fn parse_spec(s: &str, style: &Style, bits: u32) -> LineResult<(Vec<(u8, u8)>, u8)> {
    let (s, shift) = match s.split_once('*') {
        Some((a, k)) => {
            let k: u32 = k.parse().map_err(|_| format!("bad scale {k}"))?;
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
        let (Ok(lo), Ok(len)) = (lo, len) else {
            return Err(format!("bad bit spec {s}"));
        };
        if len == 0 || lo as u32 + len as u32 > bits {
            return Err(format!("bit spec {s} outside the {bits}-bit word"));
        }
        pieces.push((lo, len));
    }
    Ok((pieces, shift))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIELDS: &str = "Guard:pred g\nGuardNeg n\nRd:reg d\nRa:reg a\nFtz f\nRnd r\nImm i\n";

    fn table(body: &str) -> Result<Syntax, Error> {
        let fields = parse_fields("f.tbl", FIELDS).unwrap();
        let src = format!("isa t 64\nindex 52_12\nguard 16_3 19\nplace Rd@0_8 Ra@8_8\n{body}");
        parse(fields, "t.tbl", &src)
    }

    fn err(body: &str) -> String {
        table(body).expect_err(body).to_string()
    }

    #[test]
    fn a_small_table_parses() {
        let s =
            table("enum RND _ .RM .RP .RZ\nADD 0x5000000000000000 ADD{Rnd@39_2#RND} {Rd}, {Ra}")
                .unwrap();
        assert_eq!(s.forms[0].mnemonic, "ADD");
        assert_eq!(s.forms[0].fields.len(), 5);
        assert_eq!(s.enums[0].variants[0], ("Default".into(), String::new()));
    }

    #[test]
    fn mistakes_name_file_and_line() {
        let e = err("ADD 0x5000000000000000 ADD {Rq}");
        assert!(e.starts_with("t.tbl:5: ADD: unknown field Rq"), "{e}");
        assert!(err("ADD 0x5000000000000000 ADD {Rd}{Rnd@39_2#NOPE}").contains("unknown enum NOPE"));
        assert!(err("ADD 0x5000000000000000 ADD {Rd}{Ftz@4_2=.FTZ}").contains("not 1"));
        assert!(err("ADD 0x5000000000000000 ADD {Rd@0_8}{Ra@4_8}").contains("overlaps"));
        assert!(err("ADD 0x1 ADD {Rd}").contains("inside fields"));
        assert!(err("ADD 0x5000000000000000 ADD {Imm@60_8}").contains("outside"));
        assert!(err("ADD 0x5000000000000000 ADD $NOPE").contains("unknown macro"));
        assert!(err("ADD zz ADD {Rd}").contains("bad fixed bits"));
        assert!(err("ADD").contains("bad form line"));
        let e = err("enum E .A .B .C\nADD 0x5000000000000000 ADD{Rnd@39#E} {Rd}");
        assert!(e.contains("3 entries, field Rnd only 1 bits"), "{e}");
        assert!(err("enum E .A\nADD 0x5000000000000000 ADD {Rd}").contains("enum E is never used"));
        assert!(
            err("enum E .A .B\nenum F .A .B\nADD 0x5000000000000000 ADD {Rd}")
                .contains("same entries")
        );
        assert!(
            err("enum E .A- .A+\nADD 0x5000000000000000 ADD{Rnd@39#E} {Rd}")
                .contains("both variant A")
        );
        assert!(
            err("enum E _ -\nADD 0x5000000000000000 ADD{Rnd@39#E} {Rd}").contains("needs a name")
        );
    }

    #[test]
    fn variant_names() {
        let v = |t: &str| variant_name(t).unwrap();
        assert_eq!(v(".F16"), "F16");
        assert_eq!(v("SR_TID.X"), "SrTidX");
        assert_eq!(v(".F16x2.FTZ.RN"), "F16x2FtzRn");
        assert_eq!(v(".64"), "N64");
        assert_eq!(v("???6"), "N6");
        assert_eq!(v(""), "Default");
        assert_eq!(variant_name("-"), None);
        let s = table("enum E _ -=Neg\nADD 0x5000000000000000 ADD{Rnd@39#E} {Rd}").unwrap();
        assert_eq!(s.enums[0].variants[1], ("Neg".into(), "-".into()));
    }
}
