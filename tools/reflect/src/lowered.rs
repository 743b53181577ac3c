//! The layout of the buffers between the passes of a lowered geometry or tessellation
//! pipeline (docs/geometry.md, docs/tessellation.md): one definition for every writer of a
//! lowered pass — dmsh-spv's lowering of translated shaders and dmsh-fixup's lowering of
//! captured Vulkan modules — and for every reader (the Vulkan harness, a host).
//!
//! A vertex record is the hardware's attribute space, [`RECORD_WORDS`] 32-bit words in
//! [`record_word`]'s order: the 32 generic vectors, the position, point size, primitive ID,
//! layer, viewport and eight clip (then cull) distances. A patch record is [`PATCH_WORDS`]
//! words in [`patch_word`]'s order.

use serde::{Deserialize, Serialize};

/// A pass of a lowered pipeline: the reflection's `lowering.pass`, the build's output keys
/// and the runtime's `DMSH_PASS_*` numbers all come from this one list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pass {
    /// A vertex shader writing vertex records instead of outputs, rasterization off
    /// (`<key>_g`). (The `Default` only so that a `Lowering` can be built field by field; a
    /// reflection always names its pass.)
    #[default]
    VertexCapture,
    /// A geometry shader as a compute kernel over primitives × invocations (`<key>_b`).
    GeometryKernel,
    /// A geometry shader's final draw: the vertex function reading the kernel's records and
    /// writing the geometry shader's outputs (`<key>_p`).
    GeometryDraw,
    /// A tessellation control shader as a compute kernel, one workgroup per patch, one thread
    /// per output control point (`<key>_b`).
    TessControlKernel,
    /// A tessellation evaluation shader reading its patch from the lowered buffers, for
    /// Metal's post-tessellation vertex function (`<key>_b`).
    TessEvalPost,
    /// A tessellation evaluation shader as a vertex shader over a tessellator's domain points
    /// (the form lavapipe draws in place of Metal's fixed-function tessellator).
    TessEvalDraw,
}

impl Pass {
    /// Every pass, in `DMSH_PASS_*` order (number = index + 1).
    pub const ALL: [Pass; 6] = [
        Pass::VertexCapture,
        Pass::GeometryKernel,
        Pass::GeometryDraw,
        Pass::TessControlKernel,
        Pass::TessEvalPost,
        Pass::TessEvalDraw,
    ];

    /// The reflection's `lowering.pass` name.
    pub fn name(self) -> &'static str {
        match self {
            Pass::VertexCapture => "vertex_capture",
            Pass::GeometryKernel => "geometry_kernel",
            Pass::GeometryDraw => "geometry_draw",
            Pass::TessControlKernel => "tess_control_kernel",
            Pass::TessEvalPost => "tess_eval_post",
            Pass::TessEvalDraw => "tess_eval_draw",
        }
    }

    /// The pass named `name` (a [`Pass::name`]).
    pub fn parse(name: &str) -> Option<Pass> {
        Pass::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The runtime's `DMSH_PASS_*` number (1–6; 0 is "not lowered").
    pub fn number(self) -> u32 {
        Pass::ALL.iter().position(|&p| p == self).unwrap_or(0) as u32 + 1
    }

    /// The stage (SPIR-V execution model, in the reflection's stage names) of the shader this
    /// pass lowers.
    pub fn stage(self) -> &'static str {
        match self {
            Pass::VertexCapture => "vertex",
            Pass::GeometryKernel | Pass::GeometryDraw => "geometry",
            Pass::TessControlKernel => "tess_control",
            Pass::TessEvalPost | Pass::TessEvalDraw => "tess_eval",
        }
    }
}

impl std::fmt::Display for Pass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// 32-bit words per vertex record.
pub const RECORD_WORDS: u32 = 144;

/// 32-bit words per patch record (`patch_data`): the tessellation levels and four patch
/// varyings.
pub const PATCH_WORDS: u32 = 24;

/// Threads per threadgroup of a geometry kernel.
pub const KERNEL_LOCAL_SIZE: u32 = 64;

/// The most vertices one geometry invocation may emit in the lowered form (the hardware's
/// and Vulkan's limit is lower; larger maxima are refused, naming the shader).
pub const MAX_OUTPUT_VERTICES: u32 = 1024;

