//! The C types of the ABI (`include/dmsh_runtime.h` declares the same, field by field; the
//! test `c_example` checks sizes and offsets through the C compiler).

use std::ffi::c_char;

/// No Metal index (`DMSH_NO_INDEX`): a resource without a sampler.
pub const NO_INDEX: u32 = u32::MAX;

/// Binding kinds (`DmshBindingKind`): the reflection's `kind` strings (docs/reflection.md).
pub const BINDING_KINDS: [(&str, u32); 13] = [
    ("cbuf", 1),
    ("sbuf", 2),
    ("sbuf_ubo", 3),
    ("texture", 4),
    ("sampler", 5),
    ("image", 6),
    ("tex_ubo", 7),
    ("samp_ubo", 8),
    ("samp_id", 9),
    ("tex_dyn", 10),
    ("samp_dyn", 11),
    (dmsh_reflect::LOWERED_BUFFER, BIND_LOWERED),
    (dmsh_reflect::PUSH, BIND_PUSH),
];

/// Binding kind `DMSH_BIND_LOWERED`: a buffer between the passes of a lowered geometry or
/// tessellation pipeline (reflection kind `lowered`); its `slot` is the role
/// (`LOWERED_*`, docs/geometry.md).
pub const BIND_LOWERED: u32 = 12;

/// Binding kind `DMSH_BIND_PUSH`: a Vulkan module's push constant block (reflection kind
/// `push`, `dmsh build --spirv`): `size` bytes the host sets at buffer `metal_index`
/// (`setVertexBytes` / `setFragmentBytes` / `setBytes`), after every other buffer.
pub const BIND_PUSH: u32 = 13;

/// Lowered buffer role (`DMSH_LOWERED_VERTICES_IN`): vertex records the capture pass writes.
pub const LOWERED_VERTICES_IN: u32 = 0;
/// Lowered buffer role (`DMSH_LOWERED_VERTICES_OUT`): vertex records the geometry kernel
/// writes (record 0 the null vertex) and the draw reads.
pub const LOWERED_VERTICES_OUT: u32 = 1;
/// Lowered buffer role (`DMSH_LOWERED_INDICES`): the geometry draw's u32 index list.
pub const LOWERED_INDICES: u32 = 2;
/// Lowered buffer role (`DMSH_LOWERED_PARAMS`): the kernel's eight u32 parameters.
pub const LOWERED_PARAMS: u32 = 3;
/// Lowered buffer role (`DMSH_LOWERED_INDEX_SOURCE`): the app's index buffer.
pub const LOWERED_INDEX_SOURCE: u32 = 4;
/// Lowered buffer role (`DMSH_LOWERED_CONTROL_POINTS`): tessellation control-point records.
pub const LOWERED_CONTROL_POINTS: u32 = 5;
/// Lowered buffer role (`DMSH_LOWERED_PATCH_DATA`): tessellation patch records.
pub const LOWERED_PATCH_DATA: u32 = 6;
/// Lowered buffer role (`DMSH_LOWERED_TESS_FACTORS`): Metal's tessellation-factor buffer.
pub const LOWERED_TESS_FACTORS: u32 = 7;
/// Lowered buffer role (`DMSH_LOWERED_DOMAIN_POINTS`): a tessellator's domain points
/// (lavapipe's draw form only).
pub const LOWERED_DOMAIN_POINTS: u32 = 8;

/// The number of a reflection `kind` (`DMSH_BIND_*`), if it is one.
pub fn binding_kind(kind: &str) -> Option<u32> {
    BINDING_KINDS
        .iter()
        .find(|(k, _)| *k == kind)
        .map(|&(_, n)| n)
}

/// Component types of stage inputs and outputs (`DMSH_TYPE_*`): float 0, sint 1, uint 2.
pub const COMPONENT_TYPES: [&str; 3] = ["float", "sint", "uint"];

/// `DmshBinding.flags`: a separate image (`texture` / `tex_ubo` with `separate`).
pub const BINDING_SEPARATE: u32 = 1;
/// `DmshBinding.flags`: a cbuf some read of which has a run-time offset (`reads_dynamic`).
pub const BINDING_READS_DYNAMIC: u32 = 2;
/// `DmshBinding.flags`: `size` is known (the reflection gives it).
pub const BINDING_SIZE_KNOWN: u32 = 4;

