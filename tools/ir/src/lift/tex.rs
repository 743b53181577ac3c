//! Textures and images: TEX, TEXS, TLD, TLDS, TLD4, TLD4S, TXQ, TMML, TXD, SULD, SUST, SUATOM,
//! SURED. Handles become slots through the binding-layout profile
//! ([`super::layout::BindingLayout`]); dimension, arrayness and depth compare come from the
//! instruction.

use super::{Cx, LiftError, Result};
use crate::gfx::{ImgDesc, TexDesc, TexDim, TexKind, TexLod};
use crate::ir::{AtomOp, BlockId, Function, Op, Type, Value};
use crate::ir::{Reg, RegFile};
use dmsh_isa::mods::{self, Suatomty, Sudsz, Suredsz, Sutt};
use dmsh_isa::{Field, Instr, Opcode};

fn unresolved(cx: &Cx, i: &Instr, why: String) -> LiftError {
    let key = cx.shader_key();
    cx.unsupported(i, format!("shader {key}: unresolvable handle: {why}"))
}

/// The binding layout: the graphics profile's, else the ABI's compute layout (CUDA parameter
/// handles, deko3d compute handles).
fn layout(cx: &Cx) -> Option<super::layout::BindingLayout> {
    match cx.cfg.gfx.as_ref() {
        Some(g) => Some(g.layout.clone()),
        None => cx.cfg.abi.compute_layout(cx.cfg),
    }
}

/// How handle resolution reads values: while lifting (`block` set) a register read stands
/// for the last write of that register earlier in that block; after the `ssa` pass values
/// are used directly (the [`handles`](crate::passes::handles) pass follows the phis).
#[derive(Clone, Copy)]
pub(crate) struct View<'a> {
    /// The function.
    pub f: &'a Function,
    /// The block being lifted, or `None` for SSA form.
    pub block: Option<BlockId>,
}

impl View<'_> {
    /// The value a register read stands for (see [`View`]); looks through bitcasts.
    fn trace(&self, mut v: Value) -> Value {
        let Some(b) = self.block else {
            while let Op::Bitcast = self.f.inst(v).op {
                v = self.f.inst(v).args[0];
            }
            return v;
        };
        for _ in 0..8 {
            let inst = *self.f.inst(v);
            // A register or (Ampere: `ULDC UR0, c[..]; MOV R0, UR0`) uniform register.
            let Op::Get(
                reg @ Reg {
                    file: RegFile::Gpr | RegFile::UGpr,
                    ..
                },
            ) = inst.op
            else {
                return v;
            };
            let insts = &self.f.blocks[b.index()].insts;
            let Some(pos) = insts.iter().position(|&x| x == v) else {
                return v;
            };
            let w = insts[..pos]
                .iter()
                .rev()
                .find(|&&x| self.f.inst(x).op == Op::Set(reg))
                .map(|&x| self.f.inst(x).args[0]);
            match w {
                Some(w) => {
                    v = w;
                    if let Op::Bitcast = self.f.inst(v).op {
                        v = self.f.inst(v).args[0];
                    }
                }
                None => return v,
            }
        }
        v
    }
}

/// The slot of a bound texture / image from the instruction's handle index, or from the
/// bindless register when it holds a word loaded from a static handle-bank offset.
fn slot(cx: &mut Cx, i: &Instr, image: bool, bindless: Option<Value>) -> Result<u16> {
    slot_samp(cx, i, image, bindless).map(|(s, _)| s)
}

/// [`slot`] and where the sampler comes from ([`TexDesc::samp`]).
fn slot_samp(cx: &mut Cx, i: &Instr, image: bool, bindless: Option<Value>) -> Result<(u16, u16)> {
    let Some(layout) = layout(cx) else {
        return Err(unresolved(
            cx,
            i,
            "no binding layout (graphics profile)".into(),
        ));
    };
    let r = match bindless {
        None => {
            let h = i.raw(Field::Handle).unwrap_or(0) as u32;
            byte_slot(&layout, image, 4 * h)
        }
        Some(v) => {
            let view = View {
                f: cx.f,
                block: Some(cx.b),
            };
            resolve(view, &layout, image, v)
        }
    };
    r.map_err(|why| unresolved(cx, i, why))
}

/// The slot of the handle-bank word at `byte` (a texture or image table entry).
fn byte_slot(
    layout: &super::layout::BindingLayout,
    image: bool,
    byte: u32,
) -> std::result::Result<(u16, u16), String> {
    let s = if image {
        layout.image_at(byte)
    } else {
        layout.texture_at(byte)
    };
    s.map(|s| (s, 0)).ok_or_else(|| {
        format!(
            "{} handle at c[{}][{byte:#x}] outside the {} layout",
            if image { "image" } else { "texture" },
            if image {
                layout.image_bank
            } else {
                layout.tex_bank
            },
            layout.name
        )
    })
}

/// A bindless handle value as (slot, [`TexDesc::samp`]): an NVN handle ([`nvn_handle`]) or a
/// word of the handle bank at a constant offset; else why not. Shared by the lifter
/// (block-local) and the [`handles`](crate::passes::handles) pass (through phis).
pub(crate) fn resolve(
    view: View,
    layout: &super::layout::BindingLayout,
    image: bool,
    v: Value,
) -> std::result::Result<(u16, u16), String> {
    let mut v = view.trace(v);
    let mut inst = *view.f.inst(v);
    if !image {
        if let Some(s) = nvn_handle(view, layout, v) {
            return Ok(s);
        }
        // A handle-bank word with its sampler ID masked off (`handle & 0xfffff`: NVK's
        // texel-buffer fetches and size queries) names the same texture.
        if inst.op == Op::And {
            let (a, b) = (inst.args[0], inst.args[1]);
            let word = match (view.f.const_of(a), view.f.const_of(b)) {
                (_, Some(0xf_ffff)) => Some(a),
                (Some(0xf_ffff), _) => Some(b),
                _ => None,
            };
            if let Some(w) = word.map(|w| view.trace(w)) {
                if matches!(view.f.inst(w).op, Op::LoadConst(_)) {
                    v = w;
                    inst = *view.f.inst(v);
                }
            }
        }
    }
    let bank = if image {
        layout.image_bank
    } else {
        layout.tex_bank
    };
    match inst.op {
        Op::LoadConst(b) if b == bank => match const_eval(view.f, inst.args[0]) {
            Some(off) => byte_slot(layout, image, off as u32),
            None => Err("bindless handle indexed at run time (sampler array)".into()),
        },
        _ => Err("bindless handle not loaded from the handle bank".into()),
    }
}

