//! The emitter: module setup, resources, the block dispatcher and per-operation code.

use crate::lower::Pass;
use crate::reflect::{Reflection, Resource};
use crate::{Error, Options, Output};
use dmsh_ir::{
    AtomOp, BankSource, Function, Op, ShflMode, Space, StackKind, Sys, Terminator, Type, Value,
    VoteMode, Width,
};
use rspirv::dr::Operand;
use rspirv::spirv::{self, Capability, Decoration, StorageClass, Word};
use std::collections::HashMap;
use words::Builder;

#[path = "structured.rs"]
mod structured;

mod coop;
mod cross;
mod dead;
mod gfx;
mod ids;
mod lower;
mod modifiers;
mod named;
mod sbuf;
mod slots;
mod tcache;
mod tex;
mod words;

pub(crate) const EXIT_PC: u32 = 0xffff_ffff;

/// The hasher of the id caches (dmsh-ir's, shared with the lifter's constant cache).
type Fast = dmsh_ir::hash::FastState;
const STACK_DEPTH: u32 = 16;
/// U32 constants below this get a direct-indexed cache.
const SMALL: usize = 64;
const SCOPE_DEVICE: u32 = 1;
const SCOPE_WORKGROUP: u32 = 2;
const SCOPE_SUBGROUP: u32 = 3;

/// GLSL.std.450 instruction numbers used here.
pub(crate) mod glsl {
    pub const ROUND_EVEN: u32 = 2;
    pub const TRUNC: u32 = 3;
    pub const FABS: u32 = 4;
    pub const FLOOR: u32 = 8;
    pub const CEIL: u32 = 9;
    pub const SIN: u32 = 13;
    pub const COS: u32 = 14;
    pub const EXP2: u32 = 29;
    pub const LOG2: u32 = 30;
    pub const SQRT: u32 = 31;
    pub const INVERSE_SQRT: u32 = 32;
    pub const UMIN: u32 = 38;
    pub const SMIN: u32 = 39;
    pub const UMAX: u32 = 41;
    pub const SMAX: u32 = 42;
    pub const FMA: u32 = 50;
    pub const FIND_SMSB: u32 = 74;
    pub const FIND_UMSB: u32 = 75;
    pub const NMIN: u32 = 79;
    pub const NMAX: u32 = 80;
}

/// A word index: known at translation time, or computed in the shader.
enum Index {
    Known(u32),
    Computed(Word),
}

/// Emission state.
pub(crate) struct E {
    pub b: Builder,
    pub opts: Options,
    glsl_set: Word,
    types: [Word; 7],
    u8t: Word,
    u16t: Word,
    consts: HashMap<(Word, u64), Word, Fast>,
    /// U32 constants below [`SMALL`] by value (0: not made yet).
    small_u32: [Word; SMALL],
    tcache: tcache::TypeCache,
    vals: Vec<Word>,
    /// Values that cross blocks and their variables (`emit/cross.rs`).
    cross: cross::Cross,
    /// Guest state variables by `kind * 256 + n` (0 or past the end: none yet): registers,
    /// predicates, flags.
    state: Vec<Word>,
    stack: Option<(Word, Word)>,
    bar_result: Option<Word>,
    cas_lock: Option<Word>,
    bar_pred: Option<Word>,
    popc_value: Option<Word>,
    /// Named barriers in the synchronised dispatcher (`emit/named.rs`).
    named: Option<named::Named>,
    sync_mode: bool,
    popc_counter: Option<Word>,
    local: Option<(Word, u32)>,
    shared: Option<(Word, u32)>,
    /// Constant banks declared: bank, variable, guest byte offset, size in words, and
    /// whether it is a uniform buffer (a shader reads few: a list).
    banks: Vec<(u8, (Word, u32, u32, bool))>,
    builtins: HashMap<spirv::BuiltIn, Word, Fast>,
    interface: Vec<Word>,
    pub uses_psb: bool,
    warp_ops: bool,
    /// A subgroup reduction was emitted (capability `GroupNonUniformArithmetic`).
    warp_arith: bool,
    /// The cooperative-matrix scratch array (`emit/coop.rs`), once made.
    coop: Option<Word>,
    /// A cooperative-matrix operation was emitted (the Vulkan memory model, the extension).
    coop_used: bool,
    local_size: [u32; 3],
    /// Variable workgroup size: the spec constants (x, y, z) once made.
    ls_spec: Option<[Word; 3]>,
    fn_vars: Vec<(Word, Word, Option<Word>)>,
    entry_block: usize,
    /// The stage being emitted.
    stage: dmsh_ir::Stage,
    /// Graphics configuration (SPH, layout, I/O types), None for compute.
    gfxcfg: Option<dmsh_ir::lift::Gfx>,
    /// Graphics interface state (`emit/gfx.rs`).
    gx: gfx::GfxState,
    /// Texture variables by slot and shape (`emit/tex.rs`).
    #[allow(clippy::type_complexity)]
    tex_vars: HashMap<
        (
            u16,
            u8,
            dmsh_ir::TexDim,
            bool,
            bool,
            bool,
            dmsh_ir::lift::CompType,
        ),
        (Word, Word, Word),
        Fast,
    >,
    /// Storage-image variables by slot and alias (`emit/slots.rs`).
    img_vars: HashMap<(u16, u8), (Word, Word), Fast>,
    /// Storage-buffer variables (`emit/sbuf.rs`).
    sb: sbuf::SbufState,
    /// The result type of every id made by [`E::op`] / [`E::ext`], and the source of each
    /// `OpBitcast` made there: a bit cast back to a source's own type is that source (the
    /// register file is U32 bits, so float code casts to and fro; the FTZ and modifier
    /// sequences cast again).
    rtys: ids::IdMap,
    bitcast_src: ids::IdMap,
    /// Each texture and image slot's declarations (`emit/slots.rs`).
    slots: slots::Slots,
    /// The lowered forms' state (`emit/lower.rs`).
    lw: lower::LowerState,
    /// The soft-f64 routines used (`soft/`).
    pub soft: crate::soft::State,
    /// The helper functions called so far and their ids (`emit/modifiers.rs`).
    helpers: modifiers::Helpers,
    /// Instructions the entry block runs first, after its variables (values every block may
    /// use, such as `gl_FragCoord.w`).
    entry_code: Vec<u32>,
}

/// The SPIR-V instruction of an atomic read-modify-write that has one (`None`: float add and
/// CUDA's wrapping inc/dec, which need their own sequences).
pub(crate) fn rmw_op(aop: AtomOp) -> Option<spirv::Op> {
    Some(match aop {
        AtomOp::Add => spirv::Op::AtomicIAdd,
        AtomOp::SMin => spirv::Op::AtomicSMin,
        AtomOp::UMin => spirv::Op::AtomicUMin,
        AtomOp::SMax => spirv::Op::AtomicSMax,
        AtomOp::UMax => spirv::Op::AtomicUMax,
        AtomOp::And => spirv::Op::AtomicAnd,
        AtomOp::Or => spirv::Op::AtomicOr,
        AtomOp::Xor => spirv::Op::AtomicXor,
        AtomOp::Exch => spirv::Op::AtomicExchange,
        AtomOp::FAdd | AtomOp::Inc | AtomOp::Dec => return None,
    })
}

fn berr<T>(r: Result<T, rspirv::dr::Error>) -> Result<T, Error> {
    r.map_err(|e| Error::Builder(format!("{e:?}")))
}

impl E {
    /// The SPIR-V type of IR type `t` (made on first use).
    #[inline]
    pub fn ty(&mut self, t: Type) -> Word {
        match self.types[t as usize] {
            0 => self.make_ty(t),
            w => w,
        }
    }

    #[cold]
    fn make_ty(&mut self, t: Type) -> Word {
        let slot = t as usize;
        let w = match t {
            Type::Void => self.b.type_void(),
            Type::Bool => self.b.type_bool(),
            Type::U32 => self.b.type_int(32, 0),
            Type::U64 => self.b.type_int(64, 0),
            Type::F16 => self.b.type_float(16),
            Type::F32 => self.b.type_float(32),
            Type::F64 if self.soft_f64() => {
                let u = self.ty(Type::U32);
                self.vec_ty(u, 2)
            }
            Type::F64 => self.b.type_float(64),
        };
        self.types[slot] = w;
        w
    }

    /// The GLSL.std.450 import.
    pub(crate) fn glsl_set(&self) -> Word {
        self.glsl_set
    }

    /// A constant of IR type `t` with the given bits.
    pub fn c(&mut self, t: Type, bits: u64) -> Word {
        if t == Type::U32 && bits < SMALL as u64 {
            let w = self.small_u32[bits as usize];
            if w != 0 {
                return w;
            }
            let ty = self.ty(Type::U32);
            let w = self.cw(ty, t, bits);
            self.small_u32[bits as usize] = w;
            return w;
        }
        let ty = if t == Type::F16 {
            self.u16t
        } else {
            self.ty(t)
        };
        self.cw(ty, t, bits)
    }

    fn cw(&mut self, ty: Word, t: Type, bits: u64) -> Word {
        if t == Type::F64 && self.soft_f64() {
            return self.soft_f64_constant(ty, bits);
        }
        // Most lookups miss: one hash for the lookup and the insertion.
        let b = &mut self.b;
        *self.consts.entry((ty, bits)).or_insert_with(|| match t {
            Type::Bool if bits != 0 => b.constant_true(ty),
            Type::Bool => b.constant_false(ty),
            Type::U64 | Type::F64 => b.constant_bit64(ty, bits),
            _ => b.constant_bit32(ty, bits as u32),
        })
    }

    /// [`E::cw`] of a soft f64 (a `uvec2` of u32 constants).
    #[cold]
    fn soft_f64_constant(&mut self, ty: Word, bits: u64) -> Word {
        if let Some(&w) = self.consts.get(&(ty, bits)) {
            return w;
        }
        let lo = self.u32c(bits as u32);
        let hi = self.u32c((bits >> 32) as u32);
        let w = self.b.constant_composite(ty, [lo, hi]);
        self.consts.insert((ty, bits), w);
        w
    }

    /// The u16 type.
    pub(crate) fn c_u16t(&self) -> Word {
        self.u16t
    }

    /// A u32 constant (the small ones made before found inline).
    #[inline]
    pub fn u32c(&mut self, v: u32) -> Word {
        match self.small_u32.get(v as usize) {
            Some(&w) if w != 0 => w,
            _ => self.c(Type::U32, v as u64),
        }
    }

    /// Appends an instruction with id operands; returns its result id. Up to four operands
    /// travel in registers to [`E::op4`] (inlined here, the list the caller just built
    /// never goes through memory: reloading it from the caller's stack right after storing
    /// it stalled store forwarding); longer lists go to [`E::op_slice`].
    #[inline]
    pub fn op(&mut self, op: spirv::Op, ty: Word, args: &[Word]) -> Word {
        // Two operands to a register (an array by value would go through memory).
        let w = |x: Word, y: Word| x as u64 | (y as u64) << 32;
        match *args {
            [a] => self.op4(op, ty, w(a, 0), 0, 1),
            [a, b] => self.op4(op, ty, w(a, b), 0, 2),
            [a, b, c] => self.op4(op, ty, w(a, b), w(c, 0), 3),
            [a, b, c, d] => self.op4(op, ty, w(a, b), w(c, d), 4),
            _ => self.op_slice(op, ty, args),
        }
    }

    /// [`E::op`] of `n` (1 to 4) operands, two to a word (`ab`: the first two, low first).
    fn op4(&mut self, op: spirv::Op, ty: Word, ab: u64, cd: u64, n: usize) -> Word {
        let (a, b, c, d) = (
            ab as Word,
            (ab >> 32) as Word,
            cd as Word,
            (cd >> 32) as Word,
        );
        match n {
            1 => self.op_n(op, ty, [a]),
            2 => self.op_n(op, ty, [a, b]),
            3 => self.op_n(op, ty, [a, b, c]),
            _ => self.op_n(op, ty, [a, b, c, d]),
        }
    }

    /// [`E::op`] of `N` operands, inlined: in [`E::op4`], and where most operations are
    /// made ([`E::inst`]'s fast path, the helpers' calls, the soft-f64 routines' words),
    /// whose calls of [`E::op4`] cost a tenth of the emission.
    #[inline(always)]
    pub(crate) fn op_n<const N: usize>(
        &mut self,
        op: spirv::Op,
        ty: Word,
        args: [Word; N],
    ) -> Word {
        if let Some(src) = self.bitcast_of(op, ty, args[0]) {
            return src;
        }
        let id = self.b.id();
        self.b.op_ids(op, ty, id, &args).expect("block selected");
        self.made(op, ty, id, args[0])
    }

    /// [`E::op`] of any number of operands.
    fn op_slice(&mut self, op: spirv::Op, ty: Word, args: &[Word]) -> Word {
        let first = args.first().copied().unwrap_or(0);
        if let Some(src) = self.bitcast_of(op, ty, first) {
            return src;
        }
        let id = self.b.id();
        self.b.op_ids(op, ty, id, args).expect("block selected");
        self.made(op, ty, id, first)
    }

    /// A bit cast of `x` to `ty` that is a source `x` was cast from, of type `ty`.
    #[inline]
    fn bitcast_of(&self, op: spirv::Op, ty: Word, x: Word) -> Option<Word> {
        if op != spirv::Op::Bitcast {
            return None;
        }
        let src = self.bitcast_src.get(x)?;
        (self.rtys.get(src) == Some(ty)).then_some(src)
    }

    /// Records result `id` of `op` (type `ty`, first operand `first`); returns `id`.
    #[inline]
    fn made(&mut self, op: spirv::Op, ty: Word, id: Word, first: Word) -> Word {
        self.rtys.insert(id, ty);
        if op == spirv::Op::Bitcast {
            self.bitcast_src.insert(id, first);
        }
        id
    }

    /// A float op with NoContraction.
    pub fn fop(&mut self, op: spirv::Op, ty: Word, args: &[Word]) -> Word {
        let r = self.op(op, ty, args);
        self.b.decorate_flag(r, Decoration::NoContraction);
        r
    }

    pub fn ext(&mut self, ty: Word, inst: u32, args: &[Word]) -> Word {
        let set = self.glsl_set;
        let id = self.b.id();
        self.b
            .ext_ids(ty, id, set, inst, args)
            .expect("block selected");
        self.rtys.insert(id, ty);
        id
    }

