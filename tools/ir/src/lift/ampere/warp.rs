//! Ampere warp and system instructions: S2R/S2UR/CS2R system registers, SHFL, VOTE/VOTEU,
//! REDUX, MATCH, BAR, B2R. The subgroup operations are Maxwell's ([`crate::lift::warp`]);
//! the Ampere-only ones are exact over the active lanes:
//! - `REDUX` (a reduction into a uniform register) is the IR's [`Op::WarpReduce`], a subgroup
//!   reduction.
//! - `MATCH.ALL` holds when the active lanes' minimum and maximum agree (two reductions per
//!   32-bit word); its `Rd` is then the active-lane mask, else 0.
//! - `MATCH.ANY` is the IR's [`Op::MatchAny`]: the set of active lanes whose value equals this
//!   lane's (the back end ANDs per bit the ballot of that bit, or of its complement where this
//!   lane's bit is clear; the workgroup-memory warp emulation compares the lanes' values).
//!
//! `BAR.RED.AND` / `.OR` are the population count of the predicate compared with the
//! barrier's thread count (the workgroup size when none is given) / with 0; `B2R.RESULT`
//! reads the result and sets its predicate to `result != 0`: the AND/OR outcome (PTX's
//! `bar.red.and.pred` / `.or.pred`). Named barriers (ids 1–15, thread counts, `BAR.ARV`) name
//! their barrier with `SetBarId` / `BarrierArrive`; see [`bar`].

use super::super::io::{gfx_sreg, is_gfx_sreg_name};
use super::super::warp::{
    b2r_result, bar_count, bar_id, named_bar, packed_tid, shfl, sys_of_name, BarArg, BarOp, BarRed,
};
use super::super::{Cx, Result};
use crate::ir::{AtomOp, Op, ShflMode, Sys, Type, Value, VoteMode};
use dmsh_isa::ampere::mods::{Barredop, Cs2rSz, Reduxop, Shflmode, Sreg, Votemode};
use dmsh_isa::ampere::{Instr, Opcode};
use dmsh_isa::Field;

/// Lifts one warp/system instruction.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    use Opcode as O;
    match i.opcode() {
        O::S2r | O::S2ur | O::Cs2r => sysreg(cx, i),
        O::Shfl => {
            let mode = match cx.modifier::<Shflmode>(i, Field::Op)? {
                Some(Shflmode::Idx) => ShflMode::Idx,
                Some(Shflmode::Up) => ShflMode::Up,
                Some(Shflmode::Down) => ShflMode::Down,
                Some(Shflmode::Bfly) | None => ShflMode::Bfly,
            };
            let a = cx.r(i, Field::Ra);
            let b = reg_or_imm(cx, i, Field::Rb, Field::Imm);
            let c = reg_or_imm(cx, i, Field::Rc, Field::Imm2);
            let valid = i.pred(Field::Pd).is_some_and(|p| !p.is_pt());
            let (r, ok) = shfl(cx, mode, [a, b, c], valid);
            if let Some(ok) = ok {
                cx.set_p(i, Field::Pd, ok);
            }
            cx.set_rd(i, r);
            Ok(())
        }
        O::Vote | O::Voteu => vote(cx, i),
        O::Redux => {
            let signed = i.flag(Field::Signed);
            let o = match cx.modifier::<Reduxop>(i, Field::Op)? {
                Some(Reduxop::Default) | None => AtomOp::And,
                Some(Reduxop::Or) => AtomOp::Or,
                Some(Reduxop::Xor) => AtomOp::Xor,
                Some(Reduxop::Sum) => AtomOp::Add,
                Some(Reduxop::Min) if signed => AtomOp::SMin,
                Some(Reduxop::Min) => AtomOp::UMin,
                Some(Reduxop::Max) if signed => AtomOp::SMax,
                Some(Reduxop::Max) => AtomOp::UMax,
                Some(m) => return Err(cx.unsupported(i, format!("REDUX{m}"))),
            };
            let a = cx.r(i, Field::Ra);
            let v = cx.emit(Op::WarpReduce(o), Type::U32, &[a]);
            cx.set_dst(i, v);
            Ok(())
        }
        O::Match => match_(cx, i),
        O::Bar => bar(cx, i),
        O::B2r => {
            if i.form_name() != "B2R_RESULT" {
                return Err(cx.unsupported(i, "B2R of a barrier's state"));
            }
            b2r_result(cx, i);
            Ok(())
        }
        _ => Err(cx.unsupported(i, "no semantics for this instruction")),
    }
}

