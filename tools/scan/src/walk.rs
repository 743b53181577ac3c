//! The recursive scan: open bytes → detect the container → yield members (recursing) or shader
//! records. Each buffer carries its archive path (see `docs/formats.md`, "Origin paths").

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rayon::prelude::*;

use crate::containers::{bahs, bnsh, elf, glslc, mshd, ndsr, nro, nso, sarc, yaz0, zstd};
use crate::error::{ReadError, WarnKind, Warning};
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

    fn decoded(
        &self,
        path: &str,
        codec: &'static str,
        out: Result<Vec<u8>, ReadError>,
        depth: usize,
    ) -> Scan {
        let mut s = Scan::default();
        match out {
            Ok(v) => {
                s.opened(codec);
                self.spend(v.len());
                s = s.merge(self.scan(&v, &format!("{path}|{codec}"), depth + 1));
            }
            Err(e) => s.warn(path, e),
        }
        s
    }

    /// Scans a RomFS buffer (a file or an archive member) found at `path`, `depth` layers deep.
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
        if zstd::is(b) {
            return self.decoded(path, "zstd", zstd::decode(b, self.cap()), depth);
        }
        if yaz0::is(b) {
            return self.decoded(path, "yaz0", yaz0::decode(b, self.cap()), depth);
        }
        if sarc::is(b) {
            match sarc::members(b) {
                Ok(members) => {
                    s.opened("sarc");
                    let inner = members
                        .par_iter()
                        .map(|m| {
                            self.scan(
                                &b[m.range.clone()],
                                &format!("{path}//{}", m.name),
                                depth + 1,
                            )
                        })
                        .reduce(Scan::default, Scan::merge);
                    s = s.merge(inner);
                }
                Err(e) => s.warn(path, e),
            }
            return s;
        }
        let name = path.rsplit("//").next().unwrap_or(path);
        if bahs::is(b) {
            self.take(&mut s, b, path, ContainerKind::Bahs, bahs::read(b));
        } else if mshd::is(b) {
            self.take(&mut s, b, path, ContainerKind::Mshd, mshd::read(b));
        } else if ndsr::is(b, name) {
            self.take(&mut s, b, path, ContainerKind::Ndsr, ndsr::read(b));
        } else {
            self.bnsh_all(&mut s, b, path);
        }
        s
    }

    fn bnsh_all(&self, s: &mut Scan, b: &[u8], path: &str) {
        // The magic alone can be a constant in code; a BNSH also has `grsc` at +0x60 (a
        // candidate cut off before it is still read, to report the truncation).
        for at in bnsh::find_all(b)
            .into_iter()
            .filter(|&at| b.get(at + 0x60..at + 0x64).is_none_or(|g| g == b"grsc"))
        {
            self.take(s, b, path, ContainerKind::Bnsh, bnsh::read(b, at));
        }
    }

    /// Scans an ExeFS main (NSO, NRO, ELF, or a raw image): BNSH anywhere, GLSLC outputs when
    /// the profile asks.
    pub fn scan_main(&self, b: &[u8], path: &str) -> Scan {
        let mut s = Scan::default();
        let owned;
        let (img, layer): (&[u8], &str) = if nso::is(b) {
            match nso::flat_image(b, self.cap()) {
                Ok((img, problems)) => {
                    for p in problems {
                        s.warn(path, p);
                    }
                    s.opened("nso");
                    owned = img;
                    (&owned, "|nso")
                }
                Err(e) => {
                    s.warn(path, e);
                    return s;
                }
            }
        } else if nro::is(b) {
            match nro::flat_image(b) {
                Ok(img) => {
                    s.opened("nro");
                    (img, "|nro")
                }
                Err(e) => {
                    s.warn(path, e);
                    return s;
                }
            }
        } else if elf::is(b) {
            match elf::flat_image(b, self.cap()) {
                Ok(img) => {
                    s.opened("elf");
                    owned = img;
                    (&owned, "|elf")
                }
                Err(e) => {
                    s.warn(path, e);
                    return s;
                }
            }
        } else {
            (b, "")
        };
        let ipath = format!("{path}{layer}");
        self.bnsh_all(&mut s, img, &ipath);
        if self.glslc_in_main {
            self.take(
                &mut s,
                img,
                &ipath,
                ContainerKind::Glslc,
                Ok(glslc::scan(img)),
            );
        }
        s
    }

    fn take(
        &self,
        s: &mut Scan,
        buf: &[u8],
        path: &str,
        kind: ContainerKind,
        hits: Result<Hits, ReadError>,
    ) {
        match hits {
            Ok(h) => {
                let n = if kind == ContainerKind::Glslc {
                    h.shaders.len() as u64
                } else {
                    1
                };
                *s.opened.entry(kind.as_str()).or_default() += n;
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
                    if first {
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
            Err(e) => s.warn(path, e),
        }
    }
}