    pub fn select(&mut self, t: Type, c: Word, a: Word, b: Word) -> Word {
        let ty = self.ty(t);
        self.op(spirv::Op::Select, ty, &[c, a, b])
    }

    #[inline]
    fn ptr(&mut self, sc: StorageClass, elem: Word) -> Word {
        let k = (0, sc as u32, elem);
        if let Some(w) = self.tcache.get(&k) {
            return w;
        }
        // The only way to pointer types: a new one on a miss.
        let w = self.b.type_pointer_new(sc, elem);
        self.tcache.insert(k, w);
        w
    }

    /// A vector type (cached: rspirv's own lookup scans every type).
    pub(crate) fn vec_ty(&mut self, elem: Word, n: u32) -> Word {
        let k = (1, elem, n);
        if let Some(w) = self.tcache.get(&k) {
            return w;
        }
        let w = self.b.type_vector(elem, n);
        self.tcache.insert(k, w);
        w
    }

    /// A signed integer type of `bits` bits (cached).
    pub(crate) fn sint(&mut self, bits: u32) -> Word {
        let k = (2, bits, 0);
        if let Some(w) = self.tcache.get(&k) {
            return w;
        }
        let w = self.b.type_int(bits, 1);
        self.tcache.insert(k, w);
        w
    }

    /// A two-member struct `{t, t}` (cached).
    pub(crate) fn pair_ty(&mut self, t: Word) -> Word {
        let k = (3, t, 0);
        if let Some(w) = self.tcache.get(&k) {
            return w;
        }
        let w = self.b.type_struct([t, t]);
        self.tcache.insert(k, w);
        w
    }

    /// An array type `elem[len]`, `len` a constant id (cached).
    fn arr(&mut self, elem: Word, len: Word) -> Word {
        let k = (4, elem, len);
        if let Some(w) = self.tcache.get(&k) {
            return w;
        }
        let w = self.b.type_array(elem, len);
        self.tcache.insert(k, w);
        w
    }

    /// A module-scope variable (never inside the block being built).
    fn global_var(&mut self, pty: Word, sc: StorageClass, init: Option<Word>) -> Word {
        let id = self.b.id();
        self.b.global_variable(id, pty, sc, init);
        id
    }

    fn fn_var(&mut self, elem: Word, init: Option<Word>) -> Word {
        let pty = self.ptr(StorageClass::Function, elem);
        let id = self.b.id();
        self.fn_vars.push((id, pty, init));
        id
    }

    /// The `Function` variable of a guest register (guest state not in SSA form).
    fn state_var(&mut self, r: dmsh_ir::Reg) -> Word {
        let slot = r.slot();
        if let Some(&w) = self.state.get(slot).filter(|&&w| w != 0) {
            return w;
        }
        let t = r.ty();
        let ty = self.ty(t);
        let zero = self.c(t, 0);
        let w = self.fn_var(ty, Some(zero));
        if slot >= self.state.len() {
            // Grown on demand: SSA code uses none, and zeroing every slot up front costs.
            self.state.resize(slot + 1, 0);
        }
        self.state[slot] = w;
        w
    }

    fn load(&mut self, t: Type, ptr: Word) -> Word {
        let ty = self.ty(t);
        let id = self.b.load_plain(ty, ptr).expect("block selected");
        // Known, so that a bit cast of the load and back is the load.
        self.rtys.insert(id, ty);
        id
    }

    fn store(&mut self, ptr: Word, v: Word) {
        self.b.store_plain(ptr, v).expect("block selected")
    }

    fn builtin(&mut self, bi: spirv::BuiltIn, t: Word) -> Word {
        if let Some(&w) = self.builtins.get(&bi) {
            return w;
        }
        let pty = self.ptr(StorageClass::Input, t);
        let w = self.global_var(pty, StorageClass::Input, None);
        self.b
            .decorate(w, Decoration::BuiltIn, [Operand::BuiltIn(bi)]);
        self.builtins.insert(bi, w);
        self.interface.push(w);
        w
    }

    fn builtin_comp(&mut self, bi: spirv::BuiltIn, comp: u8) -> Word {
        let u = self.ty(Type::U32);
        let v3 = self.vec_ty(u, 3);
        let var = self.builtin(bi, v3);
        let pu = self.ptr(StorageClass::Input, u);
        let idx = self.u32c(comp as u32);
        let p = self.b.access_chain(pu, None, var, &[idx]).expect("block");
        self.load(Type::U32, p)
    }

    fn lane_index(&mut self) -> Word {
        let u = self.ty(Type::U32);
        let bi = if self.stage == dmsh_ir::Stage::Compute {
            spirv::BuiltIn::LocalInvocationIndex
        } else {
            spirv::BuiltIn::SubgroupLocalInvocationId
        };
        let fresh = !self.builtins.contains_key(&bi);
        let var = self.builtin(bi, u);
        if fresh && self.stage == dmsh_ir::Stage::Fragment {
            self.b.decorate(var, Decoration::Flat, []);
        }
        self.load(Type::U32, var)
    }

    fn lane_id(&mut self) -> Word {
        let li = self.lane_index();
        let m = self.u32c(31);
        let u = self.ty(Type::U32);
        self.op(spirv::Op::BitwiseAnd, u, &[li, m])
    }

    /// Compute with a variable workgroup size (all of `local_size` zero).
    fn variable_size(&self) -> bool {
        self.stage == dmsh_ir::Stage::Compute && self.local_size == [0, 0, 0]
    }

    /// The workgroup size as specialization constants 0, 1, 2 (default 1), composed into the
    /// `WorkgroupSize` built-in.
    fn ls_spec(&mut self) -> [Word; 3] {
        if let Some(s) = self.ls_spec {
            return s;
        }
        let u = self.ty(Type::U32);
        let mut ids = [0; 3];
        for (k, id) in ids.iter_mut().enumerate() {
            *id = self.b.spec_constant_bit32(u, 1);
            self.b
                .decorate(*id, Decoration::SpecId, [Operand::LiteralBit32(k as u32)]);
        }
        let v3 = self.b.type_vector(u, 3);
        let c = self.b.spec_constant_composite(v3, &ids);
        self.b.decorate(
            c,
            Decoration::BuiltIn,
            [Operand::BuiltIn(spirv::BuiltIn::WorkgroupSize)],
        );
        self.ls_spec = Some(ids);
        ids
    }

    /// The number of invocations in a workgroup (a spec-constant product when variable).
    fn ls_total(&mut self) -> Word {
        if self.variable_size() {
            let [x, y, z] = self.ls_spec();
            let u = self.ty(Type::U32);
            let xy = self.op(spirv::Op::IMul, u, &[x, y]);
            self.op(spirv::Op::IMul, u, &[xy, z])
        } else {
            let t = self.local_size.iter().map(|&x| x.max(1)).product();
            self.u32c(t)
        }
    }

    fn sysval(&mut self, s: Sys) -> Word {
        let u = self.ty(Type::U32);
        match s {
            Sys::Tid(c) => self.builtin_comp(spirv::BuiltIn::LocalInvocationId, c),
            Sys::Ctaid(c) => self.builtin_comp(spirv::BuiltIn::WorkgroupId, c),
            Sys::Nctaid(c) => self.builtin_comp(spirv::BuiltIn::NumWorkgroups, c),
            Sys::Ntid(c) if self.variable_size() => self.ls_spec()[c as usize % 3],
            Sys::Ntid(c) => self.u32c(self.local_size[c as usize % 3]),
            Sys::LaneId => self.lane_id(),
            Sys::WarpId => {
                let li = self.lane_index();
                let five = self.u32c(5);
                self.op(spirv::Op::ShiftRightLogical, u, &[li, five])
            }
            Sys::LaneMask(k) => {
                let lane = self.lane_id();
                let one = self.u32c(1);
                let two = self.u32c(2);
                let eq = self.op(spirv::Op::ShiftLeftLogical, u, &[one, lane]);
                let le2 = self.op(spirv::Op::ShiftLeftLogical, u, &[two, lane]);
                let lt = self.op(spirv::Op::ISub, u, &[eq, one]);
                let le = self.op(spirv::Op::ISub, u, &[le2, one]);
                match k {
                    0 => eq,
                    1 => lt,
                    2 => le,
                    3 => self.op(spirv::Op::Not, u, &[le]),
                    _ => self.op(spirv::Op::Not, u, &[lt]),
                }
            }
            Sys::Clock | Sys::Zero => self.u32c(0),
        }
    }

    /// The workgroup lock of 64-bit shared compare-and-swap (zeroed in the prologue).
    fn cas_lock(&mut self) -> Word {
        if let Some(v) = self.cas_lock {
            return v;
        }
        let u = self.ty(Type::U32);
        let pty = self.ptr(StorageClass::Workgroup, u);
        let v = self.global_var(pty, StorageClass::Workgroup, None);
        self.interface.push(v);
        self.cas_lock = Some(v);
        v
    }

    /// 64-bit compare-and-swap on shared memory (a `u32` array): under a workgroup lock taken
    /// and released in the same loop iteration (no deadlock between lanes running in lock
    /// step). Only other 64-bit CAS are excluded; plain accesses to the two words are not.
    /// Every access (the lock's and the two words') is a relaxed atomic: lavapipe (Mesa
    /// 22.3) loses the lock's effect when its compare-exchange or release carries
    /// acquire/release semantics (only the first subgroup's invocations then succeed and the
    /// others spin until the loop cap; found by the warp-emulated `atomics_shared`), and
    /// Metal's atomics are relaxed anyway.
    fn shared_cas64(&mut self, addr: Word, cmp: Word, val: Word) -> Word {
        let u = self.ty(Type::U32);
        let u64t = self.ty(Type::U64);
        let bo = self.ty(Type::Bool);
        let lock = self.cas_lock();
        let result = self.fn_var(u64t, None);
        let done = self.fn_var(bo, None);
        let f = self.c(Type::Bool, 0);
        let t = self.c(Type::Bool, 1);
        self.store(done, f);
        let sc = self.u32c(SCOPE_WORKGROUP);
        let relaxed = self.u32c(0);
        let zero = self.u32c(0);
        let one = self.u32c(1);
        let (header, body, crit, after, cont, merge) = (
            self.b.id(),
            self.b.id(),
            self.b.id(),
            self.b.id(),
            self.b.id(),
            self.b.id(),
        );
        self.b.branch(header).expect("block");
        self.b.begin_block(Some(header)).expect("no block");
        self.b
            .loop_merge(merge, cont, spirv::LoopControl::NONE, [])
            .expect("block");
        self.b.branch(body).expect("block");
        self.b.begin_block(Some(body)).expect("no block");
        let got = self.op(
            spirv::Op::AtomicCompareExchange,
            u,
            &[lock, sc, relaxed, relaxed, one, zero],
        );
        let mine = self.op(spirv::Op::IEqual, bo, &[got, zero]);
        self.b
            .selection_merge(after, spirv::SelectionControl::NONE)
            .expect("block");
        self.b
            .branch_conditional(mine, crit, after, [])
            .expect("block");
        self.b.begin_block(Some(crit)).expect("no block");
        let p0 = self.word_ptr(Space::Shared, addr, 0);
        let p1 = self.word_ptr(Space::Shared, addr, 1);
        let lo = self.op(spirv::Op::AtomicLoad, u, &[p0, sc, relaxed]);
        let hi = self.op(spirv::Op::AtomicLoad, u, &[p1, sc, relaxed]);
        let old = self.pack64(lo, hi);
        let eq = self.op(spirv::Op::IEqual, bo, &[old, cmp]);
        let new = self.select(Type::U64, eq, val, old);
        let (nlo, nhi) = self.split64(new);
        self.b.atomic_store(p0, sc, relaxed, nlo).expect("block");
        self.b.atomic_store(p1, sc, relaxed, nhi).expect("block");
        self.op(spirv::Op::AtomicExchange, u, &[lock, sc, relaxed, zero]);
        self.store(result, old);
        self.store(done, t);
        self.b.branch(after).expect("block");
        self.b.begin_block(Some(after)).expect("no block");
        self.b.branch(cont).expect("block");
        self.b.begin_block(Some(cont)).expect("no block");
        let d = self.load(Type::Bool, done);
        self.b
            .branch_conditional(d, merge, header, [])
            .expect("block");
        self.b.begin_block(Some(merge)).expect("no block");
        self.load(Type::U64, result)
    }

    fn bar_pred_var(&mut self) -> Word {
        if let Some(v) = self.bar_pred {
            return v;
        }
        let b = self.ty(Type::Bool);
        let f = self.c(Type::Bool, 0);
        let v = self.fn_var(b, Some(f));
        self.bar_pred = Some(v);
        v
    }

    /// A new function-scope `u32` variable that starts at 0.
    pub(crate) fn zero_u32_var(&mut self) -> Word {
        let u = self.ty(Type::U32);
        let z = self.u32c(0);
        self.fn_var(u, Some(z))
    }

    fn popc_value_var(&mut self) -> Word {
        if let Some(v) = self.popc_value {
            return v;
        }
        let v = self.zero_u32_var();
        self.popc_value = Some(v);
        v
    }

    /// A workgroup `u32` counter array of `n` entries (barrier-synchronised dispatcher).
    fn wg_counters(&mut self, n: u32) -> Word {
        let u = self.ty(Type::U32);
        let nc = self.u32c(n);
        let at = self.arr(u, nc);
        let pty = self.ptr(StorageClass::Workgroup, at);
        let v = self.global_var(pty, StorageClass::Workgroup, None);
        self.interface.push(v);
        v
    }

    fn counter_ptr(&mut self, arr: Word, idx: Word) -> Word {
        let u = self.ty(Type::U32);
        let pu = self.ptr(StorageClass::Workgroup, u);
        self.b.access_chain(pu, None, arr, &[idx]).expect("block")
    }

    /// `pc` is one of `cases`.
    fn pc_in(&mut self, pc: Word, cases: &[u32]) -> Word {
        let bo = self.ty(Type::Bool);
        let mut r = self.c(Type::Bool, 0);
        for &c in cases {
            let k = self.u32c(c);
            let eq = self.op(spirv::Op::IEqual, bo, &[pc, k]);
            r = self.op(spirv::Op::LogicalOr, bo, &[r, eq]);
        }
        r
    }

