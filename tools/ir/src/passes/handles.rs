//! Bindless texture and image handles resolved through phis.
//!
//! The lifter resolves a handle from the instructions before it in its block. A handle read
//! from a register written in another block — before a branch merge, or kept in a loop
//! variable — becomes a [`TEX_PENDING`] texture or image operation carrying the handle value. After
//! `ssa` and `const_fold` this pass follows the handle through phis (phis feeding phis, loops:
//! a visited set) and bitcasts to the values that define it; when every one resolves, with
//! the lifter's own resolution ([`crate::lift::tex`]), to the same (slot, sampler) — the same
//! handle-bank word, or structurally equal `cbuf word | constant` expressions — the operation
//! gets that slot exactly as a block-local handle would. Otherwise it falls back to the
//! layout's run-time handle arrays (`tex_dyn`, deko3d) as block-local lifting does, or stays
//! pending and [`error`] reports it as an unresolvable handle with the shader key and offset.
//! Functions that keep guest state in variables (`Function::ssa` false) are not traced.

use crate::gfx::{ImgDesc, TexKind, TEX_DYN, TEX_PENDING};
use crate::ir::{Function, Op, Value};
use crate::lift::layout::BindingLayout;
use crate::lift::tex::{resolve, View};
use crate::lift::LiftError;

/// The handles the lifter left pending in one function.
#[derive(Clone, Debug)]
pub struct Pending {
    /// The binding layout the handles are resolved with.
    pub layout: BindingLayout,
    /// The shader key for error reports.
    pub key: String,
    /// One record per pending texture or image operation ([`crate::gfx::TexDesc::samp`] /
    /// [`crate::gfx::ImgDesc::pending`] index it).
    pub items: Vec<PendingTex>,
}

/// One pending texture or image operation.
#[derive(Clone, Debug)]
pub struct PendingTex {
    /// Byte offset of the instruction.
    pub offset: u32,
    /// Its mnemonic (with the form name).
    pub mnemonic: String,
    /// `tex_dyn` layouts: the run-time array length the operation falls back to (0: none).
    pub dyn_fallback: u8,
    /// Why the pass could not resolve it (`None` until the pass ran).
    pub why: Option<String>,
}

/// Resolves the pending texture operations of `f` (see the module documentation).
pub fn run(f: &mut Function) {
    let Some(h) = f.handles.take() else {
        return;
    };
    let mut h = h;
    let mut todo = Vec::new();
    let mut images = Vec::new();
    for b in &f.blocks {
        for &v in &b.insts {
            match f.inst(v).op {
                Op::Tex(d) if d.slot == TEX_PENDING => todo.push(v),
                Op::ImageLoad(d) | Op::ImageStore(d) | Op::ImageAtomic(d, _)
                    if d.slot == TEX_PENDING =>
                {
                    images.push(v)
                }
                _ => {}
            }
        }
    }
    for v in images {
        image(f, &mut h, v);
    }
    for v in todo {
        let inst = *f.inst(v);
        let Op::Tex(mut d) = inst.op else {
            continue;
        };
        let Some(item) = h.items.get_mut(d.samp as usize) else {
            continue;
        };
        let r = if f.ssa {
            through_phis(f, &h.layout, false, inst.args[3])
        } else {
            Err("registers kept in variables (a jump with unknown targets is left)".into())
        };
        match r {
            Ok((slot, samp)) => {
                d.slot = slot;
                // Size and sample-count queries read the texture only (as the lifter's
                // block-local `slot` drops the sampler).
                d.samp = if matches!(d.kind, TexKind::QuerySize | TexKind::QuerySamples) {
                    0
                } else {
                    samp
                };
                d.dyn_count = 0;
                let i = &mut f.insts[v.index()];
                i.op = Op::Tex(d);
                i.args[3] = Value::NONE;
                if d.kind != TexKind::Grad {
                    i.args[2] = Value::NONE;
                }
            }
            Err(_) if item.dyn_fallback > 0 => {
                d.slot = TEX_DYN;
                d.samp = 0;
                d.dyn_count = item.dyn_fallback;
                f.insts[v.index()].op = Op::Tex(d);
            }
            Err(why) => item.why = Some(why),
        }
    }
    f.handles = Some(h);
}

