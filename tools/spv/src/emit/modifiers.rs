//! Maxwell float modifiers the IR keeps as single ops (`Ftz`, `FSat`, `FMinMaxZ`), written
//! here as the few SPIR-V bit and float operations that give their exact results.
//!
//! Each is a small function the module defines once ([`Helper`]) and calls wherever the IR
//! has the operation: one `OpFunctionCall` (5–6 words) instead of a sequence of 4–9
//! instructions (22–50 words). Flushes alone were a fifth of a translated module's words, and
//! SPIRV-Cross's and Metal's compile times grow with module size; Metal's compiler inlines
//! such functions (they are marked `Inline`), so the code the GPU runs is the same.

use super::{berr, glsl, E};
use crate::Error;
use dmsh_ir::Type;
use rspirv::spirv::{FunctionControl, Op as S, Word};

/// A function the module defines once and calls for one IR operation.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Helper {
    /// `Ftz` of an f32.
    Ftz,
    /// `FSat` of a value of this type.
    FSat(Type),
    /// `FMinMaxZ(min)` of two values of this type.
    FMinMaxZ(Type, bool),
}

/// The number of distinct helpers ([`Helper::index`]).
const HELPERS: usize = 1 + 7 + 7 * 2;

impl Helper {
    /// A number of its own below [`HELPERS`].
    fn index(self) -> usize {
        match self {
            Helper::Ftz => 0,
            Helper::FSat(t) => 1 + t as usize,
            Helper::FMinMaxZ(t, min) => 8 + 2 * t as usize + min as usize,
        }
    }

    /// The type of the parameters and the result.
    fn ty(self) -> Type {
        match self {
            Helper::Ftz => Type::F32,
            Helper::FSat(t) | Helper::FMinMaxZ(t, _) => t,
        }
    }

    /// The number of parameters.
    fn arity(self) -> usize {
        match self {
            Helper::FMinMaxZ(..) => 2,
            _ => 1,
        }
    }
}

/// The helpers a module calls.
pub(crate) struct Helpers {
    /// Each helper and its function, in the order of their first calls.
    called: Vec<(Helper, Word)>,
    /// The function of each helper by [`Helper::index`] (0: not called).
    ids: [Word; HELPERS],
}

impl Default for Helpers {
    fn default() -> Self {
        Helpers {
            called: Vec::new(),
            ids: [0; HELPERS],
        }
    }
}

impl E {
    /// A call of `h` with `args` (the function is declared at its first call and defined by
    /// [`E::define_helpers`]).
    fn call(&mut self, h: Helper, args: &[Word]) -> Word {
        let f = match self.helpers.ids[h.index()] {
            0 => {
                let f = self.b.id();
                self.helpers.called.push((h, f));
                self.helpers.ids[h.index()] = f;
                f
            }
            f => f,
        };
        let rt = self.ty(h.ty());
        match *args {
            [x] => self.op_n(S::FunctionCall, rt, [f, x]),
            [x, y] => self.op_n(S::FunctionCall, rt, [f, x, y]),
            _ => unreachable!("a helper has one or two parameters"),
        }
    }

    /// `Ftz` (a call of the module's flush function).
    pub(super) fn ftz32(&mut self, x: Word) -> Word {
        self.call(Helper::Ftz, &[x])
    }

    /// `FSat` (a call).
    pub(super) fn fsat(&mut self, t: Type, x: Word) -> Word {
        self.call(Helper::FSat(t), &[x])
    }

    /// `FMinMaxZ` (a call).
    pub(super) fn fminmax_z(&mut self, t: Type, min: bool, a: Word, b: Word) -> Word {
        self.call(Helper::FMinMaxZ(t, min), &[a, b])
    }

    /// Defines every helper the module calls, after the entry point's function (no block may
    /// be open).
    pub(super) fn define_helpers(&mut self) -> Result<(), Error> {
        for i in 0..self.helpers.called.len() {
            let (h, f) = self.helpers.called[i];
            let t = self.ty(h.ty());
            let fnty = self.b.type_function(t, vec![t; h.arity()]);
            berr(
                self.b
                    .begin_function(t, Some(f), FunctionControl::INLINE, fnty),
            )?;
            let mut p = [0; 2];
            for x in p.iter_mut().take(h.arity()) {
                *x = berr(self.b.function_parameter(t))?;
            }
            berr(self.b.begin_block(None))?;
            let r = match h {
                Helper::Ftz => self.ftz32_body(p[0]),
                Helper::FSat(t) => self.fsat_body(t, p[0]),
                Helper::FMinMaxZ(t, min) => self.fminmax_z_body(t, min, p[0], p[1]),
            };
            berr(self.b.ret_value(r))?;
            berr(self.b.end_function())?;
        }
        Ok(())
    }

    /// `Ftz`: an f32 whose exponent field is zero becomes the zero of its sign.
    fn ftz32_body(&mut self, x: Word) -> Word {
        let u = self.ty(Type::U32);
        let f = self.ty(Type::F32);
        let bo = self.ty(Type::Bool);
        let bits = self.op(S::Bitcast, u, &[x]);
        let em = self.c(Type::U32, 0x7f80_0000);
        let ex = self.op(S::BitwiseAnd, u, &[bits, em]);
        let z = self.c(Type::U32, 0);
        let den = self.op(S::IEqual, bo, &[ex, z]);
        let sm = self.c(Type::U32, 0x8000_0000);
        let sg = self.op(S::BitwiseAnd, u, &[bits, sm]);
        let r = self.op(S::Select, u, &[den, sg, bits]);
        self.op(S::Bitcast, f, &[r])
    }

    /// `FSat`: clamp to [0, 1] with `NMax`/`NMin` (NaN → 0), then −0 → +0.
    fn fsat_body(&mut self, t: Type, x: Word) -> Word {
        let ty = self.ty(t);
        let bo = self.ty(Type::Bool);
        let z = self.fconst(t, 0.0);
        let o = self.fconst(t, 1.0);
        let m = self.ext(ty, glsl::NMAX, &[x, z]);
        let m = self.ext(ty, glsl::NMIN, &[m, o]);
        let gt = self.op(S::FOrdGreaterThan, bo, &[m, z]);
        self.op(S::Select, ty, &[gt, m, z])
    }

    /// `FMinMaxZ`: `NMin`/`NMax` (a NaN loses), with a pair of zeros ordered by their sign
    /// bits (min: or, max: and).
    fn fminmax_z_body(&mut self, t: Type, min: bool, a: Word, b: Word) -> Word {
        let ty = self.ty(t);
        let it = self.ty(if t == Type::F64 { Type::U64 } else { Type::U32 });
        let bo = self.ty(Type::Bool);
        let m = self.ext(ty, if min { glsl::NMIN } else { glsl::NMAX }, &[a, b]);
        let ab = self.op(S::Bitcast, it, &[a]);
        let bb = self.op(S::Bitcast, it, &[b]);
        let z = self.fconst(t, 0.0);
        let az = self.op(S::FOrdEqual, bo, &[a, z]);
        let bz = self.op(S::FOrdEqual, bo, &[b, z]);
        let both = self.op(S::LogicalAnd, bo, &[az, bz]);
        let o = if min { S::BitwiseOr } else { S::BitwiseAnd };
        let zz = self.op(o, it, &[ab, bb]);
        let zz = self.op(S::Bitcast, ty, &[zz]);
        self.op(S::Select, ty, &[both, zz, m])
    }
}
