//! `dmsh build`: Metal shading language for every shader of a split title, into a versioned
//! `b-<V>/` folder (docs/build.md). Per key: its input digests (`inputs`), then the cache
//! (`cache`): a hit writes the cached outputs, a miss converts the key (`convert`: translate →
//! SPIR-V → MSL → `<key>_b.metal` and `<key>_b.json`) in a staging folder and stores what it
//! wrote. `_b_build.json` (`record`) records, per key, `built` or the failing step and its
//! message, and the digests of its inputs and outputs. One failing shader never stops the
//! build; the exit code is non-zero only with `--strict`.
//! Vertex shaders are converted after every other stage, so vs_pad (dmsh-fixup) sees their
//! fragment partners' inputs. Where `xcrun metal` exists (`metallib`) every library is also
//! compiled. With `--spirv DIR` the keys are a capture folder's Vulkan modules (`capture`)
//! instead of a split title's shaders: no translation, `fix_strides`, their reflection from
//! the module and the dual-source variant `<key>_d` (`convert::build_module`).
//! The c1 list (c1_full.tsv) is `dmsh c1-guard`, from the reflections this writes.

pub mod cache;
pub mod capture;
pub mod convert;
pub mod inputs;
pub mod metallib;
pub mod nvn2;
pub mod record;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use rayon::prelude::*;

use super::title::{read_map, MapRow};
pub use convert::write_atomic;
use record::{BuildRecord, KeyRecord};

/// Arguments of `dmsh build`.
#[derive(clap::Args)]
pub struct Args {
    /// The title (profile, manual facts) and its split folder.
    #[command(flatten)]
    pub title: super::title::TitleArgs,
    /// A capture folder of a Vulkan title's SPIR-V modules (every `*.spv` under it) to build
    /// instead of a split title (docs/build.md, "Vulkan modules").
    #[arg(long, conflicts_with_all = ["game", "split"])]
    pub spirv: Option<PathBuf>,
    /// Where `b-<V>/` is written (default: the split or capture folder).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The per-shader cache (default: OUT/cache).
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// MSL for iOS instead of macOS.
    #[arg(long)]
    pub ios: bool,
    /// Exit non-zero when any shader fails.
    #[arg(long)]
    pub strict: bool,
}

/// The MSL options of a build for macOS, or iOS.
pub fn msl_options(ios: bool) -> dmsh_msl::MslOptions {
    dmsh_msl::MslOptions {
        platform: if ios {
            dmsh_msl::Platform::Ios
        } else {
            dmsh_msl::Platform::MacOs
        },
    }
}

/// What one build did.
pub struct Summary {
    /// The `b-<V>` folder.
    pub dir: PathBuf,
    /// The summary line, then one line per failure.
    pub line: String,
    /// Whether every key built.
    pub all_built: bool,
}

/// What every key of one build shares.
struct Run {
    title: inputs::TitleInputs,
    cache: cache::Cache,
    /// The `b-<V>` folder.
    dir: PathBuf,
    opts: dmsh_msl::MslOptions,
    /// The chain version.
    v: String,
    /// `xcrun metal`, where it exists.
    metal: Option<metallib::MetalCompiler>,
    /// Whether spirv-val is installed (the `validate` step).
    validate: bool,
}

impl Run {
    fn setting(&self) -> convert::Setting<'_> {
        convert::Setting {
            opts: &self.opts,
            v: &self.v,
            metal: self.metal.as_ref(),
            validate: self.validate,
        }
    }
}

/// One key: from the cache, else converted (`convert`) in `dir/.stage-<key>` and stored; its
/// outputs are then written into `dir`. Returns the record and whether it was converted.
fn key_record(
    run: &Run,
    key: &str,
    stage_name: &str,
    digests: inputs::InputDigests,
    convert: impl FnOnce(&convert::Setting, &Path) -> convert::Outcome,
) -> (KeyRecord, bool) {
    let Run { cache, dir, v, .. } = run;
    let cache_key = digests.cache_key();
    let mut rec = KeyRecord {
        key: key.to_string(),
        stage: stage_name.to_string(),
        cache_key: cache_key.clone(),
        inputs: digests,
        ..Default::default()
    };
    // A hit whose outputs cannot be written (a damaged blob) is converted again.
    if let Some(e) = cache.get(&cache_key) {
        if cache.materialise(&e, dir, v).is_ok() {
            return (rec.with(e), false);
        }
    }
    let stage = dir.join(format!(".stage-{key}"));
    let _ = std::fs::remove_dir_all(&stage);
    let entry = std::fs::create_dir_all(&stage)
        .with_context(|| format!("creating {}", stage.display()))
        .and_then(|_| {
            let o = convert(&run.setting(), &stage);
            if o.step == "write" {
                // A file-system failure says nothing about the shader: not cached.
                anyhow::bail!("{}", o.message)
            }
            cache.put(&cache_key, o.status, o.step, &o.message, &stage)
        })
        .and_then(|e| cache.materialise(&e, dir, v).map(|_| e));
    let _ = std::fs::remove_dir_all(&stage);
    match entry {
        Ok(e) => (rec.with(e), true),
        Err(e) => {
            rec.status = "failed".into();
            rec.step = "write".into();
            rec.message = format!("{e:#}").replace(['\t', '\n'], " ");
            (rec, true)
        }
    }
}

