//! Ampere single-precision float: FADD, FMUL, FFMA, FSETP, FSET, FSEL, FMNMX, MUFU, FCHK,
//! FSWZADD (FRND is in [`super::conv`]). The arithmetic is Maxwell's ([`crate::lift::float`]):
//! FTZ, FMZ, saturation, negate/absolute modifiers and rounding modes mean the same; the
//! sources are read by position ([`super::operand`]).

use super::super::float::{fchk, fcmp, fmz, fsrc, fswzadd, ftz, min_max, rcp64h, saturate};
use super::super::half::{f2h_bits, h2f};
use super::super::{Cx, Result};
use crate::ir::{Op, Round, Type, Value};
use dmsh_isa::ampere::mods::{self, Fpcmp};
use dmsh_isa::ampere::{Instr, Opcode};
use dmsh_isa::mods::Fcmp;
use dmsh_isa::Field;

/// The rounding mode of the `Rnd` field (`mods::Fprnd`); to nearest when the form has none.
pub(super) fn rnd(cx: &Cx, i: &Instr) -> Result<Round> {
    use mods::Fprnd as R;
    Ok(match cx.modifier::<R>(i, Field::Rnd)? {
        Some(R::Rm) => Round::Rm,
        Some(R::Rp) => Round::Rp,
        Some(R::Rz) => Round::Rz,
        Some(R::Default) | None => Round::Rn,
    })
}

/// (flush denormals, FMZ) of the FTZ/FMZ field (`mods::Fpftzfmz`), or of the one-bit `Ftz`
/// where the form has none.
pub(super) fn fmz_modes(cx: &Cx, i: &Instr) -> Result<(bool, bool)> {
    use mods::Fpftzfmz as Z;
    Ok(match cx.modifier::<Z>(i, Field::Fmz)? {
        Some(Z::Ftz) => (true, false),
        Some(Z::Fmz) => (true, true),
        Some(Z::Invalid3) => return Err(cx.unsupported(i, "FTZ/FMZ value 3")),
        Some(Z::Default) | None => (i.flag(Field::Ftz), false),
    })
}

/// Combines two Bools with the `Bop` field (`.AND`, `.OR`, `.XOR`; `.AND` when absent).
pub(super) fn bop(cx: &mut Cx, i: &Instr, a: Value, b: Value) -> Result<Value> {
    use mods::Bop;
    Ok(match cx.modifier::<Bop>(i, Field::Bop)? {
        Some(Bop::And) | None => cx.and(a, b),
        Some(Bop::Or) => cx.or(a, b),
        Some(Bop::Xor) => cx.bin(Op::Xor, a, b),
        Some(Bop::Invalid3) => return Err(cx.unsupported(i, "boolean op value 3")),
    })
}

/// The comparison of FSETP, FSET, HSETP2, HSET2 (`Cmp`, `mods::Fpcmp`) as the shared
/// [`Fcmp`] (the same tests at the same values); `.F` when the form has none.
pub(super) fn fcmp_of(cx: &Cx, i: &Instr) -> Result<Fcmp> {
    Ok(match cx.modifier::<Fpcmp>(i, Field::Cmp)? {
        Some(c) => fpcmp(c),
        None => Fcmp::F,
    })
}

/// An Ampere float comparison as the shared [`Fcmp`].
pub(super) fn fpcmp(c: Fpcmp) -> Fcmp {
    match c {
        Fpcmp::F => Fcmp::F,
        Fpcmp::Lt => Fcmp::Lt,
        Fpcmp::Eq => Fcmp::Eq,
        Fpcmp::Le => Fcmp::Le,
        Fpcmp::Gt => Fcmp::Gt,
        Fpcmp::Ne => Fcmp::Ne,
        Fpcmp::Ge => Fcmp::Ge,
        Fpcmp::Num => Fcmp::Num,
        Fpcmp::Nan => Fcmp::Nan,
        Fpcmp::Ltu => Fcmp::Ltu,
        Fpcmp::Equ => Fcmp::Equ,
        Fpcmp::Leu => Fcmp::Leu,
        Fpcmp::Gtu => Fcmp::Gtu,
        Fpcmp::Neu => Fcmp::Neu,
        Fpcmp::Geu => Fcmp::Geu,
        Fpcmp::T => Fcmp::T,
    }
}