/// A constant the lifter built from constants (offsets are `RZ + imm` until folding).
fn const_eval(f: &Function, v: Value) -> Option<u64> {
    let inst = f.inst(v);
    match inst.op {
        Op::Const(c) => Some(c),
        Op::IAdd => Some(
            const_eval(f, inst.args[0])?.wrapping_add(const_eval(f, inst.args[1])?) & 0xffff_ffff,
        ),
        _ => None,
    }
}

/// The word a handle operand loads, as (bank, byte offset), looking through register copies.
fn loaded_word(view: View, v: Value) -> Option<(u8, u32)> {
    let v = view.trace(v);
    let inst = *view.f.inst(v);
    match inst.op {
        Op::LoadConst(b) => const_eval(view.f, inst.args[0]).map(|o| (b, o as u32)),
        _ => None,
    }
}

/// A uniform-buffer word as a `TEX_UBO` / `SAMP_UBO` slot: `flag | (bank − first) << 11 | word`
/// (not a word of the image-handle bank: NVK's storage-image descriptors).
fn ubo_word(layout: &super::layout::BindingLayout, bank: u8, off: u32) -> Option<u16> {
    let data = bank >= layout.first_ubo_bank && bank != layout.image_bank;
    if data && off.is_multiple_of(4) && off / 4 < 0x800 {
        let b = (bank - layout.first_ubo_bank) as u16;
        (b < 16).then_some(crate::gfx::TEX_UBO | b << 11 | (off / 4) as u16)
    } else {
        None
    }
}

/// NVN handles: a texture word — the texture table, the separate-texture table, or a uniform
/// buffer (`tex_ubo`) — ORed with a sampler: a separate-sampler table word (bound with the
/// texture), a constant sampler ID (`samp_id`) or a uniform-buffer word (`samp_ubo`); a
/// separate texture alone; or a whole handle read from a uniform buffer (`tex_ubo` +
/// `samp_ubo` of the same word). Returns (texture slot, [`TexDesc::samp`]).
fn nvn_handle(view: View, layout: &super::layout::BindingLayout, v: Value) -> Option<(u16, u16)> {
    let inst = *view.f.inst(v);
    if inst.op == Op::Or {
        let (a, b) = (view.trace(inst.args[0]), view.trace(inst.args[1]));
        for (t, smp) in [(a, b), (b, a)] {
            let Some((bank, off)) = loaded_word(view, t) else {
                continue;
            };
            let tex = if bank == layout.tex_bank {
                layout.texture_at(off).or_else(|| layout.septex_at(off))
            } else {
                ubo_word(layout, bank, off)
            };
            let Some(tex) = tex else { continue };
            let samp = if let Some(c) = view.f.const_of(smp) {
                Some(crate::gfx::SAMP_ID | ((c >> 20) & 0xfff) as u16)
            } else {
                match loaded_word(view, smp) {
                    Some((sb, so)) if sb == layout.tex_bank => {
                        layout.sampler_at(so).map(|n| crate::gfx::SAMP_SEP | n)
                    }
                    Some((sb, so)) => ubo_word(layout, sb, so),
                    None => None,
                }
            };
            if let Some(samp) = samp {
                return Some((tex, samp));
            }
        }
        return None;
    }
    let (bank, off) = loaded_word(view, v)?;
    if bank == layout.tex_bank {
        return layout.septex_at(off).map(|s| (s, 0));
    }
    ubo_word(layout, bank, off).map(|s| (s, 0))
}

/// A bindless handle loaded from the handle bank at `const + x` (a sampler array indexed at
/// run time): the first slot, the number of slots left in the layout, and the index value.
fn dyn_slot(cx: &mut Cx, v: Value) -> Option<(u16, u8, Value)> {
    let layout = layout(cx)?;
    let v = trace(cx, v);
    let inst = *cx.f.inst(v);
    let Op::LoadConst(b) = inst.op else {
        return None;
    };
    if b != layout.tex_bank {
        return None;
    }
    // The address is `x + c`, or `x` alone where the table starts at 0 (the lifter does not
    // make `x + 0`).
    let addr = inst.args[0];
    let add = *cx.f.inst(addr);
    let (x, c) = if add.op == Op::IAdd {
        match (const_eval(cx.f, add.args[0]), const_eval(cx.f, add.args[1])) {
            (_, Some(c)) => (add.args[0], c as u32),
            (Some(c), _) => (add.args[1], c as u32),
            _ => (addr, 0),
        }
    } else {
        (addr, 0)
    };
    let first = layout.texture_at(c)?;
    if !layout.tex_stride.is_power_of_two() {
        return None;
    }
    let idx = cx.shr_c(x, layout.tex_stride.trailing_zeros());
    let count = (layout.tex_count - first as u32).min(255) as u8;
    Some((first, count, idx))
}

/// What [`tex_handle`] resolves a handle to: (slot, [`TexDesc::samp`], the run-time array
/// (element count, index value), if any).
pub(crate) type TexHandle = (u16, u16, Option<(u8, Value)>);

