//! `W`: 32-bit word arithmetic for writing the soft-float routines as straight code, plus the
//! multi-word helpers they share (little-endian word slices: index 0 is the lowest word).
//!
//! Every shift amount that reaches SPIR-V is in 0..=31 (a shift by the width or more is
//! undefined in SPIR-V and in Metal): variable shifts by `32 - k` are written as two shifts.

use crate::emit::{glsl, E};
use dmsh_ir::Type;
use rspirv::spirv::{Op as S, Word};

/// A `Word` of SPIR-V type `u32` or `bool`, with the emitter behind it.
pub(crate) struct W<'a> {
    /// The emitter.
    pub e: &'a mut E,
    /// `u32`.
    pub u: Word,
    /// `bool`.
    pub bo: Word,
    /// `uvec2`.
    pub u2: Word,
}

impl<'a> W<'a> {
    /// Word arithmetic on `e`.
    pub fn new(e: &'a mut E) -> Self {
        let u = e.ty(Type::U32);
        let bo = e.ty(Type::Bool);
        let u2 = e.vec_ty(u, 2);
        W { e, u, bo, u2 }
    }

    /// A `u32` constant.
    pub fn k(&mut self, v: u32) -> Word {
        self.e.u32c(v)
    }

    /// A `u32` constant from a signed value.
    pub fn ki(&mut self, v: i32) -> Word {
        self.e.u32c(v as u32)
    }

    /// A `bool` constant.
    pub fn kb(&mut self, v: bool) -> Word {
        self.e.c(Type::Bool, v as u64)
    }

    // Written inline (`E::op_n`): the routines are thousands of these.
    fn u_op<const N: usize>(&mut self, op: S, args: [Word; N]) -> Word {
        let u = self.u;
        self.e.op_n(op, u, args)
    }

    fn b_op<const N: usize>(&mut self, op: S, args: [Word; N]) -> Word {
        let bo = self.bo;
        self.e.op_n(op, bo, args)
    }

