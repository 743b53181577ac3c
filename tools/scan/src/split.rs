//! `split`: scan a title's RomFS folders and mains, then write the package folder and tables.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use crate::containers::kpka;
use crate::containers::ktgl::linkdata;
use crate::error::{ReadError, WarnKind, Warning};
use crate::profile::Profile;
use crate::stage::Stage;
use crate::tables::{write_atomic, write_if_changed, Tables};
use crate::walk::{FileScan, Limits, Scan};

/// The inputs: RomFS folders (or single files) and mains, base first.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// RomFS roots, base game first, then updates.
    pub romfs: Vec<PathBuf>,
    /// ExeFS mains, base game first, then updates.
    pub mains: Vec<PathBuf>,
}

/// Where the results go.
#[derive(Debug, Clone)]
pub struct Outputs {
    /// Folder for `<key>.control` / `<key>.code`.
    pub pkg_dir: PathBuf,
    /// shader_map.tsv path.
    pub map: PathBuf,
    /// shader_facts.tsv path.
    pub facts: PathBuf,
    /// shader_pairs.tsv path, if wanted.
    pub pairs: Option<PathBuf>,
}

/// Progress reports during a scan (the CLI draws a bar or prints lines).
pub trait Progress: Sync {
    /// The scan will read `files` files of `bytes` bytes in all.
    fn start(&self, files: u64, bytes: u64);
    /// One file is done.
    fn done(&self, path: &str, bytes: u64);
    /// The scan is over.
    fn finish(&self);
}

/// A progress sink that reports nothing.
pub struct Quiet;

impl Progress for Quiet {
    fn start(&self, _: u64, _: u64) {}
    fn done(&self, _: &str, _: u64) {}
    fn finish(&self) {}
}

/// One input file to scan.
#[derive(Debug, Clone)]
struct Job {
    source: u32,
    source_name: Arc<str>,
    rel: String,
    path: PathBuf,
    main: bool,
    size: u64,
    /// A range of LINKDATA entries when this job scans part of a `DATA1.bin`.
    part: Option<Part>,
}

/// Part of a LINKDATA `DATA1.bin`: the entries of its `DATA0.bin` and the range this job scans.
#[derive(Debug, Clone)]
struct Part {
    entries: Arc<[linkdata::Entry]>,
    range: std::ops::Range<usize>,
    /// DATA1's size on disk (the job's `size` is its entries' bytes).
    file_size: u64,
}

/// Errors that stop a split (bad arguments, unwritable outputs). Bad input files never do.
#[derive(Debug, thiserror::Error)]
pub enum SplitError {
    /// An input path does not exist.
    #[error("{0}: no such file or folder")]
    Missing(PathBuf),
    /// A folder could not be listed or an output not written.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> SplitError + '_ {
    move |source| SplitError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn list(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf, u64)>) -> Result<(), SplitError> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(io_err(dir))?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        let m = std::fs::metadata(&p).map_err(io_err(&p))?;
        if m.is_dir() {
            list(root, &p, out)?;
        } else if m.is_file() {
            let rel = p
                .strip_prefix(root)
                .unwrap_or(&p)
                .to_string_lossy()
                .replace('\\', "/");
            out.push((rel, p, m.len()));
        }
    }
    Ok(())
}

fn jobs(inputs: &Inputs) -> Result<Vec<Job>, SplitError> {
    let mut jobs = Vec::new();
    let mut source = 0u32;
    for (i, root) in inputs.romfs.iter().enumerate() {
        let name: Arc<str> = Arc::from(format!("romfs{i}"));
        let mut files = Vec::new();
        if root.is_dir() {
            list(root, root, &mut files)?;
        } else if root.is_file() {
            let n = root
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            files.push((
                n,
                root.clone(),
                std::fs::metadata(root).map_err(io_err(root))?.len(),
            ));
        } else {
            return Err(SplitError::Missing(root.clone()));
        }
        for (rel, path, size) in &files {
            let job = Job {
                source,
                source_name: name.clone(),
                rel: rel.clone(),
                path: path.clone(),
                main: false,
                size: *size,
                part: None,
            };
            jobs.extend(linkdata_jobs(&job, &files).unwrap_or_else(|| vec![job]));
        }
        source += 1;
    }
    for (i, m) in inputs.mains.iter().enumerate() {
        if !m.is_file() {
            return Err(SplitError::Missing(m.clone()));
        }
        let size = std::fs::metadata(m).map_err(io_err(m))?.len();
        let rel = m
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "main".into());
        jobs.push(Job {
            source,
            source_name: Arc::from(format!("main{i}")),
            rel,
            path: m.clone(),
            main: true,
            size,
            part: None,
        });
        source += 1;
    }
    Ok(jobs)
}

