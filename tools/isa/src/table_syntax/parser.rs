//! The line-by-line reader of a table: header, enums, macros; forms are read in
//! [`super::form`].

use super::form::single_piece;
use super::{is_camel, variant_name, EnumDecl, Error, FieldDecl, FormSyn, Style, Syntax, Tok};
use std::collections::HashMap;

pub(super) struct Header {
    isa: Option<(String, u32)>,
    index: Option<(u8, u8)>,
    pub(super) guard: Option<((u8, u8), u8)>,
    pub(super) control: Option<(u8, u8)>,
    pub(super) places: HashMap<usize, (u8, u8)>,
}

pub(super) struct Parser {
    pub(super) fields: Vec<FieldDecl>,
    file: String,
    pub(super) header: Header,
    pub(super) enums: Vec<EnumDecl>,
    pub(super) enum_ix: HashMap<String, u16>,
    defs: Vec<(String, String)>,
    forms: Vec<FormSyn>,
}

/// What is wrong with a line (the caller adds file and line).
pub(super) type LineResult<T> = Result<T, String>;

impl Parser {
    pub(super) fn new(fields: Vec<FieldDecl>, file: &str) -> Parser {
        Parser {
            fields,
            file: file.to_string(),
            header: Header {
                isa: None,
                index: None,
                guard: None,
                control: None,
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

    /// Reads one file of the table (errors name it).
    pub(super) fn read(&mut self, file: &str, src: &str) -> Result<(), Error> {
        self.file = file.to_string();
        for (ln, line) in src.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            self.line(ln + 1, line).map_err(|m| self.error(ln + 1, m))?;
        }
        Ok(())
    }

    pub(super) fn word_bits(&self) -> LineResult<u32> {
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
            "control" => {
                let bits = self.word_bits()?;
                self.header.control = Some(single_piece(rest, bits)?);
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

    pub(super) fn field(&self, name: &str) -> LineResult<usize> {
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
            file: self.file.clone(),
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

    pub(super) fn expand(&self, text: &str) -> LineResult<String> {
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

    pub(super) fn finish(self) -> Result<Syntax, Error> {
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
