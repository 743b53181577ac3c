//! The uniformity analysis and the barrier rule on hand-built SSA functions.

use super::analyse;
use super::barrier::exit_divergent_barrier;
use super::postdom::PostDom;
use crate::ir::{BlockId, Function, Op, Sys, Terminator, Type, Value};

/// A function in SSA form with `n` empty blocks.
fn blocks(n: usize) -> (Function, Vec<BlockId>) {
    let mut f = Function::new();
    let b = (0..n).map(|i| f.add_block(Some(8 * i as u32))).collect();
    f.ssa = true;
    (f, b)
}

fn konst(f: &mut Function, c: u64) -> Value {
    f.make(Op::Const(c), Type::U32, &[])
}

/// `tid.x` in block `b`.
fn tid(f: &mut Function, b: BlockId) -> Value {
    f.push(b, Op::SysVal(Sys::Tid(0)), Type::U32, &[])
}

/// A word of constant bank 0 at a constant offset, in block `b`.
fn cbuf(f: &mut Function, b: BlockId, off: u64) -> Value {
    let o = konst(f, off);
    f.push(b, Op::LoadConst(0), Type::U32, &[o])
}

fn barrier(f: &mut Function, b: BlockId) {
    f.push(b, Op::Barrier, Type::Void, &[]);
    f.barrier_ops = true;
}

fn branch(f: &mut Function, b: BlockId, c: Value, t: BlockId, e: BlockId) {
    f.blocks[b.index()].term = Terminator::Branch(c, t, e);
}

fn exit(f: &mut Function, b: BlockId) {
    f.blocks[b.index()].term = Terminator::Exit;
}

fn jump(f: &mut Function, b: BlockId, t: BlockId) {
    f.blocks[b.index()].term = Terminator::Jump(t);
}

/// A phi at the start of block `b` (the block must have no instructions yet).
fn phi(f: &mut Function, b: BlockId, ins: &[(BlockId, Value)]) -> Value {
    let p = f.make_phi(Type::U32);
    f.blocks[b.index()].insts.push(p);
    *f.phi_args_mut(p).expect("a phi") = ins.to_vec();
    p
}

/// `tid.x < k ? t : e` from block `b`: its `tid.x`.
fn tid_below(f: &mut Function, b: BlockId, k: u64, t: BlockId, e: BlockId) -> Value {
    let x = tid(f, b);
    let k = konst(f, k);
    let c = f.push(b, Op::ULt, Type::Bool, &[x, k]);
    branch(f, b, c, t, e);
    x
}

/// Stores `v` to shared memory at address 0 in block `b`.
fn store_shared(f: &mut Function, b: BlockId, v: Value) {
    let a = konst(f, 0);
    let st = Op::Store(crate::ir::Space::Shared, crate::ir::Width::B32);
    f.push(b, st, Type::Void, &[a, v]);
}

/// (a) `if (tid >= n) return; barrier` — invocations that leave never reach the barrier.
#[test]
fn barrier_after_divergent_return_is_divergent() {
    let (mut f, b) = blocks(3);
    let t = tid(&mut f, b[0]);
    let n = cbuf(&mut f, b[0], 0x140);
    let c = f.push(b[0], Op::UGe, Type::Bool, &[t, n]);
    branch(&mut f, b[0], c, b[1], b[2]);
    exit(&mut f, b[1]);
    barrier(&mut f, b[2]);
    exit(&mut f, b[2]);
    assert_eq!(exit_divergent_barrier(&f), Some(b[2]));
}

/// (b) `if (cbuf_word == 0) return; barrier` — the whole workgroup goes one way.
#[test]
fn barrier_after_uniform_return_is_not_divergent() {
    let (mut f, b) = blocks(3);
    let w = cbuf(&mut f, b[0], 0x140);
    let z = konst(&mut f, 0);
    let c = f.push(b[0], Op::IEq, Type::Bool, &[w, z]);
    branch(&mut f, b[0], c, b[1], b[2]);
    exit(&mut f, b[1]);
    barrier(&mut f, b[2]);
    exit(&mut f, b[2]);
    assert_eq!(exit_divergent_barrier(&f), None);
    // The same graph with registers in variables knows nothing: conservative.
    f.ssa = false;
    assert_eq!(exit_divergent_barrier(&f), Some(b[2]));
}

/// (c) A barrier, then a divergent return, and no barrier after it.
#[test]
fn divergent_return_after_the_last_barrier_is_fine() {
    let (mut f, b) = blocks(3);
    barrier(&mut f, b[0]);
    let t = tid_below(&mut f, b[0], 7, b[1], b[2]);
    exit(&mut f, b[1]);
    store_shared(&mut f, b[2], t);
    exit(&mut f, b[2]);
    assert_eq!(exit_divergent_barrier(&f), None);
}

