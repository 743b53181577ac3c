//! The declarations of each guest texture and image slot, found by the emitter's one scan of
//! the live instructions before emission ([`Finder`]; docs/reflection.md "One declaration per
//! slot").
//!
//! A slot is one SPIR-V variable, so one Metal argument, of the type its accesses need:
//! queries (TXQ) have no shape of their own and take the slot's (the size of a multisampled
//! texture is the multisampled variable's), and a storage image read and written raw and
//! formatted has one sampled type (below). Only a texture sampled with two different shapes
//! (2D and 2D array, shadow and not) needs a second declaration: alias k > 0 of a slot has
//! binding + (k << 16) ([`alias_binding`]) and its own reflection resource with a `view`.

use dmsh_ir::gfx::{TexDim, TexKind, SAMP_SEP, TEX_DYN};
use dmsh_ir::hash::FastState;
use dmsh_ir::lift::{Gfx, ImageFmt};
use dmsh_ir::Op;
use std::collections::{BTreeSet, HashMap};

/// The image type of one texture or image declaration, but for the sampled type (which is
/// the slot's).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Shape {
    /// Dimensionality.
    pub dim: TexDim,
    /// Array texture or image.
    pub array: bool,
    /// Depth comparison (textures).
    pub shadow: bool,
    /// Multisampled (textures).
    pub ms: bool,
}

impl Shape {
    /// The texture type the host binds for it (the reflection's `view`): `1d`, `2d`, `3d`,
    /// `cube`, `buffer`, with `_ms` when multisampled and `_array` for arrays
    /// (`2d_ms_array`).
    pub(crate) fn view(self) -> String {
        let d = match self.dim {
            TexDim::D1 => "1d",
            TexDim::D2 => "2d",
            TexDim::D3 => "3d",
            TexDim::Cube => "cube",
            TexDim::Buffer => "buffer",
        };
        let ms = if self.ms { "_ms" } else { "" };
        let array = if self.array { "_array" } else { "" };
        format!("{d}{ms}{array}")
    }
}

/// The binding of alias `k` of a slot whose first declaration has binding `base`.
pub(crate) fn alias_binding(base: u32, k: u8) -> u32 {
    base + ((k as u32) << 16)
}

/// A storage image slot's declaration.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct ImgDecl {
    /// The format declared (`ImageFormat`): the facts', but r32ui for a slot with atomics
    /// and no 32-bit integer format.
    pub fmt: ImageFmt,
    /// The sampled type is 32-bit float (else 32-bit unsigned integer).
    pub float: bool,
}

/// Every texture and image slot's declarations.
#[derive(Default)]
pub(crate) struct Slots {
    /// Texture (slot, run-time array count) → its shapes, in the order of first use; the
    /// first is the slot's own binding, each further one an alias.
    tex: HashMap<(u16, u8), Vec<Shape>, FastState>,
    /// Image slot → its shapes (as textures) and declaration.
    img: HashMap<u16, (Vec<Shape>, ImgDecl), FastState>,
    /// The texture slots sampled with separate samplers (`SAMP_SEP`).
    pub sep: BTreeSet<u16>,
}

/// What one pass finds of an image slot before its declaration is decided.
#[derive(Default)]
struct ImgUses {
    shapes: Vec<Shape>,
    typed: bool,
    atomic: bool,
}

fn push_new(v: &mut Vec<Shape>, s: Shape) {
    if !v.contains(&s) {
        v.push(s);
    }
}

/// What the scan of the live instructions finds of the slots, before their declarations
/// are decided ([`Finder::finish`]).
#[derive(Default)]
pub(crate) struct Finder {
    tex: HashMap<(u16, u8), Vec<Shape>, FastState>,
    samples_queried: Vec<(u16, u8)>,
    img: HashMap<u16, ImgUses, FastState>,
    sep: BTreeSet<u16>,
}

