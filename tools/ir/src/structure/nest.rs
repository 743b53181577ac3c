//! Step 1 of structuring: the dominator tree of a reducible graph becomes a tree of labeled
//! scopes (Ramsey, "Beyond Relooper", ICFP 2022).
//!
//! Every block's code is placed once, under its placement parent in the dominator tree. A
//! forward branch to a block with one forward in-edge inlines that block's subtree; a branch
//! to a *merge* block (two or more forward in-edges, or a loop exit) is a `Br` that leaves
//! the [`Nest::Labeled`] scope wrapped around the code that branches to it — the merge
//! block's code follows that scope. A loop header's code is wrapped in a [`Nest::Loop`];
//! a back edge is a `Br` to the loop's start. Loop exits are placed outside the outermost
//! loop they leave (instead of under their immediate dominator inside the loop), so code
//! after a loop follows it rather than sitting inside its body. An empty block that only ends
//! the invocation is never a merge block: each branch to it ends the invocation itself.

use super::cfg::Cfg;
use super::Error;
use crate::ir::{BlockId, Function, Terminator, Value};

/// A statement of a [`Tree`]: its index in [`Tree::nodes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Id(u32);

/// A labeled tree (labels are the block a branch goes to), its statements in one vector
/// (no allocation, and nothing to drop, per statement).
#[derive(Clone, Debug, PartialEq)]
pub struct Tree {
    /// The statements; children come before their parents.
    pub nodes: Vec<Nest>,
    /// The outermost statement.
    pub root: Id,
}

impl Tree {
    /// The statement `id`.
    pub fn get(&self, id: Id) -> &Nest {
        &self.nodes[id.0 as usize]
    }
}

/// A statement of a labeled tree.
#[derive(Clone, Debug, PartialEq)]
pub enum Nest {
    /// A block's instructions, then where it goes.
    Code(BlockId, End),
    /// Two-way selection.
    If(Value, Id, Id),
    /// Multi-way selection: arms with case values, default.
    Switch(Value, Vec<(Vec<u32>, Id)>, Id),
    /// A loop headed by the block; `Br(header, true)` inside starts the next iteration.
    Loop(BlockId, Id),
    /// A scope that `Br(label, false)` leaves (the first statement), then the label's code
    /// (the second).
    Labeled(BlockId, Id, Id),
    /// Branch to a label: forward (leave its `Labeled`) or backward (`true`: continue its
    /// `Loop`).
    Br(BlockId, bool),
    /// End the invocation.
    Exit,
    /// Discard the invocation.
    Kill,
}

/// Where a [`Nest::Code`] block goes: a branch or the end of the invocation held inline (no
/// statement for the usual block), anything else (a selection, an inlined successor) a
/// statement of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// [`Nest::Br`].
    Br(BlockId, bool),
    /// [`Nest::Exit`].
    Exit,
    /// [`Nest::Kill`].
    Kill,
    /// Any other statement.
    Then(Id),
}

struct Nester<'a> {
    f: &'a Function,
    cfg: &'a Cfg,
    /// Placement children that are merge blocks.
    inner: Children,
    /// Loop exits placed outside a header's loop.
    outer: Children,
    merge: Vec<bool>,
    /// The tree's statements so far.
    nodes: Vec<Nest>,
}

/// Blocks listed under a parent block, in one vector: `(parent, block)`, by parent, highest
/// reverse postorder first.
struct Children(Vec<(BlockId, BlockId)>);

impl Children {
    fn new(mut list: Vec<(BlockId, BlockId)>, cfg: &Cfg) -> Children {
        list.sort_unstable_by_key(|&(p, b)| (p.0, std::cmp::Reverse(cfg.rpo[b.index()])));
        Children(list)
    }

    /// Where `x`'s blocks are in the list.
    fn of(&self, x: BlockId) -> std::ops::Range<usize> {
        let start = self.0.partition_point(|e| e.0 .0 < x.0);
        let end = start + self.0[start..].partition_point(|e| e.0 == x);
        start..end
    }

    /// The `i`-th block of the list.
    fn at(&self, i: usize) -> BlockId {
        self.0[i].1
    }
}

/// Builds the labeled tree of `f` from its analysis.
pub fn nest(f: &Function, cfg: &Cfg) -> Result<Tree, Error> {
    let n = f.blocks.len();
    let mut inner: Vec<(BlockId, BlockId)> = Vec::new();
    let mut outer: Vec<(BlockId, BlockId)> = Vec::new();
    let mut merge = vec![false; n];
    for &y in cfg.order.iter().skip(1) {
        // An empty block that only ends the invocation is copied to every branch to it.
        let blk = &f.blocks[y.index()];
        if blk.insts.is_empty()
            && matches!(
                blk.term,
                Terminator::Exit | Terminator::Kill | Terminator::Unset
            )
        {
            continue;
        }
        let d = cfg.idom[y.index()];
        // The outermost loop containing the dominator but not the block.
        let mut left = None;
        let mut l = cfg.loop_of[d.index()];
        while let Some(h) = l {
            if cfg.in_loop(y, h) {
                break;
            }
            left = Some(h);
            l = cfg.loop_parent[h.index()];
        }
        match left {
            Some(h) => {
                merge[y.index()] = true;
                outer.push((h, y));
            }
            None => {
                if cfg.fwd_in[y.index()] >= 2 {
                    merge[y.index()] = true;
                    inner.push((d, y));
                }
            }
        }
    }
    let mut nester = Nester {
        f,
        cfg,
        inner: Children::new(inner, cfg),
        outer: Children::new(outer, cfg),
        merge,
        // About two statements a block.
        nodes: Vec::with_capacity(2 * n + 2),
    };
    let root = nester.tree(BlockId(0))?;
    let root = nester.add(root);
    Ok(Tree {
        nodes: nester.nodes,
        root,
    })
}

