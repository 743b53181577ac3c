//! Bindless texture handles resolved through phis.
//!
//! The lifter resolves a handle from the instructions before it in its block. A handle read
//! from a register written in another block — before a branch merge, or kept in a loop
//! variable — becomes a [`TEX_PENDING`] texture operation carrying the handle value. After
//! `ssa` and `const_fold` this pass follows the handle through phis (phis feeding phis, loops:
//! a visited set) and bitcasts to the values that define it; when every one resolves, with
//! the lifter's own resolution ([`crate::lift::tex`]), to the same (slot, sampler) — the same
//! handle-bank word, or structurally equal `cbuf word | constant` expressions — the operation
//! gets that slot exactly as a block-local handle would. Otherwise it falls back to the
//! layout's run-time handle arrays (`tex_dyn`, deko3d) as block-local lifting does, or stays
//! pending and [`error`] reports it as an unresolvable handle with the shader key and offset.
//! Functions that keep guest state in variables (`Function::ssa` false) are not traced.

use crate::gfx::{TexKind, TEX_DYN, TEX_PENDING};
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
    /// One record per pending texture operation ([`crate::gfx::TexDesc::samp`] indexes it).
    pub items: Vec<PendingTex>,
}

/// One pending texture operation.
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
    for b in &f.blocks {
        for &v in &b.insts {
            if matches!(f.inst(v).op, Op::Tex(d) if d.slot == TEX_PENDING) {
                todo.push(v);
            }
        }
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
            through_phis(f, &h.layout, inst.args[3])
        } else {
            Err("registers kept in variables (a jump with unknown targets is left)".into())
        };
        match r {
            Ok((slot, samp)) => {
                d.slot = slot;
                d.samp = samp;
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

/// The one (slot, sampler) every value reaching `v` through phis resolves to, else why not.
fn through_phis(f: &Function, layout: &BindingLayout, v: Value) -> Result<(u16, u16), String> {
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
        let r = resolve(view, layout, false, v)?;
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

/// The first texture operation of `f` still pending (not resolved by [`run`], or [`run`] not
/// run), as the lifter's "unresolvable handle" error with the shader key and offset.
pub fn error(f: &Function) -> Option<LiftError> {
    let h = f.handles.as_ref()?;
    for b in &f.blocks {
        for &v in &b.insts {
            let Op::Tex(d) = f.inst(v).op else { continue };
            if d.slot != TEX_PENDING {
                continue;
            }
            let item = h.items.get(d.samp as usize)?;
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
