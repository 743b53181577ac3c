//! Storage buffers: global accesses whose 64-bit address is a storage buffer's base plus an
//! offset become accesses to that buffer (`Space::Storage(slot)`) at a 32-bit byte offset.
//!
//! NVN and deko3d keep storage buffer r's {u64 address, u32 size} record in c0 at
//! `base + 16·r` ([`SbufTable`], from the binding layout). Code reaches the buffer by loading
//! the address from c0 and adding an offset in a carry chain (`IADD.CC` + `IADD.X`, `LEA` +
//! `LEA.HI.X`, or `LDC.64` and an immediate), so an access is traced when, following the
//! defining instructions:
//!
//! * the low 32 bits of its address are a sum in which c0\[base + 16r\] appears exactly once
//!   (through `IAdd`, the minuend of `ISub`, `Pack64`'s low half, 32/64-bit conversions), and
//! * the high 32 bits are a sum in which c0\[base + 16r + 4\] appears exactly once (through
//!   `Pack64`'s high half, `Hi32`, 64-bit `IAdd`; the carry term is opaque and may be anything),
//!
//! for the same r. Then the address is `base_r + X` and the access is at byte offset
//! `lo32(X) = lo32(address) − c0[base + 16r]`, which the pass builds by re-computing the low-word
//! sum with the base term left out. Values from other blocks are followed to their
//! definitions: a phi (after the `ssa` pass) into each operand, and where guest state stays in
//! variables a register read at a block's entry (`Get` of a GPR) into every predecessor's last write of
//! the register; all paths must give the same slot (a loop that carries the value round
//! unchanged or stepped by base-free terms adds nothing: the traced value coming back is a
//! neutral cycle). The
//! offset of such a register is `register − c0[base + 16r]` (c0 stays bound; the difference is
//! right whatever c0 holds). Anything else — another slot on some path, an address loaded from
//! memory, a base that enters a sum twice, a phi-like merge of different buffers — stays a
//! 64-bit global access. Each trace is bounded (nodes and blocks), so the pass is linear.
//!
//! **Addresses in a uniform buffer (`sbuf_ubo`).** The same rules apply when the base word pair
//! is the game's own uniform buffer u at a constant byte offset o: the low word
//! c\[U + u\]\[o\], the high word c\[U + u\]\[o + 4\] (U = [`SbufTable::ubo_bank`]: NVN 3,
//! deko3d 2; u < 8, o a multiple of 4 below 4 KiB). Such an access becomes
//! `Space::Storage(SBUF_UBO_SLOT + k)` with `Function::sbuf_ubo[k] = (u, o)`, one entry per
//! distinct (u, o), at the 32-bit offset from that address; the host reads the address from
//! the uniform buffer at bind time (reflection kind `sbuf_ubo`).

use crate::ir::{
    BlockId, Function, Inst, Op, SbufTable, SbufUbo, Space, Type, Value, SBUF_UBO_SLOT,
};
use crate::ir::{Reg, RegFile};
// Small keys, looked up and never iterated in an order that matters: Fx hashing.
use rustc_hash::FxHashMap as HashMap;

/// A storage buffer's base address: a c0 record or a word pair in a uniform buffer.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Base {
    /// The record of slot r in c0.
    Rec(u8),
    /// The 64-bit address at a constant offset of a uniform buffer.
    Ubo(SbufUbo),
}

/// Uniform-buffer slots an `sbuf_ubo` may be in (its binding number packs slot and word,
/// docs/reflection.md, and stays below 65536, which lavapipe needs).
const UBO_SLOTS: u8 = 8;
/// Byte offsets below this an `sbuf_ubo`'s address may be at (see [`UBO_SLOTS`]).
const UBO_OFFSET_END: u32 = 0x1000;

/// What a trace found: no base term, base term of slot r (once), or a contradiction.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Found {
    /// No base term of any slot.
    No,
    /// The base term of one buffer, exactly once on every path.
    Slot(Base),
    /// The register value whose trace is in progress (a loop carries it round): plus terms
    /// without a base it adds nothing, so the loop's other paths decide.
    Cycle,
    /// Two base terms, different slots on different paths, or the budget ran out.
    Bad,
}

impl Found {
    /// The sum of two terms.
    fn add(self, o: Found) -> Found {
        match (self, o) {
            (Found::No, x) | (x, Found::No) => x,
            _ => Found::Bad,
        }
    }
}

/// Which half of an address a trace follows.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Half {
    Lo,
    Hi,
}

/// Trace state shared by the accesses of one function.
struct Tracer {
    t: SbufTable,
    /// Block of each instruction in a block.
    block_of: Vec<u32>,
    /// Predecessors of each block.
    preds: Vec<Vec<BlockId>>,
    /// Per block: the last `Set` of a GPR value of each register it writes (sorted by register).
    last_set: Vec<Vec<(u8, Value)>>,
    /// Node budget of the current trace.
    budget: u32,
    /// Register traces in progress: (block, register, base word wanted).
    active: Vec<(u32, u8, Half)>,
    /// Phi traces in progress: (phi, base word wanted).
    active_phis: Vec<(Value, Half)>,
}

