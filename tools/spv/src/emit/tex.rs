//! Textures (combined image samplers at binding 64 + slot) and storage images (binding
//! 128 + slot): sampling, fetch, gather, queries, derivatives, image load/store/atomics.

use super::gfx::TexDecl;
use super::slots::{alias_binding, ImgDecl, Shape};
use super::{berr, E};
use crate::Error;
use dmsh_ir::gfx::{ImgDesc, TexDesc, TexDim, TexKind, TexLod};
use dmsh_ir::lift::{CompType, ImageFmt as LFmt};
use dmsh_ir::{AtomOp, Function, Inst, Op, Stage, Type};
use rspirv::dr::{InsertPoint, Instruction, Operand};
use rspirv::spirv::{
    self, Capability, Decoration, Dim, ImageFormat, ImageOperands, StorageClass, Word,
};

fn sdim(d: TexDim) -> Dim {
    match d {
        TexDim::D1 => Dim::Dim1D,
        TexDim::D2 => Dim::Dim2D,
        TexDim::D3 => Dim::Dim3D,
        TexDim::Cube => Dim::DimCube,
        TexDim::Buffer => Dim::DimBuffer,
    }
}

impl E {
    fn tex_ct(&self, slot: u16) -> CompType {
        if slot == dmsh_ir::TEX_DYN {
            return CompType::Float;
        }
        self.gfxcfg
            .as_ref()
            .map(|g| g.textures[slot as usize % 32])
            .unwrap_or_default()
    }

    /// The combined image-sampler variable of a slot for one image shape; returns
    /// (variable, sampled-image type, image type).
    fn tex_var(&mut self, d: &TexDesc) -> (Word, Word, Word) {
        let ct = if d.shadow {
            CompType::Float
        } else {
            self.tex_ct(d.slot)
        };
        let key = (d.slot, d.dyn_count, d.dim, d.array, d.shadow, d.ms, ct);
        if let Some(&v) = self.tex_vars.get(&key) {
            return v;
        }
        let shape = Shape {
            dim: d.dim,
            array: d.array,
            shadow: d.shadow,
            ms: d.ms,
        };
        let alias = self.slots.tex_alias(d.slot, d.dyn_count, shape);
        match (d.dim, d.array) {
            (TexDim::D1, _) => self.cap(Capability::Sampled1D),
            (TexDim::Buffer, _) => self.cap(Capability::SampledBuffer),
            (TexDim::Cube, true) => self.cap(Capability::SampledCubeArray),
            _ => {}
        }
        let st = self.scalar_of_ct(ct);
        let it = self.b.type_image(
            st,
            sdim(d.dim),
            d.shadow as u32,
            d.array as u32,
            d.ms as u32,
            1,
            ImageFormat::Unknown,
            None,
        );
        let sit = self.b.type_sampled_image(it);
        if d.slot == dmsh_ir::TEX_DYN {
            // tex_dyn_slots: an array of separate textures (binding 64 + TEX_DYN); the samplers
            // are their own array (tex_dyn_sampler).
            self.cap(Capability::SampledImageArrayDynamicIndexing);
            let n = self.u32c(d.dyn_count.max(1) as u32);
            let at = self.arr(it, n);
            let pty = self.ptr(StorageClass::UniformConstant, at);
            let var = self.global_var(pty, StorageClass::UniformConstant, None);
            self.interface.push(var);
            self.b
                .decorate(var, Decoration::DescriptorSet, [Operand::LiteralBit32(0)]);
            self.b.decorate(
                var,
                Decoration::Binding,
                [Operand::LiteralBit32(64 + d.slot as u32)],
            );
            self.tex_vars.insert(key, (var, sit, it));
            let decl = TexDecl {
                var,
                kind: "tex_dyn",
                view: None,
            };
            self.gx.textures.insert((d.slot, 0), decl);
            return (var, sit, it);
        }
        let separate = d.dyn_count == 0
            && self
                .gx
                .sep_slots
                .as_ref()
                .is_some_and(|s| s.contains(&d.slot));
        let vt = if d.dyn_count > 0 {
            self.cap(Capability::SampledImageArrayDynamicIndexing);
            let n = self.u32c(d.dyn_count as u32);
            self.arr(sit, n)
        } else if separate {
            // A texture used with separate samplers: an image of its own (OpTypeImage),
            // combined with the sampler at each use (tex_load).
            it
        } else {
            sit
        };
        let pty = self.ptr(StorageClass::UniformConstant, vt);
        let var = self.global_var(pty, StorageClass::UniformConstant, None);
        self.interface.push(var);
        self.b
            .decorate(var, Decoration::DescriptorSet, [Operand::LiteralBit32(0)]);
        self.b.decorate(
            var,
            Decoration::Binding,
            [Operand::LiteralBit32(alias_binding(
                64 + d.slot as u32,
                alias,
            ))],
        );
        if separate {
            self.gx.sep_vars.insert(var);
        }
        self.tex_vars.insert(key, (var, sit, it));
        let decl = TexDecl {
            var,
            kind: "texture",
            view: (alias > 0).then(|| shape.view()),
        };
        self.gx.textures.insert((d.slot, alias), decl);
        (var, sit, it)
    }

