//! Block-local SSA for guest state: a read of a register, predicate or flag that the same
//! block already read or wrote becomes that value, and a write that a later write in the
//! same block overwrites is removed. (The local half of Braun et al.'s on-the-fly SSA
//! construction; across blocks guest state stays in variables, see the crate docs.)

use crate::ir::{Function, Op, Value};
use std::collections::HashMap;

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Slot {
    Reg(u8),
    Pred(u8),
    Flag(u8),
}

fn slot_of(op: &Op) -> Option<(Slot, bool)> {
    match *op {
        Op::GetReg(n) => Some((Slot::Reg(n), false)),
        Op::SetReg(n) => Some((Slot::Reg(n), true)),
        Op::GetPred(n) => Some((Slot::Pred(n), false)),
        Op::SetPred(n) => Some((Slot::Pred(n), true)),
        Op::GetFlag(fl) => Some((Slot::Flag(fl as u8), false)),
        Op::SetFlag(fl) => Some((Slot::Flag(fl as u8), true)),
        _ => None,
    }
}

/// Runs the pass.
pub fn run(f: &mut Function) {
    let mut alias = vec![Value::NONE; f.insts.len()];
    let mut known: HashMap<Slot, Value> = HashMap::new();
    let mut last_write: HashMap<Slot, usize> = HashMap::new();
    for b in 0..f.blocks.len() {
        known.clear();
        last_write.clear();
        let insts = std::mem::take(&mut f.blocks[b].insts);
        let mut keep: Vec<Option<Value>> = Vec::with_capacity(insts.len());
        for v in insts {
            let inst = f.insts[v.index()];
            match slot_of(&inst.op) {
                Some((s, false)) => {
                    if let Some(&k) = known.get(&s) {
                        alias[v.index()] = k;
                        keep.push(None);
                        continue;
                    }
                    known.insert(s, v);
                    keep.push(Some(v));
                }
                Some((s, true)) => {
                    let mut src = inst.args[0];
                    while alias[src.index()].is_some() {
                        src = alias[src.index()];
                    }
                    known.insert(s, src);
                    if let Some(prev) = last_write.insert(s, keep.len()) {
                        keep[prev] = None;
                    }
                    keep.push(Some(v));
                }
                None => keep.push(Some(v)),
            }
        }
        f.blocks[b].insts = keep.into_iter().flatten().collect();
    }
    super::apply_aliases(f, &alias);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Terminator, Type};

    #[test]
    fn forwards_reads_and_drops_dead_writes() {
        let mut f = Function::new();
        let b = f.add_block(Some(0));
        let r0 = f.push(b, Op::GetReg(0), Type::U32, &[]);
        let r0b = f.push(b, Op::GetReg(0), Type::U32, &[]);
        let s = f.push(b, Op::IAdd, Type::U32, &[r0, r0b]);
        f.push(b, Op::SetReg(1), Type::Void, &[s]);
        let r1 = f.push(b, Op::GetReg(1), Type::U32, &[]);
        f.push(b, Op::SetReg(1), Type::Void, &[r1]);
        f.blocks[0].term = Terminator::Exit;
        run(&mut f);
        let ops: Vec<Op> = f.blocks[0].insts.iter().map(|&v| f.inst(v).op).collect();
        assert_eq!(ops, vec![Op::GetReg(0), Op::IAdd, Op::SetReg(1)]);
        let add = f.inst(f.blocks[0].insts[1]);
        assert_eq!(add.args[0], add.args[1]);
        let set = f.inst(f.blocks[0].insts[2]);
        assert_eq!(set.args[0], s);
    }
}
