//! Ampere conversions: F2F, F2I, I2F, I2FP, F2IP, F2FP, I2I and FRND. The value rules are
//! Maxwell's ([`crate::lift::conv`]): integral rounding without GLSL round/trunc, F2I clamps
//! to the destination range and maps NaN to 0, I2I saturates. The source is the B operand
//! (fields `NegB`/`AbsB`/`SelB`; the form's only source slot, [`super::operand`]: a
//! register, uniform register, constant or immediate); which types a
//! form converts is its `SrcType`/`DstType` field, or, where the form prints a fixed type,
//! the form itself.

use super::super::conv::{f2i_clamp, i2i_narrow, round_int};
use super::super::float::{fsrc, ftz};
use super::super::half::{f2h_bits, h2f};
use super::super::{Cx, Result};
use super::float::rnd;
use crate::ir::{Op, Round, Type, Value};
use dmsh_isa::ampere::mods;
use dmsh_isa::ampere::{Instr, Opcode};
use dmsh_isa::Field;

/// A float format of a conversion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fmt {
    F16,
    Bf16,
    F32,
    F64,
}

/// The 16 bits (zero-extended in a U32) of the half of `v` that the `SelB` field picks
/// (`mods::Cvthsel`: nothing for the low half, `.H1` for the high one).
pub(super) fn half_of(cx: &mut Cx, i: &Instr, v: Value) -> Result<Value> {
    use mods::Cvthsel as H;
    let off = match cx.modifier::<H>(i, Field::SelB)? {
        Some(H::Default) | None => 0,
        Some(H::H1) => 16,
        Some(h) => return Err(cx.unsupported(i, format!("half selector {h}"))),
    };
    Ok(cx.bits(v, off, 16))
}

/// The form name's suffix after the opcode (`F2I_64_R32` → `64_R32`).
fn form_tail(i: &Instr) -> &'static str {
    let n = i.form_name();
    n.split_once('_').map_or("", |(_, t)| t)
}

/// Reads float source B of format `t` as f32 (F16, F32) or f64, with FTZ (f32 only) and
/// |x|, −x.
fn fsrc_b(cx: &mut Cx, i: &Instr, t: Fmt) -> Result<Value> {
    let (neg, abs) = (i.flag(Field::NegB), i.flag(Field::AbsB));
    Ok(match t {
        Fmt::F64 => {
            let v = cx.asrc64(i, 0)?;
            super::super::double::dsrc(cx, v, neg, abs)
        }
        Fmt::F16 | Fmt::Bf16 => {
            let v = cx.asrc(i, 0)?;
            let h = half_of(cx, i, v)?;
            let x = h2f(cx, h);
            fsrc(cx, x, neg, abs, false)
        }
        Fmt::F32 => {
            let v = cx.asrc(i, 0)?;
            fsrc(cx, v, neg, abs, i.flag(Field::Ftz))
        }
    })
}

/// Writes a float result of format `t` (an f16 or bf16 as 16 bits in the low half).
fn write(cx: &mut Cx, i: &Instr, t: Fmt, r: Value) {
    match t {
        Fmt::F64 => cx.set_dst64(i, r),
        _ => cx.set_dst(i, r),
    }
}

/// An f32 rounded to bfloat16 by `rnd` (the high 16 bits, rounded on the low 16), as its 16
/// bits in a U32; NaN gives the canonical 0x7fff.
fn bf16_bits(cx: &mut Cx, x: Value, rnd: Round) -> Value {
    let b = cx.cast(Type::U32, x);
    let t = cx.shr_c(b, 16);
    let low = cx.c32(0xffff);
    let rem = cx.and(b, low);
    let z = cx.c32(0);
    let inexact = cx.cmp(Op::INe, rem, z);
    let sign = cx.shr_c(b, 31);
    let neg = cx.cmp(Op::INe, sign, z);
    let up = match rnd {
        Round::Rz => cx.cbool(false),
        Round::Rp => {
            let pos = cx.not(neg);
            cx.and(inexact, pos)
        }
        Round::Rm => cx.and(inexact, neg),
        Round::Rn => {
            let half = cx.c32(0x8000);
            let above = cx.cmp(Op::UGt, rem, half);
            let tie = cx.cmp(Op::IEq, rem, half);
            let one = cx.c32(1);
            let odd0 = cx.and(t, one);
            let odd = cx.cmp(Op::INe, odd0, z);
            let tie_up = cx.and(tie, odd);
            cx.or(above, tie_up)
        }
    };
    let one = cx.c32(1);
    let t1 = cx.add(t, one);
    let r = cx.sel(up, t1, t);
    let nan = cx.emit(Op::IsNan, Type::Bool, &[x]);
    let q = cx.c32(0x7fff);
    cx.sel(nan, q, r)
}

