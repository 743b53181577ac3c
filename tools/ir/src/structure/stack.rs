//! Static resolution of the reconvergence / call stack.
//!
//! `SSY`/`PBK`/`PCNT`/`CAL` push constant guest addresses and `SYNC`/`BRK`/`CONT`/`RET` pop
//! them, so in compiler output the stack's contents at every point are known at translation
//! time. This pass walks the graph from the entry carrying the static stack (a list of
//! `(kind, address)` entries) and makes one copy of a block per distinct entry stack — which
//! is exactly inlining a subroutine per call site. `StackPush` disappears, `StackPop`
//! becomes the popped constant, and a `Dynamic` jump on a pop becomes a static `Jump` (or
//! `Exit` when nothing of that kind is on the stack, as the run-time stack does). A
//! `Dynamic` jump that is not a pop (`BRX`/`JMX`) becomes a [`Terminator::Switch`] over the
//! function's [`indirect_targets`](crate::ir::Function::indirect_targets).
//!
//! The function is left untouched (the run-time stack stays the fallback) when a pushed
//! address is not a constant, a pop's target is not a block, an indirect jump has no known
//! targets, the stack grows deeper than the run-time stack (recursion), or copying would
//! grow the function beyond a bound.

use crate::ir::{BlockId, Function, Inst, Op, StackKind, Terminator, Type, Value};
use rustc_hash::FxHashMap as HashMap;

/// Deepest static stack followed (the run-time stack holds 16 entries).
const MAX_DEPTH: usize = 16;

/// An entry of a static stack: its kind and the guest address pushed.
type Entry = (StackKind, u32);

/// The static stacks met, interned as a tree: a stack is its top entry on the stack below
/// it, so equal stacks get the same id and a push or a pop is a step in the tree.
struct Stacks {
    /// Per stack (its id; 0 is the empty stack): the stack below it, its top entry and its
    /// depth.
    nodes: Vec<(u32, Entry, usize)>,
    /// The stack an entry pushed on a stack makes.
    pushed: HashMap<(u32, Entry), u32>,
}

impl Stacks {
    /// The stack `e` pushed on `s` makes; `None` when it is deeper than [`MAX_DEPTH`].
    fn push(&mut self, s: u32, e: Entry) -> Option<u32> {
        let depth = self.nodes[s as usize].2 + 1;
        if depth > MAX_DEPTH {
            return None;
        }
        let next = self.nodes.len() as u32;
        let id = *self.pushed.entry((s, e)).or_insert(next);
        if id == next {
            self.nodes.push((s, e, depth));
        }
        Some(id)
    }

    /// Pops the topmost entry of `kind` from `s` with those above it: the address it held
    /// (`None`: no such entry, and the stack empties, as the run-time stack does) and the
    /// stack left.
    fn pop(&self, s: u32, kind: StackKind) -> (Option<u32>, u32) {
        let mut at = s;
        while at != 0 {
            let (below, (k, addr), _) = self.nodes[at as usize];
            if k == kind {
                return (Some(addr), below);
            }
            at = below;
        }
        (None, 0)
    }
}

/// Runs the pass; see the module documentation.
pub fn run(f: &mut Function) {
    if !resolve_in_place(f) {
        switch_targets(f);
    }
}

