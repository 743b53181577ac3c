//! Global SSA for guest state: after `local_state`, a block reads each register, predicate
//! or flag at most once before writing it and writes it at most once. This pass gives each
//! such read the value reaching the block's entry — the last write in a dominating block, or
//! a phi where definitions meet — and removes every `GetReg`/`SetReg`, `GetPred`/`SetPred`
//! and `GetFlag`/`SetFlag`, so values cross blocks and guest state needs no variables.
//!
//! The construction is the global half of Braun et al.'s "Simple and Efficient Construction
//! of Static Single Assignment Form" (CC 2013) with every block sealed from the start (the
//! whole graph is known): the value at a block's entry is the value at the end of its single
//! predecessor, or a phi (created before its operands, which breaks cycles) over the values
//! at the ends of its predecessors; a phi whose operands are all one value (or itself) is
//! trivial and replaced by that value, and phis that used it are looked at again. Values are
//! memoised per (block, state slot), the recursion runs on an explicit stack, so the pass is
//! linear in blocks × slots used plus phi operands. State read before any write is 0 (the
//! value the variables of the non-SSA scheme start with).
//!
//! Functions with a `Dynamic` jump left (targets unknown) keep guest state in variables
//! (`Function::ssa` stays false), as do functions whose block × slot table would pass
//! [`MAX_TABLE`] entries. An entry block that is also a branch target first moves behind a
//! new empty entry block, so the entry has no predecessors.

use crate::ir::{BlockId, Function, Op, Terminator, Type, Value};

/// Most (blocks × state slots used) entries the pass builds tables for.
pub const MAX_TABLE: usize = 1 << 22;

/// A state slot: R0–R255 are 0–255, predicates 256–511, the flags 512–515.
const SLOTS: usize = 516;

fn slot_of(op: &Op) -> Option<(usize, bool)> {
    match *op {
        Op::GetReg(n) => Some((n as usize, false)),
        Op::SetReg(n) => Some((n as usize, true)),
        Op::GetPred(n) => Some((256 + n as usize, false)),
        Op::SetPred(n) => Some((256 + n as usize, true)),
        Op::GetFlag(fl) => Some((512 + fl as usize, false)),
        Op::SetFlag(fl) => Some((512 + fl as usize, true)),
        _ => None,
    }
}

/// Marks a (block, slot) whose single-predecessor chain is being followed.
const BUSY: Value = Value(u32::MAX - 1);

struct Builder {
    /// Number of slots used (table width).
    k: usize,
    /// Slot type per dense slot.
    ty: Vec<Type>,
    /// Distinct predecessors of block b: `plist[pstart[b]..pstart[b + 1]]`.
    pstart: Vec<u32>,
    plist: Vec<BlockId>,
    /// Value of the last write per (block, dense slot), or NONE.
    last: Vec<Value>,
    /// Value at the entry per (block, dense slot), or NONE when not computed yet.
    entry: Vec<Value>,
    /// Replacement of removed reads and trivial phis.
    alias: Vec<Value>,
    /// Phis made, with their block.
    phis: Vec<(Value, BlockId)>,
    /// The zero constants (U32, Bool), made on first use.
    zero: [Value; 2],
    /// Frames of `read_entry`: (block, phi or NONE for a single-predecessor block, next
    /// predecessor).
    stack: Vec<(BlockId, Value, usize)>,
}

impl Builder {
    fn preds(&self, b: BlockId) -> &[BlockId] {
        &self.plist[self.pstart[b.index()] as usize..self.pstart[b.index() + 1] as usize]
    }

    fn resolve(&self, mut v: Value) -> Value {
        while v.is_some() && v.index() < self.alias.len() && self.alias[v.index()].is_some() {
            v = self.alias[v.index()];
        }
        v
    }

    /// The zero of type `t` (U32 or Bool).
    fn zero(&mut self, f: &mut Function, t: Type) -> Value {
        let i = (t == Type::Bool) as usize;
        if self.zero[i] == Value::NONE {
            self.zero[i] = f.make(Op::Const(0), t, &[]);
            self.alias.resize(f.insts.len(), Value::NONE);
        }
        self.zero[i]
    }

