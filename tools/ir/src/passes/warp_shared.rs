//! The `warp_shared` lowering: 32-lane warp operations through workgroup memory instead of
//! subgroup operations, for devices whose subgroups are not 32 lanes wide (lavapipe's are 4,
//! 8 or 16). A warp is 32 consecutive invocations of the workgroup (linear index), as on
//! NVIDIA hardware; lane ids and lane masks are computed from that index already.
//!
//! Every warp operation that reads other lanes' values (`Shfl`, `Vote`, `WarpReduce`, `MatchAny`) is an
//! *exchange*: each invocation writes its operand words and a tag into its own slot of a
//! scratch area placed after the guest's shared memory, all invocations synchronise
//! ([`Op::WarpSync`]), each reads the slots of its warp it needs, all synchronise again, and
//! each clears its tag. A lane is *active* when its slot holds this exchange's tag: lanes
//! that exited, or wait at another warp operation, are not. Consecutive warp operations of
//! a block that do not use each other's results share one exchange (the tensor lowering's
//! shuffles, MATCH's ballots), up to [`MAX_WORDS`] distinct operand words. `ShflValid` needs
//! no other lane and becomes plain arithmetic.
//!
//! Synchronisation: a `WarpSync` starts its block, like a barrier. Where every `WarpSync`
//! is reached in workgroup-uniform control flow (the barrier rule, `uniform::barrier`),
//! structured code keeps it as a workgroup barrier. Otherwise (a warp operation after a
//! divergent exit, `if (i >= n) return;`, or inside divergent code) the back end uses the
//! barrier-synchronised dispatcher, where a `WarpSync` is a wait released once every
//! invocation waits or has exited — before any waiting guest barrier — so the lanes that
//! meet at one warp operation are exactly the lanes that reach it together, and exited lanes
//! count as inactive (Maxwell's and Ampere's semantics for `VOTE`; a shuffle from an inactive
//! lane, undefined on the hardware, returns the lane's own value).
//!
//! Needs a compute shader with a workgroup size known at translation time.

use super::seq::Seq;
use crate::ir::{
    AtomOp, BlockId, Function, Op, ShflMode, Space, Sys, Terminator, Type, Value, VoteMode, Width,
};
use crate::shader::{Shader, Stage};

/// The most distinct operand words one exchange carries (the scratch area holds one more
/// word per invocation, the tag).
pub const MAX_WORDS: usize = 8;

/// Where the scratch area lies in workgroup memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scratch {
    /// Byte offset of slot 0 (after the guest's shared memory, 16-byte aligned).
    pub base: u32,
    /// Words per slot: the tag and up to [`MAX_WORDS`] operand words.
    pub stride: u32,
    /// Slots: the workgroup's invocations rounded up to whole warps.
    pub slots: u32,
}

/// Whether an operation reads other lanes' values.
fn exchanges(op: &Op) -> bool {
    matches!(
        op,
        Op::Shfl(_) | Op::Vote(_) | Op::WarpReduce(_) | Op::MatchAny
    )
}

/// The values an exchanging operation publishes: its first argument, and `MatchAny`'s high
/// word.
fn published(i: &crate::ir::Inst) -> Vec<Value> {
    match i.op {
        Op::MatchAny => i.args().collect(),
        _ => vec![i.args[0]],
    }
}

/// One exchange: warp operations of a block, the last at index `last`.
struct Run {
    ops: Vec<Value>,
    words: Vec<Value>,
    last: usize,
}

/// The exchanges of a block's instructions (see the module text).
fn plan(f: &Function, insts: &[Value]) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    let mut cur: Option<Run> = None;
    for (idx, &v) in insts.iter().enumerate() {
        let i = f.inst(v);
        if let Some(r) = &cur {
            if i.args().any(|a| r.ops.contains(&a)) {
                runs.extend(cur.take());
            }
        }
        if !exchanges(&i.op) {
            continue;
        }
        let ws = published(i);
        if let Some(r) = &cur {
            let new = ws.iter().filter(|w| !r.words.contains(w)).count();
            if r.words.len() + new > MAX_WORDS {
                runs.extend(cur.take());
            }
        }
        let r = cur.get_or_insert_with(|| Run {
            ops: Vec::new(),
            words: Vec::new(),
            last: idx,
        });
        r.ops.push(v);
        for w in ws {
            if !r.words.contains(&w) {
                r.words.push(w);
            }
        }
        r.last = idx;
    }
    runs.extend(cur);
    runs
}