/// A LINKDATA `DATA1.bin` with its `DATA0.bin` in the same folder, cut into jobs by entry
/// range (`linkdata::JOBS`, balanced by bytes); `None` for any other file, or when the table
/// cannot be read or is empty (the file is then scanned whole).
fn linkdata_jobs(job: &Job, files: &[(String, PathBuf, u64)]) -> Option<Vec<Job>> {
    if !linkdata::is_data(&job.rel) {
        return None;
    }
    let index = linkdata::index_of(&job.rel);
    let (_, path, _) = files.iter().find(|(rel, _, _)| *rel == index)?;
    let entries: Arc<[linkdata::Entry]> = linkdata::entries(&std::fs::read(path).ok()?).into();
    if entries.is_empty() {
        return None;
    }
    let parts = linkdata::parts(&entries, linkdata::JOBS);
    Some(
        parts
            .into_iter()
            .map(|range| Job {
                size: entries[range.clone()].iter().map(|e| e.len()).sum(),
                part: Some(Part {
                    entries: entries.clone(),
                    range,
                    file_size: job.size,
                }),
                ..job.clone()
            })
            .collect(),
    )
}

/// Input bytes: memory-mapped when large, read otherwise.
enum Bytes {
    Map(memmap2::Mmap),
    Vec(Vec<u8>),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Map(m) => m,
            Bytes::Vec(v) => v,
        }
    }
}

fn open(path: &Path, size: u64) -> std::io::Result<Bytes> {
    if size >= 1 << 20 {
        let f = std::fs::File::open(path)?;
        // SAFETY: the map is read-only and lives as long as the scan of this file; a dump being
        // modified while it is scanned is outside what the tool supports.
        let m = unsafe { memmap2::Mmap::map(&f)? };
        Ok(Bytes::Map(m))
    } else {
        Ok(Bytes::Vec(std::fs::read(path)?))
    }
}

/// Scans every input file in parallel (largest first, for balance).
pub fn scan(
    inputs: &Inputs,
    profile: &Profile,
    limits: &Limits,
    progress: &dyn Progress,
) -> Result<Scan, SplitError> {
    let mut jobs = jobs(inputs)?;
    progress.start(jobs.len() as u64, jobs.iter().map(|j| j.size).sum());
    jobs.sort_by(|a, b| {
        b.size
            .cmp(&a.size)
            .then(a.source.cmp(&b.source))
            .then(a.rel.cmp(&b.rel))
    });
    let seen = crate::walk::Seen::default();
    let superseded = superseded_pak_entries(&jobs);
    let unity = crate::containers::unity::Shared::default();
    // Collect per-file results, then append them once: a parallel tree of merges would move
    // every shader record log(files) times.
    let scans: Vec<Scan> = jobs
        .par_iter()
        .zip(&superseded)
        .map(|(j, skip)| {
            let mut fs = FileScan::new(
                limits,
                profile.shader_main_glslc,
                j.source,
                j.source_name.clone(),
            )
            .with_seen(&seen)
            .with_unity(&unity);
            if let Some(skip) = skip {
                fs = fs.with_superseded(skip);
            }
            let label = format!("{}:{}", j.source_name, j.rel);
            let on_disk = j.part.as_ref().map_or(j.size, |p| p.file_size);
            let mut s = match open(&j.path, on_disk) {
                Ok(b) if j.main => fs.scan_main(&b, &j.rel),
                Ok(b) => match &j.part {
                    Some(p) => {
                        let found = linkdata::members(&b, &p.entries, p.range.clone());
                        let mut s = fs.scan_found(&b, &j.rel, linkdata::NAME, Ok(found));
                        if p.range.start > 0 {
                            // One DATA1 is one container opened, whatever its jobs.
                            s.opened.remove(linkdata::NAME);
                        }
                        s
                    }
                    None => fs.scan(&b, &j.rel, 0),
                },
                Err(e) => {
                    let mut s = Scan::default();
                    s.warnings
                        .push(ReadError::new(WarnKind::Io, 0, e.to_string()).at(&j.rel));
                    s
                }
            };
            for w in &mut s.warnings {
                w.path = format!("{}:{}", j.source_name, w.path);
            }
            s.files = u64::from(j.part.as_ref().is_none_or(|p| p.range.start == 0));
            s.bytes = j.size;
            progress.done(&label, j.size);
            s
        })
        .collect();
    let mut scan = Scan::default();
    scan.shaders
        .reserve(scans.iter().map(|s| s.shaders.len()).sum());
    for s in scans {
        scan = scan.merge(s);
    }
    // Unity's second pass: Shader objects that needed another file's tree or main's strings.
    for b in unity.second_pass(limits.layer_cap) {
        let fs = FileScan::new(
            limits,
            profile.shader_main_glslc,
            b.source,
            b.source_name.clone(),
        )
        .with_seen(&seen);
        let mut s = fs.hits(
            &b.path,
            crate::shader::ContainerKind::Unity,
            b.opened,
            b.hits,
        );
        for w in &mut s.warnings {
            w.path = format!("{}:{}", b.source_name, w.path);
        }
        scan = scan.merge(s);
    }
    progress.finish();
    Ok(scan)
}

