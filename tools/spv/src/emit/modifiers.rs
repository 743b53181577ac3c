//! Maxwell float modifiers the IR keeps as single ops (`Ftz`, `FSat`, `FMinMaxZ`), written
//! here as the few SPIR-V bit and float operations that give their exact results.

use super::{glsl, E};
use dmsh_ir::Type;
use rspirv::spirv::{Op as S, Word};

impl E {
    /// `Ftz`: an f32 whose exponent field is zero becomes the zero of its sign.
    pub(super) fn ftz32(&mut self, x: Word) -> Word {
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
    pub(super) fn fsat(&mut self, t: Type, x: Word) -> Word {
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
    pub(super) fn fminmax_z(&mut self, t: Type, min: bool, a: Word, b: Word) -> Word {
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
