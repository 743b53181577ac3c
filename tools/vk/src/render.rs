//! Render jobs: a vertex + fragment pair, with an optional geometry stage and tessellation
//! stages between them, drawn into offscreen color targets, read back.
//!
//! Descriptor sets: every stage's reflection uses set 0 (docs/reflection.md). Guest bindings
//! are per stage (a vertex and a fragment shader may both use uniform block 0 with different
//! data), so the runner gives each stage a set of its own: the vertex stage's resources in
//! set 0, the fragment stage's in set 1, then the tessellation control, tessellation
//! evaluation and geometry stages' in the next sets in that order (those present), rewriting
//! each module's `DescriptorSet 0` decorations to its set.

use std::time::Instant;

use ash::vk;

use crate::bind;
use crate::compute::{self, Bind, BufferSpec, PointerPatch};
use crate::device::{Device, Scope};
use crate::error::{Error, VkCtx};
use crate::image::{self, TexFormat, TextureSpec};
use crate::reflection::Reflection;

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
}

impl Topology {
    /// Parses `triangle_list`, `triangle_strip`, `triangle_fan`, `line_list`, `line_strip`,
    /// `point_list`.
    pub fn parse(s: &str) -> Result<Self, Error> {
        Ok(match s {
            "triangle_list" => Topology::TriangleList,
            "triangle_strip" => Topology::TriangleStrip,
            "triangle_fan" => Topology::TriangleFan,
            "line_list" => Topology::LineList,
            "line_strip" => Topology::LineStrip,
            "point_list" => Topology::PointList,
            _ => return Err(Error::Job(format!("unknown topology {s:?}"))),
        })
    }

