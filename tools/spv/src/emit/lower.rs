//! The lowered forms of `crate::lower` (docs/geometry.md): vertex records in place of stage
//! inputs and outputs, the geometry kernel's prologue and emission, the final draw's body. A
//! child of `emit` (it extends [`E`]).

use super::gfx::Place;
use super::{berr, E};
use crate::lower::{self, Form, Pass, RECORD_WORDS};
use crate::Error;
use dmsh_ir::lift::CompType;
use dmsh_ir::{Function, Op, Stage, Type};
use dmsh_reflect::{LoweredBuffer, Lowering, Resource};
use rspirv::dr::Operand;
use rspirv::spirv::{self, BuiltIn, Decoration, StorageClass, Word};
use std::collections::BTreeSet;

/// Which buffer a record place is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RecBuf {
    /// Capture: this vertex's record in `vertices_in`.
    Capture,
    /// Kernel: input vertex n's record in `vertices_in`.
    Input,
    /// Kernel: the vertex being built (a function array; `EmitVertex` copies it out).
    Current,
    /// Tess-control kernel: input control point n of this patch in `vertices_in`.
    PatchIn,
    /// Tessellation: output control point n of this patch in `control_points`.
    ControlPoint,
    /// Tessellation: this patch's record in `patch_data` (the word is a patch word).
    Patch,
    /// Tess-eval draw: this vertex's domain point in `domain_points` (word 0 the patch, 1–3
    /// the coordinates).
    Domain,
}

/// What the lowered forms keep while emitting.
#[derive(Default)]
pub(crate) struct LowerState {
    /// Buffer variables by role (0: not declared).
    bufs: [Word; 9],
    /// Kernel: thread, primitive and invocation ids.
    gid: Word,
    prim: Word,
    /// Kernel: gl_PrimitiveIDIn (`prim` + `params[6]`).
    prim_id: Word,
    invocation: Word,
    /// Kernel: the record index of each input vertex (`u32[N]`), the vertex being built
    /// (`u32[RECORD_WORDS]`), and the counters (vertices emitted, current strip length,
    /// primitives emitted, the strip's last two records).
    vix: Word,
    cur: Word,
    emitted: Word,
    strip: Word,
    prims_out: Word,
    last: Word,
    before_last: Word,
    /// Kernel and draw: the attribute addresses the geometry shader writes.
    out_addrs: Vec<u32>,
    /// Draw: the gl_PrimitiveID varying, once declared.
    primitive_id: Word,
    /// Tessellation: this patch, its first input record (control kernel), the control
    /// points per patch (a constant in the control kernel, `params[3]` in evaluation forms).
    patch: Word,
    first_in: Word,
    ncp: Word,
    /// Tess-control kernel: input control points per patch (`params[0]`).
    patch_points: Word,
    /// Kernel: invocations, maximum vertices, SPH output topology, index entries per thread.
    inv: u32,
    max: u32,
    topo: u32,
    per: u32,
}

impl E {
    pub(crate) fn form(&self) -> Form {
        self.opts.form
    }

    /// The storage buffer of geometry role `r` (`buffer { uint w[]; }` at set 0).
    fn geometry_buffer(&mut self, r: LoweredBuffer) -> Word {
        let i = r as usize;
        if self.lw.bufs[i] != 0 {
            return self.lw.bufs[i];
        }
        let elem = self.ty(Type::U32);
        let st = self.runtime_block(elem, 4);
        let pty = self.ptr(StorageClass::StorageBuffer, st);
        let var = self.global_var(pty, StorageClass::StorageBuffer, None);
        self.b
            .decorate(var, Decoration::DescriptorSet, [Operand::LiteralBit32(0)]);
        self.b.decorate(
            var,
            Decoration::Binding,
            [Operand::LiteralBit32(r.binding())],
        );
        if matches!(r, LoweredBuffer::Params | LoweredBuffer::IndexSource) {
            self.b.decorate(var, Decoration::NonWritable, []);
        }
        self.interface.push(var);
        self.lw.bufs[i] = var;
        var
    }

    /// A pointer to word `index` of buffer `r`.
    fn buffer_word(&mut self, r: LoweredBuffer, index: Word) -> Word {
        let var = self.geometry_buffer(r);
        let u = self.ty(Type::U32);
        let pu = self.ptr(StorageClass::StorageBuffer, u);
        let z = self.u32c(0);
        berr(self.b.access_chain(pu, None, var, &[z, index])).expect("block selected")
    }

    /// A pointer to word `word` of record `rec` of buffer `r`.
    fn record_ptr(&mut self, r: LoweredBuffer, rec: Word, word: u32) -> Word {
        let u = self.ty(Type::U32);
        let rw = self.u32c(RECORD_WORDS);
        let base = self.op(spirv::Op::IMul, u, &[rec, rw]);
        let wc = self.u32c(word);
        let i = self.op(spirv::Op::IAdd, u, &[base, wc]);
        self.buffer_word(r, i)
    }

    fn param(&mut self, i: u32) -> Word {
        let ic = self.u32c(i);
        let p = self.buffer_word(LoweredBuffer::Params, ic);
        self.load(Type::U32, p)
    }

