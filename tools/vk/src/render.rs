//! Render jobs: a vertex + fragment pair, with an optional geometry stage and tessellation
//! stages between them, drawn into offscreen color targets, read back. A geometry shader may
//! also come lowered (docs/geometry.md: [`LoweredGeometry`]): a capture vertex pass, a compute
//! kernel and an indexed draw, the way Metal runs it, in one submission; tessellation stages
//! likewise ([`LoweredTessellation`]): a capture pass and a control kernel, the host's
//! tessellator ([`crate::tessellator`]) between two submissions, and the evaluation draw.
//!
//! Descriptor sets: every stage's reflection uses set 0 (docs/reflection.md). Guest bindings
//! are per stage (a vertex and a fragment shader may both use uniform block 0 with different
//! data), so the runner gives each stage a set of its own: the vertex stage's resources in
//! set 0, the fragment stage's in set 1, then the tessellation control, tessellation
//! evaluation and geometry stages' in the next sets in that order (those present), rewriting
//! each module's `DescriptorSet 0` decorations to its set. A lowered geometry pipeline's
//! pipelines each have their own layout: the capture pass's resources (its own and the
//! geometry buffers) in set 0, the kernel's in set 0 of the compute pipeline, and the final
//! draw's vertex stage in set 0 with the fragment stage's in set 1 (a lowered tessellation
//! pipeline's capture, control kernel and evaluation draw the same way).

use std::time::Instant;

use ash::vk;

use dmsh_reflect::LoweredBuffer;

use crate::bind;
use crate::compute::{self, Bind, BufferSpec, PointerPatch};
use crate::device::{Device, Scope};
use crate::error::{Error, VkCtx};
use crate::image::{self, TexFormat, TextureSpec};
use crate::reflection::Reflection;
use crate::tessellator::{self, Mode, Output};

/// One shader of the pair.
#[derive(Debug, Clone, Default)]
pub struct Stage {
    /// SPIR-V words.
    pub spirv: Vec<u32>,
    /// Its reflection (entry point, resources).
    pub reflection: Reflection,
}

/// A vertex buffer binding.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VertexBuffer {
    /// Bytes.
    pub data: Vec<u8>,
    /// Bytes per vertex (or instance).
    pub stride: u32,
    /// Advance per instance instead of per vertex.
    pub per_instance: bool,
}

/// A vertex attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VertexAttribute {
    /// Shader input location.
    pub location: u32,
    /// Vertex buffer index.
    pub binding: u32,
    /// Vulkan format of the data.
    pub format: vk::Format,
    /// Byte offset inside the vertex.
    pub offset: u32,
}

/// Parses an attribute format name: `r32f rg32f rgb32f rgba32f`, `r32u…rgba32u`,
/// `r32i…rgba32i`, `rg16f rgba16f`, `rgba16u rgba16i`, `rg16unorm rg16snorm rgba16unorm
/// rgba16snorm`, `rgba8unorm rgba8snorm rgba8u rgba8i`, `bgra8unorm`, `rgb10a2unorm`.
pub fn attribute_format(s: &str) -> Result<vk::Format, Error> {
    use vk::Format as F;
    Ok(match s.to_ascii_lowercase().as_str() {
        "r32f" => F::R32_SFLOAT,
        "rg32f" => F::R32G32_SFLOAT,
        "rgb32f" => F::R32G32B32_SFLOAT,
        "rgba32f" => F::R32G32B32A32_SFLOAT,
        "r32u" => F::R32_UINT,
        "rg32u" => F::R32G32_UINT,
        "rgb32u" => F::R32G32B32_UINT,
        "rgba32u" => F::R32G32B32A32_UINT,
        "r32i" => F::R32_SINT,
        "rg32i" => F::R32G32_SINT,
        "rgb32i" => F::R32G32B32_SINT,
        "rgba32i" => F::R32G32B32A32_SINT,
        "rg16f" => F::R16G16_SFLOAT,
        "rgba16f" => F::R16G16B16A16_SFLOAT,
        "rgba16u" => F::R16G16B16A16_UINT,
        "rgba16i" => F::R16G16B16A16_SINT,
        "rg16unorm" => F::R16G16_UNORM,
        "rg16snorm" => F::R16G16_SNORM,
        "rgba16unorm" => F::R16G16B16A16_UNORM,
        "rgba16snorm" => F::R16G16B16A16_SNORM,
        "rgba8unorm" => F::R8G8B8A8_UNORM,
        "rgba8snorm" => F::R8G8B8A8_SNORM,
        "rgba8u" => F::R8G8B8A8_UINT,
        "rgba8i" => F::R8G8B8A8_SINT,
        "bgra8unorm" => F::B8G8R8A8_UNORM,
        "rgb10a2unorm" => F::A2B10G10R10_UNORM_PACK32,
        _ => return Err(Error::Job(format!("unknown attribute format {s:?}"))),
    })
}

/// Primitive topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Topology {
    /// Triangle list.
    #[default]
    TriangleList,
    /// Triangle strip.
    TriangleStrip,
    /// Triangle fan.
    TriangleFan,
    /// Line list.
    LineList,
    /// Line strip.
    LineStrip,
    /// Point list.
    PointList,
    /// Line list with adjacency (4 vertices per line; needs a geometry stage's feature).
    LineListAdjacency,
    /// Line strip with adjacency.
    LineStripAdjacency,
    /// Triangle list with adjacency (6 vertices per triangle).
    TriangleListAdjacency,
    /// Triangle strip with adjacency.
    TriangleStripAdjacency,
}

impl Topology {
    /// Every topology, in the order of [`Topology::parse`]'s names.
    pub const ALL: [Topology; 10] = [
        Topology::PointList,
        Topology::LineList,
        Topology::LineStrip,
        Topology::TriangleList,
        Topology::TriangleStrip,
        Topology::TriangleFan,
        Topology::LineListAdjacency,
        Topology::LineStripAdjacency,
        Topology::TriangleListAdjacency,
        Topology::TriangleStripAdjacency,
    ];

    /// Parses `point_list`, `line_list`, `line_strip`, `triangle_list`, `triangle_strip`,
    /// `triangle_fan`, `line_list_adjacency`, `line_strip_adjacency`,
    /// `triangle_list_adjacency`, `triangle_strip_adjacency`.
    pub fn parse(s: &str) -> Result<Self, Error> {
        Self::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| Error::Job(format!("unknown topology {s:?}")))
    }

    /// Its name in job files and lowering records (`triangle_list`, …).
    pub fn name(self) -> &'static str {
        match self {
            Topology::PointList => "point_list",
            Topology::LineList => "line_list",
            Topology::LineStrip => "line_strip",
            Topology::TriangleList => "triangle_list",
            Topology::TriangleStrip => "triangle_strip",
            Topology::TriangleFan => "triangle_fan",
            Topology::LineListAdjacency => "line_list_adjacency",
            Topology::LineStripAdjacency => "line_strip_adjacency",
            Topology::TriangleListAdjacency => "triangle_list_adjacency",
            Topology::TriangleStripAdjacency => "triangle_strip_adjacency",
        }
    }

    /// Whether it is one of the four adjacency topologies.
    pub fn is_adjacency(self) -> bool {
        matches!(
            self,
            Topology::LineListAdjacency
                | Topology::LineStripAdjacency
                | Topology::TriangleListAdjacency
                | Topology::TriangleStripAdjacency
        )
    }

    /// The primitives a draw of `vertices` vertices assembles: lists n/k, strips n−k+1, fans
    /// n−2, line strips with adjacency n−3, triangle lists with adjacency n/6, triangle strips
    /// with adjacency (n−4)/2 (0 when too few vertices).
    pub fn primitives(self, vertices: u32) -> u32 {
        let n = vertices;
        match self {
            Topology::PointList => n,
            Topology::LineList => n / 2,
            Topology::LineStrip => n.saturating_sub(1),
            Topology::TriangleList => n / 3,
            Topology::TriangleStrip | Topology::TriangleFan => n.saturating_sub(2),
            Topology::LineListAdjacency => n / 4,
            Topology::LineStripAdjacency => n.saturating_sub(3),
            Topology::TriangleListAdjacency => n / 6,
            Topology::TriangleStripAdjacency => n.saturating_sub(4) / 2,
        }
    }

    /// The Vulkan topology.
    pub fn vk(self) -> vk::PrimitiveTopology {
        use vk::PrimitiveTopology as P;
        match self {
            Topology::TriangleList => P::TRIANGLE_LIST,
            Topology::TriangleStrip => P::TRIANGLE_STRIP,
            Topology::TriangleFan => P::TRIANGLE_FAN,
            Topology::LineList => P::LINE_LIST,
            Topology::LineStrip => P::LINE_STRIP,
            Topology::PointList => P::POINT_LIST,
            Topology::LineListAdjacency => P::LINE_LIST_WITH_ADJACENCY,
            Topology::LineStripAdjacency => P::LINE_STRIP_WITH_ADJACENCY,
            Topology::TriangleListAdjacency => P::TRIANGLE_LIST_WITH_ADJACENCY,
            Topology::TriangleStripAdjacency => P::TRIANGLE_STRIP_WITH_ADJACENCY,
        }
    }
}

/// A stage between the vertex and fragment stages, with its bindings.
#[derive(Debug, Clone, Default)]
pub struct MiddleStage {
    /// The shader.
    pub stage: Stage,
    /// Its bindings (of the job's buffers and textures).
    pub binds: Vec<Bind>,
}

/// The tessellation stages of a render job: the draw's vertices are patches of
/// `patch_points` control points (the job's topology is then ignored).
#[derive(Debug, Clone, Default)]
pub struct Tessellation {
    /// The tessellation control shader.
    pub control: MiddleStage,
    /// The tessellation evaluation shader.
    pub eval: MiddleStage,
    /// Control points per input patch (1–32).
    pub patch_points: u32,
}