/// Resolves one pending image operation (its handle is its last argument) to the image slot
/// every value reaching the handle resolves to, else records why not.
fn image(f: &mut Function, h: &mut Pending, v: Value) {
    let inst = *f.inst(v);
    let (Op::ImageLoad(d) | Op::ImageStore(d) | Op::ImageAtomic(d, _)) = inst.op else {
        return;
    };
    let Some(k) = inst.args.iter().rposition(|a| a.is_some()) else {
        return;
    };
    let Some(item) = h.items.get_mut(d.pending as usize) else {
        return;
    };
    let r = if f.ssa {
        through_phis(f, &h.layout, true, inst.args[k])
    } else {
        Err("registers kept in variables (a jump with unknown targets is left)".into())
    };
    match r {
        Ok((slot, _)) => {
            let d = ImgDesc {
                slot,
                pending: 0,
                ..d
            };
            let i = &mut f.insts[v.index()];
            i.op = match i.op {
                Op::ImageLoad(_) => Op::ImageLoad(d),
                Op::ImageStore(_) => Op::ImageStore(d),
                Op::ImageAtomic(_, a) => Op::ImageAtomic(d, a),
                o => o,
            };
            i.args[k] = Value::NONE;
        }
        Err(why) => item.why = Some(why),
    }
}

/// The one (slot, sampler) every value reaching `v` through phis resolves to (as a texture,
/// or as an image handle with `image`), else why not.
fn through_phis(
    f: &Function,
    layout: &BindingLayout,
    image: bool,
    v: Value,
) -> Result<(u16, u16), String> {
    let view = View { f, block: None };
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![v];
    let mut found: Option<(u16, u16)> = None;
    while let Some(v) = stack.pop() {
        let mut v = v;
        while let Op::Bitcast = f.inst(v).op {
            v = f.inst(v).args[0];
        }
        if !seen.insert(v) {
            continue;
        }
        if let Op::Phi(_) = f.inst(v).op {
            stack.extend(f.phi_args(v).iter().map(|p| p.1));
            continue;
        }
        let r = resolve(view, layout, image, v)?;
        match found {
            Some(x) if x != r => {
                return Err(format!(
                    "different handles meet at a phi (slot {:#x} sampler {:#x}, slot {:#x} \
                     sampler {:#x})",
                    x.0, x.1, r.0, r.1
                ))
            }
            _ => found = Some(r),
        }
    }
    found.ok_or_else(|| "a handle with no defining value".into())
}

