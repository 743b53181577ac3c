//! Tests of the `ssa` pass: hand-built functions, and random programs whose stores must be
//! the same before (guest state in variables, run by a small interpreter) and after
//! `local_state`, `ssa`, `const_fold` and `dce`.

use super::*;
use crate::ir::{Block, Space, Width};
use crate::ir::{Reg, RegFile};
use crate::passes::{const_fold, dce, local_state};

fn ops(f: &Function, b: usize) -> Vec<Op> {
    f.blocks[b].insts.iter().map(|&v| f.inst(v).op).collect()
}

fn store(f: &mut Function, b: BlockId, addr: u64, v: Value) {
    let a = f.push(b, Op::Const(addr), Type::U32, &[]);
    f.push(b, Op::Store(Space::Shared, Width::B32), Type::Void, &[a, v]);
}

/// Stores R`n`, read in block `b`, at `addr`.
fn store_reg(f: &mut Function, b: BlockId, addr: u64, n: u8) {
    let r = f.push(b, Op::Get(Reg::gpr(n)), Type::U32, &[]);
    store(f, b, addr, r);
}

/// `R{n} += 1` in block `b`: the sum.
fn increment(f: &mut Function, b: BlockId, n: u8) -> Value {
    let r = f.push(b, Op::Get(Reg::gpr(n)), Type::U32, &[]);
    let one = f.push(b, Op::Const(1), Type::U32, &[]);
    let sum = f.push(b, Op::IAdd, Type::U32, &[r, one]);
    f.push(b, Op::Set(Reg::gpr(n)), Type::Void, &[sum]);
    sum
}

/// The value the (only) store of block `b` writes.
fn stored(f: &Function, b: usize) -> Value {
    let v = f.blocks[b]
        .insts
        .iter()
        .copied()
        .find(|&v| matches!(f.inst(v).op, Op::Store(..)))
        .expect("a store");
    f.inst(v).args[1]
}

fn all_passes(f: &mut Function) {
    run(f);
    verify(f).unwrap_or_else(|e| panic!("after ssa: {e}\n{f}"));
    const_fold::run(f);
    verify(f).unwrap_or_else(|e| panic!("after const_fold: {e}\n{f}"));
    dce::run(f);
    verify(f).unwrap_or_else(|e| panic!("after dce: {e}\n{f}"));
}

#[test]
fn loop_counter_gets_a_phi() {
    // b0: R0 = 0; b1: if R0 < 10 { b2: R0 += 1; goto b1 } else { b3: store R0 }
    let (mut f, [b0, b1, b2, b3]) = Function::with_blocks([0, 8, 16, 24]);
    let z = f.push(b0, Op::Const(0), Type::U32, &[]);
    f.push(b0, Op::Set(Reg::gpr(0)), Type::Void, &[z]);
    f.blocks[0].term = Terminator::Jump(b1);
    let r = f.push(b1, Op::Get(Reg::gpr(0)), Type::U32, &[]);
    let ten = f.push(b1, Op::Const(10), Type::U32, &[]);
    let c = f.push(b1, Op::ULt, Type::Bool, &[r, ten]);
    f.blocks[1].term = Terminator::Branch(c, b2, b3);
    let n = increment(&mut f, b2, 0);
    f.blocks[2].term = Terminator::Jump(b1);
    store_reg(&mut f, b3, 0, 0);
    f.blocks[3].term = Terminator::Exit;
    all_passes(&mut f);
    assert!(f.ssa);
    let phi = f.blocks[1].insts[0];
    assert!(matches!(f.inst(phi).op, Op::Phi(_)), "{f}");
    let mut ins = f.phi_args(phi).to_vec();
    ins.sort();
    assert_eq!(ins.len(), 2);
    assert_eq!(ins[0].0, b0);
    assert_eq!(f.const_of(ins[0].1), Some(0));
    assert_eq!(ins[1], (b2, n));
    assert_eq!(f.inst(n).args[0], phi);
    assert_eq!(f.inst(c).args[0], phi);
    assert_eq!(stored(&f, 3), phi);
    assert!(ops(&f, 0).iter().all(|o| !matches!(
        o,
        Op::Set(Reg {
            file: RegFile::Gpr,
            ..
        })
    )));
}

