//! Common subexpression elimination: a pure operation whose operation, type and (rewritten)
//! arguments equal those of one in a dominating position is that earlier value.
//!
//! Maxwell code computes the same thing many times over: every `XMAD` of a 32-bit multiply
//! extracts the same 16-bit halves of its operands again (`BfeU x 0 16` five times for one
//! `x * 12`), a 64-bit global address is rebuilt from its two registers for each load, and
//! several instructions read one constant-bank word or system value. Each copy becomes SPIR-V
//! that SPIRV-Cross and Metal's compiler must read, so removing them shrinks the module as much
//! as it speeds emission.
//!
//! Blocks are visited in reverse postorder (a block's dominators first); the latest value of
//! each (operation, type, arguments) is remembered with its block, and a later equal one in a
//! block it dominates becomes an alias of it (one value per key: an equal value in a block
//! the remembered one does not dominate replaces it). Constants have no position (the back end makes
//! them where used), so equal constants merge anywhere. Integer operations whose operands
//! commute are keyed with their two operands in order, so `a + b` and `b + a` are one value.
//! Where guest state stays in variables (`Function::ssa` false) values never cross blocks and
//! only values of one block merge, constants included.
//!
//! An operation is pure when it has no side effect and reads no state beyond its arguments
//! ([`Op::has_side_effects`], [`Op::reads_state`]); besides those, these are never merged: phis
//! (`const_fold` merges equal ones), `Undef`, the clock, the helper-invocation flag (a
//! `Demote` changes it), texture samples (implicit derivatives depend on which lanes run them),
//! warp matrix multiplies (their operands are the whole warp's) and `Void`-typed operations
//! (tuples of texture arguments).

use crate::dom::dominates;
use crate::gfx::GSys;
use crate::ir::{Function, Inst, Op, Sys, Type, Value};
use std::cell::Cell;

/// Whether two equal instructions always give the same value at any point their block
/// dominates.
fn mergeable(i: &Inst) -> bool {
    i.ty != Type::Void
        && !i.op.has_side_effects()
        && !i.op.reads_state()
        && !matches!(
            i.op,
            Op::Phi(_)
                | Op::Undef
                | Op::SysVal(Sys::Clock)
                | Op::GfxSys(GSys::HelperInvocation)
                | Op::Tex(_)
                | Op::Mma(_)
        )
}

/// Integer operations whose two operands commute.
fn commutes(op: &Op) -> bool {
    matches!(
        op,
        Op::IAdd
            | Op::IMul
            | Op::And
            | Op::Or
            | Op::Xor
            | Op::IEq
            | Op::INe
            | Op::UMulHi
            | Op::SMulHi
            | Op::SMin
            | Op::SMax
            | Op::UMin
            | Op::UMax
    )
}

/// The arguments an instruction is compared by: commuting operands in order.
fn key_args(op: &Op, mut a: [Value; 4]) -> [Value; 4] {
    if commutes(op) && a[1].is_some() && a[1] < a[0] {
        a.swap(0, 1);
    }
    a
}

/// A hash of what makes two instructions equal: operation, type and [`key_args`] (the
/// arguments two to a word and the type in the top byte of the second: fewer hasher rounds
/// than hashing each). Of the operation its kind, and the immediates of the ones that
/// commonly differ only there (constants, the components of a texture result, constant
/// banks, system values); the derived hash of every operation's immediates would take a
/// jump through a table for every instruction, and the few others that differ only there
/// compare unequal after equal hashes.
fn key_hash(op: &Op, ty: Type, a: &[Value; 4]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    std::mem::discriminant(op).hash(&mut h);
    match op {
        Op::Const(c) => h.write_u64(*c),
        Op::Extract(k) | Op::LoadConst(k) => h.write_u8(*k),
        Op::SysVal(s) => s.hash(&mut h),
        Op::GfxSys(s) => s.hash(&mut h),
        _ => {}
    }
    h.write_u64(a[0].0 as u64 | (a[1].0 as u64) << 32);
    h.write_u64((a[2].0 as u64 | (a[3].0 as u64) << 32) ^ (ty as u64) << 56);
    h.finish()
}

