//! SSA for guest state: registers, predicates and flags become values that cross blocks,
//! with phis where definitions meet, and every `Get`/`Set` of a register, predicate or
//! flag goes, so guest state needs no variables.
//!
//! The construction is Braun et al.'s "Simple and Efficient Construction of Static Single
//! Assignment Form" (CC 2013), both halves in one pass, with every block sealed from the
//! start (the whole graph is known). The local half is one walk over the blocks: a read
//! after a read or write of its slot in the same block is that value, the first read of a
//! slot in a block is an *entry read*, the last write is the slot's value at the block's
//! end. The global half gives each entry read the value at its block's entry: the value at
//! the end of the single predecessor, or at a merge the predecessors' end values — one value
//! when they agree, else a phi over them; when the search comes back to a merge round a loop,
//! the merge's phi is made then (before its operands, which breaks the cycle). A phi whose
//! operands are all one value (or itself) is trivial and replaced by that value, and the phis
//! that used it are looked at again. A write of a value read at the block's entry (a copy, `R1 = R0`)
//! continues the search in the slot read. Values are memoised per (block, slot) and the
//! recursion runs on an explicit stack, so the pass is linear in blocks × slots used plus
//! phi operands. State read before any write is 0 (what the variables of the non-SSA scheme
//! start with).
//!
//! Functions with a `Dynamic` jump left (targets unknown) keep guest state in variables
//! (`Function::ssa` stays false) and get only the local forwarding of
//! [`local_state`](super::local_state); so do functions with more than
//! [`MAX_TABLE`] / 516 blocks. An entry block that is also a branch target first moves behind a
//! new empty entry block, so the entry has no predecessors.

use super::local_state;
use crate::ir::{BlockId, Function, Op, Terminator, Type, Value};

/// Most (blocks × state slots) entries the pass builds tables for.
pub const MAX_TABLE: usize = 1 << 22;

// State slots as the local half numbers them (`Reg::slot`: R0–R255, then predicates, uniform
// registers and predicates, barriers, flags; `RegFile::of_slot` gives a slot's file).
use super::local_state::{slot_of, SLOTS};

/// Marks a (block, slot) whose single-predecessor chain is being followed.
const BUSY: Value = Value(u32::MAX - 1);

/// The value a slot holds at the end of a block: known, or the entry value of a (block,
/// slot) still to be computed.
enum End {
    Known(Value),
    Need(BlockId, usize),
}

struct Builder {
    /// Number of slots used (table width).
    k: usize,
    /// Dense slot number per state slot.
    dense: [u16; SLOTS],
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
    alias: super::scratch::Aliases,
    /// Phis made, with their block.
    phis: Vec<(Value, BlockId)>,
    /// The zero constants (U32, Bool), made on first use.
    zero: [Value; 2],
    /// Frames of `read_entry`: (block, slot, phi once made, next predecessor or
    /// `usize::MAX` for a single-predecessor block, start of the operands in `ops`).
    stack: Vec<(BlockId, usize, Value, usize, usize)>,
    /// Operands collected by the merge frames of `read_entry`.
    ops: Vec<(BlockId, Value)>,
}

impl Builder {
    fn preds(&self, b: BlockId) -> &[BlockId] {
        &self.plist[self.pstart[b.index()] as usize..self.pstart[b.index() + 1] as usize]
    }

    /// `v` through the alias table (an entry read not resolved yet stays itself).
    fn resolve(&self, mut v: Value) -> Value {
        while v.is_some() && v.index() < self.alias.len() {
            match self.alias[v.index()] {
                READ => break,
                x if x.is_some() => v = x,
                _ => break,
            }
        }
        v
    }

    /// The zero of type `t` (U32 or Bool).
    fn zero(&mut self, f: &mut Function, t: Type) -> Value {
        let i = (t == Type::Bool) as usize;
        if self.zero[i] == Value::NONE {
            self.zero[i] = f.make(Op::Const(0), t, &[]);
            self.alias.grow(f.insts.len());
        }
        self.zero[i]
    }

    /// The entry value of (b, s) if computed.
    fn entry_known(&self, b: BlockId, s: usize) -> Option<Value> {
        let e = self.entry[b.index() * self.k + s];
        (e.is_some() && e != BUSY).then(|| self.resolve(e))
    }

