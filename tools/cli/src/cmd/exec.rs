//! `dmsh exec`: runs a translated compute shader on a Vulkan device as a job file says
//! (docs/exec-job.md), or a corpus `K.io.json` launch with `--io K.io.json --spv K.spv`.
//!
//! Exit status: 0 ran (and matched every expected output), 1 error, 2 mismatch, 3 skipped
//! (no Vulkan device, or the device lacks what the shader needs, e.g. 32-lane subgroups).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use dmsh_vk::io_json::IoJson;
use dmsh_vk::job::{self, ExecJob, Report};

/// Arguments of `dmsh exec`.
#[derive(clap::Args)]
pub struct Args {
    /// Job file (docs/exec-job.md). Omit with --io.
    pub job: Option<PathBuf>,
    /// Run a corpus K.io.json launch instead of a job file (needs --spv).
    #[arg(long, requires = "spv", conflicts_with = "job")]
    pub io: Option<PathBuf>,
    /// SPIR-V of the translated kernel (with --io).
    #[arg(long)]
    pub spv: Option<PathBuf>,
    /// Reflection JSON (with --io; default: the --spv path with .json).
    #[arg(long)]
    pub reflection: Option<PathBuf>,
    /// Guest offset of the first kernel parameter in c[0x0] (with --io; sm_5x 0x140, sm_8x 0x160).
    #[arg(long, default_value = "0x140", value_parser = parse_num)]
    pub param_base: u32,
    /// Directory for output files (job `outputs`; with --io every buffer as NAME.bin).
    #[arg(long)]
    pub out_dir: Option<PathBuf>,
    /// Print the report as JSON on stdout (status pass | fail | skip | error).
    #[arg(long)]
    pub json: bool,
    /// Print the device's name, subgroup size and features, then exit (JSON with --json).
    #[arg(long)]
    pub info: bool,
    /// Print every buffer and texture after the run as hex words (first 256 words each).
    #[arg(long)]
    pub print: bool,
}

fn parse_num(s: &str) -> Result<u32, String> {
    let r = match s.strip_prefix("0x") {
        Some(h) => u32::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|_| format!("not a number: {s}"))
}

/// Runs `dmsh exec`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.info {
        let dev = dmsh_vk::shared().context("opening the Vulkan device")?;
        let i = dev.info();
        if args.json {
            println!("{}", i.to_json());
            return Ok(ExitCode::SUCCESS);
        }
        println!(
            "device: {} ({}, Vulkan {})",
            i.name, i.device_type, i.api_version
        );
        println!("driver: {}", i.driver);
        println!(
            "subgroup: {} (requirable {}..{}), compute {}, ops {}",
            i.subgroup_size,
            i.min_subgroup_size,
            i.max_subgroup_size,
            i.subgroup_in_compute,
            i.subgroup_ops.join(" ")
        );
        println!(
            "warp32 kernels: {}",
            if i.can_run_warp32() { "run" } else { "skipped" }
        );
        for (n, on) in &i.features {
            println!("  {n}: {on}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let json = args.json;
    match execute(&args) {
        Ok(r) => {
            if json {
                println!("{}", r.to_json());
            } else {
                print_human(&r);
            }
            Ok(ExitCode::from(match r.status.as_str() {
                "pass" => 0,
                "fail" => 2,
                "skip" => 3,
                _ => 1,
            }))
        }
        Err(e) if json => {
            let r = Report {
                status: "error".into(),
                reason: format!("{e:#}"),
                ..Default::default()
            };
            println!("{}", r.to_json());
            Ok(ExitCode::FAILURE)
        }
        Err(e) => Err(e),
    }
}

fn print_human(r: &Report) {
    match r.status.as_str() {
        "skip" => println!("skipped: {}", r.reason),
        _ => {
            for m in &r.mismatches {
                println!("MISMATCH {m}");
            }
            for w in &r.written {
                println!("wrote {w}");
            }
            println!(
                "{} on {} (subgroup {}): {} output(s) compared, {} mismatching; pipeline {:.1} ms, dispatch {:.1} ms",
                r.status,
                r.device,
                r.subgroup_size,
                r.compared,
                r.mismatches.len(),
                r.pipeline_ms,
                r.dispatch_ms
            );
        }
    }
}

fn execute(args: &Args) -> anyhow::Result<Report> {
    let prepared = if let Some(io_path) = &args.io {
        let spv = args.spv.as_deref().context("--io needs --spv")?;
        let io = IoJson::load(io_path)?;
        let (words, refl) = job::load_shader(spv, args.reflection.as_deref())?;
        job::prepare_io(&io, words, refl, args.param_base, args.out_dir.as_deref())?
    } else {
        let path = args
            .job
            .as_deref()
            .context("give a job file, or --io K.io.json --spv K.spv")?;
        let j = ExecJob::load(path)?;
        let base = path.parent().unwrap_or(Path::new("."));
        j.prepare(base, args.out_dir.as_deref())?
    };
    let out = match dmsh_vk::run_compute(&prepared.job) {
        Ok(o) => o,
        Err(e) if e.is_skip() => {
            return Ok(Report {
                status: "skip".into(),
                reason: e.to_string(),
                device: dmsh_vk::shared()
                    .map(|d| d.info().name.clone())
                    .unwrap_or_default(),
                subgroup_size: dmsh_vk::shared().map_or(0, |d| d.info().subgroup_size),
                ..Default::default()
            })
        }
        Err(e) => return Err(e.into()),
    };
    if args.print {
        for (i, b) in out.buffers.iter().enumerate() {
            eprintln!("buffer {} ({} bytes):", prepared.names[i], b.len());
            eprint!("{}", job::hex_words(b, 256));
        }
        for (i, t) in out.images.iter().enumerate() {
            let name = prepared.texture_names.get(i).map_or("?", String::as_str);
            eprintln!("texture {name} ({} bytes):", t.len());
            eprint!("{}", job::hex_words(t, 256));
        }
    }
    let mismatches = job::check(&prepared, &out);
    let mut report = Report::from_run(&out, &mismatches, prepared.expected.len());
    for (it, path) in &prepared.outputs {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let tmp = path.with_extension("tmp~");
        std::fs::write(&tmp, job::item_bytes(&out, *it))
            .and_then(|_| std::fs::rename(&tmp, path))
            .with_context(|| format!("writing {}", path.display()))?;
        report.written.push(path.display().to_string());
    }
    Ok(report)
}
