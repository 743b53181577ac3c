//! `dmsh translate`: one shader's machine code → SPIR-V (`OUT.spv`) + reflection (`OUT.json`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use dmsh_ir::lift::{Abi, Config};
use dmsh_spv::{FmaMode, Options};

/// Arguments of `dmsh translate`.
#[derive(clap::Args)]
pub struct Args {
    /// Target architecture (only sm53).
    #[arg(long, default_value = "sm53")]
    pub arch: String,
    /// Stage: compute, vertex, fragment, geometry, tess_control or tess_eval.
    #[arg(long, default_value = "compute")]
    pub stage: String,
    /// Graphics: binding-layout profile for texture/image handles: deko3d, nvn, or a
    /// games/<title>/ folder (its profile.toml). Default: the --abi.
    #[arg(long)]
    pub profile: Option<String>,
    /// Graphics: component types of input locations, `L=f|i|u,…` (shader_facts).
    #[arg(long)]
    pub input_types: Option<String>,
    /// Graphics: component types of output locations, `L=f|i|u,…`.
    #[arg(long)]
    pub output_types: Option<String>,
    /// Binding ABI: nvn, cuda or deko3d.
    #[arg(long, default_value = "nvn")]
    pub abi: String,
    /// A CUDA cubin (with --kernel).
    #[arg(long, requires = "kernel", conflicts_with = "code")]
    pub cubin: Option<PathBuf>,
    /// Kernel name inside the cubin.
    #[arg(long)]
    pub kernel: Option<String>,
    /// Raw code (instructions from byte 0).
    #[arg(long)]
    pub code: Option<PathBuf>,
    /// Control section (NVN; reserved, not read yet).
    #[arg(long)]
    pub control: Option<PathBuf>,
    /// Workgroup size X,Y,Z.
    #[arg(long, value_parser = parse_size)]
    pub local_size: Option<[u32; 3]>,
    /// Workgroup-shared bytes.
    #[arg(long)]
    pub shared_bytes: Option<u32>,
    /// Per-thread local bytes.
    #[arg(long)]
    pub local_bytes: Option<u32>,
    /// Fused multiply-add: exact (emulated) or native (OpFma).
    #[arg(long, default_value = "exact")]
    pub fma: String,
    /// Output SPIR-V file; the reflection goes next to it with .json.
    #[arg(short, long)]
    pub out: PathBuf,
}

fn parse_size(s: &str) -> Result<[u32; 3], String> {
    let v: Vec<u32> = s
        .split(',')
        .map(|p| p.trim().parse().map_err(|_| format!("bad size {s}")))
        .collect::<Result<_, _>>()?;
    match v.as_slice() {
        [x] => Ok([*x, 1, 1]),
        [x, y] => Ok([*x, *y, 1]),
        [x, y, z] => Ok([*x, *y, *z]),
        _ => Err(format!("bad size {s}")),
    }
}

/// Builds the lifting configuration for a cubin kernel under the CUDA ABI.
pub fn cuda_config(k: &dmsh_cubin::Kernel, local_size: [u32; 3]) -> Config {
    let mut cfg = Config::compute(Abi::Cuda, local_size);
    cfg.shared_bytes = k.shared_bytes as u32;
    cfg.local_bytes = k.local_bytes();
    cfg.param_base = k.param_base;
    let mut embedded = BTreeMap::new();
    for (&bank, bytes) in &k.constant_banks {
        if bank == k.param_bank {
            continue;
        }
        let words = bytes.chunks(4).map(|c| {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            u32::from_le_bytes(w)
        });
        embedded.insert(bank as u8, words.collect());
    }
    cfg.embedded_banks = embedded;
    cfg.buffer_banks
        .insert(k.param_bank as u8, (k.param_base, k.param_size.max(4)));
    cfg.extra_targets = k
        .indirect_branches
        .iter()
        .flat_map(|b| b.targets.iter().copied())
        .collect();
    cfg
}

/// Writes OUT.spv and OUT.json atomically.
pub fn write_out(out: &Path, spv: &[u8], json: &str) -> anyhow::Result<()> {
    write_atomic(out, spv)?;
    write_atomic(&out.with_extension("json"), json.as_bytes())
}

fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = path.with_extension("tmp~");
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))?;
    Ok(())
}

/// Runs `dmsh translate`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.arch != "sm53" {
        bail!("--arch {}: only sm53 is supported", args.arch);
    }
    if args.stage != "compute" {
        return super::translate_gfx::run(&args);
    }
    let abi = match args.abi.as_str() {
        "nvn" => Abi::Nvn,
        "cuda" => Abi::Cuda,
        "deko3d" => Abi::Deko3d,
        a => bail!("--abi {a}: expected nvn, cuda or deko3d"),
    };
    let fma = match args.fma.as_str() {
        "exact" => FmaMode::Exact,
        "native" => FmaMode::Native,
        f => bail!("--fma {f}: expected exact or native"),
    };
    let ls = args.local_size.unwrap_or([1, 1, 1]);
    let (code, mut cfg, name) = if let Some(path) = &args.cubin {
        let cubin =
            dmsh_cubin::read(path).with_context(|| format!("reading {}", path.display()))?;
        let kname = args.kernel.clone().unwrap_or_default();
        let k = cubin.kernel(&kname)?;
        let mut cfg = cuda_config(k, ls);
        cfg.abi = abi;
        (k.code.clone(), cfg, format!("{}:{kname}", path.display()))
    } else if let Some(path) = &args.code {
        let code = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let mut cfg = Config::compute(abi, ls);
        if abi != Abi::Cuda {
            // Driver constant bank c0 and uniform buffers: bound at run time, 64 KiB each.
            cfg.buffer_banks.insert(0, (0, 0x10000));
            let first_ubo = if abi == Abi::Nvn { 3 } else { 2 };
            for b in first_ubo..18u8 {
                cfg.buffer_banks.insert(b, (0, 0x10000));
            }
        } else {
            cfg.buffer_banks.insert(0, (0x140, 0x1000));
        }
        (code, cfg, path.display().to_string())
    } else {
        bail!("give --cubin FILE --kernel NAME or --code FILE");
    };
    if let Some(s) = args.shared_bytes {
        cfg.shared_bytes = s;
    }
    if let Some(l) = args.local_bytes {
        cfg.local_bytes = l;
    }
    let out = dmsh_spv::translate(&code, &cfg, &Options { fma })
        .with_context(|| format!("translating {name}"))?;
    let bytes: Vec<u8> = out.words.iter().flat_map(|w| w.to_le_bytes()).collect();
    write_atomic(&args.out, &bytes)?;
    let json = args.out.with_extension("json");
    write_atomic(&json, out.reflection.to_json().as_bytes())?;
    eprintln!(
        "{} → {} ({} words, {} blocks)",
        name,
        args.out.display(),
        out.words.len(),
        out.reflection.blocks
    );
    Ok(ExitCode::SUCCESS)
}
