//! dmsh-reflect: the reflection schema (`docs/reflection.md`) — the binding contract of one
//! translated shader, written next to its SPIR-V / MSL by the translator and the build, read
//! by the Vulkan runner (dmsh-vk), the build and the runtime loader. One definition for all:
//! serde types, the Vulkan binding table, the Metal argument-index assignment.
//!
//! Readers accept unknown fields (the translator may add some) and take defaults for missing
//! ones (hand-written job files), but refuse a record whose `version` is not
//! [`SCHEMA_VERSION`].

#![warn(missing_docs)]

use serde::{Deserialize, Serialize};

pub mod lowered;

/// The schema version writers put in `version` and readers require (an absent `version`
/// reads as this one).
pub const SCHEMA_VERSION: u32 = 1;

/// A record's schema version; defaults to [`SCHEMA_VERSION`] (so records built in code and
/// records without the field are current).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SchemaVersion(pub u32);

impl Default for SchemaVersion {
    fn default() -> Self {
        SchemaVersion(SCHEMA_VERSION)
    }
}

/// One resource the runner binds.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Resource {
    /// `cbuf`, `sbuf`, `texture`, `sampler`, `image`, … (`push`: a Vulkan module's push
    /// constant block, no set or binding, `size` bytes the host sets at `metal_index`).
    pub kind: String,
    /// The guest constant bank (cbuf) or slot (everything else; readers also accept `slot`).
    #[serde(alias = "slot")]
    pub bank: u32,
    /// cbuf: the guest byte offset that maps to byte 0 of the buffer.
    pub guest_offset: u32,
    /// Size in bytes, where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Vulkan descriptor set.
    pub set: u32,
    /// Vulkan binding; when absent (hand-written jobs), the table of docs/reflection.md
    /// ([`Resource::vk_binding`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binding: Option<u32>,
    /// Metal argument table index: buffer (cbuf, sbuf, sbuf_ubo), texture (texture, image,
    /// tex_ubo, tex_dyn) or sampler (sampler, samp_dyn) table; compact per shader, assigned
    /// by [`assign_metal_indices`] once the list is complete (emission leaves 0 here).
    /// `samp_ubo` / `samp_id` carry their texture's indices.
    pub metal_index: u32,
    /// Metal sampler index of a combined image sampler (texture / tex_ubo that is not
    /// `separate`, and its samp_ubo / samp_id companion).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metal_sampler: Option<u32>,
    /// Array elements (`tex_dyn` / `samp_dyn`, a Vulkan module's descriptor arrays); omitted
    /// for single resources. An array takes `count` consecutive Metal indices from
    /// `metal_index` (element k at `metal_index + k`).
    #[serde(skip_serializing_if = "is_zero")]
    pub count: u32,
    /// `texture` only: a separate image (OpTypeImage, Vulkan SAMPLED_IMAGE) that the code
    /// combines with `sampler` resources; absent / false = a combined image sampler.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub separate: bool,
    /// `sbuf_ubo` only: the uniform-buffer slot holding the buffer's 64-bit address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ubo: Option<u32>,
    /// `sbuf_ubo` only: the byte offset of that address (low word first) in the uniform buffer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u32>,
    /// `cbuf` only: the guest byte ranges `[start, end)` of the bank read at constant offsets,
    /// sorted and merged (for c\[0\], the driver segment: the words the host must fill).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reads: Vec<[u32; 2]>,
    /// `cbuf` only: some read's offset is computed at run time (not in `reads`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub reads_dynamic: bool,
    /// `texture`, `tex_ubo` or `image` alias (binding + k << 16, k ≥ 1): the slot's texture
    /// bound again as this texture type (`2d_array`, `cube`, `2d_ms`, …; docs/reflection.md
    /// "One declaration per slot"). Absent for the slot's own declaration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub view: Option<String>,
}

fn is_zero(x: &u32) -> bool {
    *x == 0
}