/// Lowers the warp operations of `sh` (a compute shader); `Ok(None)` when it has none, else
/// the scratch area it added to the shared memory. Errors name what the emulation needs.
pub fn run(sh: &mut Shader) -> Result<Option<Scratch>, String> {
    let f = &sh.func;
    let mut any = false;
    for b in &f.blocks {
        for &v in &b.insts {
            match f.inst(v).op {
                Op::Shfl(_) | Op::ShflValid(_) | Op::Vote(_) | Op::WarpReduce(_) | Op::MatchAny => {
                    any = true
                }
                Op::Mma(_) => {
                    return Err("a matrix multiply-accumulate is left: lower it first (the \
                                tensor pass)"
                        .into())
                }
                _ => {}
            }
        }
    }
    if !any {
        return Ok(None);
    }
    if sh.stage != Stage::Compute {
        return Err(format!(
            "warp operations in a {} shader: the workgroup-memory warp emulation needs a \
             compute shader",
            sh.stage.name()
        ));
    }
    if sh.local_size.contains(&0) {
        return Err(
            "the workgroup-memory warp emulation needs a workgroup size known at \
                    translation time"
                .into(),
        );
    }
    let total: u64 = sh.local_size.iter().map(|&x| x as u64).product();
    if total > 1024 {
        return Err(format!(
            "a workgroup of {total} invocations (the warp emulation takes at most 1024)"
        ));
    }
    let total = total as u32;
    let plans: Vec<Vec<Run>> = (0..f.blocks.len())
        .map(|b| plan(f, &f.blocks[b].insts))
        .collect();
    let words = plans
        .iter()
        .flatten()
        .map(|r| r.words.len())
        .max()
        .unwrap_or(0)
        .max(1) as u32;
    let sc = Scratch {
        base: sh.shared_bytes.div_ceil(16) * 16,
        stride: 1 + words,
        slots: total.div_ceil(32) * 32,
    };
    let end = sc.base as u64 + 4 * sc.stride as u64 * sc.slots as u64;
    if end > 64 * 1024 {
        return Err(format!(
            "the workgroup-memory warp emulation needs {end} bytes of shared memory"
        ));
    }
    sh.shared_bytes = end as u32;
    let f = &mut sh.func;
    let mut tag = 0u32;
    for (b, runs) in plans.into_iter().enumerate() {
        lower_block(f, BlockId(b as u32), runs, sc, &mut tag);
    }
    prologue(f, sc, total);
    Ok(Some(sc))
}

/// Per exchange: this lane's slot address and its warp's slot 0 address.
struct Slot {
    lane: Value,
    warp0: Value,
    mine: Value,
}

fn slot(s: &mut Seq, sc: Scratch) -> Slot {
    let lane = s.op(Op::SysVal(Sys::LaneId), Type::U32, &[]);
    let warp = s.op(Op::SysVal(Sys::WarpId), Type::U32, &[]);
    let wb = s.bin_c(Op::IMul, warp, 32 * 4 * sc.stride);
    let warp0 = s.bin_c(Op::IAdd, wb, sc.base);
    let lb = s.bin_c(Op::IMul, lane, 4 * sc.stride);
    let mine = s.bin(Op::IAdd, warp0, lb);
    Slot { lane, warp0, mine }
}

/// Word `k` (0: the tag) of lane `j`'s slot (`j` a U32 value).
fn addr_of(s: &mut Seq, sc: Scratch, sl: &Slot, j: Value, k: u32) -> Value {
    let o = s.bin_c(Op::IMul, j, 4 * sc.stride);
    let a = s.bin(Op::IAdd, sl.warp0, o);
    s.bin_c(Op::IAdd, a, 4 * k)
}

