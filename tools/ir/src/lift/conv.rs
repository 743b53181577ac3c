//! Conversions: F2F, F2I, I2F, I2I, with rounding and Maxwell's saturation (F2I clamps to
//! the destination range and maps NaN to 0).

use super::float::{ftz, saturate};
use super::{Cx, Result};
use crate::ir::{Op, Round, Type, Value};
use dmsh_isa::mods::{self, Ftype, Itype};
use dmsh_isa::{Field, Instr, Opcode};

/// A float type field (`SrcType`/`DstType`, `mods::Ftype`); `None` when the form has none.
fn ftype(cx: &Cx, i: &Instr, f: Field) -> Result<Option<Type>> {
    Ok(cx.modifier::<Ftype>(i, f)?.map(|t| match t {
        Ftype::F16 => Type::F16,
        Ftype::F32 => Type::F32,
        Ftype::F64 => Type::F64,
    }))
}

/// (bits, signed) of an integer type field: `mods::Itype`, or `mods::I16` (the source of the
/// 16-bit I2F/I2I forms); `None` when the form has none.
fn itype(cx: &Cx, i: &Instr, f: Field) -> Result<Option<(u32, bool)>> {
    if let Some(t) = i.modifier_as::<mods::I16>(f) {
        return Ok(Some((16, t == mods::I16::S16)));
    }
    Ok(cx.modifier::<Itype>(i, f)?.map(|t| match t {
        Itype::U8 => (8, false),
        Itype::U16 => (16, false),
        Itype::U32 => (32, false),
        Itype::U64 => (64, false),
        Itype::S8 => (8, true),
        Itype::S16 => (16, true),
        Itype::S32 => (32, true),
        Itype::S64 => (64, true),
    }))
}

/// Reads the float source operand B of a conversion.
fn fsrc(cx: &mut Cx, i: &Instr, t: Type) -> Result<Value> {
    let mut x = match t {
        Type::F64 => {
            let v = cx.src_b64(i)?;
            cx.cast(Type::F64, v)
        }
        Type::F16 => {
            let b = cx.src_b(i)?;
            let high = cx.modifier::<mods::Hsel>(i, Field::SelB)? == Some(mods::Hsel::H1);
            let off = if high { 16 } else { 0 };
            let h = cx.bits(b, off, 16);
            let h = cx.emit(Op::Bitcast, Type::F16, &[h]);
            cx.emit(Op::FConvert(Round::Rn), Type::F32, &[h])
        }
        _ => {
            let x = cx.src_b_f32(i)?;
            if i.flag(Field::Ftz) {
                ftz(cx, x)
            } else {
                x
            }
        }
    };
    if i.flag(Field::AbsB) {
        x = cx.un(Op::FAbs, x);
    }
    if i.flag(Field::NegB) {
        x = cx.un(Op::FNeg, x);
    }
    Ok(x)
}

fn fc(cx: &mut Cx, t: Type, v: f64) -> Value {
    if t == Type::F64 {
        cx.cf64(v)
    } else {
        cx.cf32(v as f32)
    }
}

