//! f64 division and square root, correctly rounded in a run-time mode: 55 result bits by
//! restoring division / the digit-by-digit square root (one bit per loop iteration), the
//! remainder's being non-zero as the sticky bit, then `round`. They serve `MUFU.RCP64H` and
//! `MUFU.RSQ64H` (the high word of `1 / d` and of `1 / √d`, as the native translation
//! computes them) and any f64 division the IR has.

use super::{Fmt, Routine, W};
use crate::emit::E;
use rspirv::spirv::{self, Op as S, Word};

/// Iterations of both loops: a 55-bit result (53 bits, the round bit, one more).
const STEPS: u32 = 55;

/// A counted loop of `STEPS` iterations over the `u32` values `init`; `step` maps the values
/// of one iteration to those of the next. Returns the values after the last iteration.
fn counted_loop(
    e: &mut E,
    init: &[Word],
    mut step: impl FnMut(&mut W, &[Word]) -> Vec<Word>,
) -> Vec<Word> {
    let u = {
        let w = W::new(e);
        w.u
    };
    let entry = e.soft_label();
    let (header, body, merge) = (e.b.id(), e.b.id(), e.b.id());
    let n = init.len() + 1;
    let next: Vec<Word> = (0..n).map(|_| e.b.id()).collect();
    let cur: Vec<Word> = (0..n).map(|_| e.b.id()).collect();
    let zero = e.u32c(0);
    e.b.branch(header).expect("block");
    e.b.begin_block(Some(header)).expect("no block");
    for k in 0..n {
        let v0 = if k == 0 { zero } else { init[k - 1] };
        e.b.op_ids(S::Phi, u, cur[k], &[v0, entry, next[k], body])
            .expect("block");
    }
    e.b.loop_merge(merge, body, spirv::LoopControl::NONE, [])
        .expect("block");
    e.b.branch(body).expect("block");
    e.b.begin_block(Some(body)).expect("no block");
    let mut w = W::new(e);
    let vals = step(&mut w, &cur[1..]);
    let i1 = w.addk(cur[0], 1);
    let more = {
        let lim = w.k(STEPS);
        w.ult(i1, lim)
    };
    for (k, &v) in std::iter::once(&i1).chain(vals.iter()).enumerate() {
        w.e.b
            .op_ids(S::CopyObject, u, next[k], &[v])
            .expect("block");
    }
    e.b.branch_conditional(more, header, merge, [])
        .expect("block");
    e.b.begin_block(Some(merge)).expect("no block");
    e.soft_set_label(merge);
    next[1..].to_vec()
}

/// `[m0, m1]` of a 55-bit result with its sticky flag, as `round`'s `(m2, m1, m0)` (bit 54
/// on bit 95).
fn to_round(w: &mut W, q: &[Word], sticky: Word) -> [Word; 3] {
    let a = w.shlk(q[1], 9);
    let b = w.shrk(q[0], 23);
    let m2 = w.or(a, b);
    let m1 = w.shlk(q[0], 9);
    let m0 = w.b2u(sticky);
    [m2, m1, m0]
}

/// The body of `Routine::Div`: `a / b` in mode `p[2]`.
pub(super) fn div_body(e: &mut E, p: &[Word]) -> Word {
    let mode = p[2];
    let mut w = W::new(e);
    let (a0, a1) = w.unpair(p[0]);
    let (b0, b1) = w.unpair(p[1]);
    let pa = w.parts(a0, a1);
    let pb = w.parts(b0, b1);
    let (ea, ma1, ma0) = w.unpack(a0, &pa);
    let (eb, mb1, mb0) = w.unpack(b0, &pb);
    let s = w.xor(pa.s, pb.s);
    let ma = [ma0, ma1];
    let mb = [mb0, mb1];
    let lt = w.lt_n(&ma, &mb);
    let one = w.k(1);
    let ma2 = w.shl_n(&ma, one);
    let ra = w.sel_n(lt, &ma2, &ma);
    let ex = w.sub(ea, eb);
    let ltu = w.b2u(lt);
    let ex = w.sub(ex, ltu);
    let zero = w.k(0);
    let out = counted_loop(w.e, &[zero, zero, ra[0], ra[1]], |w, v| {
        let (q, r) = ([v[0], v[1]], [v[2], v[3]]);
        let (d, borrow) = w.sub_n(&r, &mb);
        let ge = w.bnot(borrow);
        let r = w.sel_n(ge, &d, &r);
        let one = w.k(1);
        let q = w.shl_n(&q, one);
        let g = w.b2u(ge);
        let q0 = w.or(q[0], g);
        let r = w.shl_n(&r, one);
        vec![q0, q[1], r[0], r[1]]
    });
    let mut w = W::new(e);
    let rem = [out[2], out[3]];
    let z = w.zero_n(&rem);
    let sticky = w.bnot(z);
    let m = to_round(&mut w, &out[..2], sticky);
    let r =
        w.e.soft_call(Routine::Round(Fmt::F64), &[s, ex, m[0], m[1], m[2], mode]);
    let (r0, r1) = w.unpair(r);
    // Special cases.
    let nan = w.bor(pa.nan, pb.nan);
    let n_lo = w.sel(pa.nan, a0, b0);
    let n_hi = w.sel(pa.nan, a1, b1);
    let n_hi = w.quiet(n_hi);
    let zz = w.band(pa.zero, pb.zero);
    let ii = w.band(pa.inf, pb.inf);
    let invalid = w.bor(zz, ii);
    let inf = w.bor(pa.inf, pb.zero);
    let zres = w.bor(pa.zero, pb.inf);
    let sb = w.shlk(s, 31);
    let ib = w.ork(sb, 0x7ff0_0000);
    let k0 = w.k(0);
    let hi = w.sel(zres, sb, r1);
    let lo = w.sel(zres, k0, r0);
    let hi = w.sel(inf, ib, hi);
    let lo = w.sel(inf, k0, lo);
    let dn = w.k(0xfff8_0000);
    let hi = w.sel(invalid, dn, hi);
    let lo = w.sel(invalid, k0, lo);
    let hi = w.sel(nan, n_hi, hi);
    let lo = w.sel(nan, n_lo, lo);
    w.pair(lo, hi)
}

