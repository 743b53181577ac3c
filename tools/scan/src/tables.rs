//! The split tables: unique shaders sorted by key, pairs, and their TSV text; atomic writes.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use crate::cover::cover;
use crate::profile::Profile;
use crate::shader::Shader;
use crate::stage::Stage;
use crate::walk::Scan;

/// shader_map.tsv header.
pub const MAP_HEADER: &str = "key\tstage\tgen\tcontainer\tsource\tpath\toffset\tindex\tcopies";
/// shader_facts.tsv header.
pub const FACTS_HEADER: &str = "key\tstage\tgen\tlayout\tcontrol_len\tcode_len\tc1_offset\tc1_size\tregs\tthreads_x\tthreads_y\tthreads_z\tshared_bytes\tin_generic\tout_generic\tps_targets\tps_depth";
/// shader_pairs.tsv header.
pub const PAIRS_HEADER: &str = "vertex\tfragment";

/// Unique shaders (first origin kept, sorted by key), copy counts and pairs.
#[derive(Debug, Default)]
pub struct Tables {
    /// One shader per key, the first origin in (source, path, offset, index) order.
    pub shaders: Vec<Shader>,
    /// How many times each key was found.
    pub copies: BTreeMap<String, u64>,
    /// (vertex, fragment) pairs, sorted.
    pub pairs: BTreeSet<(String, String)>,
    /// Pairs added by the `shader_separable` cover rule.
    pub cover_pairs: u64,
}

impl Tables {
    /// Merges duplicates and builds the pairs (with the cover rule when the profile asks).
    pub fn build(scan: &mut Scan, profile: &Profile) -> Tables {
        let mut all = std::mem::take(&mut scan.shaders);
        all.sort_by(|a, b| {
            (&a.piece.key, a.source, &*a.path, a.offset, &a.index).cmp(&(
                &b.piece.key,
                b.source,
                &*b.path,
                b.offset,
                &b.index,
            ))
        });
        let mut t = Tables::default();
        for mut s in all {
            let n = t.copies.entry(s.piece.key.clone()).or_default();
            *n += 1;
            if *n == 1 {
                t.shaders.push(s);
            } else if let Some(first) = t.shaders.last_mut().filter(|f| f.piece.control.is_empty())
            {
                // The scan copies bytes only for the first find of a key, which need not be the
                // find this row names: take them from whichever copy has them.
                if !s.piece.control.is_empty() {
                    first.piece.control = std::mem::take(&mut s.piece.control);
                    first.piece.code = std::mem::take(&mut s.piece.code);
                }
            }
        }
        t.pairs.extend(scan.pairs.iter().cloned());
        if profile.shader_separable {
            let frags: Vec<(String, u128)> = t
                .shaders
                .iter()
                .filter(|s| s.piece.stage == Stage::Fragment)
                .map(|s| (s.piece.key.clone(), s.piece.io.in_generic))
                .collect();
            let chosen = cover(&frags);
            for v in t.shaders.iter().filter(|s| s.piece.stage == Stage::Vertex) {
                for f in &chosen {
                    if t.pairs.insert((v.piece.key.clone(), f.clone())) {
                        t.cover_pairs += 1;
                    }
                }
            }
        }
        t
    }

    /// Number of duplicate finds merged into existing rows.
    pub fn duplicates(&self) -> u64 {
        self.copies.values().map(|n| n - 1).sum()
    }

    /// shader_map.tsv text.
    pub fn map_tsv(&self) -> String {
        let mut o = String::from(MAP_HEADER);
        o.push('\n');
        for s in &self.shaders {
            let _ = writeln!(
                o,
                "{}\t{}\t{}\t{}\t{}\t{}\t{:#x}\t{}\t{}",
                s.piece.key,
                s.piece.stage,
                s.piece.ctl.gen.as_str(),
                s.kind.as_str(),
                s.source_name,
                clean(&s.path),
                s.offset,
                s.index,
                self.copies[&s.piece.key]
            );
        }
        o
    }

    /// shader_facts.tsv text.
    pub fn facts_tsv(&self) -> String {
        let mut o = String::from(FACTS_HEADER);
        o.push('\n');
        for s in &self.shaders {
            let p = &s.piece;
            let c = &p.ctl;
            let _ = writeln!(
                o,
                "{}\t{}\t{}\t{}\t{:#x}\t{:#x}\t{:#x}\t{:#x}\t{}\t{}\t{}\t{}\t{}\t{:032x}\t{:032x}\t{:#x}\t{}",
                p.key,
                p.stage,
                c.gen.as_str(),
                p.layout.as_str(),
                c.len,
                p.code_at.len(),
                c.c1_offset,
                c.c1_size,
                c.regs,
                c.threads[0],
                c.threads[1],
                c.threads[2],
                c.shared,
                p.io.in_generic,
                p.io.out_generic,
                p.io.ps_targets,
                u8::from(p.io.ps_depth)
            );
        }
        o
    }

    /// shader_pairs.tsv text.
    pub fn pairs_tsv(&self) -> String {
        let mut o = String::from(PAIRS_HEADER);
        o.push('\n');
        for (v, f) in &self.pairs {
            let _ = writeln!(o, "{v}\t{f}");
        }
        o
    }
}

fn clean(p: &str) -> String {
    p.chars()
        .map(|c| {
            if c == '\t' || c == '\n' || c == '\r' {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// Writes `bytes` to `path` atomically: a temporary file in the same folder, then a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".dmsh-tmp-")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Writes `bytes` atomically unless `path` already holds exactly them.
pub fn write_if_changed(path: &Path, bytes: &[u8]) -> std::io::Result<bool> {
    if let Ok(m) = std::fs::metadata(path) {
        if m.len() == bytes.len() as u64 && std::fs::read(path).is_ok_and(|old| old == bytes) {
            return Ok(false);
        }
    }
    write_atomic(path, bytes)?;
    Ok(true)
}
