//! Single-precision float: FADD, FMUL, FFMA (+32I forms), FMNMX, FSETP, FSET, FCMP, MUFU,
//! RRO, FCHK — with FTZ, FMZ, saturation, negate/absolute modifiers and rounding modes.

use super::int::set_compare;
use super::{Cx, Result};
use crate::ir::{Op, Round, Type, Value};
use dmsh_isa::mods::{self, Fcmp, Fscale, Mufu};
use dmsh_isa::{Field, Instr, Opcode};

/// Flushes an f32 denormal to a zero of the same sign.
pub fn ftz(cx: &mut Cx, v: Value) -> Value {
    let v = cx.cast(Type::F32, v);
    match cx.f.inst(v).op {
        // Flushing is idempotent: a flushed value (an `.FTZ` result read back) stays.
        Op::Ftz => v,
        Op::Const(c) => {
            let b = c as u32;
            let r = if b & 0x7f80_0000 == 0 {
                b & 0x8000_0000
            } else {
                b
            };
            cx.emit(Op::Const(r as u64), Type::F32, &[])
        }
        _ => {
            cx.f.flushes = true;
            cx.emit(Op::Ftz, Type::F32, &[v])
        }
    }
}

/// Reads a float operand: bits → f32, then |x|, −x, FTZ as asked.
pub fn fsrc(cx: &mut Cx, v: Value, neg: bool, abs: bool, flush: bool) -> Value {
    let mut x = cx.cast(Type::F32, v);
    if flush {
        x = ftz(cx, x);
    }
    if abs {
        x = cx.un(Op::FAbs, x);
    }
    if neg {
        x = cx.un(Op::FNeg, x);
    }
    x
}

/// Clamps to [0, 1]; NaN and −0 give +0.
pub fn saturate(cx: &mut Cx, x: Value) -> Value {
    cx.un(Op::FSat, x)
}

/// Writes a float result with FTZ and saturation.
pub fn fres(cx: &mut Cx, i: &Instr, r: Value, flush: bool) {
    let mut r = r;
    if i.flag(Field::Sat) {
        r = saturate(cx, r);
    }
    if flush {
        r = ftz(cx, r);
    }
    cx.set_rd(i, r);
}

/// The comparison of a float compare-and-set (FSETP, FSET, DSETP, DSET, HSETP2, HSET2: the
/// `Cmp` field, `mods::Fcmp`); `.F` when the form has none.
pub fn fcmp_of(cx: &Cx, i: &Instr) -> Result<Fcmp> {
    Ok(cx.modifier::<Fcmp>(i, Field::Cmp)?.unwrap_or(Fcmp::F))
}

/// Float comparison (`.LT`, `.GEU`, `.NUM`, …) → Bool.
pub fn fcmp(cx: &mut Cx, c: Fcmp, a: Value, b: Value) -> Value {
    match c {
        Fcmp::F => cx.cbool(false),
        Fcmp::T => cx.cbool(true),
        Fcmp::Lt => cx.cmp(Op::FOLt, a, b),
        Fcmp::Eq => cx.cmp(Op::FOEq, a, b),
        Fcmp::Le => cx.cmp(Op::FOLe, a, b),
        Fcmp::Gt => cx.cmp(Op::FOGt, a, b),
        Fcmp::Ne => cx.cmp(Op::FONe, a, b),
        Fcmp::Ge => cx.cmp(Op::FOGe, a, b),
        Fcmp::Ltu => cx.cmp(Op::FULt, a, b),
        Fcmp::Equ => cx.cmp(Op::FUEq, a, b),
        Fcmp::Leu => cx.cmp(Op::FULe, a, b),
        Fcmp::Gtu => cx.cmp(Op::FUGt, a, b),
        Fcmp::Neu => cx.cmp(Op::FUNe, a, b),
        Fcmp::Geu => cx.cmp(Op::FUGe, a, b),
        Fcmp::Num | Fcmp::Nan => {
            let na = cx.emit(Op::IsNan, Type::Bool, &[a]);
            let nb = cx.emit(Op::IsNan, Type::Bool, &[b]);
            let any = cx.or(na, nb);
            if c == Fcmp::Nan {
                any
            } else {
                cx.not(any)
            }
        }
    }
}

