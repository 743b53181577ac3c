//! Checks every encoding table and generates, into `OUT_DIR`, the `Field` enum (from
//! `src/fields.tbl`) and per ISA the `Opcode` enum (one variant per mnemonic) and the typed
//! modifier enums (one per `enum` line). A table mistake fails the build with the file and
//! line (see `src/table_syntax/`).

#[path = "src/table_syntax/mod.rs"]
#[allow(dead_code)]
mod table_syntax;

use std::fmt::Write;
use std::path::{Path, PathBuf};
use table_syntax::{FieldDecl, Syntax};

/// The ISAs: name (prefix of the generated files) and the files of its table, read in order.
const ISAS: &[(&str, &[&str])] = &[("maxwell", &["src/maxwell.tbl"]), ("ampere", AMPERE_FILES)];

/// Ampere's table files (the same list as `src/ampere.rs`'s `TABLE_FILES`).
const AMPERE_FILES: &[&str] = &[
    "src/ampere/header.tbl",
    "src/ampere/int.tbl",
    "src/ampere/uniform.tbl",
    "src/ampere/float.tbl",
    "src/ampere/mem.tbl",
    "src/ampere/tex.tbl",
    "src/ampere/ctrl.tbl",
];

fn fail(msg: impl std::fmt::Display) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(1)
}

fn read(dir: &Path, rel: &str) -> (String, String) {
    println!("cargo:rerun-if-changed={rel}");
    let path = dir.join(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| fail(format!("{rel}: {e}")));
    (path.display().to_string(), text)
}

fn write(out: &Path, name: &str, text: &str) {
    let p = out.join(name);
    if std::fs::read_to_string(&p).ok().as_deref() != Some(text) {
        std::fs::write(&p, text).unwrap_or_else(|e| fail(format!("{}: {e}", p.display())));
    }
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/table_syntax");
    println!("cargo:rerun-if-changed=src/ampere");
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let (fpath, ftext) = read(&dir, "src/fields.tbl");
    let fields = table_syntax::parse_fields(&fpath, &ftext).unwrap_or_else(|e| fail(e));
    let mut tables = Vec::new();
    for (isa, rels) in ISAS {
        let texts: Vec<(String, String)> = rels.iter().map(|r| read(&dir, r)).collect();
        let files: Vec<(&str, &str)> = texts
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let syn = table_syntax::parse_files(fields.clone(), &files).unwrap_or_else(|e| fail(e));
        let rel = rels[0];
        if syn.isa != *isa {
            fail(format!("{rel}: isa {} where {isa} was expected", syn.isa));
        }
        write(&out, &format!("{isa}_opcode.rs"), &opcodes(&syn, rel));
        write(&out, &format!("{isa}_mods.rs"), &mods(&syn, isa, &dir));
        tables.push(syn);
    }
    if let Some(d) = table_syntax::unused_fields(&fields, &tables).first() {
        fail(format!(
            "{fpath}:{}: field {} is used by no table",
            d.line, d.name
        ));
    }
    write(&out, "field.rs", &field_enum(&fields));
}

/// `"text"` as a Rust string literal.
fn lit(s: &str) -> String {
    format!("{s:?}")
}

/// An enum of names: `head` (its doc and attributes), then per item (variant, name, doc) a
/// variant, and `ALL` (`all_doc`), `name()` and `from_name()` giving and taking `name`.
fn name_enum(ty: &str, head: &str, all_doc: &str, items: &[(String, String, String)]) -> String {
    let mut s = format!("{head}pub enum {ty} {{\n");
    for (v, _, doc) in items {
        let _ = writeln!(s, "    #[doc = {}]\n    {v},", lit(doc));
    }
    let _ = write!(
        s,
        "}}\n\nimpl {ty} {{\n    /// {all_doc}\n    pub const ALL: &'static [{ty}] = &["
    );
    for (v, _, _) in items {
        let _ = write!(s, "{ty}::{v}, ");
    }
    s.push_str("];\n\n    /// The name as the tables (and nvdisasm) write it.\n");
    s.push_str("    pub fn name(self) -> &'static str {\n        match self {\n");
    for (v, name, _) in items {
        let _ = writeln!(s, "            {ty}::{v} => {},", lit(name));
    }
    s.push_str("        }\n    }\n\n    /// Looks a name up.\n");
    let _ = writeln!(
        s,
        "    pub fn from_name(name: &str) -> Option<{ty}> {{\n        match name {{"
    );
    for (v, name, _) in items {
        let _ = writeln!(s, "            {} => Some({ty}::{v}),", lit(name));
    }
    s.push_str("            _ => None,\n        }\n    }\n}\n");
    s
}

fn field_enum(fields: &[FieldDecl]) -> String {
    let items: Vec<_> = fields
        .iter()
        .map(|d| (d.name.clone(), d.name.clone(), d.doc.clone()))
        .collect();
    name_enum(
        "Field",
        "/// A named operand or modifier of an instruction form (`src/fields.tbl`).\n\
         #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]\n",
        "Every field, in declaration order.",
        &items,
    )
}

fn opcodes(syn: &Syntax, rel: &str) -> String {
    let items: Vec<_> = syn
        .mnemonics()
        .into_iter()
        .map(|m| {
            let forms: Vec<&str> = syn
                .forms
                .iter()
                .filter(|f| f.mnemonic == m)
                .map(|f| f.name.as_str())
                .collect();
            let doc = format!("`{m}` (forms {}).", forms.join(", "));
            (table_syntax::type_name(m), m.to_string(), doc)
        })
        .collect();
    name_enum(
        "Opcode",
        &format!(
            "/// A mnemonic of `{rel}` (the first word nvdisasm prints, without modifiers).\n\
             #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]\n\
             #[allow(non_camel_case_types)]\n"
        ),
        "Every opcode, in mnemonic order.",
        &items,
    )
}

