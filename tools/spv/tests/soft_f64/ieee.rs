//! An exact model of IEEE 754 binary16 / binary32 / binary64 arithmetic, written from the
//! standard's definitions for the soft-f64 test: a finite value is `±m · 2^e` with an
//! arbitrary-precision integer `m`, every result is computed exactly (no intermediate
//! rounding at all) and then rounded once (IEEE 754-2019 §4.3: the nearest representable
//! value, ties to even; or the one toward −∞, +∞ or zero; overflow per §7.4). It shares no
//! code or algorithm with the routines it checks (`tools/spv/src/soft/`), which work in
//! fixed 96- and 128-bit frames with sticky bits.
//!
//! NaN results are not fixed by IEEE 754 beyond being NaNs; the model follows the convention
//! the translation documents (x86's, which the host's own f64 operations cross-check): the
//! first NaN operand made quiet (payload truncated or widened by keeping its top bits), and
//! the default NaN with the sign bit set for invalid operations.

#![allow(dead_code)]

use std::cmp::Ordering;

/// A non-negative integer of any size: little-endian 32-bit limbs, no zero limb on top.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Big(Vec<u32>);

impl Big {
    /// `v`.
    pub fn from_u128(mut v: u128) -> Big {
        let mut l = Vec::new();
        while v != 0 {
            l.push(v as u32);
            v >>= 32;
        }
        Big(l)
    }

    fn norm(mut self) -> Big {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
        self
    }

    /// Whether it is zero.
    pub fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    /// The number of significant bits (0 for zero).
    pub fn bits(&self) -> i64 {
        match self.0.last() {
            None => 0,
            Some(&top) => 32 * (self.0.len() as i64 - 1) + (32 - top.leading_zeros() as i64),
        }
    }

    /// Bit `i`.
    pub fn bit(&self, i: i64) -> bool {
        let (w, b) = ((i / 32) as usize, i % 32);
        self.0.get(w).is_some_and(|x| (x >> b) & 1 == 1)
    }

    /// Whether any bit below bit `n` is set.
    pub fn low_nonzero(&self, n: i64) -> bool {
        (0..n.min(self.bits())).any(|i| self.bit(i))
    }

    /// `self · 2^n`.
    pub fn shl(&self, n: i64) -> Big {
        let (w, b) = ((n / 32) as usize, n % 32);
        let mut l = vec![0u32; w];
        let mut carry = 0u32;
        for &x in &self.0 {
            l.push((x << b) | carry);
            carry = if b == 0 { 0 } else { x >> (32 - b) };
        }
        l.push(carry);
        Big(l).norm()
    }

    /// `⌊self / 2^n⌋`.
    pub fn shr(&self, n: i64) -> Big {
        let (w, b) = ((n / 32) as usize, n % 32);
        if w >= self.0.len() {
            return Big(Vec::new());
        }
        let src = &self.0[w..];
        let l = (0..src.len())
            .map(|i| {
                let lo = src[i] >> b;
                let hi = if b == 0 {
                    0
                } else {
                    src.get(i + 1).map_or(0, |&x| x << (32 - b))
                };
                lo | hi
            })
            .collect();
        Big(l).norm()
    }

    /// `self + o`.
    pub fn add(&self, o: &Big) -> Big {
        let n = self.0.len().max(o.0.len());
        let mut l = Vec::with_capacity(n + 1);
        let mut c = 0u64;
        for i in 0..n {
            let s = *self.0.get(i).unwrap_or(&0) as u64 + *o.0.get(i).unwrap_or(&0) as u64 + c;
            l.push(s as u32);
            c = s >> 32;
        }
        l.push(c as u32);
        Big(l).norm()
    }

    /// `self − o` (`self ≥ o`).
    pub fn sub(&self, o: &Big) -> Big {
        assert!(self.cmp(o) != Ordering::Less);
        let mut l = Vec::with_capacity(self.0.len());
        let mut br = 0i64;
        for i in 0..self.0.len() {
            let d = self.0[i] as i64 - *o.0.get(i).unwrap_or(&0) as i64 - br;
            l.push(d.rem_euclid(1 << 32) as u32);
            br = (d < 0) as i64;
        }
        Big(l).norm()
    }

    /// The order of `self` and `o`.
    pub fn cmp(&self, o: &Big) -> Ordering {
        self.0
            .len()
            .cmp(&o.0.len())
            .then_with(|| self.0.iter().rev().cmp(o.0.iter().rev()))
    }

