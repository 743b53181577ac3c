//! The pieces a template compiles to: value kinds, print styles, template tokens.

/// How a field's raw bits turn into a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// General register, 255 = RZ.
    Reg,
    /// Predicate register, 7 = PT.
    Pred,
    /// Uniform register (Volta and later), 63 = URZ.
    UReg,
    /// Uniform predicate (Volta and later), 7 = UPT.
    UPred,
    /// Unsigned integer.
    Uint,
    /// Signed (two's complement over the field's width) integer.
    Sint,
    /// One-bit flag.
    Flag,
    /// Modifier enum (index into the table's enums).
    Enum(u16),
    /// High 20 bits of an f32 (19 bits + sign).
    F20,
    /// High 20 bits of an f64 (19 bits + sign).
    D20,
    /// A full 32-bit float.
    F32,
    /// Signed branch offset relative to the next instruction.
    Target,
}

/// How a placeholder prints.
#[derive(Clone, Debug, PartialEq)]
pub enum Style {
    /// Register name.
    Reg,
    /// Predicate name.
    Pred,
    /// Uniform register name (`UR4`, `URZ`).
    UReg,
    /// Uniform predicate name (`UP0`, `UPT`).
    UPred,
    /// Predicate name and `, `, nothing for `PT`.
    PredComma,
    /// `, ` and predicate name, nothing for `PT`.
    CommaPredOnly,
    /// Text when the field is not all ones (e.g. a register that is not RZ).
    NotAllOnes(String),
    /// Unsigned hex.
    Hex,
    /// Signed hex.
    SHex,
    /// Unsigned decimal.
    Dec,
    /// f32 from 20 high bits.
    F20,
    /// f64 from 20 high bits.
    D20,
    /// f32 from 32 bits.
    F32,
    /// f16 from 16 bits.
    F16,
    /// bf16 from 16 bits (the high half of an f32).
    Bf16,
    /// Absolute branch target.
    Target,
    /// Nothing.
    Hidden,
    /// Nothing (a signed field).
    HiddenSigned,
    /// Text when non-zero.
    Flag(String),
    /// Enum entry text.
    Enum(u16),
    /// Memory operand from a register field and an offset field.
    Mem(u8),
    /// Indexed constant-buffer offset (`R2+0x10`, `0x0` for RZ and zero).
    CbufMem(u8),
    /// ` 0x..` (signed), nothing when zero.
    OptImm,
    /// `, 0x..` (signed), nothing when zero.
    OptImmComma,
    /// Register and `, `, nothing for `RZ`.
    RegComma,
    /// `, ` and register, nothing for `RZ`.
    CommaReg,
    /// The register `n` above the field's (RZ stays RZ).
    RegPlus(u8),
    /// `{b,a,..}`: the numbers of the set bits, highest first.
    BitSet,
    /// `, b,a`: the numbers of the set bits, highest first; nothing when none.
    BitList,
    /// An f16 immediate whose sign comes from a separate negation field (index).
    NegFloat16(u8),
    /// `, !P0` from a negation field (index) and a predicate: nothing for `PT`.
    CommaPred(u8),
    /// `+0x..` (signed), nothing when zero: the offset after a register that always
    /// prints (`[R2.64+0x10]`, `[RZ.64]`).
    PlusImm,
    /// Memory operand as [`Style::Mem`] (register field index), the register followed by
    /// the text (`R3.X4+0x10`); a base register RZ prints neither (`0x10`, `RZ`).
    MemSuffix(u8, String),
    /// Register, the text and `+`, nothing for `RZ` (`[R5+UR4+0x10]`, `[R6.U32+UR4]`,
    /// `[UR4+0x10]`).
    RegAdd(String),
    /// `+` and uniform register, nothing for `URZ` (`[R4.64+UR6]`).
    PlusUReg,
    /// `!P0, ` from a negation field (index) and a predicate: nothing for `PT` (not negated).
    /// Template `{NotA&Pa:Q}` (Ampere's branch condition: `BRA !P5, 0x20`).
    NegPredComma(u8),
    /// `!P0` from a negation field (index) and a predicate: nothing for `PT` (not negated).
    /// Template `{NotA&Pa:p}` (a trailing condition: `EXIT P0`).
    NegPred(u8),
    /// Register name, `???255` for register 255 (operands where nvdisasm has no RZ, e.g. the
    /// coordinates and handle of Ampere texture and surface instructions).
    RegNoRz,
    /// `UR4+0x10` from a uniform register field (index) and a signed offset: the register
    /// always (`URZ` too), `+offset` unless zero (`c[0x3][UR10+0x14]`, `c[0x3][URZ]`).
    URegOffset(u8),
    /// f64 from its 32 high bits (a 32-bit immediate of a double-precision instruction).
    D32,
    /// Memory operand as [`Style::Mem`] (register field index), but an offset without a base
    /// register prints signed (`[-0x10]`; `[RZ]` when zero): Ampere's LDSM, LDGSTS, LDC.
    MemSigned(u8),
}

/// One piece of a printing template.
#[derive(Clone, Debug)]
pub enum Tok {
    /// Literal text.
    Text(String),
    /// A field (index into the form's fields) printed with a style.
    Field(u8, Style),
    /// `.reuse` when the reuse bit is set.
    Reuse(u8),
    /// `.T` / `.P`: nvdisasm's texture-phase marker (from the stream context).
    TexPhase,
}

/// The value kind a print style implies (registers and predicates keep theirs).
pub(super) fn kind_for(style: &Style) -> Kind {
    match style {
        Style::Reg
        | Style::RegComma
        | Style::CommaReg
        | Style::RegPlus(_)
        | Style::RegAdd(_)
        | Style::RegNoRz => Kind::Reg,
        Style::Pred | Style::PredComma | Style::CommaPredOnly => Kind::Pred,
        Style::UReg | Style::PlusUReg => Kind::UReg,
        Style::UPred => Kind::UPred,
        Style::SHex | Style::HiddenSigned | Style::OptImm | Style::PlusImm => Kind::Sint,
        Style::F20 => Kind::F20,
        Style::D20 => Kind::D20,
        Style::F32 => Kind::F32,
        Style::Target => Kind::Target,
        Style::Flag(_) => Kind::Flag,
        Style::Enum(e) => Kind::Enum(*e),
        _ => Kind::Uint,
    }
}
