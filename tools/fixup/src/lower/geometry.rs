//! A captured geometry module as the geometry kernel (`<key>_b`) and the final draw's vertex
//! function (`<key>_p`) of docs/geometry.md, from its execution modes: the input primitive
//! (`InputPoints` … `InputTrianglesAdjacency`), `Invocations`, `OutputVertices` and the
//! output strip (`OutputPoints`, `OutputLineStrip`, `OutputTriangleStrip`).

use super::code::{Code, Cx};
use super::iface::{self, Slot, Var};
use super::rewrite::{self, STAGE_CAPABILITIES};
use super::{fill_leaf, mode, modes, record, spill_leaf, unsupported_builtin, Pass};
use crate::module::{id_operand, inst, value};
use crate::Error;
use dmsh_reflect::lowered as l;
use dmsh_reflect::{GeometryInput, LoweredBuffer, Lowering};
use rspirv::dr::Operand;
use spirv::{
    BuiltIn, Capability, Decoration, ExecutionMode as M, ExecutionModel, Op, StorageClass, Word,
};

/// What the execution modes say.
struct Modes {
    /// The input primitive's reflection name and vertices.
    input: &'static str,
    vertices: u32,
    invocations: u32,
    max: u32,
    /// The output strip as the SPH numbers it (1 points, 6 line strip, 7 triangle strip).
    topo: u32,
}

fn read_modes(cx: &Cx) -> Result<Modes, Error> {
    let ms = modes(&cx.sp)?;
    let has = |m| ms.iter().any(|x| x.0 == m);
    let (input, vertices) = if has(M::InputPoints) {
        ("points", 1)
    } else if has(M::InputLines) {
        ("lines", 2)
    } else if has(M::InputLinesAdjacency) {
        ("lines_adjacency", 4)
    } else if has(M::Triangles) {
        ("triangles", 3)
    } else if has(M::InputTrianglesAdjacency) {
        ("triangles_adjacency", 6)
    } else {
        return Err(Error::Unsupported(
            "the geometry module declares no input primitive".into(),
        ));
    };
    let topo = if has(M::OutputPoints) {
        1
    } else if has(M::OutputLineStrip) {
        6
    } else if has(M::OutputTriangleStrip) {
        7
    } else {
        return Err(Error::Unsupported(
            "the geometry module declares no output primitive".into(),
        ));
    };
    let invocations = mode(&ms, M::Invocations).unwrap_or(1).max(1);
    let max = mode(&ms, M::OutputVertices).unwrap_or(0);
    if invocations > l::MAX_INVOCATIONS {
        return Err(Error::Unsupported(format!(
            "lowered geometry: {invocations} invocations per primitive; the lowered form \
             supports at most {}",
            l::MAX_INVOCATIONS
        )));
    }
    if max == 0 || max > l::MAX_OUTPUT_VERTICES {
        return Err(Error::Unsupported(format!(
            "lowered geometry: a maximum of {max} output vertices; the lowered form supports \
             1 to {}",
            l::MAX_OUTPUT_VERTICES
        )));
    }
    Ok(Modes {
        input,
        vertices,
        invocations,
        max,
        topo,
    })
}

/// The `lowering` record and input primitive both passes carry.
fn records(m: &Modes, pass: Pass, primitive_id: bool) -> (Lowering, GeometryInput) {
    let (per, out) = l::indices_per_invocation(m.topo, m.max);
    let mut r = record(pass);
    r.input_vertices = m.vertices;
    r.invocations = m.invocations;
    r.max_vertices = m.max;
    r.output = out.into();
    r.indices_per_invocation = per;
    r.topologies = l::topologies(m.input)
        .iter()
        .map(|t| t.0.to_string())
        .collect();
    if pass == Pass::GeometryKernel {
        r.local_size = l::KERNEL_LOCAL_SIZE;
    }
    if primitive_id {
        r.primitive_id_location = Some(l::PRIMITIVE_ID_LOCATION);
    }
    let g = GeometryInput {
        primitive: m.input.into(),
        vertices: m.vertices,
        source: "module".into(),
    };
    (r, g)
}

