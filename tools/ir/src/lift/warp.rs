//! Warp and system: S2R/CS2R system registers, SHFL, VOTE, BAR, B2R.

use super::{Cx, Result};
use crate::ir::{Op, ShflMode, Sys, Type, Value, VoteMode};
use dmsh_isa::mods::{Barm, Shflm, Sreg, Votem};
use dmsh_isa::{Field, Instr, Opcode};

fn sreg(s: Sreg) -> Option<Sys> {
    sys_of_name(s.name())
}

/// The system value of a system register named as nvdisasm prints it (`SR_TID.X`), for
/// both instruction sets; `None` for one without a translation.
pub fn sys_of_name(name: &str) -> Option<Sys> {
    Some(match name {
        "SR_TID.X" => Sys::Tid(0),
        "SR_TID.Y" => Sys::Tid(1),
        "SR_TID.Z" => Sys::Tid(2),
        "SR_CTAID.X" => Sys::Ctaid(0),
        "SR_CTAID.Y" => Sys::Ctaid(1),
        "SR_CTAID.Z" => Sys::Ctaid(2),
        "SR_LANEID" => Sys::LaneId,
        "SR_EQMASK" => Sys::LaneMask(0),
        "SR_LTMASK" => Sys::LaneMask(1),
        "SR_LEMASK" => Sys::LaneMask(2),
        "SR_GTMASK" => Sys::LaneMask(3),
        "SR_GEMASK" => Sys::LaneMask(4),
        "SR_CLOCKLO" | "SR_CLOCKHI" | "SR_CLOCK" | "SR_GLOBALTIMERLO" | "SR_GLOBALTIMERHI" => {
            Sys::Clock
        }
        "SR_VIRTCFG" | "SR_VIRTID" | "SR_MACHINE_ID_0" | "SR_MACHINE_ID_1" | "SR_MACHINE_ID_2"
        | "SR_MACHINE_ID_3" | "SR_AFFINITY" | "SR_HWTASKID" | "SR_ORDERING_TICKET" => Sys::Zero,
        _ => return None,
    })
}

/// `SR_TID`: the thread id packed, x in bits 0..15, y in 16..25, z in 26..31.
pub fn packed_tid(cx: &mut Cx) -> Value {
    let x = cx.sys(Sys::Tid(0));
    let y = cx.sys(Sys::Tid(1));
    let z = cx.sys(Sys::Tid(2));
    let y = cx.shl_c(y, 16);
    let z = cx.shl_c(z, 26);
    let xy = cx.or(x, y);
    cx.or(xy, z)
}

/// A warp shuffle of `a` by `b` (lane or delta) and `c` (clamp and segment mask), with
/// whether the source lane was in range when `valid` is asked for.
pub fn shfl(
    cx: &mut Cx,
    mode: ShflMode,
    [a, b, c]: [Value; 3],
    valid: bool,
) -> (Value, Option<Value>) {
    let r = cx.emit(Op::Shfl(mode), Type::U32, &[a, b, c]);
    let ok = valid.then(|| cx.emit(Op::ShflValid(mode), Type::Bool, &[a, b, c]));
    (r, ok)
}

/// `BAR.SYNC` (barrier 0, the whole workgroup): a barrier at the start of its own block.
pub fn bar_sync(cx: &mut Cx) {
    start_barrier_block(cx);
    cx.emit(Op::Barrier, Type::Void, &[]);
}

/// `BAR.RED.POPC` of the predicate `p` (barrier 0): the count becomes the barrier result
/// that `B2R.RESULT` reads.
pub fn bar_red_popc(cx: &mut Cx, p: Value) -> Value {
    cx.emit(Op::SetBarPred, Type::Void, &[p]);
    start_barrier_block(cx);
    let n = cx.emit(Op::BarrierPopc, Type::U32, &[]);
    cx.emit(Op::SetBarResult, Type::Void, &[n]);
    n
}

/// The barrier result register (`B2R.RESULT`).
pub fn bar_result(cx: &mut Cx) -> Value {
    cx.emit(Op::GetBarResult, Type::U32, &[])
}