#[test]
fn if_else_merge_gets_a_phi() {
    let (mut f, b) = Function::with_blocks([0, 8, 16, 24]);
    let p = f.push(b[0], Op::Get(Reg::pred(0)), Type::Bool, &[]);
    f.blocks[0].term = Terminator::Branch(p, b[1], b[2]);
    let five = f.push(b[1], Op::Const(5), Type::U32, &[]);
    f.push(b[1], Op::Set(Reg::gpr(1)), Type::Void, &[five]);
    f.blocks[1].term = Terminator::Jump(b[3]);
    let seven = f.push(b[2], Op::Const(7), Type::U32, &[]);
    f.push(b[2], Op::Set(Reg::gpr(1)), Type::Void, &[seven]);
    f.blocks[2].term = Terminator::Jump(b[3]);
    store_reg(&mut f, b[3], 4, 1);
    f.blocks[3].term = Terminator::Exit;
    all_passes(&mut f);
    let phi = stored(&f, 3);
    let mut ins = f.phi_args(phi).to_vec();
    ins.sort();
    assert_eq!(ins, vec![(b[1], five), (b[2], seven)]);
    // P0 is never written: it reads as false, a constant.
    let Terminator::Branch(c, _, _) = f.blocks[0].term else {
        panic!("branch")
    };
    assert_eq!(f.const_of(c), Some(0));
}

#[test]
fn value_crosses_two_blocks() {
    let (mut f, b) = Function::with_blocks([0, 8, 16]);
    let r3 = f.push(b[0], Op::Get(Reg::gpr(3)), Type::U32, &[]);
    let x = f.push(b[0], Op::IMul, Type::U32, &[r3, r3]);
    f.push(b[0], Op::Set(Reg::gpr(2)), Type::Void, &[x]);
    f.blocks[0].term = Terminator::Jump(b[1]);
    store_reg(&mut f, b[1], 0, 4);
    f.blocks[1].term = Terminator::Jump(b[2]);
    store_reg(&mut f, b[2], 4, 2);
    f.blocks[2].term = Terminator::Exit;
    all_passes(&mut f);
    assert_eq!(stored(&f, 2), x);
    assert_eq!(f.placed_phis(), 0, "{f}");
    // R3 and R4 are never written: reads are 0; 0 * 0 folds.
    assert_eq!(f.const_of(x), Some(0));
}

#[test]
fn trivial_loop_phi_is_removed() {
    // R5 is set before a loop that reads but never writes it: the header's phi would be
    // phi(k, itself), which is trivial.
    let (mut f, b) = Function::with_blocks([0, 8, 16, 24]);
    let k = f.push(b[0], Op::SysVal(crate::ir::Sys::Tid(0)), Type::U32, &[]);
    f.push(b[0], Op::Set(Reg::gpr(5)), Type::Void, &[k]);
    f.blocks[0].term = Terminator::Jump(b[1]);
    store_reg(&mut f, b[1], 0, 5);
    let p = f.push(b[1], Op::Get(Reg::pred(1)), Type::Bool, &[]);
    f.blocks[1].term = Terminator::Branch(p, b[2], b[3]);
    let t = f.push(b[2], Op::Const(1), Type::Bool, &[]);
    let nt = f.push(b[2], Op::Not, Type::Bool, &[t]);
    f.push(b[2], Op::Set(Reg::pred(1)), Type::Void, &[nt]);
    f.blocks[2].term = Terminator::Jump(b[1]);
    f.blocks[3].term = Terminator::Exit;
    all_passes(&mut f);
    assert_eq!(stored(&f, 1), k, "{f}");
    // The predicate's phi (false from the entry, !true from the latch) has equal constant
    // operands and folds away too.
    assert_eq!(f.placed_phis(), 0, "{f}");
}

#[test]
fn dead_cross_block_writes_are_removed() {
    let (mut f, b) = Function::with_blocks([0, 8, 16]);
    let t = f.push(b[0], Op::SysVal(crate::ir::Sys::Tid(0)), Type::U32, &[]);
    let dead = f.push(b[0], Op::IMul, Type::U32, &[t, t]);
    f.push(b[0], Op::Set(Reg::gpr(1)), Type::Void, &[dead]);
    f.push(b[0], Op::Set(Reg::gpr(7)), Type::Void, &[dead]);
    f.blocks[0].term = Terminator::Jump(b[1]);
    let live = f.push(b[1], Op::IAdd, Type::U32, &[t, t]);
    f.push(b[1], Op::Set(Reg::gpr(1)), Type::Void, &[live]);
    f.blocks[1].term = Terminator::Jump(b[2]);
    store_reg(&mut f, b[2], 0, 1);
    f.blocks[2].term = Terminator::Exit;
    all_passes(&mut f);
    assert_eq!(stored(&f, 2), live);
    let placed: Vec<Value> = f.blocks.iter().flat_map(|b| b.insts.clone()).collect();
    assert!(!placed.contains(&dead), "{f}");
    assert!(placed.iter().all(|&v| !matches!(
        f.inst(v).op,
        Op::Set(Reg {
            file: RegFile::Gpr,
            ..
        }) | Op::Get(Reg {
            file: RegFile::Gpr,
            ..
        })
    )));
}

