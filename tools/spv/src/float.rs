//! Exact float arithmetic: directed rounding and fused multiply-add without relying on the
//! target's rounding modes or on `Fma` being fused (vulkan-testing.md §8).
//!
//! Every result is built from a pair `(s, e)` of f64 values whose exact sum is the exact
//! result (TwoSum, Dekker's TwoProduct), then rounded once: round-to-nearest through
//! round-to-odd, directed modes by stepping the round-to-nearest candidate one ulp according
//! to the sign of the exact residual.

use crate::emit::{glsl, E};
use crate::FmaMode;
use dmsh_ir::{Round, Type};
use rspirv::spirv::{self, Word};

use spirv::Op as S;

impl E {
    fn f(&mut self, op: S, t: Type, a: &[Word]) -> Word {
        let ty = self.ty(t);
        self.fop(op, ty, a)
    }

    fn conv(&mut self, to: Type, v: Word) -> Word {
        let ty = self.ty(to);
        self.op(S::FConvert, ty, &[v])
    }

    fn bits_ty(&mut self, t: Type) -> Word {
        match t {
            Type::F16 => self.c_u16t(),
            Type::F32 => self.ty(Type::U32),
            _ => self.ty(Type::U64),
        }
    }

    fn bits_const(&mut self, t: Type, v: u64) -> Word {
        match t {
            Type::F16 => self.c(Type::F16, v),
            Type::F32 => self.c(Type::U32, v),
            _ => self.c(Type::U64, v),
        }
    }

    /// TwoSum: `s + e == a + b` exactly, `s = RN(a + b)`.
    fn two_sum(&mut self, t: Type, a: Word, b: Word) -> (Word, Word) {
        let s = self.f(S::FAdd, t, &[a, b]);
        let bb = self.f(S::FSub, t, &[s, a]);
        let ab = self.f(S::FSub, t, &[s, bb]);
        let da = self.f(S::FSub, t, &[a, ab]);
        let db = self.f(S::FSub, t, &[b, bb]);
        let e = self.f(S::FAdd, t, &[da, db]);
        (s, e)
    }

    /// Dekker's TwoProduct in f64: `p + e == a * b` exactly.
    fn two_prod64(&mut self, a: Word, b: Word) -> (Word, Word) {
        let p = self.f(S::FMul, Type::F64, &[a, b]);
        let (ah, al) = self.split64f(a);
        let (bh, bl) = self.split64f(b);
        let hh = self.f(S::FMul, Type::F64, &[ah, bh]);
        let t1 = self.f(S::FSub, Type::F64, &[hh, p]);
        let hl = self.f(S::FMul, Type::F64, &[ah, bl]);
        let t2 = self.f(S::FAdd, Type::F64, &[t1, hl]);
        let lh = self.f(S::FMul, Type::F64, &[al, bh]);
        let t3 = self.f(S::FAdd, Type::F64, &[t2, lh]);
        let ll = self.f(S::FMul, Type::F64, &[al, bl]);
        let e = self.f(S::FAdd, Type::F64, &[t3, ll]);
        (p, e)
    }

    /// Veltkamp's split `a = hi + lo` (26 + 27 bits). `(2^27 + 1)·a` overflows for
    /// |a| > 2^996, so such values are split at 2^-54 of their size and scaled back (powers of
    /// two: exact).
    fn split64f(&mut self, a: Word) -> (Word, Word) {
        let bo = self.ty(Type::Bool);
        let f64t = self.ty(Type::F64);
        let abs = self.ext(f64t, glsl::FABS, &[a]);
        let lim = self.fconst(Type::F64, 2f64.powi(995));
        let big = self.op(S::FOrdGreaterThan, bo, &[abs, lim]);
        let down = self.fconst(Type::F64, 2f64.powi(-54));
        let up = self.fconst(Type::F64, 2f64.powi(54));
        let scaled = self.f(S::FMul, Type::F64, &[a, down]);
        let a_s = self.op(S::Select, f64t, &[big, scaled, a]);
        let k = self.fconst(Type::F64, 134217729.0);
        let c = self.f(S::FMul, Type::F64, &[k, a_s]);
        let d = self.f(S::FSub, Type::F64, &[c, a_s]);
        let hi_s = self.f(S::FSub, Type::F64, &[c, d]);
        let lo_s = self.f(S::FSub, Type::F64, &[a_s, hi_s]);
        let hi_up = self.f(S::FMul, Type::F64, &[hi_s, up]);
        let lo_up = self.f(S::FMul, Type::F64, &[lo_s, up]);
        let hi = self.op(S::Select, f64t, &[big, hi_up, hi_s]);
        let lo = self.op(S::Select, f64t, &[big, lo_up, lo_s]);
        (hi, lo)
    }

