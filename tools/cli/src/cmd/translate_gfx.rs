//! `dmsh translate --stage vertex|fragment|geometry|tess_control|tess_eval`: a graphics
//! program (a DKSH file, or the SPH + instructions of a code.bin / NVN code area) → SPIR-V +
//! reflection, with handles resolved through a binding-layout profile (`--profile deko3d`,
//! `nvn`, or a games/<title>/ folder whose profile.toml gives `nvn_tex_base` etc.).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context};
use dmsh_ir::lift::{dksh, BindingLayout, CompType};
use dmsh_ir::Stage;

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

/// The binding layout of a typed profile (`dmsh_scan::Profile`, docs/profiles.md): every
/// binding key — `nvn_tex_base`, `nvn_tex_slots`, `nvn_img_base`, `nvn_samp_base`,
/// `nvn_septex_base`, `nvn_septex_slots`, `tex_dyn_slots`.
pub fn profile_layout(p: &dmsh_scan::Profile, stage: Stage) -> anyhow::Result<BindingLayout> {
    if p.nvn != 1 {
        bail!(
            "profile: nvn = {} (NVN2 / Ampere code is not translated by sm53)",
            p.nvn
        );
    }
    let mut l = BindingLayout::nvn(stage, p.nvn_tex_base);
    l.tex_count = p.nvn_tex_slots;
    l.image_base = p.nvn_img_base;
    l.samp_base = Some(p.nvn_samp_base);
    l.septex_base = (p.nvn_septex_base != 0).then_some(p.nvn_septex_base);
    l.septex_count = p.nvn_septex_slots;
    l.tex_dyn = p.tex_dyn_slots;
    Ok(l)
}

