//! dmsh-msl: SPIR-V → Metal Shading Language through SPIRV-Cross (`spirv-cross2`), with every
//! Metal argument index taken from the shader's reflection, and a check that the MSL it wrote
//! agrees with that reflection.
//!
//! [`to_msl`] pins the MSL version, platform and SPIRV-Cross options ([`options`],
//! docs/build.md) and gives each (set, binding) of the reflection its `metal_index` /
//! `metal_sampler`; [`check_bindings`] reads the MSL's entry-point signature back and lists
//! every disagreement with the reflection (criterion (b) of the Metal build); [`syntax::check`]
//! parses and type-checks the MSL with clang 19 and a stand-in `<metal_stdlib>` (criterion (a)).

#![warn(missing_docs)]

pub mod bindings;
mod check;
mod error;
pub mod limits;
mod merge;
pub mod options;
pub mod signature;
pub mod standin;
pub mod syntax;

pub use check::check_bindings;
pub use error::Error;
pub use options::{MslOptions, Platform, ENTRY_POINT, MSL_VERSION, SPIRV_CROSS};

use bindings::{metal_bindings, MetalBinding, Table};
use dmsh_reflect::Reflection;
use spirv_cross2::compile::msl::{BindTarget, ResourceBinding};
use spirv_cross2::spirv::ExecutionModel;
use spirv_cross2::{targets, Compiler, Module};
use std::num::NonZeroU32;

/// One entry point of the MSL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryPoint {
    /// The MSL function name ([`ENTRY_POINT`]).
    pub name: String,
    /// `kernel`, `vertex` or `fragment`.
    pub qualifier: &'static str,
}