/// A geometry shader lowered into three passes that a pipeline without a geometry stage runs
/// (docs/geometry.md), in place of the job's vertex shader: each module's reflection has a
/// `lowering` record naming its pass, and the buffers between the passes are its `geometry`
/// resources (set 0, binding 240 + role), which the runner makes, zero-filled.
///
/// In one submission: the capture pass draws the job's vertices (its vertex buffers,
/// attributes, count and topology) with rasterization off, writing one vertex record per
/// vertex index into `vertices_in`; the kernel runs one invocation per input primitive ×
/// geometry-shader invocation (`ceil(prims × invocations / local_size)` workgroups), writing
/// `vertices_out` and the `indices` list; the draw pass draws prims × invocations ×
/// `indices_per_invocation` of those indices (the index buffer, 32-bit) as a list of the
/// kernel's `output` primitive, with the job's fragment shader, targets and state.
#[derive(Debug, Clone, Default)]
pub struct LoweredGeometry {
    /// `vertex_capture`: the application's vertex shader writing vertex records; bound with
    /// the job's `vertex_binds`.
    pub capture: Stage,
    /// `geometry_kernel`: the geometry shader as a compute kernel, with its own binds.
    pub kernel: MiddleStage,
    /// `geometry_draw`: the pass-through vertex shader reading the kernel's vertex records
    /// (geometry buffers only; no vertex input).
    pub draw: Stage,
}

/// Tessellation stages lowered into the passes Metal runs (docs/exec-job.md
/// "lowered_tessellation"), in place of the job's vertex shader: each module's reflection has
/// a `lowering` record naming its pass; the buffers between the passes are its `lowered`
/// resources (set 0, binding 240 + role), which the runner makes, zero-filled.
///
/// The capture pass draws the job's vertices as points with rasterization off, writing one
/// vertex record per vertex index into `vertices_in`; the control kernel runs one workgroup
/// per patch of `patch_points` vertices, one invocation per output control point, writing
/// `control_points`, `patch_data` and Metal's `tess_factors`. After that submission the
/// runner reads the factors back and tessellates every patch on the host
/// ([`crate::tessellator`], for the evaluation module's `tessellation` mode) into
/// `domain_points`, and a second submission draws them with the evaluation module (a vertex
/// shader) and the job's fragment shader, targets and state.
#[derive(Debug, Clone, Default)]
pub struct LoweredTessellation {
    /// `vertex_capture`: the application's vertex shader writing vertex records; bound with
    /// the job's `vertex_binds`.
    pub capture: Stage,
    /// `tess_control_kernel`: the tessellation control shader as a compute kernel (local size
    /// = its output control points), with the control stage's binds.
    pub control: MiddleStage,
    /// `tess_eval_draw`: the tessellation evaluation shader as a vertex shader over the domain
    /// points, with the evaluation stage's binds; its reflection's `tessellation` record gives
    /// the domain, spacing and output.
    pub eval: MiddleStage,
    /// Input control points per patch (1–32): the draw's vertices are patches of this many.
    pub patch_points: u32,
}

/// One draw of a vertex + fragment pair (and optional geometry and tessellation stages).
#[derive(Debug, Clone, Default)]
pub struct RenderJob {
    /// Vertex shader.
    pub vertex: Stage,
    /// Fragment shader.
    pub fragment: Stage,
    /// Target width in pixels.
    pub width: u32,
    /// Target height in pixels.
    pub height: u32,
    /// Color targets (location n = target n); empty means one `rgba8` target.
    pub targets: Vec<TexFormat>,
    /// Clear color of every target.
    pub clear: [f32; 4],
    /// Standard alpha blending (src alpha, one minus src alpha) instead of replace.
    pub blend: bool,
    /// Dual-source blending instead (needs the dualSrcBlend feature; target 0 only): colour
    /// = source 0 × SRC1_COLOR + destination × ONE_MINUS_SRC1_COLOR, alpha likewise with
    /// SRC1_ALPHA, source 1 being the fragment output at location 0 index 1.
    pub dual_source: bool,
    /// A 32-bit float depth target as well (single-sampled, one layer): cleared to 1, every
    /// fragment's depth written (compare ALWAYS), read back as [`RenderOutputs::depth`].
    pub depth: bool,
    /// Samples per pixel (0 or 1: single-sampled; 2, 4, 8: multisampled targets resolved
    /// (averaged) into the read-back images; float and normalised formats only).
    pub samples: u32,
    /// Framebuffer layers (0 or 1: one). With more, every target is a 2D array the shaders
    /// select with `gl_Layer`; the read-back image stacks the layers vertically.
    pub layers: u32,
    /// Viewports as (x, y, width, height) in pixels; empty means one covering the target.
    /// Several need the multiViewport feature (`gl_ViewportIndex`).
    pub viewports: Vec<[f32; 4]>,
    /// Vertex buffers.
    pub vertex_buffers: Vec<VertexBuffer>,
    /// Vertex attributes.
    pub attributes: Vec<VertexAttribute>,
    /// Vertices to draw.
    pub vertex_count: u32,
    /// Instances (0 means 1).
    pub instance_count: u32,
    /// Topology.
    pub topology: Topology,
    /// Buffers (uniform / storage) shared by both stages' binds.
    pub buffers: Vec<BufferSpec>,
    /// Textures and images shared by both stages' binds.
    pub textures: Vec<TextureSpec>,
    /// Vertex stage bindings.
    pub vertex_binds: Vec<Bind>,
    /// Fragment stage bindings.
    pub fragment_binds: Vec<Bind>,
    /// Device addresses written into buffers before the draw.
    pub pointers: Vec<PointerPatch>,
    /// A geometry stage (needs the geometryShader feature).
    pub geometry: Option<MiddleStage>,
    /// Tessellation stages (need the tessellationShader feature).
    pub tessellation: Option<Tessellation>,
    /// A lowered geometry pipeline drawn instead of `vertex` (then ignored) and without
    /// `geometry`; needs the vertexPipelineStoresAndAtomics feature.
    pub lowered_geometry: Option<LoweredGeometry>,
    /// A lowered tessellation pipeline drawn instead of `vertex` (then ignored), without
    /// `geometry`, `tessellation` or `lowered_geometry`; the job's topology is ignored. Needs
    /// the vertexPipelineStoresAndAtomics feature.
    pub lowered_tessellation: Option<LoweredTessellation>,
}

/// One shader of a draw as the runner binds it.
struct StageUse<'a> {
    /// The shader.
    stage: &'a Stage,
    /// The job's binds for its resources.
    binds: &'a [Bind],
    /// Its role, in messages (`vertex`, `geometry_kernel`, …).
    name: &'static str,
    /// The stage its reflection must name (when it names one).
    reflection_stage: &'static str,
    /// Its Vulkan stage.
    flag: vk::ShaderStageFlags,
    /// Its descriptor set in its pipeline's layout.
    set: u32,
    /// A pass of a lowered geometry pipeline (its `geometry` resources are the runner's
    /// buffers).
    lowered: bool,
}

impl<'a> StageUse<'a> {
    /// A stage of a plain draw: its reflection names the stage `name`, its resources are the
    /// job's.
    fn plain(
        stage: &'a Stage,
        binds: &'a [Bind],
        name: &'static str,
        flag: vk::ShaderStageFlags,
        set: u32,
    ) -> Self {
        StageUse {
            stage,
            binds,
            name,
            reflection_stage: name,
            flag,
            set,
            lowered: false,
        }
    }
}

impl RenderJob {
    /// Every shader with its bindings, in descriptor-set order: vertex, fragment,
    /// tessellation control and evaluation, geometry; with a lowered geometry or tessellation
    /// pipeline: capture, fragment, kernel, draw (at [`LOWERED_CAPTURE`] … [`LOWERED_DRAW`]).
    fn stages(&self) -> Vec<StageUse<'_>> {
        use vk::ShaderStageFlags as F;
        let fragment = StageUse::plain(
            &self.fragment,
            &self.fragment_binds,
            "fragment",
            F::FRAGMENT,
            1,
        );
        let pass = |stage, binds, name, reflection_stage, flag| StageUse {
            stage,
            binds,
            name,
            reflection_stage,
            flag,
            set: 0,
            lowered: true,
        };
        if let Some(lt) = &self.lowered_tessellation {
            let (c, e) = (&lt.control, &lt.eval);
            return vec![
                pass(
                    &lt.capture,
                    &self.vertex_binds,
                    "vertex_capture",
                    "vertex",
                    F::VERTEX,
                ),
                fragment,
                pass(
                    &c.stage,
                    &c.binds,
                    "tess_control_kernel",
                    "compute",
                    F::COMPUTE,
                ),
                pass(&e.stage, &e.binds, "tess_eval_draw", "vertex", F::VERTEX),
            ];
        }
        if let Some(lg) = &self.lowered_geometry {
            let k = &lg.kernel;
            return vec![
                pass(
                    &lg.capture,
                    &self.vertex_binds,
                    "vertex_capture",
                    "vertex",
                    F::VERTEX,
                ),
                fragment,
                pass(&k.stage, &k.binds, "geometry_kernel", "compute", F::COMPUTE),
                pass(&lg.draw, &[], "geometry_draw", "vertex", F::VERTEX),
            ];
        }
        let vertex = StageUse::plain(&self.vertex, &self.vertex_binds, "vertex", F::VERTEX, 0);
        let mut middle: Vec<(&MiddleStage, &'static str, F)> = Vec::new();
        if let Some(t) = &self.tessellation {
            middle.push((&t.control, "tess_control", F::TESSELLATION_CONTROL));
            middle.push((&t.eval, "tess_eval", F::TESSELLATION_EVALUATION));
        }
        if let Some(g) = &self.geometry {
            middle.push((g, "geometry", F::GEOMETRY));
        }
        let mut v = vec![vertex, fragment];
        for (m, name, flag) in middle {
            let set = v.len() as u32;
            v.push(StageUse::plain(&m.stage, &m.binds, name, flag, set));
        }
        v
    }
}

