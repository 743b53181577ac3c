//! Lowered geometry and tessellation pipelines (docs/geometry.md, docs/tessellation.md): the
//! checks and plans behind their passes.

use ash::vk;

use super::*;
use dmsh_reflect::lowered::Pass;

/// What the runner derives from a lowered geometry pipeline's lowering records for one draw
/// (docs/geometry.md).
#[derive(Debug, Clone)]
pub(super) struct LoweredPlan {
    /// The kernel and draw passes, in order: one per instance and, with primitive restart,
    /// per run of indices between restarts (docs/geometry.md, "What the host builds").
    pub(super) subs: Vec<SubDraw>,
    /// The final draw's topology (a list of the kernel's output primitive).
    pub(super) output: vk::PrimitiveTopology,
    /// The capture draw's topology.
    pub(super) capture_topology: vk::PrimitiveTopology,
    /// Bytes of each geometry buffer, by role.
    pub(super) sizes: [u64; 5],
}

/// One kernel dispatch and the draw of its output.
#[derive(Debug, Clone, Copy)]
pub(super) struct SubDraw {
    /// The instance (the capture pass's first instance).
    pub(super) instance: u32,
    /// Whether the capture pass runs first (the instance's first sub-draw).
    pub(super) capture: bool,
    /// Kernel workgroups (in x).
    pub(super) groups: u32,
    /// Indices the final draw reads.
    pub(super) index_count: u32,
    /// The kernel's `params` words.
    pub(super) params: [u32; 8],
}

/// The index of a primitive restart (32-bit indices).
pub(super) const RESTART: u32 = u32::MAX;

/// The most sub-draws (instances × runs between restarts) one job records.
const MAX_SUB_DRAWS: usize = 4096;

/// What the runner derives from a lowered tessellation pipeline's lowering records for one draw
/// (docs/exec-job.md).
#[derive(Debug, Clone, Copy)]
pub(super) struct TessPlan {
    /// The evaluation stage's domain, spacing and output.
    pub(super) mode: Mode,
    /// Patches (control-kernel workgroups).
    pub(super) patches: u32,
    /// The final draw's topology.
    pub(super) output: vk::PrimitiveTopology,
    /// Bytes of each lowered buffer, by role (`domain_points`: 16 until tessellated).
    pub(super) sizes: [u64; 9],
    /// The control kernel's `params` words.
    pub(super) params: [u32; 8],
    /// The largest buffer the device binds.
    pub(super) limit: u64,
}

/// The contract's vertex and control-point record size, and patch record size.
pub(super) const TESS_PATCH_BYTES: u32 = 96;

/// The lowering record of `st`, which must be pass `pass`.
pub(super) fn lowering(st: &Stage, pass: Pass) -> Result<&dmsh_reflect::Lowering, Error> {
    match &st.reflection.lowering {
        Some(l) if l.pass == pass => Ok(l),
        Some(l) => Err(Error::Job(format!(
            "the {pass} shader's reflection says lowering pass {}",
            l.pass
        ))),
        None => Err(Error::Job(format!(
            "the {pass} shader's reflection has no lowering record (docs/geometry.md)"
        ))),
    }
}

