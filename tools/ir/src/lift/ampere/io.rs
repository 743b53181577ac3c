//! Ampere stage I/O: ALD, AST, IPA, OUT, ISBERD, PIXLD. The attribute space and the IR
//! operations are Maxwell's ([`crate::lift::io`]: the attribute address check, the
//! interpolation, emit / cut are shared value-level functions); only the operand places
//! differ (tools/isa/src/ampere/mem.tbl): ALD's vertex register is `Rb`, AST's value
//! registers start at `Rb` and its vertex register is `Rc`, the `.P` forms with an index
//! register take an 11-bit signed offset, IPA's `.OFFSET` register is `Rb`. Ampere's IPA has no 1/w operand: NAK multiplies by 1/w itself.

use super::super::{Cx, Result};
use crate::gfx::{GSys, IpaMode, IpaSample};
use crate::ir::{Op, Type, Value};
use crate::lift::io::{attr_address, emit_cut, interp};
use dmsh_isa::ampere::{mods, Instr, Opcode};
use dmsh_isa::Field;

/// The words an ALD/AST moves (`Size`, `mods::Aldsz`).
fn words(cx: &Cx, i: &Instr) -> Result<u32> {
    use mods::Aldsz;
    Ok(match cx.modifier::<Aldsz>(i, Field::Size)? {
        Some(Aldsz::N64) => 2,
        Some(Aldsz::N96) => 3,
        Some(Aldsz::N128) => 4,
        Some(Aldsz::Default) | None => 1,
    })
}

/// The attribute address of word `k` of an ALD/AST: `a[Imm]`, or `a[Ra + Imm]` (11 bits
/// signed) for the `.P` forms with an index register (`ALD_P`, `AST_P`).
fn attr(cx: &mut Cx, i: &Instr, k: u32) -> Result<Value> {
    let raw = i.get(Field::Imm).unwrap_or(0) as u32;
    let indexed = matches!(i.form_name(), "ALD_P" | "AST_P");
    let (ra, imm) = if indexed {
        // Sign-extend the 11-bit offset.
        (
            cx.rf(i, Field::Ra),
            (((raw & 0x7ff) << 21) as i32 >> 21) as u32,
        )
    } else {
        (255, raw)
    };
    attr_address(cx, ra, imm.wrapping_add(4 * k)).map_err(|why| cx.unsupported(i, why))
}

/// Whether an ALD/AST form addresses patch attributes (`.P`).
fn patch(i: &Instr) -> bool {
    i.form_name().contains("_P")
}