    /// The value slot `s` holds at the end of block `b`, if known without looking further.
    fn end_known(&self, b: BlockId, s: usize) -> Option<Value> {
        let i = b.index() * self.k + s;
        if self.last[i].is_some() {
            return Some(self.last[i]);
        }
        let e = self.entry[i];
        (e.is_some() && e != BUSY).then(|| self.resolve(e))
    }

    /// Replaces phi `p` by its single operand when it has one (besides itself).
    fn trivial(&mut self, f: &mut Function, p: Value) -> Value {
        let Op::Phi(k) = f.inst(p).op else {
            return p;
        };
        let mut same = Value::NONE;
        for &(_, v) in &f.phi_in[k as usize] {
            let v = self.resolve(v);
            if v == same || v == p {
                continue;
            }
            if same.is_some() {
                return p;
            }
            same = v;
        }
        if same == Value::NONE {
            same = self.zero(f, f.inst(p).ty);
        }
        self.alias[p.index()] = same;
        same
    }

    /// The value slot `s` holds at the entry of block `b0` (Braun et al.'s
    /// `readVariableRecursive`, iterative).
    fn read_entry(&mut self, f: &mut Function, b0: BlockId, s: usize) -> Value {
        let mut stack = std::mem::take(&mut self.stack);
        stack.clear();
        let mut req = Some(b0);
        let mut val = Value::NONE;
        loop {
            if let Some(b) = req.take() {
                let i = b.index() * self.k + s;
                let m = self.entry[i];
                if m == BUSY {
                    // `b`'s single-predecessor chain is being followed: it leads (without
                    // writes) to the nearest phi frame above `b`'s frame, whose phi is its
                    // value; with no phi frame it is a cycle of single-predecessor blocks,
                    // which nothing reaches.
                    let mut phi = Value::NONE;
                    for &(fb, fp, _) in stack.iter().rev() {
                        if fb == b {
                            break;
                        }
                        if fp.is_some() {
                            phi = fp;
                        }
                    }
                    val = if phi.is_some() {
                        self.resolve(phi)
                    } else {
                        self.zero(f, self.ty[s])
                    };
                } else if m.is_some() {
                    val = self.resolve(m);
                } else if self.preds(b).is_empty() {
                    val = self.zero(f, self.ty[s]);
                    self.entry[i] = val;
                } else if self.preds(b).len() == 1 {
                    let p = self.preds(b)[0];
                    match self.end_known(p, s) {
                        Some(v) => {
                            val = v;
                            self.entry[i] = v;
                        }
                        None => {
                            self.entry[i] = BUSY;
                            stack.push((b, Value::NONE, 0));
                            req = Some(p);
                            continue;
                        }
                    }
                } else {
                    let phi = f.make_phi(self.ty[s]);
                    self.alias.resize(f.insts.len(), Value::NONE);
                    self.phis.push((phi, b));
                    self.entry[i] = phi;
                    stack.push((b, phi, 0));
                    val = Value::NONE;
                }
            }
            let Some(top) = stack.last_mut() else {
                self.stack = stack;
                return val;
            };
            let (b, phi) = (top.0, top.1);
            if phi == Value::NONE {
                self.entry[b.index() * self.k + s] = val;
                stack.pop();
                continue;
            }
            let Op::Phi(pk) = f.inst(phi).op else {
                unreachable!("phi frame holds a phi");
            };
            if val.is_some() {
                let p = self.preds(b)[top.2 - 1];
                f.phi_in[pk as usize].push((p, val));
            }
            while top.2 < self.preds(b).len() {
                let p = self.preds(b)[top.2];
                top.2 += 1;
                match self.end_known(p, s) {
                    Some(v) => f.phi_in[pk as usize].push((p, v)),
                    None => {
                        req = Some(p);
                        break;
                    }
                }
            }
            if req.is_some() {
                val = Value::NONE;
                continue;
            }
            val = self.trivial(f, phi);
            self.entry[b.index() * self.k + s] = val;
            stack.pop();
        }
    }
}