/// The cross-file rule of RE Engine PAKs: the newest copy of each path wins. For each job, the
/// path hashes of its KPKA entries that a newer PAK holds (`None`: not a `*.pak` file starting
/// with `KPKA`, or nothing superseded; the names rank the PAKs, and other files are not
/// opened). PAKs rank by patch number (`re_chunk_000.pak.patch_002.pak` → 2, base 0), then
/// source (base first), then relative path; a PAK whose table does not read supersedes
/// nothing (its scan reports why).
fn superseded_pak_entries(jobs: &[Job]) -> Vec<Option<kpka::Superseded>> {
    let mut tables: Vec<Option<Vec<u64>>> = jobs
        .par_iter()
        .map(|j| {
            let mut magic = [0u8; 4];
            let is_pak = !j.main
                && j.part.is_none()
                && j.rel.ends_with(".pak")
                && std::fs::File::open(&j.path)
                    .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
                    .is_ok()
                && &magic == kpka::MAGIC;
            let b = open(&j.path, j.size).ok().filter(|_| is_pak)?;
            let e = kpka::entries(&b).ok()?;
            Some(e.iter().map(|e| e.hash).collect())
        })
        .collect();
    let mut paks: Vec<usize> = (0..jobs.len()).filter(|&i| tables[i].is_some()).collect();
    paks.sort_by_key(|&i| {
        (
            kpka::patch_number(&jobs[i].rel),
            jobs[i].source,
            &jobs[i].rel,
        )
    });
    let ranked: Vec<Vec<u64>> = paks
        .iter()
        .map(|&i| tables[i].take().unwrap_or_default())
        .collect();
    let mut out = vec![None; jobs.len()];
    for (&i, s) in paks.iter().zip(kpka::superseded(&ranked)) {
        if !s.is_empty() {
            out[i] = Some(s);
        }
    }
    out
}

/// Writes `<key>.control` / `<key>.code` for every unique shader and the tables.
pub fn write(tables: &Tables, out: &Outputs) -> Result<u64, SplitError> {
    std::fs::create_dir_all(&out.pkg_dir).map_err(io_err(&out.pkg_dir))?;
    let written = tables
        .shaders
        .par_iter()
        .map(|s| -> Result<u64, SplitError> {
            let c = out.pkg_dir.join(format!("{}.control", s.piece.key));
            let k = out.pkg_dir.join(format!("{}.code", s.piece.key));
            let a = write_if_changed(&c, &s.piece.control).map_err(io_err(&c))?;
            let b = write_if_changed(&k, &s.piece.code).map_err(io_err(&k))?;
            Ok(u64::from(a) + u64::from(b))
        })
        .try_reduce(|| 0, |a, b| Ok(a + b))?;
    write_atomic(&out.map, tables.map_tsv().as_bytes()).map_err(io_err(&out.map))?;
    write_atomic(&out.facts, tables.facts_tsv().as_bytes()).map_err(io_err(&out.facts))?;
    if let Some(p) = &out.pairs {
        write_atomic(p, tables.pairs_tsv().as_bytes()).map_err(io_err(p))?;
    }
    Ok(written)
}

