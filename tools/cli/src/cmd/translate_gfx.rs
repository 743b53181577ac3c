//! `dmsh translate --stage vertex|fragment|geometry|tess_control|tess_eval`: a graphics
//! program (a DKSH file, or the SPH + instructions of a code.bin / NVN code area) → SPIR-V +
//! reflection, with handles resolved through a binding-layout profile (`--profile deko3d`,
//! `nvn`, or a games/<title>/ folder whose profile.toml gives `nvn_tex_base` etc.).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context};
use dmsh_ir::lift::{dksh, BindingLayout, CompType};
use dmsh_ir::Stage;
use dmsh_spv::{FmaMode, Options};

use super::translate::Args;

fn stage_of(s: &str) -> anyhow::Result<Stage> {
    Ok(match s {
        "vertex" => Stage::Vertex,
        "fragment" => Stage::Fragment,
        "geometry" => Stage::Geometry,
        "tess_control" => Stage::TessControl,
        "tess_eval" => Stage::TessEval,
        s => bail!("--stage {s}: expected vertex, fragment, geometry, tess_control, tess_eval"),
    })
}

/// A `key = value` number from a profile.toml (decimal or 0x hex).
fn profile_num(text: &str, key: &str) -> Option<u32> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        if k.trim() != key {
            return None;
        }
        let v = v.split('#').next()?.trim();
        match v.strip_prefix("0x") {
            Some(h) => u32::from_str_radix(h, 16).ok(),
            None => v.parse().ok(),
        }
    })
}

/// The binding layout a `--profile` names.
pub fn layout(profile: &str, stage: Stage) -> anyhow::Result<BindingLayout> {
    Ok(match profile {
        "deko3d" => BindingLayout::deko3d(stage),
        "nvn" => BindingLayout::nvn(stage, 0x20),
        dir => {
            let p = Path::new(dir);
            let file = if p.is_dir() {
                p.join("profile.toml")
            } else {
                p.to_path_buf()
            };
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading profile {}", file.display()))?;
            let base = profile_num(&text, "nvn_tex_base").unwrap_or(0x20);
            let mut l = BindingLayout::nvn(stage, base);
            if let Some(n) = profile_num(&text, "nvn_tex_slots") {
                l.tex_count = n;
            }
            if let Some(b) = profile_num(&text, "nvn_img_base") {
                l.image_base = b;
            }
            l.samp_base = profile_num(&text, "nvn_samp_base").or(l.samp_base);
            l.septex_base = profile_num(&text, "nvn_septex_base");
            l
        }
    })
}

/// Parses `L=type,…` (type f/i/u) into a per-location table.
fn io_types(s: &Option<String>, into: &mut [CompType; 32]) -> anyhow::Result<()> {
    let Some(s) = s else { return Ok(()) };
    for part in s.split(',').filter(|p| !p.is_empty()) {
        let (l, t) = part
            .split_once('=')
            .with_context(|| format!("{part}: expected LOCATION=f|i|u"))?;
        let l: usize = l
            .trim()
            .parse()
            .with_context(|| format!("{part}: location"))?;
        let t = CompType::parse(t.trim()).with_context(|| format!("{part}: type"))?;
        if l >= 32 {
            bail!("{part}: location above 31");
        }
        into[l] = t;
    }
    Ok(())
}

/// Applies the rows of a manual facts table for `key`: `key<TAB>in|out|tex|image<TAB>N<TAB>type`
/// (type f/i/u, or an image format such as rgba8 / r32ui); `#` starts a comment.
pub fn apply_facts(text: &str, key: &str, g: &mut dmsh_ir::lift::Gfx) -> anyhow::Result<usize> {
    let mut n = 0;
    for (ln, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split_whitespace().collect();
        if cols.len() != 4 {
            bail!("facts line {}: expected 4 columns", ln + 1);
        }
        if cols[0] != key {
            continue;
        }
        let idx: usize = cols[2]
            .parse()
            .with_context(|| format!("facts line {}: index", ln + 1))?;
        let bad = || anyhow::anyhow!("facts line {}: bad type or index", ln + 1);
        match cols[1] {
            "in" | "out" | "tex" => {
                let t = CompType::parse(cols[3]).ok_or_else(bad)?;
                let table = match cols[1] {
                    "in" => &mut g.inputs,
                    "out" => &mut g.outputs,
                    _ => &mut g.textures,
                };
                *table.get_mut(idx).ok_or_else(bad)? = t;
            }
            "image" => {
                let f = dmsh_ir::lift::ImageFmt::parse(cols[3]).ok_or_else(bad)?;
                *g.images.get_mut(idx).ok_or_else(bad)? = f;
            }
            k => bail!("facts line {}: unknown kind {k}", ln + 1),
        }
        n += 1;
    }
    Ok(n)
}