/// The binding contract of one translated shader.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Reflection {
    /// Schema version ([`SCHEMA_VERSION`]).
    pub version: SchemaVersion,
    /// Stage name.
    pub stage: String,
    /// SPIR-V entry point name.
    pub entry: String,
    /// Compute workgroup size.
    pub local_size: [u32; 3],
    /// Compute: the workgroup size is variable (NVN control +0x748 all zero): `local_size` is
    /// the default of specialization constants 0, 1, 2 (the `WorkgroupSize` built-in).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub local_size_spec: bool,
    /// Workgroup memory in bytes.
    pub shared_bytes: u32,
    /// Per-thread local memory in bytes.
    pub local_bytes: u32,
    /// Whether 64-bit global addresses (PhysicalStorageBuffer64) are used.
    pub uses_global_addresses: bool,
    /// `exact` or `native`.
    pub fma_mode: String,
    /// `soft` when f64 is lowered to 32-bit integer routines (no 64-bit float type); absent
    /// (empty) for native f64.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub f64_mode: String,
    /// `nvn`, `cuda` or `deko3d`.
    pub abi: String,
    /// Whether the control flow went through the dispatcher loop.
    pub dispatcher: bool,
    /// `structured` (SPIR-V selection and loop constructs) or `dispatcher` (the fallback
    /// `loop { switch (pc) { … } }`).
    pub control_flow: String,
    /// Why the dispatcher was used (absent when structured): `unstructurable` (the
    /// structurizer refused the graph) or `barrier after divergent exit` (a barrier that
    /// some invocations may skip by ending first, see dmsh-ir's `uniform::barrier`; the
    /// barrier-synchronised dispatcher is exact there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dispatcher_reason: Option<String>,
    /// Branches that leave several constructs through the goto variable (structured only).
    pub gotos: usize,
    /// Number of IR blocks.
    pub blocks: usize,
    /// `ssa` when guest registers, predicates and flags were turned into SSA values (dmsh-ir's
    /// `ssa` pass), `variables` when they stay in variables (a jump with targets unknown at
    /// translation time is left).
    pub guest_state: String,
    /// Whether 32-lane warp operations (SHFL, VOTE, lane masks) are used: results depend on
    /// the device's subgroup size being 32.
    pub warp_ops: bool,
    /// Whether the warp operations (SHFL, VOTE, REDUX, MATCH, the tensor instructions'
    /// exchanges) were emulated through workgroup memory in groups of 32 invocations
    /// (`dmsh translate --warp workgroup`, dmsh-ir's `warp_shared`): no subgroup operation is
    /// left, so `warp_ops` is false and any subgroup size works. Absent / false otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub warp_emulated: bool,
    /// How the tensor instructions (HMMA, IMMA) were translated: `subgroup_emulation`
    /// (shuffles and per-lane arithmetic) or `cooperative_matrix` (SPV_KHR_cooperative_matrix,
    /// 32-lane subgroups); absent when the shader has none. A Metal build may choose
    /// `simdgroup_matrix` from it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tensor: Option<String>,
    /// Whether the shader uses 64-bit atomics (`Int64Atomics`: ATOM/RED/ATOMS .64/.U64/.S64,
    /// CAS.64). Metal offers only some 64-bit atomic operations, on some GPU families.
    pub int64_atomics: bool,
    /// Run-time-offset reads of constant bank c1 (NVN's code-area constants; docs/build.md
    /// "c1-guard"); absent when c1 is a buffer bound at run time, and in records made before
    /// the field (`dmsh c1-guard` then lists the shader).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub c1: Option<C1Reads>,
    /// Resources.
    pub resources: Vec<Resource>,
    /// How much of each Metal argument table the resources take.
    pub metal: MetalTables,
    /// Graphics: stage inputs (vertex attributes, varyings) by location.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<IoVar>,
    /// Graphics: stage outputs (varyings, fragment colour targets) by location.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<IoVar>,
    /// Geometry: the input primitive the module declares (pipeline state the binary does not
    /// carry) and where it came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geometry_input: Option<GeometryInput>,
    /// Tess-eval: the domain, spacing and output primitive the module declares and where they
    /// came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tessellation: Option<Tessellation>,
    /// The chain version `V` of the `b-<V>` build that made this record (absent for a
    /// plain translation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chain: Option<String>,
    /// The Metal entry points of the built library (`main0`, …; absent before the build).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub metal_entry_points: Vec<String>,
    /// Vertex: the Metal entry point that leaves clip-space z as the shader wrote it
    /// (`main0_z`, for games in NVN's near = 0 depth mode); `main0` has the GL-mode rewrite
    /// z' = z/2 + w/2 (the build's `vs_depth`, docs/build.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metal_entry_z: Option<String>,
    /// The build's SPIR-V fix-ups that changed this shader, by their seed names (`vs_pad`,
    /// `vs_depth`, `spv_single_lane`, `int_inputs`), in the order they ran.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fixups: Vec<String>,
    /// Whether Metal can run the stage directly (false for geometry and tessellation, which
    /// a later step must lower).
    pub metal_direct: bool,
    /// A pass of a lowered geometry pipeline (docs/geometry.md): which pass this module is
    /// and what the host must build around it; absent for a shader in its direct form.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lowering: Option<Lowering>,
}

