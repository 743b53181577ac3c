//! Graph facts the structurizer needs: reverse postorder, forward in-edge counts, the
//! dominator tree (Cooper, Harvey and Kennedy's iterative algorithm over reverse postorder)
//! and natural loops (reducibility is checked here).

use crate::ir::{BlockId, Function, Terminator};

/// Facts about the blocks reachable from the entry. Indices are block indices.
#[derive(Debug)]
pub struct Cfg {
    /// Where a branch to each block really goes (past empty blocks that only jump on).
    pub redirect: Vec<BlockId>,
    /// Successors (redirected) in terminator order (duplicates kept: a branch may name one
    /// block twice), block after block: those of `b` are `succ_list[succ_at[b]..succ_at[b + 1]]`
    /// (see [`Cfg::succs`]).
    succ_list: Vec<BlockId>,
    succ_at: Vec<u32>,
    /// Reachable blocks in reverse postorder (the entry first).
    pub order: Vec<BlockId>,
    /// Position of each block in `order` (`u32::MAX` when unreachable).
    pub rpo: Vec<u32>,
    /// Immediate dominator (the entry is its own).
    pub idom: Vec<BlockId>,
    /// Number of forward in-edges (from distinct blocks earlier in reverse postorder).
    pub fwd_in: Vec<usize>,
    /// Whether the block is a loop header (target of a back edge).
    pub header: Vec<bool>,
    /// Innermost loop (its header) containing each block, if any; a header is in its own loop.
    pub loop_of: Vec<Option<BlockId>>,
    /// The loop enclosing each header's loop.
    pub loop_parent: Vec<Option<BlockId>>,
}

/// Why a graph cannot be structured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Irreducible {
    /// A retreating edge whose target does not dominate its source.
    Edge(BlockId, BlockId),
}

