//! The reflection record written next to every translated shader (`docs/reflection.md`).

use serde::Serialize;

/// One resource the runner binds.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Resource {
    /// `cbuf`, `sbuf`, `texture`, `sampler`, `image`, …
    pub kind: &'static str,
    /// The guest constant bank (cbuf) or slot.
    pub bank: u32,
    /// cbuf: the guest byte offset that maps to byte 0 of the buffer.
    pub guest_offset: u32,
    /// Size in bytes, where known.
    pub size: u32,
    /// Vulkan descriptor set.
    pub set: u32,
    /// Vulkan binding.
    pub binding: u32,
    /// Metal argument table index: buffer (cbuf, sbuf, sbuf_ubo), texture (texture, image,
    /// tex_ubo, tex_dyn) or sampler (sampler, samp_dyn) table; compact per shader, assigned
    /// by [`assign_metal_indices`] once the list is complete (emission leaves 0 here).
    /// `samp_ubo` / `samp_id` carry their texture's indices.
    pub metal_index: u32,
    /// Metal sampler index of a combined image sampler (texture / tex_ubo that is not
    /// `separate`, and its samp_ubo / samp_id companion).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metal_sampler: Option<u32>,
    /// Array elements (`tex_dyn` / `samp_dyn`); omitted for single resources.
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
}

fn is_zero(x: &u32) -> bool {
    *x == 0
}

/// The binding contract of one translated shader.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Reflection {
    /// Format version.
    pub version: u32,
    /// Stage name.
    pub stage: &'static str,
    /// SPIR-V entry point name.
    pub entry: &'static str,
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
    pub fma_mode: &'static str,
    /// `nvn`, `cuda` or `deko3d`.
    pub abi: &'static str,
    /// Whether the control flow went through the dispatcher loop.
    pub dispatcher: bool,
    /// `structured` (SPIR-V selection and loop constructs) or `dispatcher` (the fallback
    /// `loop { switch (pc) { … } }`).
    pub control_flow: &'static str,
    /// Why the dispatcher was used (absent when structured): `unstructurable` (the
    /// structurizer refused the graph) or `barrier after divergent exit` (a barrier that
    /// some invocations may skip by ending first, see dmsh-ir's `uniform::barrier`; the
    /// barrier-synchronised dispatcher is exact there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dispatcher_reason: Option<&'static str>,
    /// Branches that leave several constructs through the goto variable (structured only).
    pub gotos: usize,
    /// Number of IR blocks.
    pub blocks: usize,
    /// `ssa` when guest registers, predicates and flags were turned into SSA values (dmsh-ir's
    /// `ssa` pass), `variables` when they stay in variables (a jump with targets unknown at
    /// translation time is left).
    pub guest_state: &'static str,
    /// Whether 32-lane warp operations (SHFL, VOTE, lane masks) are used: results depend on
    /// the device's subgroup size being 32.
    pub warp_ops: bool,
    /// Whether the shader uses 64-bit atomics (`Int64Atomics`: ATOM/RED/ATOMS .64/.U64/.S64,
    /// CAS.64). Metal offers only some 64-bit atomic operations, on some GPU families.
    pub int64_atomics: bool,
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
    /// Whether Metal can run the stage directly (false for geometry and tessellation, which
    /// a later step must lower).
    pub metal_direct: bool,
}

/// A geometry shader's input primitive as translated.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GeometryInput {
    /// `points`, `lines`, `triangles`, `lines_adjacency` or `triangles_adjacency`.
    pub primitive: &'static str,
    /// Vertices per input primitive (the length of the per-vertex input arrays).
    pub vertices: u32,
    /// `given` (facts row or option), `inferred` (every input vertex index is a constant) or
    /// `guessed` (an index is computed at run time and nothing gave the primitive: the host
    /// must draw with this topology or give the right one).
    pub source: &'static str,
}

/// A tessellation-evaluation shader's parameters as translated.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Tessellation {
    /// `isolines`, `triangles` or `quads`.
    pub domain: &'static str,
    /// `equal`, `fractional_odd` or `fractional_even`.
    pub spacing: &'static str,
    /// `points`, `lines`, `triangles_ccw` or `triangles_cw`.
    pub output: &'static str,
    /// `given` (facts row or option), `container` (the DKSH header) or `guessed` (the default
    /// triangles, equal, triangles_ccw).
    pub source: &'static str,
}

/// One stage input or output vector.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct IoVar {
    /// Location.
    pub location: u32,
    /// `float`, `sint` or `uint` (4 components).
    pub component_type: &'static str,
}

/// Entries in a Metal stage's buffer argument table (indices 0–30).
pub const METAL_BUFFERS: u32 = 31;
/// Entries in a Metal stage's texture argument table (Apple GPUs of the Apple6 family on).
pub const METAL_TEXTURES: u32 = 128;
/// Entries in a Metal stage's sampler argument table.
pub const METAL_SAMPLERS: u32 = 16;

/// How many entries of each Metal argument table one shader uses (indices `0..n`), and whether
/// they fit the tables without argument buffers.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
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

fn metal_table(kind: &str) -> MetalTable {
    match kind {
        "texture" | "image" | "tex_ubo" | "tex_dyn" => MetalTable::Texture,
        "sampler" | "samp_dyn" => MetalTable::Sampler,
        "samp_ubo" | "samp_id" => MetalTable::Companion,
        _ => MetalTable::Buffer,
    }
}

/// Gives every resource a compact Metal index per argument table — in Vulkan binding order
/// (then guest offset), an array taking `count` entries — and combined image samplers a sampler
/// index after the separate samplers. Metal's tables are small (31 buffers, 16 samplers), so
/// the Vulkan binding numbers, which encode the guest slot, cannot be used directly. The
/// result depends only on the resource list, so builds stay deterministic.
pub fn assign_metal_indices(res: &mut [Resource]) -> MetalTables {
    let mut order: Vec<usize> = (0..res.len()).collect();
    order.sort_by_key(|&i| {
        let r = &res[i];
        (
            metal_table(r.kind),
            r.binding,
            r.guest_offset,
            r.bank,
            r.kind,
        )
    });
    let mut next = [0u32; 3];
    for &i in &order {
        let r = &mut res[i];
        let table = metal_table(r.kind);
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
        if matches!(r.kind, "texture" | "tex_ubo") && !r.separate {
            r.metal_sampler = Some(next[2]);
            next[2] += r.count.max(1);
        }
    }
    // samp_ubo / samp_id complete the texture at the same binding.
    for i in 0..res.len() {
        if metal_table(res[i].kind) != MetalTable::Companion {
            continue;
        }
        let b = res[i].binding;
        if let Some(t) = res
            .iter()
            .position(|t| t.binding == b && matches!(t.kind, "texture" | "tex_ubo"))
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

impl Reflection {
    /// Pretty JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("reflection serialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(kind: &'static str, binding: u32, count: u32, separate: bool) -> Resource {
        Resource {
            kind,
            bank: 0,
            guest_offset: 0,
            size: 0,
            set: 0,
            binding,
            metal_index: u32::MAX,
            metal_sampler: None,
            count,
            separate,
            ubo: None,
            offset: None,
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
    fn overflowing_tables_are_reported() {
        let mut res: Vec<Resource> = (0..17).map(|n| r("texture", 64 + n, 0, false)).collect();
        let t = assign_metal_indices(&mut res);
        assert_eq!((t.textures, t.samplers, t.fits), (17, 17, false));
    }
}