#[test]
fn dynamic_jump_keeps_variables() {
    let (mut f, [b0, b1]) = Function::with_blocks([0, 8]);
    let r = f.push(b0, Op::Get(Reg::gpr(0)), Type::U32, &[]);
    f.push(b0, Op::Set(Reg::gpr(1)), Type::Void, &[r]);
    f.blocks[0].term = Terminator::Dynamic(r);
    store_reg(&mut f, b1, 0, 1);
    f.blocks[1].term = Terminator::Exit;
    all_passes(&mut f);
    assert!(!f.ssa);
    assert_eq!(ops(&f, 0), vec![Op::Get(Reg::gpr(0)), Op::Set(Reg::gpr(1))]);
}

#[test]
fn entry_in_a_loop_moves_behind_a_new_entry() {
    // b0: R0 += 1; store R0; if P0 (never set: false) goto b0 else exit — but make the
    // branch data dependent: loop while R0 < 3.
    let (mut f, [b0, b1]) = Function::with_blocks([0, 8]);
    let n = increment(&mut f, b0, 0);
    store(&mut f, b0, 0, n);
    let three = f.push(b0, Op::Const(3), Type::U32, &[]);
    let c = f.push(b0, Op::ULt, Type::Bool, &[n, three]);
    f.blocks[0].term = Terminator::Branch(c, b0, b1);
    f.blocks[1].term = Terminator::Exit;
    let before = interpret(&f);
    all_passes(&mut f);
    assert_eq!(f.blocks.len(), 3);
    assert_eq!(f.blocks[0].term, Terminator::Jump(BlockId(2)));
    assert!(f.blocks[0].insts.iter().all(|&v| f.const_of(v).is_some()));
    assert_eq!(interpret(&f), before);
    assert_eq!(before.0, vec![(0, 1), (0, 2), (0, 3)]);
}

/// Runs `f` on a small interpreter (registers and predicates start at 0, as the variables of
/// the non-SSA scheme do): the shared-memory stores in order and whether it reached an exit
/// within the step budget.
fn interpret(f: &Function) -> (Vec<(u64, u64)>, bool) {
    let mut val = vec![0u64; f.insts.len()];
    // Registers, then predicates.
    let mut state = [[0u64; 256]; 2];
    let file = |r: Reg| match r.file {
        RegFile::Gpr => 0,
        RegFile::Pred => 1,
        f => panic!("interpreter: {f:?}"),
    };
    let mut out = Vec::new();
    let (mut b, mut from) = (0usize, usize::MAX);
    for _ in 0..400 {
        let blk: &Block = &f.blocks[b];
        // Phis read their operands together, on entry.
        let phis: Vec<(Value, u64)> = blk
            .insts
            .iter()
            .filter(|&&v| matches!(f.inst(v).op, Op::Phi(_)))
            .map(|&v| {
                let a = f
                    .phi_args(v)
                    .iter()
                    .find(|x| x.0.index() == from)
                    .expect("operand")
                    .1;
                (v, f.const_of(a).unwrap_or(val[a.index()]))
            })
            .collect();
        for (v, x) in phis {
            val[v.index()] = x;
        }
        for &v in &blk.insts {
            let i = f.inst(v);
            // Constants have no position: a use in any block reads them.
            let get = |x: Value| f.const_of(x).unwrap_or(val[x.index()]);
            let a: Vec<u64> = i.args().map(get).collect();
            let m = if i.ty == Type::Bool { 1 } else { 0xffff_ffff };
            let r = match i.op {
                Op::Phi(_) => continue,
                Op::Const(c) => c,
                Op::Get(r) => state[file(r)][r.index as usize],
                Op::Set(r) => {
                    state[file(r)][r.index as usize] = a[0];
                    0
                }
                Op::IAdd => a[0].wrapping_add(a[1]),
                Op::IMul => a[0].wrapping_mul(a[1]),
                Op::Xor => a[0] ^ a[1],
                Op::Not => !a[0],
                Op::ULt => (a[0] < a[1]) as u64,
                Op::Select => {
                    if a[0] != 0 {
                        a[1]
                    } else {
                        a[2]
                    }
                }
                Op::SysVal(_) => 7,
                Op::Store(..) => {
                    out.push((a[0], a[1]));
                    0
                }
                o => panic!("interpreter: {o:?}"),
            };
            val[v.index()] = r & m;
        }
        from = b;
        b = match &blk.term {
            Terminator::Jump(t) => t.index(),
            Terminator::Branch(c, t, e) => {
                if f.const_of(*c).unwrap_or(val[c.index()]) != 0 {
                    t.index()
                } else {
                    e.index()
                }
            }
            _ => return (out, true),
        };
    }
    (out, false)
}