fn load(s: &mut Seq, a: Value) -> Value {
    s.op(Op::Load(Space::Shared, Width::B32), Type::U32, &[a])
}

fn store(s: &mut Seq, a: Value, v: Value) {
    s.op(Op::Store(Space::Shared, Width::B32), Type::Void, &[a, v]);
}

/// Ends the block being filled (`cur`, instructions `s.out`) with a jump to a new block that
/// starts with a `WarpSync`; returns the new block.
fn sync_split(s: &mut Seq, cur: BlockId) -> BlockId {
    let nb = s.f.add_block(None);
    let out = std::mem::take(&mut s.out);
    s.f.blocks[cur.index()].insts = out;
    s.f.blocks[cur.index()].term = Terminator::Jump(nb);
    s.f.barrier_ops = true;
    s.op(Op::WarpSync, Type::Void, &[]);
    nb
}

fn lower_block(f: &mut Function, b: BlockId, runs: Vec<Run>, sc: Scratch, tag: &mut u32) {
    let has_valid = f.blocks[b.index()]
        .insts
        .iter()
        .any(|&v| matches!(f.inst(v).op, Op::ShflValid(_)));
    if runs.is_empty() && !has_valid {
        return;
    }
    let insts = std::mem::take(&mut f.blocks[b.index()].insts);
    let term = std::mem::replace(&mut f.blocks[b.index()].term, Terminator::Unset);
    let in_run: std::collections::HashSet<Value> =
        runs.iter().flat_map(|r| r.ops.iter().copied()).collect();
    let mut s = Seq::new(f, Vec::with_capacity(insts.len() * 4));
    let mut cur = b;
    let mut runs = runs.into_iter().peekable();
    for (idx, &v) in insts.iter().enumerate() {
        let i = *s.f.inst(v);
        if let Op::ShflValid(mode) = i.op {
            let lane = s.op(Op::SysVal(Sys::LaneId), Type::U32, &[]);
            let (_, ok) = source_lane(&mut s, mode, lane, i.args[1], i.args[2]);
            s.out.pop();
            s.f.insts[v.index()] = *s.f.inst(ok);
            s.out.push(v);
            continue;
        }
        if !in_run.contains(&v) {
            s.out.push(v);
        }
        if runs.peek().is_some_and(|r| r.last == idx) {
            let r = runs.next().expect("peeked");
            *tag += 1;
            cur = exchange(&mut s, cur, r, sc, *tag);
        }
    }
    let last = cur;
    let out = std::mem::take(&mut s.out);
    f.blocks[cur.index()].insts = out;
    f.blocks[cur.index()].term = term;
    if last != b {
        // The successors' phis now come from the last piece.
        for k in 0.. {
            let Some(t) = f.succ(last, k) else { break };
            for idx in 0..f.blocks[t.index()].insts.len() {
                let v = f.blocks[t.index()].insts[idx];
                if let Some(args) = f.phi_args_mut(v) {
                    for (p, _) in args.iter_mut() {
                        if *p == b {
                            *p = last;
                        }
                    }
                }
            }
        }
    }
}