/// `a == b`, with the commonest case, two constants, compared in place (the derived
/// comparison is a call).
#[inline]
fn same_op(a: &Op, b: &Op) -> bool {
    match (a, b) {
        (Op::Const(x), Op::Const(y)) => x == y,
        _ => a == b,
    }
}

/// One entry of [`Table`]: a value, its block, and bits of its key's hash that tell most
/// unequal keys apart without reading the instruction.
#[derive(Clone, Copy, Default)]
struct Slot {
    /// The value.
    value: u32,
    /// The value's block.
    block: u32,
    /// The low half of the key's hash.
    tag: u32,
    /// The slot holds a value only when this is the table's [`Table::stamp`].
    stamp: u32,
}

thread_local! {
    /// The table of this thread's last walk, for the next ([`Table::take`]).
    static SPARE: Cell<Option<Table>> = const { Cell::new(None) };
}

/// The values seen, one per key: an open-addressing table of instruction indices (the
/// instructions themselves are the keys), with each value's block. A thread keeps its table
/// from one walk to the next, and emptying it is a new stamp: clearing memory was a
/// noticeable part of the pass on small functions.
#[derive(Default)]
struct Table {
    /// Linear probing from the high bits of the key's hash; a power of two long.
    slots: Vec<Slot>,
    /// 64 − log2 of the number of slots.
    shift: u32,
    /// The slots with this stamp are the ones in use.
    stamp: u32,
}

impl Table {
    /// An empty table with room for `n` values: this thread's last one when large enough.
    fn take(n: usize) -> Table {
        let size = (2 * n).next_power_of_two().max(16);
        let mut t = SPARE.take().unwrap_or_default();
        if t.slots.len() < size {
            t = Table {
                slots: vec![Slot::default(); size],
                shift: 64 - size.trailing_zeros(),
                stamp: 0,
            };
        }
        t.empty();
        t
    }

    /// Hands the table on to this thread's next walk.
    fn give_back(self) {
        SPARE.set(Some(self));
    }

    /// Empties every slot.
    fn empty(&mut self) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            // Every stamp used: the old ones could come back.
            self.slots.fill(Slot::default());
            self.stamp = 1;
        }
    }

    /// The slot holding a value equal to the instruction of operation `op`, type `ty` and
    /// arguments `args` (`Ok`), or the empty slot where it goes (`Err`); with the tag of the
    /// key. The parts come apart, so that the caller passes the arguments it just resolved
    /// from registers and the operation by reference (copies of either through memory stall
    /// store forwarding).
    fn find(
        &self,
        f: &Function,
        op: &Op,
        ty: Type,
        args: [Value; 4],
    ) -> (Result<usize, usize>, u32) {
        let args = key_args(op, args);
        let h = key_hash(op, ty, &args);
        let tag = h as u32;
        let mask = self.slots.len() - 1;
        let mut at = (h >> self.shift) as usize;
        loop {
            let s = self.slots[at];
            if s.stamp != self.stamp {
                return (Err(at), tag);
            }
            // The tag first: the instruction only when the hashes agree.
            if s.tag == tag && same_key(&f.insts[s.value as usize], op, ty, &args) {
                return (Ok(at), tag);
            }
            at = (at + 1) & mask;
        }
    }
}

/// Whether instruction `c` has operation `op`, type `ty` and [`key_args`] `args`; cheapest
/// first, the derived comparison of operations last. Apart from `Table::find`: reached
/// only when the tags agree, it would otherwise load the whole operation on every probe.
#[inline(never)]
fn same_key(c: &Inst, op: &Op, ty: Type, args: &[Value; 4]) -> bool {
    c.ty == ty && key_args(&c.op, c.args) == *args && same_op(&c.op, op)
}