/// A bindless handle value as the texture it names, for the Ampere lifter: (slot,
/// [`TexDesc::samp`], the run-time array (element count, index value) for a sampler array
/// indexed at run time or a `tex_dyn` handle); else why not. A handle read from a register
/// another block wrote is left to the [`handles`](crate::passes::handles) pass, as on
/// Maxwell: ([`crate::gfx::TEX_PENDING`], its pending index, `(0, handle)`); `what` names
/// the instruction for its report.
pub(crate) fn tex_handle(
    cx: &mut Cx,
    h: Value,
    what: &dyn Fn() -> String,
) -> std::result::Result<TexHandle, String> {
    let Some(l) = layout(cx) else {
        return Err("no binding layout (graphics profile)".into());
    };
    let view = View {
        f: cx.f,
        block: Some(cx.b),
    };
    match resolve(view, &l, false, h) {
        Ok((s, samp)) => Ok((s, samp, None)),
        Err(_) if live_in(cx, h) => {
            let p = defer(cx, what(), l, false);
            Ok((crate::gfx::TEX_PENDING, p, Some((0, h))))
        }
        Err(e) => match dyn_slot(cx, h) {
            Some((first, n, idx)) => Ok((first, 0, Some((n, idx)))),
            None if l.tex_dyn => Ok((crate::gfx::TEX_DYN, 0, Some((l.tex_dyn_count(), h)))),
            None => Err(e),
        },
    }
}

/// A TXQ handle, for the Ampere lifter: an image's slot when the handle is a word of the
/// image bank (`imageSize`: `(true, slot, …)`), else the texture [`tex_handle`] finds.
pub(crate) fn txq_handle(
    cx: &mut Cx,
    h: Value,
    what: &dyn Fn() -> String,
) -> std::result::Result<(bool, TexHandle), String> {
    if let Some(l) = layout(cx) {
        let view = View {
            f: cx.f,
            block: Some(cx.b),
        };
        if resolve(view, &l, false, h).is_err() {
            if let Ok((s, _)) = resolve(view, &l, true, h) {
                return Ok((true, (s, 0, None)));
            }
        }
    }
    tex_handle(cx, h, what).map(|t| (false, t))
}

/// A bindless storage-image handle value as its image slot, for the Ampere lifter (as
/// [`tex_handle`]): (slot, the pending index and handle when the handles pass resolves it);
/// else why not.
pub(crate) fn image_handle(
    cx: &mut Cx,
    h: Value,
    what: &dyn Fn() -> String,
) -> std::result::Result<(u16, Option<(u16, Value)>), String> {
    let Some(l) = layout(cx) else {
        return Err("no binding layout (graphics profile)".into());
    };
    let view = View {
        f: cx.f,
        block: Some(cx.b),
    };
    match resolve(view, &l, true, h) {
        Ok((s, _)) => Ok((s, None)),
        Err(_) if live_in(cx, h) => {
            let p = defer(cx, what(), l, true);
            Ok((crate::gfx::TEX_PENDING, Some((p, h))))
        }
        Err(e) => Err(e),
    }
}

/// The value a register read stands for: the last write of that register earlier in the
/// current block (lifting runs before the passes that would forward it).
fn trace(cx: &Cx, v: Value) -> Value {
    View {
        f: cx.f,
        block: Some(cx.b),
    }
    .trace(v)
}

/// A register (or uniform register) the handle is read from that no earlier instruction of
/// the current block writes: its value comes from another block (a merge or a loop), known
/// only after SSA.
fn live_in(cx: &Cx, v: Value) -> bool {
    matches!(
        cx.f.inst(trace(cx, v)).op,
        Op::Get(Reg {
            file: RegFile::Gpr | RegFile::UGpr,
            ..
        })
    )
}

/// Records a texture or image (`image`: no run-time array fallback) operation whose handle the [`handles`](crate::passes::handles) pass
/// resolves; returns its index in [`crate::passes::handles::Pending::items`].
fn defer(cx: &mut Cx, mnemonic: String, layout: super::layout::BindingLayout, image: bool) -> u16 {
    let dyn_fallback = if layout.tex_dyn && !image {
        layout.tex_dyn_count()
    } else {
        0
    };
    let key = cx.shader_key();
    let offset = cx.addr;
    let h = cx.f.handles.get_or_insert_with(|| {
        Box::new(crate::passes::handles::Pending {
            layout,
            key,
            items: Vec::new(),
        })
    });
    h.items.push(crate::passes::handles::PendingTex {
        offset,
        mnemonic,
        dyn_fallback,
        why: None,
    });
    (h.items.len() - 1) as u16
}

/// A Maxwell instruction as a pending handle's report names it: `TEX (TEX_B)`.
fn what(i: &Instr) -> String {
    format!("{} ({})", i.opcode().name(), i.form_name())
}

/// Register `base + k`, or RZ when that runs past R254 (or base is RZ).
pub(crate) fn regk(base: u8, k: u8) -> u8 {
    match base.checked_add(k) {
        Some(r) if base != 255 && r < 255 => r,
        _ => 255,
    }
}

/// A register read that tolerates RZ / running past R254.
pub(crate) fn rr(cx: &mut Cx, base: u8, k: u8) -> Value {
    if base == 255 {
        cx.c32(0)
    } else {
        cx.reg(base.saturating_add(k).min(254))
    }
}

pub(crate) fn tuple(cx: &mut Cx, v: [Value; 4]) -> Value {
    cx.emit(Op::Tuple, Type::Void, &v)
}

/// Writes the enabled components of a 4-wide result to registers: `pairs` lists the
/// destination register of each written component in order.
pub(crate) fn write(cx: &mut Cx, res: Value, comps: &[u8], dests: &[u8]) {
    let vals: Vec<Value> = comps
        .iter()
        .map(|&c| cx.emit(Op::Extract(c), Type::U32, &[res]))
        .collect();
    for (v, &d) in vals.into_iter().zip(dests) {
        if d != 255 {
            cx.set_reg(d, v);
        }
    }
}

