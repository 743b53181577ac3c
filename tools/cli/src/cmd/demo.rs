//! `dmsh demo`: runs the chain that exists so far (today: split and its summary) on the bundled
//! demo title, games/demo.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::split::{split_main, Args as SplitArgs};

/// Arguments of `dmsh demo`.
#[derive(clap::Args)]
pub struct Args {
    /// Output folder (pkg/, shader_map.tsv, shader_facts.tsv, shader_pairs.tsv).
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
    Ok(ExitCode::SUCCESS)
}