    /// The residual for directed rounding when the round-to-nearest f64 result `r` overflowed:
    /// ±∞ from finite operands means the exact value is finite, toward zero from `r` (the
    /// pair arithmetic gives NaN or ∞ there), so its residual is −r; else `resid`.
    fn overflow_resid(&mut self, r: Word, resid: Word, operands: &[Word]) -> Word {
        let bo = self.ty(Type::Bool);
        let f64t = self.ty(Type::F64);
        let mut cond = self.op(S::IsInf, bo, &[r]);
        for &x in operands {
            // x − x is 0 exactly when x is finite (∞ − ∞ and NaN give NaN).
            let d = self.f(S::FSub, Type::F64, &[x, x]);
            let z = self.fconst(Type::F64, 0.0);
            let fin = self.op(S::FOrdEqual, bo, &[d, z]);
            cond = self.op(S::LogicalAnd, bo, &[cond, fin]);
        }
        let neg = self.op(S::FNegate, f64t, &[r]);
        self.op(S::Select, f64t, &[cond, neg, resid])
    }

    /// Round-to-odd of the exact `s + e` (with `s = RN(s + e)`), in s's type.
    fn round_odd(&mut self, t: Type, s: Word, e: Word) -> Word {
        let bt = self.bits_ty(t);
        let bo = self.ty(Type::Bool);
        let sb = self.op(S::Bitcast, bt, &[s]);
        let zero = self.fconst(t, 0.0);
        let e_nz = self.op(S::FOrdNotEqual, bo, &[e, zero]);
        let s_neg = self.op(S::FOrdLessThan, bo, &[s, zero]);
        let e_neg = self.op(S::FOrdLessThan, bo, &[e, zero]);
        let toward0 = self.op(S::LogicalNotEqual, bo, &[s_neg, e_neg]);
        let one = self.bits_const(t, 1);
        let dec = self.op(S::ISub, bt, &[sb, one]);
        let rz = self.op(S::Select, bt, &[toward0, dec, sb]);
        let odd = self.op(S::BitwiseOr, bt, &[rz, one]);
        let res = self.op(S::Select, bt, &[e_nz, odd, sb]);
        let ty = self.ty(t);
        self.op(S::Bitcast, ty, &[res])
    }

