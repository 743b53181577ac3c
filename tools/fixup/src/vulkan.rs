//! Vulkan modules (docs/build.md, "Vulkan modules"): SPIR-V a game generated at run time and
//! a capture folder holds, not translated by dmsh. [`prepare`] runs `fix_strides` and reads
//! the module's reflection from the module itself ([`reflection`]): stage and entry point,
//! every resource by (set, binding) with its array length, the push constant block, the stage
//! inputs and outputs by location, and the Metal indices (`dmsh_reflect::assign_metal_indices`:
//! push constants after every buffer, an array of n descriptors on n consecutive indices).

use crate::module::{id_operand, Kind, Spirv};
use crate::{strides, Error};
use dmsh_reflect::{IoVar, Reflection, Resource};
use rspirv::dr::{Instruction, Operand};
use spirv::{Decoration, ExecutionMode, ExecutionModel, Op, StorageClass, Word};

/// The reflection's `abi` for a Vulkan module.
pub const ABI: &str = "vulkan";

/// `fix_strides`, then the module's reflection; the reflection's `fixups` says whether
/// `fix_strides` changed it. Returns the new words.
pub fn prepare(words: &[u32]) -> Result<(Vec<u32>, Reflection), Error> {
    let mut sp = Spirv::parse(words)?;
    unname_functions(&mut sp);
    let s = strides::run(&mut sp)?;
    let mut refl = reflection(&sp)?;
    if s.moved > 0 {
        refl.fixups.push("fix_strides".into());
    }
    Ok((sp.assemble(), refl))
}

/// Drops the debug names of functions: SPIRV-Cross names an MSL function after its SPIR-V
/// name, and a GLSL function may be named like a Metal library type (`level`, `sampler`, …),
/// which makes every call ambiguous in MSL (glslang's `level(vf3;vf3;` of the corpus'
/// tcs_triangle). Unnamed functions get SPIRV-Cross's `_N` names.
pub fn unname_functions(sp: &mut Spirv) {
    let functions: std::collections::HashSet<Word> = (sp.m.functions.iter())
        .filter_map(|f| f.def.as_ref().and_then(|d| d.result_id))
        .collect();
    sp.m.debug_names.retain(|n| {
        !(n.class.opcode == Op::Name && id_operand(n, 0).is_some_and(|t| functions.contains(&t)))
    });
}

/// The reflection's stage name of execution model `m`.
pub fn stage_name(m: ExecutionModel) -> Result<&'static str, Error> {
    Ok(match m {
        ExecutionModel::Vertex => "vertex",
        ExecutionModel::Fragment => "fragment",
        ExecutionModel::GLCompute => "compute",
        ExecutionModel::Geometry => "geometry",
        ExecutionModel::TessellationControl => "tess_control",
        ExecutionModel::TessellationEvaluation => "tess_eval",
        m => {
            return Err(Error::Unsupported(format!(
                "execution model {m:?} has no Metal stage"
            )))
        }
    })
}

/// The module's reflection (see the module doc). Fails on what the Metal build cannot bind:
/// a resource without `DescriptorSet` / `Binding`, a runtime-sized descriptor array, an
/// interface variable without `Location`.
pub fn reflection(sp: &Spirv) -> Result<Reflection, Error> {
    let (_, fid, entry) = sp.entry()?;
    let model = match sp.m.entry_points[0].operands.first() {
        Some(Operand::ExecutionModel(m)) => *m,
        _ => {
            return Err(Error::Parse(
                "OpEntryPoint without an execution model".into(),
            ))
        }
    };
    let stage = stage_name(model)?;
    let mut local_size = [0; 3];
    for m in &sp.m.execution_modes {
        if let [Operand::IdRef(f), Operand::ExecutionMode(ExecutionMode::LocalSize), Operand::LiteralBit32(x), Operand::LiteralBit32(y), Operand::LiteralBit32(z)] =
            m.operands.as_slice()
        {
            if *f == fid {
                local_size = [*x, *y, *z];
            }
        }
    }
    let mut resources = resources(sp)?;
    let metal = dmsh_reflect::assign_metal_indices(&mut resources);
    Ok(Reflection {
        stage: stage.into(),
        entry,
        local_size,
        abi: ABI.into(),
        control_flow: "structured".into(),
        uses_global_addresses: sp.m.capabilities.iter().any(|c| {
            matches!(
                c.operands.first(),
                Some(Operand::Capability(
                    spirv::Capability::PhysicalStorageBufferAddresses
                ))
            )
        }),
        resources,
        metal,
        inputs: interface(
            sp,
            StorageClass::Input,
            matches!(stage, "geometry" | "tess_control" | "tess_eval"),
        )?,
        outputs: interface(sp, StorageClass::Output, stage == "tess_control")?,
        metal_direct: matches!(stage, "vertex" | "fragment" | "compute"),
        ..Default::default()
    })
}

