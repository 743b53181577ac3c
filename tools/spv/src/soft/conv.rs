//! Conversions: f32 → f64 widening and a 32-bit integer → f64 (both exact), f64 → 64-bit
//! integer (truncating), f64 → integral f64 in a mode, and, through `round`, f64 → a narrower
//! format and a 64-bit integer → any format in a mode.

use super::{Fmt, Parts, Routine, MODE_RM, MODE_RN, MODE_RP, W};
use crate::emit::E;
use rspirv::spirv::Word;

/// The body of `Routine::Widen32`: the f64 bits of the f32 bits `p[0]`, exact (a NaN stays a
/// NaN with its payload, made quiet, as x86 and the native translation convert it).
pub(super) fn widen32_body(e: &mut E, p: &[Word]) -> Word {
    let mut w = W::new(e);
    let x = p[0];
    let s = w.andk(x, 0x8000_0000);
    let be = w.field(x, 23, 0xff);
    let f = w.andk(x, 0x7f_ffff);
    // Subnormals: the leading bit to 23, the exponent lowered by as many places.
    let den = w.eqk(be, 0);
    let lz = w.clz(f);
    let lz = w.addk(lz, -8);
    let k31 = w.k(31);
    let lzc = w.umin(lz, k31);
    let fnorm = w.shl(f, lzc);
    let fnorm = w.andk(fnorm, 0x7f_ffff);
    let frac = w.sel(den, fnorm, f);
    let k897 = w.k(897);
    let e_den = w.sub(k897, lz);
    let e_norm = w.addk(be, 896);
    let ex = w.sel(den, e_den, e_norm);
    let eh = w.shlk(ex, 20);
    let fh = w.shrk(frac, 3);
    let hi = w.or(s, eh);
    let hi = w.or(hi, fh);
    let lo = w.shlk(frac, 29);
    // ±0, and ∞ / NaN.
    let mag = w.andk(x, 0x7fff_ffff);
    let zero = w.z(mag);
    let hi = w.sel(zero, s, hi);
    let k0 = w.k(0);
    let lo = w.sel(zero, k0, lo);
    let special = w.eqk(be, 0xff);
    let fh = w.shrk(f, 3);
    let sh = w.ork(s, 0x7ff0_0000);
    let sh = w.or(sh, fh);
    let fnz = w.nz(f);
    let q = w.selk(fnz, 0x8_0000, 0);
    let sh = w.or(sh, q);
    let slo = w.shlk(f, 29);
    let hi = w.sel(special, sh, hi);
    let lo = w.sel(special, slo, lo);
    w.pair(lo, hi)
}

/// The body of `Routine::I2d`: the 32-bit integer `p[0]` (two's complement when `p[1]` is
/// non-zero) as f64 bits, exact.
pub(super) fn i2d_body(e: &mut E, p: &[Word]) -> Word {
    let mut w = W::new(e);
    let (x, signed) = (p[0], p[1]);
    let sb = w.shrk(x, 31);
    let sgn = w.nz(signed);
    let sbn = w.nz(sb);
    let neg = w.band(sgn, sbn);
    let k0 = w.k(0);
    let nx = w.sub(k0, x);
    let mag = w.sel(neg, nx, x);
    let n = w.clz(mag);
    let k31 = w.k(31);
    let nc = w.umin(n, k31);
    let m = w.shl(mag, nc);
    let k1054 = w.k(1054);
    let ex = w.sub(k1054, n);
    let eh = w.shlk(ex, 20);
    let fh = w.field(m, 11, 0xf_ffff);
    let su = w.b2u(neg);
    let sh = w.shlk(su, 31);
    let hi = w.or(sh, eh);
    let hi = w.or(hi, fh);
    let lo = w.shlk(m, 21);
    let zero = w.z(mag);
    let hi = w.sel(zero, k0, hi);
    let lo = w.sel(zero, k0, lo);
    w.pair(lo, hi)
}

