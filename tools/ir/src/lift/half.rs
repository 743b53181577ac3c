//! Packed half precision: HADD2, HMUL2, HFMA2, HSET2, HSETP2. Lanes are computed in f32
//! (exact for add and multiply before the single rounding to f16) or as an f16 FMA.

use super::float::{fcmp, fcmp_of, fmz_modes, saturate};
use super::int::bop;
use super::{Cx, Result};
use crate::ir::{Op, Round, Type, Value};
use dmsh_isa::mods::{Hfmt, Hswz};
use dmsh_isa::{Field, Instr, Opcode};

/// An f16 bit pattern (the low 16 bits of a U32) as its exact f32 value.
pub fn h2f(cx: &mut Cx, bits16: Value) -> Value {
    let h = cx.emit(Op::Bitcast, Type::F16, &[bits16]);
    cx.emit(Op::FConvert(Round::Rn), Type::F32, &[h])
}

/// An f32 (or f16) value rounded to f16 (to nearest), as a U32 holding the 16 bits.
pub fn f2h_bits(cx: &mut Cx, x: Value) -> Value {
    let t = cx.f.ty(x);
    let h = if t == Type::F16 {
        x
    } else {
        cx.emit(Op::FConvert(Round::Rn), Type::F16, &[x])
    };
    cx.emit(Op::Bitcast, Type::U32, &[h])
}

/// Flushes an f16 (held in f32) denormal to the zero of its sign. The zero is made from the
/// sign bit, not as `x · 0`: lavapipe gave +0 for a −0 flushed that way (`min.ftz.f16x2` of
/// +0 and −0, `x_forms_hmnmx`).
pub fn ftz16(cx: &mut Cx, x: Value) -> Value {
    let a = cx.un(Op::FAbs, x);
    let k = cx.cf32(6.103_515_6e-5);
    let small = cx.cmp(Op::FOLt, a, k);
    let u = cx.cast(Type::U32, x);
    let m = cx.c32(0x8000_0000);
    let s = cx.and(u, m);
    let sz = cx.cast(Type::F32, s);
    cx.sel(small, sz, x)
}

/// Which halves of a 32-bit operand feed the two lanes of a packed-half instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Swz {
    /// Low half to the low lane, high half to the high lane.
    H1H0,
    /// The register is an f32, rounded to f16, in both lanes.
    F32,
    /// The low half in both lanes.
    H0H0,
    /// The high half in both lanes.
    H1H1,
}

/// Splits a 32-bit operand into two f32 lanes (low, high) per the swizzle, with FTZ (f16
/// denormals), |x| and −x applied in that order.
pub fn split_lanes(
    cx: &mut Cx,
    v: Value,
    swz: Swz,
    neg: bool,
    abs: bool,
    flush: bool,
) -> (Value, Value) {
    let (mut lo, mut hi) = match swz {
        Swz::F32 => {
            let f = cx.cast(Type::F32, v);
            let h = cx.emit(Op::FConvert(Round::Rn), Type::F16, &[f]);
            let x = cx.emit(Op::FConvert(Round::Rn), Type::F32, &[h]);
            (x, x)
        }
        s => {
            let l = cx.bits(v, 0, 16);
            let h = cx.bits(v, 16, 16);
            let l = h2f(cx, l);
            let h = h2f(cx, h);
            match s {
                Swz::H0H0 => (l, l),
                Swz::H1H1 => (h, h),
                Swz::H1H0 | Swz::F32 => (l, h),
            }
        }
    };
    for x in [&mut lo, &mut hi] {
        if flush {
            *x = ftz16(cx, *x);
        }
        if abs {
            *x = cx.un(Op::FAbs, *x);
        }
        if neg {
            *x = cx.un(Op::FNeg, *x);
        }
    }
    (lo, hi)
}

/// Splits a register into two f32 lanes per the swizzle, with neg/abs applied.
fn lanes(
    cx: &mut Cx,
    i: &Instr,
    v: Value,
    sel: Field,
    neg: bool,
    abs: bool,
    flush: bool,
) -> Result<(Value, Value)> {
    let swz = match cx.modifier::<Hswz>(i, sel)? {
        Some(Hswz::F32) => Swz::F32,
        Some(Hswz::H0H0) => Swz::H0H0,
        Some(Hswz::H1H1) => Swz::H1H1,
        Some(Hswz::Default) | None => Swz::H1H0,
    };
    Ok(split_lanes(cx, v, swz, neg, abs, flush))
}

/// One lane's result (an f32, or an f16 from [`fma16`]) as the 16 bits it writes: saturated
/// when `sat`, rounded to f16, flushed when `flush` (after rounding).
pub fn lane_bits(cx: &mut Cx, x: Value, sat: bool, flush: bool) -> Value {
    let t = cx.f.ty(x);
    let mut x = if t == Type::F16 {
        cx.emit(Op::FConvert(Round::Rn), Type::F32, &[x])
    } else {
        x
    };
    if sat {
        x = saturate(cx, x);
    }
    if flush {
        // Results: flush after rounding to f16.
        let h = cx.emit(Op::FConvert(Round::Rn), Type::F16, &[x]);
        let back = cx.emit(Op::FConvert(Round::Rn), Type::F32, &[h]);
        x = ftz16(cx, back);
    }
    f2h_bits(cx, x)
}

