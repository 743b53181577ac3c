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
use std::cell::Cell;

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
    let mut facts = Facts::take(n);
    let stamp = facts.stamp;
    let mut alias = super::scratch::Aliases::take(n);
    let resolve = |alias: &[Value], mut v: Value| {
        while v.is_some() && alias[v.index()].is_some() {
            v = alias[v.index()];
        }
        v
    };
    let (order, idom) = (&doms.order, &doms.idom);
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
            let k = |x: Value| x.is_some() && facts.slots[x.index()].known == stamp;
            let flushed = match i.op {
                Op::Ftz => {
                    let x = arg(0);
                    if k(x) && f.ty(x) == i.ty {
                        alias.set(v, x);
                        removed += 1;
                    } else {
                        let fx = &mut facts.slots[x.index()];
                        if fx.flushed == stamp && dominates(idom, fx.flush_block, b as u32) {
                            alias.set(v, fx.flush);
                            removed += 1;
                        } else {
                            // The first, or one the earlier does not dominate: it serves
                            // the blocks after it.
                            *fx = Fact {
                                flushed: stamp,
                                flush_block: b as u32,
                                flush: v,
                                ..*fx
                            };
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
            if flushed {
                facts.slots[v.index()].known = stamp;
            }
        }
    }
    if removed > 0 {
        super::apply_aliases_after_walk(f, &alias, &walked);
    }
    alias.give_back();
    facts.give_back();
    f.doms = Some(doms);
}

/// What a walk learnt of one value; each part holds only where its stamp is the walk's
/// ([`Facts::stamp`]).
#[derive(Clone, Copy)]
struct Fact {
    /// The value is never a denormal.
    known: u32,
    /// `flush` and `flush_block` hold: the value's first flush and its block.
    flushed: u32,
    /// The block of the value's first flush.
    flush_block: u32,
    /// The value's first flush.
    flush: Value,
}

impl Default for Fact {
    fn default() -> Fact {
        Fact {
            known: 0,
            flushed: 0,
            flush_block: 0,
            flush: Value::NONE,
        }
    }
}

thread_local! {
    /// The facts table of this thread's last walk, for the next ([`Facts::take`]).
    static SPARE_FACTS: Cell<Option<Facts>> = const { Cell::new(None) };
}

/// The facts of one walk by value index. A thread keeps its table from one walk to the
/// next, and emptying it is a new stamp (as `cse`'s table): clearing an arena-long table
/// for every function cost more than the walk's writes.
#[derive(Default)]
struct Facts {
    /// By value index.
    slots: Vec<Fact>,
    /// The stamp of this walk's facts (never 0, the stamp of a fresh slot).
    stamp: u32,
}

impl Facts {
    /// An empty table for the `n` values of a function: this thread's last one, made long
    /// enough.
    fn take(n: usize) -> Facts {
        let mut t = SPARE_FACTS.take().unwrap_or_default();
        if t.slots.len() < n {
            t.slots.resize(n, Fact::default());
        }
        t.stamp = t.stamp.wrapping_add(1);
        if t.stamp == 0 {
            // Every stamp used: the old ones could come back.
            t.slots.fill(Fact::default());
            t.stamp = 1;
        }
        t
    }

    /// Hands the table on to this thread's next walk.
    fn give_back(self) {
        SPARE_FACTS.set(Some(self));
    }
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
