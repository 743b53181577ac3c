//! The structured tree: what the structurizer produces and a back end emits. Every
//! construct maps one-to-one onto SPIR-V's structured control flow.

use crate::ir::{BlockId, Function, Value};
use std::fmt::{self, Write};

/// The condition of an [`Node::If`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    /// An IR Bool value (defined by the code just before the `If`).
    Value(Value),
    /// Whether the goto variable holds this label number.
    Goto(u32),
}

/// A structured statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// The instructions of an IR block (its terminator is expressed by the tree).
    Block(BlockId),
    /// Statements in order.
    Seq(Vec<Node>),
    /// A selection: `if cond { then } else { else }`, merging after it.
    If(Cond, Box<Node>, Box<Node>),
    /// A multi-way selection on a U32 value: arms with their case values, then the default.
    /// `Break` inside an arm leaves the switch.
    Switch(Value, Vec<(Vec<u32>, Node)>, Box<Node>),
    /// A loop: the body repeats; reaching its end continues; `Break` leaves it.
    Loop(Box<Node>),
    /// Leave the innermost `Loop` or `Switch`.
    Break,
    /// Leave the innermost `Loop`, from inside one or more `Switch`es in it.
    BreakLoop,
    /// Go to the next iteration of the innermost `Loop`.
    Continue,
    /// Set the goto variable (0 clears it) — the flag of goto elimination, used where a
    /// branch leaves more than one construct.
    SetGoto(u32),
    /// End the invocation.
    Exit,
    /// Discard the invocation.
    Kill,
}

/// A structured function body.
#[derive(Clone, Debug, PartialEq)]
pub struct Structured {
    /// The body.
    pub root: Node,
    /// Number of branches that leave several constructs through the goto variable.
    pub gotos: usize,
    /// Number of blocks wrapped in a one-iteration loop so that a forward branch could
    /// leave them.
    pub block_loops: usize,
}

impl Node {
    /// Whether the node does nothing.
    pub fn is_empty(&self) -> bool {
        matches!(self, Node::Seq(v) if v.iter().all(Node::is_empty))
    }

    /// Pretty text, one statement a line, for tests and debugging; blocks print as `bN`
    /// (with `f`, the number of instructions too).
    pub fn text(&self, f: Option<&Function>) -> String {
        let mut s = String::new();
        self.write(&mut s, 0, f).expect("string");
        s
    }

    fn write(&self, s: &mut String, d: usize, f: Option<&Function>) -> fmt::Result {
        let pad = "  ".repeat(d);
        match self {
            Node::Block(b) => match f {
                Some(f) => writeln!(
                    s,
                    "{pad}b{} ({} insts)",
                    b.0,
                    f.blocks[b.index()].insts.len()
                ),
                None => writeln!(s, "{pad}b{}", b.0),
            },
            Node::Seq(v) => {
                for n in v {
                    n.write(s, d, f)?;
                }
                Ok(())
            }
            Node::If(c, t, e) => {
                match c {
                    Cond::Value(v) => writeln!(s, "{pad}if {v} {{")?,
                    Cond::Goto(k) => writeln!(s, "{pad}if goto == {k} {{")?,
                }
                t.write(s, d + 1, f)?;
                if !e.is_empty() {
                    writeln!(s, "{pad}}} else {{")?;
                    e.write(s, d + 1, f)?;
                }
                writeln!(s, "{pad}}}")
            }
            Node::Switch(v, arms, def) => {
                writeln!(s, "{pad}switch {v} {{")?;
                for (ks, n) in arms {
                    writeln!(s, "{pad}case {ks:x?}:")?;
                    n.write(s, d + 1, f)?;
                }
                writeln!(s, "{pad}default:")?;
                def.write(s, d + 1, f)?;
                writeln!(s, "{pad}}}")
            }
            Node::Loop(b) => {
                writeln!(s, "{pad}loop {{")?;
                b.write(s, d + 1, f)?;
                writeln!(s, "{pad}}}")
            }
            Node::Break => writeln!(s, "{pad}break"),
            Node::BreakLoop => writeln!(s, "{pad}break loop"),
            Node::Continue => writeln!(s, "{pad}continue"),
            Node::SetGoto(k) => writeln!(s, "{pad}goto = {k}"),
            Node::Exit => writeln!(s, "{pad}exit"),
            Node::Kill => writeln!(s, "{pad}kill"),
        }
    }
}
