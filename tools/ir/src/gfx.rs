//! Graphics-stage operation descriptors (issue 5): stage I/O, textures and images.
//!
//! Attribute words are addressed as the hardware does (`a[]` byte addresses, see
//! `tests/corpus/dksh/README.md` §4); the back end maps each address to an interface variable
//! or built-in. Textures and images name a resolved *slot* (the binding-layout profile turned
//! the instruction's handle into it); their arguments are grouped by [`Op::Tuple`](crate::Op).

/// Interpolation mode of `IPA`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum IpaMode {
    /// `.PASS`: the plain interpolated value (for a perspective input: value × 1/w).
    Pass,
    /// Default: the interpolated value multiplied by the multiplier operand.
    Multiply,
    /// `.CONSTANT`: the provoking vertex's value.
    Constant,
    /// `.SC`: like `.PASS`.
    Sc,
}

/// Sampling location of `IPA`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum IpaSample {
    /// Pixel centre (or sample, under sample shading).
    Default,
    /// `.CENTROID`.
    Centroid,
    /// `.OFFSET`: at an offset given by a register.
    Offset,
}

/// Graphics system values not in [`Sys`](crate::Sys).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum GSys {
    /// `SR_INVOCATION_ID` (geometry / tess-control invocation).
    InvocationId,
    /// `PIXLD.MY_INDEX`: sample index.
    SampleId,
    /// `PIXLD.COVMASK`: input coverage mask.
    SampleMaskIn,
    /// `SR_Y_DIRECTION`: +1.0 (as f32 bits).
    YDirection,
    /// `SR_THREAD_KILL`: 1 for a helper (killed) invocation, else 0.
    HelperInvocation,
    /// `SR_PRIM_TYPE`: tess-control input patch size in bits 8..15.
    PrimType,
}

/// Texture slots at and above this value are `tex_ubo` handles: the handle is the word at
/// `c[bank][4 * word]` of a uniform buffer, slot = `TEX_UBO | (bank & 0xf) << 11 | word`.
pub const TEX_UBO: u16 = 0x8000;

/// [`TexDesc::samp`]: the sampler is a constant sampler ID (`SAMP_ID | id`, the handle's high
/// 12 bits), the binding kind `samp_id`.
pub const SAMP_ID: u16 = 0x4000;
/// [`TexDesc::samp`]: the sampler ID is the high 12 bits of a uniform-buffer word,
/// `SAMP_UBO | (bank − first uniform bank) << 11 | word` (the binding kind `samp_ubo`).
pub const SAMP_UBO: u16 = 0x8000;

/// [`TexDesc::samp`]: a separate sampler, `SAMP_SEP | n` = sampler slot n of the NVN
/// separate-sampler table (`nvn_samp_base`), bound on its own (binding 96 + n).
pub const SAMP_SEP: u16 = 0x2000;

/// The texture slot of a `tex_dyn_slots` handle (NVN, chosen at run time): a [`TexDesc`] with
/// this slot and `dyn_count` n samples texture array element (handle & 0xfffff) with sampler
/// array element (handle >> 20), both clamped to n − 1; args\[3\] is the handle.
pub const TEX_DYN: u16 = 0x7f00;

/// The texture slot of a bindless handle the lifter could not resolve in its block (read
/// from a register written in another block): the [`handles`](crate::passes::handles) pass
/// resolves it after SSA. While pending, args\[3\] is the handle, args\[2\] the derivative
/// tuple or a tuple of zeros, and [`TexDesc::samp`] indexes
/// [`Pending::items`](crate::passes::handles::Pending::items).
pub const TEX_PENDING: u16 = 0x7e00;

/// Texture dimensionality.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum TexDim {
    /// 1D.
    D1,
    /// 2D.
    D2,
    /// 3D.
    D3,
    /// Cube.
    Cube,
    /// Texel buffer (1D buffer).
    Buffer,
}

