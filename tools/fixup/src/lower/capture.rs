//! A captured vertex module's capture form (`<key>_g`, docs/geometry.md): its outputs become
//! `Private` variables, and after the shader every output it writes is stored into record
//! gl_VertexIndex of `vertices_in` (the pass runs with rasterization off).

use super::code::{Code, Cx};
use super::iface::{self, Slot};
use super::rewrite;
use super::{record, spill_leaf, Pass};
use crate::Error;
use dmsh_reflect::{LoweredBuffer, Lowering};
use spirv::{BuiltIn, ExecutionModel, StorageClass, Word};

/// The capture form (`vertex_capture`).
pub(super) fn capture(cx: &mut Cx) -> Result<Lowering, Error> {
    let outs = iface::variables(&cx.sp, StorageClass::Output, false)?;
    let (_, shader, _) = cx.sp.entry()?;
    let moved: Vec<(Word, StorageClass)> =
        outs.iter().map(|v| (v.id, StorageClass::Private)).collect();
    rewrite::retype(&mut cx.sp, &moved)?;
    let ids: Vec<Word> = outs.iter().map(|v| v.id).collect();
    rewrite::strip(&mut cx.sp, &ids)?;
    let mut c = Code::new(cx);
    // The record index before the shader runs (it may not read gl_VertexIndex at all).
    let vi = c.builtin_uint(BuiltIn::VertexIndex);
    c.call(shader);
    for v in &outs {
        for lf in &v.leaves {
            let Slot::Record(w) = lf.slot else { continue };
            let dst = c.record_ptr(LoweredBuffer::VerticesIn, vi, w);
            spill_leaf(&mut c, StorageClass::Private, v.id, None, lf, dst)?;
        }
    }
    let main = c.finish(None);
    rewrite::set_entry(&mut cx.sp, ExecutionModel::Vertex, main, |_| true, &[])?;
    rewrite::set_interface(&mut cx.sp);
    Ok(record(Pass::VertexCapture))
}
