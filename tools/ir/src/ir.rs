//! The IR proper: types, values, operations, blocks and functions.

use std::fmt;

/// The type of an IR value.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Type {
    /// No value (stores, barriers, state writes).
    Void,
    /// A predicate / condition.
    Bool,
    /// 32-bit integer bits (signedness lives in the operation, as in SPIR-V).
    U32,
    /// 64-bit integer bits.
    U64,
    /// IEEE binary16.
    F16,
    /// IEEE binary32.
    F32,
    /// IEEE binary64.
    F64,
}

impl Type {
    /// Size in bits (0 for `Void`, 1 for `Bool`).
    pub fn bits(self) -> u32 {
        match self {
            Type::Void => 0,
            Type::Bool => 1,
            Type::F16 => 16,
            Type::U32 | Type::F32 => 32,
            Type::U64 | Type::F64 => 64,
        }
    }
    /// Whether the type is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, Type::F16 | Type::F32 | Type::F64)
    }
}

/// A value: the index of the instruction that defines it in [`Function::insts`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Value(pub u32);

impl Value {
    /// The "no operand" marker used for unused argument slots.
    pub const NONE: Value = Value(u32::MAX);
    /// Whether this is a real value.
    #[inline]
    pub fn is_some(self) -> bool {
        self != Value::NONE
    }
    /// Whether this is the "no operand" marker.
    #[inline]
    pub fn is_none(self) -> bool {
        self == Value::NONE
    }
    /// The index into [`Function::insts`].
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%{}", self.0)
    }
}

/// A block: the index into [`Function::blocks`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct BlockId(pub u32);

impl BlockId {
    /// The index into [`Function::blocks`].
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A guest register file: where [`Reg`] indices point. Maxwell has GPRs, predicates and the
/// condition-code flags; Ampere adds uniform registers, uniform predicates and convergence
/// barriers (and drops the flags).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum RegFile {
    /// General-purpose registers R0–R254 (RZ reads as the constant 0, never a `Reg`).
    Gpr,
    /// Predicates P0–P6 (PT is the constant `true`).
    Pred,
    /// Uniform registers UR0–UR62 (URZ is 0).
    UGpr,
    /// Uniform predicates UP0–UP6 (UPT is `true`).
    UPred,
    /// Convergence-barrier registers B0–B15 (`BSSY`/`BSYNC`).
    Barrier,
    /// Condition-code flags (index: [`Flag::index`]).
    Flag,
}

impl RegFile {
    /// Every file, in state-slot order.
    pub const ALL: [RegFile; 6] = [
        RegFile::Gpr,
        RegFile::Pred,
        RegFile::UGpr,
        RegFile::UPred,
        RegFile::Barrier,
        RegFile::Flag,
    ];
    /// The first state slot of the file (slots number every register of every file; passes
    /// index tables by them). GPRs and predicates keep the slots they had before the other
    /// files existed.
    pub const fn base(self) -> usize {
        match self {
            RegFile::Gpr => 0,
            RegFile::Pred => 256,
            RegFile::UGpr => 264,
            RegFile::UPred => 328,
            RegFile::Barrier => 336,
            RegFile::Flag => 512,
        }
    }
    /// The file a state slot ([`Reg::slot`]) belongs to.
    ///
    /// ```
    /// use dmsh_ir::{Reg, RegFile};
    /// for r in [Reg::gpr(254), Reg::pred(6), Reg::ugpr(62), Reg::upred(0)] {
    ///     assert_eq!(RegFile::of_slot(r.slot()), r.file);
    /// }
    /// ```
    pub fn of_slot(slot: usize) -> RegFile {
        let mut f = RegFile::Gpr;
        for r in RegFile::ALL {
            if r.base() <= slot {
                f = r;
            }
        }
        f
    }
    /// The value type of the file's registers.
    pub const fn ty(self) -> Type {
        match self {
            RegFile::Gpr | RegFile::UGpr | RegFile::Barrier => Type::U32,
            RegFile::Pred | RegFile::UPred | RegFile::Flag => Type::Bool,
        }
    }
}

/// Number of state slots ([`Reg::slot`] is below it).
pub const STATE_SLOTS: usize = 516;

/// One guest register: a file and an index in it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reg {
    /// The register file.
    pub file: RegFile,
    /// The index in the file.
    pub index: u8,
}

impl Reg {
    /// General-purpose register Rn.
    pub const fn gpr(n: u8) -> Reg {
        Reg {
            file: RegFile::Gpr,
            index: n,
        }
    }
    /// Predicate Pn.
    pub const fn pred(n: u8) -> Reg {
        Reg {
            file: RegFile::Pred,
            index: n,
        }
    }
    /// Uniform register URn (Ampere).
    pub const fn ugpr(n: u8) -> Reg {
        Reg {
            file: RegFile::UGpr,
            index: n,
        }
    }
    /// Uniform predicate UPn (Ampere).
    pub const fn upred(n: u8) -> Reg {
        Reg {
            file: RegFile::UPred,
            index: n,
        }
    }
    /// A condition-code flag.
    pub const fn flag(fl: Flag) -> Reg {
        Reg {
            file: RegFile::Flag,
            index: fl as u8,
        }
    }
    /// Its state slot: the file's [`RegFile::base`] plus the index.
    pub const fn slot(self) -> usize {
        self.file.base() + self.index as usize
    }
    /// The value type (U32 or Bool).
    pub const fn ty(self) -> Type {
        self.file.ty()
    }
}