/// `x` (f32 or f64) converted to format `t` with rounding `rnd` (exact widening); f16 and
/// bf16 as their 16 bits in a U32.
fn convert(cx: &mut Cx, x: Value, t: Fmt, rnd: Round) -> Value {
    let xt = cx.f.ty(x);
    match t {
        Fmt::F16 if xt == Type::F64 && rnd == Round::Rn => {
            // One rounding, f64 → f16 (lavapipe's direct conversion rounds twice, through
            // f32): truncate to f32 and make an inexact result odd ("round to odd", exact
            // for the 13 bits f32 keeps beyond f16), then round that to f16.
            let t = cx.emit(Op::FConvert(Round::Rz), Type::F32, &[x]);
            let back = cx.emit(Op::FConvert(Round::Rn), Type::F64, &[t]);
            let inexact = cx.cmp(Op::FONe, back, x);
            let tb = cx.cast(Type::U32, t);
            let one = cx.c32(1);
            let odd = cx.or(tb, one);
            let tb = cx.sel(inexact, odd, tb);
            let t = cx.cast(Type::F32, tb);
            let h = cx.emit(Op::FConvert(Round::Rn), Type::F16, &[t]);
            f2h_bits(cx, h)
        }
        Fmt::F16 => {
            let h = cx.emit(Op::FConvert(rnd), Type::F16, &[x]);
            f2h_bits(cx, h)
        }
        Fmt::Bf16 => {
            let f = if xt == Type::F32 {
                x
            } else {
                cx.emit(Op::FConvert(rnd), Type::F32, &[x])
            };
            bf16_bits(cx, f, rnd)
        }
        Fmt::F32 if xt == Type::F32 => x,
        Fmt::F32 => cx.emit(Op::FConvert(rnd), Type::F32, &[x]),
        Fmt::F64 if xt == Type::F64 => x,
        Fmt::F64 => cx.emit(Op::FConvert(Round::Rn), Type::F64, &[x]),
    }
}

fn f2f(cx: &mut Cx, i: &Instr) -> Result<()> {
    let (st, dt) = match form_tail(i) {
        "R" => {
            let d = match cx.modifier::<mods::F2fdst32>(i, Field::DstType)? {
                Some(mods::F2fdst32::F16) => Fmt::F16,
                Some(mods::F2fdst32::Bf16) => Fmt::Bf16,
                None => return Err(cx.unsupported(i, "destination type")),
            };
            (Fmt::F32, d)
        }
        "R16" => (Fmt::F16, Fmt::F32),
        "64_R32" | "64_C32" => (Fmt::F32, Fmt::F64),
        "64_R16" => (Fmt::F16, Fmt::F64),
        "64_R64" | "64_C64" => {
            let d = match cx.modifier::<mods::F2fdst64>(i, Field::DstType)? {
                Some(mods::F2fdst64::F16) => Fmt::F16,
                Some(mods::F2fdst64::F32) => Fmt::F32,
                None => return Err(cx.unsupported(i, "destination type")),
            };
            (Fmt::F64, d)
        }
        _ => return Err(cx.unsupported(i, "F2F form")),
    };
    let x = fsrc_b(cx, i, st)?;
    let mut r = convert(cx, x, dt, rnd(cx, i)?);
    if dt == Fmt::F32 && i.flag(Field::Ftz) {
        r = ftz(cx, r);
    }
    write(cx, i, dt, r);
    Ok(())
}

