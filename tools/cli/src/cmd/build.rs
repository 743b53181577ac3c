//! `dmsh build`: Metal shading language for every shader of a split title, into a versioned
//! `b-<V>/` folder (docs/build.md). Per key: translate (native FMA: Metal's `fma` is fused) →
//! SPIR-V → MSL through SPIRV-Cross (dmsh-msl) → `<key>_b.metal` and `<key>_b.json` (the
//! reflection, with the chain version and the Metal entry points), checked against the
//! reflection; `_b_build.json` records, per key, `built` or the failing step and its message.
//! One failing shader never stops the build; the exit code is non-zero only with `--strict`.
//! Not yet: the seeds' fix-ups, `xcrun metal`, the cache, c1_full.tsv, the report.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::title::{read_map, translate_key, MapRow};

/// Arguments of `dmsh build`.
#[derive(clap::Args)]
pub struct Args {
    /// The title's folder (profile.toml, shader_facts_manual.tsv): its manual facts are used.
    #[arg(long)]
    pub game: Option<PathBuf>,
    /// The split folder (`dmsh split`'s outputs: shader_map.tsv, shader_facts.tsv, pkg/).
    #[arg(long)]
    pub split: PathBuf,
    /// Where `b-<V>/` is written (default: the split folder).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// MSL for iOS instead of macOS.
    #[arg(long)]
    pub ios: bool,
    /// Exit non-zero when any shader fails.
    #[arg(long)]
    pub strict: bool,
}

/// The chain version V: 12 hex digits of a hash of the translator's sources (embedded at
/// build time), the options and the converter (SPIRV-Cross).
pub fn chain_version(opts: &dmsh_msl::MslOptions) -> String {
    let mut h = Sha256::new();
    h.update(env!("DMSH_SOURCES_SHA256").as_bytes());
    h.update(format!("|fma=native|platform={}|", opts.platform.name()).as_bytes());
    h.update(dmsh_msl::SPIRV_CROSS.as_bytes());
    h.finalize()[..6]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// One key's outcome.
#[derive(Debug, Clone, PartialEq)]
struct Outcome {
    key: String,
    stage: String,
    /// `built`, `failed` or `unsupported`.
    status: &'static str,
    /// The failing step (`translate`, `msl`, `bindings`), empty when built.
    step: &'static str,
    message: String,
    /// The stage inputs of a built shader (what a fragment shader gives its vertex partners'
    /// `vs_pad`); empty otherwise.
    inputs: Vec<dmsh_reflect::IoVar>,
}

fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = path.with_extension("tmp~");
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))
}