/// Resource kind of the buffers between the passes of a lowered geometry or tessellation
/// pipeline; the resource's `bank` is its [`LoweredBuffer`] role.
pub const LOWERED_BUFFER: &str = "lowered";

/// The buffers between the passes of a lowered geometry or tessellation pipeline
/// (docs/geometry.md, docs/tessellation.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoweredBuffer {
    /// Vertex records the capture pass writes (record n at vertex index n) and the kernel
    /// reads.
    VerticesIn = 0,
    /// Vertex records the geometry kernel writes (record 0 the null vertex) and the draw
    /// reads.
    VerticesOut = 1,
    /// The geometry draw's 32-bit index list, written by the kernel.
    Indices = 2,
    /// The kernel's parameters: eight u32 words (docs/geometry.md, docs/tessellation.md).
    Params = 3,
    /// The application's index buffer as 32-bit words (indexed draws; any buffer otherwise).
    IndexSource = 4,
    /// Tessellation: output control-point records the control kernel writes (record
    /// patch × output points + i) and the evaluation stage reads.
    ControlPoints = 5,
    /// Tessellation: one patch record per patch (tessellation levels, patch varyings).
    PatchData = 6,
    /// Tessellation: Metal's tessellation-factor buffer (`MTLTriangleTessellationFactorsHalf`
    /// or `MTLQuadTessellationFactorsHalf` per patch), written by the control kernel.
    TessFactors = 7,
    /// Tessellation, lavapipe only: the domain points a tessellator made (per vertex: patch,
    /// u, v, w as four words), read by the evaluation stage's draw form.
    DomainPoints = 8,
}

impl LoweredBuffer {
    /// Every role, by number.
    pub const ALL: [LoweredBuffer; 9] = [
        LoweredBuffer::VerticesIn,
        LoweredBuffer::VerticesOut,
        LoweredBuffer::Indices,
        LoweredBuffer::Params,
        LoweredBuffer::IndexSource,
        LoweredBuffer::ControlPoints,
        LoweredBuffer::PatchData,
        LoweredBuffer::TessFactors,
        LoweredBuffer::DomainPoints,
    ];

    /// The role of resource bank `n`.
    pub fn from_bank(n: u32) -> Option<LoweredBuffer> {
        Self::ALL.get(n as usize).copied()
    }

    /// The descriptor binding (set 0) of the role.
    pub fn binding(self) -> u32 {
        240 + self as u32
    }

    /// Its name in docs and reports.
    pub fn name(self) -> &'static str {
        match self {
            LoweredBuffer::VerticesIn => "vertices_in",
            LoweredBuffer::VerticesOut => "vertices_out",
            LoweredBuffer::Indices => "indices",
            LoweredBuffer::Params => "params",
            LoweredBuffer::IndexSource => "index_source",
            LoweredBuffer::ControlPoints => "control_points",
            LoweredBuffer::PatchData => "patch_data",
            LoweredBuffer::TessFactors => "tess_factors",
            LoweredBuffer::DomainPoints => "domain_points",
        }
    }
}

/// One pass of a lowered geometry pipeline and the facts the host needs to run it.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Lowering {
    /// The pass this module is ([`lowered::Pass`]; written as its name, `vertex_capture` …).
    pub pass: lowered::Pass,
    /// Bytes per vertex record in `vertices_in` / `vertices_out`.
    pub record_bytes: u32,
    /// Geometry: vertices per input primitive.
    #[serde(skip_serializing_if = "is_zero")]
    pub input_vertices: u32,
    /// Geometry: invocations per input primitive.
    #[serde(skip_serializing_if = "is_zero")]
    pub invocations: u32,
    /// Geometry: the most vertices one invocation emits (the SPH's maximum).
    #[serde(skip_serializing_if = "is_zero")]
    pub max_vertices: u32,
    /// Geometry: the draw's list topology (`points`, `lines`, `triangles`).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub output: String,
    /// Geometry: index-list entries per invocation (the draw indexes
    /// primitives × invocations × this many).
    #[serde(skip_serializing_if = "is_zero")]
    pub indices_per_invocation: u32,
    /// Geometry: the input topologies the kernel assembles (`triangle_list`, …); the host
    /// must draw with one of them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub topologies: Vec<String>,
    /// Geometry kernel: threads per threadgroup (one per primitive × invocation).
    #[serde(skip_serializing_if = "is_zero")]
    pub local_size: u32,
    /// The varying location that carries the geometry shader's gl_PrimitiveID to the
    /// fragment stage (whose `primitive_id` input the build rewrites to it), if written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub primitive_id_location: Option<u32>,
    /// Tessellation: output control points per patch (the control kernel's threads per
    /// patch, the evaluation stage's input patch size).
    #[serde(skip_serializing_if = "is_zero")]
    pub control_points: u32,
    /// Tessellation: bytes per patch in `tess_factors` (8 for triangles, 12 for quads and
    /// isolines); 0 for the control kernel, which writes the layout its `params[4]` names.
    #[serde(skip_serializing_if = "is_zero")]
    pub factor_bytes: u32,
    /// Tessellation: bytes per patch record in `patch_data`.
    #[serde(skip_serializing_if = "is_zero")]
    pub patch_bytes: u32,
}

