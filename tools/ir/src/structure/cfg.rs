//! Graph facts the structurizer needs: reverse postorder, forward in-edge counts, the
//! dominator tree (Cooper, Harvey and Kennedy's iterative algorithm over reverse postorder)
//! and natural loops (reducibility is checked here).

use crate::ir::{BlockId, Function, Terminator};

/// Facts about the blocks reachable from the entry. Indices are block indices.
#[derive(Debug)]
pub struct Cfg {
    /// Where a branch to each block really goes (past empty blocks that only jump on).
    pub redirect: Vec<BlockId>,
    /// Successors (redirected) in terminator order (duplicates kept: a branch may name one block twice).
    pub succs: Vec<Vec<BlockId>>,
    /// Reachable blocks in reverse postorder (the entry first).
    pub order: Vec<BlockId>,
    /// Position of each block in `order` (`usize::MAX` when unreachable).
    pub rpo: Vec<usize>,
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
        // Branches to an empty block that only jumps on go straight to where it goes.
        let mut redirect: Vec<BlockId> = (0..n as u32).map(BlockId).collect();
        for (b, r) in redirect.iter_mut().enumerate() {
            let mut t = b;
            for _ in 0..n {
                match &f.blocks[t].term {
                    Terminator::Jump(u) if f.blocks[t].insts.is_empty() && u.index() != t => {
                        t = u.index()
                    }
                    _ => break,
                }
            }
            if matches!(&f.blocks[t].term, Terminator::Jump(_)) && f.blocks[t].insts.is_empty() {
                t = b; // an empty cycle: keep it as it is
            }
            *r = BlockId(t as u32);
        }
        let succs: Vec<Vec<BlockId>> = (0..n)
            .map(|b| {
                f.succs(BlockId(b as u32))
                    .into_iter()
                    .map(|s| redirect[s.index()])
                    .collect()
            })
            .collect();
        // Iterative depth-first postorder.
        let mut post = Vec::with_capacity(n);
        let mut seen = vec![false; n];
        let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
        seen[0] = true;
        while let Some(&mut (b, ref mut i)) = stack.last_mut() {
            if *i < succs[b].len() {
                let s = succs[b][*i].index();
                *i += 1;
                if !seen[s] {
                    seen[s] = true;
                    stack.push((s, 0));
                }
            } else {
                post.push(BlockId(b as u32));
                stack.pop();
            }
        }
        let order: Vec<BlockId> = post.into_iter().rev().collect();
        let mut rpo = vec![usize::MAX; n];
        for (i, b) in order.iter().enumerate() {
            rpo[b.index()] = i;
        }
        let mut preds: Vec<Vec<BlockId>> = vec![Vec::new(); n];
        for &b in &order {
            for &s in &succs[b.index()] {
                preds[s.index()].push(b);
            }
        }
        // Dominators.
        let mut idom: Vec<Option<usize>> = vec![None; n];
        idom[0] = Some(0);
        let mut changed = true;
        while changed {
            changed = false;
            for &b in order.iter().skip(1) {
                let mut new: Option<usize> = None;
                for &p in &preds[b.index()] {
                    let p = p.index();
                    if idom[p].is_none() {
                        continue;
                    }
                    new = Some(match new {
                        None => p,
                        Some(q) => {
                            let (mut x, mut y) = (p, q);
                            while x != y {
                                while rpo[x] > rpo[y] {
                                    x = idom[x].expect("processed");
                                }
                                while rpo[y] > rpo[x] {
                                    y = idom[y].expect("processed");
                                }
                            }
                            x
                        }
                    });
                }
                if new.is_some() && idom[b.index()] != new {
                    idom[b.index()] = new;
                    changed = true;
                }
            }
        }
        let idom: Vec<BlockId> = (0..n)
            .map(|b| BlockId(idom[b].unwrap_or(b) as u32))
            .collect();
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
        let mut latches: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &b in &order {
            for (k, &s) in succs[b.index()].iter().enumerate() {
                let (bi, si) = (b.index(), s.index());
                if succs[bi][..k].contains(&s) {
                    continue;
                }
                if rpo[si] > rpo[bi] {
                    fwd_in[si] += 1;
                } else if dominates(si, bi) {
                    header[si] = true;
                    latches[si].push(bi);
                } else {
                    return Err(Irreducible::Edge(b, s));
                }
            }
        }
        // Loops, outermost (lowest reverse postorder) first, so inner loops overwrite.
        let mut loop_of: Vec<Option<BlockId>> = vec![None; n];
        let mut loop_parent: Vec<Option<BlockId>> = vec![None; n];
        let mut mark = vec![usize::MAX; n];
        for &h in &order {
            let hi = h.index();
            if !header[hi] {
                continue;
            }
            loop_parent[hi] = loop_of[hi];
            let mut work: Vec<usize> = latches[hi].clone();
            mark[hi] = hi;
            loop_of[hi] = Some(h);
            while let Some(x) = work.pop() {
                if mark[x] == hi {
                    continue;
                }
                mark[x] = hi;
                loop_of[x] = Some(h);
                for &p in &preds[x] {
                    if mark[p.index()] != hi {
                        work.push(p.index());
                    }
                }
            }
        }
        Ok(Cfg {
            redirect,
            succs,
            order,
            rpo,
            idom,
            fwd_in,
            header,
            loop_of,
            loop_parent,
        })
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
