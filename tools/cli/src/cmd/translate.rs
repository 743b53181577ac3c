//! `dmsh translate`: one shader's machine code → SPIR-V (`OUT.spv`) + reflection (`OUT.json`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use dmsh_ir::lift::{Abi, Arch, Config};
use dmsh_spv::{F64Mode, FmaMode, Options};

/// Arguments of `dmsh translate`.
#[derive(clap::Args)]
pub struct Args {
    /// The code's architecture: sm53 (Maxwell) or sm86 (Ampere; sm87 and ampere name it
    /// too). Default: a cubin's own, else sm53.
    #[arg(long)]
    pub arch: Option<String>,
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
    /// Facts tables (repeatable; docs/graphics.md): the split's shader_facts.tsv and/or a
    /// shader_facts_manual.tsv (`key  in|out|tex|image  N  type`).
    #[arg(long)]
    pub facts: Vec<PathBuf>,
    /// The shader key the facts rows are looked up by (default: computed from --control and
    /// --code as `dmsh split` keys them, else the --code file name).
    #[arg(long)]
    pub key: Option<String>,
    /// Graphics: `C,K` = the shader writes C clip distances then K cull distances (the
    /// binary does not separate them; default: every written slot is a clip distance).
    #[arg(long)]
    pub clip_cull: Option<String>,
    /// Vertex: the partner stage's program (DKSH or SPH + code): every generic input its SPH
    /// reads and this shader does not write becomes an output at (0,0,0,1) (the build's
    /// `vs_pad` fix-up, dmsh-fixup, with float components).
    #[arg(long)]
    pub partner: Option<PathBuf>,
    /// Geometry: the input primitive (points, lines, triangles, lines_adjacency,
    /// triangles_adjacency): pipeline state the binary does not carry. Default: a
    /// `gs_input` facts row, else inferred from constant vertex indices, else guessed (the
    /// reflection's `geometry_input.source` says which).
    #[arg(long)]
    pub gs_input: Option<String>,
    /// Tess-eval: `DOMAIN,SPACING,OUTPUT` (isolines|triangles|quads,
    /// equal|fractional_odd|fractional_even, points|lines|triangles_ccw|triangles_cw) for a
    /// bare code area; default: a `tess` facts row, else the DKSH header, else
    /// triangles,equal,triangles_ccw (marked guessed).
    #[arg(long)]
    pub tess: Option<String>,
    /// The c[1] compiler constants as raw little-endian bytes (NVN keeps them in the code
    /// area's c1 segment, found through --control; a bare code area has none). Replaces the
    /// container's.
    #[arg(long)]
    pub c1: Option<PathBuf>,
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
    /// NVN control section: compute thread-group size (+0x748), shared bytes (+0x754) and
    /// the c1 segment of the code area (+0x6fc size, +0x700 offset) come from it.
    #[arg(long)]
    pub control: Option<PathBuf>,
    /// Workgroup size X,Y,Z.
    #[arg(long, value_parser = parse_size)]
    pub local_size: Option<[u32; 3]>,
    /// Workgroup-shared bytes.
    #[arg(long)]
    pub shared_bytes: Option<u32>,
    /// Per-thread local bytes (replaces the size the container declares: NVN control +0x710,
    /// the SPH; at least the highest constant-offset LDL/STL).
    #[arg(long)]
    pub local_bytes: Option<u32>,
    /// Fused multiply-add: exact (emulated) or native (OpFma).
    #[arg(long, default_value = "exact")]
    pub fma: String,
    /// 64-bit floating point: native (Float64) or soft (32-bit integer routines, no 64-bit
    /// float type: what Metal needs).
    #[arg(long, default_value = "native")]
    pub f64: String,
    /// Graphics: the form to emit (docs/geometry.md, docs/tessellation.md): direct,
    /// vertex_capture (a vertex shader), geometry_kernel or geometry_draw (a geometry
    /// shader), tess_control_kernel, tess_eval_post or tess_eval_draw.
    #[arg(long, default_value = "direct")]
    pub form: String,
    /// Warp operations: subgroup (32-lane subgroups) or workgroup (emulated through
    /// workgroup memory, any subgroup size; compute with a fixed workgroup size).
    #[arg(long, default_value = "subgroup")]
    pub warp: String,
    /// Tensor instructions (HMMA, IMMA): subgroup_emulation or cooperative_matrix.
    #[arg(long, default_value = "subgroup_emulation")]
    pub tensor: String,
    /// Output SPIR-V file; the reflection goes next to it with .json.
    #[arg(short, long)]
    pub out: PathBuf,
}

