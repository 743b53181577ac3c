//! `dmsh report`: a title's coverage from its split tables and one build (`b-<V>/`), as
//! `report.json`, `report.md` and one self-contained `report.html` (inline SVG charts, no
//! network): shaders per container kind and stage, how far they got along the chain
//! (`cause::LEVELS`), failures grouped by cause with example keys, bindings whose slot was
//! not decoded, driver-segment reads, and the geometry and tessellation shaders Metal cannot
//! run directly. With `--since` an earlier build: the keys whose outputs differ and which of
//! their inputs changed (`since`). docs/build.md, "The report".

pub mod cause;
mod html;
mod markdown;
pub mod since;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use serde::Serialize;

use super::build::record::BuildRecord;
use super::build::write_atomic;
use super::title::BuiltTitle;
use cause::{classify, Cause, LEVELS};

/// Arguments of `dmsh report`.
#[derive(clap::Args)]
pub struct Args {
    /// The split, build and title folders; `--build DIR/b-<V>` alone reports a capture build
    /// (`dmsh build --spirv`), whose record names every module.
    #[command(flatten)]
    pub title: BuiltTitle,
    /// Where report.json, report.md and report.html go (default: SPLIT/report; for a
    /// capture build, DIR/report).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// An earlier build folder, `DIR/b-<V'>`: list what changed since.
    #[arg(long)]
    pub since: Option<PathBuf>,
}

/// A count with a name.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Count {
    /// What is counted.
    pub name: String,
    /// How many.
    pub count: usize,
}

/// The keys that failed one way.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct CauseGroup {
    /// The cause (`cause::Cause::name`).
    pub cause: String,
    /// Its label.
    pub label: String,
    /// How many keys.
    pub count: usize,
    /// The first few keys, with their messages.
    pub examples: Vec<KeyNote>,
}

/// A key with a note.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct KeyNote {
    /// The key.
    pub key: String,
    /// Its stage.
    pub stage: String,
    /// The note (a message, a status, the offsets read).
    pub note: String,
}

/// The whole report.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Report {
    /// The title's name (profile.toml), or the split folder's name.
    pub title: String,
    /// The chain version of the build.
    pub chain: String,
    /// Unique shaders in the map.
    pub shaders: usize,
    /// Shaders per container kind.
    pub containers: Vec<Count>,
    /// Shaders per stage.
    pub stages: Vec<Count>,
    /// Shaders per container kind and stage (`kind/stage`).
    pub container_stages: Vec<Count>,
    /// Keys that reached each level along the chain.
    pub levels: Vec<Count>,
    /// Failures grouped by cause, most common first.
    pub failures: Vec<CauseGroup>,
    /// Shaders with a binding whose slot was not decoded (the host's red line).
    pub unresolved_bindings: Vec<KeyNote>,
    /// Built shaders that pick a texture slot at run time (`tex_dyn` arrays).
    pub dynamic_slots: Vec<KeyNote>,
    /// Built shaders that read the driver constant segment (cbuf bank 0).
    pub driver_reads: Vec<KeyNote>,
    /// Geometry and tessellation shaders, which Metal cannot run directly: built as lowered
    /// pipelines (docs/geometry.md, docs/tessellation.md) or not.
    pub not_in_metal: Vec<KeyNote>,
    /// What changed since an earlier build (`--since`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<since::Since>,
}

impl Report {
    /// The per-shader lists every rendering shows, in order: (heading, text when empty, list).
    pub fn note_sections(&self) -> [(&'static str, &'static str, &[KeyNote]); 4] {
        [
            (
                "Shaders with a binding whose slot was not decoded",
                "None: every binding's slot was decoded.",
                &self.unresolved_bindings,
            ),
            (
                "Shaders that choose a texture slot at run time",
                "None.",
                &self.dynamic_slots,
            ),
            (
                "Driver-segment reads (c0)",
                "None of the built shaders reads the driver segment.",
                &self.driver_reads,
            ),
            (
                "Geometry and tessellation shaders (Metal cannot run them directly)",
                "None.",
                &self.not_in_metal,
            ),
        ]
    }
}