    /// `self · o`.
    pub fn mul(&self, o: &Big) -> Big {
        let mut l = vec![0u64; self.0.len() + o.0.len() + 1];
        for (i, &x) in self.0.iter().enumerate() {
            let mut c = 0u64;
            for (j, &y) in o.0.iter().enumerate() {
                let t = l[i + j] + x as u64 * y as u64 + c;
                l[i + j] = t & 0xffff_ffff;
                c = t >> 32;
            }
            let mut k = i + o.0.len();
            while c != 0 {
                let t = l[k] + c;
                l[k] = t & 0xffff_ffff;
                c = t >> 32;
                k += 1;
            }
        }
        Big(l.into_iter().map(|x| x as u32).collect()).norm()
    }

    /// The value (it must fit).
    pub fn to_u128(&self) -> u128 {
        assert!(self.bits() <= 128);
        self.0
            .iter()
            .rev()
            .fold(0u128, |acc, &x| (acc << 32) | x as u128)
    }
}

/// A binary interchange format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fmt {
    /// Precision in bits (with the implicit bit).
    pub p: i64,
    /// Exponent bias (= emax).
    pub bias: i64,
    /// Width in bits.
    pub width: u32,
}

/// binary16.
pub const F16: Fmt = Fmt {
    p: 11,
    bias: 15,
    width: 16,
};
/// binary32.
pub const F32: Fmt = Fmt {
    p: 24,
    bias: 127,
    width: 32,
};
/// binary64.
pub const F64: Fmt = Fmt {
    p: 53,
    bias: 1023,
    width: 64,
};

impl Fmt {
    fn emask(self) -> u64 {
        (1u64 << (self.width as i64 - self.p)) - 1
    }
    fn sign(self) -> u64 {
        1u64 << (self.width - 1)
    }
    /// The bits of ±∞.
    pub fn inf(self, neg: bool) -> u64 {
        self.emask() << (self.p - 1) | if neg { self.sign() } else { 0 }
    }
    /// The bits of ±0.
    pub fn zero(self, neg: bool) -> u64 {
        if neg {
            self.sign()
        } else {
            0
        }
    }
    /// The default NaN (sign set, quiet).
    pub fn default_nan(self) -> u64 {
        self.inf(true) | 1u64 << (self.p - 2)
    }
    fn max_finite(self, neg: bool) -> u64 {
        self.inf(neg) - 1
    }
}

/// A rounding-direction attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// roundTiesToEven.
    Rn,
    /// roundTowardNegative.
    Rm,
    /// roundTowardPositive.
    Rp,
    /// roundTowardZero.
    Rz,
}

/// Every mode.
pub const MODES: [Mode; 4] = [Mode::Rn, Mode::Rm, Mode::Rp, Mode::Rz];

/// A finite value `(−1)^neg · mag · 2^exp`.
#[derive(Clone, Debug)]
pub struct Exact {
    /// The sign (also of a zero).
    pub neg: bool,
    /// The magnitude's integer.
    pub mag: Big,
    /// Its scale.
    pub exp: i64,
}

/// A decoded datum.
#[derive(Clone, Debug)]
pub enum Val {
    /// A NaN (its bits).
    Nan(u64),
    /// ±∞ (negative when true).
    Inf(bool),
    /// A finite value (zero included).
    Fin(Exact),
}

/// The datum `bits` of format `f`.
pub fn decode(f: Fmt, bits: u64) -> Val {
    let neg = bits & f.sign() != 0;
    let ef = (bits >> (f.p - 1)) & f.emask();
    let frac = bits & ((1u64 << (f.p - 1)) - 1);
    if ef == f.emask() {
        return if frac == 0 {
            Val::Inf(neg)
        } else {
            Val::Nan(bits)
        };
    }
    let emin = 1 - f.bias;
    let (m, e) = if ef == 0 {
        (frac, emin - (f.p - 1))
    } else {
        (frac | 1u64 << (f.p - 1), ef as i64 - f.bias - (f.p - 1))
    };
    Val::Fin(Exact {
        neg,
        mag: Big::from_u128(m as u128),
        exp: e,
    })
}

/// The NaN `bits` of format `from` as a quiet NaN of format `to`: the sign and the top
/// fraction bits kept, the quiet bit set.
pub fn nan_to(from: Fmt, to: Fmt, bits: u64) -> u64 {
    let neg = bits & from.sign() != 0;
    let pl = bits & ((1u64 << (from.p - 1)) - 1);
    let pl = if to.p <= from.p {
        pl >> (from.p - to.p)
    } else {
        pl << (to.p - from.p)
    };
    to.inf(neg) | pl | 1u64 << (to.p - 2)
}

