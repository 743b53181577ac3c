//! Graphics stages: interface variables for the attribute space, fragment outputs, geometry
//! emission, demote, execution models and modes. A child of `emit` (it extends [`E`]).

use super::lower::RecBuf;
use super::{berr, E};
use crate::lower::{Form, Pass};
use crate::Error;
use dmsh_ir::gfx::{GSys, IpaMode, IpaSample};
use dmsh_ir::lift::layout::Interp;
use dmsh_ir::lift::pipeline_state::geometry_input;
use dmsh_ir::lift::{CompType, GsInput, StateSource};
use dmsh_ir::{Function, Inst, Op, Stage, Type, Value};
use rspirv::dr::Operand;
use rspirv::spirv::{self, BuiltIn, Capability, Decoration, StorageClass, Word};
use std::collections::{BTreeMap, BTreeSet};

/// Location of per-patch generic vector n (`a[0x20 + 16n]`): after the 16 per-vertex ones
/// uam uses in the corpus. Both sides of a translated TCS/TES pair agree on it.
pub(crate) const PATCH_LOCATION_BASE: u32 = 16;

/// Where one attribute word lives.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Place {
    /// Component `comp` (or the whole scalar when `comp` is None) of `var`, whose element is
    /// `ct`; `arrayed`: indexed by vertex first.
    Var {
        var: Word,
        comp: Option<u32>,
        ct: CompType,
        arrayed: bool,
    },
    /// gl_FrontFacing as the hardware reports it (all ones when front facing).
    FrontFacing,
    /// A constant.
    Const(u32),
    /// A computed value (a lowered form's primitive ID).
    Id(Word),
    /// Word `word` of a vertex record (a lowered form, `emit/lower.rs`).
    Record { word: u32, buf: RecBuf },
}

/// One texture declaration, for the reflection.
pub(crate) struct TexDecl {
    /// Its variable.
    pub var: Word,
    /// Its resource kind (`texture`, `tex_dyn`).
    pub kind: &'static str,
    /// An alias's texture type (`Shape::view`); None for the slot's own declaration.
    pub view: Option<String>,
}

/// What the graphics part of the emitter keeps.
#[derive(Default)]
pub(crate) struct GfxState {
    vars: BTreeMap<(u8, u32), (Word, u32)>,
    /// [`E::place`]'s answers by address and direction (bit 0: output, bit 1: patch).
    places: std::collections::HashMap<(u32, u8), Place, dmsh_ir::hash::FastState>,
    /// `gl_FragCoord.w`, loaded in the entry block once used.
    frag_w: Option<Word>,
    /// A texture result's bits (a `uvec4` bit cast) → the result and its component type.
    pub bits_of_vec: std::collections::HashMap<Word, (Word, Word), dmsh_ir::hash::FastState>,
    pub caps: BTreeSet<u32>,
    pub exts: BTreeSet<&'static str>,
    pub depth_replacing: bool,
    /// Declared stage inputs (location, component type) and outputs, for the reflection.
    pub inputs: BTreeMap<u32, CompType>,
    /// Declared colour targets / varyings written.
    pub outputs: BTreeMap<u32, CompType>,
    /// Texture declarations by (slot, alias; `emit/slots.rs`).
    pub textures: BTreeMap<(u16, u8), TexDecl>,
    /// Where each texture slot's sampler comes from (`TexDesc::samp`; absent = bound with it),
    /// and slots used with two different sampler sources.
    pub tex_samp: BTreeMap<u16, u16>,
    pub samp_conflicts: Vec<u16>,
    /// Texture slots sampled with separate samplers (`SAMP_SEP`), found on the first texture
    /// instruction; their variables (images, not combined image samplers); and the separate
    /// sampler variables by sampler slot.
    pub sep_slots: Option<BTreeSet<u16>>,
    pub sep_vars: BTreeSet<Word>,
    pub samplers: BTreeMap<u16, Word>,
    /// Storage-image declarations by (slot, alias), with an alias's view.
    pub images: BTreeMap<(u16, u8), Option<String>>,
    /// Geometry: input vertices per primitive.
    pub gs_in: u32,
    /// Geometry: the input primitive declared and where it came from (dmsh-ir's
    /// `pipeline_state::geometry_input`).
    pub gs_input: Option<(GsInput, StateSource)>,
}

impl E {
    fn st(&self) -> Stage {
        self.stage
    }

    fn gfx(&self) -> Option<&dmsh_ir::lift::Gfx> {
        self.gfxcfg.as_ref()
    }

    pub(crate) fn cap(&mut self, c: Capability) {
        self.gx.caps.insert(c as u32);
    }

    fn i32t(&mut self) -> Word {
        self.sint(32)
    }

    pub(super) fn scalar_of(&mut self, ct: CompType) -> Word {
        match ct {
            CompType::Float => self.ty(Type::F32),
            CompType::Uint => self.ty(Type::U32),
            CompType::Sint => self.i32t(),
        }
    }

    /// A module-scope interface variable of `elem` (wrapped in an array of `arr` if given).
    fn io_var(&mut self, sc: StorageClass, elem: Word, arr: Option<u32>) -> Word {
        let t = match arr {
            Some(n) => {
                let nc = self.u32c(n);
                self.arr(elem, nc)
            }
            None => elem,
        };
        let pty = self.ptr(sc, t);
        let v = self.global_var(pty, sc, None);
        self.interface.push(v);
        v
    }

