//! Dead code in the emitted words: instructions whose results nothing uses and that have no
//! effect, left out with their decorations when the module is assembled.
//!
//! The IR's own `dce` leaves nothing dead, but emission makes values on the way that end up
//! unused — the U32 bits of a float the next operation takes as a float again (a register
//! holds bits; `E::op` then reuses the float), the bit patterns of an interpolated input — and
//! SPIRV-Cross and Metal's compiler would read each of them. Uses are counted over every word
//! after an instruction's result (a literal that happens to equal an id only keeps that id
//! alive: safe), as the builder writes the code ([`Uses`]); an instruction is removed only
//! when its opcode is one of [`pure`]'s, whose id operands are known exactly, so the counts
//! of the values it used go down exactly and their own definitions can follow (a worklist,
//! [`sweep`]). Linear in the words; the code is not read again but to copy it.

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

/// [`Uses::def`]'s entry for an id no removable instruction defines (offset 0 is an
/// `OpFunction`'s).
const NONE: u32 = 0;
/// [`Uses::def`]'s entry for an id found dead.
const DEAD: u32 = u32::MAX;

/// The uses of ids in function code and where the removable instructions are, counted as
/// the code is written (or by [`Uses::scan`]): what [`sweep`] needs. Every word of an
/// instruction after its result counts ([`Uses::inst`]), so counting while emitting finds
/// what a scan of the code would, without reading the code again. Offsets are the
/// writer's (the builder's code and entry words), never 0 for a removable instruction.
#[derive(Default)]
pub(super) struct Uses {
    /// Per id: how many words name it.
    count: Vec<u32>,
    /// Per id: the offset of the removable instruction defining it, or [`NONE`] (as long
    /// as `count`).
    def: Vec<u32>,
    /// Counted words that were not below the id bound when counted (literals; ids made
    /// later): counted against the final bound by [`sweep`].
    far: Vec<u32>,
}

impl Uses {
    /// Counts one use of word `w`; `bound` is the id bound so far.
    #[inline]
    pub(super) fn word(&mut self, w: u32, bound: u32) {
        match self.count.get_mut(w as usize) {
            Some(c) => *c += 1,
            None => self.word_far(w, bound),
        }
    }

    #[cold]
    fn word_far(&mut self, w: u32, bound: u32) {
        if w < bound {
            self.grow(bound as usize);
            self.count[w as usize] += 1;
        } else {
            self.far.push(w);
        }
    }

    /// Room for ids below `n` at least.
    #[cold]
    fn grow(&mut self, n: usize) {
        let n = n.max(2 * self.count.len()).max(512);
        self.count.resize(n, 0);
        self.def.resize(n, NONE);
    }

    /// Records a removable instruction defining `id` at offset `at`.
    #[inline]
    pub(super) fn def(&mut self, id: u32, at: u32) {
        let i = id as usize;
        if i >= self.def.len() {
            self.grow(i + 1);
        }
        self.def[i] = at;
    }

    /// Whether `op` is removable (its result id is word 2, its uses words 3 on).
    #[inline]
    pub(super) fn removable(op: u32) -> bool {
        pure(op).is_some()
    }

    /// Counts the well-formed instruction `inst` at offset `at`; `bound`: as in
    /// [`Uses::word`].
    #[inline]
    pub(super) fn inst(&mut self, inst: &[u32], at: u32, bound: u32) {
        let operands = match pure(inst[0] & 0xffff) {
            Some(_) if inst.len() >= 3 => {
                self.def(inst[2], at);
                &inst[3..]
            }
            // Results of other instructions, and their operands: every word counts as a use.
            _ => &inst[1..],
        };
        for &w in operands {
            self.word(w, bound);
        }
    }

    /// Counts every instruction of `code` (offsets from `base`); false when the code is
    /// not well formed (then nothing should be removed: it is left to the validator).
    pub(super) fn scan(&mut self, code: &[u32], base: u32, bound: u32) -> bool {
        let mut at = 0;
        while let Some(&h) = code.get(at) {
            let len = (h >> 16) as usize;
            if len == 0 || at + len > code.len() {
                return false;
            }
            self.inst(&code[at..at + len], base + at as u32, bound);
            at += len;
        }
        true
    }
}

/// The dead instructions [`sweep`] found.
pub(super) struct Dead {
    /// Per id: [`DEAD`] when its definition was removed.
    def: Vec<u32>,
    /// The removed instructions' offsets, in increasing order.
    gone: Vec<u32>,
}