/// Examples kept per cause.
const EXAMPLES: usize = 5;

fn counts<'a>(names: impl Iterator<Item = &'a str>) -> Vec<Count> {
    let mut m: BTreeMap<&str, usize> = BTreeMap::new();
    for n in names {
        *m.entry(n).or_default() += 1;
    }
    m.into_iter()
        .map(|(name, count)| Count {
            name: name.to_string(),
            count,
        })
        .collect()
}

/// The driver-segment offsets a built key's reflection reads (cbuf bank 0), and whether it
/// binds run-time slot arrays.
fn reflection_notes(build: &Path, key: &str) -> (Option<String>, bool) {
    let Some(r) = std::fs::read_to_string(build.join(format!("{key}_b.json")))
        .ok()
        .and_then(|t| dmsh_reflect::Reflection::from_json(&t).ok())
    else {
        return (None, false);
    };
    let driver: Vec<String> = r
        .resources
        .iter()
        .filter(|x| x.kind == "cbuf" && x.bank == 0)
        .map(|x| match x.size {
            Some(n) => format!("c0 {:#x}..{:#x}", x.guest_offset, x.guest_offset as u64 + n),
            None => format!("c0 from {:#x}", x.guest_offset),
        })
        .collect();
    let dynamic = r
        .resources
        .iter()
        .any(|x| x.kind == "tex_dyn" || x.kind == "samp_dyn");
    ((!driver.is_empty()).then(|| driver.join(", ")), dynamic)
}

/// Builds the report of `record` (the build in `build`) over the split's map.
pub fn report(
    title: &str,
    map: &BTreeMap<String, (String, String)>,
    record: &BuildRecord,
    build: &Path,
) -> Report {
    let keys: Vec<(&String, &(String, String))> = map.iter().collect();
    let stage_of = |k: &str| map.get(k).map_or("?", |(_, s)| s.as_str()).to_string();
    let mut levels = vec![0usize; LEVELS.len()];
    let mut groups: BTreeMap<Cause, Vec<KeyNote>> = BTreeMap::new();
    let mut driver_reads = Vec::new();
    let mut dynamic_slots = Vec::new();
    for r in &record.shaders {
        let (level, cause) = classify(r);
        for (i, (l, _)) in LEVELS.iter().enumerate() {
            if *l <= level {
                levels[i] += 1;
            }
        }
        let note = |note: String| KeyNote {
            key: r.key.clone(),
            stage: stage_of(&r.key),
            note,
        };
        if let Some(c) = cause {
            groups.entry(c).or_default().push(note(r.message.clone()));
        } else {
            let (driver, dynamic) = reflection_notes(build, &r.key);
            if let Some(d) = driver {
                driver_reads.push(note(d));
            }
            if dynamic {
                dynamic_slots.push(note("texture slot chosen at run time".into()));
            }
        }
    }
    let unresolved_bindings = groups
        .get(&Cause::UnresolvedBinding)
        .cloned()
        .unwrap_or_default();
    let mut failures: Vec<CauseGroup> = groups
        .into_iter()
        .map(|(c, notes)| CauseGroup {
            cause: c.name().into(),
            label: c.label().into(),
            count: notes.len(),
            examples: notes.into_iter().take(EXAMPLES).collect(),
        })
        .collect();
    failures.sort_by(|a, b| b.count.cmp(&a.count).then(a.cause.cmp(&b.cause)));
    let status: BTreeMap<&str, &str> = record
        .shaders
        .iter()
        .map(|r| (r.key.as_str(), r.status.as_str()))
        .collect();
    let not_in_metal = keys
        .iter()
        .filter(|(_, (_, s))| matches!(s.as_str(), "geometry" | "tess_control" | "tess_eval"))
        .map(|(k, (_, s))| KeyNote {
            key: k.to_string(),
            stage: s.clone(),
            note: match status.get(k.as_str()) {
                Some(&"built") => "built lowered".to_string(),
                s => s.unwrap_or(&"not built").to_string(),
            },
        })
        .collect();
    Report {
        title: title.to_string(),
        chain: record.chain.clone(),
        shaders: map.len(),
        containers: counts(keys.iter().map(|(_, (c, _))| c.as_str())),
        stages: counts(keys.iter().map(|(_, (_, s))| s.as_str())),
        container_stages: counts(
            keys.iter()
                .map(|(_, (c, s))| format!("{c}/{s}"))
                .collect::<Vec<_>>()
                .iter()
                .map(String::as_str),
        ),
        levels: LEVELS
            .iter()
            .zip(levels)
            .map(|((_, name), count)| Count {
                name: name.to_string(),
                count,
            })
            .collect(),
        failures,
        unresolved_bindings,
        dynamic_slots,
        driver_reads,
        not_in_metal,
        since: None,
    }
}