impl Device {
    /// Checks a lowered geometry pipeline against the job and the device and works out its
    /// dispatch, draw and buffer sizes.
    pub(super) fn lowered_plan(
        &self,
        job: &RenderJob,
        lg: &LoweredGeometry,
    ) -> Result<LoweredPlan, Error> {
        let bad = |m: String| Err(Error::Job(m));
        if job.geometry.is_some() {
            return bad(
                "a job has a geometry stage or a lowered geometry pipeline, not both".into(),
            );
        }
        if job.tessellation.is_some() {
            return bad("tessellation before a lowered geometry pipeline is not supported".into());
        }
        let capture = lowering(&lg.capture, Pass::VertexCapture)?;
        let k = lowering(&lg.kernel.stage, Pass::GeometryKernel)?;
        let draw = lowering(&lg.draw, Pass::GeometryDraw)?;
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
        let indexed = !job.indices.is_empty();
        // Runs of indices between primitive restarts (the whole draw without restart); each
        // is a sub-draw whose primitive IDs continue the count (`params[6]`).
        let runs: Vec<(u32, u32)> = if indexed && job.primitive_restart {
            let mut v = Vec::new();
            let mut start = 0u32;
            for (k, &i) in job.indices.iter().enumerate() {
                if i == RESTART {
                    v.push((start, k as u32 - start));
                    start = k as u32 + 1;
                }
            }
            v.push((start, job.indices.len() as u32 - start));
            v
        } else if indexed {
            vec![(0, job.indices.len() as u32)]
        } else {
            vec![(0, job.vertex_count)]
        };
        let instances = job.instance_count.max(1);
        let count = instances as usize * runs.len();
        if count > MAX_SUB_DRAWS {
            return bad(format!(
                "{instances} instances × {} runs between primitive restarts make {count} \
                 sub-draws; at most {MAX_SUB_DRAWS}",
                runs.len()
            ));
        }
        // The capture pass writes the record of every vertex index the draw reaches.
        let records = match job.indices.iter().filter(|&&i| i != RESTART).max() {
            Some(&m) => u64::from(m) + 1,
            None if indexed => 1,
            None => u64::from(job.vertex_count),
        };
        let max_groups = self.info().max_workgroup_count[0];
        let mut subs = Vec::with_capacity(count);
        let mut most_threads = 0u64;
        for instance in 0..instances {
            let mut first_id = 0u32;
            for (r, &(first_index, n)) in runs.iter().enumerate() {
                let prims = job.topology.primitives(n);
                let threads = u64::from(prims) * u64::from(k.invocations);
                let groups = threads.div_ceil(u64::from(local));
                if groups > u64::from(max_groups) {
                    return bad(format!(
                        "{prims} primitives × {} invocations need {groups} workgroups of \
                         {local}; the device dispatches at most {max_groups}",
                        k.invocations
                    ));
                }
                let indices = threads * u64::from(k.indices_per_invocation);
                let Ok(index_count) = u32::try_from(indices) else {
                    return bad(format!("{indices} indices do not fit one draw"));
                };
                most_threads = most_threads.max(threads);
                subs.push(SubDraw {
                    instance,
                    capture: r == 0,
                    groups: groups as u32,
                    index_count,
                    // topology, primitives, first vertex, index size (4 or 0: non-indexed),
                    // first index, base vertex, first primitive ID, 0.
                    params: [
                        job.topology.vk().as_raw() as u32,
                        prims,
                        0,
                        if indexed { 4 } else { 0 },
                        first_index,
                        0,
                        first_id,
                        0,
                    ],
                });
                first_id += prims;
            }
        }
        let rb = u64::from(k.record_bytes);
        let sizes = [
            records * rb,
            (1 + most_threads * u64::from(k.max_vertices)) * rb,
            most_threads * u64::from(k.indices_per_invocation) * 4,
            32,
            4 * job.indices.len() as u64,
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
            // still captured once (a restart index is then read as a vertex: refused).
            if job.primitive_restart {
                return bad(
                    "primitive restart with an adjacency topology needs the geometryShader \
                     feature for the capture pass"
                        .into(),
                );
            }
            vk::PrimitiveTopology::POINT_LIST
        } else {
            job.topology.vk()
        };
        Ok(LoweredPlan {
            subs,
            output,
            capture_topology,
            sizes,
        })
    }

    /// Checks a lowered tessellation pipeline against the job and the device and works out its
    /// dispatch and buffer sizes.
    pub(super) fn tess_plan(
        &self,
        job: &RenderJob,
        lt: &LoweredTessellation,
    ) -> Result<TessPlan, Error> {
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
        let capture = lowering(&lt.capture, Pass::VertexCapture)?;
        let k = lowering(&lt.control.stage, Pass::TessControlKernel)?;
        let eval = lowering(&lt.eval.stage, Pass::TessEvalDraw)?;
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
}
