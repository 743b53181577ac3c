//! Control flow: BRA, BRX, JMP, JMX, SSY/SYNC, PBK/BRK, PCNT/CONT, CAL/JCAL/PRET/RET, EXIT,
//! KIL, BPT, and the no-ops (NOP, DEPBAR).

use super::{Cx, Result};
use crate::ir::{Op, StackKind, Terminator, Type, Value};
use crate::shader::Stage;
use dmsh_isa::mods::{Bptm, Ccn, Cct, Ccx};
use dmsh_isa::{Field, Instr, Opcode};

/// Whether the instruction ends its block.
pub fn ends_block(op: Opcode) -> bool {
    use Opcode as O;
    matches!(
        op,
        O::Bra
            | O::Brx
            | O::Jmp
            | O::Jmx
            | O::Sync
            | O::Brk
            | O::Cont
            | O::Ret
            | O::Exit
            | O::Kil
            | O::Cal
            | O::Jcal
            | O::Bpt
    )
}

/// Whether a predicated form of the instruction needs the next instruction as a leader.
pub fn is_branchy(op: Opcode) -> bool {
    ends_block(op)
}

/// Whether the family handles the guard predicate itself.
pub fn handles_guard(op: Opcode) -> bool {
    op == Opcode::Bra
}

/// The condition-code test of a control-flow instruction (`EXIT CC.NEU`, `BRA CC.EQ, …`) as a
/// condition; `None` when there is none or it is `CC.T`. The lifter ANDs it with the guard.
pub fn cc_condition(cx: &mut Cx, i: &Instr) -> Result<Option<Value>> {
    // `CcTest` is `mods::Cct` (branches) or `mods::Ccx` (KIL, EXIT, SYNC, …): both list
    // CSETP's tests (`mods::Ccn`) at the same values, printed `CC.LT` (`CC.LT,`), `CC.T` as
    // nothing (see `cc_tests_share_their_values` in the tests below).
    let value = match i.modifier_as::<Cct>(Field::CcTest) {
        Some(t) => t.value(),
        None => match cx.modifier::<Ccx>(i, Field::CcTest)? {
            Some(t) => t.value(),
            None => return Ok(None),
        },
    };
    let t = match Ccn::from_value(value) {
        None | Some(Ccn::T) => return Ok(None),
        Some(t) => t,
    };
    super::int::flag_test(cx, t)
        .map(Some)
        .ok_or_else(|| cx.unsupported(i, format!("condition-code test CC{t}")))
}