    /// Separate sampler slot n (`nvn_samp_base`): an `OpTypeSampler` at binding 96 + n.
    fn sep_sampler(&mut self, n: u16) -> (Word, Word) {
        let st = self.b.type_sampler();
        if let Some(&v) = self.gx.samplers.get(&n) {
            return (v, st);
        }
        let pty = self.ptr(StorageClass::UniformConstant, st);
        let var = self.global_var(pty, StorageClass::UniformConstant, None);
        self.interface.push(var);
        self.b
            .decorate(var, Decoration::DescriptorSet, [Operand::LiteralBit32(0)]);
        self.b.decorate(
            var,
            Decoration::Binding,
            [Operand::LiteralBit32(96 + n as u32)],
        );
        self.gx.samplers.insert(n, var);
        (var, st)
    }

    /// The sampled image of a single texture variable: loaded as is (combined), or its image
    /// combined with the separate sampler `d.samp` names (`OpSampledImage`).
    fn tex_load(&mut self, d: &TexDesc, var: Word, sit: Word, it: Word) -> Result<Word, Error> {
        if !self.gx.sep_vars.contains(&var) {
            return Ok(self.load_id(sit, var));
        }
        if d.samp & dmsh_ir::SAMP_SEP == 0 {
            return Err(Error::Unsupported(format!(
                "texture slot {:#x} is used with separate samplers and with another sampler \
                 source",
                d.slot
            )));
        }
        let img = self.load_id(it, var);
        let (svar, st) = self.sep_sampler(d.samp & 0xfff);
        let smp = self.load_id(st, svar);
        Ok(self.op(spirv::Op::SampledImage, sit, &[img, smp]))
    }

    /// The image of a single texture variable (size and sample-count queries).
    fn tex_image(&mut self, var: Word, sit: Word, it: Word) -> Word {
        if self.gx.sep_vars.contains(&var) {
            return self.load_id(it, var);
        }
        let si = self.load_id(sit, var);
        self.op(spirv::Op::Image, it, &[si])
    }

    /// The `tex_dyn_slots` sampler array (binding 96 + TEX_DYN) of `n` samplers.
    fn tex_dyn_sampler(&mut self, n: u8) -> (Word, Word) {
        let st = self.b.type_sampler();
        let key = (
            dmsh_ir::TEX_DYN | 1,
            n,
            TexDim::D1,
            false,
            false,
            false,
            CompType::Float,
        );
        if let Some(&(v, _, _)) = self.tex_vars.get(&key) {
            return (v, st);
        }
        let nn = self.u32c(n.max(1) as u32);
        let at = self.arr(st, nn);
        let pty = self.ptr(StorageClass::UniformConstant, at);
        let var = self.global_var(pty, StorageClass::UniformConstant, None);
        self.interface.push(var);
        self.b
            .decorate(var, Decoration::DescriptorSet, [Operand::LiteralBit32(0)]);
        self.b.decorate(
            var,
            Decoration::Binding,
            [Operand::LiteralBit32(96 + dmsh_ir::TEX_DYN as u32)],
        );
        self.tex_vars.insert(key, (var, st, 0));
        (var, st)
    }

    /// A `tex_dyn_slots` sampled image: texture element (handle & 0xfffff) with sampler
    /// element (handle >> 20), each clamped to the last element.
    fn tex_dyn_sampled(&mut self, d: &TexDesc, var: Word, sit: Word, it: Word, h: Word) -> Word {
        let u = self.ty(Type::U32);
        let sh = self.u32c(20);
        let img = self.tex_dyn_image(d.dyn_count, var, it, h);
        let sid = self.op(spirv::Op::ShiftRightLogical, u, &[h, sh]);
        let sid = self.clamp_last(sid, d.dyn_count);
        let (svar, st) = self.tex_dyn_sampler(d.dyn_count);
        let ps = self.ptr(StorageClass::UniformConstant, st);
        let p = self.op(spirv::Op::AccessChain, ps, &[svar, sid]);
        let smp = self.load_id(st, p);
        self.op(spirv::Op::SampledImage, sit, &[img, smp])
    }

    /// min(x, n − 1) (unsigned).
    fn clamp_last(&mut self, x: Word, n: u8) -> Word {
        let u = self.ty(Type::U32);
        let bt = self.ty(Type::Bool);
        let last = self.u32c(n.max(1) as u32 - 1);
        let lt = self.op(spirv::Op::ULessThan, bt, &[x, last]);
        self.op(spirv::Op::Select, u, &[lt, x, last])
    }