    /// `a + b` (wrapping).
    pub fn add(&mut self, a: Word, b: Word) -> Word {
        self.u_op(S::IAdd, [a, b])
    }
    /// `a - b` (wrapping).
    pub fn sub(&mut self, a: Word, b: Word) -> Word {
        self.u_op(S::ISub, [a, b])
    }
    /// `a & b`.
    pub fn and(&mut self, a: Word, b: Word) -> Word {
        self.u_op(S::BitwiseAnd, [a, b])
    }
    /// `a | b`.
    pub fn or(&mut self, a: Word, b: Word) -> Word {
        self.u_op(S::BitwiseOr, [a, b])
    }
    /// `a ^ b`.
    pub fn xor(&mut self, a: Word, b: Word) -> Word {
        self.u_op(S::BitwiseXor, [a, b])
    }
    /// `!a`.
    pub fn not(&mut self, a: Word) -> Word {
        self.u_op(S::Not, [a])
    }
    /// `a & k`.
    pub fn andk(&mut self, a: Word, k: u32) -> Word {
        let k = self.k(k);
        self.and(a, k)
    }
    /// `a | k`.
    pub fn ork(&mut self, a: Word, k: u32) -> Word {
        let k = self.k(k);
        self.or(a, k)
    }
    /// `a + k`.
    pub fn addk(&mut self, a: Word, k: i32) -> Word {
        let k = self.ki(k);
        self.add(a, k)
    }
    /// `a << n`, `n` a word in 0..=31.
    pub fn shl(&mut self, a: Word, n: Word) -> Word {
        self.u_op(S::ShiftLeftLogical, [a, n])
    }
    /// `a >> n` (logical), `n` a word in 0..=31.
    pub fn shr(&mut self, a: Word, n: Word) -> Word {
        self.u_op(S::ShiftRightLogical, [a, n])
    }
    /// `a << k` for a constant `k` in 0..=31.
    pub fn shlk(&mut self, a: Word, k: u32) -> Word {
        debug_assert!(k < 32);
        let k = self.k(k);
        self.shl(a, k)
    }
    /// `a >> k` (logical) for a constant `k` in 0..=31.
    pub fn shrk(&mut self, a: Word, k: u32) -> Word {
        debug_assert!(k < 32);
        let k = self.k(k);
        self.shr(a, k)
    }
    /// `a >> k` (arithmetic) for a constant `k` in 0..=31.
    pub fn sark(&mut self, a: Word, k: u32) -> Word {
        let k = self.k(k);
        self.u_op(S::ShiftRightArithmetic, [a, k])
    }
    /// `(a >> k) & mask`.
    pub fn field(&mut self, a: Word, k: u32, mask: u32) -> Word {
        let s = if k == 0 { a } else { self.shrk(a, k) };
        self.andk(s, mask)
    }
    /// `a << (32 - n)` for `n` in 0..=31 (0 when `n` is 0), as two defined shifts; `m` is
    /// `31 - n`.
    pub fn shl_comp(&mut self, a: Word, m: Word) -> Word {
        let one = self.shlk(a, 1);
        self.shl(one, m)
    }
    /// `a >> (32 - n)` for `n` in 0..=31 (0 when `n` is 0), as two defined shifts; `m` is
    /// `31 - n`.
    pub fn shr_comp(&mut self, a: Word, m: Word) -> Word {
        let one = self.shrk(a, 1);
        self.shr(one, m)
    }
    /// The number of leading zero bits (32 for 0).
    pub fn clz(&mut self, a: Word) -> Word {
        let u = self.u;
        let msb = self.e.ext(u, glsl::FIND_UMSB, &[a]);
        let k31 = self.k(31);
        self.sub(k31, msb)
    }
    /// Unsigned minimum.
    pub fn umin(&mut self, a: Word, b: Word) -> Word {
        let u = self.u;
        self.e.ext(u, glsl::UMIN, &[a, b])
    }
    /// Signed maximum.
    pub fn smax(&mut self, a: Word, b: Word) -> Word {
        let u = self.u;
        self.e.ext(u, glsl::SMAX, &[a, b])
    }
    /// `(lo, hi)` of the 64-bit product `a * b`.
    pub fn mul_wide(&mut self, a: Word, b: Word) -> (Word, Word) {
        let u = self.u;
        let pair = self.e.pair_ty(u);
        let m = self.e.op(S::UMulExtended, pair, &[a, b]);
        let lo = self.e.b.composite_extract(u, None, m, &[0]).expect("block");
        let hi = self.e.b.composite_extract(u, None, m, &[1]).expect("block");
        (lo, hi)
    }

    /// `a == b`.
    pub fn eq(&mut self, a: Word, b: Word) -> Word {
        self.b_op(S::IEqual, [a, b])
    }
    /// `a != b`.
    pub fn ne(&mut self, a: Word, b: Word) -> Word {
        self.b_op(S::INotEqual, [a, b])
    }
    /// `a < b` (unsigned).
    pub fn ult(&mut self, a: Word, b: Word) -> Word {
        self.b_op(S::ULessThan, [a, b])
    }
    /// `a > b` (unsigned).
    pub fn ugt(&mut self, a: Word, b: Word) -> Word {
        self.b_op(S::UGreaterThan, [a, b])
    }
    /// `a >= b` (unsigned).
    pub fn uge(&mut self, a: Word, b: Word) -> Word {
        self.b_op(S::UGreaterThanEqual, [a, b])
    }
    /// `a >= b` (signed).
    pub fn sge(&mut self, a: Word, b: Word) -> Word {
        self.b_op(S::SGreaterThanEqual, [a, b])
    }
    /// `a == k`.
    pub fn eqk(&mut self, a: Word, k: u32) -> Word {
        let k = self.k(k);
        self.eq(a, k)
    }
    /// `a != k`.
    pub fn nek(&mut self, a: Word, k: u32) -> Word {
        let k = self.k(k);
        self.ne(a, k)
    }
    /// `a != 0`.
    pub fn nz(&mut self, a: Word) -> Word {
        self.nek(a, 0)
    }
    /// `a == 0`.
    pub fn z(&mut self, a: Word) -> Word {
        self.eqk(a, 0)
    }
    /// `a && b`.
    pub fn band(&mut self, a: Word, b: Word) -> Word {
        self.b_op(S::LogicalAnd, [a, b])
    }
    /// `a || b`.
    pub fn bor(&mut self, a: Word, b: Word) -> Word {
        self.b_op(S::LogicalOr, [a, b])
    }
    /// `!a` (boolean).
    pub fn bnot(&mut self, a: Word) -> Word {
        self.b_op(S::LogicalNot, [a])
    }
    /// `c ? a : b` on words.
    pub fn sel(&mut self, c: Word, a: Word, b: Word) -> Word {
        self.u_op(S::Select, [c, a, b])
    }
    /// `c ? a : b` on booleans.
    pub fn bsel(&mut self, c: Word, a: Word, b: Word) -> Word {
        self.b_op(S::Select, [c, a, b])
    }
    /// `c ? k1 : k0` on constant words.
    pub fn selk(&mut self, c: Word, k1: u32, k0: u32) -> Word {
        let (a, b) = (self.k(k1), self.k(k0));
        self.sel(c, a, b)
    }
    /// A boolean as 0 or 1.
    pub fn b2u(&mut self, c: Word) -> Word {
        self.selk(c, 1, 0)
    }