/// The first texture or image operation of `f` still pending (not resolved by [`run`], or [`run`] not
/// run), as the lifter's "unresolvable handle" error with the shader key and offset.
pub fn error(f: &Function) -> Option<LiftError> {
    let h = f.handles.as_ref()?;
    for b in &f.blocks {
        for &v in &b.insts {
            let idx = match f.inst(v).op {
                Op::Tex(d) if d.slot == TEX_PENDING => d.samp,
                Op::ImageLoad(d) | Op::ImageStore(d) | Op::ImageAtomic(d, _)
                    if d.slot == TEX_PENDING =>
                {
                    d.pending
                }
                _ => continue,
            };
            let item = h.items.get(idx as usize)?;
            let why = item
                .why
                .as_deref()
                .unwrap_or("handle from another block (the handles pass did not run)");
            return Some(LiftError::Unsupported {
                offset: item.offset,
                mnemonic: item.mnemonic.clone(),
                why: format!("shader {}: unresolvable handle: {why}", h.key),
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gfx::{TexDesc, TexDim, TexLod, SAMP_ID};
    use crate::ir::Reg;
    use crate::ir::{BlockId, Terminator, Type};

    /// `c[2][off] | samp` in block b.
    fn handle(f: &mut Function, b: BlockId, off: u64) -> Value {
        let o = f.push(b, Op::Const(off), Type::U32, &[]);
        let w = f.push(b, Op::LoadConst(2), Type::U32, &[o]);
        let s = f.push(b, Op::Const(0x1050_0000), Type::U32, &[]);
        f.push(b, Op::Or, Type::U32, &[w, s])
    }

    /// A loop: entry computes the handle, the header's phi merges it with the body's
    /// recomputation at `body_off`, and the header samples with it.
    fn looped(body_off: u64) -> (Function, Value) {
        let mut f = Function::new();
        let (e, h, l) = (f.add_block(None), f.add_block(None), f.add_block(None));
        let x = f.add_block(None);
        let h0 = handle(&mut f, e, 0x1a0);
        f.blocks[e.index()].term = Terminator::Jump(h);
        let phi = f.make_phi(Type::U32);
        f.blocks[h.index()].insts.push(phi);
        let z = f.push(h, Op::Const(0), Type::U32, &[]);
        let t = f.push(h, Op::Tuple, Type::Void, &[z, z, z, z]);
        let d = TexDesc {
            kind: TexKind::Sample,
            dim: TexDim::D2,
            array: false,
            shadow: false,
            lod: TexLod::Implicit,
            offset: false,
            ms: false,
            ptp: false,
            slot: TEX_PENDING,
            dyn_count: 0,
            samp: 0,
        };
        let tex = f.push(h, Op::Tex(d), Type::Void, &[t, t, t, phi]);
        let c = f.push(h, Op::Get(Reg::pred(0)), Type::Bool, &[]);
        f.blocks[h.index()].term = Terminator::Branch(c, l, x);
        let h1 = handle(&mut f, l, body_off);
        f.blocks[l.index()].term = Terminator::Jump(h);
        f.blocks[x.index()].term = Terminator::Exit;
        *f.phi_args_mut(phi).expect("a phi") = vec![(e, h0), (l, h1)];
        f.ssa = true;
        let mut layout = BindingLayout::nvn(crate::Stage::Fragment, 0x20);
        layout.septex_base = Some(0x168);
        f.handles = Some(Box::new(Pending {
            layout,
            key: "unit".into(),
            items: vec![PendingTex {
                offset: 0x48,
                mnemonic: "TEX (TEX_B)".into(),
                dyn_fallback: 0,
                why: None,
            }],
        }));
        (f, tex)
    }

    #[test]
    fn equal_handles_round_a_loop_resolve() {
        let (mut f, tex) = looped(0x1a0);
        run(&mut f);
        let Op::Tex(d) = f.inst(tex).op else {
            unreachable!()
        };
        // Separate texture (0x1a0 − 0x168) / 8 = 7 → slot 135; sampler ID 0x105.
        assert_eq!((d.slot, d.samp), (128 + 7, SAMP_ID | 0x105));
        assert!(f.inst(tex).args[3].is_none() && f.inst(tex).args[2].is_none());
        assert!(error(&f).is_none());
    }

    #[test]
    fn different_handles_stay_pending_with_an_error() {
        let (mut f, tex) = looped(0x1a8);
        run(&mut f);
        assert!(matches!(f.inst(tex).op, Op::Tex(d) if d.slot == TEX_PENDING));
        let e = error(&f).expect("error").to_string();
        assert!(
            e.contains("0x48") && e.contains("unit") && e.contains("unresolvable"),
            "{e}"
        );
    }

    #[test]
    fn functions_keeping_variables_are_not_traced() {
        let (mut f, tex) = looped(0x1a0);
        f.ssa = false;
        run(&mut f);
        assert!(matches!(f.inst(tex).op, Op::Tex(d) if d.slot == TEX_PENDING));
        let e = error(&f).expect("error").to_string();
        assert!(e.contains("unresolvable") && e.contains("variables"), "{e}");
        // A tex_dyn layout (deko3d) falls back to the run-time arrays, as in the lifter.
        let (mut f, tex) = looped(0x1a8);
        if let Some(h) = f.handles.as_mut() {
            h.items[0].dyn_fallback = 32;
        }
        run(&mut f);
        assert!(matches!(f.inst(tex).op, Op::Tex(d) if d.slot == TEX_DYN && d.dyn_count == 32));
        assert!(error(&f).is_none());
    }
}
