//! [`Device::render`]: one render job, direct or lowered, recorded and submitted.

use std::time::Instant;

use ash::vk;

use super::pipeline::*;
use super::*;

impl Device {
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
        if job.primitive_restart {
            let strip = matches!(
                job.topology,
                Topology::LineStrip
                    | Topology::TriangleStrip
                    | Topology::TriangleFan
                    | Topology::LineStripAdjacency
                    | Topology::TriangleStripAdjacency
            );
            if job.indices.is_empty() || !strip || job.tessellation.is_some() || tess.is_some() {
                return Err(Error::Job(format!(
                    "primitive restart needs an indexed draw of a strip or fan topology, not \
                     {}{}",
                    job.topology.name(),
                    if job.indices.is_empty() {
                        " without indices"
                    } else {
                        ""
                    }
                )));
            }
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
        let app_indices = if job.indices.is_empty() {
            None
        } else {
            let bytes: Vec<u8> = job.indices.iter().flat_map(|w| w.to_le_bytes()).collect();
            let i = s.buffer(
                bytes.len() as u64,
                &bytes,
                vk::BufferUsageFlags::INDEX_BUFFER,
            )?;
            Some(s.buffers[i].buffer)
        };
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
                    // Rewritten before each sub-draw's kernel (vkCmdUpdateBuffer).
                    LoweredBuffer::Params => (vk::BufferUsageFlags::TRANSFER_DST, Vec::new()),
                    LoweredBuffer::IndexSource => (
                        vk::BufferUsageFlags::empty(),
                        job.indices.iter().flat_map(|w| w.to_le_bytes()).collect(),
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
        let (rp, rp_keep, fb) = target_pass(&mut s, job, &targets, &views)?;
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
        let params_buffer = geom
            .get(LoweredBuffer::Params as usize)
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
                // A later pass over the same targets: what they hold is kept.
                let begin_keep = || begin_pass(d, cb, rp_keep, fb, job, &clears);
                let vertex_buffers = || {
                    if !vbufs.is_empty() {
                        let offs = vec![0u64; vbufs.len()];
                        d.cmd_bind_vertex_buffers(cb, 0, &vbufs, &offs);
                    }
                };
                // The job's draw: indexed when it has indices.
                let app_draw = |instances: u32| match app_indices {
                    Some(buf) => {
                        d.cmd_bind_index_buffer(cb, buf, 0, vk::IndexType::UINT32);
                        d.cmd_draw_indexed(cb, job.indices.len() as u32, instances, 0, 0, 0);
                    }
                    None => d.cmd_draw(cb, job.vertex_count, instances, 0, 0),
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
                        app_draw(job.instance_count.max(1));
                        d.cmd_end_render_pass(cb);
                        stamp(1, S::BOTTOM_OF_PIPE);
                    }
                    Some(lp) => {
                        let (targets_out, attachment_writes) = attachment_outputs();
                        for (k, sub) in lp.subs.iter().enumerate() {
                            if k > 0 {
                                // The previous sub-draw's reads of the records, indices and
                                // params (and its kernel's writes) before this one rewrites
                                // them.
                                barrier(
                                    d,
                                    cb,
                                    (
                                        S::VERTEX_INPUT | S::VERTEX_SHADER | S::COMPUTE_SHADER,
                                        A::INDEX_READ | A::SHADER_READ | A::SHADER_WRITE,
                                    ),
                                    (
                                        S::VERTEX_SHADER | S::COMPUTE_SHADER | S::TRANSFER,
                                        A::SHADER_READ | A::SHADER_WRITE | A::TRANSFER_WRITE,
                                    ),
                                );
                            }
                            if sub.capture {
                                // Pass 1: the instance's vertex records into vertices_in.
                                if k == 0 {
                                    begin();
                                } else {
                                    begin_keep();
                                }
                                passes[0].bind(d, cb, P::GRAPHICS);
                                vertex_buffers();
                                match app_indices {
                                    Some(buf) => {
                                        d.cmd_bind_index_buffer(cb, buf, 0, vk::IndexType::UINT32);
                                        let n = job.indices.len() as u32;
                                        d.cmd_draw_indexed(cb, n, 1, 0, 0, sub.instance);
                                    }
                                    None => d.cmd_draw(cb, job.vertex_count, 1, 0, sub.instance),
                                }
                                d.cmd_end_render_pass(cb);
                                if k == 0 {
                                    stamp(1, S::BOTTOM_OF_PIPE);
                                }
                            }
                            if let Some(pb) = params_buffer {
                                let words: Vec<u8> =
                                    sub.params.iter().flat_map(|w| w.to_le_bytes()).collect();
                                d.cmd_update_buffer(cb, pb, 0, &words);
                            }
                            barrier(
                                d,
                                cb,
                                (
                                    S::VERTEX_SHADER | S::TRANSFER,
                                    A::SHADER_WRITE | A::TRANSFER_WRITE,
                                ),
                                (S::COMPUTE_SHADER, A::SHADER_READ | A::SHADER_WRITE),
                            );
                            // Pass 2: the kernel writes vertices_out and indices.
                            if sub.groups > 0 {
                                passes[1].bind(d, cb, P::COMPUTE);
                                d.cmd_dispatch(cb, sub.groups, 1, 1);
                            }
                            if k == 0 {
                                stamp(2, S::BOTTOM_OF_PIPE);
                            }
                            // Its writes before the draw's vertex and index reads; the earlier
                            // passes' attachment writes (clears) before the draw's.
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
                            // shader, over what the targets hold.
                            begin_keep();
                            passes[2].bind(d, cb, P::GRAPHICS);
                            if let Some(ib) = indices {
                                d.cmd_bind_index_buffer(cb, ib, 0, vk::IndexType::UINT32);
                            }
                            d.cmd_draw_indexed(cb, sub.index_count, 1, 0, 0, 0);
                            d.cmd_end_render_pass(cb);
                        }
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
                        let (targets_out, attachment_writes) = attachment_outputs();
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
