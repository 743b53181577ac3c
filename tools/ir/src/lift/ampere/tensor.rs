//! Ampere tensor instructions: `HMMA` and `IMMA` (warp matrix multiply-accumulate, PTX's
//! `mma.sync.aligned`), `LDSM` (`ldmatrix`) and `MOVM` (`movmatrix`). Fragment layouts: PTX
//! ISA "Matrix Fragments for mma.m16n8k16 / m16n8k8 / m16n8k4 / m16n8k32 / m8n8k16",
//! "ldmatrix" and "movmatrix"; docs/ir.md "Tensor instructions".
//!
//! * `HMMA` / `IMMA` become one [`Op::Mma`] over the lane's A, B and C registers (`Ra`,
//!   `Rb`, `Rc` and the registers after them) whose D registers (`Rd`…) are read with
//!   `Extract`; the pipeline lowers it to shuffles and per-lane arithmetic (dmsh-ir's
//!   `tensor` pass) or emits a cooperative-matrix operation. Shapes: HMMA `.16816` / `.1688`
//!   with f16 or bf16 inputs and f32 or (f16 inputs) f16 accumulators, `.1688` / `.1684` with
//!   tf32 inputs; IMMA `.16832` / `.16816` / `.8816` with u8 / s8 inputs (`.SAT`). The 4-bit
//!   IMMA shapes (`.8832`, `.16864`) and the sparse `.SP` forms are reported as unsupported.
//! * `LDSM.16.M88{,.2,.4}` loads 1, 2 or 4 8×8 matrices of 16-bit elements from shared
//!   memory: lanes 8m..8m+7 hold the addresses of matrix m's rows, and lane l receives row
//!   l/4, elements 2(l%4) and 2(l%4)+1 (low half first). `.MT88` loads the transpose: lane l
//!   receives elements (2(l%4), l/4) and (2(l%4)+1, l/4). Each lane gathers the row
//!   addresses with `Shfl(Idx)` and loads its own elements.
//! * `MOVM.16.MT88` transposes an 8×8 matrix of 16-bit elements held in that fragment
//!   layout: lane l receives M\[2(l%4)\]\[l/4\] and M\[2(l%4)+1\]\[l/4\], which lanes 8(l%4)
//!   + (l/4)/2 and 8(l%4) + 4 + (l/4)/2 hold in half (l/4)%2 (two shuffles).

use super::super::{Cx, Result};
use crate::ir::{Mma, MmaType, Op, ShflMode, Space, Sys, Type, Value, Width};
use dmsh_isa::ampere::mods::{
    Hmmadst, Hmmashape, Hmmasrc, Immala, Immalb, Immashape, Immaty, Ldsmcnt, Ldsmlay, Ldsmsz,
    Movmlay,
};
use dmsh_isa::ampere::{Instr, Opcode};
use dmsh_isa::Field;

/// Lifts one instruction of the family.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    match i.opcode() {
        Opcode::Hmma => hmma(cx, i),
        Opcode::Imma => imma(cx, i),
        Opcode::Ldsm => ldsm(cx, i),
        Opcode::Movm => movm(cx, i),
        _ => Err(cx.unsupported(i, "no semantics for this instruction")),
    }
}

/// `n` consecutive registers from `r` (RZ reads zeros).
fn regs(cx: &mut Cx, r: u8, n: u32) -> Vec<Value> {
    (0..n)
        .map(|k| {
            if r == 255 {
                cx.c32(0)
            } else {
                cx.reg(r.saturating_add(k as u8).min(254))
            }
        })
        .collect()
}

/// Emits the `Mma` and writes its D registers.
fn mma(cx: &mut Cx, i: &Instr, m: Mma) -> Result<()> {
    let [na, nb, nc] = m.regs();
    let (ra, rb, rc, rd) = (
        cx.rf(i, Field::Ra),
        cx.rf(i, Field::Rb),
        cx.rf(i, Field::Rc),
        cx.rf(i, Field::Rd),
    );
    if [ra, rb, rc, rd]
        .iter()
        .zip([na, nb, nc, nc])
        .any(|(&r, n)| r != 255 && r as u32 + n > 255)
    {
        return Err(cx.unsupported(i, "register group past R254"));
    }
    let a = regs(cx, ra, na);
    let b = regs(cx, rb, nb);
    let c = regs(cx, rc, nc);
    let ta = cx.emit(Op::Tuple, Type::Void, &a);
    let tb = cx.emit(Op::Tuple, Type::Void, &b);
    let tc = cx.emit(Op::Tuple, Type::Void, &c);
    let v = cx.emit(Op::Mma(m), Type::Void, &[ta, tb, tc]);
    cx.f.tensor_ops = true;
    let d: Vec<Value> = (0..nc as u8)
        .map(|k| cx.emit(Op::Extract(k), Type::U32, &[v]))
        .collect();
    if rd != 255 {
        for (k, x) in d.into_iter().enumerate() {
            cx.set_reg(rd + k as u8, x);
        }
    }
    Ok(())
}

