//! Ampere's source operands by position. The ALU forms put their second and third sources
//! in several places (a register, an immediate, `c[bank][offset]`, `cx[URn][offset]`, a
//! uniform register; NAK's sm70 encoder calls these the `ALUSrc` kinds); which one a form
//! has is read from its table template, never from the form's name: a register source is
//! followed by its reuse marker (`{~1}` for B, `{~2}` for C; an alias form prints `RZ{~1}`
//! for a fixed zero register), any other source is the form's immediate, constant or
//! uniform-register field.

use super::super::{Cx, Result};
use crate::ir::Value;
use dmsh_isa::ampere::{Ampere, Instr};
use dmsh_isa::engine::Isa;
use dmsh_isa::table_syntax::{Kind, Tok};
use dmsh_isa::Field;
use std::sync::OnceLock;

/// Where one source operand of an instruction comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    /// A register (255: RZ).
    Reg(u8),
    /// A uniform register (63: URZ).
    UReg(u8),
    /// An immediate: the 32-bit pattern it stands for.
    Imm(u32),
    /// `c[bank][offset]` (offset in bytes).
    Cbuf(u8, u32),
    /// `cx[URn][offset]`: a bindless constant buffer, its handle in the pair from `URn`.
    CbufU(u8, u32),
}

/// Where a form's source slot takes its operand from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    /// A register field (`None`: a fixed `RZ` of an alias form).
    Reg(Option<Field>),
    /// A uniform register field.
    UReg(Field),
    /// The `Imm` field.
    Imm,
    /// An immediate fixed by the form (an alias: `IMAD.IADD R0, R1, 0x1, R2`).
    Lit(u32),
    /// `c[CbufBank][CbufOffset]`.
    Cbuf,
    /// `cx[URn][CbufOffset]` (the uniform register field).
    CbufU(Field),
}

/// Per form, its source slots in the order the template prints them.
fn slots(i: &Instr) -> &'static [Slot] {
    static BY_FORM: OnceLock<Vec<Vec<Slot>>> = OnceLock::new();
    let by_form = BY_FORM.get_or_init(|| {
        Ampere::table()
            .forms
            .iter()
            .map(|form| {
                let field_at = |k: usize| match form.template.get(k) {
                    Some(Tok::Field(idx, _)) => Some(&form.fields[*idx as usize]),
                    _ => None,
                };
                let mut out = Vec::new();
                let mut in_cbuf = false;
                for (k, t) in form.template.iter().enumerate() {
                    match t {
                        Tok::Reuse(_) => {
                            // The register the marker follows, past modifier fields
                            // (`{Ra}{Mode@76_2#BSEL}{~0}`); none: a literal RZ.
                            let reg = form.template[..k]
                                .iter()
                                .rev()
                                .map_while(|t| match t {
                                    Tok::Field(idx, _) => Some(&form.fields[*idx as usize]),
                                    _ => None,
                                })
                                .find(|d| d.kind == Kind::Reg)
                                .map(|d| d.field);
                            out.push(Slot::Reg(reg));
                        }
                        Tok::Field(..) => {
                            let Some(d) = field_at(k) else { continue };
                            // A reuse marker follows (past modifier fields): it makes the slot.
                            let next_is_reuse = form.template[k + 1..]
                                .iter()
                                .find(|t| match t {
                                    Tok::Field(idx, _) => {
                                        form.fields[*idx as usize].kind == Kind::Reg
                                    }
                                    _ => true,
                                })
                                .is_some_and(|t| matches!(t, Tok::Reuse(_)));
                            // The next field printed (text in between: `cx[UR4][0x10]`).
                            let next_field = form.template[k + 1..].iter().find_map(|t| match t {
                                Tok::Field(idx, _) => Some(form.fields[*idx as usize].field),
                                _ => None,
                            });
                            match (d.field, d.kind) {
                                (Field::Ra | Field::Rb | Field::Rc, Kind::Reg)
                                    if !next_is_reuse =>
                                {
                                    out.push(Slot::Reg(Some(d.field)))
                                }
                                (
                                    Field::URa | Field::URb | Field::URc | Field::CbufUReg,
                                    Kind::UReg,
                                ) => {
                                    if next_field == Some(Field::CbufOffset) {
                                        out.push(Slot::CbufU(d.field));
                                        in_cbuf = true;
                                    } else {
                                        out.push(Slot::UReg(d.field));
                                    }
                                }
                                (Field::CbufBank, _) => {
                                    out.push(Slot::Cbuf);
                                    in_cbuf = true;
                                }
                                (Field::CbufOffset, _) if in_cbuf => in_cbuf = false,
                                (Field::CbufOffset, _) => out.push(Slot::Cbuf),
                                (Field::Imm, _) => out.push(Slot::Imm),
                                _ => {}
                            }
                        }
                        Tok::Text(t) => {
                            for piece in t.split(',').map(str::trim) {
                                if let Some(h) = piece.strip_prefix("0x") {
                                    if let Ok(v) = u32::from_str_radix(h, 16) {
                                        out.push(Slot::Lit(v));
                                    }
                                }
                            }
                        }
                        _ => {}
                    }
                }
                out
            })
            .collect()
    });
    &by_form[i.form() as usize]
}