/// `` `Cmp` of FSETP_R, FSETP_C; `Ftz` of … ``: the fields and forms that print enum `k`.
fn users(syn: &Syntax, k: usize) -> String {
    let mut by_field: Vec<(usize, Vec<&str>)> = Vec::new();
    for f in &syn.forms {
        for t in &f.template {
            let table_syntax::Tok::Field(i, table_syntax::Style::Enum(e)) = t else {
                continue;
            };
            if *e as usize != k {
                continue;
            }
            let field = f.fields[*i as usize].field;
            match by_field.iter_mut().find(|(x, _)| *x == field) {
                Some((_, v)) if v.last() != Some(&f.name.as_str()) => v.push(&f.name),
                Some(_) => {}
                None => by_field.push((field, vec![&f.name])),
            }
        }
    }
    let parts: Vec<String> = by_field
        .iter()
        .map(|(fd, forms)| format!("`{}` of {}", syn.fields[*fd].name, forms.join(", ")))
        .collect();
    parts.join("; ")
}

/// A match pattern for ascending values: runs of three or more as ranges (`1..=6 | 9`).
fn pattern(vals: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < vals.len() {
        let mut j = i;
        while j + 1 < vals.len() && vals[j + 1] == vals[j] + 1 {
            j += 1;
        }
        if j - i >= 2 {
            parts.push(format!("{}..={}", vals[i], vals[j]));
        } else {
            parts.extend(vals[i..=j].iter().map(|v| v.to_string()));
        }
        i = j + 1;
    }
    parts.join(" | ")
}

fn mods(syn: &Syntax, isa: &str, dir: &Path) -> String {
    let isa_ty = table_syntax::type_name(isa);
    let mut s = String::new();
    for (k, e) in syn.enums.iter().enumerate() {
        let ty = e.type_name();
        let values = |v: usize| -> Vec<usize> {
            (0..e.entries.len())
                .filter(|&i| e.variant_of[i] == Some(v as u16))
                .collect()
        };
        let _ = writeln!(
            s,
            "/// `enum {}` of `{}` (line {}), {} values.\n///\n/// Used by {}.\n\
             #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]\n\
             pub enum {ty} {{",
            e.name,
            Path::new(&e.file)
                .strip_prefix(dir)
                .map_or(e.file.clone(), |p| p.display().to_string()),
            e.line,
            e.entries.len(),
            users(syn, k)
        );
        for (v, (name, text)) in e.variants.iter().enumerate() {
            let vals: Vec<String> = values(v).iter().map(|x| x.to_string()).collect();
            let what = if text.is_empty() {
                "Prints nothing".to_string()
            } else {
                format!("`{text}`")
            };
            let plural = if vals.len() > 1 { "values" } else { "value" };
            let doc = format!("{what} ({plural} {}).", vals.join(", "));
            let _ = writeln!(s, "    #[doc = {}]\n    {name},", lit(&doc));
        }
        let _ = writeln!(
            s,
            "}}\n\nimpl {ty} {{\n    /// Every variant, in table order."
        );
        let _ = write!(s, "    pub const ALL: &'static [{ty}] = &[");
        for (name, _) in &e.variants {
            let _ = write!(s, "{ty}::{name}, ");
        }
        s.push_str("];\n\n    /// nvdisasm's text (`\"\"` when it prints nothing).\n");
        s.push_str("    pub const fn name(self) -> &'static str {\n        match self {\n");
        for (name, text) in &e.variants {
            let _ = writeln!(s, "            {ty}::{name} => {},", lit(text));
        }
        s.push_str("        }\n    }\n\n");
        s.push_str(
            "    /// The variant a field value selects (`None`: a value nvdisasm rejects).\n",
        );
        s.push_str("    pub const fn from_value(value: u64) -> Option<Self> {\n");
        s.push_str("        match value {\n");
        for (v, (name, _)) in e.variants.iter().enumerate() {
            let _ = writeln!(
                s,
                "            {} => Some({ty}::{name}),",
                pattern(&values(v))
            );
        }
        s.push_str("            _ => None,\n        }\n    }\n\n");
        s.push_str("    /// The lowest field value that selects this variant.\n");
        s.push_str("    pub const fn value(self) -> u64 {\n        match self {\n");
        for (v, (name, _)) in e.variants.iter().enumerate() {
            let _ = writeln!(s, "            {ty}::{name} => {},", values(v)[0]);
        }
        s.push_str("        }\n    }\n}\n\n");
        let _ = writeln!(
            s,
            "impl crate::modifier::Modifier for {ty} {{\n\
             \x20   type Isa = crate::{isa}::{isa_ty};\n\
             \x20   const ENUM: u16 = {k};\n\
             \x20   const TABLE_NAME: &'static str = {};\n\
             \x20   fn from_value(value: u64) -> Option<Self> {{\n\
             \x20       {ty}::from_value(value)\n\
             \x20   }}\n\
             \x20   fn name(self) -> &'static str {{\n\
             \x20       {ty}::name(self)\n\
             \x20   }}\n\
             }}\n\n\
             impl core::fmt::Display for {ty} {{\n\
             \x20   fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {{\n\
             \x20       f.write_str(self.name())\n\
             \x20   }}\n\
             }}\n",
            lit(&e.name)
        );
    }
    s
}