/// `HMMA.{16816,1688,1684}.{F32,F16}{,.BF16,.TF32}`.
fn hmma(cx: &mut Cx, i: &Instr) -> Result<()> {
    let src = match cx.modifier::<Hmmasrc>(i, Field::SrcType)? {
        Some(Hmmasrc::Bf16) => MmaType::Bf16,
        Some(Hmmasrc::Tf32) => MmaType::Tf32,
        Some(Hmmasrc::Default) | None => MmaType::F16,
    };
    let acc = match cx.modifier::<Hmmadst>(i, Field::DstType)? {
        Some(Hmmadst::F16) => MmaType::F16,
        Some(Hmmadst::F32) | None => MmaType::F32,
    };
    let shape = cx.modifier::<Hmmashape>(i, Field::Mode)?;
    let k = match (shape, src) {
        (Some(Hmmashape::N16816), MmaType::F16 | MmaType::Bf16) => 16,
        (Some(Hmmashape::N1688), _) => 8,
        (Some(Hmmashape::N1684), MmaType::Tf32) => 4,
        (s, _) => {
            let s = s.map_or("", Hmmashape::name);
            return Err(cx.unsupported(i, format!("HMMA shape {s} with {src:?} inputs")));
        }
    };
    if acc == MmaType::F16 && src != MmaType::F16 {
        return Err(cx.unsupported(i, "an f16 accumulator with bf16 or tf32 inputs"));
    }
    let m = Mma {
        m: 16,
        n: 8,
        k,
        a: src,
        b: src,
        acc,
        sat: false,
        neg_a: i.flag(Field::NegA),
        neg_b: i.flag(Field::NegB),
    };
    mma(cx, i, m)
}

/// `IMMA.{16832,16816,8816}.{U8,S8}.{U8,S8}{.SAT}` (row-major A, column-major B).
fn imma(cx: &mut Cx, i: &Instr) -> Result<()> {
    let ty = |t: Option<Immaty>| match t {
        Some(Immaty::U8) => Some(MmaType::U8),
        Some(Immaty::S8) => Some(MmaType::S8),
        _ => None,
    };
    let (Some(a), Some(b)) = (
        ty(cx.modifier::<Immaty>(i, Field::SrcType)?),
        ty(cx.modifier::<Immaty>(i, Field::SrcTypeB)?),
    ) else {
        return Err(cx.unsupported(i, "IMMA of 4-bit or reserved element types"));
    };
    if cx.modifier::<Immala>(i, Field::LayoutA)? != Some(Immala::Row)
        || cx.modifier::<Immalb>(i, Field::LayoutB)? != Some(Immalb::Col)
    {
        return Err(cx.unsupported(i, "IMMA operand layout other than .ROW / .COL"));
    }
    let (m, k) = match cx.modifier::<Immashape>(i, Field::Mode)? {
        Some(Immashape::N16832) => (16, 32),
        Some(Immashape::N16816) => (16, 16),
        Some(Immashape::N8816) => (8, 16),
        s => {
            let s = s.map_or("", Immashape::name);
            return Err(cx.unsupported(i, format!("IMMA shape {s} with 8-bit inputs")));
        }
    };
    let mm = Mma {
        m,
        n: 8,
        k,
        a,
        b,
        acc: MmaType::S32,
        sat: i.flag(Field::Sat),
        neg_a: false,
        neg_b: false,
    };
    mma(cx, i, mm)
}

/// `Shfl(Idx)` of `v` from lane `src` (no segments).
fn from_lane(cx: &mut Cx, v: Value, src: Value) -> Value {
    let c = cx.c32(0x1f);
    cx.emit(Op::Shfl(ShflMode::Idx), Type::U32, &[v, src, c])
}