    /// The per-vertex array length of inputs (TCS/TES: 32 = gl_MaxPatchVertices; GS: the
    /// primitive's vertex count).
    fn in_array(&self) -> Option<u32> {
        match self.st() {
            Stage::TessControl | Stage::TessEval => Some(32),
            Stage::Geometry => Some(self.gx.gs_in.max(1)),
            _ => None,
        }
    }

    fn out_array(&self, patch: bool) -> Option<u32> {
        match self.st() {
            Stage::TessControl if !patch => Some(
                self.gfx()
                    .map(|g| g.sph.threads_per_input_primitive.max(1))
                    .unwrap_or(1),
            ),
            _ => None,
        }
    }

    pub(crate) fn builtin_var(
        &mut self,
        out: bool,
        bi: BuiltIn,
        elem: Word,
        arr: Option<u32>,
        patch: bool,
    ) -> Word {
        let key = (
            if out { 1 } else { 0 } | if patch { 2 } else { 0 },
            0x1000 + bi as u32,
        );
        if let Some(&(v, _)) = self.gx.vars.get(&key) {
            return v;
        }
        let sc = if out {
            StorageClass::Output
        } else {
            StorageClass::Input
        };
        let v = self.io_var(sc, elem, arr);
        self.b
            .decorate(v, Decoration::BuiltIn, [Operand::BuiltIn(bi)]);
        if patch {
            self.b.decorate(v, Decoration::Patch, []);
        }
        if self.st() == Stage::Fragment
            && !out
            && matches!(
                bi,
                BuiltIn::PrimitiveId | BuiltIn::Layer | BuiltIn::ViewportIndex | BuiltIn::SampleId
            )
        {
            self.b.decorate(v, Decoration::Flat, []);
        }
        if out && bi == BuiltIn::Position {
            self.b.decorate(v, Decoration::Invariant, []);
        }
        self.gx.vars.insert(key, (v, 0));
        v
    }

    /// The vec4 variable of generic vector `n` (`kind` 0 input, 1 output, 2 patch output,
    /// 3 patch input).
    fn generic_var(&mut self, kind: u8, n: u32) -> (Word, CompType) {
        let out = kind & 1 == 1;
        let patch = kind & 2 == 2;
        let ct = if patch {
            CompType::Float
        } else if out {
            self.gfx()
                .map(|g| g.outputs[n as usize % 32])
                .unwrap_or_default()
        } else {
            self.gfx()
                .map(|g| g.inputs[n as usize % 32])
                .unwrap_or_default()
        };
        if let Some(&(v, _)) = self.gx.vars.get(&(kind, n)) {
            return (v, ct);
        }
        let s = self.scalar_of(ct);
        let v4 = self.vec_ty(s, 4);
        let arr = if patch {
            None
        } else if out {
            self.out_array(false)
        } else {
            self.in_array()
        };
        let sc = if out {
            StorageClass::Output
        } else {
            StorageClass::Input
        };
        let v = self.io_var(sc, v4, arr);
        let loc = if patch { PATCH_LOCATION_BASE + n } else { n };
        self.b
            .decorate(v, Decoration::Location, [Operand::LiteralBit32(loc)]);
        if patch {
            self.b.decorate(v, Decoration::Patch, []);
        }
        if self.st() == Stage::Fragment && !out {
            let mode = self
                .gfx()
                .map(|g| g.sph.interp_of(n as usize))
                .unwrap_or_default();
            if mode == Interp::Constant || ct != CompType::Float {
                self.b.decorate(v, Decoration::Flat, []);
            } else if mode == Interp::ScreenLinear {
                self.b.decorate(v, Decoration::NoPerspective, []);
            }
        }
        if out {
            self.gx.outputs.insert(loc, ct);
        } else {
            self.gx.inputs.insert(loc, ct);
        }
        self.gx.vars.insert((kind, n), (v, 0));
        (v, ct)
    }

    fn attr_err(&self, addr: u32, why: &str) -> Error {
        let key = self.gfx().map(|g| g.key.clone()).unwrap_or_default();
        Error::Unsupported(format!(
            "shader {key}: attribute a[{addr:#x}] {why} in the {} stage",
            self.st().name()
        ))
    }

    /// Maps an attribute byte address to its place (declaring what it needs).
    pub(crate) fn place(&mut self, addr: u32, out: bool, patch: bool) -> Result<Place, Error> {
        if let Some(p) = self.lowered_place(addr, out, patch) {
            return p;
        }
        // The same address is always the same place (the variables it needs are made once,
        // from the shader's configuration): found once.
        let key = (addr, out as u8 | (patch as u8) << 1);
        if let Some(&p) = self.gx.places.get(&key) {
            return Ok(p);
        }
        let p = self.declared_place(addr, out, patch)?;
        self.gx.places.insert(key, p);
        Ok(p)
    }

