//! The lifting context: the block being filled and helpers every family uses (operand
//! reading, guest-state access, small arithmetic builders).

use super::{Config, LiftError, Result};
use crate::ir::Reg;
use crate::ir::{BlockId, Flag, Function, Op, Round, Space, Sys, Terminator, Type, Value};
use dmsh_isa::engine::{Instr as AnyInstr, Isa};
use dmsh_isa::{mods, Field, Instr, Modifier};
use std::collections::BTreeMap;

/// The lifting context for one guest block.
pub struct Cx<'a> {
    /// The function being built.
    pub f: &'a mut Function,
    /// The block being filled.
    pub b: BlockId,
    /// The configuration (ABI, sizes, known banks).
    pub cfg: &'a Config,
    /// Guest address → block.
    pub blocks: &'a BTreeMap<u32, BlockId>,
    /// Byte offset of the instruction being lifted.
    pub addr: u32,
    /// Byte offset of the next instruction.
    pub next: u32,
    /// Whether the current block has its terminator.
    pub ended: bool,
    /// Constants and other pure values already made, by block ([`Made`]). They are defined
    /// in their block, so reusing one keeps values block-local.
    pub(crate) made: Made,
    /// Guest state in the current block: known values and writes whose `Set` is placed when
    /// the block ends (`lift/state.rs`).
    pub(crate) state: super::state::State,
    /// The end of the highest local-memory access at a constant offset from its base
    /// register (`imm + bytes` of LDL/STL): a lower bound of the local memory the code uses,
    /// so a missing or too small declared size cannot silently cut the array short.
    pub local_extent: u32,
    /// Whether an instruction made so far accesses local memory (the shader then gets some).
    pub uses_local: bool,
    /// Whether an instruction made so far accesses shared memory.
    pub uses_shared: bool,
    /// The open run of predicated instructions: (guard, negated, then-block, continuation).
    /// The next instruction with the same guard joins the then-block while the continuation
    /// is still empty and nothing in the run wrote the guard.
    pub(crate) pred_run: Option<(Reg, bool, BlockId, BlockId)>,
    /// Whether `.CC` instructions compute the zero, sign and overflow flags. The driver lifts
    /// first without them (most shaders read only the carry, through `.X`) and lifts again
    /// with them when an instruction reads one ([`Cx::zso_read`]).
    pub zso_flags: bool,
    /// Whether an instruction read the zero, sign or overflow flag while `zso_flags` was
    /// false: the lifting is void and the driver starts again with the flags.
    pub zso_read: bool,
    /// Whether a register of the current block holds a float, written ([`Cx::set_reg`]) or
    /// read ([`Cx::reg_f32`]) as one: [`Cx::finish`] gives a written one its bits for its
    /// `Set`.
    float_regs: bool,
    /// The first two `XMAD`s of the current 32-bit multiply idiom, if the last ones lifted
    /// were ([`super::int`]'s `xmad`).
    pub(crate) xmad: super::int::XmadSeen,
    /// While an instruction runs unconditionally in place of its guard
    /// ([`Cx::if_converted`]): each guest register it writes, with its value before.
    journal: Option<Vec<(Reg, Value)>>,
    /// Whether the guarded instructions after a byte offset that continue a run of a guard
    /// (predicate, negated) all convert too (the driver's, `drive::run_converts`): a guarded
    /// instruction is if-converted ([`Cx::if_converted`]) only then.
    pub(crate) run_converts: Option<&'a dyn Fn(u32, (u8, bool)) -> bool>,
}

/// Entries of [`Made::bfe`].
const BFE_CACHE: usize = 64;
/// Entries of [`Made::pure`] (a power of two; fewer lose a noticeable share of the equal
/// values to collisions).
const PURE_CACHE: usize = 1024;

/// Whether [`Cx::emit`] looks for an equal instruction earlier in the block before making
/// one of operation `op`: pure operations (`cse` merges equal ones) that the lifter often
/// makes again in one block — a register read as a float by several instructions, the
/// 64-bit address of several accesses, the halves' products of `XMAD` sequences, one
/// constant-bank word or system value read twice, the lane factors (selects, products,
/// negations) of several `FSWZADD`s with one swizzle. Operations that rarely repeat in a
/// block stay out (an `IAdd`: `cse` merges about 100 per yuzu round, 7 of them in one block):
/// the lookup would cost more than the copies it saves.
#[inline(always)]
fn reused(op: Op) -> bool {
    matches!(
        op,
        Op::Bitcast
            | Op::Pack64
            | Op::IMul
            | Op::And
            | Op::Not
            | Op::UGt
            | Op::UMin
            | Op::LoadConst(_)
            | Op::Ftz
            | Op::IEq
            | Op::INe
            | Op::Shl
            | Op::LShr
            | Op::Xor
            | Op::FConvert(_)
            | Op::Select
            | Op::FMul(_)
            | Op::FNeg
    ) || matches!(op, Op::SysVal(s) if s != Sys::Clock)
}

/// The values made in each block of one lifting, to reuse (kept across its blocks: keys
/// carry the block, so nothing is cleared between blocks; and, like the guest-state tables,
/// across the liftings of a thread: [`Made::take`], [`Made::give_back`]; keys are the block
/// plus a base that moves past every block of the previous lifting, so the tables are not
/// refilled, which was a noticeable part of lifting a small shader). Constants: every one of
/// the current block in an open-addressing table where another block's entry counts as a
/// free slot (so the table never needs clearing), a map for the few a long probe leaves out,
/// and a front for the most common ones, U32 constants below 64 by value. Other pure values:
/// direct-mapped tables, where a collision only makes a copy that `cse` merges.
/// `Made::default()` is an empty placeholder (no allocation, for `std::mem::take`);
/// [`Made::take`] gives a usable one.
#[derive(Default)]
pub(crate) struct Made {
    /// Added to block ids in the keys below: past every key of the liftings these tables
    /// served ([`Made::key`]).
    base: u32,
    /// (block, value) of the U32 constant `i`, for `i` below 64.
    small: Box<[(u32, Value)]>,
    /// (block, type, bits, value) of the constants made, from [`Made::const_slot`] on.
    consts: Box<[(u32, Type, u64, Value)]>,
    /// (block, type, bits) → value of the constants that found no free slot within
    /// [`CONST_PROBES`] of theirs (a block with very many constants).
    overflow: std::collections::HashMap<(u32, Type, u64), Value, crate::hash::FastState>,
    /// (block, value, field, extract) of a recent bit-field extract ([`Cx::bfe`]).
    bfe: Box<[(u32, Value, u32, Value)]>,
    /// (block, value) of a recent pure instruction ([`Cx::emit_pure`]).
    pure: Box<[(u32, Value)]>,
    /// The constants made in this lifting, in order, not yet placed in a block
    /// ([`Made::place_constants`]).
    fresh: Vec<Value>,
}

