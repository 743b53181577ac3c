//! `dmsh split` (and the `shader_split` binary, which includes this file): find every shader in
//! a title's RomFS and main, write `<pkg dir>/<key>.control|.code` and the split tables.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use dmsh_scan::{Inputs, Limits, Outputs, Profile, Progress, Summary};

/// Arguments of `dmsh split` (the seed's order).
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// RomFS folders, comma-separated, base game first, then updates.
    pub romfs: String,
    /// ExeFS mains (NSO, NRO or ELF), comma-separated, base first.
    pub main: String,
    /// Folder for `<key>.control` and `<key>.code`.
    pub pkg_dir: PathBuf,
    /// shader_map.tsv to write.
    pub map: PathBuf,
    /// shader_facts.tsv to write.
    pub facts: PathBuf,
    /// shader_pairs.tsv to write.
    pub pairs: Option<PathBuf>,
    /// Folder holding profile.toml (e.g. games/<title-id>).
    #[arg(long)]
    pub profile: Option<PathBuf>,
    /// Deepest archive nesting followed.
    #[arg(long, default_value_t = Limits::default().max_depth)]
    pub max_depth: usize,
    /// Largest decompressed buffer, in MiB.
    #[arg(long, default_value_t = Limits::default().layer_cap >> 20)]
    pub layer_cap_mib: u64,
    /// Print every warning (default: the first 50).
    #[arg(long)]
    pub all_warnings: bool,
}

fn split_list(s: &str) -> Vec<PathBuf> {
    s.split(',')
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// Progress on stderr: a bar on a terminal, a plain line every ~5 % otherwise.
struct Report {
    bar: Option<indicatif::ProgressBar>,
    total: AtomicU64,
    done: AtomicU64,
    step: AtomicU64,
    lines: Mutex<()>,
}

impl Report {
    fn new() -> Report {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = indicatif::ProgressBar::new(0);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {msg}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b
        });
        Report {
            bar,
            total: AtomicU64::new(0),
            done: AtomicU64::new(0),
            step: AtomicU64::new(0),
            lines: Mutex::new(()),
        }
    }
}

impl Progress for Report {
    fn start(&self, files: u64, bytes: u64) {
        self.total.store(bytes.max(1), Ordering::Relaxed);
        match &self.bar {
            Some(b) => b.set_length(bytes),
            None => eprintln!(
                "split: scanning {files} files, {:.1} MB",
                bytes as f64 / 1e6
            ),
        }
    }
    fn done(&self, path: &str, bytes: u64) {
        let done = self.done.fetch_add(bytes, Ordering::Relaxed) + bytes;
        match &self.bar {
            Some(b) => {
                b.inc(bytes);
                b.set_message(path.to_string());
            }
            None => {
                let pct = done * 100 / self.total.load(Ordering::Relaxed);
                let step = pct / 5;
                if self.step.fetch_max(step, Ordering::Relaxed) < step {
                    let _g = self.lines.lock();
                    eprintln!("split: {pct}% ({:.1} MB)", done as f64 / 1e6);
                }
            }
        }
    }
    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// Runs the split for `args` and returns its summary (shared by `dmsh split`, `dmsh demo` and
/// `shader_split`).
pub fn split_main(args: &Args) -> anyhow::Result<Summary> {
    let profile = match &args.profile {
        Some(dir) => Profile::load(dir)?,
        None => Profile::default(),
    };
    for k in profile.unknown_keys() {
        eprintln!("split: profile key {k} is not known to this version; ignored");
    }
    let inputs = Inputs {
        romfs: split_list(&args.romfs),
        mains: split_list(&args.main),
    };
    let out = Outputs {
        pkg_dir: args.pkg_dir.clone(),
        map: args.map.clone(),
        facts: args.facts.clone(),
        pairs: args.pairs.clone(),
    };
    let limits = Limits {
        max_depth: args.max_depth,
        layer_cap: args.layer_cap_mib << 20,
        ..Limits::default()
    };
    let started = std::time::Instant::now();
    let summary = dmsh_scan::split(&inputs, &out, &profile, &limits, &Report::new())?;
    let shown = if args.all_warnings { usize::MAX } else { 50 };
    for w in summary.warnings.iter().take(shown) {
        eprintln!("warning: {w}");
    }
    if summary.warnings.len() > shown {
        eprintln!(
            "warning: … {} more (--all-warnings prints them)",
            summary.warnings.len() - shown
        );
    }
    eprintln!("split: done in {:.2} s", started.elapsed().as_secs_f64());
    Ok(summary)
}

/// Runs `dmsh split`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let summary = split_main(&args)?;
    println!("{summary}");
    Ok(ExitCode::SUCCESS)
}