/// FCMP's comparison (`mods::Fcmpc`) as the compare-and-set one: the same tests at the same
/// values, but value 4 (`.GT` elsewhere) prints nothing and is not supported.
fn fcmpc(cx: &Cx, i: &Instr) -> Result<Fcmp> {
    use mods::Fcmpc as C;
    Ok(match cx.modifier::<C>(i, Field::Cmp)?.unwrap_or(C::F) {
        C::F => Fcmp::F,
        C::Lt => Fcmp::Lt,
        C::Eq => Fcmp::Eq,
        C::Le => Fcmp::Le,
        C::Ne => Fcmp::Ne,
        C::Ge => Fcmp::Ge,
        C::Num => Fcmp::Num,
        C::Nan => Fcmp::Nan,
        C::Ltu => Fcmp::Ltu,
        C::Equ => Fcmp::Equ,
        C::Leu => Fcmp::Leu,
        C::Gtu => Fcmp::Gtu,
        C::Neu => Fcmp::Neu,
        C::Geu => Fcmp::Geu,
        C::T => Fcmp::T,
        C::Default => return Err(cx.unsupported(i, "comparison (value 4)")),
    })
}

/// (flush denormals, FMZ) of an instruction with the FTZ/FMZ field (`mods::Ftzfmz`), or its
/// one-bit `Ftz` where it has none.
pub fn fmz_modes(cx: &Cx, i: &Instr) -> Result<(bool, bool)> {
    use mods::Ftzfmz as Z;
    Ok(match cx.modifier::<Z>(i, Field::Fmz)? {
        Some(Z::Ftz) => (true, false),
        Some(Z::Fmz) => (true, true),
        Some(Z::Default) | None => (i.flag(Field::Ftz), false),
    })
}

/// FMZ: if either factor is zero, both become +0 (0 × anything = 0, even ∞ or NaN).
pub fn fmz(cx: &mut Cx, a: Value, b: Value) -> (Value, Value) {
    let z = cx.cf32(0.0);
    let az = cx.cmp(Op::FOEq, a, z);
    let bz = cx.cmp(Op::FOEq, b, z);
    let any = cx.or(az, bz);
    let a2 = cx.sel(any, z, a);
    let b2 = cx.sel(any, z, b);
    (a2, b2)
}

/// The `.FTZ` flag and operands A and B with their negate and absolute-value modifiers
/// (FADD, FMNMX, FSETP, FSET), flushed under `.FTZ`.
fn ftz_ab(cx: &mut Cx, i: &Instr) -> Result<(bool, Value, Value)> {
    let fl = i.flag(Field::Ftz);
    let a = cx.r_f32(i, Field::Ra);
    let b = cx.src_b_f32(i)?;
    let a = fsrc(cx, a, i.flag(Field::NegA), i.flag(Field::AbsA), fl);
    let b = fsrc(cx, b, i.flag(Field::NegB), i.flag(Field::AbsB), fl);
    Ok((fl, a, b))
}