/// The most invocations per primitive the lowered form supports (Vulkan's
/// `maxGeometryShaderInvocations` is 32).
pub const MAX_INVOCATIONS: u32 = 32;

/// The most output control points of a tessellation control kernel (Vulkan's and Metal's
/// limit).
pub const MAX_CONTROL_POINTS: u32 = 32;

/// The varying location of a geometry shader's gl_PrimitiveID in a lowered pipeline (the
/// fragment stage's `primitive_id` input is rewritten to read it; a vertex function cannot
/// write the primitive ID).
pub const PRIMITIVE_ID_LOCATION: u32 = 31;

/// Record word of the clip-space position's x (y, z, w follow).
pub const POSITION_WORD: u32 = 128;
/// Record word of the point size.
pub const POINT_SIZE_WORD: u32 = 132;
/// Record word of the primitive ID.
pub const PRIMITIVE_ID_WORD: u32 = 133;
/// Record word of the layer.
pub const LAYER_WORD: u32 = 134;
/// Record word of the viewport index.
pub const VIEWPORT_WORD: u32 = 135;
/// Record word of clip distance 0 (eight words: clip distances, then cull distances).
pub const CLIP_WORD: u32 = 136;
/// Clip and cull distances a record holds together.
pub const CLIP_WORDS: u32 = 8;
/// Generic vectors a record holds (locations 0–31).
pub const GENERIC_VECTORS: u32 = 32;

/// The record word of attribute byte address `addr` (`a[addr]` of the hardware's attribute
/// space), None outside the record.
pub fn record_word(addr: u32) -> Option<u32> {
    Some(match addr {
        0x80..=0x27f => (addr - 0x80) / 4,
        0x70..=0x7f => POSITION_WORD + (addr - 0x70) / 4,
        0x6c => POINT_SIZE_WORD,
        0x60 => PRIMITIVE_ID_WORD,
        0x64 => LAYER_WORD,
        0x68 => VIEWPORT_WORD,
        0x2c0..=0x2df => CLIP_WORD + (addr - 0x2c0) / 4,
        _ => return None,
    })
}

/// The record word of component `c` of generic vector (Vulkan location) `location`, None
/// outside the record.
pub fn generic_word(location: u32, c: u32) -> Option<u32> {
    (location < GENERIC_VECTORS && c < 4).then(|| record_word(0x80 + 16 * location + 4 * c))?
}

/// Patch-record words of the outer (0–3) and inner (4–5) tessellation levels.
pub const OUTER_LEVEL_WORD: u32 = 0;
/// Patch-record word of inner tessellation level 0.
pub const INNER_LEVEL_WORD: u32 = 4;
/// Patch varyings a patch record holds.
pub const PATCH_VECTORS: u32 = 4;

/// The patch-record word of per-patch attribute `addr` (`a[addr]` with `.P`): outer levels
/// 0–3, inner levels 4–5, patch varying n component c at 8 + 4n + c; None outside.
pub fn patch_word(addr: u32) -> Option<u32> {
    Some(match addr {
        0x00..=0x17 => addr / 4,
        0x20..=0x5f => 8 + (addr - 0x20) / 4,
        _ => return None,
    })
}

/// Metal's tessellation-factor layout for a domain (`tess_param & 0xf`: 0 isolines, 1
/// triangles, 2 quads): u32 words per patch, and the half index of each level word
/// ([`patch_word`] 0–5; None: not in the layout).
pub fn factor_layout(domain: u32) -> (u32, [Option<u32>; 6]) {
    match domain {
        1 => (2, [Some(0), Some(1), Some(2), None, Some(3), None]),
        _ => (3, [Some(0), Some(1), Some(2), Some(3), Some(4), Some(5)]),
    }
}

/// The control points a post-tessellation function declares for a domain (3 for triangles,
/// else 4); its control points come from `control_points`, so the count only has to match
/// the host's `drawPatches`.
pub fn declared_control_points(domain: u32) -> u32 {
    if domain == 1 {
        3
    } else {
        4
    }
}