/// The body of `Routine::D2i`: the f64 `p[0]` truncated toward zero to a 64-bit two's
/// complement integer (`uvec2`). Values of 2^64 and more, ∞ and NaN give unspecified bits
/// (the IR clamps and selects before converting).
pub(super) fn d2i_body(e: &mut E, p: &[Word]) -> Word {
    let mut w = W::new(e);
    let (lo, hi) = w.unpair(p[0]);
    let s = w.shrk(hi, 31);
    let be = w.field(hi, 20, 0x7ff);
    let f1 = w.andk(hi, 0xf_ffff);
    let m1 = w.ork(f1, 0x10_0000);
    let m = [lo, m1];
    // value = m · 2^k, k = be − 1075.
    let k = w.addk(be, -1075);
    let k0 = w.k(0);
    let left = w.sge(k, k0);
    let k63 = w.k(63);
    let l = w.umin(k, k63);
    let nk = w.sub(k0, k);
    let r = w.umin(nk, k63);
    let ml = w.shl_n(&m, l);
    let mr = w.shr_n(&m, r);
    let mag = w.sel_n(left, &ml, &mr);
    // |value| < 1.
    let k1023 = w.k(1023);
    let small = w.ult(be, k1023);
    let mag = w.sel_n(small, &[k0, k0], &mag);
    let neg = w.neg_n(&mag);
    let sn = w.nz(s);
    let v = w.sel_n(sn, &neg, &mag);
    w.pair(v[0], v[1])
}

/// The body of `Routine::Rint`: the f64 `p[0]` rounded to an integral value in mode `p[1]`
/// (a zero result keeps the sign; ∞ and values of 2^52 and more are returned as they are, a
/// NaN made quiet).
pub(super) fn rint_body(e: &mut E, p: &[Word]) -> Word {
    let mut w = W::new(e);
    let (lo, hi) = w.unpair(p[0]);
    let mode = p[1];
    let pa: Parts = w.parts(lo, hi);
    let s = pa.s;
    let sn = w.nz(s);
    let sp = w.bnot(sn);
    let nonzero = w.bnot(pa.zero);
    let is_rn = w.eqk(mode, MODE_RN);
    let is_rm = w.eqk(mode, MODE_RM);
    let is_rp = w.eqk(mode, MODE_RP);
    let k0 = w.k(0);
    // |a| < 1: ±0 or ±1.
    let k1022 = w.k(1022);
    let ge_half = w.eq(pa.be, k1022);
    let fnz = w.or(pa.f1, lo);
    let fnz = w.nz(fnz);
    let gt_half = w.band(ge_half, fnz);
    let neg_nz = w.band(sn, nonzero);
    let pos_nz = w.band(sp, nonzero);
    let f_ = w.kb(false);
    let one = w.bsel(is_rn, gt_half, f_);
    let one = w.bsel(is_rm, neg_nz, one);
    let one = w.bsel(is_rp, pos_nz, one);
    let sb = w.shlk(s, 31);
    let one_hi = w.ork(sb, 0x3ff0_0000);
    let small_hi = w.sel(one, one_hi, sb);
    // 1 ≤ |a| < 2^52: k = 1075 − be fraction bits (1..=52).
    let k1075 = w.k(1075);
    let k = w.sub(k1075, pa.be);
    let k63 = w.k(63);
    let kc = w.umin(k, k63);
    let onew = w.k(1);
    let unit = w.shl_n(&[onew, k0], kc);
    let mask = w.sub_n(&unit, &[onew, k0]).0;
    let km1 = w.addk(kc, -1);
    let half = w.shl_n(&[onew, k0], km1);
    let frac = [w.and(lo, mask[0]), w.and(hi, mask[1])];
    let nm0 = w.not(mask[0]);
    let nm1 = w.not(mask[1]);
    let tr = [w.and(lo, nm0), w.and(hi, nm1)];
    let fz = w.zero_n(&frac);
    let fnz = w.bnot(fz);
    let above = w.lt_n(&half, &frac);
    let at_half = w.sub_n(&frac, &half).0;
    let at_half = w.zero_n(&at_half);
    let odd = [w.and(tr[0], unit[0]), w.and(tr[1], unit[1])];
    let odd = w.zero_n(&odd);
    let odd = w.bnot(odd);
    let tie_up = w.band(at_half, odd);
    let rn_up = w.bor(above, tie_up);
    let up_p = w.band(sp, fnz);
    let up_m = w.band(sn, fnz);
    let up = w.bsel(is_rn, rn_up, f_);
    let up = w.bsel(is_rm, up_m, up);
    let up = w.bsel(is_rp, up_p, up);
    let bumped = w.add_n(&tr, &unit);
    let mid = w.sel_n(up, &bumped, &tr);
    // Pick by magnitude.
    let k1023 = w.k(1023);
    let small = w.ult(pa.be, k1023);
    let large = w.uge(pa.be, k1075);
    let rhi = w.sel(small, small_hi, mid[1]);
    let rlo = w.sel(small, k0, mid[0]);
    let qhi = w.quiet(hi);
    let qhi = w.sel(pa.nan, qhi, hi);
    let rhi = w.sel(large, qhi, rhi);
    let rlo = w.sel(large, lo, rlo);
    w.pair(rlo, rhi)
}

