//! A split title folder (what `dmsh split` wrote: shader_map.tsv, shader_facts.tsv, pkg/) as
//! `dmsh demo` and `dmsh build` read it: its rows, and one key's translation.

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::build::inputs::TitleInputs;

/// The title arguments `dmsh build`, `dmsh chain` and `dmsh report` share.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct TitleArgs {
    /// The title's folder (profile.toml and its name, shader_facts_manual.tsv; the split's
    /// tables too when they are there, as in the seed's games/<id>/).
    #[arg(long)]
    pub game: Option<PathBuf>,
    /// The split folder (`dmsh split`'s outputs: shader_map.tsv, shader_facts.tsv,
    /// shader_pairs.tsv, pkg/; default: the title's folder when it has a shader_map.tsv).
    #[arg(long)]
    pub split: Option<PathBuf>,
}

impl TitleArgs {
    /// The split folder: `--split`, else the title's folder when it holds a shader map.
    pub fn split_dir(&self) -> anyhow::Result<PathBuf> {
        match (&self.split, &self.game) {
            (Some(s), _) => Ok(s.clone()),
            (None, Some(g)) if g.join("shader_map.tsv").is_file() => Ok(g.clone()),
            (None, Some(g)) => anyhow::bail!(
                "{}: no shader_map.tsv here; give the split folder with --split",
                g.display()
            ),
            (None, None) => anyhow::bail!("give the split folder with --split (or --game)"),
        }
    }

    /// The chain's inputs from this title (and `split`, the split folder if there is one).
    pub fn inputs(
        &self,
        split: Option<&Path>,
        opts: &dmsh_msl::MslOptions,
    ) -> anyhow::Result<TitleInputs> {
        let manual = self.manual()?;
        TitleInputs::load(split, self.game.as_deref(), manual.as_deref(), opts)
    }

    /// The title's manual facts file, if it has a profile naming one.
    pub fn manual(&self) -> anyhow::Result<Option<PathBuf>> {
        match &self.game {
            Some(g) => manual_facts(g),
            None => Ok(None),
        }
    }
}

/// One row of shader_map.tsv that translation needs.
pub struct MapRow {
    /// The shader key.
    pub key: String,
    /// Its stage name.
    pub stage: String,
    /// Its code generation (`nvn1`, `nvn2`).
    pub gen: String,
    /// The container kind of its first origin.
    pub container: String,
}

/// The unique rows of a shader_map.tsv (the first row of each key), sorted by key.
pub fn read_map(path: &Path) -> anyhow::Result<Vec<MapRow>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or_else(|| anyhow::anyhow!("{}: no column {name}", path.display()))
    };
    let (k, st, g, ct) = (col("key")?, col("stage")?, col("gen")?, col("container")?);
    let mut rows: Vec<MapRow> = Vec::new();
    for line in lines {
        let c: Vec<&str> = line.split('\t').collect();
        let (Some(key), Some(stage), Some(gen), Some(container)) =
            (c.get(k), c.get(st), c.get(g), c.get(ct))
        else {
            continue;
        };
        if rows.last().is_some_and(|r| r.key == *key) {
            continue;
        }
        rows.push(MapRow {
            key: key.to_string(),
            stage: stage.to_string(),
            gen: gen.to_string(),
            container: container.to_string(),
        });
    }
    rows.sort_by(|a, b| a.key.cmp(&b.key));
    rows.dedup_by(|a, b| a.key == b.key);
    Ok(rows)
}

/// `dmsh translate` arguments, parsed the way the command line parses them.
#[derive(clap::Parser)]
struct TranslateCli {
    #[command(flatten)]
    args: super::translate::Args,
}

/// Translates one key of a split folder `split` (its `pkg/<key>.code` and `.control`, with the
/// split's facts and the title's manual facts) to `out` (`.spv` + `.json`), with `fma`
/// (`exact` or `native`). The shaders of this project's titles are uam (deko3d) binaries in
/// NVN containers, so handles resolve through the deko3d layout.
pub fn translate_key(
    split: &Path,
    r: &MapRow,
    out: &Path,
    manual: Option<&Path>,
    fma: &str,
    f64: &str,
    form: &str,
) -> anyhow::Result<std::process::ExitCode> {
    use clap::Parser;
    let pkg = split.join("pkg");
    let code = pkg.join(format!("{}.code", r.key));
    let control = pkg.join(format!("{}.control", r.key));
    let facts = split.join("shader_facts.tsv");
    let mut argv: Vec<String> = vec!["translate".into(), "--stage".into(), r.stage.clone()];
    argv.extend(["--code".into(), code.to_string_lossy().into_owned()]);
    argv.extend(["--out".into(), out.to_string_lossy().into_owned()]);
    // The control section keys the shader (its facts row is checked against the stage) and
    // gives compute sizes and c1.
    argv.extend(["--control".into(), control.to_string_lossy().into_owned()]);
    argv.extend(["--facts".into(), facts.to_string_lossy().into_owned()]);
    if let Some(m) = manual {
        argv.extend(["--facts".into(), m.to_string_lossy().into_owned()]);
    }
    // The demo's Switch 1 shaders are deko3d builds (uam); NVN2 keys are Ampere code under
    // NVN's layout.
    let (abi, arch) = if r.gen == "nvn2" {
        ("nvn", "sm86")
    } else {
        ("deko3d", "sm53")
    };
    argv.extend(["--arch".into(), arch.into()]);
    if r.stage == "compute" {
        argv.extend(["--abi".into(), abi.into()]);
    } else {
        argv.extend(["--profile".into(), abi.into()]);
    }
    argv.extend(["--fma".into(), fma.into()]);
    argv.extend(["--f64".into(), f64.into()]);
    argv.extend(["--form".into(), form.into()]);
    let c = TranslateCli::try_parse_from(&argv)?;
    super::translate::run(c.args)
}

/// The title's manual facts file (pipeline state the binaries lack), if its profile names one.
pub fn manual_facts(title: &Path) -> anyhow::Result<Option<std::path::PathBuf>> {
    let prof = dmsh_scan::Profile::load(title)?;
    Ok((!prof.shader_facts_manual.is_empty()).then(|| title.join(&prof.shader_facts_manual)))
}

/// A built title's folders as `dmsh report` and `dmsh c1-guard` take them: the title and
/// its split, and the build.
#[derive(clap::Args, Clone, Default)]
pub struct BuiltTitle {
    /// The title and its split folder.
    #[command(flatten)]
    pub title: TitleArgs,
    /// The build folder, `b-<V>/` (default: the one b-* folder in the split folder).
    #[arg(long, value_name = "DIR")]
    pub build: Option<PathBuf>,
}

impl BuiltTitle {
    /// The split folder and the build folder.
    pub fn folders(&self) -> anyhow::Result<(PathBuf, PathBuf)> {
        let split = self.title.split_dir()?;
        let build = match &self.build {
            Some(b) => b.clone(),
            None => only_build(&split)?,
        };
        Ok((split, build))
    }

    /// The title's folder, if given.
    pub fn game(&self) -> Option<&Path> {
        self.title.game.as_deref()
    }
}

/// The one `b-*` folder in `split`.
fn only_build(split: &Path) -> anyhow::Result<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(split)
        .with_context(|| format!("reading {}", split.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("b-"))
        })
        .collect();
    found.sort();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => anyhow::bail!(
            "{}: no b-<V> folder (run dmsh build first)",
            split.display()
        ),
        _ => anyhow::bail!(
            "{}: several builds ({}): name one with --build",
            split.display(),
            found
                .iter()
                .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
