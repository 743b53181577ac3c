//! Graphics lifting inputs: the SPH, the binding-layout profile that turns texture and image
//! handles into slots (NVN and deko3d are two instances of the same data), and the component
//! types of stage inputs/outputs the binary does not record (from shader_facts).

use super::pipeline_state::{GsInput, StateSource};
use crate::shader::Stage;
pub use dmsh_isa::sph_info::{Interp, SphInfo, SphStage};

/// Where texture and image handles live (a profile, not a code path).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BindingLayout {
    /// Profile name (`deko3d`, `nvn`).
    pub name: String,
    /// The constant bank holding handles (deko3d 0, NVN 2).
    pub tex_bank: u8,
    /// The constant bank holding image handles (the texture bank, except under NVK, whose
    /// sampled-texture and storage-image descriptors are in different descriptor sets).
    pub image_bank: u8,
    /// Byte offset of texture 0's handle (deko3d: the stage base B; NVN: `nvn_tex_base`).
    pub tex_base: u32,
    /// Bytes per texture handle (deko3d 4, NVN 8).
    pub tex_stride: u32,
    /// Number of texture slots.
    pub tex_count: u32,
    /// Byte offset of image 0's handle (deko3d B + 0x80).
    pub image_base: u32,
    /// Bytes per image handle.
    pub image_stride: u32,
    /// Number of image slots.
    pub image_count: u32,
    /// NVN: separate samplers' base (`nvn_samp_base`), if the title uses them.
    pub samp_base: Option<u32>,
    /// NVN: separate textures' base (`nvn_septex_base`), if the title uses them.
    pub septex_base: Option<u32>,
    /// NVN: number of separate texture slots (`nvn_septex_slots`); 0 = not stated (128).
    pub septex_count: u32,
    /// NVN `tex_dyn_slots`: a texture handle chosen at run time (not traceable to one table
    /// word) binds through an array of textures indexed by the handle's texture ID.
    pub tex_dyn: bool,
    /// First constant bank of uniform buffer 0 (deko3d 2, NVN 3).
    pub first_ubo_bank: u8,
    /// Byte offset of storage buffer 0's {address, size} record in c0; `None` where the
    /// layout is not known (NVN geometry and tessellation stages, CUDA).
    pub sbuf_base: Option<u32>,
    /// Number of storage-buffer slots in the table (16 records of 16 bytes).
    pub sbuf_count: u32,
}

/// deko3d's per-stage base B of the graphics driver constant buffer.
pub fn deko3d_stage_base(stage: Stage) -> u32 {
    match stage {
        Stage::Vertex => 0x010,
        Stage::TessControl => 0x1b0,
        Stage::TessEval => 0x350,
        Stage::Geometry => 0x4f0,
        Stage::Fragment => 0x690,
        Stage::Compute => 0x0a0,
    }
}

/// NVN's storage-buffer table base in c0 for a stage (seed 000's binding table: vertex 0x110,
/// compute 0x310, fragment 0x510); `None` for geometry and tessellation (not documented).
pub fn nvn_sbuf_base(stage: Stage) -> Option<u32> {
    match stage {
        Stage::Vertex => Some(0x110),
        Stage::Compute => Some(0x310),
        Stage::Fragment => Some(0x510),
        _ => None,
    }
}

impl BindingLayout {
    /// The storage-buffer table of this layout (bank 0, 16-byte records), if known.
    pub fn sbuf_table(&self) -> Option<crate::ir::SbufTable> {
        self.sbuf_base.map(|base| crate::ir::SbufTable {
            bank: 0,
            base,
            stride: 16,
            count: self.sbuf_count,
            ubo_bank: self.first_ubo_bank,
        })
    }

    /// deko3d (uam binaries): textures at c\[0\]\[B + 4n\], images at B + 0x80 + 4n, storage
    /// buffers at B + 0xa0 + 16n, uniform buffer n = c\[2+n\].
    pub fn deko3d(stage: Stage) -> Self {
        let b = deko3d_stage_base(stage);
        BindingLayout {
            name: "deko3d".into(),
            tex_bank: 0,
            image_bank: 0,
            tex_base: b,
            tex_stride: 4,
            tex_count: 32,
            image_base: b + 0x80,
            image_stride: 4,
            image_count: 8,
            samp_base: None,
            septex_base: None,
            septex_count: 0,
            // deko3d handles are descriptor IDs (dkMakeTextureHandle: image descriptor |
            // sampler descriptor << 20): one computed at run time indexes the tex_dyn arrays.
            tex_dyn: true,
            first_ubo_bank: 2,
            sbuf_base: Some(b + 0xa0),
            sbuf_count: 16,
        }
    }