/// The outputs the draw writes: stream 0's (other streams feed transform feedback only), and
/// whether gl_PrimitiveID is among them. Fails when it is and a varying uses location 31.
fn drawn_outputs(outs: &[Var]) -> Result<(Vec<&Var>, bool), Error> {
    let drawn: Vec<&Var> = outs.iter().filter(|v| v.stream == 0 && v.used).collect();
    let pid = drawn
        .iter()
        .flat_map(|v| &v.leaves)
        .any(|lf| lf.slot == Slot::Record(l::PRIMITIVE_ID_WORD));
    let at31 = |lf: &iface::Leaf| matches!(lf.slot, Slot::Record(w) if (124..128).contains(&w));
    if pid && drawn.iter().flat_map(|v| &v.leaves).any(at31) {
        return Err(Error::Unsupported(format!(
            "lowered geometry: writes gl_PrimitiveID and a varying at location {}, the location \
             that carries it",
            l::PRIMITIVE_ID_LOCATION
        )));
    }
    Ok((drawn, pid))
}

/// The kernel's state, `Private` `uint`s.
struct State {
    gid: Word,
    emitted: Word,
    strip: Word,
    prims_out: Word,
    last: Word,
    before_last: Word,
}

/// The geometry kernel (`geometry_kernel`).
pub(super) fn kernel(cx: &mut Cx) -> Result<(Lowering, GeometryInput), Error> {
    let m = read_modes(cx)?;
    let ins = iface::variables(&cx.sp, StorageClass::Input, true)?;
    let outs = iface::variables(&cx.sp, StorageClass::Output, false)?;
    let (drawn, pid) = drawn_outputs(&outs)?;
    let drawn: Vec<Var> = drawn.into_iter().cloned().collect();
    for v in &ins {
        if let Some(b) = v
            .builtin
            .filter(|&b| iface::special(b, StorageClass::Input))
        {
            if v.used && !matches!(b, BuiltIn::PrimitiveId | BuiltIn::InvocationId) {
                return Err(unsupported_builtin(b, "lowered geometry"));
            }
        }
    }
    let (_, old_main, _) = cx.sp.entry()?;
    let mut moved: Vec<(Word, StorageClass)> = ins
        .iter()
        .chain(&outs)
        .map(|v| (v.id, StorageClass::Private))
        .collect();
    moved.sort();
    rewrite::retype(&mut cx.sp, &moved)?;
    let ids: Vec<Word> = moved.iter().map(|x| x.0).collect();
    rewrite::strip(&mut cx.sp, &ids)?;
    let u = cx.u;
    let [gid, emitted, strip, prims_out, last, before_last] = [
        "gid",
        "emitted",
        "strip",
        "prims_out",
        "last",
        "before_last",
    ]
    .map(|n| cx.global_var(StorageClass::Private, u, n));
    let st = State {
        gid,
        emitted,
        strip,
        prims_out,
        last,
        before_last,
    };
    let (per, _) = l::indices_per_invocation(m.topo, m.max);
    let emit = emit_function(cx, &m, &st, &drawn, per)?;
    let end = {
        let mut c = Code::new(cx);
        let z = c.cx.u32c(0);
        c.store(strip, z);
        c.finish(None)
    };
    let void = cx.void;
    let zeros: std::collections::HashSet<Word> = (cx.sp.m.types_global_values.iter())
        .filter(|g| match g.class.opcode {
            Op::ConstantNull => true,
            Op::Constant => g.operands.first() == Some(&Operand::LiteralBit32(0)),
            _ => false,
        })
        .filter_map(|g| g.result_id)
        .collect();
    let mut next = cx.sp.m.header.as_ref().map_or(0, |h| h.bound);
    let mut call = |f: Word| {
        next += 1;
        Some(vec![value(
            Op::FunctionCall,
            void,
            next - 1,
            vec![Operand::IdRef(f)],
        )])
    };
    rewrite::replace(&mut cx.sp, |i| match i.class.opcode {
        Op::EmitVertex => call(emit),
        Op::EndPrimitive => call(end),
        // Streams other than 0 feed transform feedback only.
        Op::EmitStreamVertex | Op::EndStreamPrimitive => {
            let s0 = id_operand(i, 0).is_some_and(|s| zeros.contains(&s));
            match (s0, i.class.opcode) {
                (true, Op::EmitStreamVertex) => call(emit),
                (true, _) => call(end),
                _ => Some(vec![]),
            }
        }
        _ => None,
    });
    if let Some(h) = cx.sp.m.header.as_mut() {
        h.bound = next;
    }
    let main = prologue(cx, &m, &st, &ins, per, old_main)?;
    rewrite::set_entry(
        &mut cx.sp,
        ExecutionModel::GLCompute,
        main,
        |x| !geometry_mode(x),
        &[(M::LocalSize, vec![l::KERNEL_LOCAL_SIZE, 1, 1])],
    )?;
    rewrite::capabilities(&mut cx.sp, &STAGE_CAPABILITIES, &[Capability::Shader]);
    rewrite::set_interface(&mut cx.sp);
    Ok(records(&m, Pass::GeometryKernel, pid))
}

