//! Ampere warp instructions (not yet translated: each is reported as unsupported).

use super::super::{Cx, Result};
use dmsh_isa::ampere::Instr;

/// Lifts one instruction of the family.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    Err(cx.unsupported(i, "not translated yet"))
}
