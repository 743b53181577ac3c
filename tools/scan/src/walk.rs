//! The recursive scan: open bytes → detect the container → yield members (recursing) or shader
//! records. Each buffer carries its archive path (see `docs/formats.md`, "Origin paths").
//! Which reader opens a buffer is decided by the registries in [`crate::containers`].

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rayon::prelude::*;

use crate::containers::kpka::Superseded;
use crate::containers::{self, ContainerReader, Found, Input};
use crate::error::{ReadError, ReadResult, WarnKind, Warning};
use crate::shader::{ContainerKind, Hits, Shader};

/// Bounds on what one input may cost. A decompressed buffer is at most `layer_cap` bytes, one
/// input file decompresses at most `file_budget` bytes in all, and archives nest at most
/// `max_depth` deep; so a scan holds at most (worker threads) × `file_budget` decompressed bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Deepest archive nesting followed (the file itself is depth 0).
    pub max_depth: usize,
    /// Largest decompressed buffer (zstd, Yaz0, NSO image) in bytes.
    pub layer_cap: u64,
    /// Most bytes one input file may decompress to, over all its layers.
    pub file_budget: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 12,
            layer_cap: 1 << 30,
            file_budget: 4 << 30,
        }
    }
}

/// What a scan found: shaders with origins, pairs, warnings and counts.
#[derive(Debug, Default)]
pub struct Scan {
    /// Every shader found (duplicates included).
    pub shaders: Vec<Shader>,
    /// (vertex, fragment) pairs from containers.
    pub pairs: Vec<(String, String)>,
    /// Problems met; the scan went on.
    pub warnings: Vec<Warning>,
    /// Containers and layers opened, by kind name (`zstd`, `sarc`, `bnsh`, …).
    pub opened: BTreeMap<&'static str, u64>,
    /// Input files read.
    pub files: u64,
    /// Input bytes read.
    pub bytes: u64,
}

impl Scan {
    /// Merges another scan's results into this one.
    pub fn merge(mut self, mut o: Scan) -> Scan {
        self.shaders.append(&mut o.shaders);
        self.pairs.append(&mut o.pairs);
        self.warnings.append(&mut o.warnings);
        for (k, v) in o.opened {
            *self.opened.entry(k).or_default() += v;
        }
        self.files += o.files;
        self.bytes += o.bytes;
        self
    }

    fn opened(&mut self, kind: &'static str) {
        *self.opened.entry(kind).or_default() += 1;
    }

    fn warn(&mut self, path: &str, e: ReadError) {
        self.warnings.push(e.at(path));
    }
}

/// Keys found so far in a split (shared by every file's scan).
pub type Seen = std::sync::Mutex<std::collections::HashSet<String>>;

/// One input file being scanned: its source, limits and remaining decompression budget.
pub struct FileScan<'a> {
    limits: &'a Limits,
    seen: Option<&'a Seen>,
    superseded: Option<&'a Superseded>,
    unity: Option<&'a containers::unity::Shared>,
    glslc_in_main: bool,
    source: u32,
    source_name: Arc<str>,
    budget: AtomicU64,
}

impl<'a> FileScan<'a> {
    /// Starts the scan of one input file from source `source` (named `source_name`).
    pub fn new(
        limits: &'a Limits,
        glslc_in_main: bool,
        source: u32,
        source_name: Arc<str>,
    ) -> Self {
        FileScan {
            limits,
            seen: None,
            superseded: None,
            unity: None,
            glslc_in_main,
            source,
            source_name,
            budget: AtomicU64::new(limits.file_budget),
        }
    }

    /// Shares a set of keys already found across files, so only the first find of each key
    /// copies its bytes (the others keep only their origin).
    pub fn with_seen(mut self, seen: &'a Seen) -> Self {
        self.seen = Some(seen);
        self
    }

    /// The KPKA entries of this file that a newer PAK of the title replaces (split's
    /// cross-file rule, [`containers::kpka::superseded`]): the file's own PAK skips them.
    pub fn with_superseded(mut self, s: &'a Superseded) -> Self {
        self.superseded = Some(s);
        self
    }

    /// Shares the split's Unity state (common strings, trees, the second pass's files).
    pub fn with_unity(mut self, u: &'a containers::unity::Shared) -> Self {
        self.unity = Some(u);
        self
    }

    /// The scan of shader records found outside a buffer walk (the Unity second pass) at
    /// `path`; their pieces hold their own bytes.
    pub fn hits(&self, path: &str, kind: ContainerKind, opened: u64, hits: Hits) -> Scan {
        let mut s = Scan::default();
        self.take(&mut s, &[], path, kind, opened, hits);
        s
    }

    fn cap(&self) -> u64 {
        self.limits
            .layer_cap
            .min(self.budget.load(Ordering::Relaxed))
    }

