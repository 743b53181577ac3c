//! Emission of a structured tree ([`dmsh_ir::structure`]) as SPIR-V structured control
//! flow: `If` is a selection construct (`OpSelectionMerge` + `OpBranchConditional`),
//! `Switch` a selection construct with `OpSwitch`, `Loop` a loop construct (`OpLoopMerge`,
//! a continue block that branches back to the header). `Break` branches to the innermost
//! loop's or switch's merge block, `Continue` to the innermost loop's continue block. Every
//! construct gets fresh merge blocks; a merge block nothing reaches ends in
//! `OpUnreachable`. The goto variable of goto elimination is a `Function` variable.

use super::{berr, E};
use crate::Error;
use dmsh_ir::structure::{Cond, Node, Structured};
use dmsh_ir::{Function, Shader, Type};
use rspirv::dr::Operand;
use rspirv::spirv::{self, Word};

/// A construct `Break`/`Continue` can reach.
struct Frame {
    /// Merge block (`Break`).
    merge: Word,
    /// Continue block, for loops (`None` for a switch).
    cont: Option<Word>,
    /// Whether anything branched to the merge block.
    broken: bool,
}

struct S<'a> {
    sh: &'a Shader,
    f: &'a Function,
    frames: Vec<Frame>,
    goto_var: Option<Word>,
    /// Whether a block is open (control falls through to what comes next).
    open: bool,
}

/// Emits the tree into the current block of `e` (the function's entry block, open).
pub(super) fn emit_tree(e: &mut E, sh: &Shader, f: &Function, t: &Structured) -> Result<(), Error> {
    let mut s = S {
        sh,
        f,
        frames: Vec::new(),
        goto_var: None,
        open: true,
    };
    s.node(e, &t.root)?;
    if s.open {
        berr(e.b.ret())?;
    }
    Ok(())
}