    fn vertex_index_u32(&mut self) -> Word {
        let i = self.sint(32);
        let var = self.builtin_var(false, BuiltIn::VertexIndex, i, None, false);
        let x = berr(self.b.load_plain(i, var)).expect("block selected");
        let u = self.ty(Type::U32);
        self.op(spirv::Op::Bitcast, u, &[x])
    }

    /// The place of `a[addr]` in a lowered form, None where the direct mapping applies.
    pub(crate) fn lowered_place(
        &mut self,
        addr: u32,
        out: bool,
        patch: bool,
    ) -> Option<Result<Place, Error>> {
        let rec = |e: &E, buf| {
            Some(match lower::record_word(addr) {
                Some(word) => Ok(Place::Record { word, buf }),
                None => Err(e.lower_err(&format!("attribute a[{addr:#x}] has no record word"))),
            })
        };
        let patch_rec = |e: &E| {
            Some(match lower::patch_word(addr) {
                Some(word) => Ok(Place::Record {
                    word,
                    buf: RecBuf::Patch,
                }),
                None => Err(e.lower_err(&format!("patch attribute a[{addr:#x}] has no word"))),
            })
        };
        match self.form() {
            Form::Lowered(Pass::TessControlKernel) => {
                return match (out, patch) {
                    (_, true) => patch_rec(self),
                    (true, false) => rec(self, RecBuf::ControlPoint),
                    (false, false) if addr == 0x60 => Some(Ok(Place::Id(self.lw.patch))),
                    (false, false) => rec(self, RecBuf::PatchIn),
                };
            }
            // The tessellation coordinate (read with or without `.O`, as the direct form
            // takes it): the built-in in the post form, the domain point in the draw.
            Form::Lowered(Pass::TessEvalPost) if matches!(addr, 0x2f0 | 0x2f4) => return None,
            Form::Lowered(Pass::TessEvalDraw) if matches!(addr, 0x2f0 | 0x2f4) => {
                return Some(Ok(Place::Record {
                    word: 1 + (addr - 0x2f0) / 4,
                    buf: RecBuf::Domain,
                }));
            }
            Form::Lowered(Pass::TessEvalPost) | Form::Lowered(Pass::TessEvalDraw) if !out => {
                return match addr {
                    0x00..=0x17 => patch_rec(self),
                    _ if patch => patch_rec(self),
                    0x60 => Some(Ok(Place::Id(self.lw.patch))),
                    _ => rec(self, RecBuf::ControlPoint),
                };
            }
            _ if patch => return None,
            _ => {}
        }
        match (self.form(), self.stage, out) {
            (Form::Lowered(Pass::VertexCapture), Stage::Vertex, true) => rec(self, RecBuf::Capture),
            (Form::Lowered(Pass::GeometryKernel), Stage::Geometry, true) => {
                rec(self, RecBuf::Current)
            }
            (Form::Lowered(Pass::GeometryKernel), Stage::Geometry, false) if addr == 0x60 => {
                Some(Ok(Place::Id(self.lw.prim_id)))
            }
            (Form::Lowered(Pass::GeometryKernel), Stage::Geometry, false) => {
                rec(self, RecBuf::Input)
            }
            (Form::Lowered(Pass::GeometryDraw), _, true) if addr == 0x60 => {
                Some(Ok(self.primitive_id_out()))
            }
            _ => None,
        }
    }

    /// Draw: the flat `int` output that carries the geometry shader's gl_PrimitiveID.
    fn primitive_id_out(&mut self) -> Place {
        if self.lw.primitive_id == 0 {
            let i = self.sint(32);
            let pty = self.ptr(StorageClass::Output, i);
            let v = self.global_var(pty, StorageClass::Output, None);
            let loc = lower::PRIMITIVE_ID_LOCATION;
            self.b
                .decorate(v, Decoration::Location, [Operand::LiteralBit32(loc)]);
            self.interface.push(v);
            self.gx.outputs.insert(loc, CompType::Sint);
            self.lw.primitive_id = v;
        }
        Place::Var {
            var: self.lw.primitive_id,
            comp: None,
            ct: CompType::Sint,
            arrayed: false,
        }
    }

    fn lower_err(&self, why: &str) -> Error {
        let key = self
            .gfxcfg
            .as_ref()
            .map(|g| g.key.clone())
            .unwrap_or_default();
        Error::Unsupported(format!("shader {key}: lowered geometry: {why}"))
    }

