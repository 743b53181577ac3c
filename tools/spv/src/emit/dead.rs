//! Dead code in the emitted words: instructions whose results nothing uses and that have no
//! effect, removed with their decorations from the assembled module (in place).
//!
//! The IR's own `dce` leaves nothing dead, but emission makes values on the way that end up
//! unused — the U32 bits of a float the next operation takes as a float again (a register
//! holds bits; `E::op` then reuses the float), the bit patterns of an interpolated input — and
//! SPIRV-Cross and Metal's compiler would read each of them. Uses are counted over every word
//! after an instruction's result (a literal that happens to equal an id only keeps that id
//! alive: safe); an instruction is removed only when its opcode is one of [`pure`]'s, whose
//! id operands are known exactly, so the counts of the values it used go down exactly and
//! their own definitions can follow (a worklist). Linear in the words.

use rspirv::spirv::Op;
use std::ops::Range;

/// The removable instructions whose id operands start at word 3 and run to the end: every
/// function the emitter defines (the modifiers' helpers, the soft f64 routines) computes a
/// value from its arguments and nothing else, hence `OpFunctionCall`.
const PURE_ALL_IDS: &[Op] = &[
    Op::FunctionCall,
    Op::Bitcast,
    Op::ConvertFToU,
    Op::ConvertFToS,
    Op::ConvertSToF,
    Op::ConvertUToF,
    Op::UConvert,
    Op::SConvert,
    Op::FConvert,
    Op::SNegate,
    Op::FNegate,
    Op::IAdd,
    Op::FAdd,
    Op::ISub,
    Op::FSub,
    Op::IMul,
    Op::FMul,
    Op::UDiv,
    Op::SDiv,
    Op::FDiv,
    Op::UMod,
    Op::SRem,
    Op::SMod,
    Op::FRem,
    Op::FMod,
    Op::IAddCarry,
    Op::ISubBorrow,
    Op::UMulExtended,
    Op::SMulExtended,
    Op::ShiftRightLogical,
    Op::ShiftRightArithmetic,
    Op::ShiftLeftLogical,
    Op::BitwiseOr,
    Op::BitwiseXor,
    Op::BitwiseAnd,
    Op::Not,
    Op::BitFieldInsert,
    Op::BitFieldSExtract,
    Op::BitFieldUExtract,
    Op::BitReverse,
    Op::BitCount,
    Op::Any,
    Op::All,
    Op::IsNan,
    Op::IsInf,
    Op::LogicalEqual,
    Op::LogicalNotEqual,
    Op::LogicalOr,
    Op::LogicalAnd,
    Op::LogicalNot,
    Op::Select,
    Op::IEqual,
    Op::INotEqual,
    Op::UGreaterThan,
    Op::SGreaterThan,
    Op::UGreaterThanEqual,
    Op::SGreaterThanEqual,
    Op::ULessThan,
    Op::SLessThan,
    Op::ULessThanEqual,
    Op::SLessThanEqual,
    Op::FOrdEqual,
    Op::FUnordEqual,
    Op::FOrdNotEqual,
    Op::FUnordNotEqual,
    Op::FOrdLessThan,
    Op::FUnordLessThan,
    Op::FOrdGreaterThan,
    Op::FUnordGreaterThan,
    Op::FOrdLessThanEqual,
    Op::FUnordLessThanEqual,
    Op::FOrdGreaterThanEqual,
    Op::FUnordGreaterThanEqual,
    Op::CompositeConstruct,
    Op::AccessChain,
    Op::InBoundsAccessChain,
    Op::CopyObject,
    Op::Phi,
];

/// [`pure`]'s answer for every opcode below 256 (all removable ones are), as one byte: 0 not
/// removable, 1 ids from word 3 with literals after the first (`OpLoad`'s memory operands,
/// `OpCompositeExtract`'s indices), 2 ids from word 5 (`OpExtInst`), 3 ids from word 3 on.
/// A table, not a `match` on `spirv::Op`: converting each opcode to the enum was most of
/// this pass's time.
const PURE: [u8; 256] = {
    let mut t = [0u8; 256];
    t[Op::Load as usize] = 1;
    t[Op::CompositeExtract as usize] = 1;
    t[Op::ExtInst as usize] = 2;
    let mut i = 0;
    while i < PURE_ALL_IDS.len() {
        t[PURE_ALL_IDS[i] as usize] = 3;
        i += 1;
    }
    t
};

/// Where the id operands of a removable instruction start and whether every word from there
/// on is an id (`false`: only that one word is, literals follow).
#[inline]
fn pure(op: u32) -> Option<(usize, bool)> {
    match PURE.get(op as usize) {
        Some(1) => Some((3, false)),
        Some(2) => Some((5, true)),
        Some(3) => Some((3, true)),
        _ => None,
    }
}

/// `def`'s entry for an id no removable instruction defines (no instruction starts at word
/// 0: the header is there).
const NONE: u32 = 0;
/// `def`'s entry for an id found dead.
const DEAD: u32 = u32::MAX;

