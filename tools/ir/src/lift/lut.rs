//! Three-input lookup tables — `LOP3.LUT` on 32-bit words, `PLOP3.LUT` on predicates — as
//! a handful of operations.
//!
//! Bit `4a + 2b + c` of a table is the result for input bits `a`, `b`, `c`. A sum of the
//! table's minterms costs up to 27 operations (three NOTs, two ANDs and an OR per set bit),
//! each of which every pass and the back end then carry. Instead the table is split on `a`
//! (Shannon expansion): `f = f₀ ^ (a & (f₀ ^ f₁))`, where `f₀` and `f₁` are the two-input
//! tables of `b` and `c` for `a` clear and set, and each two-input table is at most two
//! operations. The usual shapes get shorter forms (`a & f₁` when `f₀` is zero, `a | f₀` when
//! `f₁` is all ones, …), so no table takes more than six operations and the common ones
//! (AND, OR and XOR of two or three inputs, selects, majority) take one to four.

use super::ctx::Cx;
use crate::ir::{Op, Value};

/// The operations a table is built from: on 32-bit words or on Bools.
pub(crate) trait Logic {
    /// A value.
    type V: Copy;
    /// All zeros (`false`) or all ones (`true`).
    fn konst(&mut self, ones: bool) -> Self::V;
    /// `!a`.
    fn not(&mut self, a: Self::V) -> Self::V;
    /// `a & b`.
    fn and(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// `a | b`.
    fn or(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// `a ^ b`.
    fn xor(&mut self, a: Self::V, b: Self::V) -> Self::V;
}

/// A partial result: a constant or a value.
#[derive(Clone, Copy)]
enum Term<V> {
    Zeros,
    Ones,
    Is(V),
}

/// The operations on [`Term`]s, folding the constants away.
struct Fold<'a, L>(&'a mut L);

impl<L: Logic> Fold<'_, L> {
    fn not(&mut self, a: Term<L::V>) -> Term<L::V> {
        match a {
            Term::Zeros => Term::Ones,
            Term::Ones => Term::Zeros,
            Term::Is(v) => Term::Is(self.0.not(v)),
        }
    }

    fn and(&mut self, a: Term<L::V>, b: Term<L::V>) -> Term<L::V> {
        match (a, b) {
            (Term::Zeros, _) | (_, Term::Zeros) => Term::Zeros,
            (Term::Ones, x) | (x, Term::Ones) => x,
            (Term::Is(x), Term::Is(y)) => Term::Is(self.0.and(x, y)),
        }
    }

    fn or(&mut self, a: Term<L::V>, b: Term<L::V>) -> Term<L::V> {
        match (a, b) {
            (Term::Ones, _) | (_, Term::Ones) => Term::Ones,
            (Term::Zeros, x) | (x, Term::Zeros) => x,
            (Term::Is(x), Term::Is(y)) => Term::Is(self.0.or(x, y)),
        }
    }

    fn xor(&mut self, a: Term<L::V>, b: Term<L::V>) -> Term<L::V> {
        match (a, b) {
            (Term::Zeros, x) | (x, Term::Zeros) => x,
            (Term::Ones, x) | (x, Term::Ones) => self.not(x),
            (Term::Is(x), Term::Is(y)) => Term::Is(self.0.xor(x, y)),
        }
    }

    /// The two-input table `t` of `b` and `c` (bit `2b + c`), in at most two operations.
    fn lut2(&mut self, t: u8, b: L::V, c: L::V) -> Term<L::V> {
        let (b, c) = (Term::Is(b), Term::Is(c));
        match t & 0xf {
            0x0 => Term::Zeros,
            0xf => Term::Ones,
            0xc => b,
            0xa => c,
            0x3 => self.not(b),
            0x5 => self.not(c),
            0x8 => self.and(b, c),
            0xe => self.or(b, c),
            0x6 => self.xor(b, c),
            0x7 => {
                let t = self.and(b, c);
                self.not(t)
            }
            0x1 => {
                let t = self.or(b, c);
                self.not(t)
            }
            0x9 => {
                let t = self.xor(b, c);
                self.not(t)
            }
            0x4 => {
                let nc = self.not(c);
                self.and(b, nc)
            }
            0x2 => {
                let nb = self.not(b);
                self.and(nb, c)
            }
            0xb => {
                let nb = self.not(b);
                self.or(nb, c)
            }
            _ => {
                // 0xd
                let nc = self.not(c);
                self.or(b, nc)
            }
        }
    }
}

