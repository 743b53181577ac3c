//! Warp and system: S2R/CS2R system registers, SHFL, VOTE, BAR, B2R.
//!
//! BAR on either instruction set lifts through [`named_bar`]: the barrier names its id and
//! thread count (`SetBarId`; barrier 0 without a count is the plain workgroup barrier) and
//! waits at the start of its own block, `BAR.ARV` counts an arrival without waiting
//! (`BarrierArrive`), and `BAR.RED.POPC` / `.AND` / `.OR` leave the count / the outcome in the
//! barrier result that `B2R.RESULT` reads (docs/ir.md, "Named barriers").

use super::{Cx, Result};
use crate::ir::{Op, ShflMode, Sys, Type, Value, VoteMode};
use dmsh_isa::engine::{Instr as AnyInstr, Isa};
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
    cx.f.barrier_ops = true;
    start_barrier_block(cx);
    cx.emit(Op::Barrier, Type::Void, &[]);
}

/// `BAR.RED.POPC` of the predicate `p` (barrier 0): the count becomes the barrier result
/// that `B2R.RESULT` reads.
pub fn bar_red_popc(cx: &mut Cx, p: Value) -> Value {
    cx.f.barrier_ops = true;
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

/// `B2R.RESULT Rd{, Pd}` of either instruction set: `Rd` := the barrier result, `Pd` (where
/// the form writes one) := `result != 0`, the outcome of `BAR.RED.AND` / `.OR` (PTX's
/// `bar.red.and.pred` / `.or.pred`).
pub fn b2r_result<I: Isa>(cx: &mut Cx, i: &AnyInstr<I>) {
    let v = bar_result(cx);
    cx.set_rd(i, v);
    if i.pred(Field::Pd).is_some_and(|p| !p.is_pt()) {
        let z = cx.c32(0);
        let p = cx.cmp(Op::INe, v, z);
        cx.set_p(i, Field::Pd, p);
    }
}

/// Where a BAR instruction's barrier id or thread count comes from.
#[derive(Clone, Copy, Debug)]
pub enum BarArg {
    /// An immediate (a count of 0, or none given: every thread of the workgroup).
    Imm(u32),
    /// A register's low bits (an id in bits 0–3, a count in bits 0–11).
    Reg(Value),
    /// The count in bits 16–27 of a register whose low bits hold the id: ptxas packs them
    /// so for `barrier.sync %id, %count` on both instruction sets.
    Packed(Value),
}

/// The barrier id (0–15) of a BAR operand.
pub fn bar_id(cx: &mut Cx, a: BarArg) -> Value {
    match a {
        BarArg::Imm(k) => cx.c32(k & 15),
        BarArg::Reg(r) | BarArg::Packed(r) => match cx.f.const_of(r) {
            // RZ (deko3d, NAK): the constant, so that barrier 0 stays the plain barrier.
            Some(k) => cx.c32(k as u32 & 15),
            None => {
                let m = cx.c32(15);
                cx.and(r, m)
            }
        },
    }
}

/// The thread count (0–4095; 0: the whole workgroup) of a BAR operand.
pub fn bar_count(cx: &mut Cx, a: BarArg) -> Value {
    let (r, shift) = match a {
        BarArg::Imm(k) => return cx.c32(k & 0xfff),
        BarArg::Reg(r) => (r, 0),
        BarArg::Packed(r) => (r, 16),
    };
    if let Some(k) = cx.f.const_of(r) {
        return cx.c32((k as u32 >> shift) & 0xfff);
    }
    let c = if shift == 0 { r } else { cx.shr_c(r, shift) };
    let m = cx.c32(0xfff);
    cx.and(c, m)
}

/// The reduction of a `BAR.RED`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarRed {
    /// `.POPC`: the number of participants whose predicate is true.
    Popc,
    /// `.AND`: whether every participant's predicate is true.
    And,
    /// `.OR`: whether any participant's predicate is true.
    Or,
}

/// What a BAR instruction does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarOp {
    /// `BAR.SYNC`: arrive and wait.
    Sync,
    /// `BAR.ARV`: arrive without waiting.
    Arrive,
    /// `BAR.RED`: arrive, wait, and reduce the predicate (the value) over the participants.
    Red(BarRed, Value),
}

