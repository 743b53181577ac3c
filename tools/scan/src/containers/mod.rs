//! One reader per container kind: compression layers, archives, executables, shader containers.
//!
//! Every reader is a [`ContainerReader`] (a name, a cheap `sniff`, a `read`), a constant
//! `READER` of its module with one line in a registry below; `walk.rs` only follows the
//! registries. Adding a container is one module plus one registry line (docs/formats.md,
//! "Adding a container reader").

use std::borrow::Cow;

use crate::error::{ReadError, ReadResult};
use crate::shader::{ContainerKind, Hits};

pub mod bahs;
pub mod bnsh;
pub mod bounded;
pub mod elf;
pub mod glslc;
pub mod kpka;
pub mod ktgl;
pub mod lslg;
pub mod mshd;
pub mod ndsr;
pub mod nro;
pub mod nso;
pub mod oodle;
pub mod sarc;
pub mod sdf;
pub mod uepak;
pub mod unity;
pub mod unityfs;
pub mod ushaderbytecode;
pub mod yaz0;
pub mod zstd;

/// Readers of RomFS buffers (a file, an archive member, a decoded layer), tried in this order:
/// the first whose `sniff` is true reads the buffer. BNSH (found at any offset) takes whatever
/// no other reader claimed, so it stays last.
pub static ROMFS: &[ContainerReader] = &[
    zstd::READER,
    yaz0::READER,
    sarc::READER,
    bahs::READER,
    mshd::READER,
    ndsr::READER,
    kpka::READER,
    sdf::READER,
    ktgl::rdb::READER,
    ktgl::gz::READER,
    ktgl::READER,
    unityfs::READER,
    unity::serialized::READER,
    lslg::READER,
    ushaderbytecode::READER,
    uepak::READER,
    bnsh::READER,
];

/// Readers of an ExeFS main's executable format, tried in this order: the first whose `sniff`
/// is true turns the main into its memory image; when none does, the bytes are the image.
pub static EXECUTABLES: &[ContainerReader] = &[nso::READER, nro::READER, elf::READER];

/// Readers of a main's memory image: every one whose `sniff` is true reads it, in this order.
pub static MAIN_IMAGE: &[ContainerReader] = &[bnsh::READER, glslc::READER, unity::strings::READER];

/// What a reader is given.
#[derive(Debug, Clone, Copy, Default)]
pub struct Input<'b> {
    /// The buffer: a file, an archive member, a decoded layer or a main's image.
    pub bytes: &'b [u8],
    /// The file or member name (the origin path after its last `//`).
    pub name: &'b str,
    /// The most bytes a buffer this reader decodes may have: the layer cap, or what is left of
    /// the file's decompression budget when that is less.
    pub cap: u64,
    /// What is left of the file's decompression budget: the most bytes all the buffers this
    /// reader decodes may have together (an archive of compressed members).
    pub budget: u64,
    /// The profile reads GLSLC outputs in main (`shader_main_glslc`).
    pub glslc_in_main: bool,
    /// KPKA path hashes that a newer PAK of the title holds (skipped); only for a file itself.
    pub superseded: Option<&'b kpka::Superseded>,
    /// The split's Unity state (common strings, borrowed trees), where a split runs.
    pub unity: Option<unity::Scope<'b>>,
}

/// A buffer a reader found inside its input; the scan reads it again, one layer deeper.
#[derive(Debug, Clone)]
pub struct Inner<'b> {
    /// The archive member's name (the origin path gets `//name`), or `None` for a decoded
    /// layer (the path gets `|` and the reader's name: `|zstd`).
    pub member: Option<String>,
    /// A range of the input (borrowed), or decoded bytes (owned, charged to the file's budget).
    pub bytes: Cow<'b, [u8]>,
}

/// What a reader made of its input.
#[derive(Debug)]
pub enum Found<'b> {
    /// Buffers inside the input (a decoded stream, archive members, an executable's image),
    /// and problems that did not stop the reader.
    Inner {
        /// The buffers, in the order their results are reported.
        inner: Vec<Inner<'b>>,
        /// Problems met on the way (each becomes a warning at the input's path).
        problems: Vec<ReadError>,
    },
    /// Shader records, from `opened` containers of one kind.
    Shaders {
        /// The container kind (the `container` column of shader_map.tsv).
        kind: ContainerKind,
        /// Containers read (counted in the scan's summary when non-zero).
        opened: u64,
        /// The shaders, pairs and errors found.
        hits: Hits,
    },
}

impl<'b> Found<'b> {
    /// One decoded layer (the origin path gets `|` and the reader's name).
    pub fn layer(bytes: impl Into<Cow<'b, [u8]>>) -> Self {
        Found::Inner {
            inner: vec![Inner {
                member: None,
                bytes: bytes.into(),
            }],
            problems: Vec::new(),
        }
    }

