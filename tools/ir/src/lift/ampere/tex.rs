//! Ampere textures: the bindless forms NAK emits (`TEX.B`, `TLD.B`, `TLD4.B`, `TXQ.B`,
//! `TMML.B`, `TXD.B`). The operand registers are Maxwell's bindless layout (coordinates from
//! `Ra`, array layer first; `Rb` = the handle, then LOD / bias, offsets, depth reference;
//! `TXD.B`: the handle in `Ra`, derivatives in `Rb`), and the handle becomes a
//! slot through the same binding-layout resolution ([`crate::lift::tex::tex_handle`]). What
//! differs is the destination: two register pairs, the first two written components in `Rd`
//! (bits 16-23) and the rest in `Rd2` (bits 64-71; nvdisasm prints `Rd2` first). Surfaces:
//! the register-handle forms (handle in `Rc`). Other forms (bound handles, `TXD.AOFFI`,
//! `TLD4.PTP`, partial surface masks) are reported as not translated yet.

use super::super::{Cx, Result};
use crate::gfx::{TexDim, TexKind, TexLod};
use crate::ir::{Op, Type, Value};
use crate::lift::tex::{coords_from, desc, regk, rr, tex_handle, tuple, txq_handle, write};
use dmsh_isa::ampere::{mods, Instr, Opcode};
use dmsh_isa::Field;

/// (dimension, array) of a `TEXDIM` / `TLDDIM` value (1D, 2D, 3D, CUBE, ARRAY_1D, ARRAY_2D,
/// -, ARRAY_CUBE).
fn dim(raw: u64) -> Option<(TexDim, bool)> {
    Some(match raw {
        0 => (TexDim::D1, false),
        1 => (TexDim::D2, false),
        2 => (TexDim::D3, false),
        3 => (TexDim::Cube, false),
        4 => (TexDim::D1, true),
        5 => (TexDim::D2, true),
        7 => (TexDim::Cube, true),
        _ => return None,
    })
}

/// The destination registers of the k-th written component: `Rd`, `Rd+1`, then `Rd2`,
/// `Rd2+1`.
fn dests(cx: &Cx, i: &Instr, n: usize) -> Vec<u8> {
    let rd = cx.rf(i, Field::Rd);
    let rd2 = i.reg(Field::Rd2).map_or(255, |r| r.0);
    (0..n)
        .map(|k| match k {
            0 | 1 => regk(rd, k as u8),
            _ => regk(rd2, k as u8 - 2),
        })
        .collect()
}

/// The components the write mask enables.
fn mask_comps(i: &Instr) -> Vec<u8> {
    let m = i.raw(Field::WriteMask).unwrap_or(0xf) as u8;
    (0..4).filter(|c| m & (1 << c) != 0).collect()
}

