//! Graphics pipelines, render passes and barriers shared by the direct and lowered draws.

use ash::vk;

use super::*;

/// `a` blending with the second source: colour = source 0 × SRC1_COLOR + destination ×
/// ONE_MINUS_SRC1_COLOR, alpha with SRC1_ALPHA likewise ([`RenderJob::dual_source`]).
pub(super) fn dual_source(
    a: vk::PipelineColorBlendAttachmentState,
) -> vk::PipelineColorBlendAttachmentState {
    use vk::BlendFactor as F;
    let [s, d] = [F::SRC1_COLOR, F::ONE_MINUS_SRC1_COLOR];
    let [sa, da] = [F::SRC1_ALPHA, F::ONE_MINUS_SRC1_ALPHA];
    let a = a.blend_enable(true).color_blend_op(vk::BlendOp::ADD);
    let a = a.src_color_blend_factor(s).dst_color_blend_factor(d);
    a.src_alpha_blend_factor(sa)
        .dst_alpha_blend_factor(da)
        .alpha_blend_op(vk::BlendOp::ADD)
}

/// One graphics pipeline of a draw: its shaders, vertex input and primitive assembly; the
/// rest (viewports, rasterization, samples, blending, depth) is the job's.
pub(super) struct PipelineShape<'a> {
    /// (module, reflection, stage) of each shader.
    pub(super) shaders: Vec<(vk::ShaderModule, &'a Reflection, vk::ShaderStageFlags)>,
    /// The pipeline layout.
    pub(super) layout: vk::PipelineLayout,
    /// Reads the job's vertex buffers and attributes (else no vertex input).
    pub(super) vertex_input: bool,
    /// Primitive topology.
    pub(super) topology: vk::PrimitiveTopology,
    /// Control points per patch (tessellation).
    pub(super) patch_points: Option<u32>,
    /// Rasterizer discard: a pass that only writes buffers.
    pub(super) discard: bool,
}

/// A pipeline with its layout and descriptor sets (set n = `sets[n]`; null sets are not bound).
pub(super) struct Bound {
    pub(super) pipeline: vk::Pipeline,
    pub(super) layout: vk::PipelineLayout,
    pub(super) sets: Vec<vk::DescriptorSet>,
}

impl Bound {
    /// Binds the pipeline and its sets.
    ///
    /// # Safety
    /// `cb` is recording; the handles come from `d`.
    pub(super) unsafe fn bind(
        &self,
        d: &ash::Device,
        cb: vk::CommandBuffer,
        point: vk::PipelineBindPoint,
    ) {
        d.cmd_bind_pipeline(cb, point, self.pipeline);
        for (i, &set) in self.sets.iter().enumerate() {
            if set != vk::DescriptorSet::null() {
                d.cmd_bind_descriptor_sets(cb, point, self.layout, i as u32, &[set], &[]);
            }
        }
    }
}

/// Creates the render pass of the job's targets (single-sampled read-back targets, then the
/// multisampled ones they resolve from, then the depth target; everything cleared), a
/// compatible one that keeps what they hold (for the later passes of a lowered draw) and
/// their framebuffer over `views` (in that order).
pub(super) fn target_pass(
    s: &mut Scope<'_>,
    job: &RenderJob,
    targets: &[TexFormat],
    views: &[vk::ImageView],
) -> Result<(vk::RenderPass, vk::RenderPass, vk::Framebuffer), Error> {
    let (rp, fb) = target_pass_with(s, job, targets, views, false)?;
    let (keep, _) = target_pass_with(s, job, targets, &[], true)?;
    Ok((rp, keep, fb))
}

/// [`target_pass`]'s clearing pass and framebuffer, or (`keep`) the pass that loads the
/// targets instead (no framebuffer: the clearing pass's is compatible).
fn target_pass_with(
    s: &mut Scope<'_>,
    job: &RenderJob,
    targets: &[TexFormat],
    views: &[vk::ImageView],
    keep: bool,
) -> Result<(vk::RenderPass, vk::Framebuffer), Error> {
    let msaa = job.samples > 1;
    let d = &s.dev.device;
    // Attachments: the read-back targets, then (multisampled) the sampled targets.
    let att = |f: &TexFormat, samples: u32, load: vk::AttachmentLoadOp| {
        let (load, initial) = match (keep, load) {
            (true, vk::AttachmentLoadOp::CLEAR) => {
                (vk::AttachmentLoadOp::LOAD, vk::ImageLayout::GENERAL)
            }
            (true, l) => (l, vk::ImageLayout::GENERAL),
            (false, l) => (l, vk::ImageLayout::UNDEFINED),
        };
        vk::AttachmentDescription::default()
            .format(f.vk())
            .samples(image::sample_flags(samples))
            .load_op(load)
            .store_op(vk::AttachmentStoreOp::STORE)
            .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
            .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
            .initial_layout(initial)
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
        if keep {
            return Ok((rp, vk::Framebuffer::null()));
        }
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
pub(super) fn graphics_pipeline(
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
    let ia = vk::PipelineInputAssemblyStateCreateInfo::default()
        .topology(shape.topology)
        .primitive_restart_enable(job.primitive_restart && shape.vertex_input);
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
pub(super) unsafe fn begin_pass(
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
pub(super) unsafe fn barrier(
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

/// The stages and accesses by which a render pass writes its colour and depth attachments
/// (what a later pass over the same targets waits for).
pub(super) fn attachment_outputs() -> (vk::PipelineStageFlags, vk::AccessFlags) {
    use vk::AccessFlags as A;
    use vk::PipelineStageFlags as S;
    (
        S::COLOR_ATTACHMENT_OUTPUT | S::EARLY_FRAGMENT_TESTS | S::LATE_FRAGMENT_TESTS,
        A::COLOR_ATTACHMENT_WRITE | A::DEPTH_STENCIL_ATTACHMENT_WRITE,
    )
}