/// Index in [`RenderJob::stages`] of a lowered pipeline's capture pass.
const LOWERED_CAPTURE: usize = 0;
/// … of the fragment stage.
const LOWERED_FRAGMENT: usize = 1;
/// … of the kernel.
const LOWERED_KERNEL: usize = 2;
/// … of the draw pass's vertex stage.
const LOWERED_DRAW: usize = 3;

/// A read-back color target.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Image {
    /// Width.
    pub width: u32,
    /// Height (for layered targets: layer height × layers, layers stacked top to bottom).
    pub height: u32,
    /// Texel format.
    pub format: TexFormat,
    /// Tightly packed rows, top row first.
    pub data: Vec<u8>,
}

/// `a` blending with the second source: colour = source 0 × SRC1_COLOR + destination ×
/// ONE_MINUS_SRC1_COLOR, alpha with SRC1_ALPHA likewise ([`RenderJob::dual_source`]).
fn dual_source(a: vk::PipelineColorBlendAttachmentState) -> vk::PipelineColorBlendAttachmentState {
    use vk::BlendFactor as F;
    let [s, d] = [F::SRC1_COLOR, F::ONE_MINUS_SRC1_COLOR];
    let [sa, da] = [F::SRC1_ALPHA, F::ONE_MINUS_SRC1_ALPHA];
    let a = a.blend_enable(true).color_blend_op(vk::BlendOp::ADD);
    let a = a.src_color_blend_factor(s).dst_color_blend_factor(d);
    a.src_alpha_blend_factor(sa)
        .dst_alpha_blend_factor(da)
        .alpha_blend_op(vk::BlendOp::ADD)
}

impl Image {
    /// The image as RGBA8 (floats clamped to [0, 1]; integers clamped to 255; R formats grey).
    pub fn to_rgba8(&self) -> Vec<u8> {
        let n = (self.width * self.height) as usize;
        let unit = |f: f32| (f.clamp(0.0, 1.0) * 255.0 + 0.5) as u8;
        let mut out = Vec::with_capacity(n * 4);
        let w32 = |i: usize| {
            self.data
                .get(i..i + 4)
                .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        // The half float at byte `i`, as a unit channel.
        let f16_unit = |i: usize| {
            let h = self
                .data
                .get(i..i + 2)
                .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]));
            unit(crate::tessellator::half_to_f32(h))
        };
        for p in 0..n {
            match self.format {
                TexFormat::Rgba8Unorm | TexFormat::Rgba8Uint => {
                    out.extend_from_slice(self.data.get(p * 4..p * 4 + 4).unwrap_or(&[0; 4]))
                }
                TexFormat::Rgba16Float => {
                    for c in 0..4 {
                        out.push(f16_unit(p * 8 + c * 2));
                    }
                }
                TexFormat::Rgba32Float => {
                    for c in 0..4 {
                        out.push(unit(f32::from_bits(w32(p * 16 + c * 4))));
                    }
                }
                TexFormat::R32Float | TexFormat::Depth32Float => {
                    let v = unit(f32::from_bits(w32(p * 4)));
                    out.extend_from_slice(&[v, v, v, 255]);
                }
                TexFormat::R32Uint | TexFormat::R32Sint => {
                    let v = w32(p * 4).min(255) as u8;
                    out.extend_from_slice(&[v, v, v, 255]);
                }
                TexFormat::Rgba32Uint | TexFormat::Rgba32Sint => {
                    for c in 0..4 {
                        out.push(w32(p * 16 + c * 4).min(255) as u8);
                    }
                }
                TexFormat::Rg16Float => {
                    for c in 0..2 {
                        out.push(f16_unit(p * 4 + c * 2));
                    }
                    out.extend_from_slice(&[0, 255]);
                }
            }
        }
        out
    }

    /// PNG (RGBA8) bytes of [`Image::to_rgba8`].
    pub fn to_png(&self) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut out, self.width, self.height);
            enc.set_color(png::ColorType::Rgba);
            enc.set_depth(png::BitDepth::Eight);
            let mut w = enc
                .write_header()
                .map_err(|e| Error::Job(format!("PNG: {e}")))?;
            w.write_image_data(&self.to_rgba8())
                .map_err(|e| Error::Job(format!("PNG: {e}")))?;
        }
        Ok(out)
    }

    /// Fraction of pixels whose RGBA8 channels all lie within `tol` of `other`'s, and the
    /// largest channel difference. Sizes must match (else 0.0 and 255).
    pub fn compare(&self, other: &Image, tol: u8) -> (f64, u8) {
        if self.width != other.width || self.height != other.height {
            return (0.0, 255);
        }
        let (a, b) = (self.to_rgba8(), other.to_rgba8());
        let mut ok = 0usize;
        let mut worst = 0u8;
        for (pa, pb) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
            let d = pa
                .iter()
                .zip(pb)
                .map(|(x, y)| x.abs_diff(*y))
                .max()
                .unwrap_or(0);
            worst = worst.max(d);
            if d <= tol {
                ok += 1;
            }
        }
        (ok as f64 / (a.len() / 4).max(1) as f64, worst)
    }
}

/// What a draw produced.
#[derive(Debug, Clone, Default)]
pub struct RenderOutputs {
    /// Color targets.
    pub targets: Vec<Image>,
    /// Final bytes of every buffer.
    pub buffers: Vec<Vec<u8>>,
    /// Final texels of every texture / storage image, in job order.
    pub images: Vec<Vec<u8>>,
    /// The depth target's values, row by row, when the job asked for one.
    pub depth: Option<Vec<f32>>,
    /// Device name.
    pub device: String,
    /// Milliseconds to create the pipeline.
    pub pipeline_ms: f64,
    /// Milliseconds from submit to fence (includes lavapipe's first-use compile); with a
    /// lowered geometry pipeline, all three passes (one submission); with a lowered
    /// tessellation pipeline, both submissions and the host tessellator.
    pub draw_ms: f64,
    /// GPU milliseconds per pass from timestamp queries: `draw` for a plain draw;
    /// `vertex_capture`, `geometry_kernel` and `geometry_draw` for a lowered geometry
    /// pipeline; `vertex_capture`, `tess_control_kernel`, `tessellator_host` (host
    /// milliseconds of the software tessellator, not GPU time) and `tess_eval_draw` for a
    /// lowered tessellation pipeline. Empty when the queue has no timestamps.
    pub pass_ms: Vec<(String, f64)>,
    /// A lowered geometry pipeline's buffers after the draw, by role (`vertices_in`,
    /// `vertices_out`, `indices`, `params`, `index_source`), or a lowered tessellation
    /// pipeline's (all nine roles, `domain_points` as tessellated); empty otherwise.
    pub geometry: Vec<Vec<u8>>,
}

/// Rewrites `OpDecorate %x DescriptorSet from` to `to` in a SPIR-V module.
pub fn remap_descriptor_set(words: &mut [u32], from: u32, to: u32) {
    let mut i = 5;
    while i < words.len() {
        let n = (words[i] >> 16) as usize;
        let op = words[i] & 0xffff;
        if n == 0 {
            break;
        }
        if op == 71 && n >= 4 && i + 3 < words.len() && words[i + 2] == 34 && words[i + 3] == from {
            words[i + 3] = to;
        }
        i += n;
    }
}

/// Draws on the shared device ([`crate::shared`]).
pub fn render(job: &RenderJob) -> Result<RenderOutputs, Error> {
    crate::device::shared()?.render(job)
}

/// What the runner derives from a lowered geometry pipeline's lowering records for one draw
/// (docs/geometry.md).
#[derive(Debug, Clone, Copy)]
struct LoweredPlan {
    /// Kernel workgroups (in x).
    groups: u32,
    /// Indices the final draw reads.
    index_count: u32,
    /// The final draw's topology (a list of the kernel's output primitive).
    output: vk::PrimitiveTopology,
    /// The capture draw's topology.
    capture_topology: vk::PrimitiveTopology,
    /// Bytes of each geometry buffer, by role.
    sizes: [u64; 5],
    /// The kernel's `params` words.
    params: [u32; 8],
}

/// What the runner derives from a lowered tessellation pipeline's lowering records for one draw
/// (docs/exec-job.md).
#[derive(Debug, Clone, Copy)]
struct TessPlan {
    /// The evaluation stage's domain, spacing and output.
    mode: Mode,
    /// Patches (control-kernel workgroups).
    patches: u32,
    /// The final draw's topology.
    output: vk::PrimitiveTopology,
    /// Bytes of each lowered buffer, by role (`domain_points`: 16 until tessellated).
    sizes: [u64; 9],
    /// The control kernel's `params` words.
    params: [u32; 8],
    /// The largest buffer the device binds.
    limit: u64,
}

/// The contract's vertex and control-point record size, and patch record size.
const TESS_PATCH_BYTES: u32 = 96;

/// The lowering record of `st`, which must be pass `pass`.
fn lowering<'a>(st: &'a Stage, pass: &str) -> Result<&'a dmsh_reflect::Lowering, Error> {
    match &st.reflection.lowering {
        Some(l) if l.pass == pass => Ok(l),
        Some(l) => Err(Error::Job(format!(
            "the {pass} shader's reflection says lowering pass {:?}",
            l.pass
        ))),
        None => Err(Error::Job(format!(
            "the {pass} shader's reflection has no lowering record (docs/geometry.md)"
        ))),
    }
}

/// One graphics pipeline of a draw: its shaders, vertex input and primitive assembly; the
/// rest (viewports, rasterization, samples, blending, depth) is the job's.
struct PipelineShape<'a> {
    /// (module, reflection, stage) of each shader.
    shaders: Vec<(vk::ShaderModule, &'a Reflection, vk::ShaderStageFlags)>,
    /// The pipeline layout.
    layout: vk::PipelineLayout,
    /// Reads the job's vertex buffers and attributes (else no vertex input).
    vertex_input: bool,
    /// Primitive topology.
    topology: vk::PrimitiveTopology,
    /// Control points per patch (tessellation).
    patch_points: Option<u32>,
    /// Rasterizer discard: a pass that only writes buffers.
    discard: bool,
}