/// `DmshShader.flags`: the shader needs its own whole 64 KiB c1 buffer (on the c1 list, or
/// the list is unusable).
pub const SHADER_C1_FULL: u32 = 1;
/// `DmshShader.flags`: every Metal argument table fits (`metal.fits`).
pub const SHADER_METAL_FITS: u32 = 2;
/// `DmshShader.flags`: Metal runs the stage directly (`metal_direct`).
pub const SHADER_METAL_DIRECT: u32 = 4;
/// `DmshShader.flags`: 32-lane warp operations (`warp_ops`): needs a SIMD-group of 32.
pub const SHADER_WARP_OPS: u32 = 8;
/// `DmshShader.flags`: compute group size from the dispatch (`local_size_spec`).
pub const SHADER_LOCAL_SIZE_SPEC: u32 = 16;
/// `DmshShader.flags`: 64-bit global addresses (`uses_global_addresses`).
pub const SHADER_GLOBAL_ADDRESSES: u32 = 32;
/// `DmshShader.flags`: 64-bit atomics (`int64_atomics`).
pub const SHADER_INT64_ATOMICS: u32 = 64;

/// Lowered passes (`DmshLowering.pass`, `DMSH_PASS_*`): none (a direct shader).
pub const PASS_NONE: u32 = 0;
/// `DMSH_PASS_VERTEX_CAPTURE`: a vertex shader writing vertex records (`<key>_g`).
pub const PASS_VERTEX_CAPTURE: u32 = 1;
/// `DMSH_PASS_GEOMETRY_KERNEL`: a geometry shader as a compute kernel (`<key>_b`).
pub const PASS_GEOMETRY_KERNEL: u32 = 2;
/// `DMSH_PASS_GEOMETRY_DRAW`: the vertex function of a geometry shader's draw (`<key>_p`).
pub const PASS_GEOMETRY_DRAW: u32 = 3;
/// `DMSH_PASS_TESS_CONTROL_KERNEL`: a tessellation control shader as a compute kernel
/// (`<key>_b`).
pub const PASS_TESS_CONTROL_KERNEL: u32 = 4;
/// `DMSH_PASS_TESS_EVAL_POST`: a tessellation evaluation shader as a post-tessellation vertex
/// function (`<key>_b`).
pub const PASS_TESS_EVAL_POST: u32 = 5;
/// `DMSH_PASS_TESS_EVAL_DRAW`: a tessellation evaluation shader as a vertex shader over
/// domain points (lavapipe's form).
pub const PASS_TESS_EVAL_DRAW: u32 = 6;

/// The number (`DMSH_PASS_*`) of a lowered pass; the numbering is
/// [`dmsh_reflect::lowered::Pass::number`]'s, which the constants above spell out for C.
pub fn pass(p: dmsh_reflect::lowered::Pass) -> u32 {
    p.number()
}

/// The name of pass number `n` (`DMSH_PASS_*`), "none" for 0 or a number no pass has.
pub fn pass_name(n: u32) -> &'static str {
    n.checked_sub(1)
        .and_then(|i| dmsh_reflect::lowered::Pass::ALL.get(i as usize))
        .map_or("none", |p| p.name())
}

/// `DmshLowering.output` (`DMSH_PRIM_*`) by number: none 0, points 1, lines 2, triangles 3.
pub const PRIMITIVES: [&str; 4] = ["", "points", "lines", "triangles"];
/// `DMSH_PRIM_POINTS`.
pub const PRIM_POINTS: u32 = 1;
/// `DMSH_PRIM_LINES`.
pub const PRIM_LINES: u32 = 2;
/// `DMSH_PRIM_TRIANGLES`.
pub const PRIM_TRIANGLES: u32 = 3;

/// The reflection's topology names by `VkPrimitiveTopology` number (`DmshLowering.topologies`
/// has bit n set when topology n is served).
pub const TOPOLOGIES: [&str; 10] = [
    "point_list",
    "line_list",
    "line_strip",
    "triangle_list",
    "triangle_strip",
    "triangle_fan",
    "line_list_adjacency",
    "line_strip_adjacency",
    "triangle_list_adjacency",
    "triangle_strip_adjacency",
];

/// The `VkPrimitiveTopology` number of a topology name, if it is one.
pub fn topology(name: &str) -> Option<u32> {
    TOPOLOGIES.iter().position(|t| *t == name).map(|i| i as u32)
}

