//! Node splitting for irreducible graphs (a pass, after [`super::stack`]).
//!
//! A loop with more than one entry (a retreating edge whose target does not dominate its
//! source) has no structured form. Node splitting copies the loop's region without the entry
//! chosen as header, and sends the branches from outside into the region to the copies, so
//! the original has one entry; the copies only contain smaller cycles, so repeating this until
//! the graph is reducible ends (it can multiply blocks, so the pass stops after
//! [`MAX_SPLITS`] copies or when the function has grown to 2 × blocks + 16; the graph is then
//! left as it is and the back end takes its dispatcher fallback). An entry block inside a loop
//! first moves behind an empty entry block. Compiler output is reducible, so on real shaders
//! the pass only runs the reducibility check.

use super::cfg::{Cfg, Irreducible};
use crate::ir::{BlockId, Function, Terminator, Value};
use std::collections::HashMap;

/// Most loop bodies copied per function.
pub const MAX_SPLITS: usize = 32;

/// Runs the pass; see the module documentation.
pub fn run(f: &mut Function) {
    if f.blocks.len() < 2 || f.blocks.len() > super::MAX_BLOCKS || acyclic(f) {
        return;
    }
    let Err(Irreducible::Edge(..)) = Cfg::new(f) else {
        return;
    };
    let mut g = f.clone();
    detach_entry(&mut g);
    let limit = 2 * f.blocks.len() + 16;
    for _ in 0..MAX_SPLITS {
        if g.blocks.len() > limit {
            break;
        }
        match Cfg::new(&g) {
            Ok(_) => {
                *f = g;
                return;
            }
            Err(Irreducible::Edge(_, b)) => peel(&mut g, b),
        }
    }
    if Cfg::new(&g).is_ok() {
        *f = g;
    }
}

/// The `i`-th successor of block `b` (None past the last), without allocating.
fn succ(f: &Function, b: usize, i: usize) -> Option<BlockId> {
    match &f.blocks[b].term {
        Terminator::Jump(t) => (i == 0).then_some(*t),
        Terminator::Branch(_, t, e) => [*t, *e].get(i).copied(),
        Terminator::Switch(_, cases, d) => cases
            .get(i)
            .map(|c| c.1)
            .or((i == cases.len()).then_some(*d)),
        _ => None,
    }
}

/// Whether no cycle is reachable from the entry (an acyclic graph is reducible: the full
/// analysis is not needed), by an iterative depth-first search.
fn acyclic(f: &Function) -> bool {
    // 0: not seen, 1: on the search path, 2: done.
    let mut state = vec![0u8; f.blocks.len()];
    // (As deep as the blocks at most: no growth.)
    let mut stack: Vec<(usize, usize)> = Vec::with_capacity(f.blocks.len());
    stack.push((0, 0));
    state[0] = 1;
    while let Some(&mut (b, ref mut i)) = stack.last_mut() {
        match succ(f, b, *i) {
            Some(t) => {
                *i += 1;
                match state[t.index()] {
                    0 => {
                        state[t.index()] = 1;
                        stack.push((t.index(), 0));
                    }
                    1 => return false,
                    _ => {}
                }
            }
            None => {
                state[b] = 2;
                stack.pop();
            }
        }
    }
    true
}

/// Makes the entry a block nothing branches to (an empty jump to the old entry's code, moved
/// to a new block), so that a loop through the old entry has an outside predecessor.
fn detach_entry(f: &mut Function) {
    let targeted = (0..f.blocks.len()).any(|b| f.succs(BlockId(b as u32)).contains(&BlockId(0)));
    if !targeted {
        return;
    }
    let old = f.blocks[0].clone();
    let k = f.add_block(old.addr);
    f.blocks[k.index()].insts = old.insts;
    f.blocks[k.index()].term = old.term;
    f.blocks[0].insts = Vec::new();
    f.blocks[0].addr = None;
    f.blocks[0].term = Terminator::Jump(k);
    let map: HashMap<BlockId, BlockId> = [(BlockId(0), k)].into_iter().collect();
    for b in 1..f.blocks.len() {
        retarget_exact(f, BlockId(b as u32), &map);
    }
}

/// Points `a`'s branches to blocks of `map` (exactly those blocks) at their replacements.
fn retarget_exact(f: &mut Function, a: BlockId, map: &HashMap<BlockId, BlockId>) {
    let hit = |t: &mut BlockId| {
        if let Some(&c) = map.get(t) {
            *t = c;
        }
    };
    match &mut f.blocks[a.index()].term {
        Terminator::Jump(x) => hit(x),
        Terminator::Branch(_, x, y) => {
            hit(x);
            hit(y);
        }
        Terminator::Switch(_, cases, d) => {
            for c in cases.iter_mut() {
                hit(&mut c.1);
            }
            hit(d);
        }
        _ => {}
    }
}

/// The block a branch to `t` really reaches (past empty blocks that only jump on), as
/// [`Cfg`] sees it.
fn follow(f: &Function, t: BlockId) -> BlockId {
    let mut x = t;
    for _ in 0..f.blocks.len() {
        match &f.blocks[x.index()].term {
            Terminator::Jump(u) if f.blocks[x.index()].insts.is_empty() && *u != x => x = *u,
            _ => break,
        }
    }
    if matches!(f.blocks[x.index()].term, Terminator::Jump(_))
        && f.blocks[x.index()].insts.is_empty()
    {
        return t;
    }
    x
}

