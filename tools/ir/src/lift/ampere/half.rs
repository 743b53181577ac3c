//! Ampere packed half precision: HADD2, HMUL2, HFMA2, HSET2, HSETP2, HMNMX2. Lanes are Maxwell's
//! ([`crate::lift::half`]): computed in f32 (exact before the one rounding to f16) or as an
//! f16 FMA; `.F32` forms give the low lane's result as an f32 instead. Immediates are two
//! f16 (`Imm` the high lane, `Imm2` the low one: the 32 bits at 32..63 as a register holds
//! them).

use super::super::float::{fcmp, ftz, min_max, saturate};
use super::super::half::{f2h_bits, lane_bits, split_lanes, Swz};
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

/// The modifier fields (−x, |x|, selector) of source `k` (0 A, 1 B, 2 C).
fn mod_fields(k: usize) -> (Field, Field, Field) {
    [
        (Field::NegA, Field::AbsA, Field::SelA),
        (Field::NegB, Field::AbsB, Field::SelB),
        (Field::NegC, Field::AbsC, Field::SelC),
    ][k.min(2)]
}

/// Source `k` as the 32 bits of its two halves, before any modifier: a register, constant or
/// uniform register, or the two 16-bit immediates (`Imm` the high half).
fn packed(cx: &mut Cx, i: &Instr, k: usize) -> Result<Value> {
    Ok(match src(i, k) {
        Src::Imm(_) if i.has(Field::Imm2) => {
            let hi = i.raw(Field::Imm).unwrap_or(0) as u32 & 0xffff;
            let lo = i.raw(Field::Imm2).unwrap_or(0) as u32 & 0xffff;
            cx.c32(lo | (hi << 16))
        }
        _ => cx.asrc(i, k)?,
    })
}