    /// Steps the round-to-nearest candidate `r` (type `t`) by one ulp as the sign of the
    /// exact residual `resid` (any float type) and the mode say.
    fn round_dir(&mut self, t: Type, rnd: Round, r: Word, resid: Word, rt: Type) -> Word {
        if rnd == Round::Rn {
            return r;
        }
        let bt = self.bits_ty(t);
        let bo = self.ty(Type::Bool);
        let rb = self.op(S::Bitcast, bt, &[r]);
        let z = self.fconst(t, 0.0);
        let zr = self.fconst(rt, 0.0);
        let rpos = self.op(S::FOrdGreaterThan, bo, &[r, z]);
        let rneg = self.op(S::FOrdLessThan, bo, &[r, z]);
        let rzero = self.op(S::FOrdEqual, bo, &[r, z]);
        let lt = self.op(S::FOrdLessThan, bo, &[resid, zr]);
        let gt = self.op(S::FOrdGreaterThan, bo, &[resid, zr]);
        let one = self.bits_const(t, 1);
        let dec = self.op(S::ISub, bt, &[rb, one]);
        let inc = self.op(S::IAdd, bt, &[rb, one]);
        let res = match rnd {
            Round::Rz => {
                let a = self.op(S::LogicalAnd, bo, &[rpos, lt]);
                let b = self.op(S::LogicalAnd, bo, &[rneg, gt]);
                let c = self.op(S::LogicalOr, bo, &[a, b]);
                self.op(S::Select, bt, &[c, dec, rb])
            }
            Round::Rm => {
                let a = self.op(S::LogicalAnd, bo, &[rpos, lt]);
                let x = self.op(S::Select, bt, &[a, dec, rb]);
                let b = self.op(S::LogicalAnd, bo, &[rneg, lt]);
                let x = self.op(S::Select, bt, &[b, inc, x]);
                let c = self.op(S::LogicalAnd, bo, &[rzero, lt]);
                let sign = t.bits() as u64 - 1;
                let negmin = self.bits_const(t, (1u64 << sign) | 1);
                self.op(S::Select, bt, &[c, negmin, x])
            }
            _ => {
                let a = self.op(S::LogicalAnd, bo, &[rpos, gt]);
                let x = self.op(S::Select, bt, &[a, inc, rb]);
                let b = self.op(S::LogicalAnd, bo, &[rneg, gt]);
                let x = self.op(S::Select, bt, &[b, dec, x]);
                let c = self.op(S::LogicalAnd, bo, &[rzero, gt]);
                let posmin = self.bits_const(t, 1);
                self.op(S::Select, bt, &[c, posmin, x])
            }
        };
        let ty = self.ty(t);
        self.op(S::Bitcast, ty, &[res])
    }

    /// Rounds the exact f64 pair `s + e` to type `t` with mode `rnd`.
    fn round_pair(&mut self, t: Type, rnd: Round, s: Word, e: Word) -> Word {
        if t == Type::F64 {
            if rnd == Round::Rn {
                return s;
            }
            return self.round_dir(t, rnd, s, e, Type::F64);
        }
        if rnd == Round::Rn {
            let o = self.round_odd(Type::F64, s, e);
            return self.conv(t, o);
        }
        let r = self.conv(t, s);
        let back = self.conv(Type::F64, r);
        let d = self.f(S::FSub, Type::F64, &[s, back]);
        let resid = self.f(S::FAdd, Type::F64, &[d, e]);
        self.round_dir(t, rnd, r, resid, Type::F64)
    }

    fn widen(&mut self, t: Type, v: Word) -> Word {
        if t == Type::F64 {
            v
        } else {
            self.conv(Type::F64, v)
        }
    }

    /// `a + b` rounded as `rnd`.
    pub(crate) fn fadd(&mut self, t: Type, rnd: Round, a: Word, b: Word) -> Word {
        if rnd == Round::Rn {
            if t == Type::F16 {
                let (x, y) = (self.conv(Type::F32, a), self.conv(Type::F32, b));
                let s = self.f(S::FAdd, Type::F32, &[x, y]);
                return self.conv(Type::F16, s);
            }
            return self.f(S::FAdd, t, &[a, b]);
        }
        let (x, y) = (self.widen(t, a), self.widen(t, b));
        let (s, e) = self.two_sum(Type::F64, x, y);
        let e = if t == Type::F64 {
            self.overflow_resid(s, e, &[x, y])
        } else {
            e
        };
        let r = self.round_pair(t, rnd, s, e);
        if rnd != Round::Rm {
            return r;
        }
        // Round toward −∞: an exact zero sum is −0 unless both operands are +0.
        let bt = self.bits_ty(t);
        let bo = self.ty(Type::Bool);
        let z = self.fconst(t, 0.0);
        let rz = self.op(S::FOrdEqual, bo, &[r, z]);
        let zd = self.fconst(Type::F64, 0.0);
        let ez = self.op(S::FOrdEqual, bo, &[e, zd]);
        let exact0 = self.op(S::LogicalAnd, bo, &[rz, ez]);
        let ab = self.op(S::Bitcast, bt, &[a]);
        let bb = self.op(S::Bitcast, bt, &[b]);
        let or = self.op(S::BitwiseOr, bt, &[ab, bb]);
        let sign = self.bits_const(t, 1u64 << (t.bits() - 1));
        let sz = self.op(S::BitwiseAnd, bt, &[or, sign]);
        let rb = self.op(S::Bitcast, bt, &[r]);
        let res = self.op(S::Select, bt, &[exact0, sz, rb]);
        let ty = self.ty(t);
        self.op(S::Bitcast, ty, &[res])
    }