/// Entries of [`Made::small`] (U32 constants below this).
const SMALL_CONSTS: usize = 64;
/// Entries of [`Made::consts`] (a power of two, well above the constants of a block).
const CONSTS: usize = 1024;
/// Slots of [`Made::consts`] a lookup tries before the overflow map.
const CONST_PROBES: usize = 8;

thread_local! {
    /// The caches of this thread's last lifting, for the next ([`Made::take`]).
    static SPARE_MADE: std::cell::Cell<Option<Made>> = const { std::cell::Cell::new(None) };
}

impl Made {
    /// Caches with their tables allocated, every entry unused (unlike the placeholder
    /// `Made::default()`).
    fn filled() -> Self {
        Made {
            base: 0,
            small: vec![(u32::MAX, Value::NONE); SMALL_CONSTS].into(),
            consts: vec![(u32::MAX, Type::Void, 0, Value::NONE); CONSTS].into(),
            overflow: Default::default(),
            bfe: vec![(u32::MAX, Value::NONE, 0, Value::NONE); BFE_CACHE].into(),
            pure: vec![(u32::MAX, Value::NONE); PURE_CACHE].into(),
            fresh: Vec::with_capacity(256),
        }
    }

    /// Caches for a lifting: the ones this thread's last lifting gave back, else new ones.
    pub(crate) fn take() -> Self {
        SPARE_MADE.take().unwrap_or_else(Made::filled)
    }

    /// Gives the caches of a lifting whose function has `blocks` blocks back to this thread
    /// for its next lifting: the keys move past this lifting's (the tables are refilled only
    /// when they would run out); the overflow map is emptied.
    pub(crate) fn give_back(mut self, blocks: usize) {
        if self.small.is_empty() {
            return;
        }
        self.overflow.clear();
        self.fresh.clear();
        match u32::try_from(blocks)
            .ok()
            .and_then(|n| self.base.checked_add(n))
            .filter(|&b| b < u32::MAX / 2)
        {
            Some(b) => self.base = b,
            None => {
                let table = Made::filled();
                self.small = table.small;
                self.consts = table.consts;
                self.bfe = table.bfe;
                self.pure = table.pure;
                self.base = 0;
            }
        }
        SPARE_MADE.set(Some(self));
    }

    /// Places the constants made in this lifting at the start of its entry block, which
    /// dominates every block: one of each per function.
    pub(crate) fn place_constants(&mut self, f: &mut Function) {
        if let Some(entry) = f.blocks.first_mut() {
            entry.insts.splice(0..0, self.fresh.drain(..));
        }
    }

    /// The key of the function's constants in the tables (the entry block's key: the
    /// other tables are not shared with them).
    #[inline]
    fn const_key(&self) -> u32 {
        self.base
    }

    /// The key of block `b` in the tables.
    #[inline]
    pub(crate) fn key(&self, b: BlockId) -> u32 {
        self.base + b.0
    }

    /// The first slot of (`ty`, `bits`) in [`Made::consts`].
    #[inline]
    fn const_slot(ty: Type, bits: u64) -> usize {
        let h = (bits ^ (ty as u64) << 59).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (h >> 55) as usize % CONSTS
    }

    /// The constant `bits` of type `ty` in the block of key `b` if it has one made, else
    /// the free slot of [`Made::consts`] for it (`None`: no free slot within reach).
    #[inline]
    fn find_const(&self, b: u32, ty: Type, bits: u64) -> std::result::Result<Value, Option<usize>> {
        if ty == Type::U32 && bits < SMALL_CONSTS as u64 {
            let (kb, v) = self.small[bits as usize];
            if kb == b {
                return Ok(v);
            }
        }
        let mut at = Self::const_slot(ty, bits);
        for _ in 0..CONST_PROBES {
            let (kb, kt, kbits, v) = self.consts[at];
            if kb != b {
                return Err(Some(at));
            }
            if kt == ty && kbits == bits {
                return Ok(v);
            }
            at = (at + 1) % CONSTS;
        }
        Err(None)
    }

    /// Records the new constant `v` (`bits` of type `ty`) of the block of key `b` at
    /// `slot`, the free slot [`Made::find_const`] found, or in the overflow map if it found
    /// none.
    fn add_const(&mut self, b: u32, ty: Type, bits: u64, slot: Option<usize>, v: Value) {
        match slot {
            Some(at) => self.consts[at] = (b, ty, bits, v),
            None => {
                self.overflow.insert((b, ty, bits), v);
            }
        }
        if ty == Type::U32 && bits < SMALL_CONSTS as u64 {
            self.small[bits as usize] = (b, v);
        }
    }
}

impl<'a> Cx<'a> {
    /// A context filling block `b`, which starts at `addr`, with the guest-state tables
    /// `state` (`State::take()`, or the previous block's context's: they are kept by block).
    pub(crate) fn new(
        f: &'a mut Function,
        b: BlockId,
        cfg: &'a Config,
        blocks: &'a BTreeMap<u32, BlockId>,
        addr: u32,
        state: super::state::State,
    ) -> Self {
        Cx {
            f,
            b,
            cfg,
            blocks,
            addr,
            next: addr,
            ended: false,
            made: Made::default(),
            state,
            local_extent: 0,
            uses_local: false,
            uses_shared: false,
            pred_run: None,
            zso_flags: true,
            zso_read: false,
            float_regs: false,
            xmad: Default::default(),
            journal: None,
            run_converts: None,
        }
    }