    fn bar_result_var(&mut self) -> Word {
        if let Some(v) = self.bar_result {
            return v;
        }
        let v = self.zero_u32_var();
        self.bar_result = Some(v);
        v
    }

    /// The workgroup counter of `BAR.RED.POPC` (zeroed in the prologue).
    fn popc_counter(&mut self) -> Word {
        if let Some(v) = self.popc_counter {
            return v;
        }
        let u = self.ty(Type::U32);
        let pty = self.ptr(StorageClass::Workgroup, u);
        let v = self.global_var(pty, StorageClass::Workgroup, None);
        self.interface.push(v);
        self.popc_counter = Some(v);
        v
    }

    /// Invocation 0 zeroes the counter; everybody else leaves it (branch-free).
    fn popc_reset(&mut self) {
        let c = self.popc_counter();
        let u = self.ty(Type::U32);
        let bo = self.ty(Type::Bool);
        let li = self.lane_index();
        let z = self.u32c(0);
        let first = self.op(spirv::Op::IEqual, bo, &[li, z]);
        let all = self.u32c(!0);
        let m = self.select(Type::U32, first, z, all);
        let sc = self.u32c(SCOPE_WORKGROUP);
        let sem = self.u32c(0);
        self.op(spirv::Op::AtomicAnd, u, &[c, sc, sem, m]);
    }

    fn wg_barrier(&mut self) {
        let wg = self.u32c(SCOPE_WORKGROUP);
        let sem = self.u32c(0x108);
        self.b.control_barrier(wg, wg, sem).expect("block");
    }

    fn barrier_popc(&mut self, p: Word) -> Word {
        let c = self.popc_counter();
        let u = self.ty(Type::U32);
        self.wg_barrier();
        let one = self.u32c(1);
        let z = self.u32c(0);
        let inc = self.select(Type::U32, p, one, z);
        let sc = self.u32c(SCOPE_WORKGROUP);
        let sem = self.u32c(0);
        self.op(spirv::Op::AtomicIAdd, u, &[c, sc, sem, inc]);
        self.wg_barrier();
        let n = self.op(spirv::Op::AtomicLoad, u, &[c, sc, sem]);
        self.wg_barrier();
        self.popc_reset();
        self.wg_barrier();
        n
    }

    fn stack_vars(&mut self) -> (Word, Word) {
        if let Some(s) = self.stack {
            return s;
        }
        let u = self.ty(Type::U32);
        let n = self.u32c(STACK_DEPTH);
        let arr = self.arr(u, n);
        let arr_var = self.fn_var(arr, None);
        let zero = self.u32c(0);
        let sp = self.fn_var(u, Some(zero));
        self.stack = Some((arr_var, sp));
        (arr_var, sp)
    }

    fn stack_push(&mut self, kind: StackKind, target: Word) {
        let (arr, sp) = self.stack_vars();
        let u = self.ty(Type::U32);
        let spv = self.load(Type::U32, sp);
        let m = self.u32c(STACK_DEPTH - 1);
        let idx = self.op(spirv::Op::BitwiseAnd, u, &[spv, m]);
        let pu = self.ptr(StorageClass::Function, u);
        let p = self.b.access_chain(pu, None, arr, &[idx]).expect("block");
        let sh = self.u32c(2);
        let t = self.op(spirv::Op::ShiftLeftLogical, u, &[target, sh]);
        let k = self.u32c(kind as u32);
        let e = self.op(spirv::Op::BitwiseOr, u, &[t, k]);
        self.store(p, e);
        let one = self.u32c(1);
        let n = self.op(spirv::Op::IAdd, u, &[spv, one]);
        self.store(sp, n);
    }

    /// Pops down to and including the topmost entry of `kind` (unrolled search, no branches).
    fn stack_pop(&mut self, kind: StackKind) -> Word {
        let (arr, sp) = self.stack_vars();
        let u = self.ty(Type::U32);
        let bo = self.ty(Type::Bool);
        let spv = self.load(Type::U32, sp);
        let arrv = self.load_array(arr);
        let mut found = self.c(Type::Bool, 0);
        let mut new_sp = self.u32c(0);
        let mut target = self.u32c(EXIT_PC);
        let three = self.u32c(3);
        let two = self.u32c(2);
        let k = self.u32c(kind as u32);
        for i in (0..STACK_DEPTH).rev() {
            let e = self
                .b
                .composite_extract(u, None, arrv, &[i])
                .expect("block");
            let ek = self.op(spirv::Op::BitwiseAnd, u, &[e, three]);
            let is_k = self.op(spirv::Op::IEqual, bo, &[ek, k]);
            let ic = self.u32c(i);
            let below = self.op(spirv::Op::ULessThan, bo, &[ic, spv]);
            let hit0 = self.op(spirv::Op::LogicalAnd, bo, &[is_k, below]);
            let nf = self.op(spirv::Op::LogicalNot, bo, &[found]);
            let hit = self.op(spirv::Op::LogicalAnd, bo, &[hit0, nf]);
            let tgt = self.op(spirv::Op::ShiftRightLogical, u, &[e, two]);
            target = self.select(Type::U32, hit, tgt, target);
            new_sp = self.select(Type::U32, hit, ic, new_sp);
            found = self.op(spirv::Op::LogicalOr, bo, &[found, hit]);
        }
        self.store(sp, new_sp);
        target
    }

    fn load_array(&mut self, arr: Word) -> Word {
        let u = self.ty(Type::U32);
        let n = self.u32c(STACK_DEPTH);
        let at = self.arr(u, n);
        self.b.load_plain(at, arr).expect("block")
    }

    fn bank_var(&mut self, f: &dmsh_ir::Shader, bank: u8) -> Result<(Word, u32, u32, bool), Error> {
        if let Some(&(_, v)) = self.banks.iter().find(|b| b.0 == bank) {
            return Ok(v);
        }
        let src = f
            .banks
            .iter()
            .find(|b| b.bank == bank)
            .map(|b| b.source.clone())
            .unwrap_or(BankSource::Embedded(Vec::new()));
        let u = self.ty(Type::U32);
        let v = match src {
            BankSource::Embedded(words) => {
                let mut words = words;
                if words.is_empty() {
                    words.push(0);
                }
                let n = self.u32c(words.len() as u32);
                let at = self.arr(u, n);
                let elems: Vec<Word> = words.iter().map(|&w| self.u32c(w)).collect();
                let init = self.b.constant_composite(at, elems);
                let pty = self.ptr(StorageClass::Private, at);
                let var = self.global_var(pty, StorageClass::Private, Some(init));
                self.interface.push(var);
                (var, 0, words.len() as u32, false)
            }
            BankSource::Buffer { guest_offset, size } => {
                let vec4 = self.vec_ty(u, 4);
                let n16 = size.div_ceil(16).max(1);
                let n = self.u32c(n16);
                let at = self.arr(vec4, n);
                // Banks of one size share their (deduplicated) types: decorate them once.
                let st = match self.tcache.get(&(0xb0, n16, 0)) {
                    Some(st) => st,
                    None => {
                        self.b
                            .decorate(at, Decoration::ArrayStride, [Operand::LiteralBit32(16)]);
                        let st = self.b.type_struct([at]);
                        self.b.decorate(st, Decoration::Block, []);
                        self.b.member_decorate(
                            st,
                            0,
                            Decoration::Offset,
                            [Operand::LiteralBit32(0)],
                        );
                        self.tcache.insert((0xb0, n16, 0), st);
                        st
                    }
                };
                let pty = self.ptr(StorageClass::Uniform, st);
                let var = self.global_var(pty, StorageClass::Uniform, None);
                self.b
                    .decorate(var, Decoration::DescriptorSet, [Operand::LiteralBit32(0)]);
                self.b.decorate(
                    var,
                    Decoration::Binding,
                    [Operand::LiteralBit32(bank as u32)],
                );
                self.interface.push(var);
                (var, guest_offset, n16 * 4, true)
            }
        };
        self.banks.push((bank, v));
        Ok(v)
    }

    /// `LoadConst(bank)` of byte offset `off`.
    fn load_const_of(
        &mut self,
        sh: &dmsh_ir::Shader,
        f: &Function,
        bank: u8,
        off: Value,
    ) -> Result<Word, Error> {
        let known = f.const_of(off).map(|c| c as u32);
        self.load_const(sh, bank, self.val(off), known)
    }

    /// Reads the word of constant bank `bank` at byte offset `off` (`known`: its value when it
    /// is a constant, so the index is computed here instead of in the shader).
    fn load_const(
        &mut self,
        sh: &dmsh_ir::Shader,
        bank: u8,
        off: Word,
        known: Option<u32>,
    ) -> Result<Word, Error> {
        let (var, base, words, ubo) = self.bank_var(sh, bank)?;
        let u = self.ty(Type::U32);
        // The word index, clamped to the bank (as the run-time sequence below computes it).
        let w = match known {
            Some(o) => Index::Known((o.wrapping_sub(base) >> 2).min(words - 1)),
            None => {
                let b = self.u32c(base);
                let rel = self.op(spirv::Op::ISub, u, &[off, b]);
                let two = self.u32c(2);
                let w = self.op(spirv::Op::ShiftRightLogical, u, &[rel, two]);
                let maxw = self.u32c(words - 1);
                Index::Computed(self.ext(u, glsl::UMIN, &[w, maxw]))
            }
        };
        if ubo {
            let pu = self.ptr(StorageClass::Uniform, u);
            let zero = self.u32c(0);
            let (w4, c) = match w {
                Index::Known(k) => (self.u32c(k >> 2), self.u32c(k & 3)),
                Index::Computed(w) => {
                    let two = self.u32c(2);
                    let three = self.u32c(3);
                    (
                        self.op(spirv::Op::ShiftRightLogical, u, &[w, two]),
                        self.op(spirv::Op::BitwiseAnd, u, &[w, three]),
                    )
                }
            };
            let p = self
                .b
                .access_chain(pu, None, var, &[zero, w4, c])
                .expect("block");
            Ok(self.load(Type::U32, p))
        } else {
            let w = match w {
                Index::Known(k) => self.u32c(k),
                Index::Computed(w) => w,
            };
            let pu = self.ptr(StorageClass::Private, u);
            let p = self.b.access_chain(pu, None, var, &[w]).expect("block");
            Ok(self.load(Type::U32, p))
        }
    }

    /// The array variable of a 32-bit-word memory (shared or local), with its word count.
    fn word_mem(&mut self, space: Space) -> (Word, u32, StorageClass) {
        let u = self.ty(Type::U32);
        match space {
            Space::Shared => {
                let (v, n) = self.shared.expect("shared declared");
                let _ = u;
                (v, n, StorageClass::Workgroup)
            }
            _ => {
                let (v, n) = self.local.expect("local declared");
                (v, n, StorageClass::Function)
            }
        }
    }

    fn word_ptr(&mut self, space: Space, byte_addr: Word, word_off: u32) -> Word {
        let (var, n, sc) = self.word_mem(space);
        let u = self.ty(Type::U32);
        let two = self.u32c(2);
        let w = self.op(spirv::Op::ShiftRightLogical, u, &[byte_addr, two]);
        let w = if word_off != 0 {
            let o = self.u32c(word_off);
            self.op(spirv::Op::IAdd, u, &[w, o])
        } else {
            w
        };
        let maxw = self.u32c(n - 1);
        let w = self.ext(u, glsl::UMIN, &[w, maxw]);
        let pu = self.ptr(sc, u);
        self.b.access_chain(pu, None, var, &[w]).expect("block")
    }

    fn global_ptr(&mut self, addr: Word, elem: Word) -> Word {
        self.uses_psb = true;
        let p = self.ptr(StorageClass::PhysicalStorageBuffer, elem);
        self.op(spirv::Op::ConvertUToPtr, p, &[addr])
    }

    fn width_elem(&mut self, w: Width) -> Word {
        match w {
            Width::U8 | Width::S8 => self.u8t,
            Width::U16 | Width::S16 => self.u16t,
            Width::B32 => self.ty(Type::U32),
            Width::B64 => self.ty(Type::U64),
        }
    }

    fn extend(&mut self, w: Width, v: Word) -> Word {
        let u = self.ty(Type::U32);
        match w {
            Width::U8 | Width::U16 => self.op(spirv::Op::UConvert, u, &[v]),
            Width::S8 | Width::S16 => {
                let i = self.sint(32);
                let s = self.op(spirv::Op::SConvert, i, &[v]);
                self.op(spirv::Op::Bitcast, u, &[s])
            }
            _ => v,
        }
    }

    fn mem_load(&mut self, space: Space, w: Width, addr: Word) -> Word {
        if let Space::Storage(s) = space {
            return self.sbuf_load(s, w, addr);
        }
        match space {
            Space::Global => {
                let elem = self.width_elem(w);
                let p = self.global_ptr(addr, elem);
                let v = self.b.load(
                    elem,
                    None,
                    p,
                    Some(spirv::MemoryAccess::ALIGNED),
                    [Operand::LiteralBit32(w.bytes())],
                );
                let v = v.expect("block");
                self.extend(w, v)
            }
            _ => match w {
                Width::B32 => {
                    let p = self.word_ptr(space, addr, 0);
                    self.load(Type::U32, p)
                }
                Width::B64 => {
                    let p0 = self.word_ptr(space, addr, 0);
                    let lo = self.load(Type::U32, p0);
                    let p1 = self.word_ptr(space, addr, 1);
                    let hi = self.load(Type::U32, p1);
                    self.pack64(lo, hi)
                }
                _ => {
                    let p = self.word_ptr(space, addr, 0);
                    let word = self.load(Type::U32, p);
                    self.narrow_of(word, addr, w)
                }
            },
        }
    }

    fn pack64(&mut self, lo: Word, hi: Word) -> Word {
        let u64t = self.ty(Type::U64);
        let l = self.op(spirv::Op::UConvert, u64t, &[lo]);
        let h = self.op(spirv::Op::UConvert, u64t, &[hi]);
        let c32 = self.c(Type::U64, 32);
        let hs = self.op(spirv::Op::ShiftLeftLogical, u64t, &[h, c32]);
        self.op(spirv::Op::BitwiseOr, u64t, &[l, hs])
    }