/// F2I's and FRND's direction (`mods::F2irnd`): to nearest even, floor, ceil, trunc.
fn int_round(cx: &Cx, i: &Instr) -> Result<Round> {
    use mods::F2irnd as R;
    Ok(match cx.modifier::<R>(i, Field::Rnd)? {
        Some(R::Floor) => Round::Rm,
        Some(R::Ceil) => Round::Rp,
        Some(R::Trunc) => Round::Rz,
        Some(R::Default) | None => Round::Rn,
    })
}

/// F2I's destination (bits, signed) from whichever `DstType` enum the form has.
fn f2i_dst(cx: &Cx, i: &Instr) -> Result<(u32, bool)> {
    if let Some(d) = i.modifier_as::<mods::F2idst>(Field::DstType) {
        use mods::F2idst as D;
        return Ok(match d {
            D::U8 => (8, false),
            D::S8 => (8, true),
            D::U16 => (16, false),
            D::S16 => (16, true),
            D::U32 => (32, false),
            D::Default => (32, true),
            d => return Err(cx.unsupported(i, format!("destination type {d}"))),
        });
    }
    if let Some(d) = i.modifier_as::<mods::F2idst64>(Field::DstType) {
        use mods::F2idst64 as D;
        return Ok(match d {
            D::U8 => (8, false),
            D::S8 => (8, true),
            D::U16 => (16, false),
            D::S16 => (16, true),
            D::U32 => (32, false),
            D::Default => (32, true),
            D::U64 => (64, false),
            D::S64 => (64, true),
        });
    }
    match cx.modifier::<mods::F2idst64w>(i, Field::DstType)? {
        Some(mods::F2idst64w::U64) => Ok((64, false)),
        Some(mods::F2idst64w::S64) => Ok((64, true)),
        None => Err(cx.unsupported(i, "destination type")),
    }
}

fn f2i(cx: &mut Cx, i: &Instr) -> Result<()> {
    let st = match form_tail(i) {
        "R" | "C" | "64_R32" | "64_C32" => Fmt::F32,
        "R16" | "C16" => Fmt::F16,
        "64_R" | "64_C" => Fmt::F64,
        _ => return Err(cx.unsupported(i, "F2I form")),
    };
    let (bits, s) = f2i_dst(cx, i)?;
    let x = fsrc_b(cx, i, st)?;
    let r = round_int(cx, x, int_round(cx, i)?);
    let v = f2i_clamp(cx, r, bits, s);
    if bits == 64 {
        cx.set_dst64(i, v);
    } else {
        cx.set_dst(i, v);
    }
    Ok(())
}

/// FRND: rounds to an integral value of the same format (`.F16` forms: the half `SelB`
/// picks, the result an f16 in the low half; `FRND.F64`: a register pair).
pub(super) fn frnd(cx: &mut Cx, i: &Instr) -> Result<()> {
    let t = match form_tail(i) {
        "R" | "C" => Fmt::F32,
        "R16" => Fmt::F16,
        "64_R" | "64_C" => match cx.modifier::<mods::Frndty64>(i, Field::DstType)? {
            Some(mods::Frndty64::F64) => Fmt::F64,
            d => {
                let d = d.map_or("", mods::Frndty64::name);
                return Err(cx.unsupported(i, format!("FRND type {d}")));
            }
        },
        _ => return Err(cx.unsupported(i, "FRND form")),
    };
    let x = fsrc_b(cx, i, t)?;
    let r = round_int(cx, x, int_round(cx, i)?);
    let r = match t {
        Fmt::F16 => f2h_bits(cx, r),
        Fmt::F32 if i.flag(Field::Ftz) => ftz(cx, r),
        _ => r,
    };
    write(cx, i, t, r);
    Ok(())
}

/// I2F's source (bits, signed) from whichever `SrcType` enum the form has; the immediate
/// forms name it (`I2F.U32` and the signed `I2F_I_S32`).
fn i2f_src(cx: &Cx, i: &Instr) -> Result<(u32, bool)> {
    if let Some(t) = i.modifier_as::<mods::I2fsrc32>(Field::SrcType) {
        return Ok((32, t == mods::I2fsrc32::Default));
    }
    if let Some(t) = i.modifier_as::<mods::I2fsrc64>(Field::SrcType) {
        return Ok((64, t == mods::I2fsrc64::S64));
    }
    if let Some(t) = i.modifier_as::<mods::Int16>(Field::SrcType) {
        return Ok((16, t == mods::Int16::S16));
    }
    if let Some(t) = i.modifier_as::<mods::Int8>(Field::SrcType) {
        return Ok((8, t == mods::Int8::S8));
    }
    match i.form_name() {
        "I2F_I" => Ok((32, false)),
        "I2F_I_S32" => Ok((32, true)),
        _ => Err(cx.unsupported(i, "source type")),
    }
}

