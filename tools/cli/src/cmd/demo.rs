//! `dmsh demo`: runs the chain that exists so far on the bundled demo title, games/demo:
//! split (tables and the per-key control/code files), then translation of every unique shader
//! to SPIR-V with its reflection, and a coverage report (found, translated, failed and why),
//! then the Metal build of the split (`dmsh build`: `b-<V>/`, MSL per key, `_b_build.json`)
//! and the coverage report over it (`dmsh report`: `report/`), and its c1 list (`dmsh
//! c1-guard`: `c1_full.tsv`, next to shader_map.tsv).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::split::{split_main, Args as SplitArgs};

/// Arguments of `dmsh demo`.
#[derive(clap::Args)]
pub struct Args {
    /// Output folder (pkg/, the tables, spv/, b-<V>/, cache/, report/).
    #[arg(long, default_value = "out/demo")]
    pub out: PathBuf,
    /// The demo title's folder (default: games/demo of this source tree).
    #[arg(long)]
    pub title: Option<PathBuf>,
}

/// games/demo: next to the current directory's checkout, else the one this binary was built from.
fn default_title() -> PathBuf {
    let here = Path::new("games/demo");
    if here.join("profile.toml").is_file() {
        return here.to_path_buf();
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../games/demo")
}

/// Runs `dmsh demo`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let title = args.title.unwrap_or_else(default_title);
    anyhow::ensure!(
        title.join("profile.toml").is_file(),
        "{}: no demo title here (profile.toml missing)",
        title.display()
    );
    let o = &args.out;
    let s = SplitArgs {
        romfs: title.join("romfs").to_string_lossy().into_owned(),
        main: title.join("exefs/main").to_string_lossy().into_owned(),
        pkg_dir: o.join("pkg"),
        map: o.join("shader_map.tsv"),
        facts: o.join("shader_facts.tsv"),
        pairs: Some(o.join("shader_pairs.tsv")),
        profile: Some(title.clone()),
        max_depth: dmsh_scan::Limits::default().max_depth,
        layer_cap_mib: dmsh_scan::Limits::default().layer_cap >> 20,
        all_warnings: true,
    };
    eprintln!("demo: split {} → {}", title.display(), o.display());
    let summary = split_main(&s)?;
    println!("{summary}");
    println!(
        "tables: {}, {}, {}; shaders in {}",
        s.map.display(),
        s.facts.display(),
        o.join("shader_pairs.tsv").display(),
        o.join("pkg").display()
    );
    let manual = super::title::manual_facts(&title)?;
    let report = translate_all(o, manual.as_deref())?;
    println!("{report}");
    // Then the Metal build of the same split: b-<V>/ next to the tables.
    let t = super::title::TitleArgs {
        game: Some(title.clone()),
        split: Some(o.to_path_buf()),
    };
    let b = super::build::Args {
        title: t.clone(),
        spirv: None,
        out: None,
        cache: None,
        ios: false,
        strict: false,
    };
    let built = super::build::build(&b)?;
    println!("{}", built.line);
    // Then the title's coverage report over that build: DIR/report/.
    let folders = super::title::BuiltTitle {
        title: t,
        build: Some(built.dir),
    };
    let r = super::report::Args {
        title: folders.clone(),
        out: Some(o.join("report")),
        since: None,
    };
    println!("{}", super::report::write_report(&r)?);
    // And the c1 list of that build: DIR/c1_full.tsv, where the runtime looks for it.
    let c1 = super::c1_guard::Args {
        title: folders,
        out: None,
    };
    println!("{}", super::c1_guard::write_list(&c1)?);
    Ok(ExitCode::SUCCESS)
}

/// What a porter must check in a translated shader, from its reflection, as a report detail
/// (empty when nothing): guessed pipeline state (a geometry input primitive, tessellation
/// parameters) and 64-bit atomics (Metal has only some, on some GPU families).
fn checks(json: &Path) -> String {
    let Some(r) = std::fs::read_to_string(json)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
    else {
        return String::new();
    };
    let mut v = Vec::new();
    let g = &r["geometry_input"];
    if g["source"] == "guessed" {
        v.push(format!(
            "input primitive guessed ({}): give it with a `KEY gs_input PRIMITIVE` facts row",
            g["primitive"].as_str().unwrap_or("?")
        ));
    }
    let t = &r["tessellation"];
    if t["source"] == "guessed" {
        v.push(format!(
            "tessellation guessed ({}, {}, {}): give it with a `KEY tess DOMAIN SPACING OUTPUT` facts row",
            t["domain"].as_str().unwrap_or("?"),
            t["spacing"].as_str().unwrap_or("?"),
            t["output"].as_str().unwrap_or("?")
        ));
    }
    if r["int64_atomics"] == true {
        v.push("uses 64-bit atomics (Metal: some GPU families and operations only)".into());
    }
    v.join("; ")
}