    /// NVN: bound texture r at c\[2\]\[tex_base + 8r\] (0x20 in most titles, 0x168 in some),
    /// uniform buffer r = c\[3+r\], storage buffer r's {address, size} at c\[0\]\[base + 16r\]
    /// with base 0x110 (vertex), 0x310 (compute), 0x510 (fragment) (seeds 000/001); the
    /// geometry and tessellation bases are not documented, so those stages have no table.
    pub fn nvn(stage: Stage, tex_base: u32) -> Self {
        let sbuf = nvn_sbuf_base(stage);
        BindingLayout {
            name: "nvn".into(),
            tex_bank: 2,
            image_bank: 2,
            tex_base,
            tex_stride: 8,
            tex_count: 32,
            image_base: tex_base + 8 * 32,
            image_stride: 8,
            image_count: 8,
            samp_base: Some(0x568),
            septex_base: None,
            septex_count: 0,
            tex_dyn: false,
            first_ubo_bank: 3,
            sbuf_base: sbuf,
            sbuf_count: 16,
        }
    }

    /// NVN separate textures (`nvn_septex_base`): slot 128 + n, as the replay binds them.
    pub fn septex_at(&self, byte: u32) -> Option<u16> {
        let b = self.septex_base?;
        let n = if self.septex_count == 0 {
            128
        } else {
            self.septex_count.min(128)
        };
        Self::slot(byte, b, self.tex_stride, n).map(|n| 128 + n)
    }

    /// NVN separate samplers (`nvn_samp_base`): sampler slot n.
    pub fn sampler_at(&self, byte: u32) -> Option<u16> {
        let b = self.samp_base?;
        Self::slot(byte, b, self.tex_stride, 256)
    }

    /// CUDA (`--abi cuda`, the sass test corpus): a bindless texture or surface object is a
    /// kernel parameter in c\[0\] from `param_base` (0x140 on sm_5x), and `TEXS`/`TLD4`/`TXD`/
    /// `TLDS`/`TXQ`/`SULD`/`SUST` carry the c\[0\] word index of its low word (0x52 →
    /// c\[0\]\[0x148\]). Slot = word index from `param_base`: `(byte − param_base) / 4`, for
    /// textures and surfaces alike (docs/reflection.md).
    pub fn cuda(param_base: u32) -> Self {
        BindingLayout {
            name: "cuda".into(),
            tex_bank: 0,
            image_bank: 0,
            tex_base: param_base,
            tex_stride: 4,
            tex_count: 64,
            image_base: param_base,
            image_stride: 4,
            image_count: 64,
            samp_base: None,
            septex_base: None,
            septex_count: 0,
            tex_dyn: false,
            first_ubo_bank: 3,
            sbuf_base: None,
            sbuf_count: 0,
        }
    }

    /// NVK (Mesa's Vulkan driver; NAK-compiled code, tests/corpus/nak README §4): fully
    /// bindless. c\[0\] is the root descriptor table (descriptor-set s's address at
    /// 0x128 + 16s), descriptor-set buffers and uniform buffers are bound as banks from c\[1\]
    /// on in an order the shader's cbuf map gives (`tex_bank` / `image_bank`: the banks of
    /// the sets holding sampled-texture and storage-image descriptors; `u8::MAX`, a bank no
    /// instruction names, where the shader has no such set). A sampled-texture
    /// descriptor is a 4-byte handle (texture ID | sampler ID << 20), a texel buffer 4 bytes,
    /// a storage image 8 (the handle word first), a storage buffer 16 ({u64 address, u32
    /// size}): texture and image slots are the handle word's byte offset / 4 in the set.
    /// Handles the code computes (`handle & 0xfffff`, texel buffers) are texture IDs
    /// (`tex_dyn`); storage-buffer addresses come from a bank word (`sbuf_ubo`) or memory.
    pub fn nvk(tex_bank: u8, image_bank: u8) -> Self {
        BindingLayout {
            name: "nvk".into(),
            tex_bank,
            image_bank,
            tex_base: 0,
            tex_stride: 4,
            tex_count: 32,
            image_base: 0,
            image_stride: 4,
            image_count: 16,
            samp_base: None,
            septex_base: None,
            septex_count: 0,
            tex_dyn: true,
            first_ubo_bank: 1,
            sbuf_base: None,
            sbuf_count: 0,
        }
    }

    fn slot(off: u32, base: u32, stride: u32, count: u32) -> Option<u16> {
        let rel = off.checked_sub(base)?;
        (rel % stride == 0 && rel / stride < count).then_some((rel / stride) as u16)
    }

