//! Unity: serialized files (the player's own files and a bundle's members) with Shader objects
//! (class 48) read through their type trees, Unity's common string table from a main, and the
//! second pass for files without type trees (docs/formats.md, "Unity"). UnityFS bundles are
//! the `unityfs` reader; they yield the serialized files as members.
//!
//! Two things cross files, so they go through a [`Shared`] state a split gives every reader
//! ([`Scope`] in [`Input::unity`](super::Input)): the common string table (read from a main by
//! [`strings::READER`]) and the Shader trees by type hash. What cannot be read in the first
//! pass (a tree naming common strings before the table is known, or a file without type
//! trees) is kept and read by [`Shared::second_pass`] once every file has been scanned.

pub mod cursor;
pub mod serialized;
pub mod shader;
pub mod strings;
pub mod tree;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::{ReadError, WarnKind};
use crate::shader::Hits;

/// Unity's common string table: NUL-separated names, indexed by byte offset.
#[derive(Debug, Clone)]
pub struct CommonStrings {
    /// The table's bytes, from its first string (`AABB`) to its last NUL.
    pub bytes: Vec<u8>,
}

impl CommonStrings {
    /// The bytes from offset `off` (a name and what follows), if inside the table.
    pub fn get(&self, off: u32) -> Option<&[u8]> {
        self.bytes.get(off as usize..)
    }
}

/// Where a reader's input came from, for what is kept for the second pass.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'b> {
    /// The split's shared Unity state.
    pub shared: &'b Shared,
    /// Input list position of the file.
    pub source: u32,
    /// Name of the input (`romfs0`, …).
    pub source_name: &'b Arc<str>,
    /// The buffer's origin path (with archive nesting).
    pub path: &'b str,
}

/// Shader objects of one serialized file kept for the second pass.
#[derive(Debug, Clone)]
pub struct Deferred {
    /// Input list position.
    pub source: u32,
    /// Name of the input.
    pub source_name: Arc<str>,
    /// Origin path of the serialized file.
    pub path: String,
    /// The Shader type's hash (the key a file without trees borrows by).
    pub hash: [u8; 16],
    /// The file's own Shader tree blob (read once the common string table is known), or none.
    pub tree: Option<Vec<u8>>,
    /// Serialized-file version.
    pub version: u32,
    /// Big endian data.
    pub be: bool,
    /// (path ID, offset in the file, object bytes) of each Shader object.
    pub objects: Vec<(i64, usize, Vec<u8>)>,
}

/// What the Unity readers of one split share: the common string table, the Shader trees by
/// type hash, and what waits for the second pass.
#[derive(Debug, Default)]
pub struct Shared {
    /// The common string table, once a main gave it.
    pub common: OnceLock<CommonStrings>,
    /// Shader type trees by type hash (from files that carry them).
    pub trees: Mutex<HashMap<[u8; 16], Arc<tree::Tree>>>,
    /// Files waiting for the second pass.
    pub deferred: Mutex<Vec<Deferred>>,
    /// Bytes kept in `deferred`.
    pub kept: std::sync::atomic::AtomicU64,
}

/// Most bytes of Shader objects the first pass keeps for the second.
pub const KEEP_CAP: u64 = 2 << 30;

/// Results of the second pass for one serialized file.
#[derive(Debug)]
pub struct Borrowed {
    /// Input list position.
    pub source: u32,
    /// Name of the input.
    pub source_name: Arc<str>,
    /// Origin path.
    pub path: String,
    /// Shader objects read.
    pub opened: u64,
    /// What they held, and problems.
    pub hits: Hits,
}

impl Shared {
    /// Notes the Shader tree of a type hash (the first one seen stays).
    pub fn add_tree(&self, hash: [u8; 16], t: &Arc<tree::Tree>) {
        if let Ok(mut m) = self.trees.lock() {
            m.entry(hash).or_insert_with(|| t.clone());
        }
    }

    /// Keeps `d` for the second pass, unless that passes [`KEEP_CAP`].
    pub fn defer(&self, d: Deferred) -> Result<(), ReadError> {
        let n: u64 = d.objects.iter().map(|o| o.2.len() as u64).sum();
        let before = self.kept.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        if before + n > KEEP_CAP {
            return Err(ReadError::new(
                WarnKind::SizeCap,
                0,
                format!("Shader objects kept for the second pass pass {KEEP_CAP:#x} bytes"),
            ));
        }
        if let Ok(mut v) = self.deferred.lock() {
            v.push(d);
        }
        Ok(())
    }

    /// The second pass: files whose own trees needed the common string table first (their trees
    /// then join the borrowable ones), then files without type trees, each through the tree
    /// of its Shader type hash. `cap` bounds each decoded blob.
    pub fn second_pass(&self, cap: u64) -> Vec<Borrowed> {
        let mut all = std::mem::take(&mut *self.deferred.lock().unwrap_or_else(|e| e.into_inner()));
        // Deterministic: own trees first, then by path.
        all.sort_by(|a, b| {
            (a.tree.is_none(), a.source, &a.path).cmp(&(b.tree.is_none(), b.source, &b.path))
        });
        let mut out = Vec::new();
        for d in all {
            let mut hits = Hits::default();
            let t = match &d.tree {
                Some(blob) => {
                    let mut c = cursor::Cursor::new(blob, 0, d.be);
                    match tree::parse(&mut c, d.version, self.common.get()) {
                        Ok(t) if t.unresolved.is_none() => {
                            let t = Arc::new(t);
                            self.add_tree(d.hash, &t);
                            Some(t)
                        }
                        Ok(t) => {
                            hits.errors.push(no_common(t.unresolved.unwrap_or(0)));
                            None
                        }
                        Err(e) => {
                            hits.errors.push(e);
                            None
                        }
                    }
                }
                None => {
                    let t = self.trees.lock().ok().and_then(|m| m.get(&d.hash).cloned());
                    if t.is_none() {
                        hits.errors.push(ReadError::new(
                            WarnKind::BadHeader,
                            0,
                            format!(
                                "no type tree, and no file with one has the Shader type hash {}",
                                hex(&d.hash)
                            ),
                        ));
                    }
                    t
                }
            };
            let mut opened = 0;
            if let Some(t) = t {
                for (id, at, obj) in &d.objects {
                    opened += 1;
                    shader::read(&t, obj, d.be, *id, cap, &mut hits, *at);
                }
            }
            out.push(Borrowed {
                source: d.source,
                source_name: d.source_name,
                path: d.path,
                opened,
                hits,
            });
        }
        out
    }
}

/// The error for a tree that names common strings where no main gave the table.
pub fn no_common(at: usize) -> ReadError {
    ReadError::new(
        WarnKind::BadHeader,
        at,
        "type-tree name indexes Unity's common string table, and no main gave one",
    )
}

/// Lower-case hex of `b`.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