    /// Whether the current block is terminated.
    pub fn done(&self) -> bool {
        self.ended
    }

    /// Terminates the current block, after placing the `Set`s of the guest state it wrote.
    pub fn finish(&mut self, t: Terminator) {
        if self.float_regs {
            self.float_regs = false;
            self.type_writes();
        }
        self.state.flush(self.f, self.b);
        self.f.blocks[self.b.index()].term = t;
        self.ended = true;
    }

    /// The block starting at guest address `a`.
    pub fn block_at(&self, a: u32) -> Result<BlockId> {
        self.blocks.get(&a).copied().ok_or(LiftError::BadTarget {
            offset: self.addr,
            target: a as u64,
        })
    }

    /// The shader key the graphics configuration names (for error reports; empty if none).
    pub fn shader_key(&self) -> String {
        self.cfg
            .gfx
            .as_ref()
            .map(|g| g.key.clone())
            .unwrap_or_default()
    }

    /// An "unsupported" error for instruction `i`.
    pub fn unsupported<I: Isa>(&self, i: &AnyInstr<I>, why: impl Into<String>) -> LiftError {
        LiftError::Unsupported {
            offset: self.addr,
            mnemonic: format!("{} ({})", i.mnemonic(), i.form_name()),
            why: why.into(),
        }
    }

    /// Appends an instruction. Inlined where called, so that the argument list, built
    /// right there, stays in registers: a call reloaded it from the caller's stack right
    /// after storing it, which stalls store forwarding (most of the lifter's time in this
    /// function); constants go through [`Cx::constant`], out of line.
    #[inline(always)]
    pub fn emit(&mut self, op: Op, ty: Type, args: &[Value]) -> Value {
        if let Op::Const(bits) = op {
            return self.constant(ty, bits);
        }
        self.note_memory(op);
        if reused(op) {
            return self.emit_pure(op, ty, args);
        }
        self.f.push(self.b, op, ty, args)
    }

