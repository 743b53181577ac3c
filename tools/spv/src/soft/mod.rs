//! Soft f64 ([`crate::F64Mode::Soft`]): 64-bit floating point without a 64-bit float type.
//!
//! Metal has no `double`. In this mode an IR value of type `F64` is a `uvec2` holding its bit
//! pattern (`x` the low word, `y` the high word: the order of an `OpBitcast` from `u64`), and
//! every operation on it is exact IEEE 754 arithmetic on 32-bit integers. So is every place
//! where the native translation rounds through f64: f32 and f16 directed rounding (`.RZ/.RM/
//! .RP`), the exact f32 FMA emulation, and directed-rounding conversions.
//!
//! The routines are SPIR-V functions, each emitted once per module on first use
//! ([`Routine`], `E::soft_call`) after the entry point's function, copied from a template
//! made once per process ([`template`]):
//!
//! * `round` ([`round`]): a sign, an exponent and a normalized 96-bit significand (the bits
//!   below it ORed into the lowest bit) rounded to f64, f32 or f16 in a run-time mode, with
//!   subnormal results and overflow as IEEE 754 defines them.
//! * `fma` ([`fma`]): `a · b + c` of f64 bit patterns computed exactly in a 128-bit frame and
//!   rounded once to the format of the routine. Addition is `a · 1 + b`, multiplication
//!   `a · b ∓ 0` — one rounding each, so every mode is exact.
//! * `cmp` and the min / max and saturation built on it ([`cmp`]); conversions ([`conv`]):
//!   f64 → f32 / f16 and 64-bit integers → any format through `round`, exact f32 → f64 and
//!   32-bit integer → f64, f64 → integer, rounding to an integral value; division and square
//!   root ([`divsqrt`], for `MUFU.RCP64H` / `RSQ64H`).
//!
//! NaN results follow the x86 conventions the native translation shows on lavapipe: the
//! first NaN operand, made quiet (its payload kept as far as the format allows); an invalid
//! operation gives the default NaN with the sign bit set. Maxwell and Ampere keep subnormals
//! in f64, so no routine flushes.

mod cmp;
mod conv;
mod divsqrt;
mod fma;
mod ops;
mod round;
mod special;
mod template;
mod word;

pub(crate) use word::W;

use crate::emit::E;
use dmsh_ir::{Round, Type};
use rspirv::spirv::{self, Op as S, Word};
use std::collections::HashMap;

/// A float format the routines round to.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) enum Fmt {
    /// Binary16.
    F16,
    /// Binary32.
    F32,
    /// Binary64.
    F64,
}

impl Fmt {
    /// The format of an IR float type.
    pub fn of(t: Type) -> Fmt {
        match t {
            Type::F16 => Fmt::F16,
            Type::F32 => Fmt::F32,
            _ => Fmt::F64,
        }
    }
}

/// The rounding-mode word the routines take.
pub(crate) fn mode_word(r: Round) -> u32 {
    match r {
        Round::Rn => MODE_RN,
        Round::Rm => MODE_RM,
        Round::Rp => MODE_RP,
        Round::Rz => MODE_RZ,
    }
}

/// To nearest, ties to even.
pub(crate) const MODE_RN: u32 = 0;
/// Toward −∞.
pub(crate) const MODE_RM: u32 = 1;
/// Toward +∞.
pub(crate) const MODE_RP: u32 = 2;
/// Toward zero.
pub(crate) const MODE_RZ: u32 = 3;

/// One soft-float routine: a SPIR-V function of the module.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) enum Routine {
    /// `(sign, exponent, m2, m1, m0, mode) → bits` ([`round`]).
    Round(Fmt),
    /// `(a, b, c) → {sign, exponent, m2, m1, m0}`: the exact `a · b + c` of finite f64s,
    /// normalized ([`fma`]).
    FmaCore,
    /// `(a, b, c, mode) → bits`: `a · b + c` of f64s rounded once ([`fma`]).
    Fma(Fmt),
    /// `(uvec2, mode) → bits`: an f64 rounded to a narrower format ([`conv`]).
    Narrow(Fmt),
    /// `(lo, hi, signed, mode) → bits`: a 64-bit integer rounded to a format ([`conv`]).
    Int(Fmt),
    /// `u32 f32 bits → uvec2`: exact widening ([`conv`]).
    Widen32,
    /// `(u32, signed) → uvec2`: a 32-bit integer as an f64, exact ([`conv`]).
    I2d,
    /// `uvec2 → uvec2`: an f64 truncated to a 64-bit two's complement integer ([`conv`]).
    D2i,
    /// `(uvec2, mode) → uvec2`: rounded to an integral f64 ([`conv`]).
    Rint,
    /// `(uvec2, uvec2) → u32`: 0 less, 1 equal, 2 greater, 3 unordered ([`cmp`]).
    Cmp,
    /// `(a, b, mode) → uvec2`: `a / b` ([`divsqrt`]).
    Div,
    /// `(a, mode) → uvec2`: `√a` ([`divsqrt`]).
    Sqrt,
}