impl TexDim {
    /// Coordinate count (without the array layer).
    pub fn coords(self) -> usize {
        match self {
            TexDim::D1 | TexDim::Buffer => 1,
            TexDim::D2 => 2,
            TexDim::D3 | TexDim::Cube => 3,
        }
    }
}

/// What a texture instruction computes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum TexKind {
    /// Filtered sample (TEX, TEXS).
    Sample,
    /// Texel fetch with integer coordinates (TLD, TLDS).
    Fetch,
    /// Four-texel gather of one component (TLD4, TLD4S).
    Gather(u8),
    /// Size query (TXQ dimension): width, height, depth/layers, mip levels.
    QuerySize,
    /// Sample-count query (TXQ texture type): component 2.
    QuerySamples,
    /// Level-of-detail query (TMML): (lod clamped, lod unclamped) in 8.8 fixed point.
    QueryLod,
    /// Sample with explicit derivatives (TXD).
    Grad,
}

/// Level-of-detail operand of a texture instruction.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum TexLod {
    /// Implicit (derivatives).
    Implicit,
    /// Level zero (`.LZ`).
    Zero,
    /// Bias (`.LB`).
    Bias,
    /// Explicit level (`.LL`).
    Level,
}

/// A texture operation. Arguments: `[coords Tuple, extra Tuple, derivatives Tuple or NONE]`
/// where coords = (x, y, z, layer) as used by `dim`/`array` (f32 bits, integers for Fetch and
/// the layer), extra = (lod-or-bias, depth reference, packed offsets, sample index).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct TexDesc {
    /// The operation.
    pub kind: TexKind,
    /// Dimensionality.
    pub dim: TexDim,
    /// Array texture.
    pub array: bool,
    /// Depth comparison (`.DC`).
    pub shadow: bool,
    /// Level of detail.
    pub lod: TexLod,
    /// Constant offsets present (`.AOFFI`), packed 4 bits per coordinate in extra\[2\].
    pub offset: bool,
    /// Multisample fetch (`.MS`).
    pub ms: bool,
    /// Gather with four per-texel offsets (`.PTP`): 8 signed bytes in extra\[2\] and
    /// extra\[3\] ((x, y) of texel 0 in the low bytes of extra\[2\]).
    pub ptp: bool,
    /// The resolved texture slot (the first of the array when `dyn_count` > 0).
    pub slot: u16,
    /// A run-time indexed texture array of this many slots starting at `slot`; the index is
    /// args\[3\] (args\[2\] is then the derivative tuple or a tuple of zeros). 0: none.
    pub dyn_count: u8,
    /// Where the sampler comes from: 0 = bound with the texture (its table or handle word),
    /// else [`SAMP_ID`] | id, [`SAMP_UBO`] | … or [`SAMP_SEP`] | slot (NVN handles ORed from
    /// two parts).
    pub samp: u16,
}

/// An image (surface) operation on a resolved slot. Arguments: `[coords Tuple, data Tuple]`
/// (plus the handle value after them while `slot` is [`TEX_PENDING`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct ImgDesc {
    /// Dimensionality (Buffer for `1D_BUFFER`).
    pub dim: TexDim,
    /// Array image.
    pub array: bool,
    /// Components moved (1, 2 or 4 words).
    pub words: u8,
    /// Formatted (`SULD.P` / `SUST.P`): each component converted from / to the image's
    /// format (float values for a float format, integers for an integer one). False for raw
    /// accesses (`.D`, every size including `.128`) and atomics, which move the texel's bits.
    pub typed: bool,
    /// The resolved image slot, or [`TEX_PENDING`]: a register handle from another block that
    /// the [`handles`](crate::passes::handles) pass resolves (the handle is the last argument).
    pub slot: u16,
    /// While `slot` is [`TEX_PENDING`]: the index in [`crate::passes::handles::Pending::items`].
    pub pending: u16,
}