fn def(sp: &Spirv, id: Word) -> Result<&Instruction, Error> {
    sp.global_def(id)
        .ok_or_else(|| Error::Parse(format!("type %{id} is not declared")))
}

/// A type through one level of array: (element type, elements; 0 when not an array).
fn unarray(sp: &Spirv, ty: Word, what: &str) -> Result<(Word, u32), Error> {
    let d = def(sp, ty)?;
    match d.class.opcode {
        Op::TypeArray => {
            let n = id_operand(d, 1)
                .and_then(|c| sp.constant_literal(c))
                .ok_or_else(|| {
                    Error::Unsupported(format!("{what}: an array whose length is not a constant"))
                })?;
            Ok((id_operand(d, 0).unwrap_or(0), n))
        }
        Op::TypeRuntimeArray => Err(Error::Unsupported(format!(
            "{what}: a runtime-sized descriptor array (Metal needs argument buffers)"
        ))),
        _ => Ok((ty, 0)),
    }
}

/// Whether `id` has the decoration `d` (with or without a literal).
fn decorated(sp: &Spirv, id: Word, d: Decoration) -> bool {
    sp.decorations(id)
        .any(|a| a.operands.get(1) == Some(&Operand::Decoration(d)))
}

fn member_flag(sp: &Spirv, s: Word, m: u32, d: Decoration) -> bool {
    sp.m.annotations.iter().any(|a| {
        a.class.opcode == Op::MemberDecorate
            && id_operand(a, 0) == Some(s)
            && a.operands.get(1) == Some(&Operand::LiteralBit32(m))
            && a.operands.get(2) == Some(&Operand::Decoration(d))
    })
}

/// The byte size of an explicitly laid out type (a runtime array counts 0; `None` when a
/// stride is missing). `matrix`: (MatrixStride, row-major) of the member holding it.
fn size_of(sp: &Spirv, ty: Word, matrix: Option<(u32, bool)>) -> Option<u64> {
    let d = sp.global_def(ty)?;
    let lit = |i: usize| match d.operands.get(i) {
        Some(Operand::LiteralBit32(v)) => Some(*v as u64),
        _ => None,
    };
    Some(match d.class.opcode {
        Op::TypeInt | Op::TypeFloat => lit(0)? / 8,
        Op::TypeBool => 4,
        Op::TypeVector => lit(1)? * size_of(sp, id_operand(d, 0)?, None)?,
        Op::TypeMatrix => {
            let cols = lit(1)?;
            let (stride, row_major) = matrix?;
            let col = sp.global_def(id_operand(d, 0)?)?;
            let rows = match col.operands.get(1) {
                Some(Operand::LiteralBit32(v)) => *v as u64,
                _ => return None,
            };
            stride as u64 * if row_major { rows } else { cols }
        }
        Op::TypeArray => {
            let n = sp.constant_literal(id_operand(d, 1)?)? as u64;
            n * sp.decoration_literal(ty, Decoration::ArrayStride)? as u64
        }
        Op::TypeRuntimeArray => 0,
        Op::TypeStruct => {
            let mut end = 0;
            for m in 0..d.operands.len() as u32 {
                let mt = id_operand(d, m as usize)?;
                let off = sp.member_literal(ty, m, Decoration::Offset)? as u64;
                let mx = sp
                    .member_literal(ty, m, Decoration::MatrixStride)
                    .map(|s| (s, member_flag(sp, ty, m, Decoration::RowMajor)));
                end = end.max(off + size_of(sp, mt, mx)?);
            }
            end
        }
        _ => return None,
    })
}

