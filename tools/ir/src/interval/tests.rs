//! Hand-built functions: masks, shifts, clamps, casts, wrapping adds, selects and loops.

use super::*;
use crate::ir::{BlockId, Reg, Terminator};

const M32: u64 = u32::MAX as u64;

fn r(lo: u64, hi: u64) -> Range {
    Range { lo, hi }
}

/// A function with one block and an unknown 32-bit input (a register outside SSA).
pub(crate) fn one_block() -> (Function, BlockId, Value) {
    let mut f = Function::new();
    let b = f.add_block(Some(0));
    let x = f.push(b, Op::Get(Reg::gpr(0)), Type::U32, &[]);
    f.blocks[0].term = Terminator::Exit;
    (f, b, x)
}

fn k(f: &mut Function, c: u64) -> Value {
    f.make(Op::Const(c), Type::U32, &[])
}

/// `op(x, y)` for a constant `y`, appended to block `b`.
pub(crate) fn bin(f: &mut Function, b: BlockId, op: Op, x: Value, y: u64) -> Value {
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

/// An operand of a [`straight`] row: the unknown input, or an earlier row's value.
#[derive(Clone, Copy)]
enum Src {
    X,
    Row(usize),
}

/// One block over an unknown input `x`: each row is `op` (result type `ty`) of its operand
/// and, for a binary op, the constant; asserts each row's range `[lo, hi]`.
fn straight(rows: &[(Op, Type, Src, u64, u64, u64)]) {
    let (mut f, b, x) = one_block();
    let mut vals = Vec::new();
    for &(op, ty, src, c, _, _) in rows {
        let a = match src {
            Src::X => x,
            Src::Row(i) => vals[i],
        };
        let v = if matches!(op, Op::UConvert | Op::SConvert | Op::Bitcast) {
            f.push(b, op, ty, &[a])
        } else {
            let c = f.make(Op::Const(c), f.ty(a), &[]);
            f.push(b, op, ty, &[a, c])
        };
        vals.push(v);
    }
    let iv = intervals(&f);
    assert_eq!(iv.range(x), r(0, M32), "an unknown input is unbounded");
    for (k, &(op, _, _, _, lo, hi)) in rows.iter().enumerate() {
        assert_eq!(iv.range(vals[k]), r(lo, hi), "row {k}: {op:?}");
    }
}

#[test]
fn masks_shifts_clamps_casts_and_wrapping_arithmetic() {
    use Src::{Row, X};
    const U: Type = Type::U32;
    const MINUS_4: u64 = (-4i32) as u32 as u64;
    straight(&[
        // 0..: & K, then + K.
        (Op::And, U, X, 0x3c, 0, 0x3c),
        (Op::IAdd, U, Row(0), 0x10, 0x10, 0x4c),
        // 2..: x << 2 may wrap; (x & 0xff) << 2 may not; x >> 28; (x & 0xff) * 16 and | 0x100.
        (Op::Shl, U, X, 2, 0, M32),
        (Op::And, U, X, 0xff, 0, 0xff),
        (Op::Shl, U, Row(3), 2, 0, 0x3fc),
        (Op::LShr, U, X, 28, 0, 15),
        (Op::IMul, U, Row(3), 16, 0, 0xff0),
        (Op::Or, U, Row(3), 0x100, 0x100, 0x1ff),
        // 8..: smin alone leaves negative values (huge unsigned); smax(smin(x, 60), 0) is
        // a clamp; umin / umax.
        (Op::SMin, U, X, 60, 0, M32),
        (Op::SMax, U, Row(8), 0, 0, 60),
        (Op::UMin, U, X, 100, 0, 100),
        (Op::UMax, U, Row(10), 8, 8, 100),
        // 12..: casts keep the range.
        (Op::UConvert, Type::U64, Row(9), 0, 0, 60),
        (Op::UConvert, U, Row(12), 0, 0, 60),
        (Op::Bitcast, U, Row(10), 0, 0, 100),
        // 15..: + (−4) as the lifter writes it wraps at both ends: exact again; − 4 from a
        // range that holds 0 wraps at one end only; − 0x100 from [0, 0xf0] at both.
        (Op::And, U, X, 0xf0, 0, 0xf0),
        (Op::IAdd, U, Row(15), 0x10, 0x10, 0x100),
        (Op::IAdd, U, Row(16), MINUS_4, 0xc, 0xfc),
        (Op::ISub, U, Row(15), 4, 0, M32),
        (Op::ISub, U, Row(15), 0x100, M32 - 0xff, M32 - 0xf),
    ]);
}

#[test]
fn extracts_and_sign_extension() {
    let (mut f, b, x) = one_block();
    let (four, eight) = (k(&mut f, 4), k(&mut f, 8));
    let field = f.push(b, Op::BfeU, Type::U32, &[x, four, eight]);
    let neg = k(&mut f, (-8i32) as u32 as u64);
    let sext = f.push(b, Op::SConvert, Type::U64, &[neg]);
    let iv = intervals(&f);
    assert_eq!(iv.range(field), r(0, 0xff));
    assert_eq!(iv.range(sext), r((-8i64) as u64, (-8i64) as u64));
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

/// The next value of a loop counter `i`, appended to the loop body `b`.
type Next = fn(&mut Function, BlockId, Value) -> Value;

#[test]
fn loop_counters_widen_and_narrow() {
    let masked: Next = |f, b, i| {
        let p = bin(f, b, Op::IAdd, i, 4);
        bin(f, b, Op::And, p, 0x3c)
    };
    let free: Next = |f, b, i| bin(f, b, Op::IAdd, i, 4);
    let select: Next = |f, b, i| {
        let c = f.push(b, Op::Get(Reg::pred(1)), Type::Bool, &[]);
        let four = k(f, 4);
        f.push(b, Op::Select, Type::U32, &[c, i, four])
    };
    let clamped: Next = |f, b, i| {
        let p = bin(f, b, Op::IAdd, i, 1);
        bin(f, b, Op::UMin, p, 1000)
    };
    // (the counter i = phi(0, next), next): a mask keeps both bounded; a free counter
    // widens to unbounded (and the solver ends); a select keeps the union; umin bounds the
    // widened counter again when narrowing.
    for (name, next, want_i, want_next) in [
        ("i = (i + 4) & 0x3c", masked, r(0, 0x3c), r(0, 0x3c)),
        ("i = i + 4", free, r(0, M32), r(0, M32)),
        ("i = p ? i : 4", select, r(0, 4), r(0, 4)),
        ("i = umin(i + 1, 1000)", clamped, r(0, 1000), r(1, 1000)),
    ] {
        let (f, i, n) = looped(next);
        let iv = intervals(&f);
        assert_eq!((iv.range(i), iv.range(n)), (want_i, want_next), "{name}");
    }
}