    /// A pointer to a record place's word (`vtx`: the input vertex, kernel inputs only).
    pub(crate) fn record_place_ptr(&mut self, word: u32, buf: RecBuf, vtx: Option<Word>) -> Word {
        match buf {
            RecBuf::Capture => {
                let vi = self.vertex_index_u32();
                self.record_ptr(LoweredBuffer::VerticesIn, vi, word)
            }
            RecBuf::Input => {
                let v = match vtx {
                    Some(v) => v,
                    None => self.u32c(0),
                };
                let u = self.ty(Type::U32);
                let pf = self.ptr(StorageClass::Function, u);
                let p = berr(self.b.access_chain(pf, None, self.lw.vix, &[v])).expect("block");
                let rec = self.load(Type::U32, p);
                self.record_ptr(LoweredBuffer::VerticesIn, rec, word)
            }
            RecBuf::Current => {
                let u = self.ty(Type::U32);
                let pf = self.ptr(StorageClass::Function, u);
                let wc = self.u32c(word);
                berr(self.b.access_chain(pf, None, self.lw.cur, &[wc])).expect("block")
            }
            RecBuf::PatchIn | RecBuf::ControlPoint => {
                let u = self.ty(Type::U32);
                let v = match vtx {
                    Some(v) => v,
                    None => self.u32c(0),
                };
                let (base, role) = if buf == RecBuf::PatchIn {
                    (self.lw.first_in, LoweredBuffer::VerticesIn)
                } else {
                    let b = self.op(spirv::Op::IMul, u, &[self.lw.patch, self.lw.ncp]);
                    (b, LoweredBuffer::ControlPoints)
                };
                let rec = self.op(spirv::Op::IAdd, u, &[base, v]);
                self.record_ptr(role, rec, word)
            }
            RecBuf::Patch => {
                let u = self.ty(Type::U32);
                let pw = self.u32c(lower::PATCH_WORDS);
                let base = self.op(spirv::Op::IMul, u, &[self.lw.patch, pw]);
                let wc = self.u32c(word);
                let i = self.op(spirv::Op::IAdd, u, &[base, wc]);
                self.buffer_word(LoweredBuffer::PatchData, i)
            }
            RecBuf::Domain => {
                let u = self.ty(Type::U32);
                let vi = self.vertex_index_u32();
                let four = self.u32c(4);
                let base = self.op(spirv::Op::IMul, u, &[vi, four]);
                let wc = self.u32c(word);
                let i = self.op(spirv::Op::IAdd, u, &[base, wc]);
                self.buffer_word(LoweredBuffer::DomainPoints, i)
            }
        }
    }

    /// The tessellation forms' prologue: this patch, the control points per patch, the
    /// control kernel's invocation and first input record.
    pub(crate) fn tess_prologue(&mut self) -> Result<(), Error> {
        let u = self.ty(Type::U32);
        match self.form() {
            Form::Lowered(Pass::TessControlKernel) => {
                let n = self.control_points_out()?;
                self.lw.patch = self.builtin_comp(BuiltIn::WorkgroupId, 0);
                self.lw.invocation = self.builtin_comp(BuiltIn::LocalInvocationId, 0);
                self.lw.patch_points = self.param(0);
                let first = self.param(2);
                let m = self.op(spirv::Op::IMul, u, &[self.lw.patch, self.lw.patch_points]);
                self.lw.first_in = self.op(spirv::Op::IAdd, u, &[first, m]);
                self.lw.ncp = self.u32c(n);
            }
            Form::Lowered(Pass::TessEvalPost) => {
                let i = self.sint(32);
                let var = self.builtin_var(false, BuiltIn::PrimitiveId, i, None, false);
                let x = berr(self.b.load_plain(i, var))?;
                self.lw.patch = self.op(spirv::Op::Bitcast, u, &[x]);
                self.lw.ncp = self.param(3);
            }
            Form::Lowered(Pass::TessEvalDraw) => {
                let p = self.record_place_ptr(0, RecBuf::Domain, None);
                self.lw.patch = self.load(Type::U32, p);
                self.lw.ncp = self.param(3);
            }
            _ => {}
        }
        Ok(())
    }

    /// The control kernel's output control points (threads per patch), within limits.
    fn control_points_out(&self) -> Result<u32, Error> {
        let n = self
            .gfxcfg
            .as_ref()
            .map_or(1, |g| g.sph.threads_per_input_primitive.max(1));
        if n > 32 {
            return Err(self.lower_err(&format!(
                "{n} output control points; tessellation takes at most 32"
            )));
        }
        Ok(n)
    }

    /// The tessellation domain (`tess_param & 0xf`: 0 isolines, 1 triangles, 2 quads).
    fn tess_domain(&self) -> u32 {
        self.gfxcfg.as_ref().map_or(1, |g| g.tess_param & 0xf)
    }