    fn split64(&mut self, v: Word) -> (Word, Word) {
        let u = self.ty(Type::U32);
        let u64t = self.ty(Type::U64);
        let lo = self.op(spirv::Op::UConvert, u, &[v]);
        let c32 = self.c(Type::U64, 32);
        let h = self.op(spirv::Op::ShiftRightLogical, u64t, &[v, c32]);
        let hi = self.op(spirv::Op::UConvert, u, &[h]);
        (lo, hi)
    }

    fn mem_store(&mut self, space: Space, w: Width, addr: Word, v: Word) {
        if let Space::Storage(s) = space {
            return self.sbuf_store(s, w, addr, v);
        }
        let u = self.ty(Type::U32);
        match space {
            Space::Global => {
                let elem = self.width_elem(w);
                let p = self.global_ptr(addr, elem);
                let v = match w {
                    Width::B32 | Width::B64 => v,
                    _ => self.op(spirv::Op::UConvert, elem, &[v]),
                };
                self.b
                    .store(
                        p,
                        v,
                        Some(spirv::MemoryAccess::ALIGNED),
                        [Operand::LiteralBit32(w.bytes())],
                    )
                    .expect("block");
            }
            _ => match w {
                Width::B32 => {
                    let p = self.word_ptr(space, addr, 0);
                    self.store(p, v);
                }
                Width::B64 => {
                    let (lo, hi) = self.split64(v);
                    let p0 = self.word_ptr(space, addr, 0);
                    self.store(p0, lo);
                    let p1 = self.word_ptr(space, addr, 1);
                    self.store(p1, hi);
                }
                _ => {
                    let p = self.word_ptr(space, addr, 0);
                    let three = self.u32c(3);
                    let b = self.op(spirv::Op::BitwiseAnd, u, &[addr, three]);
                    let sh = self.op(spirv::Op::ShiftLeftLogical, u, &[b, three]);
                    let fm = self.u32c(if w.bytes() == 1 { 0xff } else { 0xffff });
                    let m = self.op(spirv::Op::ShiftLeftLogical, u, &[fm, sh]);
                    let vm = self.op(spirv::Op::BitwiseAnd, u, &[v, fm]);
                    let vs = self.op(spirv::Op::ShiftLeftLogical, u, &[vm, sh]);
                    let nm = self.op(spirv::Op::Not, u, &[m]);
                    if space == Space::Shared {
                        let sc = self.u32c(SCOPE_WORKGROUP);
                        let sem = self.u32c(0);
                        self.op(spirv::Op::AtomicAnd, u, &[p, sc, sem, nm]);
                        self.op(spirv::Op::AtomicOr, u, &[p, sc, sem, vs]);
                    } else {
                        let old = self.load(Type::U32, p);
                        let k = self.op(spirv::Op::BitwiseAnd, u, &[old, nm]);
                        let n = self.op(spirv::Op::BitwiseOr, u, &[k, vs]);
                        self.store(p, n);
                    }
                }
            },
        }
    }

    fn atomic_ptr(&mut self, space: Space, w: Width, addr: Word) -> (Word, u32) {
        match space {
            Space::Global => {
                let elem = self.width_elem(w);
                (self.global_ptr(addr, elem), SCOPE_DEVICE)
            }
            _ => (self.word_ptr(space, addr, 0), SCOPE_WORKGROUP),
        }
    }

    fn atomic(
        &mut self,
        space: Space,
        aop: AtomOp,
        w: Width,
        addr: Word,
        v: Word,
    ) -> Result<Word, Error> {
        if let Space::Storage(s) = space {
            return Ok(self.sbuf_atomic(s, aop, w, addr, v));
        }
        let t = if w == Width::B64 {
            Type::U64
        } else {
            Type::U32
        };
        if space != Space::Global && w == Width::B64 {
            return Err(Error::Unsupported("64-bit shared atomic RMW".into()));
        }
        let ty = self.ty(t);
        let (p, scope) = self.atomic_ptr(space, w, addr);
        let sc = self.u32c(scope);
        let sem = self.u32c(0);
        if let Some(o) = rmw_op(aop) {
            return Ok(self.op(o, ty, &[p, sc, sem, v]));
        }
        match aop {
            AtomOp::FAdd => {
                let f = self.ty(Type::F32);
                let fp = match space {
                    Space::Global => self.global_ptr(addr, f),
                    _ => {
                        let pf = self.ptr(StorageClass::Workgroup, f);
                        self.op(spirv::Op::Bitcast, pf, &[p])
                    }
                };
                let fv = self.op(spirv::Op::Bitcast, f, &[v]);
                let r = self.op(spirv::Op::AtomicFAddEXT, f, &[fp, sc, sem, fv]);
                Ok(self.op(spirv::Op::Bitcast, ty, &[r]))
            }
            _ => Ok(self.atomic_loop(aop, t, p, sc, v, space == Space::Global)),
        }
    }

    /// CUDA's wrapping inc/dec as a compare-and-swap loop.
    fn atomic_loop(
        &mut self,
        aop: AtomOp,
        t: Type,
        p: Word,
        sc: Word,
        v: Word,
        global: bool,
    ) -> Word {
        let ty = self.ty(t);
        let bo = self.ty(Type::Bool);
        let sem = self.u32c(0);
        let old_var = self.fn_var(ty, None);
        let header = self.b.id();
        let body = self.b.id();
        let cont = self.b.id();
        let merge = self.b.id();
        self.b.branch(header).expect("block");
        self.b.begin_block(Some(header)).expect("no block");
        self.b
            .loop_merge(merge, cont, spirv::LoopControl::NONE, [])
            .expect("block");
        self.b.branch(body).expect("block");
        self.b.begin_block(Some(body)).expect("no block");
        let old = if global {
            let tw = self.ty(t);
            let bytes = t.bits() / 8;
            self.b
                .load(
                    tw,
                    None,
                    p,
                    Some(spirv::MemoryAccess::ALIGNED),
                    [Operand::LiteralBit32(bytes)],
                )
                .expect("block")
        } else {
            self.load(t, p)
        };
        let one = self.c(t, 1);
        let zero = self.c(t, 0);
        let new = match aop {
            AtomOp::Inc => {
                let ge = self.op(spirv::Op::UGreaterThanEqual, bo, &[old, v]);
                let inc = self.op(spirv::Op::IAdd, ty, &[old, one]);
                self.select(t, ge, zero, inc)
            }
            _ => {
                let z = self.op(spirv::Op::IEqual, bo, &[old, zero]);
                let gt = self.op(spirv::Op::UGreaterThan, bo, &[old, v]);
                let c = self.op(spirv::Op::LogicalOr, bo, &[z, gt]);
                let dec = self.op(spirv::Op::ISub, ty, &[old, one]);
                self.select(t, c, v, dec)
            }
        };
        let got = self.op(
            spirv::Op::AtomicCompareExchange,
            ty,
            &[p, sc, sem, sem, new, old],
        );
        self.store(old_var, got);
        let done = self.op(spirv::Op::IEqual, bo, &[got, old]);
        self.b.branch(cont).expect("block");
        self.b.begin_block(Some(cont)).expect("no block");
        self.b
            .branch_conditional(done, merge, header, [])
            .expect("block");
        self.b.begin_block(Some(merge)).expect("no block");
        self.load(t, old_var)
    }

    fn shfl(&mut self, mode: ShflMode, val: Word, bv: Word, cv: Word) -> (Word, Word) {
        self.warp_ops = true;
        let u = self.ty(Type::U32);
        let bo = self.ty(Type::Bool);
        let lane = self.lane_id();
        let c31 = self.u32c(31);
        let c8 = self.u32c(8);
        let bl = self.op(spirv::Op::BitwiseAnd, u, &[bv, c31]);
        let cl = self.op(spirv::Op::BitwiseAnd, u, &[cv, c31]);
        let s0 = self.op(spirv::Op::ShiftRightLogical, u, &[cv, c8]);
        let seg = self.op(spirv::Op::BitwiseAnd, u, &[s0, c31]);
        let nseg = self.op(spirv::Op::Not, u, &[seg]);
        let min_lane = self.op(spirv::Op::BitwiseAnd, u, &[lane, seg]);
        let cm = self.op(spirv::Op::BitwiseAnd, u, &[cl, nseg]);
        let max_lane = self.op(spirv::Op::BitwiseOr, u, &[min_lane, cm]);
        let (j, ok) = match mode {
            ShflMode::Up => {
                let j = self.op(spirv::Op::ISub, u, &[lane, bl]);
                (j, self.op(spirv::Op::SGreaterThanEqual, bo, &[j, max_lane]))
            }
            ShflMode::Down => {
                let j = self.op(spirv::Op::IAdd, u, &[lane, bl]);
                (j, self.op(spirv::Op::SLessThanEqual, bo, &[j, max_lane]))
            }
            ShflMode::Bfly => {
                let j = self.op(spirv::Op::BitwiseXor, u, &[lane, bl]);
                (j, self.op(spirv::Op::SLessThanEqual, bo, &[j, max_lane]))
            }
            ShflMode::Idx => {
                let bm = self.op(spirv::Op::BitwiseAnd, u, &[bl, nseg]);
                let j = self.op(spirv::Op::BitwiseOr, u, &[min_lane, bm]);
                (j, self.op(spirv::Op::SLessThanEqual, bo, &[j, max_lane]))
            }
        };
        let src = self.select(Type::U32, ok, j, lane);
        let sc = self.u32c(SCOPE_SUBGROUP);
        let r = self.op(spirv::Op::GroupNonUniformShuffle, u, &[sc, val, src]);
        (r, ok)
    }

    /// A subgroup reduction (`OpGroupNonUniform*` with the `Reduce` group operation) of a U32.
    fn warp_reduce(&mut self, op: AtomOp, v: Word) -> Result<Word, Error> {
        self.warp_ops = true;
        self.warp_arith = true;
        let o = match op {
            AtomOp::Add => spirv::Op::GroupNonUniformIAdd,
            AtomOp::SMin => spirv::Op::GroupNonUniformSMin,
            AtomOp::UMin => spirv::Op::GroupNonUniformUMin,
            AtomOp::SMax => spirv::Op::GroupNonUniformSMax,
            AtomOp::UMax => spirv::Op::GroupNonUniformUMax,
            AtomOp::And => spirv::Op::GroupNonUniformBitwiseAnd,
            AtomOp::Or => spirv::Op::GroupNonUniformBitwiseOr,
            AtomOp::Xor => spirv::Op::GroupNonUniformBitwiseXor,
            o => return Err(Error::Builder(format!("no subgroup reduction {o:?}"))),
        };
        let u = self.ty(Type::U32);
        let sc = self.u32c(SCOPE_SUBGROUP);
        let reduce = spirv::GroupOperation::Reduce as u32;
        Ok(self.op(o, u, &[sc, reduce, v]))
    }

    /// `MATCH.ANY` with subgroup ballots: the active lanes ANDed, per bit of each word, with
    /// the ballot of that bit (or its complement where this lane's bit is clear).
    fn match_any(&mut self, words: &[Word]) -> Word {
        let u = self.ty(Type::U32);
        let bo = self.ty(Type::Bool);
        let t = self.c(Type::Bool, 1);
        let mut mask = self.vote(VoteMode::Ballot, t);
        let z = self.u32c(0);
        for &w in words {
            for k in 0..32 {
                let kc = self.u32c(k);
                let sh = self.op(spirv::Op::ShiftRightLogical, u, &[w, kc]);
                let one = self.u32c(1);
                let bit = self.op(spirv::Op::BitwiseAnd, u, &[sh, one]);
                let set = self.op(spirv::Op::INotEqual, bo, &[bit, z]);
                let b = self.vote(VoteMode::Ballot, set);
                let nb = self.op(spirv::Op::Not, u, &[b]);
                let same = self.select(Type::U32, set, b, nb);
                mask = self.op(spirv::Op::BitwiseAnd, u, &[mask, same]);
            }
        }
        mask
    }

    fn vote(&mut self, mode: VoteMode, p: Word) -> Word {
        self.warp_ops = true;
        let bo = self.ty(Type::Bool);
        let sc = self.u32c(SCOPE_SUBGROUP);
        match mode {
            VoteMode::All => self.op(spirv::Op::GroupNonUniformAll, bo, &[sc, p]),
            VoteMode::Any => self.op(spirv::Op::GroupNonUniformAny, bo, &[sc, p]),
            VoteMode::Eq => self.op(spirv::Op::GroupNonUniformAllEqual, bo, &[sc, p]),
            VoteMode::Ballot => {
                let u = self.ty(Type::U32);
                let v4 = self.vec_ty(u, 4);
                let bal = self.op(spirv::Op::GroupNonUniformBallot, v4, &[sc, p]);
                self.b.composite_extract(u, None, bal, &[0]).expect("block")
            }
        }
    }

    fn val(&self, v: Value) -> Word {
        self.vals[v.index()]
    }

    /// Emits one IR instruction: the commonest kinds (constants, flushes, memory accesses,
    /// graphics operations and the operations that are one SPIR-V instruction of their
    /// result type on their operands, more than four in five) here, the others by
    /// [`E::inst_general`].
    // Always inlined into the block loop: a call per instruction cost a fifth of the fast path.
    #[inline(always)]
    fn inst(&mut self, sh: &dmsh_ir::Shader, f: &Function, v: Value) -> Result<(), Error> {
        let inst = f.inst(v);
        let rt = inst.ty;
        let r = match inst.op {
            // Made by `emit_planned`'s first scan.
            Op::Const(_) if rt != Type::F16 => return Ok(()),
            Op::Undef => return Ok(()),
            Op::Ftz => self.ftz32(self.val(inst.args[0])),
            Op::LoadConst(bank) => self.load_const_of(sh, f, bank, inst.args[0])?,
            Op::Load(space, w) => self.mem_load(space, w, self.val(inst.args[0])),
            Op::Store(space, w) => {
                let (addr, x) = (self.val(inst.args[0]), self.val(inst.args[1]));
                self.mem_store(space, w, addr, x);
                0
            }
            op if rt == Type::F32 && self.float_arith_here(op) => self.float_arith(f, inst),
            op if gfx::is_gfx_op(op) => self.gfx_op(f, v, inst)?,
            op => match direct_op(op, rt) {
                Some(sop) if self.direct_here(sop, rt, f.ty(inst.args[0])) => {
                    let ty = self.ty(rt);
                    let a = |k: usize| self.vals[inst.args[k].index()];
                    match inst.args {
                        [_, Value::NONE, ..] => self.op_n(sop, ty, [a(0)]),
                        [_, _, Value::NONE, _] => self.op_n(sop, ty, [a(0), a(1)]),
                        [_, _, _, Value::NONE] => self.op_n(sop, ty, [a(0), a(1), a(2)]),
                        _ => self.op_n(sop, ty, [a(0), a(1), a(2), a(3)]),
                    }
                }
                _ => return self.inst_general(f, v),
            },
        };
        self.vals[v.index()] = r;
        Ok(())
    }