    /// Elements of the `tex_dyn_slots` texture and sampler arrays (seed 000: 32, IDs capped at
    /// 31), at most the table's slot count.
    pub fn tex_dyn_count(&self) -> u8 {
        self.tex_count.clamp(1, 32) as u8
    }

    /// The texture slot of a byte offset in the handle bank.
    pub fn texture_at(&self, byte: u32) -> Option<u16> {
        Self::slot(byte, self.tex_base, self.tex_stride, self.tex_count)
    }

    /// The image slot of a byte offset in the handle bank.
    pub fn image_at(&self, byte: u32) -> Option<u16> {
        Self::slot(byte, self.image_base, self.image_stride, self.image_count)
    }
}

/// Component type of a stage input or output vector (the binary does not say).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum CompType {
    /// 32-bit float.
    #[default]
    Float,
    /// 32-bit signed integer.
    Sint,
    /// 32-bit unsigned integer.
    Uint,
}

impl CompType {
    /// Parses `f`/`float`, `i`/`int`/`sint`, `u`/`uint`.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "f" | "float" | "f32" => CompType::Float,
            "i" | "int" | "sint" | "s32" | "i32" => CompType::Sint,
            "u" | "uint" | "u32" => CompType::Uint,
            _ => return None,
        })
    }
    /// The reflection name.
    pub fn name(self) -> &'static str {
        match self {
            CompType::Float => "float",
            CompType::Sint => "sint",
            CompType::Uint => "uint",
        }
    }
}

/// Format of a storage image (the binary does not say; from shader_facts / the GLSL layout).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum ImageFmt {
    /// Unknown: formatted accesses read/write without a format, raw (`.D`) accesses move
    /// 32-bit words.
    #[default]
    Unknown,
    /// rgba8 (unorm).
    Rgba8,
    /// r32ui.
    R32ui,
    /// r32i.
    R32i,
    /// r32f.
    R32f,
    /// rgba16f.
    Rgba16f,
    /// rgba32f.
    Rgba32f,
    /// rgba32ui.
    Rgba32ui,
}

impl ImageFmt {
    /// Parses a GLSL image format qualifier (`rgba8`, `r32ui`, …).
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "rgba8" => ImageFmt::Rgba8,
            "r32ui" => ImageFmt::R32ui,
            "r32i" => ImageFmt::R32i,
            "r32f" => ImageFmt::R32f,
            "rgba16f" => ImageFmt::Rgba16f,
            "rgba32f" => ImageFmt::Rgba32f,
            "rgba32ui" => ImageFmt::Rgba32ui,
            _ => return None,
        })
    }
}

/// Everything a graphics stage needs besides the code.
#[derive(Clone, Debug)]
pub struct Gfx {
    /// The decoded SPH.
    pub sph: SphInfo,
    /// The binding layout.
    pub layout: BindingLayout,
    /// Component type per input location (vertex attributes, varyings).
    pub inputs: [CompType; 32],
    /// Component type per output location (varyings, fragment colour targets).
    pub outputs: [CompType; 32],
    /// The shader key for error messages.
    pub key: String,
    /// Fragment: early fragment tests (deko3d program header).
    pub early_fragment_tests: bool,
    /// Tess-eval: domain | spacing << 4 | output primitive << 8 (deko3d `param_c8`; default
    /// triangles, equal spacing, counter-clockwise; names in [`super::pipeline_state::tess`]).
    pub tess_param: u32,
    /// Where `tess_param` came from (the default is [`StateSource::Guessed`]).
    pub tess_source: StateSource,
    /// Geometry: the input primitive when the caller knows it (pipeline state the binary does
    /// not carry); `None` = inferred from the code or guessed (see
    /// [`super::pipeline_state::geometry_input`]).
    pub gs_input: Option<GsInput>,
    /// Component type of each texture slot's data (float unless shader_facts says).
    pub textures: [CompType; 32],
    /// Texture slots that are texel buffers (`samplerBuffer`; bit n = slot n): a `TLD` of
    /// type 1D on one is a buffer fetch (the instruction does not tell them apart).
    pub texel_buffers: u32,
    /// Format of each image slot (unknown unless shader_facts says).
    pub images: [ImageFmt; 8],
    /// (clip count C, cull count K): distance slots a\[0x2c0 + 4i\] with i < C are
    /// `gl_ClipDistance[i]`, slots from C on are `gl_CullDistance[i − C]`
    /// (the array covers K and the slots the SPH marks after C; unwritten ones stay 0). The SPH marks clip
    /// and cull slots alike (in groups of four) and the split is pipeline state, so it comes
    /// from the caller (GLSL declarations, `--clip-cull`); `None` = every slot a clip distance.
    pub clip_cull: Option<(u32, u32)>,
}

