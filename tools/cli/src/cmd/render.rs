//! `dmsh render`: draws a vertex + fragment pair into an offscreen image as a job file says
//! (docs/exec-job.md), writes PNG / raw texels / buffers, and optionally compares with a
//! reference PNG.
//!
//! Exit status: 0 drawn (and matched the reference if one was given), 1 error, 2 mismatch,
//! 3 skipped (no Vulkan device or a missing feature).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use dmsh_vk::job::RenderJobFile;

/// Arguments of `dmsh render`.
#[derive(clap::Args)]
pub struct Args {
    /// Render job file.
    pub job: PathBuf,
    /// Directory for output files (default: next to the job file).
    #[arg(long)]
    pub out_dir: Option<PathBuf>,
}

fn write(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let tmp = path.with_extension("tmp~");
    std::fs::write(&tmp, bytes)
        .and_then(|_| std::fs::rename(&tmp, path))
        .with_context(|| format!("writing {}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}

/// Runs `dmsh render`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let base = args.job.parent().unwrap_or(Path::new("."));
    let p = RenderJobFile::load(&args.job)?.prepare(base, args.out_dir.as_deref())?;
    let out = match dmsh_vk::render(&p.job) {
        Ok(o) => o,
        Err(e) if e.is_skip() => {
            println!("skipped: {e}");
            return Ok(ExitCode::from(3));
        }
        Err(e) => return Err(e.into()),
    };
    let img = out.targets.first().context("no color target")?;
    if let Some(path) = &p.out_png {
        write(path, &img.to_png()?)?;
    }
    if let Some(path) = &p.out_raw {
        write(path, &img.data)?;
    }
    for (i, path) in &p.outputs {
        write(path, &out.buffers[*i])?;
    }
    println!(
        "drew {}x{} on {}: pipeline {:.1} ms, draw {:.1} ms",
        img.width, img.height, out.device, out.pipeline_ms, out.draw_ms
    );
    if let Some(want) = &p.expected {
        let (fraction, worst) = img.compare(want, p.tolerance);
        let ok = fraction >= p.min_fraction;
        println!(
            "{}: {:.4} % of pixels within {} (need {:.4} %), largest difference {}",
            if ok { "match" } else { "MISMATCH" },
            fraction * 100.0,
            p.tolerance,
            p.min_fraction * 100.0,
            worst
        );
        if !ok {
            return Ok(ExitCode::from(2));
        }
    }
    Ok(ExitCode::SUCCESS)
}