    /// `x + (+0.0)` rounded as `rnd`: `x`, except that a zero sum is +0 (−0 + +0 = +0) unless
    /// rounding toward −∞. Written as a select rather than an add because lavapipe (Mesa
    /// 22.3) folds `x + 0.0` to `x` even under NoContraction and SignedZeroInfNanPreserve,
    /// turning −0 + 0 into −0 (`m_float_forms`, `FADD.FTZ R, RZ, -R`).
    pub(crate) fn add_plus_zero(&mut self, t: Type, rnd: Round, x: Word) -> Word {
        if rnd == Round::Rm {
            return x;
        }
        let bo = self.ty(Type::Bool);
        let ty = self.ty(t);
        let z = self.fconst(t, 0.0);
        let is0 = self.op(S::FOrdEqual, bo, &[x, z]);
        self.op(S::Select, ty, &[is0, z, x])
    }

    /// `a * b + (+0.0)` rounded once as `rnd`: the product rounded as `rnd`, except that an
    /// exactly zero product (a or b zero) plus +0 is +0 unless rounding toward −∞ (a product
    /// that rounds to zero keeps its sign: the exact sum is not zero). See [`Self::add_plus_zero`].
    pub(crate) fn fma_plus_zero(&mut self, t: Type, rnd: Round, a: Word, b: Word) -> Word {
        let p = self.fmul(t, rnd, a, b);
        if rnd == Round::Rm {
            return p;
        }
        let bo = self.ty(Type::Bool);
        let ty = self.ty(t);
        let z = self.fconst(t, 0.0);
        let a0 = self.op(S::FOrdEqual, bo, &[a, z]);
        let b0 = self.op(S::FOrdEqual, bo, &[b, z]);
        let p0 = self.op(S::FOrdEqual, bo, &[p, z]);
        let exact0 = self.op(S::LogicalOr, bo, &[a0, b0]);
        let c = self.op(S::LogicalAnd, bo, &[exact0, p0]);
        self.op(S::Select, ty, &[c, z, p])
    }

    /// `a * b` rounded as `rnd`.
    pub(crate) fn fmul(&mut self, t: Type, rnd: Round, a: Word, b: Word) -> Word {
        if rnd == Round::Rn {
            if t == Type::F16 {
                let (x, y) = (self.conv(Type::F32, a), self.conv(Type::F32, b));
                let s = self.f(S::FMul, Type::F32, &[x, y]);
                return self.conv(Type::F16, s);
            }
            return self.f(S::FMul, t, &[a, b]);
        }
        if t == Type::F64 {
            let (p, e) = self.two_prod64(a, b);
            let e = self.overflow_resid(p, e, &[a, b]);
            return self.round_dir(t, rnd, p, e, Type::F64);
        }
        let (x, y) = (self.widen(t, a), self.widen(t, b));
        let p = self.f(S::FMul, Type::F64, &[x, y]);
        let zd = self.fconst(Type::F64, 0.0);
        self.round_pair(t, rnd, p, zd)
    }

