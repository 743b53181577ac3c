//! Koei Tecmo KTGL: shader packages (`SPKG`, `_SPK4100`), G2S containers (`_S2G3000`) and the
//! `_DOK0000` system resources, all holding GLSLC outputs; and the layers they come in: RDB
//! IDRK records (Age of Calamity, [`rdb`]), LINKDATA entries (Three Houses, [`linkdata`]) and
//! KTGL "gz" tables ([`gz`]).

pub mod gz;
pub mod linkdata;
pub mod rdb;
pub mod zlib;

use super::{bnsh, glslc, ContainerReader, Found, Input, Sniff};
use crate::shader::ContainerKind;

/// Magics at +0 of the KTGL containers whose GLSLC outputs are read: G2S, `_DOK0000`, the
/// `_SPK4100` package without G2S, and `SPKG` packages.
pub const MAGICS: [&[u8]; 4] = [b"_S2G3000", b"_DOK0000", b"_SPK4100", b"SPKG"];

/// The registry's KTGL reader: every GLSLC output (docs/formats.md, GLSLC) of a KTGL container
/// or of a buffer decoded from a KTGL "gz" table (LINKDATA entries and loose `*.gz` files also
/// hold map and model archives with packages of their own inside, at offsets not known). A
/// buffer without outputs is read for BNSH, as any other buffer would be.
pub const READER: ContainerReader = ContainerReader {
    name: ContainerKind::Ktgl.as_str(),
    sniff: Sniff::By(takes),
    read: |i| match read(i.bytes) {
        Found::Shaders { hits, .. } if hits.shaders.is_empty() => (bnsh::READER.read)(i),
        found => Ok(found),
    },
};

/// Whether `i` is a KTGL container (by magic) or a decoded KTGL "gz" layer (by its name).
fn takes(i: &Input) -> bool {
    is_container(i.bytes) || i.name.ends_with(gz::LAYER_SUFFIX)
}

/// Whether `b` starts with one of [`MAGICS`].
pub fn is_container(b: &[u8]) -> bool {
    MAGICS.iter().any(|m| b.starts_with(m))
}

/// The GLSLC outputs of `b`, as one KTGL container.
pub fn read(b: &[u8]) -> Found<'static> {
    Found::shaders(ContainerKind::Ktgl, glslc::scan(b))
}
