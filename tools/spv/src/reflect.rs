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
    /// Metal argument index.
    pub metal_index: u32,
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
    /// Resources.
    pub resources: Vec<Resource>,
    /// Graphics: stage inputs (vertex attributes, varyings) by location.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<IoVar>,
    /// Graphics: stage outputs (varyings, fragment colour targets) by location.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<IoVar>,
    /// Whether Metal can run the stage directly (false for geometry and tessellation, which
    /// a later step must lower).
    pub metal_direct: bool,
}

/// One stage input or output vector.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct IoVar {
    /// Location.
    pub location: u32,
    /// `float`, `sint` or `uint` (4 components).
    pub component_type: &'static str,
}

impl Reflection {
    /// Pretty JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("reflection serialises")
    }
}
