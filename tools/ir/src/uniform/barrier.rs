//! The barrier rule: a barrier block `B` is *exit-divergent* when invocations can split at a
//! divergent branch into some that reach `B` and some that end without passing it — Maxwell's
//! `BAR.SYNC` does not wait for exited threads (`if (i >= n) return; … __syncthreads()` is
//! valid CUDA), but a Vulkan or Metal barrier must be reached by every invocation.
//!
//! Formulation: `B` is exit-divergent when some block `D` whose terminator is divergent
//! ([`Uniformity::divergent`](super::Uniformity::divergent)) reaches `B` (by at least one
//! edge, so `D = B` counts when `B` is on a cycle) and `B` does not post-dominate `D`. With
//! the virtual exit of [`PostDom`], "`B` does not post-dominate `D`" is exactly "some path
//! from `D` reaches an end of the invocation without passing `B`", so the two paths are the
//! split. It is conservative: the two paths need not be taken by invocations at the same
//! time (a barrier in divergent code that some invocations skip and then exit counts too,
//! and is undefined in Vulkan as well).
//!
//! Cost: nothing when the function has no barrier; otherwise the post-dominator tree and one
//! backward walk per barrier block (under a budget proportional to the graph, past which the
//! answer is "divergent": the exact dispatcher is then used) collecting the candidate blocks
//! `D` that choose among successors; the uniformity analysis runs only when there are any.

use super::postdom::PostDom;
use crate::ir::{BlockId, Function, Op};

/// Whether some instruction of `f`'s blocks is a barrier operation of any kind (waits,
/// arrivals, barrier ids, warp syncs): one walk that lets a function without any, the usual
/// case, skip both [`exit_divergent_barrier`] and [`Function::named_barriers`].
pub fn any_barrier_op(f: &Function) -> bool {
    f.blocks.iter().any(|b| {
        b.insts.iter().any(|&v| {
            matches!(
                f.inst(v).op,
                Op::Barrier | Op::BarrierPopc | Op::WarpSync | Op::SetBarId | Op::BarrierArrive
            )
        })
    })
}

/// The first barrier block of `f` that is exit-divergent, if any (see the module text).
pub fn exit_divergent_barrier(f: &Function) -> Option<BlockId> {
    let barrier = |b: &crate::ir::Block| {
        b.insts
            .iter()
            .any(|&v| matches!(f.inst(v).op, Op::Barrier | Op::BarrierPopc | Op::WarpSync))
    };
    if f.blocks.len() < 2 || !f.blocks.iter().any(barrier) {
        return None;
    }
    let pd = PostDom::new(f);
    let nb = f.blocks.len();
    let edges = pd.edges();
    let mut budget = 16 * (nb + edges) + 4096;
    // Candidates first: (barrier block, block that reaches it by a choice and that it does
    // not post-dominate). Only when there are any does the uniformity analysis run.
    let mut candidates: Vec<(u32, u32)> = Vec::new();
    let mut stamp = vec![0u32; nb];
    let mut stack: Vec<u32> = Vec::new();
    for (b, blk) in f.blocks.iter().enumerate() {
        if !barrier(blk) {
            continue;
        }
        let bar = BlockId(b as u32);
        let gen = b as u32 + 1;
        stack.clear();
        for &p in pd.preds(b) {
            if stamp[p as usize] != gen {
                stamp[p as usize] = gen;
                stack.push(p);
            }
        }
        while let Some(d) = stack.pop() {
            if budget == 0 {
                return Some(bar);
            }
            budget -= 1;
            if super::chooser(&f.blocks[d as usize].term).is_some()
                && !pd.dominates(bar, BlockId(d))
            {
                candidates.push((b as u32, d));
            }
            for &p in pd.preds(d as usize) {
                if stamp[p as usize] != gen {
                    stamp[p as usize] = gen;
                    stack.push(p);
                }
            }
        }
    }
    if candidates.is_empty() {
        return None;
    }
    let u = super::analyse(f, &pd);
    candidates
        .iter()
        .find(|&&(_, d)| u.divergent[d as usize])
        .map(|&(b, _)| BlockId(b))
}