/// Nodes one address trace may visit (across blocks), so the pass stays linear.
const BUDGET: u32 = 256;

impl Tracer {
    fn spend(&mut self) -> bool {
        if self.budget == 0 {
            return false;
        }
        self.budget -= 1;
        true
    }

    /// The buffer whose base word (low or high, by `half`) `inst` loads: a c0 record word, or
    /// a word of a uniform buffer at a constant offset.
    fn base_word(&self, f: &Function, inst: &Inst, half: Half) -> Option<Base> {
        let Op::LoadConst(bank) = inst.op else {
            return None;
        };
        if inst.ty != Type::U32 {
            return None;
        }
        let off = u32::try_from(f.const_of(inst.args[0])?).ok()?;
        let hi = half == Half::Hi;
        if bank == self.t.bank {
            return self.t.slot_at(off, hi).map(Base::Rec);
        }
        let ubo = bank.checked_sub(self.t.ubo_bank)?;
        let offset = if hi { off.checked_sub(4)? } else { off };
        (ubo < UBO_SLOTS && offset % 4 == 0 && offset < UBO_OFFSET_END)
            .then_some(Base::Ubo(SbufUbo { ubo, offset }))
    }

    /// The base term (`want`: the base's low or high word) in the 32-bit sum giving the
    /// `half` word of `v` (a U32 value is its own low half).
    fn word(&mut self, f: &Function, v: Value, half: Half, want: Half) -> Found {
        if !self.spend() {
            return Found::Bad;
        }
        let inst = *f.inst(v);
        let [a, b, ..] = inst.args;
        let wide = inst.ty == Type::U64;
        if !wide {
            if let Some(r) = self.base_word(f, &inst, want) {
                return Found::Slot(r);
            }
        }
        match inst.op {
            // The low word of a 64-bit sum is the sum of the low words; the high word is the
            // sum of the high words plus a carry (opaque, and never a base).
            Op::IAdd => {
                let x = self.word(f, a, half, want);
                x.add(self.word(f, b, half, want))
            }
            Op::ISub => match self.word(f, b, half, want) {
                Found::No => self.word(f, a, half, want),
                _ => Found::Bad,
            },
            Op::Pack64 => self.word(f, if half == Half::Lo { a } else { b }, Half::Lo, want),
            Op::Hi32 => self.word(f, a, Half::Hi, want),
            Op::UConvert | Op::SConvert if !wide || half == Half::Lo => {
                self.word(f, a, Half::Lo, want)
            }
            Op::Get(Reg {
                file: RegFile::Gpr,
                index: n,
            }) => self.entry(f, v, n, want),
            Op::Phi(_) => self.merge(f, v, want),
            _ => Found::No,
        }
    }

    /// The base term of a phi (the SSA form of [`Tracer::entry`]): every operand must agree;
    /// the phi coming round a loop to itself is [`Found::Cycle`].
    fn merge(&mut self, f: &Function, v: Value, want: Half) -> Found {
        if self.active_phis.contains(&(v, want)) {
            return Found::Cycle;
        }
        self.active_phis.push((v, want));
        let mut acc: Option<Found> = None;
        let mut cycle = false;
        let mut bad = false;
        for &(_, a) in f.phi_args(v) {
            let r = if a == v {
                Found::Cycle
            } else {
                self.word(f, a, Half::Lo, want)
            };
            acc = match (acc, r) {
                (_, Found::Bad) => {
                    bad = true;
                    break;
                }
                (a, Found::Cycle) => {
                    cycle = true;
                    a
                }
                (None, r) => Some(r),
                (Some(x), r) if x == r => Some(x),
                _ => {
                    bad = true;
                    break;
                }
            };
        }
        self.active_phis.pop();
        match acc {
            _ if bad => Found::Bad,
            Some(x) => x,
            None if cycle => Found::Cycle,
            None => Found::No,
        }
    }

    /// The base term of register `n`'s value at the entry of the block of `v` (a `Get` of a GPR):
    /// the last write of `n` in each predecessor (through predecessors that do not write it).
    /// A value that comes round a loop to the register being traced is [`Found::Cycle`].
    fn entry(&mut self, f: &Function, v: Value, n: u8, want: Half) -> Found {
        let b = self.block_of[v.index()];
        if b == u32::MAX {
            return Found::Bad;
        }
        let key = (b, n, want);
        if self.active.contains(&key) {
            return Found::Cycle;
        }
        self.active.push(key);
        let r = self.entry_paths(f, BlockId(b), n, want);
        self.active.pop();
        r
    }

