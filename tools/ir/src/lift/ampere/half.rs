//! Ampere packed half precision: HADD2, HMUL2, HFMA2, HSET2, HSETP2. Lanes are Maxwell's
//! ([`crate::lift::half`]): computed in f32 (exact before the one rounding to f16) or as an
//! f16 FMA; `.F32` forms give the low lane's result as an f32 instead. Immediates are two
//! f16 (`Imm` the high lane, `Imm2` the low one: the 32 bits at 32..63 as a register holds
//! them).

use super::super::float::{fcmp, ftz, saturate};
use super::super::half::{lane_bits, split_lanes, Swz};
use super::super::{Cx, Result};
use super::float::{bop, fcmp_of, fmz_modes};
use super::operand::{src, Src};
use crate::ir::{Op, Round, Type, Value};
use dmsh_isa::ampere::mods::{Hfmaty, Hswz, Hswz3};
use dmsh_isa::ampere::{Instr, Opcode};
use dmsh_isa::Field;

/// The swizzle of a half operand's selector field (`mods::Hswz`, or `mods::Hswz3` for
/// HFMA2's B); lanes as they are when the operand has none.
fn swz(cx: &Cx, i: &Instr, f: Field) -> Result<Swz> {
    if let Some(s) = i.modifier_as::<Hswz>(f) {
        return Ok(match s {
            Hswz::Default => Swz::H1H0,
            Hswz::F32 => Swz::F32,
            Hswz::H0H0 => Swz::H0H0,
            Hswz::H1H1 => Swz::H1H1,
        });
    }
    if let Some(s) = i.modifier_as::<Hswz3>(f) {
        return Ok(match s {
            Hswz3::Default => Swz::H1H0,
            Hswz3::F32 => Swz::F32,
            Hswz3::H0H0 => Swz::H0H0,
            Hswz3::H1H1 => Swz::H1H1,
            s => return Err(cx.unsupported(i, format!("half swizzle {s}"))),
        });
    }
    if i.modifier(f).is_some() {
        return Err(cx.unsupported(i, "half selector"));
    }
    Ok(Swz::H1H0)
}

/// Source `k` (0 A, 1 B, 2 C) as two f32 lanes (low, high), with its selector, FTZ, |x| and
/// −x.
fn lanes(cx: &mut Cx, i: &Instr, k: usize, flush: bool) -> Result<(Value, Value)> {
    let (neg, abs, sel) = [
        (Field::NegA, Field::AbsA, Field::SelA),
        (Field::NegB, Field::AbsB, Field::SelB),
        (Field::NegC, Field::AbsC, Field::SelC),
    ][k.min(2)];
    let v = match src(i, k) {
        Src::Imm(_) if i.has(Field::Imm2) => {
            let hi = i.raw(Field::Imm).unwrap_or(0) as u32 & 0xffff;
            let lo = i.raw(Field::Imm2).unwrap_or(0) as u32 & 0xffff;
            cx.c32(lo | (hi << 16))
        }
        _ => cx.asrc(i, k)?,
    };
    let s = swz(cx, i, sel)?;
    Ok(split_lanes(cx, v, s, i.flag(neg), i.flag(abs), flush))
}

/// Whether the form writes the low lane's result as one f32 (`.F32`).
fn f32_out(cx: &Cx, i: &Instr) -> Result<bool> {
    if i.form_name().contains("_F32") {
        return Ok(true);
    }
    match cx.modifier::<Hfmaty>(i, Field::Mode2)? {
        Some(Hfmaty::F32) => Ok(true),
        Some(Hfmaty::Bf16V2) => Err(cx.unsupported(i, "bf16x2 operands")),
        Some(Hfmaty::Default) => Ok(false),
        None => Ok(i.flag(Field::DstType)),
    }
}

/// `.RELU` (HFMA2's `_RELU` forms): negative results become +0, NaN the canonical NaN. The
/// predicate those forms print must be PT (its meaning is not known).
fn relu(cx: &mut Cx, i: &Instr, x: Value, f32_nan: bool) -> Result<Value> {
    let p = i.pred(Field::Pc).map_or(7, |p| p.0);
    if p != 7 || i.flag(Field::NotC) {
        return Err(cx.unsupported(i, "HFMA2.RELU with a predicate operand"));
    }
    let x = if cx.f.ty(x) == Type::F16 {
        cx.emit(Op::FConvert(Round::Rn), Type::F32, &[x])
    } else {
        x
    };
    let z = cx.cf32(0.0);
    let neg = cx.cmp(Op::FOLt, x, z);
    let r = cx.sel(neg, z, x);
    let nan = cx.emit(Op::IsNan, Type::Bool, &[x]);
    // f16's canonical NaN 0x7fff reads back as this f32 (0x7fff_e000).
    let q = if f32_nan { 0x7fff_ffff } else { 0x7fff_e000 };
    let q = cx.emit(Op::Const(q), Type::F32, &[]);
    Ok(cx.sel(nan, q, r))
}