impl Finder {
    /// Notes one live instruction's operation (in block order: shapes are in the order of
    /// first use).
    #[inline]
    pub(crate) fn note(&mut self, op: &Op) {
        if let Op::Tex(d) = *op {
            if d.samp & SAMP_SEP != 0 {
                self.sep.insert(d.slot);
            }
        }
        match *op {
            Op::Tex(d) if d.slot != TEX_DYN => {
                let key = (d.slot, d.dyn_count);
                let tex = &mut self.tex;
                match d.kind {
                    // An image size query (`ms` marks it): no shape.
                    TexKind::QuerySize if d.ms => {
                        self.img.entry(d.slot).or_default();
                    }
                    TexKind::QuerySize => {
                        tex.entry(key).or_default();
                    }
                    TexKind::QuerySamples => {
                        tex.entry(key).or_default();
                        self.samples_queried.push(key);
                    }
                    _ => {
                        let s = Shape {
                            dim: d.dim,
                            array: d.array,
                            shadow: d.shadow,
                            ms: d.ms,
                        };
                        push_new(tex.entry(key).or_default(), s);
                    }
                }
            }
            Op::ImageLoad(d) | Op::ImageStore(d) | Op::ImageAtomic(d, _) => {
                let u = self.img.entry(d.slot).or_default();
                let s = Shape {
                    dim: d.dim,
                    array: d.array,
                    shadow: false,
                    ms: false,
                };
                push_new(&mut u.shapes, s);
                u.typed |= d.typed;
                u.atomic |= matches!(op, Op::ImageAtomic(..));
            }
            _ => {}
        }
    }

    /// The slots' declarations. `gfx` gives the image formats of the facts.
    pub(crate) fn finish(self, gfx: Option<&Gfx>) -> Slots {
        let Finder {
            mut tex,
            samples_queried,
            img,
            sep,
        } = self;
        // A slot that is only queried: a plain 2D texture, multisampled when its sample
        // count is queried.
        for (k, v) in tex.iter_mut() {
            if v.is_empty() {
                v.push(Shape {
                    dim: TexDim::D2,
                    array: false,
                    shadow: false,
                    ms: samples_queried.contains(k),
                });
            }
        }
        let img = img
            .into_iter()
            .map(|(slot, u)| {
                let facts = gfx.map(|g| g.images[slot as usize % 8]).unwrap_or_default();
                (slot, (u.shapes, img_decl(facts, u.typed, u.atomic)))
            })
            .collect();
        Slots { tex, img, sep }
    }
}

impl Slots {
    /// The shapes of a texture slot (at least one for a slot the function uses).
    pub(crate) fn tex_shapes(&self, slot: u16, count: u8) -> &[Shape] {
        self.tex.get(&(slot, count)).map_or(&[], Vec::as_slice)
    }

    /// The alias index of a texture access's shape (0: the slot's own declaration).
    pub(crate) fn tex_alias(&self, slot: u16, count: u8, s: Shape) -> u8 {
        let v = self.tex_shapes(slot, count);
        v.iter().position(|&x| x == s).unwrap_or(0) as u8
    }

    /// The declaration of an image slot, and the alias index of shape `s` (`None`: the
    /// slot's first shape, for a size query).
    pub(crate) fn img(&self, slot: u16, s: Option<Shape>) -> (Shape, u8, ImgDecl) {
        let plain = Shape {
            dim: TexDim::D2,
            array: false,
            shadow: false,
            ms: false,
        };
        // Only queried: a 2D image.
        let (v, decl) = self
            .img
            .get(&slot)
            .map_or((&[][..], None), |(v, d)| (&v[..], Some(*d)));
        let k = s.and_then(|s| v.iter().position(|&x| x == s)).unwrap_or(0);
        let decl = decl.unwrap_or(img_decl(ImageFmt::Unknown, false, false));
        (v.get(k).copied().unwrap_or(plain), k as u8, decl)
    }
}

/// An image slot's one declaration. A format from the facts decides the sampled type (uint
/// for r32ui, rgba32ui and r32i — whose bits are an int's —, float otherwise), so raw and
/// formatted accesses agree. Atomics need a 32-bit integer texel: a slot with atomics and no
/// r32ui / r32i fact is r32ui (its formatted accesses then move integers, as raw ones do).
/// Otherwise, without a format, a
/// formatted access assumes a float format, and raw accesses read and write the bits of its
/// 32-bit float components (bit casts, exact for r32f, rg32f and rgba32f); a slot only raw
/// has uint texels (exact for 32-bit integer formats).
fn img_decl(facts: ImageFmt, typed: bool, atomic: bool) -> ImgDecl {
    let fmt = match facts {
        ImageFmt::R32ui | ImageFmt::R32i => facts,
        _ if atomic => ImageFmt::R32ui,
        f => f,
    };
    let float = match fmt {
        ImageFmt::R32ui | ImageFmt::Rgba32ui | ImageFmt::R32i => false,
        ImageFmt::Unknown => typed,
        _ => true,
    };
    ImgDecl { fmt, float }
}
