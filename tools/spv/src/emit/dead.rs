//! Dead code in the emitted words: instructions whose results nothing uses and that have no
//! effect, removed with their decorations just before the module is assembled.
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

/// Removes the dead pure instructions of `body` (function words) and the `OpDecorate`s of
/// their results from `annotations`; `bound` is the module's id bound.
pub(super) fn remove(body: &mut Vec<u32>, annotations: &mut Vec<u32>, bound: u32) {
    let n = bound as usize;
    let mut uses = vec![0u32; n];
    // The word offset of each removable instruction, by its result id (u32::MAX: none).
    let mut def = vec![u32::MAX; n];
    let mut at = 0;
    while at < body.len() {
        let len = (body[at] >> 16) as usize;
        if len == 0 || at + len > body.len() {
            return; // not well formed: leave it to the validator
        }
        let op = body[at] & 0xffff;
        let from = match pure(op) {
            Some(_) if len >= 3 => {
                let id = body[at + 2] as usize;
                if id < n {
                    def[id] = at as u32;
                }
                3
            }
            // Results of other instructions, and their operands: every word counts as a use.
            _ => 1,
        };
        for &w in &body[at + from..at + len] {
            if let Some(u) = uses.get_mut(w as usize) {
                *u += 1;
            }
        }
        at += len;
    }
    let mut dead = vec![false; n];
    let mut work: Vec<usize> = (0..n)
        .filter(|&id| def[id] != u32::MAX && uses[id] == 0)
        .collect();
    let mut any = false;
    while let Some(id) = work.pop() {
        if dead[id] {
            continue;
        }
        dead[id] = true;
        any = true;
        let at = def[id] as usize;
        let len = (body[at] >> 16) as usize;
        let Some((first, all)) = pure(body[at] & 0xffff) else {
            continue;
        };
        let ids = if all {
            &body[at + first..at + len]
        } else {
            &body[at + first..(at + first + 1).min(at + len)]
        };
        for &w in ids {
            let w = w as usize;
            if w < n && uses[w] > 0 {
                uses[w] -= 1;
                if uses[w] == 0 && def[w] != u32::MAX {
                    work.push(w);
                }
            }
        }
    }
    if !any {
        return;
    }
    // Compacted in place, a run of kept instructions at a time (few are removed).
    let (mut kept, mut run, mut at) = (0, 0, 0);
    while at < body.len() {
        let len = (body[at] >> 16) as usize;
        let removed = pure(body[at] & 0xffff).is_some()
            && len >= 3
            && dead.get(body[at + 2] as usize) == Some(&true);
        if removed {
            body.copy_within(run..at, kept);
            kept += at - run;
            run = at + len;
        }
        at += len;
    }
    body.copy_within(run..at, kept);
    body.truncate(kept + at - run);
    let (mut kept, mut run, mut at) = (0, 0, 0);
    while at < annotations.len() {
        let len = (annotations[at] >> 16).max(1) as usize;
        let end = (at + len).min(annotations.len());
        let target = annotations.get(at + 1).copied().unwrap_or(0) as usize;
        let gone =
            annotations[at] & 0xffff == Op::Decorate as u32 && dead.get(target) == Some(&true);
        if gone {
            annotations.copy_within(run..at, kept);
            kept += at - run;
            run = end;
        }
        at = end;
    }
    annotations.copy_within(run..at, kept);
    annotations.truncate(kept + at - run);
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
        let mut body = [
            inst(Op::Load, &[1, 10, 5]),
            inst(Op::FMul, &[1, 11, 10, 10]),
            inst(Op::Bitcast, &[2, 12, 11]),
            inst(Op::CompositeExtract, &[1, 13, 7, 3]),
            inst(Op::Load, &[1, 3, 6]),
            inst(Op::Store, &[8, 10]),
            inst(Op::Store, &[9, 3]),
        ]
        .concat();
        let mut ann = [inst(Op::Decorate, &[11, 42]), inst(Op::Decorate, &[10, 42])].concat();
        remove(&mut body, &mut ann, 20);
        let want = [
            inst(Op::Load, &[1, 10, 5]),
            inst(Op::Load, &[1, 3, 6]),
            inst(Op::Store, &[8, 10]),
            inst(Op::Store, &[9, 3]),
        ]
        .concat();
        assert_eq!(body, want);
        assert_eq!(ann, inst(Op::Decorate, &[10, 42]));
    }
}