/// The soft routines a module uses: function ids, and those still to be emitted.
#[derive(Default)]
pub(crate) struct State {
    ids: HashMap<Routine, Word, dmsh_ir::hash::FastState>,
    pending: Vec<Routine>,
    /// The label of the block being written in a routine (for loop phis).
    label: Word,
}

/// A routine's parameter and result types.
struct Sig {
    params: Vec<Word>,
    ret: Word,
}

impl E {
    /// Whether f64 is soft.
    pub(crate) fn soft_f64(&self) -> bool {
        self.opts.f64 == crate::F64Mode::Soft
    }

    /// The bits type of a format: `uvec2` for f64, `u32` otherwise.
    pub(crate) fn soft_bits_ty(&mut self, f: Fmt) -> Word {
        let u = self.ty(Type::U32);
        match f {
            Fmt::F64 => self.vec_ty(u, 2),
            _ => u,
        }
    }

    /// The struct `{u32 × 5}` of an unrounded result.
    pub(crate) fn soft_unrounded_ty(&mut self) -> Word {
        let u = self.ty(Type::U32);
        self.b.type_struct([u, u, u, u, u])
    }

    fn soft_sig(&mut self, r: Routine) -> Sig {
        let ret = self.soft_ret(r);
        let u = self.ty(Type::U32);
        let u2 = self.vec_ty(u, 2);
        let params = match r {
            Routine::Round(_) => vec![u; 6],
            Routine::FmaCore => vec![u2; 3],
            Routine::Fma(_) => vec![u2, u2, u2, u],
            Routine::Narrow(_) => vec![u2, u],
            Routine::Int(_) => vec![u; 4],
            Routine::Widen32 => vec![u],
            Routine::I2d => vec![u, u],
            Routine::D2i => vec![u2],
            Routine::Rint => vec![u2, u],
            Routine::Cmp => vec![u2, u2],
            Routine::Div => vec![u2, u2, u],
            Routine::Sqrt => vec![u2, u],
        };
        Sig { params, ret }
    }

    /// The result type of routine `r` (the types made in the order [`E::soft_sig`] makes
    /// them: `u32`, `uvec2`, then the result's own).
    fn soft_ret(&mut self, r: Routine) -> Word {
        let u = self.ty(Type::U32);
        let u2 = self.vec_ty(u, 2);
        match r {
            Routine::Round(f) | Routine::Fma(f) | Routine::Narrow(f) | Routine::Int(f) => {
                self.soft_bits_ty(f)
            }
            Routine::FmaCore => self.soft_unrounded_ty(),
            Routine::Cmp => u,
            Routine::Widen32
            | Routine::I2d
            | Routine::D2i
            | Routine::Rint
            | Routine::Div
            | Routine::Sqrt => u2,
        }
    }

    /// The label of the routine block being written.
    pub(crate) fn soft_label(&self) -> Word {
        self.soft.label
    }

    /// Records that routine code continues in block `label`.
    pub(crate) fn soft_set_label(&mut self, label: Word) {
        self.soft.label = label;
    }

    /// Calls routine `r` (emitted at the end of the module) with `args`.
    pub(crate) fn soft_call(&mut self, r: Routine, args: &[Word]) -> Word {
        let f = self.soft_fn_id(r);
        let ret = self.soft_ret(r);
        // The function and its (at most six) arguments, on the stack.
        let mut ops = [0; 7];
        ops[0] = f;
        ops[1..=args.len()].copy_from_slice(args);
        self.op(S::FunctionCall, ret, &ops[..=args.len()])
    }

    /// The function id of routine `r`, queued to be written on first use.
    fn soft_fn_id(&mut self, r: Routine) -> Word {
        match self.soft.ids.get(&r) {
            Some(&f) => f,
            None => {
                let f = self.b.id();
                self.soft.ids.insert(r, f);
                self.soft.pending.push(r);
                f
            }
        }
    }