/// A shader in MSL.
#[derive(Clone, Debug)]
pub struct Msl {
    /// The MSL source text.
    pub source: String,
    /// The entry points it declares.
    pub entry_points: Vec<EntryPoint>,
    /// (set, binding) of reflection resources SPIRV-Cross found unused (no MSL argument).
    pub unused: Vec<(u32, u32)>,
    /// SPIRV-Cross's own buffers the host must bind: (what, buffer index), e.g.
    /// `("buffer sizes", 25)` for `OpArrayLength` on runtime arrays.
    pub aux_buffers: Vec<(&'static str, u32)>,
}

/// The SPIR-V execution model of a stage Metal runs directly; Err for the others.
fn execution_model(refl: &Reflection) -> Result<ExecutionModel, Error> {
    let stage = |reason| Error::Stage {
        stage: refl.stage.to_string(),
        reason,
    };
    let post = refl
        .lowering
        .as_ref()
        .is_some_and(|l| l.pass == dmsh_reflect::lowered::Pass::TessEvalPost);
    match refl.stage.as_str() {
        // A lowered evaluation shader: SPIRV-Cross writes Metal's post-tessellation vertex
        // function (docs/tessellation.md).
        "tess_eval" if post => Ok(ExecutionModel::TessellationEvaluation),
        "compute" => Ok(ExecutionModel::GLCompute),
        "vertex" => Ok(ExecutionModel::Vertex),
        "fragment" => Ok(ExecutionModel::Fragment),
        "geometry" => Err(stage(
            "Metal has no geometry stage; a later step must lower it",
        )),
        "tess_control" | "tess_eval" => Err(stage(
            "Metal tessellation (control stage as a compute kernel, evaluation as a \
             post-tessellation vertex function) is not built yet",
        )),
        s => Err(Error::Reflection(format!("unknown stage {s:?}"))),
    }
}

/// What SPIRV-Cross gets for one reflection binding.
fn bind_target(b: &MetalBinding) -> BindTarget {
    let index = |t: Table| b.slots.iter().find(|s| s.0 == t).map_or(0, |s| s.1);
    BindTarget {
        buffer: index(Table::Buffer),
        texture: index(Table::Texture),
        sampler: index(Table::Sampler),
        count: NonZeroU32::new(b.count).filter(|_| b.count > 1),
    }
}

/// The Metal name of SPIR-V entry point `spirv_name` of a module whose reflection names
/// `entry`: `entry` → [`ENTRY_POINT`], `entry` + suffix → [`ENTRY_POINT`] + suffix
/// (`main_z` → `main0_z`, the depth variant).
fn metal_name(entry: &str, spirv_name: &str) -> Option<String> {
    spirv_name
        .strip_prefix(entry)
        .map(|suffix| format!("{ENTRY_POINT}{suffix}"))
}

/// One entry point's compilation.
struct Compiled {
    source: String,
    used: Vec<bool>,
    aux: Vec<(&'static str, u32)>,
}

/// Compiles entry point `spirv_name` of `spirv` as `metal_name`.
fn compile_entry(
    spirv: &[u32],
    model: ExecutionModel,
    spirv_name: &str,
    metal_name: &str,
    bindings: &[MetalBinding],
    opts: &MslOptions,
    patch_points: u32,
) -> Result<Compiled, Error> {
    let mut c =
        Compiler::<targets::Msl>::new(Module::from_words(spirv)).map_err(Error::cross("parse"))?;
    c.set_entry_point(spirv_name, model)
        .map_err(Error::cross("entry point"))?;
    c.rename_entry_point(spirv_name, metal_name, model)
        .map_err(Error::cross("entry point"))?;
    if model == ExecutionModel::TessellationEvaluation {
        // `[[patch(domain, N)]]`: SPIRV-Cross takes N from OutputVertices, a control-stage
        // mode; the lowered evaluation stage declares its patch size in the reflection.
        c.set_execution_mode(
            spirv_cross2::spirv::ExecutionMode::OutputVertices,
            Some(spirv_cross2::reflect::ExecutionModeArguments::Literal(
                patch_points,
            )),
        );
    }
    let at = |b: &MetalBinding| ResourceBinding::Qualified {
        set: b.set,
        binding: b.binding,
    };
    for b in bindings {
        c.add_resource_binding(model, at(b), &bind_target(b))
            .map_err(Error::cross("binding"))?;
    }
    let o = options::compiler_options(opts);
    let art = c.compile(&o).map_err(Error::cross("compile"))?;
    let used = bindings
        .iter()
        .map(|b| art.is_resource_used(model, at(b)))
        .collect();
    let req = art.buffer_requirements();
    let aux = [
        (req.needs_swizzle_buffer, "swizzles", o.swizzle_buffer_index),
        (
            req.needs_buffer_size_buffer,
            "buffer sizes",
            o.buffer_size_buffer_index,
        ),
        (
            req.needs_output_buffer,
            "stage output",
            o.shader_output_buffer_index,
        ),
        (
            req.needs_patch_output_buffer,
            "patch output",
            o.shader_patch_output_buffer_index,
        ),
    ]
    .into_iter()
    .filter(|a| a.0)
    .map(|a| (a.1, a.2))
    .collect();
    Ok(Compiled {
        source: art.to_string(),
        used,
        aux,
    })
}

/// Converts `spirv` (with its reflection `refl`) to MSL for `opts`: every SPIR-V entry point
/// of the reflection's stage whose name starts with `refl.entry` (the entry point, and the
/// build's depth variant `main_z`) as [`ENTRY_POINT`] plus the same suffix, all in one file,
/// every (set, binding) at the reflection's Metal indices.
pub fn to_msl(spirv: &[u32], refl: &Reflection, opts: &MslOptions) -> Result<Msl, Error> {
    let model = execution_model(refl)?;
    if !refl.metal_direct {
        return Err(Error::Stage {
            stage: refl.stage.to_string(),
            reason: "the reflection says Metal cannot run it directly (metal_direct false)",
        });
    }
    let bindings = metal_bindings(refl).map_err(Error::Reflection)?;
    let names: Vec<(String, String)> = {
        let c = Compiler::<targets::Msl>::new(Module::from_words(spirv))
            .map_err(Error::cross("parse"))?;
        let mut v: Vec<(String, String)> = c
            .entry_points()
            .map_err(Error::cross("entry point"))?
            .filter(|e| e.execution_model == model)
            .filter_map(|e| Some((e.name.to_string(), metal_name(&refl.entry, &e.name)?)))
            .collect();
        v.sort_by_key(|(s, _)| (s != &refl.entry, s.clone()));
        v
    };
    if names.first().map(|n| &n.0) != Some(&refl.entry) {
        return Err(Error::Reflection(format!(
            "the module has no {:?} entry point {:?}",
            refl.stage, refl.entry
        )));
    }
    let compiled = names
        .iter()
        .map(|(s, m)| {
            let patch_points = refl.lowering.as_ref().map_or(0, |l| l.control_points);
            compile_entry(spirv, model, s, m, &bindings, opts, patch_points)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let rest: Vec<&str> = compiled[1..].iter().map(|c| c.source.as_str()).collect();
    let source = merge::merge(&compiled[0].source, &rest).map_err(Error::Reflection)?;
    let unused = bindings
        .iter()
        .enumerate()
        .filter(|(k, _)| !compiled.iter().any(|c| c.used[*k]))
        .map(|(_, b)| (b.set, b.binding))
        .collect();
    let mut aux_buffers: Vec<(&'static str, u32)> = compiled
        .iter()
        .flat_map(|c| c.aux.iter().copied())
        .collect();
    aux_buffers.sort();
    aux_buffers.dedup();
    let qualifier = check::qualifier(&refl.stage).unwrap_or("kernel");
    let entry_points = names
        .into_iter()
        .map(|(_, name)| EntryPoint { name, qualifier })
        .collect();
    Ok(Msl {
        source,
        entry_points,
        unused,
        aux_buffers,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use dmsh_reflect::{Reflection, Resource};

    /// A single resource at set 0 with the given Metal indices.
    pub fn resource(kind: &str, binding: u32, idx: u32, samp: Option<u32>) -> Resource {
        Resource {
            kind: kind.into(),
            binding: Some(binding),
            metal_index: idx,
            metal_sampler: samp,
            ..Default::default()
        }
    }

    /// An empty reflection of `stage`.
    pub fn reflection(stage: &str) -> Reflection {
        Reflection {
            stage: stage.into(),
            entry: "main".into(),
            local_size: [1, 1, 1],
            fma_mode: "exact".into(),
            abi: "deko3d".into(),
            control_flow: "structured".into(),
            blocks: 1,
            guest_state: "ssa".into(),
            metal_direct: true,
            ..Default::default()
        }
    }
}
