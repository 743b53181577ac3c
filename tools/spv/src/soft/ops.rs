//! The IR operations in soft-f64 mode: which ones use the routines, and how their operands
//! and results are carried (`uvec2` for f64; f32 and f16 values bit cast and widened).

use super::{cmp, mode_word, Fmt, Routine, MODE_RN, W};
use crate::emit::E;
use crate::{Error, FmaMode};
use dmsh_ir::{Inst, Op, Round, Type};
use rspirv::spirv::{Op as S, Word};

/// f64 1.0.
const ONE: u64 = 0x3ff0_0000_0000_0000;
/// f64 −0.0.
const NEG_ZERO: u64 = 0x8000_0000_0000_0000;

impl E {
    /// f64 bits as a constant (`uvec2` in soft mode).
    fn soft_k(&mut self, bits: u64) -> Word {
        self.c(Type::F64, bits)
    }

    /// The zero that leaves a product or a converted value unchanged when added in mode
    /// `rnd`: −0, or +0 toward −∞ (where +0 + −0 is −0).
    fn soft_neutral(&mut self, rnd: Round) -> Word {
        self.soft_k(if rnd == Round::Rm { 0 } else { NEG_ZERO })
    }

    /// The f64 bits (`uvec2`) of the IR float value `v` of type `t`, exact.
    fn soft_wide(&mut self, t: Type, v: Word) -> Word {
        match t {
            Type::F64 => v,
            Type::F16 => {
                let f = self.ty(Type::F32);
                let x = self.op(S::FConvert, f, &[v]);
                self.soft_wide(Type::F32, x)
            }
            _ => {
                let u = self.ty(Type::U32);
                let b = self.op(S::Bitcast, u, &[v]);
                self.soft_call(Routine::Widen32, &[b])
            }
        }
    }

    /// The IR value of type `t` from a routine's bits of format `Fmt::of(t)`.
    fn soft_value(&mut self, t: Type, bits: Word) -> Word {
        match t {
            Type::F64 => bits,
            Type::F16 => {
                let h = self.c_u16t();
                let x = self.op(S::UConvert, h, &[bits]);
                let f = self.ty(Type::F16);
                self.op(S::Bitcast, f, &[x])
            }
            _ => {
                let f = self.ty(Type::F32);
                self.op(S::Bitcast, f, &[bits])
            }
        }
    }

    /// `a · b + c` (f64 bits) rounded to `t` in mode `rnd`, as an IR value of type `t`.
    fn soft_fma(&mut self, t: Type, rnd: Round, a: Word, b: Word, c: Word) -> Word {
        let m = self.u32c(mode_word(rnd));
        let r = self.soft_call(Routine::Fma(Fmt::of(t)), &[a, b, c, m]);
        self.soft_value(t, r)
    }

    /// The integer `v` of IR type `from` (two's complement when `signed`) rounded to `t`.
    fn soft_int(&mut self, signed: bool, from: Type, t: Type, v: Word, rnd: Round) -> Word {
        let (lo, hi) = if from == Type::U64 {
            let u = self.ty(Type::U32);
            let u2 = self.vec_ty(u, 2);
            let p = self.op(S::Bitcast, u2, &[v]);
            W::new(self).unpair(p)
        } else if signed {
            let mut w = W::new(self);
            let hi = w.sark(v, 31);
            (v, hi)
        } else {
            (v, self.u32c(0))
        };
        let s = self.u32c(signed as u32);
        let m = self.u32c(mode_word(rnd));
        let r = self.soft_call(Routine::Int(Fmt::of(t)), &[lo, hi, s, m]);
        self.soft_value(t, r)
    }

    /// The f64 bits `x` rounded to the narrower `t` in mode `rnd`.
    fn soft_narrow(&mut self, t: Type, rnd: Round, x: Word) -> Word {
        let m = self.u32c(mode_word(rnd));
        let r = self.soft_call(Routine::Narrow(Fmt::of(t)), &[x, m]);
        self.soft_value(t, r)
    }