/// One exchange at the current end of block `cur`: write, synchronise, read, synchronise,
/// clear. Returns the block the code after it continues in.
fn exchange(s: &mut Seq, cur: BlockId, r: Run, sc: Scratch, tag: u32) -> BlockId {
    let sl = slot(s, sc);
    for (k, &w) in r.words.iter().enumerate() {
        // A predicate (only votes publish one) goes out as this lane's ballot bit.
        let w = if s.f.ty(w) == Type::Bool {
            let one = s.c32(1);
            let bit = s.bin(Op::Shl, one, sl.lane);
            let zero = s.c32(0);
            s.sel(w, bit, zero)
        } else {
            s.cast(Type::U32, w)
        };
        let a = s.bin_c(Op::IAdd, sl.mine, 4 + 4 * k as u32);
        store(s, a, w);
    }
    let t = s.c32(tag);
    store(s, sl.mine, t);
    let read = sync_split(s, cur);
    // Which lanes take part (only made when a vote or reduction needs them).
    let mut active: Option<(Vec<Value>, Value)> = None;
    for &v in &r.ops {
        let i = *s.f.inst(v);
        let k = r.words.iter().position(|&w| w == i.args[0]).unwrap_or(0) as u32;
        let res = match i.op {
            Op::Shfl(mode) => {
                let (j, ok) = source_lane(s, mode, sl.lane, i.args[1], i.args[2]);
                let src = s.sel(ok, j, sl.lane);
                let ta = addr_of(s, sc, &sl, src, 0);
                let tv = load(s, ta);
                let wa = s.bin_c(Op::IAdd, ta, 4 + 4 * k);
                let wv = load(s, wa);
                let tc = s.c32(tag);
                let act = s.cmp(Op::IEq, tv, tc);
                let own = s.cast(Type::U32, i.args[0]);
                s.sel(act, wv, own)
            }
            Op::Vote(mode) => {
                // Each lane published its ballot bit: OR them, keep the active lanes'.
                let (_, mask) = active_lanes(s, sc, &sl, tag, &mut active);
                let mut bits = Value::NONE;
                for j in 0..32 {
                    let jc = s.c32(j);
                    let wa = addr_of(s, sc, &sl, jc, 1 + k);
                    let wv = load(s, wa);
                    bits = if bits.is_none() {
                        wv
                    } else {
                        s.bin(Op::Or, bits, wv)
                    };
                }
                let bal = s.bin(Op::And, bits, mask);
                let z = s.c32(0);
                match mode {
                    VoteMode::Ballot => bal,
                    VoteMode::Any => s.cmp(Op::INe, bal, z),
                    VoteMode::All => s.cmp(Op::IEq, bal, mask),
                    VoteMode::Eq => {
                        let none = s.cmp(Op::IEq, bal, z);
                        let all = s.cmp(Op::IEq, bal, mask);
                        s.bin(Op::Or, none, all)
                    }
                }
            }
            Op::MatchAny => {
                // The active lanes whose published words all equal this lane's.
                let (act, _) = active_lanes(s, sc, &sl, tag, &mut active);
                let mine: Vec<(Value, u32)> = i
                    .args()
                    .map(|a| {
                        let k = r.words.iter().position(|&w| w == a).unwrap_or(0) as u32;
                        (a, k)
                    })
                    .collect();
                let mut mask = Value::NONE;
                for (j, &aj) in act.iter().enumerate() {
                    let jc = s.c32(j as u32);
                    let mut same = aj;
                    for &(a, k) in &mine {
                        let wa = addr_of(s, sc, &sl, jc, 1 + k);
                        let wv = load(s, wa);
                        let eq = s.cmp(Op::IEq, wv, a);
                        same = s.bin(Op::And, same, eq);
                    }
                    let bit = s.c32(1 << j);
                    let z = s.c32(0);
                    let x = s.sel(same, bit, z);
                    mask = if mask.is_none() {
                        x
                    } else {
                        s.bin(Op::Or, mask, x)
                    };
                }
                mask
            }
            Op::WarpReduce(o) => {
                let (act, _) = active_lanes(s, sc, &sl, tag, &mut active);
                let (op, id) = match o {
                    AtomOp::Add => (Op::IAdd, 0),
                    AtomOp::And => (Op::And, !0),
                    AtomOp::Or => (Op::Or, 0),
                    AtomOp::Xor => (Op::Xor, 0),
                    AtomOp::SMin => (Op::SMin, 0x7fff_ffff),
                    AtomOp::SMax => (Op::SMax, 0x8000_0000),
                    AtomOp::UMin => (Op::UMin, !0),
                    _ => (Op::UMax, 0),
                };
                let mut acc = s.c32(id);
                for (j, &aj) in act.iter().enumerate() {
                    let jc = s.c32(j as u32);
                    let wa = addr_of(s, sc, &sl, jc, 1 + k);
                    let wv = load(s, wa);
                    let n = s.bin(op, acc, wv);
                    acc = s.sel(aj, n, acc);
                }
                acc
            }
            _ => continue,
        };
        // The operation's value is the last instruction of its computation.
        if s.out.last() == Some(&res) {
            s.out.pop();
            s.f.insts[v.index()] = *s.f.inst(res);
        } else {
            // A value computed earlier (no new instruction): a copy through `x | 0`.
            let z = s.c32(0);
            let ty = s.f.ty(res);
            let z = if ty == Type::Bool { s.cbool(false) } else { z };
            s.f.insts[v.index()] = crate::ir::Inst {
                op: Op::Or,
                ty,
                args: [res, z, Value::NONE, Value::NONE],
            };
        }
        s.out.push(v);
    }
    let next = sync_split(s, read);
    let z = s.c32(0);
    store(s, sl.mine, z);
    next
}