/// The fallback when the stack is not static (recursion, too many copies): the run-time stack
/// stays, but every jump's possible targets are still known — a pop of kind K returns an
/// address some `StackPush(K)` pushed (all constants), `BRX` one of the indirect targets — so
/// each `Dynamic` becomes a `Switch` over them (default: exit, as the run-time path does for
/// an unknown address) and the graph stays static and structurable. Leaves the function as
/// it is when a pushed address is not a constant or a target has no block.
pub fn switch_targets(f: &mut Function) {
    if !f
        .blocks
        .iter()
        .any(|b| matches!(b.term, Terminator::Dynamic(_)))
    {
        return;
    }
    let mut by_addr: HashMap<u32, BlockId> = HashMap::default();
    for (i, b) in f.blocks.iter().enumerate() {
        if let Some(a) = b.addr {
            by_addr.entry(a).or_insert(BlockId(i as u32));
        }
    }
    // Addresses pushed per kind, in first-push order.
    let mut pushed: [Vec<u32>; 4] = Default::default();
    for b in &f.blocks {
        for &v in &b.insts {
            let inst = f.inst(v);
            if let Op::StackPush(k) = inst.op {
                let Some(t) = f.const_of(inst.args[0]) else {
                    return;
                };
                let list = &mut pushed[k as usize];
                if !list.contains(&(t as u32)) {
                    list.push(t as u32);
                }
            }
        }
    }
    let cases_of = |addrs: &[u32]| -> Option<Vec<(u32, BlockId)>> {
        addrs
            .iter()
            .map(|&a| by_addr.get(&a).map(|&b| (a, b)))
            .collect()
    };
    let mut new_terms = Vec::new();
    for (i, b) in f.blocks.iter().enumerate() {
        let Terminator::Dynamic(v) = b.term else {
            continue;
        };
        let addrs: &[u32] = match f.inst(v).op {
            Op::StackPop(k) if b.insts.contains(&v) => &pushed[k as usize],
            _ => &f.indirect_targets,
        };
        if addrs.is_empty() && !matches!(f.inst(v).op, Op::StackPop(_)) {
            return;
        }
        let Some(cases) = cases_of(addrs) else {
            return;
        };
        new_terms.push((i, v, cases));
    }
    let exit = f.add_block(None);
    f.blocks[exit.index()].term = Terminator::Exit;
    for (i, v, cases) in new_terms {
        f.blocks[i].term = Terminator::Switch(v, cases, exit);
    }
}

/// Whether the function uses the run-time stack or dynamic jumps at all: a `StackPop` ends
/// its block in a `Dynamic` jump; pushes are looked for where the code may have some
/// ([`Function::stack_pushes`]).
fn has_dynamic(f: &Function) -> bool {
    f.blocks
        .iter()
        .any(|b| matches!(b.term, Terminator::Dynamic(_)))
        || (f.stack_pushes
            && f.blocks.iter().any(|b| {
                b.insts
                    .iter()
                    .any(|&v| matches!(f.inst(v).op, Op::StackPush(_)))
            }))
}

/// The statically resolved function, or `None` when the analysis does not apply.
pub fn resolve(f: &Function) -> Option<Function> {
    let mut g = f.clone();
    resolve_in_place(&mut g).then_some(g)
}

/// Resolves `f` in place: its blocks are replaced by the copies, its instructions kept (the
/// first copy of a block keeps its values, later copies append fresh ones). Returns `false`,
/// with `f` as it was, when the analysis does not apply.
fn resolve_in_place(f: &mut Function) -> bool {
    if !has_dynamic(f) || f.blocks.is_empty() {
        return false;
    }
    let n_insts = f.insts.len();
    // (Room for a copy of each block and an exit.)
    let room = Vec::with_capacity(f.blocks.len() + 1);
    let blocks = std::mem::replace(&mut f.blocks, room);
    // Pops the first copies replaced by constants, as they were (later copies and a
    // failed analysis need them).
    let mut saved: HashMap<u32, Inst> = HashMap::default();
    if copy_blocks(f, &blocks, &mut saved).is_some() {
        // The copies are new blocks: phi operands naming the old ones do not carry over (the
        // pass runs before `ssa`, so there are none).
        f.phi_in = Vec::new();
        f.ssa = false;
        return true;
    }
    for (v, inst) in saved {
        f.insts[v as usize] = inst;
    }
    f.insts.truncate(n_insts);
    f.blocks = blocks;
    false
}

