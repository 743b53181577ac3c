//! Passes over a [`Function`], run in the order [`PASSES`] lists them.
//!
//! Each pass is its own module, takes `&mut Function` and keeps it valid: every value used in
//! a block is defined earlier in the same block (guest state crosses blocks only through
//! `GetReg`/`SetReg` and friends).

use crate::ir::Function;

pub mod const_fold;
pub mod dce;
pub mod local_state;
pub mod sbuf;

/// One pass: a name (for reports and timing) and the function that runs it.
pub type Pass = (&'static str, fn(&mut Function));

/// The passes, in the order they run.
pub const PASSES: &[Pass] = &[
    ("static_stack", crate::structure::stack::run),
    ("split_irreducible", crate::structure::split::run),
    ("local_state", local_state::run),
    ("const_fold", const_fold::run),
    ("sbuf", sbuf::run),
    ("dce", dce::run),
];

/// Runs every pass of [`PASSES`] once, in order.
pub fn run_all(f: &mut Function) {
    for (_, pass) in PASSES {
        pass(f);
    }
}

/// Rewrites the terminators' values through `alias` (for passes that already rewrote the
/// arguments of every instruction as they went: values never cross blocks, so a use always
/// comes after its definition in the same block).
pub(crate) fn apply_aliases_to_terminators(f: &mut Function, alias: &[crate::ir::Value]) {
    use crate::ir::{Terminator, Value};
    let resolve = |mut v: Value| {
        while v.is_some() && alias[v.index()].is_some() {
            v = alias[v.index()];
        }
        v
    };
    for b in &mut f.blocks {
        match &mut b.term {
            Terminator::Branch(c, _, _) => *c = resolve(*c),
            Terminator::Dynamic(c) | Terminator::Switch(c, _, _) => *c = resolve(*c),
            _ => {}
        }
    }
}

/// Rewrites every argument through `alias` (a value → replacement map, possibly chained).
#[allow(dead_code)]
pub(crate) fn apply_aliases(f: &mut Function, alias: &[crate::ir::Value]) {
    use crate::ir::{Terminator, Value};
    let resolve = |mut v: Value| {
        while v.is_some() && alias[v.index()].is_some() {
            v = alias[v.index()];
        }
        v
    };
    for b in 0..f.blocks.len() {
        for i in 0..f.blocks[b].insts.len() {
            let v = f.blocks[b].insts[i];
            let inst = &mut f.insts[v.index()];
            for a in inst.args.iter_mut() {
                if a.is_some() {
                    *a = resolve(*a);
                }
            }
        }
        match &mut f.blocks[b].term {
            Terminator::Branch(c, _, _) => *c = resolve(*c),
            Terminator::Dynamic(c) | Terminator::Switch(c, _, _) => *c = resolve(*c),
            _ => {}
        }
    }
}