/// Packs two f32 results as f16x2 (`.F16` forms).
fn write_f16(cx: &mut Cx, res: Value, comps: &[u8], dests: &[u8]) {
    let vals: Vec<Value> = comps
        .iter()
        .map(|&c| {
            let x = cx.emit(Op::Extract(c), Type::U32, &[res]);
            let f = cx.cast(Type::F32, x);
            let h = cx.emit(Op::FConvert(crate::Round::Rn), Type::F16, &[f]);
            cx.emit(Op::Bitcast, Type::U32, &[h])
        })
        .collect();
    for (k, &d) in dests.iter().enumerate() {
        if d == 255 || 2 * k >= vals.len() {
            continue;
        }
        let lo = vals[2 * k];
        let v = if 2 * k + 1 < vals.len() {
            let hi = cx.shl_c(vals[2 * k + 1], 16);
            cx.or(lo, hi)
        } else {
            lo
        };
        cx.set_reg(d, v);
    }
}

fn tt(i: &Instr) -> (TexDim, bool) {
    let dim = match i.get(Field::TexType).unwrap_or(1) {
        0 => TexDim::D1,
        1 => TexDim::D2,
        2 => TexDim::D3,
        _ => TexDim::Cube,
    };
    (dim, i.flag(Field::Array))
}

fn mask_comps(i: &Instr) -> Vec<u8> {
    let m = i.raw(Field::WriteMask).unwrap_or(0xf) as u8;
    (0..4).filter(|c| m & (1 << c) != 0).collect()
}

/// Coordinates from consecutive registers starting at `ra`: layer first for arrays.
pub(crate) fn coords_from(cx: &mut Cx, ra: u8, dim: TexDim, array: bool) -> (Value, u8) {
    let mut k = 0u8;
    let layer = if array {
        k += 1;
        Some(rr(cx, ra, 0))
    } else {
        None
    };
    let mut c = Vec::new();
    for _ in 0..dim.coords() {
        c.push(rr(cx, ra, k));
        k += 1;
    }
    let z = cx.c32(0);
    while c.len() < 3 {
        c.push(z);
    }
    let l = layer.unwrap_or(z);
    (tuple(cx, [c[0], c[1], c[2], l]), k)
}

pub(crate) fn desc(kind: TexKind, dim: TexDim, array: bool, slot: u16) -> TexDesc {
    TexDesc {
        kind,
        dim,
        array,
        shadow: false,
        lod: TexLod::Implicit,
        offset: false,
        ms: false,
        ptp: false,
        slot,
        dyn_count: 0,
        samp: 0,
    }
}