impl S<'_> {
    /// Branches to the merge block of the innermost construct (`of_loop`: the innermost
    /// loop), marking it broken.
    fn break_to(&mut self, e: &mut E, of_loop: bool) -> Result<(), Error> {
        let fr = self
            .frames
            .iter_mut()
            .rev()
            .find(|f| !of_loop || f.cont.is_some())
            .ok_or_else(|| {
                let what = if of_loop { "loop" } else { "construct" };
                Error::Unsupported(format!("structured: break outside a {what}"))
            })?;
        fr.broken = true;
        let m = fr.merge;
        self.branch(e, m)
    }

    fn goto_var(&mut self, e: &mut E) -> Word {
        *self.goto_var.get_or_insert_with(|| e.zero_u32_var())
    }

    /// Closes the open block with a branch to `to`.
    fn branch(&mut self, e: &mut E, to: Word) -> Result<(), Error> {
        berr(e.b.branch(to))?;
        self.open = false;
        Ok(())
    }

    /// Starts block `l`; `reachable` says whether anything branches to it.
    fn begin(&mut self, e: &mut E, l: Word, reachable: bool) -> Result<(), Error> {
        berr(e.b.begin_block(Some(l)))?;
        self.open = true;
        if !reachable {
            berr(e.b.unreachable())?;
            self.open = false;
        }
        Ok(())
    }

    fn node(&mut self, e: &mut E, n: &Node) -> Result<(), Error> {
        if !self.open {
            return Ok(());
        }
        match n {
            Node::Block(b) => e.ir_block(self.sh, self.f, *b)?,
            Node::Seq(v) => {
                for x in v {
                    if !self.open {
                        break;
                    }
                    self.node(e, x)?;
                }
            }
            Node::If(_, t, el) if t.is_empty() && el.is_empty() => {}
            Node::If(c, t, el) => {
                let cond = match c {
                    Cond::Value(v) => e.val(*v),
                    Cond::Goto(k) => {
                        let var = self.goto_var(e);
                        let g = e.load(Type::U32, var);
                        let k = e.u32c(*k);
                        let bo = e.ty(Type::Bool);
                        e.op(spirv::Op::IEqual, bo, &[g, k])
                    }
                };
                let merge = e.b.id();
                let tl = if t.is_empty() { merge } else { e.b.id() };
                let el_l = if el.is_empty() { merge } else { e.b.id() };
                berr(e.b.selection_merge(merge, spirv::SelectionControl::NONE))?;
                berr(e.b.branch_conditional(cond, tl, el_l, []))?;
                self.open = false;
                let mut reach = tl == merge || el_l == merge;
                for (l, body) in [(tl, t), (el_l, el)] {
                    if l == merge {
                        continue;
                    }
                    self.begin(e, l, true)?;
                    self.node(e, body)?;
                    if self.open {
                        self.branch(e, merge)?;
                        reach = true;
                    }
                }
                self.begin(e, merge, reach)?;
            }
            Node::Switch(v, arms, def) => {
                let sel = e.val(*v);
                let merge = e.b.id();
                let def_l = if def.is_empty() { merge } else { e.b.id() };
                let labels: Vec<Word> = arms.iter().map(|_| e.b.id()).collect();
                let mut targets = Vec::new();
                for ((ks, _), &l) in arms.iter().zip(&labels) {
                    for &k in ks {
                        targets.push((Operand::LiteralBit32(k), l));
                    }
                }
                berr(e.b.selection_merge(merge, spirv::SelectionControl::NONE))?;
                berr(e.b.switch(sel, def_l, targets))?;
                self.open = false;
                self.frames.push(Frame {
                    merge,
                    cont: None,
                    broken: def_l == merge,
                });
                let mut bodies: Vec<(Word, &Node)> = labels
                    .iter()
                    .copied()
                    .zip(arms.iter().map(|a| &a.1))
                    .collect();
                if def_l != merge {
                    bodies.push((def_l, def));
                }
                for (l, body) in bodies {
                    self.begin(e, l, true)?;
                    self.node(e, body)?;
                    if self.open {
                        self.branch(e, merge)?;
                        self.frames.last_mut().expect("switch").broken = true;
                    }
                }
                let fr = self.frames.pop().expect("switch");
                self.begin(e, merge, fr.broken)?;
            }
            Node::Loop(body) => {
                let head = e.b.id();
                let body_l = e.b.id();
                let cont = e.b.id();
                let merge = e.b.id();
                self.branch(e, head)?;
                berr(e.b.begin_block(Some(head)))?;
                berr(e.b.loop_merge(merge, cont, spirv::LoopControl::NONE, []))?;
                berr(e.b.branch(body_l))?;
                self.begin(e, body_l, true)?;
                self.frames.push(Frame {
                    merge,
                    cont: Some(cont),
                    broken: false,
                });
                self.node(e, body)?;
                if self.open {
                    self.branch(e, cont)?;
                }
                let fr = self.frames.pop().expect("loop");
                berr(e.b.begin_block(Some(cont)))?;
                berr(e.b.branch(head))?;
                self.begin(e, merge, fr.broken)?;
            }
            Node::Break => self.break_to(e, false)?,
            Node::BreakLoop => self.break_to(e, true)?,
            Node::Continue => {
                let c = self
                    .frames
                    .iter()
                    .rev()
                    .find_map(|f| f.cont)
                    .ok_or_else(|| {
                        Error::Unsupported("structured: continue outside a loop".into())
                    })?;
                self.branch(e, c)?;
            }
            Node::SetGoto(k) => {
                let var = self.goto_var(e);
                let k = e.u32c(*k);
                e.store(var, k);
            }
            Node::Exit | Node::Kill => {
                if matches!(n, Node::Kill) && self.sh.stage == dmsh_ir::Stage::Fragment {
                    e.demote();
                }
                berr(e.b.ret())?;
                self.open = false;
            }
        }
        Ok(())
    }
}
