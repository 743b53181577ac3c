//! TEMP shim (lead's local test only).

use super::super::{Cx, Result};
use crate::ir::Sys;
use dmsh_isa::ampere::Instr;
use dmsh_isa::Field;

/// Lifts one instruction of the family.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    let s = match i.modifier(Field::Sreg) {
        Some("SR_TID.X") => Sys::Tid(0),
        Some("SR_TID.Y") => Sys::Tid(1),
        Some("SR_CTAID.X") => Sys::Ctaid(0),
        Some("SR_CTAID.Y") => Sys::Ctaid(1),
        Some("SR_LANEID") => Sys::LaneId,
        _ => return Err(cx.unsupported(i, "shim")),
    };
    let v = cx.sys(s);
    cx.set_rd(i, v);
    Ok(())
}