/// Runs the pass.
pub fn run(f: &mut Function) {
    // The block order and dominators, handed on to `ftz`.
    let doms = super::block_doms(f);
    walk(f, doms, false);
}

/// `const_fold` and then this pass, in one walk where that gives the same result as the two
/// in turn, else the two in turn.
///
/// The two agree instruction by instruction when every value an instruction reads was final
/// when the walk reached it and no phi is placed: `const_fold` decides an instruction from
/// its rewritten arguments alone, and an equal value folds the same way, so this pass, seeing
/// the instruction right after the folding of it, sees what it would have seen after the
/// whole of `const_fold`. A phi breaks that: `const_fold` folds one whose operands are one
/// value before this pass merges equal operands (a phi over two values that become one stays
/// a phi), and one with an operand from a block the walk reaches later (a loop's back edge, a
/// block the walk does not reach) may fold only after the walk and then change the arguments
/// this pass merged by.
///
/// An instruction `const_fold` replaced by another value still takes its place in the table
/// and in its block as in `cse` alone (nothing uses it any more; an equal one that comes later
/// folds the same way), so that the blocks the later passes see are the same.
pub fn run_after_fold(f: &mut Function) {
    let doms = Box::new(crate::dom::BlockDoms::of(f));
    // Phis stand first in their blocks.
    let phis = f.blocks.iter().any(|b| {
        b.insts
            .first()
            .is_some_and(|&v| matches!(f.insts[v.index()].op, Op::Phi(_)))
    });
    if phis || (f.ssa && !doms.forward) {
        super::const_fold::run_with(f, doms);
        run(f);
        return;
    }
    walk(f, doms, true);
}