/// Lifts one texture or surface instruction.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    let form = i.form_name();
    let bindless = form.ends_with("_B") || form.ends_with("_DR") || form.ends_with("_PR");
    let rd = cx.rf(i, Field::Rd);
    let ra = cx.rf(i, Field::Ra);
    let rb = cx.rf(i, Field::Rb);
    let z = cx.c32(0);
    match i.opcode() {
        Opcode::Texs | Opcode::Tlds | Opcode::Tld4s => {
            if bindless {
                return Err(unresolved(cx, i, "bindless TEXS form".into()));
            }
            let s = slot(cx, i, false, None)?;
            let rd2 = cx.rf(i, Field::Rd2);
            let rd2 = if form.ends_with("_RZ") { 255 } else { rd2 };
            let (d, comps) = match i.opcode() {
                Opcode::Texs => texs(cx, i, ra, rb, s)?,
                Opcode::Tlds => tlds(cx, i, ra, rb, s)?,
                _ => {
                    let comp = i.get(Field::Component).unwrap_or(0) as u8;
                    let mut d = desc(TexKind::Gather(comp), TexDim::D2, false, s);
                    d.offset = i.flag(Field::Aoffi);
                    d.shadow = i.flag(Field::Dc);
                    let (x, y, meta) = if d.offset || d.shadow {
                        (rr(cx, ra, 0), rr(cx, ra, 1), rb)
                    } else {
                        (rr(cx, ra, 0), rr(cx, rb, 0), 255)
                    };
                    let mut k = 0;
                    let off = if d.offset {
                        k += 1;
                        rr(cx, meta, 0)
                    } else {
                        z
                    };
                    let dref = if d.shadow { rr(cx, meta, k) } else { z };
                    let c = tuple(cx, [x, y, z, z]);
                    let e = tuple(cx, [z, dref, off, z]);
                    let r = cx.emit(Op::Tex(d), Type::Void, &[c, e]);
                    (r, vec![0, 1, 2, 3])
                }
            };
            let comps = if i.opcode() == Opcode::Tld4s {
                comps
            } else {
                texs_comps(i, rd2 == 255)
            };
            // TEXS/TLDS: `mods::F16n`; TLD4S's `.F16` is a one-bit flag, not read here.
            let f16 = cx.modifier::<mods::F16n>(i, Field::F16)? == Some(mods::F16n::F16);
            let mut dests = vec![rd, regk(rd, 1)];
            dests.push(rd2);
            dests.push(regk(rd2, 1));
            if f16 {
                write_f16(cx, d, &comps, &[rd, rd2]);
            } else {
                write(cx, d, &comps, &dests);
            }
        }
        Opcode::Tex | Opcode::Tld | Opcode::Tld4 | Opcode::Tmml | Opcode::Txd => {
            let (dim, array) = tt(i);
            let mut meta = rb;
            // The bindless handle is Rb's first register, except for TXD.B: there Rb holds
            // the gradients and the handle is Ra, the coordinates following it (uam's
            // textureGrad on a sampler array: `MOV R0, Rh; MOV R1, x; MOV R2, y;
            // TXD.B R0, R0, R4`).
            let txd_b = bindless && i.opcode() == Opcode::Txd;
            let hreg = if txd_b {
                Some(rr(cx, ra, 0))
            } else if bindless {
                let h = rr(cx, meta, 0);
                meta = if meta == 255 { 255 } else { meta + 1 };
                Some(h)
            } else {
                None
            };
            let ra = if txd_b { regk(ra, 1) } else { ra };
            let mut pending = None;
            let (s, samp, dynamic) = match slot_samp(cx, i, false, hreg) {
                Ok((s, samp)) => (s, samp, None),
                Err(e) => match (hreg.filter(|&h| live_in(cx, h)), layout(cx)) {
                    // Read from a register another block wrote: resolved after SSA.
                    (Some(h), Some(l)) => {
                        pending = Some(h);
                        (crate::gfx::TEX_PENDING, defer(cx, what(i), l, false), None)
                    }
                    _ => match hreg.and_then(|h| dyn_slot(cx, h)) {
                        Some((first, n, idx)) => (first, 0, Some((n, idx))),
                        None => match (hreg, layout(cx).filter(|l| l.tex_dyn)) {
                            // tex_dyn_slots: a handle chosen at run time indexes the texture
                            // and sampler arrays by its own IDs (the replay writes slot
                            // numbers into the tables).
                            (Some(h), Some(l)) => {
                                (crate::gfx::TEX_DYN, 0, Some((l.tex_dyn_count(), h)))
                            }
                            _ => return Err(e),
                        },
                    },
                },
            };
            let (c, _) = coords_from(cx, ra, dim, array);
            let mut d = desc(TexKind::Sample, dim, array, s);
            d.samp = samp;
            if let Some((n, _)) = dynamic {
                d.dyn_count = n;
                cx.f.tex_arrays = true;
            }
            let mut m = 0u8;
            let mut take = |cx: &mut Cx| {
                let v = rr(cx, meta, m);
                m += 1;
                v
            };
            let mut lod = z;
            let mut off = z;
            let mut dref = z;
            let mut sample = z;
            let mut grad = None;
            match i.opcode() {
                Opcode::Tex => {
                    use mods::Texlod as L;
                    d.lod = match cx.modifier::<L>(i, Field::Lod)? {
                        Some(L::Lz) => TexLod::Zero,
                        Some(L::Lb | L::Lba) => TexLod::Bias,
                        Some(L::Ll | L::Lla) => TexLod::Level,
                        Some(L::Default) | None => TexLod::Implicit,
                    };
                    if matches!(d.lod, TexLod::Bias | TexLod::Level) {
                        lod = take(cx);
                    }
                    if i.flag(Field::Aoffi) {
                        d.offset = true;
                        off = take(cx);
                    }
                    if i.flag(Field::Dc) {
                        d.shadow = true;
                        dref = take(cx);
                    }
                }
                Opcode::Tld => {
                    d.kind = TexKind::Fetch;
                    let buffers = cx.cfg.gfx.as_ref().map_or(0, |g| g.texel_buffers);
                    if d.dim == TexDim::D1 && !array && s < 32 && buffers >> s & 1 != 0 {
                        d.dim = TexDim::Buffer;
                    }
                    let ll = cx.modifier::<mods::Tldlod>(i, Field::Lod)? == Some(mods::Tldlod::Ll);
                    d.lod = if ll {
                        lod = take(cx);
                        TexLod::Level
                    } else {
                        TexLod::Zero
                    };
                    if i.flag(Field::Aoffi) {
                        d.offset = true;
                        off = take(cx);
                    }
                    if i.flag(Field::Ms) {
                        d.ms = true;
                        sample = take(cx);
                    }
                }
                Opcode::Tld4 => {
                    d.kind = TexKind::Gather(i.get(Field::Component).unwrap_or(0) as u8);
                    let ao = cx.modifier::<mods::Toff>(i, Field::Aoffi)?;
                    if ao == Some(mods::Toff::Ptp) {
                        d.ptp = true;
                        off = take(cx);
                        sample = take(cx);
                    }
                    if ao == Some(mods::Toff::Aoffi) {
                        d.offset = true;
                        off = take(cx);
                    }
                    if i.flag(Field::Dc) {
                        d.shadow = true;
                        dref = take(cx);
                    }
                }
                Opcode::Tmml => d.kind = TexKind::QueryLod,
                _ => {
                    d.kind = TexKind::Grad;
                    if i.flag(Field::Aoffi) {
                        // The register after the coordinates packs the offsets from bit 16
                        // (4 bits each; the low half holds the layer of array textures).
                        if array {
                            return Err(cx.unsupported(i, "TXD.AOFFI on an array texture"));
                        }
                        let r = rr(cx, ra, dim.coords() as u8);
                        off = cx.shr_c(r, 16);
                        d.offset = true;
                    }
                    let n = dim.coords() as u8;
                    let mut g = [z; 4];
                    for k in 0..n.min(2) {
                        g[2 * k as usize] = rr(cx, rb, 2 * k);
                        g[2 * k as usize + 1] = rr(cx, rb, 2 * k + 1);
                    }
                    if n > 2 {
                        return Err(cx.unsupported(i, "TXD on 3D/cube textures"));
                    }
                    grad = Some(tuple(cx, g));
                }
            }
            let e = tuple(cx, [lod, dref, off, sample]);
            let dynamic = match pending {
                Some(h) => Some((0, h)),
                None => dynamic,
            };
            let r = match (grad, dynamic) {
                (g, Some((_, idx))) => {
                    let g = match g {
                        Some(g) => g,
                        None => tuple(cx, [z, z, z, z]),
                    };
                    cx.emit(Op::Tex(d), Type::Void, &[c, e, g, idx])
                }
                (Some(g), None) => cx.emit(Op::Tex(d), Type::Void, &[c, e, g]),
                (None, None) => cx.emit(Op::Tex(d), Type::Void, &[c, e]),
            };
            let comps = if d.kind == TexKind::QueryLod {
                mask_comps(i).into_iter().filter(|&c| c < 2).collect()
            } else {
                mask_comps(i)
            };
            let dests: Vec<u8> = (0..comps.len() as u8).map(|k| regk(rd, k)).collect();
            write(cx, r, &comps, &dests);
        }
        Opcode::Txq => {
            use mods::Txqm;
            let samples = match cx.modifier::<Txqm>(i, Field::Mode)? {
                Some(Txqm::TexHeaderDimension) => false,
                Some(Txqm::TexHeaderTextureType) => true,
                m => {
                    let m = m.map_or("", Txqm::name);
                    return Err(cx.unsupported(i, format!("TXQ {m}")));
                }
            };
            let hreg = if bindless { Some(rr(cx, ra, 0)) } else { None };
            let lodr = if bindless {
                rr(cx, ra, 1)
            } else {
                rr(cx, ra, 0)
            };
            // A TXQ handle may name a texture or an image; a handle computed in registers
            // (not a handle-bank word) is a texture ID: the `tex_dyn` array element it names
            // (uam's TXQ.B on a sampler array indexed at run time passes the bare array index
            // as the handle, dropping the array's first binding).
            let mut pending = None;
            let (image, s, dynh) = match slot(cx, i, false, hreg) {
                Ok(s) => (false, s, None),
                Err(e) => match slot(cx, i, true, hreg) {
                    Ok(s) => (true, s, None),
                    Err(_) => match (hreg, layout(cx).filter(|l| l.tex_dyn)) {
                        (Some(h), Some(_))
                            if loaded_word(
                                View {
                                    f: cx.f,
                                    block: Some(cx.b),
                                },
                                h,
                            )
                            .is_none() =>
                        {
                            (false, crate::gfx::TEX_DYN, Some(h))
                        }
                        _ => match (hreg.filter(|&h| live_in(cx, h)), layout(cx)) {
                            // Read from a register another block wrote: a texture handle
                            // resolved after SSA.
                            (Some(h), Some(l)) => {
                                pending = Some(defer(cx, what(i), l, false));
                                (false, crate::gfx::TEX_PENDING, Some(h))
                            }
                            _ => return Err(e),
                        },
                    },
                },
            };
            let mut d = desc(TexKind::QuerySize, TexDim::D2, false, s);
            d.ms = image; // marks an image query for the back end
            if samples {
                if image || (dynh.is_some() && pending.is_none()) {
                    return Err(cx.unsupported(
                        i,
                        "TXQ TEX_HEADER_TEXTURE_TYPE on an image or a run-time texture ID",
                    ));
                }
                d = desc(TexKind::QuerySamples, TexDim::D2, false, s);
            }
            let c = tuple(cx, [z, z, z, z]);
            let e = tuple(cx, [lodr, z, z, z]);
            let r = match dynh {
                Some(h) => {
                    match pending {
                        Some(n) => d.samp = n,
                        None => {
                            d.dyn_count = layout(cx).map(|l| l.tex_dyn_count()).unwrap_or(1);
                            cx.f.tex_arrays = true;
                        }
                    }
                    let g = tuple(cx, [z, z, z, z]);
                    cx.emit(Op::Tex(d), Type::Void, &[c, e, g, h])
                }
                None => cx.emit(Op::Tex(d), Type::Void, &[c, e]),
            };
            let comps = mask_comps(i);
            let dests: Vec<u8> = (0..comps.len() as u8).map(|k| regk(rd, k)).collect();
            write(cx, r, &comps, &dests);
        }
        Opcode::Suld | Opcode::Sust | Opcode::Suatom | Opcode::Sured => surface(cx, i)?,
        _ => return Err(cx.unsupported(i, "not a texture instruction")),
    }
    Ok(())
}

