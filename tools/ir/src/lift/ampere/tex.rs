//! Ampere textures: the bindless forms NAK emits (`TEX.B`, `TLD.B`, `TLD4.B`, `TXQ.B`). The
//! operand registers are Maxwell's bindless layout (coordinates from `Ra`, array layer first;
//! `Rb` = the handle, then LOD / bias, offsets, depth reference), and the handle becomes a
//! slot through the same binding-layout resolution ([`crate::lift::tex::tex_handle`]). What
//! differs is the destination: two register pairs, the first two written components in `Rd`
//! (bits 16-23) and the rest in `Rd2` (bits 64-71; nvdisasm prints `Rd2` first). Other
//! forms (bound handles, TMML, TXD, surfaces) are reported as not translated yet.

use super::super::{Cx, Result};
use crate::gfx::{TexDim, TexKind, TexLod};
use crate::ir::{Op, Type, Value};
use crate::lift::tex::{coords_from, desc, regk, rr, tex_handle, tuple, write};
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
    if !matches!(form, "TEX_B" | "TLD_B" | "TLD4_B" | "TXQ_B") {
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
        let (s, _, dynamic) = tex_handle(cx, h).map_err(|why| cx.unsupported(i, why))?;
        let kind = if samples {
            TexKind::QuerySamples
        } else {
            TexKind::QuerySize
        };
        let mut d = desc(kind, TexDim::D2, false, s);
        let c = tuple(cx, [z, z, z, z]);
        let e = tuple(cx, [lod, z, z, z]);
        let r = match dynamic {
            Some((n, idx)) => {
                if samples {
                    return Err(cx.unsupported(i, "TXQ TEX_HEADER_TEXTURE_TYPE of a run-time ID"));
                }
                d.dyn_count = n;
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
    let (s, samp, dynamic) = tex_handle(cx, h).map_err(|why| cx.unsupported(i, why))?;
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
    }
    let e = tuple(cx, [lod, dref, off, sample]);
    let r: Value = match dynamic {
        Some((_, idx)) => {
            let g = tuple(cx, [z, z, z, z]);
            cx.emit(Op::Tex(d), Type::Void, &[c, e, g, idx])
        }
        None => cx.emit(Op::Tex(d), Type::Void, &[c, e]),
    };
    let comps = mask_comps(i);
    let ds = dests(cx, i, comps.len());
    write(cx, r, &comps, &ds);
    Ok(())
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