/// Lifts one warp/system instruction.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    use Opcode as O;
    match i.opcode() {
        O::S2r | O::Cs2r if cx.modifier::<Sreg>(i, Field::Sreg)? == Some(Sreg::SrTid) => {
            let v = packed_tid(cx);
            cx.set_rd(i, v);
            Ok(())
        }
        O::S2r | O::Cs2r => {
            let Some(r) = cx.modifier::<Sreg>(i, Field::Sreg)? else {
                return Err(cx.unsupported(i, "system register"));
            };
            let s = sreg(r).ok_or_else(|| cx.unsupported(i, format!("system register {r}")))?;
            let v = cx.sys(s);
            cx.set_rd(i, v);
            // CS2R of a 64-bit counter's low word writes the pair (high word 0).
            if i.opcode() == O::Cs2r && matches!(r, Sreg::SrClocklo | Sreg::SrGlobaltimerlo) {
                let z = cx.c32(0);
                let rd = cx.rf(i, Field::Rd);
                if rd < 254 {
                    cx.set_reg(rd + 1, z);
                }
            }
            Ok(())
        }
        O::Shfl => {
            let mode = match cx.modifier::<Shflm>(i, Field::Mode)? {
                Some(Shflm::Idx) => ShflMode::Idx,
                Some(Shflm::Up) => ShflMode::Up,
                Some(Shflm::Down) => ShflMode::Down,
                Some(Shflm::Bfly) | None => ShflMode::Bfly,
            };
            let a = cx.r(i, Field::Ra);
            let v = Cx::variant(i);
            let b = if v.starts_with('R') {
                cx.r(i, Field::Rb)
            } else {
                let k = i.get(Field::Imm).unwrap_or(0) as u32;
                cx.c32(k)
            };
            let c = if v.ends_with('R') {
                cx.r(i, Field::Rc)
            } else {
                let k = i.get(Field::Imm2).unwrap_or(0) as u32;
                cx.c32(k)
            };
            let valid = i.pred(Field::Pd).is_some_and(|p| !p.is_pt());
            let (r, ok) = shfl(cx, mode, [a, b, c], valid);
            if let Some(ok) = ok {
                cx.set_p(i, Field::Pd, ok);
            }
            cx.set_rd(i, r);
            Ok(())
        }
        O::Vote => {
            let p = cx.p(i, Field::Pc, Field::NotC);
            let mode = match cx.modifier::<Votem>(i, Field::Mode)? {
                Some(Votem::All) => VoteMode::All,
                Some(Votem::Any) => VoteMode::Any,
                Some(Votem::Eq) => VoteMode::Eq,
                None => return Err(cx.unsupported(i, "VOTE without a mode")),
            };
            let rd = cx.rf(i, Field::Rd);
            if rd != 255 {
                let b = cx.emit(Op::Vote(VoteMode::Ballot), Type::U32, &[p]);
                cx.set_reg(rd, b);
            }
            if i.pred(Field::Pd).is_some_and(|q| !q.is_pt()) {
                let v = cx.emit(Op::Vote(mode), Type::Bool, &[p]);
                cx.set_p(i, Field::Pd, v);
            }
            Ok(())
        }
        O::Bar => {
            let mode = cx.modifier::<Barm>(i, Field::Mode)?;
            let form = i.form_name();
            // Barrier 0, or a barrier id in a register (deko3d writes RZ); a thread count,
            // where given, is taken to be the whole workgroup.
            let id_ok = form.starts_with("BAR_R") || i.get(Field::Imm).unwrap_or(0) == 0;
            if !id_ok {
                return Err(cx.unsupported(i, "named barrier other than 0"));
            }
            match mode {
                Some(Barm::Sync) => {
                    bar_sync(cx);
                    Ok(())
                }
                Some(Barm::RedPopc) => {
                    let p = cx.p(i, Field::Pc, Field::NotC);
                    bar_red_popc(cx, p);
                    Ok(())
                }
                _ => {
                    let m = mode.map_or("", Barm::name);
                    Err(cx.unsupported(i, format!("BAR{m}")))
                }
            }
        }
        O::B2r => {
            let v = bar_result(cx);
            cx.set_rd(i, v);
            Ok(())
        }
        _ => Err(cx.unsupported(i, "no semantics for this instruction")),
    }
}

/// Starts a new block unless the current one is empty, so that a barrier is the first
/// instruction of its block (the back end's barrier-synchronised dispatcher relies on it).
fn start_barrier_block(cx: &mut Cx) {
    if cx.f.blocks[cx.b.index()].insts.is_empty() {
        return;
    }
    let nb = cx.f.add_block(None);
    cx.finish(crate::ir::Terminator::Jump(nb));
    cx.b = nb;
    cx.ended = false;
}