/// The body of `Routine::Narrow(f)`: the f64 `p[0]` rounded to format `f` in mode `p[1]`
/// (∞ and zeros keep their sign, a NaN keeps its sign and top payload bits, made quiet).
pub(super) fn narrow_body(e: &mut E, f: Fmt, p: &[Word]) -> Word {
    let mut w = W::new(e);
    let (lo, hi) = w.unpair(p[0]);
    let pa = w.parts(lo, hi);
    let (ex, m1, m0) = w.unpack(lo, &pa);
    // Bit 52 on bit 95.
    let a = w.shlk(m1, 11);
    let b = w.shrk(m0, 21);
    let m2 = w.or(a, b);
    let m1 = w.shlk(m0, 11);
    let k0 = w.k(0);
    let r =
        w.e.soft_call(Routine::Round(f), &[pa.s, ex, m2, m1, k0, p[1]]);
    let zero = w.zero_of(f, pa.s);
    let inf = w.inf_of(f, pa.s);
    let nan = w.nan_of(f, lo, hi);
    let v = w.sel_fmt(f, pa.zero, zero, r);
    let v = w.sel_fmt(f, pa.inf, inf, v);
    w.sel_fmt(f, pa.nan, nan, v)
}

/// The body of `Routine::Int(f)`: the 64-bit integer `p[1]:p[0]` (two's complement when
/// `p[2]` is non-zero) rounded to format `f` in mode `p[3]` (zero is +0).
pub(super) fn int_body(e: &mut E, f: Fmt, p: &[Word]) -> Word {
    let mut w = W::new(e);
    let (lo, hi, signed, mode) = (p[0], p[1], p[2], p[3]);
    let sb = w.shrk(hi, 31);
    let sgn = w.nz(signed);
    let sbn = w.nz(sb);
    let neg = w.band(sgn, sbn);
    let v = [lo, hi];
    let nv = w.neg_n(&v);
    let mag = w.sel_n(neg, &nv, &v);
    // The leading bit to 63 (bit 95 of the rounding frame).
    let lz = w.clz_n(&mag);
    let k63 = w.k(63);
    let sh = w.umin(lz, k63);
    let m = w.shl_n(&mag, sh);
    let ex = w.sub(k63, lz);
    let s = w.b2u(neg);
    let k0 = w.k(0);
    let r =
        w.e.soft_call(Routine::Round(f), &[s, ex, m[1], m[0], k0, mode]);
    let zero = w.zero_n(&mag);
    let pz = w.zero_of(f, k0);
    w.sel_fmt(f, zero, pz, r)
}