/// Table `lut` applied to `a`, `b` and `c`.
pub(crate) fn lut3<L: Logic>(l: &mut L, lut: u8, a: L::V, b: L::V, c: L::V) -> L::V {
    let mut x = Fold(l);
    // The halves for `a` clear and set, and where they differ.
    let (t0, t1) = (lut & 0xf, lut >> 4);
    let g = t0 ^ t1;
    let va = Term::Is(a);
    let r = if g == 0 {
        x.lut2(t0, b, c)
    } else if t0 == 0 {
        let f1 = x.lut2(t1, b, c);
        x.and(va, f1)
    } else if t1 == 0 {
        let f0 = x.lut2(t0, b, c);
        let na = x.not(va);
        x.and(na, f0)
    } else if t1 == 0xf {
        let f0 = x.lut2(t0, b, c);
        x.or(va, f0)
    } else if t0 == 0xf {
        let f1 = x.lut2(t1, b, c);
        let na = x.not(va);
        x.or(na, f1)
    } else {
        let f0 = x.lut2(t0, b, c);
        let d = x.lut2(g, b, c);
        let sel = x.and(va, d);
        x.xor(f0, sel)
    };
    match r {
        Term::Zeros => l.konst(false),
        Term::Ones => l.konst(true),
        Term::Is(v) => v,
    }
}

/// [`Logic`] on the lifter's values: 32-bit words (`LOP3`) or, with `bools`, predicates
/// (`PLOP3`); the two differ only in their constants.
pub(crate) struct OnCx<'a, 'c> {
    /// The lifting context.
    pub cx: &'a mut Cx<'c>,
    /// Whether the values are Bools.
    pub bools: bool,
}

impl Logic for OnCx<'_, '_> {
    type V = Value;
    fn konst(&mut self, ones: bool) -> Value {
        if self.bools {
            self.cx.cbool(ones)
        } else {
            self.cx.c32(if ones { !0 } else { 0 })
        }
    }
    fn not(&mut self, a: Value) -> Value {
        self.cx.not(a)
    }
    fn and(&mut self, a: Value, b: Value) -> Value {
        self.cx.and(a, b)
    }
    fn or(&mut self, a: Value, b: Value) -> Value {
        self.cx.or(a, b)
    }
    fn xor(&mut self, a: Value, b: Value) -> Value {
        self.cx.bin(Op::Xor, a, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Evaluation on words, counting the operations.
    #[derive(Default)]
    struct Eval {
        ops: usize,
    }

    impl Logic for Eval {
        type V = u32;
        fn konst(&mut self, ones: bool) -> u32 {
            if ones {
                !0
            } else {
                0
            }
        }
        fn not(&mut self, a: u32) -> u32 {
            self.ops += 1;
            !a
        }
        fn and(&mut self, a: u32, b: u32) -> u32 {
            self.ops += 1;
            a & b
        }
        fn or(&mut self, a: u32, b: u32) -> u32 {
            self.ops += 1;
            a | b
        }
        fn xor(&mut self, a: u32, b: u32) -> u32 {
            self.ops += 1;
            a ^ b
        }
    }

    /// Every table computes itself (inputs whose bits run through all eight combinations,
    /// so the result's bytes are the table), in at most six operations; the common ones in
    /// their shortest forms.
    #[test]
    fn every_table_is_itself_in_few_operations() {
        let (a, b, c) = (0xf0f0_f0f0u32, 0xcccc_ccccu32, 0xaaaa_aaaau32);
        let mut most = 0;
        for lut in 0..=255u8 {
            let mut e = Eval::default();
            let r = lut3(&mut e, lut, a, b, c);
            assert_eq!(r, u32::from_ne_bytes([lut; 4]), "LUT {lut:#04x}");
            assert!(e.ops <= 6, "LUT {lut:#04x}: {} operations", e.ops);
            most = most.max(e.ops);
        }
        assert_eq!(most, 6);
        let ops = |lut| {
            let mut e = Eval::default();
            lut3(&mut e, lut, a, b, c);
            e.ops
        };
        // Copies and constants, then AND / OR / XOR of two and of three inputs, majority.
        for lut in [0x00, 0xff, 0xf0, 0xcc, 0xaa] {
            assert_eq!(ops(lut), 0, "{lut:#04x}");
        }
        for lut in [0xc0, 0xa0, 0x88, 0xfc, 0xfa, 0xee, 0x3c, 0x5a, 0x66, 0x0f] {
            assert_eq!(ops(lut), 1, "{lut:#04x}");
        }
        for lut in [0x80, 0xfe, 0x96] {
            assert_eq!(ops(lut), 2, "{lut:#04x}");
        }
        assert_eq!(ops(0xe8), 4);
    }
}