/// Lifts one control-flow instruction.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    use Opcode as O;
    let op = i.opcode();
    match op {
        O::Nop | O::Depbar => Ok(()),
        O::Bra => {
            if !i.has(Field::Target) {
                return Err(cx.unsupported(i, "branch through a constant bank"));
            }
            let t = norm(i.target(cx.addr as u64).unwrap_or(0) as u32);
            let tb = cx.block_at(t)?;
            let (g, neg) = i.guard();
            let cc = cc_condition(cx, i)?;
            let p = match (g.is_pt(), cc) {
                (true, None) => {
                    cx.finish(Terminator::Jump(tb));
                    return Ok(());
                }
                (true, Some(c)) => c,
                (false, None) => cx.pred(g.0, neg),
                (false, Some(c)) => {
                    let p = cx.pred(g.0, neg);
                    cx.and(p, c)
                }
            };
            let nb = cx.block_at(cx.next)?;
            cx.finish(Terminator::Branch(p, tb, nb));
            Ok(())
        }
        O::Jmp => {
            let t = norm(i.get(Field::Imm).unwrap_or(0) as u32);
            let tb = cx.block_at(t)?;
            cx.finish(Terminator::Jump(tb));
            Ok(())
        }
        O::Brx | O::Jmx => {
            if !i.has(Field::Ra) {
                return Err(cx.unsupported(i, "indirect branch through a constant bank"));
            }
            let r = cx.r(i, Field::Ra);
            let imm = i.get(Field::Imm).unwrap_or(0) as u32;
            // BRX is relative to the address after it (scheduling words included).
            let base = if op == O::Brx {
                (cx.addr + 8).wrapping_add(imm)
            } else {
                imm
            };
            // The container's jump-table targets let the structurizer make this a switch.
            if cx.f.indirect_targets.is_empty() {
                cx.f.indirect_targets = cx.cfg.extra_targets.iter().map(|&t| norm(t)).collect();
            }
            let k = cx.c32(base);
            let t = cx.add(r, k);
            // A target naming a scheduling word continues after it.
            let m = cx.c32(31);
            let low = cx.and(t, m);
            let z = cx.c32(0);
            let at_ctrl = cx.cmp(Op::IEq, low, z);
            let eight = cx.c32(8);
            let skip = cx.sel(at_ctrl, eight, z);
            let t = cx.add(t, skip);
            cx.finish(Terminator::Dynamic(t));
            Ok(())
        }
        O::Ssy | O::Pbk | O::Pcnt | O::Pret => {
            if !i.has(Field::Target) {
                return Err(cx.unsupported(i, "target in a constant bank"));
            }
            let t = norm(i.target(cx.addr as u64).unwrap_or(0) as u32);
            let kind = match op {
                O::Ssy => StackKind::Sync,
                O::Pbk => StackKind::Break,
                O::Pcnt => StackKind::Cont,
                _ => StackKind::Call,
            };
            let v = cx.c32(t);
            cx.emit(Op::StackPush(kind), Type::Void, &[v]);
            cx.f.stack_pushes = true;
            Ok(())
        }
        O::Sync | O::Brk | O::Cont | O::Ret => {
            let kind = match op {
                O::Sync => StackKind::Sync,
                O::Brk => StackKind::Break,
                O::Cont => StackKind::Cont,
                _ => StackKind::Call,
            };
            let t = cx.emit(Op::StackPop(kind), Type::U32, &[]);
            cx.finish(Terminator::Dynamic(t));
            Ok(())
        }
        O::Cal | O::Jcal => {
            let t = if op == O::Cal {
                if !i.has(Field::Target) {
                    return Err(cx.unsupported(i, "call through a constant bank"));
                }
                norm(i.target(cx.addr as u64).unwrap_or(0) as u32)
            } else {
                norm(i.get(Field::Imm).unwrap_or(0) as u32)
            };
            let tb = cx.block_at(t)?;
            let ret = cx.c32(cx.next);
            cx.emit(Op::StackPush(StackKind::Call), Type::Void, &[ret]);
            cx.f.stack_pushes = true;
            cx.finish(Terminator::Jump(tb));
            Ok(())
        }
        O::Exit => {
            cx.finish(Terminator::Exit);
            Ok(())
        }
        O::Kil => {
            cx.finish(if cx.cfg.stage == Stage::Fragment {
                Terminator::Kill
            } else {
                Terminator::Exit
            });
            Ok(())
        }
        O::Bpt => match cx.modifier::<Bptm>(i, Field::Mode)? {
            Some(Bptm::Trap) => {
                cx.finish(Terminator::Exit);
                Ok(())
            }
            _ => Ok(()),
        },
        _ => Err(cx.unsupported(i, "no semantics for this instruction")),
    }
}

/// A branch target as execution sees it: nvdisasm may name a scheduling word, execution
/// continues at the instruction after it.
pub fn norm(t: u32) -> u32 {
    if t.is_multiple_of(32) {
        t + 8
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use dmsh_isa::mods::{Ccn, Cct, Ccx};

    /// `cc_condition` reads a branch's or EXIT's test as the CSETP test of the same value: the
    /// table's CCT and CCX lines must name CCN's tests in CCN's order (CCT with a comma).
    #[test]
    fn cc_tests_share_their_values() {
        let texts = |v: u64| {
            let n = Ccn::from_value(v).expect("CCN names every value");
            (n, format!("CC{n}"))
        };
        for t in Cct::ALL {
            let (n, want) = texts(t.value());
            let got = t.name().trim_end_matches(',');
            assert!(
                got == want || (got.is_empty() && n == Ccn::T),
                "{t:?}: {got} vs {want}"
            );
        }
        for t in Ccx::ALL {
            let (n, want) = texts(t.value());
            let got = t.name();
            assert!(
                got == want || (got.is_empty() && n == Ccn::T),
                "{t:?}: {got} vs {want}"
            );
        }
        assert_eq!(Cct::ALL.len(), Ccn::ALL.len());
        assert_eq!(Ccx::ALL.len(), Ccn::ALL.len());
    }
}