impl fmt::Debug for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.index;
        match self.file {
            RegFile::Gpr => write!(f, "R{n}"),
            RegFile::Pred => write!(f, "P{n}"),
            RegFile::UGpr => write!(f, "UR{n}"),
            RegFile::UPred => write!(f, "UP{n}"),
            RegFile::Barrier => write!(f, "B{n}"),
            RegFile::Flag => write!(f, "{:?}", Flag::ALL[(n & 3) as usize]),
        }
    }
}

/// Condition-code flags written by `.CC` instructions and read by `.X` instructions.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Flag {
    /// Zero.
    Zero,
    /// Sign (negative).
    Sign,
    /// Carry out of the last `.CC` addition.
    Carry,
    /// Signed overflow.
    Overflow,
}

impl Flag {
    /// All flags, in state-slot order.
    pub const ALL: [Flag; 4] = [Flag::Zero, Flag::Sign, Flag::Carry, Flag::Overflow];
    /// The state-slot index.
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
}

/// The kind of an entry on the per-thread reconvergence / call stack.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum StackKind {
    /// `SSY` / `SYNC`.
    Sync = 0,
    /// `PBK` / `BRK`.
    Break = 1,
    /// `PCNT` / `CONT`.
    Cont = 2,
    /// `CAL` / `RET`.
    Call = 3,
}

/// Rounding mode of a floating-point operation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Round {
    /// To nearest, ties to even.
    Rn,
    /// Toward −∞.
    Rm,
    /// Toward +∞.
    Rp,
    /// Toward zero.
    Rz,
}

/// A memory space.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Space {
    /// Global memory through a 64-bit address (`PhysicalStorageBuffer64`).
    Global,
    /// Workgroup-shared memory, 32-bit byte offset.
    Shared,
    /// Per-thread local memory, 32-bit byte offset.
    Local,
    /// Storage buffer slot n (a `StorageBuffer` resource), 32-bit byte offset from its base:
    /// a global access whose address the `sbuf` pass traced to the slot's base in c0 (slots
    /// below [`SBUF_UBO_SLOT`]), or to a 64-bit address in a uniform buffer (slot
    /// `SBUF_UBO_SLOT + k`: the buffer whose address is `Function::sbuf_ubo[k]`).
    Storage(u8),
}

/// Width of a memory access (and the extension applied to narrow loads).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Width {
    /// 8 bits, zero-extended.
    U8,
    /// 8 bits, sign-extended.
    S8,
    /// 16 bits, zero-extended.
    U16,
    /// 16 bits, sign-extended.
    S16,
    /// 32 bits.
    B32,
    /// 64 bits (value type `U64`).
    B64,
}

impl Width {
    /// Access size in bytes.
    pub fn bytes(self) -> u32 {
        match self {
            Width::U8 | Width::S8 => 1,
            Width::U16 | Width::S16 => 2,
            Width::B32 => 4,
            Width::B64 => 8,
        }
    }
}

/// An atomic read-modify-write operation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum AtomOp {
    /// Integer add.
    Add,
    /// Float add (f32).
    FAdd,
    /// Signed minimum.
    SMin,
    /// Unsigned minimum.
    UMin,
    /// Signed maximum.
    SMax,
    /// Unsigned maximum.
    UMax,
    /// Wrapping increment: `old >= v ? 0 : old + 1`.
    Inc,
    /// Wrapping decrement: `old == 0 || old > v ? v : old - 1`.
    Dec,
    /// Bitwise and.
    And,
    /// Bitwise or.
    Or,
    /// Bitwise xor.
    Xor,
    /// Exchange.
    Exch,
}

/// A system value (`S2R`, CUDA's driver constants).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Sys {
    /// Thread id in the workgroup, component 0..2.
    Tid(u8),
    /// Workgroup id, component 0..2.
    Ctaid(u8),
    /// Workgroup size, component 0..2.
    Ntid(u8),
    /// Number of workgroups, component 0..2.
    Nctaid(u8),
    /// Lane id in the 32-wide warp: linear thread index mod 32.
    LaneId,
    /// Warp id within the workgroup.
    WarpId,
    /// Lanes below this one (`SR_LTMASK`), etc: 0 = EQ, 1 = LT, 2 = LE, 3 = GT, 4 = GE.
    LaneMask(u8),
    /// A clock counter (low 32 bits).
    Clock,
    /// A value with no meaning in translation (SM id, virtual ids): 0.
    Zero,
}

/// A warp shuffle mode.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ShflMode {
    /// Read lane `b`.
    Idx,
    /// Read lane `lane - b`.
    Up,
    /// Read lane `lane + b`.
    Down,
    /// Read lane `lane ^ b`.
    Bfly,
}