    /// The value slot `s` holds at the end of block `b`. A write of a value read at the
    /// block's entry (a copy, `R1 = R0`) is the entry value of the slot read.
    fn end(&self, f: &Function, b: BlockId, s: usize) -> End {
        let l = self.last[b.index() * self.k + s];
        let s = if l.is_some() {
            let r = self.resolve(l);
            match slot_of(&f.inst(r).op) {
                Some((raw, false)) => self.dense[raw] as usize,
                _ => return End::Known(r),
            }
        } else {
            s
        };
        match self.entry_known(b, s) {
            Some(v) => End::Known(v),
            None => End::Need(b, s),
        }
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
        self.alias.set(p, same);
        same
    }

    /// The value slot `s0` holds at the entry of block `b0` (Braun et al.'s
    /// `readVariableRecursive`, iterative; requests are (block, slot) pairs because a copy
    /// continues the search in another slot). A block with several predecessors collects
    /// their end values first and makes a phi only when they differ, or when the search comes
    /// back to it round a loop (then the phi breaks the cycle and is checked for triviality
    /// once its operands are in), so merges that change nothing make no phi.
    fn read_entry(&mut self, f: &mut Function, b0: BlockId, s0: usize) -> Value {
        let mut stack = std::mem::take(&mut self.stack);
        stack.clear();
        let mut ops = std::mem::take(&mut self.ops);
        ops.clear();
        let mut req = Some((b0, s0));
        let mut val = Value::NONE;
        loop {
            if let Some((b, s)) = req.take() {
                let i = b.index() * self.k + s;
                let m = self.entry[i];
                if m == BUSY {
                    // (b, s) is on the stack: the search came round a loop. Its value is the
                    // entry value of the nearest merge frame at or above (b, s)'s frame (a
                    // single-predecessor chain passes values on unchanged), which needs its
                    // phi now; with no merge frame it is a cycle of single-predecessor blocks,
                    // which nothing reaches.
                    let mut at = None;
                    for (x, fr) in stack.iter().enumerate().rev() {
                        if fr.3 != usize::MAX {
                            at = Some(x);
                        }
                        if (fr.0, fr.1) == (b, s) {
                            break;
                        }
                    }
                    val = match at {
                        Some(x) => {
                            if stack[x].2.is_none() {
                                let phi = f.make_phi(self.ty[stack[x].1]);
                                self.alias.grow(f.insts.len());
                                self.phis.push((phi, stack[x].0));
                                stack[x].2 = phi;
                            }
                            stack[x].2
                        }
                        None => self.zero(f, self.ty[s]),
                    };
                } else if m.is_some() {
                    val = self.resolve(m);
                } else if self.preds(b).is_empty() {
                    val = self.zero(f, self.ty[s]);
                    self.entry[i] = val;
                } else if self.preds(b).len() == 1 {
                    let p = self.preds(b)[0];
                    match self.end(f, p, s) {
                        End::Known(v) => {
                            val = v;
                            self.entry[i] = v;
                        }
                        End::Need(pb, ps) => {
                            self.entry[i] = BUSY;
                            // (block, slot, phi, usize::MAX: single predecessor).
                            stack.push((b, s, Value::NONE, usize::MAX, 0));
                            req = Some((pb, ps));
                            continue;
                        }
                    }
                } else {
                    self.entry[i] = BUSY;
                    // (block, slot, phi once made, next predecessor, start of its operands).
                    stack.push((b, s, Value::NONE, 0, ops.len()));
                    val = Value::NONE;
                }
            }
            let Some(top) = stack.last_mut() else {
                self.stack = stack;
                self.ops = ops;
                return val;
            };
            let (b, s) = (top.0, top.1);
            if top.3 == usize::MAX {
                self.entry[b.index() * self.k + s] = val;
                stack.pop();
                continue;
            }
            if val.is_some() {
                ops.push((self.preds(b)[top.3 - 1], val));
            }
            while top.3 < self.preds(b).len() {
                let p = self.preds(b)[top.3];
                top.3 += 1;
                match self.end(f, p, s) {
                    End::Known(v) => ops.push((p, v)),
                    End::Need(pb, ps) => {
                        req = Some((pb, ps));
                        break;
                    }
                }
            }
            if req.is_some() {
                val = Value::NONE;
                continue;
            }
            let (phi, start) = (top.2, top.4);
            stack.pop();
            val = if phi.is_some() {
                let Op::Phi(pk) = f.inst(phi).op else {
                    unreachable!("a phi");
                };
                f.phi_in[pk as usize].extend_from_slice(&ops[start..]);
                self.trivial(f, phi)
            } else {
                let first = self.resolve(ops[start].1);
                if ops[start + 1..].iter().all(|o| self.resolve(o.1) == first) {
                    first
                } else {
                    let phi = f.make_phi(self.ty[s]);
                    self.alias.grow(f.insts.len());
                    self.phis.push((phi, b));
                    let Op::Phi(pk) = f.inst(phi).op else {
                        unreachable!("a phi");
                    };
                    f.phi_in[pk as usize].extend_from_slice(&ops[start..]);
                    phi
                }
            };
            ops.truncate(start);
            self.entry[b.index() * self.k + s] = val;
        }
    }
}