/// TEXS components written, in order (CMP1 with one destination pair, CMP2 with two).
fn texs_comps(i: &Instr, one_pair: bool) -> Vec<u8> {
    let c = i.raw(Field::Component).unwrap_or(0) as usize;
    let one: [&[u8]; 8] = [&[0], &[1], &[2], &[3], &[0, 1], &[0, 3], &[1, 3], &[2, 3]];
    let two: [&[u8]; 8] = [
        &[0, 1, 2],
        &[0, 1, 3],
        &[0, 2, 3],
        &[1, 2, 3],
        &[0, 1, 2, 3],
        &[0, 1, 2, 3],
        &[0, 1, 2, 3],
        &[0, 1, 2, 3],
    ];
    if one_pair {
        one[c].to_vec()
    } else {
        two[c].to_vec()
    }
}

fn texs(cx: &mut Cx, i: &Instr, ra: u8, rb: u8, s: u16) -> Result<(Value, Vec<u8>)> {
    let z = cx.c32(0);
    let t = i.raw(Field::Lod).unwrap_or(0);
    let a = |cx: &mut Cx, k| rr(cx, ra, k);
    let b = |cx: &mut Cx, k| rr(cx, rb, k);
    use TexDim::*;
    use TexLod::*;
    // (dim, array, lod, shadow, coords, layer, lod value, dref)
    let (dim, array, lod, shadow) = match t {
        0 => (D1, false, Zero, false),
        1 => (D2, false, Implicit, false),
        2 => (D2, false, Zero, false),
        3 => (D2, false, Level, false),
        4 => (D2, false, Implicit, true),
        5 => (D2, false, Level, true),
        6 => (D2, false, Zero, true),
        7 => (D2, true, Implicit, false),
        8 => (D2, true, Zero, false),
        9 => (D2, true, Zero, true),
        10 => (D3, false, Implicit, false),
        11 => (D3, false, Zero, false),
        12 => (Cube, false, Implicit, false),
        13 => (Cube, false, Level, false),
        _ => return Err(cx.unsupported(i, format!("TEXS type {t}"))),
    };
    let (x, y, zc, layer, lodv, dref) = match t {
        0 => (a(cx, 0), z, z, z, z, z),
        1 | 2 => (a(cx, 0), b(cx, 0), z, z, z, z),
        3 => (a(cx, 0), a(cx, 1), z, z, b(cx, 0), z),
        4 | 6 => (a(cx, 0), a(cx, 1), z, z, z, b(cx, 0)),
        5 => (a(cx, 0), a(cx, 1), z, z, b(cx, 0), b(cx, 1)),
        7 | 8 => (a(cx, 1), b(cx, 0), z, a(cx, 0), z, z),
        9 => (a(cx, 1), b(cx, 0), z, a(cx, 0), z, b(cx, 1)),
        10..=12 => (a(cx, 0), a(cx, 1), b(cx, 0), z, z, z),
        _ => (a(cx, 0), a(cx, 1), b(cx, 0), z, b(cx, 1), z),
    };
    let mut d = desc(TexKind::Sample, dim, array, s);
    d.lod = lod;
    d.shadow = shadow;
    let c = tuple(cx, [x, y, zc, layer]);
    let e = tuple(cx, [lodv, dref, z, z]);
    Ok((cx.emit(Op::Tex(d), Type::Void, &[c, e]), vec![]))
}

