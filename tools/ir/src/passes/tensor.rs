//! The `tensor` lowering: every warp matrix multiply-accumulate ([`Op::Mma`]) becomes an
//! exact emulation with warp shuffles. Each lane gathers the rows of A and the columns of B
//! its own D elements need with `Shfl(Idx)` from the lanes holding them, and computes those
//! elements itself. Run by the pipeline after the passes unless the back end emits `Mma` as
//! a cooperative-matrix operation; the `warp_shared` lowering can then turn the shuffles into
//! workgroup-memory exchanges.
//!
//! Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16 / m16n8k8 / m16n8k4 /
//! m16n8k32 / m8n8k16"; docs/ir.md "Tensor instructions"), with `g = lane >> 2`, `t = lane &
//! 3` and `e` elements per register (2 for f16 / bf16, 1 for tf32, 4 for 8-bit integers):
//!
//! * A (m × k, row-major): register `h + (m/8)·kb` of lane `4g + tt` holds row `g + 8h`,
//!   columns `kb·4e + tt·e .. + e` (low element first);
//! * B (k × n, column-major): register `kb` of lane `4c + tt` holds column `c`, rows
//!   `kb·4e + tt·e .. + e`;
//! * C and D: lane `4g + t` holds rows `g + 8h`, columns `2t` and `2t + 1`: f32 / s32
//!   register `2h + j` is element (g + 8h, 2t + j); f16 register `h` holds both columns
//!   (low half j = 0).
//!
//! Arithmetic: float elements are widened exactly to f32 (f16 by conversion, bf16 by a
//! shift, tf32 by clearing its 13 unused mantissa bits), products are formed in f32 (exact:
//! at most 11 × 11 significand bits, barring overflow and underflow) and added to the C
//! element one at a time in k order with round-to-nearest-even; an f16 D is that f32 sum
//! rounded to f16 once. NVIDIA does not specify its accumulation order or rounding (PTX ISA,
//! mma "Precision and rounding"), so results agree with the hardware bit for bit when every
//! partial sum is exact (what the tests use), and otherwise within the rounding of the k
//! additions. Integer products are exact in s32; their sum (at most 32 · 255 · 255 in
//! magnitude) is exact too, and is added to C wrapping, or saturating to the s32 range with
//! `.SAT` (exact "clamp on overflow" of the infinitely precise result).

use super::seq::Seq;
use crate::ir::{Function, Mma, MmaType, Op, Round, ShflMode, Sys, Type, Value};

/// Lowers every `Mma` of `f`; says whether there was any.
pub fn run(f: &mut Function) -> bool {
    // Only the lifter makes `Mma`s, and it marks the functions it makes them in: the others
    // need no look at every instruction.
    if !f.tensor_ops {
        debug_assert!(!f
            .blocks
            .iter()
            .flat_map(|b| &b.insts)
            .any(|&v| matches!(f.inst(v).op, Op::Mma(_))));
        return false;
    }
    let mut lowered = Vec::new();
    for b in 0..f.blocks.len() {
        if !f.blocks[b]
            .insts
            .iter()
            .any(|&v| matches!(f.inst(v).op, Op::Mma(_)))
        {
            continue;
        }
        let insts = std::mem::take(&mut f.blocks[b].insts);
        let mut s = Seq::new(f, Vec::with_capacity(insts.len() * 8));
        for v in insts {
            let Op::Mma(m) = s.f.inst(v).op else {
                s.out.push(v);
                continue;
            };
            lowered.push(v);
            let args = s.f.inst(v).args;
            let regs = |s: &Seq, t: Value, n: u32| -> Vec<Value> {
                let a = s.f.inst(t).args;
                (0..n as usize).map(|k| a[k.min(3)]).collect()
            };
            let [na, nb, nc] = m.regs();
            let a = regs(&s, args[0], na);
            let b_ = regs(&s, args[1], nb);
            let c = regs(&s, args[2], nc);
            let d = lower_one(&mut s, &m, &a, &b_, &c);
            // The Mma becomes an unplaced Tuple of its D registers; its `Extract(k)` uses
            // are rewritten to register k below.
            let t = s.f.make(Op::Tuple, Type::Void, &d);
            s.f.insts[v.index()] = s.f.insts[t.index()];
        }
        f.blocks[b].insts = s.out;
    }
    if lowered.is_empty() {
        return false;
    }
    // Each lowered Mma is now a Tuple of its D registers: `Extract(k)` of it is register k
    // (an Extract past D's registers reads 0).
    let mut is_mma = vec![false; f.insts.len()];
    for v in lowered {
        is_mma[v.index()] = true;
    }
    let mut alias = vec![Value::NONE; f.insts.len()];
    for b in 0..f.blocks.len() {
        for idx in 0..f.blocks[b].insts.len() {
            let v = f.blocks[b].insts[idx];
            let i = *f.inst(v);
            if let Op::Extract(k) = i.op {
                if is_mma[i.args[0].index()] {
                    let r = f.inst(i.args[0]).args[(k as usize).min(3)];
                    alias[v.index()] = if k < 4 && r.is_some() {
                        r
                    } else {
                        f.insts[v.index()] = crate::ir::Inst {
                            op: Op::Const(0),
                            ty: Type::U32,
                            args: [Value::NONE; 4],
                        };
                        Value::NONE
                    };
                }
            }
        }
    }
    super::apply_aliases(f, &alias);
    true
}