impl Args {
    /// The translation options the arguments ask for (`--fma`, `--f64`, `--form`, `--warp`,
    /// `--tensor`).
    pub fn options(&self) -> anyhow::Result<Options> {
        let fma = match self.fma.as_str() {
            "exact" => FmaMode::Exact,
            "native" => FmaMode::Native,
            f => bail!("--fma {f}: expected exact or native"),
        };
        let warp = match self.warp.as_str() {
            "subgroup" => dmsh_spv::WarpMode::Subgroup,
            "workgroup" => dmsh_spv::WarpMode::Workgroup,
            w => bail!("--warp {w}: expected subgroup or workgroup"),
        };
        let tensor = match self.tensor.as_str() {
            "subgroup_emulation" => dmsh_spv::TensorMode::SubgroupEmulation,
            "cooperative_matrix" => dmsh_spv::TensorMode::CooperativeMatrix,
            t => bail!("--tensor {t}: expected subgroup_emulation or cooperative_matrix"),
        };
        let f64 = match self.f64.as_str() {
            "native" => F64Mode::Native,
            "soft" => F64Mode::Soft,
            f => bail!("--f64 {f}: expected native or soft"),
        };
        Ok(Options {
            fma,
            f64,
            form: form_of(&self.form)?,
            warp,
            tensor,
            ..Default::default()
        })
    }
}