/// I2F's destination from whichever `DstType` enum the form has; the forms printing `.F64`
/// have none.
fn i2f_dst(cx: &Cx, i: &Instr) -> Result<Fmt> {
    if let Some(d) = i.modifier_as::<mods::I2fdst>(Field::DstType) {
        return match d {
            mods::I2fdst::F16 => Ok(Fmt::F16),
            mods::I2fdst::Default => Ok(Fmt::F32),
            d => Err(cx.unsupported(i, format!("destination type {d}"))),
        };
    }
    if let Some(d) = i.modifier_as::<mods::I2fdst64>(Field::DstType) {
        return Ok(match d {
            mods::I2fdst64::F16 => Fmt::F16,
            mods::I2fdst64::Default => Fmt::F32,
            mods::I2fdst64::F64 => Fmt::F64,
        });
    }
    if form_tail(i).starts_with("64_") {
        return Ok(Fmt::F64);
    }
    Err(cx.unsupported(i, "destination type"))
}

/// The integer source B of I2F: the type's bits (a 16-bit source's half, an 8-bit source's
/// byte as `SelB` picks), extended to U32, or a U64 for 64-bit sources.
fn isrc(cx: &mut Cx, i: &Instr, bits: u32, s: bool) -> Result<Value> {
    if bits == 64 {
        return cx.asrc64(i, 0);
    }
    let v = cx.asrc(i, 0)?;
    let off = match bits {
        16 => match cx.modifier::<mods::Cvthsel>(i, Field::SelB)? {
            Some(mods::Cvthsel::Default) | None => 0,
            Some(mods::Cvthsel::H1) => 16,
            Some(h) => return Err(cx.unsupported(i, format!("half selector {h}"))),
        },
        8 => match cx.modifier::<mods::Bsel>(i, Field::SelB)? {
            Some(mods::Bsel::Default) | None => 0,
            Some(mods::Bsel::B1) => 8,
            Some(mods::Bsel::B2) => 16,
            Some(mods::Bsel::B3) => 24,
        },
        _ => return Ok(v),
    };
    Ok(if s {
        cx.sbits(v, off, bits)
    } else {
        cx.bits(v, off, bits)
    })
}

/// An integer (U32 or U64; signed when `s`) converted to format `t` with rounding `rnd`.
fn int_to_float(cx: &mut Cx, v: Value, s: bool, t: Fmt, rnd: Round) -> Value {
    let o = if s { Op::SToF(rnd) } else { Op::UToF(rnd) };
    match t {
        Fmt::F16 => {
            let h = cx.emit(o, Type::F16, &[v]);
            f2h_bits(cx, h)
        }
        Fmt::F64 => cx.emit(o, Type::F64, &[v]),
        _ => cx.emit(o, Type::F32, &[v]),
    }
}

fn i2f(cx: &mut Cx, i: &Instr) -> Result<()> {
    let (bits, s) = i2f_src(cx, i)?;
    let dt = i2f_dst(cx, i)?;
    let v = isrc(cx, i, bits, s)?;
    let r = int_to_float(cx, v, s, dt, rnd(cx, i)?);
    write(cx, i, dt, r);
    Ok(())
}