/// Rounds to an integral value without GLSL round/trunc (lavapipe gets f64 ones wrong for
/// |x| ≥ 2^31): floor/ceil based, keeping ±0, ∞ and NaN.
/// The mode is the direction: `Rn` to the nearest (ties to even), `Rm` down (floor), `Rp` up
/// (ceil), `Rz` toward zero (trunc).
pub fn round_int(cx: &mut Cx, x: Value, mode: Round) -> Value {
    let t = cx.f.ty(x);
    let fl = cx.un(Op::FFloor, x);
    let r = match mode {
        Round::Rm => fl,
        Round::Rp => cx.un(Op::FCeil, x),
        Round::Rz => {
            let ce = cx.un(Op::FCeil, x);
            let z = fc(cx, t, 0.0);
            let neg = cx.cmp(Op::FOLt, x, z);
            cx.sel(neg, ce, fl)
        }
        Round::Rn => {
            let nfl = cx.un(Op::FNeg, fl);
            let d = cx.emit(Op::FAdd(Round::Rn), t, &[x, nfl]);
            let half = fc(cx, t, 0.5);
            let one = fc(cx, t, 1.0);
            let up = cx.emit(Op::FAdd(Round::Rn), t, &[fl, one]);
            let gt = cx.cmp(Op::FOGt, d, half);
            let eq = cx.cmp(Op::FOEq, d, half);
            let hf = cx.emit(Op::FMul(Round::Rn), t, &[fl, half]);
            let hff = cx.un(Op::FFloor, hf);
            let even = cx.cmp(Op::FOEq, hf, hff);
            let tie_up = cx.not(even);
            let tie = cx.and(eq, tie_up);
            let go = cx.or(gt, tie);
            cx.sel(go, up, fl)
        }
    };
    let big = fc(
        cx,
        t,
        if t == Type::F64 {
            4503599627370496.0
        } else {
            8388608.0
        },
    );
    let ax = cx.un(Op::FAbs, x);
    let small = cx.cmp(Op::FOLt, ax, big);
    let r = cx.sel(small, r, x);
    // Keep the sign of zero results (round(−0.3) = −0).
    let z = fc(cx, t, 0.0);
    let rz = cx.cmp(Op::FOEq, r, z);
    let it = if t == Type::F64 { Type::U64 } else { Type::U32 };
    let xb = cx.cast(it, x);
    let sign = if t == Type::F64 {
        cx.c64(1 << 63)
    } else {
        cx.c32(0x8000_0000)
    };
    let sb = cx.and(xb, sign);
    let sz = cx.cast(t, sb);
    cx.sel(rz, sz, r)
}

/// F2I's result from `r`, an integral float (f32 or f64, [`round_int`]'s result): clamped
/// to the range of the `bits`-bit integer type (signed when `s`), NaN → 0; U64 for 64-bit
/// destinations, else U32 (narrow results sign- or zero-extended).
pub fn f2i_clamp(cx: &mut Cx, r: Value, bits: u32, s: bool) -> Value {
    let t = cx.f.ty(r);
    let (lo_f, hi_f) = if s {
        (-(2f64.powi(bits as i32 - 1)), 2f64.powi(bits as i32 - 1))
    } else {
        (0.0, 2f64.powi(bits as i32))
    };
    let it = if bits == 64 { Type::U64 } else { Type::U32 };
    let (min_i, max_i): (u64, u64) = if s {
        (
            (-(1i128 << (bits - 1))) as u64,
            ((1u128 << (bits - 1)) - 1) as u64,
        )
    } else {
        (0, ((1u128 << bits) - 1) as u64)
    };
    let mask = if it == Type::U64 {
        u64::MAX
    } else {
        0xffff_ffff
    };
    let lo = fc(cx, t, lo_f);
    let hi = fc(cx, t, hi_f);
    let too_big = cx.cmp(Op::FOGe, r, hi);
    let too_small = cx.cmp(Op::FOLt, r, lo);
    let nan = cx.emit(Op::IsNan, Type::Bool, &[r]);
    let safe_lo = cx.bin(Op::FMax, r, lo);
    let conv = cx.emit(if s { Op::FToS } else { Op::FToU }, it, &[safe_lo]);
    let (cmin, cmax, zero) = if it == Type::U64 {
        (cx.c64(min_i & mask), cx.c64(max_i & mask), cx.c64(0))
    } else {
        (
            cx.c32((min_i & mask) as u32),
            cx.c32((max_i & mask) as u32),
            cx.c32(0),
        )
    };
    let v = cx.sel(too_big, cmax, conv);
    let v = cx.sel(too_small, cmin, v);
    cx.sel(nan, zero, v)
}