    /// Whether `op` of an F32 result is [`E::float_arith`]'s: an `FAdd`, `FMul` or `FFma`
    /// that soft f64 mode does not round through its routines (the directed ones and exact
    /// fused products, `E::soft_inst`).
    #[inline]
    fn float_arith_here(&self, op: Op) -> bool {
        match op {
            Op::FAdd(r) | Op::FMul(r) => r == dmsh_ir::Round::Rn || !self.soft_f64(),
            Op::FFma(r) => {
                !self.soft_f64()
                    || (r == dmsh_ir::Round::Rn && self.opts.fma == crate::FmaMode::Native)
            }
            _ => false,
        }
    }

    /// The result of `inst`, an `FAdd`, `FMul` or `FFma` not of soft f64 values. Out of
    /// line, and [`E::inst`] calls it for F32 results, the commonest, without
    /// [`E::inst_general`]'s operand tables.
    #[inline(never)]
    fn float_arith(&mut self, f: &Function, inst: &dmsh_ir::Inst) -> Word {
        let rt = inst.ty;
        let a = |k: usize| self.vals[inst.args[k].index()];
        // An addend that is the constant +0.0 (`FADD R, RZ, -R`, ptxas's negation; see
        // `add_plus_zero`).
        let pz = |k: usize| rt != Type::F16 && f.const_of(inst.args[k]) == Some(0);
        match inst.op {
            Op::FAdd(rnd) if pz(1) => self.add_plus_zero(rt, rnd, a(0)),
            Op::FAdd(rnd) if pz(0) => self.add_plus_zero(rt, rnd, a(1)),
            Op::FAdd(rnd) => self.fadd(rt, rnd, a(0), a(1)),
            Op::FMul(rnd) => self.fmul(rt, rnd, a(0), a(1)),
            Op::FFma(rnd) if pz(2) => self.fma_plus_zero(rt, rnd, a(0), a(1)),
            Op::FFma(rnd) => self.ffma(rt, rnd, a(0), a(1), a(2)),
            _ => unreachable!("float_arith of {:?}", inst.op),
        }
    }

    /// Whether [`direct_op`]'s instruction `sop` is the whole translation of its operation
    /// with result type `rt` and first operand type `at0`.
    #[inline]
    fn direct_here(&self, sop: spirv::Op, rt: Type, at0: Type) -> bool {
        // Soft f64 has its own code for values of type F64 (`E::soft_inst`).
        let soft = self.soft_f64() && (rt == Type::F64 || at0 == Type::F64);
        !soft
            && match sop {
                // Of booleans: the logical forms.
                spirv::Op::IEqual | spirv::Op::INotEqual => at0 != Type::Bool,
                // A half travels as U32 bits: its casts are two instructions.
                spirv::Op::Bitcast => at0 != Type::F16,
                _ => true,
            }
    }

    /// [`E::inst`] of the other instructions.
    // `a` is a slice of a stack buffer; the arms pass `&a` as they did when it was a Vec.
    #[allow(clippy::needless_borrow)]
    fn inst_general(&mut self, f: &Function, v: Value) -> Result<(), Error> {
        let inst = f.inst(v);
        // Arguments and their types, without allocating (at most four).
        let mut abuf = [0 as Word; 4];
        let mut atbuf = [Type::Void; 4];
        let mut n = 0;
        for x in inst.args() {
            abuf[n] = self.val(x);
            atbuf[n] = f.ty(x);
            n += 1;
        }
        let a: &[Word] = &abuf[..n];
        let at: &[Type] = &atbuf[..n];
        let rt = inst.ty;
        let ty = if rt == Type::F16 {
            self.ty(Type::F16)
        } else {
            self.ty(rt)
        };
        use spirv::Op as S;
        let signed = |e: &mut E, t: Type| -> Word {
            let w = t.bits();
            e.sint(w)
        };
        if self.soft_f64() {
            // An addend that is the constant +0.0 (see `add_plus_zero`).
            let plus_zero = matches!(inst.op, Op::FAdd(_))
                && (f.const_of(inst.args[0]) == Some(0) || f.const_of(inst.args[1]) == Some(0));
            if let Some(r) = self.soft_inst(&inst, a, at, plus_zero)? {
                self.vals[v.index()] = r;
                return Ok(());
            }
        }
        let r = match inst.op {
            Op::Const(bits) => {
                if rt == Type::F16 {
                    let h = self.c(Type::F16, bits);
                    let f16 = self.ty(Type::F16);
                    self.op(S::Bitcast, f16, &[h])
                } else {
                    self.c(rt, bits)
                }
            }
            Op::Undef => self.c(rt, 0),
            Op::Phi(k) => {
                let var = self.phi_var(k, rt);
                self.load(rt, var)
            }
            Op::Get(r) => {
                let var = self.state_var(r);
                self.load(r.ty(), var)
            }
            Op::Set(r) => {
                let var = self.state_var(r);
                self.store(var, a[0]);
                0
            }
            Op::StackPush(k) => {
                self.stack_push(k, a[0]);
                0
            }
            Op::StackPop(k) => self.stack_pop(k),
            // One instruction each (`direct_op`): here for soft f64 values and comparisons of
            // booleans, `E::inst` emits the others.
            Op::IAdd
            | Op::ISub
            | Op::IMul
            | Op::INeg
            | Op::And
            | Op::Or
            | Op::Xor
            | Op::Not
            | Op::Shl
            | Op::LShr
            | Op::AShr
            | Op::BfeU
            | Op::BfeS
            | Op::Bfi
            | Op::Popc
            | Op::Brev
            | Op::IEq
            | Op::INe
            | Op::SLt
            | Op::SLe
            | Op::SGt
            | Op::SGe
            | Op::ULt
            | Op::ULe
            | Op::UGt
            | Op::UGe
            | Op::Select
            | Op::FNeg
            | Op::FOEq
            | Op::FONe
            | Op::FOLt
            | Op::FOLe
            | Op::FOGt
            | Op::FOGe
            | Op::FUEq
            | Op::FUNe
            | Op::FULt
            | Op::FULe
            | Op::FUGt
            | Op::FUGe
            | Op::IsNan
            | Op::IsInf
            | Op::FToU => {
                let o = match direct_op(inst.op, rt).expect("one instruction") {
                    S::IEqual if at[0] == Type::Bool => S::LogicalEqual,
                    S::INotEqual if at[0] == Type::Bool => S::LogicalNotEqual,
                    o => o,
                };
                self.op(o, ty, &a)
            }
            Op::UMulHi | Op::SMulHi => {
                let st = if inst.op == Op::SMulHi {
                    signed(self, rt)
                } else {
                    ty
                };
                let pair = self.pair_ty(st);
                let (x, y) = if inst.op == Op::SMulHi {
                    (
                        self.op(S::Bitcast, st, &[a[0]]),
                        self.op(S::Bitcast, st, &[a[1]]),
                    )
                } else {
                    (a[0], a[1])
                };
                let o = if inst.op == Op::SMulHi {
                    S::SMulExtended
                } else {
                    S::UMulExtended
                };
                let m = self.op(o, pair, &[x, y]);
                let hi = self.b.composite_extract(st, None, m, &[1]).expect("block");
                self.op(S::Bitcast, ty, &[hi])
            }
            Op::AddCarry => {
                let t0 = self.ty(at[0]);
                let pair = self.pair_ty(t0);
                let m = self.op(S::IAddCarry, pair, &a);
                let c = self.b.composite_extract(t0, None, m, &[1]).expect("block");
                let zero = self.c(at[0], 0);
                self.op(S::INotEqual, ty, &[c, zero])
            }
            Op::FindUMsb => self.ext(ty, glsl::FIND_UMSB, &a),
            Op::FindSMsb => self.ext(ty, glsl::FIND_SMSB, &a),
            Op::SMin => self.ext(ty, glsl::SMIN, &a),
            Op::SMax => self.ext(ty, glsl::SMAX, &a),
            Op::UMin => self.ext(ty, glsl::UMIN, &a),
            Op::UMax => self.ext(ty, glsl::UMAX, &a),
            Op::FAdd(_) | Op::FMul(_) | Op::FFma(_) => self.float_arith(f, &inst),
            Op::FDiv => self.fop(S::FDiv, ty, &a),
            Op::FAbs => self.ext(ty, glsl::FABS, &a),
            Op::FMin => self.ext(ty, glsl::NMIN, &a),
            Op::FMax => self.ext(ty, glsl::NMAX, &a),
            Op::FFloor => self.ext(ty, glsl::FLOOR, &a),
            Op::FCeil => self.ext(ty, glsl::CEIL, &a),
            Op::FTrunc => self.ext(ty, glsl::TRUNC, &a),
            Op::FRoundEven => self.ext(ty, glsl::ROUND_EVEN, &a),
            Op::FSqrt => self.ext(ty, glsl::SQRT, &a),
            Op::FRsqrt => self.ext(ty, glsl::INVERSE_SQRT, &a),
            Op::FExp2 => self.ext(ty, glsl::EXP2, &a),
            Op::FLog2 => self.ext(ty, glsl::LOG2, &a),
            Op::FSin => self.ext(ty, glsl::SIN, &a),
            Op::FCos => self.ext(ty, glsl::COS, &a),
            Op::FRcp => {
                let one = self.fconst(rt, 1.0);
                self.fop(S::FDiv, ty, &[one, a[0]])
            }
            Op::Bitcast => match (at[0], rt) {
                (Type::U32, Type::F16) => {
                    let h = self.op(S::UConvert, self.u16t, &a);
                    self.op(S::Bitcast, ty, &[h])
                }
                (Type::F16, Type::U32) => {
                    let h = self.op(S::Bitcast, self.u16t, &a);
                    self.op(S::UConvert, ty, &[h])
                }
                _ => self.op(S::Bitcast, ty, &a),
            },
            Op::UToF(rnd) => self.int_to_float(false, rnd, at[0], rt, a[0]),
            Op::SToF(rnd) => self.int_to_float(true, rnd, at[0], rt, a[0]),
            Op::FToS => {
                let st = signed(self, rt);
                let s = self.op(S::ConvertFToS, st, &a);
                self.op(S::Bitcast, ty, &[s])
            }
            Op::FConvert(rnd) => self.fconvert(at[0], rt, rnd, a[0]),
            Op::UConvert => {
                if at[0] == rt {
                    a[0]
                } else {
                    self.op(S::UConvert, ty, &a)
                }
            }
            Op::SConvert => {
                let st = signed(self, rt);
                let si = signed(self, at[0]);
                let x = self.op(S::Bitcast, si, &a);
                let s = self.op(S::SConvert, st, &[x]);
                self.op(S::Bitcast, ty, &[s])
            }
            Op::Pack64 => self.pack64(a[0], a[1]),
            Op::Hi32 => self.split64(a[0]).1,
            Op::Ftz => self.ftz32(a[0]),
            Op::FSat => self.fsat(rt, a[0]),
            Op::FMinMaxZ(min) => self.fminmax_z(rt, min, a[0], a[1]),
            // `E::inst` emits these.
            Op::Load(..) | Op::Store(..) | Op::LoadConst(_) => unreachable!("E::inst's"),
            Op::Atomic(space, aop, w) => self.atomic(space, aop, w, a[0], a[1])?,
            Op::AtomicCas(Space::Storage(s), w) => self.sbuf_cas(s, w, a[0], a[1], a[2]),
            Op::AtomicCas(space, w) => {
                let t = if w == Width::B64 {
                    Type::U64
                } else {
                    Type::U32
                };
                if space == Space::Shared && w == Width::B64 {
                    let r = self.shared_cas64(a[0], a[1], a[2]);
                    self.vals[v.index()] = r;
                    return Ok(());
                }
                if space != Space::Global && w == Width::B64 {
                    return Err(Error::Unsupported("64-bit local compare-and-swap".into()));
                }
                let tyw = self.ty(t);
                let (p, scope) = self.atomic_ptr(space, w, a[0]);
                let sc = self.u32c(scope);
                let sem = self.u32c(0);
                self.op(
                    S::AtomicCompareExchange,
                    tyw,
                    &[p, sc, sem, sem, a[2], a[1]],
                )
            }
            Op::Barrier | Op::WarpSync if self.sync_mode => 0,
            Op::WarpSync => {
                self.wg_barrier();
                0
            }
            Op::Mma(m) => self.mma_coop(f, &inst, m)?,
            Op::Barrier => {
                let wg = self.u32c(SCOPE_WORKGROUP);
                // The control kernel's outputs are in storage buffers (UniformMemory).
                let sem = if self.opts.form == crate::lower::Form::Lowered(Pass::TessControlKernel)
                {
                    self.u32c(0x148)
                } else {
                    self.u32c(0x108)
                };
                self.b.control_barrier(wg, wg, sem).expect("block");
                0
            }
            Op::MemBarrier(dev) => {
                let sc = self.u32c(if dev { SCOPE_DEVICE } else { SCOPE_WORKGROUP });
                let sem = self.u32c(0x8 | 0x40 | 0x100);
                self.b.memory_barrier(sc, sem).expect("block");
                0
            }
            Op::BarrierPopc => {
                if self.sync_mode {
                    let var = self.popc_value_var();
                    self.load(Type::U32, var)
                } else {
                    let var = self.bar_pred_var();
                    let p = self.load(Type::Bool, var);
                    self.barrier_popc(p)
                }
            }
            Op::SetBarPred => {
                let var = self.bar_pred_var();
                self.store(var, a[0]);
                0
            }
            Op::SetBarId => {
                self.named_set_id(a[0], a[1]);
                0
            }
            Op::BarrierArrive => {
                self.named_arrive(a[0], a[1]);
                0
            }
            Op::GetBarResult => {
                let var = self.bar_result_var();
                self.load(Type::U32, var)
            }
            Op::SetBarResult => {
                let var = self.bar_result_var();
                self.store(var, a[0]);
                0
            }
            Op::SysVal(s) => self.sysval(s),
            Op::Shfl(m) => self.shfl(m, a[0], a[1], a[2]).0,
            Op::ShflValid(m) => {
                let u = self.u32c(0);
                self.shfl(m, u, a[1], a[2]).1
            }
            Op::Vote(m) => self.vote(m, a[0]),
            Op::WarpReduce(o) => self.warp_reduce(o, a[0])?,
            Op::MatchAny => self.match_any(a),
            // `E::inst` emits these (`gfx::is_gfx_op`).
            Op::AttrLoad { .. }
            | Op::AttrStore { .. }
            | Op::Interp(..)
            | Op::FragOut(_)
            | Op::EmitVertex
            | Op::EndPrimitive
            | Op::Demote
            | Op::GfxSys(_)
            | Op::Tuple
            | Op::Tex(_)
            | Op::Extract(_)
            | Op::ImageLoad(_)
            | Op::ImageStore(_)
            | Op::ImageAtomic(..) => unreachable!("E::inst's"),
        };
        self.vals[v.index()] = r;
        Ok(())
    }

