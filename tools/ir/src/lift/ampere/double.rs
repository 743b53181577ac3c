//! Ampere double precision: DADD, DMUL, DFMA, DSETP (register pairs; an immediate is the
//! f64's high word). The arithmetic is Maxwell's ([`crate::lift::double`]). DSETP has two
//! comparisons of its own in place of `.F` / `.T`: `.MIN` and `.MAX`, which ptxas uses for
//! `min.f64` / `max.f64` (`DSETP.MIN.AND P0, P1, a, b, PT; FSEL`/`SEL` the words by P0;
//! `@P1` set the quiet bit): Pd is "the minimum (maximum) is a" — a NaN loses to a number,
//! −0 is below +0 — and Pd2 "both are NaN".

use super::super::double::dsrc;
use super::super::float::fcmp;
use super::super::{Cx, Result};
use super::float::{bop, rnd, set_compare};
use crate::ir::{Op, Type, Value};
use dmsh_isa::ampere::mods::Dsetpcmp;
use dmsh_isa::ampere::{Instr, Opcode};
use dmsh_isa::mods::Fcmp;
use dmsh_isa::Field;

/// f64 source `k` with its negate / absolute-value fields.
fn dk(cx: &mut Cx, i: &Instr, k: usize) -> Result<Value> {
    let (neg, abs) = [
        (Field::NegA, Field::AbsA),
        (Field::NegB, Field::AbsB),
        (Field::NegC, Field::AbsC),
    ][k.min(2)];
    let v = cx.asrc64(i, k)?;
    Ok(dsrc(cx, v, i.flag(neg), i.flag(abs)))
}

/// Whether the f64 `x` has its sign bit set.
fn sign(cx: &mut Cx, x: Value) -> Value {
    let b = cx.cast(Type::U64, x);
    let h = cx.hi(b);
    let z = cx.c32(0);
    cx.cmp(Op::SLt, h, z)
}

/// DSETP.MIN / .MAX's tests: (the result is `a`, both are NaN).
fn min_max_pick(cx: &mut Cx, a: Value, b: Value, min: bool) -> (Value, Value) {
    let na = cx.emit(Op::IsNan, Type::Bool, &[a]);
    let nb = cx.emit(Op::IsNan, Type::Bool, &[b]);
    let strict = cx.cmp(if min { Op::FOLt } else { Op::FOGt }, a, b);
    let eq = cx.cmp(Op::FOEq, a, b);
    let sa = sign(cx, a);
    // Equal values: the same bits but for the zeros, where min takes −0 and max +0.
    let pick_tie = if min { sa } else { cx.not(sa) };
    let tie = cx.and(eq, pick_tie);
    let better = cx.or(strict, tie);
    let a_num = cx.not(na);
    let by_value = cx.and(a_num, better);
    let t = cx.or(nb, by_value);
    let both = cx.and(na, nb);
    (t, both)
}

/// Lifts one f64 instruction.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    use Opcode as O;
    match i.opcode() {
        O::Dadd => {
            let a = dk(cx, i, 0)?;
            let b = dk(cx, i, 1)?;
            let r = cx.emit(Op::FAdd(rnd(cx, i)?), Type::F64, &[a, b]);
            cx.set_dst64(i, r);
        }
        O::Dmul => {
            let a = dk(cx, i, 0)?;
            let b = dk(cx, i, 1)?;
            let r = cx.emit(Op::FMul(rnd(cx, i)?), Type::F64, &[a, b]);
            cx.set_dst64(i, r);
        }
        O::Dfma => {
            let a = dk(cx, i, 0)?;
            let b = dk(cx, i, 1)?;
            let c = dk(cx, i, 2)?;
            let r = cx.emit(Op::FFma(rnd(cx, i)?), Type::F64, &[a, b, c]);
            cx.set_dst64(i, r);
        }
        O::Dsetp => {
            let a = dk(cx, i, 0)?;
            let b = dk(cx, i, 1)?;
            let c = cx
                .modifier::<Dsetpcmp>(i, Field::Cmp)?
                .ok_or_else(|| cx.unsupported(i, "DSETP without a comparison"))?;
            let c = match c {
                Dsetpcmp::Min | Dsetpcmp::Max => {
                    let (t, both) = min_max_pick(cx, a, b, c == Dsetpcmp::Min);
                    let pc = cx.apred(i, Field::Pc, Field::NotC);
                    let v = bop(cx, i, t, pc)?;
                    cx.set_apred(i, Field::Pd, v);
                    let v2 = bop(cx, i, both, pc)?;
                    cx.set_apred(i, Field::Pd2, v2);
                    return Ok(());
                }
                Dsetpcmp::Lt => Fcmp::Lt,
                Dsetpcmp::Eq => Fcmp::Eq,
                Dsetpcmp::Le => Fcmp::Le,
                Dsetpcmp::Gt => Fcmp::Gt,
                Dsetpcmp::Ne => Fcmp::Ne,
                Dsetpcmp::Ge => Fcmp::Ge,
                Dsetpcmp::Num => Fcmp::Num,
                Dsetpcmp::Nan => Fcmp::Nan,
                Dsetpcmp::Ltu => Fcmp::Ltu,
                Dsetpcmp::Equ => Fcmp::Equ,
                Dsetpcmp::Leu => Fcmp::Leu,
                Dsetpcmp::Gtu => Fcmp::Gtu,
                Dsetpcmp::Neu => Fcmp::Neu,
                Dsetpcmp::Geu => Fcmp::Geu,
            };
            let t = fcmp(cx, c, a, b);
            set_compare(cx, i, true, t)?;
        }
        _ => return Err(cx.unsupported(i, "not a double instruction")),
    }
    Ok(())
}