/// `b`, the target of a retreating edge that does not dominate its source, lies in a
/// strongly connected region with more than one entry (possibly inside a proper loop, whose
/// single entry is set aside first). The region without its first entry (lowest index, so
/// originals win over copies) is copied once — edges among the copies, edges to the kept
/// entry and out of the region unchanged — and the branches from outside into it go to the
/// copies. The original region then has one entry; cycles left in the copies are smaller, so
/// repeating this ends.
fn peel(f: &mut Function, b: BlockId) {
    let n = f.blocks.len();
    let succs: Vec<Vec<BlockId>> = (0..n)
        .map(|x| {
            f.succs(BlockId(x as u32))
                .into_iter()
                .map(|t| follow(f, t))
                .collect()
        })
        .collect();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (x, ss) in succs.iter().enumerate() {
        for t in ss {
            if !preds[t.index()].contains(&x) {
                preds[t.index()].push(x);
            }
        }
    }
    // Reachable from the entry (unreachable blocks are no entries).
    let mut live = vec![false; n];
    let mut work = vec![0usize];
    live[0] = true;
    while let Some(x) = work.pop() {
        for t in &succs[x] {
            if !live[t.index()] {
                live[t.index()] = true;
                work.push(t.index());
            }
        }
    }
    // The strongly connected region around `b`; with one entry, that entry is a proper loop
    // header: set it aside and look at the cycle through `b` inside it.
    let mut excluded = vec![false; n];
    let (region, outside) = loop {
        let reach = |start: usize, next: &dyn Fn(usize) -> Vec<usize>| {
            let mut seen = vec![false; n];
            seen[start] = true;
            let mut work = vec![start];
            while let Some(x) = work.pop() {
                for t in next(x) {
                    if !seen[t] && !excluded[t] {
                        seen[t] = true;
                        work.push(t);
                    }
                }
            }
            seen
        };
        let fwd = reach(b.index(), &|x| succs[x].iter().map(|t| t.index()).collect());
        let bwd = reach(b.index(), &|x| preds[x].clone());
        let scc: Vec<bool> = (0..n).map(|x| fwd[x] && bwd[x] && live[x]).collect();
        let entries: Vec<usize> = (0..n)
            .filter(|&x| scc[x] && (x == 0 || preds[x].iter().any(|&p| live[p] && !scc[p])))
            .collect();
        match entries.as_slice() {
            [] => return,
            [h] => {
                if *h == b.index() {
                    return;
                }
                excluded[*h] = true;
            }
            _ => {
                // The first entry (lowest index: originals before copies) stays the header.
                let h = entries[0];
                let region: Vec<usize> = (0..n).filter(|&x| scc[x] && x != h).collect();
                let outside: Vec<usize> = (0..n)
                    .filter(|&p| {
                        live[p] && !scc[p] && succs[p].iter().any(|t| region.contains(&t.index()))
                    })
                    .collect();
                break (region, outside);
            }
        }
    };
    if region.is_empty() || outside.is_empty() {
        return;
    }
    // Copy the body without its header; the copies' edges stay among the copies, except
    // those to the header and out of the loop.
    let mut copy: HashMap<BlockId, BlockId> = HashMap::new();
    for &x in &region {
        copy.insert(BlockId(x as u32), copy_block(f, BlockId(x as u32)));
    }
    for &x in &region {
        retarget(f, copy[&BlockId(x as u32)], &copy);
    }
    for &p in &outside {
        retarget(f, BlockId(p as u32), &copy);
    }
}

/// Appends a copy of block `b` (fresh values, same terminator targets).
fn copy_block(f: &mut Function, b: BlockId) -> BlockId {
    let src = f.blocks[b.index()].clone();
    let mut remap: HashMap<Value, Value> = HashMap::new();
    let mut insts = Vec::with_capacity(src.insts.len());
    for &v in &src.insts {
        let mut inst = *f.inst(v);
        for x in inst.args.iter_mut() {
            if let Some(&r) = remap.get(x) {
                *x = r;
            }
        }
        let nv = f.make(inst.op, inst.ty, &[]);
        f.insts[nv.index()] = inst;
        remap.insert(v, nv);
        insts.push(nv);
    }
    let mut term = src.term.clone();
    if let Terminator::Branch(c, _, _) | Terminator::Switch(c, _, _) | Terminator::Dynamic(c) =
        &mut term
    {
        if let Some(&r) = remap.get(c) {
            *c = r;
        }
    }
    let nb = f.add_block(src.addr);
    f.blocks[nb.index()].insts = insts;
    f.blocks[nb.index()].term = term;
    nb
}

/// Points `a`'s branches into blocks of `map` at their copies.
fn retarget(f: &mut Function, a: BlockId, map: &HashMap<BlockId, BlockId>) {
    let hit = |t: &mut BlockId, f: &Function| {
        if let Some(&c) = map.get(&follow(f, *t)) {
            *t = c;
        }
    };
    let mut t = f.blocks[a.index()].term.clone();
    match &mut t {
        Terminator::Jump(x) => hit(x, f),
        Terminator::Branch(_, x, y) => {
            hit(x, f);
            hit(y, f);
        }
        Terminator::Switch(_, cases, d) => {
            for c in cases.iter_mut() {
                hit(&mut c.1, f);
            }
            hit(d, f);
        }
        _ => {}
    }
    f.blocks[a.index()].term = t;
}
