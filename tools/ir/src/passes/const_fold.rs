//! Constant folding and algebraic identities (`x + 0`, `x & ~0`, `select(true, a, b)`, cast
//! round trips, …) and copy propagation, across blocks: blocks are visited in reverse
//! postorder (so a value is folded before the uses it dominates), a replaced value is replaced
//! in every use, and a phi whose operands are all one value, or constants of equal bits,
//! becomes that value.

use crate::ir::{Function, Op, Type, Value};

fn mask(ty: Type) -> u64 {
    match ty {
        Type::Bool => 1,
        Type::U32 | Type::F32 => 0xffff_ffff,
        Type::F16 => 0xffff,
        _ => u64::MAX,
    }
}

fn sext(x: u64, ty: Type) -> i64 {
    match ty {
        Type::U32 => x as u32 as i32 as i64,
        _ => x as i64,
    }
}

/// Folds `op` over constant integer arguments of type `at`, giving the result bits.
pub(crate) fn fold(op: Op, at: Type, rt: Type, a: &[u64]) -> Option<u64> {
    let w = at.bits() as u64;
    let m = mask(at);
    let r = match (op, a) {
        (Op::IAdd, [x, y]) => x.wrapping_add(*y),
        (Op::AddCarry, [x, y]) => {
            let s = (x & m) as u128 + (y & m) as u128;
            (s >> w) as u64 & 1
        }
        (Op::ISub, [x, y]) => x.wrapping_sub(*y),
        (Op::IMul, [x, y]) => x.wrapping_mul(*y),
        (Op::INeg, [x]) => x.wrapping_neg(),
        (Op::And, [x, y]) => x & y,
        (Op::Or, [x, y]) => x | y,
        (Op::Xor, [x, y]) => x ^ y,
        (Op::Not, [x]) => !x,
        (Op::Shl, [x, y]) if *y < w => x << y,
        (Op::LShr, [x, y]) if *y < w => (x & m) >> y,
        (Op::AShr, [x, y]) if *y < w => (sext(*x, at) >> y) as u64,
        (Op::IEq, [x, y]) => (x & m == y & m) as u64,
        (Op::INe, [x, y]) => (x & m != y & m) as u64,
        (Op::ULt, [x, y]) => ((x & m) < (y & m)) as u64,
        (Op::ULe, [x, y]) => ((x & m) <= (y & m)) as u64,
        (Op::UGt, [x, y]) => ((x & m) > (y & m)) as u64,
        (Op::UGe, [x, y]) => ((x & m) >= (y & m)) as u64,
        (Op::SLt, [x, y]) => (sext(*x, at) < sext(*y, at)) as u64,
        (Op::SLe, [x, y]) => (sext(*x, at) <= sext(*y, at)) as u64,
        (Op::SGt, [x, y]) => (sext(*x, at) > sext(*y, at)) as u64,
        (Op::SGe, [x, y]) => (sext(*x, at) >= sext(*y, at)) as u64,
        (Op::UConvert, [x]) => x & m,
        (Op::SConvert, [x]) => sext(*x, at) as u64,
        (Op::Pack64, [lo, hi]) => (lo & 0xffff_ffff) | (hi << 32),
        (Op::Hi32, [x]) => x >> 32,
        // A field of 0 is 0; an unsigned field of a constant is its bits (`XMAD` extracts the
        // halves of its immediate operands). Signed fields of other constants are left to the
        // driver: folding BfeS(0x1234, 0, 16) in x_video_imm turns lavapipe's result of the
        // 64-bit signed compare that uses it wrong — the same module with the extract left in
        // is right.
        (Op::BfeU | Op::BfeS, [0, _, _]) => 0,
        (Op::BfeU, [x, o, c]) if o + c <= w => match c {
            0 => 0,
            _ => ((x & m) >> o) & (u64::MAX >> (64 - c)),
        },
        _ => return None,
    };
    Some(r & mask(rt))
}

/// Whether [`run`] can do anything with `op`: the operations [`fold`] and the identities
/// know, `Select` and same-width `Bitcast` (anything else is skipped before its arguments are looked at).
pub(super) fn foldable(op: &Op) -> bool {
    matches!(
        op,
        Op::IAdd
            | Op::ISub
            | Op::IMul
            | Op::INeg
            | Op::And
            | Op::Or
            | Op::Xor
            | Op::Not
            | Op::Shl
            | Op::LShr
            | Op::AShr
            | Op::IEq
            | Op::INe
            | Op::ULt
            | Op::ULe
            | Op::UGt
            | Op::UGe
            | Op::SLt
            | Op::SLe
            | Op::SGt
            | Op::SGe
            | Op::UConvert
            | Op::SConvert
            | Op::Pack64
            | Op::Hi32
            | Op::BfeU
            | Op::BfeS
            | Op::AddCarry
            | Op::Select
            | Op::Bitcast
            | Op::Phi(_)
    )
}