/// Removes the dead pure instructions of `module[body..]` (the function words, which run to
/// the end) and the `OpDecorate`s of their results from `module[annotations]`; `bound` is the
/// module's id bound. Everything between the two ranges moves down as one run.
pub(super) fn remove(module: &mut Vec<u32>, annotations: Range<usize>, body: usize, bound: u32) {
    debug_assert!(annotations.end <= body && body > 0);
    let n = bound as usize;
    let mut uses = vec![0u32; n];
    // The word offset in `module` of each removable instruction, by its result id.
    let mut def = vec![NONE; n];
    // The ids removable instructions define, in order.
    let mut defined: Vec<u32> = Vec::with_capacity(n / 2);
    let mut rest = &module[body..];
    let mut at = body;
    while let Some(&h) = rest.first() {
        let len = (h >> 16) as usize;
        if len == 0 || len > rest.len() {
            return; // not well formed: leave it to the validator
        }
        let (inst, tail) = rest.split_at(len);
        let operands = match pure(h & 0xffff) {
            Some(_) if len >= 3 => {
                if let Some(d) = def.get_mut(inst[2] as usize) {
                    *d = at as u32;
                    defined.push(inst[2]);
                }
                &inst[3..]
            }
            // Results of other instructions, and their operands: every word counts as a use.
            _ => &inst[1..],
        };
        for &w in operands {
            if let Some(u) = uses.get_mut(w as usize) {
                *u += 1;
            }
        }
        rest = tail;
        at += len;
    }
    // An id goes on the worklist once: when its count reaches zero, or at the start.
    defined.retain(|&id| uses[id as usize] == 0);
    let mut work = defined;
    // The removed instructions' word ranges in `module`, the annotations' first.
    let mut gone: Vec<(usize, usize)> = Vec::new();
    while let Some(id) = work.pop() {
        let id = id as usize;
        if def[id] == DEAD {
            continue; // defined twice (invalid): listed twice
        }
        let at = def[id] as usize;
        def[id] = DEAD;
        let len = (module[at] >> 16) as usize;
        gone.push((at, at + len));
        let Some((first, all)) = pure(module[at] & 0xffff) else {
            continue;
        };
        let ids = if all {
            &module[at + first..at + len]
        } else {
            &module[at + first..(at + first + 1).min(at + len)]
        };
        for &w in ids {
            let w = w as usize;
            if w < n && uses[w] > 0 {
                uses[w] -= 1;
                if uses[w] == 0 && def[w] != NONE && def[w] != DEAD {
                    work.push(w as u32);
                }
            }
        }
    }
    if gone.is_empty() {
        return;
    }
    let dead_body = gone.len();
    let mut at = annotations.start;
    while at < annotations.end {
        let len = (module[at] >> 16).max(1) as usize;
        let end = (at + len).min(annotations.end);
        let target = if at + 1 < annotations.end {
            module[at + 1]
        } else {
            0
        } as usize;
        if module[at] & 0xffff == Op::Decorate as u32 && def.get(target) == Some(&DEAD) {
            gone.push((at, end));
        }
        at = end;
    }
    // Annotations (pushed in order) first, then the body's instructions by offset.
    gone.rotate_left(dead_body);
    let n_ann = gone.len() - dead_body;
    gone[n_ann..].sort_unstable();
    // Compacted in place, a run of kept words at a time (few are removed).
    let (mut kept, mut run) = gone[0];
    for &(from, to) in &gone[1..] {
        module.copy_within(run..from, kept);
        kept += from - run;
        run = to;
    }
    let end = module.len();
    module.copy_within(run..end, kept);
    module.truncate(kept + end - run);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(op: Op, words: &[u32]) -> Vec<u32> {
        let mut v = vec![((words.len() as u32 + 1) << 16) | op as u32];
        v.extend_from_slice(words);
        v
    }

    #[test]
    fn unused_chains_go_and_their_decorations_with_them() {
        // %10 = load %5 (used by the store); %11 = fmul %10 %10 (unused: dead), decorated;
        // %12 = bitcast %11 (unused: dead first, then %11); %13 = composite extract %7 3
        // (unused) — its literal 3 must not count against id 3.
        let body = [
            inst(Op::Load, &[1, 10, 5]),
            inst(Op::FMul, &[1, 11, 10, 10]),
            inst(Op::Bitcast, &[2, 12, 11]),
            inst(Op::CompositeExtract, &[1, 13, 7, 3]),
            inst(Op::Load, &[1, 3, 6]),
            inst(Op::Store, &[8, 10]),
            inst(Op::Store, &[9, 3]),
        ]
        .concat();
        let ann = [inst(Op::Decorate, &[11, 42]), inst(Op::Decorate, &[10, 42])].concat();
        // Annotations, a global between them and the body, the body.
        let global = inst(Op::TypeVoid, &[1]);
        let mut module = [ann.clone(), global.clone(), body].concat();
        let at = ann.len() + global.len();
        remove(&mut module, 0..ann.len(), at, 20);
        let want = [
            inst(Op::Decorate, &[10, 42]),
            global,
            inst(Op::Load, &[1, 10, 5]),
            inst(Op::Load, &[1, 3, 6]),
            inst(Op::Store, &[8, 10]),
            inst(Op::Store, &[9, 3]),
        ]
        .concat();
        assert_eq!(module, want);
    }
}
