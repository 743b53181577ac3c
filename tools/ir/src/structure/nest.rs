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

/// A labeled tree; labels are the block a branch goes to.
#[derive(Clone, Debug, PartialEq)]
pub enum Nest {
    /// A block's instructions, then where it goes.
    Code(BlockId, End),
    /// Two-way selection.
    If(Value, Box<Nest>, Box<Nest>),
    /// Multi-way selection: arms with case values, default.
    Switch(Value, Vec<(Vec<u32>, Nest)>, Box<Nest>),
    /// A loop headed by the block; `Br(header, true)` inside starts the next iteration.
    Loop(BlockId, Box<Nest>),
    /// A scope that `Br(label, false)` leaves (the first statement), then the label's code
    /// (the second).
    Labeled(BlockId, Box<[Nest; 2]>),
    /// Branch to a label: forward (leave its `Labeled`) or backward (`true`: continue its
    /// `Loop`).
    Br(BlockId, bool),
    /// End the invocation.
    Exit,
    /// Discard the invocation.
    Kill,
}

/// Where a [`Nest::Code`] block goes: a branch or the end of the invocation held inline (no
/// allocation for the usual block), anything else (a selection, an inlined successor) boxed.
#[derive(Clone, Debug, PartialEq)]
pub enum End {
    /// [`Nest::Br`].
    Br(BlockId, bool),
    /// [`Nest::Exit`].
    Exit,
    /// [`Nest::Kill`].
    Kill,
    /// Any other statement.
    Then(Box<Nest>),
}

impl End {
    fn of(n: Nest) -> End {
        match n {
            Nest::Br(l, back) => End::Br(l, back),
            Nest::Exit => End::Exit,
            Nest::Kill => End::Kill,
            n => End::Then(Box::new(n)),
        }
    }
}

struct Nester<'a> {
    f: &'a Function,
    cfg: &'a Cfg,
    /// Placement children that are merge blocks, per block, highest reverse postorder first.
    inner: Vec<Vec<BlockId>>,
    /// Loop exits placed outside a header's loop, highest reverse postorder first.
    outer: Vec<Vec<BlockId>>,
    merge: Vec<bool>,
}

/// Builds the labeled tree of `f` from its analysis.
pub fn nest(f: &Function, cfg: &Cfg) -> Result<Nest, Error> {
    let n = f.blocks.len();
    let mut inner: Vec<Vec<BlockId>> = vec![Vec::new(); n];
    let mut outer: Vec<Vec<BlockId>> = vec![Vec::new(); n];
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
                outer[h.index()].push(y);
            }
            None => {
                if cfg.fwd_in[y.index()] >= 2 {
                    merge[y.index()] = true;
                    inner[d.index()].push(y);
                }
            }
        }
    }
    for v in inner.iter_mut().chain(outer.iter_mut()) {
        v.sort_by_key(|b| std::cmp::Reverse(cfg.rpo[b.index()]));
    }
    let nester = Nester {
        f,
        cfg,
        inner,
        outer,
        merge,
    };
    nester.tree(BlockId(0))
}

impl Nester<'_> {
    fn tree(&self, x: BlockId) -> Result<Nest, Error> {
        let mut code = self.within(x, &self.inner[x.index()])?;
        if self.cfg.header[x.index()] {
            code = Nest::Loop(x, Box::new(code));
        }
        self.wrap(code, &self.outer[x.index()])
    }

    fn wrap(&self, code: Nest, ys: &[BlockId]) -> Result<Nest, Error> {
        match ys.split_first() {
            None => Ok(code),
            Some((&y, rest)) => Ok(Nest::Labeled(
                y,
                Box::new([self.wrap(code, rest)?, self.tree(y)?]),
            )),
        }
    }

    fn within(&self, x: BlockId, ys: &[BlockId]) -> Result<Nest, Error> {
        match ys.split_first() {
            None => Ok(Nest::Code(x, End::of(self.term(x)?))),
            Some((&y, rest)) => Ok(Nest::Labeled(
                y,
                Box::new([self.within(x, rest)?, self.tree(y)?]),
            )),
        }
    }

    fn term(&self, x: BlockId) -> Result<Nest, Error> {
        Ok(match &self.f.blocks[x.index()].term {
            Terminator::Jump(t) => self.branch(x, *t)?,
            Terminator::Branch(_, t, e)
                if self.cfg.redirect[t.index()] == self.cfg.redirect[e.index()] =>
            {
                self.branch(x, *t)?
            }
            Terminator::Branch(c, t, e) => Nest::If(
                *c,
                Box::new(self.branch(x, *t)?),
                Box::new(self.branch(x, *e)?),
            ),
            Terminator::Switch(v, cases, d) => {
                let mut arms: Vec<(Vec<u32>, BlockId)> = Vec::new();
                let r = |b: BlockId| self.cfg.redirect[b.index()];
                for &(k, t) in cases {
                    let t = r(t);
                    if t == r(*d) {
                        continue;
                    }
                    match arms.iter_mut().find(|a| a.1 == t) {
                        Some(a) => a.0.push(k),
                        None => arms.push((vec![k], t)),
                    }
                }
                let mut out = Vec::with_capacity(arms.len());
                for (ks, t) in arms {
                    out.push((ks, self.branch(x, t)?));
                }
                Nest::Switch(*v, out, Box::new(self.branch(x, *d)?))
            }
            Terminator::Exit | Terminator::Unset => Nest::Exit,
            Terminator::Kill => Nest::Kill,
            Terminator::Dynamic(_) => return Err(Error::Dynamic(x)),
        })
    }

    fn branch(&self, x: BlockId, y: BlockId) -> Result<Nest, Error> {
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
