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
//! eight clip distances. The layout is `dmsh_reflect::lowered`'s, re-exported here: one
//! definition for this lowering and dmsh-fixup's lowering of captured Vulkan modules.

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

pub use dmsh_reflect::lowered::{
    declared_control_points, factor_layout, indices_per_invocation, patch_word, record_word,
    KERNEL_LOCAL_SIZE, MAX_INVOCATIONS, MAX_OUTPUT_VERTICES, PATCH_WORDS, PRIMITIVE_ID_LOCATION,
    RECORD_WORDS,
};

/// The input topologies (Vulkan names) a kernel for input primitive `p` assembles, with
/// their `VkPrimitiveTopology` numbers (`dmsh_reflect::lowered::topologies`).
pub fn topologies(p: GsInput) -> &'static [(&'static str, u32)] {
    dmsh_reflect::lowered::topologies(p.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_parse_by_pass_name() {
        for f in Form::ALL {
            assert_eq!(Form::parse(f.pass().unwrap_or("direct")), Some(f));
        }
        assert_eq!(Form::parse("geometry"), None);
    }
}
