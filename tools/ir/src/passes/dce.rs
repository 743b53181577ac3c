//! Dead code elimination: removes instructions whose value nothing uses and that have no
//! effect, over the whole function — phis included (a phi is live only when a live
//! instruction, terminator or live phi uses it), so a value kept alive only by a loop's phi
//! cycle goes. Guest-state writes are gone after the `ssa` pass; where guest state stays in
//! variables (`Function::ssa` false) they are effects and stay.

use crate::ir::{Function, Op, Terminator};

/// Runs the pass.
pub fn run(f: &mut Function) {
    // The last pass: the block order and dominators the earlier ones shared go (their
    // order is the reverse postorder, taken over when there, with whether it is forward).
    let (order, forward) = match f.doms.take() {
        Some(doms) => (doms.order, doms.forward),
        None => {
            let order: Vec<u32> = super::rpo(f).into_iter().map(|b| b.0).collect();
            let forward = super::forward_only(f, &order);
            (order, forward)
        }
    };
    let mut live = vec![false; f.insts.len()];
    if forward {
        sweep(f, &order, &mut live);
    } else {
        mark(f, &mut live);
        for b in &mut f.blocks {
            b.insts.retain(|v| live[v.index()]);
        }
    }
}

/// Marks the live values by a worklist from the effects and the terminators' values (any
/// control flow).
fn mark(f: &Function, live: &mut [bool]) {
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
}

/// Marks and removes in one sweep backwards through `order` (every edge forward in it, see
/// [`super::forward_only`]): every use of a value, phi operands included, comes before its
/// definition backwards, so a value is known live or dead when the sweep reaches it. The
/// same values stay as with [`mark`].
fn sweep(f: &mut Function, order: &[u32], live: &mut [bool]) {
    for &b in order.iter().rev() {
        let blk = &mut f.blocks[b as usize];
        if let Terminator::Branch(c, _, _) | Terminator::Dynamic(c) | Terminator::Switch(c, _, _) =
            &blk.term
        {
            live[c.index()] = true;
        }
        // Compacted backwards in place: `insts[w..]` are the values kept so far.
        let mut insts = std::mem::take(&mut blk.insts);
        let mut w = insts.len();
        for r in (0..insts.len()).rev() {
            let v = insts[r];
            let inst = &f.insts[v.index()];
            if !live[v.index()] && !inst.op.has_side_effects() {
                continue;
            }
            for &a in &inst.args {
                if a.is_none() {
                    break;
                }
                live[a.index()] = true;
            }
            if let Op::Phi(k) = inst.op {
                for &(_, a) in &f.phi_in[k as usize] {
                    live[a.index()] = true;
                }
            }
            w -= 1;
            insts[w] = v;
        }
        insts.drain(..w);
        f.blocks[b as usize].insts = insts;
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

    #[test]
    fn the_sweep_keeps_what_the_worklist_keeps() {
        // b0 → {b1, b2} → b3: a phi kept by a store, a phi nothing uses, values only the
        // dead phi or a dead value uses, and a branch condition.
        let (mut f, [b0, b1, b2, b3]) = Function::with_blocks([0, 1, 2, 3]);
        f.ssa = true;
        let k = f.push(b0, Op::Const(4), Type::U32, &[]);
        let one = f.push(b0, Op::Const(1), Type::U32, &[]);
        let c = f.push(b0, Op::IEq, Type::Bool, &[k, one]);
        f.blocks[0].term = Terminator::Branch(c, b1, b2);
        let x1 = f.push(b1, Op::IAdd, Type::U32, &[k, one]);
        let d1 = f.push(b1, Op::IMul, Type::U32, &[x1, k]);
        f.blocks[1].term = Terminator::Jump(b3);
        let x2 = f.push(b2, Op::Shl, Type::U32, &[k, one]);
        let d2 = f.push(b2, Op::Not, Type::U32, &[d1]);
        f.blocks[2].term = Terminator::Jump(b3);
        let p = f.make_phi(Type::U32);
        let q = f.make_phi(Type::U32);
        f.blocks[3].insts.extend([p, q]);
        *f.phi_args_mut(p).unwrap() = vec![(b1, x1), (b2, x2)];
        *f.phi_args_mut(q).unwrap() = vec![(b1, d1), (b2, d2)];
        f.push(b3, Op::Set(Reg::gpr(0)), Type::Void, &[p]);
        f.blocks[3].term = Terminator::Exit;
        let mut swept = f.clone();
        let order: Vec<u32> = crate::passes::rpo(&f).into_iter().map(|b| b.0).collect();
        assert!(crate::passes::forward_only(&f, &order));
        let mut live = vec![false; f.insts.len()];
        sweep(&mut swept, &order, &mut live);
        let mut live = vec![false; f.insts.len()];
        mark(&f, &mut live);
        for b in &mut f.blocks {
            b.insts.retain(|v| live[v.index()]);
        }
        assert_eq!(swept.to_string(), f.to_string());
        assert!(!swept.blocks[3].insts.contains(&q));
        assert!(swept.blocks[3].insts.contains(&p));
    }
}