/// The f16 fused multiply-add `x * y + z` of three f16 values held in f32 (one rounding).
pub fn fma16(cx: &mut Cx, x: Value, y: Value, z: Value) -> Value {
    let hx = cx.emit(Op::FConvert(Round::Rn), Type::F16, &[x]);
    let hy = cx.emit(Op::FConvert(Round::Rn), Type::F16, &[y]);
    let hz = cx.emit(Op::FConvert(Round::Rn), Type::F16, &[z]);
    cx.emit(Op::FFma(Round::Rn), Type::F16, &[hx, hy, hz])
}

fn imm_pair(cx: &mut Cx, i: &Instr) -> Value {
    let hi =
        (i.get(Field::Imm).unwrap_or(0) as u32 & 0x7fff) | ((i.flag(Field::NegB) as u32) << 15);
    let lo =
        (i.get(Field::Imm2).unwrap_or(0) as u32 & 0x7fff) | ((i.flag(Field::NegC) as u32) << 15);
    cx.c32(lo | (hi << 16))
}

fn write(cx: &mut Cx, i: &Instr, lo: Value, hi: Value, flush: bool) -> Result<()> {
    let sat = i.flag(Field::Sat);
    let fin = |cx: &mut Cx, x: Value| lane_bits(cx, x, sat, flush);
    let l = fin(cx, lo);
    let h = fin(cx, hi);
    let mode = cx.modifier::<Hfmt>(i, Field::Mode)?;
    let rd = cx.rf(i, Field::Rd);
    let r = match mode {
        Some(Hfmt::Default) | None => {
            let hs = cx.shl_c(h, 16);
            cx.or(l, hs)
        }
        Some(Hfmt::MrgH0) => {
            let old = cx.reg(rd);
            let k = cx.bits(old, 16, 16);
            let ks = cx.shl_c(k, 16);
            cx.or(ks, l)
        }
        Some(Hfmt::MrgH1) => {
            let old = cx.reg(rd);
            let k = cx.bits(old, 0, 16);
            let hs = cx.shl_c(h, 16);
            cx.or(k, hs)
        }
        Some(m @ Hfmt::F32) => return Err(cx.unsupported(i, format!("half result format {m}"))),
    };
    cx.set_reg(rd, r);
    Ok(())
}

/// Lifts one packed-half instruction.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    use Opcode as O;
    let op = i.opcode();
    let a = cx.r(i, Field::Ra);
    let b = if Cx::variant(i) == "I" && op == O::Hadd2 {
        imm_pair(cx, i)
    } else {
        cx.src_b(i)?
    };
    let (fl, fmz) = fmz_modes(cx, i)?;
    if fmz {
        return Err(cx.unsupported(i, "half FMZ"));
    }
    let imm = Cx::variant(i) == "I";
    let (al, ah) = lanes(
        cx,
        i,
        a,
        Field::SelA,
        i.flag(Field::NegA),
        i.flag(Field::AbsA),
        fl,
    )?;
    let (nb, abs_b) = if imm && op == O::Hadd2 {
        (false, false)
    } else {
        (i.flag(Field::NegB), i.flag(Field::AbsB))
    };
    let selb = if Cx::variant(i) == "RC" {
        Field::SelC
    } else {
        Field::SelB
    };
    let (bl, bh) = lanes(cx, i, b, selb, nb, abs_b, fl)?;
    match op {
        O::Hadd2 | O::Hmul2 => {
            let o = if op == O::Hadd2 {
                Op::FAdd(Round::Rn)
            } else {
                Op::FMul(Round::Rn)
            };
            let l = cx.emit(o, Type::F32, &[al, bl]);
            let h = cx.emit(o, Type::F32, &[ah, bh]);
            write(cx, i, l, h, fl)
        }
        O::Hfma2 => {
            let c = cx.src_c(i)?;
            let selc = if Cx::variant(i) == "RC" {
                Field::Reserved
            } else {
                Field::SelC
            };
            let (cl, ch) = lanes(cx, i, c, selc, i.flag(Field::NegC), false, fl)?;
            let mut out = Vec::new();
            for (x, y, z) in [(al, bl, cl), (ah, bh, ch)] {
                out.push(fma16(cx, x, y, z));
            }
            write(cx, i, out[0], out[1], fl)
        }
        O::Hset2 | O::Hsetp2 => {
            let c = fcmp_of(cx, i)?;
            let tl = fcmp(cx, c, al, bl);
            let th = fcmp(cx, c, ah, bh);
            let pc = cx.p(i, Field::Pc, Field::NotC);
            if op == O::Hsetp2 {
                if i.flag(Field::HAnd) {
                    let t = cx.and(tl, th);
                    let v = bop(cx, i, Field::Bop, t, pc)?;
                    cx.set_p(i, Field::Pd, v);
                    let nt = cx.not(t);
                    let v2 = bop(cx, i, Field::Bop, nt, pc)?;
                    cx.set_p(i, Field::Pd2, v2);
                } else {
                    let v = bop(cx, i, Field::Bop, tl, pc)?;
                    cx.set_p(i, Field::Pd, v);
                    let v2 = bop(cx, i, Field::Bop, th, pc)?;
                    cx.set_p(i, Field::Pd2, v2);
                }
            } else {
                let one = if i.flag(Field::Bf) { 0x3c00 } else { 0xffff };
                let vl = bop(cx, i, Field::Bop, tl, pc)?;
                let vh = bop(cx, i, Field::Bop, th, pc)?;
                let o = cx.c32(one);
                let z = cx.c32(0);
                let l = cx.sel(vl, o, z);
                let h = cx.sel(vh, o, z);
                let hs = cx.shl_c(h, 16);
                let r = cx.or(l, hs);
                cx.set_rd(i, r);
            }
            Ok(())
        }
        _ => Err(cx.unsupported(i, "no semantics for this instruction")),
    }
}
