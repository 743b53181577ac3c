//! f64 comparison: `cmp(a, b)` gives 0 (less), 1 (equal), 2 (greater) or 3 (unordered), from
//! which every ordered and unordered predicate, min / max and saturation are made.
//!
//! Two non-NaN f64s compare as their bit patterns mapped to an unsigned order: a positive
//! value with its sign bit set, a negative one complemented; +0 and −0 are equal.

use super::W;
use crate::emit::E;
use dmsh_ir::Op;
use rspirv::spirv::Word;

/// The `cmp` result for less.
pub(crate) const LT: u32 = 0;
/// Equal.
pub(crate) const EQ: u32 = 1;
/// Greater.
pub(crate) const GT: u32 = 2;
/// Unordered (a NaN operand).
pub(crate) const UN: u32 = 3;

/// The body of `Routine::Cmp`.
pub(super) fn body(e: &mut E, p: &[Word]) -> Word {
    let mut w = W::new(e);
    let (alo, ahi) = w.unpair(p[0]);
    let (blo, bhi) = w.unpair(p[1]);
    let an = w.is_nan(alo, ahi);
    let bn = w.is_nan(blo, bhi);
    let nan = w.bor(an, bn);
    // Both zero.
    let ab = w.or(ahi, bhi);
    let ab = w.andk(ab, 0x7fff_ffff);
    let ab = w.or(ab, alo);
    let ab = w.or(ab, blo);
    let zeros = w.z(ab);
    let ka = key(&mut w, alo, ahi);
    let kb = key(&mut w, blo, bhi);
    let lt = w.lt_n(&ka, &kb);
    let d = w.sub_n(&ka, &kb).0;
    let eq = w.zero_n(&d);
    let eq = w.bor(eq, zeros);
    let r = w.selk(lt, LT, GT);
    let k_eq = w.k(EQ);
    let r = w.sel(eq, k_eq, r);
    let k_un = w.k(UN);
    w.sel(nan, k_un, r)
}

/// The order key of the f64 `(lo, hi)`: words `[lo, hi]`.
fn key(w: &mut W, lo: Word, hi: Word) -> [Word; 2] {
    let s = w.shrk(hi, 31);
    let neg = w.nz(s);
    let nlo = w.not(lo);
    let nhi = w.not(hi);
    let phi = w.ork(hi, 0x8000_0000);
    [w.sel(neg, nlo, lo), w.sel(neg, nhi, phi)]
}

impl W<'_> {
    /// Whether the f64 `(lo, hi)` is a NaN.
    pub fn is_nan(&mut self, lo: Word, hi: Word) -> Word {
        let m = self.andk(hi, 0x7fff_ffff);
        let inf = self.k(0x7ff0_0000);
        let above = self.ugt(m, inf);
        let at = self.eq(m, inf);
        let lnz = self.nz(lo);
        let at = self.band(at, lnz);
        self.bor(above, at)
    }

    /// Whether the f64 `(lo, hi)` is ±∞.
    pub fn is_inf(&mut self, lo: Word, hi: Word) -> Word {
        let m = self.andk(hi, 0x7fff_ffff);
        let at = self.eqk(m, 0x7ff0_0000);
        let lz = self.z(lo);
        self.band(at, lz)
    }

    /// The predicate `op` (`FOLt` … `FUGe`) of a `cmp` result `r`.
    pub fn cmp_pred(&mut self, op: Op, r: Word) -> Word {
        let is = |w: &mut Self, k: u32| w.eqk(r, k);
        match op {
            Op::FOLt => is(self, LT),
            Op::FOEq => is(self, EQ),
            Op::FOGt => is(self, GT),
            Op::FUNe => {
                let e = is(self, EQ);
                self.bnot(e)
            }
            Op::FULt => {
                let a = is(self, LT);
                let b = is(self, UN);
                self.bor(a, b)
            }
            Op::FUGt => {
                let a = is(self, GT);
                let b = is(self, UN);
                self.bor(a, b)
            }
            Op::FUEq => {
                let a = is(self, EQ);
                let b = is(self, UN);
                self.bor(a, b)
            }
            Op::FOLe => {
                let a = is(self, LT);
                let b = is(self, EQ);
                self.bor(a, b)
            }
            Op::FOGe => {
                let a = is(self, GT);
                let b = is(self, EQ);
                self.bor(a, b)
            }
            Op::FONe => {
                let a = is(self, LT);
                let b = is(self, GT);
                self.bor(a, b)
            }
            Op::FULe => {
                let g = is(self, GT);
                self.bnot(g)
            }
            _ => {
                // FUGe
                let l = is(self, LT);
                self.bnot(l)
            }
        }
    }
}