    fn entry_paths(&mut self, f: &Function, b: BlockId, n: u8, want: Half) -> Found {
        let mut seen: Vec<BlockId> = Vec::new();
        let mut work: Vec<BlockId> = self.preds[b.index()].clone();
        if work.is_empty() {
            return Found::No;
        }
        let mut acc: Option<Found> = None;
        let mut cycle = false;
        while let Some(p) = work.pop() {
            if seen.contains(&p) {
                continue;
            }
            if !self.spend() || seen.len() > 64 {
                return Found::Bad;
            }
            seen.push(p);
            let set = self.last_set[p.index()]
                .binary_search_by_key(&n, |e| e.0)
                .ok()
                .map(|i| self.last_set[p.index()][i].1);
            let r = match set {
                Some(w) => self.word(f, w, Half::Lo, want),
                // `b` passes its own entry value round a loop unchanged.
                None if p == b => Found::Cycle,
                None if self.preds[p.index()].is_empty() => Found::No,
                None => {
                    work.extend(self.preds[p.index()].iter().copied());
                    continue;
                }
            };
            acc = match (acc, r) {
                (_, Found::Bad) => return Found::Bad,
                (a, Found::Cycle) => {
                    cycle = true;
                    a
                }
                (None, r) => Some(r),
                (Some(x), r) if x == r => Some(x),
                _ => return Found::Bad,
            };
        }
        match acc {
            Some(x) => x,
            None if cycle => Found::Cycle,
            None => Found::No,
        }
    }

    /// The buffer a 64-bit address points into, if both halves trace to it.
    fn slot(&mut self, f: &Function, addr: Value) -> Option<Base> {
        if f.ty(addr) != Type::U64 {
            return None;
        }
        self.budget = BUDGET;
        let lo = self.word(f, addr, Half::Lo, Half::Lo);
        let Found::Slot(r) = lo else { return None };
        self.budget = BUDGET;
        (self.word(f, addr, Half::Hi, Half::Hi) == Found::Slot(r)).then_some(r)
    }
}

/// Builds `lo32(v) − base_r` in front of the access (appending new instructions to `out`).
struct Builder<'a> {
    f: &'a mut Function,
    t: SbufTable,
    out: Vec<Value>,
}

impl Builder<'_> {
    fn make(&mut self, op: Op, ty: Type, args: &[Value]) -> Value {
        let v = self.f.make(op, ty, args);
        self.out.push(v);
        v
    }

    fn c32(&mut self, k: u32) -> Value {
        self.make(Op::Const(k as u64), Type::U32, &[])
    }

    /// The low 32 bits of `v` as a value.
    fn lo32(&mut self, v: Value) -> Value {
        if self.f.ty(v) == Type::U32 {
            return v;
        }
        if let Some(k) = self.f.const_of(v) {
            return self.c32(k as u32);
        }
        self.make(Op::UConvert, Type::U32, &[v])
    }

    /// The low word of buffer `r`'s base address, loaded as the code loads it.
    fn base_load(&mut self, r: Base) -> Value {
        let (bank, off) = match r {
            Base::Rec(r) => (self.t.bank, self.t.base + self.t.stride * r as u32),
            Base::Ubo(u) => (self.t.ubo_bank + u.ubo, u.offset),
        };
        let k = self.c32(off);
        self.make(Op::LoadConst(bank), Type::U32, &[k])
    }

    /// `lo32(v) − base_r`, following the same shapes [`Tracer::word`] accepted.
    fn offset(&mut self, tr: &mut Tracer, v: Value, r: Base) -> Value {
        let inst = *self.f.inst(v);
        let [a, b, ..] = inst.args;
        if inst.ty == Type::U32 && tr.base_word(self.f, &inst, Half::Lo) == Some(r) {
            return self.c32(0);
        }
        match inst.op {
            Op::IAdd => {
                tr.budget = BUDGET;
                let in_a = tr.word(self.f, a, Half::Lo, Half::Lo) == Found::Slot(r);
                let (with, other) = if in_a { (a, b) } else { (b, a) };
                let x = self.offset(tr, with, r);
                let y = self.lo32(other);
                if self.f.const_of(x) == Some(0) {
                    return y;
                }
                self.make(Op::IAdd, Type::U32, &[x, y])
            }
            Op::ISub => {
                let x = self.offset(tr, a, r);
                let y = self.lo32(b);
                self.make(Op::ISub, Type::U32, &[x, y])
            }
            Op::Pack64 | Op::UConvert | Op::SConvert => self.offset(tr, a, r),
            _ => {
                // A register from another block (or anything traced through one): subtract
                // the base word as the code loaded it.
                let x = self.lo32(v);
                let base = self.base_load(r);
                self.make(Op::ISub, Type::U32, &[x, base])
            }
        }
    }
}