/// I2I's result from the 32-bit `v` (signed when `ss`): clamped to the range of the
/// `db`-bit integer type (signed when `ds`) when `sat`, then its low `db` bits sign- or
/// zero-extended.
pub fn i2i_narrow(cx: &mut Cx, v: Value, ss: bool, db: u32, ds: bool, sat: bool) -> Value {
    let mut v = v;
    if sat {
        let (lo, hi): (i64, i64) = if ds {
            (-(1i64 << (db - 1)), (1i64 << (db - 1)) - 1)
        } else {
            (0, (1i64 << db) - 1)
        };
        if ss {
            let l = cx.c32(lo as i32 as u32);
            let h = cx.c32(hi as u32);
            v = cx.bin(Op::SMax, v, l);
            if hi <= i32::MAX as i64 {
                v = cx.bin(Op::SMin, v, h);
            }
        } else {
            let h = cx.c32(hi.min(u32::MAX as i64) as u32);
            v = cx.bin(Op::UMin, v, h);
        }
    }
    if db == 32 {
        v
    } else if ds {
        cx.sbits(v, 0, db)
    } else {
        cx.bits(v, 0, db)
    }
}

fn write_float(cx: &mut Cx, i: &Instr, t: Type, r: Value) {
    match t {
        Type::F64 => {
            let n = cx.rf(i, Field::Rd);
            cx.set_reg64(n, r);
        }
        Type::F16 => {
            let b = cx.emit(Op::Bitcast, Type::U32, &[r]);
            cx.set_rd(i, b);
        }
        _ => cx.set_rd(i, r),
    }
}

/// Reads the integer source of I2F/I2I: (value as U32 or U64, bits, signed).
fn isrc(cx: &mut Cx, i: &Instr) -> Result<(Value, u32, bool)> {
    let (bits, s) =
        itype(cx, i, Field::SrcType)?.ok_or_else(|| cx.unsupported(i, "source type"))?;
    if bits == 64 {
        let v = cx.src_b64(i)?;
        return Ok((v, 64, s));
    }
    let b = cx.src_b(i)?;
    // Byte selectors (8- and 32-bit forms, BSEL) and the upper half (16-bit forms, HSEL2).
    let sel = if let Some(h) = i.modifier_as::<mods::Hsel2>(Field::SelB) {
        if h == mods::Hsel2::H1 {
            16
        } else {
            0
        }
    } else {
        use mods::Bsel;
        match cx.modifier::<Bsel>(i, Field::SelB)? {
            Some(Bsel::B1) => 8,
            Some(Bsel::B2) => 16,
            Some(Bsel::B3) => 24,
            Some(Bsel::Default) | None => 0,
        }
    };
    let v = if bits == 32 {
        b
    } else if s {
        cx.sbits(b, sel, bits)
    } else {
        cx.bits(b, sel, bits)
    };
    Ok((v, bits, s))
}