/// Runs the pass.
pub fn run(f: &mut Function) {
    // Computed afresh (the first of the passes that share them) and handed on to `cse` and
    // `ftz`.
    let doms = Box::new(crate::dom::BlockDoms::of(f));
    run_with(f, doms);
}

/// [`run`] with the block order and dominators already computed (handed on in
/// [`Function::doms`]).
pub(super) fn run_with(f: &mut Function, doms: Box<crate::dom::BlockDoms>) {
    let mut alias = vec![Value::NONE; f.insts.len()];
    let res = |alias: &[Value], mut v: Value| {
        while alias[v.index()].is_some() {
            v = alias[v.index()];
        }
        v
    };
    let order: Vec<usize> = if f.ssa && f.blocks.len() > 1 {
        doms.order.iter().map(|&b| b as usize).collect()
    } else {
        (0..f.blocks.len()).collect()
    };
    for b in order {
        let insts = std::mem::take(&mut f.blocks[b].insts);
        for &v in &insts {
            let slot = &mut f.insts[v.index()];
            // Arguments are packed: the first `NONE` ends them.
            let mut n = 0;
            for a in slot.args.iter_mut() {
                if a.is_none() {
                    break;
                }
                n += 1;
                if alias[a.index()].is_some() {
                    *a = res(&alias, *a);
                }
            }
            if foldable(&f.insts[v.index()].op) {
                fold_one(f, &mut alias, v, n);
            }
        }
        f.blocks[b].insts = insts;
    }
    if f.ssa {
        // In reverse postorder every use but a phi's comes after its definition, so only
        // phis (operands from back edges, folded later) and terminators are left to rewrite.
        let mut late = false;
        for b in 0..f.blocks.len() {
            for i in 0..f.blocks[b].insts.len() {
                let v = f.blocks[b].insts[i];
                let Op::Phi(k) = f.insts[v.index()].op else {
                    break;
                };
                for x in f.phi_in[k as usize].iter_mut() {
                    x.1 = res(&alias, x.1);
                }
                if alias[v.index()].is_none() {
                    if let Some(a) = same_phi_value(f, &alias, v, k as usize) {
                        alias[v.index()] = a;
                        late = true;
                    }
                }
            }
        }
        // A phi replaced here may be used anywhere.
        if late {
            super::apply_aliases(f, &alias);
        } else {
            super::apply_aliases_to_terminators(f, &alias);
        }
    } else {
        super::apply_aliases_to_terminators(f, &alias);
    }
    f.doms = Some(doms);
}