    /// Emits the function of every routine called so far (and of those they call), each
    /// copied from its template ([`template`]). Runs after the entry point's function has
    /// ended.
    pub(crate) fn soft_emit_functions(&mut self) -> Result<(), crate::Error> {
        while let Some(r) = self.soft.pending.pop() {
            if !self.soft_copy(r)? {
                self.soft_write(r)?;
            }
        }
        Ok(())
    }

    /// Writes routine `r`'s function (its id made by [`E::soft_fn_id`]) instruction by
    /// instruction: what its template is made of.
    fn soft_write(&mut self, r: Routine) -> Result<(), crate::Error> {
        let berr = |e: rspirv::dr::Error| crate::Error::Builder(format!("{e:?}"));
        let id = self.soft.ids[&r];
        let sig = self.soft_sig(r);
        let fnty = self.b.type_function(sig.ret, sig.params.iter().copied());
        self.b
            .begin_function(sig.ret, Some(id), spirv::FunctionControl::NONE, fnty)
            .map_err(berr)?;
        let mut p = Vec::with_capacity(sig.params.len());
        for &t in &sig.params {
            p.push(self.b.function_parameter(t).map_err(berr)?);
        }
        let label = self.b.begin_block(None).map_err(berr)?;
        self.soft.label = label;
        let v = match r {
            Routine::Round(f) => round::body(self, f, &p),
            Routine::FmaCore => fma::core_body(self, &p),
            Routine::Fma(f) => fma::body(self, f, &p),
            Routine::Narrow(f) => conv::narrow_body(self, f, &p),
            Routine::Int(f) => conv::int_body(self, f, &p),
            Routine::Widen32 => conv::widen32_body(self, &p),
            Routine::I2d => conv::i2d_body(self, &p),
            Routine::D2i => conv::d2i_body(self, &p),
            Routine::Rint => conv::rint_body(self, &p),
            Routine::Cmp => cmp::body(self, &p),
            Routine::Div => divsqrt::div_body(self, &p),
            Routine::Sqrt => divsqrt::sqrt_body(self, &p),
        };
        self.b.ret_value(v).map_err(berr)?;
        self.b.end_function().map_err(berr)
    }
}

/// The fields of an f64 bit pattern `(lo, hi)`.
pub(crate) struct Parts {
    /// Sign bit (0 or 1).
    pub s: Word,
    /// Biased exponent field.
    pub be: Word,
    /// High 20 fraction bits.
    pub f1: Word,
    /// Whether the value is a NaN.
    pub nan: Word,
    /// Whether it is ±∞.
    pub inf: Word,
    /// Whether it is ±0.
    pub zero: Word,
}

impl W<'_> {
    /// The fields and class of the f64 `(lo, hi)`.
    pub fn parts(&mut self, lo: Word, hi: Word) -> Parts {
        let s = self.shrk(hi, 31);
        let be = self.field(hi, 20, 0x7ff);
        let f1 = self.andk(hi, 0xfffff);
        let flo = self.or(f1, lo);
        let fz = self.z(flo);
        let emax = self.eqk(be, 0x7ff);
        let e0 = self.eqk(be, 0);
        let fnz = self.bnot(fz);
        let nan = self.band(emax, fnz);
        let inf = self.band(emax, fz);
        let zero = self.band(e0, fz);
        Parts {
            s,
            be,
            f1,
            nan,
            inf,
            zero,
        }
    }

    /// The normalized significand of the finite f64 with low word `lo` and fields `p`:
    /// `(e, m1, m0)` with bit 52 of `m1:m0` set and value `m · 2^(e − 52)` (zero gives
    /// `m = 0`).
    pub fn unpack(&mut self, lo: Word, p: &Parts) -> (Word, Word, Word) {
        let e0 = self.eqk(p.be, 0);
        let hid = self.ork(p.f1, 0x10_0000);
        let m1 = self.sel(e0, p.f1, hid);
        let one = self.k(1);
        let be1 = self.smax(p.be, one);
        let e = self.addk(be1, -1023);
        // Subnormals: bring the leading bit to 52.
        let lz = self.clz_n(&[lo, m1]);
        let lz = self.addk(lz, -11);
        let k63 = self.k(63);
        let lz = self.umin(lz, k63);
        let m = self.shl_n(&[lo, m1], lz);
        let e = self.sub(e, lz);
        (e, m[1], m[0])
    }

    /// The f64 NaN `(lo, hi)` made quiet.
    pub fn quiet(&mut self, hi: Word) -> Word {
        self.ork(hi, 0x0008_0000)
    }
}