/// A warp vote mode.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum VoteMode {
    /// All active lanes true.
    All,
    /// Any active lane true.
    Any,
    /// All active lanes equal.
    Eq,
    /// The 32-bit ballot of the predicate.
    Ballot,
}

/// An element type of a warp matrix multiply-accumulate ([`Op::Mma`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum MmaType {
    /// IEEE binary16 (two per register, low half first).
    F16,
    /// bfloat16 (two per register).
    Bf16,
    /// TensorFloat-32: an f32 register whose low 13 mantissa bits are ignored.
    Tf32,
    /// Signed 8-bit integers (four per register, low byte first).
    S8,
    /// Unsigned 8-bit integers (four per register).
    U8,
    /// IEEE binary32 (accumulators).
    F32,
    /// Signed 32-bit integers (accumulators).
    S32,
}

impl MmaType {
    /// Elements per 32-bit register.
    pub fn per_reg(self) -> u32 {
        match self {
            MmaType::F16 | MmaType::Bf16 => 2,
            MmaType::S8 | MmaType::U8 => 4,
            MmaType::Tf32 | MmaType::F32 | MmaType::S32 => 1,
        }
    }
}

/// The shape and types of a warp matrix multiply-accumulate ([`Op::Mma`]): D (m×n) = A
/// (m×k, row-major fragments) · B (k×n, column-major fragments) + C, PTX's
/// `mma.sync.aligned.mMnNkK.row.col`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Mma {
    /// Rows of A, C and D (16, or 8 for IMMA.8816).
    pub m: u8,
    /// Columns of B, C and D (8).
    pub n: u8,
    /// The inner dimension.
    pub k: u8,
    /// A's element type.
    pub a: MmaType,
    /// B's element type.
    pub b: MmaType,
    /// C's and D's element type (`F16`, `F32` or `S32`).
    pub acc: MmaType,
    /// Integer results saturate to the s32 range (`.SAT`, PTX's `.satfinite`) instead of
    /// wrapping.
    pub sat: bool,
    /// A's elements are negated (HMMA's `-Ra`).
    pub neg_a: bool,
    /// B's elements are negated (HMMA's `-Rb`).
    pub neg_b: bool,
}

impl Mma {
    /// Registers per lane of A, B and C/D.
    pub fn regs(&self) -> [u32; 3] {
        let lanes = 32;
        let a = (self.m as u32 * self.k as u32) / (lanes * self.a.per_reg());
        let b = (self.k as u32 * self.n as u32) / (lanes * self.b.per_reg());
        let c = (self.m as u32 * self.n as u32) / (lanes * self.acc.per_reg());
        [a, b, c]
    }
}