/// (d) A loop whose body has a barrier and a divergent `return`: invocations that left stop
/// coming to the barrier in later iterations.
#[test]
fn loop_with_barrier_and_divergent_return_is_divergent() {
    // b0 -> b1 (header: i) -> b2 (barrier; tid >= i ? b3 : b4); b3 exit;
    // b4: i + 1 < 8 ? b1 : b5; b5 exit.
    let (mut f, b) = blocks(6);
    let t = tid(&mut f, b[0]);
    jump(&mut f, b[0], b[1]);
    let zero = konst(&mut f, 0);
    let i = phi(&mut f, b[1], &[(b[0], zero)]);
    jump(&mut f, b[1], b[2]);
    barrier(&mut f, b[2]);
    let c = f.push(b[2], Op::UGe, Type::Bool, &[t, i]);
    branch(&mut f, b[2], c, b[3], b[4]);
    exit(&mut f, b[3]);
    let one = konst(&mut f, 1);
    let i1 = f.push(b[4], Op::IAdd, Type::U32, &[i, one]);
    let eight = konst(&mut f, 8);
    let more = f.push(b[4], Op::ULt, Type::Bool, &[i1, eight]);
    branch(&mut f, b[4], more, b[1], b[5]);
    exit(&mut f, b[5]);
    f.phi_args_mut(i).expect("a phi").push((b[4], i1));
    assert_eq!(exit_divergent_barrier(&f), Some(b[2]));
    // The loop counter differs by the iteration an invocation left in: not uniform.
    let pd = PostDom::new(&f);
    let u = analyse(&f, &pd);
    assert!(!u.uniform[i.index()]);
    assert!(u.divergent[b[2].index()] && u.divergent[b[4].index()]);
}

/// A uniform loop around a divergent `if` and a barrier after its merge: every invocation
/// reaches the barrier in every iteration, and the loop stays uniform.
#[test]
fn barrier_after_a_divergent_if_in_a_uniform_loop_is_fine() {
    // b0 -> b1 (header: i; barrier; tid < i ? b2 : b3); b2 -> b3;
    // b3 (barrier; i + 1 < cbuf ? b1 : b4); b4 exit.
    let (mut f, b) = blocks(5);
    let t = tid(&mut f, b[0]);
    let n = cbuf(&mut f, b[0], 0x144);
    jump(&mut f, b[0], b[1]);
    let zero = konst(&mut f, 0);
    let i = phi(&mut f, b[1], &[(b[0], zero)]);
    let c = f.push(b[1], Op::ULt, Type::Bool, &[t, i]);
    branch(&mut f, b[1], c, b[2], b[3]);
    store_shared(&mut f, b[2], t);
    jump(&mut f, b[2], b[3]);
    barrier(&mut f, b[3]);
    let one = konst(&mut f, 1);
    let i1 = f.push(b[3], Op::IAdd, Type::U32, &[i, one]);
    let more = f.push(b[3], Op::ULt, Type::Bool, &[i1, n]);
    branch(&mut f, b[3], more, b[1], b[4]);
    exit(&mut f, b[4]);
    f.phi_args_mut(i).expect("a phi").push((b[3], i1));
    assert_eq!(exit_divergent_barrier(&f), None);
    let pd = PostDom::new(&f);
    let u = analyse(&f, &pd);
    assert!(u.uniform[i.index()] && u.uniform[more.index()]);
    assert!(u.divergent[b[1].index()] && !u.divergent[b[3].index()]);
}

/// A barrier inside a divergent `if` (some invocations skip it and end) is flagged too.
#[test]
fn barrier_inside_a_divergent_if_is_divergent() {
    let (mut f, b) = blocks(3);
    tid_below(&mut f, b[0], 3, b[1], b[2]);
    barrier(&mut f, b[1]);
    jump(&mut f, b[1], b[2]);
    exit(&mut f, b[2]);
    assert_eq!(exit_divergent_barrier(&f), Some(b[1]));
}

/// Phis at the merge of a divergent branch are not uniform; at the merge of a uniform one,
/// with uniform operands, they are. Control dependence reaches branches on them.
#[test]
fn phis_depend_on_the_branch_they_merge() {
    // b0: tid < 5 ? b1 : b2; b1 -> b3; b2 -> b3; b3: x = phi(1, 2); w == 0 ? b4 : b5;
    // b4 -> b6; b5 -> b6; b6: y = phi(1, 2); x == 1 ? b7 : b7; b7 exit.
    let (mut f, b) = blocks(8);
    tid_below(&mut f, b[0], 5, b[1], b[2]);
    jump(&mut f, b[1], b[3]);
    jump(&mut f, b[2], b[3]);
    let (one, two) = (konst(&mut f, 1), konst(&mut f, 2));
    let x = phi(&mut f, b[3], &[(b[1], one), (b[2], two)]);
    let w = cbuf(&mut f, b[3], 0);
    let z = konst(&mut f, 0);
    let c2 = f.push(b[3], Op::IEq, Type::Bool, &[w, z]);
    branch(&mut f, b[3], c2, b[4], b[5]);
    jump(&mut f, b[4], b[6]);
    jump(&mut f, b[5], b[6]);
    let y = phi(&mut f, b[6], &[(b[4], one), (b[5], two)]);
    let c3 = f.push(b[6], Op::IEq, Type::Bool, &[x, one]);
    branch(&mut f, b[6], c3, b[7], b[7]);
    exit(&mut f, b[7]);
    let pd = PostDom::new(&f);
    assert_eq!(pd.ipdom(b[0]), Some(b[3]));
    assert!(pd.dominates(b[7], b[0]) && !pd.dominates(b[1], b[0]));
    let u = analyse(&f, &pd);
    assert!(!u.uniform[x.index()] && u.uniform[y.index()] && u.uniform[c2.index()]);
    assert!(u.divergent[b[0].index()] && !u.divergent[b[3].index()]);
    assert!(u.divergent[b[6].index()]);
}

/// No barrier: nothing to decide, whatever the branches.
#[test]
fn no_barrier_no_answer() {
    let (mut f, b) = blocks(3);
    tid_below(&mut f, b[0], 3, b[1], b[2]);
    exit(&mut f, b[1]);
    exit(&mut f, b[2]);
    assert_eq!(exit_divergent_barrier(&f), None);
}