    fn spend(&self, n: usize) {
        let _ = self
            .budget
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                Some(b.saturating_sub(n as u64))
            });
    }

    fn input<'b>(&'b self, bytes: &'b [u8], path: &'b str) -> Input<'b> {
        Input {
            bytes,
            name: path.rsplit("//").next().unwrap_or(path),
            cap: self.cap(),
            budget: self.budget.load(Ordering::Relaxed),
            glslc_in_main: self.glslc_in_main,
            superseded: None,
            unity: self.unity.map(|shared| containers::unity::Scope {
                shared,
                source: self.source,
                source_name: &self.source_name,
                path,
            }),
        }
    }

    /// Scans a RomFS buffer (a file or an archive member) found at `path`, `depth` layers deep:
    /// the first reader of [`containers::ROMFS`] that sniffs it reads it.
    pub fn scan(&self, b: &[u8], path: &str, depth: usize) -> Scan {
        let mut s = Scan::default();
        if depth > self.limits.max_depth {
            s.warn(
                path,
                ReadError::new(
                    WarnKind::DepthCap,
                    0,
                    format!("more than {} nested layers", self.limits.max_depth),
                ),
            );
            return s;
        }
        let input = Input {
            superseded: self.superseded.filter(|_| depth == 0),
            ..self.input(b, path)
        };
        if let Some(r) = containers::ROMFS.iter().find(|r| r.sniff.takes(&input)) {
            self.apply(&mut s, r, &input, path, depth, Then::Romfs);
        }
        s
    }

    /// Scans an ExeFS main: the first reader of [`containers::EXECUTABLES`] that sniffs it
    /// (NSO, NRO, ELF) gives its image, else the bytes are the image; then every reader of
    /// [`containers::MAIN_IMAGE`] that sniffs the image reads it (BNSH anywhere, GLSLC outputs
    /// when the profile asks).
    pub fn scan_main(&self, b: &[u8], path: &str) -> Scan {
        let input = self.input(b, path);
        match containers::EXECUTABLES
            .iter()
            .find(|r| r.sniff.takes(&input))
        {
            Some(r) => {
                let mut s = Scan::default();
                self.apply(&mut s, r, &input, path, 0, Then::MainImage);
                s
            }
            None => self.scan_image(b, path, 0),
        }
    }

    fn scan_image(&self, img: &[u8], path: &str, depth: usize) -> Scan {
        let mut s = Scan::default();
        let input = self.input(img, path);
        for r in containers::MAIN_IMAGE
            .iter()
            .filter(|r| r.sniff.takes(&input))
        {
            self.apply(&mut s, r, &input, path, depth, Then::Romfs);
        }
        s
    }

    /// Runs reader `r` on `input` (found at `path`, `depth` layers deep) and adds what it
    /// found to `s`: shader records, or inner buffers scanned as `then` says, in parallel.
    fn apply(
        &self,
        s: &mut Scan,
        r: &ContainerReader,
        input: &Input,
        path: &str,
        depth: usize,
        then: Then,
    ) {
        let found = self.found(r.name, (r.read)(input), input.bytes, path, depth, then);
        *s = std::mem::take(s).merge(found);
    }

    /// Scans what a reader outside the registries found in `b` at `path`, as a reader named
    /// `name` would have: the members of a LINKDATA part of `DATA1.bin` (see `split.rs`).
    pub fn scan_found(
        &self,
        b: &[u8],
        path: &str,
        name: &'static str,
        found: ReadResult<Found>,
    ) -> Scan {
        self.found(name, found, b, path, 0, Then::Romfs)
    }

    /// What reader `name` found in `bytes` (at `path`, `depth` layers deep): shader records, or
    /// inner buffers scanned as `then` says, in parallel.
    fn found(
        &self,
        name: &'static str,
        found: ReadResult<Found>,
        bytes: &[u8],
        path: &str,
        depth: usize,
        then: Then,
    ) -> Scan {
        let mut s = Scan::default();
        match found {
            Err(e) => s.warn(path, e),
            Ok(Found::Shaders { kind, opened, hits }) => {
                self.take(&mut s, bytes, path, kind, opened, hits)
            }
            Ok(Found::Inner { inner, problems }) => {
                for p in problems {
                    s.warn(path, p);
                }
                s.opened(name);
                for i in &inner {
                    if let Cow::Owned(v) = &i.bytes {
                        self.spend(v.len());
                    }
                }
                let found = inner
                    .par_iter()
                    .map(|i| {
                        let p = match &i.member {
                            Some(m) => format!("{path}//{m}"),
                            None => format!("{path}|{name}"),
                        };
                        match then {
                            Then::Romfs => self.scan(&i.bytes, &p, depth + 1),
                            Then::MainImage => self.scan_image(&i.bytes, &p, depth),
                        }
                    })
                    .reduce(Scan::default, Scan::merge);
                s = s.merge(found);
            }
        }
        s
    }

    /// Adds a container's shader records to `s`; only the first find of a key copies its bytes.
    fn take(
        &self,
        s: &mut Scan,
        buf: &[u8],
        path: &str,
        kind: ContainerKind,
        opened: u64,
        h: Hits,
    ) {
        if opened > 0 {
            *s.opened.entry(kind.as_str()).or_default() += opened;
        }
        let p: Arc<str> = Arc::from(path);
        for e in h.errors {
            s.warn(path, e);
        }
        s.pairs.extend(h.pairs);
        s.shaders.extend(h.shaders.into_iter().map(|mut hit| {
            let first = match self.seen {
                Some(seen) => seen
                    .lock()
                    .map(|mut set| set.insert(hit.piece.key.clone()))
                    .unwrap_or(true),
                None => true,
            };
            // Readers that decode (Unity blobs) hand over pieces holding their bytes.
            if !first {
                hit.piece.control = Vec::new();
                hit.piece.code = Vec::new();
            } else if hit.piece.control.is_empty() {
                hit.piece.fill(buf);
            }
            Shader {
                piece: hit.piece,
                kind,
                source: self.source,
                source_name: self.source_name.clone(),
                path: p.clone(),
                offset: hit.offset,
                index: hit.index,
            }
        }));
    }
}

/// Where the buffers a reader finds inside its input are scanned next.
#[derive(Debug, Clone, Copy)]
enum Then {
    /// With the RomFS registry, one layer deeper (decoded layers, archive members).
    Romfs,
    /// As a main's image (what an executable reader decoded).
    MainImage,
}