/// Every descriptor and the push constant block, in (set, binding) order.
fn resources(sp: &Spirv) -> Result<Vec<Resource>, Error> {
    let mut out = Vec::new();
    for class in [
        StorageClass::Uniform,
        StorageClass::StorageBuffer,
        StorageClass::UniformConstant,
        StorageClass::PushConstant,
    ] {
        for (var, ptr) in sp.variables(class) {
            let pointee = sp
                .pointee(ptr)
                .ok_or_else(|| Error::Parse(format!("%{var}: not a pointer")))?;
            let what = format!("variable %{var}");
            if class == StorageClass::PushConstant {
                out.push(Resource {
                    kind: dmsh_reflect::PUSH.into(),
                    size: size_of(sp, pointee, None),
                    ..Default::default()
                });
                continue;
            }
            let (elem, count) = unarray(sp, pointee, &what)?;
            let ed = def(sp, elem)?;
            let (kind, separate) = match (class, ed.class.opcode) {
                (StorageClass::Uniform, _) if decorated(sp, elem, Decoration::BufferBlock) => {
                    ("sbuf", false)
                }
                (StorageClass::Uniform, _) => ("cbuf", false),
                (StorageClass::StorageBuffer, _) => ("sbuf", false),
                (_, Op::TypeSampledImage) => ("texture", false),
                (_, Op::TypeSampler) => ("sampler", false),
                (_, Op::TypeImage) => match ed.operands.get(5) {
                    Some(Operand::LiteralBit32(2)) => ("image", false),
                    _ => ("texture", true),
                },
                (_, op) => {
                    return Err(Error::Unsupported(format!(
                        "{what}: a {op:?} descriptor has no Metal binding here"
                    )))
                }
            };
            let set = sp.decoration_literal(var, Decoration::DescriptorSet);
            let binding = sp.decoration_literal(var, Decoration::Binding);
            let (Some(set), Some(binding)) = (set, binding) else {
                return Err(Error::Unsupported(format!(
                    "{what}: a {kind} without DescriptorSet and Binding"
                )));
            };
            let buffer = matches!(kind, "cbuf" | "sbuf");
            out.push(Resource {
                kind: kind.into(),
                bank: binding,
                set,
                binding: Some(binding),
                size: if buffer {
                    size_of(sp, elem, None)
                } else {
                    None
                },
                count,
                separate,
                ..Default::default()
            });
        }
    }
    out.sort_by_key(|r| (r.kind == dmsh_reflect::PUSH, r.set, r.binding));
    Ok(out)
}

/// The scalar kind at the bottom of an interface type (through arrays, vectors, matrices).
fn component_type(sp: &Spirv, mut ty: Word) -> Result<&'static str, Error> {
    loop {
        let d = def(sp, ty)?;
        match d.class.opcode {
            Op::TypeArray | Op::TypeVector | Op::TypeMatrix => ty = id_operand(d, 0).unwrap_or(0),
            _ => break,
        }
    }
    Ok(match sp.scalar_kind(ty)?.0 {
        Kind::Sint => "sint",
        Kind::Uint | Kind::Bool => "uint",
        Kind::Float => "float",
    })
}

