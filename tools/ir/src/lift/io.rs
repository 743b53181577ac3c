//! Stage I/O: ALD, AST, IPA, OUT (EMIT/CUT), PIXLD, ISBERD, the graphics system registers,
//! and the fragment outputs the SPH's omap names (read from registers at EXIT).

use super::{Cx, Result};
use crate::gfx::{GSys, IpaMode, IpaSample};
use crate::ir::{Op, Type, Value};
use crate::shader::Stage;
use dmsh_isa::mods::{self, Sreg};
use dmsh_isa::{Field, Instr, Opcode};

/// Highest attribute byte address the hardware defines (`a[0x3fc]`, front facing).
pub const ATTR_END: u32 = 0x400;

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

/// Why a constant attribute address cannot be translated (None when it can): outside the
/// hardware's attribute space, or a legacy fixed-function slot the translator does not map.
pub fn attr_problem(a: u32) -> Option<&'static str> {
    if a >= ATTR_END || !a.is_multiple_of(4) {
        return Some("is outside the known attribute space a[0..0x400]");
    }
    match a {
        0x000..=0x014 | 0x020..=0x27c | 0x2c0..=0x2e4 | 0x2f0..=0x2fc | 0x3fc => None,
        0x280..=0x2bc => Some("(legacy front/back colour) is not supported"),
        0x300..=0x39c => Some("(fixed-function texture coordinate) is not supported"),
        0x3a0 => Some("(viewport mask) is not supported"),
        _ => Some("is outside the known attribute space"),
    }
}

/// The attribute address `Ra + a` (both ISAs): the constant `a` when Ra is RZ (255), checked
/// against the attribute space; the error says why it cannot be translated.
pub(crate) fn attr_address(cx: &mut Cx, ra: u8, a: u32) -> std::result::Result<Value, String> {
    if ra == 255 {
        if let Some(why) = attr_problem(a) {
            let key = cx.shader_key();
            return Err(format!("shader {key}: attribute a[{a:#x}] {why}"));
        }
        return Ok(cx.c32(a));
    }
    let r = cx.reg(ra);
    let c = cx.c32(a);
    Ok(cx.add(r, c))
}

/// The attribute address `[Ra + Imm]`: a constant when Ra is RZ.
fn attr_addr(cx: &mut Cx, i: &Instr, k: u32) -> Result<Value> {
    let imm = i.get(Field::Imm).unwrap_or(0) as u32;
    let ra = cx.rf(i, Field::Ra);
    attr_address(cx, ra, imm + 4 * k).map_err(|why| cx.unsupported(i, why))
}

/// An interpolated attribute (both ISAs' IPA): attribute address `a`, offset register value
/// `off` (`.OFFSET`), multiplied by `mul` (Maxwell's plain IPA: 1/w) and clamped to [0, 1]
/// under `sat`.
pub(crate) fn interp(
    cx: &mut Cx,
    (mode, sample): (IpaMode, IpaSample),
    a: Value,
    off: Value,
    mul: Option<Value>,
    sat: bool,
) -> Value {
    let zero = cx.c32(0);
    let mut v = cx.emit(Op::Interp(mode, sample), Type::U32, &[a, zero, off]);
    if let Some(m) = mul {
        let m = cx.cast(Type::F32, m);
        let x = cx.cast(Type::F32, v);
        v = cx.emit(Op::FMul(crate::Round::Rn), Type::F32, &[x, m]);
    }
    if sat {
        let x = cx.cast(Type::F32, v);
        let z = cx.cf32(0.0);
        let o = cx.cf32(1.0);
        let lo = cx.bin(Op::FMax, x, z);
        v = cx.bin(Op::FMin, lo, o);
    }
    v
}

/// A geometry-shader `OUT`: emit the vertex and / or end the primitive of vertex stream
/// `stream` (both ISAs).
pub(crate) fn emit_cut(cx: &mut Cx, emit: bool, cut: bool, stream: Value) {
    if emit {
        cx.emit(Op::EmitVertex, Type::Void, &[stream]);
    }
    if cut {
        cx.emit(Op::EndPrimitive, Type::Void, &[stream]);
    }
}