    /// [`E::place`] of an address of the stage's own interface, the first time.
    fn declared_place(&mut self, addr: u32, out: bool, patch: bool) -> Result<Place, Error> {
        let st = self.st();
        let f32t = self.ty(Type::F32);
        let i32t = self.i32t();
        let arr_in = if out {
            self.out_array(patch)
        } else {
            self.in_array()
        };
        let arrayed = arr_in.is_some() && !patch;
        let bvar = |e: &mut E, bi: BuiltIn, elem: Word, arr: Option<u32>| {
            e.builtin_var(out, bi, elem, if patch { None } else { arr }, patch)
        };
        Ok(match addr {
            0x00..=0x14 if matches!(st, Stage::TessControl | Stage::TessEval) => {
                let (bi, n, i) = if addr < 0x10 {
                    (BuiltIn::TessLevelOuter, 4, addr / 4)
                } else {
                    (BuiltIn::TessLevelInner, 2, (addr - 0x10) / 4)
                };
                let nc = self.u32c(n);
                let at = self.arr(f32t, nc);
                let var = self.builtin_var(out, bi, at, None, true);
                Place::Var {
                    var,
                    comp: Some(i),
                    ct: CompType::Float,
                    arrayed: false,
                }
            }
            0x20..=0x5f => {
                let n = (addr - 0x20) / 16;
                let (var, ct) = self.generic_var(if out { 3 } else { 2 }, n);
                Place::Var {
                    var,
                    comp: Some((addr % 16) / 4),
                    ct,
                    arrayed: false,
                }
            }
            0x60 => {
                let bi = BuiltIn::PrimitiveId;
                if st == Stage::Fragment {
                    self.cap(Capability::Geometry);
                }
                let var = self.builtin_var(out, bi, i32t, None, false);
                Place::Var {
                    var,
                    comp: None,
                    ct: CompType::Sint,
                    arrayed: false,
                }
            }
            0x64 | 0x68 => {
                let bi = if addr == 0x64 {
                    BuiltIn::Layer
                } else {
                    BuiltIn::ViewportIndex
                };
                match (st, bi) {
                    (Stage::Geometry, BuiltIn::Layer) => {}
                    (Stage::Geometry, _) => self.cap(Capability::MultiViewport),
                    (Stage::Fragment, BuiltIn::Layer) => self.cap(Capability::Geometry),
                    (Stage::Fragment, _) => self.cap(Capability::MultiViewport),
                    (_, BuiltIn::Layer) => self.cap(Capability::ShaderLayer),
                    _ => self.cap(Capability::ShaderViewportIndex),
                }
                let var = self.builtin_var(out, bi, i32t, None, false);
                Place::Var {
                    var,
                    comp: None,
                    ct: CompType::Sint,
                    arrayed: false,
                }
            }
            0x6c => {
                let var = bvar(self, BuiltIn::PointSize, f32t, arr_in);
                Place::Var {
                    var,
                    comp: None,
                    ct: CompType::Float,
                    arrayed,
                }
            }
            0x70..=0x7c => {
                let v4 = self.vec_ty(f32t, 4);
                let var = if st == Stage::Fragment {
                    self.builtin_var(false, BuiltIn::FragCoord, v4, None, false)
                } else {
                    bvar(self, BuiltIn::Position, v4, arr_in)
                };
                Place::Var {
                    var,
                    comp: Some((addr - 0x70) / 4),
                    ct: CompType::Float,
                    arrayed: arrayed && st != Stage::Fragment,
                }
            }
            0x80..=0x27c => {
                let n = (addr - 0x80) / 16;
                let (var, ct) = self.generic_var(if out { 1 } else { 0 }, n);
                Place::Var {
                    var,
                    comp: Some((addr % 16) / 4),
                    ct,
                    arrayed,
                }
            }
            0x2c0..=0x2dc => {
                let i = (addr - 0x2c0) / 4;
                let split = self.gfx().and_then(|g| g.clip_cull);
                if let Some((c, k)) = split.filter(|&(c, _)| i >= c) {
                    // A cull distance: the slots after the clip distances. The array also
                    // covers the slots the SPH marks after the declared ones (uam marks groups
                    // of four and may write them); those stay 0, which never culls.
                    let marked = if out {
                        self.gfx().map(|g| g.sph.clip_distances_out()).unwrap_or(8)
                    } else {
                        8
                    };
                    let k = k.max(marked.saturating_sub(c)).max(i - c + 1);
                    self.cap(Capability::CullDistance);
                    let nc = self.u32c(k);
                    let at = self.arr(f32t, nc);
                    let var = bvar(self, BuiltIn::CullDistance, at, arr_in);
                    return Ok(Place::Var {
                        var,
                        comp: Some(i - c),
                        ct: CompType::Float,
                        arrayed,
                    });
                }
                let n = match split {
                    Some((c, _)) => c,
                    None if out => self.gfx().map(|g| g.sph.clip_distances_out()).unwrap_or(8),
                    None => 8,
                }
                .max(i + 1);
                self.cap(Capability::ClipDistance);
                let nc = self.u32c(n);
                let at = self.arr(f32t, nc);
                let var = bvar(self, BuiltIn::ClipDistance, at, arr_in);
                Place::Var {
                    var,
                    comp: Some(i),
                    ct: CompType::Float,
                    arrayed,
                }
            }
            0x2e0 | 0x2e4 if st == Stage::Fragment => {
                let v2 = self.vec_ty(f32t, 2);
                let var = self.builtin_var(false, BuiltIn::PointCoord, v2, None, false);
                Place::Var {
                    var,
                    comp: Some((addr - 0x2e0) / 4),
                    ct: CompType::Float,
                    arrayed: false,
                }
            }
            0x2f0 | 0x2f4 if st == Stage::TessEval => {
                let v3 = self.vec_ty(f32t, 3);
                let var = self.builtin_var(false, BuiltIn::TessCoord, v3, None, false);
                Place::Var {
                    var,
                    comp: Some((addr - 0x2f0) / 4),
                    ct: CompType::Float,
                    arrayed: false,
                }
            }
            0x2f8 | 0x2fc if st == Stage::Vertex && !out => {
                let bi = if addr == 0x2f8 {
                    BuiltIn::InstanceIndex
                } else {
                    BuiltIn::VertexIndex
                };
                let var = self.builtin_var(false, bi, i32t, None, false);
                Place::Var {
                    var,
                    comp: None,
                    ct: CompType::Sint,
                    arrayed: false,
                }
            }
            0x3fc if st == Stage::Fragment => Place::FrontFacing,
            0x2f8 | 0x2fc => Place::Const(0),
            _ => return Err(self.attr_err(addr, "is outside the known attribute space")),
        })
    }