/// The walk of [`run`]; with `fold`, `const_fold::fold_one` folds each instruction first
/// ([`run_after_fold`]).
fn walk(f: &mut Function, doms: Box<crate::dom::BlockDoms>, fold: bool) {
    let n = f.insts.len();
    let mut alias = super::scratch::Aliases::take(n);
    let (order, idom): (Vec<usize>, _) = if f.ssa && f.blocks.len() > 1 {
        let order = doms.order.iter().map(|&b| b as usize).collect();
        (order, Some(&doms.idom[..]))
    } else {
        ((0..f.blocks.len()).collect(), None)
    };
    // Sized by the instructions placed in blocks (the arena also holds the ones earlier
    // passes dropped).
    let mut table = Table::take(f.live_insts());
    let mut merged = false;
    let mut walked = vec![false; f.blocks.len()];
    for b in order {
        walked[b] = true;
        if idom.is_none() {
            // Values of one block only (constants too: without SSA the back end makes a
            // constant in the block that defines it).
            table.empty();
        }
        let here = b as u32;
        // Compacted in place: `insts[..w]` are the values kept so far.
        let mut insts = std::mem::take(&mut f.blocks[b].insts);
        let mut w = 0;
        for r in 0..insts.len() {
            let v = insts[r];
            // The arguments resolved in a local copy and stored back; the lookup takes that
            // copy, not the arena's (a 16-byte load of four 4-byte stores just made stalls
            // store forwarding).
            // Nothing to rewrite before the first merge; after it, one step: a merged value's
            // alias is a value of the table, never merged itself, and a folded value's is one
            // the walk reached before (never replaced after). Arguments are packed.
            let slot = &mut f.insts[v.index()];
            let mut args = slot.args;
            if merged {
                for a in args.iter_mut() {
                    if a.is_none() {
                        break;
                    }
                    let x = alias[a.index()];
                    if x.is_some() {
                        *a = x;
                    }
                }
                slot.args = args;
            }
            // Folded into another value: only its place in the table and block is left to
            // decide (as `cse` alone would, for the blocks the later passes see).
            let mut folded = false;
            if fold && super::const_fold::foldable(&slot.op) {
                // Packed: the used ones are the ones that are set (counted without branches).
                let used = args.iter().filter(|a| a.is_some()).count();
                super::const_fold::fold_one(f, alias.as_mut_slice(), v, used);
                folded = alias[v.index()].is_some();
                if folded {
                    alias.noted(v);
                }
                merged |= folded;
                // A constant now, without arguments.
                args = f.insts[v.index()].args;
            }
            let inst = &f.insts[v.index()];
            let konst = matches!(inst.op, Op::Const(_));
            if !konst && !mergeable(inst) {
                insts[w] = v;
                w += 1;
                continue;
            }
            let (found, tag) = table.find(f, &inst.op, inst.ty, args);
            let slot = Slot {
                value: v.0,
                block: here,
                tag,
                stamp: table.stamp,
            };
            match found {
                Ok(at) => {
                    let Slot {
                        value: e,
                        block: eb,
                        ..
                    } = table.slots[at];
                    let available = konst
                        || eb == here
                        || idom.as_ref().is_some_and(|d| dominates(d, eb, here));
                    if available {
                        if !folded {
                            debug_assert!(
                                alias[e as usize].is_none(),
                                "merged into a folded value"
                            );
                            alias.set(v, Value(e));
                            merged = true;
                        }
                        continue;
                    }
                    // Not available here: the later value serves the blocks after it (one
                    // value per key keeps the table small; a block dominated by the earlier
                    // one but not this one keeps its own copy).
                    table.slots[at] = slot;
                }
                Err(at) => table.slots[at] = slot,
            }
            insts[w] = v;
            w += 1;
        }
        insts.truncate(w);
        f.blocks[b].insts = insts;
    }
    table.give_back();
    if merged {
        super::apply_aliases_after_walk(f, &alias, &walked);
    }
    alias.give_back();
    f.doms = Some(doms);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Reg, Terminator};

    #[test]
    fn equal_values_merge_where_the_first_dominates() {
        // b0 → {b1, b2} → b3: a value of b0 is reused in b1 and b3; equal values made in
        // b1 and b2 (neither dominates the other) both stay; the b3 copy of b1's stays.
        let (mut f, [b0, b1, b2, b3]) = Function::with_blocks([0, 1, 2, 3]);
        f.ssa = true;
        let r = f.push(b0, Op::Get(Reg::gpr(0)), Type::U32, &[]);
        let k = f.push(b0, Op::Const(16), Type::U32, &[]);
        let z = f.push(b0, Op::Const(0), Type::U32, &[]);
        let lo = f.push(b0, Op::BfeU, Type::U32, &[r, z, k]);
        let c = f.push(b0, Op::IEq, Type::Bool, &[lo, z]);
        f.blocks[0].term = Terminator::Branch(c, b1, b2);
        let k1 = f.push(b1, Op::Const(16), Type::U32, &[]);
        let lo1 = f.push(b1, Op::BfeU, Type::U32, &[r, z, k1]);
        let s1 = f.push(b1, Op::IAdd, Type::U32, &[lo1, r]);
        let s1b = f.push(b1, Op::IAdd, Type::U32, &[r, lo1]);
        let w1 = f.push(b1, Op::Set(Reg::gpr(1)), Type::Void, &[s1b]);
        f.blocks[1].term = Terminator::Jump(b3);
        let s2 = f.push(b2, Op::IAdd, Type::U32, &[lo, r]);
        let w2 = f.push(b2, Op::Set(Reg::gpr(1)), Type::Void, &[s2]);
        f.blocks[2].term = Terminator::Jump(b3);
        let lo3 = f.push(b3, Op::BfeU, Type::U32, &[r, z, k]);
        let s3 = f.push(b3, Op::IAdd, Type::U32, &[lo3, r]);
        let w3 = f.push(b3, Op::Set(Reg::gpr(2)), Type::Void, &[s3]);
        let t = f.push(b3, Op::Set(Reg::gpr(3)), Type::Void, &[lo3]);
        f.blocks[3].term = Terminator::Exit;
        run(&mut f);
        // b1: its constant and extract are b0's, and `r + lo` is `lo + r`.
        assert_eq!(f.inst(w1).args[0], s1);
        assert_eq!(f.inst(s1).args[0], lo);
        assert!(!f.blocks[1].insts.contains(&k1) && !f.blocks[1].insts.contains(&lo1));
        // b2's sum is not b1's (b1 does not dominate b2); b3's is neither's, its extract b0's.
        assert_eq!(f.inst(w2).args[0], s2);
        assert_eq!(f.inst(t).args[0], lo);
        assert_eq!(f.inst(w3).args[0], s3);
        assert_eq!(f.inst(s3).args[0], lo);
    }

    #[test]
    fn without_ssa_only_one_blocks_values_merge() {
        let (mut f, [b0, b1]) = Function::with_blocks([0, 1]);
        let r = f.push(b0, Op::Get(Reg::gpr(0)), Type::U32, &[]);
        let n0 = f.push(b0, Op::Not, Type::U32, &[r]);
        let n0b = f.push(b0, Op::Not, Type::U32, &[r]);
        let w0 = f.push(b0, Op::Set(Reg::gpr(1)), Type::Void, &[n0b]);
        let k0 = f.push(b0, Op::Const(1), Type::U32, &[]);
        f.push(b0, Op::Set(Reg::gpr(2)), Type::Void, &[k0]);
        f.blocks[0].term = Terminator::Jump(b1);
        let n1 = f.push(b1, Op::Not, Type::U32, &[r]);
        let k1 = f.push(b1, Op::Const(1), Type::U32, &[]);
        f.push(b1, Op::Set(Reg::gpr(1)), Type::Void, &[n1]);
        f.push(b1, Op::Set(Reg::gpr(2)), Type::Void, &[k1]);
        f.blocks[1].term = Terminator::Exit;
        run(&mut f);
        assert_eq!(f.inst(w0).args[0], n0);
        assert!(
            f.blocks[1].insts.contains(&n1),
            "values do not cross blocks"
        );
        assert!(f.blocks[1].insts.contains(&k1), "nor do constants");
    }

    #[test]
    fn reads_effects_and_samples_stay() {
        use crate::ir::{Space, Width};
        let (mut f, [b]) = Function::with_blocks([0]);
        let a = f.push(b, Op::Const(64), Type::U32, &[]);
        let l1 = f.push(b, Op::Load(Space::Shared, Width::B32), Type::U32, &[a]);
        let l2 = f.push(b, Op::Load(Space::Shared, Width::B32), Type::U32, &[a]);
        let c1 = f.push(b, Op::LoadConst(1), Type::U32, &[a]);
        let c2 = f.push(b, Op::LoadConst(1), Type::U32, &[a]);
        let t1 = f.push(b, Op::SysVal(Sys::Clock), Type::U32, &[]);
        let t2 = f.push(b, Op::SysVal(Sys::Clock), Type::U32, &[]);
        let s = f.push(b, Op::IAdd, Type::U32, &[l1, l2]);
        let s = f.push(b, Op::IAdd, Type::U32, &[s, c1]);
        let s = f.push(b, Op::IAdd, Type::U32, &[s, c2]);
        let s = f.push(b, Op::IAdd, Type::U32, &[s, t1]);
        let s = f.push(b, Op::IAdd, Type::U32, &[s, t2]);
        f.push(b, Op::Set(Reg::gpr(0)), Type::Void, &[s]);
        f.blocks[0].term = Terminator::Exit;
        run(&mut f);
        let kept = &f.blocks[0].insts;
        for v in [l1, l2, t1, t2, c1] {
            assert!(kept.contains(&v), "{v} stays");
        }
        assert!(
            !kept.contains(&c2),
            "a constant-bank word read twice is one value"
        );
    }

    /// `run_after_fold` gives what `const_fold` then `cse` give: in one walk on a function
    /// without loops or phis; in turn on one with a phi over values `cse` merges (`const_fold`
    /// alone keeps it) and on one with a loop (whose phi folds only after the walk).
    #[test]
    fn folding_in_the_same_walk_changes_nothing() {
        let build = |phi: bool, looped: bool| {
            // b0 → {b1, b2} → b3, and b3 → b1 when `looped`.
            let (mut f, [b0, b1, b2, b3, b4]) = Function::with_blocks([0, 1, 2, 3, 4]);
            f.ssa = true;
            let r = f.push(b0, Op::Get(Reg::gpr(0)), Type::U32, &[]);
            let z = f.push(b0, Op::Const(0), Type::U32, &[]);
            let one = f.push(b0, Op::Const(1), Type::U32, &[]);
            let c = f.push(b0, Op::IEq, Type::Bool, &[r, z]);
            f.blocks[0].term = Terminator::Branch(c, b1, b2);
            let p = f.make_phi(Type::U32);
            if looped {
                f.blocks[1].insts.push(p);
            }
            let x = if looped { p } else { r };
            // x + 0 folds to x, and the two sums of it are one value.
            let s0 = f.push(b1, Op::IAdd, Type::U32, &[x, z]);
            let s1 = f.push(b1, Op::IAdd, Type::U32, &[s0, one]);
            let s2 = f.push(b1, Op::IAdd, Type::U32, &[one, x]);
            f.push(b1, Op::Set(Reg::gpr(1)), Type::Void, &[s1]);
            f.push(b1, Op::Set(Reg::gpr(2)), Type::Void, &[s2]);
            f.blocks[1].term = Terminator::Jump(b3);
            let k = f.push(b2, Op::IAdd, Type::U32, &[one, one]);
            let k2 = f.push(b2, Op::Const(2), Type::U32, &[]);
            let m = f.push(b2, Op::IMul, Type::U32, &[r, k]);
            let m2 = f.push(b2, Op::IMul, Type::U32, &[k2, r]);
            f.push(b2, Op::Set(Reg::gpr(1)), Type::Void, &[m]);
            f.push(b2, Op::Set(Reg::gpr(2)), Type::Void, &[m2]);
            f.blocks[2].term = Terminator::Jump(b3);
            // r + 1 in b0 and again in b2: one value after `cse`, but the phi over the two
            // is not folded (`const_fold` looked at it before they merged).
            let r1 = f.push(b0, Op::IAdd, Type::U32, &[r, one]);
            let r1b = f.push(b2, Op::IAdd, Type::U32, &[r, one]);
            if phi {
                let merge = f.make_phi(Type::U32);
                f.blocks[3].insts.push(merge);
                *f.phi_args_mut(merge).unwrap() = vec![(b1, r1), (b2, r1b)];
                f.push(b3, Op::Set(Reg::gpr(3)), Type::Void, &[merge]);
            } else {
                f.push(b2, Op::Set(Reg::gpr(3)), Type::Void, &[r1b]);
            }
            let t = f.push(b3, Op::IAdd, Type::U32, &[r, z]);
            let again = f.push(b3, Op::IEq, Type::Bool, &[t, z]);
            f.blocks[3].term = if looped {
                // The loop carries x + 0 + 0: the phi is x's entry value, known after the walk.
                let back = f.push(b3, Op::IAdd, Type::U32, &[p, z]);
                *f.phi_args_mut(p).unwrap() = vec![(b0, r), (b3, back)];
                Terminator::Branch(again, b1, b4)
            } else {
                Terminator::Branch(again, b4, b4)
            };
            f.blocks[4].term = Terminator::Exit;
            f
        };
        for (phi, looped) in [(false, false), (true, false), (true, true)] {
            let mut fused = build(phi, looped);
            let mut apart = fused.clone();
            run_after_fold(&mut fused);
            crate::passes::const_fold::run(&mut apart);
            run(&mut apart);
            assert_eq!(
                fused.to_string(),
                apart.to_string(),
                "phi {phi}, loop {looped}"
            );
            assert_eq!(fused.doms, apart.doms);
        }
    }
}