/// An IR operation. Arguments live in [`Inst::args`]; immediates live here.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Op {
    /// A constant; the bits, interpreted by the instruction's type.
    Const(u64),
    /// An undefined value.
    Undef,
    /// An SSA phi: the value that arrived from the predecessor the block was entered from.
    /// Phis stand at the start of their block; the incoming `(predecessor, value)` pairs are
    /// `Function::phi_in[k]` (an instruction has only four argument slots). Made by the
    /// `ssa` pass.
    Phi(u32),
    /// Read a guest register (never RZ or PT: those are constants); typed as [`Reg::ty`].
    Get(Reg),
    /// Write a guest register := args[0].
    Set(Reg),
    /// Push `args[0]` (a guest byte address) with this kind on the reconvergence stack.
    StackPush(StackKind),
    /// Pop entries down to and including the topmost of this kind; the value is its address.
    StackPop(StackKind),

    /// Integer add (wrapping).
    IAdd,
    /// Integer subtract (wrapping).
    ISub,
    /// Integer multiply, low half.
    IMul,
    /// Integer negate.
    INeg,
    /// Unsigned multiply, high half.
    UMulHi,
    /// Signed multiply, high half.
    SMulHi,
    /// Carry out of the unsigned addition `args[0] + args[1]` (Bool).
    AddCarry,
    /// Bitwise and (also logical and on Bool).
    And,
    /// Bitwise or (also logical or on Bool).
    Or,
    /// Bitwise xor (also logical xor on Bool).
    Xor,
    /// Bitwise not (also logical not on Bool).
    Not,
    /// Shift left; the count must be below the width.
    Shl,
    /// Logical shift right; the count must be below the width.
    LShr,
    /// Arithmetic shift right; the count must be below the width.
    AShr,
    /// Bit field extract, zero-extended: (base, offset, count), offset+count ≤ width.
    BfeU,
    /// Bit field extract, sign-extended: (base, offset, count), offset+count ≤ width.
    BfeS,
    /// Bit field insert: (base, insert, offset, count), offset+count ≤ width.
    Bfi,
    /// Population count.
    Popc,
    /// Bit reverse.
    Brev,
    /// Index of the most significant set bit, or −1.
    FindUMsb,
    /// Index of the most significant bit differing from the sign, or −1.
    FindSMsb,
    /// Signed minimum.
    SMin,
    /// Signed maximum.
    SMax,
    /// Unsigned minimum.
    UMin,
    /// Unsigned maximum.
    UMax,
    /// Integer equal.
    IEq,
    /// Integer not equal.
    INe,
    /// Signed less than.
    SLt,
    /// Signed less or equal.
    SLe,
    /// Signed greater than.
    SGt,
    /// Signed greater or equal.
    SGe,
    /// Unsigned less than.
    ULt,
    /// Unsigned less or equal.
    ULe,
    /// Unsigned greater than.
    UGt,
    /// Unsigned greater or equal.
    UGe,
    /// `args[0] ? args[1] : args[2]`.
    Select,

    /// Float add with a rounding mode.
    FAdd(Round),
    /// Float multiply with a rounding mode.
    FMul(Round),
    /// Fused multiply-add `a*b+c`, rounded once.
    FFma(Round),
    /// Float divide (IEEE, round to nearest).
    FDiv,
    /// Float negate.
    FNeg,
    /// Float absolute value.
    FAbs,
    /// Minimum; a NaN operand loses to a number.
    FMin,
    /// Maximum; a NaN operand loses to a number.
    FMax,
    /// Round toward −∞ to integral.
    FFloor,
    /// Round toward +∞ to integral.
    FCeil,
    /// Round toward zero to integral.
    FTrunc,
    /// Round to nearest even integral.
    FRoundEven,
    /// Square root.
    FSqrt,
    /// Reciprocal square root.
    FRsqrt,
    /// 2^x.
    FExp2,
    /// log2(x).
    FLog2,
    /// sin(x).
    FSin,
    /// cos(x).
    FCos,
    /// 1/x.
    FRcp,
    /// Ordered equal.
    FOEq,
    /// Ordered not equal.
    FONe,
    /// Ordered less than.
    FOLt,
    /// Ordered less or equal.
    FOLe,
    /// Ordered greater than.
    FOGt,
    /// Ordered greater or equal.
    FOGe,
    /// Unordered equal.
    FUEq,
    /// Unordered not equal.
    FUNe,
    /// Unordered less than.
    FULt,
    /// Unordered less or equal.
    FULe,
    /// Unordered greater than.
    FUGt,
    /// Unordered greater or equal.
    FUGe,
    /// Is NaN.
    IsNan,
    /// Is ±∞.
    IsInf,

    /// Reinterpret bits as the instruction's type (same width).
    Bitcast,
    /// Unsigned integer to float, with rounding.
    UToF(Round),
    /// Signed integer to float, with rounding.
    SToF(Round),
    /// Float to unsigned integer, truncating; the lifter handles range and NaN.
    FToU,
    /// Float to signed integer, truncating; the lifter handles range and NaN.
    FToS,
    /// Float to float, with rounding (narrowing) or exact (widening).
    FConvert(Round),
    /// Zero-extend or truncate an integer.
    UConvert,
    /// Sign-extend an integer (U32 → U64).
    SConvert,
    /// Build a U64 from (lo, hi) U32 halves.
    Pack64,
    /// The high 32 bits of a U64.
    Hi32,

    /// Memory load: args[0] = address (U64 global, U32 otherwise).
    Load(Space, Width),
    /// Memory store: (address, value).
    Store(Space, Width),
    /// Atomic RMW, returns the old value: (address, value).
    Atomic(Space, AtomOp, Width),
    /// Atomic compare-and-swap, returns the old value: (address, compare, value).
    AtomicCas(Space, Width),
    /// Read a 32-bit word of a constant bank: args[0] = byte offset (U32).
    LoadConst(u8),
    /// Workgroup execution + memory barrier.
    Barrier,
    /// `BAR.RED.POPC`: workgroup barrier that counts the invocations whose barrier predicate
    /// (set by `SetBarPred`) is true; the value (U32) is the count.
    BarrierPopc,
    /// Set the predicate the next `BarrierPopc` counts := args[0].
    SetBarPred,
    /// Name the barrier the next `Barrier` / `BarrierPopc` waits at: id args[0] (0–15) and
    /// the number of threads that complete it, args[1] (0: every thread of the workgroup that
    /// has not exited). Only a shader with named barriers ([`Function::named_barriers`]) needs
    /// it; `(0, 0)` is the plain workgroup barrier.
    SetBarId,
    /// `BAR.ARV`: arrive at named barrier args[0] (count args[1], as `SetBarId`) without
    /// waiting.
    BarrierArrive,
    /// Read the result register of the last barrier reduction (`B2R.RESULT`).
    GetBarResult,
    /// Write the result register of the barrier reduction := args[0].
    SetBarResult,
    /// Memory barrier (true: device scope, false: workgroup scope).
    MemBarrier(bool),
    /// A system value (U32).
    SysVal(Sys),
    /// Warp shuffle of args[0] with args[1] (lane / delta) and args[2] (the c operand:
    /// clamp in bits 0..4, segment mask in bits 8..12). Value U32.
    Shfl(ShflMode),
    /// Whether the shuffle's source lane was in range (Bool), same arguments as `Shfl`.
    ShflValid(ShflMode),
    /// Warp vote on args[0] (Bool): Bool for All/Any/Eq, U32 for Ballot.
    Vote(VoteMode),
    /// Warp reduction of args[0] (U32) over the active lanes (Ampere's `REDUX`): `Add`,
    /// `And`, `Or`, `Xor`, `SMin`, `UMin`, `SMax`, `UMax`. Value U32.
    WarpReduce(AtomOp),
    /// The mask of the active lanes whose value equals this lane's (`MATCH.ANY`): args[0]
    /// (U32) and, for a 64-bit value, args[1] (its high word). Value U32.
    MatchAny,
    /// A warp matrix multiply-accumulate (`HMMA`, `IMMA`): D = A·B + C over the fragments
    /// the warp's 32 lanes hold (docs/ir.md, "Tensor instructions"). args[0], [1], [2] are
    /// `Tuple`s of the lane's A, B and C registers (U32 bits); the value is Void and D's
    /// registers are read with `Extract(k)`. The `tensor` pass lowers it to shuffles and
    /// per-lane arithmetic unless the back end emits it as a cooperative-matrix operation.
    Mma(Mma),
    /// A synchronisation point of the workgroup-memory warp emulation (the `warp_shared`
    /// pass): a workgroup barrier in structured code, a warp wait in the barrier-synchronised
    /// dispatcher (released before any waiting `Barrier`). Always the first instruction of its
    /// block.
    WarpSync,

    /// Graphics: read the attribute word at byte address args[0] (U32) of vertex args[1]
    /// (U32, or none); `output` reads back an output (`ALD.O`), `patch` a per-patch word.
    AttrLoad {
        /// Read back an output.
        output: bool,
        /// Per-patch attribute.
        patch: bool,
    },
    /// Graphics: write the attribute word at args[0] := args[1] (U32) (vertex args[2] ignored).
    AttrStore {
        /// Per-patch attribute.
        patch: bool,
    },
    /// Fragment: interpolate the input word at args[0] (U32); args[1] = multiplier (U32 bits
    /// of an f32, `Multiply` only); args[2] = packed offset (`Offset` only). Value U32 bits.
    Interp(crate::gfx::IpaMode, crate::gfx::IpaSample),
    /// Fragment: output word k := args[0] at exit (k = 4·target + component, 32 sample mask,
    /// 33 depth).
    FragOut(u8),
    /// Geometry: emit the current vertex to vertex stream args[0] (U32; only stream 0 is
    /// rasterized, the others feed transform feedback, which is not translated: the back end
    /// drops them).
    EmitVertex,
    /// Geometry: end the current primitive of vertex stream args[0] (U32).
    EndPrimitive,
    /// Fragment: discard (demote to a helper invocation).
    Demote,
    /// A graphics system value (U32).
    GfxSys(crate::gfx::GSys),
    /// Up to four values grouped as the argument list of a texture or image op (no code).
    Tuple,
    /// A texture operation (see [`crate::gfx::TexDesc`]); value Void, read with `Extract`.
    Tex(crate::gfx::TexDesc),
    /// Component k (U32 bits) of a texture or image-load result args[0].
    Extract(u8),
    /// Image load (`SULD`): args [coords Tuple]; value Void, read with `Extract`.
    ImageLoad(crate::gfx::ImgDesc),
    /// Image store (`SUST`): args [coords Tuple, data Tuple].
    ImageStore(crate::gfx::ImgDesc),
    /// Image atomic (`SUATOM`/`SURED`): args [coords Tuple, value U32, compare U32 or none];
    /// returns the old value (U32). `None` = compare-and-swap.
    ImageAtomic(crate::gfx::ImgDesc, Option<AtomOp>),

    /// Flush to zero (F32): a denormal args[0] becomes a zero of the same sign; other values
    /// pass unchanged. One op for what the back end writes as a few bit operations.
    Ftz,
    /// Saturate (F32 or F64): clamp args[0] to [0, 1]; NaN and −0 give +0.
    FSat,
    /// Maxwell minimum (`true`) or maximum (`false`) of args[0], args[1]: a NaN operand
    /// loses to a number, and −0 is below +0.
    FMinMaxZ(bool),
}