/// Source `k` (0 A, 1 B, 2 C) of `i`; RZ past the form's last source.
pub fn src(i: &Instr, k: usize) -> Src {
    let reg = |f: Field| i.reg(f).map_or(255, |r| r.0);
    let ureg = |f: Field| i.ureg(f).map_or(63, |r| r.0);
    let off = || i.get(Field::CbufOffset).unwrap_or(0) as u32;
    match slots(i).get(k) {
        None | Some(Slot::Reg(None)) => Src::Reg(255),
        Some(Slot::Reg(Some(f))) => Src::Reg(reg(*f)),
        Some(Slot::UReg(f)) => Src::UReg(ureg(*f)),
        Some(Slot::Imm) => Src::Imm(i.imm32(Field::Imm).unwrap_or(0)),
        Some(Slot::Lit(v)) => Src::Imm(*v),
        Some(Slot::Cbuf) => Src::Cbuf(i.get(Field::CbufBank).unwrap_or(0) as u8, off()),
        Some(Slot::CbufU(f)) => Src::CbufU(ureg(*f), off()),
    }
}

/// Whether source `k` of `i` is a register (or a fixed RZ).
pub fn is_reg(i: &Instr, k: usize) -> bool {
    matches!(src(i, k), Src::Reg(_))
}

impl Cx<'_> {
    /// The 32-bit value of source `k` of `i` (`extra` bytes further into a constant bank,
    /// or the register `extra / 4` above, for the high word of a 64-bit operand).
    pub fn asrc(&mut self, i: &Instr, k: usize) -> Result<Value> {
        self.asrc_at(i, k, 0)
    }

    /// [`Cx::asrc`] of the word `word` (0 low, 1 high) of a 64-bit source.
    pub fn asrc_at(&mut self, i: &Instr, k: usize, word: u32) -> Result<Value> {
        Ok(match src(i, k) {
            Src::Reg(255) => self.c32(0),
            Src::Reg(r) => self.reg(r.saturating_add(word as u8)),
            Src::UReg(63) => self.c32(0),
            Src::UReg(u) => self.ureg(u.saturating_add(word as u8)),
            // A 64-bit immediate source is the 32-bit pattern in the high word (DADD's
            // immediates: the f64's high 32 bits).
            Src::Imm(v) => self.c32(if word == 0 { v } else { 0 }),
            Src::Cbuf(b, off) => self.const_word(b, off + 4 * word),
            Src::CbufU(u, off) => {
                let o = self.c32(off + 4 * word);
                self.bindless_const(u, o)
            }
        })
    }

    /// Source `k` of `i` as a 64-bit value (a register pair, a uniform pair, two constant
    /// words; an immediate is the high word of the pattern, as for DADD/DMUL/DFMA).
    pub fn asrc64(&mut self, i: &Instr, k: usize) -> Result<Value> {
        if let Src::Imm(v) = src(i, k) {
            return Ok(self.c64((v as u64) << 32));
        }
        let lo = self.asrc_at(i, k, 0)?;
        let hi = self.asrc_at(i, k, 1)?;
        Ok(self.pack(lo, hi))
    }

    /// Reads a predicate operand `f` with its negation field (`PT` when absent), for forms
    /// whose predicates may be uniform (`UPa`) or not.
    pub fn apred(&mut self, i: &Instr, f: Field, neg: Field) -> Value {
        let ng = i.flag(neg);
        if let Some(p) = i.upred(f) {
            return self.upred(p.0, ng);
        }
        let n = i.pred(f).map(|p| p.0).unwrap_or(7);
        self.pred(n, ng)
    }

    /// Writes the predicate destination `f` (a predicate or a uniform predicate).
    pub fn set_apred(&mut self, i: &Instr, f: Field, v: Value) {
        if let Some(p) = i.upred(f) {
            self.set_upred(p.0, v);
        } else if let Some(p) = i.pred(f) {
            self.set_pred(p.0, v);
        }
    }

    /// Writes the destination `Rd` or `URd` of `i`.
    pub fn set_dst(&mut self, i: &Instr, v: Value) {
        if let Some(u) = i.ureg(Field::URd) {
            self.set_ureg(u.0, v);
        } else {
            self.set_rd(i, v);
        }
    }

    /// Writes a 64-bit result to the destination pair `Rd, Rd+1` (or `URd, URd+1`).
    pub fn set_dst64(&mut self, i: &Instr, v: Value) {
        let v = self.cast(crate::ir::Type::U64, v);
        let lo = self.lo(v);
        let hi = self.hi(v);
        if let Some(u) = i.ureg(Field::URd) {
            if u.0 < 63 {
                self.set_ureg(u.0, lo);
                self.set_ureg(u.0 + 1, hi);
            }
        } else {
            let n = self.rf(i, Field::Rd);
            if n != 255 {
                self.set_reg(n, lo);
                self.set_reg(n.saturating_add(1), hi);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! The operand model against nvdisasm: for every ALU instruction of the sm86 listings
    //! under tests/corpus, the k-th source [`src`] names is the k-th source nvdisasm prints.

    #[allow(unused_imports)]
    use super::slots;
    use super::{src, Src};
    use dmsh_isa::ampere;
    use std::path::{Path, PathBuf};

    fn listings(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                listings(&p, out);
            } else if p.to_string_lossy().ends_with(".sm86.sass") {
                out.push(p);
            }
        }
    }

    /// The register, uniform register, constant or immediate an operand text names.
    fn printed(t: &str) -> String {
        let t = t.trim_start_matches(['-', '~', '!', '|']);
        let t = t.split(".reuse").next().unwrap_or(t);
        let t = t.trim_end_matches('|');
        if t.starts_with("c[") || t.starts_with("cx[") {
            return t.to_string();
        }
        let reg = |p: &str| {
            t.strip_prefix(p).and_then(|r| {
                let n: String = r
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == 'Z')
                    .collect();
                (!n.is_empty()).then(|| format!("{p}{n}"))
            })
        };
        reg("UR")
            .or_else(|| reg("R"))
            .unwrap_or_else(|| "imm".into())
    }

    fn ours(s: Src) -> String {
        match s {
            Src::Reg(255) => "RZ".into(),
            Src::Reg(n) => format!("R{n}"),
            Src::UReg(63) => "URZ".into(),
            Src::UReg(n) => format!("UR{n}"),
            Src::Imm(_) => "imm".into(),
            Src::Cbuf(b, o) => format!("c[{b:#x}][{o:#x}]"),
            Src::CbufU(u, o) => format!("cx[UR{u}][{o:#x}]"),
        }
    }

    /// Mnemonics whose operands are: destination(s), then sources, then trailing
    /// predicates and fixed immediates (LUTs, shifts).
    const ALU: &[&str] = &[
        "IMAD", "IADD3", "LOP3", "SEL", "SHF", "PRMT", "ISETP", "IMNMX", "LEA", "MOV", "IABS",
        "POPC", "BREV", "SGXT", "BMSK", "VABSDIFF", "IDP", "FADD", "FMUL", "FFMA", "FSEL", "FMNMX",
        "FSETP", "DADD", "DMUL", "DFMA", "DSETP", "UIADD3", "ULOP3", "USEL", "USHF", "UIMAD",
        "UISETP", "UMOV", "ULEA", "UPRMT", "UFLO", "UPOPC", "UBREV", "USGXT", "UBMSK",
    ];

    #[test]
    fn sources_are_what_nvdisasm_prints() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
        let mut files = Vec::new();
        listings(&root, &mut files);
        assert!(
            !files.is_empty(),
            "no sm86 listings under {}",
            root.display()
        );
        let (mut checked, mut bad) = (0usize, Vec::new());
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            for line in text.lines().filter(|l| !l.starts_with('#')) {
                let cols: Vec<&str> = line.split('\t').collect();
                let (Some(hex), Some(sass)) = (cols.get(1), cols.get(2)) else {
                    continue;
                };
                let Ok(w) = u128::from_str_radix(hex, 16) else {
                    continue;
                };
                let Ok(i) = ampere::decode(w) else { continue };
                let body = match sass.split_once(' ') {
                    Some((g, b)) if g.starts_with('@') => b,
                    _ => sass,
                };
                let Some((mn, ops)) = body.split_once(' ') else {
                    continue;
                };
                let base = mn.split('.').next().unwrap_or(mn);
                if !ALU.contains(&base) {
                    continue;
                }
                let is_pred = |o: &str| {
                    let o = o.trim_start_matches('!');
                    o == "PT" || o == "UPT" || o.starts_with('P') || o.starts_with("UP")
                };
                let mut ops: Vec<&str> = ops.split(", ").collect();
                // Destinations: the first operand, then the predicates after it (or the
                // two predicates of a xSETP).
                while ops.first().is_some_and(|o| is_pred(o)) {
                    ops.remove(0);
                }
                if !ops.is_empty() && !base.ends_with("SETP") {
                    ops.remove(0);
                }
                while ops.first().is_some_and(|o| is_pred(o)) {
                    ops.remove(0);
                }
                let n = super::slots(&i).len();
                for (k, o) in ops.iter().enumerate().take(n.min(3)) {
                    if is_pred(o) && !o.starts_with("PR") {
                        break;
                    }
                    let want = printed(o);
                    let got = ours(src(&i, k));
                    // A fixed immediate after the sources (LUT, shift) ends the list.
                    if want == "imm"
                        && got != "imm"
                        && k > 0
                        && matches!(base, "LOP3" | "ULOP3" | "LEA" | "ULEA")
                    {
                        break;
                    }
                    checked += 1;
                    if want != got {
                        bad.push(format!(
                            "{}: {sass}: source {k}: printed {want}, src {got}",
                            i.form_name()
                        ));
                    }
                }
            }
        }
        assert!(checked > 10_000, "only {checked} operands checked");
        assert!(
            bad.is_empty(),
            "{} of {checked} differ:\n{}",
            bad.len(),
            bad[..bad.len().min(40)].join("\n")
        );
    }
}