/// The register `reg` if the form has it, else the immediate `imm` (0 when neither).
fn reg_or_imm(cx: &mut Cx, i: &Instr, reg: Field, imm: Field) -> Value {
    if i.has(reg) {
        cx.r(i, reg)
    } else {
        let k = i.get(imm).unwrap_or(0) as u32;
        cx.c32(k)
    }
}

/// S2R, S2UR (into a uniform register) and CS2R (`.32`: one register; else a pair, the
/// counters' high word 0 as in the Maxwell lifter, `SRZ` zeroing both).
fn sysreg(cx: &mut Cx, i: &Instr) -> Result<()> {
    let Some(r) = cx.modifier::<Sreg>(i, Field::Sreg)? else {
        return Err(cx.unsupported(i, "system register"));
    };
    let name = r.name();
    let pair = i.opcode() == Opcode::Cs2r
        && !matches!(cx.modifier::<Cs2rSz>(i, Field::Size)?, Some(Cs2rSz::N32));
    if pair && !matches!(r, Sreg::Srz | Sreg::SrClocklo | Sreg::SrGlobaltimerlo) {
        return Err(cx.unsupported(i, format!("64-bit read of {name}")));
    }
    let v = match r {
        Sreg::SrTid => packed_tid(cx),
        Sreg::Srz => cx.c32(0),
        // Ids of the SM and engine a warp runs on: no meaning in translation (as Maxwell's
        // virtual ids).
        Sreg::SrVirtualsmid | Sreg::SrVirtualengineid => cx.sys(Sys::Zero),
        _ if is_gfx_sreg_name(name) => match gfx_sreg(cx, name) {
            Some(v) => v,
            None => return Err(cx.unsupported(i, format!("system register {name}"))),
        },
        _ => match sys_of_name(name) {
            // The workgroup's registers exist in compute shaders only (SPIR-V's
            // LocalInvocationId, WorkgroupId, … are GLCompute built-ins).
            Some(Sys::Tid(_) | Sys::Ctaid(_) | Sys::Ntid(_) | Sys::Nctaid(_))
                if cx.cfg.stage != crate::shader::Stage::Compute =>
            {
                return Err(cx.unsupported(
                    i,
                    format!(
                        "{name} is a compute register, read in a {} shader",
                        cx.cfg.stage.name()
                    ),
                ))
            }
            Some(s) => cx.sys(s),
            None => return Err(cx.unsupported(i, format!("system register {name}"))),
        },
    };
    if i.opcode() == Opcode::S2ur {
        cx.set_dst(i, v);
        return Ok(());
    }
    cx.set_rd(i, v);
    let rd = cx.rf(i, Field::Rd);
    if pair && rd < 254 {
        let z = cx.c32(0);
        cx.set_reg(rd + 1, z);
    }
    Ok(())
}

