//! Passes over a [`Function`], run in the order [`PASSES`] lists them.
//!
//! Each pass is its own module, takes `&mut Function` and keeps it valid: every value is
//! defined before its uses — earlier in the same block or in a block that dominates the use
//! (a phi's operand: dominating the end of the predecessor it comes from). Before the `ssa`
//! pass values never cross blocks and guest state crosses them only through
//! `Get`/`Set` of guest registers; after it, registers, predicates and flags are SSA values
//! with phis at block entries (unless `Function::ssa` is false: a `Dynamic` jump is left,
//! and guest state stays in variables). `ssa::verify` checks the form.

use crate::ir::Function;

pub mod const_fold;
pub mod cse;
pub mod dce;
pub mod ftz;
pub mod handles;
pub mod local_state;
pub mod sbuf;
mod scratch;
mod seq;
pub mod ssa;
pub mod tensor;
pub mod tex_arrays;
pub mod warp_shared;

/// One pass: a name (for reports and timing) and the function that runs it.
pub type Pass = (&'static str, fn(&mut Function));

/// The passes, in the order they run.
pub const PASSES: &[Pass] = &[
    ("static_stack", crate::structure::stack::run),
    ("split_irreducible", crate::structure::split::run),
    ("ssa", ssa::run),
    ("const_fold+cse", cse::run_after_fold),
    ("ftz", ftz::run),
    ("handles", handles::run),
    ("tex_arrays", tex_arrays::run),
    ("sbuf", sbuf::run),
    ("dce", dce::run),
];

/// Runs every pass of [`PASSES`] once, in order, on a bare function (hand-built IR in tests).
/// Translations go through `dmsh_spv::pipeline`, which runs the same list with its debug
/// switches (`DMSH_DEBUG=print,verify`) between the passes.
pub fn run_all(f: &mut Function) {
    for (_, pass) in PASSES {
        pass(f);
    }
}

/// Rewrites the terminators' values through `alias` (for passes that already rewrote the
/// arguments of every instruction as they went: values never cross blocks, so a use always
/// comes after its definition in the same block).
pub(crate) fn apply_aliases_to_terminators(f: &mut Function, alias: &[crate::ir::Value]) {
    use crate::ir::{Terminator, Value};
    let resolve = |mut v: Value| {
        while v.is_some() && alias[v.index()].is_some() {
            v = alias[v.index()];
        }
        v
    };
    for b in &mut f.blocks {
        match &mut b.term {
            Terminator::Branch(c, _, _) => *c = resolve(*c),
            Terminator::Dynamic(c) | Terminator::Switch(c, _, _) => *c = resolve(*c),
            _ => {}
        }
    }
}

/// Rewrites through `alias` what a walk that rewrote the arguments of the blocks it visited
/// as it went (`walked[b]`; reverse postorder, so a use other than a phi operand comes after
/// its definition) left: phi operands, terminators, and every argument of the blocks it did
/// not visit. The same result as [`apply_aliases`] after such a walk, without a second pass
/// over every instruction. Phis stand first in their blocks.
pub(crate) fn apply_aliases_after_walk(
    f: &mut Function,
    alias: &[crate::ir::Value],
    walked: &[bool],
) {
    use crate::ir::{Op, Terminator, Value};
    let resolve = |mut v: Value| {
        while v.is_some() && alias[v.index()].is_some() {
            v = alias[v.index()];
        }
        v
    };
    for (blk, &done) in f.blocks.iter_mut().zip(walked) {
        for &v in &blk.insts {
            let inst = &mut f.insts[v.index()];
            if let Op::Phi(k) = inst.op {
                for x in f.phi_in[k as usize].iter_mut() {
                    x.1 = resolve(x.1);
                }
            } else if done {
                break;
            }
            for a in inst.args.iter_mut() {
                if a.is_some() {
                    *a = resolve(*a);
                }
            }
        }
        match &mut blk.term {
            Terminator::Branch(c, _, _) => *c = resolve(*c),
            Terminator::Dynamic(c) | Terminator::Switch(c, _, _) => *c = resolve(*c),
            _ => {}
        }
    }
}

/// The block order and dominators an earlier pass left in [`Function::doms`] (taken out: a
/// pass that wants the next one to have them puts them back), or computed afresh.
pub(crate) fn block_doms(f: &mut Function) -> Box<crate::dom::BlockDoms> {
    match f.doms.take() {
        Some(d) => {
            debug_assert!(*d == crate::dom::BlockDoms::of(f), "stale Function::doms");
            d
        }
        None => Box::new(crate::dom::BlockDoms::of(f)),
    }
}

/// Whether `order` (reverse postorder, as [`rpo`] gives it) holds every block and every edge
/// goes forward in it: then a value's uses, phi operands included, all come after its
/// definition in that order.
pub(crate) fn forward_only(f: &Function, order: &[u32]) -> bool {
    let nb = f.blocks.len();
    if order.len() != nb {
        return false;
    }
    let mut pos = vec![0u32; nb];
    for (i, &b) in order.iter().enumerate() {
        pos[b as usize] = i as u32;
    }
    order.iter().all(|&b| {
        let mut i = 0;
        while let Some(s) = f.succ(crate::ir::BlockId(b), i) {
            if pos[s.index()] <= pos[b as usize] {
                return false;
            }
            i += 1;
        }
        true
    })
}

/// Blocks reachable from the entry in reverse postorder (iterative depth-first search).
pub fn rpo(f: &Function) -> Vec<crate::ir::BlockId> {
    use crate::ir::BlockId;
    let n = f.blocks.len();
    let mut post = Vec::with_capacity(n);
    if n == 0 {
        return post;
    }
    let mut seen = vec![false; n];
    let mut stack: Vec<(BlockId, usize)> = Vec::with_capacity(n.min(64));
    stack.push((BlockId(0), 0));
    seen[0] = true;
    while let Some((b, i)) = stack.last_mut() {
        let b = *b;
        match f.succ(b, *i) {
            Some(s) => {
                *i += 1;
                if !seen[s.index()] {
                    seen[s.index()] = true;
                    stack.push((s, 0));
                }
            }
            None => {
                post.push(b);
                stack.pop();
            }
        }
    }
    post.reverse();
    post
}

/// Rewrites every argument, phi operand and terminator value through `alias` (a value →
/// replacement map, possibly chained).
pub(crate) fn apply_aliases(f: &mut Function, alias: &[crate::ir::Value]) {
    use crate::ir::{Terminator, Value};
    let resolve = |mut v: Value| {
        while v.is_some() && alias[v.index()].is_some() {
            v = alias[v.index()];
        }
        v
    };
    for b in 0..f.blocks.len() {
        for i in 0..f.blocks[b].insts.len() {
            let v = f.blocks[b].insts[i];
            let inst = &mut f.insts[v.index()];
            for a in inst.args.iter_mut() {
                if a.is_some() {
                    *a = resolve(*a);
                }
            }
            if let crate::ir::Op::Phi(k) = inst.op {
                for x in f.phi_in[k as usize].iter_mut() {
                    x.1 = resolve(x.1);
                }
            }
        }
        match &mut f.blocks[b].term {
            Terminator::Branch(c, _, _) => *c = resolve(*c),
            Terminator::Dynamic(c) | Terminator::Switch(c, _, _) => *c = resolve(*c),
            _ => {}
        }
    }
}