/// The shared tail of xSETP / xSET: the test `t` combined with the `Pc` operand by `.BOP`;
/// xSETP writes it to Pd and `!t` combined likewise to Pd2, xSET writes Rd = 1.0 (`.BF`) or
/// `!0` where it holds and 0 elsewhere.
pub(super) fn set_compare(cx: &mut Cx, i: &Instr, setp: bool, t: Value) -> Result<()> {
    let pc = cx.apred(i, Field::Pc, Field::NotC);
    let v = bop(cx, i, t, pc)?;
    if setp {
        cx.set_apred(i, Field::Pd, v);
        let nt = cx.not(t);
        let v2 = bop(cx, i, nt, pc)?;
        cx.set_apred(i, Field::Pd2, v2);
    } else {
        // FSET always prints (and is) `.BF` on sm_86.
        let bf = i.flag(Field::Bf) || i.opcode() == Opcode::Fset;
        let tv = cx.c32(if bf { 0x3f80_0000 } else { !0 });
        let z = cx.c32(0);
        let r = cx.sel(v, tv, z);
        cx.set_dst(i, r);
    }
    Ok(())
}

/// Float source `k` with its negate / absolute-value fields, flushed when `flush`.
fn fk(cx: &mut Cx, i: &Instr, k: usize, flush: bool) -> Result<Value> {
    let (neg, abs) = [
        (Field::NegA, Field::AbsA),
        (Field::NegB, Field::AbsB),
        (Field::NegC, Field::AbsC),
    ][k.min(2)];
    let v = cx.asrc(i, k)?;
    Ok(fsrc(cx, v, i.flag(neg), i.flag(abs), flush))
}

/// Writes a float result with saturation (`.SAT`) and FTZ.
fn fres(cx: &mut Cx, i: &Instr, r: Value, flush: bool) {
    let mut r = r;
    if i.flag(Field::Sat) {
        r = saturate(cx, r);
    }
    if flush {
        r = ftz(cx, r);
    }
    cx.set_dst(i, r);
}

/// Lifts one f32 instruction.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    use Opcode as O;
    match i.opcode() {
        O::Fadd => {
            let fl = i.flag(Field::Ftz);
            let a = fk(cx, i, 0, fl)?;
            let b = fk(cx, i, 1, fl)?;
            let r = cx.emit(Op::FAdd(rnd(cx, i)?), Type::F32, &[a, b]);
            fres(cx, i, r, fl);
        }
        O::Fmul => {
            let (fl, z) = fmz_modes(cx, i)?;
            let a = fk(cx, i, 0, fl)?;
            let b = fk(cx, i, 1, fl)?;
            let (a, b) = if z { fmz(cx, a, b) } else { (a, b) };
            let mut r = cx.emit(Op::FMul(rnd(cx, i)?), Type::F32, &[a, b]);
            use mods::Fmulscale as S;
            let scale = match cx.modifier::<S>(i, Field::Scale)? {
                Some(S::Default) | None => None,
                Some(S::D2) => Some(0.5),
                Some(S::D4) => Some(0.25),
                Some(S::D8) => Some(0.125),
                Some(S::M2) => Some(2.0),
                Some(S::M4) => Some(4.0),
                Some(S::M8) => Some(8.0),
                Some(S::Invalid0) => return Err(cx.unsupported(i, "FMUL scale value 0")),
            };
            if let Some(s) = scale {
                let k = cx.cf32(s);
                r = cx.emit(Op::FMul(Round::Rn), Type::F32, &[r, k]);
            }
            fres(cx, i, r, fl);
        }
        O::Ffma => {
            let (fl, z) = fmz_modes(cx, i)?;
            let a = fk(cx, i, 0, fl)?;
            let b = fk(cx, i, 1, fl)?;
            let c = fk(cx, i, 2, fl)?;
            let (a, b) = if z { fmz(cx, a, b) } else { (a, b) };
            let r = cx.emit(Op::FFma(rnd(cx, i)?), Type::F32, &[a, b, c]);
            fres(cx, i, r, fl);
        }
        O::Fmnmx => {
            let fl = i.flag(Field::Ftz);
            let a = fk(cx, i, 0, fl)?;
            let b = fk(cx, i, 1, fl)?;
            let p = cx.apred(i, Field::Pc, Field::NotC);
            use mods::Fmnmxmode as M;
            let (nan, xorsign) = match cx.modifier::<M>(i, Field::Mode)? {
                Some(M::Default) | None => (false, false),
                Some(M::Nan) => (true, false),
                Some(M::Xorsign) => (false, true),
                Some(M::NanXorsign) => (true, true),
            };
            let mn = min_max(cx, a, b, true);
            let mx = min_max(cx, a, b, false);
            let mut r = cx.sel(p, mn, mx);
            if xorsign {
                r = xorsign_of(cx, i, r)?;
            }
            if nan {
                // `.NAN`: a NaN operand gives the canonical NaN (min.NaN / max.NaN).
                let na = cx.emit(Op::IsNan, Type::Bool, &[a]);
                let nb = cx.emit(Op::IsNan, Type::Bool, &[b]);
                let any = cx.or(na, nb);
                let q = cx.emit(Op::Const(0x7fff_ffff), Type::F32, &[]);
                r = cx.sel(any, q, r);
            }
            fres(cx, i, r, fl);
        }
        O::Fsetp | O::Fset => {
            let fl = i.flag(Field::Ftz);
            let a = fk(cx, i, 0, fl)?;
            let b = fk(cx, i, 1, fl)?;
            let c = fcmp_of(cx, i)?;
            let t = fcmp(cx, c, a, b);
            set_compare(cx, i, i.opcode() == O::Fsetp, t)?;
        }
        O::Fsel => {
            // A selection moves bits: the modifiers act on the sign bit (and FTZ on the
            // exponent) without float arithmetic, so NaN payloads pass unchanged.
            let p = cx.apred(i, Field::Pc, Field::NotC);
            let a = bits_src(cx, i, 0)?;
            let b = bits_src(cx, i, 1)?;
            let r = cx.sel(p, a, b);
            cx.set_dst(i, r);
        }
        O::Mufu => mufu(cx, i)?,
        O::Fchk => {
            // The signs (the modifiers) do not change the exponents FCHK looks at.
            let a = cx.asrc(i, 0)?;
            let b = cx.asrc(i, 1)?;
            let bad = fchk(cx, a, b);
            cx.set_apred(i, Field::Pd, bad);
        }
        O::Fswzadd => {
            let fl = i.flag(Field::Ftz);
            let a = cx.r(i, Field::Ra);
            let b = cx.r(i, Field::Rb);
            let a = fsrc(cx, a, false, false, fl);
            let b = fsrc(cx, b, false, false, fl);
            let swz = i.raw(Field::Mode).unwrap_or(0) as u32;
            let r = fswzadd(cx, a, b, swz, rnd(cx, i)?);
            fres(cx, i, r, fl);
        }
        O::Frnd => super::conv::frnd(cx, i)?,
        _ => return Err(cx.unsupported(i, "not a float instruction")),
    }
    Ok(())
}