    fn place_ptr(&mut self, p: Place, vtx: Option<Word>) -> Result<(Word, CompType), Error> {
        if let Place::Record { word, buf } = p {
            return Ok((self.record_place_ptr(word, buf, vtx), CompType::Uint));
        }
        let Place::Var {
            var,
            comp,
            ct,
            arrayed,
        } = p
        else {
            return Err(Error::Unsupported("not a variable".into()));
        };
        // The vertex and component indices (no allocation).
        let (mut idx, mut n) = ([0; 2], 0);
        if arrayed {
            idx[n] = match vtx {
                Some(v) => v,
                None => self.u32c(0),
            };
            n += 1;
        }
        if let Some(c) = comp {
            idx[n] = self.u32c(c);
            n += 1;
        }
        if n == 0 {
            return Ok((var, ct));
        }
        let sc = self.var_class(var);
        let s = self.scalar_of(ct);
        let pty = self.ptr(sc, s);
        let p = berr(self.b.access_chain(pty, None, var, &idx[..n]))?;
        Ok((p, ct))
    }

    fn var_class(&self, var: Word) -> StorageClass {
        self.b.storage_class_of(var).unwrap_or(StorageClass::Input)
    }

    fn bits_of(&mut self, ct: CompType, v: Word) -> Word {
        let u = self.ty(Type::U32);
        match ct {
            CompType::Uint => v,
            _ => self.op(spirv::Op::Bitcast, u, &[v]),
        }
    }

    fn typed_of(&mut self, ct: CompType, v: Word) -> Word {
        match ct {
            CompType::Uint => v,
            _ => {
                let t = self.scalar_of(ct);
                self.op(spirv::Op::Bitcast, t, &[v])
            }
        }
    }

    /// Stores the 32 bits `x` to a variable or record place (other places take nothing).
    pub(crate) fn store_place(
        &mut self,
        p: Place,
        vtx: Option<Word>,
        x: Word,
    ) -> Result<(), Error> {
        if let Place::Var { .. } | Place::Record { .. } = p {
            let (ptr, ct) = self.place_ptr(p, vtx)?;
            let y = self.typed_of(ct, x);
            self.store(ptr, y);
        }
        Ok(())
    }

    fn load_place(&mut self, p: Place, vtx: Option<Word>) -> Result<Word, Error> {
        match p {
            Place::Const(c) => Ok(self.u32c(c)),
            Place::Id(w) => Ok(w),
            Place::FrontFacing => {
                let bo = self.ty(Type::Bool);
                let var = self.builtin_var(false, BuiltIn::FrontFacing, bo, None, false);
                let ff = self.load(Type::Bool, var);
                let ones = self.u32c(u32::MAX);
                let zero = self.u32c(0);
                Ok(self.select(Type::U32, ff, ones, zero))
            }
            _ => {
                let (ptr, ct) = self.place_ptr(p, vtx)?;
                let t = self.scalar_of(ct);
                let v = berr(self.b.load_plain(t, ptr))?;
                // Known, so that the bits cast back to the load's type are the load.
                self.rtys.insert(v, t);
                Ok(self.bits_of(ct, v))
            }
        }
    }

