//! The per-shader cache (docs/build.md, "The cache"): content-addressed, shared by every
//! chain version. An entry, `entries/<cache key>.json`, names a key's outcome and its output
//! files by the sha256 of their bytes; the bytes are blobs, `blobs/<2 hex>/<sha256>`. The
//! cache key is the digest of all of the key's inputs ([`super::inputs::InputDigests`]), so a
//! hit is exactly the conversion's result. Reflections are stored without the chain version
//! (`chain`), which is set again when a hit is written into a `b-<V>/` folder, so a key a
//! new chain version does not concern is not converted again. Blobs and entries are written
//! atomically, entries last: an interrupted build leaves whole entries only, and resumes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::convert::write_atomic;
use super::inputs::sha256_hex;

/// One key's cached outcome.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Entry {
    /// `built`, `failed` or `unsupported`.
    pub status: String,
    /// The failing step, empty when built.
    pub step: String,
    /// What failed, empty when built.
    pub message: String,
    /// The output files by name, each with the sha256 of its stored bytes.
    pub files: BTreeMap<String, String>,
}

/// Whether an output file is a reflection (its `chain` is not stored): `<key>_b.json`, the
/// dual-source variant's `<key>_d.json`, and a lowered pipeline's other passes' `_p`, `_g`,
/// `_q` (docs/geometry.md).
fn is_reflection(name: &str) -> bool {
    ["_b.json", "_d.json", "_p.json", "_g.json", "_q.json"]
        .iter()
        .any(|s| name.ends_with(s))
}

/// An output name the cache accepts: a plain file name.
fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && !name.contains(['/', '\\'])
        && name != "_b_build.json"
}

/// The cache folder.
pub struct Cache {
    root: PathBuf,
}

impl Cache {
    /// Opens (creates) the cache at `root`.
    pub fn open(root: &Path) -> anyhow::Result<Self> {
        for sub in ["entries", "blobs"] {
            let d = root.join(sub);
            std::fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
        }
        Ok(Cache {
            root: root.to_path_buf(),
        })
    }

    fn entry_path(&self, cache_key: &str) -> PathBuf {
        self.root.join("entries").join(format!("{cache_key}.json"))
    }

    fn blob_path(&self, sha: &str) -> PathBuf {
        self.root
            .join("blobs")
            .join(sha.get(..2).unwrap_or("xx"))
            .join(sha)
    }

    /// The entry of a cache key, when it is whole: readable, with plain file names and every
    /// blob present. Anything else is a miss (the key is converted again).
    pub fn get(&self, cache_key: &str) -> Option<Entry> {
        let text = std::fs::read_to_string(self.entry_path(cache_key)).ok()?;
        let e: Entry = serde_json::from_str(&text).ok()?;
        let whole = e
            .files
            .iter()
            .all(|(n, sha)| plain_name(n) && self.blob_path(sha).is_file());
        whole.then_some(e)
    }

    /// A blob's bytes, checked against its digest.
    pub fn blob(&self, sha: &str) -> anyhow::Result<Vec<u8>> {
        let p = self.blob_path(sha);
        let b = std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
        anyhow::ensure!(
            sha256_hex(&b) == sha,
            "{}: damaged cache blob (its bytes do not match its name)",
            p.display()
        );
        Ok(b)
    }

    fn put_blob(&self, bytes: &[u8]) -> anyhow::Result<String> {
        let sha = sha256_hex(bytes);
        let p = self.blob_path(&sha);
        // A blob already there is kept only when whole.
        if self.blob(&sha).is_err() {
            let d = p.parent().expect("blob paths have a folder");
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
            // Keys with the same output store the same blob, maybe at once: each writer has
            // a temporary file of its own, and the renames all put the same bytes in place.
            static WRITER: AtomicUsize = AtomicUsize::new(0);
            let n = WRITER.fetch_add(1, Ordering::Relaxed);
            let tmp = d.join(format!("{sha}.{}.{n}.tmp~", std::process::id()));
            std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
            std::fs::rename(&tmp, &p).with_context(|| format!("renaming to {}", p.display()))?;
        }
        Ok(sha)
    }