/// Finds the dead removable instructions given the code's uses (`bound`: the module's id
/// bound); `code(at)` is the instruction at offset `at` (its words from there on).
pub(super) fn sweep<'a>(uses: Uses, bound: u32, code: impl Fn(u32) -> &'a [u32]) -> Dead {
    let Uses {
        count: mut uses,
        mut def,
        far,
    } = uses;
    // Ids past the tables were never counted nor defined by a removable instruction (code
    // copied uncounted, `Builder::append_function`): none of them can be removed, and their
    // counts do not matter.
    let n = (bound as usize).min(uses.len());
    for w in far {
        if (w as usize) < n {
            uses[w as usize] += 1;
        }
    }
    // An id goes on the worklist once: when its count reaches zero, or at the start.
    // Room for the usual shader's dead code (no regrowth).
    let mut work: Vec<u32> = Vec::with_capacity(64);
    let unused = |d: u32, u: u32| (d != NONE) & (u == 0);
    let mut look = |from: usize, ds: &[u32], us: &[u32]| {
        for (i, (&d, &u)) in ds.iter().zip(us).enumerate() {
            if unused(d, u) {
                work.push((from + i) as u32);
            }
        }
    };
    // Few ids start it: a branch-free test of a chunk of ids at a time (vectorized) finds
    // the chunks to look into.
    const CHUNK: usize = 16;
    let (ds, us) = (def[..n].chunks_exact(CHUNK), uses[..n].chunks_exact(CHUNK));
    let (dr, ur) = (ds.remainder(), us.remainder());
    for (k, (d, u)) in ds.zip(us).enumerate() {
        let (d16, u16): (&[u32; CHUNK], &[u32; CHUNK]) =
            (d.try_into().unwrap(), u.try_into().unwrap());
        if (0..CHUNK).fold(false, |any, i| any | unused(d16[i], u16[i])) {
            look(k * CHUNK, d, u);
        }
    }
    look(n - dr.len(), dr, ur);
    let mut gone = Vec::with_capacity(64);
    while let Some(id) = work.pop() {
        let id = id as usize;
        let at = def[id];
        def[id] = DEAD;
        gone.push(at);
        let inst = code(at);
        let len = ((inst[0] >> 16) as usize).min(inst.len());
        let Some((first, all)) = pure(inst[0] & 0xffff) else {
            continue;
        };
        let ids = if all {
            &inst[first.min(len)..len]
        } else {
            &inst[first.min(len)..(first + 1).min(len)]
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
    gone.sort_unstable();
    Dead { def, gone }
}

impl Dead {
    /// Whether nothing was found dead.
    pub(super) fn is_empty(&self) -> bool {
        self.gone.is_empty()
    }

    /// Appends to `out` the instructions of `code` (offsets from `base`) not removed.
    pub(super) fn copy_code(&self, out: &mut Vec<u32>, code: &[u32], base: u32) {
        let end = base as u64 + code.len() as u64;
        let from = self.gone.partition_point(|&g| g < base);
        // Runs of kept words between the removed instructions.
        let mut run = 0;
        for &g in &self.gone[from..] {
            if g as u64 >= end {
                break;
            }
            let at = (g - base) as usize;
            out.extend_from_slice(&code[run..at]);
            run = (at + (code[at] >> 16) as usize).min(code.len());
        }
        out.extend_from_slice(&code[run..]);
    }

    /// Appends to `out` the annotations `ann` but the `OpDecorate`s of removed results.
    pub(super) fn copy_annotations(&self, out: &mut Vec<u32>, ann: &[u32]) {
        let mut at = 0;
        let mut run = 0;
        while at < ann.len() {
            let len = (ann[at] >> 16).max(1) as usize;
            let end = (at + len).min(ann.len());
            let target = ann.get(at + 1).map_or(0, |&t| t as usize);
            if ann[at] & 0xffff == Op::Decorate as u32 && self.def.get(target) == Some(&DEAD) {
                out.extend_from_slice(&ann[run..at]);
                run = end;
            }
            at = end;
        }
        out.extend_from_slice(&ann[run..]);
    }
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
        // The function's code (an `OpFunction` first: offset 0 is never removable), counted
        // by a scan.
        let code = [inst(Op::Function, &[1, 2, 0, 4]), body].concat();
        let mut uses = Uses::default();
        assert!(uses.scan(&code, 0, 20));
        let dead = sweep(uses, 20, |at| &code[at as usize..]);
        let mut module = Vec::new();
        dead.copy_annotations(&mut module, &ann);
        // The code in two parts, as the builder copies it around its entry words.
        dead.copy_code(&mut module, &code[..9], 0);
        dead.copy_code(&mut module, &code[9..], 9);
        let want = [
            inst(Op::Decorate, &[10, 42]),
            inst(Op::Function, &[1, 2, 0, 4]),
            inst(Op::Load, &[1, 10, 5]),
            inst(Op::Load, &[1, 3, 6]),
            inst(Op::Store, &[8, 10]),
            inst(Op::Store, &[9, 3]),
        ]
        .concat();
        assert_eq!(module, want);
    }
}