/// One key of a split title (`partners`: the inputs its fragment partners read, vs_pad;
/// empty for other stages).
fn split_record(
    run: &Run,
    split: &Path,
    manual: Option<&Path>,
    r: &MapRow,
    partners: &dmsh_fixup::Partners,
    lowered: bool,
) -> (KeyRecord, bool) {
    let mut digests = run.title.digests(split, r);
    if lowered {
        // The lowered variants are outputs too: a key built without them is not reused.
        digests.partners = inputs::sha256_hex(format!("{} lowered", digests.partners).as_bytes());
    }
    key_record(run, &r.key, &r.stage, digests, |set, dir| {
        convert::build_key(set, split, manual, r, dir, partners, lowered)
    })
}

/// The inputs the built fragment partners of vertex shader `key` read (from their
/// `<key>_b.json` in the `b-<V>` folder; a partner that did not build gives none).
fn fragment_inputs(run: &Run, key: &str) -> dmsh_fixup::Partners {
    let mut p = dmsh_fixup::Partners::default();
    for f in run.title.partners_of(key) {
        let Ok(text) = std::fs::read_to_string(run.dir.join(format!("{f}_b.json"))) else {
            continue;
        };
        if let Ok(r) = dmsh_reflect::Reflection::from_json(&text) {
            if r.stage == "fragment" {
                p.inputs.extend(r.inputs);
            }
        }
    }
    p
}

/// Removes what `dir` holds besides `_b_build.json` and `keep`: an interrupted build's
/// staging folders and temporary files, and the outputs of keys that no longer build.
fn remove_strays(dir: &Path, keep: &BTreeSet<String>) -> anyhow::Result<()> {
    let rd = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name == "_b_build.json" || keep.contains(&name) {
            continue;
        }
        let p = e.path();
        let removed = if p.is_dir() {
            std::fs::remove_dir_all(&p)
        } else {
            std::fs::remove_file(&p)
        };
        removed.with_context(|| format!("removing {}", p.display()))?;
    }
    Ok(())
}