/// A pipeline with its layout and descriptor sets (set n = `sets[n]`; null sets are not bound).
struct Bound {
    pipeline: vk::Pipeline,
    layout: vk::PipelineLayout,
    sets: Vec<vk::DescriptorSet>,
}

impl Bound {
    /// Binds the pipeline and its sets.
    ///
    /// # Safety
    /// `cb` is recording; the handles come from `d`.
    unsafe fn bind(&self, d: &ash::Device, cb: vk::CommandBuffer, point: vk::PipelineBindPoint) {
        d.cmd_bind_pipeline(cb, point, self.pipeline);
        for (i, &set) in self.sets.iter().enumerate() {
            if set != vk::DescriptorSet::null() {
                d.cmd_bind_descriptor_sets(cb, point, self.layout, i as u32, &[set], &[]);
            }
        }
    }
}

/// Creates the render pass of the job's targets (single-sampled read-back targets, then the
/// multisampled ones they resolve from, then the depth target; everything cleared) and its
/// framebuffer over `views` (in that order).
fn target_pass(
    s: &mut Scope<'_>,
    job: &RenderJob,
    targets: &[TexFormat],
    views: &[vk::ImageView],
) -> Result<(vk::RenderPass, vk::Framebuffer), Error> {
    let msaa = job.samples > 1;
    let d = &s.dev.device;
    // Attachments: the read-back targets, then (multisampled) the sampled targets.
    let att = |f: &TexFormat, samples: u32, load: vk::AttachmentLoadOp| {
        vk::AttachmentDescription::default()
            .format(f.vk())
            .samples(image::sample_flags(samples))
            .load_op(load)
            .store_op(vk::AttachmentStoreOp::STORE)
            .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
            .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
            .initial_layout(vk::ImageLayout::UNDEFINED)
            .final_layout(vk::ImageLayout::GENERAL)
    };
    let n = targets.len() as u32;
    let mut atts: Vec<vk::AttachmentDescription> = targets
        .iter()
        .map(|f| {
            let load = if msaa {
                vk::AttachmentLoadOp::DONT_CARE
            } else {
                vk::AttachmentLoadOp::CLEAR
            };
            att(f, 1, load)
        })
        .collect();
    if msaa {
        atts.extend(
            targets
                .iter()
                .map(|f| att(f, job.samples, vk::AttachmentLoadOp::CLEAR)),
        );
    }
    let aref = |i: u32| {
        vk::AttachmentReference::default()
            .attachment(i)
            .layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
    };
    let (refs, resolves): (Vec<_>, Vec<_>) = if msaa {
        ((n..2 * n).map(aref).collect(), (0..n).map(aref).collect())
    } else {
        ((0..n).map(aref).collect(), Vec::new())
    };
    let dref = vk::AttachmentReference::default()
        .attachment(atts.len() as u32)
        .layout(vk::ImageLayout::DEPTH_STENCIL_ATTACHMENT_OPTIMAL);
    if job.depth {
        atts.push(att(
            &TexFormat::Depth32Float,
            1,
            vk::AttachmentLoadOp::CLEAR,
        ));
    }
    let mut sub0 = vk::SubpassDescription::default()
        .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
        .color_attachments(&refs);
    if job.depth {
        sub0 = sub0.depth_stencil_attachment(&dref);
    }
    if msaa {
        sub0 = sub0.resolve_attachments(&resolves);
    }
    let sub = [sub0];
    let dep = [vk::SubpassDependency::default()
        .src_subpass(0)
        .dst_subpass(vk::SUBPASS_EXTERNAL)
        .src_stage_mask(vk::PipelineStageFlags::ALL_GRAPHICS)
        .dst_stage_mask(vk::PipelineStageFlags::ALL_COMMANDS)
        .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
        .dst_access_mask(vk::AccessFlags::MEMORY_READ)];
    // SAFETY: valid device; each handle is recorded in the scope right after creation.
    unsafe {
        let rp = d
            .create_render_pass(
                &vk::RenderPassCreateInfo::default()
                    .attachments(&atts)
                    .subpasses(&sub)
                    .dependencies(&dep),
                None,
            )
            .vk("vkCreateRenderPass")?;
        s.render_passes.push(rp);
        let fb = d
            .create_framebuffer(
                &vk::FramebufferCreateInfo::default()
                    .render_pass(rp)
                    .attachments(views)
                    .width(job.width)
                    .height(job.height)
                    .layers(job.layers.max(1)),
                None,
            )
            .vk("vkCreateFramebuffer")?;
        s.framebuffers.push(fb);
        Ok((rp, fb))
    }
}