impl Op {
    /// Whether the operation has an effect beyond its value (must not be removed or moved).
    pub fn has_side_effects(&self) -> bool {
        matches!(
            self,
            Op::Set(_)
                | Op::StackPush(_)
                | Op::StackPop(_)
                | Op::Store(..)
                | Op::Atomic(..)
                | Op::AtomicCas(..)
                | Op::Barrier
                | Op::BarrierPopc
                | Op::SetBarPred
                | Op::SetBarId
                | Op::BarrierArrive
                | Op::SetBarResult
                | Op::MemBarrier(_)
                | Op::Shfl(_)
                | Op::ShflValid(_)
                | Op::Vote(_)
                | Op::WarpReduce(_)
                | Op::MatchAny
                | Op::WarpSync
                | Op::Load(Space::Global, _)
                | Op::Load(Space::Storage(_), _)
                | Op::AttrStore { .. }
                | Op::FragOut(_)
                | Op::EmitVertex
                | Op::EndPrimitive
                | Op::Demote
                | Op::ImageStore(_)
                | Op::ImageAtomic(..)
        )
    }
    /// Whether the result depends on state other than the arguments (loads, guest reads).
    pub fn reads_state(&self) -> bool {
        matches!(
            self,
            Op::Get(_)
                | Op::GetBarResult
                | Op::Load(..)
                | Op::SysVal(Sys::Clock)
                | Op::AttrLoad { .. }
                | Op::ImageLoad(_)
        )
    }
}