    pub fn fconst(&mut self, t: Type, x: f64) -> Word {
        match t {
            Type::F64 => {
                let ty = self.ty(Type::F64);
                self.cw(ty, Type::F64, x.to_bits())
            }
            Type::F16 => {
                let c = self.c(Type::F32, (x as f32).to_bits() as u64);
                let f32t = self.ty(Type::F32);
                let fc = self.op(spirv::Op::Bitcast, f32t, &[c]);
                let h = self.ty(Type::F16);
                self.op(spirv::Op::FConvert, h, &[fc])
            }
            _ => {
                let ty = self.ty(Type::F32);
                self.cw(ty, Type::F32, (x as f32).to_bits() as u64)
            }
        }
    }
}

/// The SPIR-V instruction that is IR operation `op` with result type `rt`, one instruction
/// of that type on the operands as they are, when it is one for the operands' types too
/// ([`E::direct_here`]; `E::inst_general` emits these operations the same way).
// Always inlined: a table lookup in `E::inst`'s fast path, not a call.
#[inline(always)]
fn direct_op(op: Op, rt: Type) -> Option<spirv::Op> {
    use spirv::Op as S;
    let bool_result = rt == Type::Bool;
    Some(match op {
        Op::IAdd => S::IAdd,
        Op::ISub => S::ISub,
        Op::IMul => S::IMul,
        Op::INeg => S::SNegate,
        Op::And if bool_result => S::LogicalAnd,
        Op::And => S::BitwiseAnd,
        Op::Or if bool_result => S::LogicalOr,
        Op::Or => S::BitwiseOr,
        Op::Xor if bool_result => S::LogicalNotEqual,
        Op::Xor => S::BitwiseXor,
        Op::Not if bool_result => S::LogicalNot,
        Op::Not => S::Not,
        Op::Shl => S::ShiftLeftLogical,
        Op::LShr => S::ShiftRightLogical,
        Op::AShr => S::ShiftRightArithmetic,
        Op::BfeU => S::BitFieldUExtract,
        Op::BfeS => S::BitFieldSExtract,
        Op::Bfi => S::BitFieldInsert,
        Op::Popc => S::BitCount,
        Op::Brev => S::BitReverse,
        Op::IEq => S::IEqual,
        Op::INe => S::INotEqual,
        Op::SLt => S::SLessThan,
        Op::SLe => S::SLessThanEqual,
        Op::SGt => S::SGreaterThan,
        Op::SGe => S::SGreaterThanEqual,
        Op::ULt => S::ULessThan,
        Op::ULe => S::ULessThanEqual,
        Op::UGt => S::UGreaterThan,
        Op::UGe => S::UGreaterThanEqual,
        Op::Select => S::Select,
        Op::FNeg => S::FNegate,
        Op::FOEq => S::FOrdEqual,
        Op::FONe => S::FOrdNotEqual,
        Op::FOLt => S::FOrdLessThan,
        Op::FOLe => S::FOrdLessThanEqual,
        Op::FOGt => S::FOrdGreaterThan,
        Op::FOGe => S::FOrdGreaterThanEqual,
        Op::FUEq => S::FUnordEqual,
        Op::FUNe => S::FUnordNotEqual,
        Op::FULt => S::FUnordLessThan,
        Op::FULe => S::FUnordLessThanEqual,
        Op::FUGt => S::FUnordGreaterThan,
        Op::FUGe => S::FUnordGreaterThanEqual,
        Op::IsNan => S::IsNan,
        Op::IsInf => S::IsInf,
        Op::FToU => S::ConvertFToU,
        Op::Bitcast if rt != Type::F16 => S::Bitcast,
        _ => return None,
    })
}

/// An emitter's tables that keep their room from one module to the next on a thread: what
/// [`E::new`] would otherwise allocate (and zero) for every module.
#[derive(Default)]
struct Spare {
    consts: HashMap<(Word, u64), Word, Fast>,
    vals: Vec<Word>,
    rtys: Vec<Word>,
    bitcast_src: Vec<Word>,
}

thread_local! {
    /// The tables of this thread's last emitter ([`E`]'s `Drop`).
    static SPARE: std::cell::Cell<Option<Spare>> = const { std::cell::Cell::new(None) };
}

impl Drop for E {
    /// Hands the tables to this thread's next [`E::new`].
    fn drop(&mut self) {
        let mut consts = std::mem::take(&mut self.consts);
        consts.clear();
        SPARE.set(Some(Spare {
            consts,
            vals: std::mem::take(&mut self.vals),
            rtys: self.rtys.take_memory(),
            bitcast_src: self.bitcast_src.take_memory(),
        }));
    }
}

impl E {
    /// An emitter for a module made from function `f` (its instruction count sizes the
    /// tables), with the GLSL.std.450 import and the u8 / u16 types declared: the start of
    /// every module [`emit_planned`] writes, and of the soft-f64 routines' templates
    /// (`soft/template.rs`, from an empty function).
    pub(crate) fn new(
        f: &dmsh_ir::Function,
        local_size: [u32; 3],
        stage: dmsh_ir::Stage,
        gfxcfg: Option<dmsh_ir::lift::Gfx>,
        opts: &Options,
    ) -> E {
        let mut b = Builder::new();
        // About 5 words per IR instruction on average, but the soft-f64 routines and helpers
        // add much to some shaders: room enough that the code is seldom moved as it grows.
        b.reserve_code(f.insts.len() * 16);
        let spare = SPARE.take().unwrap_or_default();
        let mut consts = spare.consts;
        consts.reserve(256);
        let mut vals = spare.vals;
        vals.clear();
        vals.resize(f.insts.len(), 0);
        b.set_version(1, 5);
        let mut e = E {
            glsl_set: 0,
            types: [0; 7],
            u8t: 0,
            u16t: 0,
            consts,
            small_u32: [0; SMALL],
            tcache: Default::default(),
            vals,
            cross: cross::Cross::new(f),
            state: Vec::new(),
            stack: None,
            bar_result: None,
            cas_lock: None,
            bar_pred: None,
            popc_value: None,
            named: None,
            sync_mode: false,
            popc_counter: None,
            local: None,
            shared: None,
            banks: Vec::new(),
            builtins: HashMap::default(),
            interface: Vec::with_capacity(32),
            uses_psb: false,
            warp_ops: false,
            warp_arith: false,
            coop: None,
            coop_used: false,
            local_size,
            ls_spec: None,
            fn_vars: Vec::new(),
            entry_block: 0,
            stage,
            gfxcfg,
            gx: Default::default(),
            tex_vars: HashMap::default(),
            img_vars: HashMap::default(),
            sb: Default::default(),
            rtys: ids::IdMap::reuse(spare.rtys, f.insts.len()),
            bitcast_src: ids::IdMap::reuse(spare.bitcast_src, 0),
            slots: Default::default(),
            lw: Default::default(),
            soft: Default::default(),
            helpers: Default::default(),
            entry_code: Vec::new(),
            opts: *opts,
            b,
        };
        e.glsl_set = e.b.ext_inst_import("GLSL.std.450");
        e.u8t = e.b.type_int(8, 0);
        e.u16t = e.b.type_int(16, 0);
        e
    }
}