    /// An operation in soft-f64 mode: its SPIR-V value when it is one the routines do (an
    /// f64 operand or result, or f32 / f16 rounding the native translation does through
    /// f64), `None` for the emitter's ordinary code.
    pub(crate) fn soft_inst(
        &mut self,
        inst: &Inst,
        a: &[Word],
        at: &[Type],
        plus_zero: bool,
    ) -> Result<Option<Word>, Error> {
        let rt = inst.ty;
        let f64_arg = at.first() == Some(&Type::F64);
        // Most instructions are neither on f64 nor among those that round through f64:
        // answered before anything else is looked at.
        let may_round = matches!(
            inst.op,
            Op::FAdd(_) | Op::FMul(_) | Op::FFma(_) | Op::FConvert(_) | Op::UToF(_) | Op::SToF(_)
        );
        if !(rt == Type::F64 || f64_arg || may_round) {
            return Ok(None);
        }
        let narrow = matches!(rt, Type::F32 | Type::F16);
        let exact_fma = self.opts.fma == FmaMode::Exact;
        let r = match inst.op {
            Op::FAdd(rnd) if rt == Type::F64 || (narrow && rnd != Round::Rn && !plus_zero) => {
                let x = self.soft_wide(rt, a[0]);
                let y = self.soft_wide(rt, a[1]);
                let one = self.soft_k(ONE);
                self.soft_fma(rt, rnd, x, one, y)
            }
            Op::FMul(rnd) if rt == Type::F64 || (narrow && rnd != Round::Rn) => {
                let x = self.soft_wide(rt, a[0]);
                let y = self.soft_wide(rt, a[1]);
                let n = self.soft_neutral(rnd);
                self.soft_fma(rt, rnd, x, y, n)
            }
            Op::FFma(rnd) if rt == Type::F64 || (narrow && (rnd != Round::Rn || exact_fma)) => {
                let x = self.soft_wide(rt, a[0]);
                let y = self.soft_wide(rt, a[1]);
                let z = self.soft_wide(rt, a[2]);
                self.soft_fma(rt, rnd, x, y, z)
            }
            Op::FConvert(rnd) => {
                let from = at[0];
                if from == rt {
                    return Ok(None);
                }
                if rt == Type::F64 {
                    self.soft_wide(from, a[0])
                } else if from == Type::F64 || (rt.bits() < from.bits() && rnd != Round::Rn) {
                    let x = self.soft_wide(from, a[0]);
                    self.soft_narrow(rt, rnd, x)
                } else {
                    return Ok(None);
                }
            }
            Op::UToF(rnd) | Op::SToF(rnd) if rt == Type::F64 || rnd != Round::Rn => {
                let signed = matches!(inst.op, Op::SToF(_));
                if rt == Type::F64 && at[0] == Type::U32 {
                    let s = self.u32c(signed as u32);
                    self.soft_call(Routine::I2d, &[a[0], s])
                } else {
                    self.soft_int(signed, at[0], rt, a[0], rnd)
                }
            }
            _ if !(rt == Type::F64 || f64_arg) => return Ok(None),
            Op::FToU | Op::FToS => {
                let v = self.soft_call(Routine::D2i, &[a[0]]);
                if rt == Type::U64 {
                    let t = self.ty(Type::U64);
                    self.op(S::Bitcast, t, &[v])
                } else {
                    W::new(self).unpair(v).0
                }
            }
            Op::FNeg | Op::FAbs => {
                let mut w = W::new(self);
                let (lo, hi) = w.unpair(a[0]);
                let hi = if inst.op == Op::FNeg {
                    let k = w.k(0x8000_0000);
                    w.xor(hi, k)
                } else {
                    w.andk(hi, 0x7fff_ffff)
                };
                w.pair(lo, hi)
            }
            Op::FFloor | Op::FCeil | Op::FTrunc | Op::FRoundEven => {
                let rnd = match inst.op {
                    Op::FFloor => Round::Rm,
                    Op::FCeil => Round::Rp,
                    Op::FTrunc => Round::Rz,
                    _ => Round::Rn,
                };
                let m = self.u32c(mode_word(rnd));
                self.soft_call(Routine::Rint, &[a[0], m])
            }
            Op::FDiv | Op::FRcp | Op::FSqrt | Op::FRsqrt => {
                let rn = self.u32c(MODE_RN);
                let one = self.soft_k(ONE);
                match inst.op {
                    Op::FDiv => self.soft_call(Routine::Div, &[a[0], a[1], rn]),
                    Op::FRcp => self.soft_call(Routine::Div, &[one, a[0], rn]),
                    Op::FSqrt => self.soft_call(Routine::Sqrt, &[a[0], rn]),
                    _ => {
                        let r = self.soft_call(Routine::Sqrt, &[a[0], rn]);
                        self.soft_call(Routine::Div, &[one, r, rn])
                    }
                }
            }
            Op::FExp2 | Op::FLog2 | Op::FSin | Op::FCos => {
                return Err(Error::Unsupported(format!(
                    "{:?} on f64 in soft-f64 mode (no guest instruction makes it)",
                    inst.op
                )))
            }
            Op::FOEq
            | Op::FONe
            | Op::FOLt
            | Op::FOLe
            | Op::FOGt
            | Op::FOGe
            | Op::FUEq
            | Op::FUNe
            | Op::FULt
            | Op::FULe
            | Op::FUGt
            | Op::FUGe => {
                let r = self.soft_call(Routine::Cmp, &[a[0], a[1]]);
                W::new(self).cmp_pred(inst.op, r)
            }
            Op::IsNan | Op::IsInf => {
                let mut w = W::new(self);
                let (lo, hi) = w.unpair(a[0]);
                if inst.op == Op::IsNan {
                    w.is_nan(lo, hi)
                } else {
                    w.is_inf(lo, hi)
                }
            }
            Op::FMin | Op::FMax | Op::FMinMaxZ(_) => {
                let min = matches!(inst.op, Op::FMin | Op::FMinMaxZ(true));
                let r = self.soft_call(Routine::Cmp, &[a[0], a[1]]);
                let mut w = W::new(self);
                let (alo, ahi) = w.unpair(a[0]);
                let (blo, bhi) = w.unpair(a[1]);
                // A NaN loses to a number; else the smaller (larger), b when equal.
                let pick_a = w.eqk(r, if min { cmp::LT } else { cmp::GT });
                let an = w.is_nan(alo, ahi);
                let bn = w.is_nan(blo, bhi);
                let (t, f) = (w.kb(true), w.kb(false));
                let pick_a = w.bsel(an, f, pick_a);
                let pick_a = w.bsel(bn, t, pick_a);
                let mut lo = w.sel(pick_a, alo, blo);
                let mut hi = w.sel(pick_a, ahi, bhi);
                if let Op::FMinMaxZ(_) = inst.op {
                    // Two zeros: ordered by their sign bits (min: or, max: and).
                    let ab = w.or(ahi, bhi);
                    let ab = w.andk(ab, 0x7fff_ffff);
                    let ab = w.or(ab, alo);
                    let ab = w.or(ab, blo);
                    let zeros = w.z(ab);
                    let zz = if min { w.or(ahi, bhi) } else { w.and(ahi, bhi) };
                    let k0 = w.k(0);
                    hi = w.sel(zeros, zz, hi);
                    lo = w.sel(zeros, k0, lo);
                }
                w.pair(lo, hi)
            }
            Op::FSat => {
                // NaN, negative numbers and −0 give +0; 1 and more give 1.
                let mut w = W::new(self);
                let (lo, hi) = w.unpair(a[0]);
                let nan = w.is_nan(lo, hi);
                let s = w.shrk(hi, 31);
                let neg = w.nz(s);
                let to0 = w.bor(nan, neg);
                let one_hi = w.k(0x3ff0_0000);
                let ge1 = w.uge(hi, one_hi);
                let k0 = w.k(0);
                let hi = w.sel(ge1, one_hi, hi);
                let lo = w.sel(ge1, k0, lo);
                let hi = w.sel(to0, k0, hi);
                let lo = w.sel(to0, k0, lo);
                w.pair(lo, hi)
            }
            _ => return Ok(None),
        };
        Ok(Some(r))
    }
}