/// The binding layout a `--profile` names, and the profile's manual facts table (its
/// `shader_facts_manual`, relative to the profile folder) when it has one.
pub fn layout(
    profile: &str,
    stage: Stage,
) -> anyhow::Result<(BindingLayout, Option<std::path::PathBuf>)> {
    Ok(match profile {
        "deko3d" => (BindingLayout::deko3d(stage), None),
        "nvn" => (profile_layout(&dmsh_scan::Profile::default(), stage)?, None),
        dir => {
            let p = Path::new(dir);
            let prof = dmsh_scan::Profile::load(p)?;
            for k in prof.unknown_keys() {
                eprintln!("translate: profile key {k} is not known");
            }
            let folder = if p.is_dir() {
                p.to_path_buf()
            } else {
                p.parent().map(Path::to_path_buf).unwrap_or_default()
            };
            let manual = (!prof.shader_facts_manual.is_empty())
                .then(|| folder.join(&prof.shader_facts_manual));
            (profile_layout(&prof, stage)?, manual)
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

/// `--clip-cull C,K`: C clip then K cull distances, C + K ≤ 8.
fn clip_cull(s: &str) -> anyhow::Result<(u32, u32)> {
    let bad =
        || anyhow::anyhow!("--clip-cull {s}: expected C,K (clip and cull counts, C + K <= 8)");
    let (c, k) = s.split_once(',').ok_or_else(bad)?;
    let c: u32 = c.trim().parse().map_err(|_| bad())?;
    let k: u32 = k.trim().parse().map_err(|_| bad())?;
    if c + k > 8 {
        return Err(bad());
    }
    Ok((c, k))
}

/// The generic inputs (bit n = generic n) the partner program's SPH says it reads.
fn partner_inputs(path: &Path) -> anyhow::Result<u32> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let code = if dmsh_formats::dksh::is_dksh(&bytes) {
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
    let fkey = super::translate::shader_key(args, &bytes)?;
    let key = if args.key.is_some() || args.control.is_some() {
        format!("{fkey} ({})", path.display())
    } else {
        path.display().to_string()
    };
    let is_dksh = dmsh_formats::dksh::is_dksh(&bytes);
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
    } else if bytes.len() >= 4
        && u32::from_le_bytes(bytes[..4].try_into()?) == dmsh_formats::code::GFX_MAGIC
    {
        // NVN graphics code area: 0x30-byte header, then the SPH; the c1 segment (control
        // +0x700 offset, +0x6fc size, from the code area's start) when a control section is
        // given.
        let mut c1 = Vec::new();
        if let Some(cp) = &args.control {
            let control = std::fs::read(cp).with_context(|| format!("reading {}", cp.display()))?;
            let ctl = dmsh_formats::control::parse(&control, None)
                .map_err(|e| anyhow::anyhow!("{}: {}", cp.display(), e.0))?;
            let end = (ctl.c1_offset + ctl.c1_size).min(bytes.len());
            c1 = super::translate::words_le(bytes.get(ctl.c1_offset..end).unwrap_or(&[]));
        }
        let sph = dmsh_formats::code::HEADER_SIZE.min(bytes.len());
        (bytes[sph..].to_vec(), c1, false, None)
    } else {
        (bytes, Vec::new(), false, None)
    };
    let cbuf1 = match &args.c1 {
        Some(p) => super::translate::read_c1(p)?,
        None => cbuf1,
    };
    let default = if is_dksh { "deko3d" } else { args.abi.as_str() };
    let (layout, manual) = layout(args.profile.as_deref().unwrap_or(default), stage)?;
    let facts = super::translate::load_facts(args, manual.as_deref())?;
    let arch = args
        .arch
        .as_deref()
        .map(super::translate::parse_arch)
        .transpose()?
        .unwrap_or_default();
    facts.check(&fkey, stage.name(), arch)?;
    if !args.facts.is_empty() && !facts.knows(&fkey) {
        eprintln!("translate: no facts for key {fkey}");
    }
    let mut cfg =
        dksh::graphics_config(stage, &code, &cbuf1, layout, &key).map_err(anyhow::Error::msg)?;
    cfg.arch = arch;
    if let Some(l) = args.local_bytes {
        // Replaces the SPH's local-memory size (the constant-offset bound still applies).
        cfg.local_bytes = l;
        cfg.declared_local_bytes = 0;
    }
    if let Some(g) = cfg.gfx.as_mut() {
        g.early_fragment_tests = efs;
        if let Some(t) = tess {
            g.tess_from_container(t);
        }
        // Pipeline state: the split table's columns, then manual rows, then the options.
        facts.apply_split_state(&fkey, g)?;
        facts.apply_gfx(&fkey, g);
        if let Some(p) = &args.gs_input {
            g.gs_input = Some(super::facts::gs_input(p)?);
        }
        if let Some(t) = &args.tess {
            g.tess_param = super::facts::tess_list(t)?;
            g.tess_source = dmsh_ir::lift::StateSource::Given;
        }
        io_types(&args.input_types, &mut g.inputs)?;
        io_types(&args.output_types, &mut g.outputs)?;
        // --clip-cull, else the facts (manual `clip_cull C K`, or the split table's
        // clip_distances / cull_distances columns).
        g.clip_cull = match &args.clip_cull {
            Some(cc) => Some(clip_cull(cc)?),
            None => facts.clip_cull(&fkey)?,
        };
    }
    let out = dmsh_spv::translate_graphics(&code, &cfg, &args.options()?)
        .with_context(|| format!("translating {key}"))?;
    let (mut words, mut refl) = (out.words, out.reflection);
    if let Some(p) = &args.partner {
        if stage != Stage::Vertex {
            bail!("--partner: only vertex shaders are padded for their partners");
        }
        let bits = partner_inputs(p)?;
        let inputs: Vec<dmsh_reflect::IoVar> = (0..32)
            .filter(|n| bits >> n & 1 == 1)
            .map(|location| dmsh_reflect::IoVar {
                location,
                component_type: "float".into(),
                ..Default::default()
            })
            .collect();
        let mut sp = dmsh_fixup::module::Spirv::parse(&words).map_err(anyhow::Error::msg)?;
        let added = dmsh_fixup::pad::run(&mut sp, &inputs).map_err(anyhow::Error::msg)?;
        if !added.is_empty() {
            words = sp.assemble();
            refl.outputs.extend(added);
            refl.outputs.sort_by_key(|o| o.location);
            refl.fixups.push("vs_pad".into());
        }
    }
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    super::translate::write_out(&args.out, &bytes, &refl.to_json())?;
    eprintln!(
        "{key} ({}) → {} ({} words, {} blocks)",
        stage.name(),
        args.out.display(),
        words.len(),
        refl.blocks
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn games(dir: &str) -> String {
        format!("{}/../../games/{dir}", env!("CARGO_MANIFEST_DIR"))
    }

    #[test]
    fn clip_cull_option() {
        assert_eq!(clip_cull("4,1").unwrap(), (4, 1));
        assert_eq!(clip_cull(" 0 , 8").unwrap(), (0, 8));
        assert!(clip_cull("5,4").is_err());
        assert!(clip_cull("4").is_err());
        assert!(clip_cull("a,1").is_err());
    }

    #[test]
    fn binding_layout_from_the_typed_profile() {
        let st = Stage::Fragment;
        // Octopath Traveler 0: Engage's tables and tex_dyn_slots.
        let (l, manual) = layout(&games("unknown-octopath-traveler-0"), st).unwrap();
        assert_eq!(
            (l.tex_base, l.tex_count, l.samp_base),
            (0x168, 128, Some(0x568))
        );
        assert!(l.tex_dyn && manual.is_none());
        assert_eq!(l.texture_at(0x170), Some(1));
        // Monster Hunter Rise: separate textures at 0x168 (slots 128 + n).
        let (l, _) = layout(&games("0100B04011742000"), st).unwrap();
        assert_eq!(
            (l.tex_base, l.septex_base, l.tex_dyn),
            (0x20, Some(0x168), false)
        );
        assert_eq!(l.septex_at(0x170), Some(129));
        // Every binding key is read; nvn_septex_slots bounds the separate table.
        let p = dmsh_scan::Profile::parse(
            "nvn_tex_base = 0x40\nnvn_tex_slots = 4\nnvn_img_base = 0x200\nnvn_samp_base = 0x300\n\
             nvn_septex_base = 0x400\nnvn_septex_slots = 2\ntex_dyn_slots = true\n",
        )
        .unwrap();
        let l = profile_layout(&p, st).unwrap();
        assert_eq!(
            (l.tex_base, l.tex_count, l.image_base, l.samp_base),
            (0x40, 4, 0x200, Some(0x300))
        );
        assert_eq!((l.septex_at(0x408), l.septex_at(0x410)), (Some(129), None));
        assert_eq!((l.texture_at(0x58), l.texture_at(0x60)), (Some(3), None));
        assert_eq!(l.image_at(0x208), Some(1));
        assert!(l.tex_dyn);
        assert_eq!(l.tex_dyn_count(), 4);
        // NVN2 profiles are refused; the defaults are Mario's layout.
        assert!(profile_layout(&dmsh_scan::Profile::parse("nvn = 2").unwrap(), st).is_err());
        let (d, _) = layout("nvn", st).unwrap();
        assert_eq!((d.tex_base, d.image_base, d.tex_count), (0x20, 0x120, 32));
    }
}
