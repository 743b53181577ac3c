//! Ampere control flow: BRA, BRX/BRXU, CALL, RET, EXIT, KILL, BPT, and the convergence and
//! scheduling instructions that lift to nothing for one thread (BSSY, BSYNC, BREAK,
//! WARPSYNC, BMOV, NOP, DEPBAR, YIELD, NANOSLEEP, PMTRIG).
//!
//! Besides its guard, a control instruction has a condition predicate (`BRA !P5, 0x20`,
//! `EXIT P0`; fields `Pa`/`NotA`): it acts where both hold.

use super::super::{Cx, Result};
use crate::ir::{Op, StackKind, Terminator, Type, Value};
use crate::shader::Stage;
use dmsh_isa::ampere::{Instr, Opcode};
use dmsh_isa::Field;

/// Whether the instruction ends its block.
pub fn ends_block(op: Opcode) -> bool {
    use Opcode as O;
    matches!(
        op,
        O::Bra | O::Brx | O::Brxu | O::Call | O::Ret | O::Exit | O::Kill
    )
}

/// Whether the condition predicate of a control instruction is `PT` (or it has none).
pub fn condition_is_true(i: &Instr) -> bool {
    match i.pred(Field::Pa) {
        Some(p) if i.has(Field::NotA) && ends_block(i.opcode()) => {
            p.is_pt() && !i.flag(Field::NotA)
        }
        _ => true,
    }
}

/// The condition predicate's value.
pub fn condition(cx: &mut Cx, i: &Instr) -> Value {
    cx.p(i, Field::Pa, Field::NotA)
}

/// The target of a `CALL` at `off` (`None`: through a register).
pub fn call_target(i: &Instr, off: u32) -> Option<u64> {
    if i.has(Field::Ra) || i.has(Field::URa) {
        return None;
    }
    if i.has(Field::Target) {
        return i.target(off as u64);
    }
    i.get(Field::Imm).map(|v| v as u64)
}

/// `BRA.CONV URa` / `BRA.DIV URa` (`~URa` inverts the mask): whether every lane of the mask
/// is active (`.CONV`), or not (`.DIV`). ptxas guards the converged fast path of a warp-wide
/// operation with it (`barrier.sync` with a register id: `BRA.CONV ~URZ` to the inline
/// `BAR.SYNC`, else a call to a copy after a `WARPSYNC`); both paths compute the same.
fn convergence(cx: &mut Cx, i: &Instr) -> Result<Value> {
    use dmsh_isa::ampere::mods::Braumode;
    let conv = match cx.modifier::<Braumode>(i, Field::Mode)? {
        Some(Braumode::Conv) => true,
        Some(Braumode::Div) => false,
        m => {
            let m = m.map_or("", Braumode::name);
            return Err(cx.unsupported(i, format!("BRA{m} on a uniform register")));
        }
    };
    let u = i.ureg(Field::URa).map_or(63, |r| r.0);
    let m = if u == 63 { cx.c32(0) } else { cx.ureg(u) };
    let m = if i.flag(Field::InvA) { cx.not(m) } else { m };
    let t = cx.cbool(true);
    let active = cx.emit(Op::Vote(crate::ir::VoteMode::Ballot), Type::U32, &[t]);
    let both = cx.and(active, m);
    let all = cx.cmp(Op::IEq, both, m);
    Ok(if conv { all } else { cx.not(all) })
}

/// Lifts one control instruction.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    use Opcode as O;
    match i.opcode() {
        O::Nop
        | O::Depbar
        | O::Yield
        | O::Nanosleep
        | O::Pmtrig
        | O::Bssy
        | O::Bsync
        | O::Break
        | O::Warpsync => Ok(()),
        // Convergence-barrier state is not modelled (BSSY/BSYNC are no-ops), so what NAK and
        // ptxas save of it around calls and nested regions (`BMOV.32.CLEAR R2, B0` … `BMOV.32
        // B0, R2`) only travels back into a barrier register: a saved value reads 0,
        // restoring one does nothing.
        O::Bmov => {
            if i.has(Field::Rd) {
                let z = cx.c32(0);
                cx.set_rd(i, z);
            }
            Ok(())
        }
        O::Bra => {
            if !i.has(Field::Target) {
                return Err(cx.unsupported(i, "branch without a target"));
            }
            let t = i.target(cx.addr as u64).unwrap_or(0) as u32;
            let tb = cx.block_at(t)?;
            let (g, neg) = i.guard();
            let cond = !condition_is_true(i);
            if g.is_pt() && !cond && !i.has(Field::URa) {
                cx.finish(Terminator::Jump(tb));
                return Ok(());
            }
            let mut p = if g.is_pt() {
                cx.cbool(true)
            } else if i.guard_is_uniform() {
                cx.upred(g.0, neg)
            } else {
                cx.pred(g.0, neg)
            };
            if cond {
                let c = condition(cx, i);
                p = if g.is_pt() { c } else { cx.and(p, c) };
            }
            if i.has(Field::URa) {
                let c = convergence(cx, i)?;
                p = cx.and(p, c);
            }
            let nb = cx.block_at(cx.next)?;
            cx.finish(Terminator::Branch(p, tb, nb));
            Ok(())
        }
        O::Brx | O::Brxu => {
            // Target = the register (or uniform register) + the address after the branch +
            // the offset (`BRX R4 -0x1d0` at 0x1c0 jumps to R4).
            let r = if i.has(Field::URa) {
                let u = i.ureg(Field::URa).map_or(63, |u| u.0);
                cx.ureg(u)
            } else {
                cx.r(i, Field::Ra)
            };
            let imm = i.get(Field::Target).unwrap_or(0) as u32;
            let k = cx.c32(cx.next.wrapping_add(imm));
            let t = cx.add(r, k);
            if cx.f.indirect_targets.is_empty() {
                cx.f.indirect_targets = cx.cfg.extra_targets.clone();
            }
            cx.finish(Terminator::Dynamic(t));
            Ok(())
        }
        O::Call => {
            let Some(t) = call_target(i, cx.addr) else {
                return Err(cx.unsupported(i, "call through a register"));
            };
            let tb = cx.block_at(t as u32)?;
            let ret = cx.c32(cx.next);
            cx.emit(Op::StackPush(StackKind::Call), Type::Void, &[ret]);
            cx.f.stack_pushes = true;
            cx.finish(Terminator::Jump(tb));
            Ok(())
        }
        O::Ret => {
            let t = cx.emit(Op::StackPop(StackKind::Call), Type::U32, &[]);
            cx.finish(Terminator::Dynamic(t));
            Ok(())
        }
        O::Exit => {
            crate::lift::io::frag_outputs(cx);
            cx.finish(Terminator::Exit);
            Ok(())
        }
        O::Kill => {
            cx.finish(if cx.cfg.stage == Stage::Fragment {
                Terminator::Kill
            } else {
                Terminator::Exit
            });
            Ok(())
        }
        O::Bpt => match i.modifier(Field::Mode) {
            Some(".TRAP") => {
                cx.finish(Terminator::Exit);
                Ok(())
            }
            _ => Ok(()),
        },
        _ => Err(cx.unsupported(i, "no semantics for this instruction")),
    }
}