/// One IR instruction: an operation, its result type and up to four arguments.
#[derive(Clone, Copy, Debug)]
pub struct Inst {
    /// The operation.
    pub op: Op,
    /// The result type (`Void` when none).
    pub ty: Type,
    /// Arguments; unused slots are [`Value::NONE`].
    pub args: [Value; 4],
}

impl Inst {
    /// The used arguments.
    pub fn args(&self) -> impl Iterator<Item = Value> + '_ {
        self.args.iter().copied().take_while(|v| v.is_some())
    }
}

/// How a block ends.
#[derive(Clone, Debug, PartialEq)]
pub enum Terminator {
    /// Continue at a block.
    Jump(BlockId),
    /// `if args { t } else { f }`.
    Branch(Value, BlockId, BlockId),
    /// Continue at a guest byte address computed at run time (SYNC, BRK, RET, BRX).
    Dynamic(Value),
    /// Multi-way jump on a U32 value: the block of the first case whose value equals it,
    /// else the default (a `BRX` through a known jump table).
    Switch(Value, Vec<(u32, BlockId)>, BlockId),
    /// End the invocation.
    Exit,
    /// Discard the invocation (fragment `KIL`; ends a compute invocation).
    Kill,
    /// Not yet filled in.
    Unset,
}

/// A basic block: a straight list of instructions and a terminator.
#[derive(Clone, Debug)]
pub struct Block {
    /// The guest byte address the block starts at, or `None` for a block the lifter made.
    pub addr: Option<u32>,
    /// Instructions in order.
    pub insts: Vec<Value>,
    /// How the block ends.
    pub term: Terminator,
}

/// A function: an instruction arena and blocks; block 0 is the entry.
#[derive(Clone, Debug, Default)]
pub struct Function {
    /// Every instruction ever created (blocks list the live ones in order).
    pub insts: Vec<Inst>,
    /// The blocks; block 0 is the entry.
    pub blocks: Vec<Block>,
    /// Guest byte addresses an indirect jump (`BRX`/`JMX`) may reach, when the container
    /// lists them (cubin jump-table targets); lets `Dynamic` jumps become `Switch`es.
    pub indirect_targets: Vec<u32>,
    /// Where the binding layout keeps storage buffers' {address, size} records (c0), so the
    /// `sbuf` pass can turn global accesses into storage-buffer accesses; `None` = no table
    /// (CUDA ABI, unknown NVN stages).
    pub sbuf_table: Option<SbufTable>,
    /// Storage buffers whose 64-bit address the code reads from a uniform buffer (`sbuf_ubo`):
    /// entry k is `Space::Storage(SBUF_UBO_SLOT + k)`; filled by the `sbuf` pass.
    pub sbuf_ubo: Vec<SbufUbo>,
    /// Incoming values of the phis: `Op::Phi(k)` reads `phi_in[k]`, one `(predecessor,
    /// value)` pair per distinct predecessor block.
    pub phi_in: Vec<Vec<(BlockId, Value)>>,
    /// Whether guest state (registers, predicates, flags) is in SSA form: set by the `ssa`
    /// pass. False when the function keeps guest state in variables (`Get`/`Set`…
    /// remain), e.g. because a `Dynamic` jump with unknown targets is left.
    pub ssa: bool,
    /// Texture handles left for the [`handles`](crate::passes::handles) pass (the binding
    /// layout and one record per [`crate::gfx::TEX_PENDING`] texture operation).
    pub handles: Option<Box<crate::passes::handles::Pending>>,
    /// Whether the lifter lifted a warp matrix multiply-accumulate (HMMA, IMMA): the
    /// reflection's `tensor` says how it was translated, and the `tensor` pass looks for them
    /// only where it is set (IR built by hand with an `Mma` sets it too).
    pub tensor_ops: bool,
    /// Whether the code may push on the run-time stack (`StackPush`: the lifter sets it for
    /// `SSY`, `PBK`, `PCNT`, `CAL`): the `static_stack` pass looks for pushes only then. A
    /// `StackPop` needs no flag: it ends its block in a `Dynamic` jump, which the pass sees.
    pub stack_pushes: bool,
    /// Whether the code may hold a barrier operation (`Barrier`, `BarrierPopc`, `WarpSync`,
    /// `SetBarId`, `BarrierArrive`): the lifter sets it where it lifts `BAR`, the `warp_shared`
    /// pass where it places a `WarpSync`, and so does IR built by hand with one; the back end
    /// looks for barrier rules only then.
    pub barrier_ops: bool,
    /// Whether the lifter lifted a texture operation on a run-time indexed texture array
    /// (`TexDesc::dyn_count` > 0 at a resolved slot): the `tex_arrays` pass looks for them only
    /// then (IR built by hand with one sets it too).
    pub tex_arrays: bool,
    /// Whether the code may hold a denormal flush (`Op::Ftz`, lifted for `.FTZ`): the `ftz`
    /// pass looks for redundant flushes only then (IR built by hand with one sets it too).
    pub flushes: bool,
    /// The block order and dominators `const_fold` computed, handed on to `cse`, `ftz` and
    /// `dce` (which drops them): the control flow does not change between those passes. Code
    /// that changes the blocks' edges while they are set must reset them.
    pub doms: Option<Box<crate::dom::BlockDoms>>,
}

