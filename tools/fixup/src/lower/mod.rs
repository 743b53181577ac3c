//! The lowering of captured Vulkan modules (a capture folder's geometry, tessellation and
//! vertex SPIR-V, docs/geometry.md and docs/tessellation.md, "Vulkan modules"): SPIR-V →
//! SPIR-V into the same passes, buffers and reflection as dmsh-spv's lowering of translated
//! shaders (`dmsh_spv::lower::Form`), so hosts and the Vulkan harness run both alike. The
//! record layout, buffer roles and `lowering` record are `dmsh_reflect`'s
//! (`dmsh_reflect::lowered`, `LoweredBuffer`, `Lowering`).
//!
//! Each [`Pass`] rewrites the module in place: stage inputs and outputs become `Private`
//! (or, for a control shader's outputs, `Workgroup`) variables of the same types, so the
//! shader's own code runs unchanged; a new entry function fills the inputs from vertex or
//! patch records, calls the shader's, and stores its outputs as records. `EmitVertex` and
//! `EndPrimitive` become calls of functions that write a geometry kernel's records and index
//! list. Where the module has something the lowering does not handle, the error says what.

mod capture;
mod code;
mod geometry;
mod iface;
mod rewrite;
mod tess;

use crate::module::{Kind, Spirv};
use crate::Error;
use code::{Code, Cx};
use dmsh_reflect::{LoweredBuffer, Lowering, Reflection};
use iface::Leaf;
use rspirv::dr::Operand;
use spirv::{ExecutionMode, Op, StorageClass, Word};

pub use dmsh_reflect::lowered::Pass;

/// Lowers Vulkan module `words` (after `fix_strides`: `crate::vulkan::prepare`) into `pass`;
/// returns the new words and their reflection (`lowering` set, the lowered buffers as
/// resources of kind `lowered`).
pub fn lower(words: &[u32], pass: Pass) -> Result<(Vec<u32>, Reflection), Error> {
    let sp = Spirv::parse(words)?;
    sp.entry()?;
    let stage = match sp.m.entry_points[0].operands.first() {
        Some(Operand::ExecutionModel(m)) => crate::vulkan::stage_name(*m)?,
        _ => {
            return Err(Error::Parse(
                "OpEntryPoint without an execution model".into(),
            ))
        }
    };
    if stage != pass.stage() {
        return Err(Error::Unsupported(format!(
            "a {stage} module has no {} pass (that lowers {} modules)",
            pass.name(),
            pass.stage()
        )));
    }
    check_free_bindings(&sp)?;
    let mut cx = Cx::new(sp);
    let (lowering, extra) = match pass {
        Pass::VertexCapture => (capture::capture(&mut cx)?, Extra::None),
        Pass::GeometryKernel => {
            let (l, g) = geometry::kernel(&mut cx)?;
            (l, Extra::Geometry(g))
        }
        Pass::GeometryDraw => {
            let (l, g) = geometry::draw(&mut cx)?;
            (l, Extra::Geometry(g))
        }
        Pass::TessControlKernel => (tess::control(&mut cx)?, Extra::None),
        Pass::TessEvalPost | Pass::TessEvalDraw => {
            let (l, t) = tess::eval(&mut cx, pass == Pass::TessEvalDraw)?;
            (l, Extra::Tess(t))
        }
    };
    let roles = cx.roles();
    let mut sp = cx.sp;
    let words = sp.assemble();
    let sp = Spirv::parse(&words)?;
    let mut refl = crate::vulkan::reflection(&sp)?;
    for r in &mut refl.resources {
        let role = roles
            .iter()
            .find(|x| r.set == 0 && r.binding == Some(x.binding()) && r.kind == "sbuf");
        if let Some(&role) = role {
            r.kind = dmsh_reflect::LOWERED_BUFFER.into();
            r.bank = role as u32;
            r.size = Some(0);
        }
    }
    refl.metal = dmsh_reflect::assign_metal_indices(&mut refl.resources);
    refl.metal_direct = true;
    refl.lowering = Some(lowering);
    match extra {
        Extra::Geometry(g) => refl.geometry_input = Some(g),
        Extra::Tess(t) => refl.tessellation = Some(t),
        Extra::None => {}
    }
    Ok((words, refl))
}

/// What a pass adds to the reflection besides its `lowering` record.
enum Extra {
    None,
    Geometry(dmsh_reflect::GeometryInput),
    Tess(dmsh_reflect::Tessellation),
}

