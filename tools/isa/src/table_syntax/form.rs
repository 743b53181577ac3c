//! Reading one form: its template's placeholders become fields and tokens, then the
//! checks (widths, overlaps, fixed bits) and the enum values decode must check.

use super::parser::{LineResult, Parser};
use super::tokens::kind_for;
use super::{pieces_mask, Class, FieldSyn, FormSyn, Kind, Style, Tok};

impl Parser {
    pub(super) fn form_line(&self, ln: usize, name: &str, rest: &str) -> LineResult<FormSyn> {
        let bits = self.word_bits()?;
        let (hex, rest) = rest
            .split_once(char::is_whitespace)
            .ok_or_else(|| format!("bad form line (FORM HEX [noguard|uguard] TEMPLATE): {name}"))?;
        let value = u128::from_str_radix(hex.trim_start_matches("0x"), 16)
            .map_err(|e| format!("{name}: bad fixed bits {hex}: {e}"))?;
        if bits < 128 && value >> bits != 0 {
            return Err(format!("{name}: fixed bits {hex} wider than {bits} bits"));
        }
        let mut rest = rest.trim_start();
        let mut guard = Some(Kind::Pred);
        if let Some(r) = rest.strip_prefix("noguard ") {
            guard = None;
            rest = r.trim_start();
        } else if let Some(r) = rest.strip_prefix("uguard ") {
            guard = Some(Kind::UPred);
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
        guard: Option<Kind>,
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
        if let Some(gkind) = guard {
            let ((glo, glen), nbit) = self
                .header
                .guard
                .ok_or("the table has no `guard` line: say noguard")?;
            fields.push(FieldSyn {
                field: self.field("Guard")?,
                pieces: vec![(glo, glen)],
                width: glen,
                kind: gkind,
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
        if let Some((lo, len)) = self.header.control {
            fields.push(FieldSyn {
                field: self.field("Ctrl")?,
                pieces: vec![(lo, len)],
                width: len,
                kind: Kind::Uint,
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
                s if s.starts_with('m') => Style::MemSuffix(ia as u8, s[1..].to_string()),
                "Q" => Style::NegPredComma(ia as u8),
                "p" => Style::NegPred(ia as u8),
                "u" => Style::URegOffset(ia as u8),
                "s" => Style::MemSigned(ia as u8),
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
                Class::UReg => Style::UReg,
                Class::UPred => Style::UPred,
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
                    Class::UReg => Kind::UReg,
                    Class::UPred => Kind::UPred,
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
    /// 32-bit floats 32 (uniform registers and predicates as their general kinds; a uniform
    /// register may also be a 6-bit field, UR0-URZ, where nvdisasm ignores the two bits
    /// above, as in Ampere's memory operands, REDUX's destination, texture handles and the
    /// `cx[URn]` bindless constant-buffer operand).
    fn check_width(&self, fname: &str, kind: Kind, width: u8) -> LineResult<()> {
        let want = match kind {
            Kind::Flag => 1,
            Kind::Pred | Kind::UPred => 3,
            Kind::Reg | Kind::UReg => 8,
            Kind::F20 | Kind::D20 => 20,
            Kind::F32 => 32,
            _ => return Ok(()),
        };
        if width != want && !(kind == Kind::UReg && width == 6) {
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
            "U" => Style::UReg,
            "UP" => Style::UPred,
            "Q" => Style::PredComma,
            "q" => Style::CommaPredOnly,
            "X" => Style::Hex,
            "S" => Style::SHex,
            "N" => Style::Dec,
            "F" => Style::F20,
            "D" => Style::D20,
            "F32" => Style::F32,
            "F16" => Style::F16,
            "BF16" => Style::Bf16,
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
            "+" => Style::PlusImm,
            "w" => Style::PlusUReg,
            "r" => Style::RegNoRz,
            "D32" => Style::D32,
            _ => {
                if let Some(rest) = s.strip_prefix('#') {
                    Style::Enum(
                        *self
                            .enum_ix
                            .get(rest)
                            .ok_or_else(|| format!("unknown enum {rest}"))?,
                    )
                } else if let Some(rest) = s.strip_prefix('Y') {
                    Style::RegAdd(rest.to_string())
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
}

pub(super) fn single_piece(s: &str, bits: u32) -> LineResult<(u8, u8)> {
    match parse_spec(s, &Style::Hex, bits)? {
        (p, 0) if p.len() == 1 => Ok(p[0]),
        _ => Err(format!("{s}: one piece LO_LEN expected")),
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
        Style::Reg
        | Style::RegComma
        | Style::CommaReg
        | Style::RegPlus(_)
        | Style::RegAdd(_)
        | Style::UReg => 8,
        Style::Pred | Style::PredComma | Style::CommaPredOnly | Style::UPred => 3,
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