/// Folds instruction `v`, whose `n` arguments the caller already rewrote through `alias`
/// (every argument's definition came earlier in the walk): it becomes a constant in place,
/// or `alias[v]` is set to the value it equals, or it stays as it is. Phis are folded when
/// their operands are all one value. `alias` entries point at values that are not replaced
/// themselves (they came earlier in the walk) — except for phi operands from back edges,
/// which the walk has not reached yet. Only for [`foldable`] operations (the caller skips the
/// others before counting their arguments).
#[inline(always)]
pub(super) fn fold_one(f: &mut Function, alias: &mut [Value], v: Value, n: usize) {
    debug_assert!(foldable(&f.insts[v.index()].op));
    let inst = f.insts[v.index()];
    if let Op::Phi(k) = inst.op {
        if let Some(a) = same_phi_value(f, alias, v, k as usize) {
            alias[v.index()] = a;
        }
        return;
    }
    // `foldable` operations have no side effects and are not constants.
    if n == 0 {
        return;
    }
    let args = &inst.args[..n];
    let mut consts = [None; 4];
    for (k, &a) in args.iter().enumerate() {
        consts[k] = f.const_of(a);
    }
    let consts = &consts[..n];
    if matches!(inst.op, Op::Select) {
        if let Some(c) = consts[0] {
            alias[v.index()] = if c != 0 { args[1] } else { args[2] };
        }
        return;
    }
    let at = f.ty(args[0]);
    if matches!(inst.op, Op::Bitcast) {
        // Same width: a constant keeps its bits, a round trip is the value itself.
        if at.bits() == inst.ty.bits() {
            let src = f.inst(args[0]);
            if let Some(c) = consts[0] {
                f.insts[v.index()].op = Op::Const(c);
                f.insts[v.index()].args = [Value::NONE; 4];
            } else if matches!(src.op, Op::Bitcast) && f.ty(src.args[0]) == inst.ty {
                alias[v.index()] = src.args[0];
            }
        }
        return;
    }
    if at.is_float() || inst.ty.is_float() {
        return;
    }
    if consts.iter().all(|c| c.is_some()) {
        let mut cs = [0u64; 4];
        for (k, c) in consts.iter().enumerate() {
            cs[k] = c.unwrap_or(0);
        }
        if let Some(r) = fold(inst.op, at, inst.ty, &cs[..n]) {
            f.insts[v.index()].op = Op::Const(r);
            f.insts[v.index()].args = [Value::NONE; 4];
        }
        return;
    }
    let m = mask(at);
    let id = |c: Option<u64>, e: u64| c.map(|c| c & m) == Some(e & m);
    // The carry of x + 0 is false.
    if matches!(inst.op, Op::AddCarry) && (id(consts[0], 0) || id(consts[1], 0)) {
        f.insts[v.index()].op = Op::Const(0);
        f.insts[v.index()].args = [Value::NONE; 4];
        return;
    }

    // Zero absorbs: x·0, x & 0, 0 shifted, a field of 0.
    let zero = match inst.op {
        Op::IMul | Op::And => id(consts[0], 0) || id(consts[1], 0),
        Op::Shl | Op::LShr | Op::AShr | Op::BfeU | Op::BfeS => id(consts[0], 0),
        _ => false,
    };
    if zero && !inst.ty.is_float() && inst.ty != Type::Bool {
        f.insts[v.index()].op = Op::Const(0);
        f.insts[v.index()].args = [Value::NONE; 4];
        return;
    }
    if args.len() == 2 {
        let (x, y) = (args[0], args[1]);
        let (cx, cy) = (consts[0], consts[1]);
        let a = match inst.op {
            Op::IAdd | Op::Or | Op::Xor if id(cy, 0) => Some(x),
            Op::IAdd | Op::Or | Op::Xor if id(cx, 0) => Some(y),
            Op::ISub | Op::Shl | Op::LShr | Op::AShr if id(cy, 0) => Some(x),
            Op::And if id(cy, u64::MAX) => Some(x),
            Op::And if id(cx, u64::MAX) => Some(y),
            Op::IMul if id(cy, 1) => Some(x),
            Op::IMul if id(cx, 1) => Some(y),
            _ => None,
        };
        if let Some(a) = a {
            if f.ty(a) == inst.ty {
                alias[v.index()] = a;
            }
        }
    }
}

