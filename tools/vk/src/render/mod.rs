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

use ash::vk;

use dmsh_reflect::LoweredBuffer;

use crate::bind;
use crate::compute::{self, Bind, BufferSpec, PointerPatch};
use crate::device::{Device, Scope};
use crate::error::{Error, VkCtx};
use crate::image::{self, TexFormat, TextureSpec};
use crate::reflection::Reflection;
use crate::tessellator::{self, Mode, Output};

mod draw;
mod lowered;
mod outputs;
mod pipeline;

pub use outputs::*;

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
    /// Vertices to draw (with `indices`: ignored, the index count is drawn).
    pub vertex_count: u32,
    /// 32-bit indices: an indexed draw of every index (no primitive restart); empty: not
    /// indexed. A lowered geometry pipeline's kernel reads them as its `index_source`.
    pub indices: Vec<u32>,
    /// Instances (0 means 1).
    pub instance_count: u32,
    /// Primitive restart: index 0xFFFFFFFF ends a strip or fan and starts the next (indexed
    /// draws of strip and fan topologies only). A lowered geometry pipeline draws each run
    /// between restarts as a sub-draw whose primitive IDs continue the count.
    pub primitive_restart: bool,
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