/// Variants of a key (`dmsh_lookup_pass`'s `variant`, `DMSH_VARIANT_*`): `<key>_b`, the
/// shader itself (as `dmsh_lookup`).
pub const VARIANT_MAIN: u32 = 0;
/// `DMSH_VARIANT_DRAW`: `<key>_p`, a geometry shader's draw vertex function.
pub const VARIANT_DRAW: u32 = 1;
/// `DMSH_VARIANT_CAPTURE`: `<key>_g`, a vertex shader's capture form (in a title with
/// geometry or tessellation control shaders).
pub const VARIANT_CAPTURE: u32 = 2;
/// `DMSH_VARIANT_PRIMITIVE_ID`: `<key>_q`, a fragment shader reading gl_PrimitiveID from the
/// geometry draw's varying.
pub const VARIANT_PRIMITIVE_ID: u32 = 3;
/// `DMSH_VARIANT_DUAL_SOURCE`: `<key>_d`, a Vulkan fragment module's dual-source form (its
/// location-1 output as `[[color(0), index(1)]]`), for pipelines whose blend reads source 1.
pub const VARIANT_DUAL_SOURCE: u32 = 4;
/// File suffixes of the variants, by `DMSH_VARIANT_*`.
pub const VARIANT_SUFFIXES: [&str; 5] = ["_b", "_p", "_g", "_q", "_d"];

/// Depth modes (`DmshDepthMode`): NVN's GL mode (near = −1; the `main0` entry point).
pub const DEPTH_GL: u32 = 0;
/// Depth modes: NVN's zero-to-one mode (near = 0; `main0_z` on vertex shaders).
pub const DEPTH_ZERO_TO_ONE: u32 = 1;

/// One resource the host binds (`DmshBinding`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Binding {
    /// `DMSH_BIND_*` ([`BINDING_KINDS`]).
    pub kind: u32,
    /// The guest constant bank (cbuf), uniform-buffer slot (sbuf_ubo, tex_ubo, samp_ubo) or
    /// slot (the others; samp_id: the sampler ID).
    pub slot: u32,
    /// cbuf: the guest byte mapped to byte 0; sbuf_ubo: the address's byte offset in the
    /// uniform buffer; tex_ubo / samp_ubo: the handle word's byte offset.
    pub guest_offset: u32,
    /// The Vulkan binding (docs/reflection.md's table).
    pub vk_binding: u32,
    /// Index in the Metal table of its kind (buffer, texture or sampler).
    pub metal_index: u32,
    /// Metal sampler index of a combined image sampler, else [`NO_INDEX`].
    pub metal_sampler: u32,
    /// Metal table entries taken from `metal_index` on: 1, or the array's `count`.
    pub count: u32,
    /// `DMSH_BINDING_*` flags.
    pub flags: u32,
    /// cbuf: the first of its constant-offset read ranges in `DmshShader.reads`.
    pub read_first: u32,
    /// cbuf: how many ranges (for bank 0: the driver-segment words the host must fill).
    pub read_count: u32,
    /// Size in bytes when `DMSH_BINDING_SIZE_KNOWN`, else 0.
    pub size: u64,
}

/// A guest byte range `[start, end)` of a constant bank (`DmshRange`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Range {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

/// One stage input or output vector (`DmshIo`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Io {
    /// Location (vertex attribute, varying or colour target).
    pub location: u32,
    /// `DMSH_TYPE_*`: float 0, sint 1, uint 2 (four components).
    pub component_type: u32,
    /// A colour output's blend source index (`[[color(location), index(n)]]`): 1 for the
    /// second source of a dual-source variant, else 0.
    pub index: u32,
}

