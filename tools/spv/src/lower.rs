//! Lowered geometry pipelines (docs/geometry.md): the forms in which a vertex + geometry
//! shader pair runs where there is no geometry stage (Metal).
//!
//! Three passes replace the geometry stage: the vertex shader in [`Form::Lowered(Pass::VertexCapture)`]
//! writes its outputs as *vertex records* to a buffer (rasterization off); the geometry
//! shader in [`Form::Lowered(Pass::GeometryKernel)`] is a compute kernel with one thread per input primitive
//! × invocation that assembles its input vertices from those records, turns `EmitVertex` /
//! `EndPrimitive` into output records and a list of point, line or triangle indices in a fixed
//! region per thread; [`Form::Lowered(Pass::GeometryDraw)`] is the vertex function of the final indexed draw,
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

pub use dmsh_reflect::lowered::Pass;

/// Which form of a shader the back end emits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Form {
    /// The shader as the stage it is (Vulkan runs every stage).
    #[default]
    Direct,
    /// One pass of the shader's lowered pipeline ([`Pass`]: a vertex shader writing vertex
    /// records, a geometry shader as a kernel or as its draw, a tessellation control shader
    /// as a kernel, an evaluation shader as a post-tessellation function or over domain
    /// points).
    Lowered(Pass),
}

impl Form {
    /// The lowered pass (None for the direct form).
    pub fn pass(self) -> Option<Pass> {
        match self {
            Form::Direct => None,
            Form::Lowered(p) => Some(p),
        }
    }

    /// The form's name: `direct` or the pass's reflection name.
    pub fn name(self) -> &'static str {
        self.pass().map_or("direct", Pass::name)
    }

    /// Every form, for option parsing.
    pub const ALL: [Form; 7] = [
        Form::Direct,
        Form::Lowered(Pass::VertexCapture),
        Form::Lowered(Pass::GeometryKernel),
        Form::Lowered(Pass::GeometryDraw),
        Form::Lowered(Pass::TessControlKernel),
        Form::Lowered(Pass::TessEvalPost),
        Form::Lowered(Pass::TessEvalDraw),
    ];

    /// The form named `s` (`direct` or a [`Pass::name`]).
    pub fn parse(s: &str) -> Option<Form> {
        if s == "direct" {
            return Some(Form::Direct);
        }
        Pass::parse(s).map(Form::Lowered)
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
            assert_eq!(Form::parse(f.name()), Some(f));
        }
        assert_eq!(Form::parse("geometry"), None);
    }
}