fn tlds(cx: &mut Cx, i: &Instr, ra: u8, rb: u8, s: u16) -> Result<(Value, Vec<u8>)> {
    let z = cx.c32(0);
    let t = i.raw(Field::Lod).unwrap_or(0);
    let a = |cx: &mut Cx, k| rr(cx, ra, k);
    let b = |cx: &mut Cx, k| rr(cx, rb, k);
    use TexDim::*;
    let mut d = desc(TexKind::Fetch, D2, false, s);
    d.lod = TexLod::Zero;
    // (x, y, z, layer, lod, offset, sample)
    let v = match t {
        0 => {
            d.dim = D1;
            (a(cx, 0), z, z, z, z, z, z)
        }
        1 => {
            d.dim = D1;
            d.lod = TexLod::Level;
            (a(cx, 0), z, z, z, b(cx, 0), z, z)
        }
        2 => (a(cx, 0), b(cx, 0), z, z, z, z, z),
        4 => {
            d.offset = true;
            (a(cx, 0), a(cx, 1), z, z, z, b(cx, 0), z)
        }
        5 => {
            d.lod = TexLod::Level;
            (a(cx, 0), a(cx, 1), z, z, b(cx, 0), z, z)
        }
        6 => {
            d.ms = true;
            (a(cx, 0), a(cx, 1), z, z, z, z, b(cx, 0))
        }
        7 => {
            d.dim = D3;
            (a(cx, 0), a(cx, 1), b(cx, 0), z, z, z, z)
        }
        8 => {
            // Unlike TEXS: layer in Ra, x and y in Rb, Rb+1.
            d.array = true;
            (b(cx, 0), b(cx, 1), z, a(cx, 0), z, z, z)
        }
        12 => {
            d.lod = TexLod::Level;
            d.offset = true;
            (a(cx, 0), a(cx, 1), z, z, b(cx, 0), b(cx, 1), z)
        }
        _ => return Err(cx.unsupported(i, format!("TLDS type {t}"))),
    };
    let c = tuple(cx, [v.0, v.1, v.2, v.3]);
    let e = tuple(cx, [v.4, z, v.5, v.6]);
    Ok((cx.emit(Op::Tex(d), Type::Void, &[c, e]), vec![]))
}