/// Builds one key into `dir`; also returns the shader's stage inputs (what a fragment shader
/// gives its vertex partners' `vs_pad`).
fn build_key(
    split: &Path,
    r: &MapRow,
    dir: &Path,
    manual: Option<&Path>,
    opts: &dmsh_msl::MslOptions,
    v: &str,
    partners: &dmsh_fixup::Partners,
) -> Outcome {
    let fail = |step: &'static str, message: String| Outcome {
        key: r.key.clone(),
        stage: r.stage.clone(),
        status: "failed",
        step,
        message: message.replace(['\t', '\n'], " "),
        inputs: Vec::new(),
    };
    if r.gen != "nvn1" {
        return Outcome {
            status: "unsupported",
            step: "translate",
            ..fail(
                "translate",
                format!("{} (Ampere) code is not translated yet", r.gen),
            )
        };
    }
    let spv = dir.join(format!(".{}.spv", r.key));
    if let Err(e) = translate_key(split, r, &spv, manual, "native") {
        return fail("translate", format!("{e:#}"));
    }
    let words: Vec<u32> = match std::fs::read(&spv) {
        Ok(b) => b
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        Err(e) => return fail("translate", e.to_string()),
    };
    let json = spv.with_extension("json");
    let refl = std::fs::read_to_string(&json)
        .map_err(|e| e.to_string())
        .and_then(|t| dmsh_reflect::Reflection::from_json(&t).map_err(|e| e.to_string()));
    let _ = std::fs::remove_file(&spv);
    let _ = std::fs::remove_file(&json);
    let mut refl = match refl {
        Ok(r) => r,
        Err(e) => return fail("translate", e),
    };
    // From here on a failure still gives the translated inputs to the vertex partners.
    let inputs = refl.inputs.clone();
    let fail = |step: &'static str, message: String| Outcome {
        inputs: inputs.clone(),
        ..fail(step, message)
    };
    let words = match dmsh_fixup::for_metal(&words, &mut refl, partners) {
        Ok(w) => w,
        Err(e) => return fail("fix-up", e.to_string()),
    };
    let msl = match dmsh_msl::to_msl(&words, &refl, opts) {
        Ok(m) => m,
        Err(e) => return fail("msl", e.to_string()),
    };
    refl.metal_entry_z = msl
        .entry_points
        .iter()
        .find(|e| e.name != dmsh_msl::ENTRY_POINT)
        .map(|e| e.name.clone());
    let bad = dmsh_msl::check_bindings(&msl.source, &refl);
    if !bad.is_empty() {
        return fail("bindings", bad.join("; "));
    }
    refl.chain = Some(v.to_string());
    refl.metal_entry_points = msl.entry_points.iter().map(|e| e.name.clone()).collect();
    let base = dir.join(format!("{}_b", r.key));
    let written = write_atomic(&base.with_extension("metal"), msl.source.as_bytes())
        .and_then(|_| write_atomic(&base.with_extension("json"), refl.to_json().as_bytes()));
    match written {
        Ok(()) => Outcome {
            key: r.key.clone(),
            stage: r.stage.clone(),
            status: "built",
            step: "",
            message: String::new(),
            inputs,
        },
        Err(e) => fail("write", format!("{e:#}")),
    }
}

/// `_b_build.json`: the chain version, the counts and one record per key, in key order.
fn build_json(v: &str, outcomes: &[Outcome]) -> String {
    let count = |s: &str| outcomes.iter().filter(|o| o.status == s).count();
    let shaders: Vec<serde_json::Value> = outcomes
        .iter()
        .map(|o| {
            let mut m = serde_json::json!({"key": o.key, "stage": o.stage, "status": o.status});
            if o.status != "built" {
                m["step"] = o.step.into();
                m["message"] = o.message.clone().into();
            }
            m
        })
        .collect();
    let doc = serde_json::json!({
        "chain": v,
        "msl": format!("{}.{}", dmsh_msl::MSL_VERSION.0, dmsh_msl::MSL_VERSION.1),
        "converter": dmsh_msl::SPIRV_CROSS,
        "built": count("built"),
        "failed": count("failed"),
        "unsupported": count("unsupported"),
        "shaders": shaders,
    });
    serde_json::to_string_pretty(&doc).expect("serialises") + "\n"
}

/// shader_pairs.tsv (`dmsh split`): each vertex key's fragment partners; empty when the file
/// is absent (a title without pairs).
fn read_pairs(path: &Path) -> anyhow::Result<std::collections::HashMap<String, Vec<String>>> {
    let mut m: std::collections::HashMap<String, Vec<String>> = Default::default();
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(m),
        Err(e) => return Err(anyhow::anyhow!("reading {}: {e}", path.display())),
    };
    for (n, line) in text.lines().enumerate().skip(1) {
        let mut c = line.split('\t');
        match (c.next(), c.next()) {
            (Some(v), Some(f)) if !v.is_empty() && !f.is_empty() => {
                m.entry(v.to_string()).or_default().push(f.to_string())
            }
            _ => anyhow::bail!(
                "{}:{}: expected `vertex<TAB>fragment`",
                path.display(),
                n + 1
            ),
        }
    }
    Ok(m)
}