/// A progress bar over `n` shaders.
fn progress(n: usize) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(n as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("build {bar:40} {pos}/{len} shaders {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

/// Opens the build: the chain version of `title`'s inputs, `OUT/b-<V>/`, the cache, xcrun.
fn open(args: &Args, title: inputs::TitleInputs, default_out: &Path) -> anyhow::Result<Run> {
    let v = super::chain::version(&title.chain_parts());
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out.to_path_buf());
    let dir = out.join(format!("b-{v}"));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let cache = cache::Cache::open(&args.cache.clone().unwrap_or_else(|| out.join("cache")))?;
    let metal = metallib::MetalCompiler::detect(args.ios);
    if metal.is_none() {
        eprintln!("build: no xcrun metal here: MSL only, no .metallib (docs/build.md)");
    }
    let validate = (title.tools.iter()).any(|(n, _)| n == super::chain::SPIRV_VAL);
    if !validate {
        eprintln!("build: no spirv-val here: modules are not validated (docs/build.md)");
    }
    Ok(Run {
        title,
        cache,
        dir,
        opts: msl_options(args.ios),
        v,
        metal,
        validate,
    })
}

/// Runs `dmsh build`: a split title (`--split`) or a capture folder (`--spirv`).
pub fn build(args: &Args) -> anyhow::Result<Summary> {
    if let Some(capture) = &args.spirv {
        return build_capture(args, capture);
    }
    let split = &args.title.split_dir()?;
    let manual = args.title.manual()?;
    let title = args.title.inputs(Some(split), &msl_options(args.ios))?;
    let run = open(args, title, split)?;
    let rows = read_map(&split.join("shader_map.tsv"))?;
    let bar = progress(rows.len());
    // Vertex shaders last: vs_pad gives each the inputs its built fragment partners read
    // (their reflections in `dir`; the partners' keys and facts are in the cache key).
    let (vertex, others): (Vec<&MapRow>, Vec<&MapRow>) =
        rows.iter().partition(|r| r.stage == "vertex");
    let manual = manual.as_deref();
    // In a title with geometry or tessellation control shaders every vertex shader also gets
    // its capture form and every fragment shader reading gl_PrimitiveID its variant: the
    // tables pair vertex with fragment shaders only, so which vertex shader feeds which
    // geometry or control shader is the host's to know (docs/geometry.md).
    let lowering = rows
        .iter()
        .any(|r| r.stage == "geometry" || r.stage == "tess_control");
    let lowered = |_key: &str| lowering;
    let mut done: Vec<(KeyRecord, bool)> = others
        .par_iter()
        .map(|r| {
            let none = dmsh_fixup::Partners::default();
            let o = split_record(&run, split, manual, r, &none, lowered(&r.key));
            bar.inc(1);
            o
        })
        .collect();
    done.par_extend(vertex.par_iter().map(|r| {
        let p = fragment_inputs(&run, &r.key);
        let o = split_record(&run, split, manual, r, &p, lowered(&r.key));
        bar.inc(1);
        o
    }));
    bar.finish_and_clear();
    finish(&run, done)
}

/// Builds capture folder `capture`'s Vulkan modules (`capture::read`); a file that is not a
/// module is recorded as failed at step `read`.
fn build_capture(args: &Args, capture: &Path) -> anyhow::Result<Summary> {
    let title = inputs::TitleInputs::load(None, None, None, &msl_options(args.ios))?;
    let run = open(args, title, capture)?;
    let modules = capture::read(capture)?;
    // As for a split title: with geometry or tessellation control modules in the folder,
    // every vertex module also gets its capture form and every fragment module reading
    // gl_PrimitiveID its variant (which vertex module feeds which is the host's to know).
    let lowered = modules
        .iter()
        .any(|m| matches!(&m.read, Ok((s, _)) if matches!(*s, "geometry" | "tess_control")));
    let bar = progress(modules.len());
    let done: Vec<(KeyRecord, bool)> = modules
        .par_iter()
        .map(|m| {
            let o = module_record(&run, m, lowered);
            bar.inc(1);
            o
        })
        .collect();
    bar.finish_and_clear();
    finish(&run, done)
}

/// One file of a capture folder: a module through the cache, or failed at step `read`.
fn module_record(run: &Run, m: &capture::Module, lowered: bool) -> (KeyRecord, bool) {
    match &m.read {
        Ok((stage, words)) => {
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            let mut digests = run.title.module_digests(&m.key, stage, &bytes);
            if lowered {
                // The lowered variants are outputs too: a key built without them is not
                // reused.
                digests.partners =
                    inputs::sha256_hex(format!("{} lowered", digests.partners).as_bytes());
            }
            key_record(run, &m.key, stage, digests, |set, dir| {
                convert::build_module(set, &m.key, stage, words, dir, lowered)
            })
        }
        Err(e) => {
            let rec = KeyRecord {
                key: m.key.clone(),
                stage: "unknown".into(),
                status: "failed".into(),
                step: "read".into(),
                message: e.clone(),
                ..Default::default()
            };
            (rec, true)
        }
    }
}

/// Writes `_b_build.json` for the keys `done` (each with whether it was converted), removes
/// what is not an output of this build, and sums up.
fn finish(run: &Run, mut done: Vec<(KeyRecord, bool)>) -> anyhow::Result<Summary> {
    let (v, dir) = (&run.v, &run.dir);
    done.sort_by(|a, b| a.0.key.cmp(&b.0.key));
    let converted = done.iter().filter(|(_, c)| *c).count();
    let record = BuildRecord::new(v, done.into_iter().map(|(r, _)| r).collect());
    let keep: BTreeSet<String> = record
        .shaders
        .iter()
        .flat_map(|s| s.outputs.keys().cloned())
        .collect();
    remove_strays(dir, &keep)?;
    write_atomic(&dir.join("_b_build.json"), record.to_json().as_bytes())?;
    let n = record.shaders.len();
    let mut line = format!(
        "build: b-{v}: {} of {n} shaders reach MSL ({}); {converted} converted, {} from the cache",
        record.built,
        dir.display(),
        n - converted
    );
    for o in record.shaders.iter().filter(|o| o.status != "built") {
        line.push_str(&format!(
            "\n  {} {} ({}) at {}: {}",
            o.status, o.key, o.stage, o.step, o.message
        ));
    }
    Ok(Summary {
        dir: dir.clone(),
        line,
        all_built: record.built == n,
    })
}

/// Runs `dmsh build`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let s = build(&args)?;
    println!("{}", s.line);
    Ok(if s.all_built || !args.strict {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_options_are_on_the_chain() {
        let parts = |ios| {
            let t = inputs::TitleInputs::load(None, None, None, &msl_options(ios)).unwrap();
            super::super::chain::version(&t.chain_parts())
        };
        assert_ne!(parts(false), parts(true));
        assert_eq!(parts(false), parts(false));
    }
}