/// The execution modes only a geometry stage has.
fn geometry_mode(m: M) -> bool {
    matches!(
        m,
        M::InputPoints
            | M::InputLines
            | M::InputLinesAdjacency
            | M::Triangles
            | M::InputTrianglesAdjacency
            | M::Invocations
            | M::OutputVertices
            | M::OutputPoints
            | M::OutputLineStrip
            | M::OutputTriangleStrip
    )
}

/// `EmitVertex`: below the maximum, the outputs become the thread's next record, and a
/// completed point, line or strip triangle its next list entries (strip triangle j of a, b, c:
/// (a, b, c) when even, (a, c, b) when odd — the winding kept, the first vertex provoking).
fn emit_function(
    cx: &mut Cx,
    m: &Modes,
    st: &State,
    drawn: &[Var],
    per: u32,
) -> Result<Word, Error> {
    let mut c = Code::new(cx);
    let u = c.cx.u;
    let k = c.load(u, st.emitted);
    let maxc = c.cx.u32c(m.max);
    let room = c.uop(Op::ULessThan, k, maxc);
    c.if_then(room, |c| {
        let gid = c.load(u, st.gid);
        let gm = c.uop(Op::IMul, gid, maxc);
        let gk = c.uop(Op::IAdd, gm, k);
        let rec = c.add_c(gk, 1);
        for v in drawn {
            for lf in &v.leaves {
                let Slot::Record(w) = lf.slot else { continue };
                let dst = c.record_ptr(LoweredBuffer::VerticesOut, rec, w);
                spill_leaf(c, StorageClass::Private, v.id, None, lf, dst)?;
            }
        }
        let s = c.load(u, st.strip);
        let base = c.mul_c(gid, per);
        let put = |c: &mut Code, at: Word, add: u32, x: Word| {
            let i0 = c.uop(Op::IAdd, base, at);
            let i = c.add_c(i0, add);
            let p = c.word_ptr(LoweredBuffer::Indices, i);
            c.store(p, x);
        };
        let last = c.load(u, st.last);
        let before = c.load(u, st.before_last);
        let one = c.cx.u32c(1);
        match m.topo {
            1 => put(c, k, 0, rec),
            6 => {
                let has = c.uop(Op::UGreaterThanEqual, s, one);
                c.if_then(has, |c| {
                    let t = c.load(u, st.prims_out);
                    let at = c.mul_c(t, 2);
                    put(c, at, 0, last);
                    put(c, at, 1, rec);
                    let t1 = c.add_c(t, 1);
                    c.store(st.prims_out, t1);
                    Ok(())
                })?;
            }
            _ => {
                let two = c.cx.u32c(2);
                let has = c.uop(Op::UGreaterThanEqual, s, two);
                c.if_then(has, |c| {
                    let t = c.load(u, st.prims_out);
                    let at = c.mul_c(t, 3);
                    let j = c.uop(Op::ISub, s, two);
                    let jb = c.uop(Op::BitwiseAnd, j, one);
                    let odd = c.uop(Op::IEqual, jb, one);
                    let b = c.select(odd, rec, last);
                    let cc = c.select(odd, last, rec);
                    put(c, at, 0, before);
                    put(c, at, 1, b);
                    put(c, at, 2, cc);
                    let t1 = c.add_c(t, 1);
                    c.store(st.prims_out, t1);
                    Ok(())
                })?;
            }
        }
        c.store(st.before_last, last);
        c.store(st.last, rec);
        let s1 = c.add_c(s, 1);
        c.store(st.strip, s1);
        let k1 = c.add_c(k, 1);
        c.store(st.emitted, k1);
        Ok(())
    })?;
    Ok(c.finish(None))
}

