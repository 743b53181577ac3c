//! Immediate dominators by Cooper, Harvey and Kennedy's iterative algorithm ("A Simple, Fast
//! Dominance Algorithm"), over nodes numbered `0..n` in reverse postorder: the one dominator
//! computation of the crate, used for the dominator tree of the structurizer
//! (`structure::cfg`), the post-dominator tree of the uniformity analysis (`uniform::postdom`,
//! on the reversed graph with a virtual exit), the SSA verifier and the passes that walk the
//! blocks in dominator order ([`BlockDoms`]).

/// No immediate dominator: a node the iteration never reached.
pub const NONE: u32 = u32::MAX;

/// Immediate dominators of `n` nodes. `order` lists the nodes reachable from the root in
/// reverse postorder, the root first; `preds(v)` gives `v`'s predecessors (in the graph whose
/// dominators are wanted). The root is its own immediate dominator; unreached nodes get
/// [`NONE`].
pub fn immediate_dominators<I>(n: usize, order: &[u32], preds: impl FnMut(u32) -> I) -> Vec<u32>
where
    I: IntoIterator<Item = u32>,
{
    let mut pos = vec![u32::MAX; n];
    for (i, &v) in order.iter().enumerate() {
        pos[v as usize] = i as u32;
    }
    immediate_dominators_at(order, &pos, preds)
}

/// [`immediate_dominators`] for a caller that has each node's position in `order` already
/// (`pos`, one entry per node; any value for an unreached one).
pub fn immediate_dominators_at<I>(
    order: &[u32],
    pos: &[u32],
    mut preds: impl FnMut(u32) -> I,
) -> Vec<u32>
where
    I: IntoIterator<Item = u32>,
{
    let mut idom = vec![NONE; pos.len()];
    let Some(&root) = order.first() else {
        return idom;
    };
    idom[root as usize] = root;
    let intersect = |idom: &[u32], mut a: u32, mut b: u32| {
        while a != b {
            while pos[a as usize] > pos[b as usize] {
                a = idom[a as usize];
            }
            while pos[b as usize] > pos[a as usize] {
                b = idom[b as usize];
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &v in &order[1..] {
            let mut new = NONE;
            for p in preds(v) {
                if idom[p as usize] == NONE {
                    continue;
                }
                new = if new == NONE {
                    p
                } else {
                    intersect(&idom, p, new)
                };
            }
            if new != NONE && idom[v as usize] != new {
                idom[v as usize] = new;
                changed = true;
            }
        }
    }
    idom
}

/// The immediate dominator of every block of `f` (the entry is its own; unreachable blocks
/// get [`NONE`]), over the blocks' successor edges.
pub fn block_idoms(f: &crate::ir::Function) -> Vec<u32> {
    let order: Vec<u32> = crate::passes::rpo(f).into_iter().map(|b| b.0).collect();
    block_idoms_in(f, &order)
}

/// [`block_idoms`] for a caller that already has the reachable blocks in reverse postorder
/// (`order`, as [`crate::passes::rpo`] gives them).
pub fn block_idoms_in(f: &crate::ir::Function, order: &[u32]) -> Vec<u32> {
    idoms_and_forward(f, order).0
}

/// [`block_idoms_in`], and whether every block is reached and every edge goes forward in
/// `order` ([`crate::passes::forward_only`]), from one position table and one pass over the
/// edges for both.
fn idoms_and_forward(f: &crate::ir::Function, order: &[u32]) -> (Vec<u32>, bool) {
    let nb = f.blocks.len();
    let mut pos = vec![u32::MAX; nb];
    for (i, &v) in order.iter().enumerate() {
        pos[v as usize] = i as u32;
    }
    let mut forward = order.len() == nb;
    // Predecessors over the reachable blocks, flat: `list[start[b]..start[b + 1]]` (an edge
    // listed twice, as a switch may, changes no intersection). Counted into `start[b]`,
    // summed into each list's end, and filled backwards from there, which leaves `start[b]`
    // at its list's start.
    let mut start = vec![0u32; nb + 1];
    for &b in order {
        let mut i = 0;
        while let Some(s) = f.succ(crate::ir::BlockId(b), i) {
            start[s.index()] += 1;
            forward &= pos[s.index()] > pos[b as usize];
            i += 1;
        }
    }
    let mut sum = 0;
    for x in start.iter_mut() {
        sum += *x;
        *x = sum;
    }
    let mut list = vec![0u32; sum as usize];
    for &b in order {
        let mut i = 0;
        while let Some(s) = f.succ(crate::ir::BlockId(b), i) {
            start[s.index()] -= 1;
            list[start[s.index()] as usize] = b;
            i += 1;
        }
    }
    let idom = immediate_dominators_at(order, &pos, |b| {
        list[start[b as usize] as usize..start[b as usize + 1] as usize]
            .iter()
            .copied()
    });
    (idom, forward)
}

/// The reachable blocks of a function in reverse postorder and their immediate dominators:
/// what `const_fold`, `cse` and `ftz` walk by, and whether every edge goes forward in that
/// order (what `cse` and `dce` choose their walks by). Computed once for the passes (the
/// control flow does not change between them) and handed from one to the next in
/// [`Function::doms`](crate::ir::Function::doms).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockDoms {
    /// The blocks reachable from the entry, in reverse postorder ([`crate::passes::rpo`]).
    pub order: Vec<u32>,
    /// The immediate dominator of every block ([`block_idoms`]).
    pub idom: Vec<u32>,
    /// Every block is reached and every edge goes forward in `order`
    /// ([`crate::passes::forward_only`]).
    pub forward: bool,
}

impl BlockDoms {
    /// Computes all three for `f` (a one-block function without building the predecessor
    /// lists).
    pub fn of(f: &crate::ir::Function) -> BlockDoms {
        if f.blocks.len() == 1 {
            return BlockDoms {
                order: vec![0],
                idom: vec![0],
                // Unless the block branches to itself.
                forward: (0..)
                    .map_while(|i| f.succ(crate::ir::BlockId(0), i))
                    .all(|s| s.0 != 0),
            };
        }
        let order: Vec<u32> = crate::passes::rpo(f).into_iter().map(|b| b.0).collect();
        let (idom, forward) = idoms_and_forward(f, &order);
        BlockDoms {
            order,
            idom,
            forward,
        }
    }
}

/// Whether block `a` dominates block `b` under `idom` ([`block_idoms`]); a block dominates
/// itself.
pub fn dominates(idom: &[u32], a: u32, mut b: u32) -> bool {
    loop {
        if a == b {
            return true;
        }
        let d = idom[b as usize];
        if d == NONE || d == b {
            return false;
        }
        b = d;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diamond_and_loop() {
        // 0 → 1 → {2, 3} → 4 → 1 (back edge), 4 → 5; node 6 unreachable.
        let preds: Vec<Vec<u32>> = vec![
            vec![],
            vec![0, 4],
            vec![1],
            vec![1],
            vec![2, 3],
            vec![4],
            vec![],
        ];
        let order = [0, 1, 2, 3, 4, 5];
        let idom = immediate_dominators(7, &order, |v| preds[v as usize].clone());
        assert_eq!(idom, vec![0, 0, 1, 1, 1, 4, NONE]);
        assert!(immediate_dominators(3, &[], |_| Vec::new())
            .iter()
            .all(|&d| d == NONE));
    }
}
