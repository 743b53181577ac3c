//! Post-dominators of a function's blocks, with a virtual exit node after every block that
//! ends the invocation (`Exit`, `Kill`, a `Dynamic` jump, an unset terminator) and after every
//! block from which no such block is reachable (an endless loop "may exit" too, which only
//! makes post-dominance weaker, never wrong for the conservative uses in this module).
//!
//! The crate's one dominator computation ([`crate::dom`]) on the reversed graph, then a pre/post numbering of the tree so that "does `a` post-dominate
//! `b`" is two comparisons.

use crate::ir::{BlockId, Function, Terminator};

/// The post-dominator tree of a function, plus its predecessor lists.
pub struct PostDom {
    /// Block count.
    n: usize,
    /// Immediate post-dominator of each block; `n` (the block count) is the virtual exit.
    ipdom: Vec<u32>,
    /// Pre-order number of each node in the tree (the virtual exit is the root).
    pre: Vec<u32>,
    /// Post-order number of each node in the tree.
    post: Vec<u32>,
    /// Predecessors of block `b`: `pred_list[pred_start[b]..pred_start[b + 1]]`.
    pred_start: Vec<u32>,
    /// All predecessor lists, one after the other.
    pred_list: Vec<u32>,
}

/// Whether the block ends the invocation or leaves the graph (no known successors).
fn ends(f: &Function, b: usize) -> bool {
    matches!(
        f.blocks[b].term,
        Terminator::Exit | Terminator::Kill | Terminator::Dynamic(_) | Terminator::Unset
    )
}

impl PostDom {
    /// Computes the post-dominator tree of `f`.
    pub fn new(f: &Function) -> PostDom {
        let n = f.blocks.len();
        let mut pred_start = vec![0u32; n + 1];
        for b in 0..n {
            let mut i = 0;
            while let Some(s) = f.succ(BlockId(b as u32), i) {
                pred_start[s.index() + 1] += 1;
                i += 1;
            }
        }
        for b in 0..n {
            pred_start[b + 1] += pred_start[b];
        }
        let mut fill = pred_start.clone();
        let mut pred_list = vec![0u32; pred_start[n] as usize];
        for b in 0..n {
            let mut i = 0;
            while let Some(s) = f.succ(BlockId(b as u32), i) {
                pred_list[fill[s.index()] as usize] = b as u32;
                fill[s.index()] += 1;
                i += 1;
            }
        }
        let preds = |b: u32| {
            &pred_list[pred_start[b as usize] as usize..pred_start[b as usize + 1] as usize]
        };
        // Successors of each node in the reversed graph are its original predecessors; the
        // virtual exit's are the ending blocks and the blocks that reach none.
        let mut to_exit: Vec<bool> = (0..n).map(|b| ends(f, b)).collect();
        let mut seen = vec![false; n];
        let mut stack: Vec<u32> = (0..n as u32).filter(|&b| to_exit[b as usize]).collect();
        for &b in &stack {
            seen[b as usize] = true;
        }
        while let Some(b) = stack.pop() {
            for &p in preds(b) {
                if !seen[p as usize] {
                    seen[p as usize] = true;
                    stack.push(p);
                }
            }
        }
        for b in 0..n {
            if !seen[b] {
                to_exit[b] = true;
            }
        }
        // Reverse post-order of the reversed graph from the virtual exit (iterative DFS).
        let mut order: Vec<u32> = Vec::with_capacity(n + 1);
        let mut visited = vec![false; n + 1];
        let roots: Vec<u32> = (0..n as u32).filter(|&b| to_exit[b as usize]).collect();
        let rsucc = |v: u32| -> &[u32] {
            if v as usize == n {
                &roots
            } else {
                preds(v)
            }
        };
        let mut dfs: Vec<(u32, usize)> = vec![(n as u32, 0)];
        visited[n] = true;
        while let Some(&mut (v, ref mut i)) = dfs.last_mut() {
            let s = rsucc(v);
            if *i < s.len() {
                let w = s[*i];
                *i += 1;
                if !visited[w as usize] {
                    visited[w as usize] = true;
                    dfs.push((w, 0));
                }
            } else {
                order.push(v);
                dfs.pop();
            }
        }
        order.reverse();
        // The iteration: a node's reversed-graph predecessors are its original successors
        // (and the virtual exit for the ending blocks).
        let undef = crate::dom::NONE;
        let ipdom = crate::dom::immediate_dominators(n + 1, &order, |v| {
            let b = v as usize;
            let exit = (b < n && to_exit[b]).then_some(n as u32);
            let succs = (0..).map_while(move |i| f.succ(BlockId(v), i).map(|s| s.0));
            exit.into_iter()
                .chain(succs.take(if b < n { usize::MAX } else { 0 }))
        });
        // Pre/post numbers of the tree (children lists in one array, like the predecessors).
        let mut child_start = vec![0u32; n + 2];
        for &p in &ipdom[..n] {
            if p != undef {
                child_start[p as usize + 1] += 1;
            }
        }
        for v in 0..=n {
            child_start[v + 1] += child_start[v];
        }
        let mut fill = child_start.clone();
        let mut child_list = vec![0u32; child_start[n + 1] as usize];
        for (b, &p) in ipdom[..n].iter().enumerate() {
            if p != undef {
                child_list[fill[p as usize] as usize] = b as u32;
                fill[p as usize] += 1;
            }
        }
        let children = |v: u32| {
            &child_list[child_start[v as usize] as usize..child_start[v as usize + 1] as usize]
        };
        let (mut pre, mut post) = (vec![0u32; n + 1], vec![0u32; n + 1]);
        let (mut c_pre, mut c_post) = (0u32, 0u32);
        let mut walk: Vec<(u32, usize)> = vec![(n as u32, 0)];
        pre[n] = c_pre;
        c_pre += 1;
        while let Some(&mut (v, ref mut i)) = walk.last_mut() {
            if let Some(&c) = children(v).get(*i) {
                *i += 1;
                pre[c as usize] = c_pre;
                c_pre += 1;
                walk.push((c, 0));
            } else {
                post[v as usize] = c_post;
                c_post += 1;
                walk.pop();
            }
        }
        PostDom {
            n,
            ipdom,
            pre,
            post,
            pred_start,
            pred_list,
        }
    }

    /// The immediate post-dominator of `b`, or `None` for the virtual exit.
    pub fn ipdom(&self, b: BlockId) -> Option<BlockId> {
        let p = self.ipdom[b.index()];
        (p != u32::MAX && (p as usize) < self.n).then_some(BlockId(p))
    }

    /// The predecessors of block `b`.
    pub fn preds(&self, b: usize) -> &[u32] {
        &self.pred_list[self.pred_start[b] as usize..self.pred_start[b + 1] as usize]
    }

    /// The number of edges of the graph.
    pub fn edges(&self) -> usize {
        self.pred_list.len()
    }

    /// Whether `a` post-dominates `b` (every path from `b` to the exit passes `a`; a block
    /// post-dominates itself).
    pub fn dominates(&self, a: BlockId, b: BlockId) -> bool {
        let (a, b) = (a.index(), b.index());
        self.ipdom[b] != u32::MAX && self.pre[a] <= self.pre[b] && self.post[b] <= self.post[a]
    }
}