    /// Texture element (handle & 0xfffff, clamped to the last) of a `tex_dyn` array.
    fn tex_dyn_image(&mut self, n: u8, var: Word, it: Word, h: Word) -> Word {
        let u = self.ty(Type::U32);
        let mask = self.u32c(0xf_ffff);
        let tid = self.op(spirv::Op::BitwiseAnd, u, &[h, mask]);
        let tid = self.clamp_last(tid, n);
        let pi = self.ptr(StorageClass::UniformConstant, it);
        let p = self.op(spirv::Op::AccessChain, pi, &[var, tid]);
        self.load_id(it, p)
    }

    fn scalar_of_ct(&mut self, ct: CompType) -> Word {
        match ct {
            CompType::Float => self.ty(Type::F32),
            CompType::Uint => self.ty(Type::U32),
            CompType::Sint => self.sint(32),
        }
    }

    fn tuple_vals(&self, f: &Function, t: dmsh_ir::Value) -> [Word; 4] {
        let inst = f.inst(t);
        let mut r = [0; 4];
        for (k, a) in inst.args.iter().enumerate() {
            if a.is_some() {
                r[k] = self.vals[a.index()];
            }
        }
        r
    }

    /// The constants of a tuple's members, looking through bitcasts and warp shuffles of a
    /// constant (uam's per-lane loops shuffle uniform offsets).
    fn tuple_consts(f: &Function, t: dmsh_ir::Value) -> [Option<u32>; 4] {
        let inst = f.inst(t);
        let mut r = [None; 4];
        for (k, a) in inst.args.iter().enumerate() {
            if a.is_some() {
                let mut v = *a;
                for _ in 0..8 {
                    match f.inst(v).op {
                        Op::Bitcast | Op::Shfl(_) => v = f.inst(v).args[0],
                        _ => break,
                    }
                }
                r[k] = f.const_of(v).map(|c| c as u32);
            }
        }
        r
    }

    fn vec_of(&mut self, elem: Word, comps: &[Word]) -> Word {
        if comps.len() == 1 {
            return comps[0];
        }
        let vt = self.vec_ty(elem, comps.len() as u32);
        berr(self.b.composite_construct(vt, None, comps.to_vec())).expect("block")
    }

    /// Float coordinates (x.. then the layer, converted from its integer register).
    fn fcoords(&mut self, d: &TexDesc, c: [Word; 4]) -> Word {
        let f32t = self.ty(Type::F32);
        let mut v: Vec<Word> = (0..d.dim.coords())
            .map(|k| self.op(spirv::Op::Bitcast, f32t, &[c[k]]))
            .collect();
        if d.array {
            let l = self.op(spirv::Op::ConvertUToF, f32t, &[c[3]]);
            v.push(l);
        }
        self.vec_of(f32t, &v)
    }

    fn icoords(&mut self, n: usize, array: bool, c: [Word; 4]) -> Word {
        let i32t = self.sint(32);
        let mut v: Vec<Word> = (0..n)
            .map(|k| self.op(spirv::Op::Bitcast, i32t, &[c[k]]))
            .collect();
        if array {
            let l = self.op(spirv::Op::Bitcast, i32t, &[c[3]]);
            v.push(l);
        }
        self.vec_of(i32t, &v)
    }

    /// TLD4.PTP's four per-texel offsets (signed bytes x, y of each pair, from the two
    /// constant registers `lo`, `hi`) as a `ConstOffsets` array of four `ivec2`.
    fn ptp_offsets(&mut self, i32t: Word, lo: Option<u32>, hi: Option<u32>) -> Result<Word, Error> {
        let (Some(lo), Some(hi)) = (lo, hi) else {
            return Err(Error::Unsupported("TLD4.PTP with run-time offsets".into()));
        };
        let bytes = (lo as u64 | (hi as u64) << 32).to_le_bytes();
        let v2 = self.vec_ty(i32t, 2);
        let pairs: Vec<Word> = (0..4)
            .map(|k| {
                let x = self.cw_signed(i32t, bytes[2 * k] as i8 as i32);
                let y = self.cw_signed(i32t, bytes[2 * k + 1] as i8 as i32);
                self.b.constant_composite(v2, [x, y])
            })
            .collect();
        let four = self.u32c(4);
        let at = self.arr(v2, four);
        Ok(self.b.constant_composite(at, pairs))
    }

    /// Constant offsets as an ivecN constant: 4 signed bits per coordinate (TEX, TLD), or
    /// 6 signed bits in 8-bit fields for gathers.
    fn const_offset(&mut self, n: usize, packed: u32, gather: bool) -> Word {
        let i32t = self.sint(32);
        let comps: Vec<Word> = (0..n)
            .map(|k| {
                let v = if gather {
                    (((packed >> (8 * k)) & 0x3f) as i32) << 26 >> 26
                } else {
                    (((packed >> (4 * k)) & 0xf) as i32) << 28 >> 28
                };
                self.cw_signed(i32t, v)
            })
            .collect();
        if n == 1 {
            return comps[0];
        }
        let vt = self.vec_ty(i32t, n as u32);
        self.b.constant_composite(vt, comps)
    }