    /// Tess-control kernel: the level at `addr` (0x00–0x14) also goes to Metal's factor
    /// buffer as a half float (two per word, set with atomics so neighbours do not race), in
    /// the layout `params[4]` names (0 triangles, 1 quads and isolines: the evaluation
    /// shader's domain, which the control shader's binary does not know).
    pub(crate) fn store_factor(&mut self, addr: u32, x: Word) -> Result<(), Error> {
        let Some(w) = lower::patch_word(addr).filter(|&w| w < 6) else {
            return Ok(());
        };
        let bo = self.ty(Type::Bool);
        let layout = self.param(4);
        let one = self.u32c(1);
        let quads = self.op(spirv::Op::IEqual, bo, &[layout, one]);
        let (tri_stride, tri) = lower::factor_layout(1);
        let (quad_stride, quad) = lower::factor_layout(2);
        match (tri[w as usize], quad[w as usize]) {
            (Some(t), Some(q)) => {
                let (sq, hq) = (self.u32c(quad_stride), self.u32c(q));
                let (st, ht) = (self.u32c(tri_stride), self.u32c(t));
                let stride = self.select(Type::U32, quads, sq, st);
                let h = self.select(Type::U32, quads, hq, ht);
                self.factor_half(stride, h, x);
            }
            (None, Some(q)) => {
                self.if_then(quads, |e| {
                    let (s, h) = (e.u32c(quad_stride), e.u32c(q));
                    e.factor_half(s, h, x);
                    Ok(())
                })?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Sets half `h` of this patch's factors (`stride` words per patch) to `x` (f32 bits).
    fn factor_half(&mut self, stride: Word, h: Word, x: Word) {
        let u = self.ty(Type::U32);
        let f = self.ty(Type::F32);
        let v2 = self.vec_ty(f, 2);
        let xf = self.op(spirv::Op::Bitcast, f, &[x]);
        let zero = self.c(Type::F32, 0);
        let pair = self.op(spirv::Op::CompositeConstruct, v2, &[xf, zero]);
        let packed = self.ext(u, 58, &[pair]); // PackHalf2x16
        let one = self.u32c(1);
        let odd = self.op(spirv::Op::BitwiseAnd, u, &[h, one]);
        let four = self.u32c(4);
        let sc = self.op(spirv::Op::ShiftLeftLogical, u, &[odd, four]);
        let bits = self.op(spirv::Op::ShiftLeftLogical, u, &[packed, sc]);
        let base = self.op(spirv::Op::IMul, u, &[self.lw.patch, stride]);
        let hw = self.op(spirv::Op::ShiftRightLogical, u, &[h, one]);
        let i = self.op(spirv::Op::IAdd, u, &[base, hw]);
        let p = self.buffer_word(LoweredBuffer::TessFactors, i);
        let scope = self.u32c(super::SCOPE_DEVICE);
        let sem = self.u32c(0);
        let ffff = self.u32c(0xffff);
        let hole = self.op(spirv::Op::ShiftLeftLogical, u, &[ffff, sc]);
        let keep = self.op(spirv::Op::Not, u, &[hole]);
        self.op(spirv::Op::AtomicAnd, u, &[p, scope, sem, keep]);
        self.op(spirv::Op::AtomicOr, u, &[p, scope, sem, bits]);
    }

    /// The value `GSys::PrimType` reads in a tessellation form (patch size in bits 8–15).
    pub(crate) fn tess_prim_type(&mut self) -> Option<Word> {
        let n = match self.form() {
            Form::Lowered(Pass::TessControlKernel) => self.lw.patch_points,
            Form::Lowered(Pass::TessEvalPost) | Form::Lowered(Pass::TessEvalDraw) => self.lw.ncp,
            _ => return None,
        };
        let u = self.ty(Type::U32);
        let eight = self.u32c(8);
        Some(self.op(spirv::Op::ShiftLeftLogical, u, &[n, eight]))
    }

    /// The component type of output attribute `addr` (generic vectors as the SPH declares
    /// them; the rest float).
    pub(crate) fn out_type(&self, addr: u32) -> CompType {
        match addr {
            0x80..=0x27f => self
                .gfxcfg
                .as_ref()
                .map(|g| g.outputs[((addr - 0x80) / 16) as usize])
                .unwrap_or_default(),
            0x60 | 0x64 | 0x68 => CompType::Sint,
            _ => CompType::Float,
        }
    }

    /// Every attribute address the geometry shader writes: the SPH's outputs and every
    /// constant-address store.
    fn geometry_outputs(&self, f: &Function) -> Vec<u32> {
        let mut set: BTreeSet<u32> = self.sph_outputs().into_iter().map(|(a, _)| a).collect();
        for b in &f.blocks {
            for &v in &b.insts {
                let i = f.inst(v);
                if let Op::AttrStore { patch: false } = i.op {
                    if let Some(a) = f.const_of(i.args[0]) {
                        set.insert(a as u32);
                    }
                }
            }
        }
        set.into_iter()
            .filter(|&a| lower::record_word(a).is_some())
            .collect()
    }

    /// The kernel's prologue (before the SPH defaults): thread ids, the bounds check, the
    /// input vertices' record indices, the counters, the null vertex and the cleared index
    /// region.
    pub(crate) fn kernel_prologue(&mut self, f: &Function) -> Result<(), Error> {
        let Some(g) = self.gfxcfg.clone() else {
            return Ok(());
        };
        let sph = &g.sph;
        let (inv, max, topo) = (
            sph.threads_per_input_primitive.max(1),
            sph.max_output_vertex_count,
            sph.output_topology,
        );
        if inv > lower::MAX_INVOCATIONS {
            return Err(self.lower_err(&format!(
                "{inv} invocations per primitive; the lowered form supports at most {}",
                lower::MAX_INVOCATIONS
            )));
        }
        if max == 0 || max > lower::MAX_OUTPUT_VERTICES {
            return Err(self.lower_err(&format!(
                "a maximum of {max} output vertices; the lowered form supports 1 to {}",
                lower::MAX_OUTPUT_VERTICES
            )));
        }
        let (per, _) = lower::indices_per_invocation(topo, max);
        self.lw.out_addrs = self.geometry_outputs(f);
        if self.lw.out_addrs.contains(&0x60)
            && self.lw.out_addrs.iter().any(|a| (0x270..0x280).contains(a))
        {
            return Err(self.lower_err(
                "writes gl_PrimitiveID and generic vector 31, the location that carries it",
            ));
        }
        (self.lw.inv, self.lw.max, self.lw.topo, self.lw.per) = (inv, max, topo, per);
        let u = self.ty(Type::U32);
        let bo = self.ty(Type::Bool);
        let gid = self.builtin_comp(BuiltIn::GlobalInvocationId, 0);
        let [topology, prims, first_vertex, isize, first_index, base] =
            [0, 1, 2, 3, 4, 5].map(|i| self.param(i));
        let invc = self.u32c(inv);
        let total = self.op(spirv::Op::IMul, u, &[prims, invc]);
        let outside = self.op(spirv::Op::UGreaterThanEqual, bo, &[gid, total]);
        let (ret, go) = (self.b.id(), self.b.id());
        berr(self.b.selection_merge(go, spirv::SelectionControl::NONE))?;
        berr(self.b.branch_conditional(outside, ret, go, []))?;
        berr(self.b.begin_block(Some(ret)))?;
        berr(self.b.ret())?;
        berr(self.b.begin_block(Some(go)))?;
        self.lw.gid = gid;
        self.lw.prim = self.op(spirv::Op::UDiv, u, &[gid, invc]);
        // gl_PrimitiveIDIn: the sub-draw's first primitive ID (`params[6]`: a host splitting
        // a draw at primitive restarts continues the count) plus the primitive.
        let first_id = self.param(6);
        self.lw.prim_id = self.op(spirv::Op::IAdd, u, &[self.lw.prim, first_id]);
        self.lw.invocation = self.op(spirv::Op::UMod, u, &[gid, invc]);
        // Input vertex n of the primitive: its element of the draw by topology, then through
        // the index buffer (2- or 4-byte indices + base vertex) or after the first vertex.
        let n = self.gx.gs_in.max(1);
        let nc = self.u32c(n);
        let at = self.arr(u, nc);
        self.lw.vix = self.fn_var(at, None);
        let served = self
            .gx
            .gs_input
            .map_or(&[][..], |(p, _)| lower::topologies(p));
        let prim = self.lw.prim;
        let pf = self.ptr(StorageClass::Function, u);
        for v in 0..n {
            let mut acc = None;
            for &(_, code) in served {
                let e = self.element_of(code, prim, prims, v);
                acc = Some(match acc {
                    None => e,
                    Some(a) => {
                        let cc = self.u32c(code);
                        let is = self.op(spirv::Op::IEqual, bo, &[topology, cc]);
                        self.select(Type::U32, is, e, a)
                    }
                });
            }
            let e = match acc {
                Some(e) => e,
                None => self.u32c(v),
            };
            let direct = self.op(spirv::Op::IAdd, u, &[first_vertex, e]);
            let zero = self.u32c(0);
            let unindexed = self.op(spirv::Op::IEqual, bo, &[isize, zero]);
            let j0 = self.op(spirv::Op::IAdd, u, &[first_index, e]);
            let j = self.select(Type::U32, unindexed, zero, j0);
            let p4 = self.buffer_word(LoweredBuffer::IndexSource, j);
            let w4 = self.load(Type::U32, p4);
            let one = self.u32c(1);
            let half = self.op(spirv::Op::ShiftRightLogical, u, &[j, one]);
            let p2 = self.buffer_word(LoweredBuffer::IndexSource, half);
            let w2 = self.load(Type::U32, p2);
            let odd = self.op(spirv::Op::BitwiseAnd, u, &[j, one]);
            let sixteen = self.u32c(16);
            let sh = self.op(spirv::Op::IMul, u, &[odd, sixteen]);
            let w2s = self.op(spirv::Op::ShiftRightLogical, u, &[w2, sh]);
            let mask = self.u32c(0xffff);
            let w2m = self.op(spirv::Op::BitwiseAnd, u, &[w2s, mask]);
            let two = self.u32c(2);
            let is2 = self.op(spirv::Op::IEqual, bo, &[isize, two]);
            let idx = self.select(Type::U32, is2, w2m, w4);
            let indexed = self.op(spirv::Op::IAdd, u, &[idx, base]);
            let rec = self.select(Type::U32, unindexed, direct, indexed);
            let vc = self.u32c(v);
            let p = berr(self.b.access_chain(pf, None, self.lw.vix, &[vc]))?;
            self.store(p, rec);
        }
        let rw = self.u32c(RECORD_WORDS);
        let at = self.arr(u, rw);
        self.lw.cur = self.fn_var(at, None);
        let zero = self.u32c(0);
        for slot in [0, 1, 2, 3, 4] {
            let var = self.fn_var(u, Some(zero));
            match slot {
                0 => self.lw.emitted = var,
                1 => self.lw.strip = var,
                2 => self.lw.prims_out = var,
                3 => self.lw.last = var,
                _ => self.lw.before_last = var,
            }
        }
        // Thread 0 writes the null vertex (record 0): a position outside the clip volume, so
        // the unused index entries (0) draw nothing.
        let first = self.op(spirv::Op::IEqual, bo, &[gid, zero]);
        self.if_then(first, |e| {
            let two = e.u32c(2.0f32.to_bits());
            let one = e.u32c(1.0f32.to_bits());
            let z = e.u32c(0);
            for (c, x) in [two, two, two, one].into_iter().enumerate() {
                let p = e.record_ptr(LoweredBuffer::VerticesOut, z, 128 + c as u32);
                e.store(p, x);
            }
            Ok(())
        })?;
        if per > 0 {
            let perc = self.u32c(per);
            let base = self.op(spirv::Op::IMul, u, &[gid, perc]);
            self.count_loop(per, |e, j| {
                let i = e.op(spirv::Op::IAdd, u, &[base, j]);
                let p = e.buffer_word(LoweredBuffer::Indices, i);
                let z = e.u32c(0);
                e.store(p, z);
                Ok(())
            })?;
        }
        Ok(())
    }

    /// Element `v` of input primitive `prim` (of `prims`) of a draw of
    /// `VkPrimitiveTopology` `code`.
    fn element_of(&mut self, code: u32, prim: Word, prims: Word, v: u32) -> Word {
        let u = self.ty(Type::U32);
        let vc = self.u32c(v);
        if code == 9 {
            return self.strip_adjacency_element(prim, prims, v);
        }
        let scaled = |e: &mut E, k: u32| {
            let kc = e.u32c(k);
            let m = e.op(spirv::Op::IMul, u, &[prim, kc]);
            e.op(spirv::Op::IAdd, u, &[m, vc])
        };
        match code {
            1 => scaled(self, 2),
            3 => scaled(self, 3),
            6 => scaled(self, 4),
            8 => scaled(self, 6),
            2 | 7 => self.op(spirv::Op::IAdd, u, &[prim, vc]),
            // Strip triangle i: i, i + 1 + i%2, i + 2 − i%2 (the winding kept).
            4 => {
                let one = self.u32c(1);
                let odd = self.op(spirv::Op::BitwiseAnd, u, &[prim, one]);
                match v {
                    0 => prim,
                    1 => {
                        let a = self.op(spirv::Op::IAdd, u, &[prim, one]);
                        self.op(spirv::Op::IAdd, u, &[a, odd])
                    }
                    _ => {
                        let two = self.u32c(2);
                        let a = self.op(spirv::Op::IAdd, u, &[prim, two]);
                        self.op(spirv::Op::ISub, u, &[a, odd])
                    }
                }
            }
            // Fan triangle i: i + 1, i + 2, 0.
            5 => match v {
                0 | 1 => {
                    let k = self.u32c(v + 1);
                    self.op(spirv::Op::IAdd, u, &[prim, k])
                }
                _ => self.u32c(0),
            },
            _ => prim,
        }
    }

    /// Element `v` (`gl_in` order: vertex, adjacent, vertex, adjacent, vertex, adjacent) of
    /// triangle `i` of `n` in a triangle strip with adjacency. Even triangles (0-based): the
    /// only one 0 1 2 5 4 3, the first 0 1 2 6 4 3, in the middle 2i 2i−2 2i+2 2i+6 2i+4 2i+3,
    /// the last 2i 2i−2 2i+2 2i+3 2i+4 2i+5. Odd triangles start at their first strip vertex
    /// and keep the strip's winding as Vulkan's triangle strips do (i, i+2, i+1): in the
    /// middle 2i 2i+3 2i+4 2i+6 2i+2 2i−2, the last 2i 2i+5 2i+4 2i+3 2i+2 2i−2 (checked
    /// against lavapipe's assembly, tools/cli/tests/geometry_render.rs).
    fn strip_adjacency_element(&mut self, i: Word, n: Word, v: u32) -> Word {
        let u = self.ty(Type::U32);
        let bo = self.ty(Type::Bool);
        let one = self.u32c(1);
        let two = self.u32c(2);
        let two_i = self.op(spirv::Op::IMul, u, &[i, two]);
        let at = |e: &mut E, add: i32| {
            let c = e.u32c(add as u32);
            e.op(spirv::Op::IAdd, u, &[two_i, c])
        };
        let ib = self.op(spirv::Op::BitwiseAnd, u, &[i, one]);
        let odd = self.op(spirv::Op::IEqual, bo, &[ib, one]);
        let zero = self.u32c(0);
        let first = self.op(spirv::Op::IEqual, bo, &[i, zero]);
        let n1 = self.op(spirv::Op::ISub, u, &[n, one]);
        let last = self.op(spirv::Op::IEqual, bo, &[i, n1]);
        let only = self.op(spirv::Op::IEqual, bo, &[n, one]);
        // (middle, last) offsets from 2i for an even and an odd triangle; the first and only
        // triangles (even) are constants.
        use dmsh_reflect::lowered as l;
        let (even, odd_row) = (l::STRIP_ADJACENCY_EVEN, l::STRIP_ADJACENCY_ODD);
        let (first_row, only_row) = (l::STRIP_ADJACENCY_FIRST, l::STRIP_ADJACENCY_ONLY);
        let k = v as usize % 6;
        let pick = |e: &mut E, c: Word, a: Word, b: Word| e.select(Type::U32, c, a, b);
        let entry = |e: &mut E, (m, l): (i32, i32)| {
            if m == l {
                at(e, m)
            } else {
                let (a, b) = (at(e, l), at(e, m));
                pick(e, last, a, b)
            }
        };
        let ev = entry(self, even[k]);
        let od = entry(self, odd_row[k]);
        let x = pick(self, odd, od, ev);
        let fc = self.u32c(first_row[k]);
        let x = pick(self, first, fc, x);
        let oc = self.u32c(only_row[k]);
        pick(self, only, oc, x)
    }

    /// `if (cond) { body }` as a selection construct.
    pub(crate) fn if_then(
        &mut self,
        cond: Word,
        body: impl FnOnce(&mut E) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let (then, merge) = (self.b.id(), self.b.id());
        berr(self.b.selection_merge(merge, spirv::SelectionControl::NONE))?;
        berr(self.b.branch_conditional(cond, then, merge, []))?;
        berr(self.b.begin_block(Some(then)))?;
        body(self)?;
        berr(self.b.branch(merge))?;
        berr(self.b.begin_block(Some(merge)))?;
        Ok(())
    }

    /// `for (j = 0; j < n; j++) { body(j) }` as a loop construct.
    fn count_loop(
        &mut self,
        n: u32,
        body: impl FnOnce(&mut E, Word) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let u = self.ty(Type::U32);
        let bo = self.ty(Type::Bool);
        let zero = self.u32c(0);
        let jv = self.fn_var(u, Some(zero));
        let (head, check, bodyb, cont, merge) = (
            self.b.id(),
            self.b.id(),
            self.b.id(),
            self.b.id(),
            self.b.id(),
        );
        berr(self.b.branch(head))?;
        berr(self.b.begin_block(Some(head)))?;
        berr(self.b.loop_merge(merge, cont, spirv::LoopControl::NONE, []))?;
        berr(self.b.branch(check))?;
        berr(self.b.begin_block(Some(check)))?;
        let j = self.load(Type::U32, jv);
        let nc = self.u32c(n);
        let more = self.op(spirv::Op::ULessThan, bo, &[j, nc]);
        berr(self.b.branch_conditional(more, bodyb, merge, []))?;
        berr(self.b.begin_block(Some(bodyb)))?;
        body(self, j)?;
        berr(self.b.branch(cont))?;
        berr(self.b.begin_block(Some(cont)))?;
        let one = self.u32c(1);
        let j1 = self.op(spirv::Op::IAdd, u, &[j, one]);
        self.store(jv, j1);
        berr(self.b.branch(head))?;
        berr(self.b.begin_block(Some(merge)))?;
        Ok(())
    }

    /// Kernel `EmitVertex`: below the maximum, the vertex being built becomes the thread's
    /// next record, and a completed point, line or strip triangle its next list entries.
    pub(crate) fn kernel_emit(&mut self) -> Result<(), Error> {
        let u = self.ty(Type::U32);
        let bo = self.ty(Type::Bool);
        let k = self.load(Type::U32, self.lw.emitted);
        let maxc = self.u32c(self.lw.max);
        let room = self.op(spirv::Op::ULessThan, bo, &[k, maxc]);
        self.if_then(room, |e| {
            let one = e.u32c(1);
            let gm = e.op(spirv::Op::IMul, u, &[e.lw.gid, maxc]);
            let gk = e.op(spirv::Op::IAdd, u, &[gm, k]);
            let rec = e.op(spirv::Op::IAdd, u, &[gk, one]);
            for a in e.lw.out_addrs.clone() {
                let w = lower::record_word(a).unwrap_or(0);
                let src = e.record_place_ptr(w, RecBuf::Current, None);
                let x = e.load(Type::U32, src);
                let dst = e.record_ptr(LoweredBuffer::VerticesOut, rec, w);
                e.store(dst, x);
            }
            let s = e.load(Type::U32, e.lw.strip);
            let perc = e.u32c(e.lw.per);
            let base = e.op(spirv::Op::IMul, u, &[e.lw.gid, perc]);
            let put = |e: &mut E, at: Word, add: u32, x: Word| {
                let ac = e.u32c(add);
                let i0 = e.op(spirv::Op::IAdd, u, &[base, at]);
                let i = e.op(spirv::Op::IAdd, u, &[i0, ac]);
                let p = e.buffer_word(LoweredBuffer::Indices, i);
                e.store(p, x);
            };
            let last = e.load(Type::U32, e.lw.last);
            let before = e.load(Type::U32, e.lw.before_last);
            match e.lw.topo {
                1 => put(e, k, 0, rec),
                6 => {
                    let has = e.op(spirv::Op::UGreaterThanEqual, bo, &[s, one]);
                    e.if_then(has, |e| {
                        let t = e.load(Type::U32, e.lw.prims_out);
                        let two = e.u32c(2);
                        let at = e.op(spirv::Op::IMul, u, &[t, two]);
                        put(e, at, 0, last);
                        put(e, at, 1, rec);
                        let t1 = e.op(spirv::Op::IAdd, u, &[t, one]);
                        e.store(e.lw.prims_out, t1);
                        Ok(())
                    })?;
                }
                _ => {
                    let two = e.u32c(2);
                    let has = e.op(spirv::Op::UGreaterThanEqual, bo, &[s, two]);
                    e.if_then(has, |e| {
                        let t = e.load(Type::U32, e.lw.prims_out);
                        let three = e.u32c(3);
                        let at = e.op(spirv::Op::IMul, u, &[t, three]);
                        // Strip triangle j = s − 2: (j, j+1, j+2) when even, (j, j+2, j+1)
                        // when odd: the strip's winding, first vertex provoking.
                        let j = e.op(spirv::Op::ISub, u, &[s, two]);
                        let jb = e.op(spirv::Op::BitwiseAnd, u, &[j, one]);
                        let odd = e.op(spirv::Op::IEqual, bo, &[jb, one]);
                        let b = e.select(Type::U32, odd, rec, last);
                        let c = e.select(Type::U32, odd, last, rec);
                        put(e, at, 0, before);
                        put(e, at, 1, b);
                        put(e, at, 2, c);
                        let t1 = e.op(spirv::Op::IAdd, u, &[t, one]);
                        e.store(e.lw.prims_out, t1);
                        Ok(())
                    })?;
                }
            }
            e.store(e.lw.before_last, last);
            e.store(e.lw.last, rec);
            let s1 = e.op(spirv::Op::IAdd, u, &[s, one]);
            e.store(e.lw.strip, s1);
            let k1 = e.op(spirv::Op::IAdd, u, &[k, one]);
            e.store(e.lw.emitted, k1);
            Ok(())
        })
    }

    /// Kernel `EndPrimitive`: the next vertex starts a new strip.
    pub(crate) fn kernel_end_primitive(&mut self) {
        let z = self.u32c(0);
        self.store(self.lw.strip, z);
    }

    /// Geometry or tess-control kernel: gl_InvocationID.
    pub(crate) fn kernel_invocation(&self) -> Word {
        self.lw.invocation
    }

    /// The draw's body: every attribute the geometry shader writes, from record
    /// gl_VertexIndex of `vertices_out` to the output the direct form declares.
    pub(crate) fn draw_body(&mut self, f: &Function) -> Result<(), Error> {
        self.lw.out_addrs = self.geometry_outputs(f);
        let vi = self.vertex_index_u32();
        for a in self.lw.out_addrs.clone() {
            let w = lower::record_word(a).unwrap_or(0);
            let src = self.record_ptr(LoweredBuffer::VerticesOut, vi, w);
            let x = self.load(Type::U32, src);
            let p = self.place(a, true, false)?;
            self.store_place(p, None, x)?;
        }
        Ok(())
    }

    /// The geometry buffers this module declares, for the reflection.
    pub(crate) fn lower_resources(&self) -> Vec<Resource> {
        LoweredBuffer::ALL
            .iter()
            .filter(|r| self.lw.bufs[**r as usize] != 0)
            .map(|&r| Resource {
                kind: dmsh_reflect::LOWERED_BUFFER.into(),
                bank: r as u32,
                size: Some(0),
                set: 0,
                binding: Some(r.binding()),
                ..Default::default()
            })
            .collect()
    }

    /// The reflection's `lowering` record of this form (None for the direct form).
    pub(crate) fn lowering_record(&self) -> Option<Lowering> {
        let pass = self.form().pass()?;
        let mut l = Lowering {
            pass,
            record_bytes: 4 * RECORD_WORDS,
            ..Default::default()
        };
        if self.form() == Form::Lowered(Pass::VertexCapture) {
            return Some(l);
        }
        if matches!(
            self.form(),
            Form::Lowered(Pass::TessControlKernel)
                | Form::Lowered(Pass::TessEvalPost)
                | Form::Lowered(Pass::TessEvalDraw)
        ) {
            let d = self.tess_domain();
            l.control_points = match self.form() {
                Form::Lowered(Pass::TessControlKernel) => self.control_points_out().unwrap_or(1),
                _ => lower::declared_control_points(d),
            };
            // The control kernel's layout is `params[4]`'s (0 here); the evaluation stage's
            // is its domain's.
            l.factor_bytes = match self.form() {
                Form::Lowered(Pass::TessControlKernel) => 0,
                _ => 4 * lower::factor_layout(d).0,
            };
            l.patch_bytes = 4 * lower::PATCH_WORDS;
            if self.form() == Form::Lowered(Pass::TessControlKernel) {
                l.local_size = l.control_points;
            }
            return Some(l);
        }
        let g = self.gfxcfg.as_ref()?;
        let (per, out) =
            lower::indices_per_invocation(g.sph.output_topology, g.sph.max_output_vertex_count);
        l.input_vertices = self.gx.gs_in;
        l.invocations = g.sph.threads_per_input_primitive.max(1);
        l.max_vertices = g.sph.max_output_vertex_count;
        l.output = out.into();
        l.indices_per_invocation = per;
        l.topologies = self
            .gx
            .gs_input
            .map_or(&[][..], |(p, _)| lower::topologies(p))
            .iter()
            .map(|t| t.0.to_string())
            .collect();
        if self.form() == Form::Lowered(Pass::GeometryKernel) {
            l.local_size = lower::KERNEL_LOCAL_SIZE;
        }
        if self.lw.out_addrs.contains(&0x60) {
            l.primitive_id_location = Some(lower::PRIMITIVE_ID_LOCATION);
        }
        Some(l)
    }
}