    /// The same, with `more` problems that did not stop the reader.
    pub fn with_problems(mut self, more: Vec<ReadError>) -> Self {
        match &mut self {
            Found::Inner { problems, .. } => problems.extend(more),
            Found::Shaders { hits, .. } => hits.errors.extend(more),
        }
        self
    }

    /// The shaders of one container of `kind`.
    pub fn shaders(kind: ContainerKind, hits: Hits) -> Self {
        Found::Shaders {
            kind,
            opened: 1,
            hits,
        }
    }
}

/// How a reader recognizes its input, without allocating.
#[derive(Debug, Clone, Copy)]
pub enum Sniff {
    /// These bytes at this offset (the container's magic).
    Magic(usize, &'static [u8]),
    /// A look of the reader's own (the file name, a profile switch, or always).
    By(fn(&Input) -> bool),
}

impl Sniff {
    /// Whether `i` is taken.
    pub fn takes(&self, i: &Input) -> bool {
        match *self {
            Sniff::Magic(at, m) => i.bytes.get(at..).is_some_and(|b| b.starts_with(m)),
            Sniff::By(f) => f(i),
        }
    }
}

/// A container reader: one per container kind, the `READER` of its module, listed in a
/// registry above.
///
/// `read` must follow the scan's rules (docs/formats.md): every field read bounds-checked, no
/// allocation past `Input::cap` or a count checked against the bytes, errors as [`ReadError`]
/// with the offset inside `Input::bytes`; it never panics.
#[derive(Debug, Clone, Copy)]
pub struct ContainerReader {
    /// Short, unique name (`zstd`, `sarc`, `bnsh`, …): the key of "containers opened" for a
    /// reader that finds inner buffers, and the suffix of a decoded layer's path (`|zstd`). A
    /// shader container's name is its [`ContainerKind::as_str`].
    pub name: &'static str,
    /// Whether this reader takes the input: a look at its magic (or name), without allocating.
    pub sniff: Sniff,
    /// Reads the input. An error becomes one warning at the input's path; the scan goes on.
    pub read: for<'b> fn(&Input<'b>) -> ReadResult<Found<'b>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(bytes: &[u8]) -> Input<'_> {
        Input {
            bytes,
            name: "f.bin",
            cap: 1 << 20,
            budget: 1 << 20,
            glslc_in_main: false,
            superseded: None,
            unity: None,
        }
    }

    #[test]
    fn registries_sniff_by_magic_in_order() {
        let first = |reg: &[ContainerReader], b: &[u8]| {
            reg.iter()
                .find(|r| r.sniff.takes(&input(b)))
                .map(|r| r.name)
        };
        let mut nro = [0u8; 0x20];
        nro[0x10..0x14].copy_from_slice(b"NRO0");
        for (b, want) in [
            (&zstd::MAGIC[..], "zstd"),
            (yaz0::MAGIC, "yaz0"),
            (sarc::MAGIC, "sarc"),
            (bahs::MAGIC, "bahs"),
            (mshd::MAGIC, "mshd"),
            (ndsr::MAGIC, "ndsr"),
            (kpka::MAGIC, "kpka"),
            (sdf::MAGIC, "sdf"),
            (ktgl::rdb::RECORD, "rdb"),
            (b"_S2G3000", "ktgl"),
            (unityfs::MAGIC, "unityfs"),
            (lslg::MAGIC, "lslg"),
            (b"\x02\0\0\0 not an archive", "bnsh"),
            (b"anything", "bnsh"),
            (b"", "bnsh"),
        ] {
            assert_eq!(first(ROMFS, b), Some(want));
        }
        for (b, want) in [
            (&nso::MAGIC[..], Some("nso")),
            (&nro[..], Some("nro")),
            (b"\x7fELF", Some("elf")),
            (b"raw", None),
        ] {
            assert_eq!(first(EXECUTABLES, b), want);
        }
        let names = |reg: &[ContainerReader]| reg.iter().map(|r| r.name).collect::<Vec<_>>();
        let mut all = names(ROMFS);
        all.extend(names(EXECUTABLES));
        all.extend(names(MAIN_IMAGE).into_iter().filter(|n| *n != "bnsh"));
        let mut dedup = all.clone();
        dedup.sort_unstable();
        dedup.dedup();
        assert_eq!(all.len(), dedup.len(), "reader names repeat: {all:?}");
        // NDSR is also recognised by agl's file name; GLSLC only where the profile asks.
        let pck = Input {
            name: "agl_ndsr.pck",
            ..input(b"????")
        };
        assert_eq!(
            ROMFS.iter().find(|r| r.sniff.takes(&pck)).map(|r| r.name),
            Some("ndsr")
        );
        let glslc = |on| {
            MAIN_IMAGE
                .iter()
                .filter(|r| {
                    r.sniff.takes(&Input {
                        glslc_in_main: on,
                        ..input(b"")
                    })
                })
                .count()
        };
        assert_eq!((glslc(false), glslc(true)), (1, 2));
    }
}
