//! dmsh-fixup: the Metal build's fix-ups, SPIR-V → SPIR-V before SPIRV-Cross (docs/build.md,
//! "Fix-ups"). Each is one module under its seed name, a transformation of the translated
//! module (never a text edit of MSL), so its output is checked by spirv-val and can be run on
//! a Vulkan device:
//!
//! | fix-up | stages | what |
//! |---|---|---|
//! | [`single_lane`] (`spv_single_lane`) | vertex, tess_eval | subgroup operations → their exact one-lane values |
//! | [`int_inputs`] (`int_inputs`) | vertex | inputs used only as integers declared `uint` / `sint` |
//! | [`pad`] (`vs_pad`) | vertex | outputs the partners read but the shader does not write, at (0, 0, 0, 1) |
//! | [`depth`] (`vs_depth`) | vertex | a second entry point `main_z`; `main` gets z' = z/2 + w/2 |
//!
//! Vulkan modules (a capture folder's run-time SPIR-V, [`vulkan`]) first get
//! [`strides`] (`fix_strides`: member `ArrayStride` moved onto the array type) and their
//! reflection from the module; fragment modules with a plain location-1 output also get the
//! dual-source variant [`dual_source`] (`<key>_d`, that output at location 0 index 1).
//! Fragment shaders that read gl_PrimitiveID get [`primitive_id`] (`<key>_q`) for lowered
//! geometry pipelines (docs/geometry.md). A Vulkan module's geometry and tessellation stages,
//! and its vertex shaders' capture forms, are lowered at the SPIR-V level by [`lower`] into
//! the passes dmsh-spv makes from translated shaders.
//!
//! The others the seeds name are done elsewhere: position invariance (the translator decorates
//! `gl_Position` `Invariant`), unwritten output components (`vs_init`: the translator starts
//! every output the SPH declares at (0, 0, 0, 1)), native FMA (a translator option).
//!
//! [`for_metal`] runs them in that order for one shader and records in its reflection what
//! changed.

#![warn(missing_docs)]

pub mod depth;
pub mod dual_source;
pub mod int_inputs;
pub mod lower;
pub mod module;
pub mod pad;
pub mod primitive_id;
pub mod single_lane;
pub mod strides;
pub mod vulkan;

use dmsh_reflect::{IoVar, Reflection};
use module::Spirv;

/// Why a fix-up could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The words are not a SPIR-V module rspirv reads.
    #[error("SPIR-V: {0}")]
    Parse(String),
    /// The module has something a fix-up does not handle.
    #[error("{0}")]
    Unsupported(String),
}

/// What one shader's partners contribute: the inputs its fragment partners read.
#[derive(Clone, Debug, Default)]
pub struct Partners {
    /// Every input location (and component type) of every fragment partner.
    pub inputs: Vec<IoVar>,
}

/// Whether Metal runs `stage` without SIMD-group functions (vertex functions, and the
/// post-tessellation vertex functions tessellation evaluation becomes).
pub fn lacks_simdgroups(stage: &str) -> bool {
    matches!(stage, "vertex" | "tess_eval")
}

/// Applies every fix-up `refl.stage` needs to `words`; updates `refl` (`fixups`, `outputs`)
/// and returns the new words.
pub fn for_metal(
    words: &[u32],
    refl: &mut Reflection,
    partners: &Partners,
) -> Result<Vec<u32>, Error> {
    let mut sp = Spirv::parse(words)?;
    let mut done = Vec::new();
    if lacks_simdgroups(&refl.stage) {
        let n = single_lane::run(&mut sp)?;
        if n.operations + n.builtins > 0 {
            done.push("spv_single_lane");
            refl.warp_ops = false;
        }
    }
    if refl.stage == "vertex" {
        let typed = int_inputs::run(&mut sp)?;
        for (loc, ty) in &typed {
            if let Some(i) = refl.inputs.iter_mut().find(|i| i.location == *loc) {
                i.component_type = ty.to_string();
            }
        }
        if !typed.is_empty() {
            done.push("int_inputs");
        }
        // A lowered pipeline's capture pass writes vertex records, not outputs: nothing to
        // pad, no clip-space position for the depth rewrite (the draw's vertex function gets
        // both, docs/geometry.md).
        let capture = refl
            .lowering
            .as_ref()
            .is_some_and(|l| l.pass == dmsh_reflect::lowered::Pass::VertexCapture);
        if !capture {
            let added = pad::run(&mut sp, &partners.inputs)?;
            if !added.is_empty() {
                done.push("vs_pad");
                refl.outputs.extend(added);
                refl.outputs.sort_by_key(|o| o.location);
            }
            if depth::run(&mut sp)? {
                done.push("vs_depth");
            }
        }
    }
    refl.fixups.extend(done.iter().map(|s| s.to_string()));
    Ok(sp.assemble())
}