/// The emission form named `s` (`--form`).
pub fn form_of(s: &str) -> anyhow::Result<dmsh_spv::lower::Form> {
    dmsh_spv::lower::Form::parse(s).ok_or_else(|| {
        anyhow::anyhow!(
            "--form {s}: expected direct, vertex_capture, geometry_kernel, geometry_draw, \
             tess_control_kernel, tess_eval_post or tess_eval_draw"
        )
    })
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

/// The instruction set an `--arch` value names.
pub fn parse_arch(a: &str) -> anyhow::Result<Arch> {
    Ok(match a {
        "sm53" | "maxwell" => Arch::Maxwell,
        "sm86" | "sm87" | "ampere" => Arch::Ampere,
        a => bail!("--arch {a}: expected sm53 (Maxwell) or sm86 (Ampere)"),
    })
}

/// Builds the lifting configuration for a cubin kernel under the CUDA ABI.
pub fn cuda_config(k: &dmsh_cubin::Kernel, local_size: [u32; 3]) -> Config {
    Config::cuda_kernel(k, local_size)
}

/// The shader key facts are looked up by: `--key`, else the key `dmsh split` gives the
/// control section + code area (sha256 of control\[0 : min(0x880, L)\] ‖ code\[0 : code
/// size\]), else the code file's name.
pub fn shader_key(args: &Args, code: &[u8]) -> anyhow::Result<String> {
    if let Some(k) = &args.key {
        return Ok(k.clone());
    }
    if let (Some(cpath), Some(path)) = (&args.control, &args.code) {
        let control =
            std::fs::read(cpath).with_context(|| format!("reading {}", cpath.display()))?;
        let k = dmsh_formats::key::key_of(&control, code)
            .map_err(|e| anyhow::anyhow!("{} with {}: {e}", path.display(), cpath.display()))?;
        return Ok(dmsh_formats::key::hex16(&k));
    }
    Ok(args
        .code
        .as_ref()
        .or(args.cubin.as_ref())
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default())
}

/// Reads the `--facts` tables (and `extra`, a profile's shader_facts_manual).
pub fn load_facts(args: &Args, extra: Option<&Path>) -> anyhow::Result<super::facts::Facts> {
    let mut f = super::facts::Facts::default();
    for p in extra
        .into_iter()
        .chain(args.facts.iter().map(|p| p.as_path()))
    {
        f.load(p)?;
    }
    Ok(f)
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

/// Reads a `--c1` file: the bank's bytes as little-endian words; at most the 64 KiB a
/// constant bank holds.
pub fn read_c1(path: &Path) -> anyhow::Result<Vec<u32>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    if bytes.len() > 0x10000 {
        bail!(
            "{}: {} bytes, more than a constant bank's 64 KiB",
            path.display(),
            bytes.len()
        );
    }
    Ok(words_le(&bytes))
}

/// Bytes as little-endian words; a short last word is padded with zeros.
pub fn words_le(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks(4)
        .map(|c| {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            u32::from_le_bytes(w)
        })
        .collect()
}

/// Runs `dmsh translate`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let arch = args.arch.as_deref().map(parse_arch).transpose()?;
    if args.stage != "compute" {
        return super::translate_gfx::run(&args);
    }
    let abi = match args.abi.as_str() {
        "nvn" => Abi::Nvn,
        "cuda" => Abi::Cuda,
        "deko3d" => Abi::Deko3d,
        a => bail!("--abi {a}: expected nvn, cuda or deko3d"),
    };
    let options = args.options()?;
    let ls = args.local_size.unwrap_or([1, 1, 1]);
    let (code, mut cfg, name) = if let Some(path) = &args.cubin {
        let cubin =
            dmsh_cubin::read(path).with_context(|| format!("reading {}", path.display()))?;
        let kname = args.kernel.clone().unwrap_or_default();
        let k = cubin.kernel(&kname)?;
        let mut cfg = cuda_config(k, ls);
        match (arch, Arch::from_sm(cubin.sm)) {
            (Some(a), Some(c)) if a != c => bail!(
                "--arch {}: {} holds sm_{} code",
                a.name(),
                path.display(),
                cubin.sm
            ),
            (_, None) => bail!(
                "{}: sm_{} code: dmsh translates sm_5x (Maxwell) and sm_8x (Ampere)",
                path.display(),
                cubin.sm
            ),
            _ => {}
        }
        cfg.abi = abi;
        (k.code.clone(), cfg, format!("{}:{kname}", path.display()))
    } else if let Some(path) = &args.code {
        let mut code =
            std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let mut ls = ls;
        let mut nvn_c1: Option<Vec<u32>> = None;
        let mut nvn_shared = None;
        let mut nvn_local = 0;
        if !args.facts.is_empty() {
            // The split's shader_facts.tsv: thread-group size and shared bytes by key (the
            // control section, when given, wins).
            let key = shader_key(&args, &code)?;
            let facts = load_facts(&args, None)?;
            facts.check(&key, "compute", arch.unwrap_or_default())?;
            let headered = code.len() >= 4 && code[..4] == 0x1234_5679u32.to_le_bytes();
            match facts.threads(&key) {
                // All zero: a variable size, with the compute header (else not a size).
                Some([0, 0, 0]) if !headered => {}
                Some(t) if args.local_size.is_none() => ls = t,
                _ => {}
            }
            nvn_shared = facts.num(&key, "shared_bytes").map(|x| x as u32);
        }
        if let Some(cpath) = &args.control {
            let control =
                std::fs::read(cpath).with_context(|| format!("reading {}", cpath.display()))?;
            let nvn = NvnCompute::parse(&control, &code)
                .with_context(|| format!("{} with {}", cpath.display(), path.display()))?;
            if args.local_size.is_none() {
                ls = nvn.local_size;
            }
            nvn_shared = Some(nvn.shared_bytes);
            nvn_local = nvn.local_bytes;
            nvn_c1 = Some(nvn.c1);
            code = code[nvn.entry..nvn.code_end].to_vec();
        } else if code.len() >= 0x100 && code[..4] == 0x1234_5679u32.to_le_bytes() {
            // A compute code area with its 0x30-byte header: instructions from +0x100.
            code = code[0x100..].to_vec();
        }
        let mut cfg = Config::compute(abi, ls);
        cfg.arch = arch.unwrap_or_default();
        cfg.declared_local_bytes = nvn_local;
        if let Some(c1) = args.c1.as_deref().map(read_c1).transpose()?.or(nvn_c1) {
            cfg.embedded_banks.insert(1, c1);
        }
        if let Some(sh) = nvn_shared {
            cfg.shared_bytes = sh;
        }
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
        // Replaces the container's size (the constant-offset bound still applies).
        cfg.local_bytes = l;
        cfg.declared_local_bytes = 0;
    }
    let out = dmsh_spv::translate(&code, &cfg, &options)
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

/// What `dmsh translate` reads from an NVN compute control section (docs/formats.md §3.1).
struct NvnCompute {
    local_size: [u32; 3],
    shared_bytes: u32,
    /// Per-thread local bytes: the scratch bytes per warp (+0x710) over 32 lanes (an upper
    /// bound: like DKSH's `per_warp_scratch_sz` it may include the call/return stack).
    local_bytes: u32,
    /// Byte offset of the first instruction in the code area.
    entry: usize,
    /// End of the instructions (start of the c1 data, or the end of the code area).
    code_end: usize,
    /// Constant bank c1: the tail segment of the code area.
    c1: Vec<u32>,
}

impl NvnCompute {
    fn parse(control: &[u8], code: &[u8]) -> anyhow::Result<Self> {
        let ctl = dmsh_formats::control::parse(control, None)
            .map_err(|e| anyhow::anyhow!("control section: {}", e.0))?;
        let nvn2 = ctl.gen == dmsh_formats::control::Gen::Nvn2;
        if !nvn2 && ctl.nvn_stage != Some(5) {
            let st = ctl.nvn_stage.map_or("none".into(), |s| s.to_string());
            bail!("control section: stage {st} at +0x714 is not compute (5)");
        }
        let local_size = ctl.threads;
        let headered = code.len() >= 4 && code[..4] == 0x1234_5679u32.to_le_bytes();
        // All zero with the 0x12345679 header: a variable thread-group size (GLSL
        // local_size_variable), translated as specialization constants.
        let variable = local_size == [0, 0, 0] && headered;
        if !variable && local_size.iter().any(|&x| x == 0 || x > 1024) {
            let at = if nvn2 { "+0x58" } else { "+0x748" };
            bail!("control section: thread-group size {local_size:?} at {at}");
        }
        let shared_bytes = ctl.shared;
        let local_bytes = ctl.scratch_per_warp / 32;
        let (c1_off, c1_size) = (ctl.c1_offset, ctl.c1_size);
        let entry = if headered { ctl.entry } else { 0 };
        // NVN2 says where the instructions end (+0x38); Switch 1's end at the c1 data.
        let code_end = match ctl.instr_end {
            Some(e) if e > entry && e <= code.len() => e,
            _ if c1_off > entry && c1_off <= code.len() => c1_off,
            _ => code.len(),
        };
        if entry >= code_end {
            bail!("code area: entry {entry:#x} at or after the end of the code {code_end:#x}");
        }
        let c1_bytes = code
            .get(c1_off..(c1_off + c1_size).min(code.len()))
            .unwrap_or(&[]);
        let c1 = words_le(c1_bytes);
        Ok(NvnCompute {
            local_size,
            shared_bytes,
            local_bytes,
            entry,
            code_end,
            c1,
        })
    }
}