/// Fails when the module has its own descriptor where the lowered buffers go (set 0,
/// bindings 240 + role).
fn check_free_bindings(sp: &Spirv) -> Result<(), Error> {
    for class in [
        StorageClass::Uniform,
        StorageClass::StorageBuffer,
        StorageClass::UniformConstant,
    ] {
        for (v, _) in sp.variables(class) {
            let set = sp.decoration_literal(v, spirv::Decoration::DescriptorSet);
            let b = sp.decoration_literal(v, spirv::Decoration::Binding);
            if let (Some(0), Some(b)) = (set, b) {
                if let Some(r) = LoweredBuffer::ALL.iter().find(|r| r.binding() == b) {
                    return Err(Error::Unsupported(format!(
                        "the module's own descriptor at set 0 binding {b} is where the lowered \
                         pipeline's {} buffer goes",
                        r.name()
                    )));
                }
            }
        }
    }
    Ok(())
}

/// The entry point's execution modes: (mode, literal operands).
fn modes(sp: &Spirv) -> Result<Vec<(ExecutionMode, Vec<u32>)>, Error> {
    let (_, f, _) = sp.entry()?;
    Ok(sp
        .m
        .execution_modes
        .iter()
        .filter(|m| crate::module::id_operand(m, 0) == Some(f))
        .filter_map(|m| match m.operands.get(1) {
            Some(Operand::ExecutionMode(x)) => Some((
                *x,
                m.operands[2..]
                    .iter()
                    .filter_map(|o| match o {
                        Operand::LiteralBit32(v) => Some(*v),
                        _ => None,
                    })
                    .collect(),
            )),
            _ => None,
        })
        .collect())
}

/// The first literal of mode `m`, if the entry point has it.
fn mode(modes: &[(ExecutionMode, Vec<u32>)], m: ExecutionMode) -> Option<u32> {
    modes
        .iter()
        .find(|x| x.0 == m)
        .map(|x| x.1.first().copied().unwrap_or(0))
}

/// Word `w` (`uint` bits) as a value of scalar type `ty`.
fn from_bits(c: &mut Code, ty: Word, w: Word) -> Result<Word, Error> {
    match c.cx.sp.scalar_kind(ty)?.0 {
        Kind::Uint => Ok(w),
        Kind::Bool => Err(Error::Unsupported("a boolean stage variable".into())),
        _ => Ok(c.op(Op::Bitcast, ty, &[w])),
    }
}

/// Scalar `x` of type `ty` as `uint` bits.
fn to_bits(c: &mut Code, ty: Word, x: Word) -> Result<Word, Error> {
    match c.cx.sp.scalar_kind(ty)?.0 {
        Kind::Uint => Ok(x),
        Kind::Bool => Err(Error::Unsupported("a boolean stage variable".into())),
        _ => {
            let u = c.cx.u;
            Ok(c.op(Op::Bitcast, u, &[x]))
        }
    }
}

/// A pointer to `leaf` of variable `var` (of storage class `class`; `vertex`: the per-vertex
/// index).
fn leaf_ptr(
    c: &mut Code,
    class: StorageClass,
    var: Word,
    vertex: Option<Word>,
    leaf: &Leaf,
) -> Word {
    let mut idx: Vec<Word> = vertex.into_iter().collect();
    for &k in &leaf.path {
        idx.push(c.cx.u32c(k));
    }
    if idx.is_empty() {
        return var;
    }
    c.chain(class, leaf.ty, var, &idx)
}

/// Stores the `uint` word at `src` into `leaf` of `var`.
fn fill_leaf(
    c: &mut Code,
    class: StorageClass,
    var: Word,
    vertex: Option<Word>,
    leaf: &Leaf,
    src: Word,
) -> Result<(), Error> {
    let u = c.cx.u;
    let w = c.load(u, src);
    let x = from_bits(c, leaf.ty, w)?;
    let p = leaf_ptr(c, class, var, vertex, leaf);
    c.store(p, x);
    Ok(())
}

/// Stores `leaf` of `var` as a `uint` word at `dst`.
fn spill_leaf(
    c: &mut Code,
    class: StorageClass,
    var: Word,
    vertex: Option<Word>,
    leaf: &Leaf,
    dst: Word,
) -> Result<(), Error> {
    let p = leaf_ptr(c, class, var, vertex, leaf);
    let x = c.load(leaf.ty, p);
    let w = to_bits(c, leaf.ty, x)?;
    c.store(dst, w);
    Ok(())
}

/// The error for an input built-in pass `what` does not lower.
fn unsupported_builtin(b: spirv::BuiltIn, what: &str) -> Error {
    Error::Unsupported(format!("{what}: input built-in {b:?} is not lowered"))
}

/// A `Lowering` record of pass `p` with the contract's record size.
fn record(p: Pass) -> Lowering {
    Lowering {
        pass: p,
        record_bytes: 4 * dmsh_reflect::lowered::RECORD_WORDS,
        ..Default::default()
    }
}
