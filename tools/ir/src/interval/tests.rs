//! Hand-built functions: masks, shifts, clamps, casts, wrapping adds, selects and loops.

use super::*;
use crate::ir::{BlockId, Reg, Terminator};

const M32: u64 = u32::MAX as u64;

fn r(lo: u64, hi: u64) -> Range {
    Range { lo, hi }
}

/// A function with one block and an unknown 32-bit input (a register outside SSA).
fn one_block() -> (Function, BlockId, Value) {
    let mut f = Function::new();
    let b = f.add_block(Some(0));
    let x = f.push(b, Op::Get(Reg::gpr(0)), Type::U32, &[]);
    f.blocks[0].term = Terminator::Exit;
    (f, b, x)
}

fn k(f: &mut Function, c: u64) -> Value {
    f.make(Op::Const(c), Type::U32, &[])
}

fn bin(f: &mut Function, b: BlockId, op: Op, x: Value, y: u64) -> Value {
    let y = k(f, y);
    f.push(b, op, Type::U32, &[x, y])
}

/// A phi at the start of block `b` (before its other instructions).
fn phi(f: &mut Function, b: BlockId, ins: &[(BlockId, Value)]) -> Value {
    let p = f.make_phi(Type::U32);
    f.blocks[b.index()].insts.insert(0, p);
    let Op::Phi(k) = f.inst(p).op else {
        unreachable!()
    };
    f.phi_in[k as usize] = ins.to_vec();
    p
}

#[test]
fn masks_shifts_and_extracts_bound_an_unknown_input() {
    let (mut f, b, x) = one_block();
    let m = bin(&mut f, b, Op::And, x, 0x3c);
    let plus = bin(&mut f, b, Op::IAdd, m, 0x10);
    let wide = bin(&mut f, b, Op::Shl, x, 2);
    let byte = bin(&mut f, b, Op::And, x, 0xff);
    let shifted = bin(&mut f, b, Op::Shl, byte, 2);
    let high = bin(&mut f, b, Op::LShr, x, 28);
    let (four, eight) = (k(&mut f, 4), k(&mut f, 8));
    let field = f.push(b, Op::BfeU, Type::U32, &[x, four, eight]);
    let times = bin(&mut f, b, Op::IMul, byte, 16);
    let ored = bin(&mut f, b, Op::Or, byte, 0x100);
    let iv = intervals(&f);
    assert_eq!(iv.range(x), r(0, M32), "an unknown input is unbounded");
    assert_eq!(iv.range(m), r(0, 0x3c));
    assert_eq!(iv.range(plus), r(0x10, 0x4c));
    assert_eq!(iv.range(wide), r(0, M32), "x << 2 may wrap");
    assert_eq!(iv.range(shifted), r(0, 0x3fc));
    assert_eq!(iv.range(high), r(0, 15));
    assert_eq!(iv.range(field), r(0, 0xff));
    assert_eq!(iv.range(times), r(0, 0xff0));
    assert_eq!(iv.range(ored), r(0x100, 0x1ff));
}

#[test]
fn clamps_min_max_and_casts() {
    let (mut f, b, x) = one_block();
    let hi = bin(&mut f, b, Op::SMin, x, 60);
    let clamp = bin(&mut f, b, Op::SMax, hi, 0);
    let umin = bin(&mut f, b, Op::UMin, x, 100);
    let umax = bin(&mut f, b, Op::UMax, umin, 8);
    // SMin alone leaves negative values, which are huge unsigned.
    let wide = f.push(b, Op::UConvert, Type::U64, &[clamp]);
    let back = f.push(b, Op::UConvert, Type::U32, &[wide]);
    let neg = k(&mut f, (-8i32) as u32 as u64);
    let sext = f.push(b, Op::SConvert, Type::U64, &[neg]);
    let cast = f.push(b, Op::Bitcast, Type::U32, &[umin]);
    let iv = intervals(&f);
    assert_eq!(iv.range(hi), r(0, M32));
    assert_eq!(iv.range(clamp), r(0, 60));
    assert_eq!(iv.range(umin), r(0, 100));
    assert_eq!(iv.range(umax), r(8, 100));
    assert_eq!(iv.range(wide), r(0, 60));
    assert_eq!(iv.range(back), r(0, 60));
    assert_eq!(iv.range(sext), r((-8i64) as u64, (-8i64) as u64));
    assert_eq!(iv.range(cast), r(0, 100));
}