/// `LDSM.16.{M88,MT88}{,.2,.4}`.
fn ldsm(cx: &mut Cx, i: &Instr) -> Result<()> {
    if cx.modifier::<Ldsmsz>(i, Field::Size)? != Some(Ldsmsz::N16) {
        return Err(cx.unsupported(i, "LDSM element size other than .16"));
    }
    let trans = match cx.modifier::<Ldsmlay>(i, Field::Mode)? {
        Some(Ldsmlay::M88) => false,
        Some(Ldsmlay::Mt88) => true,
        m => {
            let m = m.map_or("", Ldsmlay::name);
            return Err(cx.unsupported(i, format!("LDSM layout {m}")));
        }
    };
    let n = match cx.modifier::<Ldsmcnt>(i, Field::Count)? {
        Some(Ldsmcnt::Default) | None => 1,
        Some(Ldsmcnt::N2) => 2,
        Some(Ldsmcnt::N4) => 4,
        Some(Ldsmcnt::Invalid3) => return Err(cx.unsupported(i, "LDSM count .INVALID3")),
    };
    let rd = cx.rf(i, Field::Rd);
    if rd != 255 && rd as u32 + n > 255 {
        return Err(cx.unsupported(i, "register group past R254"));
    }
    let addr = super::mem::address(cx, i, Space::Shared)?;
    let lane = cx.sys(Sys::LaneId);
    let g = cx.shr_c(lane, 2);
    let t3 = cx.c32(3);
    let t = cx.bin(Op::And, lane, t3);
    // The row addresses first (one exchange in the workgroup warp emulation), then the loads.
    let mut rows = Vec::new();
    for m in 0..n {
        if trans {
            let t2 = cx.shl_c(t, 1);
            let base = cx.c32(8 * m);
            let r0 = cx.add(base, t2);
            let one = cx.c32(1);
            let r1 = cx.add(r0, one);
            rows.push(from_lane(cx, addr, r0));
            rows.push(from_lane(cx, addr, r1));
        } else {
            let base = cx.c32(8 * m);
            let r = cx.add(base, g);
            rows.push(from_lane(cx, addr, r));
        }
    }
    for m in 0..n as usize {
        let word = if trans {
            let col = cx.shl_c(g, 1);
            let a0 = cx.add(rows[2 * m], col);
            let a1 = cx.add(rows[2 * m + 1], col);
            let lo = cx.emit(Op::Load(Space::Shared, Width::U16), Type::U32, &[a0]);
            let hi = cx.emit(Op::Load(Space::Shared, Width::U16), Type::U32, &[a1]);
            let hi = cx.shl_c(hi, 16);
            cx.or(lo, hi)
        } else {
            let off = cx.shl_c(t, 2);
            let a = cx.add(rows[m], off);
            cx.emit(Op::Load(Space::Shared, Width::B32), Type::U32, &[a])
        };
        if rd != 255 {
            cx.set_reg(rd + m as u8, word);
        }
    }
    Ok(())
}

/// `MOVM.16.MT88`.
fn movm(cx: &mut Cx, i: &Instr) -> Result<()> {
    if cx.modifier::<Ldsmsz>(i, Field::Size)? != Some(Ldsmsz::N16) {
        return Err(cx.unsupported(i, "MOVM element size other than .16"));
    }
    match cx.modifier::<Movmlay>(i, Field::Mode)? {
        Some(Movmlay::Mt88) => {}
        m => {
            let m = m.map_or("", Movmlay::name);
            return Err(cx.unsupported(i, format!("MOVM layout {m}")));
        }
    }
    let a = cx.r(i, Field::Ra);
    let lane = cx.sys(Sys::LaneId);
    let g = cx.shr_c(lane, 2);
    let t3 = cx.c32(3);
    let t = cx.bin(Op::And, lane, t3);
    let t8 = cx.shl_c(t, 3);
    let gh = cx.shr_c(g, 1);
    let src0 = cx.add(t8, gh);
    let four = cx.c32(4);
    let src1 = cx.add(src0, four);
    let x0 = from_lane(cx, a, src0);
    let x1 = from_lane(cx, a, src1);
    // Half (l/4) % 2 of each.
    let one = cx.c32(1);
    let odd = cx.bin(Op::And, g, one);
    let sh = cx.shl_c(odd, 4);
    let lo = cx.bin(Op::LShr, x0, sh);
    let lo = cx.bits(lo, 0, 16);
    let hi = cx.bin(Op::LShr, x1, sh);
    let hi = cx.shl_c(hi, 16);
    let v = cx.or(lo, hi);
    cx.set_rd(i, v);
    Ok(())
}
