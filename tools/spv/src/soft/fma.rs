//! `a · b + c` of f64 bit patterns, rounded once: the routine behind f64 add, multiply and
//! FMA, every f32 / f16 operation that the native translation rounds through f64, and
//! conversions to narrower formats and from 64-bit integers (module docs).
//!
//! The core works on finite operands in a 128-bit frame (four words), where bit 126 of a
//! frame `F` with exponent `X` weighs `2^X` (value `F · 2^(X − 126)`):
//! * the product of the two 53-bit significands (106 bits, four 32 × 32 multiplies) shifted
//!   left by 21, so its bit 104 lands on bit 125 (`X = ea + eb + 1`);
//! * the addend's significand shifted left by 74, bit 52 on bit 126 (`X = ec`).
//!
//! The frame with the smaller exponent is shifted right by the difference, its lost bits
//! jammed into bit 0; the two are added, or subtracted (the sign of the larger magnitude, a
//! negative difference negated). Neither frame reaches bit 127, so the sum fits. The result
//! is normalized (leading bit to 127) and its top 96 bits (the rest jammed) go to `round`.
//! Jamming is exact for rounding: a shift of two or more leaves at least 40 bits between the
//! jam bit and the round bit after the at most one bit of cancellation such a shift allows;
//! a shift of one or zero loses nothing.

use super::{Fmt, Routine, MODE_RM, W};
use crate::emit::E;
use rspirv::spirv::Word;

/// An exponent below any operand's, for a zero product or addend.
const NO_EXP: i32 = -100_000;

/// The body of `Routine::FmaCore`: `{sign, e, m2, m1, m0}` of the exact `a · b + c` (the
/// significand normalized as `round` wants it; all zero for an exact zero).
pub(super) fn core_body(e: &mut E, p: &[Word]) -> Word {
    let mut w = W::new(e);
    let (a0, a1) = w.unpair(p[0]);
    let (b0, b1) = w.unpair(p[1]);
    let (c0, c1) = w.unpair(p[2]);
    let pa = w.parts(a0, a1);
    let pb = w.parts(b0, b1);
    let pc = w.parts(c0, c1);
    let (ea, ma1, ma0) = w.unpack(a0, &pa);
    let (eb, mb1, mb0) = w.unpack(b0, &pb);
    let (ec, mc1, mc0) = w.unpack(c0, &pc);
    // The 106-bit product.
    let (l00, h00) = w.mul_wide(ma0, mb0);
    let (l01, h01) = w.mul_wide(ma0, mb1);
    let (l10, h10) = w.mul_wide(ma1, mb0);
    let (l11, h11) = w.mul_wide(ma1, mb1);
    let t = w.add(h00, l01);
    let k1 = w.ult(t, h00);
    let w1 = w.add(t, l10);
    let k2 = w.ult(w1, t);
    let s1 = w.add(h01, h10);
    let k1u = w.b2u(k1);
    let k2u = w.b2u(k2);
    let s1 = w.add(s1, k1u);
    let s1 = w.add(s1, k2u);
    let w2 = w.add(s1, l11);
    let k3 = w.ult(w2, l11);
    let k3u = w.b2u(k3);
    let w3 = w.add(h11, k3u);
    // Frames (little-endian words).
    let fp = [
        w.shlk(l00, 21),
        funnel(&mut w, w1, l00, 21),
        funnel(&mut w, w2, w1, 21),
        funnel(&mut w, w3, w2, 21),
    ];
    let zero = w.k(0);
    let fc = [zero, zero, w.shlk(mc0, 10), funnel(&mut w, mc1, mc0, 10)];
    let pz = w.bor(pa.zero, pb.zero);
    let xp = w.add(ea, eb);
    let xp = w.addk(xp, 1);
    let none = w.ki(NO_EXP);
    let xp = w.sel(pz, none, xp);
    let xc = w.sel(pc.zero, none, ec);
    let sp = w.xor(pa.s, pb.s);
    // Align the smaller frame to the larger.
    let pbig = w.sge(xp, xc);
    let big = w.sel_n(pbig, &fp, &fc);
    let small = w.sel_n(pbig, &fc, &fp);
    let x = w.sel(pbig, xp, xc);
    let xs = w.sel(pbig, xc, xp);
    let s_big = w.sel(pbig, sp, pc.s);
    let s_small = w.sel(pbig, pc.s, sp);
    let dist = w.sub(x, xs);
    let small = w.shr_jam_n(&small, dist);
    // Add or subtract the magnitudes.
    let sum = w.add_n(&big, &small);
    let (dif, borrow) = w.sub_n(&big, &small);
    let ndif = w.neg_n(&dif);
    let dif = w.sel_n(borrow, &ndif, &dif);
    let unlike = w.ne(s_big, s_small);
    let f = w.sel_n(unlike, &dif, &sum);
    let neg = w.band(unlike, borrow);
    let s = w.sel(neg, s_small, s_big);
    // Normalize: the leading bit to 127.
    let lz = w.clz_n(&f);
    let k127 = w.k(127);
    let sh = w.umin(lz, k127);
    let f = w.shl_n(&f, sh);
    let e_top = w.addk(x, 1);
    let e_top = w.sub(e_top, lz);
    let jam = w.nz(f[0]);
    let jam = w.b2u(jam);
    let m0 = w.or(f[1], jam);
    let st = w.e.soft_unrounded_ty();
    w.e.b
        .composite_construct(st, None, [s, e_top, f[3], f[2], m0])
        .expect("block")
}

