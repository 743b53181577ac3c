//! The special values of a format as the routines return them (`uvec2` for f64, the bits in
//! a `u32` otherwise), and choosing between such values.

use super::{Fmt, W};
use rspirv::spirv::{Op as S, Word};

impl W<'_> {
    /// A value of format `f` from its (low, high) words (`u32` formats: the low word).
    fn fmt_val(&mut self, f: Fmt, lo: Word, hi: Word) -> Word {
        match f {
            Fmt::F64 => self.pair(lo, hi),
            _ => lo,
        }
    }

    /// `c ? a : b` on values of format `f`.
    pub fn sel_fmt(&mut self, f: Fmt, c: Word, a: Word, b: Word) -> Word {
        let ty = self.e.soft_bits_ty(f);
        self.e.op(S::Select, ty, &[c, a, b])
    }

    /// ±∞ (sign word `s`, 0 or 1) in format `f`.
    pub fn inf_of(&mut self, f: Fmt, s: Word) -> Word {
        let (top, inf) = match f {
            Fmt::F64 => (31, 0x7ff0_0000),
            Fmt::F32 => (31, 0x7f80_0000),
            Fmt::F16 => (15, 0x7c00),
        };
        let sb = self.shlk(s, top);
        let v = self.ork(sb, inf);
        let zero = self.k(0);
        match f {
            Fmt::F64 => self.fmt_val(f, zero, v),
            _ => v,
        }
    }

    /// ±0 (sign word `s`) in format `f`.
    pub fn zero_of(&mut self, f: Fmt, s: Word) -> Word {
        let top = if f == Fmt::F16 { 15 } else { 31 };
        let sb = self.shlk(s, top);
        let zero = self.k(0);
        match f {
            Fmt::F64 => self.fmt_val(f, zero, sb),
            _ => sb,
        }
    }

    /// The default NaN of format `f` (sign set, quiet: x86's).
    pub fn default_nan(&mut self, f: Fmt) -> Word {
        let zero = self.k(0);
        match f {
            Fmt::F64 => {
                let hi = self.k(0xfff8_0000);
                self.fmt_val(f, zero, hi)
            }
            Fmt::F32 => self.k(0xffc0_0000),
            Fmt::F16 => self.k(0xfe00),
        }
    }

    /// The f64 NaN `(lo, hi)` as a quiet NaN of format `f`: its sign and the top fraction
    /// bits the format holds.
    pub fn nan_of(&mut self, f: Fmt, lo: Word, hi: Word) -> Word {
        match f {
            Fmt::F64 => {
                let q = self.quiet(hi);
                self.pair(lo, q)
            }
            Fmt::F32 => {
                let pl = self.andk(hi, 0x7_ffff);
                let pl = self.shlk(pl, 3);
                let pl2 = self.shrk(lo, 29);
                let pl = self.or(pl, pl2);
                let ns = self.andk(hi, 0x8000_0000);
                let nan = self.ork(ns, 0x7fc0_0000);
                self.or(nan, pl)
            }
            Fmt::F16 => {
                let pl = self.field(hi, 10, 0x1ff);
                let ns = self.field(hi, 16, 0x8000);
                let nan = self.ork(ns, 0x7e00);
                self.or(nan, pl)
            }
        }
    }
}
