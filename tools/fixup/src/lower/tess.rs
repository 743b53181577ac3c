//! Captured tessellation modules lowered (docs/tessellation.md): a control module as the
//! control kernel (`<key>_b`, one workgroup per patch, one invocation per output control
//! point from `OutputVertices`), an evaluation module as Metal's post-tessellation vertex
//! function (`<key>_b`) or as a vertex shader over a tessellator's domain points (the form the
//! Vulkan harness draws); the domain, spacing and winding come from its execution modes.

use super::code::{Code, Cx};
use super::iface::{self, Slot, Var};
use super::rewrite;
use super::{fill_leaf, mode, modes, record, spill_leaf, unsupported_builtin, Pass};
use crate::module::{inst, value};
use crate::Error;
use dmsh_reflect::lowered as l;
use dmsh_reflect::{LoweredBuffer, Lowering, Tessellation};
use rspirv::dr::Operand;
use spirv::{BuiltIn, Capability, ExecutionMode as M, ExecutionModel, Op, StorageClass, Word};

/// The input built-ins the tessellation lowerings give values.
fn handled(b: BuiltIn, control: bool) -> bool {
    match b {
        BuiltIn::PrimitiveId | BuiltIn::PatchVertices => true,
        BuiltIn::InvocationId => control,
        BuiltIn::TessCoord => !control,
        _ => false,
    }
}

/// Checks every used special input built-in is one the lowering gives a value.
fn check_specials(ins: &[Var], control: bool, what: &str) -> Result<(), Error> {
    for v in ins.iter().filter(|v| v.used) {
        if let Some(b) = v
            .builtin
            .filter(|&b| iface::special(b, StorageClass::Input))
        {
            if !handled(b, control) {
                return Err(unsupported_builtin(b, what));
            }
        }
    }
    Ok(())
}

/// A `Private` copy of every per-vertex input of the patch: control point `v` (of
/// `min(count, array length)`) from record `first + v` of `role`.
fn fill_patch_inputs(
    c: &mut Code,
    ins: &[Var],
    role: LoweredBuffer,
    first: Word,
    count: Word,
) -> Result<(), Error> {
    let Some(len) = ins
        .iter()
        .filter(|v| !v.leaves.is_empty())
        .find_map(|v| v.arrayed)
    else {
        return Ok(());
    };
    let lc = c.cx.u32c(len);
    let less = c.uop(Op::ULessThan, count, lc);
    let n = c.select(less, count, lc);
    c.count_loop(n, |c, v| {
        let rec = c.uop(Op::IAdd, first, v);
        for var in ins {
            if var.arrayed.is_none() {
                continue;
            }
            for lf in &var.leaves {
                let Slot::Record(w) = lf.slot else { continue };
                let src = c.record_ptr(role, rec, w);
                fill_leaf(c, StorageClass::Private, var.id, Some(v), lf, src)?;
            }
        }
        Ok(())
    })
}

/// A pointer to word `w` of patch `patch`'s record in `patch_data`.
fn patch_ptr(c: &mut Code, patch: Word, w: u32) -> Word {
    let base = c.mul_c(patch, l::PATCH_WORDS);
    let i = c.add_c(base, w);
    c.word_ptr(LoweredBuffer::PatchData, i)
}