/// Lifts one texture instruction.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    let form = i.form_name();
    if matches!(
        form,
        "SULD_P_R" | "SUST_P_R" | "SULD_D_R" | "SUST_D_R" | "SURED_R" | "SUATOM_R" | "SUATOM_CAS_R"
    ) {
        return surface(cx, i);
    }
    if form == "TXD_B" {
        return txd(cx, i);
    }
    if !matches!(form, "TEX_B" | "TLD_B" | "TLD4_B" | "TXQ_B" | "TMML_B") {
        return Err(cx.unsupported(i, "not translated yet"));
    }
    let z = cx.c32(0);
    let ra = cx.rf(i, Field::Ra);
    let rb = cx.rf(i, Field::Rb);
    if i.opcode() == Opcode::Txq {
        // TXQ.B Rd2, Rd, Ra: the handle in Ra, the LOD in Ra+1.
        let samples = match cx.modifier::<mods::Txqmode>(i, Field::Mode)? {
            Some(mods::Txqmode::TexHeaderDimension) => false,
            Some(mods::Txqmode::TexHeaderTextureType) => true,
            m => {
                let m = m.map_or("", mods::Txqmode::name);
                return Err(cx.unsupported(i, format!("TXQ {m}")));
            }
        };
        let h = rr(cx, ra, 0);
        let lod = rr(cx, ra, 1);
        let (image, (s, _, dynamic)) =
            txq_handle(cx, h, &|| what(i)).map_err(|why| cx.unsupported(i, why))?;
        let kind = if samples {
            if image {
                return Err(cx.unsupported(i, "TXQ TEX_HEADER_TEXTURE_TYPE of an image"));
            }
            TexKind::QuerySamples
        } else {
            TexKind::QuerySize
        };
        let mut d = desc(kind, TexDim::D2, false, s);
        d.ms = image; // marks an image query for the back end
        let c = tuple(cx, [z, z, z, z]);
        let e = tuple(cx, [lod, z, z, z]);
        let r = match dynamic {
            Some((n, idx)) => {
                if samples {
                    return Err(cx.unsupported(i, "TXQ TEX_HEADER_TEXTURE_TYPE of a run-time ID"));
                }
                d.dyn_count = n;
                cx.f.tex_arrays = true;
                let g = tuple(cx, [z, z, z, z]);
                cx.emit(Op::Tex(d), Type::Void, &[c, e, g, idx])
            }
            None => cx.emit(Op::Tex(d), Type::Void, &[c, e]),
        };
        let comps = mask_comps(i);
        let ds = dests(cx, i, comps.len());
        write(cx, r, &comps, &ds);
        return Ok(());
    }
    let Some((dm, array)) = dim(i.raw(Field::TexType).unwrap_or(1)) else {
        return Err(cx.unsupported(i, "texture type"));
    };
    let h = rr(cx, rb, 0);
    let meta = if rb == 255 { 255 } else { rb + 1 };
    let (s, samp, dynamic) =
        tex_handle(cx, h, &|| what(i)).map_err(|why| cx.unsupported(i, why))?;
    let (c, _) = coords_from(cx, ra, dm, array);
    let mut d = desc(TexKind::Sample, dm, array, s);
    d.samp = samp;
    let mut m = 0u8;
    let mut take = |cx: &mut Cx| {
        let v = rr(cx, meta, m);
        m += 1;
        v
    };
    let (mut lod, mut off, mut dref, mut sample) = (z, z, z, z);
    match i.opcode() {
        Opcode::Tex => {
            use mods::Texlod as L;
            d.lod = match cx.modifier::<L>(i, Field::Lod)? {
                Some(L::Lz) => TexLod::Zero,
                Some(L::Lb) => TexLod::Bias,
                Some(L::Ll) => TexLod::Level,
                Some(L::Default) | None => TexLod::Implicit,
                Some(l) => return Err(cx.unsupported(i, format!("TEX{}", l.name()))),
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
            d.lod = match cx.modifier::<mods::Tldlod>(i, Field::Lod)? {
                Some(mods::Tldlod::Ll) => {
                    lod = take(cx);
                    TexLod::Level
                }
                _ => TexLod::Zero,
            };
            if i.flag(Field::Aoffi) {
                d.offset = true;
                off = take(cx);
            }
            if i.flag(Field::Ms) {
                d.ms = true;
                sample = take(cx);
            }
            let buffers = cx.cfg.gfx.as_ref().map_or(0, |g| g.texel_buffers);
            if d.dim == TexDim::D1 && !array && s < 32 && buffers >> s & 1 != 0 {
                d.dim = TexDim::Buffer;
            }
        }
        Opcode::Tmml => d.kind = TexKind::QueryLod,
        _ => {
            // TLD4: the component, offsets (`.AOFFI`; `.PTP` not yet), depth compare.
            d.kind = TexKind::Gather(i.get(Field::Component).unwrap_or(0) as u8);
            match i.raw(Field::Aoffi).unwrap_or(0) {
                0 => {}
                1 => {
                    d.offset = true;
                    off = take(cx);
                }
                _ => return Err(cx.unsupported(i, "TLD4.PTP")),
            }
            if i.flag(Field::Dc) {
                d.shadow = true;
                dref = take(cx);
            }
        }
    }
    if let Some((n, _)) = dynamic {
        d.dyn_count = n;
        cx.f.tex_arrays = true;
    }
    let e = tuple(cx, [lod, dref, off, sample]);
    let r: Value = match dynamic {
        Some((_, idx)) => {
            let g = tuple(cx, [z, z, z, z]);
            cx.emit(Op::Tex(d), Type::Void, &[c, e, g, idx])
        }
        None => cx.emit(Op::Tex(d), Type::Void, &[c, e]),
    };
    let mut comps = mask_comps(i);
    if d.kind == TexKind::QueryLod {
        // TMML writes two values (clamped and unclamped LOD).
        comps.retain(|&c| c < 2);
    }
    let ds = dests(cx, i, comps.len());
    write(cx, r, &comps, &ds);
    Ok(())
}