/// What a split did, for people.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// Input files read.
    pub files: u64,
    /// Input bytes read.
    pub bytes: u64,
    /// Containers / layers opened by kind.
    pub opened: BTreeMap<&'static str, u64>,
    /// Unique shaders by the container kind of their first origin.
    pub shaders_by_kind: BTreeMap<&'static str, u64>,
    /// Unique shaders by stage.
    pub by_stage: BTreeMap<Stage, u64>,
    /// Unique shaders.
    pub unique: u64,
    /// Finds merged into an existing key.
    pub duplicates: u64,
    /// Pair rows (and how many the cover rule added).
    pub pairs: u64,
    /// Pair rows added by the `shader_separable` cover rule.
    pub cover_pairs: u64,
    /// Warnings by kind.
    pub warnings_by_kind: BTreeMap<WarnKind, u64>,
    /// Input files with at least one warning.
    pub files_with_warnings: u64,
    /// Every warning, sorted.
    pub warnings: Vec<Warning>,
}

impl Summary {
    /// Builds the summary of a scan and its tables.
    pub fn new(scan: &Scan, t: &Tables) -> Summary {
        let mut s = Summary {
            files: scan.files,
            bytes: scan.bytes,
            opened: scan.opened.clone(),
            unique: t.shaders.len() as u64,
            duplicates: t.duplicates(),
            pairs: t.pairs.len() as u64,
            cover_pairs: t.cover_pairs,
            ..Default::default()
        };
        for sh in &t.shaders {
            *s.shaders_by_kind.entry(sh.kind.as_str()).or_default() += 1;
            *s.by_stage.entry(sh.piece.stage).or_default() += 1;
        }
        let mut w = scan.warnings.clone();
        w.sort();
        w.dedup();
        let mut files = std::collections::BTreeSet::new();
        for x in &w {
            *s.warnings_by_kind.entry(x.kind).or_default() += 1;
            files.insert(
                x.path
                    .split(['|'])
                    .next()
                    .unwrap_or(&x.path)
                    .split("//")
                    .next()
                    .unwrap_or("")
                    .to_string(),
            );
        }
        s.files_with_warnings = files.len() as u64;
        s.warnings = w;
        s
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "files read: {} ({:.1} MB)",
            self.files,
            self.bytes as f64 / 1e6
        )?;
        writeln!(f, "containers opened: {}", counts(&self.opened))?;
        writeln!(
            f,
            "shaders: {} unique ({})",
            self.unique,
            counts(&self.shaders_by_kind)
        )?;
        writeln!(f, "by stage: {}", counts(&self.by_stage))?;
        writeln!(f, "duplicates merged: {}", self.duplicates)?;
        writeln!(
            f,
            "pairs: {} ({} from the shader_separable cover rule)",
            self.pairs, self.cover_pairs
        )?;
        if self.warnings.is_empty() {
            write!(f, "files skipped: 0")?;
        } else {
            write!(
                f,
                "problems: {} in {} file(s) ({}); the scan went on",
                self.warnings.len(),
                self.files_with_warnings,
                counts(&self.warnings_by_kind)
            )?;
        }
        Ok(())
    }
}

/// `name count` pairs joined by commas, or `none`.
fn counts<K: fmt::Display, V: fmt::Display>(m: &BTreeMap<K, V>) -> String {
    if m.is_empty() {
        return "none".into();
    }
    let items: Vec<String> = m.iter().map(|(k, v)| format!("{k} {v}")).collect();
    items.join(", ")
}

/// Runs the whole split: scan, merge, write. Returns the summary.
pub fn split(
    inputs: &Inputs,
    out: &Outputs,
    profile: &Profile,
    limits: &Limits,
    progress: &dyn Progress,
) -> Result<Summary, SplitError> {
    let mut scan = scan(inputs, profile, limits, progress)?;
    let tables = Tables::build(&mut scan, profile);
    write(&tables, out)?;
    Ok(Summary::new(&scan, &tables))
}