    /// Stores the outputs a conversion left in `staged` (every plain file there) under
    /// `cache_key`, with its outcome; returns the entry.
    pub fn put(
        &self,
        cache_key: &str,
        status: &str,
        step: &str,
        message: &str,
        staged: &Path,
    ) -> anyhow::Result<Entry> {
        let mut files = BTreeMap::new();
        let mut names: Vec<String> = match std::fs::read_dir(staged) {
            Ok(rd) => rd
                .flatten()
                .filter(|e| e.path().is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| plain_name(n) && !n.ends_with('~'))
                .collect(),
            Err(_) => Vec::new(),
        };
        names.sort();
        for n in names {
            let p = staged.join(&n);
            let mut bytes =
                std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
            if is_reflection(&n) {
                bytes = with_chain(&bytes, None).with_context(|| p.display().to_string())?;
            }
            files.insert(n, self.put_blob(&bytes)?);
        }
        let e = Entry {
            status: status.into(),
            step: step.into(),
            message: message.into(),
            files,
        };
        let text = serde_json::to_string_pretty(&e).expect("serialises") + "\n";
        write_atomic(&self.entry_path(cache_key), text.as_bytes())?;
        Ok(e)
    }

    /// Writes an entry's files into `dir` (each atomically), reflections with chain `v`; a
    /// file that already holds the bytes is left alone (its time too).
    pub fn materialise(&self, e: &Entry, dir: &Path, v: &str) -> anyhow::Result<()> {
        for (n, sha) in &e.files {
            let mut bytes = self.blob(sha)?;
            if is_reflection(n) {
                bytes = with_chain(&bytes, Some(v)).with_context(|| format!("cache blob {sha}"))?;
            }
            let path = dir.join(n);
            if std::fs::read(&path).is_ok_and(|old| old == bytes) {
                continue;
            }
            write_atomic(&path, &bytes)?;
        }
        Ok(())
    }
}

/// A reflection's JSON with its chain version set to `v` (or removed).
fn with_chain(json: &[u8], v: Option<&str>) -> anyhow::Result<Vec<u8>> {
    let text = std::str::from_utf8(json).context("a reflection that is not UTF-8")?;
    let mut r = dmsh_reflect::Reflection::from_json(text).map_err(|e| anyhow::anyhow!("{e}"))?;
    r.chain = v.map(str::to_string);
    Ok(r.to_json().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_damage_is_a_miss() {
        let d = std::env::temp_dir().join(format!("dmsh-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let cache = Cache::open(&d.join("cache")).unwrap();
        let staged = d.join("stage");
        std::fs::create_dir_all(&staged).unwrap();
        std::fs::write(staged.join("aa_b.metal"), "kernel void main0() {}\n").unwrap();
        let refl = dmsh_reflect::Reflection {
            chain: Some("0123456789ab".into()),
            ..Default::default()
        };
        std::fs::write(staged.join("aa_b.json"), refl.to_json()).unwrap();
        std::fs::write(staged.join(".aa.spv"), "temporary").unwrap();
        assert!(cache.get("k").is_none());
        let e = cache.put("k", "built", "", "", &staged).unwrap();
        assert_eq!(cache.get("k"), Some(e.clone()));
        assert_eq!(e.files.len(), 2, "temporaries are not outputs");
        let out = d.join("b");
        std::fs::create_dir_all(&out).unwrap();
        cache.materialise(&e, &out, "ba9876543210").unwrap();
        let back = dmsh_reflect::Reflection::from_json(
            &std::fs::read_to_string(out.join("aa_b.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(back.chain.as_deref(), Some("ba9876543210"));
        // A missing blob makes the entry a miss; a damaged one an error naming it.
        let sha = &e.files["aa_b.metal"];
        std::fs::write(cache.blob_path(sha), "damaged").unwrap();
        let err = cache.materialise(&e, &out, "v").unwrap_err().to_string();
        assert!(err.contains("damaged cache blob"), "{err}");
        // Storing the same bytes again repairs it.
        let again = cache.put("k", "built", "", "", &staged).unwrap();
        cache.materialise(&again, &out, "v").unwrap();
        std::fs::remove_file(cache.blob_path(sha)).unwrap();
        assert!(cache.get("k").is_none());
        let _ = std::fs::remove_dir_all(&d);
    }
}