    /// Word-wise `c ? a : b` of two multi-word values.
    pub fn sel_n(&mut self, c: Word, a: &[Word], b: &[Word]) -> Vec<Word> {
        a.iter().zip(b).map(|(&x, &y)| self.sel(c, x, y)).collect()
    }

    /// `uvec2(lo, hi)`.
    pub fn pair(&mut self, lo: Word, hi: Word) -> Word {
        let u2 = self.u2;
        self.e
            .b
            .composite_construct(u2, None, [lo, hi])
            .expect("block")
    }
    /// `(v.x, v.y)` of a `uvec2`.
    pub fn unpair(&mut self, v: Word) -> (Word, Word) {
        let u = self.u;
        let lo = self.e.b.composite_extract(u, None, v, &[0]).expect("block");
        let hi = self.e.b.composite_extract(u, None, v, &[1]).expect("block");
        (lo, hi)
    }

    /// Multi-word `a + b` (same length; the carry out is dropped).
    pub fn add_n(&mut self, a: &[Word], b: &[Word]) -> Vec<Word> {
        let mut out = Vec::with_capacity(a.len());
        let mut carry: Option<Word> = None;
        for (&x, &y) in a.iter().zip(b) {
            let s = self.add(x, y);
            let c1 = self.ult(s, x);
            match carry {
                None => {
                    out.push(s);
                    carry = Some(c1);
                }
                Some(c) => {
                    let cu = self.b2u(c);
                    let s2 = self.add(s, cu);
                    let c2 = self.ult(s2, s);
                    out.push(s2);
                    carry = Some(self.bor(c1, c2));
                }
            }
        }
        out
    }

    /// Multi-word `a - b` (same length) and whether it borrowed (`a < b`).
    pub fn sub_n(&mut self, a: &[Word], b: &[Word]) -> (Vec<Word>, Word) {
        let mut out = Vec::with_capacity(a.len());
        let mut borrow: Option<Word> = None;
        for (&x, &y) in a.iter().zip(b) {
            let d = self.sub(x, y);
            let b1 = self.ult(x, y);
            match borrow {
                None => {
                    out.push(d);
                    borrow = Some(b1);
                }
                Some(br) => {
                    let bu = self.b2u(br);
                    let d2 = self.sub(d, bu);
                    let b2 = self.ult(d, bu);
                    out.push(d2);
                    borrow = Some(self.bor(b1, b2));
                }
            }
        }
        let borrow = borrow.expect("at least one word");
        (out, borrow)
    }

    /// Multi-word `-a`.
    pub fn neg_n(&mut self, a: &[Word]) -> Vec<Word> {
        let zero = self.k(0);
        let z: Vec<Word> = a.iter().map(|_| zero).collect();
        self.sub_n(&z, a).0
    }

    /// Multi-word `a < b` (unsigned).
    pub fn lt_n(&mut self, a: &[Word], b: &[Word]) -> Word {
        self.sub_n(a, b).1
    }

    /// Whether every word is zero.
    pub fn zero_n(&mut self, a: &[Word]) -> Word {
        let mut acc = a[0];
        for &x in &a[1..] {
            acc = self.or(acc, x);
        }
        self.z(acc)
    }