/// The first `Space::Storage` slot that names a [`SbufUbo`] (`Function::sbuf_ubo[slot − 128]`)
/// rather than a c0 record.
pub const SBUF_UBO_SLOT: u8 = 128;

/// A storage buffer whose 64-bit address is the word pair at byte `offset` (low word first) of
/// uniform buffer `ubo` (constant bank `first uniform bank + ubo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SbufUbo {
    /// Uniform-buffer slot (NVN: bank 3 + ubo; deko3d: bank 2 + ubo).
    pub ubo: u8,
    /// Byte offset of the address's low word in the uniform buffer.
    pub offset: u32,
}

/// A storage-buffer table in a constant bank: slot r's 64-bit base address is the word pair at
/// `base + stride·r` (low word first), its size the word at `+8`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SbufTable {
    /// The constant bank (0 for NVN and deko3d).
    pub bank: u8,
    /// Byte offset of slot 0's record.
    pub base: u32,
    /// Bytes per record (16).
    pub stride: u32,
    /// Number of slots.
    pub count: u32,
    /// The constant bank of uniform buffer 0 (NVN 3, deko3d 2): a 64-bit address loaded from
    /// banks `ubo_bank..ubo_bank + 16` is a [`SbufUbo`].
    pub ubo_bank: u8,
}

impl SbufTable {
    /// The slot whose base address's low word (`hi = false`) or high word (`hi = true`) is at
    /// byte `off` of the table's bank.
    pub fn slot_at(&self, off: u32, hi: bool) -> Option<u8> {
        let rel = off.checked_sub(self.base + if hi { 4 } else { 0 })?;
        (rel % self.stride == 0 && rel / self.stride < self.count)
            .then_some((rel / self.stride) as u8)
    }
}