    /// A pure instruction: the equal one made earlier in the block if the cache still holds
    /// it (`cse` would merge the copy into that one anyway), else a new one. Inlined where
    /// called, like [`Cx::emit`]: the operation and the number of arguments are mostly known
    /// there, so the key's hash is a few multiplications.
    #[inline(always)]
    fn emit_pure(&mut self, op: Op, ty: Type, args: &[Value]) -> Value {
        let n = Value::NONE;
        let a = match *args {
            [] => [n; 4],
            [x] => [x, n, n, n],
            [x, y] => [x, y, n, n],
            [x, y, z] => [x, y, z, n],
            [x, y, z, w] => [x, y, z, w],
            _ => return self.f.push(self.b, op, ty, args),
        };
        // The key leaves the operation out (hashing an `Op` costs more than the lookup saves
        // on the many misses); different operations of equal arguments only share a slot.
        let k = (a[0].0 as u64 | (a[1].0 as u64) << 32) ^ (a[2].0 as u64) << 16 ^ ty as u64;
        let at =
            (k.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - PURE_CACHE.trailing_zeros())) as usize;
        let key = self.made.key(self.b);
        let (kb, v) = self.made.pure[at];
        if kb == key {
            let i = self.f.inst(v);
            if i.op == op && i.ty == ty && i.args == a {
                return v;
            }
        }
        let v = self.f.push(self.b, op, ty, args);
        self.made.pure[at] = (key, v);
        v
    }

    /// Notes an access to local or shared memory in [`Cx::uses_local`] or
    /// [`Cx::uses_shared`] (every instruction goes through [`Cx::emit`], so the driver needs
    /// no scan for them; where `op` is known at the call site this folds away).
    #[inline(always)]
    fn note_memory(&mut self, op: Op) {
        match op {
            Op::Load(Space::Local, _) | Op::Store(Space::Local, _) => self.uses_local = true,
            Op::Load(Space::Shared, _)
            | Op::Store(Space::Shared, _)
            | Op::Atomic(Space::Shared, ..)
            | Op::AtomicCas(Space::Shared, _) => self.uses_shared = true,
            _ => {}
        }
    }

    /// The constant `bits` of type `ty`: one per function, placed at the start of the entry
    /// block when the lifting ends ([`Made::place_constants`]), so that it serves every
    /// block. Only the lookup: making one is out of line ([`Cx::new_constant`]), so that
    /// this path needs no registers saved.
    #[inline(never)]
    fn constant(&mut self, ty: Type, bits: u64) -> Value {
        let key = self.made.const_key();
        match self.made.find_const(key, ty, bits) {
            Ok(v) => v,
            Err(slot) => self.new_constant(key, ty, bits, slot),
        }
    }
    /// [`Cx::constant`] where the function of key `key` has none at hand (`slot`: where it
    /// goes in [`Made::consts`]).
    #[inline(never)]
    fn new_constant(&mut self, key: u32, ty: Type, bits: u64, slot: Option<usize>) -> Value {
        if slot.is_none() {
            if let Some(&v) = self.made.overflow.get(&(key, ty, bits)) {
                return v;
            }
        }
        let v = self.f.make(Op::Const(bits), ty, &[]);
        self.made.fresh.push(v);
        self.made.add_const(key, ty, bits, slot, v);
        v
    }

    /// A U32 constant.
    pub fn c32(&mut self, v: u32) -> Value {
        self.emit(Op::Const(v as u64), Type::U32, &[])
    }
    /// A U64 constant.
    pub fn c64(&mut self, v: u64) -> Value {
        self.emit(Op::Const(v), Type::U64, &[])
    }
    /// A Bool constant.
    pub fn cbool(&mut self, v: bool) -> Value {
        self.emit(Op::Const(v as u64), Type::Bool, &[])
    }
    /// An F32 constant.
    pub fn cf32(&mut self, v: f32) -> Value {
        self.emit(Op::Const(v.to_bits() as u64), Type::F32, &[])
    }
    /// An F64 constant.
    pub fn cf64(&mut self, v: f64) -> Value {
        self.emit(Op::Const(v.to_bits()), Type::F64, &[])
    }

    /// Binary op of the type of `a` (a constant or an operand itself where the passes would
    /// make it one: [`Cx::folded`], [`Cx::identity`]).
    pub fn bin(&mut self, op: Op, a: Value, b: Value) -> Value {
        let t = self.f.ty(a);
        if !t.is_float() {
            // Each operand's constant is looked up once for both the fold and the identities
            // (most operands are none: then neither applies).
            let (ca, cb) = (self.f.const_of(a), self.f.const_of(b));
            if let (Some(x), Some(y)) = (ca, cb) {
                if let Some(r) = crate::passes::const_fold::fold(op, t, t, &[x, y]) {
                    return self.emit(Op::Const(r), t, &[]);
                }
            }
            if ca.is_some() || cb.is_some() {
                if let Some(v) = self.identity(op, t, (a, ca), (b, cb)) {
                    return v;
                }
            }
        }
        self.emit(op, t, &[a, b])
    }
    /// The constant that `const_fold` makes of integer operation `op` of type `t` when all
    /// its arguments (of type `at`) are constants.
    fn folded(&mut self, op: Op, at: Type, t: Type, args: &[Value]) -> Option<Value> {
        if at.is_float() || t.is_float() {
            return None;
        }
        let mut c = [0u64; 3];
        for (k, &a) in args.iter().enumerate() {
            c[k] = self.f.const_of(a)?;
        }
        let r = crate::passes::const_fold::fold(op, at, t, &c[..args.len()])?;
        Some(self.emit(Op::Const(r), t, &[]))
    }
    /// The operand that integer operation `op a b` of type `t` equals by the identities
    /// `const_fold` applies (`x + 0`, `x | 0`, `x ^ 0`, `x - 0`, a shift by 0, `x & !0`,
    /// `x · 1`, either side): the passes would replace the instruction by it, so it is not
    /// made. Each operand comes with its constant, if it is one.
    fn identity(
        &self,
        op: Op,
        t: Type,
        (a, ca): (Value, Option<u64>),
        (b, cb): (Value, Option<u64>),
    ) -> Option<Value> {
        if !matches!(
            op,
            Op::IAdd
                | Op::Or
                | Op::Xor
                | Op::ISub
                | Op::Shl
                | Op::LShr
                | Op::AShr
                | Op::And
                | Op::IMul
        ) || t.is_float()
        {
            return None;
        }
        let m = match t {
            Type::Bool => 1,
            Type::U32 => 0xffff_ffff,
            _ => u64::MAX,
        };
        let ca = ca.map(|c| c & m);
        let cb = cb.map(|c| c & m);

        let b_ok = self.f.ty(b) == t;
        match op {
            Op::IAdd | Op::Or | Op::Xor if cb == Some(0) => Some(a),
            Op::IAdd | Op::Or | Op::Xor if ca == Some(0) && b_ok => Some(b),
            Op::ISub | Op::Shl | Op::LShr | Op::AShr if cb == Some(0) => Some(a),
            Op::And if cb == Some(m) => Some(a),
            Op::And if ca == Some(m) && b_ok => Some(b),
            Op::IMul if cb == Some(1) => Some(a),
            Op::IMul if ca == Some(1) && b_ok => Some(b),
            _ => None,
        }
    }
    /// Unary op of the type of `a`.
    pub fn un(&mut self, op: Op, a: Value) -> Value {
        let t = self.f.ty(a);
        if let Some(v) = self.folded(op, t, t, &[a]) {
            return v;
        }
        self.emit(op, t, &[a])
    }
    /// Comparison → Bool (the carry of `x + 0` is false, as `const_fold` makes it).
    pub fn cmp(&mut self, op: Op, a: Value, b: Value) -> Value {
        let at = self.f.ty(a);
        if let Some(v) = self.folded(op, at, Type::Bool, &[a, b]) {
            return v;
        }
        if op == Op::AddCarry && self.adds_zero(a, b) {
            return self.cbool(false);
        }
        self.emit(op, Type::Bool, &[a, b])
    }
    /// Whether `a` or `b` is the constant 0 (in the width of `a`).
    fn adds_zero(&self, a: Value, b: Value) -> bool {
        let m = match self.f.ty(a) {
            Type::U32 => 0xffff_ffff,
            _ => u64::MAX,
        };
        let zero = |v| self.f.const_of(v).is_some_and(|c| c & m == 0);
        zero(a) || zero(b)
    }
    /// `c ? a : b` (`a` or `b` itself for a constant `c`, as `const_fold` makes it).
    pub fn sel(&mut self, c: Value, a: Value, b: Value) -> Value {
        if let Some(k) = self.f.const_of(c) {
            return if k != 0 { a } else { b };
        }
        let t = self.f.ty(a);
        self.emit(Op::Select, t, &[c, a, b])
    }
    /// Reinterprets `v` as type `t` (inlined: mostly `v` has type `t` already, as for every
    /// register write).
    #[inline]
    pub fn cast(&mut self, t: Type, v: Value) -> Value {
        if self.f.ty(v) == t {
            return v;
        }
        self.convert(t, v)
    }
    /// [`Cx::cast`] of a value of another type.
    fn convert(&mut self, t: Type, v: Value) -> Value {
        let vt = self.f.ty(v);
        if vt.bits() == t.bits() {
            // Same width: a constant keeps its bits, a round trip is the value itself.
            let inst = *self.f.inst(v);
            match inst.op {
                Op::Const(c) => return self.emit(Op::Const(c), t, &[]),
                Op::Bitcast if self.f.ty(inst.args[0]) == t => return inst.args[0],
                _ => {}
            }
        }
        self.emit(Op::Bitcast, t, &[v])
    }
    /// `a + b` (U32).
    pub fn add(&mut self, a: Value, b: Value) -> Value {
        self.bin(Op::IAdd, a, b)
    }
    /// `a & b`.
    pub fn and(&mut self, a: Value, b: Value) -> Value {
        self.bin(Op::And, a, b)
    }
    /// `a | b`.
    pub fn or(&mut self, a: Value, b: Value) -> Value {
        self.bin(Op::Or, a, b)
    }
    /// `!a` / `~a`.
    pub fn not(&mut self, a: Value) -> Value {
        self.un(Op::Not, a)
    }
    /// `a << k` for a constant k < 32.
    pub fn shl_c(&mut self, a: Value, k: u32) -> Value {
        let c = self.c32(k);
        self.bin(Op::Shl, a, c)
    }
    /// `a >> k` (logical) for a constant k < 32.
    pub fn shr_c(&mut self, a: Value, k: u32) -> Value {
        let c = self.c32(k);
        self.bin(Op::LShr, a, c)
    }
    /// Zero-extended bits `[off, off+len)` of a U32.
    pub fn bits(&mut self, a: Value, off: u32, len: u32) -> Value {
        self.bfe(a, off, len, false)
    }
    /// Sign-extended bits `[off, off+len)` of a U32.
    pub fn sbits(&mut self, a: Value, off: u32, len: u32) -> Value {
        self.bfe(a, off, len, true)
    }
    /// The extract of bits `[off, off+len)` of `a`, made once per block where it can: XMAD
    /// takes the same 16-bit halves again and again (every 32-bit multiply is three XMADs),
    /// and `cse` would merge the copies later anyway — the first one in the block, which
    /// this returns — so not making them leaves the same IR after the passes. A small
    /// direct-mapped cache: a collision only makes a copy, as before.
    fn bfe(&mut self, a: Value, off: u32, len: u32, signed: bool) -> Value {
        let field = off | len << 8 | (signed as u32) << 16;
        let at = (a.0 ^ field.wrapping_mul(0x9e37_79b9)) as usize % BFE_CACHE;
        let key = self.made.key(self.b);
        let (b, v, k, r) = self.made.bfe[at];
        if b == key && v == a && k == field {
            return r;
        }
        let op = if signed { Op::BfeS } else { Op::BfeU };
        // A constant folds before the offset and length constants are made: they would be
        // made for nothing.
        if let Some(c) = self.f.const_of(a) {
            let folded = crate::passes::const_fold::fold(
                op,
                Type::U32,
                Type::U32,
                &[c, off as u64, len as u64],
            );
            if let Some(r) = folded {
                return self.emit(Op::Const(r), Type::U32, &[]);
            }
        }
        let o = self.c32(off);
        let l = self.c32(len);
        let r = self.emit(op, Type::U32, &[a, o, l]);
        self.made.bfe[at] = (key, a, field, r);
        r
    }
    /// U64 from two U32 halves.
    pub fn pack(&mut self, lo: Value, hi: Value) -> Value {
        self.emit(Op::Pack64, Type::U64, &[lo, hi])
    }
    /// Low 32 bits of a U64.
    pub fn lo(&mut self, v: Value) -> Value {
        self.emit(Op::UConvert, Type::U32, &[v])
    }
    /// High 32 bits of a U64.
    pub fn hi(&mut self, v: Value) -> Value {
        self.emit(Op::Hi32, Type::U32, &[v])
    }

    /// Reads guest register `r`: its value in the current block if the block read or wrote
    /// it, else a `Get`.
    #[inline]
    fn get_state(&mut self, r: Reg) -> Value {
        if let Some(v) = self.state.known(self.b, r) {
            return v;
        }
        let v = self.emit(Op::Get(r), r.ty(), &[]);
        self.state.entry_read(self.b, r, v);
        v
    }
    /// Writes guest register `r`; the `Set` is placed when the block ends (at once if it has
    /// ended already).
    #[inline]
    fn set_state(&mut self, r: Reg, v: Value) {
        if self.journal.is_some() {
            self.note_old(r);
        }
        if self.ended {
            self.f.push(self.b, Op::Set(r), Type::Void, &[v]);
            self.state.read(self.b, r, v);
        } else {
            self.state.write(self.b, r, v);
        }
    }

    /// Notes `r`'s value before its first write by the instruction being if-converted.
    #[cold]
    fn note_old(&mut self, r: Reg) {
        if self
            .journal
            .as_ref()
            .is_some_and(|j| j.iter().any(|&(x, _)| x == r))
        {
            return;
        }
        let old = self.get_state(r);
        if let Some(j) = &mut self.journal {
            j.push((r, old));
        }
    }

    /// Runs `body`, the semantics of an instruction without side effects under guard `p`
    /// (a Bool), unconditionally in the current block, and then makes each guest register
    /// it wrote `p ? new : old`: selects instead of a block of its own and a branch, which
    /// every later pass, the structurizer and the back end would carry (values used across
    /// the blocks become variables).
    pub(crate) fn if_converted(
        &mut self,
        p: Value,
        body: impl FnOnce(&mut Self) -> Result<()>,
    ) -> Result<()> {
        self.journal = Some(Vec::new());
        let r = body(self);
        let journal = self.journal.take().unwrap_or_default();
        r?;
        for (reg, old) in journal {
            let Some(new) = self.state.known(self.b, reg) else {
                continue;
            };
            let old = self.cast(self.f.ty(new), old);
            let v = self.sel(p, new, old);
            self.state.write(self.b, reg, v);
        }
        Ok(())
    }

    /// Gives the registers written in the block as floats ([`Cx::set_reg`]) their bits, the
    /// type of their `Set`s.
    fn type_writes(&mut self) {
        for k in 0..self.state.written_count() {
            let v = self.state.written_value(k);
            if self.f.ty(v) == Type::F32 {
                let bits = self.convert(Type::U32, v);
                self.state.rewrite(k, bits);
            }
        }
    }

    /// Reads register `n` (RZ = 0) as U32.
    pub fn reg(&mut self, n: u8) -> Value {
        if n == 255 {
            return self.c32(0);
        }
        let v = self.get_state(Reg::gpr(n));
        if self.f.ty(v) == Type::U32 {
            return v;
        }
        self.reread(n, Type::U32, v)
    }
    /// Reads register `n` (RZ = 0) as F32.
    pub fn reg_f32(&mut self, n: u8) -> Value {
        if n == 255 {
            return self.cf32(0.0);
        }
        let v = self.get_state(Reg::gpr(n));
        if self.f.ty(v) == Type::F32 {
            return v;
        }
        self.reread(n, Type::F32, v)
    }
    /// Register `n`, of value `v` of another type, read as type `t`: a register holds the
    /// value of its last write or read in the block in that one's type ([`Cx::set_reg`]);
    /// a read as the other type reinterprets it once and keeps the result for the reads
    /// after it (reinterpreting back is the value itself: [`Cx::cast`]).
    #[inline(never)]
    fn reread(&mut self, n: u8, t: Type, v: Value) -> Value {
        let w = self.convert(t, v);
        self.state.read(self.b, Reg::gpr(n), w);
        self.float_regs |= t == Type::F32;
        w
    }
    /// Writes register `n` (writes to RZ are dropped). A float is kept as it is, so that a
    /// read as a float is the value itself: its bits are made only where they are read as
    /// bits ([`Cx::reg`]) or the block ends with it ([`Cx::finish`]). Most float results
    /// are read only by float instructions of the same block.
    pub fn set_reg(&mut self, n: u8, v: Value) {
        if n != 255 {
            let v = if self.f.ty(v) == Type::F32 && !self.ended {
                self.float_regs = true;
                v
            } else {
                self.cast(Type::U32, v)
            };
            self.set_state(Reg::gpr(n), v);
        }
    }
    /// Reads the register pair `n, n+1` as U64 (RZ = 0).
    pub fn reg64(&mut self, n: u8) -> Value {
        if n == 255 {
            return self.c64(0);
        }
        let lo = self.reg(n);
        let hi = self.reg(n.saturating_add(1));
        self.pack(lo, hi)
    }
    /// Writes the register pair `n, n+1`.
    pub fn set_reg64(&mut self, n: u8, v: Value) {
        if n == 255 {
            return;
        }
        let v = self.cast(Type::U64, v);
        let lo = self.lo(v);
        let hi = self.hi(v);
        self.set_reg(n, lo);
        self.set_reg(n.saturating_add(1), hi);
    }
    /// Reads predicate `n` (PT = true), negated if asked.
    pub fn pred(&mut self, n: u8, neg: bool) -> Value {
        let p = if n >= 7 {
            self.cbool(true)
        } else {
            self.get_state(Reg::pred(n))
        };
        if neg {
            self.not(p)
        } else {
            p
        }
    }
    /// Writes predicate `n` (writes to PT are dropped).
    pub fn set_pred(&mut self, n: u8, v: Value) {
        if n < 7 {
            self.set_state(Reg::pred(n), v);
        }
    }
    /// Reads uniform register `n` (URZ, 63, = 0).
    pub fn ureg(&mut self, n: u8) -> Value {
        if n >= 63 {
            self.c32(0)
        } else {
            self.get_state(Reg::ugpr(n))
        }
    }
    /// Writes uniform register `n` (writes to URZ are dropped).
    pub fn set_ureg(&mut self, n: u8, v: Value) {
        if n < 63 {
            let v = self.cast(Type::U32, v);
            self.set_state(Reg::ugpr(n), v);
        }
    }
    /// Reads the uniform register pair `n, n+1` as U64 (URZ = 0).
    pub fn ureg64(&mut self, n: u8) -> Value {
        if n >= 63 {
            return self.c64(0);
        }
        let lo = self.ureg(n);
        let hi = self.ureg(n + 1);
        self.pack(lo, hi)
    }
    /// Reads uniform predicate `n` (UPT = true), negated if asked.
    pub fn upred(&mut self, n: u8, neg: bool) -> Value {
        let p = if n >= 7 {
            self.cbool(true)
        } else {
            self.get_state(Reg::upred(n))
        };
        if neg {
            self.not(p)
        } else {
            p
        }
    }
    /// Writes uniform predicate `n` (writes to UPT are dropped).
    pub fn set_upred(&mut self, n: u8, v: Value) {
        if n < 7 {
            self.set_state(Reg::upred(n), v);
        }
    }

    /// Runs `body` (one instruction's semantics) under the guard `guard` (negated if `neg`):
    /// in a block of its own, or in the then-block of the run of instructions with the same
    /// guard just before it (`@P0 IADD.CC; @P0 IADD.X; @P0 STG`), which keeps a guarded
    /// address computation and its access in one block. Joining is exact: the continuation
    /// is still empty (nothing ran in between) and no instruction of the run wrote the
    /// guard. `cond` is the branch condition (the guard's value, possibly ANDed with more);
    /// `joinable` is false when it is more than the guard.
    pub(crate) fn guarded(
        &mut self,
        run: Option<(Reg, bool, BlockId, BlockId)>,
        (guard, neg): (Reg, bool),
        joinable: bool,
        cond: impl FnOnce(&mut Self) -> Value,
        body: impl FnOnce(&mut Self) -> Result<()>,
    ) -> Result<()> {
        let (then_b, cont) = match run {
            Some((g, n, t, c))
                if joinable
                    && g == guard
                    && n == neg
                    && c == self.b
                    && !self.ended
                    && self.f.blocks[c.index()].insts.is_empty()
                    && !self.state.any_written()
                    && self.f.blocks[t.index()].term == Terminator::Jump(c) =>
            {
                self.f.blocks[t.index()].term = Terminator::Unset;
                (t, c)
            }
            _ => {
                let p = cond(self);
                let then_b = self.f.add_block(None);
                let cont = self.f.add_block(None);
                self.finish(Terminator::Branch(p, then_b, cont));
                (then_b, cont)
            }
        };
        self.b = then_b;
        self.ended = false;
        body(self)?;
        let open = joinable && self.b == then_b && !self.done() && !self.state.written(guard);
        if !self.done() {
            self.finish(Terminator::Jump(cont));
        }
        self.b = cont;
        self.ended = false;
        if open {
            self.pred_run = Some((guard, neg, then_b, cont));
        }
        Ok(())
    }

    /// Reads a flag (a zero, sign or overflow flag while [`Cx::zso_flags`] is false voids
    /// the lifting: [`Cx::zso_read`]).
    pub fn flag(&mut self, fl: Flag) -> Value {
        if fl != Flag::Carry && !self.zso_flags {
            self.zso_read = true;
        }
        self.get_state(Reg::flag(fl))
    }
    /// Writes a flag (the zero, sign and overflow flags only when [`Cx::zso_flags`]).
    pub fn set_flag(&mut self, fl: Flag, v: Value) {
        if fl == Flag::Carry || self.zso_flags {
            self.set_state(Reg::flag(fl), v);
        }
    }
    /// The carry flag as 0/1.
    pub fn carry_u32(&mut self) -> Value {
        let c = self.flag(Flag::Carry);
        let one = self.c32(1);
        let zero = self.c32(0);
        self.sel(c, one, zero)
    }

    /// A register field of `i` (RZ when absent): its raw bits, whatever the field's kind
    /// (one quick-table read; a register field's value is its raw bits).
    #[inline]
    pub fn rf<I: Isa>(&self, i: &AnyInstr<I>, f: Field) -> u8 {
        i.raw(f).map_or(255, |v| v as u8)
    }
    /// Reads the register in field `f`.
    pub fn r<I: Isa>(&mut self, i: &AnyInstr<I>, f: Field) -> Value {
        let n = self.rf(i, f);
        self.reg(n)
    }
    /// Reads the register in field `f` as an F32.
    pub fn r_f32<I: Isa>(&mut self, i: &AnyInstr<I>, f: Field) -> Value {
        let n = self.rf(i, f);
        self.reg_f32(n)
    }
    /// Reads a predicate operand with its negation field.
    pub fn p<I: Isa>(&mut self, i: &AnyInstr<I>, f: Field, neg: Field) -> Value {
        let n = i.pred(f).map(|p| p.0).unwrap_or(7);
        let ng = i.flag(neg);
        self.pred(n, ng)
    }
    /// `on_true` where the predicate operand `f` (negated by field `neg`) holds, else
    /// `on_false` (a `Select`); where it is `PT` or `!PT` only the one it picks is made, and
    /// no constant for the predicate.
    pub fn pick<I: Isa>(
        &mut self,
        i: &AnyInstr<I>,
        (f, neg): (Field, Field),
        on_true: impl FnOnce(&mut Self) -> Value,
        on_false: impl FnOnce(&mut Self) -> Value,
    ) -> Value {
        if i.pred(f).is_none_or(|p| p.is_pt()) {
            return if i.flag(neg) {
                on_false(self)
            } else {
                on_true(self)
            };
        }
        let p = self.p(i, f, neg);
        let a = on_true(self);
        let b = on_false(self);
        self.sel(p, a, b)
    }
    /// Writes the predicate in field `f` (if the form has it).
    pub fn set_p<I: Isa>(&mut self, i: &AnyInstr<I>, f: Field, v: Value) {
        if let Some(p) = i.pred(f) {
            self.set_pred(p.0, v);
        }
    }
    /// Writes the destination register `Rd`.
    pub fn set_rd<I: Isa>(&mut self, i: &AnyInstr<I>, v: Value) {
        let n = self.rf(i, Field::Rd);
        self.set_reg(n, v);
    }

    /// The form suffix: `R`, `C`, `I`, `RC` or `` (no variant).
    pub fn variant(i: &Instr) -> &'static str {
        // Per form, computed once (the lifter asks several times per instruction).
        static BY_FORM: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
        let by_form = BY_FORM.get_or_init(|| {
            dmsh_isa::table::table()
                .forms
                .iter()
                .map(|f| Self::variant_of(&f.name))
                .collect()
        });
        match by_form.get(i.form() as usize) {
            Some(v) => v,
            None => Self::variant_of(i.form_name()),
        }
    }

    fn variant_of(n: &str) -> &'static str {
        if n.ends_with("_R16") {
            return "R";
        }
        for s in ["_RC", "_RR", "_RI", "_IR", "_II", "_R", "_C", "_I"] {
            if n.ends_with(s) {
                return &s[1..];
            }
        }
        ""
    }

    /// Operand B as 32 bits: register, constant buffer or immediate, per the form.
    pub fn src_b(&mut self, i: &Instr) -> Result<Value> {
        match Self::variant(i) {
            "R" => Ok(self.r(i, Field::Rb)),
            "RC" => Ok(self.r(i, Field::Rc)),
            "C" => self.cbuf_operand(i, 0),
            _ => {
                let v = self.imm_b(i)?;
                Ok(self.c32(v))
            }
        }
    }
    /// Operand B as an F32 (a register read as [`Cx::reg_f32`] reads it).
    pub fn src_b_f32(&mut self, i: &Instr) -> Result<Value> {
        match Self::variant(i) {
            "R" => Ok(self.r_f32(i, Field::Rb)),
            "RC" => Ok(self.r_f32(i, Field::Rc)),
            "C" => {
                let v = self.cbuf_operand(i, 0)?;
                Ok(self.cast(Type::F32, v))
            }
            _ => {
                let v = self.imm_b(i)?;
                Ok(self.emit(Op::Const(v as u64), Type::F32, &[]))
            }
        }
    }
    /// The 32-bit immediate operand B.
    fn imm_b(&self, i: &Instr) -> Result<u32> {
        i.imm32(Field::Imm)
            .ok_or_else(|| self.unsupported(i, "no B operand"))
    }
    /// Operand C as 32 bits (register, or the constant buffer of an `_RC` form).
    pub fn src_c(&mut self, i: &Instr) -> Result<Value> {
        match Self::variant(i) {
            "RC" => self.cbuf_operand(i, 0),
            _ => Ok(self.r(i, Field::Rc)),
        }
    }
    /// Operand C as an F32 (a register read as [`Cx::reg_f32`] reads it).
    pub fn src_c_f32(&mut self, i: &Instr) -> Result<Value> {
        match Self::variant(i) {
            "RC" => {
                let v = self.cbuf_operand(i, 0)?;
                Ok(self.cast(Type::F32, v))
            }
            _ => Ok(self.r_f32(i, Field::Rc)),
        }
    }
    /// Operand C of a multiply-add: Rd itself where `c_is_rd` (the 32I forms, FFMA32I and
    /// IMAD32I, accumulate into their destination), else [`Self::src_c`].
    pub fn src_c_or_rd(&mut self, i: &Instr, c_is_rd: bool) -> Result<Value> {
        if c_is_rd {
            Ok(self.r(i, Field::Rd))
        } else {
            self.src_c(i)
        }
    }
    /// Operand B as 64 bits (register pair, constant pair, or D20/F20 immediate in the high word).
    pub fn src_b64(&mut self, i: &Instr) -> Result<Value> {
        match Self::variant(i) {
            "R" => {
                let n = self.rf(i, Field::Rb);
                Ok(self.reg64(n))
            }
            "RC" => {
                let n = self.rf(i, Field::Rc);
                Ok(self.reg64(n))
            }
            "C" => {
                let lo = self.cbuf_operand(i, 0)?;
                let hi = self.cbuf_operand(i, 4)?;
                Ok(self.pack(lo, hi))
            }
            _ => {
                let v = i
                    .imm32(Field::Imm)
                    .ok_or_else(|| self.unsupported(i, "no B operand"))?;
                Ok(self.c64((v as u64) << 32))
            }
        }
    }
    /// Operand C as 64 bits.
    pub fn src_c64(&mut self, i: &Instr) -> Result<Value> {
        match Self::variant(i) {
            "RC" => {
                let lo = self.cbuf_operand(i, 0)?;
                let hi = self.cbuf_operand(i, 4)?;
                Ok(self.pack(lo, hi))
            }
            _ => {
                let n = self.rf(i, Field::Rc);
                Ok(self.reg64(n))
            }
        }
    }

    /// The word at `c[bank][offset + extra]` of a form's constant operand.
    pub fn cbuf_operand(&mut self, i: &Instr, extra: i64) -> Result<Value> {
        let c = i
            .cbuf()
            .ok_or_else(|| self.unsupported(i, "no constant operand"))?;
        Ok(self.const_word(c.bank as u8, (c.offset + extra) as u32))
    }

    /// A constant-bank word at a static byte offset, resolved by the ABI.
    pub fn const_word(&mut self, bank: u8, off: u32) -> Value {
        if let Some(v) = self.cfg.abi.resolve_static(self.cfg, bank, off) {
            return match v {
                super::abi::Resolved::Const(x) => self.c32(x),
                super::abi::Resolved::Sys(s) => self.emit(Op::SysVal(s), Type::U32, &[]),
            };
        }
        if let Some(words) = self.cfg.embedded_banks.get(&bank) {
            let w = words.get((off / 4) as usize).copied().unwrap_or(0);
            if off.is_multiple_of(4) {
                return self.c32(w);
            }
        }
        let o = self.c32(off);
        self.emit(Op::LoadConst(bank), Type::U32, &[o])
    }

    /// A constant-bank word at a run-time byte offset.
    pub fn const_dyn(&mut self, bank: u8, off: Value) -> Value {
        if let Some(c) = self.f.const_of(off) {
            return self.const_word(bank, c as u32);
        }
        self.emit(Op::LoadConst(bank), Type::U32, &[off])
    }

    /// A system value.
    pub fn sys(&mut self, s: Sys) -> Value {
        // A compute shader's workgroup size is known unless it comes from the dispatch
        // ([0, 0, 0]: the back end's specialization constants): folding it lets the XMAD
        // chains of `blockDim * blockIdx` fold too.
        if let Sys::Ntid(k) = s {
            let ls = self.cfg.local_size;
            if self.cfg.gfx.is_none() && ls != [0, 0, 0] {
                return self.c32(ls[k as usize % 3]);
            }
        }
        self.emit(Op::SysVal(s), Type::U32, &[])
    }

    /// The rounding mode of a float instruction's `Rnd` field (`mods::Rnd`: FADD, FMUL, FFMA,
    /// FSWZADD, DADD, DMUL, DFMA, I2F); round-to-nearest when the form has none.
    pub fn rnd(&self, i: &Instr) -> Result<Round> {
        use mods::Rnd;
        Ok(match self.modifier::<Rnd>(i, Field::Rnd)? {
            Some(Rnd::Rm) => Round::Rm,
            Some(Rnd::Rp) => Round::Rp,
            Some(Rnd::Rz) => Round::Rz,
            Some(Rnd::Rn) | None => Round::Rn,
        })
    }

    /// The typed modifier `M` of field `f` (`None` when the form lacks the field). A form that
    /// has `f` with another enum of the table is [`LiftError::ModifierEnum`]: the lifter asked
    /// for the wrong type ([`Instr::modifier_as`] alone would read it as an absent field and
    /// silently take the default).
    #[inline]
    pub fn modifier<M: Modifier>(&self, i: &AnyInstr<M::Isa>, f: Field) -> Result<Option<M>> {
        match i.modifier_as::<M>(f) {
            Some(m) => Ok(Some(m)),
            None => self.no_modifier::<M>(i, f),
        }
    }
    /// [`Cx::modifier`] when the field is not an `M`: absent, or another enum (the error).
    fn no_modifier<M: Modifier>(&self, i: &AnyInstr<M::Isa>, f: Field) -> Result<Option<M>> {
        match i.modifier(f) {
            // The form has the field as an enum (`modifier` gives its text), not as `M`.
            Some(_) => Err(LiftError::ModifierEnum {
                offset: self.addr,
                mnemonic: format!("{} ({})", i.mnemonic(), i.form_name()),
                field: f.name(),
                expected: M::TABLE_NAME,
            }),
            None => Ok(None),
        }
    }
}