    /// Emits a graphics operation; returns its result id (0 for none).
    pub(crate) fn gfx_op(&mut self, f: &Function, v: Value, inst: &Inst) -> Result<Word, Error> {
        let arg = |k: usize| inst.args[k];
        let val = |e: &E, k: usize| {
            let a = inst.args[k];
            if a.is_some() {
                Some(e.vals[a.index()])
            } else {
                None
            }
        };
        let const_addr = |e: &E, k: usize| -> Option<u32> {
            let _ = e;
            f.const_of(arg(k)).map(|c| c as u32)
        };
        let _ = v;
        Ok(match inst.op {
            Op::AttrLoad { output, patch } => {
                let vtx = val(self, 1);
                match const_addr(self, 0) {
                    Some(a) => {
                        let p = self.place(a, output, patch)?;
                        self.load_place(p, vtx)?
                    }
                    None => self.dyn_load(f, inst, output, patch, vtx, false)?,
                }
            }
            Op::AttrStore { patch } => {
                let Some(a) = const_addr(self, 0) else {
                    return Err(self.attr_err(0, "stored at a run-time address"));
                };
                let p = self.place(a, true, patch)?;
                let vtx = if self.st() == Stage::TessControl && !patch {
                    Some(self.invocation_id())
                } else {
                    None
                };
                let x = self.vals[arg(1).index()];
                self.store_place(p, vtx, x)?;
                if patch && a < 0x18 && self.form() == Form::Lowered(Pass::TessControlKernel) {
                    self.store_factor(a, x)?;
                }
                0
            }
            Op::Interp(mode, sample) => match const_addr(self, 0) {
                Some(a) => {
                    let off = if sample == IpaSample::Offset {
                        val(self, 2)
                    } else {
                        None
                    };
                    self.interp_at(a, mode, sample, off)?
                }
                None => self.dyn_load(f, inst, false, false, None, true)?,
            },
            Op::FragOut(k) => {
                let x = self.vals[arg(0).index()];
                self.frag_out(k, x)?;
                0
            }
            Op::EmitVertex | Op::EndPrimitive => {
                // Stream 0 only: the others feed transform feedback, not the rasterizer.
                let stream = inst.args.first().copied().filter(|a| a.is_some());
                let known = stream.map_or(Some(0), |s| f.const_of(s));
                if known.is_some_and(|s| s != 0) {
                    return Ok(0);
                }
                let emit = inst.op == Op::EmitVertex;
                let body = |e: &mut E| -> Result<(), Error> {
                    match (emit, e.form() == Form::Lowered(Pass::GeometryKernel)) {
                        (true, true) => e.kernel_emit()?,
                        (false, true) => e.kernel_end_primitive(),
                        (true, false) => berr(e.b.emit_vertex())?,
                        (false, false) => berr(e.b.end_primitive())?,
                    }
                    Ok(())
                };
                match (known, stream) {
                    (None, Some(s)) => {
                        let bo = self.ty(Type::Bool);
                        let z = self.u32c(0);
                        let sv = self.vals[s.index()];
                        let zero = self.op(spirv::Op::IEqual, bo, &[sv, z]);
                        self.if_then(zero, body)?;
                    }
                    _ => body(self)?,
                }
                0
            }
            Op::Demote => {
                self.demote();
                0
            }
            Op::GfxSys(s) => match s {
                GSys::InvocationId => self.invocation_id(),
                GSys::YDirection => self.u32c(0x3f80_0000),
                GSys::HelperInvocation => {
                    let bo = self.ty(Type::Bool);
                    let var = self.builtin_var(false, BuiltIn::HelperInvocation, bo, None, false);
                    let h = self.load(Type::Bool, var);
                    let one = self.u32c(1);
                    let zero = self.u32c(0);
                    self.select(Type::U32, h, one, zero)
                }
                GSys::PrimType => {
                    if let Some(x) = self.tess_prim_type() {
                        x
                    } else if self.st() == Stage::TessControl || self.st() == Stage::TessEval {
                        let i = self.i32t();
                        let var = self.builtin_var(false, BuiltIn::PatchVertices, i, None, false);
                        let x = berr(self.b.load_plain(i, var))?;
                        let u = self.bits_of(CompType::Sint, x);
                        let ty = self.ty(Type::U32);
                        let eight = self.u32c(8);
                        self.op(spirv::Op::ShiftLeftLogical, ty, &[u, eight])
                    } else {
                        self.u32c(0)
                    }
                }
                GSys::SampleId => {
                    self.cap(Capability::SampleRateShading);
                    let i = self.i32t();
                    let var = self.builtin_var(false, BuiltIn::SampleId, i, None, false);
                    let x = berr(self.b.load_plain(i, var))?;
                    self.bits_of(CompType::Sint, x)
                }
                GSys::SampleMaskIn => {
                    let i = self.i32t();
                    let one = self.u32c(1);
                    let at = self.arr(i, one);
                    let var = self.builtin_var(false, BuiltIn::SampleMask, at, None, false);
                    let pi = self.ptr(StorageClass::Input, i);
                    let z = self.u32c(0);
                    let p = berr(self.b.access_chain(pi, None, var, &[z]))?;
                    let x = berr(self.b.load_plain(i, p))?;
                    self.bits_of(CompType::Sint, x)
                }
            },
            Op::Tuple => 0,
            _ => return self.tex_op(f, inst),
        })
    }