/// The generic inputs (bit n = generic n) the partner program's SPH says it reads.
fn partner_inputs(path: &Path) -> anyhow::Result<u32> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let code = if bytes.starts_with(b"DKSH") {
        dksh::parse(&bytes).map_err(anyhow::Error::msg)?.code
    } else {
        bytes
    };
    let sph = dmsh_isa::sph_info::SphInfo::parse(&code)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok(sph.input_generics())
}

/// Runs the graphics translation.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let mut stage = stage_of(&args.stage)?;
    let Some(path) = &args.code else {
        bail!("graphics stages need --code FILE (a .dksh, a code.bin or an NVN code area)");
    };
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let key = path.display().to_string();
    let is_dksh = bytes.starts_with(b"DKSH");
    let (code, cbuf1, efs, tess) = if is_dksh {
        let p = dksh::parse(&bytes).map_err(anyhow::Error::msg)?;
        if p.stage != stage {
            bail!(
                "{key}: the DKSH program is a {} shader, not {}",
                p.stage.name(),
                stage.name()
            );
        }
        stage = p.stage;
        (p.code, p.cbuf1, p.early_fragment_tests, p.tess_param)
    } else if bytes.len() >= 4 && u32::from_le_bytes(bytes[..4].try_into()?) == 0x1234_5678 {
        // NVN graphics code area: 0x30-byte header, then the SPH.
        (
            bytes[0x30.min(bytes.len())..].to_vec(),
            Vec::new(),
            false,
            0x201,
        )
    } else {
        (bytes, Vec::new(), false, 0x201)
    };
    let default = if is_dksh { "deko3d" } else { args.abi.as_str() };
    let layout = layout(args.profile.as_deref().unwrap_or(default), stage)?;
    let mut cfg =
        dksh::graphics_config(stage, &code, &cbuf1, layout, &key).map_err(anyhow::Error::msg)?;
    if let Some(g) = cfg.gfx.as_mut() {
        g.early_fragment_tests = efs;
        g.tess_param = tess;
        if let Some(f) = &args.facts {
            let text =
                std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
            let k = args.key.clone().unwrap_or_else(|| {
                path.file_name()
                    .map(|n| n.to_string_lossy().to_string())
                    .unwrap_or_default()
            });
            apply_facts(&text, &k, g)?;
        }
        io_types(&args.input_types, &mut g.inputs)?;
        io_types(&args.output_types, &mut g.outputs)?;
        if let Some(p) = &args.partner {
            g.extra_outputs = partner_inputs(p)?;
        }
    }
    let fma = match args.fma.as_str() {
        "exact" => FmaMode::Exact,
        "native" => FmaMode::Native,
        f => bail!("--fma {f}: expected exact or native"),
    };
    let out = dmsh_spv::translate_graphics(&code, &cfg, &Options { fma })
        .with_context(|| format!("translating {key}"))?;
    let bytes: Vec<u8> = out.words.iter().flat_map(|w| w.to_le_bytes()).collect();
    super::translate::write_out(&args.out, &bytes, &out.reflection.to_json())?;
    eprintln!(
        "{key} ({}) → {} ({} words, {} blocks)",
        stage.name(),
        args.out.display(),
        out.words.len(),
        out.reflection.blocks
    );
    Ok(ExitCode::SUCCESS)
}
