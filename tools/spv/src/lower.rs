//! Lowered geometry pipelines (docs/geometry.md): the forms in which a vertex + geometry
//! shader pair runs where there is no geometry stage (Metal).
//!
//! Three passes replace the geometry stage: the vertex shader in [`Form::VertexCapture`]
//! writes its outputs as *vertex records* to a buffer (rasterization off); the geometry
//! shader in [`Form::GeometryKernel`] is a compute kernel with one thread per input primitive
//! × invocation that assembles its input vertices from those records, turns `EmitVertex` /
//! `EndPrimitive` into output records and a list of point, line or triangle indices in a fixed
//! region per thread; [`Form::GeometryDraw`] is the vertex function of the final indexed draw,
//! reading the kernel's records and writing the outputs the geometry shader's direct form
//! writes, so the fragment shader is unchanged. The buffers between the passes are the
//! [`dmsh_reflect::LoweredBuffer`] roles; each module's reflection carries a
//! [`dmsh_reflect::Lowering`].
//!
//! A vertex record is the hardware's attribute space, 32-bit words, in [`record_word`]'s
//! order: the 32 generic vectors, the position, point size, primitive ID, layer, viewport and
//! eight clip distances.

use dmsh_ir::lift::GsInput;

/// Which form of a shader the back end emits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Form {
    /// The shader as the stage it is (Vulkan runs every stage).
    #[default]
    Direct,
    /// A vertex shader writing vertex records (`vertices_in`) instead of outputs.
    VertexCapture,
    /// A geometry shader as a compute kernel over primitives × invocations.
    GeometryKernel,
    /// A geometry shader's final draw: the vertex function that reads the kernel's records
    /// and writes the geometry shader's outputs.
    GeometryDraw,
    /// A tessellation control shader as a compute kernel, one workgroup per patch, one
    /// thread per output control point (docs/tessellation.md).
    TessControlKernel,
    /// A tessellation evaluation shader reading its patch from the lowered buffers, for
    /// Metal's post-tessellation vertex function (SPIRV-Cross's `[[patch]]`).
    TessEvalPost,
    /// A tessellation evaluation shader as a vertex shader over a tessellator's domain
    /// points (the form lavapipe draws in place of Metal's fixed-function tessellator).
    TessEvalDraw,
}

impl Form {
    /// The reflection's `lowering.pass` name (None for the direct form).
    pub fn pass(self) -> Option<&'static str> {
        match self {
            Form::Direct => None,
            Form::VertexCapture => Some("vertex_capture"),
            Form::GeometryKernel => Some("geometry_kernel"),
            Form::GeometryDraw => Some("geometry_draw"),
            Form::TessControlKernel => Some("tess_control_kernel"),
            Form::TessEvalPost => Some("tess_eval_post"),
            Form::TessEvalDraw => Some("tess_eval_draw"),
        }
    }

    /// Every form, for option parsing.
    pub const ALL: [Form; 7] = [
        Form::Direct,
        Form::VertexCapture,
        Form::GeometryKernel,
        Form::GeometryDraw,
        Form::TessControlKernel,
        Form::TessEvalPost,
        Form::TessEvalDraw,
    ];

    /// The form named `s` (`direct` or a [`Form::pass`] name).
    pub fn parse(s: &str) -> Option<Form> {
        Form::ALL
            .into_iter()
            .find(|f| f.pass().unwrap_or("direct") == s)
    }
}

/// 32-bit words per patch record (`patch_data`): the tessellation levels and four patch
/// varyings.
pub const PATCH_WORDS: u32 = 24;

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

/// 32-bit words per vertex record.
pub const RECORD_WORDS: u32 = 144;

/// Threads per threadgroup of a geometry kernel.
pub const KERNEL_LOCAL_SIZE: u32 = 64;

/// The most vertices one geometry invocation may emit in the lowered form (the hardware's
/// and Vulkan's limit is lower; larger SPH values are refused, naming the shader).
pub const MAX_OUTPUT_VERTICES: u32 = 1024;

/// The most invocations per primitive the lowered form supports (Vulkan's
/// `maxGeometryShaderInvocations` is 32).
pub const MAX_INVOCATIONS: u32 = 32;

/// The varying location of a geometry shader's gl_PrimitiveID in a lowered pipeline (the
/// fragment stage's `primitive_id` input is rewritten to read it; a vertex function cannot
/// write the primitive ID).
pub const PRIMITIVE_ID_LOCATION: u32 = 31;

/// The record word of attribute byte address `addr` (`a[addr]`), None outside the record.
pub fn record_word(addr: u32) -> Option<u32> {
    Some(match addr {
        0x80..=0x27f => (addr - 0x80) / 4,
        0x70..=0x7f => 128 + (addr - 0x70) / 4,
        0x6c => 132,
        0x60 => 133,
        0x64 => 134,
        0x68 => 135,
        0x2c0..=0x2df => 136 + (addr - 0x2c0) / 4,
        _ => return None,
    })
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

/// The input topologies (Vulkan names) a kernel for input primitive `p` assembles, with
/// their `VkPrimitiveTopology` numbers.
pub fn topologies(p: GsInput) -> &'static [(&'static str, u32)] {
    match p {
        GsInput::Points => &[("point_list", 0)],
        GsInput::Lines => &[("line_list", 1), ("line_strip", 2)],
        GsInput::Triangles => &[
            ("triangle_list", 3),
            ("triangle_strip", 4),
            ("triangle_fan", 5),
        ],
        GsInput::LinesAdjacency => &[("line_list_adjacency", 6), ("line_strip_adjacency", 7)],
        GsInput::TrianglesAdjacency => &[
            ("triangle_list_adjacency", 8),
            ("triangle_strip_adjacency", 9),
        ],
    }
}

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
    }

    #[test]
    fn forms_parse_by_pass_name() {
        for f in Form::ALL {
            assert_eq!(Form::parse(f.pass().unwrap_or("direct")), Some(f));
        }
        assert_eq!(Form::parse("geometry"), None);
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
}
