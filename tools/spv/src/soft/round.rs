//! Rounding to a format: `round(sign, e, m2, m1, m0, mode)`.
//!
//! The value is `(−1)^sign · m · 2^(e − 95)` for the 96-bit `m = m2:m1:m0` with bit 95 set
//! (any bits below it that were dropped earlier are ORed into bit 0: they only decide
//! inexactness). It is rounded to the format's precision `p` as IEEE 754 says: a result
//! below the normal range is shifted right first (subnormal; its bits jammed likewise), the
//! `p` bits are rounded in the mode (to nearest even: the round bit and then the sticky bits
//! or the last bit decide; toward ±∞: up when inexact and the sign agrees; toward zero:
//! never), the exponent field is added to the significand so that a carry out of the
//! significand steps the exponent (and a subnormal that rounds up becomes the smallest
//! normal), and a result at or past the exponent field's maximum overflows to ∞ or to the
//! largest finite value, as the mode says.

use super::{Fmt, MODE_RM, MODE_RN, MODE_RP, W};
use crate::emit::E;
use rspirv::spirv::Word;

/// A format's precision, exponent bias, width and largest biased exponent.
struct Spec {
    p: u32,
    bias: i32,
    width: u32,
    emax_field: u32,
}

fn spec(f: Fmt) -> Spec {
    match f {
        Fmt::F64 => Spec {
            p: 53,
            bias: 1023,
            width: 64,
            emax_field: 0x7ff,
        },
        Fmt::F32 => Spec {
            p: 24,
            bias: 127,
            width: 32,
            emax_field: 0xff,
        },
        Fmt::F16 => Spec {
            p: 11,
            bias: 15,
            width: 16,
            emax_field: 0x1f,
        },
    }
}

/// The body of `Routine::Round(f)`: returns the bits (`uvec2` for f64, else `u32`).
pub(super) fn body(e: &mut E, f: Fmt, p: &[Word]) -> Word {
    let sp = spec(f);
    let mut w = W::new(e);
    let (s, ex, mode) = (p[0], p[1], p[5]);
    let m = [p[4], p[3], p[2]];
    // Biased exponent; below 1 the value is shifted right into the subnormal range.
    let be = w.addk(ex, sp.bias);
    let one = w.k(1);
    let den = w.sub(one, be);
    let zero = w.k(0);
    let den = w.smax(den, zero);
    let m = w.shr_jam_n(&m, den);
    let be1 = w.smax(be, one);
    // The p-bit significand, the round bit and the sticky bits below it (bit 95 down).
    let top = 96 - sp.p; // the significand's lowest bit
    let (sig, rbit, sticky) = split(&mut w, &m, top);
    let lsb = w.andk(sig[0], 1);
    let lsb = w.nz(lsb);
    let r = w.nz(rbit);
    let inexact = w.bor(r, sticky);
    // The increment: to nearest even, or away from zero in the direction the mode says.
    let sl = w.bor(sticky, lsb);
    let rn_inc = w.band(r, sl);
    let sneg = w.nz(s);
    let spos = w.bnot(sneg);
    let is_rn = w.eqk(mode, MODE_RN);
    let is_rm = w.eqk(mode, MODE_RM);
    let is_rp = w.eqk(mode, MODE_RP);
    let f_ = w.kb(false);
    let up = w.bsel(is_rm, sneg, f_);
    let up = w.bsel(is_rp, spos, up);
    let dir_inc = w.band(up, inexact);
    let inc = w.bsel(is_rn, rn_inc, dir_inc);
    let inc = w.b2u(inc);
    // Overflow goes to ∞ when rounding to nearest or away from zero, else to the largest
    // finite value.
    let to_inf = w.bor(is_rn, up);
    let emax = w.ki(sp.emax_field as i32);
    let big = w.sge(be, emax);
    let e_field = w.addk(be1, -1);
    match f {
        Fmt::F64 => {
            let eh = w.shlk(e_field, 20);
            let hi = w.add(eh, sig[1]);
            let lo = w.add(sig[0], inc);
            let carry = w.ult(lo, sig[0]);
            let c = w.b2u(carry);
            let hi = w.add(hi, c);
            let inf_hi = w.k(0x7ff0_0000);
            let past = w.uge(hi, inf_hi);
            let ovf = w.bor(big, past);
            let o_hi = w.selk(to_inf, 0x7ff0_0000, 0x7fef_ffff);
            let o_lo = w.selk(to_inf, 0, 0xffff_ffff);
            let hi = w.sel(ovf, o_hi, hi);
            let lo = w.sel(ovf, o_lo, lo);
            let sb = w.shlk(s, 31);
            let hi = w.or(hi, sb);
            w.pair(lo, hi)
        }
        _ => {
            let eb = w.shlk(e_field, sp.p - 1);
            let v = w.add(eb, sig[0]);
            let v = w.add(v, inc);
            let inf = sp.emax_field << (sp.p - 1);
            let inf_k = w.k(inf);
            let past = w.uge(v, inf_k);
            let ovf = w.bor(big, past);
            let o = w.selk(to_inf, inf, inf - 1);
            let v = w.sel(ovf, o, v);
            let sb = w.shlk(s, sp.width - 1);
            w.or(v, sb)
        }
    }
}

/// Splits the 96-bit `m` at bit `top`: the significand `m >> top` (two words), the round bit
/// `(m >> (top − 1)) & 1` (a word) and whether any bit below it is set.
fn split(w: &mut W, m: &[Word], top: u32) -> ([Word; 2], Word, Word) {
    let zero = w.k(0);
    // Words of m >> top.
    let (q, r) = ((top / 32) as usize, top % 32);
    let word = |w: &mut W, i: usize| -> Word {
        // Word i of m >> top.
        let lo = if q + i < 3 { m[q + i] } else { zero };
        let hi = if q + i + 1 < 3 { m[q + i + 1] } else { zero };
        if r == 0 {
            lo
        } else {
            let a = w.shrk(lo, r);
            let b = w.shlk(hi, 32 - r);
            w.or(a, b)
        }
    };
    let sig = [word(w, 0), word(w, 1)];
    // The round bit and the bits below it.
    let rb = top - 1;
    let (rq, rr) = ((rb / 32) as usize, rb % 32);
    let rbit = w.field(m[rq], rr, 1);
    let mut below = w.andk(m[rq], (1u32 << rr) - 1);
    for &x in &m[..rq] {
        below = w.or(below, x);
    }
    let sticky = w.nz(below);
    (sig, rbit, sticky)
}