/// `(hi << k) | (lo >> (32 − k))` for a constant `k` in 1..=31.
fn funnel(w: &mut W, hi: Word, lo: Word, k: u32) -> Word {
    let a = w.shlk(hi, k);
    let b = w.shrk(lo, 32 - k);
    w.or(a, b)
}

/// The body of `Routine::Fma(f)`: `a · b + c` rounded to `f` in mode `p[3]`, with IEEE 754's
/// special cases (NaN operands, ∞ · 0 and ∞ − ∞ invalid, ∞, exact zeros and their signs).
pub(super) fn body(e: &mut E, f: Fmt, p: &[Word]) -> Word {
    let core = e.soft_call(Routine::FmaCore, &p[..3]);
    let mut w = W::new(e);
    let mode = p[3];
    let (a0, a1) = w.unpair(p[0]);
    let (b0, b1) = w.unpair(p[1]);
    let (c0, c1) = w.unpair(p[2]);
    let pa = w.parts(a0, a1);
    let pb = w.parts(b0, b1);
    let pc = w.parts(c0, c1);
    let u = w.u;
    let part = |w: &mut W, i: u32| w.e.b.composite_extract(u, None, core, &[i]).expect("block");
    let (s, ex, m2, m1, m0) = (
        part(&mut w, 0),
        part(&mut w, 1),
        part(&mut w, 2),
        part(&mut w, 3),
        part(&mut w, 4),
    );
    let rounded = w.e.soft_call(Routine::Round(f), &[s, ex, m2, m1, m0, mode]);
    // Special operands.
    let sp = w.xor(pa.s, pb.s);
    let any_nan = w.bor(pa.nan, pb.nan);
    let any_nan = w.bor(any_nan, pc.nan);
    let pinf = w.bor(pa.inf, pb.inf);
    let pzero = w.bor(pa.zero, pb.zero);
    let inf_zero = w.band(pinf, pzero);
    let opp = w.ne(sp, pc.s);
    let inf_inf = w.band(pinf, pc.inf);
    let inf_inf = w.band(inf_inf, opp);
    let invalid = w.bor(inf_zero, inf_inf);
    let is_inf = w.bor(pinf, pc.inf);
    let inf_s = w.sel(pinf, sp, pc.s);
    // The first NaN operand, quiet.
    let n_lo = w.sel(pb.nan, b0, c0);
    let n_hi = w.sel(pb.nan, b1, c1);
    let n_lo = w.sel(pa.nan, a0, n_lo);
    let n_hi = w.sel(pa.nan, a1, n_hi);
    // An exact zero: +0 (−0 toward −∞) unless both product and addend are zeros of one sign.
    let exact0 = w.z(m2);
    let is_rm = w.eqk(mode, MODE_RM);
    let rm = w.b2u(is_rm);
    let both0 = w.band(pzero, pc.zero);
    let same = w.eq(sp, pc.s);
    let z_s = w.sel(same, sp, rm);
    let z_s = w.sel(both0, z_s, rm);
    let zero = w.zero_of(f, z_s);
    let inf = w.inf_of(f, inf_s);
    let dnan = w.default_nan(f);
    let nan = w.nan_of(f, n_lo, n_hi);
    let v = w.sel_fmt(f, exact0, zero, rounded);
    let v = w.sel_fmt(f, is_inf, inf, v);
    let v = w.sel_fmt(f, invalid, dnan, v);
    w.sel_fmt(f, any_nan, nan, v)
}