/// BAR.SYNC / BAR.ARV / BAR.RED on barrier `id` (0–15) with thread count `count` (0: every
/// thread of the workgroup that has not exited), for both instruction sets. The barrier
/// names its id and count (`SetBarId`; a plain barrier 0 names (0, 0), which the back end
/// treats as the workgroup barrier) and waits at the start of its own block; BAR.ARV counts
/// an arrival without waiting (`BarrierArrive`). A shader with any other barrier runs through
/// the barrier-synchronised dispatcher, which counts arrivals per id (docs/ir.md, "Named
/// barriers"). `.AND` / `.OR` are the population count compared with the number of
/// participants (the count, or the workgroup's size when none is given) / with 0; their
/// outcome (0 or 1) becomes the barrier result.
pub fn named_bar(cx: &mut Cx, op: BarOp, id: Value, count: Value) {
    cx.f.barrier_ops = true;
    let (red, p) = match op {
        BarOp::Arrive => {
            cx.emit(Op::BarrierArrive, Type::Void, &[id, count]);
            return;
        }
        BarOp::Sync => {
            cx.emit(Op::SetBarId, Type::Void, &[id, count]);
            bar_sync(cx);
            return;
        }
        BarOp::Red(red, p) => (red, p),
    };
    cx.emit(Op::SetBarId, Type::Void, &[id, count]);
    let n = bar_red_popc(cx, p);
    let r = match red {
        BarRed::Popc => return,
        BarRed::And => {
            let x = cx.sys(Sys::Ntid(0));
            let y = cx.sys(Sys::Ntid(1));
            let z = cx.sys(Sys::Ntid(2));
            let xy = cx.bin(Op::IMul, x, y);
            let all = cx.bin(Op::IMul, xy, z);
            let zero = cx.c32(0);
            let given = cx.cmp(Op::INe, count, zero);
            let all = cx.sel(given, count, all);
            cx.cmp(Op::IEq, n, all)
        }
        BarRed::Or => {
            let z = cx.c32(0);
            cx.cmp(Op::INe, n, z)
        }
    };
    let one = cx.c32(1);
    let zero = cx.c32(0);
    let v = cx.sel(r, one, zero);
    cx.emit(Op::SetBarResult, Type::Void, &[v]);
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
        O::Bar => bar(cx, i),
        O::B2r => {
            b2r_result(cx, i);
            Ok(())
        }
        _ => Err(cx.unsupported(i, "no semantics for this instruction")),
    }
}

/// Maxwell's BAR: `.SYNC`, `.ARV`, `.RED.POPC` / `.AND` / `.OR` on barrier ids 0–15 with or
/// without a thread count, through [`named_bar`]. The form names the operands: `BAR_II` an
/// immediate id and count (`Count` absent: the whole workgroup), `BAR_IR` an immediate id and
/// the count in `Rb`'s low bits, `BAR_RI` the id in `Ra` and an immediate count, `BAR_RR` the
/// id in `Ra`'s low bits and the count in its bits 16–27: ptxas writes the packed register as
/// both `Ra` and `Rb` (`BAR.SYNC R11, R11` for `barrier.sync %id, %count`), and NAK writes
/// `BAR.SYNC RZ, R0` (its `Rb` field left 0, an unrelated register) for the workgroup
/// barrier, so `Ra` alone is read. `BAR.SCAN` is refused (no compiler emits it).
fn bar(cx: &mut Cx, i: &Instr) -> Result<()> {
    let mode = cx.modifier::<Barm>(i, Field::Mode)?;
    let form = i.form_name();
    let kind = form.strip_prefix("BAR_").unwrap_or("");
    let (id, count) = match kind {
        "II" => (
            BarArg::Imm(i.get(Field::Imm).unwrap_or(0) as u32),
            BarArg::Imm(i.get(Field::Count).unwrap_or(0) as u32),
        ),
        "IR" => (
            BarArg::Imm(i.get(Field::Imm).unwrap_or(0) as u32),
            BarArg::Reg(cx.r(i, Field::Rb)),
        ),
        "RI" => (
            BarArg::Reg(cx.r(i, Field::Ra)),
            BarArg::Imm(i.get(Field::Count).unwrap_or(0) as u32),
        ),
        "RR" => {
            let r = cx.r(i, Field::Ra);
            (BarArg::Reg(r), BarArg::Packed(r))
        }
        _ => return Err(cx.unsupported(i, "BAR form")),
    };
    let red = match mode {
        Some(Barm::Sync) | Some(Barm::Arv) => None,
        Some(Barm::RedPopc) => Some(BarRed::Popc),
        Some(Barm::RedAnd) => Some(BarRed::And),
        Some(Barm::RedOr) => Some(BarRed::Or),
        _ => {
            let m = mode.map_or("", Barm::name);
            return Err(cx.unsupported(i, format!("BAR{m}")));
        }
    };
    let id = bar_id(cx, id);
    let count = bar_count(cx, count);
    let op = match red {
        Some(r) => BarOp::Red(r, cx.p(i, Field::Pc, Field::NotC)),
        None if mode == Some(Barm::Arv) => BarOp::Arrive,
        None => BarOp::Sync,
    };
    named_bar(cx, op, id, count);
    Ok(())
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