/// The body of `Routine::Sqrt`: `√a` in mode `p[1]`.
pub(super) fn sqrt_body(e: &mut E, p: &[Word]) -> Word {
    let mode = p[1];
    let mut w = W::new(e);
    let (a0, a1) = w.unpair(p[0]);
    let pa = w.parts(a0, a1);
    let (ea, m1, m0) = w.unpack(a0, &pa);
    // An even exponent: value = m' · 2^(e' − 52) with m' of 53 or 54 bits.
    let odd = w.andk(ea, 1);
    let oddb = w.nz(odd);
    let m = [m0, m1];
    let one = w.k(1);
    let m2 = w.shl_n(&m, one);
    let m = w.sel_n(oddb, &m2, &m);
    let ex = w.sub(ea, odd);
    let k10 = w.k(10);
    let r = w.shl_n(&m, k10);
    let zero = w.k(0);
    let out = counted_loop(w.e, &[r[0], r[1], zero, zero, zero, zero], |w, v| {
        let (rad, rem, res) = ([v[0], v[1]], [v[2], v[3]], [v[4], v[5]]);
        let two = w.k(2);
        let top = w.shrk(rad[1], 30);
        let rad = w.shl_n(&rad, two);
        let rem = w.shl_n(&rem, two);
        let rem0 = w.or(rem[0], top);
        let rem = [rem0, rem[1]];
        let t = w.shl_n(&res, two);
        let t0 = w.ork(t[0], 1);
        let trial = [t0, t[1]];
        let (d, borrow) = w.sub_n(&rem, &trial);
        let ge = w.bnot(borrow);
        let rem = w.sel_n(ge, &d, &rem);
        let one = w.k(1);
        let res = w.shl_n(&res, one);
        let g = w.b2u(ge);
        let res0 = w.or(res[0], g);
        vec![rad[0], rad[1], rem[0], rem[1], res0, res[1]]
    });
    let mut w = W::new(e);
    let rem = [out[2], out[3]];
    let z = w.zero_n(&rem);
    let sticky = w.bnot(z);
    let m = to_round(&mut w, &out[4..6], sticky);
    let half = w.sark(ex, 1);
    let k0 = w.k(0);
    let r = w.e.soft_call(
        Routine::Round(Fmt::F64),
        &[k0, half, m[0], m[1], m[2], mode],
    );
    let (r0, r1) = w.unpair(r);
    // Special cases: NaN stays (quiet), ±0 stays, a negative number is invalid, +∞ stays.
    let sn = w.nz(pa.s);
    let nz = w.bnot(pa.zero);
    let negative = w.band(sn, nz);
    let keep = w.bor(pa.zero, pa.inf);
    let hi = w.sel(keep, a1, r1);
    let lo = w.sel(keep, a0, r0);
    let dn = w.k(0xfff8_0000);
    let hi = w.sel(negative, dn, hi);
    let lo = w.sel(negative, k0, lo);
    let qn = w.quiet(a1);
    let hi = w.sel(pa.nan, qn, hi);
    let lo = w.sel(pa.nan, a0, lo);
    w.pair(lo, hi)
}
