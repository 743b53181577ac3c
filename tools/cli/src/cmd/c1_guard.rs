//! `dmsh c1-guard`: `c1_full.tsv`, the shaders of a built title whose run-time c1 index is not
//! proven inside the span a shared c1 bank gives them (seed 001; docs/build.md "c1-guard").
//! The proof is the translator's (dmsh-ir `const_reads::c1_check`, interval arithmetic on the
//! IR), recorded in each `<key>_b.json` as `c1`; this command only reads the build.
//! Listed: every shader of the map whose record says `unproven`, has no `c1` (an
//! older record), belongs to another chain, or did not build. The first line is the `b-<V>`
//! the list was made for; the runtime (`dmsh_runtime::c1`) reads the file.

use std::path::PathBuf;
use std::process::ExitCode;

use super::build::record::BuildRecord;
use super::build::write_atomic;
use super::title::{read_map, BuiltTitle};

/// The list's file name (the runtime looks for it next to shader_map.tsv).
pub const C1_LIST: &str = "c1_full.tsv";

/// Arguments of `dmsh c1-guard`.
#[derive(clap::Args)]
pub struct Args {
    /// Where c1_full.tsv goes (default: the split folder, next to shader_map.tsv).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The split, build and title folders.
    #[command(flatten)]
    pub title: BuiltTitle,
}

/// Why a shader is on the list, or that it is not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// No c1 read has a run-time offset.
    NoIndex,
    /// Every run-time c1 index is proven inside the span.
    Proven,
    /// Listed: some index is not proven.
    Unproven,
    /// Listed: no usable record (did not build, another chain, no `c1`).
    NoRecord,
}

/// The verdict of one key from its build record in `build`, for chain `v`.
fn verdict(build: &std::path::Path, key: &str, v: &str) -> Verdict {
    let Some(r) = std::fs::read_to_string(build.join(format!("{key}_b.json")))
        .ok()
        .and_then(|t| dmsh_reflect::Reflection::from_json(&t).ok())
    else {
        return Verdict::NoRecord;
    };
    if r.chain.as_deref() != Some(v) {
        return Verdict::NoRecord;
    }
    match r.c1.as_ref().map_or("", |c| c.dynamic.as_str()) {
        "none" => Verdict::NoIndex,
        "proven" => Verdict::Proven,
        "unproven" => Verdict::Unproven,
        _ => Verdict::NoRecord,
    }
}

/// The list's text for chain `v` and the listed keys (sorted, each once).
pub fn list_text(v: &str, keys: &[&str]) -> String {
    let mut t = format!("b-{v}\n");
    for k in keys {
        t.push_str(k);
        t.push('\n');
    }
    t
}

/// Writes `c1_full.tsv`; returns a one-line summary.
pub fn write_list(args: &Args) -> anyhow::Result<String> {
    let (split, build) = args.title.folders()?;
    let record = BuildRecord::read(&build.join("_b_build.json"))?;
    anyhow::ensure!(
        !record.chain.is_empty(),
        "{}: records no chain version",
        build.join("_b_build.json").display()
    );
    let built: std::collections::BTreeSet<&str> = record
        .shaders
        .iter()
        .filter(|s| s.status == "built")
        .map(|s| s.key.as_str())
        .collect();
    let rows = read_map(&split.join("shader_map.tsv"))?;
    let mut counts = [0usize; 4];
    let mut listed: Vec<&str> = Vec::new();
    for r in &rows {
        let v = if built.contains(r.key.as_str()) {
            verdict(&build, &r.key, &record.chain)
        } else {
            Verdict::NoRecord
        };
        counts[v as usize] += 1;
        if v >= Verdict::Unproven {
            listed.push(&r.key);
        }
    }
    let out = args.out.clone().unwrap_or(split);
    std::fs::create_dir_all(&out)
        .map_err(|e| anyhow::anyhow!("creating {}: {e}", out.display()))?;
    let path = out.join(C1_LIST);
    write_atomic(&path, list_text(&record.chain, &listed).as_bytes())?;
    Ok(format!(
        "c1-guard: {} shaders: {} without a run-time c1 index, {} proven, {} listed ({} unproven, \
         {} without a build record) → {} (b-{})",
        rows.len(),
        counts[Verdict::NoIndex as usize],
        counts[Verdict::Proven as usize],
        listed.len(),
        counts[Verdict::Unproven as usize],
        counts[Verdict::NoRecord as usize],
        path.display(),
        record.chain
    ))
}

/// Runs `dmsh c1-guard`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    println!("{}", write_list(&args)?);
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_opens_with_its_version_and_ends_with_a_newline() {
        assert_eq!(list_text("0123456789ab", &[]), "b-0123456789ab\n");
        assert_eq!(
            list_text("0123456789ab", &["00000000000000aa", "00000000000000bb"]),
            "b-0123456789ab\n00000000000000aa\n00000000000000bb\n"
        );
    }
}
