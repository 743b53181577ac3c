//! Dead code elimination: removes instructions whose value nothing uses and that have no
//! effect, over the whole function — phis included (a phi is live only when a live
//! instruction, terminator or live phi uses it), so a value kept alive only by a loop's phi
//! cycle goes. Guest-state writes are gone after the `ssa` pass; where guest state stays in
//! variables (`Function::ssa` false) they are effects and stay.

use crate::ir::{Function, Op, Terminator};

/// Runs the pass.
pub fn run(f: &mut Function) {
    // The last pass: the block order and dominators the earlier ones shared go.
    f.doms = None;
    let mut live = vec![false; f.insts.len()];
    let mut work = Vec::with_capacity(f.insts.len());
    for b in &f.blocks {
        for &v in &b.insts {
            if f.insts[v.index()].op.has_side_effects() {
                live[v.index()] = true;
                work.push(v);
            }
        }
        match &b.term {
            Terminator::Branch(c, _, _) | Terminator::Dynamic(c) | Terminator::Switch(c, _, _)
                if !live[c.index()] =>
            {
                live[c.index()] = true;
                work.push(*c);
            }
            _ => {}
        }
    }
    while let Some(v) = work.pop() {
        let inst = &f.insts[v.index()];
        for &a in &inst.args {
            if a.is_none() {
                break;
            }
            if !live[a.index()] {
                live[a.index()] = true;
                work.push(a);
            }
        }
        if let Op::Phi(k) = inst.op {
            for &(_, a) in &f.phi_in[k as usize] {
                if !live[a.index()] {
                    live[a.index()] = true;
                    work.push(a);
                }
            }
        }
    }
    for b in &mut f.blocks {
        b.insts.retain(|v| live[v.index()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Reg;
    use crate::ir::Type;

    #[test]
    fn removes_unused_pure_values() {
        let (mut f, [b]) = Function::with_blocks([0]);
        let a = f.push(b, Op::Const(1), Type::U32, &[]);
        let c = f.push(b, Op::Const(2), Type::U32, &[]);
        let _dead = f.push(b, Op::IAdd, Type::U32, &[a, c]);
        f.push(b, Op::Set(Reg::gpr(0)), Type::Void, &[a]);
        f.blocks[0].term = Terminator::Exit;
        run(&mut f);
        assert_eq!(f.blocks[0].insts.len(), 2);
    }
}