/// `.XORSIGN` (PTX `min/max.xorsign.abs`): the magnitude of the minimum or maximum `r` (of
/// the operands as modified, ptxas always gives both `|x|`) with the XOR of the two sources'
/// sign bits as they are in the register, constant or immediate (before `|x|`). A NaN result
/// (both operands NaN) is the canonical NaN: PTX ignores `.xorsign.abs` then.
fn xorsign_of(cx: &mut Cx, i: &Instr, r: Value) -> Result<Value> {
    let a = cx.asrc(i, 0)?;
    let b = cx.asrc(i, 1)?;
    let a = cx.cast(Type::U32, a);
    let b = cx.cast(Type::U32, b);
    let x = cx.bin(Op::Xor, a, b);
    let sign = cx.c32(0x8000_0000);
    let s = cx.and(x, sign);
    let bits = cx.cast(Type::U32, r);
    let mag = cx.c32(0x7fff_ffff);
    let m = cx.and(bits, mag);
    let v = cx.or(m, s);
    let v = cx.cast(Type::F32, v);
    let nan = cx.emit(Op::IsNan, Type::Bool, &[r]);
    let q = cx.emit(Op::Const(0x7fff_ffff), Type::F32, &[]);
    Ok(cx.sel(nan, q, v))
}

/// FSEL's source `k` as U32 bits: |x| clears the sign bit, −x flips it, FTZ zeroes a
/// denormal keeping its sign.
fn bits_src(cx: &mut Cx, i: &Instr, k: usize) -> Result<Value> {
    let (neg, abs) = [(Field::NegA, Field::AbsA), (Field::NegB, Field::AbsB)][k.min(1)];
    let mut v = cx.asrc(i, k)?;
    if i.flag(Field::Ftz) {
        let e = cx.c32(0x7f80_0000);
        let ex = cx.and(v, e);
        let z = cx.c32(0);
        let den = cx.cmp(Op::IEq, ex, z);
        let s = cx.c32(0x8000_0000);
        let sg = cx.and(v, s);
        v = cx.sel(den, sg, v);
    }
    if i.flag(abs) {
        let m = cx.c32(0x7fff_ffff);
        v = cx.and(v, m);
    }
    if i.flag(neg) {
        let m = cx.c32(0x8000_0000);
        v = cx.bin(Op::Xor, v, m);
    }
    Ok(v)
}

/// The function of a MUFU: its `Mode` field, whichever enum the form prints it with.
#[derive(Clone, Copy, PartialEq)]
enum Fun {
    Op(Op),
    Rcp64h,
    Rsq64h,
    Tanh,
}