/// Translates every unique shader of a split output folder into `<out>/spv/<key>.spv` + `.json`
/// and writes `<out>/translate_report.tsv` (key, stage, status, detail). The demo's Switch 1
/// shaders are uam (deko3d) binaries in NVN containers, so handles resolve through the deko3d
/// layout; its NVN2 shaders are Ampere code under NVN's layout.
fn translate_all(o: &Path, manual: Option<&Path>) -> anyhow::Result<String> {
    use rayon::prelude::*;
    let rows = super::title::read_map(&o.join("shader_map.tsv"))?;
    let spv_dir = o.join("spv");
    std::fs::create_dir_all(&spv_dir)?;
    let results: Vec<(String, String, &'static str, String)> = rows
        .par_iter()
        .map(|r| {
            let (status, detail) = if r.gen != "nvn1" && r.gen != "nvn2" {
                ("unsupported", format!("{} code is not translated", r.gen))
            } else {
                let out = spv_dir.join(format!("{}.spv", r.key));
                match super::title::translate_key(o, r, &out, manual, "exact", "native", "direct") {
                    Ok(_) => ("translated", checks(&out.with_extension("json"))),
                    Err(e) => ("failed", format!("{e:#}").replace(['\t', '\n'], " ")),
                }
            };
            (r.key.clone(), r.stage.clone(), status, detail)
        })
        .collect();
    let mut tsv = String::from("key\tstage\tstatus\tdetail\n");
    let mut count = std::collections::BTreeMap::<&str, usize>::new();
    for (key, stage, status, detail) in &results {
        tsv.push_str(&format!("{key}\t{stage}\t{status}\t{detail}\n"));
        *count.entry(status).or_default() += 1;
    }
    let report = o.join("translate_report.tsv");
    let tmp = o.join(".translate_report.tsv.tmp");
    std::fs::write(&tmp, tsv)?;
    std::fs::rename(&tmp, &report)?;
    let mut line = format!("translate: {} unique shaders:", results.len());
    for (status, n) in &count {
        line.push_str(&format!(" {status} {n},"));
    }
    line.pop();
    for (key, stage, status, detail) in &results {
        if *status == "failed" {
            line.push_str(&format!("\n  failed {key} ({stage}): {detail}"));
        }
    }
    for (key, stage, status, detail) in &results {
        if *status == "translated" && !detail.is_empty() {
            line.push_str(&format!("\n  check {key} ({stage}): {detail}"));
        }
    }
    line.push_str(&format!(
        "\nSPIR-V and reflection in {}; report {}",
        spv_dir.display(),
        report.display()
    ));
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_are_reported() {
        let d = std::env::temp_dir().join(format!("dmsh-demo-guess-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("r.json");
        let write = |s: &str| std::fs::write(&p, s).unwrap();
        write(
            r#"{"geometry_input": {"primitive": "triangles", "vertices": 3, "source": "guessed"}}"#,
        );
        assert!(checks(&p).contains("input primitive guessed (triangles)"));
        write(r#"{"geometry_input": {"primitive": "lines", "vertices": 2, "source": "given"}}"#);
        assert_eq!(checks(&p), "");
        write(
            r#"{"tessellation": {"domain": "quads", "spacing": "equal", "output": "points", "source": "guessed"}}"#,
        );
        assert!(checks(&p).contains("tessellation guessed (quads, equal, points)"));
        write(r#"{"tessellation": {"source": "container"}}"#);
        assert_eq!(checks(&p), "");
        write(r#"{"int64_atomics": true}"#);
        assert!(checks(&p).contains("64-bit atomics"));
        write(r#"{"int64_atomics": false}"#);
        assert_eq!(checks(&p), "");
        assert_eq!(checks(&d.join("missing.json")), "");
        let _ = std::fs::remove_dir_all(&d);
    }
}