/// `TXD.B Rd2, Rd, Ra, Rb`: as on Maxwell, the handle is Ra with the coordinates after it
/// and Rb holds the derivatives (d/dx, d/dy of each coordinate, 1D and 2D; `.AOFFI` not
/// yet).
fn txd(cx: &mut Cx, i: &Instr) -> Result<()> {
    // TXDDIM: 1D, 2D, -, -, ARRAY_1D, ARRAY_2D.
    let (dm, array) = match i.raw(Field::TexType).unwrap_or(1) {
        0 => (TexDim::D1, false),
        1 => (TexDim::D2, false),
        4 => (TexDim::D1, true),
        5 => (TexDim::D2, true),
        t => return Err(cx.unsupported(i, format!("TXD type {t}"))),
    };
    if i.flag(Field::Aoffi) {
        return Err(cx.unsupported(i, "TXD.AOFFI"));
    }
    let z = cx.c32(0);
    let ra = cx.rf(i, Field::Ra);
    let rb = cx.rf(i, Field::Rb);
    let h = rr(cx, ra, 0);
    let (s, samp, dynamic) =
        tex_handle(cx, h, &|| what(i)).map_err(|why| cx.unsupported(i, why))?;
    let (c, _) = coords_from(cx, regk(ra, 1), dm, array);
    let mut d = desc(TexKind::Grad, dm, array, s);
    d.samp = samp;
    let mut g = [z; 4];
    for k in 0..dm.coords().min(2) as u8 {
        g[2 * k as usize] = rr(cx, rb, 2 * k);
        g[2 * k as usize + 1] = rr(cx, rb, 2 * k + 1);
    }
    let g = tuple(cx, g);
    let e = tuple(cx, [z, z, z, z]);
    let r = match dynamic {
        Some((n, idx)) => {
            d.dyn_count = n;
            cx.f.tex_arrays = true;
            cx.emit(Op::Tex(d), Type::Void, &[c, e, g, idx])
        }
        None => cx.emit(Op::Tex(d), Type::Void, &[c, e, g]),
    };
    let comps = mask_comps(i);
    let ds = dests(cx, i, comps.len());
    write(cx, r, &comps, &ds);
    Ok(())
}