/// Lifts one f32 instruction.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    use Opcode as O;
    let op = i.opcode();
    if i.flag(Field::Cc) {
        return Err(cx.unsupported(i, "float op writing CC"));
    }
    match op {
        O::Fadd | O::Fadd32i => {
            let (fl, a, b) = ftz_ab(cx, i)?;
            let r = cx.emit(Op::FAdd(cx.rnd(i)?), Type::F32, &[a, b]);
            fres(cx, i, r, fl);
        }
        O::Fmul | O::Fmul32i => {
            let (fl, z) = fmz_modes(cx, i)?;
            let a = cx.r_f32(i, Field::Ra);
            let b = cx.src_b_f32(i)?;
            let a = fsrc(cx, a, false, false, fl);
            let b = fsrc(cx, b, i.flag(Field::NegB), false, fl);
            let (a, b) = if z { fmz(cx, a, b) } else { (a, b) };
            let mut r = cx.emit(Op::FMul(cx.rnd(i)?), Type::F32, &[a, b]);
            let scale = match cx.modifier::<mods::Fscale>(i, Field::Scale)? {
                Some(Fscale::Default) | None => None,
                Some(Fscale::D2) => Some(0.5),
                Some(Fscale::D4) => Some(0.25),
                Some(Fscale::D8) => Some(0.125),
                Some(Fscale::M2) => Some(2.0),
                Some(Fscale::M4) => Some(4.0),
                Some(Fscale::M8) => Some(8.0),
            };
            if let Some(s) = scale {
                let k = cx.cf32(s);
                r = cx.emit(Op::FMul(Round::Rn), Type::F32, &[r, k]);
            }
            fres(cx, i, r, fl);
        }
        O::Ffma | O::Ffma32i => {
            let (fl, z) = fmz_modes(cx, i)?;
            let a = cx.r_f32(i, Field::Ra);
            let b = cx.src_b_f32(i)?;
            let c = if op == O::Ffma32i {
                cx.r_f32(i, Field::Rd)
            } else {
                cx.src_c_f32(i)?
            };
            let a = fsrc(cx, a, i.flag(Field::NegA), false, fl);
            let b = fsrc(cx, b, i.flag(Field::NegB), false, fl);
            let c = fsrc(cx, c, i.flag(Field::NegC), false, fl);
            let (a, b) = if z { fmz(cx, a, b) } else { (a, b) };
            let r = cx.emit(Op::FFma(cx.rnd(i)?), Type::F32, &[a, b, c]);
            fres(cx, i, r, fl);
        }
        O::Fmnmx => {
            let (fl, a, b) = ftz_ab(cx, i)?;
            let r = cx.pick(
                i,
                (Field::Pc, Field::NotC),
                |cx| min_max(cx, a, b, true),
                |cx| min_max(cx, a, b, false),
            );
            fres(cx, i, r, fl);
        }
        O::Fsetp | O::Fset => {
            let (_, a, b) = ftz_ab(cx, i)?;
            let t = fcmp_of(cx, i)?;
            let t = fcmp(cx, t, a, b);
            set_compare(cx, i, op == O::Fsetp, t, false)?;
        }
        O::Fcmp => {
            let fl = i.flag(Field::Ftz);
            let a = cx.r(i, Field::Ra);
            let b = cx.src_b(i)?;
            let c = cx.src_c_f32(i)?;
            let cf = fsrc(cx, c, false, false, fl);
            let z = cx.cf32(0.0);
            let t = fcmpc(cx, i)?;
            let t = fcmp(cx, t, cf, z);
            let r = cx.sel(t, a, b);
            cx.set_rd(i, r);
        }
        O::Rro => {
            let b = cx.src_b_f32(i)?;
            let b = fsrc(cx, b, i.flag(Field::NegB), i.flag(Field::AbsB), false);
            cx.set_rd(i, b);
        }
        O::Mufu => {
            let a = cx.r_f32(i, Field::Ra);
            // MUFU's `Mode` always prints (`mods::Mufu`, every value named).
            let Some(mode) = cx.modifier::<Mufu>(i, Field::Mode)? else {
                return Err(cx.unsupported(i, "MUFU without a function"));
            };
            let o = match mode {
                Mufu::Cos => Op::FCos,
                Mufu::Sin => Op::FSin,
                Mufu::Ex2 => Op::FExp2,
                Mufu::Lg2 => Op::FLog2,
                Mufu::Rcp => Op::FRcp,
                Mufu::Rsq => Op::FRsqrt,
                Mufu::Sqrt => Op::FSqrt,
                Mufu::Rcp64h | Mufu::Rsq64h => {
                    let af = fsrc(cx, a, i.flag(Field::NegA), i.flag(Field::AbsA), false);
                    let h = rcp64h(cx, af, mode == Mufu::Rsq64h);
                    cx.set_rd(i, h);
                    return Ok(());
                }
            };
            let x = fsrc(cx, a, i.flag(Field::NegA), i.flag(Field::AbsA), true);
            let r = cx.un(o, x);
            fres(cx, i, r, true);
        }
        O::Fchk => {
            let a = cx.r(i, Field::Ra);
            let b = cx.src_b(i)?;
            let bad = fchk(cx, a, b);
            cx.set_p(i, Field::Pd, bad);
        }
        _ => return Err(cx.unsupported(i, "no semantics for this instruction")),
    }
    Ok(())
}

