//! Workgroup uniformity of SSA values and branches, and the barrier rule built on it.
//!
//! A value is *uniform* when every invocation of a workgroup that computes it gets the same
//! result: constants, workgroup ids and sizes, grid sizes, constant-bank reads at uniform
//! offsets, and operations on uniform values only. Thread and lane ids, the clock, every
//! memory load, atomics, warp operations, barrier results, graphics inputs and texture
//! results are not. A branch (or switch) is *divergent* when its condition is not uniform.
//! Phis also depend on control: invocations that split at a divergent branch `D` and meet
//! again may bring different values, so the phis of every block reachable from `D` before its
//! immediate post-dominator `P`, and of `P` itself, are not uniform either (with loops this
//! includes the loop header, which covers values that differ by the iteration an invocation
//! left in).
//!
//! The analysis is one worklist that spreads non-uniformity forward along the uses (each
//! value is marked once), plus one region walk per divergent branch; those walks share a
//! budget proportional to the graph, past which everything counts as non-uniform (the
//! conservative answer). Functions not in SSA form (`Function::ssa` false) have every value
//! non-uniform.

pub mod barrier;
pub mod postdom;
#[cfg(test)]
mod tests;

use crate::ir::{BlockId, Function, Op, Sys, Terminator, Value};
use crate::ir::{Reg, RegFile};
use postdom::PostDom;

/// The result of [`analyse`].
pub struct Uniformity {
    /// Per value of the arena: whether it is workgroup-uniform.
    pub uniform: Vec<bool>,
    /// Per block: whether its terminator chooses among successors by a non-uniform value.
    pub divergent: Vec<bool>,
}

/// Whether an operation's result may differ between invocations whatever its arguments.
fn varying_source(op: &Op) -> bool {
    match op {
        Op::SysVal(s) => matches!(
            s,
            Sys::Tid(_) | Sys::LaneId | Sys::WarpId | Sys::LaneMask(_) | Sys::Clock
        ),
        _ => matches!(
            op,
            Op::Undef
                | Op::Get(Reg {
                    file: RegFile::Gpr,
                    ..
                })
                | Op::Get(Reg {
                    file: RegFile::Pred,
                    ..
                })
                | Op::Get(Reg {
                    file: RegFile::Flag,
                    ..
                })
                | Op::StackPop(_)
                | Op::Load(..)
                | Op::Atomic(..)
                | Op::AtomicCas(..)
                | Op::BarrierPopc
                | Op::GetBarResult
                | Op::Shfl(_)
                | Op::ShflValid(_)
                | Op::Vote(_)
                | Op::WarpReduce(_)
                | Op::MatchAny
                | Op::Mma(_)
                | Op::AttrLoad { .. }
                | Op::Interp(..)
                | Op::GfxSys(_)
                | Op::Tex(_)
                | Op::ImageLoad(_)
                | Op::ImageAtomic(..)
        ),
    }
}

/// The value a block's terminator chooses by, if it chooses.
fn chooser(t: &Terminator) -> Option<Value> {
    match t {
        Terminator::Branch(c, ..) | Terminator::Switch(c, ..) | Terminator::Dynamic(c) => Some(*c),
        _ => None,
    }
}