/// Lifts one conversion.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    use Opcode as O;
    if i.flag(Field::Cc) && i.opcode() != O::I2i {
        return Err(cx.unsupported(i, "conversion writing CC"));
    }
    match i.opcode() {
        O::F2f => {
            let st =
                ftype(cx, i, Field::SrcType)?.ok_or_else(|| cx.unsupported(i, "source type"))?;
            let dt = ftype(cx, i, Field::DstType)?
                .ok_or_else(|| cx.unsupported(i, "destination type"))?;
            // An f16 source is read as its (exact) f32 value, modifiers applied there.
            let x = fsrc(cx, i, st)?;
            use mods::F2rnd;
            let m = cx
                .modifier::<F2rnd>(i, Field::Rnd)?
                .unwrap_or(F2rnd::Default);
            let mut r = if st == dt {
                // Same type: `.ROUND`/`.FLOOR`/`.CEIL`/`.TRUNC` round to an integral value.
                let r = match m {
                    F2rnd::Round => round_int(cx, x, Round::Rn),
                    F2rnd::Floor => round_int(cx, x, Round::Rm),
                    F2rnd::Ceil => round_int(cx, x, Round::Rp),
                    F2rnd::Trunc => round_int(cx, x, Round::Rz),
                    F2rnd::Default | F2rnd::Rm | F2rnd::Rp | F2rnd::Rz => x,
                };
                // F16 → F16: back to f16, exact (the value came from an f16, |x|, −x and
                // integral rounding of it are f16 values again).
                if dt == Type::F16 {
                    cx.emit(Op::FConvert(Round::Rn), Type::F16, &[r])
                } else {
                    r
                }
            } else {
                let rnd = match m {
                    F2rnd::Rm | F2rnd::Floor => Round::Rm,
                    F2rnd::Rp | F2rnd::Ceil => Round::Rp,
                    F2rnd::Rz | F2rnd::Trunc => Round::Rz,
                    F2rnd::Default | F2rnd::Round => Round::Rn,
                };
                cx.emit(Op::FConvert(rnd), dt, &[x])
            };
            if i.flag(Field::Sat) {
                if dt == Type::F16 {
                    let w = cx.emit(Op::FConvert(Round::Rn), Type::F32, &[r]);
                    let w = saturate(cx, w);
                    r = cx.emit(Op::FConvert(Round::Rn), Type::F16, &[w]);
                } else {
                    r = saturate(cx, r);
                }
            }
            if i.flag(Field::Ftz) && dt == Type::F32 {
                r = ftz(cx, r);
            }
            write_float(cx, i, dt, r);
        }
        O::F2i => {
            let st =
                ftype(cx, i, Field::SrcType)?.ok_or_else(|| cx.unsupported(i, "source type"))?;
            let (bits, s) = itype(cx, i, Field::DstType)?
                .ok_or_else(|| cx.unsupported(i, "destination type"))?;
            let x = fsrc(cx, i, st)?;
            use mods::F2irnd;
            let mode = match cx.modifier::<F2irnd>(i, Field::Rnd)? {
                Some(F2irnd::Floor) => Round::Rm,
                Some(F2irnd::Ceil) => Round::Rp,
                Some(F2irnd::Trunc) => Round::Rz,
                Some(F2irnd::Default) | None => Round::Rn,
            };
            let r = round_int(cx, x, mode);
            let v = f2i_clamp(cx, r, bits, s);
            let it = cx.f.ty(v);
            if it == Type::U64 {
                let n = cx.rf(i, Field::Rd);
                cx.set_reg64(n, v);
            } else {
                cx.set_rd(i, v);
            }
        }
        O::I2f => {
            let dt = ftype(cx, i, Field::DstType)?
                .ok_or_else(|| cx.unsupported(i, "destination type"))?;
            let (mut v, bits, s) = isrc(cx, i)?;
            if i.flag(Field::AbsB) {
                let z = if bits == 64 { cx.c64(0) } else { cx.c32(0) };
                let n = cx.un(Op::INeg, v);
                let neg = cx.cmp(Op::SLt, v, z);
                v = cx.sel(neg, n, v);
            }
            if i.flag(Field::NegB) {
                v = cx.un(Op::INeg, v);
            }
            let rnd = cx.rnd(i)?;
            let r = cx.emit(if s { Op::SToF(rnd) } else { Op::UToF(rnd) }, dt, &[v]);
            write_float(cx, i, dt, r);
        }
        O::I2i => {
            let (db, ds) = itype(cx, i, Field::DstType)?
                .ok_or_else(|| cx.unsupported(i, "destination type"))?;
            let (mut v, sb, ss) = isrc(cx, i)?;
            if sb == 64 || db == 64 {
                return Err(cx.unsupported(i, "64-bit I2I"));
            }
            if i.flag(Field::AbsB) {
                let z = cx.c32(0);
                let n = cx.un(Op::INeg, v);
                let neg = cx.cmp(Op::SLt, v, z);
                v = cx.sel(neg, n, v);
            }
            if i.flag(Field::NegB) {
                v = cx.un(Op::INeg, v);
            }
            let ss = ss || i.flag(Field::NegB);
            let r = i2i_narrow(cx, v, ss, db, ds, i.flag(Field::Sat));
            super::int::set_rd_logic(cx, i, r);
        }
        _ => return Err(cx.unsupported(i, "no semantics for this instruction")),
    }
    Ok(())
}