/// Writes the report of a split folder's build into `out`; returns a one-line summary.
pub fn write_report(args: &Args) -> anyhow::Result<String> {
    let capture = args.title.title.game.is_none() && args.title.title.split.is_none();
    let (split, build) = match (&args.title.build, capture) {
        // A capture build (`dmsh build --spirv`): no split; the record names every module.
        (Some(b), true) => (b.parent().unwrap_or(b).to_path_buf(), b.clone()),
        _ => args.title.folders()?,
    };
    let record = BuildRecord::read(&build.join("_b_build.json"))?;
    let map: BTreeMap<String, (String, String)> = if capture {
        record
            .shaders
            .iter()
            .map(|r| (r.key.clone(), (CAPTURE.to_string(), r.stage.clone())))
            .collect()
    } else {
        super::title::read_map(&split.join("shader_map.tsv"))?
            .into_iter()
            .map(|r| (r.key, (r.container, r.stage)))
            .collect()
    };
    let title = match args.title.game() {
        Some(g) if g.join("profile.toml").is_file() => dmsh_scan::Profile::load(g)?.title,
        _ => String::new(),
    };
    let title = if title.is_empty() {
        split
            .file_name()
            .map_or("title".into(), |n| n.to_string_lossy().into_owned())
    } else {
        title
    };
    let mut rep = report(&title, &map, &record, &build);
    if let Some(old) = &args.since {
        let before = BuildRecord::read(&old.join("_b_build.json"))?;
        rep.since = Some(since::since(&before, &record));
    }
    let out = args.out.clone().unwrap_or_else(|| split.join("report"));
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let json = serde_json::to_string_pretty(&rep).expect("serialises") + "\n";
    write_atomic(&out.join("report.json"), json.as_bytes())?;
    write_atomic(&out.join("report.md"), markdown::markdown(&rep).as_bytes())?;
    write_atomic(&out.join("report.html"), html::html(&rep).as_bytes())?;
    let reached = |i: usize| rep.levels.get(i).map_or(0, |c| c.count);
    let mut line = format!(
        "report: {} shaders, {} translated, {} reach MSL, {} pass validation; {} failure causes ({})",
        rep.shaders,
        reached(2),
        reached(3),
        reached(4),
        rep.failures.len(),
        out.display()
    );
    if let Some(s) = &rep.since {
        line.push_str(&format!(
            "\n  since b-{}: {} keys with other outputs, {} unchanged",
            s.from,
            s.changed.len(),
            s.unchanged
        ));
    }
    Ok(line)
}

/// The container kind of a capture build's modules (`dmsh build --spirv`).
pub const CAPTURE: &str = "spirv_capture";

/// Runs `dmsh report`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    println!("{}", write_report(&args)?);
    Ok(ExitCode::SUCCESS)
}