/// Whether a type is an integer multiplicand.
fn is_int(t: MmaType) -> bool {
    matches!(t, MmaType::S8 | MmaType::U8)
}

/// Element `sub` of a multiplicand register as a value to multiply: F32 for float types,
/// U32 (sign- or zero-extended) for integer ones.
fn element(s: &mut Seq, t: MmaType, reg: Value, sub: u32, neg: bool) -> Value {
    let x = match t {
        MmaType::F16 => {
            let h = s.bits(reg, 16 * sub, 16);
            let h = s.op(Op::Bitcast, Type::F16, &[h]);
            s.op(Op::FConvert(Round::Rn), Type::F32, &[h])
        }
        MmaType::Bf16 => {
            let h = s.bits(reg, 16 * sub, 16);
            let w = s.bin_c(Op::Shl, h, 16);
            s.cast(Type::F32, w)
        }
        MmaType::Tf32 => {
            let w = s.bin_c(Op::And, reg, 0xffff_e000);
            s.cast(Type::F32, w)
        }
        MmaType::S8 => return s.sbits(reg, 8 * sub, 8),
        MmaType::U8 => return s.bits(reg, 8 * sub, 8),
        MmaType::F32 => s.cast(Type::F32, reg),
        MmaType::S32 => return reg,
    };
    if neg {
        s.op(Op::FNeg, Type::F32, &[x])
    } else {
        x
    }
}