/// Creates a graphics pipeline of `shape` in subpass 0 of `rp`, with the job's viewports,
/// rasterization (fill, no culling, counter-clockwise front), samples, blending and depth.
fn graphics_pipeline(
    s: &mut Scope<'_>,
    job: &RenderJob,
    targets: &[TexFormat],
    rp: vk::RenderPass,
    shape: &PipelineShape<'_>,
) -> Result<vk::Pipeline, Error> {
    let entries = shape
        .shaders
        .iter()
        .map(|st| std::ffi::CString::new(st.1.entry_name()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| Error::Job("entry point name contains NUL".into()))?;
    let stage_info: Vec<vk::PipelineShaderStageCreateInfo> = shape
        .shaders
        .iter()
        .zip(&entries)
        .map(|(&(m, _, flag), e)| {
            vk::PipelineShaderStageCreateInfo::default()
                .stage(flag)
                .module(m)
                .name(e)
        })
        .collect();
    let (vb_desc, at_desc): (Vec<_>, Vec<_>) = if shape.vertex_input {
        let vb = job
            .vertex_buffers
            .iter()
            .enumerate()
            .map(|(i, b)| {
                vk::VertexInputBindingDescription::default()
                    .binding(i as u32)
                    .stride(b.stride)
                    .input_rate(if b.per_instance {
                        vk::VertexInputRate::INSTANCE
                    } else {
                        vk::VertexInputRate::VERTEX
                    })
            })
            .collect();
        let at = job
            .attributes
            .iter()
            .map(|a| {
                vk::VertexInputAttributeDescription::default()
                    .location(a.location)
                    .binding(a.binding)
                    .format(a.format)
                    .offset(a.offset)
            })
            .collect();
        (vb, at)
    } else {
        (Vec::new(), Vec::new())
    };
    let vi = vk::PipelineVertexInputStateCreateInfo::default()
        .vertex_binding_descriptions(&vb_desc)
        .vertex_attribute_descriptions(&at_desc);
    let ia = vk::PipelineInputAssemblyStateCreateInfo::default().topology(shape.topology);
    let ts = vk::PipelineTessellationStateCreateInfo::default()
        .patch_control_points(shape.patch_points.unwrap_or(1));
    let full = [0.0, 0.0, job.width as f32, job.height as f32];
    let vp: Vec<vk::Viewport> = if job.viewports.is_empty() {
        vec![full]
    } else {
        job.viewports.clone()
    }
    .iter()
    .map(|v| vk::Viewport {
        x: v[0],
        y: v[1],
        width: v[2],
        height: v[3],
        min_depth: 0.0,
        max_depth: 1.0,
    })
    .collect();
    let sc: Vec<vk::Rect2D> = vp
        .iter()
        .map(|_| vk::Rect2D {
            offset: vk::Offset2D { x: 0, y: 0 },
            extent: vk::Extent2D {
                width: job.width,
                height: job.height,
            },
        })
        .collect();
    let vps = vk::PipelineViewportStateCreateInfo::default()
        .viewports(&vp)
        .scissors(&sc);
    let rs = vk::PipelineRasterizationStateCreateInfo::default()
        .rasterizer_discard_enable(shape.discard)
        .polygon_mode(vk::PolygonMode::FILL)
        .cull_mode(vk::CullModeFlags::NONE)
        .front_face(vk::FrontFace::COUNTER_CLOCKWISE)
        .line_width(1.0);
    let msi = vk::PipelineMultisampleStateCreateInfo::default()
        .rasterization_samples(image::sample_flags(job.samples));
    let cba: Vec<vk::PipelineColorBlendAttachmentState> = targets
        .iter()
        .map(|f| {
            let blendable = matches!(
                f,
                TexFormat::Rgba8Unorm
                    | TexFormat::Rgba16Float
                    | TexFormat::Rgba32Float
                    | TexFormat::R32Float
            );
            vk::PipelineColorBlendAttachmentState::default()
                .blend_enable(job.blend && blendable)
                .src_color_blend_factor(vk::BlendFactor::SRC_ALPHA)
                .dst_color_blend_factor(vk::BlendFactor::ONE_MINUS_SRC_ALPHA)
                .color_blend_op(vk::BlendOp::ADD)
                .src_alpha_blend_factor(vk::BlendFactor::ONE)
                .dst_alpha_blend_factor(vk::BlendFactor::ONE_MINUS_SRC_ALPHA)
                .alpha_blend_op(vk::BlendOp::ADD)
                .color_write_mask(vk::ColorComponentFlags::RGBA)
        })
        .map(|a| if job.dual_source { dual_source(a) } else { a })
        .collect();
    let cb = vk::PipelineColorBlendStateCreateInfo::default().attachments(&cba);
    let ds = vk::PipelineDepthStencilStateCreateInfo::default()
        .depth_test_enable(true)
        .depth_write_enable(true)
        .depth_compare_op(vk::CompareOp::ALWAYS);
    let mut ci = [vk::GraphicsPipelineCreateInfo::default()
        .stages(&stage_info)
        .vertex_input_state(&vi)
        .input_assembly_state(&ia)
        .viewport_state(&vps)
        .rasterization_state(&rs)
        .multisample_state(&msi)
        .color_blend_state(&cb)
        .layout(shape.layout)
        .render_pass(rp)
        .subpass(0)];
    if job.depth {
        ci[0] = ci[0].depth_stencil_state(&ds);
    }
    if shape.patch_points.is_some() {
        ci[0] = ci[0].tessellation_state(&ts);
    }
    // SAFETY: the modules, layout and render pass come from this device; the pipeline is
    // recorded in the scope.
    let made = unsafe {
        s.dev
            .device
            .create_graphics_pipelines(vk::PipelineCache::null(), &ci, None)
    };
    s.pipeline("vkCreateGraphicsPipelines", made)
}

/// Begins the job's render pass (every target cleared to `clears`).
///
/// # Safety
/// `cb` is recording, outside a render pass; the handles come from `d`.
unsafe fn begin_pass(
    d: &ash::Device,
    cb: vk::CommandBuffer,
    rp: vk::RenderPass,
    fb: vk::Framebuffer,
    job: &RenderJob,
    clears: &[vk::ClearValue],
) {
    d.cmd_begin_render_pass(
        cb,
        &vk::RenderPassBeginInfo::default()
            .render_pass(rp)
            .framebuffer(fb)
            .render_area(vk::Rect2D {
                offset: vk::Offset2D { x: 0, y: 0 },
                extent: vk::Extent2D {
                    width: job.width,
                    height: job.height,
                },
            })
            .clear_values(clears),
        vk::SubpassContents::INLINE,
    )
}

/// A memory barrier between two passes of one command buffer.
///
/// # Safety
/// `cb` is recording, outside a render pass.
unsafe fn barrier(
    d: &ash::Device,
    cb: vk::CommandBuffer,
    (src_stage, src): (vk::PipelineStageFlags, vk::AccessFlags),
    (dst_stage, dst): (vk::PipelineStageFlags, vk::AccessFlags),
) {
    let mb = [vk::MemoryBarrier::default()
        .src_access_mask(src)
        .dst_access_mask(dst)];
    d.cmd_pipeline_barrier(
        cb,
        src_stage,
        dst_stage,
        vk::DependencyFlags::empty(),
        &mb,
        &[],
        &[],
    );
}

impl Device {
    /// Checks a lowered geometry pipeline against the job and the device and works out its
    /// dispatch, draw and buffer sizes.
    fn lowered_plan(&self, job: &RenderJob, lg: &LoweredGeometry) -> Result<LoweredPlan, Error> {
        let bad = |m: String| Err(Error::Job(m));
        if job.geometry.is_some() {
            return bad(
                "a job has a geometry stage or a lowered geometry pipeline, not both".into(),
            );
        }
        if job.tessellation.is_some() {
            return bad("tessellation before a lowered geometry pipeline is not supported".into());
        }
        if job.instance_count > 1 {
            return bad(format!(
                "{} instances: a lowered geometry pipeline draws one (vertex records are per \
                 vertex index)",
                job.instance_count
            ));
        }
        let capture = lowering(&lg.capture, "vertex_capture")?;
        let k = lowering(&lg.kernel.stage, "geometry_kernel")?;
        let draw = lowering(&lg.draw, "geometry_draw")?;
        if k.record_bytes == 0 || !k.record_bytes.is_multiple_of(4) {
            return bad(format!(
                "geometry_kernel: record_bytes {} is not a positive multiple of 4",
                k.record_bytes
            ));
        }
        for (l, pass) in [(capture, "vertex_capture"), (draw, "geometry_draw")] {
            if l.record_bytes != 0 && l.record_bytes != k.record_bytes {
                return bad(format!(
                    "{pass} records are {} bytes, the kernel's {}",
                    l.record_bytes, k.record_bytes
                ));
            }
        }
        for (v, field) in [
            (k.invocations, "invocations"),
            (k.max_vertices, "max_vertices"),
            (k.indices_per_invocation, "indices_per_invocation"),
        ] {
            if v == 0 {
                return bad(format!("geometry_kernel: lowering {field} is 0"));
            }
        }
        let output = match k.output.as_str() {
            "points" => vk::PrimitiveTopology::POINT_LIST,
            "lines" => vk::PrimitiveTopology::LINE_LIST,
            "triangles" => vk::PrimitiveTopology::TRIANGLE_LIST,
            o => {
                return bad(format!(
                    "geometry_kernel: lowering output {o:?} is not points, lines or triangles"
                ))
            }
        };
        let refl = &lg.kernel.stage.reflection;
        let ls = refl.local_size;
        let threads_per_group: u32 = if ls == [0; 3] {
            0
        } else {
            ls.iter().map(|&x| x.max(1)).product()
        };
        let local = match (k.local_size, threads_per_group) {
            (0, 0) => return bad("geometry_kernel: no local size in the reflection".into()),
            (a, 0) => a,
            (0, b) => b,
            (a, b) if a == b => a,
            (a, _) => {
                return bad(format!(
                    "geometry_kernel: lowering local_size {a}, reflection local_size {ls:?}"
                ))
            }
        };
        let name = job.topology.name();
        if !k.topologies.iter().any(|t| t == name) {
            let serves = if k.topologies.is_empty() {
                "no topology (its lowering lists none)".to_string()
            } else {
                k.topologies.join(", ")
            };
            return bad(format!(
                "the job draws {name}, but the geometry kernel serves {serves}"
            ));
        }
        self.check_kernel(refl)?;
        if !self.info().has("vertexPipelineStoresAndAtomics") {
            return Err(self.unsupported(
                "a lowered geometry pipeline's capture pass needs vertexPipelineStoresAndAtomics",
            ));
        }
        let prims = job.topology.primitives(job.vertex_count);
        let threads = u64::from(prims) * u64::from(k.invocations);
        let groups = threads.div_ceil(u64::from(local));
        let max_groups = self.info().max_workgroup_count[0];
        if groups > u64::from(max_groups) {
            return bad(format!(
                "{prims} primitives × {} invocations need {groups} workgroups of {local}; the \
                 device dispatches at most {max_groups}",
                k.invocations
            ));
        }
        let indices = threads * u64::from(k.indices_per_invocation);
        let Ok(index_count) = u32::try_from(indices) else {
            return bad(format!("{indices} indices do not fit one draw"));
        };
        let rb = u64::from(k.record_bytes);
        let sizes = [
            u64::from(job.vertex_count) * rb,
            (1 + threads * u64::from(k.max_vertices)) * rb,
            indices * 4,
            32,
            16,
        ]
        .map(|n| n.max(16));
        let limit = u64::from(self.info().max_storage_buffer_range).min(1 << 30);
        for (role, &n) in LoweredBuffer::ALL.iter().zip(&sizes) {
            if n > limit {
                return bad(format!(
                    "geometry buffer {} would be {n} bytes; at most {limit}",
                    role.name()
                ));
            }
        }
        let capture_topology = if job.topology.is_adjacency() && !self.info().has("geometryShader")
        {
            // Adjacency topologies need the geometry feature; as points, every vertex is
            // still captured once.
            vk::PrimitiveTopology::POINT_LIST
        } else {
            job.topology.vk()
        };
        Ok(LoweredPlan {
            groups: groups as u32,
            index_count,
            output,
            capture_topology,
            sizes,
            // topology, primitives, first vertex, index size (non-indexed), first index, base
            // vertex, 0, 0.
            params: [job.topology.vk().as_raw() as u32, prims, 0, 0, 0, 0, 0, 0],
        })
    }

    /// Checks a lowered tessellation pipeline against the job and the device and works out its
    /// dispatch and buffer sizes.
    fn tess_plan(&self, job: &RenderJob, lt: &LoweredTessellation) -> Result<TessPlan, Error> {
        let bad = |m: String| Err(Error::Job(m));
        for (other, name) in [
            (job.geometry.is_some(), "a geometry stage"),
            (job.tessellation.is_some(), "tessellation stages"),
            (
                job.lowered_geometry.is_some(),
                "a lowered geometry pipeline",
            ),
        ] {
            if other {
                return bad(format!(
                    "a job has {name} or a lowered tessellation pipeline, not both"
                ));
            }
        }
        if job.instance_count > 1 {
            return bad(format!(
                "{} instances: a lowered tessellation pipeline draws one (vertex records are \
                 per vertex index)",
                job.instance_count
            ));
        }
        if !(1..=32).contains(&lt.patch_points) {
            return bad(format!(
                "lowered tessellation: {} control points per patch; use 1 to 32",
                lt.patch_points
            ));
        }
        let capture = lowering(&lt.capture, "vertex_capture")?;
        let k = lowering(&lt.control.stage, "tess_control_kernel")?;
        let eval = lowering(&lt.eval.stage, "tess_eval_draw")?;
        let rb = k.record_bytes;
        if rb == 0 || !rb.is_multiple_of(4) {
            return bad(format!(
                "tess_control_kernel: record_bytes {rb} is not a positive multiple of 4"
            ));
        }
        for (l, pass) in [(capture, "vertex_capture"), (eval, "tess_eval_draw")] {
            if l.record_bytes != 0 && l.record_bytes != rb {
                return bad(format!(
                    "{pass} records are {} bytes, the control kernel's {rb}",
                    l.record_bytes
                ));
            }
        }
        let cp = k.control_points;
        if !(1..=32).contains(&cp) {
            return bad(format!(
                "tess_control_kernel: lowering control_points {cp}; use 1 to 32"
            ));
        }
        if eval.control_points != 0 && eval.control_points != cp {
            return bad(format!(
                "tess_eval_draw reads patches of {} control points, the control kernel writes {cp}",
                eval.control_points
            ));
        }
        let refl = &lt.control.stage.reflection;
        let ls = refl.local_size;
        let threads: u32 = ls.iter().map(|&x| x.max(1)).product();
        if (ls != [0; 3] && threads != cp) || (k.local_size != 0 && k.local_size != cp) {
            return bad(format!(
                "tess_control_kernel: local size {ls:?} (lowering {}) is not one invocation per \
                 output control point ({cp})",
                k.local_size
            ));
        }
        let Some(t) = &lt.eval.stage.reflection.tessellation else {
            return bad(
                "tess_eval_draw: its reflection has no tessellation record (domain, spacing, \
                 output)"
                    .into(),
            );
        };
        let mode = Mode::from_reflection(t)?;
        let fb = mode.factor_bytes();
        for (l, pass) in [(k, "tess_control_kernel"), (eval, "tess_eval_draw")] {
            if l.factor_bytes != 0 && l.factor_bytes != fb {
                return bad(format!(
                    "{pass}: factor_bytes {} but the {} domain's factors are {fb} bytes",
                    l.factor_bytes, t.domain
                ));
            }
        }
        let pb = if k.patch_bytes == 0 {
            TESS_PATCH_BYTES
        } else {
            k.patch_bytes
        };
        if pb < 24 || !pb.is_multiple_of(4) {
            return bad(format!(
                "tess_control_kernel: patch_bytes {pb} is not a multiple of 4 of at least 24 \
                 (six tessellation levels)"
            ));
        }
        if eval.patch_bytes != 0 && eval.patch_bytes != pb {
            return bad(format!(
                "tess_eval_draw: patch_bytes {}, the control kernel's {pb}",
                eval.patch_bytes
            ));
        }
        self.check_kernel(refl)?;
        if !self.info().has("vertexPipelineStoresAndAtomics") {
            return Err(self.unsupported(
                "a lowered tessellation pipeline's capture pass needs \
                 vertexPipelineStoresAndAtomics",
            ));
        }
        let patches = job.vertex_count / lt.patch_points;
        let max_groups = self.info().max_workgroup_count[0];
        if patches > max_groups {
            return bad(format!(
                "{patches} patches need as many workgroups; the device dispatches at most \
                 {max_groups}"
            ));
        }
        let n = u64::from(patches);
        let mut sizes = [16u64; 9];
        sizes[LoweredBuffer::VerticesIn as usize] = u64::from(job.vertex_count) * u64::from(rb);
        sizes[LoweredBuffer::Params as usize] = 32;
        sizes[LoweredBuffer::ControlPoints as usize] = n * u64::from(cp) * u64::from(rb);
        sizes[LoweredBuffer::PatchData as usize] = n * u64::from(pb);
        sizes[LoweredBuffer::TessFactors as usize] = n * u64::from(fb);
        let sizes = sizes.map(|x| x.max(16));
        let limit = u64::from(self.info().max_storage_buffer_range).min(1 << 30);
        for (role, &size) in LoweredBuffer::ALL.iter().zip(&sizes) {
            if size > limit {
                return bad(format!(
                    "lowered buffer {} would be {size} bytes; at most {limit}",
                    role.name()
                ));
            }
        }
        Ok(TessPlan {
            mode,
            patches,
            output: match mode.output {
                Output::TrianglesCcw | Output::TrianglesCw => vk::PrimitiveTopology::TRIANGLE_LIST,
                Output::Lines => vk::PrimitiveTopology::LINE_LIST,
                Output::Points => vk::PrimitiveTopology::POINT_LIST,
            },
            sizes,
            // Input control points, patches, first vertex, output control points, 0….
            // [4]: the factor layout (0 triangles, 1 quads and isolines), the evaluation
            // shader's domain (docs/tessellation.md).
            params: [
                lt.patch_points,
                patches,
                0,
                cp,
                u32::from(fb == 12),
                0,
                0,
                0,
            ],
            limit,
        })
    }

    /// Draws a render job on this device.
    pub fn render(&self, job: &RenderJob) -> Result<RenderOutputs, Error> {
        let tess = match &job.lowered_tessellation {
            Some(lt) => Some(self.tess_plan(job, lt)?),
            None => None,
        };
        let lowered = match &job.lowered_geometry {
            Some(lg) => Some(self.lowered_plan(job, lg)?),
            None => None,
        };
        // The three-pass pipelines' capture and final draw topologies.
        let three_pass = match (&lowered, &tess) {
            (Some(lp), _) => Some((lp.capture_topology, lp.output)),
            (None, Some(tp)) => Some((vk::PrimitiveTopology::POINT_LIST, tp.output)),
            (None, None) => None,
        };
        let stages = job.stages();
        if job.geometry.is_some() && !self.info().has("geometryShader") {
            return Err(self.unsupported("a geometry stage needs the geometryShader feature"));
        }
        if three_pass.is_none() && job.topology.is_adjacency() && !self.info().has("geometryShader")
        {
            return Err(self.unsupported(format!(
                "topology {} needs the geometryShader feature",
                job.topology.name()
            )));
        }
        if let Some(t) = &job.tessellation {
            if !self.info().has("tessellationShader") {
                return Err(
                    self.unsupported("tessellation stages need the tessellationShader feature")
                );
            }
            if !(1..=32).contains(&t.patch_points) {
                return Err(Error::Job(format!(
                    "{} control points per patch; use 1 to 32",
                    t.patch_points
                )));
            }
        }
        for u in &stages {
            let s = &u.stage.reflection.stage;
            if !s.is_empty() && s != u.reflection_stage {
                return Err(Error::Job(format!(
                    "the {} shader's reflection says stage {s:?}",
                    u.name
                )));
            }
            if u.stage.reflection.resources.iter().any(|r| r.set != 0) {
                return Err(Error::Job(format!(
                    "{}: resources outside descriptor set 0 are not supported",
                    u.name
                )));
            }
        }
        if job.width == 0 || job.height == 0 || job.width > 8192 || job.height > 8192 {
            return Err(Error::Job(format!(
                "target size {}x{} out of range",
                job.width, job.height
            )));
        }
        let layers = job.layers.max(1);
        if layers > 64 {
            return Err(Error::Job(format!("{layers} layers; at most 64")));
        }
        if job.viewports.len() > 16 {
            return Err(Error::Job("at most 16 viewports".into()));
        }
        if job.viewports.len() > 1 && !self.info().has("multiViewport") {
            return Err(self.unsupported("several viewports need the multiViewport feature"));
        }
        let targets = if job.targets.is_empty() {
            vec![TexFormat::Rgba8Unorm]
        } else {
            job.targets.clone()
        };
        let nb = job.buffers.len();
        let plans = stages
            .iter()
            .map(|u| {
                let refl = &u.stage.reflection;
                bind::plan(refl, u.binds, nb, &job.textures, u.name, u.lowered)
            })
            .collect::<Result<Vec<_>, Error>>()?;
        for a in &job.attributes {
            if a.binding as usize >= job.vertex_buffers.len() {
                return Err(Error::Job(format!(
                    "attribute at location {} uses vertex buffer {} of {}",
                    a.location,
                    a.binding,
                    job.vertex_buffers.len()
                )));
            }
        }
        for b in job.buffers.iter() {
            if b.size.max(b.init.len() as u64) > 1 << 30 {
                return Err(Error::Job(format!(
                    "buffer {:?} is {} bytes; more than 1 GiB",
                    b.name, b.size
                )));
            }
        }
        for p in &job.pointers {
            let ok = p.buffer < nb
                && p.target < nb
                && p.offset.checked_add(8).is_some_and(|end| {
                    end <= job.buffers[p.buffer]
                        .size
                        .max(job.buffers[p.buffer].init.len() as u64)
                });
            if !ok {
                return Err(Error::Job(format!("bad pointer patch {p:?}")));
            }
        }

        let _guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        self.check_alive()?;
        let mut s = Scope::new(self);
        let mut need = vec![0u64; nb];
        for p in &plans {
            for (a, b) in need.iter_mut().zip(bind::needed_sizes(p, nb)) {
                *a = (*a).max(b);
            }
        }
        let (idx, imgs) =
            compute::create_resources(&mut s, &job.buffers, &need, &job.pointers, &job.textures)?;
        let mut vbufs = Vec::new();
        for vb in &job.vertex_buffers {
            let i = s.buffer(
                vb.data.len() as u64,
                &vb.data,
                vk::BufferUsageFlags::VERTEX_BUFFER,
            )?;
            vbufs.push(s.buffers[i].buffer);
        }
        // The lowered pipeline's buffers, by role (zero-filled; params written).
        let mut geom: Vec<usize> = Vec::new();
        if let Some(tp) = &tess {
            // Every role (the geometry ones unused, 16 bytes); domain_points is remade once
            // the tessellator has run.
            for role in LoweredBuffer::ALL {
                let init: Vec<u8> = match role {
                    LoweredBuffer::Params => {
                        tp.params.iter().flat_map(|w| w.to_le_bytes()).collect()
                    }
                    _ => Vec::new(),
                };
                geom.push(s.buffer(
                    tp.sizes[role as usize],
                    &init,
                    vk::BufferUsageFlags::STORAGE_BUFFER,
                )?);
            }
        }
        if let Some(lp) = &lowered {
            // The geometry roles (the first five; tessellation's are not made here).
            for role in LoweredBuffer::ALL.into_iter().take(lp.sizes.len()) {
                let (usage, init) = match role {
                    LoweredBuffer::Indices => (vk::BufferUsageFlags::INDEX_BUFFER, Vec::new()),
                    LoweredBuffer::Params => (
                        vk::BufferUsageFlags::empty(),
                        lp.params.iter().flat_map(|w| w.to_le_bytes()).collect(),
                    ),
                    _ => (vk::BufferUsageFlags::empty(), Vec::new()),
                };
                let usage = usage | vk::BufferUsageFlags::STORAGE_BUFFER;
                geom.push(s.buffer(lp.sizes[role as usize], &init, usage)?);
            }
        }
        let msaa = job.samples > 1;
        if msaa {
            if !matches!(job.samples, 2 | 4 | 8) {
                return Err(Error::Job(format!(
                    "{} samples: use 1, 2, 4 or 8",
                    job.samples
                )));
            }
            if targets.iter().any(|f| {
                matches!(
                    f,
                    TexFormat::Rgba8Uint
                        | TexFormat::R32Uint
                        | TexFormat::R32Sint
                        | TexFormat::Rgba32Uint
                        | TexFormat::Rgba32Sint
                )
            }) {
                return Err(Error::Job(
                    "integer targets cannot be resolved; use samples 1".into(),
                ));
            }
        }
        let mut rts = Vec::new();
        let mut ms = Vec::new();
        for (k, f) in targets.iter().enumerate() {
            let mut spec = TextureSpec {
                name: format!("target{k}"),
                width: job.width,
                height: job.height,
                layers,
                format: *f,
                ..Default::default()
            };
            rts.push(image::create(
                &mut s,
                &spec,
                vk::ImageUsageFlags::COLOR_ATTACHMENT,
            )?);
            if msaa {
                spec.samples = job.samples;
                ms.push(image::create(
                    &mut s,
                    &spec,
                    vk::ImageUsageFlags::COLOR_ATTACHMENT,
                )?);
            }
        }
        if job.depth && (msaa || layers > 1) {
            return Err(Error::Job(
                "a depth target needs one sample and one layer".into(),
            ));
        }
        let depth_rt = match job.depth {
            true => Some(image::create(
                &mut s,
                &TextureSpec {
                    name: "depth".into(),
                    width: job.width,
                    height: job.height,
                    format: TexFormat::Depth32Float,
                    ..Default::default()
                },
                vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT,
            )?),
            false => None,
        };
        let t0 = Instant::now();
        let mut modules = Vec::with_capacity(stages.len());
        let mut dsls = Vec::with_capacity(stages.len());
        let mut sets = Vec::with_capacity(stages.len());
        for (u, slots) in stages.iter().zip(&plans) {
            let mut words = u.stage.spirv.clone();
            if u.set > 0 {
                remap_descriptor_set(&mut words, 0, u.set);
            }
            modules.push(s.module(&words)?);
            let (dsl, set) = bind::make_set(&mut s, slots, u.flag, &idx, &imgs, &geom)?;
            dsls.push(dsl);
            sets.push(set);
        }
        let views: Vec<vk::ImageView> = (rts.iter().chain(&ms).chain(&depth_rt))
            .map(|r| r.view)
            .collect();
        let (rp, fb) = target_pass(&mut s, job, &targets, &views)?;
        // The pipelines in the order they run, with their layouts and sets.
        let shader = |k: usize| (modules[k], &stages[k].stage.reflection, stages[k].flag);
        let mut passes: Vec<Bound> = Vec::new();
        match three_pass {
            None => {
                let layout = s.pipeline_layout(&dsls)?;
                let shape = PipelineShape {
                    shaders: (0..stages.len()).map(shader).collect(),
                    layout,
                    vertex_input: true,
                    topology: match job.tessellation {
                        Some(_) => vk::PrimitiveTopology::PATCH_LIST,
                        None => job.topology.vk(),
                    },
                    patch_points: job.tessellation.as_ref().map(|t| t.patch_points),
                    discard: false,
                };
                let pipeline = graphics_pipeline(&mut s, job, &targets, rp, &shape)?;
                passes.push(Bound {
                    pipeline,
                    layout,
                    sets: sets.clone(),
                });
            }
            Some((capture_topology, output)) => {
                let layout = s.pipeline_layout(&[dsls[LOWERED_CAPTURE]])?;
                let shape = PipelineShape {
                    shaders: vec![shader(LOWERED_CAPTURE)],
                    layout,
                    vertex_input: true,
                    topology: capture_topology,
                    patch_points: None,
                    discard: true,
                };
                let pipeline = graphics_pipeline(&mut s, job, &targets, rp, &shape)?;
                passes.push(Bound {
                    pipeline,
                    layout,
                    sets: vec![sets[LOWERED_CAPTURE]],
                });
                let layout = s.pipeline_layout(&[dsls[LOWERED_KERNEL]])?;
                let refl = &stages[LOWERED_KERNEL].stage.reflection;
                let pipeline =
                    compute::compute_pipeline(&mut s, modules[LOWERED_KERNEL], layout, refl)?;
                passes.push(Bound {
                    pipeline,
                    layout,
                    sets: vec![sets[LOWERED_KERNEL]],
                });
                let layout = s.pipeline_layout(&[dsls[LOWERED_DRAW], dsls[LOWERED_FRAGMENT]])?;
                let shape = PipelineShape {
                    shaders: vec![shader(LOWERED_DRAW), shader(LOWERED_FRAGMENT)],
                    layout,
                    vertex_input: false,
                    topology: output,
                    patch_points: None,
                    discard: false,
                };
                let pipeline = graphics_pipeline(&mut s, job, &targets, rp, &shape)?;
                passes.push(Bound {
                    pipeline,
                    layout,
                    sets: vec![sets[LOWERED_DRAW], sets[LOWERED_FRAGMENT]],
                });
            }
        }
        // Timestamps around each pass, where the queue has them.
        let stamps = match (&lowered, &tess) {
            (Some(_), _) => 4,
            (None, Some(_)) => 5,
            (None, None) => 2,
        };
        // SAFETY: valid instance, physical device and device; the pool is recorded in the
        // scope.
        let (query_pool, period, valid_bits) = unsafe {
            let families = self
                .instance
                .get_physical_device_queue_family_properties(self.physical);
            let bits = families
                .get(self.queue_family as usize)
                .map_or(0, |f| f.timestamp_valid_bits);
            let period = self
                .instance
                .get_physical_device_properties(self.physical)
                .limits
                .timestamp_period;
            let pool = if bits > 0 {
                let q = self
                    .device
                    .create_query_pool(
                        &vk::QueryPoolCreateInfo::default()
                            .query_type(vk::QueryType::TIMESTAMP)
                            .query_count(stamps),
                        None,
                    )
                    .vk("vkCreateQueryPool")?;
                s.query_pools.push(q);
                Some(q)
            } else {
                None
            };
            (pool, period, bits)
        };
        let pipeline_ms = t0.elapsed().as_secs_f64() * 1e3;
        let t1 = Instant::now();
        let scope = &s;
        let (images, targets_ref) = (&imgs, &rts);
        let clear_value = |f: &TexFormat| match f {
            TexFormat::Rgba8Uint | TexFormat::R32Uint | TexFormat::Rgba32Uint => vk::ClearValue {
                color: vk::ClearColorValue {
                    uint32: job.clear.map(|c| c as u32),
                },
            },
            TexFormat::R32Sint | TexFormat::Rgba32Sint => vk::ClearValue {
                color: vk::ClearColorValue {
                    int32: job.clear.map(|c| c as i32),
                },
            },
            _ => vk::ClearValue {
                color: vk::ClearColorValue { float32: job.clear },
            },
        };
        let mut clears: Vec<vk::ClearValue> = targets
            .iter()
            .chain(if msaa { &targets[..] } else { &[] })
            .map(clear_value)
            .collect();
        if depth_rt.is_some() {
            clears.push(vk::ClearValue {
                depth_stencil: vk::ClearDepthStencilValue {
                    depth: 1.0,
                    stencil: 0,
                },
            });
        }
        let indices = geom
            .get(LoweredBuffer::Indices as usize)
            .map(|&i| s.buffers[i].buffer);
        let record = |d: &ash::Device, cb: vk::CommandBuffer| {
            for img in images {
                image::record_upload(scope, d, cb, img, vk::ImageLayout::GENERAL);
            }
            // SAFETY: recording into a command buffer in the recording state; every handle
            // comes from this device.
            unsafe {
                let stamp = |k: u32, stage: vk::PipelineStageFlags| {
                    if let Some(q) = query_pool {
                        d.cmd_write_timestamp(cb, stage, q, k);
                    }
                };
                if let Some(q) = query_pool {
                    d.cmd_reset_query_pool(cb, q, 0, stamps);
                }
                let begin = || begin_pass(d, cb, rp, fb, job, &clears);
                let vertex_buffers = || {
                    if !vbufs.is_empty() {
                        let offs = vec![0u64; vbufs.len()];
                        d.cmd_bind_vertex_buffers(cb, 0, &vbufs, &offs);
                    }
                };
                use vk::AccessFlags as A;
                use vk::PipelineBindPoint as P;
                use vk::PipelineStageFlags as S;
                stamp(0, S::TOP_OF_PIPE);
                match &lowered {
                    None => {
                        begin();
                        passes[0].bind(d, cb, P::GRAPHICS);
                        vertex_buffers();
                        d.cmd_draw(cb, job.vertex_count, job.instance_count.max(1), 0, 0);
                        d.cmd_end_render_pass(cb);
                        stamp(1, S::BOTTOM_OF_PIPE);
                    }
                    Some(lp) => {
                        // Pass 1: vertex records into vertices_in.
                        begin();
                        passes[0].bind(d, cb, P::GRAPHICS);
                        vertex_buffers();
                        d.cmd_draw(cb, job.vertex_count, 1, 0, 0);
                        d.cmd_end_render_pass(cb);
                        stamp(1, S::BOTTOM_OF_PIPE);
                        barrier(
                            d,
                            cb,
                            (S::VERTEX_SHADER, A::SHADER_WRITE),
                            (S::COMPUTE_SHADER, A::SHADER_READ | A::SHADER_WRITE),
                        );
                        // Pass 2: the kernel writes vertices_out and indices.
                        if lp.groups > 0 {
                            passes[1].bind(d, cb, P::COMPUTE);
                            d.cmd_dispatch(cb, lp.groups, 1, 1);
                        }
                        stamp(2, S::BOTTOM_OF_PIPE);
                        // Its writes before the draw's vertex and index reads; the first
                        // pass's attachment writes (clears) before the second's.
                        let targets_out = S::COLOR_ATTACHMENT_OUTPUT
                            | S::EARLY_FRAGMENT_TESTS
                            | S::LATE_FRAGMENT_TESTS;
                        let attachment_writes =
                            A::COLOR_ATTACHMENT_WRITE | A::DEPTH_STENCIL_ATTACHMENT_WRITE;
                        barrier(
                            d,
                            cb,
                            (
                                S::COMPUTE_SHADER | targets_out,
                                A::SHADER_WRITE | attachment_writes,
                            ),
                            (
                                S::VERTEX_INPUT | S::VERTEX_SHADER | targets_out,
                                A::INDEX_READ
                                    | A::SHADER_READ
                                    | attachment_writes
                                    | A::COLOR_ATTACHMENT_READ
                                    | A::DEPTH_STENCIL_ATTACHMENT_READ,
                            ),
                        );
                        // Pass 3: the kernel's primitives, indexed, through the fragment
                        // shader.
                        begin();
                        passes[2].bind(d, cb, P::GRAPHICS);
                        if let Some(ib) = indices {
                            d.cmd_bind_index_buffer(cb, ib, 0, vk::IndexType::UINT32);
                        }
                        d.cmd_draw_indexed(cb, lp.index_count, 1, 0, 0, 0);
                        d.cmd_end_render_pass(cb);
                        stamp(3, S::BOTTOM_OF_PIPE);
                    }
                }
            }
            let (stage, access) = match lowered {
                None => (
                    vk::PipelineStageFlags::ALL_GRAPHICS,
                    vk::AccessFlags::SHADER_WRITE,
                ),
                Some(_) => (
                    vk::PipelineStageFlags::ALL_COMMANDS,
                    vk::AccessFlags::SHADER_WRITE,
                ),
            };
            image::host_read_barrier(d, cb, stage, access);
            for rt in targets_ref.iter().chain(images).chain(&depth_rt) {
                image::record_readback(scope, d, cb, rt, vk::ImageLayout::GENERAL);
            }
        };
        // The tessellator's host milliseconds and the domain_points buffer's size.
        let mut tess_host = None;
        match &tess {
            None => s.submit(record)?,
            Some(tp) => {
                use vk::AccessFlags as A;
                use vk::PipelineBindPoint as P;
                use vk::PipelineStageFlags as S;
                let stamp = |d: &ash::Device, cb, k: u32, stage: S| {
                    if let Some(q) = query_pool {
                        // SAFETY: `cb` is recording; the pool is this device's.
                        unsafe { d.cmd_write_timestamp(cb, stage, q, k) };
                    }
                };
                // Submission 1: capture, then the control kernel; its factors to the host.
                s.submit(|d, cb| {
                    for img in &imgs {
                        image::record_upload(&s, d, cb, img, vk::ImageLayout::GENERAL);
                    }
                    // SAFETY: recording into a command buffer in the recording state; every
                    // handle comes from this device.
                    unsafe {
                        if let Some(q) = query_pool {
                            d.cmd_reset_query_pool(cb, q, 0, stamps);
                        }
                        stamp(d, cb, 0, S::TOP_OF_PIPE);
                        begin_pass(d, cb, rp, fb, job, &clears);
                        passes[0].bind(d, cb, P::GRAPHICS);
                        if !vbufs.is_empty() {
                            d.cmd_bind_vertex_buffers(cb, 0, &vbufs, &vec![0u64; vbufs.len()]);
                        }
                        d.cmd_draw(cb, job.vertex_count, 1, 0, 0);
                        d.cmd_end_render_pass(cb);
                        stamp(d, cb, 1, S::BOTTOM_OF_PIPE);
                        barrier(
                            d,
                            cb,
                            (S::VERTEX_SHADER, A::SHADER_WRITE),
                            (S::COMPUTE_SHADER, A::SHADER_READ | A::SHADER_WRITE),
                        );
                        if tp.patches > 0 {
                            passes[1].bind(d, cb, P::COMPUTE);
                            d.cmd_dispatch(cb, tp.patches, 1, 1);
                        }
                        stamp(d, cb, 2, S::BOTTOM_OF_PIPE);
                        barrier(
                            d,
                            cb,
                            (S::COMPUTE_SHADER, A::SHADER_WRITE),
                            (S::HOST, A::HOST_READ),
                        );
                    }
                })?;
                // The fixed-function tessellator, on the host.
                let th = Instant::now();
                let factors = s.read(
                    geom[LoweredBuffer::TessFactors as usize],
                    tp.sizes[LoweredBuffer::TessFactors as usize],
                );
                let points = tessellator::domain_points(tp.mode, &factors, tp.patches);
                let bytes = points.len() as u64;
                if bytes > tp.limit {
                    return Err(Error::Job(format!(
                        "the tessellated patches make {} domain points, {bytes} bytes; at most {}",
                        bytes / 16,
                        tp.limit
                    )));
                }
                let i = s.buffer(bytes, &points, vk::BufferUsageFlags::STORAGE_BUFFER)?;
                geom[LoweredBuffer::DomainPoints as usize] = i;
                bind::rebind_lowered(
                    &s,
                    sets[LOWERED_DRAW],
                    &plans[LOWERED_DRAW],
                    LoweredBuffer::DomainPoints,
                    i,
                );
                let vertices = (bytes / 16) as u32;
                tess_host = Some((th.elapsed().as_secs_f64() * 1e3, bytes));
                // Submission 2: the evaluation stage over the domain points.
                s.submit(|d, cb| {
                    // SAFETY: as above.
                    unsafe {
                        let targets_out = S::COLOR_ATTACHMENT_OUTPUT
                            | S::EARLY_FRAGMENT_TESTS
                            | S::LATE_FRAGMENT_TESTS;
                        let attachment_writes =
                            A::COLOR_ATTACHMENT_WRITE | A::DEPTH_STENCIL_ATTACHMENT_WRITE;
                        barrier(
                            d,
                            cb,
                            (
                                S::COMPUTE_SHADER | targets_out,
                                A::SHADER_WRITE | attachment_writes,
                            ),
                            (
                                S::VERTEX_SHADER | targets_out,
                                A::SHADER_READ
                                    | attachment_writes
                                    | A::COLOR_ATTACHMENT_READ
                                    | A::DEPTH_STENCIL_ATTACHMENT_READ,
                            ),
                        );
                        stamp(d, cb, 3, S::TOP_OF_PIPE);
                        begin_pass(d, cb, rp, fb, job, &clears);
                        passes[2].bind(d, cb, P::GRAPHICS);
                        d.cmd_draw(cb, vertices, 1, 0, 0);
                        d.cmd_end_render_pass(cb);
                        stamp(d, cb, 4, S::BOTTOM_OF_PIPE);
                    }
                    image::host_read_barrier(d, cb, S::ALL_COMMANDS, A::SHADER_WRITE);
                    for rt in rts.iter().chain(&imgs).chain(&depth_rt) {
                        image::record_readback(&s, d, cb, rt, vk::ImageLayout::GENERAL);
                    }
                })?;
            }
        }
        let draw_ms = t1.elapsed().as_secs_f64() * 1e3;
        let pass_ms = match query_pool {
            Some(q) => {
                let mut ticks = vec![0u64; stamps as usize];
                // SAFETY: the pool's queries were all written by the finished submission.
                unsafe {
                    self.device.get_query_pool_results(
                        q,
                        0,
                        &mut ticks,
                        vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
                    )
                }
                .vk("vkGetQueryPoolResults")?;
                let mask = if valid_bits >= 64 {
                    u64::MAX
                } else {
                    (1u64 << valid_bits) - 1
                };
                // (name, first stamp, last stamp).
                let spans: &[(&str, usize, usize)] = match (&lowered, &tess) {
                    (Some(_), _) => &[
                        ("vertex_capture", 0, 1),
                        ("geometry_kernel", 1, 2),
                        ("geometry_draw", 2, 3),
                    ],
                    (None, Some(_)) => &[
                        ("vertex_capture", 0, 1),
                        ("tess_control_kernel", 1, 2),
                        ("tess_eval_draw", 3, 4),
                    ],
                    (None, None) => &[("draw", 0, 1)],
                };
                let mut v: Vec<(String, f64)> = spans
                    .iter()
                    .map(|&(n, a, b)| {
                        let dt = ticks[b].wrapping_sub(ticks[a]) & mask;
                        (n.to_string(), dt as f64 * f64::from(period) / 1e6)
                    })
                    .collect();
                if let Some((ms, _)) = tess_host {
                    v.insert(2, ("tessellator_host".to_string(), ms));
                }
                v
            }
            None => Vec::new(),
        };
        let out_targets = rts
            .iter()
            .zip(&targets)
            .map(|(rt, f)| Image {
                width: job.width,
                height: job.height * layers,
                format: *f,
                data: s.read(rt.staging, rt.bytes),
            })
            .collect();
        let (buffers, images) = compute::read_back(&s, &job.buffers, &idx, &imgs);
        let depth = depth_rt.as_ref().map(|d| {
            let bytes = s.read(d.staging, d.bytes);
            bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        });
        let geometry = match (&lowered, &tess) {
            (Some(lp), _) => geom
                .iter()
                .zip(lp.sizes)
                .map(|(&i, n)| s.read(i, n))
                .collect(),
            (None, Some(tp)) => {
                let mut sizes = tp.sizes;
                if let Some((_, bytes)) = tess_host {
                    sizes[LoweredBuffer::DomainPoints as usize] = bytes;
                }
                geom.iter().zip(sizes).map(|(&i, n)| s.read(i, n)).collect()
            }
            (None, None) => Vec::new(),
        };
        Ok(RenderOutputs {
            targets: out_targets,
            buffers,
            images,
            depth,
            device: self.info().name.clone(),
            pipeline_ms,
            draw_ms,
            pass_ms,
            geometry,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Topology;

    #[test]
    fn topology_names_round_trip() {
        for t in Topology::ALL {
            assert_eq!(Topology::parse(t.name()).unwrap(), t);
        }
        let e = Topology::parse("quad_list").unwrap_err().to_string();
        assert!(e.contains("quad_list"), "{e}");
        assert_eq!(Topology::ALL.iter().filter(|t| t.is_adjacency()).count(), 4);
    }

    #[test]
    fn primitive_counts_follow_each_topology() {
        let counts = |n: u32| Topology::ALL.map(|t| t.primitives(n));
        // point, line list, line strip, triangle list, strip, fan, line list adj, line strip
        // adj, triangle list adj, triangle strip adj.
        assert_eq!(counts(0), [0; 10]);
        assert_eq!(counts(1), [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(counts(12), [12, 6, 11, 4, 10, 10, 3, 9, 2, 4]);
        assert_eq!(counts(7), [7, 3, 6, 2, 5, 5, 1, 4, 1, 1]);
    }
}