/// A small deterministic generator (xorshift).
struct Rng(u64);
impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A random function over R0–R3 and P0–P1 with loops, merges, copies and stores.
fn random_function(rng: &mut Rng) -> Function {
    let mut f = Function::new();
    let n = 2 + rng.next(8) as u32;
    for i in 0..n {
        f.add_block(Some(i * 8));
    }
    for i in 0..n {
        let b = BlockId(i);
        for _ in 0..rng.next(6) {
            let r = rng.next(4) as u8;
            match rng.next(7) {
                5 => {
                    // A copy (the search continues in another slot).
                    let x = f.push(b, Op::Get(Reg::gpr(rng.next(4) as u8)), Type::U32, &[]);
                    f.push(b, Op::Set(Reg::gpr(r)), Type::Void, &[x]);
                }
                6 => {
                    let p = f.push(b, Op::Get(Reg::pred(rng.next(2) as u8)), Type::Bool, &[]);
                    f.push(b, Op::Set(Reg::pred(rng.next(2) as u8)), Type::Void, &[p]);
                }
                0 => {
                    let c = f.push(b, Op::Const(rng.next(4)), Type::U32, &[]);
                    f.push(b, Op::Set(Reg::gpr(r)), Type::Void, &[c]);
                }
                1 => {
                    let x = f.push(b, Op::Get(Reg::gpr(r)), Type::U32, &[]);
                    let y = f.push(b, Op::Get(Reg::gpr(rng.next(4) as u8)), Type::U32, &[]);
                    let s = f.push(b, Op::IAdd, Type::U32, &[x, y]);
                    f.push(b, Op::Set(Reg::gpr(rng.next(4) as u8)), Type::Void, &[s]);
                }
                2 => {
                    let x = f.push(b, Op::Get(Reg::gpr(r)), Type::U32, &[]);
                    let y = f.push(b, Op::Const(1 + rng.next(3)), Type::U32, &[]);
                    let c = f.push(b, Op::ULt, Type::Bool, &[x, y]);
                    f.push(b, Op::Set(Reg::pred(rng.next(2) as u8)), Type::Void, &[c]);
                }
                3 => {
                    let p = f.push(b, Op::Get(Reg::pred(rng.next(2) as u8)), Type::Bool, &[]);
                    let x = f.push(b, Op::Get(Reg::gpr(r)), Type::U32, &[]);
                    let y = f.push(b, Op::Get(Reg::gpr(rng.next(4) as u8)), Type::U32, &[]);
                    let s = f.push(b, Op::Select, Type::U32, &[p, x, y]);
                    f.push(b, Op::Set(Reg::gpr(r)), Type::Void, &[s]);
                }
                _ => {
                    store_reg(&mut f, b, r as u64, r);
                }
            }
        }
        let t = BlockId(rng.next(n as u64) as u32);
        let e = BlockId(rng.next(n as u64) as u32);
        f.blocks[i as usize].term = match rng.next(5) {
            0 => Terminator::Exit,
            1 => Terminator::Jump(t),
            _ => {
                let p = f.push(b, Op::Get(Reg::pred(rng.next(2) as u8)), Type::Bool, &[]);
                Terminator::Branch(p, t, e)
            }
        };
    }
    f
}

#[test]
fn random_programs_store_the_same() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut phis = 0;
    for case in 0..2000 {
        let mut f = random_function(&mut rng);
        let before = interpret(&f);
        let text = f.to_string();
        // The pipeline's order, and with the local pass run first (the same result).
        let mut g = f.clone();
        all_passes(&mut f);
        local_state::run(&mut g);
        all_passes(&mut g);
        assert_eq!(
            interpret(&g),
            interpret(&f),
            "case {case}: local_state first\n{g}"
        );
        let after = interpret(&f);
        phis += f.placed_phis();
        // Runs that hit the step budget stop at different points (a new entry block, fewer
        // blocks): compare what both stored.
        let k = before.0.len().min(after.0.len());
        assert_eq!(before.1, after.1, "case {case}: exit\n{text}\n{f}");
        if before.1 {
            assert_eq!(before.0, after.0, "case {case}\n{text}\n{f}");
        } else {
            assert_eq!(before.0[..k], after.0[..k], "case {case}\n{text}\n{f}");
        }
    }
    assert!(phis > 1000, "random programs made only {phis} phis");
}