/// Emits a lifted shader whose passes ran, following the pipeline's control-flow plan: SPIR-V
/// words plus reflection (Metal indices are assigned after, by the pipeline).
pub(crate) fn emit_planned(
    sh: &dmsh_ir::Shader,
    plan: &crate::pipeline::Plan,
    opts: &Options,
) -> Result<Output, Error> {
    let f = &sh.func;
    // The final draw of a lowered geometry pipeline is a vertex function.
    let stage = match opts.form {
        crate::lower::Form::Lowered(Pass::GeometryDraw)
        | crate::lower::Form::Lowered(Pass::TessEvalDraw) => dmsh_ir::Stage::Vertex,
        _ => sh.stage,
    };
    let mut e = E::new(f, sh.local_size, stage, sh.gfx.clone(), opts);
    let void = e.ty(Type::Void);
    let fnty = e.b.type_function(void, []);
    let main = berr(e.b.begin_function(void, None, spirv::FunctionControl::NONE, fnty))?;
    berr(e.b.begin_block(None))?;
    e.entry_block = e.b.selected_block().unwrap_or(0);
    let u = e.ty(Type::U32);
    if sh.shared_bytes > 0 {
        let n = sh.shared_bytes.div_ceil(4);
        let nc = e.u32c(n);
        let at = e.arr(u, nc);
        let pty = e.ptr(StorageClass::Workgroup, at);
        let var = e.global_var(pty, StorageClass::Workgroup, None);
        e.interface.push(var);
        e.shared = Some((var, n));
    }
    if sh.local_bytes > 0 {
        let n = sh.local_bytes.div_ceil(4);
        let nc = e.u32c(n);
        let at = e.arr(u, nc);
        let var = e.fn_var(at, None);
        e.local = Some((var, n));
    }
    // Structured control flow when the pipeline's plan has a tree (the structurizer
    // succeeded and no barrier follows a divergent exit); a dispatcher loop otherwise.
    let tree = &plan.tree;
    let bar_split = plan.barrier_split;
    let dispatcher = plan.dispatcher(f);
    // One scan of the live instructions for what the module header, the prologue and the
    // reflection need.
    let (mut any_popc, mut any_cas64, mut uses_fadd) = (false, false, false);
    let (mut any_sync, mut any_warp_sync, mut any_mma, mut int64_atomics) =
        (false, false, false, false);
    let mut const_banks = [false; 256];
    // The constant-bank reads, in block order (for the reflection's `const_reads`).
    let mut const_loads: Vec<Value> = Vec::new();
    // The texture and image slots' declarations (`emit/slots.rs`), the storage buffers' views.
    let mut slots = slots::Finder::default();
    // The same scan notes the values that cross blocks (`emit/cross.rs`) and gives the
    // module-level constants their ids, so that every block can use them.
    let crossing = e.cross.scanning();
    // Two loops, not a flat map: its per-item bookkeeping cost as much as the match.
    for (bi, blk) in f.blocks.iter().enumerate() {
        if crossing {
            e.cross.enter_block();
        }
        for &v in &blk.insts {
            let inst = f.inst(v);
            if crossing {
                e.cross.note_inst(f, v, inst);
            }
            let op = &inst.op;
            match *op {
                // The module-level constants (`cross::is_module_constant`).
                Op::Const(bits) if inst.ty != Type::F16 => e.module_constant(v, inst.ty, bits),
                Op::Undef => e.module_constant(v, inst.ty, 0),
                Op::BarrierPopc => {
                    any_popc = true;
                    any_sync = true;
                }
                Op::Barrier => any_sync = true,
                Op::WarpSync => {
                    any_warp_sync = true;
                    any_sync = true;
                }
                Op::Mma(_) => any_mma = true,
                // Memory accesses: the storage buffers' views (`sbuf_note`), and what they need.
                Op::AtomicCas(space, w) => {
                    e.sbuf_note(op);
                    if w == Width::B64 {
                        any_cas64 |= space == Space::Shared;
                        int64_atomics = true;
                    }
                }
                Op::Atomic(_, aop, w) => {
                    e.sbuf_note(op);
                    uses_fadd |= aop == AtomOp::FAdd;
                    int64_atomics |= w == Width::B64;
                }
                Op::Load(..) | Op::Store(..) => e.sbuf_note(op),
                Op::LoadConst(b) => {
                    const_banks[b as usize] = true;
                    const_loads.push(v);
                }
                Op::Tex(_) | Op::ImageLoad(_) | Op::ImageStore(_) | Op::ImageAtomic(..) => {
                    slots.note(op)
                }
                _ => {}
            }
        }
        if crossing {
            e.cross.leave_block(f, dmsh_ir::BlockId(bi as u32));
        }
    }
    e.cross.finish();
    e.slots = slots.finish(sh.gfx.as_ref());
    // `Function::uses_int64_atomics`, from the scan above.
    debug_assert_eq!(int64_atomics, f.uses_int64_atomics());
    e.sync_mode = dispatcher && any_sync;
    if !e.sync_mode && any_popc {
        e.popc_reset();
        e.wg_barrier();
    }
    if any_cas64 {
        // Invocation 0 clears the lock of 64-bit shared CAS before anyone takes it.
        let lock = e.cas_lock();
        let bo = e.ty(Type::Bool);
        let li = e.lane_index();
        let z = e.u32c(0);
        let first = e.op(spirv::Op::IEqual, bo, &[li, z]);
        let all = e.u32c(!0);
        let m = e.select(Type::U32, first, z, all);
        let sc = e.u32c(SCOPE_WORKGROUP);
        let sem = e.u32c(0);
        e.op(spirv::Op::AtomicAnd, u, &[lock, sc, sem, m]);
        e.wg_barrier();
    }
    e.sbuf_ubo_table(f);
    e.gfx_prologue(f)?;
    let pc_var = if tree.is_some() { 0 } else { e.fn_var(u, None) };
    let case_of = |i: usize| -> u32 {
        match f.blocks[i].addr {
            Some(a) if f.blocks.iter().position(|b| b.addr == Some(a)) == Some(i) => a,
            _ => 0x8000_0000 | i as u32,
        }
    };
    if opts.form == crate::lower::Form::Lowered(Pass::GeometryDraw) {
        e.draw_body(f)?;
        berr(e.b.ret())?;
    } else if let Some(t) = tree {
        structured::emit_tree(&mut e, sh, f, t)?;
    } else if !dispatcher {
        emit_block(&mut e, sh, f, 0, pc_var, &case_of)?;
        berr(e.b.ret())?;
    } else if e.sync_mode {
        emit_sync_dispatcher(&mut e, sh, f, pc_var, &case_of)?;
    } else {
        let head = e.b.id();
        let sw = e.b.id();
        let cont = e.b.id();
        let swm = e.b.id();
        let exit = e.b.id();
        let def = e.b.id();
        let c0 = e.u32c(case_of(0));
        e.store(pc_var, c0);
        berr(e.b.branch(head))?;
        berr(e.b.begin_block(Some(head)))?;
        berr(e.b.loop_merge(exit, cont, spirv::LoopControl::NONE, []))?;
        berr(e.b.branch(sw))?;
        berr(e.b.begin_block(Some(sw)))?;
        let pcv = e.load(Type::U32, pc_var);
        berr(e.b.selection_merge(swm, spirv::SelectionControl::NONE))?;
        let labels: Vec<Word> = (0..f.blocks.len()).map(|_| e.b.id()).collect();
        let targets: Vec<(Operand, Word)> = (0..f.blocks.len())
            .map(|i| (Operand::LiteralBit32(case_of(i)), labels[i]))
            .collect();
        berr(e.b.switch(pcv, def, targets))?;
        for (i, &lab) in labels.iter().enumerate() {
            berr(e.b.begin_block(Some(lab)))?;
            emit_block(&mut e, sh, f, i, pc_var, &case_of)?;
            berr(e.b.branch(swm))?;
        }
        berr(e.b.begin_block(Some(def)))?;
        let ex = e.u32c(EXIT_PC);
        e.store(pc_var, ex);
        berr(e.b.branch(swm))?;
        berr(e.b.begin_block(Some(swm)))?;
        berr(e.b.branch(cont))?;
        berr(e.b.begin_block(Some(cont)))?;
        let pcv = e.load(Type::U32, pc_var);
        let bo = e.ty(Type::Bool);
        let done = e.op(spirv::Op::IEqual, bo, &[pcv, ex]);
        berr(e.b.branch_conditional(done, exit, head, []))?;
        berr(e.b.begin_block(Some(exit)))?;
        berr(e.b.ret())?;
    }
    berr(e.b.end_function())?;
    // Function variables go to the top of the entry block.
    {
        let vars = std::mem::take(&mut e.fn_vars);
        let mut w = Vec::with_capacity(vars.len() * 5);
        for (id, pty, init) in vars {
            let sc = StorageClass::Function as u32;
            match init {
                Some(init) => w.extend_from_slice(&[
                    (5 << 16) | spirv::Op::Variable as u32,
                    pty,
                    id,
                    sc,
                    init,
                ]),
                None => w.extend_from_slice(&[(4 << 16) | spirv::Op::Variable as u32, pty, id, sc]),
            }
        }
        w.extend_from_slice(&e.entry_code);
        e.b.insert_at_entry(&w);
    }
    // The helpers and the soft-f64 routines the entry point calls (and those they call),
    // after it (its variables are placed first: `insert_at_entry` places them in the last
    // function begun).
    e.define_helpers()?;
    e.soft_emit_functions()?;
    // Module header: capabilities, memory model, entry point.
    let caps = [
        Capability::Shader,
        Capability::Int64,
        Capability::Int16,
        Capability::Int8,
        Capability::Float64,
        Capability::Float16,
        Capability::GroupNonUniform,
        Capability::GroupNonUniformVote,
        Capability::GroupNonUniformBallot,
        Capability::GroupNonUniformShuffle,
    ];
    for c in caps {
        // Soft f64: no 64-bit float type, so no `Float64`.
        if c != Capability::Float64 || !e.soft_f64() {
            e.b.capability(c);
        }
    }
    if e.uses_psb {
        e.b.capability(Capability::PhysicalStorageBufferAddresses);
        e.b.capability(Capability::StorageBuffer8BitAccess);
        e.b.capability(Capability::StorageBuffer16BitAccess);
        e.b.capability(Capability::Int64Atomics);
    }
    if e.warp_arith {
        e.b.capability(Capability::GroupNonUniformArithmetic);
    }
    if e.coop_used {
        e.b.capability(Capability::CooperativeMatrixKHR);
        e.b.capability(Capability::VulkanMemoryModel);
        e.b.capability(Capability::VulkanMemoryModelDeviceScope);
        e.b.extension("SPV_KHR_cooperative_matrix");
    }
    if uses_fadd {
        e.b.capability(Capability::AtomicFloat32AddEXT);
        e.b.extension("SPV_EXT_shader_atomic_float_add");
    }
    e.gfx_caps();
    e.sbuf_caps();
    let am = if e.uses_psb {
        spirv::AddressingModel::PhysicalStorageBuffer64
    } else {
        spirv::AddressingModel::Logical
    };
    // SPV_KHR_cooperative_matrix requires the Vulkan memory model.
    let mm = if e.coop_used {
        spirv::MemoryModel::Vulkan
    } else {
        spirv::MemoryModel::GLSL450
    };
    e.b.memory_model(am, mm);
    let iface = e.interface.clone();
    let ls = sh.local_size.map(|x| x.max(1));
    let local_size_spec = e.variable_size();
    if local_size_spec {
        e.ls_spec();
    }
    let kernel = matches!(
        opts.form,
        crate::lower::Form::Lowered(Pass::GeometryKernel)
            | crate::lower::Form::Lowered(Pass::TessControlKernel)
    );
    let ls = match e.lowering_record() {
        Some(l) if kernel => [l.local_size.max(1), 1, 1],
        _ => ls,
    };
    if sh.stage == dmsh_ir::Stage::Compute || kernel {
        e.b.entry_point(spirv::ExecutionModel::GLCompute, main, "main", iface);
        e.b.execution_mode(main, spirv::ExecutionMode::LocalSize, ls);
    } else {
        let model = e.gfx_entry(main);
        e.b.entry_point(model, main, "main", iface);
    }
    // Keep −0, ∞ and NaN exactly (Maxwell does; drivers may not unless asked).
    e.b.capability(Capability::SignedZeroInfNanPreserve);
    let widths: &[u32] = if e.soft_f64() {
        &[16, 32]
    } else {
        &[16, 32, 64]
    };
    for &w in widths {
        e.b.execution_mode(main, spirv::ExecutionMode::SignedZeroInfNanPreserve, [w]);
    }
    let uses_psb = e.uses_psb;
    let warp_ops = e.warp_ops;
    let words = std::mem::take(&mut e.b).assemble_live();
    let mut resources = Vec::new();
    let reads = dmsh_ir::const_reads::const_reads_of(f, const_loads);
    let c1 = dmsh_ir::const_reads::c1_check(sh, &reads);
    for bank in &sh.banks {
        if let BankSource::Buffer { guest_offset, size } = bank.source {
            if const_banks[bank.bank as usize] {
                let r = reads.get(&bank.bank).cloned().unwrap_or_default();
                resources.push(Resource {
                    kind: "cbuf".into(),
                    bank: bank.bank as u32,
                    guest_offset,
                    size: Some(size as u64),
                    set: 0,
                    binding: Some(bank.bank as u32),
                    metal_index: 0,
                    count: 0,
                    separate: false,
                    metal_sampler: None,
                    ubo: None,
                    offset: None,
                    reads: r.ranges,
                    reads_dynamic: r.dynamic,
                    ..Default::default()
                });
            }
        }
    }
    resources.extend(e.sbuf_resources());
    resources.extend(e.lower_resources());
    if opts.form == crate::lower::Form::Lowered(Pass::GeometryDraw) {
        // The draw reads only the kernel's records (the shader's own resources stay with the
        // kernel).
        resources.retain(|r| r.kind == dmsh_reflect::LOWERED_BUFFER);
    }
    let first_ubo = sh
        .gfx
        .as_ref()
        .map(|g| g.layout.first_ubo_bank)
        .unwrap_or(3) as u32;
    for (&(slot, alias), decl) in &e.gx.textures {
        let (var, kind) = (decl.var, decl.kind);
        if slot == dmsh_ir::TEX_DYN {
            // tex_dyn_slots: texture array (element = handle & 0xfffff) and sampler array
            // (element = handle >> 20), docs/graphics.md.
            let n = sh
                .gfx
                .as_ref()
                .map(|g| g.layout.tex_dyn_count() as u32)
                .unwrap_or(32);
            // The sampler array exists only when something samples (TXQ needs none).
            let sampled = e.tex_vars.keys().any(|k| k.0 == dmsh_ir::TEX_DYN | 1);
            let arrays = [("tex_dyn", 64), ("samp_dyn", 96)];
            for &(kind, base) in &arrays[..1 + sampled as usize] {
                resources.push(Resource {
                    kind: kind.into(),
                    bank: 0,
                    guest_offset: 0,
                    size: Some(0),
                    set: 0,
                    binding: Some(base + slot as u32),
                    metal_index: 0,
                    count: n,
                    separate: false,
                    metal_sampler: None,
                    ubo: None,
                    offset: None,
                    ..Default::default()
                });
            }
            continue;
        }
        // tex_ubo: the handle is a word of uniform buffer `bank` (docs/graphics.md); unless
        // ORed with another sampler, its sampler ID (high 12 bits) is the samp_ubo half of
        // the same combined binding.
        let ubo = |w: u16| (first_ubo + ((w >> 11) & 0xf) as u32, 4 * (w & 0x7ff) as u32);
        let binding = slots::alias_binding(64 + slot as u32, alias);
        let res = |kind: &str, (bank, guest_offset)| Resource {
            kind: kind.into(),
            bank,
            guest_offset,
            size: Some(0),
            set: 0,
            binding: Some(binding),
            metal_index: 0,
            count: 0,
            separate: false,
            metal_sampler: None,
            ubo: None,
            offset: None,
            ..Default::default()
        };
        let mut samp = e.gx.tex_samp.get(&slot).copied().unwrap_or(0);
        let view = |mut r: Resource| {
            r.view = decl.view.clone();
            r
        };
        if slot >= dmsh_ir::TEX_UBO {
            resources.push(view(res("tex_ubo", ubo(slot))));
            if samp == 0 {
                samp = slot;
            }
        } else {
            resources.push(view(res(kind, (slot as u32, 0))));
            // A run-time indexed sampler array: element k is texture slot `slot` + k.
            let count = e
                .tex_vars
                .iter()
                .find(|(k, v)| k.0 == slot && v.0 == var)
                .map_or(0, |(k, _)| k.1 as u32);
            if let Some(r) = resources.last_mut() {
                r.count = count;
            }
        }
        if e.gx.sep_vars.contains(&var) {
            // An image combined with separate samplers at its uses (the sampler entries below).
            if let Some(r) = resources.last_mut() {
                r.separate = true;
            }
        }
        if samp & dmsh_ir::SAMP_UBO != 0 {
            resources.push(res("samp_ubo", ubo(samp)));
        } else if samp & dmsh_ir::SAMP_ID != 0 {
            resources.push(res("samp_id", ((samp & 0xfff) as u32, 0)));
        }
    }
    for &n in e.gx.samplers.keys() {
        resources.push(Resource {
            kind: "sampler".into(),
            bank: n as u32,
            guest_offset: 0,
            size: Some(0),
            set: 0,
            binding: Some(96 + n as u32),
            metal_index: 0,
            count: 0,
            separate: false,
            metal_sampler: None,
            ubo: None,
            offset: None,
            ..Default::default()
        });
    }
    if let Some(s) = e.gx.samp_conflicts.first() {
        return Err(Error::Unsupported(format!(
            "texture slot {s:#x} is used with two different sampler sources (one combined \
             binding per slot)"
        )));
    }
    for (&(slot, alias), view) in &e.gx.images {
        resources.push(Resource {
            kind: "image".into(),
            bank: slot as u32,
            guest_offset: 0,
            size: Some(0),
            set: 0,
            binding: Some(slots::alias_binding(128 + slot as u32, alias)),
            view: view.clone(),
            metal_index: 0,
            count: 0,
            separate: false,
            metal_sampler: None,
            ubo: None,
            offset: None,
            ..Default::default()
        });
    }
    let io = |m: &std::collections::BTreeMap<u32, dmsh_ir::lift::CompType>| {
        m.iter()
            .map(|(&location, ct)| crate::reflect::IoVar {
                location,
                component_type: ct.name().into(),
                ..Default::default()
            })
            .collect::<Vec<_>>()
    };
    // Metal argument indices are the pipeline's next step (`metal_indices`).
    let reflection = Reflection {
        metal: Default::default(),
        inputs: io(&e.gx.inputs),
        outputs: io(&e.gx.outputs),
        geometry_input: e.gx.gs_input.map(|(p, src)| crate::reflect::GeometryInput {
            primitive: p.name().into(),
            vertices: p.vertices(),
            source: src.name().into(),
        }),
        tessellation: match (sh.stage, e.gfxcfg.as_ref()) {
            (dmsh_ir::Stage::TessEval, Some(g)) => {
                let (domain, spacing, output) = dmsh_ir::lift::pipeline_state::tess::names(
                    g.tess_param,
                )
                .unwrap_or(("triangles", "equal", "triangles_ccw"));
                Some(crate::reflect::Tessellation {
                    domain: domain.into(),
                    spacing: spacing.into(),
                    output: output.into(),
                    source: g.tess_source.name().into(),
                })
            }
            _ => None,
        },
        chain: None,
        metal_entry_points: Vec::new(),
        metal_entry_z: None,
        fixups: Vec::new(),
        metal_direct: opts.form != crate::lower::Form::Direct
            || !matches!(
                e.stage,
                dmsh_ir::Stage::Geometry | dmsh_ir::Stage::TessControl | dmsh_ir::Stage::TessEval
            ),
        lowering: e.lowering_record(),
        version: Default::default(),
        stage: if kernel { "compute" } else { e.stage.name() }.into(),
        entry: "main".into(),
        local_size: ls,
        local_size_spec,
        shared_bytes: sh.shared_bytes,
        local_bytes: sh.local_bytes,
        uses_global_addresses: uses_psb,
        fma_mode: opts.fma.name().into(),
        f64_mode: match opts.f64 {
            crate::F64Mode::Native => String::new(),
            crate::F64Mode::Soft => "soft".into(),
        },
        abi: sh.abi.into(),
        dispatcher,
        control_flow: if dispatcher {
            "dispatcher"
        } else {
            "structured"
        }
        .into(),
        dispatcher_reason: match (dispatcher, bar_split) {
            (false, _) => None,
            (true, true) if f.named_barriers() => Some("named barriers".into()),
            (true, true) => Some("barrier after divergent exit".into()),
            (true, false) => Some("unstructurable".into()),
        },
        gotos: tree.as_ref().map_or(0, |t| t.gotos),
        blocks: f.blocks.len(),
        guest_state: if f.ssa { "ssa" } else { "variables" }.into(),
        warp_ops,
        warp_emulated: any_warp_sync,
        tensor: f.tensor_ops.then(|| {
            if any_mma {
                crate::TensorMode::CooperativeMatrix
            } else {
                crate::TensorMode::SubgroupEmulation
            }
            .name()
            .into()
        }),
        int64_atomics,
        c1: c1.map(|c| crate::reflect::C1Reads {
            dynamic: c.status.name().into(),
            end: c.end,
            span: c.span,
        }),
        resources,
    };
    Ok(Output { words, reflection })
}