/// MUFU.RCP64H / MUFU.RSQ64H of `hi` (the f32 view of the high word): the high word of the
/// f64 reciprocal (reciprocal square root when `rsq`) of {hi: hi, lo: 0}.
pub fn rcp64h(cx: &mut Cx, hi: Value, rsq: bool) -> Value {
    let bits = cx.cast(Type::U32, hi);
    let z = cx.c32(0);
    let d = cx.pack(z, bits);
    let d = cx.cast(Type::F64, d);
    let r = if rsq {
        cx.un(Op::FRsqrt, d)
    } else {
        cx.un(Op::FRcp, d)
    };
    let rb = cx.cast(Type::U64, r);
    cx.hi(rb)
}

/// FCHK of the f32 bit patterns `a` (dividend) and `b` (divisor): true when the fast division
/// path may be inexact (operands zero, denormal, infinite, NaN, or exponents far apart or
/// near the ends of the range).
pub fn fchk(cx: &mut Cx, a: Value, b: Value) -> Value {
    let a = cx.cast(Type::U32, a);
    let b = cx.cast(Type::U32, b);
    let ea = cx.bits(a, 23, 8);
    let eb = cx.bits(b, 23, 8);
    let lo = cx.c32(24);
    let hi = cx.c32(229);
    let a_bad1 = cx.cmp(Op::ULt, ea, lo);
    let a_bad2 = cx.cmp(Op::UGt, ea, hi);
    let b_bad1 = cx.cmp(Op::ULt, eb, lo);
    let b_bad2 = cx.cmp(Op::UGt, eb, hi);
    let d = cx.bin(Op::ISub, ea, eb);
    let k = cx.c32(100);
    let d1 = cx.cmp(Op::SGt, d, k);
    let mk = cx.c32((-100i32) as u32);
    let d2 = cx.cmp(Op::SLt, d, mk);
    let mut bad = cx.or(a_bad1, a_bad2);
    for v in [b_bad1, b_bad2, d1, d2] {
        bad = cx.or(bad, v);
    }
    bad
}

/// FSWZADD's arithmetic for this lane: per quad lane (lane & 3), two bits of the 8-bit
/// swizzle `swz` pick (a, b) signs: 0: a + b, 1: -a + b, 2: a - b, 3: b; lane k reads bits
/// 6 - 2k. `a`, `b` are f32 (bits or values), the sum is rounded by `rnd`.
pub fn fswzadd(cx: &mut Cx, a: Value, b: Value, swz: u32, rnd: Round) -> Value {
    let lane = cx.sys(crate::Sys::LaneId);
    let three = cx.c32(3);
    let q = cx.and(lane, three);
    // Lane 0 (top left) takes the top two bits: PNNPPNNP (dFdx after SHFL.BFLY 1)
    // must give right - left in both pixels of a row.
    let q = cx.bin(Op::Xor, q, three);
    let sh = cx.shl_c(q, 1);
    let sw = cx.c32(swz);
    let m0 = cx.bin(Op::LShr, sw, sh);
    let m = cx.and(m0, three);
    let (one, neg, zero) = (cx.cf32(1.0), cx.cf32(-1.0), cx.cf32(0.0));
    let c1 = cx.c32(1);
    let c2 = cx.c32(2);
    let is1 = cx.cmp(Op::IEq, m, c1);
    let is2 = cx.cmp(Op::IEq, m, c2);
    let is3 = cx.cmp(Op::IEq, m, three);
    let fa0 = cx.sel(is3, zero, one);
    let fa = cx.sel(is1, neg, fa0);
    let fb = cx.sel(is2, neg, one);
    let af = cx.cast(Type::F32, a);
    let bf = cx.cast(Type::F32, b);
    let x = cx.emit(Op::FMul(Round::Rn), Type::F32, &[af, fa]);
    let y = cx.emit(Op::FMul(Round::Rn), Type::F32, &[bf, fb]);
    cx.emit(Op::FAdd(rnd), Type::F32, &[x, y])
}

/// Maxwell min/max: a NaN operand loses to a number; −0 is below +0.
pub fn min_max(cx: &mut Cx, a: Value, b: Value, min: bool) -> Value {
    cx.bin(Op::FMinMaxZ(min), a, b)
}