impl Gfx {
    /// Takes the tessellation-evaluation parameters from the container (the DKSH header).
    pub fn tess_from_container(&mut self, param: u32) {
        self.tess_param = param;
        self.tess_source = StateSource::Container;
    }
    /// A configuration with float I/O.
    pub fn new(sph: SphInfo, layout: BindingLayout, key: impl Into<String>) -> Self {
        Gfx {
            sph,
            layout,
            inputs: [CompType::Float; 32],
            outputs: [CompType::Float; 32],
            key: key.into(),
            early_fragment_tests: false,
            tess_param: super::pipeline_state::tess::DEFAULT,
            tess_source: StateSource::Guessed,
            gs_input: None,
            textures: [CompType::Float; 32],
            texel_buffers: 0,
            images: [ImageFmt::Unknown; 8],
            clip_cull: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deko3d_and_nvn_slots_are_data() {
        let d = BindingLayout::deko3d(Stage::Fragment);
        // TEXS handle index 0x1a4 = byte 0x690: fragment sampler 0; 0x1a5: sampler 1.
        assert_eq!(d.texture_at(4 * 0x1a4), Some(0));
        assert_eq!(d.texture_at(4 * 0x1a5), Some(1));
        // Images at B + 0x80: handle index 0x1c4 = image 0.
        assert_eq!(d.image_at(4 * 0x1c4), Some(0));
        assert_eq!(d.texture_at(4 * 0x1c4), None);
        assert_eq!(
            BindingLayout::deko3d(Stage::Vertex).texture_at(4 * 0x4),
            Some(0)
        );
        assert_eq!(d.sbuf_base, Some(0x730));
        assert_eq!(
            BindingLayout::deko3d(Stage::Compute).sbuf_base,
            Some(0x140),
            "dksh README: compute storage buffers at 0x140 + 16n"
        );
        assert_eq!(
            BindingLayout::nvn(Stage::Vertex, 0x20).sbuf_base,
            Some(0x110)
        );
        assert_eq!(
            BindingLayout::nvn(Stage::Compute, 0x20).sbuf_base,
            Some(0x310)
        );
        assert_eq!(
            BindingLayout::nvn(Stage::Fragment, 0x20).sbuf_base,
            Some(0x510)
        );
        assert_eq!(BindingLayout::nvn(Stage::Geometry, 0x20).sbuf_base, None);
        assert_eq!(BindingLayout::cuda(0x140).sbuf_table(), None);
        let t = d.sbuf_table().expect("deko3d table");
        assert_eq!(t.slot_at(0x730 + 0x10, false), Some(1));
        assert_eq!(t.slot_at(0x730 + 0x14, true), Some(1));
        assert_eq!(
            t.slot_at(0x730 + 0x18, false),
            None,
            "the size word is no base"
        );
        assert_eq!(t.slot_at(0x730 + 0x100, false), None, "16 slots");
        // NVN: texture r at c[2][base + 8r], handle index 0x8 + 2r (Mario) or 0x5a + 2r.
        let n = BindingLayout::nvn(Stage::Fragment, 0x20);
        assert_eq!(n.tex_bank, 2);
        assert_eq!(n.texture_at(4 * 0xa), Some(1));
        assert_eq!(n.texture_at(0x24), None, "NVN handles are 8 bytes apart");
        let n2 = BindingLayout::nvn(Stage::Fragment, 0x168);
        assert_eq!(n2.texture_at(0x170), Some(1));
        assert_eq!(n2.first_ubo_bank, 3);
        // CUDA: handle index 0x52 = c[0][0x148] = parameter word 2 (the second .u64 param).
        let c = BindingLayout::cuda(0x140);
        assert_eq!(c.texture_at(4 * 0x52), Some(2));
        assert_eq!(c.image_at(4 * 0x56), Some(6));
        assert_eq!(c.texture_at(0x13c), None);
        // NVK: fs_sampler_array_dyn's set 1 (README §4.2): layersTex[4] at 0x0-0xc, palette
        // at 0x10, ramp at 0x14; fs_image_store's images at 0x0 / 0x8 / 0x10 (8-byte
        // descriptors: slots 0, 2, 4); vs_image_fp64's texel buffer at 0x0 of set 2.
        let k = BindingLayout::nvk(1, 2);
        assert_eq!(k.texture_at(0x14), Some(5));
        assert_eq!(k.image_at(0x10), Some(4));
        assert_eq!(k.image_at(0x0), Some(0));
        assert_eq!((k.image_bank, k.sbuf_table()), (2, None));
    }
}