/// VOTE (into `Rd` and `Pd`) and VOTEU (into `URd` and `UPd`): the ballot of the predicate
/// and the vote of the mode.
fn vote(cx: &mut Cx, i: &Instr) -> Result<()> {
    let p = cx.apred(i, Field::Pa, Field::NotA);
    let mode = match cx.modifier::<Votemode>(i, Field::Mode)? {
        Some(m) => Some(m),
        None => cx.modifier::<Votemode>(i, Field::Op)?,
    };
    let mode = match mode {
        Some(Votemode::All) => VoteMode::All,
        Some(Votemode::Any) => VoteMode::Any,
        Some(Votemode::Eq) => VoteMode::Eq,
        m => {
            let m = m.map_or("", Votemode::name);
            return Err(cx.unsupported(i, format!("VOTE mode {m}")));
        }
    };
    let to_reg = match i.ureg(Field::URd) {
        Some(u) => u.0 < 63,
        None => cx.rf(i, Field::Rd) != 255,
    };
    if to_reg {
        let b = cx.emit(Op::Vote(VoteMode::Ballot), Type::U32, &[p]);
        cx.set_dst(i, b);
    }
    let to_pred = match i.upred(Field::UPd) {
        Some(q) => !q.is_pt(),
        None => i.pred(Field::Pd).is_some_and(|q| !q.is_pt()),
    };
    if to_pred {
        let v = cx.emit(Op::Vote(mode), Type::Bool, &[p]);
        if i.has(Field::UPd) {
            cx.set_apred(i, Field::UPd, v);
        } else {
            cx.set_p(i, Field::Pd, v);
        }
    }
    Ok(())
}

/// MATCH.ANY / MATCH.ALL of a 32-bit value or (`.U64`) a register pair.
fn match_(cx: &mut Cx, i: &Instr) -> Result<()> {
    let ra = cx.rf(i, Field::Ra);
    let words = if i.flag(Field::U64) {
        let hi = if ra == 255 { 255 } else { ra.saturating_add(1) };
        vec![cx.reg(ra), cx.reg(hi)]
    } else {
        vec![cx.reg(ra)]
    };
    if i.form_name() == "MATCH_ALL" {
        let t = cx.cbool(true);
        let active = cx.emit(Op::Vote(VoteMode::Ballot), Type::U32, &[t]);
        let mut all = cx.cbool(true);
        for &w in &words {
            let lo = cx.emit(Op::WarpReduce(AtomOp::UMin), Type::U32, &[w]);
            let hi = cx.emit(Op::WarpReduce(AtomOp::UMax), Type::U32, &[w]);
            let eq = cx.cmp(Op::IEq, lo, hi);
            all = cx.and(all, eq);
        }
        if i.pred(Field::Pd).is_some_and(|p| !p.is_pt()) {
            cx.set_p(i, Field::Pd, all);
        }
        let z = cx.c32(0);
        let v = cx.sel(all, active, z);
        cx.set_rd(i, v);
        return Ok(());
    }
    let mask = cx.emit(Op::MatchAny, Type::U32, &words);
    cx.set_rd(i, mask);
    Ok(())
}

/// The barrier id (0–15) and thread count (0: the whole workgroup) of a BAR form: `_II` an
/// immediate id and count (`Count` 0 when absent), `_IR` an immediate id and the count in
/// `Rb`, `_RI` the id in `Rb` and an immediate count, `_RR` both in `Rb` (id in the low bits,
/// count in bits 16–27, as ptxas packs them for `barrier.sync %id, %count`).
fn bar_id_count(cx: &mut Cx, i: &Instr, kind: &str) -> (Value, Value) {
    let imm_id = || BarArg::Imm(i.get(Field::Imm).unwrap_or(0) as u32);
    let imm_count = || BarArg::Imm(i.get(Field::Count).unwrap_or(0) as u32);
    let (id, count) = match kind.rsplit('_').next() {
        Some("II") => (imm_id(), imm_count()),
        Some("IR") => (imm_id(), BarArg::Reg(cx.r(i, Field::Rb))),
        Some("RI") => (BarArg::Reg(cx.r(i, Field::Rb)), imm_count()),
        Some("RR") => {
            let r = cx.r(i, Field::Rb);
            (BarArg::Reg(r), BarArg::Packed(r))
        }
        // BAR.SYNCALL: every barrier of the workgroup, taken as barrier 0.
        _ => (BarArg::Imm(0), BarArg::Imm(0)),
    };
    (bar_id(cx, id), bar_count(cx, count))
}