/// The active lanes of this exchange (per lane, Bool) and their mask, made once.
fn active_lanes(
    s: &mut Seq,
    sc: Scratch,
    sl: &Slot,
    tag: u32,
    cache: &mut Option<(Vec<Value>, Value)>,
) -> (Vec<Value>, Value) {
    if let Some(c) = cache {
        return c.clone();
    }
    let mut act = Vec::with_capacity(32);
    let mut mask = Value::NONE;
    for j in 0..32u32 {
        let jc = s.c32(j);
        let ta = addr_of(s, sc, sl, jc, 0);
        let tv = load(s, ta);
        let tc = s.c32(tag);
        let a = s.cmp(Op::IEq, tv, tc);
        let bit = s.c32(1 << j);
        let z = s.c32(0);
        let x = s.sel(a, bit, z);
        mask = if mask.is_none() {
            x
        } else {
            s.bin(Op::Or, mask, x)
        };
        act.push(a);
    }
    *cache = Some((act, mask));
    cache.clone().expect("just set")
}

/// A shuffle's source lane and whether it is in range (PTX ISA, `shfl.sync`): with `bval =
/// b & 31`, `cval = c & 31`, `segmask = (c >> 8) & 31`, `minLane = lane & segmask`, `maxLane
/// = minLane | (cval & ~segmask)`: up `j = lane − bval`, valid `j >= maxLane` (signed); down
/// `lane + bval`, bfly `lane ^ bval`, idx `minLane | (bval & ~segmask)`, valid `j <= maxLane`.
fn source_lane(s: &mut Seq, mode: ShflMode, lane: Value, b: Value, c: Value) -> (Value, Value) {
    let bl = s.bin_c(Op::And, b, 31);
    let cl = s.bin_c(Op::And, c, 31);
    let s0 = s.bin_c(Op::LShr, c, 8);
    let seg = s.bin_c(Op::And, s0, 31);
    let nseg = s.op(Op::Not, Type::U32, &[seg]);
    let min_lane = s.bin(Op::And, lane, seg);
    let cm = s.bin(Op::And, cl, nseg);
    let max_lane = s.bin(Op::Or, min_lane, cm);
    match mode {
        ShflMode::Up => {
            let j = s.bin(Op::ISub, lane, bl);
            (j, s.cmp(Op::SGe, j, max_lane))
        }
        ShflMode::Down => {
            let j = s.bin(Op::IAdd, lane, bl);
            (j, s.cmp(Op::SLe, j, max_lane))
        }
        ShflMode::Bfly => {
            let j = s.bin(Op::Xor, lane, bl);
            (j, s.cmp(Op::SLe, j, max_lane))
        }
        ShflMode::Idx => {
            let bm = s.bin(Op::And, bl, nseg);
            let j = s.bin(Op::Or, min_lane, bm);
            (j, s.cmp(Op::SLe, j, max_lane))
        }
    }
}