impl Function {
    /// An empty function.
    pub fn new() -> Self {
        Self::default()
    }
    /// A function of one empty block per address, in order: the start of a hand-built
    /// function (`let (mut f, [b0, b1]) = Function::with_blocks([0, 8]);`).
    pub fn with_blocks<const N: usize>(addrs: [u32; N]) -> (Self, [BlockId; N]) {
        let mut f = Self::new();
        let b = addrs.map(|a| f.add_block(Some(a)));
        (f, b)
    }
    /// Adds an empty block.
    pub fn add_block(&mut self, addr: Option<u32>) -> BlockId {
        self.blocks.push(Block {
            addr,
            insts: Vec::new(),
            term: Terminator::Unset,
        });
        BlockId(self.blocks.len() as u32 - 1)
    }
    /// The instruction defining `v`.
    #[inline]
    pub fn inst(&self, v: Value) -> &Inst {
        &self.insts[v.index()]
    }
    /// The type of `v`.
    #[inline]
    pub fn ty(&self, v: Value) -> Type {
        self.insts[v.index()].ty
    }
    /// Creates an instruction without placing it in a block.
    #[inline]
    pub fn make(&mut self, op: Op, ty: Type, args: &[Value]) -> Value {
        // Spelled out per length: a copy loop here becomes a `memcpy` call per instruction.
        let n = Value::NONE;
        let a = match *args {
            [] => [n; 4],
            [x] => [x, n, n, n],
            [x, y] => [x, y, n, n],
            [x, y, z] => [x, y, z, n],
            _ => {
                let mut a = [n; 4];
                a[..args.len()].copy_from_slice(args);
                a
            }
        };
        self.insts.push(Inst { op, ty, args: a });
        Value(self.insts.len() as u32 - 1)
    }
    /// Appends an instruction to block `b`.
    #[inline(always)]
    pub fn push(&mut self, b: BlockId, op: Op, ty: Type, args: &[Value]) -> Value {
        let v = self.make(op, ty, args);
        let insts = &mut self.blocks[b.index()].insts;
        if insts.capacity() == 0 {
            insts.reserve(32);
        }
        insts.push(v);
        v
    }
    /// Whether a live instruction is a 64-bit atomic (read-modify-write or compare-and-swap):
    /// SPIR-V's `Int64Atomics`; Metal has 64-bit atomics only on some GPU families and for a
    /// few operations, so the build and the report name the shaders that need them.
    pub fn uses_int64_atomics(&self) -> bool {
        self.blocks.iter().flat_map(|b| &b.insts).any(|&v| {
            matches!(
                self.inst(v).op,
                Op::Atomic(_, _, Width::B64) | Op::AtomicCas(_, Width::B64)
            )
        })
    }
    /// Whether a live instruction names a barrier other than the plain workgroup barrier
    /// (`SetBarId` with an id or count that is not the constant 0, or `BarrierArrive`): the
    /// back end then runs the function through the barrier-synchronised dispatcher, which
    /// counts arrivals per barrier id.
    pub fn named_barriers(&self) -> bool {
        self.blocks.iter().flat_map(|b| &b.insts).any(|&v| {
            let i = self.inst(v);
            match i.op {
                Op::BarrierArrive => true,
                Op::SetBarId => i.args[..2].iter().any(|&a| self.const_of(a) != Some(0)),
                _ => false,
            }
        })
    }
    /// The constant bits of `v`, if it is a constant.
    #[inline]
    pub fn const_of(&self, v: Value) -> Option<u64> {
        match self.inst(v).op {
            Op::Const(c) => Some(c),
            _ => None,
        }
    }
    /// Successor blocks of `b`.
    pub fn succs(&self, b: BlockId) -> Vec<BlockId> {
        match &self.blocks[b.index()].term {
            Terminator::Jump(t) => vec![*t],
            Terminator::Branch(_, t, f) => vec![*t, *f],
            Terminator::Switch(_, cases, d) => {
                let mut v: Vec<BlockId> = cases.iter().map(|c| c.1).collect();
                v.push(*d);
                v
            }
            _ => Vec::new(),
        }
    }
    /// The incoming values of phi `v` (empty when `v` is not a phi).
    pub fn phi_args(&self, v: Value) -> &[(BlockId, Value)] {
        match self.inst(v).op {
            Op::Phi(k) => &self.phi_in[k as usize],
            _ => &[],
        }
    }
    /// The incoming values of phi `v`, to fill in or change (`None` when `v` is not a phi).
    pub fn phi_args_mut(&mut self, v: Value) -> Option<&mut Vec<(BlockId, Value)>> {
        match self.inst(v).op {
            Op::Phi(k) => Some(&mut self.phi_in[k as usize]),
            _ => None,
        }
    }
    /// How many phis the blocks hold.
    pub fn placed_phis(&self) -> usize {
        self.blocks
            .iter()
            .flat_map(|b| &b.insts)
            .filter(|&&v| matches!(self.inst(v).op, Op::Phi(_)))
            .count()
    }
    /// Creates a phi of type `ty` with no incoming values yet (not placed in a block).
    pub fn make_phi(&mut self, ty: Type) -> Value {
        let k = self.phi_in.len() as u32;
        self.phi_in.push(Vec::new());
        self.make(Op::Phi(k), ty, &[])
    }
    /// Where a branch to `b` may go instead: `b`'s target when `b` is empty and only jumps
    /// on, and that target starts with no phi (a phi needs to know that the edge came
    /// through `b`).
    pub fn forwards(&self, b: BlockId) -> Option<BlockId> {
        let blk = &self.blocks[b.index()];
        match blk.term {
            Terminator::Jump(t) if blk.insts.is_empty() => {
                let starts_with_phi = self.blocks[t.index()]
                    .insts
                    .first()
                    .is_some_and(|&v| matches!(self.inst(v).op, Op::Phi(_)));
                (!starts_with_phi).then_some(t)
            }
            _ => None,
        }
    }
    /// Successor `i` of `b` in terminator order (switch cases, then the default), without
    /// allocating; `None` past the last.
    #[inline]
    pub fn succ(&self, b: BlockId, i: usize) -> Option<BlockId> {
        match &self.blocks[b.index()].term {
            Terminator::Jump(t) => (i == 0).then_some(*t),
            Terminator::Branch(_, t, f) => match i {
                0 => Some(*t),
                1 => Some(*f),
                _ => None,
            },
            Terminator::Switch(_, cases, d) => match cases.get(i) {
                Some(c) => Some(c.1),
                None => (i == cases.len()).then_some(*d),
            },
            _ => None,
        }
    }
    /// Number of live instructions over all blocks.
    pub fn live_insts(&self) -> usize {
        self.blocks.iter().map(|b| b.insts.len()).sum()
    }
}

impl fmt::Display for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, b) in self.blocks.iter().enumerate() {
            match b.addr {
                Some(a) => writeln!(f, "b{i} (0x{a:x}):")?,
                None => writeln!(f, "b{i}:")?,
            }
            for &v in &b.insts {
                let inst = self.inst(v);
                write!(f, "  {v}: {:?} = {:?}", inst.ty, inst.op)?;
                for a in inst.args() {
                    write!(f, " {a}")?;
                }
                for (p, a) in self.phi_args(v) {
                    write!(f, " [b{}: {a}]", p.0)?;
                }
                writeln!(f)?;
            }
            writeln!(f, "  {:?}", b.term)?;
        }
        Ok(())
    }
}