/// What the host needs of one built shader (`DmshShader`); owned by the title, valid until
/// it is closed.
#[repr(C)]
#[derive(Debug)]
pub struct Shader {
    /// The key.
    pub key: u64,
    /// `DMSH_STAGE_*`: dmsh_formats::Stage in order (vertex 0 … compute 5).
    pub stage: u32,
    /// `DMSH_SHADER_*` flags.
    pub flags: u32,
    /// `b-<V>/<key>_b.metallib`.
    pub library_path: *const c_char,
    /// `b-<V>/<key>_b.metal` (the MSL the library is compiled from).
    pub source_path: *const c_char,
    /// The entry point for GL depth mode (`main0`).
    pub entry_gl: *const c_char,
    /// The entry point for zero-to-one depth mode (`main0_z` on vertex shaders, else the
    /// same as `entry_gl`).
    pub entry_zero_one: *const c_char,
    /// `binding_count` resources, in the reflection's order.
    pub bindings: *const Binding,
    /// `read_count` cbuf read ranges (each cbuf's `read_first` / `read_count` point here).
    pub reads: *const Range,
    /// `input_count` stage inputs (vertex: attributes with their component types).
    pub inputs: *const Io,
    /// `output_count` stage outputs (fragment: the colour targets written).
    pub outputs: *const Io,
    /// Entries of `bindings`.
    pub binding_count: u32,
    /// Entries of `reads`.
    pub read_count: u32,
    /// Entries of `inputs`.
    pub input_count: u32,
    /// Entries of `outputs`.
    pub output_count: u32,
    /// Metal buffer indices the shader takes (the host's own buffers start here).
    pub metal_buffers: u32,
    /// Metal texture indices taken.
    pub metal_textures: u32,
    /// Metal sampler indices taken.
    pub metal_samplers: u32,
    /// Compute: the workgroup size.
    pub local_size: [u32; 3],
    /// Compute: workgroup memory bytes.
    pub shared_bytes: u32,
    /// Per-thread local memory bytes.
    pub local_bytes: u32,
    /// The lowered pass this module is (`DmshLowering`), or NULL for a shader in its direct
    /// form; owned like the arrays.
    pub lowering: *const Lowering,
}

/// What the host builds around one pass of a lowered geometry or tessellation pipeline
/// (`DmshLowering`; the reflection's `lowering`, docs/geometry.md, docs/tessellation.md).
/// Fields a pass does not use are 0.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lowering {
    /// `DMSH_PASS_*` ([`pass`]).
    pub pass: u32,
    /// Bytes per vertex record in `vertices_in` / `vertices_out` / `control_points` (576).
    pub record_bytes: u32,
    /// Geometry: vertices per input primitive.
    pub input_vertices: u32,
    /// Geometry: invocations per input primitive.
    pub invocations: u32,
    /// Geometry: the most vertices one invocation emits.
    pub max_vertices: u32,
    /// Geometry: the draw's list topology, `DMSH_PRIM_*` (0: none).
    pub output: u32,
    /// Geometry: index-list entries per invocation.
    pub indices_per_invocation: u32,
    /// Geometry: bit n set when the kernel assembles `VkPrimitiveTopology` n
    /// ([`TOPOLOGIES`]).
    pub topologies: u32,
    /// Kernels: threads per threadgroup.
    pub local_size: u32,
    /// Geometry: the varying location carrying gl_PrimitiveID to the fragment shader's `_q`
    /// variant, or [`NO_INDEX`].
    pub primitive_id_location: u32,
    /// Tessellation: output control points per patch.
    pub control_points: u32,
    /// Tessellation: bytes per patch in `tess_factors` (8 triangles, 12 quads / isolines);
    /// 0 for the control kernel, which writes the layout its `params[4]` names.
    pub factor_bytes: u32,
    /// Tessellation: bytes per patch record in `patch_data`.
    pub patch_bytes: u32,
    /// Tessellation evaluation: the domain, `DMSH_TESS_DOMAIN_*` ([`TESS_DOMAINS`]; 0 none).
    pub tess_domain: u32,
    /// Tessellation evaluation: the spacing, `DMSH_TESS_SPACING_*` ([`TESS_SPACINGS`]).
    pub tess_spacing: u32,
    /// Tessellation evaluation: the output, `DMSH_TESS_OUTPUT_*` ([`TESS_OUTPUTS`]).
    pub tess_output: u32,
}

/// The reflection's tessellation domains by `DMSH_TESS_DOMAIN_*` number (0: none).
pub const TESS_DOMAINS: [&str; 4] = ["", "triangles", "quads", "isolines"];
/// The reflection's tessellation spacings by `DMSH_TESS_SPACING_*` number (0: none).
pub const TESS_SPACINGS: [&str; 4] = ["", "equal", "fractional_odd", "fractional_even"];
/// The reflection's tessellation outputs by `DMSH_TESS_OUTPUT_*` number (0: none).
pub const TESS_OUTPUTS: [&str; 5] = ["", "triangles_ccw", "triangles_cw", "points", "lines"];