fn surface(cx: &mut Cx, i: &Instr) -> Result<()> {
    let form = i.form_name();
    // Register (bindless) handle forms read the handle from Rc: a handle-bank word resolved
    // here, or (read from a register another block wrote) after SSA by the handles pass.
    let bindless = form.ends_with("_DR")
        || form.ends_with("_PR")
        || form == "SUATOM_D"
        || form == "SUATOM_CAS";
    let mut pending = None;
    let s = if bindless {
        let rc = cx.rf(i, Field::Rc);
        let h = rr(cx, rc, 0);
        match slot(cx, i, true, Some(h)) {
            Ok(s) => s,
            Err(e) => match (live_in(cx, h), layout(cx)) {
                (true, Some(l)) => {
                    pending = Some((defer(cx, what(i), l, true), h));
                    crate::gfx::TEX_PENDING
                }
                _ => return Err(e),
            },
        }
    } else {
        slot(cx, i, true, None)?
    };
    // `TexType` is `mods::Sutt`, but for the immediate-handle SUATOM forms (a raw field).
    let (dim, array) = match cx.modifier::<Sutt>(i, Field::TexType)? {
        Some(Sutt::N1d) => (TexDim::D1, false),
        Some(Sutt::N1dBuffer) => (TexDim::Buffer, false),
        Some(Sutt::N1dArray) => (TexDim::D1, true),
        Some(Sutt::N2d) => (TexDim::D2, false),
        Some(Sutt::N2dArray) => (TexDim::D2, true),
        Some(Sutt::N3d) => (TexDim::D3, false),
        None if i.opcode() == Opcode::Suatom => {
            // Immediate-handle SUATOM: the target (SUTT order) in bits 33-35; bit 32 is the
            // high bit of the 4-bit atomic op (bits 29-32: EXCH = 8 sets it, dksh README §1).
            match i.raw(Field::TexType).unwrap_or(6) >> 1 {
                0 => (TexDim::D1, false),
                1 => (TexDim::Buffer, false),
                2 => (TexDim::D1, true),
                3 => (TexDim::D2, false),
                4 => (TexDim::D2, true),
                5 => (TexDim::D3, false),
                t => return Err(cx.unsupported(i, format!("SUATOM target {t}"))),
            }
        }
        None => return Err(cx.unsupported(i, "surface type")),
    };
    let ra = cx.rf(i, Field::Ra);
    let z = cx.c32(0);
    let n = dim.coords() as u8;
    let mut c = [z; 4];
    for k in 0..n {
        c[k as usize] = rr(cx, ra, k);
    }
    if array {
        c[3] = rr(cx, ra, n);
    }
    // Raw accesses: words moved, the texel size in bytes (for `.BA`), and whether a narrow
    // texel is signed.
    let typed = form.starts_with("SULD_P") || form.starts_with("SUST_P");
    let (words, bytes, signed) = match i.opcode() {
        // Atomics: one 32-bit word, unsigned (no size) or `.S32`.
        Opcode::Sured | Opcode::Suatom => {
            // `Size`: `mods::Suredsz` (SURED) or `mods::Suatomty` (SUATOM).
            let s32 = match i.modifier_as::<Suredsz>(Field::Size) {
                Some(Suredsz::Default) => Ok(false),
                Some(Suredsz::S32) => Ok(true),
                Some(s) => Err(s.name()),
                None => match cx.modifier::<Suatomty>(i, Field::Size)? {
                    Some(Suatomty::Default) | None => Ok(false),
                    Some(Suatomty::S32) => Ok(true),
                    Some(s) => Err(s.name()),
                },
            };
            let s32 = s32.map_err(|s| cx.unsupported(i, format!("surface atomic type {s}")))?;
            (1, 4, s32)
        }
        _ if typed => {
            use mods::Supm;
            match cx.modifier::<Supm>(i, Field::Mode)? {
                Some(Supm::Default) | None => (4, 0, false),
                Some(m) => return Err(cx.unsupported(i, format!("partial surface mask {m}"))),
            }
        }
        _ => match cx.modifier::<Sudsz>(i, Field::Size)? {
            Some(Sudsz::U8) => (1, 1, false),
            Some(Sudsz::S8) => (1, 1, true),
            Some(Sudsz::U16) => (1, 2, false),
            Some(Sudsz::S16) => (1, 2, true),
            Some(Sudsz::N64) => (2, 8, false),
            Some(Sudsz::N128) => (4, 16, false),
            Some(Sudsz::Default) | None => (1, 4, false),
        },
    };
    // `.BA`: x is a byte offset (PTX `suld.b`/`sust.b`); the image is indexed by texel.
    if cx.modifier::<mods::Suba>(i, Field::Ba)? == Some(mods::Suba::Ba) && bytes > 1 {
        c[0] = cx.shr_c(c[0], (bytes as u32).trailing_zeros());
    }
    let ct = tuple(cx, c);
    let d = ImgDesc {
        dim,
        array,
        words,
        typed,
        slot: s,
        pending: pending.map_or(0, |p| p.0),
    };
    // The pending handle rides after the operation's own arguments.
    let hv = pending.map_or(Value::NONE, |p| p.1);
    let rd = cx.rf(i, Field::Rd);
    match i.opcode() {
        Opcode::Suld => {
            let r = cx.emit(Op::ImageLoad(d), Type::Void, &[ct, hv]);
            if bytes == 1 || bytes == 2 {
                // A narrow texel: its value, zero- or sign-extended per `.U8/.S8/.U16/.S16`.
                let x = cx.emit(Op::Extract(0), Type::U32, &[r]);
                let n = 8 * bytes as u32;
                let x = if signed {
                    cx.sbits(x, 0, n)
                } else {
                    cx.bits(x, 0, n)
                };
                cx.set_reg(regk(rd, 0), x);
            } else {
                let comps: Vec<u8> = (0..words).collect();
                let dests: Vec<u8> = (0..words).map(|k| regk(rd, k)).collect();
                write(cx, r, &comps, &dests);
            }
        }
        Opcode::Sust => {
            let mut v = [z; 4];
            for k in 0..words {
                v[k as usize] = rr(cx, rd, k);
            }
            if bytes == 1 || bytes == 2 {
                v[0] = cx.bits(v[0], 0, 8 * bytes as u32);
            }
            let vt = tuple(cx, v);
            cx.emit(Op::ImageStore(d), Type::Void, &[ct, vt, hv]);
        }
        _ => {
            let cas = form.starts_with("SUATOM_CAS");
            let op = if cas {
                None
            } else {
                let op = if form == "SUATOM_DI" {
                    // 4-bit op at bits 29-32 (the table's field has bits 29-31).
                    (i.bits() >> 29) & 0xf
                } else {
                    i.raw(Field::Op).unwrap_or(0)
                };
                // Min/max are unsigned for an unsigned (no size) SURED/SUATOM.D; the
                // immediate-handle SUATOM has no type field here: unsigned when the facts
                // give the image an unsigned format, else signed.
                let unsigned = if form == "SUATOM_DI" {
                    cx.cfg.gfx.as_ref().is_some_and(|g| {
                        matches!(
                            g.images.get(s as usize),
                            Some(
                                super::layout::ImageFmt::R32ui | super::layout::ImageFmt::Rgba32ui
                            )
                        )
                    })
                } else {
                    !signed
                };
                Some(match op {
                    0 => AtomOp::Add,
                    1 if unsigned => AtomOp::UMin,
                    2 if unsigned => AtomOp::UMax,
                    1 => AtomOp::SMin,
                    2 => AtomOp::SMax,
                    3 => AtomOp::Inc,
                    4 => AtomOp::Dec,
                    5 => AtomOp::And,
                    6 => AtomOp::Or,
                    7 => AtomOp::Xor,
                    8 => AtomOp::Exch,
                    o => return Err(cx.unsupported(i, format!("surface atomic op {o}"))),
                })
            };
            let d = ImgDesc {
                words: 1,
                typed: false,
                ..d
            };
            let (val, cmpv) = if i.opcode() == Opcode::Sured {
                (rr(cx, rd, 0), z)
            } else {
                let rbb = cx.rf(i, Field::Rb);
                if cas {
                    (rr(cx, rbb, 1), rr(cx, rbb, 0))
                } else {
                    (rr(cx, rbb, 0), z)
                }
            };
            let r = cx.emit(Op::ImageAtomic(d, op), Type::U32, &[ct, val, cmpv, hv]);
            if i.opcode() == Opcode::Suatom {
                cx.set_rd(i, r);
            }
        }
    }
    Ok(())
}