/// The index-list entries one invocation owns for output topology `output` (the SPH's: 1
/// points, 6 line strip, else triangle strip) and `max` vertices, and the list's name.
pub fn indices_per_invocation(output: u32, max: u32) -> (u32, &'static str) {
    match output {
        1 => (max, "points"),
        6 => (2 * max.saturating_sub(1), "lines"),
        _ => (3 * max.saturating_sub(2), "triangles"),
    }
}

/// The input topologies (Vulkan names) a kernel for input primitive `primitive` (the
/// reflection's `geometry_input.primitive`: `points`, `lines`, `triangles`,
/// `lines_adjacency`, `triangles_adjacency`) assembles, with their `VkPrimitiveTopology`
/// numbers; empty for another name.
pub fn topologies(primitive: &str) -> &'static [(&'static str, u32)] {
    match primitive {
        "points" => &[("point_list", 0)],
        "lines" => &[("line_list", 1), ("line_strip", 2)],
        "triangles" => &[
            ("triangle_list", 3),
            ("triangle_strip", 4),
            ("triangle_fan", 5),
        ],
        "lines_adjacency" => &[("line_list_adjacency", 6), ("line_strip_adjacency", 7)],
        "triangles_adjacency" => &[
            ("triangle_list_adjacency", 8),
            ("triangle_strip_adjacency", 9),
        ],
        _ => &[],
    }
}

/// Element `v` (`gl_in` order) of triangle i of a triangle strip with adjacency, as offsets
/// from 2i: rows for an even and an odd triangle, each entry (in the middle of the strip, the
/// last triangle); the first and only triangles (even) are [`STRIP_ADJACENCY_FIRST`] and
/// [`STRIP_ADJACENCY_ONLY`]. Odd triangles keep the strip's winding as Vulkan's triangle strips
/// do (checked against lavapipe's assembly, tools/cli/tests/geometry_render.rs).
pub const STRIP_ADJACENCY_EVEN: [(i32, i32); 6] =
    [(0, 0), (-2, -2), (2, 2), (6, 3), (4, 4), (3, 5)];
/// See [`STRIP_ADJACENCY_EVEN`]: the odd triangles' row.
pub const STRIP_ADJACENCY_ODD: [(i32, i32); 6] = [(0, 0), (3, 5), (4, 4), (6, 3), (2, 2), (-2, -2)];
/// The first triangle of a strip with adjacency (of more than one).
pub const STRIP_ADJACENCY_FIRST: [u32; 6] = [0, 1, 2, 6, 4, 3];
/// The only triangle of a strip with adjacency.
pub const STRIP_ADJACENCY_ONLY: [u32; 6] = [0, 1, 2, 5, 4, 3];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_words_are_distinct_and_inside_the_record() {
        let addrs = (0x60..0x2e0).step_by(4).filter_map(record_word);
        let mut seen = std::collections::BTreeSet::new();
        for w in addrs {
            assert!(w < RECORD_WORDS);
            assert!(seen.insert(w), "word {w} twice");
        }
        assert_eq!(seen.len(), RECORD_WORDS as usize);
        assert_eq!(record_word(0x2e0), None);
        assert_eq!(generic_word(31, 3), Some(127));
        assert_eq!(generic_word(32, 0), None);
    }

    #[test]
    fn patch_words_are_distinct() {
        let words: Vec<u32> = (0..0x60).step_by(4).filter_map(patch_word).collect();
        let set: std::collections::BTreeSet<u32> = words.iter().copied().collect();
        assert_eq!(words.len(), set.len());
        assert!(words.iter().all(|&w| w < PATCH_WORDS));
    }

    #[test]
    fn strips_become_lists() {
        assert_eq!(indices_per_invocation(7, 4), (6, "triangles"));
        assert_eq!(indices_per_invocation(6, 3), (4, "lines"));
        assert_eq!(indices_per_invocation(1, 5), (5, "points"));
        assert_eq!(indices_per_invocation(7, 1), (0, "triangles"));
    }

    #[test]
    fn every_primitive_has_topologies() {
        for p in [
            "points",
            "lines",
            "triangles",
            "lines_adjacency",
            "triangles_adjacency",
        ] {
            assert!(!topologies(p).is_empty(), "{p}");
        }
        assert!(topologies("patches").is_empty());
    }
}