/// Clears every slot's tag before the first exchange: invocation `i` clears slots `i`, `i +
/// total`, … below the slot count (a slot past it writes its own again), then all
/// synchronise. At the start of the entry block (made fresh when something branches to it).
fn prologue(f: &mut Function, sc: Scratch, total: u32) {
    super::ssa::fresh_entry(f);
    let entry = BlockId(0);
    let rest = std::mem::take(&mut f.blocks[0].insts);
    let term = std::mem::replace(&mut f.blocks[0].term, Terminator::Unset);
    let mut s = Seq::new(f, Vec::with_capacity(rest.len() + 64));
    let sl = slot(&mut s, sc);
    let warp = s.op(Op::SysVal(Sys::WarpId), Type::U32, &[]);
    let w32 = s.bin_c(Op::Shl, warp, 5);
    let lin = s.bin(Op::Or, w32, sl.lane);
    let z = s.c32(0);
    store(&mut s, sl.mine, z);
    let mut k = 1;
    while k * total < sc.slots {
        let j = s.bin_c(Op::IAdd, lin, k * total);
        let n = s.c32(sc.slots);
        let inside = s.cmp(Op::ULt, j, n);
        let jo = s.bin_c(Op::IMul, j, 4 * sc.stride);
        let ja = s.bin_c(Op::IAdd, jo, sc.base);
        let a = s.sel(inside, ja, sl.mine);
        let z = s.c32(0);
        store(&mut s, a, z);
        k += 1;
    }
    let nb = sync_split(&mut s, entry);
    s.out.extend(rest);
    let out = std::mem::take(&mut s.out);
    f.blocks[nb.index()].insts = out;
    f.blocks[nb.index()].term = term;
    // Phis of the entry's successors came from block 0.
    for k in 0.. {
        let Some(t) = f.succ(nb, k) else { break };
        for idx in 0..f.blocks[t.index()].insts.len() {
            let v = f.blocks[t.index()].insts[idx];
            if let Some(args) = f.phi_args_mut(v) {
                for (p, _) in args.iter_mut() {
                    if *p == entry {
                        *p = nb;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Mma, MmaType};

    /// A compute shader of one block in SSA form and its entry block.
    fn shader(local: [u32; 3]) -> (Shader, BlockId) {
        let mut f = Function::new();
        let b = f.add_block(Some(0));
        f.blocks[0].term = Terminator::Exit;
        f.ssa = true;
        let sh = Shader {
            func: f,
            stage: Stage::Compute,
            local_size: local,
            shared_bytes: 20,
            local_bytes: 0,
            banks: Vec::new(),
            abi: "cuda",
            guest_insts: 0,
            gfx: None,
        };
        (sh, b)
    }

    fn c(f: &mut Function, k: u32) -> Value {
        f.push(BlockId(0), Op::Const(k as u64), Type::U32, &[])
    }

    fn shfl(f: &mut Function, b: BlockId, v: Value, lane: Value) -> Value {
        let m = c(f, 0x1f);
        f.push(b, Op::Shfl(ShflMode::Idx), Type::U32, &[v, lane, m])
    }

    fn store(f: &mut Function, b: BlockId, v: Value) {
        let a = c(f, 0);
        f.push(b, Op::Store(Space::Shared, Width::B32), Type::Void, &[a, v]);
    }

    fn count(f: &Function, p: impl Fn(&Op) -> bool) -> usize {
        f.blocks
            .iter()
            .flat_map(|b| &b.insts)
            .filter(|&&v| p(&f.inst(v).op))
            .count()
    }

    /// Two shuffles that do not use each other's results share one exchange; a third that
    /// shuffles the first's result needs its own. Scratch after the guest's shared memory,
    /// one slot per invocation rounded up to whole warps, two words of operands.
    #[test]
    fn independent_operations_share_an_exchange() {
        let (mut sh, b) = shader([40, 1, 1]);
        let f = &mut sh.func;
        let lane = f.push(b, Op::SysVal(Sys::LaneId), Type::U32, &[]);
        let one = c(f, 1);
        let x = shfl(f, b, lane, one);
        let seven = c(f, 7);
        let y = shfl(f, b, one, seven);
        let z = shfl(f, b, x, seven);
        let s = f.push(b, Op::IAdd, Type::U32, &[y, z]);
        store(f, b, s);
        let sc = run(&mut sh).expect("lowered").expect("had warp operations");
        assert_eq!(
            sc,
            Scratch {
                base: 32,
                stride: 3,
                slots: 64
            }
        );
        assert_eq!(sh.shared_bytes, 32 + 4 * 3 * 64);
        let f = &sh.func;
        assert_eq!(count(f, |o| matches!(o, Op::Shfl(_))), 0);
        // The prologue's synchronisation, then two per exchange.
        assert_eq!(count(f, |o| *o == Op::WarpSync), 1 + 2 * 2);
        for blk in &f.blocks {
            for (k, &v) in blk.insts.iter().enumerate() {
                if f.inst(v).op == Op::WarpSync {
                    assert_eq!(k, 0, "a WarpSync starts its block");
                }
            }
        }
        crate::passes::ssa::verify(f).expect("valid");
    }

    /// Votes and reductions read every lane's slot; `ShflValid` needs no exchange.
    #[test]
    fn votes_reductions_and_validity() {
        let (mut sh, b) = shader([64, 1, 1]);
        let f = &mut sh.func;
        let lane = f.push(b, Op::SysVal(Sys::LaneId), Type::U32, &[]);
        let three = c(f, 3);
        let p = f.push(b, Op::ULt, Type::Bool, &[lane, three]);
        let bal = f.push(b, Op::Vote(VoteMode::Ballot), Type::U32, &[p]);
        let any = f.push(b, Op::Vote(VoteMode::Any), Type::Bool, &[p]);
        let sum = f.push(b, Op::WarpReduce(AtomOp::Add), Type::U32, &[lane]);
        let m = c(f, 0x1f);
        let ok = f.push(
            b,
            Op::ShflValid(ShflMode::Up),
            Type::Bool,
            &[lane, three, m],
        );
        let one = c(f, 1);
        let zero = c(f, 0);
        let a = f.push(b, Op::Select, Type::U32, &[any, one, zero]);
        let o = f.push(b, Op::Select, Type::U32, &[ok, one, zero]);
        let t = f.push(b, Op::IAdd, Type::U32, &[bal, sum]);
        let t = f.push(b, Op::IAdd, Type::U32, &[t, a]);
        let t = f.push(b, Op::IAdd, Type::U32, &[t, o]);
        store(f, b, t);
        run(&mut sh).expect("lowered").expect("had warp operations");
        let f = &sh.func;
        let warp = |o: &Op| {
            matches!(
                o,
                Op::Shfl(_) | Op::ShflValid(_) | Op::Vote(_) | Op::WarpReduce(_)
            )
        };
        assert_eq!(count(f, warp), 0);
        // One exchange for the three operations (the ballot and `any` share their word).
        assert_eq!(count(f, |o| *o == Op::WarpSync), 3);
        crate::passes::ssa::verify(f).expect("valid");
    }

    #[test]
    fn refuses_what_it_cannot_emulate() {
        let (mut sh, b) = shader([0, 0, 0]);
        let f = &mut sh.func;
        let one = c(f, 1);
        let x = shfl(f, b, one, one);
        store(f, b, x);
        let e = run(&mut sh.clone()).expect_err("variable size");
        assert!(e.contains("workgroup size"), "{e}");
        sh.local_size = [32, 1, 1];
        sh.stage = Stage::Fragment;
        let e = run(&mut sh.clone()).expect_err("graphics");
        assert!(e.contains("compute"), "{e}");
        sh.stage = Stage::Compute;
        let f = &mut sh.func;
        let t = f.make(Op::Tuple, Type::Void, &[one]);
        let m = Mma {
            m: 8,
            n: 8,
            k: 16,
            a: MmaType::S8,
            b: MmaType::S8,
            acc: MmaType::S32,
            sat: false,
            neg_a: false,
            neg_b: false,
        };
        f.push(b, Op::Mma(m), Type::Void, &[t, t, t]);
        let e = run(&mut sh).expect_err("unlowered Mma");
        assert!(e.contains("tensor"), "{e}");
        // Nothing to do: no change.
        let (mut plain, b) = shader([32, 1, 1]);
        let one = c(&mut plain.func, 1);
        store(&mut plain.func, b, one);
        assert_eq!(run(&mut plain), Ok(None));
        assert_eq!(plain.shared_bytes, 20);
    }
}