/// Computes which values and branches of `f` are workgroup-uniform.
pub fn analyse(f: &Function, pd: &PostDom) -> Uniformity {
    let nv = f.insts.len();
    let nb = f.blocks.len();
    let all_varying = || Uniformity {
        uniform: vec![false; nv],
        divergent: (0..nb)
            .map(|b| chooser(&f.blocks[b].term).is_some())
            .collect(),
    };
    if !f.ssa {
        return all_varying();
    }
    // Uses: value -> using values (arguments and phi operands), and -> blocks that branch on it.
    let mut start = vec![0u32; nv + 1];
    let count = |v: Value, start: &mut [u32]| start[v.0 as usize + 1] += 1;
    for blk in &f.blocks {
        for &v in &blk.insts {
            let i = f.inst(v);
            for a in i.args() {
                count(a, &mut start);
            }
            if let Op::Phi(k) = i.op {
                for &(_, a) in &f.phi_in[k as usize] {
                    count(a, &mut start);
                }
            }
        }
    }
    for k in 0..nv {
        start[k + 1] += start[k];
    }
    let mut fill = start.clone();
    let mut users = vec![Value(0); start[nv] as usize];
    for blk in &f.blocks {
        for &v in &blk.insts {
            let i = f.inst(v);
            let phi = match i.op {
                Op::Phi(k) => &f.phi_in[k as usize][..],
                _ => &[],
            };
            for a in i.args().chain(phi.iter().map(|p| p.1)) {
                users[fill[a.0 as usize] as usize] = v;
                fill[a.0 as usize] += 1;
            }
        }
    }
    let mut branch_on: Vec<(Value, u32)> = (0..nb)
        .filter_map(|b| chooser(&f.blocks[b].term).map(|c| (c, b as u32)))
        .collect();
    branch_on.sort_unstable_by_key(|p| p.0 .0);

    let mut uniform = vec![true; nv];
    let mut divergent = vec![false; nb];
    let mut work: Vec<Value> = Vec::new();
    for blk in &f.blocks {
        for &v in &blk.insts {
            if varying_source(&f.inst(v).op) {
                uniform[v.0 as usize] = false;
                work.push(v);
            }
        }
    }
    // Region walks: generation-stamped visited marks, a shared step budget.
    let mut stamp = vec![0u32; nb];
    let mut gen = 0u32;
    let edges = pd.edges();
    let mut budget = 32 * (nb + edges) + 4096;
    let mut queue: Vec<u32> = Vec::new();
    while let Some(v) = work.pop() {
        let (s, e) = (
            start[v.0 as usize] as usize,
            start[v.0 as usize + 1] as usize,
        );
        for &u in &users[s..e] {
            if uniform[u.0 as usize] {
                uniform[u.0 as usize] = false;
                work.push(u);
            }
        }
        let first = branch_on.partition_point(|p| p.0 .0 < v.0);
        for &(c, d) in &branch_on[first..] {
            if c != v {
                break;
            }
            if divergent[d as usize] {
                continue;
            }
            divergent[d as usize] = true;
            // Phis of the region of `d` (blocks reachable before its immediate
            // post-dominator) and of the post-dominator itself.
            let dom = BlockId(d);
            let p = pd.ipdom(dom);
            gen += 1;
            queue.clear();
            let mut i = 0;
            while let Some(s) = f.succ(dom, i) {
                i += 1;
                if stamp[s.index()] != gen {
                    stamp[s.index()] = gen;
                    queue.push(s.0);
                }
            }
            while let Some(m) = queue.pop() {
                if budget == 0 {
                    return all_varying();
                }
                budget -= 1;
                for &x in &f.blocks[m as usize].insts {
                    if !matches!(f.inst(x).op, Op::Phi(_)) {
                        break;
                    }
                    if uniform[x.0 as usize] {
                        uniform[x.0 as usize] = false;
                        work.push(x);
                    }
                }
                if Some(BlockId(m)) == p {
                    continue;
                }
                let mut i = 0;
                while let Some(s) = f.succ(BlockId(m), i) {
                    i += 1;
                    if stamp[s.index()] != gen {
                        stamp[s.index()] = gen;
                        queue.push(s.0);
                    }
                }
            }
        }
    }
    // Blocks that choose by a value never marked (uniform) stay non-divergent; a `Dynamic`
    // jump is divergent whatever its value (its targets are unknown).
    for (b, blk) in f.blocks.iter().enumerate() {
        if matches!(blk.term, Terminator::Dynamic(_)) {
            divergent[b] = true;
        }
    }
    Uniformity { uniform, divergent }
}