/// The kernel's entry function: thread ids and the bounds check, the counters, the null
/// vertex (thread 0) and the cleared index region, the input vertices assembled by the draw's
/// topology (and index buffer) into the shader's input variables, then the shader.
fn prologue(
    cx: &mut Cx,
    m: &Modes,
    st: &State,
    ins: &[Var],
    per: u32,
    shader: Word,
) -> Result<Word, Error> {
    let mut c = Code::new(cx);
    let u = c.cx.u;
    let gid = c.builtin_uvec3(BuiltIn::GlobalInvocationId, 0);
    let [topology, prims, first_vertex, isize, first_index, base] =
        [0, 1, 2, 3, 4, 5].map(|i| c.param(i));
    let invc = c.cx.u32c(m.invocations);
    let total = c.uop(Op::IMul, prims, invc);
    let outside = c.uop(Op::UGreaterThanEqual, gid, total);
    c.return_if(outside);
    let prim = c.uop(Op::UDiv, gid, invc);
    let invocation = c.uop(Op::UMod, gid, invc);
    // gl_PrimitiveIDIn: the sub-draw's first primitive ID (`params[6]`) plus the primitive.
    let first_id = c.param(6);
    let prim_id = c.uop(Op::IAdd, prim, first_id);
    let zero = c.cx.u32c(0);
    c.store(st.gid, gid);
    for v in [st.emitted, st.strip, st.prims_out, st.last, st.before_last] {
        c.store(v, zero);
    }
    for v in ins {
        let value = match v.builtin {
            Some(BuiltIn::PrimitiveId) => prim_id,
            Some(BuiltIn::InvocationId) => invocation,
            _ => continue,
        };
        let x = super::from_bits(&mut c, v.elem, value)?;
        c.store(v.id, x);
    }
    // Thread 0 writes the null vertex (record 0): a position outside the clip volume, so the
    // unused index entries (0) draw nothing.
    let first = c.uop(Op::IEqual, gid, zero);
    c.if_then(first, |c| {
        let two = c.cx.u32c(2.0f32.to_bits());
        let one = c.cx.u32c(1.0f32.to_bits());
        for (k, x) in [two, two, two, one].into_iter().enumerate() {
            let p = c.record_ptr(
                LoweredBuffer::VerticesOut,
                zero,
                l::POSITION_WORD + k as u32,
            );
            c.store(p, x);
        }
        Ok(())
    })?;
    if per > 0 {
        let base_i = c.mul_c(gid, per);
        let perc = c.cx.u32c(per);
        c.count_loop(perc, |c, j| {
            let i = c.uop(Op::IAdd, base_i, j);
            let p = c.word_ptr(LoweredBuffer::Indices, i);
            c.store(p, zero);
            Ok(())
        })?;
    }
    let served = l::topologies(m.input);
    for vtx in 0..m.vertices {
        let mut acc = None;
        for &(_, code) in served {
            let e = element_of(&mut c, code, prim, prims, vtx);
            acc = Some(match acc {
                None => e,
                Some(a) => {
                    let cc = c.cx.u32c(code);
                    let is = c.uop(Op::IEqual, topology, cc);
                    c.select(is, e, a)
                }
            });
        }
        let e = acc.unwrap_or(prim);
        let direct = c.uop(Op::IAdd, first_vertex, e);
        let unindexed = c.uop(Op::IEqual, isize, zero);
        let j0 = c.uop(Op::IAdd, first_index, e);
        let j = c.select(unindexed, zero, j0);
        let p4 = c.word_ptr(LoweredBuffer::IndexSource, j);
        let w4 = c.load(u, p4);
        let one = c.cx.u32c(1);
        let half = c.uop(Op::ShiftRightLogical, j, one);
        let p2 = c.word_ptr(LoweredBuffer::IndexSource, half);
        let w2 = c.load(u, p2);
        let odd = c.uop(Op::BitwiseAnd, j, one);
        let sh = c.mul_c(odd, 16);
        let w2s = c.uop(Op::ShiftRightLogical, w2, sh);
        let mask = c.cx.u32c(0xffff);
        let w2m = c.uop(Op::BitwiseAnd, w2s, mask);
        let two = c.cx.u32c(2);
        let is2 = c.uop(Op::IEqual, isize, two);
        let idx = c.select(is2, w2m, w4);
        let indexed = c.uop(Op::IAdd, idx, base);
        let rec = c.select(unindexed, direct, indexed);
        let vc = c.cx.u32c(vtx);
        for v in ins {
            if v.arrayed.is_none_or(|n| vtx >= n) {
                continue;
            }
            for lf in &v.leaves {
                let Slot::Record(w) = lf.slot else { continue };
                let src = c.record_ptr(LoweredBuffer::VerticesIn, rec, w);
                fill_leaf(&mut c, StorageClass::Private, v.id, Some(vc), lf, src)?;
            }
        }
    }
    c.call(shader);
    Ok(c.finish(None))
}