    /// An attribute read at a run-time address: a select chain over the declared generic
    /// inputs (the hardware's indexed `a[]` reads, e.g. `IPA.IDX`).
    fn dyn_load(
        &mut self,
        _f: &Function,
        inst: &Inst,
        output: bool,
        patch: bool,
        vtx: Option<Word>,
        interp: bool,
    ) -> Result<Word, Error> {
        let addr = self.vals[inst.args[0].index()];
        let gens: Vec<u32> = match self.gfx() {
            Some(g) if !output => (0..32)
                .filter(|n| g.sph.input_generics() >> n & 1 == 1)
                .collect(),
            Some(g) => (0..32)
                .filter(|n| g.sph.output_generics() >> n & 1 == 1)
                .collect(),
            None => Vec::new(),
        };
        let bo = self.ty(Type::Bool);
        let mut acc = self.u32c(0);
        for n in gens {
            for c in 0..4 {
                let a = 0x80 + 16 * n + 4 * c;
                let x = if interp {
                    self.interp(a, IpaMode::Pass, IpaSample::Default)?
                } else {
                    let p = self.place(a, output, patch)?;
                    self.load_place(p, vtx)?
                };
                let ac = self.u32c(a);
                let eq = self.op(spirv::Op::IEqual, bo, &[addr, ac]);
                acc = self.select(Type::U32, eq, x, acc);
            }
        }
        Ok(acc)
    }

    fn invocation_id(&mut self) -> Word {
        if matches!(
            self.form(),
            Form::Lowered(Pass::GeometryKernel) | Form::Lowered(Pass::TessControlKernel)
        ) {
            return self.kernel_invocation();
        }
        let i = self.i32t();
        let var = self.builtin_var(false, BuiltIn::InvocationId, i, None, false);
        let x = self.b.load_plain(i, var).expect("block");
        self.bits_of(CompType::Sint, x)
    }

    /// `gl_FragCoord.w`, read once in the entry block (every perspective `IPA` multiplies by
    /// it).
    fn frag_w(&mut self) -> Word {
        if let Some(w) = self.gx.frag_w {
            return w;
        }
        let f32t = self.ty(Type::F32);
        let v4 = self.vec_ty(f32t, 4);
        let var = self.builtin_var(false, BuiltIn::FragCoord, v4, None, false);
        let pf = self.ptr(StorageClass::Input, f32t);
        let three = self.u32c(3);
        let mut code = std::mem::take(&mut self.entry_code);
        let p = (self.b).entry_instruction(&mut code, spirv::Op::AccessChain, pf, &[var, three]);
        let w = (self.b).entry_instruction(&mut code, spirv::Op::Load, f32t, &[p]);
        self.entry_code = code;
        self.rtys.insert(w, f32t);
        self.gx.frag_w = Some(w);
        w
    }

    /// IPA: the hardware's value before the multiplier (a perspective input read in pass or
    /// multiply mode is value × 1/w, i.e. × gl_FragCoord.w).
    fn interp(&mut self, addr: u32, mode: IpaMode, sample: IpaSample) -> Result<Word, Error> {
        self.interp_at(addr, mode, sample, None)
    }

    /// The offset operand of `IPA.OFFSET` as a `vec2` in pixels: the register packs x in
    /// bits 0-15 and y in bits 16-31, each signed fixed point with 12 fraction bits (what
    /// uam / nouveau write: clamp to [-0.5, 0.4375], × 4096, F2I.S32, BFI 0x1010).
    fn ipa_offset(&mut self, off: Word) -> Word {
        let i = self.i32t();
        let f32t = self.ty(Type::F32);
        let v = self.typed_of(CompType::Sint, off);
        let sixteen = self.u32c(16);
        let lo = self.op(spirv::Op::ShiftLeftLogical, i, &[v, sixteen]);
        let xi = self.op(spirv::Op::ShiftRightArithmetic, i, &[lo, sixteen]);
        let yi = self.op(spirv::Op::ShiftRightArithmetic, i, &[v, sixteen]);
        let scale = self.c(Type::F32, (1.0f32 / 4096.0).to_bits() as u64);
        let xf = self.op(spirv::Op::ConvertSToF, f32t, &[xi]);
        let yf = self.op(spirv::Op::ConvertSToF, f32t, &[yi]);
        let x = self.fop(spirv::Op::FMul, f32t, &[xf, scale]);
        let y = self.fop(spirv::Op::FMul, f32t, &[yf, scale]);
        let v2 = self.vec_ty(f32t, 2);
        self.op(spirv::Op::CompositeConstruct, v2, &[x, y])
    }

    /// IPA with the offset register of `.OFFSET` (`off`). A float generic input at an offset
    /// is `InterpolateAtOffset` (perspective-correct, so it gets the same × gl_FragCoord.w as
    /// a plain read); other addresses (e.g. a\[0x7c\], 1/w, whose reciprocal the code
    /// multiplies by) are read at the pixel centre, so value × w × 1/w cancels exactly.
    fn interp_at(
        &mut self,
        addr: u32,
        mode: IpaMode,
        sample: IpaSample,
        off: Option<Word>,
    ) -> Result<Word, Error> {
        let p = self.place(addr, false, false)?;
        let generic = (0x80..0x280).contains(&addr);
        let at = sample == IpaSample::Centroid || (sample == IpaSample::Offset && off.is_some());
        let x = if generic && at {
            let (ptr, ct) = self.place_ptr(p, None)?;
            if ct == CompType::Float {
                self.cap(Capability::InterpolationFunction);
                let f32t = self.ty(Type::F32);
                let r = match off {
                    Some(o) => {
                        let o2 = self.ipa_offset(o);
                        self.ext(f32t, 78, &[ptr, o2])
                    }
                    None => self.ext(f32t, 76, &[ptr]),
                };
                self.bits_of(ct, r)
            } else {
                let t = self.scalar_of(ct);
                let r = berr(self.b.load_plain(t, ptr))?;
                self.bits_of(ct, r)
            }
        } else {
            self.load_place(p, None)?
        };
        let n = ((addr.wrapping_sub(0x80)) / 16) as usize;
        let persp = generic
            && self
                .gfx()
                .map(|g| {
                    g.sph.interp_of(n) == Interp::Perspective && g.inputs[n % 32] == CompType::Float
                })
                .unwrap_or(false);
        if persp && mode != IpaMode::Constant {
            let f32t = self.ty(Type::F32);
            let xf = self.op(spirv::Op::Bitcast, f32t, &[x]);
            let w = self.frag_w();
            let r = self.fop(spirv::Op::FMul, f32t, &[xf, w]);
            let u = self.ty(Type::U32);
            return Ok(self.op(spirv::Op::Bitcast, u, &[r]));
        }
        Ok(x)
    }