/// MUFU's function and whether it is an `.F16` form. The forms' four `Mode` enums (MUFUOP,
/// MUFUOPI, MUFUOP64H, MUFUOPH) print the same function names, so they are read by text.
fn mufu_fun(cx: &Cx, i: &Instr) -> Result<(Fun, bool)> {
    use Fun::Op as F;
    let Some(text) = i.modifier(Field::Mode) else {
        return Err(cx.unsupported(i, "MUFU without a function"));
    };
    let (name, half) = match text.strip_suffix(".F16") {
        Some(n) => (n, true),
        None => (text, false),
    };
    let fun = match name {
        ".COS" => F(Op::FCos),
        ".SIN" => F(Op::FSin),
        ".EX2" => F(Op::FExp2),
        ".LG2" => F(Op::FLog2),
        ".RCP" => F(Op::FRcp),
        ".RSQ" => F(Op::FRsqrt),
        ".SQRT" => F(Op::FSqrt),
        ".TANH" => Fun::Tanh,
        ".RCP64H" if !half => Fun::Rcp64h,
        ".RSQ64H" if !half => Fun::Rsq64h,
        _ => return Err(cx.unsupported(i, format!("MUFU{text}"))),
    };
    Ok((fun, half))
}

/// MUFU as Maxwell's: the f32 functions flush their operand and result (the special function
/// unit works without denormals); RCP64H / RSQ64H give the high word of the f64 result for
/// {hi: B, lo: 0}. The `.F16` forms read the half `SelB` picks and write an f16 (low half).
fn mufu(cx: &mut Cx, i: &Instr) -> Result<()> {
    let (fun, half) = mufu_fun(cx, i)?;
    let (neg, abs) = (i.flag(Field::NegB), i.flag(Field::AbsB));
    let v = cx.asrc(i, 0)?;
    if let Fun::Rcp64h | Fun::Rsq64h = fun {
        let af = fsrc(cx, v, neg, abs, false);
        let h = rcp64h(cx, af, fun == Fun::Rsq64h);
        cx.set_dst(i, h);
        return Ok(());
    }
    let x = if half {
        let h = super::conv::half_of(cx, i, v)?;
        let x = h2f(cx, h);
        fsrc(cx, x, neg, abs, false)
    } else {
        fsrc(cx, v, neg, abs, true)
    };
    let r = match fun {
        Fun::Op(o) => cx.un(o, x),
        _ => tanh(cx, x),
    };
    if half {
        let b = f2h_bits(cx, r);
        cx.set_dst(i, b);
    } else {
        let r = ftz(cx, r);
        cx.set_dst(i, r);
    }
    Ok(())
}

/// tanh(x) = sign(x) · (1 − e) / (1 + e) with e = 2^(−2·|x|·log2 e): exact at 0 and ±∞,
/// NaN for NaN (MUFU.TANH is an approximation, as the other MUFU functions are).
fn tanh(cx: &mut Cx, x: Value) -> Value {
    let ax = cx.un(Op::FAbs, x);
    let k = cx.cf32(-2.0 * std::f32::consts::LOG2_E);
    let s = cx.emit(Op::FMul(Round::Rn), Type::F32, &[ax, k]);
    let e = cx.un(Op::FExp2, s);
    let one = cx.cf32(1.0);
    let ne = cx.un(Op::FNeg, e);
    let num = cx.emit(Op::FAdd(Round::Rn), Type::F32, &[one, ne]);
    let den = cx.emit(Op::FAdd(Round::Rn), Type::F32, &[one, e]);
    let t = cx.emit(Op::FDiv, Type::F32, &[num, den]);
    // Copy x's sign onto |tanh|.
    let tb = cx.cast(Type::U32, t);
    let xb = cx.cast(Type::U32, x);
    let m = cx.c32(0x8000_0000);
    let sg = cx.and(xb, m);
    let r = cx.or(tb, sg);
    cx.cast(Type::F32, r)
}

#[cfg(test)]
mod tests {
    use super::super::operand::{src, Src};
    use dmsh_isa::ampere::decode;

    fn instr(hex: &str) -> dmsh_isa::ampere::Instr {
        decode(u128::from_str_radix(hex, 16).expect("hex")).expect("decodes")
    }

    /// Operand slots of float forms whose registers carry modifiers printed after them
    /// (corpus words, nvdisasm: `FFMA R15, R0.reuse, R7.reuse, R6`, `FADD R27, -R0,
    /// R6.reuse`, `FADD R17, |R0|.reuse, -RZ`).
    #[test]
    fn float_operand_slots() {
        let i = instr("0c8fe2000000000600000007000f7223");
        assert_eq!(
            [src(&i, 0), src(&i, 1), src(&i, 2)],
            [Src::Reg(0), Src::Reg(7), Src::Reg(6)]
        );
        let i = instr("100fe2000000810000000006001b7221");
        assert_eq!(src(&i, 0), Src::Reg(0));
        assert_eq!(src(&i, 1), Src::Reg(6));
        assert!(i.flag(dmsh_isa::Field::NegA));
        let i = instr("044fe20000000200800000ff00117221");
        assert_eq!(src(&i, 0), Src::Reg(0));
        assert_eq!(src(&i, 1), Src::Reg(255));
    }
}
