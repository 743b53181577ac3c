//! Block-local SSA for guest state: a read of a register, predicate or flag that the same
//! block already read or wrote becomes that value, and a write that a later write in the
//! same block overwrites is removed. (The local half of Braun et al.'s on-the-fly SSA
//! construction.) The `ssa` pass runs it for functions that keep guest state in variables
//! across blocks (a `Dynamic` jump is left); for the others it does the local half itself,
//! in the same walk as the global half.

use crate::ir::{Function, Op, Value};

/// A state slot: R0–R255 are 0–255, predicates 256–511, the flags 512–515.
pub(crate) const SLOTS: usize = crate::ir::STATE_SLOTS;

/// The state slot a guest-state access names, and whether it writes it.
pub(crate) fn slot_of(op: &Op) -> Option<(usize, bool)> {
    match *op {
        Op::Get(r) => Some((r.slot(), false)),
        Op::Set(r) => Some((r.slot(), true)),
        _ => None,
    }
}

/// Runs the pass.
pub fn run(f: &mut Function) {
    let mut alias = vec![Value::NONE; f.insts.len()];
    // Per slot: (block stamp, value known) and (block stamp, index of the last write in
    // `keep`); a stale stamp means "nothing yet in this block" (no clearing per block).
    let mut known = [(u32::MAX, Value::NONE); SLOTS];
    let mut last_write = [(u32::MAX, 0u32); SLOTS];
    let mut keep: Vec<Value> =
        Vec::with_capacity(f.blocks.iter().map(|b| b.insts.len()).max().unwrap_or(0));
    for b in 0..f.blocks.len() {
        let stamp = b as u32;
        let mut insts = std::mem::take(&mut f.blocks[b].insts);
        keep.clear();
        let mut removed = false;
        for &v in &insts {
            // Rewrite the arguments now (their definitions came earlier in this block).
            let inst = &mut f.insts[v.index()];
            for a in inst.args.iter_mut() {
                while a.is_some() && alias[a.index()].is_some() {
                    *a = alias[a.index()];
                }
            }
            let inst = &f.insts[v.index()];
            match slot_of(&inst.op) {
                Some((s, false)) => {
                    if known[s].0 == stamp {
                        alias[v.index()] = known[s].1;
                        removed = true;
                        continue;
                    }
                    known[s] = (stamp, v);
                    keep.push(v);
                }
                Some((s, true)) => {
                    known[s] = (stamp, inst.args[0]);
                    if last_write[s].0 == stamp {
                        keep[last_write[s].1 as usize] = Value::NONE;
                        removed = true;
                    }
                    last_write[s] = (stamp, keep.len() as u32);
                    keep.push(v);
                }
                None => keep.push(v),
            }
        }
        if removed {
            insts.clear();
            insts.extend(keep.iter().copied().filter(|v| v.is_some()));
        }
        f.blocks[b].insts = insts;
    }
    super::apply_aliases_to_terminators(f, &alias);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Reg;
    use crate::ir::{Terminator, Type};

    #[test]
    fn forwards_reads_and_drops_dead_writes() {
        let (mut f, [b]) = Function::with_blocks([0]);
        let r0 = f.push(b, Op::Get(Reg::gpr(0)), Type::U32, &[]);
        let r0b = f.push(b, Op::Get(Reg::gpr(0)), Type::U32, &[]);
        let s = f.push(b, Op::IAdd, Type::U32, &[r0, r0b]);
        f.push(b, Op::Set(Reg::gpr(1)), Type::Void, &[s]);
        let r1 = f.push(b, Op::Get(Reg::gpr(1)), Type::U32, &[]);
        f.push(b, Op::Set(Reg::gpr(1)), Type::Void, &[r1]);
        f.blocks[0].term = Terminator::Exit;
        run(&mut f);
        let ops: Vec<Op> = f.blocks[0].insts.iter().map(|&v| f.inst(v).op).collect();
        assert_eq!(
            ops,
            vec![Op::Get(Reg::gpr(0)), Op::IAdd, Op::Set(Reg::gpr(1))]
        );
        let add = f.inst(f.blocks[0].insts[1]);
        assert_eq!(add.args[0], add.args[1]);
        let set = f.inst(f.blocks[0].insts[2]);
        assert_eq!(set.args[0], s);
    }
}