    fn frag_out(&mut self, k: u8, x: Word) -> Result<(), Error> {
        match k {
            0..=31 => {
                let t = (k / 4) as u32;
                let (var, ct) = self.generic_var(1, t);
                let p = Place::Var {
                    var,
                    comp: Some((k % 4) as u32),
                    ct,
                    arrayed: false,
                };
                let (ptr, ct) = self.place_ptr(p, None)?;
                let y = self.typed_of(ct, x);
                self.store(ptr, y);
            }
            32 => {
                let i = self.i32t();
                let one = self.u32c(1);
                let at = self.arr(i, one);
                let var = self.builtin_var(true, BuiltIn::SampleMask, at, None, false);
                let pi = self.ptr(StorageClass::Output, i);
                let z = self.u32c(0);
                let p = berr(self.b.access_chain(pi, None, var, &[z]))?;
                let y = self.typed_of(CompType::Sint, x);
                self.store(p, y);
            }
            _ => {
                let f32t = self.ty(Type::F32);
                let var = self.builtin_var(true, BuiltIn::FragDepth, f32t, None, false);
                self.gx.depth_replacing = true;
                let y = self.typed_of(CompType::Float, x);
                self.store(var, y);
            }
        }
        Ok(())
    }

    /// `OpDemoteToHelperInvocation`: the invocation stops writing (KIL).
    pub(crate) fn demote(&mut self) {
        self.cap(Capability::DemoteToHelperInvocation);
        self.gx.exts.insert("SPV_EXT_demote_to_helper_invocation");
        let inst =
            rspirv::dr::Instruction::new(spirv::Op::DemoteToHelperInvocation, None, None, vec![]);
        self.b
            .insert_into_block(rspirv::dr::InsertPoint::End, inst)
            .expect("block");
    }

    /// The outputs the SPH declares, each with its pairing-rule start value (0: zero, 1: one
    /// in the component's type, 2: 1.0): (0,0,0,1) for vectors, 0 for clip distances, 1.0 for
    /// point size.
    pub(crate) fn sph_outputs(&self) -> Vec<(u32, u32)> {
        let Some(g) = self.gfx() else {
            return Vec::new();
        };
        let mut addrs: Vec<(u32, u32)> = Vec::new();
        let gens = g.sph.output_generics();
        for n in 0..32 {
            if gens >> n & 1 == 1 {
                for c in 0..4 {
                    addrs.push((0x80 + 16 * n + 4 * c, if c == 3 { 1 } else { 0 }));
                }
            }
        }
        if g.sph.omap_sys_ab >> 28 != 0 {
            for c in 0..4 {
                addrs.push((0x70 + 4 * c, if c == 3 { 1 } else { 0 }));
            }
        }
        if g.sph.omap_sys_ab >> 27 & 1 == 1 {
            addrs.push((0x6c, 2));
        }
        for i in 0..g.sph.clip_distances_out() {
            addrs.push((0x2c0 + 4 * i, 0));
        }
        addrs
    }

    /// Declares the SPH's outputs and gives them their pairing-rule start values
    /// ([`E::sph_outputs`]). Runs first in main; a geometry kernel's prologue comes before.
    pub(crate) fn gfx_prologue(&mut self, f: &Function) -> Result<(), Error> {
        let Some(g) = self.gfx().cloned() else {
            return Ok(());
        };
        if self.st() == Stage::Geometry || self.form() == Form::Lowered(Pass::GeometryDraw) {
            let (p, src) = geometry_input(f, g.gs_input)
                .map_err(|e| Error::Unsupported(format!("shader {}: geometry: {e}", g.key)))?;
            self.gx.gs_in = p.vertices();
            self.gx.gs_input = Some((p, src));
        }
        if self.form() == Form::Lowered(Pass::GeometryKernel) {
            self.kernel_prologue(f)?;
        }
        self.tess_prologue()?;
        // The draw's body writes every output the geometry shader writes (`emit/lower.rs`).
        if self.st() == Stage::Fragment
            || self.st() == Stage::TessControl
            || self.form() == Form::Lowered(Pass::GeometryDraw)
        {
            return Ok(());
        }
        for (a, one) in self.sph_outputs() {
            let p = self.place(a, true, false)?;
            let ct = match p {
                Place::Var { ct, .. } => ct,
                Place::Record { .. } => self.out_type(a),
                _ => continue,
            };
            let bits = match (one, ct) {
                (0, _) => 0,
                (_, CompType::Float) => 0x3f80_0000,
                (2, _) => 0x3f80_0000,
                _ => 1,
            };
            let c = self.u32c(bits);
            self.store_place(p, None, c)?;
        }
        Ok(())
    }