    fn cw_signed(&mut self, t: Word, v: i32) -> Word {
        self.b.constant_bit32(t, v as u32)
    }

    fn as_uvec4(&mut self, v: Word, ct: CompType, scalar: bool) -> Word {
        let u = self.ty(Type::U32);
        let uv4 = self.vec_ty(u, 4);
        if scalar {
            let x = if ct == CompType::Uint {
                v
            } else {
                self.op(spirv::Op::Bitcast, u, &[v])
            };
            let z = self.u32c(0);
            let one = self.u32c(0x3f80_0000);
            return berr(self.b.composite_construct(uv4, None, [x, z, z, one])).expect("block");
        }
        if ct == CompType::Uint {
            v
        } else {
            let bits = self.op(spirv::Op::Bitcast, uv4, &[v]);
            // A component's bits are taken from `v` itself (`Op::Extract`), so a cast back to
            // the component's type is that component.
            let sc = self.scalar_of(ct);
            self.gx.bits_of_vec.insert(bits, (v, sc));
            bits
        }
    }

    fn raw(&mut self, op: spirv::Op, ty: Word, ops: Vec<Operand>) -> Word {
        let id = self.b.id();
        let inst = Instruction::new(op, Some(ty), Some(id), ops);
        self.b
            .insert_into_block(InsertPoint::End, inst)
            .expect("block");
        id
    }

    pub(crate) fn tex_op(&mut self, f: &Function, inst: &Inst) -> Result<Word, Error> {
        match inst.op {
            Op::Tex(d) => self.tex(f, inst, d),
            Op::Extract(k) => {
                let u = self.ty(Type::U32);
                let v = self.vals[inst.args[0].index()];
                if let Some(&(src, sc)) = self.gx.bits_of_vec.get(&v) {
                    let c = berr(self.b.composite_extract(sc, None, src, &[k as u32]))?;
                    self.rtys.insert(c, sc);
                    return Ok(self.op(spirv::Op::Bitcast, u, &[c]));
                }
                berr(self.b.composite_extract(u, None, v, &[k as u32]))
            }
            Op::ImageLoad(d) | Op::ImageStore(d) | Op::ImageAtomic(d, _) => self.image(f, inst, d),
            _ => Err(Error::Unsupported(format!("{:?}", inst.op))),
        }
    }