    fn vk(self) -> vk::PrimitiveTopology {
        match self {
            Topology::TriangleList => vk::PrimitiveTopology::TRIANGLE_LIST,
            Topology::TriangleStrip => vk::PrimitiveTopology::TRIANGLE_STRIP,
            Topology::TriangleFan => vk::PrimitiveTopology::TRIANGLE_FAN,
            Topology::LineList => vk::PrimitiveTopology::LINE_LIST,
            Topology::LineStrip => vk::PrimitiveTopology::LINE_STRIP,
            Topology::PointList => vk::PrimitiveTopology::POINT_LIST,
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
}

impl RenderJob {
    /// Every stage with its bindings, the reflection stage name it must have and its Vulkan
    /// stage, in descriptor-set order (vertex, fragment, tessellation control and evaluation,
    /// geometry).
    fn stages(&self) -> Vec<(&Stage, &[Bind], &'static str, vk::ShaderStageFlags)> {
        use vk::ShaderStageFlags as F;
        let mut v: Vec<(&Stage, &[Bind], &'static str, F)> = vec![
            (&self.vertex, &self.vertex_binds, "vertex", F::VERTEX),
            (
                &self.fragment,
                &self.fragment_binds,
                "fragment",
                F::FRAGMENT,
            ),
        ];
        if let Some(t) = &self.tessellation {
            v.push((
                &t.control.stage,
                &t.control.binds,
                "tess_control",
                F::TESSELLATION_CONTROL,
            ));
            v.push((
                &t.eval.stage,
                &t.eval.binds,
                "tess_eval",
                F::TESSELLATION_EVALUATION,
            ));
        }
        if let Some(g) = &self.geometry {
            v.push((&g.stage, &g.binds, "geometry", F::GEOMETRY));
        }
        v
    }
}

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

fn f16_to_f32(h: u16) -> f32 {
    let e = ((h >> 10) & 31) as i32;
    let m = (h & 1023) as f32;
    let v = match e {
        0 => m * 2f32.powi(-24),
        31 => {
            if m == 0.0 {
                f32::INFINITY
            } else {
                f32::NAN
            }
        }
        _ => (1.0 + m / 1024.0) * 2f32.powi(e - 15),
    };
    if h & 0x8000 != 0 {
        -v
    } else {
        v
    }
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
            unit(f16_to_f32(h))
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
    /// Milliseconds from submit to fence (includes lavapipe's first-use compile).
    pub draw_ms: f64,
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

impl Device {
    /// Draws a render job on this device.
    pub fn render(&self, job: &RenderJob) -> Result<RenderOutputs, Error> {
        let stages = job.stages();
        if job.geometry.is_some() && !self.info().has("geometryShader") {
            return Err(self.unsupported("a geometry stage needs the geometryShader feature"));
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
        for &(st, _, want, _) in &stages {
            let s = &st.reflection.stage;
            if !s.is_empty() && s != want {
                return Err(Error::Job(format!(
                    "the {want} shader's reflection says stage {s:?}"
                )));
            }
            if st.reflection.resources.iter().any(|r| r.set != 0) {
                return Err(Error::Job(format!(
                    "{want}: resources outside descriptor set 0 are not supported"
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
            .map(|&(st, binds, name, _)| bind::plan(&st.reflection, binds, nb, &job.textures, name))
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
        for (k, (&(st, _, _, flag), slots)) in stages.iter().zip(&plans).enumerate() {
            let mut words = st.spirv.clone();
            if k > 0 {
                remap_descriptor_set(&mut words, 0, k as u32);
            }
            modules.push(s.module(&words)?);
            let (dsl, set) = bind::make_set(&mut s, slots, flag, &idx, &imgs)?;
            dsls.push(dsl);
            sets.push(set);
        }
        let d = &self.device;
        // SAFETY: every handle is created on this device and recorded in the scope.
        let (pipeline, layout, rp, fb) = unsafe {
            let pl = s.pipeline_layout(&dsls)?;
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
            if depth_rt.is_some() {
                atts.push(att(
                    &TexFormat::Depth32Float,
                    1,
                    vk::AttachmentLoadOp::CLEAR,
                ));
            }
            let mut sub0 = vk::SubpassDescription::default()
                .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
                .color_attachments(&refs);
            if depth_rt.is_some() {
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
            let views: Vec<vk::ImageView> = (rts.iter().chain(&ms).chain(&depth_rt))
                .map(|r| r.view)
                .collect();
            let fb = d
                .create_framebuffer(
                    &vk::FramebufferCreateInfo::default()
                        .render_pass(rp)
                        .attachments(&views)
                        .width(job.width)
                        .height(job.height)
                        .layers(layers),
                    None,
                )
                .vk("vkCreateFramebuffer")?;
            s.framebuffers.push(fb);
            let entries = stages
                .iter()
                .map(|st| std::ffi::CString::new(st.0.reflection.entry_name()))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| Error::Job("entry point name contains NUL".into()))?;
            let stage_info: Vec<vk::PipelineShaderStageCreateInfo> = stages
                .iter()
                .zip(&modules)
                .zip(&entries)
                .map(|((st, m), e)| {
                    vk::PipelineShaderStageCreateInfo::default()
                        .stage(st.3)
                        .module(*m)
                        .name(e)
                })
                .collect();
            let vb_desc: Vec<vk::VertexInputBindingDescription> = job
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
            let at_desc: Vec<vk::VertexInputAttributeDescription> = job
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
            let vi = vk::PipelineVertexInputStateCreateInfo::default()
                .vertex_binding_descriptions(&vb_desc)
                .vertex_attribute_descriptions(&at_desc);
            let topology = match job.tessellation {
                Some(_) => vk::PrimitiveTopology::PATCH_LIST,
                None => job.topology.vk(),
            };
            let ia = vk::PipelineInputAssemblyStateCreateInfo::default().topology(topology);
            let ts = vk::PipelineTessellationStateCreateInfo::default()
                .patch_control_points(job.tessellation.as_ref().map_or(1, |t| t.patch_points));
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
                .layout(pl)
                .render_pass(rp)
                .subpass(0)];
            if depth_rt.is_some() {
                ci[0] = ci[0].depth_stencil_state(&ds);
            }
            if job.tessellation.is_some() {
                ci[0] = ci[0].tessellation_state(&ts);
            }
            let made = d.create_graphics_pipelines(vk::PipelineCache::null(), &ci, None);
            let p = s.pipeline("vkCreateGraphicsPipelines", made)?;
            (p, pl, rp, fb)
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
        let record = |d: &ash::Device, cb: vk::CommandBuffer| {
            for img in images {
                image::record_upload(scope, d, cb, img, vk::ImageLayout::GENERAL);
            }
            // SAFETY: recording into a command buffer in the recording state.
            unsafe {
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
                        .clear_values(&clears),
                    vk::SubpassContents::INLINE,
                );
                d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, pipeline);
                for (i, &set) in sets.iter().enumerate() {
                    if set != vk::DescriptorSet::null() {
                        d.cmd_bind_descriptor_sets(
                            cb,
                            vk::PipelineBindPoint::GRAPHICS,
                            layout,
                            i as u32,
                            &[set],
                            &[],
                        );
                    }
                }
                if !vbufs.is_empty() {
                    let offs = vec![0u64; vbufs.len()];
                    d.cmd_bind_vertex_buffers(cb, 0, &vbufs, &offs);
                }
                d.cmd_draw(cb, job.vertex_count, job.instance_count.max(1), 0, 0);
                d.cmd_end_render_pass(cb);
            }
            image::host_read_barrier(
                d,
                cb,
                vk::PipelineStageFlags::ALL_GRAPHICS,
                vk::AccessFlags::SHADER_WRITE,
            );
            for rt in targets_ref.iter().chain(images).chain(&depth_rt) {
                image::record_readback(scope, d, cb, rt, vk::ImageLayout::GENERAL);
            }
        };
        s.submit(record)?;
        let draw_ms = t1.elapsed().as_secs_f64() * 1e3;
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
        Ok(RenderOutputs {
            targets: out_targets,
            buffers,
            images,
            depth,
            device: self.info().name.clone(),
            pipeline_ms,
            draw_ms,
        })
    }
}