/// The stage inputs or outputs by location (built-ins and `gl_PerVertex` blocks left out; an
/// array takes one location per element, a matrix one per column, a block or struct its
/// members' — by their `Location` or in order; a stage's per-vertex arrays — geometry inputs,
/// tessellation inputs and control outputs not decorated `Patch` — by their element), with
/// the dual-source `Index` of outputs.
fn interface(sp: &Spirv, class: StorageClass, per_vertex: bool) -> Result<Vec<IoVar>, Error> {
    let mut out = Vec::new();
    for (var, ptr) in sp.variables(class) {
        if sp.builtin_of(var).is_some() {
            continue;
        }
        let mut ty = sp
            .pointee(ptr)
            .ok_or_else(|| Error::Parse(format!("%{var}: not a pointer")))?;
        if per_vertex && !decorated(sp, var, Decoration::Patch) {
            if let Op::TypeArray | Op::TypeRuntimeArray = def(sp, ty)?.class.opcode {
                ty = id_operand(def(sp, ty)?, 0).unwrap_or(ty);
            }
        }
        // A `gl_in[]` / `gl_out[]` is an array of the block.
        let block = match def(sp, ty)?.class.opcode {
            Op::TypeArray => def(sp, unarray(sp, ty, "interface")?.0)?,
            _ => def(sp, ty)?,
        };
        let block_ty = block.result_id.unwrap_or(ty);
        if block.class.opcode == Op::TypeStruct
            && (0..block.operands.len() as u32)
                .any(|m| member_flag(sp, block_ty, m, Decoration::BuiltIn))
        {
            continue; // gl_PerVertex
        }
        let members_located = block.class.opcode == Op::TypeStruct
            && (0..block.operands.len() as u32).any(|m| {
                sp.member_literal(block_ty, m, Decoration::Location)
                    .is_some()
            });
        let location = match sp.decoration_literal(var, Decoration::Location) {
            Some(l) => l,
            None if members_located => 0,
            None => {
                return Err(Error::Unsupported(format!(
                    "{class:?} variable %{var} has no Location"
                )))
            }
        };
        let index = sp.decoration_literal(var, Decoration::Index).unwrap_or(0);
        let mut locs = Vec::new();
        locations(sp, ty, location, &mut locs, 0)?;
        out.extend(locs.into_iter().map(|(location, t)| IoVar {
            location,
            component_type: t.into(),
            index,
        }));
    }
    out.sort_by_key(|v| (v.location, v.index));
    out.dedup();
    Ok(out)
}

/// The locations type `ty` takes from `loc` on, with their component types; returns how many.
fn locations(
    sp: &Spirv,
    ty: Word,
    loc: u32,
    out: &mut Vec<(u32, &'static str)>,
    depth: u32,
) -> Result<u32, Error> {
    if depth > 16 || out.len() > 4096 {
        return Err(Error::Unsupported(
            "an interface type nested too deep or too large".into(),
        ));
    }
    let d = def(sp, ty)?.clone();
    let lit = |k: usize| match d.operands.get(k) {
        Some(Operand::LiteralBit32(v)) => *v,
        _ => 0,
    };
    Ok(match d.class.opcode {
        Op::TypeArray => {
            let (elem, n) = unarray(sp, ty, "interface")?;
            let mut at = 0;
            for _ in 0..n {
                at += locations(sp, elem, loc + at, out, depth + 1)?;
            }
            at
        }
        Op::TypeMatrix => {
            let col = id_operand(&d, 0).unwrap_or(0);
            for k in 0..lit(1) {
                locations(sp, col, loc + k, out, depth + 1)?;
            }
            lit(1)
        }
        Op::TypeStruct => {
            let mut at = loc;
            let mut total = 0;
            for m in 0..d.operands.len() as u32 {
                if let Some(x) = sp.member_literal(ty, m, Decoration::Location) {
                    at = x;
                }
                let mt = id_operand(&d, m as usize).unwrap_or(0);
                let n = locations(sp, mt, at, out, depth + 1)?;
                at += n;
                total += n;
            }
            total
        }
        _ => {
            // A scalar or vector; 64-bit three- and four-component vectors take two.
            let t = component_type(sp, ty)?;
            let (elem, n) = match d.class.opcode {
                Op::TypeVector => (id_operand(&d, 0).unwrap_or(0), lit(1)),
                _ => (ty, 1),
            };
            let wide = sp.scalar_kind(elem)?.1 == 64 && n > 2;
            for k in 0..1 + u32::from(wide) {
                out.push((loc + k, t));
            }
            1 + u32::from(wide)
        }
    })
}