/// Parameters of `dmsh_open` (`DmshOpenParams`).
#[repr(C)]
#[derive(Debug)]
pub struct OpenParams {
    /// `sizeof(DmshOpenParams)` as the caller knows it: later versions add fields at the end
    /// (the warm-up lists) and read them only when the size covers them.
    pub size: u32,
    /// `DMSH_OPEN_*` flags.
    pub flags: u32,
    /// The shader map (`shader_map.tsv`); NULL: the keys and stages `b-<V>/_b_build.json`
    /// records (a Vulkan capture build, which has no map).
    pub shader_map: *const c_char,
    /// The folder holding `b-<V>/`; required.
    pub library_dir: *const c_char,
    /// `c1_full.tsv`; NULL: the one next to the shader map (without a map: none is needed,
    /// a capture build has no guest constant banks).
    pub c1_list: *const c_char,
    /// The chain version V; NULL: the one compiled in (`DMSH_CHAIN`).
    pub chain: *const c_char,
    /// The seed warm-up list (`pso_manifest.tsv`); NULL: the one next to the shader map.
    /// Read only when `size` covers it (later field: NULL for older callers).
    pub pso_manifest: *const c_char,
    /// The device warm-up list (`pso_user.tsv`, next to the save folder); NULL: none (nothing
    /// read, and `dmsh_warm_append` refuses). Read only when `size` covers it.
    pub pso_user: *const c_char,
}

/// `DmshOpenParams.flags`: read and check every reflection at open, so that no lookup ever
/// reads a file (open then costs a read and parse per shader).
pub const OPEN_EAGER: u32 = 1;
/// `DmshOpenParams.flags`: read neither warm-up list (the seed's `DM_PSO_MANIFEST=off`).
pub const OPEN_WARM_OFF: u32 = 2;

/// One row of the warm-up lists, resolved to the title's shaders (`DmshWarmRow`); owned by
/// the title.
#[repr(C)]
#[derive(Debug)]
pub struct WarmRow {
    /// `DMSH_WARM_SHADER` (`S`), `DMSH_WARM_RENDER` (`R`) or `DMSH_WARM_COMPUTE` (`C`).
    pub kind: u32,
    /// `DMSH_WARM_SEED` or `DMSH_WARM_DEVICE`: the list it comes from.
    pub list: u32,
    /// Its line in that list (line 1 is the header).
    pub line: u32,
    /// `R`: the depth mode (`DMSH_DEPTH_*`); else `DMSH_DEPTH_GL`.
    pub depth: u32,
    /// The shader (`S`, `C`) or the vertex shader (`R`).
    pub shader: *const Shader,
    /// `R`: the fragment shader, or NULL for a pipeline without one; else NULL.
    pub fragment: *const Shader,
    /// `shader`'s entry point for `depth`.
    pub entry: *const c_char,
    /// `fragment`'s entry point, or NULL.
    pub fragment_entry: *const c_char,
    /// `R`: the host's pipeline settings, `state_len` bytes (NULL when 0).
    pub state: *const u8,
    /// Bytes at `state`.
    pub state_len: u32,
}

/// `DmshWarmRow.kind`: a shader (`S`).
pub const WARM_SHADER: u32 = crate::warm::Kind::Shader.code();
/// `DmshWarmRow.kind`: a render pipeline (`R`).
pub const WARM_RENDER: u32 = crate::warm::Kind::Render.code();
/// `DmshWarmRow.kind`: a compute pipeline (`C`).
pub const WARM_COMPUTE: u32 = crate::warm::Kind::Compute.code();
/// `DmshWarmRow.list`: the seed list.
pub const WARM_SEED: u32 = crate::warm::List::Seed as u32;
/// `DmshWarmRow.list`: the device list.
pub const WARM_DEVICE: u32 = crate::warm::List::Device as u32;

#[cfg(test)]
mod tests {
    use super::*;
    use dmsh_reflect::lowered::Pass;

    /// The C constants spell out `Pass::number`; the names come back from the numbers.
    #[test]
    fn pass_numbers_are_the_reflections() {
        let c = [
            (Pass::VertexCapture, PASS_VERTEX_CAPTURE),
            (Pass::GeometryKernel, PASS_GEOMETRY_KERNEL),
            (Pass::GeometryDraw, PASS_GEOMETRY_DRAW),
            (Pass::TessControlKernel, PASS_TESS_CONTROL_KERNEL),
            (Pass::TessEvalPost, PASS_TESS_EVAL_POST),
            (Pass::TessEvalDraw, PASS_TESS_EVAL_DRAW),
        ];
        assert_eq!(c.len(), Pass::ALL.len());
        for (p, n) in c {
            assert_eq!(pass(p), n, "{p}");
            assert_eq!(pass_name(n), p.name());
        }
        assert_eq!(pass_name(PASS_NONE), "none");
        assert_eq!(pass_name(7), "none");
    }
}