#[test]
fn wrapping_adds_and_subtracts() {
    let (mut f, b, x) = one_block();
    let m = bin(&mut f, b, Op::And, x, 0xf0);
    let up = bin(&mut f, b, Op::IAdd, m, 0x10);
    // + (−4) as the lifter writes it: both ends wrap, so the range is exact again.
    let down = bin(&mut f, b, Op::IAdd, up, (-4i32) as u32 as u64);
    // − 4 straight from a range that holds 0: the low end wraps, the high end does not.
    let under = bin(&mut f, b, Op::ISub, m, 4);
    let all_under = bin(&mut f, b, Op::ISub, m, 0x100);
    let iv = intervals(&f);
    assert_eq!(iv.range(up), r(0x10, 0x100));
    assert_eq!(iv.range(down), r(0xc, 0xfc));
    assert_eq!(iv.range(under), r(0, M32));
    assert_eq!(iv.range(all_under), r(M32 - 0xff, M32 - 0xf));
}

#[test]
fn selects_are_unions() {
    let (mut f, b, x) = one_block();
    let c = f.push(b, Op::Get(Reg::pred(0)), Type::Bool, &[]);
    let (a, z) = (k(&mut f, 0x20), k(&mut f, 0x80));
    let s = f.push(b, Op::Select, Type::U32, &[c, a, z]);
    let s2 = f.push(b, Op::Select, Type::U32, &[c, s, x]);
    let iv = intervals(&f);
    assert_eq!(iv.range(s), r(0x20, 0x80));
    assert_eq!(iv.range(s2), r(0, M32));
}

/// entry → head (phi i) → body (next) → head | exit.
fn looped(next: impl FnOnce(&mut Function, BlockId, Value) -> Value) -> (Function, Value, Value) {
    let mut f = Function::new();
    let entry = f.add_block(Some(0));
    let head = f.add_block(Some(8));
    let body = f.add_block(Some(16));
    let exit = f.add_block(Some(24));
    let zero = k(&mut f, 0);
    f.blocks[0].term = Terminator::Jump(head);
    let i = phi(&mut f, head, &[(entry, zero)]);
    let c = f.push(head, Op::Get(Reg::pred(0)), Type::Bool, &[]);
    f.blocks[head.index()].term = Terminator::Branch(c, body, exit);
    let n = next(&mut f, body, i);
    let Op::Phi(pk) = f.inst(i).op else {
        unreachable!()
    };
    f.phi_in[pk as usize].push((body, n));
    f.blocks[body.index()].term = Terminator::Jump(head);
    f.blocks[exit.index()].term = Terminator::Exit;
    (f, i, n)
}

#[test]
fn a_masked_loop_counter_stays_bounded() {
    let (f, i, n) = looped(|f, b, i| {
        let p = bin(f, b, Op::IAdd, i, 4);
        bin(f, b, Op::And, p, 0x3c)
    });
    let iv = intervals(&f);
    assert_eq!(iv.range(i), r(0, 0x3c));
    assert_eq!(iv.range(n), r(0, 0x3c));
}

#[test]
fn a_free_loop_counter_widens_to_unbounded_and_terminates() {
    let (f, i, n) = looped(|f, b, i| bin(f, b, Op::IAdd, i, 4));
    let iv = intervals(&f);
    assert_eq!(iv.range(i), r(0, M32));
    assert_eq!(iv.range(n), r(0, M32));
}

#[test]
fn a_loop_through_a_select_keeps_the_union() {
    let (f, i, n) = looped(|f, b, i| {
        let c = f.push(b, Op::Get(Reg::pred(1)), Type::Bool, &[]);
        let four = k(f, 4);
        f.push(b, Op::Select, Type::U32, &[c, i, four])
    });
    let iv = intervals(&f);
    assert_eq!(iv.range(i), r(0, 4));
    assert_eq!(iv.range(n), r(0, 4));
}

#[test]
fn a_loop_clamped_with_umin_is_bounded_after_widening() {
    let (f, i, _) = looped(|f, b, i| {
        let p = bin(f, b, Op::IAdd, i, 1);
        bin(f, b, Op::UMin, p, 1000)
    });
    let iv = intervals(&f);
    assert_eq!(iv.range(i), r(0, 1000));
}