/// Element `v` of input primitive `prim` (of `prims`) of a draw of `VkPrimitiveTopology`
/// `code` (docs/geometry.md: strips keep their winding as Vulkan assembles them).
fn element_of(c: &mut Code, code: u32, prim: Word, prims: Word, v: u32) -> Word {
    if code == 9 {
        return strip_adjacency_element(c, prim, prims, v);
    }
    let scaled = |c: &mut Code, k: u32| {
        let m = c.mul_c(prim, k);
        c.add_c(m, v)
    };
    match code {
        1 => scaled(c, 2),
        3 => scaled(c, 3),
        6 => scaled(c, 4),
        8 => scaled(c, 6),
        2 | 7 => c.add_c(prim, v),
        // Strip triangle i: i, i + 1 + i%2, i + 2 − i%2.
        4 => {
            let one = c.cx.u32c(1);
            let odd = c.uop(Op::BitwiseAnd, prim, one);
            match v {
                0 => prim,
                1 => {
                    let a = c.add_c(prim, 1);
                    c.uop(Op::IAdd, a, odd)
                }
                _ => {
                    let a = c.add_c(prim, 2);
                    c.uop(Op::ISub, a, odd)
                }
            }
        }
        // Fan triangle i: i + 1, i + 2, 0.
        5 => match v {
            0 | 1 => c.add_c(prim, v + 1),
            _ => c.cx.u32c(0),
        },
        _ => prim,
    }
}

/// Element `v` of triangle `i` of `n` in a triangle strip with adjacency
/// (`dmsh_reflect::lowered::STRIP_ADJACENCY_*`).
fn strip_adjacency_element(c: &mut Code, i: Word, n: Word, v: u32) -> Word {
    let two_i = c.mul_c(i, 2);
    let at = |c: &mut Code, add: i32| c.add_c(two_i, add as u32);
    let one = c.cx.u32c(1);
    let ib = c.uop(Op::BitwiseAnd, i, one);
    let odd = c.uop(Op::IEqual, ib, one);
    let zero = c.cx.u32c(0);
    let first = c.uop(Op::IEqual, i, zero);
    let n1 = c.uop(Op::ISub, n, one);
    let last = c.uop(Op::IEqual, i, n1);
    let only = c.uop(Op::IEqual, n, one);
    let k = v as usize % 6;
    let entry = |c: &mut Code, (m, e): (i32, i32)| {
        if m == e {
            at(c, m)
        } else {
            let (a, b) = (at(c, e), at(c, m));
            c.select(last, a, b)
        }
    };
    let ev = entry(c, l::STRIP_ADJACENCY_EVEN[k]);
    let od = entry(c, l::STRIP_ADJACENCY_ODD[k]);
    let x = c.select(odd, od, ev);
    let fc = c.cx.u32c(l::STRIP_ADJACENCY_FIRST[k]);
    let x = c.select(first, fc, x);
    let oc = c.cx.u32c(l::STRIP_ADJACENCY_ONLY[k]);
    c.select(only, oc, x)
}