fn i2fp(cx: &mut Cx, i: &Instr) -> Result<()> {
    use mods::{I2fpdst, I2fprnd, I2fpsrc};
    if cx.modifier::<I2fpdst>(i, Field::DstType)? != Some(I2fpdst::F32) {
        return Err(cx.unsupported(i, "I2FP destination type"));
    }
    let s = match cx.modifier::<I2fpsrc>(i, Field::SrcType)? {
        Some(I2fpsrc::U32) => false,
        Some(I2fpsrc::S32) => true,
        _ => return Err(cx.unsupported(i, "I2FP source type")),
    };
    let rnd = match cx.modifier::<I2fprnd>(i, Field::Rnd)? {
        Some(I2fprnd::Default) | None => Round::Rn,
        Some(I2fprnd::Rz) => Round::Rz,
        Some(r) => return Err(cx.unsupported(i, format!("I2FP rounding {r}"))),
    };
    let v = cx.asrc(i, 0)?;
    let r = int_to_float(cx, v, s, Fmt::F32, rnd);
    cx.set_dst(i, r);
    Ok(())
}

/// F2IP: converts B to an 8-bit integer (F2I's rules: rounded, clamped, NaN → 0) in byte 0.
/// Where A and C go in the packed result is not verified against hardware, so only the form
/// ptxas emits for a single conversion (A = C = RZ, giving zero bytes above) is lifted.
fn f2ip(cx: &mut Cx, i: &Instr) -> Result<()> {
    use super::operand::{src, Src};
    use mods::{F2ipdst, F2iprnd};
    if src(i, 0) != Src::Reg(255) || src(i, 2) != Src::Reg(255) || i.flag(Field::SelC) {
        return Err(cx.unsupported(i, "F2IP packing into A / C other than RZ"));
    }
    let s = match cx.modifier::<F2ipdst>(i, Field::DstType)? {
        Some(F2ipdst::U8) => false,
        Some(F2ipdst::S8) => true,
        _ => return Err(cx.unsupported(i, "F2IP destination type")),
    };
    let mode = match cx.modifier::<F2iprnd>(i, Field::Rnd)? {
        Some(F2iprnd::Default) | None => Round::Rn,
        Some(F2iprnd::Trunc) => Round::Rz,
        Some(r) => return Err(cx.unsupported(i, format!("F2IP rounding {r}"))),
    };
    let v = cx.asrc(i, 1)?;
    let mut x = cx.cast(Type::F32, v);
    if i.flag(Field::Relu) {
        let z = cx.cf32(0.0);
        let neg = cx.cmp(Op::FOLt, x, z);
        x = cx.sel(neg, z, x);
    }
    let r = round_int(cx, x, mode);
    let q = f2i_clamp(cx, r, 8, s);
    let r = cx.bits(q, 0, 8);
    cx.set_dst(i, r);
    Ok(())
}

/// F2FP.PACK_AB: A converted into the high half, B into the low half (f16, or bf16 with
/// `.BF16`), rounded to nearest or toward zero; `.RELU` makes negative inputs +0,
/// `.SATFINITE` clamps to the largest finite value (NaN stays NaN).
fn f2fp(cx: &mut Cx, i: &Instr) -> Result<()> {
    use mods::F2fprnd;
    let rnd = match cx.modifier::<F2fprnd>(i, Field::Rnd)? {
        Some(F2fprnd::Default) | None => Round::Rn,
        Some(F2fprnd::Rz) => Round::Rz,
    };
    let t = if i.flag(Field::Bf16) {
        Fmt::Bf16
    } else {
        Fmt::F16
    };
    let mut h = [Value::NONE; 2];
    for (k, slot) in h.iter_mut().enumerate() {
        let v = cx.asrc(i, k)?;
        let mut x = cx.cast(Type::F32, v);
        if i.flag(Field::Relu) {
            let z = cx.cf32(0.0);
            let neg = cx.cmp(Op::FOLt, x, z);
            x = cx.sel(neg, z, x);
        }
        if i.flag(Field::Sat) {
            let m = if t == Fmt::F16 {
                65504.0
            } else {
                f32::from_bits(0x7f7f_0000)
            };
            let hi = cx.cf32(m);
            let lo = cx.cf32(-m);
            let over = cx.cmp(Op::FOGt, x, hi);
            x = cx.sel(over, hi, x);
            let under = cx.cmp(Op::FOLt, x, lo);
            x = cx.sel(under, lo, x);
        }
        *slot = convert(cx, x, t, rnd);
    }
    let hs = cx.shl_c(h[0], 16);
    let r = cx.or(hs, h[1]);
    cx.set_dst(i, r);
    Ok(())
}