    /// Declares the capabilities and extensions the graphics code needed.
    pub(crate) fn gfx_caps(&mut self) {
        match self.st() {
            Stage::Geometry if self.form() == Form::Lowered(Pass::GeometryKernel) => {}
            Stage::TessControl if self.form() == Form::Lowered(Pass::TessControlKernel) => {}
            Stage::Geometry => self.cap(Capability::Geometry),
            Stage::TessControl | Stage::TessEval => self.cap(Capability::Tessellation),
            _ => {}
        }
        // Every capability `cap` recorded (a set of numbers, so the order is deterministic).
        for &c in &self.gx.caps.clone() {
            if let Some(cap) = Capability::from_u32(c) {
                self.b.capability(cap);
            }
        }
        for x in self.gx.exts.clone() {
            self.b.extension(x);
        }
    }

    /// The execution model and modes of a graphics entry point.
    pub(crate) fn gfx_entry(&mut self, main: Word) -> spirv::ExecutionModel {
        use spirv::ExecutionMode as M;
        let g = self.gfx().cloned();
        let sph = g.as_ref().map(|g| g.sph.clone());
        match self.st() {
            Stage::Vertex => spirv::ExecutionModel::Vertex,
            Stage::Fragment => {
                self.b.execution_mode(main, M::OriginUpperLeft, []);
                if self.gx.depth_replacing {
                    self.b.execution_mode(main, M::DepthReplacing, []);
                }
                if g.as_ref().map(|g| g.early_fragment_tests).unwrap_or(false) {
                    self.b.execution_mode(main, M::EarlyFragmentTests, []);
                }
                spirv::ExecutionModel::Fragment
            }
            Stage::Geometry => {
                self.cap(Capability::Geometry);
                let (inv0, topo, maxv) = sph
                    .map(|s| {
                        (
                            s.threads_per_input_primitive,
                            s.output_topology,
                            s.max_output_vertex_count,
                        )
                    })
                    .unwrap_or((1, 7, 1));
                let inv = inv0.max(1);
                self.b.execution_mode(main, M::Invocations, [inv]);
                let input = match self.gx.gs_input.map_or(GsInput::Triangles, |g| g.0) {
                    GsInput::Points => M::InputPoints,
                    GsInput::Lines => M::InputLines,
                    GsInput::LinesAdjacency => M::InputLinesAdjacency,
                    GsInput::Triangles => M::Triangles,
                    GsInput::TrianglesAdjacency => M::InputTrianglesAdjacency,
                };
                self.b.execution_mode(main, input, []);
                let out = match topo {
                    1 => M::OutputPoints,
                    6 => M::OutputLineStrip,
                    _ => M::OutputTriangleStrip,
                };
                self.b.execution_mode(main, out, []);
                self.b
                    .execution_mode(main, M::OutputVertices, [maxv.max(1)]);
                spirv::ExecutionModel::Geometry
            }
            Stage::TessControl => {
                self.cap(Capability::Tessellation);
                let n = sph
                    .map(|s| s.threads_per_input_primitive.max(1))
                    .unwrap_or(1);
                self.b.execution_mode(main, M::OutputVertices, [n]);
                spirv::ExecutionModel::TessellationControl
            }
            Stage::TessEval => {
                self.cap(Capability::Tessellation);
                let p = g.as_ref().map(|g| g.tess_param).unwrap_or(0x201);
                let dom = match p & 0xf {
                    0 => M::Isolines,
                    2 => M::Quads,
                    _ => M::Triangles,
                };
                let sp = match (p >> 4) & 0xf {
                    1 => M::SpacingFractionalOdd,
                    2 => M::SpacingFractionalEven,
                    _ => M::SpacingEqual,
                };
                self.b.execution_mode(main, dom, []);
                self.b.execution_mode(main, sp, []);
                match (p >> 8) & 0xf {
                    0 => self.b.execution_mode(main, M::PointMode, []),
                    3 => self.b.execution_mode(main, M::VertexOrderCw, []),
                    _ => self.b.execution_mode(main, M::VertexOrderCcw, []),
                }
                spirv::ExecutionModel::TessellationEvaluation
            }
            Stage::Compute => spirv::ExecutionModel::GLCompute,
        }
    }
}

/// Whether [`E::gfx_op`] emits operation `op` (the graphics and image operations).
#[inline]
pub(crate) fn is_gfx_op(op: Op) -> bool {
    matches!(
        op,
        Op::AttrLoad { .. }
            | Op::AttrStore { .. }
            | Op::Interp(..)
            | Op::FragOut(_)
            | Op::EmitVertex
            | Op::EndPrimitive
            | Op::Demote
            | Op::GfxSys(_)
            | Op::Tuple
            | Op::Tex(_)
            | Op::Extract(_)
            | Op::ImageLoad(_)
            | Op::ImageStore(_)
            | Op::ImageAtomic(..)
    )
}
