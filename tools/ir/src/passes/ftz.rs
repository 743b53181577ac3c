//! Redundant flushes: `Ftz` of a value that can never be an f32 denormal is that value.
//!
//! The lifter flushes every operand and result of an `.FTZ` instruction (`lift::float::ftz`),
//! so after `ssa` a chain of `.FTZ` arithmetic flushes each value twice: as the result of one
//! instruction and as the operand of the next. Each flush is several SPIR-V instructions, the
//! largest single share of a translated module, and SPIRV-Cross's and Metal's compile time grow
//! with module size. A value is known not to be a denormal when it is:
//!
//! - a flush (`Ftz`), or a constant whose bits are not a denormal;
//! - an integer-to-float conversion (`UToF`, `SToF`: zero, or a magnitude of at least 1);
//! - a same-width `Bitcast`, `FNeg` or `FAbs` of such a value (the exponent field is kept);
//! - a `Select`, `FMinMaxZ` or phi all of whose operands are such values (pessimistic: a loop
//!   phi fed from its own back edge is not known).
//!
//! A flush of a value already flushed in a dominating position is that earlier flush (the
//! same value is often an operand of several `.FTZ` instructions).
//!
//! Blocks are visited in reverse postorder, so operands (but back-edge phi operands) are
//! decided first. The result is bit-identical: a flush of a non-denormal is the identity.

use crate::dom::dominates;
use crate::ir::{Function, Op, Value};

/// Whether the 32 bits of `c` are not an f32 denormal (zero counts as flushed).
fn not_denormal(c: u64) -> bool {
    let b = c as u32;
    b & 0x7f80_0000 != 0 || b & 0x007f_ffff == 0
}

/// Runs the pass.
pub fn run(f: &mut Function) {
    // The block order and dominators the earlier passes shared, handed on to `dce` (the
    // passes between change no edge).
    let doms = super::block_doms(f);
    // Nothing to do without a flush (code without `.FTZ`).
    let flushes = |b: &crate::ir::Block| {
        b.insts
            .iter()
            .any(|&v| matches!(f.insts[v.index()].op, Op::Ftz))
    };
    if !f.flushes || !f.blocks.iter().any(flushes) {
        f.doms = Some(doms);
        return;
    }
    let n = f.insts.len();
    let mut known = vec![false; n];
    let mut alias = vec![Value::NONE; n];
    let resolve = |alias: &[Value], mut v: Value| {
        while v.is_some() && alias[v.index()].is_some() {
            v = alias[v.index()];
        }
        v
    };
    let (order, idom) = (&doms.order, &doms.idom);
    // The first flush of each value by the value's index: (its block, the flush's index + 1;
    // 0: none yet), zeroed so that the allocator can hand out cleared memory.
    let mut first: Vec<(u32, u32)> = vec![(0, 0); n];
    let mut removed = 0usize;
    let mut walked = vec![false; f.blocks.len()];
    for b in order.iter().map(|&b| b as usize) {
        walked[b] = true;
        for &v in &f.blocks[b].insts {
            // Arguments rewritten as the walk goes (their definitions came first).
            // Resolved in a local copy, stored back, and read from that copy (see `cse`:
            // reading them back right after four narrow stores stalls).
            // Nothing to rewrite before the first flush goes.
            let slot = &mut f.insts[v.index()];
            let mut args = slot.args;
            if removed > 0 {
                for a in args.iter_mut() {
                    *a = resolve(&alias, *a);
                }
                slot.args = args;
            }
            let i = &f.insts[v.index()];
            let arg = |k: usize| args[k];
            let k = |x: Value| x.is_some() && known[x.index()];
            let flushed = match i.op {
                Op::Ftz => {
                    let x = arg(0);
                    if k(x) && f.ty(x) == i.ty {
                        alias[v.index()] = x;
                        removed += 1;
                    } else {
                        match first[x.index()] {
                            (fb, fv) if fv != 0 && dominates(idom, fb, b as u32) => {
                                alias[v.index()] = Value(fv - 1);
                                removed += 1;
                            }
                            _ => first[x.index()] = (b as u32, v.0 + 1),
                        }
                    }
                    true
                }
                Op::Const(c) => i.ty.bits() == 32 && not_denormal(c),
                Op::UToF(_) | Op::SToF(_) => true,
                Op::Bitcast | Op::FNeg | Op::FAbs => i.ty.bits() == 32 && k(arg(0)),
                Op::Select => k(arg(1)) && k(arg(2)),
                Op::FMinMaxZ(_) => k(arg(0)) && k(arg(1)),
                Op::Phi(p) => f.phi_in[p as usize]
                    .iter()
                    .all(|&(_, x)| k(resolve(&alias, x))),
                _ => false,
            };
            known[v.index()] = flushed;
        }
    }
    if removed > 0 {
        super::apply_aliases_after_walk(f, &alias, &walked);
    }
    f.doms = Some(doms);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Terminator, Type};

    #[test]
    fn a_flush_of_a_flush_goes_and_others_stay() {
        let (mut f, [b]) = Function::with_blocks([0]);
        f.flushes = true;
        let x = f.push(b, Op::Const(0x0000_0001), Type::F32, &[]); // a denormal
        let one = f.push(b, Op::Const(0x3f80_0000), Type::F32, &[]);
        let a = f.push(b, Op::Ftz, Type::F32, &[x]);
        let aa = f.push(b, Op::Ftz, Type::F32, &[a]);
        let n = f.push(b, Op::FNeg, Type::F32, &[aa]);
        let nn = f.push(b, Op::Ftz, Type::F32, &[n]);
        let s = f.push(b, Op::FAdd(crate::ir::Round::Rn), Type::F32, &[nn, one]);
        let ss = f.push(b, Op::Ftz, Type::F32, &[s]);
        let c1 = f.push(b, Op::Ftz, Type::F32, &[one]);
        let use_ = f.push(b, Op::FAdd(crate::ir::Round::Rn), Type::F32, &[ss, c1]);
        let x2 = f.push(b, Op::Ftz, Type::F32, &[x]);
        let use2 = f.push(b, Op::FNeg, Type::F32, &[x2]);
        f.blocks[b.index()].term = Terminator::Exit;
        run(&mut f);
        let args = |v: Value| f.inst(v).args;
        // Ftz(Ftz(x)) → Ftz(x); Ftz(−Ftz(x)) → −Ftz(x); a flush of 1.0 is 1.0.
        assert_eq!(args(n)[0], a);
        assert_eq!(args(s)[0], n);
        assert_eq!(args(use_)[1], one);
        // The flush of an addition's result stays, and so does the first flush of x.
        assert_eq!(args(use_)[0], ss);
        assert_eq!(args(a)[0], x);
        // A second flush of x in the same block is the first.
        assert_eq!(args(use2)[0], a);
    }
}