/// The control kernel (`tess_control_kernel`): per-vertex outputs and patch outputs become
/// `Workgroup` variables (what one invocation writes, the others read after a barrier, as
/// in a control stage); after the shader, each invocation stores its control point's record
/// and invocation 0 the patch record and Metal's tessellation factors (the layout
/// `params[4]` names: 0 triangles, 1 quads and isolines).
pub(super) fn control(cx: &mut Cx) -> Result<Lowering, Error> {
    let ms = modes(&cx.sp)?;
    let n = mode(&ms, M::OutputVertices).unwrap_or(0);
    if !(1..=l::MAX_CONTROL_POINTS).contains(&n) {
        return Err(Error::Unsupported(format!(
            "lowered tessellation: {n} output control points; tessellation takes 1 to {}",
            l::MAX_CONTROL_POINTS
        )));
    }
    let ins = iface::variables(&cx.sp, StorageClass::Input, true)?;
    let outs = iface::variables(&cx.sp, StorageClass::Output, true)?;
    check_specials(&ins, true, "lowered tessellation control")?;
    let (_, shader, _) = cx.sp.entry()?;
    let mut moved: Vec<(Word, StorageClass)> =
        ins.iter().map(|v| (v.id, StorageClass::Private)).collect();
    moved.extend(outs.iter().map(|v| (v.id, StorageClass::Workgroup)));
    rewrite::retype(&mut cx.sp, &moved)?;
    let ids: Vec<Word> = moved.iter().map(|x| x.0).collect();
    rewrite::strip(&mut cx.sp, &ids)?;
    // The shader's barriers now order workgroup memory (its outputs).
    let wg = cx.u32c(spirv::Scope::Workgroup as u32);
    let sem =
        (spirv::MemorySemantics::ACQUIRE_RELEASE | spirv::MemorySemantics::WORKGROUP_MEMORY).bits();
    let sem = cx.u32c(sem);
    rewrite::replace(&mut cx.sp, |i| {
        (i.class.opcode == Op::ControlBarrier).then(|| {
            vec![inst(
                Op::ControlBarrier,
                vec![Operand::IdRef(wg), Operand::IdRef(wg), Operand::IdRef(sem)],
            )]
        })
    });
    let mut c = Code::new(cx);
    let patch = c.builtin_uvec3(BuiltIn::WorkgroupId, 0);
    let inv = c.builtin_uvec3(BuiltIn::LocalInvocationId, 0);
    let patch_points = c.param(0);
    let first = c.param(2);
    let pm = c.uop(Op::IMul, patch, patch_points);
    let first_in = c.uop(Op::IAdd, first, pm);
    for v in &ins {
        let value = match v.builtin {
            Some(BuiltIn::PrimitiveId) => patch,
            Some(BuiltIn::InvocationId) => inv,
            Some(BuiltIn::PatchVertices) => patch_points,
            _ => continue,
        };
        let x = super::from_bits(&mut c, v.elem, value)?;
        c.store(v.id, x);
    }
    // Outputs start at zero (unwritten levels and varyings read as 0, as in the translated
    // lowering, whose buffers the host zero-fills).
    let zero = c.cx.u32c(0);
    let first_inv = c.uop(Op::IEqual, inv, zero);
    for v in &outs {
        match v.arrayed {
            Some(_) => {
                let nul = null_of(c.cx, v.elem);
                let p = c.chain(StorageClass::Workgroup, v.elem, v.id, &[inv]);
                c.store(p, nul);
            }
            None => {
                let nul = null_of(c.cx, v.ty);
                c.if_then(first_inv, |c| {
                    c.store(v.id, nul);
                    Ok(())
                })?;
            }
        }
    }
    fill_patch_inputs(
        &mut c,
        &ins,
        LoweredBuffer::VerticesIn,
        first_in,
        patch_points,
    )?;
    c.barrier();
    c.call(shader);
    c.barrier();
    let nc = c.cx.u32c(n);
    let pn = c.uop(Op::IMul, patch, nc);
    let rec = c.uop(Op::IAdd, pn, inv);
    for v in &outs {
        if v.arrayed.is_none() {
            continue;
        }
        for lf in &v.leaves {
            let Slot::Record(w) = lf.slot else { continue };
            let dst = c.record_ptr(LoweredBuffer::ControlPoints, rec, w);
            spill_leaf(&mut c, StorageClass::Workgroup, v.id, Some(inv), lf, dst)?;
        }
    }
    c.if_then(first_inv, |c| {
        for w in 0..6 {
            let p = patch_ptr(c, patch, w);
            c.store(p, zero);
        }
        for v in &outs {
            if v.arrayed.is_some() {
                continue;
            }
            for lf in &v.leaves {
                let Slot::Patch(w) = lf.slot else { continue };
                let dst = patch_ptr(c, patch, w);
                spill_leaf(c, StorageClass::Workgroup, v.id, None, lf, dst)?;
            }
        }
        factors(c, patch)
    })?;
    let main = c.finish(None);
    rewrite::set_entry(
        &mut cx.sp,
        ExecutionModel::GLCompute,
        main,
        |x| !matches!(x, M::OutputVertices),
        &[(M::LocalSize, vec![n, 1, 1])],
    )?;
    rewrite::capabilities(
        &mut cx.sp,
        &rewrite::STAGE_CAPABILITIES,
        &[Capability::Shader],
    );
    rewrite::set_interface(&mut cx.sp);
    let mut r = record(Pass::TessControlKernel);
    r.control_points = n;
    r.local_size = n;
    r.patch_bytes = 4 * l::PATCH_WORDS;
    Ok(r)
}