    fn tex(&mut self, f: &Function, inst: &Inst, d: TexDesc) -> Result<Word, Error> {
        if self.gx.sep_slots.is_none() {
            // Slots sampled with separate samplers (found by the scan before emission).
            self.gx.sep_slots = Some(self.slots.sep.clone());
        }
        if !matches!(d.kind, TexKind::QuerySize | TexKind::QuerySamples) {
            let prev = *self.gx.tex_samp.entry(d.slot).or_insert(d.samp);
            // Separate samplers may differ per use (each has its own binding).
            let both_sep = prev & d.samp & dmsh_ir::SAMP_SEP != 0;
            if prev != d.samp && !both_sep && !self.gx.samp_conflicts.contains(&d.slot) {
                self.gx.samp_conflicts.push(d.slot);
            }
        }
        let c = self.tuple_vals(f, inst.args[0]);
        let e = self.tuple_vals(f, inst.args[1]);
        let ec = Self::tuple_consts(f, inst.args[1]);
        let f32t = self.ty(Type::F32);
        let u = self.ty(Type::U32);
        let i32t = self.sint(32);
        if d.kind == TexKind::QuerySamples {
            // The sample count of the slot's multisampled declaration; a slot the code only
            // samples without `.MS` is a single-sample texture.
            let z = self.u32c(0);
            let uv4 = self.vec_ty(u, 4);
            let ms = self
                .slots
                .tex_shapes(d.slot, d.dyn_count)
                .iter()
                .find(|s| s.ms)
                .copied();
            let nu = match ms {
                Some(s) => {
                    self.cap(Capability::ImageQuery);
                    let dd = TexDesc {
                        dim: s.dim,
                        array: s.array,
                        shadow: s.shadow,
                        ms: true,
                        kind: TexKind::Sample,
                        ..d
                    };
                    let (var, sit, it) = self.tex_var(&dd);
                    let img = self.tex_image(var, sit, it);
                    let n = self.op(spirv::Op::ImageQuerySamples, i32t, &[img]);
                    self.op(spirv::Op::Bitcast, u, &[n])
                }
                None => self.u32c(1),
            };
            return berr(self.b.composite_construct(uv4, None, [z, z, nu, z]));
        }
        if d.kind == TexKind::QuerySize {
            self.cap(Capability::ImageQuery);
            let uv4 = self.vec_ty(u, 4);
            let size_comps = |s: Shape| match s.dim {
                TexDim::Cube => 2 + s.array as usize,
                _ => s.dim.coords() + s.array as usize,
            };
            if d.ms {
                // An image (TXQ on a surface handle): the slot's declaration.
                let (shape, var, it, _) = self.img_var(d.slot, None);
                let img = self.load_id(it, var);
                let n = size_comps(shape);
                let qt = if n == 1 {
                    i32t
                } else {
                    self.vec_ty(i32t, n as u32)
                };
                let q = self.op(spirv::Op::ImageQuerySize, qt, &[img]);
                return Ok(self.spread(q, n, None, uv4));
            }
            // The slot's first declaration (TXQ does not say the shape).
            let s = self
                .slots
                .tex_shapes(d.slot, d.dyn_count)
                .first()
                .copied()
                .unwrap_or(Shape {
                    dim: TexDim::D2,
                    array: false,
                    shadow: false,
                    ms: false,
                });
            let dd = TexDesc {
                dim: s.dim,
                array: s.array,
                shadow: s.shadow,
                ms: s.ms,
                ..d
            };
            let (var, sit, it) = self.tex_var(&dd);
            let img = if d.slot == dmsh_ir::TEX_DYN {
                let h = self.vals[inst.args[3].index()];
                self.tex_dyn_image(d.dyn_count, var, it, h)
            } else {
                self.tex_image(var, sit, it)
            };
            let n = size_comps(s);
            let qt = if n == 1 {
                i32t
            } else {
                self.vec_ty(i32t, n as u32)
            };
            if s.ms {
                // A multisampled texture has one level: its size, and 1 level.
                let q = self.op(spirv::Op::ImageQuerySize, qt, &[img]);
                return Ok(self.spread(q, n, None, uv4));
            }
            let lod = self.op(spirv::Op::Bitcast, i32t, &[e[0]]);
            let q = self.op(spirv::Op::ImageQuerySizeLod, qt, &[img, lod]);
            let lv = self.op(spirv::Op::ImageQueryLevels, i32t, &[img]);
            return Ok(self.spread(q, n, Some(lv), uv4));
        }
        let (var, sit, it) = self.tex_var(&d);
        let si = if d.slot == dmsh_ir::TEX_DYN {
            let h = self.vals[inst.args[3].index()];
            self.tex_dyn_sampled(&d, var, sit, it, h)
        } else if d.dyn_count > 0 {
            let idx = self.vals[inst.args[3].index()];
            let pt = self.ptr(StorageClass::UniformConstant, sit);
            let p = berr(self.b.access_chain(pt, None, var, &[idx]))?;
            self.load_id(sit, p)
        } else {
            self.tex_load(&d, var, sit, it)?
        };
        let ct = if d.shadow {
            CompType::Float
        } else {
            self.tex_ct(d.slot)
        };
        let st = self.scalar_of_ct(ct);
        let v4 = self.vec_ty(st, 4);
        let frag = self.stage == Stage::Fragment;
        let n = d.dim.coords();
        let mut mask = ImageOperands::NONE;
        let mut ops: Vec<Operand> = Vec::new();
        let mut add = |mask: &mut ImageOperands, m: ImageOperands, w: Word| {
            *mask |= m;
            ops.push(Operand::IdRef(w));
        };
        let r = match d.kind {
            TexKind::Fetch => {
                let mut coords = self.icoords(n, d.array, c);
                let img = self.op(spirv::Op::Image, it, &[si]);
                if d.ptp {
                    let arr = self.ptp_offsets(i32t, ec[2], ec[3])?;
                    mask |= ImageOperands::CONST_OFFSETS;
                    ops.push(Operand::IdRef(arr));
                }
                if d.offset {
                    match ec[2] {
                        Some(p) => {
                            let o = self.const_offset(n, p, false);
                            let ct2 = if n == 1 && !d.array {
                                i32t
                            } else {
                                self.vec_ty(i32t, (n + d.array as usize) as u32)
                            };
                            let o = if d.array {
                                // Pad the layer with 0.
                                let z = self.cw_signed(i32t, 0);
                                let mut comps = Vec::new();
                                for k in 0..n {
                                    let x = if n == 1 {
                                        o
                                    } else {
                                        berr(self.b.composite_extract(i32t, None, o, &[k as u32]))?
                                    };
                                    comps.push(x);
                                }
                                comps.push(z);
                                self.vec_of(i32t, &comps)
                            } else {
                                o
                            };
                            coords = self.op(spirv::Op::IAdd, ct2, &[coords, o]);
                        }
                        None => {
                            return Err(Error::Unsupported("TLD with a run-time offset".into()))
                        }
                    }
                }
                let mut m2 = ImageOperands::NONE;
                let mut o2: Vec<Operand> = Vec::new();
                if d.ms {
                    m2 |= ImageOperands::SAMPLE;
                    let s = self.op(spirv::Op::Bitcast, i32t, &[e[3]]);
                    o2.push(Operand::IdRef(s));
                } else if d.dim != TexDim::Buffer {
                    m2 |= ImageOperands::LOD;
                    let l = if d.lod == TexLod::Level {
                        self.op(spirv::Op::Bitcast, i32t, &[e[0]])
                    } else {
                        self.cw_signed(i32t, 0)
                    };
                    o2.push(Operand::IdRef(l));
                }
                let mut all = vec![Operand::IdRef(img), Operand::IdRef(coords)];
                if m2 != ImageOperands::NONE {
                    all.push(Operand::ImageOperands(m2));
                    all.extend(o2);
                }
                let r = self.raw(spirv::Op::ImageFetch, v4, all);
                return Ok(self.as_uvec4(r, ct, false));
            }
            TexKind::QueryLod => {
                self.cap(Capability::ImageQuery);
                let coords = self.fcoords(&TexDesc { array: false, ..d }, c);
                let v2 = self.vec_ty(f32t, 2);
                let q = if frag {
                    self.op(spirv::Op::ImageQueryLod, v2, &[si, coords])
                } else {
                    let z = self.fconst(Type::F32, 0.0);
                    self.vec_of(f32t, &[z, z])
                };
                let k256 = self.fconst(Type::F32, 256.0);
                let mut out = Vec::new();
                // TMML: component 0 is the unclamped (relative) level, component 1 the
                // level accessed: the reverse of OpImageQueryLod's (x, y).
                for k in [1u32, 0] {
                    let x = berr(self.b.composite_extract(f32t, None, q, &[k]))?;
                    let y = self.fop(spirv::Op::FMul, f32t, &[x, k256]);
                    let i32t2 = self.sint(32);
                    let s = self.op(spirv::Op::ConvertFToS, i32t2, &[y]);
                    out.push(self.op(spirv::Op::Bitcast, u, &[s]));
                }
                let z = self.u32c(0);
                let uv4 = self.vec_ty(u, 4);
                return berr(
                    self.b
                        .composite_construct(uv4, None, [out[0], out[1], z, z]),
                );
            }
            _ => {
                let coords = self.fcoords(&d, c);
                let explicit = !frag
                    || matches!(d.lod, TexLod::Zero | TexLod::Level)
                    || d.kind == TexKind::Grad;
                match d.kind {
                    TexKind::Grad => {
                        let g = self.tuple_vals(f, inst.args[2]);
                        let dx: Vec<Word> = (0..n)
                            .map(|k| self.op(spirv::Op::Bitcast, f32t, &[g[2 * k]]))
                            .collect();
                        let dy: Vec<Word> = (0..n)
                            .map(|k| self.op(spirv::Op::Bitcast, f32t, &[g[2 * k + 1]]))
                            .collect();
                        let dx = self.vec_of(f32t, &dx);
                        let dy = self.vec_of(f32t, &dy);
                        mask |= ImageOperands::GRAD;
                        ops.push(Operand::IdRef(dx));
                        ops.push(Operand::IdRef(dy));
                    }
                    TexKind::Gather(_) => {}
                    _ => {
                        if d.lod == TexLod::Bias && frag {
                            let b = self.op(spirv::Op::Bitcast, f32t, &[e[0]]);
                            add(&mut mask, ImageOperands::BIAS, b);
                        } else if explicit {
                            let l = if d.lod == TexLod::Level {
                                self.op(spirv::Op::Bitcast, f32t, &[e[0]])
                            } else {
                                self.fconst(Type::F32, 0.0)
                            };
                            add(&mut mask, ImageOperands::LOD, l);
                        }
                    }
                }
                if d.ptp {
                    let arr = self.ptp_offsets(i32t, ec[2], ec[3])?;
                    mask |= ImageOperands::CONST_OFFSETS;
                    ops.push(Operand::IdRef(arr));
                }
                if d.offset {
                    match ec[2] {
                        Some(p) => {
                            let g = matches!(d.kind, TexKind::Gather(_));
                            let o = self.const_offset(n, p, g);
                            mask |= ImageOperands::CONST_OFFSET;
                            ops.push(Operand::IdRef(o));
                        }
                        None if matches!(d.kind, TexKind::Gather(_)) => {
                            self.cap(Capability::ImageGatherExtended);
                            let mut comps = Vec::new();
                            for k in 0..n {
                                let o = self.cw_signed(i32t, 8 * k as i32);
                                let w = self.cw_signed(i32t, 6);
                                let x = self.op(spirv::Op::Bitcast, i32t, &[e[2]]);
                                comps.push(self.op(spirv::Op::BitFieldSExtract, i32t, &[x, o, w]));
                            }
                            let o = self.vec_of(i32t, &comps);
                            mask |= ImageOperands::OFFSET;
                            ops.push(Operand::IdRef(o));
                        }
                        None => {
                            return Err(Error::Unsupported(
                                "texture sample with a run-time offset".into(),
                            ))
                        }
                    }
                }
                let dref = if d.shadow {
                    Some(self.op(spirv::Op::Bitcast, f32t, &[e[1]]))
                } else {
                    None
                };
                let mut all = vec![Operand::IdRef(si), Operand::IdRef(coords)];
                let (op, rt, scalar) = match (d.kind, dref) {
                    (TexKind::Gather(comp), None) => {
                        let cc = self.u32c(comp as u32);
                        all.push(Operand::IdRef(cc));
                        (spirv::Op::ImageGather, v4, false)
                    }
                    (TexKind::Gather(_), Some(r)) => {
                        all.push(Operand::IdRef(r));
                        (spirv::Op::ImageDrefGather, v4, false)
                    }
                    (_, Some(r)) => {
                        all.push(Operand::IdRef(r));
                        if explicit {
                            (spirv::Op::ImageSampleDrefExplicitLod, f32t, true)
                        } else {
                            (spirv::Op::ImageSampleDrefImplicitLod, f32t, true)
                        }
                    }
                    (_, None) => {
                        if explicit {
                            (spirv::Op::ImageSampleExplicitLod, v4, false)
                        } else {
                            (spirv::Op::ImageSampleImplicitLod, v4, false)
                        }
                    }
                };
                if mask != ImageOperands::NONE {
                    all.push(Operand::ImageOperands(mask));
                    all.extend(ops);
                }
                let r = self.raw(op, rt, all);
                (r, scalar)
            }
        };
        let (r, scalar) = r;
        Ok(self.as_uvec4(r, ct, scalar))
    }