/// Whether a shader's run-time c1 indices stay inside the span a shared c1 bank gives it.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct C1Reads {
    /// `none` (every c1 offset is a constant), `proven` (interval arithmetic keeps every
    /// run-time one inside `span`) or `unproven`.
    pub dynamic: String,
    /// One past the last byte a run-time-offset read may reach (0: none; 2^32: unbounded).
    pub end: u64,
    /// The c1 data rounded up to 256 bytes, plus the 256-byte zero gap.
    pub span: u64,
}

/// A geometry shader's input primitive as translated.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct GeometryInput {
    /// `points`, `lines`, `triangles`, `lines_adjacency` or `triangles_adjacency`.
    pub primitive: String,
    /// Vertices per input primitive (the length of the per-vertex input arrays).
    pub vertices: u32,
    /// `given` (facts row or option), `inferred` (every input vertex index is a constant),
    /// `module` (a Vulkan module's execution mode) or `guessed` (an index is computed at run
    /// time and nothing gave the primitive: the host must draw with this topology or give the
    /// right one).
    pub source: String,
}

/// A tessellation-evaluation shader's parameters as translated.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Tessellation {
    /// `isolines`, `triangles` or `quads`.
    pub domain: String,
    /// `equal`, `fractional_odd` or `fractional_even`.
    pub spacing: String,
    /// `points`, `lines`, `triangles_ccw` or `triangles_cw`.
    pub output: String,
    /// `given` (facts row or option), `container` (the DKSH header), `module` (a Vulkan
    /// module's execution modes) or `guessed` (the default triangles, equal, triangles_ccw).
    pub source: String,
}

/// One stage input or output vector.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct IoVar {
    /// Location.
    pub location: u32,
    /// `float`, `sint` or `uint` (4 components).
    pub component_type: String,
    /// Fragment outputs: the dual-source blend index (1: the second source of colour
    /// target `location`, MSL `[[color(n), index(1)]]`); omitted when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub index: u32,
}

/// Entries in a Metal stage's buffer argument table (indices 0–30).
pub const METAL_BUFFERS: u32 = 31;
/// Entries in a Metal stage's texture argument table (Apple GPUs of the Apple6 family on).
pub const METAL_TEXTURES: u32 = 128;
/// Entries in a Metal stage's sampler argument table.
pub const METAL_SAMPLERS: u32 = 16;

/// How many entries of each Metal argument table one shader uses (indices `0..n`), and whether
/// they fit the tables without argument buffers.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct MetalTables {
    /// Buffer indices used (the host binds vertex streams and its own data from here on).
    pub buffers: u32,
    /// Texture indices used.
    pub textures: u32,
    /// Sampler indices used.
    pub samplers: u32,
    /// Every table within [`METAL_BUFFERS`], [`METAL_TEXTURES`] and [`METAL_SAMPLERS`].
    pub fits: bool,
}

/// The Metal argument table a resource kind lives in.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum MetalTable {
    Buffer,
    Texture,
    Sampler,
    /// Shares its texture's binding (samp_ubo, samp_id).
    Companion,
}

/// The kind of a push constant block: in the buffer table after every other buffer.
pub const PUSH: &str = "push";

fn metal_table(kind: &str) -> MetalTable {
    match kind {
        "texture" | "image" | "tex_ubo" | "tex_dyn" => MetalTable::Texture,
        "sampler" | "samp_dyn" => MetalTable::Sampler,
        "samp_ubo" | "samp_id" => MetalTable::Companion,
        _ => MetalTable::Buffer,
    }
}