/// Lifts one stage-I/O instruction.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    if cx.cfg.gfx.is_none() {
        return Err(cx.unsupported(i, "stage I/O outside a graphics stage"));
    }
    let z = cx.c32(0);
    match i.opcode() {
        Opcode::Ald => {
            let n = words(cx, i)?;
            let output = i.flag(Field::O);
            let patch = patch(i);
            // ALD.P has no vertex register.
            let vtx = if patch { z } else { cx.r(i, Field::Rb) };
            let rd = cx.rf(i, Field::Rd);
            let mut vals = Vec::new();
            for k in 0..n {
                let a = attr(cx, i, k)?;
                vals.push(cx.emit(Op::AttrLoad { output, patch }, Type::U32, &[a, vtx]));
            }
            for (k, v) in vals.into_iter().enumerate() {
                cx.set_reg(crate::lift::tex::regk(rd, k as u8), v);
            }
        }
        Opcode::Ast => {
            let n = words(cx, i)?;
            let patch = patch(i);
            let vtx = if i.form_name() == "AST_P" {
                z
            } else {
                cx.r(i, Field::Rc)
            };
            let rb = cx.rf(i, Field::Rb);
            for k in 0..n {
                let a = attr(cx, i, k)?;
                let v = match crate::lift::tex::regk(rb, k as u8) {
                    255 => z,
                    r => cx.reg(r),
                };
                cx.emit(Op::AttrStore { patch }, Type::Void, &[a, v, vtx]);
            }
        }
        Opcode::Ipa => {
            use mods::Ipafreq;
            let mode = match cx.modifier::<Ipafreq>(i, Field::Interp)? {
                Some(Ipafreq::Pass) | None => IpaMode::Pass,
                Some(Ipafreq::Constant) => IpaMode::Constant,
                Some(Ipafreq::State) => IpaMode::Sc,
                Some(m) => return Err(cx.unsupported(i, format!("IPA{}", m.name()))),
            };
            let offset = i.form_name() == "IPA_OFFSET";
            let sample = if offset {
                IpaSample::Offset
            } else if i.flag(Field::Sample) {
                IpaSample::Centroid
            } else {
                IpaSample::Default
            };
            // The field holds a word index; the decoder scales it to the byte address.
            let byte = i.get(Field::Imm).unwrap_or(0) as u32;
            let a = attr_address(cx, 255, byte).map_err(|why| cx.unsupported(i, why))?;
            let off = if offset { cx.r(i, Field::Rb) } else { z };
            let v = interp(cx, (mode, sample), a, off, None, false);
            cx.set_rd(i, v);
            // The predicate destination (whether the attribute was written): always.
            if let Some(p) = i.pred(Field::Pd) {
                let t = cx.cbool(true);
                cx.set_pred(p.0, t);
            }
        }
        Opcode::Out => {
            let (emit, cut) = match i.form_name() {
                "OUT_CUT" => (false, true),
                "OUT_FINAL" => (false, false),
                _ => match cx.modifier::<mods::Outk>(i, Field::Mode)? {
                    Some(mods::Outk::Emit) => (true, false),
                    Some(mods::Outk::EmitThenCut) => (true, true),
                    None => (false, false),
                },
            };
            // OUT's Rb is the vertex stream (OUT.CUT's field is not a register operand: the
            // cut applies to stream 0, the one rasterized).
            let stream = match i.form_name() {
                "OUT" => cx.r(i, Field::Rb),
                _ => cx.c32(0),
            };
            emit_cut(cx, emit, cut, stream);
            // The output handle the next OUT takes: vertex handles are plain indices.
            if i.reg(Field::Rd).is_some() {
                cx.set_rd(i, z);
            }
        }
        Opcode::Isberd => {
            // Vertex handles are the vertex indices themselves (the AttrLoad vertex operand).
            let ra = cx.r(i, Field::Ra);
            let imm = cx.c32(i.get(Field::Imm).unwrap_or(0) as u32);
            let v = cx.add(ra, imm);
            cx.set_rd(i, v);
        }
        Opcode::Pixld => {
            use mods::Pixldv;
            let s = match cx.modifier::<Pixldv>(i, Field::Mode)? {
                Some(Pixldv::MyIndex) => GSys::SampleId,
                Some(Pixldv::Covmask) => GSys::SampleMaskIn,
                m => {
                    let m = m.map_or("", Pixldv::name);
                    return Err(cx.unsupported(i, format!("PIXLD{m}")));
                }
            };
            let v = cx.emit(Op::GfxSys(s), Type::U32, &[]);
            cx.set_rd(i, v);
            if let Some(p) = i.pred(Field::Pd) {
                let t = cx.cbool(true);
                cx.set_pred(p.0, t);
            }
        }
        _ => return Err(cx.unsupported(i, "not a stage-I/O instruction")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use dmsh_isa::ampere::decode;
    use dmsh_isa::Field;

    /// Encodings from nvdisasm's listings of the NAK corpus (tests/corpus/nak, sm86): the
    /// operand fields this module reads hold what nvdisasm prints.
    #[test]
    fn operand_fields_match_the_listings() {
        let line = |file: &str, off: &str| -> u128 {
            let p = format!(
                "{}/../../tests/corpus/nak/{file}.sm86.sass",
                env!("CARGO_MANIFEST_DIR")
            );
            let s = std::fs::read_to_string(p).unwrap();
            let l = s
                .lines()
                .find(|l| l.starts_with(&format!("{off}\t")))
                .unwrap();
            u128::from_str_radix(l.split('\t').nth(1).unwrap(), 16).unwrap()
        };
        // fs_tex2d_basic 0x0020: IPA.PASS R1, a[0x80] — a word index the decoder scales.
        let i = decode(line("fs_tex2d_basic.frag", "0x0020")).unwrap();
        assert_eq!(i.get(Field::Imm), Some(0x80));
        assert_eq!(i.reg(Field::Rd).map(|r| r.0), Some(1));
        // tcs_triangle 0x0070: ALD.96 R4, a[0x80], R2 (vertex register Rb);
        // 0x0080: AST.96 a[0x80], R4, R0 (values from Rb, vertex register Rc).
        let i = decode(line("tcs_triangle.tesc", "0x0070")).unwrap();
        assert_eq!(i.get(Field::Imm), Some(0x80));
        assert_eq!(i.reg(Field::Rb).map(|r| r.0), Some(2));
        let i = decode(line("tcs_triangle.tesc", "0x0080")).unwrap();
        assert_eq!(i.reg(Field::Rb).map(|r| r.0), Some(4));
        assert_eq!(i.reg(Field::Rc).map(|r| r.0), Some(0));
    }
}