/// Source `k` (0 A, 1 B, 2 C) as two f32 lanes (low, high), with its selector, FTZ, |x| and
/// −x.
fn lanes(cx: &mut Cx, i: &Instr, k: usize, flush: bool) -> Result<(Value, Value)> {
    let (neg, abs, sel) = mod_fields(k);
    let v = packed(cx, i, k)?;
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
        Some(Hfmaty::Bf16V2) => Err(cx.unsupported(i, "bf16x2 operands outside HFMA2")),
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
/// With `canon` (`.RELU`), a NaN lane is written as f16's canonical NaN 0x7fff (a conversion
/// to f16 need not keep a NaN's payload).
fn write(cx: &mut Cx, i: &Instr, lo: Value, hi: Value, flush: bool, f32: bool, canon: bool) {
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
    let mut l = lane_bits(cx, lo, sat, flush);
    let mut h = lane_bits(cx, hi, sat, flush);
    if canon {
        let q = cx.c32(0x7fff);
        for (bits, x) in [(&mut l, lo), (&mut h, hi)] {
            let nan = cx.emit(Op::IsNan, Type::Bool, &[x]);
            *bits = cx.sel(nan, q, *bits);
        }
    }
    let hs = cx.shl_c(h, 16);
    let r = cx.or(l, hs);
    cx.set_dst(i, r);
}

/// Lifts one packed-half instruction.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    use Opcode as O;
    let op = i.opcode();
    if op == O::Hfma2
        && (i.form_name().contains("BF16")
            || cx.modifier::<Hfmaty>(i, Field::Mode2)? == Some(Hfmaty::Bf16V2))
    {
        return hfma2_bf16(cx, i);
    }
    if op == O::Hmnmx2 {
        return hmnmx2(cx, i);
    }
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
            write(cx, i, l, h, fl, f32, false);
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
            write(cx, i, out[0], out[1], fl, f32, is_relu);
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

/// Source `k` (0 A, 1 B, 2 C) of a bf16x2 instruction as two f32 lanes (low, high): a bf16 is
/// the high half of an f32, so each lane is exact; selector, |x| and −x as for f16 (the
/// `.F32` selector, which would read an f32, is refused).
fn bf16_lanes(cx: &mut Cx, i: &Instr, k: usize) -> Result<(Value, Value)> {
    let (neg, abs, sel) = mod_fields(k);
    let v = packed(cx, i, k)?;
    let v = cx.cast(Type::U32, v);
    let l = cx.shl_c(v, 16);
    let mask = cx.c32(0xffff_0000);
    let h = cx.and(v, mask);
    let l = cx.cast(Type::F32, l);
    let h = cx.cast(Type::F32, h);
    let (mut lo, mut hi) = match swz(cx, i, sel)? {
        Swz::H1H0 => (l, h),
        Swz::H0H0 => (l, l),
        Swz::H1H1 => (h, h),
        Swz::F32 => return Err(cx.unsupported(i, "bf16x2 operand with the .F32 selector")),
    };
    for x in [&mut lo, &mut hi] {
        if i.flag(abs) {
            *x = cx.un(Op::FAbs, *x);
        }
        if i.flag(neg) {
            *x = cx.un(Op::FNeg, *x);
        }
    }
    Ok((lo, hi))
}

/// `x * y + z` of three bf16 values held in f32, rounded once to bf16 (to nearest even), as a
/// U32 holding the 16 bits; a NaN result is the canonical NaN 0x7fff.
///
/// The product of two bf16 (8-bit significands) is exact in f32 when it lies in
/// [2^-134, 2^128) (or is 0); the sum `s` and its exact error `e` (TwoSum) give the exact
/// `x·y + z`, which is rounded to odd at f32's 24 bits (`s`, or its neighbour towards zero,
/// with the last bit set when `e` ≠ 0) and then to nearest even at bf16's 8 bits: one correct
/// rounding, since 24 ≥ 2·8 + 2. Products outside that range lose bits in f32 before the
/// sum (not modelled: the result can then differ in the last bit, or be ∞ where x·y ≥ 2^128
/// is cancelled by z).
fn fma_bf16(cx: &mut Cx, x: Value, y: Value, z: Value) -> Value {
    let p = cx.emit(Op::FMul(Round::Rn), Type::F32, &[x, y]);
    let s = cx.emit(Op::FAdd(Round::Rn), Type::F32, &[p, z]);
    // TwoSum: e = (p - (s - bb)) + (z - bb), bb = s - p.
    let sub = |cx: &mut Cx, a: Value, b: Value| {
        let nb = cx.un(Op::FNeg, b);
        cx.emit(Op::FAdd(Round::Rn), Type::F32, &[a, nb])
    };
    let bb = sub(cx, s, p);
    let t = sub(cx, s, bb);
    let e1 = sub(cx, p, t);
    let e2 = sub(cx, z, bb);
    let e = cx.emit(Op::FAdd(Round::Rn), Type::F32, &[e1, e2]);
    // Round to odd: inexact (e ≠ 0; e is NaN when s is not finite) with an even last bit.
    let zf = cx.cf32(0.0);
    let inexact = cx.cmp(Op::FONe, e, zf);
    let sb = cx.cast(Type::U32, s);
    let eb = cx.cast(Type::U32, e);
    let one = cx.c32(1);
    let lsb = cx.and(sb, one);
    let zero = cx.c32(0);
    let even = cx.cmp(Op::IEq, lsb, zero);
    let fix = cx.and(inexact, even);
    let xs = cx.bin(Op::Xor, sb, eb);
    let sign = cx.c32(0x8000_0000);
    let opp = cx.and(xs, sign);
    let same = cx.cmp(Op::IEq, opp, zero);
    // Same sign: s is the truncation, set its last bit; else the truncation is one ulp
    // nearer zero (its last bit is then 1).
    let up = cx.or(sb, one);
    let down = cx.bin(Op::ISub, sb, one);
    let ro = cx.sel(same, up, down);
    let ro = cx.sel(fix, ro, sb);
    // Round to nearest even at bf16 (an ∞ stays ∞, a finite value past bf16's largest rounds
    // to ∞).
    let odd = cx.bits(ro, 16, 1);
    let k = cx.c32(0x7fff);
    let r = cx.add(ro, k);
    let r = cx.add(r, odd);
    let r = cx.shr_c(r, 16);
    let nan = cx.emit(Op::IsNan, Type::Bool, &[s]);
    let q = cx.c32(0x7fff);
    cx.sel(nan, q, r)
}

/// HFMA2.BF16_V2 (PTX `fma.rn{.relu}.bf16x2` and `.bf16`): each lane [`fma_bf16`]; `.RELU`
/// makes a negative result +0 (−0 stays, as for f16: the rounded result is compared with 0)
/// and a NaN the canonical NaN (0x7fff already).
fn hfma2_bf16(cx: &mut Cx, i: &Instr) -> Result<()> {
    let (fl, fmz) = fmz_modes(cx, i)?;
    if fl || fmz || i.flag(Field::Sat) {
        return Err(cx.unsupported(i, "bf16x2 with .FTZ, .FMZ or .SAT"));
    }
    if i.form_name().contains("RELU") {
        let p = i.pred(Field::Pc).map_or(7, |p| p.0);
        if p != 7 || i.flag(Field::NotC) {
            return Err(cx.unsupported(i, "HFMA2.RELU with a predicate operand"));
        }
    }
    let (al, ah) = bf16_lanes(cx, i, 0)?;
    let (bl, bh) = bf16_lanes(cx, i, 1)?;
    let (cl, ch) = bf16_lanes(cx, i, 2)?;
    let is_relu = i.form_name().contains("RELU");
    let mut out = [Value::NONE; 2];
    for (slot, (x, y, z)) in out.iter_mut().zip([(al, bl, cl), (ah, bh, ch)]) {
        let mut r = fma_bf16(cx, x, y, z);
        if is_relu {
            // Negative: the sign bit set, not NaN (0x7fff has it clear), not −0.
            let neg_lim = cx.c32(0x8000);
            let negative = cx.cmp(Op::UGt, r, neg_lim);
            let z = cx.c32(0);
            r = cx.sel(negative, z, r);
        }
        *slot = r;
    }
    let hs = cx.shl_c(out[1], 16);
    let r = cx.or(out[0], hs);
    cx.set_dst(i, r);
    Ok(())
}

/// Source `k`'s two lanes (low, high) as U32s holding their 16 raw bits after the selector
/// and before |x|, −x and FTZ: the sign bits `.XORSIGN` combines. The `.F32` selector (an f32
/// operand, no PTX form) is refused.
fn raw_lanes(cx: &mut Cx, i: &Instr, k: usize) -> Result<(Value, Value)> {
    let v = packed(cx, i, k)?;
    let v = cx.cast(Type::U32, v);
    let l = cx.bits(v, 0, 16);
    let h = cx.bits(v, 16, 16);
    Ok(match swz(cx, i, mod_fields(k).2)? {
        Swz::H1H0 => (l, h),
        Swz::H0H0 => (l, l),
        Swz::H1H1 => (h, h),
        Swz::F32 => return Err(cx.unsupported(i, "HMNMX2.XORSIGN with the .F32 selector")),
    })
}

/// HMNMX2 (PTX `min/max{.ftz}{.NaN}{.xorsign.abs}` on `.f16x2`, `.f16`, `.bf16x2`, `.bf16`):
/// per lane, the minimum (trailing predicate true; ptxas gives PT) or maximum (false: !PT) of
/// the operands as modified (selector, FTZ, |x|, −x), each an exact f32 (an f16 converted, a
/// bf16 the high half of an f32), by FMNMX's [`min_max`] (a NaN loses to a number, −0 < +0);
/// the result, one of the operands, goes back to 16 bits exactly. A NaN result (both
/// operands NaN; with `.NAN`, either) is the canonical NaN 0x7fff. `.XORSIGN`: the
/// magnitude of that result with the XOR of the lanes' raw sign bits (after the selector,
/// before |x|: PTX takes the signs before `.abs`), a NaN result staying 0x7fff. `.F32` (78)
/// and `.FTZ` with `.BF16_V2` have no PTX form and are refused.
fn hmnmx2(cx: &mut Cx, i: &Instr) -> Result<()> {
    use dmsh_isa::ampere::mods::Fmnmxmode as M;
    let bf16 = match cx.modifier::<Hfmaty>(i, Field::Mode2)? {
        Some(Hfmaty::F32) => return Err(cx.unsupported(i, "HMNMX2.F32")),
        Some(Hfmaty::Bf16V2) => true,
        Some(Hfmaty::Default) => false,
        None => i.form_name().contains("BF16"),
    };
    if i.flag(Field::DstType) {
        return Err(cx.unsupported(i, "HMNMX2.F32"));
    }
    let fl = i.flag(Field::Ftz);
    if bf16 && fl {
        return Err(cx.unsupported(i, "HMNMX2.BF16_V2.FTZ"));
    }
    let (nan, xorsign) = match cx.modifier::<M>(i, Field::Mode)? {
        Some(M::Default) | None => (false, false),
        Some(M::Nan) => (true, false),
        Some(M::Xorsign) => (false, true),
        Some(M::NanXorsign) => (true, true),
    };
    let (a, b) = if bf16 {
        (bf16_lanes(cx, i, 0)?, bf16_lanes(cx, i, 1)?)
    } else {
        (lanes(cx, i, 0, fl)?, lanes(cx, i, 1, fl)?)
    };
    let signs = if xorsign {
        let (al, ah) = raw_lanes(cx, i, 0)?;
        let (bl, bh) = raw_lanes(cx, i, 1)?;
        let m = cx.c32(0x8000);
        let sl = cx.bin(Op::Xor, al, bl);
        let sh = cx.bin(Op::Xor, ah, bh);
        Some((cx.and(sl, m), cx.and(sh, m)))
    } else {
        None
    };
    let p = cx.apred(i, Field::Pc, Field::NotC);
    let mut out = [Value::NONE; 2];
    for (k, (slot, (x, y))) in out.iter_mut().zip([(a.0, b.0), (a.1, b.1)]).enumerate() {
        let mn = min_max(cx, x, y, true);
        let mx = min_max(cx, x, y, false);
        let r = cx.sel(p, mn, mx);
        let mut bits = if bf16 {
            let u = cx.cast(Type::U32, r);
            cx.shr_c(u, 16)
        } else {
            f2h_bits(cx, r)
        };
        if let Some(s) = signs {
            let mag = cx.c32(0x7fff);
            let m = cx.and(bits, mag);
            bits = cx.or(m, if k == 0 { s.0 } else { s.1 });
        }
        let mut is_nan = cx.emit(Op::IsNan, Type::Bool, &[r]);
        if nan {
            let nx = cx.emit(Op::IsNan, Type::Bool, &[x]);
            let ny = cx.emit(Op::IsNan, Type::Bool, &[y]);
            let any = cx.or(nx, ny);
            is_nan = cx.or(is_nan, any);
        }
        let q = cx.c32(0x7fff);
        *slot = cx.sel(is_nan, q, bits);
    }
    let hs = cx.shl_c(out[1], 16);
    let r = cx.or(out[0], hs);
    cx.set_dst(i, r);
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::lift::{lifter, Abi, Arch, Config};
    use dmsh_isa::ampere;

    /// Every HMNMX2 operand form lifts, the uniform-register and bindless-constant ones too
    /// (ptxas emitted neither for the corpus kernels, which run the others); `.F32` and
    /// `.BF16_V2.FTZ` (no PTX form) are refused with an error. Words and texts from
    /// nvdisasm 13.5.
    #[test]
    fn hmnmx2_forms_lift() {
        let exit = ampere::Instr::build(ampere::Instr::form_id("EXIT").expect("EXIT"), &[])
            .expect("EXIT builds")
            .encode();
        let mut cfg = Config::compute(Abi::Cuda, [32, 1, 1]);
        cfg.arch = Arch::Ampere;
        let lift = |w: u128| {
            let mut code = w.to_le_bytes().to_vec();
            code.extend_from_slice(&exit.to_le_bytes());
            lifter(Arch::Ampere).lift_compute(&code, &cfg)
        };
        for (w, text) in [
            (0x000fc400038000000000000302047240, "HMNMX2 R4, R2, R3, PT"),
            (0x000fc4000b8000000000000302047c40, "HMNMX2 R4, R2, UR3, PT"),
            (
                0x000fc4000b8600004000000302047c40,
                "HMNMX2.NAN.XORSIGN R4, R2, |UR3|, PT",
            ),
            (
                0x000fc40003800000c0003c0002047840,
                "HMNMX2 R4, R2, -2, 1, PT",
            ),
            (
                0x000fc40007a000003f80c00002067840,
                "HMNMX2.BF16_V2 R6, R2, 1, -2, !PT",
            ),
            (
                0x000fc4000380000000005d0002087a40,
                "HMNMX2 R8, R2, c[0x0] [0x174], PT",
            ),
            (
                0x000fc4000b80000000005d0302047a40,
                "HMNMX2 R4, R2, cx[UR3] [0x174], PT",
            ),
        ] {
            let i = ampere::decode(w).expect("decodes");
            assert_eq!(i.print(0, 0), text);
            assert!(lift(w).is_ok(), "{text}: {:?}", lift(w).err());
        }
        let f32 = 0x000fc400038040000000000302047240u128;
        assert_eq!(
            ampere::decode(f32).expect("decodes").print(0, 0),
            "HMNMX2.F32 R4, R2, R3, PT"
        );
        assert!(lift(f32).is_err());
        let bf_ftz = 0x000fc40003a100000000000302047240u128;
        assert_eq!(
            ampere::decode(bf_ftz).expect("decodes").print(0, 0),
            "HMNMX2.BF16_V2.FTZ R4, R2, R3, PT"
        );
        assert!(lift(bf_ftz).is_err());
    }
}