/// Makes block 0 a new empty block that jumps to the old entry (moved to the end) when
/// anything branches to it; says whether it did.
pub(crate) fn fresh_entry(f: &mut Function) -> bool {
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

/// Marks, in the alias table, an entry read whose value the global half still has to find.
const READ: Value = Value(u32::MAX - 2);

/// Calls `visit(block, successor)` once per distinct successor of each block, blocks in order;
/// `stamp` is scratch, one entry per block.
fn distinct_edges(f: &Function, stamp: &mut [u32], mut visit: impl FnMut(BlockId, BlockId)) {
    stamp.fill(u32::MAX);
    for b in 0..f.blocks.len() {
        let id = BlockId(b as u32);
        let mut i = 0;
        while let Some(t) = f.succ(id, i) {
            i += 1;
            if stamp[t.index()] != b as u32 {
                stamp[t.index()] = b as u32;
                visit(id, t);
            }
        }
    }
}

/// Runs the pass.
pub fn run(f: &mut Function) {
    f.ssa = false;
    if f.blocks.len() * SLOTS > MAX_TABLE
        || f.blocks
            .iter()
            .any(|b| matches!(b.term, Terminator::Dynamic(_)))
    {
        local_state::run(f);
        return;
    }
    f.ssa = true;
    fresh_entry(f);
    // The local half, in one walk: a read after a read or write of its slot in the same
    // block is that value; the first read of a slot in a block is an entry read (its uses
    // are noted, to be rewritten once the global half knows its value); the last write of a
    // slot in a block is its value at the block's end. Reads and writes leave the blocks.
    let mut alias = super::scratch::Aliases::take(f.insts.len());
    let mut dense = [u16::MAX; SLOTS];
    // Room for the slots a shader commonly uses (no reallocation on the way).
    let mut ty = Vec::with_capacity(64);
    // By dense index: the block of the last access in the walk and the value it left.
    let mut known: Vec<(u32, Value)> = Vec::with_capacity(64);
    // Sized for the usual shares of guest-state accesses (no reallocation on the way).
    let n = f.live_insts();
    let mut reads: Vec<(u32, Value, u16)> = Vec::with_capacity(n / 4);
    let mut writes: Vec<(u32, u16, Value)> = Vec::with_capacity(n / 4);
    // Uses of entry reads: (instruction, argument slot); terminators by block.
    let mut uses: Vec<(Value, u8)> = Vec::with_capacity(n / 2);
    let mut term_uses: Vec<u32> = Vec::new();
    for b in 0..f.blocks.len() {
        let mut insts = std::mem::take(&mut f.blocks[b].insts);
        // Nothing happens before the block's first access: the instructions before it stay
        // where they are.
        let first = insts
            .iter()
            .position(|&v| slot_of(&f.insts[v.index()].op).is_some())
            .unwrap_or(insts.len());
        let mut w = first;
        // Only a read has an alias, and values do not cross blocks yet: nothing to rewrite
        // before the block's first read.
        let mut read = false;
        for r in first..insts.len() {
            let v = insts[r];
            let inst = &mut f.insts[v.index()];
            for (i, a) in inst.args.iter_mut().enumerate() {
                if a.is_none() || !read {
                    break;
                }
                match alias[a.index()] {
                    READ => uses.push((v, i as u8)),
                    x if x.is_some() => {
                        *a = x;
                        if alias[x.index()] == READ {
                            uses.push((v, i as u8));
                        }
                    }
                    _ => {}
                }
            }
            let Some((s, write)) = slot_of(&inst.op) else {
                insts[w] = v;
                w += 1;
                continue;
            };
            if dense[s] == u16::MAX {
                dense[s] = ty.len() as u16;
                ty.push(crate::ir::RegFile::of_slot(s).ty());
                known.push((u32::MAX, Value::NONE));
            }
            let d = dense[s];
            let last = &mut known[d as usize];
            read |= !write;
            if write {
                *last = (b as u32, inst.args[0]);
                writes.push((b as u32, d, inst.args[0]));
            } else if last.0 == b as u32 {
                alias.set(v, last.1);
            } else {
                *last = (b as u32, v);
                alias.set(v, READ);
                reads.push((b as u32, v, d));
            }
        }
        insts.truncate(w);
        f.blocks[b].insts = insts;
        if let Terminator::Branch(c, _, _) | Terminator::Switch(c, _, _) = &mut f.blocks[b].term {
            match alias[c.index()] {
                READ => term_uses.push(b as u32),
                x if x.is_some() => {
                    *c = x;
                    if alias[x.index()] == READ {
                        term_uses.push(b as u32);
                    }
                }
                _ => {}
            }
        }
    }
    let k = ty.len();
    if reads.is_empty() {
        alias.give_back();
        return;
    }
    let nb = f.blocks.len();
    // Distinct predecessors, as one list with a start per block.
    let mut stamp = vec![u32::MAX; nb];
    let mut pstart = vec![0u32; nb + 1];
    distinct_edges(f, &mut stamp, |_, t| pstart[t.index() + 1] += 1);
    for b in 0..nb {
        pstart[b + 1] += pstart[b];
    }
    let mut plist = vec![BlockId(0); pstart[nb] as usize];
    let mut fill: Vec<u32> = pstart[..nb].to_vec();
    distinct_edges(f, &mut stamp, |b, t| {
        plist[fill[t.index()] as usize] = b;
        fill[t.index()] += 1;
    });
    let mut last = vec![Value::NONE; nb * k];
    for &(b, d, a) in &writes {
        last[b as usize * k + d as usize] = a;
    }
    let phi_base = f.phi_in.len();
    let mut bld = Builder {
        k,
        dense,
        ty,
        pstart,
        plist,
        last,
        entry: vec![Value::NONE; nb * k],
        alias,
        // Room for the usual searches (no reallocation on the way).
        phis: Vec::with_capacity(16),
        zero: [Value::NONE; 2],
        stack: Vec::with_capacity(16),
        ops: Vec::with_capacity(16),
    };
    // The global half: each entry read is the value at its block's entry.
    for &(b, v, s) in &reads {
        let r = bld.read_entry(f, BlockId(b), s as usize);
        bld.alias.set(v, r);
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
    // Rewrite the uses of entry reads and the phis' operands; phis first in their blocks.
    for &(v, i) in &uses {
        let a = f.insts[v.index()].args[i as usize];
        f.insts[v.index()].args[i as usize] = bld.resolve(a);
    }
    for &b in &term_uses {
        if let Terminator::Branch(c, _, _) | Terminator::Switch(c, _, _) =
            &mut f.blocks[b as usize].term
        {
            *c = bld.resolve(*c);
        }
    }
    for q in phi_base..f.phi_in.len() {
        for x in 0..f.phi_in[q].len() {
            let a = f.phi_in[q][x].1;
            f.phi_in[q][x].1 = bld.resolve(a);
        }
    }
    let mut phis: Vec<(BlockId, Value)> = bld
        .phis
        .iter()
        .filter(|&&(p, _)| bld.alias[p.index()].is_none())
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
    bld.alias.give_back();
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
    let order_ids: Vec<u32> = order.iter().map(|b| b.0).collect();
    let idom: Vec<usize> =
        crate::dom::immediate_dominators(nb, &order_ids, |b| preds[b as usize].iter().map(|p| p.0))
            .into_iter()
            .map(|d| {
                if d == crate::dom::NONE {
                    usize::MAX
                } else {
                    d as usize
                }
            })
            .collect();
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