/// The address argument of a global access, if `op` is one.
fn global_access(op: &Op) -> bool {
    matches!(
        op,
        Op::Load(Space::Global, _)
            | Op::Store(Space::Global, _)
            | Op::Atomic(Space::Global, ..)
            | Op::AtomicCas(Space::Global, _)
    )
}

/// The same access on storage buffer `r`.
fn to_storage(op: Op, r: u8) -> Op {
    let s = Space::Storage(r);
    match op {
        Op::Load(_, w) => Op::Load(s, w),
        Op::Store(_, w) => Op::Store(s, w),
        Op::Atomic(_, a, w) => Op::Atomic(s, a, w),
        Op::AtomicCas(_, w) => Op::AtomicCas(s, w),
        o => o,
    }
}

/// Runs the pass (a no-op without a storage-buffer table or global accesses).
pub fn run(f: &mut Function) {
    let Some(t) = f.sbuf_table else { return };
    let any = f
        .blocks
        .iter()
        .any(|b| b.insts.iter().any(|&v| global_access(&f.inst(v).op)));
    if !any {
        return;
    }
    let nb = f.blocks.len();
    let mut block_of = vec![u32::MAX; f.insts.len()];
    let mut preds = vec![Vec::new(); nb];
    let mut last_set = vec![Vec::new(); nb];
    for (i, b) in f.blocks.iter().enumerate() {
        let mut sets: HashMap<u8, Value> = HashMap::default();
        for &v in &b.insts {
            block_of[v.index()] = i as u32;
            if let Op::Set(Reg {
                file: RegFile::Gpr,
                index: n,
            }) = f.inst(v).op
            {
                sets.insert(n, f.inst(v).args[0]);
            }
        }
        let mut s: Vec<(u8, Value)> = sets.into_iter().collect();
        s.sort_unstable_by_key(|e| e.0);
        last_set[i] = s;
        for s in f.succs(BlockId(i as u32)) {
            if !preds[s.index()].contains(&BlockId(i as u32)) {
                preds[s.index()].push(BlockId(i as u32));
            }
        }
    }
    let mut tr = Tracer {
        t,
        block_of,
        preds,
        last_set,
        budget: BUDGET,
        active: Vec::new(),
        active_phis: Vec::new(),
    };
    // Trace every access first (read-only), then rewrite.
    let mut plan: Vec<(usize, Value, Base)> = Vec::new();
    {
        for (i, b) in f.blocks.iter().enumerate() {
            for &v in &b.insts {
                let inst = f.inst(v);
                if global_access(&inst.op) {
                    if let Some(r) = tr.slot(f, inst.args[0]) {
                        plan.push((i, v, r));
                    }
                }
            }
        }
    }
    if plan.is_empty() {
        return;
    }
    // Storage slots: a record's own number; uniform-buffer addresses get SBUF_UBO_SLOT + k in
    // order of first use (the rest stay global once the slots run out).
    let mut slot_of: HashMap<Base, u8> = HashMap::default();
    plan.retain(|&(_, _, r)| {
        let s = match r {
            Base::Rec(r) if r < SBUF_UBO_SLOT => r,
            Base::Rec(_) => return false,
            Base::Ubo(u) => match slot_of.get(&r) {
                Some(&s) => s,
                None if f.sbuf_ubo.len() < (u8::MAX - SBUF_UBO_SLOT) as usize + 1 => {
                    let s = SBUF_UBO_SLOT + f.sbuf_ubo.len() as u8;
                    f.sbuf_ubo.push(u);
                    s
                }
                None => return false,
            },
        };
        slot_of.insert(r, s);
        true
    });
    let mut k = 0;
    for bi in 0..nb {
        if k >= plan.len() || plan[k].0 != bi {
            continue;
        }
        let old = std::mem::take(&mut f.blocks[bi].insts);
        let mut insts = Vec::with_capacity(old.len() + 8);
        // Offsets already built in this block, by (address, slot).
        let mut built: HashMap<(Value, Base), Value> = HashMap::default();
        for v in old {
            if k < plan.len() && plan[k].1 == v {
                let r = plan[k].2;
                k += 1;
                let addr = f.inst(v).args[0];
                let off = match built.get(&(addr, r)) {
                    Some(&o) => o,
                    None => {
                        let mut bld = Builder {
                            f,
                            t,
                            out: Vec::new(),
                        };
                        let o = bld.offset(&mut tr, addr, r);
                        insts.extend(bld.out);
                        built.insert((addr, r), o);
                        o
                    }
                };
                let inst = &mut f.insts[v.index()];
                inst.op = to_storage(inst.op, slot_of[&r]);
                inst.args[0] = off;
            }
            insts.push(v);
        }
        f.blocks[bi].insts = insts;
    }
}

#[cfg(test)]
mod tests;