    /// The leading zero bits of a multi-word value (`32 · len` for 0).
    pub fn clz_n(&mut self, a: &[Word]) -> Word {
        // From the lowest word up: acc = clz of the words so far (high to low).
        let mut acc = self.clz(a[0]);
        for &x in &a[1..] {
            let c = self.clz(x);
            let below = self.addk(acc, 32);
            let nz = self.nz(x);
            acc = self.sel(nz, c, below);
        }
        acc
    }

    /// Multi-word `a << n` for a word `n` in 0..32·len (bits shifted out are lost).
    pub fn shl_n(&mut self, a: &[Word], n: Word) -> Vec<Word> {
        let len = a.len();
        let q = self.shrk(n, 5);
        let r = self.andk(n, 31);
        let zero = self.k(0);
        // Whole words, a stage per bit of q: word i takes w[i - m] where the stage shifts.
        let mut w = a.to_vec();
        let mut m = 1;
        let mut bit = 0;
        while m < len {
            let b = self.field(q, bit, 1);
            let on = self.nz(b);
            w = (0..len)
                .map(|i| {
                    let src = if i >= m { w[i - m] } else { zero };
                    self.sel(on, src, w[i])
                })
                .collect();
            m *= 2;
            bit += 1;
        }
        // Bits.
        let k31 = self.k(31);
        let rc = self.sub(k31, r);
        let mut out = Vec::with_capacity(len);
        for i in 0..len {
            let hi = self.shl(w[i], r);
            if i == 0 {
                out.push(hi);
            } else {
                let lo = self.shr_comp(w[i - 1], rc);
                out.push(self.or(hi, lo));
            }
        }
        out
    }

    /// Multi-word `a >> n` (logical) for a word `n` in 0..32·len (bits shifted out lost).
    pub fn shr_n(&mut self, a: &[Word], n: Word) -> Vec<Word> {
        self.shr_n_lost(a, n, false).0
    }

    /// Multi-word `a >> n` for a word `n` in 0..32·len (0..=32·len when `full`), and whether
    /// a 1 bit was shifted out.
    pub fn shr_n_lost(&mut self, a: &[Word], n: Word, full: bool) -> (Vec<Word>, Word) {
        let len = a.len();
        let q = self.shrk(n, 5);
        let r = self.andk(n, 31);
        let zero = self.k(0);
        // Whole words, a stage per bit of q (0..=len): word i takes w[i + m] where the stage
        // shifts, and the m lowest words are lost.
        let mut w = a.to_vec();
        let mut lost = zero;
        let mut m = 1;
        let mut bit = 0;
        while m < len || (full && m == len) {
            let b = self.field(q, bit, 1);
            let on = self.nz(b);
            let mut gone = w[0];
            for &x in &w[1..m.min(len)] {
                gone = self.or(gone, x);
            }
            let gone = self.sel(on, gone, zero);
            lost = self.or(lost, gone);
            w = (0..len)
                .map(|i| {
                    let src = if i + m < len { w[i + m] } else { zero };
                    self.sel(on, src, w[i])
                })
                .collect();
            m *= 2;
            bit += 1;
        }
        // Bits.
        let one = self.k(1);
        let mask = self.shl(one, r);
        let mask = self.sub(mask, one);
        let low = self.and(w[0], mask);
        lost = self.or(lost, low);
        let k31 = self.k(31);
        let rc = self.sub(k31, r);
        let mut out = Vec::with_capacity(len);
        for i in 0..len {
            let lo = self.shr(w[i], r);
            if i + 1 == len {
                out.push(lo);
            } else {
                let hi = self.shl_comp(w[i + 1], rc);
                out.push(self.or(lo, hi));
            }
        }
        let lost = self.nz(lost);
        (out, lost)
    }

    /// Multi-word `a >> n` with the bits shifted out ORed ("jammed") into the lowest bit, for
    /// a word `n` (any value: from 32·len on, the result is the jam bit alone).
    pub fn shr_jam_n(&mut self, a: &[Word], n: Word) -> Vec<Word> {
        let lim = self.k(32 * a.len() as u32);
        let n = self.umin(n, lim);
        let (mut out, lost) = self.shr_n_lost(a, n, true);
        let l = self.b2u(lost);
        out[0] = self.or(out[0], l);
        out
    }
}