/// The lane's D registers of one `Mma` with A, B, C registers `a`, `b`, `c` (see the module
/// text for the layouts and the arithmetic).
fn lower_one(s: &mut Seq, m: &Mma, a: &[Value], b: &[Value], c: &[Value]) -> Vec<Value> {
    let lane = s.op(Op::SysVal(Sys::LaneId), Type::U32, &[]);
    let t = s.bin_c(Op::And, lane, 3);
    let quad = s.bin_c(Op::And, lane, !3);
    let t8 = s.bin_c(Op::Shl, t, 3);
    let clamp = s.c32(0x1f);
    let shfl = |s: &mut Seq, v: Value, src: Value| -> Value {
        s.op(Op::Shfl(ShflMode::Idx), Type::U32, &[v, src, clamp])
    };
    // Rows g + 8h come from the lanes of this lane's quad; columns 2t + j from lanes
    // 4(2t + j) + tt.
    let mut av = vec![vec![Value::NONE; a.len()]; 4];
    for (tt, row) in av.iter_mut().enumerate() {
        let src = s.bin_c(Op::Or, quad, tt as u32);
        for (r, x) in row.iter_mut().enumerate() {
            *x = shfl(s, a[r], src);
        }
    }
    let mut bv = vec![vec![vec![Value::NONE; b.len()]; 4]; 2];
    for (j, cols) in bv.iter_mut().enumerate() {
        for (tt, col) in cols.iter_mut().enumerate() {
            let src = s.bin_c(Op::IAdd, t8, 4 * j as u32 + tt as u32);
            for (r, x) in col.iter_mut().enumerate() {
                *x = shfl(s, b[r], src);
            }
        }
    }
    let (k, ea, eb) = (m.k as u32, m.a.per_reg(), m.b.per_reg());
    let halves = m.m as u32 / 8;
    let int = is_int(m.a);
    // A's elements of rows g + 8h and B's of columns 2t + j, converted once.
    let mut ae = vec![vec![Value::NONE; k as usize]; halves as usize];
    for (h, row) in ae.iter_mut().enumerate() {
        for (kk, x) in row.iter_mut().enumerate() {
            let kk = kk as u32;
            let (kb, tt, sub) = (kk / (4 * ea), (kk % (4 * ea)) / ea, kk % ea);
            let reg = h as u32 + halves * kb;
            *x = element(s, m.a, av[tt as usize][reg as usize], sub, m.neg_a);
        }
    }
    let mut be = vec![vec![Value::NONE; k as usize]; 2];
    for (j, col) in be.iter_mut().enumerate() {
        for (kk, x) in col.iter_mut().enumerate() {
            let kk = kk as u32;
            let (kb, tt, sub) = (kk / (4 * eb), (kk % (4 * eb)) / eb, kk % eb);
            *x = element(s, m.b, bv[j][tt as usize][kb as usize], sub, m.neg_b);
        }
    }
    let mut out = Vec::new();
    let mut sums = Vec::new();
    for h in 0..halves as usize {
        for j in 0..2 {
            if int {
                let mut acc = Value::NONE;
                for kk in 0..k as usize {
                    let p = s.bin(Op::IMul, ae[h][kk], be[j][kk]);
                    acc = if acc.is_none() {
                        p
                    } else {
                        s.bin(Op::IAdd, acc, p)
                    };
                }
                let cv = c[2 * h + j];
                let r = if m.sat {
                    sat_add(s, cv, acc)
                } else {
                    s.bin(Op::IAdd, cv, acc)
                };
                out.push(r);
                continue;
            }
            let mut acc = match m.acc {
                MmaType::F16 => {
                    let hb = s.bits(c[h], 16 * j as u32, 16);
                    let hv = s.op(Op::Bitcast, Type::F16, &[hb]);
                    s.op(Op::FConvert(Round::Rn), Type::F32, &[hv])
                }
                _ => s.cast(Type::F32, c[2 * h + j]),
            };
            for kk in 0..k as usize {
                let p = s.op(Op::FMul(Round::Rn), Type::F32, &[ae[h][kk], be[j][kk]]);
                acc = s.op(Op::FAdd(Round::Rn), Type::F32, &[acc, p]);
            }
            sums.push(acc);
        }
    }
    if int {
        return out;
    }
    match m.acc {
        MmaType::F16 => {
            for h in 0..halves as usize {
                let lo = s.op(Op::FConvert(Round::Rn), Type::F16, &[sums[2 * h]]);
                let hi = s.op(Op::FConvert(Round::Rn), Type::F16, &[sums[2 * h + 1]]);
                let lo = s.op(Op::Bitcast, Type::U32, &[lo]);
                let hi = s.op(Op::Bitcast, Type::U32, &[hi]);
                let hi = s.bin_c(Op::Shl, hi, 16);
                out.push(s.bin(Op::Or, lo, hi));
            }
        }
        _ => {
            for x in sums {
                out.push(s.cast(Type::U32, x));
            }
        }
    }
    out
}

