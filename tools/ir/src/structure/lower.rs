//! Step 2 of structuring: labeled scopes and branches become SPIR-V-shaped constructs.
//!
//! A branch becomes nothing when control reaches its label by falling through (it sits at
//! the end of its scope — the common case of if/else joins), `Break` when leaving the
//! innermost loop or switch reaches the label, `Continue` when it is the back edge of the
//! innermost loop. A `Labeled` scope left from a point where none of these applies becomes a
//! one-iteration loop (so `Break` leaves it). Any other branch leaves several constructs at
//! once: it sets the goto variable to the label's number and breaks; right after each
//! construct it left, `if goto == n { goto = 0; <branch again> }` continues the journey —
//! the "outward movement" of goto elimination (Erosa and Hendren), which yuzu's and
//! Ryujinx's structurizers also use.

use super::nest::{End, Id, Nest, Tree};
use super::tree::{Cond, Node, Structured};
use super::Error;
use crate::ir::BlockId;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

struct Frame {
    /// The label reached by leaving this construct, if any (the tail of the statement it
    /// is: at most one label, see [`Lower::node`]).
    exit: Option<BlockId>,
    /// The loop header `Continue` reaches (inherited by switches).
    cont: Option<BlockId>,
    /// Branches that left through this construct: (label, backward).
    escapes: Vec<(BlockId, bool)>,
    /// Whether the construct is a switch (`Break` leaves it, not the loop around it).
    switch: bool,
}

enum Fail {
    /// The scope of this label must become a loop; lower it again.
    Retry(BlockId),
    /// A branch to a label not in scope (a structurizer bug).
    Bad(BlockId),
}

struct Lower<'a> {
    tree: &'a Tree,
    frames: Vec<Frame>,
    constructs: HashSet<BlockId>,
    /// Labels whose scope is being lowered: frame depth at the scope, whether a construct.
    active: HashMap<BlockId, (usize, bool)>,
    gotos: usize,
    block_loops: usize,
}

/// Lowers a labeled tree.
pub fn lower(tree: &Tree) -> Result<Structured, Error> {
    let mut l = Lower {
        tree,
        frames: Vec::new(),
        constructs: HashSet::default(),
        active: HashMap::default(),
        gotos: 0,
        block_loops: 0,
    };
    match l.node(tree.root, &[]) {
        Ok(root) => Ok(Structured {
            root,
            gotos: l.gotos,
            block_loops: l.block_loops,
        }),
        Err(Fail::Retry(b)) | Err(Fail::Bad(b)) => Err(Error::Label(b)),
    }
}

fn goto_id(l: BlockId, back: bool) -> u32 {
    l.0 * 2 + 1 + back as u32
}

fn seq(mut v: Vec<Node>) -> Node {
    v.retain(|n| !n.is_empty());
    if v.len() == 1 {
        v.pop().expect("one")
    } else {
        Node::Seq(v)
    }
}

/// `acc` followed by `n`, both what [`Lower::node`] returns (a statement that is not a
/// `Seq`, or a `Seq` of none or at least two such statements), as one such: what [`seq`]
/// gives for the flattened statements, without a vector while there is at most one.
fn append(acc: Node, n: Node) -> Node {
    match (acc, n) {
        (a, Node::Seq(w)) if w.is_empty() => a,
        (Node::Seq(v), n) if v.is_empty() => n,
        (Node::Seq(mut v), Node::Seq(w)) => {
            v.extend(w);
            Node::Seq(v)
        }
        (Node::Seq(mut v), n) => {
            v.push(n);
            Node::Seq(v)
        }
        (a, Node::Seq(mut w)) => {
            w.insert(0, a);
            Node::Seq(w)
        }
        (a, n) => {
            // Room for what the enclosing statements usually add before or after the pair.
            let mut v = Vec::with_capacity(4);
            v.push(a);
            v.push(n);
            Node::Seq(v)
        }
    }
}

/// A construct followed by the checks [`Lower::dispatch`] gives after it, as [`seq`] would
/// join them (neither is empty), without a vector when there are no checks.
fn then_checks(construct: Node, checks: Vec<Node>) -> Node {
    if checks.is_empty() {
        return construct;
    }
    let mut v = Vec::with_capacity(1 + checks.len());
    v.push(construct);
    v.extend(checks);
    Node::Seq(v)
}

/// The label a statement of tail `tail` reaches when left: its tail is none (a loop body,
/// the root) or the one label whose code follows (a labeled scope's body).
fn exit_of(tail: &[BlockId]) -> Option<BlockId> {
    debug_assert!(tail.len() <= 1, "a tail of several labels");
    tail.first().copied()
}