impl Cfg {
    /// Analyses `f`; fails on an irreducible graph.
    pub fn new(f: &Function) -> Result<Cfg, Irreducible> {
        let n = f.blocks.len();
        // Branches to an empty block that only jumps on go straight to where it goes (unless
        // a phi there needs the edge, `Function::forwards`).
        let mut redirect: Vec<BlockId> = (0..n as u32).map(BlockId).collect();
        for (b, r) in redirect.iter_mut().enumerate() {
            let mut t = b;
            let mut steps = 0;
            while let Some(u) = f.forwards(BlockId(t as u32)) {
                if u.index() == t || steps == n {
                    t = b; // an empty cycle: keep it as it is
                    break;
                }
                t = u.index();
                steps += 1;
            }
            *r = BlockId(t as u32);
        }
        // Successors, flat (no allocation per block).
        let mut succ_list: Vec<BlockId> = Vec::with_capacity(2 * n);
        let mut succ_at: Vec<u32> = Vec::with_capacity(n + 1);
        for b in &f.blocks {
            succ_at.push(succ_list.len() as u32);
            match &b.term {
                Terminator::Jump(t) => succ_list.push(redirect[t.index()]),
                Terminator::Branch(_, t, e) => {
                    succ_list.push(redirect[t.index()]);
                    succ_list.push(redirect[e.index()]);
                }
                Terminator::Switch(_, cases, d) => {
                    succ_list.extend(cases.iter().map(|c| redirect[c.1.index()]));
                    succ_list.push(redirect[d.index()]);
                }
                _ => {}
            }
        }
        succ_at.push(succ_list.len() as u32);
        let succs = |b: usize| &succ_list[succ_at[b] as usize..succ_at[b + 1] as usize];
        // Iterative depth-first postorder (`rpo` marks the blocks seen until it is filled).
        let mut order: Vec<u32> = Vec::with_capacity(n);
        let mut rpo = vec![u32::MAX; n];
        // (As deep as the blocks at most: no growth.)
        let mut stack: Vec<(usize, usize)> = Vec::with_capacity(n);
        stack.push((0, 0));
        rpo[0] = 0;
        while let Some(&mut (b, ref mut i)) = stack.last_mut() {
            let ss = succs(b);
            if *i < ss.len() {
                let s = ss[*i].index();
                *i += 1;
                if rpo[s] == u32::MAX {
                    rpo[s] = 0;
                    stack.push((s, 0));
                }
            } else {
                order.push(b as u32);
                stack.pop();
            }
        }
        order.reverse();
        for (i, &b) in order.iter().enumerate() {
            rpo[b as usize] = i as u32;
        }
        // Predecessors (reachable ones), flat like the successors: `pred_at[b]` counts them,
        // then is where `b`'s end, then where they start as the edges, walked backwards, are
        // placed from the back (so each list is in edge order).
        let mut pred_at = vec![0u32; n + 1];
        for &b in &order {
            for &s in succs(b as usize) {
                pred_at[s.index()] += 1;
            }
        }
        for i in 0..n {
            pred_at[i + 1] += pred_at[i];
        }
        let mut pred_list = vec![BlockId(0); pred_at[n] as usize];
        for &b in order.iter().rev() {
            for &s in succs(b as usize).iter().rev() {
                pred_at[s.index()] -= 1;
                pred_list[pred_at[s.index()] as usize] = BlockId(b);
            }
        }
        let preds = |b: usize| &pred_list[pred_at[b] as usize..pred_at[b + 1] as usize];
        // Dominators (`rpo` is the positions the iteration needs).
        let idom = crate::dom::immediate_dominators_at(&order, &rpo, |b| {
            preds(b as usize).iter().map(|p| p.0)
        });
        // (In place: a `u32` and a `BlockId` are laid out alike.)
        let idom: Vec<BlockId> = idom
            .into_iter()
            .enumerate()
            .map(|(b, d)| BlockId(if d == crate::dom::NONE { b as u32 } else { d }))
            .collect();
        let order: Vec<BlockId> = order.into_iter().map(BlockId).collect();
        let dominates = |a: usize, mut b: usize| -> bool {
            loop {
                if a == b {
                    return true;
                }
                let d = idom[b].index();
                if d == b {
                    return false;
                }
                b = d;
            }
        };
        // Back edges, forward in-edges, natural loops.
        let mut fwd_in = vec![0usize; n];
        let mut header = vec![false; n];
        // Back edges (latch, header).
        let mut back: Vec<(usize, usize)> = Vec::new();
        for &b in &order {
            let ss = succs(b.index());
            for (k, &s) in ss.iter().enumerate() {
                let (bi, si) = (b.index(), s.index());
                if ss[..k].contains(&s) {
                    continue;
                }
                if rpo[si] > rpo[bi] {
                    fwd_in[si] += 1;
                } else if dominates(si, bi) {
                    header[si] = true;
                    back.push((bi, si));
                } else {
                    return Err(Irreducible::Edge(b, s));
                }
            }
        }
        // Loops, outermost (lowest reverse postorder) first, so inner loops overwrite.
        let mut loop_of: Vec<Option<BlockId>> = vec![None; n];
        let mut loop_parent: Vec<Option<BlockId>> = vec![None; n];
        back.sort_unstable_by_key(|e| e.1);
        // (Only a function with a loop needs the marks.)
        let mut mark = vec![usize::MAX; if back.is_empty() { 0 } else { n }];
        let mut work: Vec<usize> = Vec::new();
        for &h in &order {
            let hi = h.index();
            if !header[hi] {
                continue;
            }
            loop_parent[hi] = loop_of[hi];
            work.clear();
            let from = back.partition_point(|e| e.1 < hi);
            let to = back.partition_point(|e| e.1 <= hi);
            work.extend(back[from..to].iter().map(|e| e.0));
            mark[hi] = hi;
            loop_of[hi] = Some(h);
            while let Some(x) = work.pop() {
                if mark[x] == hi {
                    continue;
                }
                mark[x] = hi;
                loop_of[x] = Some(h);
                for &p in preds(x) {
                    if mark[p.index()] != hi {
                        work.push(p.index());
                    }
                }
            }
        }
        Ok(Cfg {
            redirect,
            succ_list,
            succ_at,
            order,
            rpo,
            idom,
            fwd_in,
            header,
            loop_of,
            loop_parent,
        })
    }

    /// The successors of `b` (redirected, in terminator order, duplicates kept).
    pub fn succs(&self, b: BlockId) -> &[BlockId] {
        &self.succ_list[self.succ_at[b.index()] as usize..self.succ_at[b.index() + 1] as usize]
    }

    /// Whether `b` lies in the loop headed by `h`.
    pub fn in_loop(&self, b: BlockId, h: BlockId) -> bool {
        let mut l = self.loop_of[b.index()];
        while let Some(x) = l {
            if x == h {
                return true;
            }
            l = self.loop_parent[x.index()];
        }
        false
    }
}
