//! Double precision: DADD, DMUL, DFMA, DMNMX, DSETP, DSET (register pairs, D20 immediates).

use super::float::{fcmp, fcmp_of, min_max};
use super::int::set_compare;
use super::{Cx, Result};
use crate::ir::{Op, Type, Value};
use dmsh_isa::{Field, Instr, Opcode};

/// Reads an f64 operand: bits → f64, then |x|, −x as asked.
pub fn dsrc(cx: &mut Cx, v: Value, neg: bool, abs: bool) -> Value {
    let mut x = cx.cast(Type::F64, v);
    if abs {
        x = cx.un(Op::FAbs, x);
    }
    if neg {
        x = cx.un(Op::FNeg, x);
    }
    x
}

fn set_rd64(cx: &mut Cx, i: &Instr, v: Value) {
    let n = cx.rf(i, Field::Rd);
    cx.set_reg64(n, v);
}

/// Lifts one f64 instruction.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    use Opcode as O;
    if i.flag(Field::Cc) {
        return Err(cx.unsupported(i, "double op writing CC"));
    }
    let ra = cx.rf(i, Field::Ra);
    let a = cx.reg64(ra);
    let b = cx.src_b64(i)?;
    match i.opcode() {
        O::Dadd => {
            let a = dsrc(cx, a, i.flag(Field::NegA), i.flag(Field::AbsA));
            let b = dsrc(cx, b, i.flag(Field::NegB), i.flag(Field::AbsB));
            let r = cx.emit(Op::FAdd(cx.rnd(i)?), Type::F64, &[a, b]);
            set_rd64(cx, i, r);
        }
        O::Dmul => {
            let a = dsrc(cx, a, false, false);
            let b = dsrc(cx, b, i.flag(Field::NegB), false);
            let r = cx.emit(Op::FMul(cx.rnd(i)?), Type::F64, &[a, b]);
            set_rd64(cx, i, r);
        }
        O::Dfma => {
            let c = cx.src_c64(i)?;
            let a = dsrc(cx, a, false, false);
            let b = dsrc(cx, b, i.flag(Field::NegB), false);
            let c = dsrc(cx, c, i.flag(Field::NegC), false);
            let r = cx.emit(Op::FFma(cx.rnd(i)?), Type::F64, &[a, b, c]);
            set_rd64(cx, i, r);
        }
        O::Dmnmx => {
            let a = dsrc(cx, a, i.flag(Field::NegA), i.flag(Field::AbsA));
            let b = dsrc(cx, b, i.flag(Field::NegB), i.flag(Field::AbsB));
            let p = cx.p(i, Field::Pc, Field::NotC);
            let mn = min_max(cx, a, b, true);
            let mx = min_max(cx, a, b, false);
            let r = cx.sel(p, mn, mx);
            set_rd64(cx, i, r);
        }
        O::Dsetp | O::Dset => {
            let a = dsrc(cx, a, i.flag(Field::NegA), i.flag(Field::AbsA));
            let b = dsrc(cx, b, i.flag(Field::NegB), i.flag(Field::AbsB));
            let c = fcmp_of(cx, i)?;
            let t = fcmp(cx, c, a, b);
            set_compare(cx, i, i.opcode() == O::Dsetp, t, false)?;
        }
        _ => return Err(cx.unsupported(i, "no semantics for this instruction")),
    }
    Ok(())
}