/// `c + x` saturated to the s32 range (`x` is exact).
fn sat_add(s: &mut Seq, c: Value, x: Value) -> Value {
    let r = s.bin(Op::IAdd, c, x);
    // Overflow: c and x have the same sign and r the other one.
    let cx = s.bin(Op::Xor, c, x);
    let cr = s.bin(Op::Xor, c, r);
    let ncx = s.op(Op::Not, Type::U32, &[cx]);
    let ov = s.bin(Op::And, ncx, cr);
    let z = s.c32(0);
    let over = s.cmp(Op::SLt, ov, z);
    let neg = s.cmp(Op::SLt, c, z);
    let min = s.c32(0x8000_0000);
    let max = s.c32(0x7fff_ffff);
    let lim = s.sel(neg, min, max);
    s.sel(over, lim, r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{BlockId, Space, Terminator, Width};

    fn mma(m: u8, k: u8, a: MmaType, acc: MmaType) -> Mma {
        Mma {
            m,
            n: 8,
            k,
            a,
            b: a,
            acc,
            sat: false,
            neg_a: false,
            neg_b: false,
        }
    }

    /// A function with one Mma of shape `m` whose D registers are all stored; the number of
    /// shuffles and Mma left after the pass.
    fn lower(m: Mma) -> (usize, usize, Function) {
        let mut f = Function::new();
        let b = f.add_block(Some(0));
        f.blocks[0].term = Terminator::Exit;
        f.ssa = true;
        f.tensor_ops = true;
        let [na, nb, nc] = m.regs();
        let tuple = |f: &mut Function, n: u32| {
            let r: Vec<Value> = (0..n)
                .map(|_| f.push(b, Op::SysVal(Sys::Tid(0)), Type::U32, &[]))
                .collect();
            f.push(b, Op::Tuple, Type::Void, &r)
        };
        let ta = tuple(&mut f, na);
        let tb = tuple(&mut f, nb);
        let tc = tuple(&mut f, nc);
        let v = f.push(BlockId(0), Op::Mma(m), Type::Void, &[ta, tb, tc]);
        for k in 0..nc as u8 {
            let d = f.push(b, Op::Extract(k), Type::U32, &[v]);
            let a = f.push(b, Op::Const(4 * k as u64), Type::U32, &[]);
            f.push(b, Op::Store(Space::Shared, Width::B32), Type::Void, &[a, d]);
        }
        assert!(run(&mut f));
        crate::passes::dce::run(&mut f);
        let count = |p: &dyn Fn(&Op) -> bool| {
            f.blocks[0]
                .insts
                .iter()
                .filter(|&&v| p(&f.inst(v).op))
                .count()
        };
        let s = count(&|o| matches!(o, Op::Shfl(_)));
        let mm = count(&|o| matches!(o, Op::Mma(_)) || matches!(o, Op::Extract(_)));
        crate::passes::ssa::verify(&f).expect("valid");
        (s, mm, f)
    }

    /// Each lane fetches its quad's A registers (4 lanes × A's registers) and the B registers
    /// of the lanes holding its two columns (8 lanes × B's registers); nothing of the Mma
    /// remains, and every D register reaches its store.
    #[test]
    fn shuffles_per_shape() {
        for (m, shfls) in [
            (mma(16, 16, MmaType::F16, MmaType::F32), 4 * 4 + 8 * 2),
            (mma(16, 8, MmaType::F16, MmaType::F16), 4 * 2 + 8),
            (mma(16, 8, MmaType::Tf32, MmaType::F32), 4 * 4 + 8 * 2),
            (mma(16, 4, MmaType::Tf32, MmaType::F32), 4 * 2 + 8),
            (mma(16, 32, MmaType::S8, MmaType::S32), 4 * 4 + 8 * 2),
            (mma(8, 16, MmaType::U8, MmaType::S32), 4 + 8),
        ] {
            let (s, left, f) = lower(m);
            assert_eq!(s, shfls, "{m:?}");
            assert_eq!(left, 0, "{m:?}");
            let stores = f.blocks[0]
                .insts
                .iter()
                .filter(|&&v| matches!(f.inst(v).op, Op::Store(..)))
                .count();
            assert_eq!(stores as u32, m.regs()[2], "{m:?}");
        }
    }

    #[test]
    fn registers_per_shape() {
        assert_eq!(mma(16, 16, MmaType::F16, MmaType::F32).regs(), [4, 2, 4]);
        assert_eq!(mma(16, 16, MmaType::Bf16, MmaType::F16).regs(), [4, 2, 2]);
        assert_eq!(mma(16, 8, MmaType::F16, MmaType::F32).regs(), [2, 1, 4]);
        assert_eq!(mma(16, 8, MmaType::Tf32, MmaType::F32).regs(), [4, 2, 4]);
        assert_eq!(mma(16, 4, MmaType::Tf32, MmaType::F32).regs(), [2, 1, 4]);
        assert_eq!(mma(16, 32, MmaType::S8, MmaType::S32).regs(), [4, 2, 4]);
        assert_eq!(mma(16, 16, MmaType::S8, MmaType::S32).regs(), [2, 1, 4]);
        assert_eq!(mma(8, 16, MmaType::S8, MmaType::S32).regs(), [1, 1, 2]);
    }
}