/// Runs `dmsh build`; returns the `b-<V>` folder and a one-line summary per failure.
pub fn build(args: &Args) -> anyhow::Result<(PathBuf, String, bool)> {
    let opts = dmsh_msl::MslOptions {
        platform: if args.ios {
            dmsh_msl::Platform::Ios
        } else {
            dmsh_msl::Platform::MacOs
        },
    };
    let v = chain_version(&opts);
    let out = args.out.clone().unwrap_or_else(|| args.split.clone());
    let dir = out.join(format!("b-{v}"));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let manual = match &args.game {
        Some(g) => super::title::manual_facts(g)?,
        None => None,
    };
    let rows = read_map(&args.split.join("shader_map.tsv"))?;
    let bar = indicatif::ProgressBar::new(rows.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("build {bar:40} {pos}/{len} shaders {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    // Vertex shaders last: vs_pad gives each the inputs its built partners read.
    let pairs = read_pairs(&args.split.join("shader_pairs.tsv"))?;
    let (vertex, others): (Vec<&MapRow>, Vec<&MapRow>) =
        rows.iter().partition(|r| r.stage == "vertex");
    let build_rows =
        |rows: &[&MapRow], inputs: &std::collections::HashMap<&str, &[dmsh_reflect::IoVar]>| {
            rows.par_iter()
                .map(|r| {
                    let mut partners = dmsh_fixup::Partners::default();
                    for f in pairs.get(r.key.as_str()).into_iter().flatten() {
                        partners.inputs.extend(
                            inputs
                                .get(f.as_str())
                                .into_iter()
                                .flat_map(|i| i.iter().cloned()),
                        );
                    }
                    let o = build_key(
                        &args.split,
                        r,
                        &dir,
                        manual.as_deref(),
                        &opts,
                        &v,
                        &partners,
                    );
                    bar.inc(1);
                    o
                })
                .collect::<Vec<Outcome>>()
        };
    let mut outcomes = build_rows(&others, &Default::default());
    let inputs = outcomes
        .iter()
        .filter(|o| o.stage == "fragment")
        .map(|o| (o.key.as_str(), o.inputs.as_slice()))
        .collect();
    let vertex_outcomes = build_rows(&vertex, &inputs);
    outcomes.extend(vertex_outcomes);
    outcomes.sort_by(|a, b| a.key.cmp(&b.key));
    bar.finish_and_clear();
    write_atomic(
        &dir.join("_b_build.json"),
        build_json(&v, &outcomes).as_bytes(),
    )?;
    let built = outcomes.iter().filter(|o| o.status == "built").count();
    let mut line = format!(
        "build: b-{v}: {built} of {} shaders reach MSL ({})",
        outcomes.len(),
        dir.display()
    );
    for o in outcomes.iter().filter(|o| o.status != "built") {
        line.push_str(&format!(
            "\n  {} {} ({}) at {}: {}",
            o.status, o.key, o.stage, o.step, o.message
        ));
    }
    Ok((dir, line, built == outcomes.len()))
}

/// Runs `dmsh build`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (_, line, all) = build(&args)?;
    println!("{line}");
    Ok(if all || !args.strict {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_version_depends_on_the_options() {
        let mac = chain_version(&dmsh_msl::MslOptions::default());
        let ios = chain_version(&dmsh_msl::MslOptions {
            platform: dmsh_msl::Platform::Ios,
        });
        assert_eq!(mac.len(), 12);
        assert!(mac.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(mac, ios);
        assert_eq!(mac, chain_version(&dmsh_msl::MslOptions::default()));
    }

    #[test]
    fn build_json_lists_failures_with_their_step() {
        let o = |key: &str, status, step, msg: &str| Outcome {
            key: key.into(),
            stage: "vertex".into(),
            status,
            step,
            message: msg.into(),
            inputs: Vec::new(),
        };
        let j = build_json(
            "0123456789ab",
            &[
                o("aa", "built", "", ""),
                o("bb", "failed", "msl", "no geometry stage"),
            ],
        );
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!(
            (v["built"].as_u64(), v["failed"].as_u64()),
            (Some(1), Some(1))
        );
        assert_eq!(v["shaders"][1]["step"], "msl");
        assert!(v["shaders"][0].get("step").is_none());
    }
}