/// I2I: the signed 32-bit B saturated to the 8- or 16-bit destination type.
fn i2i(cx: &mut Cx, i: &Instr) -> Result<()> {
    use mods::I2iDst as D;
    let (db, ds) = match cx.modifier::<D>(i, Field::DstType)? {
        Some(D::U8) => (8, false),
        Some(D::S8) => (8, true),
        Some(D::U16) => (16, false),
        Some(D::S16) => (16, true),
        None => return Err(cx.unsupported(i, "destination type")),
    };
    let v = cx.asrc(i, 0)?;
    let r = i2i_narrow(cx, v, true, db, ds, true);
    cx.set_dst(i, r);
    Ok(())
}

/// Lifts one conversion.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    use Opcode as O;
    match i.opcode() {
        O::F2f => f2f(cx, i),
        O::F2i => f2i(cx, i),
        O::I2f => i2f(cx, i),
        O::I2fp => i2fp(cx, i),
        O::F2ip => f2ip(cx, i),
        O::F2fp => f2fp(cx, i),
        O::I2i => i2i(cx, i),
        _ => Err(cx.unsupported(i, "not a conversion")),
    }
}

#[cfg(test)]
mod tests {
    use crate::lift::{lifter, Abi, Arch, Config, LiftError};
    use dmsh_isa::ampere::{self, Opcode};
    use dmsh_isa::Isa;

    /// Every form of the float, double, half and conversion families, with random fields
    /// (seeded), lifts or is refused with a typed error at its offset: never a panic, and
    /// never a modifier read with another enum than the form's (a lifter bug).
    #[test]
    fn family_forms_lift_or_refuse() {
        use Opcode as O;
        let mine = |o: Opcode| {
            matches!(
                o,
                O::Fadd
                    | O::Fmul
                    | O::Ffma
                    | O::Fsetp
                    | O::Fset
                    | O::Fsel
                    | O::Fmnmx
                    | O::Mufu
                    | O::Frnd
                    | O::Fchk
                    | O::Fswzadd
                    | O::Dadd
                    | O::Dmul
                    | O::Dfma
                    | O::Dsetp
                    | O::Hadd2
                    | O::Hmul2
                    | O::Hfma2
                    | O::Hset2
                    | O::Hsetp2
                    | O::Hmnmx2
                    | O::F2f
                    | O::F2i
                    | O::I2f
                    | O::I2fp
                    | O::F2ip
                    | O::F2fp
                    | O::I2i
            )
        };
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed >> 12;
            seed ^= seed << 25;
            seed ^= seed >> 27;
            seed.wrapping_mul(0x2545_f491_4f6c_dd1d)
        };
        let exit = ampere::Instr::build(ampere::Instr::form_id("EXIT").expect("EXIT"), &[])
            .expect("EXIT builds")
            .encode();
        let mut cfg = Config::compute(Abi::Cuda, [32, 1, 1]);
        cfg.arch = Arch::Ampere;
        let (mut lifted, mut forms) = (0, 0);
        for f in ampere::Ampere::table().forms.iter() {
            if !mine(f.opcode) {
                continue;
            }
            forms += 1;
            for _ in 0..40 {
                let w = ((next() as u128) << 64 | next() as u128) & !f.mask | f.value;
                // Guard PT, no scheduling bits (the word must decode as this form).
                let w = w & !(0xf000 | (0x7f_ffffu128 << 105)) | 0x7000;
                if ampere::decode(w).is_err() {
                    continue;
                }
                let mut code = w.to_le_bytes().to_vec();
                code.extend_from_slice(&exit.to_le_bytes());
                match lifter(Arch::Ampere).lift_compute(&code, &cfg) {
                    Ok(_) => lifted += 1,
                    Err(LiftError::ModifierEnum {
                        mnemonic, field, ..
                    }) => {
                        panic!("{mnemonic}: field {field} read with the wrong enum")
                    }
                    Err(e) => assert!(!e.to_string().is_empty()),
                }
            }
        }
        assert!(
            forms > 100 && lifted > 1000,
            "{forms} forms, {lifted} lifted"
        );
    }
}