/// Gives every resource a compact Metal index per argument table — in Vulkan (set, binding)
/// order (then guest offset), an array taking `count` entries — and combined image samplers a
/// sampler index after the separate samplers; a push constant block ([`PUSH`]) takes the next
/// buffer index after every uniform and storage buffer (SPIRV-Cross would put it at buffer 0,
/// where the first uniform buffer goes). Metal's tables are small (31 buffers, 16 samplers),
/// so the Vulkan binding numbers, which encode the guest slot, cannot be used directly. The
/// result depends only on the resource list, so builds stay deterministic.
pub fn assign_metal_indices(res: &mut [Resource]) -> MetalTables {
    let mut order: Vec<usize> = (0..res.len()).collect();
    // The key borrows the kind: a key owning it would clone a string per comparison.
    let key = |i: usize| {
        let r = &res[i];
        (
            metal_table(&r.kind),
            r.kind == PUSH,
            r.set,
            r.binding,
            r.guest_offset,
            r.bank,
            r.kind.as_str(),
        )
    };
    order.sort_by(|&a, &b| key(a).cmp(&key(b)));
    let mut next = [0u32; 3];
    for &i in &order {
        let r = &mut res[i];
        let table = metal_table(&r.kind);
        if table == MetalTable::Companion {
            continue;
        }
        let t = table as usize;
        r.metal_index = next[t];
        next[t] += r.count.max(1);
        r.metal_sampler = None;
    }
    // Combined image samplers take sampler indices after the separate samplers.
    for &i in &order {
        let r = &mut res[i];
        if matches!(r.kind.as_str(), "texture" | "tex_ubo") && !r.separate {
            r.metal_sampler = Some(next[2]);
            next[2] += r.count.max(1);
        }
    }
    // samp_ubo / samp_id complete the texture at the same binding.
    for i in 0..res.len() {
        if metal_table(&res[i].kind) != MetalTable::Companion {
            continue;
        }
        let b = res[i].binding;
        if let Some(t) = res
            .iter()
            .position(|t| t.binding == b && matches!(t.kind.as_str(), "texture" | "tex_ubo"))
        {
            let (idx, samp) = (res[t].metal_index, res[t].metal_sampler);
            res[i].metal_index = idx;
            res[i].metal_sampler = samp;
        }
    }
    MetalTables {
        buffers: next[0],
        textures: next[1],
        samplers: next[2],
        fits: next[0] <= METAL_BUFFERS && next[1] <= METAL_TEXTURES && next[2] <= METAL_SAMPLERS,
    }
}

/// A reflection record that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError(pub String);

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "reflection JSON: {}", self.0)
    }
}

impl std::error::Error for ReadError {}

impl Reflection {
    /// Pretty JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("reflection serialises")
    }

    /// Parses reflection JSON, refusing another schema version.
    pub fn from_json(text: &str) -> Result<Self, ReadError> {
        let r: Reflection = serde_json::from_str(text).map_err(|e| ReadError(e.to_string()))?;
        if r.version != SchemaVersion::default() {
            return Err(ReadError(format!(
                "schema version {}, this reader reads version {SCHEMA_VERSION}: rebuild with the \
                 matching dmsh",
                r.version.0
            )));
        }
        Ok(r)
    }

    /// The entry point name, `main` when empty.
    pub fn entry_name(&self) -> &str {
        if self.entry.is_empty() {
            "main"
        } else {
            &self.entry
        }
    }

    /// Subgroup size the shader needs (32 with `warp_ops`), or 0 when any size works.
    pub fn required_subgroup_size(&self) -> u32 {
        if self.warp_ops {
            32
        } else {
            0
        }
    }

    /// The cbuf resource for guest bank `bank`, if any.
    pub fn cbuf(&self, bank: u32) -> Option<&Resource> {
        self.resources
            .iter()
            .find(|r| r.kind == "cbuf" && r.bank == bank)
    }
}

impl Resource {
    /// The bank (cbuf) or slot (everything else).
    pub fn index(&self) -> u32 {
        self.bank
    }

    /// `sbuf_ubo`: (uniform-buffer slot, byte offset) of the buffer's address (`ubo` /
    /// `offset`, else `bank` / `guest_offset`).
    pub fn sbuf_ubo(&self) -> (u32, u32) {
        (
            self.ubo.unwrap_or(self.bank),
            self.offset.unwrap_or(self.guest_offset),
        )
    }