/// The instruction `v` as the original function had it.
fn original(g: &Function, saved: &HashMap<u32, Inst>, v: Value) -> Inst {
    let i = g.insts[v.index()];
    match i.op {
        Op::Const(_) => saved.get(&v.0).copied().unwrap_or(i),
        _ => i,
    }
}

/// Builds `g`'s blocks as copies of `blocks` per static stack (`g.blocks` empty, `g.insts`
/// the original instructions); None when the analysis does not apply.
fn copy_blocks(
    g: &mut Function,
    blocks: &[crate::ir::Block],
    saved: &mut HashMap<u32, Inst>,
) -> Option<()> {
    let mut by_addr: HashMap<u32, BlockId> =
        HashMap::with_capacity_and_hasher(blocks.len(), Default::default());
    for (i, b) in blocks.iter().enumerate() {
        if let Some(a) = b.addr {
            by_addr.entry(a).or_insert(BlockId(i as u32));
        }
    }
    let limit = blocks.len() * 4 + 64;
    let indirect_targets = g.indirect_targets.clone();
    let mut stacks = Stacks {
        nodes: vec![(0, (StackKind::Sync, 0), 0)],
        pushed: HashMap::default(),
    };
    // The copies of each original block: the first one made with the stack id it is for,
    // any others by block and stack id (most blocks are copied once).
    let mut first_copy: Vec<Option<(u32, BlockId)>> = vec![None; blocks.len()];
    let mut other_copies: HashMap<(BlockId, u32), BlockId> = HashMap::default();
    let mut copied = vec![false; blocks.len()];
    // Copies to fill: original block, stack id on entry, copy.
    let mut work: Vec<(BlockId, u32, BlockId)> = Vec::new();
    let mut exit_block: Option<BlockId> = None;
    let mut get = |g: &mut Function,
                   work: &mut Vec<(BlockId, u32, BlockId)>,
                   ob: BlockId,
                   st: u32|
     -> Option<BlockId> {
        let first = &mut first_copy[ob.index()];
        match *first {
            Some((s, nb)) if s == st => return Some(nb),
            Some(_) => {
                if let Some(&nb) = other_copies.get(&(ob, st)) {
                    return Some(nb);
                }
            }
            None => {}
        }
        if g.blocks.len() >= limit {
            return None;
        }
        let nb = g.add_block(blocks[ob.index()].addr);
        if first.is_none() {
            *first = Some((st, nb));
        } else {
            other_copies.insert((ob, st), nb);
        }
        work.push((ob, st, nb));
        Some(nb)
    };
    get(g, &mut work, BlockId(0), 0)?;
    let mut remap: Vec<Value> = vec![Value::NONE; g.insts.len()];
    let mut pops: Vec<(Value, Option<u32>)> = Vec::new();
    while let Some((ob, mut st, nb)) = work.pop() {
        let src = &blocks[ob.index()];
        let fresh = std::mem::replace(&mut copied[ob.index()], true);
        pops.clear();
        // The first copy keeps the instructions up to the first push or pop as they are.
        let kept = if fresh {
            0
        } else {
            src.insts
                .iter()
                .position(|&v| matches!(g.inst(v).op, Op::StackPush(_) | Op::StackPop(_)))
                .unwrap_or(src.insts.len())
        };
        let mut insts = Vec::with_capacity(src.insts.len());
        insts.extend_from_slice(&src.insts[..kept]);
        for &v in &src.insts[kept..] {
            if !fresh && !matches!(g.inst(v).op, Op::StackPush(_) | Op::StackPop(_)) {
                insts.push(v);
                continue;
            }
            let mut inst: Inst = original(g, saved, v);
            if fresh {
                for a in inst.args.iter_mut() {
                    if a.is_some() && remap[a.index()].is_some() {
                        *a = remap[a.index()];
                    }
                }
            }
            match inst.op {
                Op::StackPush(kind) => {
                    let t = g.const_of(inst.args[0])? as u32;
                    st = stacks.push(st, (kind, t))?;
                    continue;
                }
                Op::StackPop(kind) => {
                    let (target, left) = stacks.pop(st, kind);
                    st = left;
                    inst = Inst {
                        op: Op::Const(target.unwrap_or(u32::MAX) as u64),
                        ty: Type::U32,
                        args: [Value::NONE; 4],
                    };
                    let nv = place(g, v, inst, fresh, &mut remap, saved);
                    pops.push((nv, target));
                    insts.push(nv);
                    continue;
                }
                _ => {}
            }
            let nv = place(g, v, inst, fresh, &mut remap, saved);
            insts.push(nv);
        }
        let map = |v: Value| {
            if fresh && v.is_some() && remap[v.index()].is_some() {
                remap[v.index()]
            } else {
                v
            }
        };
        let term = match &src.term {
            Terminator::Jump(t) => Terminator::Jump(get(g, &mut work, *t, st)?),
            Terminator::Branch(c, t, e) => {
                let t = get(g, &mut work, *t, st)?;
                let e = get(g, &mut work, *e, st)?;
                Terminator::Branch(map(*c), t, e)
            }
            Terminator::Switch(v, cases, d) => {
                let mut nc = Vec::with_capacity(cases.len());
                for &(k, t) in cases {
                    nc.push((k, get(g, &mut work, t, st)?));
                }
                let d = get(g, &mut work, *d, st)?;
                Terminator::Switch(map(*v), nc, d)
            }
            Terminator::Dynamic(v) => {
                let v = map(*v);
                match pops.iter().find(|p| p.0 == v).map(|p| p.1) {
                    Some(None) => Terminator::Exit,
                    Some(Some(t)) => {
                        let tb = *by_addr.get(&t)?;
                        Terminator::Jump(get(g, &mut work, tb, st)?)
                    }
                    None => {
                        if indirect_targets.is_empty() {
                            return None;
                        }
                        let mut cases: Vec<(u32, BlockId)> = Vec::new();
                        for &t in &indirect_targets {
                            if cases.iter().any(|c| c.0 == t) {
                                continue;
                            }
                            let tb = *by_addr.get(&t)?;
                            cases.push((t, get(g, &mut work, tb, st)?));
                        }
                        let d = match exit_block {
                            Some(d) => d,
                            None => {
                                let d = g.add_block(None);
                                g.blocks[d.index()].term = Terminator::Exit;
                                exit_block = Some(d);
                                d
                            }
                        };
                        Terminator::Switch(v, cases, d)
                    }
                }
            }
            t => t.clone(),
        };
        if fresh {
            for &v in &src.insts {
                remap[v.index()] = Value::NONE;
            }
        }
        let blk = &mut g.blocks[nb.index()];
        blk.insts = insts;
        blk.term = term;
    }
    Some(())
}

