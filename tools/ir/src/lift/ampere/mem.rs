//! TEMP shim (lead's local test only).

use super::super::{Cx, Result};
use crate::ir::{Op, Type, Width};
use crate::Space;
use dmsh_isa::ampere::{Instr, Opcode};
use dmsh_isa::Field;

/// Lifts one instruction of the family.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    let n = match i.modifier(Field::Size) {
        Some("") | None => 1,
        Some(".64") => 2,
        Some(".128") => 4,
        _ => return Err(cx.unsupported(i, "shim size")),
    };
    if !i.form_name().ends_with("_E") {
        return Err(cx.unsupported(i, "shim form"));
    }
    let ra = cx.rf(i, Field::Ra);
    let base = cx.reg64(ra);
    let imm = i.get(Field::Imm).unwrap_or(0);
    match i.opcode() {
        Opcode::Ldg => {
            let rd = cx.rf(i, Field::Rd);
            for k in 0..n {
                let o = cx.c64((imm + 4 * k as i64) as u64);
                let a = cx.add(base, o);
                let v = cx.emit(Op::Load(Space::Global, Width::B32), Type::U32, &[a]);
                if rd != 255 {
                    cx.set_reg(rd + k, v);
                }
            }
        }
        Opcode::Stg => {
            let rb = cx.rf(i, Field::Rb);
            let vals: Vec<_> = (0..n)
                .map(|k| cx.reg(if rb == 255 { 255 } else { rb + k }))
                .collect();
            for (k, v) in vals.into_iter().enumerate() {
                let o = cx.c64((imm + 4 * k as i64) as u64);
                let a = cx.add(base, o);
                cx.emit(Op::Store(Space::Global, Width::B32), Type::Void, &[a, v]);
            }
        }
        _ => return Err(cx.unsupported(i, "shim")),
    }
    Ok(())
}