    /// Spreads an ivecN size query into (w, h, d, levels) as uvec4.
    fn spread(&mut self, q: Word, n: usize, levels: Option<Word>, uv4: Word) -> Word {
        let u = self.ty(Type::U32);
        let i32t = self.sint(32);
        let mut comps = Vec::new();
        for k in 0..3 {
            if k < n {
                let x = if n == 1 {
                    q
                } else {
                    self.b
                        .composite_extract(i32t, None, q, &[k as u32])
                        .expect("block")
                };
                comps.push(self.op(spirv::Op::Bitcast, u, &[x]));
            } else {
                comps.push(self.u32c(if k == 2 { 1 } else { 0 }));
            }
        }
        comps.push(match levels {
            Some(l) => self.op(spirv::Op::Bitcast, u, &[l]),
            None => self.u32c(1),
        });
        self.b.composite_construct(uv4, None, comps).expect("block")
    }

    fn load_id(&mut self, t: Word, var: Word) -> Word {
        self.b.load_plain(t, var).expect("block")
    }

    /// The variable of an image slot's declaration for an access of shape `s` (`None`: a
    /// size query, the first shape): (shape, variable, image type, declaration).
    fn img_var(&mut self, slot: u16, s: Option<Shape>) -> (Shape, Word, Word, ImgDecl) {
        let (shape, alias, decl) = self.slots.img(slot, s);
        if let Some(&(var, it)) = self.img_vars.get(&(slot, alias)) {
            return (shape, var, it, decl);
        }
        let fmt = match decl.fmt {
            LFmt::Unknown => ImageFormat::Unknown,
            LFmt::Rgba8 => ImageFormat::Rgba8,
            LFmt::R32ui => ImageFormat::R32ui,
            LFmt::R32i => ImageFormat::R32i,
            LFmt::R32f => ImageFormat::R32f,
            LFmt::Rgba16f => ImageFormat::Rgba16f,
            LFmt::Rgba32f => ImageFormat::Rgba32f,
            LFmt::Rgba32ui => ImageFormat::Rgba32ui,
        };
        match shape.dim {
            TexDim::D1 => self.cap(Capability::Image1D),
            TexDim::Buffer => self.cap(Capability::ImageBuffer),
            _ => {}
        }
        if fmt == ImageFormat::Unknown {
            self.cap(Capability::StorageImageReadWithoutFormat);
            self.cap(Capability::StorageImageWriteWithoutFormat);
        }
        // r32i keeps uint texels (the same bits), which its atomics' texel pointers use.
        let st = self.img_scalar(decl);
        let it = self
            .b
            .type_image(st, sdim(shape.dim), 0, shape.array as u32, 0, 2, fmt, None);
        let pty = self.ptr(StorageClass::UniformConstant, it);
        let var = self.global_var(pty, StorageClass::UniformConstant, None);
        self.interface.push(var);
        self.b
            .decorate(var, Decoration::DescriptorSet, [Operand::LiteralBit32(0)]);
        self.b.decorate(
            var,
            Decoration::Binding,
            [Operand::LiteralBit32(alias_binding(
                128 + slot as u32,
                alias,
            ))],
        );
        self.img_vars.insert((slot, alias), (var, it));
        let view = (alias > 0).then(|| shape.view());
        self.gx.images.insert((slot, alias), view);
        (shape, var, it, decl)
    }