/// The one value phi `p` (`Function::phi_in[k]`) always has — its operands other than
/// itself are all one value, or all constants of one type with equal bits — if any.
fn same_phi_value(f: &Function, alias: &[Value], p: Value, k: usize) -> Option<Value> {
    let res = |mut v: Value| {
        while alias[v.index()].is_some() {
            v = alias[v.index()];
        }
        v
    };
    let mut same = Value::NONE;
    let mut bits = None;
    for &(_, a) in &f.phi_in[k] {
        let a = res(a);
        if a == p || a == same {
            continue;
        }
        if same.is_none() {
            same = a;
            bits = f.const_of(a);
            continue;
        }
        match (bits, f.const_of(a)) {
            (Some(x), Some(y)) if x == y && f.ty(a) == f.ty(same) => {}
            _ => return None,
        }
    }
    same.is_some().then_some(same)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Reg;
    use crate::ir::Terminator;

    #[test]
    fn folds_and_simplifies() {
        let (mut f, [b]) = Function::with_blocks([0]);
        let a = f.push(b, Op::Const(0xffff_fff0), Type::U32, &[]);
        let c = f.push(b, Op::Const(0x20), Type::U32, &[]);
        let s = f.push(b, Op::IAdd, Type::U32, &[a, c]);
        let r = f.push(b, Op::Get(Reg::gpr(3)), Type::U32, &[]);
        let z = f.push(b, Op::Const(0), Type::U32, &[]);
        let t = f.push(b, Op::IAdd, Type::U32, &[r, z]);
        let lt = f.push(b, Op::SLt, Type::Bool, &[a, c]);
        let sel = f.push(b, Op::Select, Type::U32, &[lt, t, s]);
        let st = f.push(b, Op::Set(Reg::gpr(0)), Type::Void, &[sel]);
        f.blocks[0].term = Terminator::Exit;
        run(&mut f);
        assert_eq!(f.const_of(s), Some(0x10));
        assert_eq!(f.const_of(lt), Some(1));
        assert_eq!(f.inst(st).args[0], r);
    }

    #[test]
    fn zero_absorbs() {
        // uam's geometry vertex index: XMAD/BFE chains over SR_INVOCATION_INFO (0) plus k.
        let (mut f, [b]) = Function::with_blocks([0]);
        let r = f.push(b, Op::Get(Reg::gpr(3)), Type::U32, &[]);
        let z = f.push(b, Op::Const(0), Type::U32, &[]);
        let k = f.push(b, Op::Const(16), Type::U32, &[]);
        let e = f.push(b, Op::Const(8), Type::U32, &[]);
        let bfe = f.push(b, Op::BfeU, Type::U32, &[z, k, e]);
        let mul = f.push(b, Op::IMul, Type::U32, &[r, bfe]);
        let and = f.push(b, Op::And, Type::U32, &[z, r]);
        let shl = f.push(b, Op::Shl, Type::U32, &[z, r]);
        let sum = f.push(b, Op::IAdd, Type::U32, &[mul, k]);
        let keep = f.push(b, Op::Shl, Type::U32, &[r, z]);
        let field = f.push(b, Op::BfeS, Type::U32, &[r, z, e]);
        f.blocks[0].term = Terminator::Exit;
        run(&mut f);
        for v in [bfe, mul, and, shl] {
            assert_eq!(f.const_of(v), Some(0), "{:?}", f.inst(v));
        }
        assert_eq!(f.const_of(sum), Some(16));
        assert_eq!(f.const_of(keep), None, "r << 0 is r, not 0");
        assert_eq!(f.const_of(field), None, "a field of a register stays");
    }

    #[test]
    fn the_carry_of_adding_zero_is_false() {
        // IADD.X's carry-in chain when the first add had none: carry(x + 0) or carry(0 + x).
        let (mut f, [b]) = Function::with_blocks([0]);
        let r = f.push(b, Op::Get(Reg::gpr(3)), Type::U32, &[]);
        let s = f.push(b, Op::Get(Reg::gpr(4)), Type::U32, &[]);
        let z = f.push(b, Op::Const(0), Type::U32, &[]);
        let c1 = f.push(b, Op::AddCarry, Type::Bool, &[r, z]);
        let c2 = f.push(b, Op::AddCarry, Type::Bool, &[z, r]);
        let c3 = f.push(b, Op::AddCarry, Type::Bool, &[r, s]);
        let big = f.push(b, Op::Const(0xffff_ffff), Type::U32, &[]);
        let one = f.push(b, Op::Const(1), Type::U32, &[]);
        let c4 = f.push(b, Op::AddCarry, Type::Bool, &[big, one]);
        let c5 = f.push(b, Op::AddCarry, Type::Bool, &[big, big]);
        let c6 = f.push(b, Op::AddCarry, Type::Bool, &[one, one]);
        f.blocks[0].term = Terminator::Exit;
        run(&mut f);
        assert_eq!(
            [c4, c5, c6].map(|c| f.const_of(c)),
            [Some(1), Some(1), Some(0)]
        );
        assert_eq!(f.const_of(c1), Some(0));
        assert_eq!(f.const_of(c2), Some(0));
        assert_eq!(f.const_of(c3), None);
    }

    #[test]
    fn unsigned_fields_of_constants_fold() {
        // XMAD's halves of an immediate: BfeU(0x000c_8001, 0 / 16, 16), an empty field, and a
        // field past the width (undefined: left to run time).
        let (mut f, [b]) = Function::with_blocks([0]);
        let x = f.push(b, Op::Const(0x000c_8001), Type::U32, &[]);
        let z = f.push(b, Op::Const(0), Type::U32, &[]);
        let k = f.push(b, Op::Const(16), Type::U32, &[]);
        let t = f.push(b, Op::Const(20), Type::U32, &[]);
        let lo = f.push(b, Op::BfeU, Type::U32, &[x, z, k]);
        let hi = f.push(b, Op::BfeU, Type::U32, &[x, k, k]);
        let none = f.push(b, Op::BfeU, Type::U32, &[x, k, z]);
        let past = f.push(b, Op::BfeU, Type::U32, &[x, t, k]);
        let signed = f.push(b, Op::BfeS, Type::U32, &[x, z, k]);
        f.blocks[0].term = Terminator::Exit;
        run(&mut f);
        assert_eq!(f.const_of(lo), Some(0x8001));
        assert_eq!(f.const_of(hi), Some(0xc));
        assert_eq!(f.const_of(none), Some(0));
        assert_eq!(f.const_of(past), None);
        assert_eq!(f.const_of(signed), None);
    }
}