/// BAR.SYNC / BAR.SYNCALL / BAR.RED / BAR.ARV on any of the 16 barriers, with or without a
/// thread count, through the lifting both instruction sets share
/// ([`named_bar`](super::super::warp::named_bar)). BAR.SCAN is not translated (no compiler
/// emits it for PTX).
fn bar(cx: &mut Cx, i: &Instr) -> Result<()> {
    let form = i.form_name();
    let kind = form.trim_start_matches("BAR_");
    if kind.starts_with("SCAN") {
        return Err(cx.unsupported(i, "barrier scan"));
    }
    let (id, count) = bar_id_count(cx, i, kind);
    let op = if kind.starts_with("ARV") {
        BarOp::Arrive
    } else if kind.starts_with("SYNC") {
        BarOp::Sync
    } else {
        let p = cx.apred(i, Field::Pa, Field::NotA);
        let red = match cx.modifier::<Barredop>(i, Field::Op)? {
            Some(Barredop::Popc) => BarRed::Popc,
            Some(Barredop::And) => BarRed::And,
            Some(Barredop::Or) => BarRed::Or,
            m => {
                let m = m.map_or("", Barredop::name);
                return Err(cx.unsupported(i, format!("BAR.RED{m}")));
            }
        };
        BarOp::Red(red, p)
    };
    named_bar(cx, op, id, count);
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::lift::ampere::lift;
    use crate::lift::{Abi, Arch, Config};
    use dmsh_isa::ampere::{self, Ampere, Opcode};
    use dmsh_isa::Isa;

    /// Every form of the memory, warp and system instructions, with pseudo-random operand
    /// bits, then EXIT: lifting returns a shader or an error, never panics.
    #[test]
    fn random_forms_never_panic() {
        use Opcode as O;
        let mine = [
            O::Ld,
            O::St,
            O::Ldg,
            O::Stg,
            O::Ldl,
            O::Stl,
            O::Lds,
            O::Sts,
            O::Ldc,
            O::Atom,
            O::Atomg,
            O::Atoms,
            O::Red,
            O::Cctl,
            O::Cctll,
            O::Membar,
            O::Errbar,
            O::Qspc,
            O::Ldgsts,
            O::Ldgdepbar,
            O::S2r,
            O::S2ur,
            O::Cs2r,
            O::Shfl,
            O::Vote,
            O::Voteu,
            O::Redux,
            O::Match,
            O::Bar,
            O::B2r,
        ];
        let mut cfg = Config::compute(Abi::Cuda, [32, 1, 1]);
        cfg.arch = Arch::Ampere;
        // EXIT (corpus word).
        let exit: u128 = 0x000fea0003800000_000000000000794d;
        let mut seed: u128 = 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834;
        let (mut lifted, mut tried) = (0, 0);
        for f in &Ampere::table().forms {
            for _ in 0..8 {
                seed = seed
                    .wrapping_mul(0x2360_ed05_1fc6_5da4_4385_df64_9fcc_f645)
                    .wrapping_add(0x5851_f42d_4c95_7f2d_1405_7b7e_f767_814f);
                // Keep the scheduling bits (105-127) at a plain "wait nothing" value.
                let r = (seed ^ (seed >> 61)) & ((1u128 << 105) - 1);
                let w = (r & !f.mask) | f.value;
                let Ok(i) = ampere::decode(w) else { continue };
                if !mine.contains(&i.opcode()) {
                    break;
                }
                tried += 1;
                let code: Vec<u8> = [w, exit].iter().flat_map(|x| x.to_le_bytes()).collect();
                if lift(&code, &cfg).is_ok() {
                    lifted += 1;
                }
            }
        }
        assert!(tried > 200, "{tried} words tried");
        assert!(lifted > 0, "none of {tried} words lifted");
    }
}