/// Places (a copy of) instruction `v` in the new function.
fn place(
    g: &mut Function,
    v: Value,
    inst: Inst,
    fresh: bool,
    remap: &mut [Value],
    saved: &mut HashMap<u32, Inst>,
) -> Value {
    if fresh {
        let nv = g.make(inst.op, inst.ty, &[]);
        g.insts[nv.index()] = inst;
        remap[v.index()] = nv;
        nv
    } else {
        let old = std::mem::replace(&mut g.insts[v.index()], inst);
        saved.entry(v.0).or_insert(old);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Reg;

    /// SSY / CAL: pushes the address `to` on the `kind` stack in block `b`.
    fn push(f: &mut Function, b: BlockId, kind: StackKind, to: u32) {
        let t = f.push(b, Op::Const(to as u64), Type::U32, &[]);
        f.push(b, Op::StackPush(kind), Type::Void, &[t]);
        f.stack_pushes = true;
    }

    /// SYNC / RET: block `b` ends in a jump to the address popped from the `kind` stack,
    /// which it returns.
    fn pop_jump(f: &mut Function, b: BlockId, kind: StackKind) -> Value {
        let pop = f.push(b, Op::StackPop(kind), Type::U32, &[]);
        f.blocks[b.index()].term = Terminator::Dynamic(pop);
        pop
    }

    /// SSY 0x30; @P0 SYNC; …; SYNC; 0x30: EXIT — and a CAL/RET called twice.
    #[test]
    fn ssy_sync_and_calls_become_static() {
        let (mut f, [b0, b1, b2, sub, r1, _]) =
            Function::with_blocks([0x8, 0x10, 0x30, 0x100, 0x40, 0x48]);
        push(&mut f, b0, StackKind::Sync, 0x30);
        let p = f.push(b0, Op::Get(Reg::pred(0)), Type::Bool, &[]);
        f.blocks[0].term = Terminator::Branch(p, b1, b1);
        pop_jump(&mut f, b1, StackKind::Sync);
        push(&mut f, b2, StackKind::Call, 0x40);
        f.blocks[2].term = Terminator::Jump(sub);
        pop_jump(&mut f, sub, StackKind::Call);
        push(&mut f, r1, StackKind::Call, 0x48);
        f.blocks[4].term = Terminator::Jump(sub);
        f.blocks[5].term = Terminator::Exit;
        let g = resolve(&f).expect("static");
        // b0 b1 b2 sub r1 sub' r2: the subroutine is copied per call site.
        assert_eq!(g.blocks.len(), 7, "{g}");
        for b in &g.blocks {
            assert!(!matches!(b.term, Terminator::Dynamic(_)), "{g}");
            for &v in &b.insts {
                assert!(!matches!(g.inst(v).op, Op::StackPush(_) | Op::StackPop(_)));
            }
        }
    }

    /// Unbounded recursion keeps the run-time stack (then `switch_targets` makes its jumps
    /// static: tested below).
    #[test]
    fn recursion_is_left_dynamic() {
        let (mut f, [b0, b1]) = Function::with_blocks([0x8, 0x10]);
        push(&mut f, b0, StackKind::Call, 0x10);
        f.blocks[0].term = Terminator::Jump(b0);
        pop_jump(&mut f, b1, StackKind::Call);
        assert!(resolve(&f).is_none());
    }

    /// A BRX with known targets becomes a switch.
    #[test]
    fn indirect_jump_becomes_switch() {
        let (mut f, [b0, _, _]) = Function::with_blocks([0x8, 0x28, 0x30]);
        let v = f.push(b0, Op::Get(Reg::gpr(1)), Type::U32, &[]);
        f.blocks[0].term = Terminator::Dynamic(v);
        f.blocks[1].term = Terminator::Exit;
        f.blocks[2].term = Terminator::Exit;
        f.indirect_targets = vec![0x28, 0x30];
        let g = resolve(&f).expect("static");
        match &g.blocks[0].term {
            Terminator::Switch(_, cases, _) => assert_eq!(cases.len(), 2),
            t => panic!("{t:?}"),
        }
    }

    /// Recursion: the run-time stack stays, the returns become switches over the pushed
    /// return addresses.
    #[test]
    fn recursion_keeps_the_stack_with_static_targets() {
        let (mut f, [b0, b1, b2]) = Function::with_blocks([0x8, 0x10, 0x18]);
        push(&mut f, b0, StackKind::Call, 0x18);
        let p = f.push(b0, Op::Get(Reg::pred(0)), Type::Bool, &[]);
        f.blocks[0].term = Terminator::Branch(p, b0, b1);
        let pop = pop_jump(&mut f, b1, StackKind::Call);
        f.blocks[2].term = Terminator::Exit;
        run(&mut f);
        match &f.blocks[1].term {
            Terminator::Switch(v, cases, _) => {
                assert_eq!(*v, pop);
                assert_eq!(cases, &vec![(0x18, b2)]);
            }
            t => panic!("{t:?}"),
        }
        assert!(crate::structure::structurize(&f).is_ok());
    }
}
