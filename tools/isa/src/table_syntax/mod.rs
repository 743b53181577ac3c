//! The encoding-table language, shared by the build script (which checks every table and
//! generates the `Field`, `Opcode` and modifier enums from it) and the crate (which builds the
//! decoding tables from the same parse). Plain `std`, no crate paths: `build.rs` includes this
//! file with `#[path]`.
//!
//! Two kinds of source are read:
//!
//! * the field vocabulary (`src/fields.tbl`), shared by every ISA: one line per field,
//!   `NAME[:CLASS] doc`, `CLASS` being `reg` (a general register), `pred` (a predicate),
//!   `ureg` or `upred` (a uniform register or predicate, Volta and later);
//! * one table per ISA (`src/maxwell.tbl`). Its header names the ISA and its word:
//!   `isa NAME BITS` (64 or 128), `index LO_LEN` (the bits that bucket the forms for lookup),
//!   `guard LO_LEN BIT` (the guard predicate `Guard` and its negation `GuardNeg`, which every
//!   form has unless `noguard`; `uguard`: the guard is a uniform predicate), `control LO_LEN`
//!   (the scheduling bits every instruction word carries, field `Ctrl`, Volta and later),
//!   `place NAME@LO_LEN ...` (where a field used without `@` is).
//!   Then, one item per line (`#` starts a comment line):
//!   - `enum NAME e0 e1 ...`: a modifier enum, entry *i* printed for value *i*; `_` prints
//!     nothing, `?` marks an encoding nvdisasm rejects (the decoder refuses it), `^` stands for
//!     a blank; `TEXT=Name` names the entry's typed variant explicitly (see [`variant_name`]);
//!   - `def NAME text`: a text macro, `$NAME` in later lines;
//!   - `FORM HEX [noguard|uguard] TEMPLATE`: an instruction form; the mnemonic is the template's
//!     leading word, `HEX` the fixed bits (every bit no field covers must equal `HEX`).
//!
//! Template placeholders, `{...}`, anything else printed as is (runs of blanks collapse):
//! `{Name@lo_len+lo_len*k:STYLE}` defines a field from bit pieces (low piece first; `_len`
//! defaults by style: 8 for `R`, 3 for `P`, 1 otherwise; `*k` scales the value), `{Name}` /
//! `{Name:STYLE}` prints a defined field again (or one with a default place), `{Name@b=TEXT}`
//! is a one-bit flag, `{Name@..#ENUM}` an enum modifier, `{A&B}` / `{A&B:C}` / `{A&B:q}` /
//! `{A&B:n}` combine two fields (memory operand, indexed constant offset, `, !P0`, signed f16),
//! `{A&B:mTEXT}` a memory operand whose base register (not RZ) is followed by TEXT (`R3.X4`),
//! `{Name:+}` an offset printed `+0x10` after a register, nothing when zero,
//! `{Name:YTEXT}` a register, TEXT and `+`, nothing for RZ (`R6.U32+`),
//! `{Name:w}` `+` and a uniform register, nothing for URZ,
//! `{A&B:u}` a uniform register plus offset (`UR4+0x10`), `{Name:r}` a register that prints
//! `???255` instead of RZ, `{Name:D32}` an f64 immediate from its 32 high bits,
//! `{~k}` prints `.reuse` for reuse bit `k`, `%TP` the texture-phase marker;
//! `{A&B:Q}` / `{A&B:p}` (negation A, predicate B) print `!P0, ` / `!P0`, nothing for `PT`;
//! `{A&B:s}` a memory operand whose offset without a base register prints signed (`[-0x10]`).
//!
//! Every mistake is an [`Error`] naming the file and line: a malformed line, an unknown
//! field, enum, style or macro, a field defined twice or wider than its kind allows, an enum
//! with more entries than its field can select, overlapping fields, fixed bits inside a field,
//! bits outside the word, duplicate names, an enum no form uses or one equal to another.

mod form;
mod parser;
#[cfg(test)]
mod tests;
mod tokens;

pub use tokens::{Kind, Style, Tok};

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

/// What a field of the vocabulary is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// A general register (default style `R`, kind [`Kind::Reg`] whatever the style).
    Reg,
    /// A predicate (default style `P`, kind [`Kind::Pred`] whatever the style).
    Pred,
    /// A uniform register (default style `U`, kind [`Kind::UReg`]).
    UReg,
    /// A uniform predicate (default style `UP`, kind [`Kind::UPred`]).
    UPred,
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
            Some((n, "ureg")) => (n, Class::UReg),
            Some((n, "upred")) => (n, Class::UPred),
            Some((_, c)) => {
                return Err(err(format!(
                    "unknown field class {c} (reg, pred, ureg, upred)"
                )))
            }
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
    /// The file of its line (as given to [`parse_files`]).
    pub file: String,
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
    /// The generated Rust type name: [`type_name`] of each `_`-separated part, joined
    /// (`FTYPE` → `Ftype`, `ISETP_CMP` → `IsetpCmp`).
    pub fn type_name(&self) -> String {
        self.name.split('_').map(type_name).collect()
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
    parse_files(fields, &[(file, src)])
}

/// Parses one ISA table kept in several files, read in order as one text (the header and
/// shared enums first, then the instruction families); errors name the file and its line.
pub fn parse_files(fields: Vec<FieldDecl>, files: &[(&str, &str)]) -> Result<Syntax, Error> {
    let first = files.first().map(|f| f.0).unwrap_or("");
    let mut p = parser::Parser::new(fields, first);
    for (file, src) in files {
        p.read(file, src)?;
    }
    p.finish()
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