/// Makes block 0 a new empty block that jumps to the old entry (moved to the end) when
/// anything branches to it; says whether it did.
fn fresh_entry(f: &mut Function) -> bool {
    let targets_entry = (0..f.blocks.len()).any(|b| {
        let mut i = 0;
        while let Some(t) = f.succ(BlockId(b as u32), i) {
            if t == BlockId(0) {
                return true;
            }
            i += 1;
        }
        false
    });
    if !targets_entry {
        return false;
    }
    let n = BlockId(f.blocks.len() as u32);
    let old = std::mem::replace(
        &mut f.blocks[0],
        crate::ir::Block {
            addr: None,
            insts: Vec::new(),
            term: Terminator::Jump(n),
        },
    );
    f.blocks.push(old);
    let re = |t: &mut BlockId| {
        if *t == BlockId(0) {
            *t = n;
        }
    };
    for b in f.blocks.iter_mut().skip(1) {
        match &mut b.term {
            Terminator::Jump(t) => re(t),
            Terminator::Branch(_, t, e) => {
                re(t);
                re(e);
            }
            Terminator::Switch(_, cases, d) => {
                cases.iter_mut().for_each(|c| re(&mut c.1));
                re(d);
            }
            _ => {}
        }
    }
    true
}

/// Runs the pass.
pub fn run(f: &mut Function) {
    f.ssa = false;
    if f.blocks
        .iter()
        .any(|b| matches!(b.term, Terminator::Dynamic(_)))
    {
        return;
    }
    // The guest state accesses, in order, and a dense numbering of the slots they use.
    let mut dense = [u16::MAX; SLOTS];
    let mut ty = Vec::new();
    let mut acc: Vec<(u32, Value, u16, bool)> = Vec::new();
    for (b, blk) in f.blocks.iter().enumerate() {
        for &v in &blk.insts {
            if let Some((s, w)) = slot_of(&f.insts[v.index()].op) {
                if dense[s] == u16::MAX {
                    dense[s] = ty.len() as u16;
                    ty.push(if s < 256 { Type::U32 } else { Type::Bool });
                }
                acc.push((b as u32, v, dense[s], w));
            }
        }
    }
    let k = ty.len();
    if k * (f.blocks.len() + 1) > MAX_TABLE {
        return;
    }
    f.ssa = true;
    if k == 0 {
        return;
    }
    if fresh_entry(f) {
        // Block 0 moved to the end.
        let moved = f.blocks.len() as u32 - 1;
        for a in acc.iter_mut().filter(|a| a.0 == 0) {
            a.0 = moved;
        }
    }
    let nb = f.blocks.len();
    // Distinct predecessors, as one list with a start per block.
    let mut stamp = vec![u32::MAX; nb];
    let mut pstart = vec![0u32; nb + 1];
    for b in 0..nb {
        let id = BlockId(b as u32);
        let mut i = 0;
        while let Some(t) = f.succ(id, i) {
            i += 1;
            if stamp[t.index()] != b as u32 {
                stamp[t.index()] = b as u32;
                pstart[t.index() + 1] += 1;
            }
        }
    }
    for b in 0..nb {
        pstart[b + 1] += pstart[b];
    }
    let mut plist = vec![BlockId(0); pstart[nb] as usize];
    let mut fill: Vec<u32> = pstart[..nb].to_vec();
    stamp.fill(u32::MAX);
    for b in 0..nb {
        let id = BlockId(b as u32);
        let mut i = 0;
        while let Some(t) = f.succ(id, i) {
            i += 1;
            if stamp[t.index()] != b as u32 {
                stamp[t.index()] = b as u32;
                plist[fill[t.index()] as usize] = id;
                fill[t.index()] += 1;
            }
        }
    }
    let mut last = vec![Value::NONE; nb * k];
    for &(b, v, s, w) in &acc {
        if w {
            last[b as usize * k + s as usize] = f.insts[v.index()].args[0];
        }
    }
    let phi_base = f.phi_in.len();
    let mut bld = Builder {
        k,
        ty,
        pstart,
        plist,
        last,
        entry: vec![Value::NONE; nb * k],
        alias: vec![Value::NONE; f.insts.len()],
        phis: Vec::new(),
        zero: [Value::NONE; 2],
        stack: Vec::new(),
    };
    // Each remaining read (before any write of its slot in its block) is the entry value.
    for &(b, v, s, w) in &acc {
        if !w {
            let r = bld.read_entry(f, BlockId(b), s as usize);
            bld.alias[v.index()] = r;
        }
    }
    // Phis that became trivial after others were replaced, until none is left. Phi number
    // n is `Op::Phi(phi_base + n)`.
    let nphi = bld.phis.len();
    if nphi > 0 {
        let phi_no = |f: &Function, a: Value| match f.inst(a).op {
            Op::Phi(q) if q as usize >= phi_base => Some(q as usize - phi_base),
            _ => None,
        };
        let mut ustart = vec![0u32; nphi + 1];
        for q in phi_base..f.phi_in.len() {
            for &(_, a) in &f.phi_in[q] {
                if let Some(m) = phi_no(f, a) {
                    ustart[m + 1] += 1;
                }
            }
        }
        for m in 0..nphi {
            ustart[m + 1] += ustart[m];
        }
        let mut users = vec![0u32; ustart[nphi] as usize];
        let mut fill: Vec<u32> = ustart[..nphi].to_vec();
        for q in phi_base..f.phi_in.len() {
            for &(_, a) in &f.phi_in[q] {
                if let Some(m) = phi_no(f, a) {
                    users[fill[m] as usize] = (q - phi_base) as u32;
                    fill[m] += 1;
                }
            }
        }
        let mut work: Vec<u32> = (0..nphi as u32).collect();
        while let Some(n) = work.pop() {
            let p = bld.phis[n as usize].0;
            if bld.alias[p.index()].is_some() {
                continue;
            }
            if bld.trivial(f, p) != p {
                let n = n as usize;
                work.extend_from_slice(&users[ustart[n] as usize..ustart[n + 1] as usize]);
            }
        }
    }
    // Rewrite: guest state reads and writes gone, every use through the aliases, phis first
    // in their blocks.
    let mut alias = std::mem::take(&mut bld.alias);
    alias.resize(f.insts.len(), Value::NONE);
    let res = |mut v: Value| {
        while v.is_some() && alias[v.index()].is_some() {
            v = alias[v.index()];
        }
        v
    };
    let Function {
        blocks,
        insts,
        phi_in,
        ..
    } = f;
    for blk in blocks.iter_mut() {
        blk.insts.retain(|&v| {
            let inst = &mut insts[v.index()];
            if slot_of(&inst.op).is_some() {
                return false;
            }
            for a in inst.args.iter_mut() {
                if a.is_some() {
                    *a = res(*a);
                }
            }
            true
        });
        match &mut blk.term {
            Terminator::Branch(c, _, _) | Terminator::Dynamic(c) | Terminator::Switch(c, _, _) => {
                *c = res(*c)
            }
            _ => {}
        }
    }
    for ins in phi_in[phi_base..].iter_mut() {
        for x in ins.iter_mut() {
            x.1 = res(x.1);
        }
    }
    let mut phis: Vec<(BlockId, Value)> = bld
        .phis
        .iter()
        .filter(|&&(p, _)| alias[p.index()].is_none())
        .map(|&(p, b)| (b, p))
        .collect();
    phis.sort_unstable();
    let mut i = 0;
    while i < phis.len() {
        let b = phis[i].0;
        let j = i + phis[i..].iter().take_while(|x| x.0 == b).count();
        let vals: Vec<Value> = phis[i..j].iter().map(|x| x.1).collect();
        f.blocks[b.index()].insts.splice(0..0, vals);
        i = j;
    }
    let zeros: Vec<Value> = bld.zero.iter().copied().filter(|v| v.is_some()).collect();
    if !zeros.is_empty() {
        f.blocks[0].insts.splice(0..0, zeros);
    }
}