impl Nester<'_> {
    /// Adds statement `n` to the tree.
    fn add(&mut self, n: Nest) -> Id {
        self.nodes.push(n);
        Id(self.nodes.len() as u32 - 1)
    }

    /// Where a block goes when `n` follows its code.
    fn end(&mut self, n: Nest) -> End {
        match n {
            Nest::Br(l, back) => End::Br(l, back),
            Nest::Exit => End::Exit,
            Nest::Kill => End::Kill,
            n => End::Then(self.add(n)),
        }
    }

    // The builders return a statement not yet added: the caller adds it where it needs an
    // `Id` (a branch or an end held inline needs none).
    fn tree(&mut self, x: BlockId) -> Result<Nest, Error> {
        let inner = self.inner.of(x);
        let mut code = self.within(x, inner.start, inner.end)?;
        if self.cfg.header[x.index()] {
            let body = self.add(code);
            code = Nest::Loop(x, body);
        }
        let outer = self.outer.of(x);
        self.wrap(code, outer.start, outer.end)
    }

    /// `code` inside the scopes of the loop exits `outer[i..end]` (placed outside its loop).
    fn wrap(&mut self, code: Nest, i: usize, end: usize) -> Result<Nest, Error> {
        if i == end {
            return Ok(code);
        }
        let y = self.outer.at(i);
        let scope = self.wrap(code, i + 1, end)?;
        let scope = self.add(scope);
        let then = self.tree(y)?;
        let then = self.add(then);
        Ok(Nest::Labeled(y, scope, then))
    }

    /// `x`'s code inside the scopes of its merge children `inner[i..end]`.
    fn within(&mut self, x: BlockId, i: usize, end: usize) -> Result<Nest, Error> {
        if i == end {
            let term = self.term(x)?;
            return Ok(Nest::Code(x, self.end(term)));
        }
        let y = self.inner.at(i);
        let scope = self.within(x, i + 1, end)?;
        let scope = self.add(scope);
        let then = self.tree(y)?;
        let then = self.add(then);
        Ok(Nest::Labeled(y, scope, then))
    }

    fn term(&mut self, x: BlockId) -> Result<Nest, Error> {
        let (f, cfg) = (self.f, self.cfg);
        Ok(match &f.blocks[x.index()].term {
            Terminator::Jump(t) => self.branch(x, *t)?,
            Terminator::Branch(_, t, e) if cfg.redirect[t.index()] == cfg.redirect[e.index()] => {
                self.branch(x, *t)?
            }
            &Terminator::Branch(c, t, e) => {
                let t = self.branch(x, t)?;
                let t = self.add(t);
                let e = self.branch(x, e)?;
                let e = self.add(e);
                Nest::If(c, t, e)
            }
            Terminator::Switch(v, cases, d) => {
                let (v, d) = (*v, *d);
                let mut arms: Vec<(Vec<u32>, BlockId)> = Vec::new();
                let r = |b: BlockId| cfg.redirect[b.index()];
                for &(k, t) in cases {
                    let t = r(t);
                    if t == r(d) {
                        continue;
                    }
                    match arms.iter_mut().find(|a| a.1 == t) {
                        Some(a) => a.0.push(k),
                        None => arms.push((vec![k], t)),
                    }
                }
                let mut out = Vec::with_capacity(arms.len());
                for (ks, t) in arms {
                    let arm = self.branch(x, t)?;
                    out.push((ks, self.add(arm)));
                }
                let d = self.branch(x, d)?;
                Nest::Switch(v, out, self.add(d))
            }
            Terminator::Exit | Terminator::Unset => Nest::Exit,
            Terminator::Kill => Nest::Kill,
            Terminator::Dynamic(_) => return Err(Error::Dynamic(x)),
        })
    }

    fn branch(&mut self, x: BlockId, y: BlockId) -> Result<Nest, Error> {
        let y = self.cfg.redirect[y.index()];
        if self.cfg.rpo[y.index()] <= self.cfg.rpo[x.index()] {
            Ok(Nest::Br(y, true))
        } else if self.merge[y.index()] {
            Ok(Nest::Br(y, false))
        } else {
            self.tree(y)
        }
    }
}