    /// The Vulkan binding: explicit, else the table of docs/reflection.md.
    pub fn vk_binding(&self) -> u32 {
        self.binding.unwrap_or_else(|| {
            if self.kind == "sbuf_ubo" {
                let (u, o) = self.sbuf_ubo();
                return 32 + (0x4000 | (u << 10) | (o / 4));
            }
            let n = self.bank;
            match self.kind.as_str() {
                "cbuf" => n,
                "sbuf" => 32 + n,
                "texture" => 64 + n,
                "sampler" => 96 + n,
                "image" => 128 + n,
                _ => n,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(kind: &str, binding: u32, count: u32, separate: bool) -> Resource {
        Resource {
            kind: kind.into(),
            bank: 0,
            guest_offset: 0,
            size: None,
            set: 0,
            binding: Some(binding),
            metal_index: u32::MAX,
            metal_sampler: None,
            count,
            separate,
            ubo: None,
            offset: None,
            ..Default::default()
        }
    }

    #[test]
    fn metal_indices_are_compact_per_table() {
        let mut res = vec![
            r("sbuf", 33, 0, false),
            r("cbuf", 3, 0, false),
            r("texture", 64 + 130, 0, true),
            r("sampler", 96 + 5, 0, false),
            r("texture", 64 + 2, 0, false),
            r("samp_id", 64 + 2, 0, false),
            r("image", 128 + 1, 0, false),
            r("tex_dyn", 64 + 0x7f00, 32, false),
            r("cbuf", 0, 0, false),
        ];
        let t = assign_metal_indices(&mut res);
        let idx: Vec<(u32, Option<u32>)> = res
            .iter()
            .map(|r| (r.metal_index, r.metal_sampler))
            .collect();
        assert_eq!(
            idx,
            vec![
                (2, None),    // sbuf after both cbufs
                (1, None),    // cbuf 3
                (2, None),    // separate texture slot 130 (binding 194, after the image)
                (0, None),    // the one separate sampler
                (0, Some(1)), // combined texture slot 2: sampler after the separate one
                (0, Some(1)), // its samp_id shares it
                (1, None),    // image (binding 129)
                (3, None),    // tex_dyn array, 32 entries
                (0, None),    // cbuf 0
            ]
        );
        assert_eq!(
            t,
            MetalTables {
                buffers: 3,
                textures: 35,
                samplers: 2,
                fits: true
            }
        );
    }

    #[test]
    fn readers_check_the_version_and_take_defaults() {
        let r = Reflection::from_json(r#"{"resources":[{"kind":"sbuf","slot":2}]}"#).unwrap();
        assert_eq!(r.version.0, SCHEMA_VERSION);
        assert_eq!((r.resources[0].bank, r.resources[0].vk_binding()), (2, 34));
        assert_eq!(r.entry_name(), "main");
        let e = Reflection::from_json(r#"{"version": 0}"#).unwrap_err();
        assert!(e.to_string().contains("schema version 0"), "{e}");
        assert!(Reflection::from_json("{").is_err());
        let w = Reflection {
            stage: "compute".into(),
            ..Default::default()
        };
        assert_eq!(Reflection::from_json(&w.to_json()).unwrap(), w);
    }

    #[test]
    fn push_constants_follow_every_buffer_and_arrays_take_count_indices() {
        let mut push = r(PUSH, 0, 0, false);
        push.binding = None;
        let mut res = vec![
            push,
            r("cbuf", 0, 4, false),
            r("sbuf", 1, 0, false),
            r("texture", 2, 8, false),
        ];
        res[2].set = 1;
        let t = assign_metal_indices(&mut res);
        let idx: Vec<(u32, Option<u32>)> = res
            .iter()
            .map(|r| (r.metal_index, r.metal_sampler))
            .collect();
        // cbuf array 0..4, sbuf (set 1) 4, push 5; 8 combined samplers 0..8.
        assert_eq!(idx, vec![(5, None), (0, None), (4, None), (0, Some(0))]);
        assert_eq!((t.buffers, t.textures, t.samplers), (6, 8, 8));
    }

    #[test]
    fn overflowing_tables_are_reported() {
        let mut res: Vec<Resource> = (0..17).map(|n| r("texture", 64 + n, 0, false)).collect();
        let t = assign_metal_indices(&mut res);
        assert_eq!((t.textures, t.samplers, t.fits), (17, 17, false));
    }
}