/// The nonzero exact `(−1)^neg · x · 2^exp` rounded to `f` in `mode` (IEEE 754 §4.3, §7.4):
/// its bits.
pub fn round(f: Fmt, neg: bool, x: &Big, exp: i64, mode: Mode) -> u64 {
    assert!(!x.is_zero());
    let lead = exp + x.bits() - 1;
    let emin = 1 - f.bias;
    // The quantum: the exponent of the last significant bit of the result.
    let mut q = (lead - (f.p - 1)).max(emin - (f.p - 1));
    let (mut n, half, below) = if exp >= q {
        (x.shl(exp - q), false, false)
    } else {
        let sh = q - exp;
        (x.shr(sh), x.bit(sh - 1), x.low_nonzero(sh - 1))
    };
    let inexact = half || below;
    let up = match mode {
        Mode::Rn => half && (below || n.bit(0)),
        Mode::Rz => false,
        Mode::Rp => !neg && inexact,
        Mode::Rm => neg && inexact,
    };
    if up {
        n = n.add(&Big::from_u128(1));
    }
    if n.bits() > f.p {
        n = n.shr(1);
        q += 1;
    }
    let sign = if neg { f.sign() } else { 0 };
    if q + n.bits() - 1 > f.bias {
        let to_inf = match mode {
            Mode::Rn => true,
            Mode::Rz => false,
            Mode::Rp => !neg,
            Mode::Rm => neg,
        };
        return if to_inf {
            f.inf(neg)
        } else {
            f.max_finite(neg)
        };
    }
    let n = n.to_u128() as u64;
    if n >> (f.p - 1) == 0 {
        return sign | n; // subnormal (or zero after rounding)
    }
    let be = (q + (f.p - 1) + f.bias) as u64;
    sign | be << (f.p - 1) | (n & ((1u64 << (f.p - 1)) - 1))
}

/// The exact sum of two finite values (its sign meaningless when it is zero).
fn exact_add(a: &Exact, b: &Exact) -> Exact {
    let e = a.exp.min(b.exp);
    let am = a.mag.shl(a.exp - e);
    let bm = b.mag.shl(b.exp - e);
    if a.neg == b.neg {
        return Exact {
            neg: a.neg,
            mag: am.add(&bm),
            exp: e,
        };
    }
    match am.cmp(&bm) {
        Ordering::Less => Exact {
            neg: b.neg,
            mag: bm.sub(&am),
            exp: e,
        },
        _ => Exact {
            neg: a.neg,
            mag: am.sub(&bm),
            exp: e,
        },
    }
}

fn exact_mul(a: &Exact, b: &Exact) -> Exact {
    Exact {
        neg: a.neg != b.neg,
        mag: a.mag.mul(&b.mag),
        exp: a.exp + b.exp,
    }
}

/// The sum `x + y` of two finite values whose exact sum is `s`, rounded to `f` (§6.3 for the
/// sign of an exact zero).
fn round_sum(f: Fmt, x: &Exact, y: &Exact, s: &Exact, mode: Mode) -> u64 {
    if s.mag.is_zero() {
        let both_zero = x.mag.is_zero() && y.mag.is_zero();
        let neg = if both_zero && x.neg == y.neg {
            x.neg
        } else {
            mode == Mode::Rm
        };
        return f.zero(neg);
    }
    round(f, s.neg, &s.mag, s.exp, mode)
}

/// `a + b` in format `f` (§5.4.1).
pub fn add(f: Fmt, a: u64, b: u64, mode: Mode) -> u64 {
    match (decode(f, a), decode(f, b)) {
        (Val::Nan(_), _) => nan_to(f, f, a),
        (_, Val::Nan(_)) => nan_to(f, f, b),
        (Val::Inf(x), Val::Inf(y)) if x != y => f.default_nan(),
        (Val::Inf(x), _) | (_, Val::Inf(x)) => f.inf(x),
        (Val::Fin(x), Val::Fin(y)) => round_sum(f, &x, &y, &exact_add(&x, &y), mode),
    }
}

/// `a · b` in format `f`.
pub fn mul(f: Fmt, a: u64, b: u64, mode: Mode) -> u64 {
    match (decode(f, a), decode(f, b)) {
        (Val::Nan(_), _) => nan_to(f, f, a),
        (_, Val::Nan(_)) => nan_to(f, f, b),
        (Val::Inf(_), Val::Fin(y)) | (Val::Fin(y), Val::Inf(_)) if y.mag.is_zero() => {
            f.default_nan()
        }
        (Val::Inf(x), Val::Inf(y)) => f.inf(x != y),
        (Val::Inf(x), Val::Fin(y)) | (Val::Fin(y), Val::Inf(x)) => f.inf(x != y.neg),
        (Val::Fin(x), Val::Fin(y)) => {
            let p = exact_mul(&x, &y);
            if p.mag.is_zero() {
                f.zero(p.neg)
            } else {
                round(f, p.neg, &p.mag, p.exp, mode)
            }
        }
    }
}