/// The barrier-synchronised dispatcher: every invocation runs the loop the same number of
/// times (until all have exited), and each iteration ends in workgroup barriers where the
/// invocations count how many wait at a barrier block or have exited. An invocation whose
/// block starts with a barrier waits until all invocations wait or have exited, then passes
/// it together with the others. So barriers stay in uniform control flow whatever the guest
/// control flow is (`BAR.SYNC` inside divergent code, as the hardware allows). A block that
/// starts with a `WarpSync` (the workgroup-memory warp emulation, dmsh-ir's `warp_shared`) is
/// a wait of the same kind, released first: when everybody waits, only the invocations at
/// warp waits pass (if any), and guest barriers pass once nobody waits at a warp operation.
fn emit_sync_dispatcher(
    e: &mut E,
    sh: &dmsh_ir::Shader,
    f: &Function,
    pc_var: Word,
    case_of: &dyn Fn(usize) -> u32,
) -> Result<(), Error> {
    let u = e.ty(Type::U32);
    let bo = e.ty(Type::Bool);
    // A barrier starts its block, but the `ssa` pass puts the block's phis in front of it.
    let first_op = |i: usize| {
        f.blocks[i]
            .insts
            .iter()
            .map(|&v| f.inst(v).op)
            .find(|op| !matches!(op, Op::Phi(_)))
    };
    let bar_cases: Vec<u32> = (0..f.blocks.len())
        .filter(|&i| {
            matches!(
                first_op(i),
                Some(Op::Barrier | Op::BarrierPopc | Op::WarpSync)
            )
        })
        .map(case_of)
        .collect();
    // Warp waits (the workgroup-memory warp emulation) are released before guest barriers.
    let warp_cases: Vec<u32> = (0..f.blocks.len())
        .filter(|&i| first_op(i) == Some(Op::WarpSync))
        .map(case_of)
        .collect();
    let popc_cases: Vec<u32> = (0..f.blocks.len())
        .filter(|&i| first_op(i) == Some(Op::BarrierPopc))
        .map(case_of)
        .collect();
    // Counters: [blocked, exited, popc, at a warp wait] × 2 parities.
    const NC: u32 = 4;
    let ctr = e.wg_counters(2 * NC);
    let released = e.fn_var(bo, None);
    let parity = e.fn_var(u, None);
    let sc = e.u32c(SCOPE_WORKGROUP);
    let sem0 = e.u32c(0);
    let z = e.u32c(0);
    let one = e.u32c(1);
    let all_ones = e.u32c(!0);
    let fls = e.c(Type::Bool, 0);
    // Prologue (uniform): invocation 0 zeroes the counters.
    let li = e.lane_index();
    let first = e.op(spirv::Op::IEqual, bo, &[li, z]);
    let zero_mask = e.select(Type::U32, first, z, all_ones);
    for k in 0..2 * NC {
        let kc = e.u32c(k);
        let p = e.counter_ptr(ctr, kc);
        e.op(spirv::Op::AtomicAnd, u, &[p, sc, sem0, zero_mask]);
    }
    let nm = f.named_barriers().then(|| e.named_init(zero_mask));
    e.named = nm;
    e.wg_barrier();
    let c0 = e.u32c(case_of(0));
    e.store(pc_var, c0);
    e.store(released, fls);
    e.store(parity, z);
    let head = e.b.id();
    let body = e.b.id();
    let sw = e.b.id();
    let swm = e.b.id();
    let after = e.b.id();
    let cont = e.b.id();
    let exit = e.b.id();
    let def = e.b.id();
    berr(e.b.branch(head))?;
    berr(e.b.begin_block(Some(head)))?;
    berr(e.b.loop_merge(exit, cont, spirv::LoopControl::NONE, []))?;
    berr(e.b.branch(body))?;
    berr(e.b.begin_block(Some(body)))?;
    let pcv = e.load(Type::U32, pc_var);
    let ex = e.u32c(EXIT_PC);
    let is_exit = e.op(spirv::Op::IEqual, bo, &[pcv, ex]);
    let is_bar = e.pc_in(pcv, &bar_cases);
    let rel = e.load(Type::Bool, released);
    let nrel = e.op(spirv::Op::LogicalNot, bo, &[rel]);
    let waits = e.op(spirv::Op::LogicalAnd, bo, &[is_bar, nrel]);
    let stop = e.op(spirv::Op::LogicalOr, bo, &[is_exit, waits]);
    let run = e.op(spirv::Op::LogicalNot, bo, &[stop]);
    berr(e.b.selection_merge(after, spirv::SelectionControl::NONE))?;
    berr(e.b.branch_conditional(run, sw, after, []))?;
    berr(e.b.begin_block(Some(sw)))?;
    berr(e.b.selection_merge(swm, spirv::SelectionControl::NONE))?;
    let labels: Vec<Word> = (0..f.blocks.len()).map(|_| e.b.id()).collect();
    let targets: Vec<(Operand, Word)> = (0..f.blocks.len())
        .map(|i| (Operand::LiteralBit32(case_of(i)), labels[i]))
        .collect();
    berr(e.b.switch(pcv, def, targets))?;
    for (i, &lab) in labels.iter().enumerate() {
        berr(e.b.begin_block(Some(lab)))?;
        emit_block(e, sh, f, i, pc_var, case_of)?;
        e.store(released, fls);
        if let Some(nm) = nm {
            e.named_ran(nm);
        }
        berr(e.b.branch(swm))?;
    }
    berr(e.b.begin_block(Some(def)))?;
    e.store(pc_var, ex);
    berr(e.b.branch(swm))?;
    berr(e.b.begin_block(Some(swm)))?;
    berr(e.b.branch(after))?;
    // Uniform part: count, synchronise, release.
    berr(e.b.begin_block(Some(after)))?;
    let pc2 = e.load(Type::U32, pc_var);
    let e2 = e.op(spirv::Op::IEqual, bo, &[pc2, ex]);
    let b2 = e.pc_in(pc2, &bar_cases);
    let p2 = e.pc_in(pc2, &popc_cases);
    let rel2 = e.load(Type::Bool, released);
    let nrel2 = e.op(spirv::Op::LogicalNot, bo, &[rel2]);
    let wait2 = e.op(spirv::Op::LogicalAnd, bo, &[b2, nrel2]);
    let blocked = e.op(spirv::Op::LogicalOr, bo, &[e2, wait2]);
    let pred = if popc_cases.is_empty() {
        fls
    } else {
        let v = e.bar_pred_var();
        e.load(Type::Bool, v)
    };
    let at_popc = e.op(spirv::Op::LogicalAnd, bo, &[p2, wait2]);
    let at_warp = if warp_cases.is_empty() {
        fls
    } else {
        let w2 = e.pc_in(pc2, &warp_cases);
        e.op(spirv::Op::LogicalAnd, bo, &[w2, wait2])
    };
    let counts_popc = e.op(spirv::Op::LogicalAnd, bo, &[at_popc, pred]);
    e.wg_barrier();
    // Named barriers: between the two barriers, a guest barrier wait (not a warp wait)
    // counts its arrival.
    let at_bar = if let Some(nm) = nm {
        let nw = e.op(spirv::Op::LogicalNot, bo, &[at_warp]);
        let at_bar = e.op(spirv::Op::LogicalAnd, bo, &[wait2, nw]);
        e.named_window(nm, first, at_bar, counts_popc)?;
        at_bar
    } else {
        fls
    };
    let par = e.load(Type::U32, parity);
    let ncw = e.u32c(NC);
    let base = e.op(spirv::Op::IMul, u, &[par, ncw]);
    let add = |e: &mut E, k: u32, c: Word| -> Word {
        let kc = e.u32c(k);
        let idx = e.op(spirv::Op::IAdd, u, &[base, kc]);
        let p = e.counter_ptr(ctr, idx);
        let v = e.select(Type::U32, c, one, z);
        e.op(spirv::Op::AtomicIAdd, u, &[p, sc, sem0, v]);
        p
    };
    let p_blocked = add(e, 0, blocked);
    let p_exited = add(e, 1, e2);
    let p_popc = add(e, 2, counts_popc);
    let p_warp = add(e, 3, at_warp);
    e.wg_barrier();
    let n_blocked = e.op(spirv::Op::AtomicLoad, u, &[p_blocked, sc, sem0]);
    let n_exited = e.op(spirv::Op::AtomicLoad, u, &[p_exited, sc, sem0]);
    let n_popc = e.op(spirv::Op::AtomicLoad, u, &[p_popc, sc, sem0]);
    let n_warp = e.op(spirv::Op::AtomicLoad, u, &[p_warp, sc, sem0]);
    // Invocation 0 zeroes the other parity's counters (last read an iteration ago).
    let other = e.op(spirv::Op::ISub, u, &[one, par]);
    let obase = e.op(spirv::Op::IMul, u, &[other, ncw]);
    for k in 0..NC {
        let kc = e.u32c(k);
        let idx = e.op(spirv::Op::IAdd, u, &[obase, kc]);
        let p = e.counter_ptr(ctr, idx);
        e.op(spirv::Op::AtomicAnd, u, &[p, sc, sem0, zero_mask]);
    }
    e.store(parity, other);
    let tot = e.ls_total();
    let all = e.op(spirv::Op::IEqual, bo, &[n_blocked, tot]);
    let done = e.op(spirv::Op::IEqual, bo, &[n_exited, tot]);
    // Everybody waits (or has exited): the warp waits go first, guest barriers once no
    // invocation waits at a warp operation.
    let no_warp = e.op(spirv::Op::IEqual, bo, &[n_warp, z]);
    let mine_now = e.op(spirv::Op::LogicalOr, bo, &[at_warp, no_warp]);
    let ready = e.op(spirv::Op::LogicalAnd, bo, &[all, wait2]);
    let (go, n_popc) = match nm {
        None => (e.op(spirv::Op::LogicalAnd, bo, &[ready, mine_now]), n_popc),
        // Named barriers: warp waits as above, a guest barrier when its phase completes.
        Some(nm) => {
            let warp_go = e.op(spirv::Op::LogicalAnd, bo, &[ready, at_warp]);
            let (bar_go, popc) = e.named_release(nm, at_bar, all, no_warp, n_exited, first);
            (e.op(spirv::Op::LogicalOr, bo, &[warp_go, bar_go]), popc)
        }
    };
    let new_rel = e.op(spirv::Op::LogicalOr, bo, &[rel2, go]);
    e.store(released, new_rel);
    if !popc_cases.is_empty() {
        let pv = e.popc_value_var();
        let old = e.load(Type::U32, pv);
        let take = e.op(spirv::Op::LogicalAnd, bo, &[go, at_popc]);
        let nv = e.select(Type::U32, take, n_popc, old);
        e.store(pv, nv);
    }
    berr(e.b.branch(cont))?;
    berr(e.b.begin_block(Some(cont)))?;
    berr(e.b.branch_conditional(done, exit, head, []))?;
    berr(e.b.begin_block(Some(exit)))?;
    berr(e.b.ret())?;
    Ok(())
}

fn emit_block(
    e: &mut E,
    sh: &dmsh_ir::Shader,
    f: &Function,
    i: usize,
    pc_var: Word,
    case_of: &dyn Fn(usize) -> u32,
) -> Result<(), Error> {
    let blk = &f.blocks[i];
    e.ir_block(sh, f, dmsh_ir::BlockId(i as u32))?;
    if blk.term == Terminator::Kill && sh.stage == dmsh_ir::Stage::Fragment {
        e.demote();
    }
    let next = match &blk.term {
        Terminator::Jump(t) => Some(e.u32c(case_of(t.index()))),
        Terminator::Branch(c, t, fl) => {
            let tc = e.u32c(case_of(t.index()));
            let fc = e.u32c(case_of(fl.index()));
            let c = e.val(*c);
            Some(e.select(Type::U32, c, tc, fc))
        }
        Terminator::Dynamic(v) => Some(e.val(*v)),
        Terminator::Switch(v, cases, d) => {
            let v = e.val(*v);
            let mut pc = e.u32c(case_of(d.index()));
            for &(k, t) in cases.iter().rev() {
                let kc = e.u32c(k);
                let bo = e.ty(Type::Bool);
                let hit = e.op(spirv::Op::IEqual, bo, &[v, kc]);
                let tc = e.u32c(case_of(t.index()));
                pc = e.select(Type::U32, hit, tc, pc);
            }
            Some(pc)
        }
        Terminator::Exit | Terminator::Kill | Terminator::Unset => Some(e.u32c(EXIT_PC)),
    };
    if let Some(n) = next {
        e.store(pc_var, n);
    }
    Ok(())
}