/// Checks SSA form: every argument, terminator value and phi operand is defined in a block
/// that dominates its use (earlier in the block for a use in the same block; at the end of
/// the predecessor for a phi operand), phis stand first in their blocks and have one operand
/// per predecessor, and (when `f.ssa`) no guest register, predicate or flag access is left.
/// Unreachable blocks are not checked. For tests and debugging.
pub fn verify(f: &Function) -> Result<(), String> {
    let nb = f.blocks.len();
    let mut def = vec![(u32::MAX, 0u32); f.insts.len()];
    for (b, blk) in f.blocks.iter().enumerate() {
        for (i, &v) in blk.insts.iter().enumerate() {
            def[v.index()] = (b as u32, i as u32);
        }
    }
    let order = super::rpo(f);
    let mut pos = vec![usize::MAX; nb];
    for (i, b) in order.iter().enumerate() {
        pos[b.index()] = i;
    }
    let mut preds: Vec<Vec<BlockId>> = vec![Vec::new(); nb];
    for &b in &order {
        for s in f.succs(b) {
            if !preds[s.index()].contains(&b) {
                preds[s.index()].push(b);
            }
        }
    }
    // Cooper–Harvey–Kennedy over reverse postorder.
    let mut idom = vec![usize::MAX; nb];
    if nb > 0 {
        idom[0] = 0;
    }
    let mut changed = true;
    while changed {
        changed = false;
        for &b in order.iter().skip(1) {
            let mut new = usize::MAX;
            for p in &preds[b.index()] {
                let p = p.index();
                if idom[p] == usize::MAX {
                    continue;
                }
                if new == usize::MAX {
                    new = p;
                    continue;
                }
                let (mut x, mut y) = (p, new);
                while x != y {
                    while pos[x] > pos[y] {
                        x = idom[x];
                    }
                    while pos[y] > pos[x] {
                        y = idom[y];
                    }
                }
                new = x;
            }
            if new != idom[b.index()] {
                idom[b.index()] = new;
                changed = true;
            }
        }
    }
    let dominates = |a: usize, mut b: usize| loop {
        if a == b {
            return true;
        }
        if b == 0 || idom[b] == usize::MAX {
            return false;
        }
        b = idom[b];
    };
    // Whether `v` is available at position `at` of block `b` (`u32::MAX`: the block's end).
    let avail = |v: Value, b: usize, at: u32| -> Result<(), String> {
        let (db, di) = def[v.index()];
        if db == u32::MAX {
            return Err(format!("{v} used in b{b} is in no block"));
        }
        let ok = if matches!(f.inst(v).op, Op::Const(_) | Op::Undef) {
            true // constants have no position (the back end makes them where used)
        } else if db as usize == b {
            di < at
        } else {
            dominates(db as usize, b)
        };
        if ok {
            Ok(())
        } else {
            Err(format!("{v} (b{db}) does not dominate its use in b{b}"))
        }
    };
    for &bid in &order {
        let b = bid.index();
        let blk = &f.blocks[b];
        let mut in_phis = true;
        for (i, &v) in blk.insts.iter().enumerate() {
            let inst = f.inst(v);
            if f.ssa && slot_of(&inst.op).is_some() {
                return Err(format!(
                    "{v} in b{b}: guest state access left: {:?}",
                    inst.op
                ));
            }
            if let Op::Phi(_) = inst.op {
                if !in_phis {
                    return Err(format!("phi {v} in b{b} after other instructions"));
                }
                let ins = f.phi_args(v);
                for p in &preds[b] {
                    let Some(&(_, a)) = ins.iter().find(|x| x.0 == *p) else {
                        return Err(format!("phi {v} in b{b} has no operand for b{}", p.0));
                    };
                    avail(a, p.index(), u32::MAX)?;
                }
                continue;
            }
            in_phis = false;
            for a in inst.args() {
                avail(a, b, i as u32)?;
            }
        }
        match &blk.term {
            Terminator::Branch(c, _, _) | Terminator::Dynamic(c) | Terminator::Switch(c, _, _) => {
                avail(*c, b, u32::MAX)?
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