impl Lower<'_> {
    /// Lowers node `n`, which `tail` (none, or the label whose code follows) ends.
    fn node(&mut self, n: Id, tail: &[BlockId]) -> Result<Node, Fail> {
        let tree = self.tree;
        Ok(match tree.get(n) {
            Nest::Code(b, end) => {
                let end = match end {
                    End::Br(lab, back) => self.branch(*lab, *back, tail)?,
                    End::Exit => Node::Exit,
                    End::Kill => Node::Kill,
                    End::Then(n) => self.node(*n, tail)?,
                };
                append(Node::Block(*b), end)
            }
            Nest::Exit => Node::Exit,
            Nest::Kill => Node::Kill,
            Nest::If(c, a, b) => {
                let a = self.node(*a, tail)?;
                let b = self.node(*b, tail)?;
                if a.is_empty() && b.is_empty() {
                    Node::Seq(Vec::new())
                } else {
                    Node::If(Cond::Value(*c), Box::new(a), Box::new(b))
                }
            }
            Nest::Switch(v, arms, def) => {
                let cont = self.frames.last().and_then(|f| f.cont);
                let saved = self.frames.len();
                self.frames.push(Frame {
                    exit: exit_of(tail),
                    cont,
                    escapes: Vec::new(),
                    switch: true,
                });
                let r = (|| -> Result<_, Fail> {
                    let mut out = Vec::with_capacity(arms.len());
                    for (ks, a) in arms {
                        out.push((ks.clone(), self.node(*a, tail)?));
                    }
                    let d = self.node(*def, tail)?;
                    Ok((out, d))
                })();
                let frame = self.pop(saved);
                let (out, d) = r?;
                let checks = self.dispatch(frame.escapes, tail)?;
                then_checks(Node::Switch(*v, out, Box::new(d)), checks)
            }
            Nest::Loop(h, body) => {
                let saved = self.frames.len();
                self.frames.push(Frame {
                    exit: exit_of(tail),
                    cont: Some(*h),
                    escapes: Vec::new(),
                    switch: false,
                });
                let r = self.node(*body, &[]);
                let frame = self.pop(saved);
                let body = r?;
                let checks = self.dispatch(frame.escapes, tail)?;
                then_checks(Node::Loop(Box::new(body)), checks)
            }
            Nest::Labeled(lab, scope, code) => {
                let scope = self.scope(*lab, *scope)?;
                append(scope, self.node(*code, tail)?)
            }
            Nest::Br(lab, back) => self.branch(*lab, *back, tail)?,
        })
    }

    /// The scope `body` of label `lab` (whose code follows it: falling off the end reaches it).
    fn scope(&mut self, lab: BlockId, body: Id) -> Result<Node, Fail> {
        let inner_tail = [lab];
        loop {
            let construct = self.constructs.contains(&lab);
            let saved = self.frames.len();
            self.active.insert(lab, (saved, construct));
            if construct {
                self.frames.push(Frame {
                    exit: Some(lab),
                    cont: None,
                    escapes: Vec::new(),
                    switch: false,
                });
            }
            let r = self.node(body, &inner_tail);
            self.active.remove(&lab);
            if !construct {
                match r {
                    Err(Fail::Retry(x)) if x == lab => {
                        self.frames.truncate(saved);
                        self.constructs.insert(lab);
                        continue;
                    }
                    r => return r,
                }
            }
            let frame = self.pop(saved);
            let b = r?;
            self.block_loops += 1;
            let checks = self.dispatch(frame.escapes, &[])?;
            return Ok(then_checks(
                Node::Loop(Box::new(seq(vec![b, Node::Break]))),
                checks,
            ));
        }
    }

    /// Pops frames down to `saved`, returning the one pushed at `saved`.
    fn pop(&mut self, saved: usize) -> Frame {
        self.frames.truncate(saved + 1);
        self.frames.pop().expect("frame")
    }

    fn branch(&mut self, lab: BlockId, back: bool, tail: &[BlockId]) -> Result<Node, Fail> {
        if !back && tail.contains(&lab) {
            return Ok(Node::Seq(Vec::new()));
        }
        let depth = self.frames.len();
        if let Some(fr) = self.frames.last() {
            if back && fr.cont == Some(lab) {
                return Ok(Node::Continue);
            }
            if !back && fr.exit == Some(lab) {
                return Ok(Node::Break);
            }
        }
        if !back {
            // From inside switches, leaving the loop around them directly.
            let mut i = depth;
            while i > 0 && self.frames[i - 1].switch {
                i -= 1;
            }
            if i < depth && i > 0 && self.frames[i - 1].exit == Some(lab) {
                return Ok(Node::BreakLoop);
            }
            match self.active.get(&lab) {
                None => return Err(Fail::Bad(lab)),
                Some(&(d, false)) if d == depth => return Err(Fail::Retry(lab)),
                _ => {}
            }
        }
        let Some(fr) = self.frames.last_mut() else {
            return Err(Fail::Bad(lab));
        };
        if !fr.escapes.contains(&(lab, back)) {
            fr.escapes.push((lab, back));
        }
        self.gotos += 1;
        Ok(Node::Seq(vec![
            Node::SetGoto(goto_id(lab, back)),
            Node::Break,
        ]))
    }

    /// The checks after a construct that branches left through.
    fn dispatch(
        &mut self,
        escapes: Vec<(BlockId, bool)>,
        tail: &[BlockId],
    ) -> Result<Vec<Node>, Fail> {
        let mut out = Vec::with_capacity(escapes.len());
        for (lab, back) in escapes {
            let id = goto_id(lab, back);
            let again = self.branch(lab, back, tail)?;
            let body = match again {
                Node::Seq(ref v) if v.first() == Some(&Node::SetGoto(id)) => again,
                x => seq(vec![Node::SetGoto(0), x]),
            };
            out.push(Node::If(
                Cond::Goto(id),
                Box::new(body),
                Box::new(Node::Seq(Vec::new())),
            ));
        }
        Ok(out)
    }
}