/// `a · b + c` in format `f`, rounded once (§5.4.1 fusedMultiplyAdd).
pub fn fma(f: Fmt, a: u64, b: u64, c: u64, mode: Mode) -> u64 {
    let (va, vb, vc) = (decode(f, a), decode(f, b), decode(f, c));
    for (v, bits) in [(&va, a), (&vb, b), (&vc, c)] {
        if let Val::Nan(_) = v {
            return nan_to(f, f, bits);
        }
    }
    let zero = |v: &Val| matches!(v, Val::Fin(x) if x.mag.is_zero());
    let neg = |v: &Val| match v {
        Val::Inf(n) => *n,
        Val::Fin(x) => x.neg,
        Val::Nan(_) => false,
    };
    let a_inf = matches!(va, Val::Inf(_));
    let b_inf = matches!(vb, Val::Inf(_));
    if (a_inf && zero(&vb)) || (b_inf && zero(&va)) {
        return f.default_nan();
    }
    let pneg = neg(&va) != neg(&vb);
    if a_inf || b_inf {
        if let Val::Inf(cn) = vc {
            if cn != pneg {
                return f.default_nan();
            }
        }
        return f.inf(pneg);
    }
    if let Val::Inf(cn) = vc {
        return f.inf(cn);
    }
    let (Val::Fin(x), Val::Fin(y), Val::Fin(z)) = (va, vb, vc) else {
        unreachable!()
    };
    let p = exact_mul(&x, &y);
    round_sum(f, &p, &z, &exact_add(&p, &z), mode)
}

/// The datum `bits` of format `from` converted to format `to` (§5.4.2).
pub fn convert(from: Fmt, to: Fmt, bits: u64, mode: Mode) -> u64 {
    match decode(from, bits) {
        Val::Nan(_) => nan_to(from, to, bits),
        Val::Inf(n) => to.inf(n),
        Val::Fin(x) if x.mag.is_zero() => to.zero(x.neg),
        Val::Fin(x) => round(to, x.neg, &x.mag, x.exp, mode),
    }
}

/// The integer `v` converted to format `to` (§5.4.1 convertFromInt; zero is +0).
pub fn from_int(to: Fmt, v: i128, mode: Mode) -> u64 {
    if v == 0 {
        return 0;
    }
    round(to, v < 0, &Big::from_u128(v.unsigned_abs()), 0, mode)
}

/// The f64 `bits` rounded to an integral value in `mode` (§5.3.1 roundToIntegral; a NaN made
/// quiet).
pub fn rint(bits: u64, mode: Mode) -> u64 {
    match decode(F64, bits) {
        Val::Nan(_) => nan_to(F64, F64, bits),
        Val::Inf(_) => bits,
        Val::Fin(x) => {
            if x.exp >= 0 || x.mag.is_zero() {
                return bits;
            }
            let sh = -x.exp;
            let mut n = x.mag.shr(sh);
            let half = x.mag.bit(sh - 1);
            let below = x.mag.low_nonzero(sh - 1);
            let up = match mode {
                Mode::Rn => half && (below || n.bit(0)),
                Mode::Rz => false,
                Mode::Rp => !x.neg && (half || below),
                Mode::Rm => x.neg && (half || below),
            };
            if up {
                n = n.add(&Big::from_u128(1));
            }
            if n.is_zero() {
                F64.zero(x.neg)
            } else {
                round(F64, x.neg, &n, 0, Mode::Rn)
            }
        }
    }
}

/// The f64 `bits` truncated to an integer (`None` for ∞ and NaN).
pub fn trunc_int(bits: u64) -> Option<i128> {
    match decode(F64, bits) {
        Val::Fin(x) => {
            let m = if x.exp >= 0 {
                x.mag.shl(x.exp)
            } else {
                x.mag.shr(-x.exp)
            };
            if m.bits() > 100 {
                return None;
            }
            let v = m.to_u128() as i128;
            Some(if x.neg { -v } else { v })
        }
        _ => None,
    }
}

/// The order of two f64s (`None`: unordered), −0 = +0 (§5.11).
pub fn compare(a: u64, b: u64) -> Option<Ordering> {
    let (Val::Fin(x), Val::Fin(y)) = (decode(F64, a), decode(F64, b)) else {
        let inf_key = |bits: u64| match decode(F64, bits) {
            Val::Inf(n) => Some(if n { -1i8 } else { 1 }),
            Val::Fin(_) => Some(0),
            Val::Nan(_) => None,
        };
        let (ka, kb) = (inf_key(a)?, inf_key(b)?);
        if ka != 0 || kb != 0 {
            return Some(ka.cmp(&kb));
        }
        unreachable!()
    };
    let d = exact_add(
        &x,
        &Exact {
            neg: !y.neg,
            ..y.clone()
        },
    );
    Some(if d.mag.is_zero() {
        Ordering::Equal
    } else if d.neg {
        Ordering::Less
    } else {
        Ordering::Greater
    })
}