/// `OpConstantNull ty`.
fn null_of(cx: &mut Cx, ty: Word) -> Word {
    let found = cx
        .sp
        .m
        .types_global_values
        .iter()
        .find(|g| g.class.opcode == Op::ConstantNull && g.result_type == Some(ty));
    if let Some(id) = found.and_then(|g| g.result_id) {
        return id;
    }
    let id = cx.sp.new_id();
    cx.sp
        .m
        .types_global_values
        .push(value(Op::ConstantNull, ty, id, vec![]));
    id
}

/// Invocation 0: the patch's tessellation levels (patch words 0–5, just written) as half
/// floats in Metal's factor layout (`params[4]`: 0 triangles, 8 bytes; 1 quads and isolines,
/// 12 bytes; `dmsh_reflect::lowered::factor_layout`).
fn factors(c: &mut Code, patch: Word) -> Result<(), Error> {
    let u = c.cx.u;
    let f = c.cx.f;
    let glsl = c.cx.glsl();
    let v2 = c.cx.sp.type_vector(f, 2);
    let zf = c.cx.sp.constant32(f, 0);
    let mut halves = Vec::new();
    for w in 0..6 {
        let p = patch_ptr(c, patch, w);
        let bits = c.load(u, p);
        let x = c.op(Op::Bitcast, f, &[bits]);
        let pair = c.op(Op::CompositeConstruct, v2, &[x, zf]);
        let id = c.cx.sp.new_id();
        c.push(value(
            Op::ExtInst,
            u,
            id,
            vec![
                Operand::IdRef(glsl),
                Operand::LiteralExtInstInteger(58), // PackHalf2x16
                Operand::IdRef(pair),
            ],
        ));
        halves.push(id);
    }
    let layout = c.param(4);
    let one = c.cx.u32c(1);
    let quads = c.uop(Op::IEqual, layout, one);
    let b = c.cx.b;
    let tris = c.op(Op::LogicalNot, b, &[quads]);
    for (cond, domain) in [(tris, 1), (quads, 2)] {
        c.if_then(cond, |c| {
            let (stride, at) = l::factor_layout(domain);
            let base = c.mul_c(patch, stride);
            for word in 0..stride {
                let mut acc = c.cx.u32c(0);
                for (k, h) in at.iter().enumerate() {
                    let Some(h) = *h else { continue };
                    if h / 2 != word {
                        continue;
                    }
                    let sh = c.cx.u32c(16 * (h & 1));
                    let x = c.uop(Op::ShiftLeftLogical, halves[k], sh);
                    acc = c.uop(Op::BitwiseOr, acc, x);
                }
                let i = c.add_c(base, word);
                let p = c.word_ptr(LoweredBuffer::TessFactors, i);
                c.store(p, acc);
            }
            Ok(())
        })?;
    }
    Ok(())
}

/// An evaluation module's domain, spacing and output from its execution modes, and the
/// domain's code (0 isolines, 1 triangles, 2 quads).
fn tessellation(cx: &Cx) -> Result<(Tessellation, u32), Error> {
    let ms = modes(&cx.sp)?;
    let has = |m| ms.iter().any(|x| x.0 == m);
    let (domain, code) = if has(M::Triangles) {
        ("triangles", 1)
    } else if has(M::Quads) {
        ("quads", 2)
    } else if has(M::Isolines) {
        ("isolines", 0)
    } else {
        return Err(Error::Unsupported(
            "the evaluation module declares no tessellation domain".into(),
        ));
    };
    let spacing = if has(M::SpacingFractionalOdd) {
        "fractional_odd"
    } else if has(M::SpacingFractionalEven) {
        "fractional_even"
    } else {
        "equal"
    };
    let output = if has(M::PointMode) {
        "points"
    } else if code == 0 {
        "lines"
    } else if has(M::VertexOrderCw) {
        "triangles_cw"
    } else {
        "triangles_ccw"
    };
    Ok((
        Tessellation {
            domain: domain.into(),
            spacing: spacing.into(),
            output: output.into(),
            source: "module".into(),
        },
        code,
    ))
}