    /// `a * b + c` rounded once as `rnd`.
    pub(crate) fn ffma(&mut self, t: Type, rnd: Round, a: Word, b: Word, c: Word) -> Word {
        if self.opts.fma == FmaMode::Native && rnd == Round::Rn {
            let ty = self.ty(t);
            return self.ext(ty, glsl::FMA, &[a, b, c]);
        }
        if t == Type::F64 {
            // Boldo–Melquiond: RN(th + RO(tl + ul)).
            let (uh, ul) = self.two_prod64(a, b);
            let (th, tl) = self.two_sum(Type::F64, c, uh);
            let (vs, ve) = self.two_sum(Type::F64, tl, ul);
            let v = self.round_odd(Type::F64, vs, ve);
            let r = self.f(S::FAdd, Type::F64, &[th, v]);
            // A product that overflows makes the pair arithmetic NaN; the result is then
            // th (±∞ in round-to-nearest; directed rounding steps back below).
            let bo = self.ty(Type::Bool);
            let f64t = self.ty(Type::F64);
            let rnan = self.op(S::IsNan, bo, &[r]);
            let thinf = self.op(S::IsInf, bo, &[th]);
            let ovf = self.op(S::LogicalAnd, bo, &[rnan, thinf]);
            let r = self.op(S::Select, f64t, &[ovf, th, r]);
            if rnd == Round::Rn {
                return r;
            }
            let d = self.f(S::FSub, Type::F64, &[th, r]);
            let resid = self.f(S::FAdd, Type::F64, &[d, v]);
            let resid = self.overflow_resid(r, resid, &[a, b, c]);
            return self.round_dir(t, rnd, r, resid, Type::F64);
        }
        let (x, y, z) = (self.widen(t, a), self.widen(t, b), self.widen(t, c));
        let p = self.f(S::FMul, Type::F64, &[x, y]);
        let (s, e) = self.two_sum(Type::F64, p, z);
        self.round_pair(t, rnd, s, e)
    }

    /// Integer → float with rounding.
    pub(crate) fn int_to_float(
        &mut self,
        signed: bool,
        rnd: Round,
        from: Type,
        to: Type,
        v: Word,
    ) -> Word {
        let ty = self.ty(to);
        let direct = |e: &mut E, to_ty: Word| -> Word {
            if signed {
                let st = e.sint(from.bits());
                let s = e.op(S::Bitcast, st, &[v]);
                e.op(S::ConvertSToF, to_ty, &[s])
            } else {
                e.op(S::ConvertUToF, to_ty, &[v])
            }
        };
        if rnd == Round::Rn {
            if to == Type::F16 {
                let f = self.ty(Type::F32);
                let x = direct(self, f);
                return self.conv(Type::F16, x);
            }
            return direct(self, ty);
        }
        let (s, e) = if from == Type::U32 {
            let f64t = self.ty(Type::F64);
            (direct(self, f64t), self.fconst(Type::F64, 0.0))
        } else {
            let u = self.ty(Type::U32);
            let u64t = self.ty(Type::U64);
            let f64t = self.ty(Type::F64);
            let lo = self.op(S::UConvert, u, &[v]);
            let c32 = self.c(Type::U64, 32);
            let hi64 = self.op(
                if signed {
                    S::ShiftRightArithmetic
                } else {
                    S::ShiftRightLogical
                },
                u64t,
                &[v, c32],
            );
            let hi = self.op(S::UConvert, u, &[hi64]);
            let hf = if signed {
                let i = self.sint(32);
                let hs = self.op(S::Bitcast, i, &[hi]);
                self.op(S::ConvertSToF, f64t, &[hs])
            } else {
                self.op(S::ConvertUToF, f64t, &[hi])
            };
            let k = self.fconst(Type::F64, 4294967296.0);
            let hf = self.f(S::FMul, Type::F64, &[hf, k]);
            let lf = self.op(S::ConvertUToF, f64t, &[lo]);
            self.two_sum(Type::F64, hf, lf)
        };
        self.round_pair(to, rnd, s, e)
    }

    /// Float → float conversion with rounding.
    pub(crate) fn fconvert(&mut self, from: Type, to: Type, rnd: Round, v: Word) -> Word {
        if from == to {
            return v;
        }
        if to.bits() > from.bits() || rnd == Round::Rn {
            return self.conv(to, v);
        }
        let s = self.widen(from, v);
        let z = self.fconst(Type::F64, 0.0);
        self.round_pair(to, rnd, s, z)
    }
}