/// The final draw's vertex function (`geometry_draw`): every output the geometry shader
/// writes, from record gl_VertexIndex of `vertices_out`; gl_PrimitiveID to a flat `int` at
/// location 31 (a vertex function cannot write the primitive ID).
pub(super) fn draw(cx: &mut Cx) -> Result<(Lowering, GeometryInput), Error> {
    let m = read_modes(cx)?;
    let outs = iface::variables(&cx.sp, StorageClass::Output, false)?;
    let (drawn, pid) = drawn_outputs(&outs)?;
    let drawn: Vec<Var> = drawn.into_iter().cloned().collect();
    let mut c = Code::new(cx);
    let vi = c.builtin_uint(BuiltIn::VertexIndex);
    let mut layer = (false, false);
    let (mut clip, mut cull) = (false, false);
    for v in &drawn {
        for lf in &v.leaves {
            let Slot::Record(w) = lf.slot else { continue };
            let src = c.record_ptr(LoweredBuffer::VerticesOut, vi, w);
            if w == l::PRIMITIVE_ID_WORD {
                continue;
            }
            layer.0 |= w == l::LAYER_WORD;
            layer.1 |= w == l::VIEWPORT_WORD;
            let is_clip = (l::CLIP_WORD..l::CLIP_WORD + l::CLIP_WORDS).contains(&w);
            clip |= is_clip && v_builtin_is(c.cx, v, lf, BuiltIn::ClipDistance);
            cull |= is_clip && v_builtin_is(c.cx, v, lf, BuiltIn::CullDistance);
            fill_leaf(&mut c, StorageClass::Output, v.id, None, lf, src)?;
        }
    }
    let positioned =
        (drawn.iter().flat_map(|v| &v.leaves)).any(|lf| lf.slot == Slot::Record(l::POSITION_WORD));
    if !positioned {
        // A shader that writes no position (one that only stores to memory): the draw still
        // writes the record's, so the vertex function returns a position as a rasterizing
        // pipeline needs (every index is the null vertex's, outside the clip volume).
        let f = c.cx.f;
        let v4 = c.cx.sp.type_vector(f, 4);
        let var = c.cx.global_var(StorageClass::Output, v4, "position");
        c.cx.sp.m.annotations.push(inst(
            Op::Decorate,
            vec![
                Operand::IdRef(var),
                Operand::Decoration(Decoration::BuiltIn),
                Operand::BuiltIn(BuiltIn::Position),
            ],
        ));
        let mut parts = Vec::new();
        for k in 0..4 {
            let src = c.record_ptr(LoweredBuffer::VerticesOut, vi, l::POSITION_WORD + k);
            let u = c.cx.u;
            let w = c.load(u, src);
            parts.push(c.op(Op::Bitcast, f, &[w]));
        }
        let p = c.op(Op::CompositeConstruct, v4, &parts);
        c.store(var, p);
    }
    if pid {
        let i = c.cx.i;
        let var = c.cx.global_var(StorageClass::Output, i, "primitive_id");
        c.cx.sp
            .decorate(var, Decoration::Location, l::PRIMITIVE_ID_LOCATION);
        c.cx.sp.m.annotations.push(inst(
            Op::Decorate,
            vec![Operand::IdRef(var), Operand::Decoration(Decoration::Flat)],
        ));
        let src = c.record_ptr(LoweredBuffer::VerticesOut, vi, l::PRIMITIVE_ID_WORD);
        let u = c.cx.u;
        let w = c.load(u, src);
        let x = c.op(Op::Bitcast, i, &[w]);
        c.store(var, x);
    }
    let main = c.finish(None);
    rewrite::set_entry(
        &mut cx.sp,
        ExecutionModel::Vertex,
        main,
        |x| !geometry_mode(x),
        &[],
    )?;
    rewrite::remove_dead(&mut cx.sp)?;
    // The primitive ID built-in and other streams' outputs are gone; the stream decorations
    // go with them.
    cx.sp.m.annotations.retain(|a| {
        let d = match a.class.opcode {
            Op::Decorate => a.operands.get(1),
            Op::MemberDecorate => a.operands.get(2),
            _ => None,
        };
        !matches!(d, Some(Operand::Decoration(Decoration::Stream)))
    });
    let mut add = vec![Capability::Shader];
    if clip {
        add.push(Capability::ClipDistance);
    }
    if cull {
        add.push(Capability::CullDistance);
    }
    if layer.0 || layer.1 {
        if cx.version() >= (1, 5) {
            if layer.0 {
                add.push(Capability::ShaderLayer);
            }
            if layer.1 {
                add.push(Capability::ShaderViewportIndex);
            }
        } else {
            add.push(Capability::ShaderViewportIndexLayerEXT);
            rewrite::extension(&mut cx.sp, "SPV_EXT_shader_viewport_index_layer");
        }
    }
    rewrite::capabilities(&mut cx.sp, &STAGE_CAPABILITIES, &add);
    rewrite::set_interface(&mut cx.sp);
    Ok(records(&m, Pass::GeometryDraw, pid))
}

/// Whether `lf` of `v` is built-in `b` (the variable's own, or its block member's).
fn v_builtin_is(cx: &Cx, v: &Var, lf: &iface::Leaf, b: BuiltIn) -> bool {
    v.builtin == Some(b)
        || lf
            .path
            .first()
            .is_some_and(|&m| iface::member_builtin(&cx.sp, v.elem, m) == Some(b))
}
