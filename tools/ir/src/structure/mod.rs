//! Static, structured control flow.
//!
//! Maxwell code reaches the IR as a graph whose reconvergence (`SSY`/`SYNC`, `PBK`/`BRK`,
//! `PCNT`/`CONT`) and calls (`CAL`/`RET`) go through a run-time stack, with `BRX`
//! computing its target. SPIR-V wants structured control flow (selection and loop
//! constructs with merge blocks), which SPIRV-Cross turns into readable, fast Metal and which
//! keeps barriers in uniform control flow. This module gets there in steps, one module each:
//!
//! 1. [`stack`] (a pass in [`crate::passes::PASSES`]): the stack's contents are known
//!    statically, so pushes and pops disappear, pops become static jumps, subroutines are
//!    copied per call site and `BRX` through a known jump table becomes a `Switch`.
//! 2. [`split`] (a pass): node splitting makes an irreducible graph reducible (bounded).
//! 3. [`cfg`]: reverse postorder, dominators, natural loops; an irreducible graph is refused.
//! 4. [`nest`]: the dominator tree becomes labeled scopes, loops and branches to labels
//!    (Ramsey's "Beyond Relooper").
//! 5. [`lower`]: labels become SPIR-V-shaped constructs — fall-through, `break`, `continue`,
//!    one-iteration loops for scopes left early, and a goto variable for branches that leave
//!    several constructs (Erosa and Hendren's outward movement, as in yuzu and Ryujinx).
//!
//! [`structurize`] runs steps 3–5 and returns a [`Structured`] tree; a back end falls back
//! to a dispatcher loop when it fails (a `Dynamic` jump is left, or the graph is
//! irreducible).

pub mod cfg;
pub mod lower;
pub mod nest;
pub mod split;
pub mod stack;
pub mod tree;

pub use tree::{Cond, Node, Structured};

use crate::ir::{BlockId, Function};

/// Why a function could not be structured.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A block still ends in a run-time computed jump.
    #[error("block b{} ends in a dynamic jump", .0 .0)]
    Dynamic(BlockId),
    /// The graph is irreducible: the retreating edge.
    #[error("irreducible control flow: edge b{} -> b{}", .0 .0, .1 .0)]
    Irreducible(BlockId, BlockId),
    /// A branch to a label out of scope (a structurizer bug).
    #[error("structurizer: label b{} out of scope", .0 .0)]
    Label(BlockId),
    /// The function is too large for the recursive steps.
    #[error("too many blocks to structure ({0})")]
    TooLarge(usize),
}

/// Most blocks structured (the steps recurse over the dominator tree).
pub const MAX_BLOCKS: usize = 20_000;

/// Structures `f`'s control flow (blocks unreachable from the entry are left out).
pub fn structurize(f: &Function) -> Result<Structured, Error> {
    let n = f.blocks.len();
    if n == 0 {
        return Ok(Structured {
            root: Node::Exit,
            gotos: 0,
            block_loops: 0,
        });
    }
    if n > MAX_BLOCKS {
        return Err(Error::TooLarge(n));
    }
    if n <= SMALL {
        return structurize_here(f);
    }
    // The steps recurse as deep as the dominator tree: give big functions a stack to match
    // (reserved, not committed, until used).
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size((1 << 20) + n * STACK_PER_BLOCK)
            .spawn_scoped(s, || structurize_here(f))
            .map_err(|_| Error::TooLarge(n))?
            .join()
            .unwrap_or(Err(Error::TooLarge(n)))
    })
}

/// Functions up to this many blocks are structured on the caller's stack.
const SMALL: usize = 256;
/// Stack bytes reserved per block for bigger functions.
const STACK_PER_BLOCK: usize = 32 << 10;

fn structurize_here(f: &Function) -> Result<Structured, Error> {
    let cfg = cfg::Cfg::new(f).map_err(|cfg::Irreducible::Edge(a, b)| Error::Irreducible(a, b))?;
    let n = nest::nest(f, &cfg)?;
    lower::lower(&n)
}

#[cfg(test)]
mod tests;