/// Lifts one stage-I/O instruction.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    let io = matches!(
        i.opcode(),
        Opcode::Ald | Opcode::Ast | Opcode::Ipa | Opcode::Out | Opcode::Pixld | Opcode::Isberd
    );
    if io && cx.cfg.gfx.is_none() {
        return Err(cx.unsupported(i, "stage I/O outside a graphics stage"));
    }
    match i.opcode() {
        Opcode::Ald => {
            let n = words(cx, i)?;
            let output = i.flag(Field::O);
            let patch = i.flag(Field::P);
            let vtx = cx.r(i, Field::Rc);
            let rd = cx.rf(i, Field::Rd);
            let mut vals = Vec::new();
            for k in 0..n {
                let a = attr_addr(cx, i, k)?;
                vals.push(cx.emit(Op::AttrLoad { output, patch }, Type::U32, &[a, vtx]));
            }
            for (k, v) in vals.into_iter().enumerate() {
                cx.set_reg(super::tex::regk(rd, k as u8), v);
            }
        }
        Opcode::Ast => {
            let n = words(cx, i)?;
            let patch = i.flag(Field::P);
            let vtx = cx.r(i, Field::Rc);
            let rd = cx.rf(i, Field::Rd);
            for k in 0..n {
                let a = attr_addr(cx, i, k)?;
                let v = cx.reg(super::tex::regk(rd, k as u8));
                cx.emit(Op::AttrStore { patch }, Type::Void, &[a, v, vtx]);
            }
        }
        Opcode::Ipa => {
            use mods::{Ipai, Ipas};
            let mode = match cx.modifier::<Ipai>(i, Field::Interp)? {
                Some(Ipai::Pass) => IpaMode::Pass,
                Some(Ipai::Constant) => IpaMode::Constant,
                Some(Ipai::Sc) => IpaMode::Sc,
                Some(Ipai::Default) | None => IpaMode::Multiply,
            };
            let sample = match cx.modifier::<Ipas>(i, Field::Sample)? {
                Some(Ipas::Centroid) => IpaSample::Centroid,
                Some(Ipas::Offset) => IpaSample::Offset,
                Some(Ipas::Default) | None => IpaSample::Default,
            };
            let a = if i.form_name() == "IPA_IDX" {
                cx.r(i, Field::Ra)
            } else {
                attr_addr(cx, i, 0)?
            };
            let off = cx.r(i, Field::Rc);
            let mul = if mode == IpaMode::Multiply {
                Some(cx.r_f32(i, Field::Rb))
            } else {
                None
            };
            let v = interp(cx, (mode, sample), a, off, mul, i.flag(Field::Sat));
            cx.set_rd(i, v);
        }
        Opcode::Out => {
            use mods::Outm;
            let m = cx.modifier::<Outm>(i, Field::Mode)?;
            // OUT's b operand is the vertex stream.
            let stream = cx.src_b(i)?;
            emit_cut(
                cx,
                matches!(m, Some(Outm::Emit | Outm::EmitThenCut)),
                matches!(m, Some(Outm::Cut | Outm::EmitThenCut)),
                stream,
            );
            let z = cx.c32(0);
            cx.set_rd(i, z);
        }
        Opcode::Isberd => {
            let v = cx.r(i, Field::Ra);
            cx.set_rd(i, v);
        }
        Opcode::Pixld => {
            use mods::Pixldm;
            let s = match cx.modifier::<Pixldm>(i, Field::Mode)? {
                Some(Pixldm::MyIndex) => GSys::SampleId,
                Some(Pixldm::Covmask) => GSys::SampleMaskIn,
                m => {
                    let m = m.map_or("", Pixldm::name);
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
        Opcode::S2r => {
            let name = cx.modifier::<Sreg>(i, Field::Sreg)?.map_or("", Sreg::name);
            let Some(v) = gfx_sreg(cx, name) else {
                return Err(cx.unsupported(i, "system register"));
            };
            cx.set_rd(i, v);
        }
        Opcode::Al2p => {
            // Attribute offset to attribute address: the translation's addresses are the
            // offsets themselves.
            let a = cx.r(i, Field::Ra);
            let k = cx.c32(i.get(Field::Imm).unwrap_or(0) as u32);
            let v = cx.add(a, k);
            cx.set_rd(i, v);
            if let Some(p) = i.pred(Field::Pd) {
                let f = cx.cbool(false);
                cx.set_pred(p.0, f);
            }
        }
        Opcode::Sam | Opcode::Ram => {}
        Opcode::Fswzadd => {
            let a = cx.r(i, Field::Ra);
            let b = cx.r(i, Field::Rb);
            let swz = i.raw(Field::Mode).unwrap_or(0) as u32;
            let r = super::float::fswzadd(cx, a, b, swz, cx.rnd(i)?);
            cx.set_rd(i, r);
        }
        _ => return Err(cx.unsupported(i, "not a stage-I/O instruction")),
    }
    Ok(())
}

/// Whether an S2R reads a graphics system register this module handles.
pub fn is_gfx_sreg(i: &Instr) -> bool {
    i.modifier_as::<Sreg>(Field::Sreg)
        .is_some_and(|s| is_gfx_sreg_name(s.name()))
}

/// Whether a system register (named as nvdisasm prints it) is a graphics one [`gfx_sreg`]
/// reads; the same for both instruction sets.
pub fn is_gfx_sreg_name(name: &str) -> bool {
    matches!(
        name,
        "SR_INVOCATION_ID"
            | "SR_INVOCATION_INFO"
            | "SR_Y_DIRECTION"
            | "SR_THREAD_KILL"
            | "SR_PRIM_TYPE"
    )
}

/// The value of a graphics system register named as nvdisasm prints it (`None`: not one).
pub fn gfx_sreg(cx: &mut Cx, name: &str) -> Option<Value> {
    Some(match name {
        "SR_INVOCATION_ID" => cx.emit(Op::GfxSys(GSys::InvocationId), Type::U32, &[]),
        // The translator reports 0 (vertex handles are plain indices, see ISBERD): a
        // constant, so the vertex indices computed from it fold to constants too.
        "SR_INVOCATION_INFO" => cx.c32(0),
        "SR_Y_DIRECTION" => cx.c32(0x3f80_0000),
        "SR_THREAD_KILL" => cx.emit(Op::GfxSys(GSys::HelperInvocation), Type::U32, &[]),
        "SR_PRIM_TYPE" => cx.emit(Op::GfxSys(GSys::PrimType), Type::U32, &[]),
        _ => return None,
    })
}

/// Fragment stage at EXIT: the colour targets, sample mask and depth the SPH's omap names,
/// read from the registers the hardware takes them from (components compacted in target
/// order; sample mask in the next register, depth in the one after).
pub fn frag_outputs(cx: &mut Cx) {
    let Some(g) = cx.cfg.gfx.as_ref() else {
        return;
    };
    if cx.cfg.stage != Stage::Fragment {
        return;
    }
    let sph = g.sph.clone();
    let mut reg = 0u8;
    for t in 0..8u8 {
        let mask = (sph.omap_target >> (4 * t)) & 0xf;
        for c in 0..4u8 {
            if mask & (1 << c) != 0 {
                let v = cx.reg(reg);
                cx.emit(Op::FragOut(4 * t + c), Type::Void, &[v]);
                reg += 1;
            }
        }
    }
    if sph.omap_sample_mask {
        let v = cx.reg(reg);
        cx.emit(Op::FragOut(32), Type::Void, &[v]);
    }
    if sph.omap_depth {
        let v = cx.reg(reg + 1);
        cx.emit(Op::FragOut(33), Type::Void, &[v]);
    }
}