/// Writes the lanes' results: both as f16 (low | high << 16), or the low one as an f32.
fn write(cx: &mut Cx, i: &Instr, lo: Value, hi: Value, flush: bool, f32: bool) {
    let sat = i.flag(Field::Sat);
    if f32 {
        let mut r = if cx.f.ty(lo) == Type::F32 {
            lo
        } else {
            cx.emit(Op::FConvert(Round::Rn), Type::F32, &[lo])
        };
        if sat {
            r = saturate(cx, r);
        }
        if flush {
            r = ftz(cx, r);
        }
        cx.set_dst(i, r);
        return;
    }
    let l = lane_bits(cx, lo, sat, flush);
    let h = lane_bits(cx, hi, sat, flush);
    let hs = cx.shl_c(h, 16);
    let r = cx.or(l, hs);
    cx.set_dst(i, r);
}

/// Lifts one packed-half instruction.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    use Opcode as O;
    let op = i.opcode();
    let (fl, fmz) = fmz_modes(cx, i)?;
    if fmz {
        return Err(cx.unsupported(i, "half FMZ"));
    }
    let (al, ah) = lanes(cx, i, 0, fl)?;
    let (bl, bh) = lanes(cx, i, 1, fl)?;
    match op {
        O::Hadd2 | O::Hmul2 => {
            let f32 = f32_out(cx, i)?;
            let o = if op == O::Hadd2 {
                Op::FAdd(Round::Rn)
            } else {
                Op::FMul(Round::Rn)
            };
            let l = cx.emit(o, Type::F32, &[al, bl]);
            let h = cx.emit(o, Type::F32, &[ah, bh]);
            write(cx, i, l, h, fl, f32);
        }
        O::Hfma2 => {
            let f32 = f32_out(cx, i)?;
            let (cl, ch) = lanes(cx, i, 2, fl)?;
            let is_relu = i.form_name().contains("RELU");
            let mut out = [Value::NONE; 2];
            for (slot, (x, y, z)) in out.iter_mut().zip([(al, bl, cl), (ah, bh, ch)]) {
                let r = if f32 {
                    cx.emit(Op::FFma(Round::Rn), Type::F32, &[x, y, z])
                } else {
                    super::super::half::fma16(cx, x, y, z)
                };
                *slot = if is_relu { relu(cx, i, r, f32)? } else { r };
            }
            write(cx, i, out[0], out[1], fl, f32);
        }
        O::Hset2 | O::Hsetp2 => {
            let c = fcmp_of(cx, i)?;
            let tl = fcmp(cx, c, al, bl);
            let th = fcmp(cx, c, ah, bh);
            let pc = cx.apred(i, Field::Pc, Field::NotC);
            if op == O::Hsetp2 {
                let (t1, t2) = if i.flag(Field::HAnd) {
                    let t = cx.and(tl, th);
                    let nt = cx.not(t);
                    (t, nt)
                } else {
                    (tl, th)
                };
                let v = bop(cx, i, t1, pc)?;
                cx.set_apred(i, Field::Pd, v);
                let v2 = bop(cx, i, t2, pc)?;
                cx.set_apred(i, Field::Pd2, v2);
            } else {
                let one = if i.flag(Field::Bf) { 0x3c00 } else { 0xffff };
                let vl = bop(cx, i, tl, pc)?;
                let vh = bop(cx, i, th, pc)?;
                let o = cx.c32(one);
                let z = cx.c32(0);
                let l = cx.sel(vl, o, z);
                let h = cx.sel(vh, o, z);
                let hs = cx.shl_c(h, 16);
                let r = cx.or(l, hs);
                cx.set_dst(i, r);
            }
        }
        _ => return Err(cx.unsupported(i, "not a packed-half instruction")),
    }
    Ok(())
}