/// The register-handle surface forms (`SULD`, `SUST`, `SURED`, `SUATOM`; the handle in `Rc`,
/// coordinates from `Ra` with the array layer after them, as on Maxwell).
fn surface(cx: &mut Cx, i: &Instr) -> Result<()> {
    use crate::gfx::ImgDesc;
    use crate::ir::AtomOp;
    let form = i.form_name();
    let rc = cx.rf(i, Field::Rc);
    let h = rr(cx, rc, 0);
    let (s, pending) =
        crate::lift::tex::image_handle(cx, h, &|| what(i)).map_err(|why| cx.unsupported(i, why))?;
    // SUDIM: 1D, 1D_BUFFER, 1D_ARRAY, 2D, 2D_ARRAY, 3D.
    let (dm, array) = match i.raw(Field::TexType).unwrap_or(3) {
        0 => (TexDim::D1, false),
        1 => (TexDim::Buffer, false),
        2 => (TexDim::D1, true),
        3 => (TexDim::D2, false),
        4 => (TexDim::D2, true),
        5 => (TexDim::D3, false),
        t => return Err(cx.unsupported(i, format!("surface type {t}"))),
    };
    let z = cx.c32(0);
    let ra = cx.rf(i, Field::Ra);
    let n = dm.coords() as u8;
    let mut c = [z; 4];
    for k in 0..n {
        c[k as usize] = rr(cx, ra, k);
    }
    if array {
        c[3] = rr(cx, ra, n);
    }
    let ct = tuple(cx, c);
    let typed = form.starts_with("SULD_P") || form.starts_with("SUST_P");
    let words = if typed {
        // SUMASK: only the full mask (`_`, every component) is translated.
        match i.raw(Field::Mode).unwrap_or(15) {
            15 => 4,
            m => return Err(cx.unsupported(i, format!("partial surface mask {m}"))),
        }
    } else if form.starts_with("SULD_D") || form.starts_with("SUST_D") {
        // MEMSZ: .U8 .S8 .U16 .S16 _ .64 .128.
        match i.raw(Field::Size).unwrap_or(4) {
            4 => 1,
            5 => 2,
            6 => 4,
            sz => return Err(cx.unsupported(i, format!("narrow surface access {sz}"))),
        }
    } else {
        1
    };
    let d = ImgDesc {
        dim: dm,
        array,
        words,
        typed,
        slot: s,
        pending: pending.map_or(0, |p| p.0),
    };
    // The pending handle rides after the operation's own arguments.
    let handle = pending.map_or(Value::NONE, |p| p.1);
    match i.opcode() {
        Opcode::Suld => {
            let r = cx.emit(Op::ImageLoad(d), Type::Void, &[ct, handle]);
            let comps: Vec<u8> = (0..words).collect();
            let rd = cx.rf(i, Field::Rd);
            let ds: Vec<u8> = (0..words).map(|k| regk(rd, k)).collect();
            write(cx, r, &comps, &ds);
            if let Some(p) = i.pred(Field::Pd) {
                let t = cx.cbool(true);
                cx.set_pred(p.0, t);
            }
        }
        Opcode::Sust => {
            let rb = cx.rf(i, Field::Rb);
            let mut v = [z; 4];
            for k in 0..words {
                v[k as usize] = rr(cx, rb, k);
            }
            let vt = tuple(cx, v);
            cx.emit(Op::ImageStore(d), Type::Void, &[ct, vt, handle]);
        }
        _ => {
            // SUATOMTY: unsigned (no size) or `.S32`.
            let signed = match i.raw(Field::Size).unwrap_or(0) {
                0 => false,
                1 => true,
                t => return Err(cx.unsupported(i, format!("surface atomic type {t}"))),
            };
            let cas = form == "SUATOM_CAS_R";
            let op = if cas {
                None
            } else {
                Some(match i.raw(Field::Op).unwrap_or(0) {
                    0 => AtomOp::Add,
                    1 if signed => AtomOp::SMin,
                    2 if signed => AtomOp::SMax,
                    1 => AtomOp::UMin,
                    2 => AtomOp::UMax,
                    3 => AtomOp::Inc,
                    4 => AtomOp::Dec,
                    5 => AtomOp::And,
                    6 => AtomOp::Or,
                    7 => AtomOp::Xor,
                    8 => AtomOp::Exch,
                    o => return Err(cx.unsupported(i, format!("surface atomic op {o}"))),
                })
            };
            let rb = cx.rf(i, Field::Rb);
            // CAS: the compare value in Rb, the new value in Rb+1 (Maxwell's order).
            let (val, cmpv) = if cas {
                (rr(cx, rb, 1), rr(cx, rb, 0))
            } else {
                (rr(cx, rb, 0), z)
            };
            let r = cx.emit(Op::ImageAtomic(d, op), Type::U32, &[ct, val, cmpv, handle]);
            if i.opcode() == Opcode::Suatom {
                cx.set_rd(i, r);
            }
        }
    }
    Ok(())
}

/// An instruction as a pending handle's report names it: `SULD (SULD_P_R)`.
fn what(i: &Instr) -> String {
    format!("{} ({})", i.opcode().name(), i.form_name())
}

#[cfg(test)]
mod tests {
    use dmsh_isa::ampere::decode;
    use dmsh_isa::Field;

    /// fs_tex2d_basic.frag sm86 0x0080 `TEX.B R4, R6, R2, R0, 2D` (tests/corpus/nak README
    /// §4.3: red/green in R6/R7, the register of bits 16-23): `Rd` is R6, `Rd2` R4.
    #[test]
    fn destination_pairs_match_the_listing() {
        let i = decode(0x000e0c00001e0f042800000002067361).unwrap();
        assert_eq!(i.reg(Field::Rd).map(|r| r.0), Some(6));
        assert_eq!(i.reg(Field::Rd2).map(|r| r.0), Some(4));
        assert_eq!(i.reg(Field::Ra).map(|r| r.0), Some(2));
        assert_eq!(i.reg(Field::Rb).map(|r| r.0), Some(0));
        assert_eq!(i.raw(Field::TexType), Some(1), "2D");
    }
}