    /// The sampled type of an image declaration: float or uint (`ImgDecl`).
    fn img_scalar(&mut self, decl: ImgDecl) -> Word {
        if decl.float {
            self.ty(Type::F32)
        } else {
            self.ty(Type::U32)
        }
    }

    fn image(&mut self, f: &Function, inst: &Inst, d: ImgDesc) -> Result<Word, Error> {
        let c = self.tuple_vals(f, inst.args[0]);
        let coords = self.icoords(d.dim.coords(), d.array, c);
        let u = self.ty(Type::U32);
        let uv4 = self.vec_ty(u, 4);
        let f32t = self.ty(Type::F32);
        let raw = !d.typed;
        let shape = Shape {
            dim: d.dim,
            array: d.array,
            shadow: false,
            ms: false,
        };
        match inst.op {
            Op::ImageLoad(_) => {
                let (_, var, it, decl) = self.img_var(d.slot, Some(shape));
                let fmt = decl.fmt;
                let img = self.load_id(it, var);
                let st = self.img_scalar(decl);
                let v4 = self.vec_ty(st, 4);
                let r = self.op(spirv::Op::ImageRead, v4, &[img, coords]);
                Ok(match (raw, fmt) {
                    // A raw 32-bit read of rgba8 texels: the packed bytes.
                    (true, LFmt::Rgba8) if d.words == 1 => {
                        let p = self.ext(u, 55, &[r]);
                        let z = self.u32c(0);
                        berr(self.b.composite_construct(uv4, None, [p, z, z, z]))?
                    }
                    // A raw 64-bit read of rgba16f texels: the four halves, two per word.
                    (true, LFmt::Rgba16f) if d.words == 2 => {
                        let f2 = self.vec_ty(f32t, 2);
                        let mut c = [0; 4];
                        for (k, x) in c.iter_mut().enumerate() {
                            *x = berr(self.b.composite_extract(f32t, None, r, &[k as u32]))?;
                        }
                        let xy = berr(self.b.composite_construct(f2, None, [c[0], c[1]]))?;
                        let zw = berr(self.b.composite_construct(f2, None, [c[2], c[3]]))?;
                        let p0 = self.ext(u, 58, &[xy]);
                        let p1 = self.ext(u, 58, &[zw]);
                        let z = self.u32c(0);
                        berr(self.b.composite_construct(uv4, None, [p0, p1, z, z]))?
                    }
                    _ if st == uv4 || st == u => r,
                    _ => self.op(spirv::Op::Bitcast, uv4, &[r]),
                })
            }
            Op::ImageStore(_) => {
                let (_, var, it, decl) = self.img_var(d.slot, Some(shape));
                let fmt = decl.fmt;
                let img = self.load_id(it, var);
                let v = self.tuple_vals(f, inst.args[1]);
                let st = self.img_scalar(decl);
                let texel = match (raw, fmt) {
                    (true, LFmt::Rgba8) if d.words == 1 => {
                        let v4 = self.vec_ty(f32t, 4);
                        self.ext(v4, 64, &[v[0]])
                    }
                    _ => {
                        let z = self.u32c(0);
                        let mut comps = v.to_vec();
                        if raw {
                            for x in comps.iter_mut().skip(d.words as usize) {
                                *x = z;
                            }
                        }
                        let comps: Vec<Word> = comps
                            .iter()
                            .map(|&x| {
                                if st == u {
                                    x
                                } else {
                                    self.op(spirv::Op::Bitcast, st, &[x])
                                }
                            })
                            .collect();
                        let v4 = self.vec_ty(st, 4);
                        berr(self.b.composite_construct(v4, None, comps))?
                    }
                };
                berr(self.b.image_write(img, coords, texel, None, []))?;
                Ok(0)
            }
            Op::ImageAtomic(_, op) => {
                let (_, var, _, _) = self.img_var(d.slot, Some(shape));
                let pt = self.ptr(StorageClass::Image, u);
                let z = self.u32c(0);
                let p = self.op(spirv::Op::ImageTexelPointer, pt, &[var, coords, z]);
                let v = self.vals[inst.args[1].index()];
                let scope = self.u32c(1);
                let sem = self.u32c(0);
                let sop = match op {
                    None => {
                        let cmpv = self.vals[inst.args[2].index()];
                        return Ok(self.op(
                            spirv::Op::AtomicCompareExchange,
                            u,
                            &[p, scope, sem, sem, v, cmpv],
                        ));
                    }
                    Some(AtomOp::Add) => spirv::Op::AtomicIAdd,
                    Some(AtomOp::SMin) => spirv::Op::AtomicSMin,
                    Some(AtomOp::SMax) => spirv::Op::AtomicSMax,
                    Some(AtomOp::UMin) => spirv::Op::AtomicUMin,
                    Some(AtomOp::UMax) => spirv::Op::AtomicUMax,
                    Some(AtomOp::And) => spirv::Op::AtomicAnd,
                    Some(AtomOp::Or) => spirv::Op::AtomicOr,
                    Some(AtomOp::Xor) => spirv::Op::AtomicXor,
                    Some(AtomOp::Exch) => spirv::Op::AtomicExchange,
                    Some(o) => return Err(Error::Unsupported(format!("image atomic {o:?}"))),
                };
                Ok(self.op(sop, u, &[p, scope, sem, v]))
            }
            _ => Err(Error::Unsupported("image op".into())),
        }
    }
}