/// The evaluation forms: `tess_eval_post` (Metal's post-tessellation vertex function: the
/// patch is gl_PrimitiveID, the coordinate gl_TessCoord) or, with `draw`, `tess_eval_draw` (a
/// vertex shader whose patch and coordinate are domain point gl_VertexIndex). Per-vertex
/// inputs come from `control_points` (record patch × `params[3]` + i), patch inputs and the
/// levels from `patch_data`.
pub(super) fn eval(cx: &mut Cx, draw: bool) -> Result<(Lowering, Tessellation), Error> {
    let (t, code) = tessellation(cx)?;
    let ins = iface::variables(&cx.sp, StorageClass::Input, true)?;
    check_specials(&ins, false, "lowered tessellation evaluation")?;
    let (_, shader, _) = cx.sp.entry()?;
    // The post form keeps the coordinate and the patch ID as the built-ins Metal gives.
    let stays =
        |v: &Var| !draw && matches!(v.builtin, Some(BuiltIn::TessCoord | BuiltIn::PrimitiveId));
    let moved: Vec<(Word, StorageClass)> = ins
        .iter()
        .filter(|v| !stays(v))
        .map(|v| (v.id, StorageClass::Private))
        .collect();
    rewrite::retype(&mut cx.sp, &moved)?;
    let ids: Vec<Word> = moved.iter().map(|x| x.0).collect();
    rewrite::strip(&mut cx.sp, &ids)?;
    let mut c = Code::new(cx);
    let u = c.cx.u;
    let (patch, coord) = if draw {
        let vi = c.builtin_uint(BuiltIn::VertexIndex);
        let base = c.mul_c(vi, 4);
        let p = c.word_ptr(LoweredBuffer::DomainPoints, base);
        let patch = c.load(u, p);
        (patch, Some(base))
    } else {
        (c.builtin_uint(BuiltIn::PrimitiveId), None)
    };
    let ncp = c.param(3);
    for v in &ins {
        if stays(v) {
            continue;
        }
        match v.builtin {
            Some(BuiltIn::PrimitiveId) => {
                let x = super::from_bits(&mut c, v.elem, patch)?;
                c.store(v.id, x);
            }
            Some(BuiltIn::PatchVertices) => {
                let x = super::from_bits(&mut c, v.elem, ncp)?;
                c.store(v.id, x);
            }
            Some(BuiltIn::TessCoord) => {
                let base = coord.unwrap_or(0);
                let f = c.cx.f;
                let n = vector_len(c.cx, v.elem).min(3);
                for k in 0..n {
                    let i = c.add_c(base, 1 + k);
                    let p = c.word_ptr(LoweredBuffer::DomainPoints, i);
                    let w = c.load(u, p);
                    let x = c.op(Op::Bitcast, f, &[w]);
                    let kc = c.cx.u32c(k);
                    let dst = c.chain(StorageClass::Private, f, v.id, &[kc]);
                    c.store(dst, x);
                }
            }
            _ => {
                if v.arrayed.is_some() {
                    continue;
                }
                for lf in &v.leaves {
                    let Slot::Patch(w) = lf.slot else { continue };
                    let src = patch_ptr(&mut c, patch, w);
                    fill_leaf(&mut c, StorageClass::Private, v.id, None, lf, src)?;
                }
            }
        }
    }
    let first = c.uop(Op::IMul, patch, ncp);
    fill_patch_inputs(&mut c, &ins, LoweredBuffer::ControlPoints, first, ncp)?;
    c.call(shader);
    let main = c.finish(None);
    let pass = if draw {
        rewrite::set_entry(
            &mut cx.sp,
            ExecutionModel::Vertex,
            main,
            |x| !tess_mode(x),
            &[],
        )?;
        rewrite::capabilities(
            &mut cx.sp,
            &[Capability::Tessellation, Capability::TessellationPointSize],
            &[Capability::Shader],
        );
        Pass::TessEvalDraw
    } else {
        rewrite::set_entry(
            &mut cx.sp,
            ExecutionModel::TessellationEvaluation,
            main,
            |_| true,
            &[],
        )?;
        Pass::TessEvalPost
    };
    rewrite::set_interface(&mut cx.sp);
    let mut r = record(pass);
    r.control_points = l::declared_control_points(code);
    r.factor_bytes = 4 * l::factor_layout(code).0;
    r.patch_bytes = 4 * l::PATCH_WORDS;
    Ok((r, t))
}

/// The components of vector type `ty` (1 for a scalar).
fn vector_len(cx: &Cx, ty: Word) -> u32 {
    match cx.sp.global_def(ty) {
        Some(d) if d.class.opcode == Op::TypeVector => match d.operands.get(1) {
            Some(Operand::LiteralBit32(n)) => *n,
            _ => 1,
        },
        _ => 1,
    }
}

/// The execution modes only a tessellation stage has.
fn tess_mode(m: M) -> bool {
    matches!(
        m,
        M::Triangles
            | M::Quads
            | M::Isolines
            | M::SpacingEqual
            | M::SpacingFractionalOdd
            | M::SpacingFractionalEven
            | M::VertexOrderCw
            | M::VertexOrderCcw
            | M::PointMode
            | M::OutputVertices
    )
}
