//! Every vertex + fragment case of the dksh corpus (`dmsh_vk::reference::dksh_render::cases`:
//! corpus pairs, and corpus shaders paired with generated glslang partners) drawn twice on the
//! Vulkan device — glslang's SPIR-V of the GLSL, then our translation of uam's binary for the
//! corpus side(s) — with the same vertex data, uniforms and textures. A case passes when every
//! target matches within 1/255 per channel on at least 99.9 % of pixels. One line per case;
//! exceptions and their causes are listed in `KNOWN` and docs/graphics.md.
//! `DMSH_DEBUG_CASE=NAME` prints the first differing pixels of one case.

use dmsh_ir::lift::{dksh, BindingLayout, CompType, ImageFmt};
use dmsh_spv::Options;
use dmsh_vk::reference::dksh_render::{self, Side};
use dmsh_vk::render::Stage;
use std::path::Path;

/// Cases that do not match yet, with the cause.
const KNOWN: &[(&str, &str)] = &[];

fn comp_type(ty: &str) -> CompType {
    if ty.starts_with("uvec") || ty == "uint" {
        CompType::Uint
    } else if ty.starts_with("ivec") || ty == "int" {
        CompType::Sint
    } else {
        CompType::Float
    }
}

/// Texture slots declared `isampler*` / `usampler*` in the GLSL.
fn sampler_types(src: &str) -> Vec<(u32, CompType)> {
    let mut v = Vec::new();
    for line in src.lines() {
        let l = line.trim();
        let Some(b) = l.find("binding") else { continue };
        let rest = &l[b + 7..];
        let num: String = rest
            .chars()
            .skip_while(|c| !c.is_ascii_digit())
            .take_while(|c| c.is_ascii_digit())
            .collect();
        let Ok(n) = num.parse::<u32>() else { continue };
        if l.contains("usampler") {
            v.push((n, CompType::Uint));
        } else if l.contains("isampler") {
            v.push((n, CompType::Sint));
        }
    }
    v
}

/// Image slots with a format qualifier: `layout(binding = N, rgba8) uniform … image2D`.
fn image_formats(src: &str) -> Vec<(u32, ImageFmt)> {
    let mut v = Vec::new();
    for line in src.lines() {
        let l = line.trim();
        if !l.contains("image") || !l.starts_with("layout") {
            continue;
        }
        let Some(inner) = l.split('(').nth(1).and_then(|x| x.split(')').next()) else {
            continue;
        };
        let mut binding = None;
        let mut fmt = None;
        for part in inner.split(',') {
            let p = part.trim();
            if let Some(b) = p.strip_prefix("binding") {
                binding = b.trim_start_matches([' ', '=']).trim().parse::<u32>().ok();
            } else if let Some(f) = ImageFmt::parse(p) {
                fmt = Some(f);
            }
        }
        if let (Some(b), Some(f)) = (binding, fmt) {
            v.push((b, f));
        }
    }
    v
}

/// Translates corpus shader `name` (e.g. `vs_basic_mvp.vert`) with I/O types from its GLSL.
/// (clip, cull) distance counts a GLSL source declares (`float gl_ClipDistance[C]`,
/// `float gl_CullDistance[K]`), when it declares cull distances: what a shader's facts
/// would give (the binary does not separate them).
fn clip_cull(src: &str) -> Option<(u32, u32)> {
    let count = |name: &str| -> u32 {
        src.lines()
            .filter_map(|l| {
                let l = l.trim();
                let rest = l.strip_prefix("out ").or_else(|| l.strip_prefix("in "))?;
                let rest = rest.trim_start().strip_prefix("float ")?.trim_start();
                let n = rest.strip_prefix(name)?.trim_start().strip_prefix('[')?;
                n.split(']').next()?.trim().parse().ok()
            })
            .max()
            .unwrap_or(0)
    };
    let k = count("gl_CullDistance");
    (k > 0).then(|| (count("gl_ClipDistance"), k))
}

/// `y_transform`: give c\[1\]\[0\] (Mesa's STATE_FB_WPOS_Y_TRANSFORM.x, which uam fills with
/// 0.0) the value 1.0 a Vulkan framebuffer implies, as the corpus README suggests for
/// reference comparisons of dFdy / interpolateAtOffset.
fn translate(dir: &Path, name: &str, y_transform: bool) -> Result<Stage, String> {
    let bytes = std::fs::read(dir.join(format!("{name}.dksh"))).map_err(|e| e.to_string())?;
    let mut prog = dksh::parse(&bytes)?;
    if y_transform {
        if let Some(w) = prog.cbuf1.first_mut() {
            *w = 1.0f32.to_bits();
        }
    }
    let mut cfg = dksh::graphics_config(
        prog.stage,
        &prog.code,
        &prog.cbuf1,
        BindingLayout::deko3d(prog.stage),
        name,
    )?;
    let src = dksh_render::corpus_glsl(dir, name).map_err(|e| e.to_string())?;
    if let Some(g) = cfg.gfx.as_mut() {
        g.early_fragment_tests = prog.early_fragment_tests;
        for v in dksh_render::interface(&src, "in") {
            if let Some(t) = g.inputs.get_mut(v.location as usize) {
                *t = comp_type(&v.ty);
            }
        }
        for v in dksh_render::interface(&src, "out") {
            if let Some(t) = g.outputs.get_mut(v.location as usize) {
                *t = comp_type(&v.ty);
            }
        }
        for (n, fmt) in image_formats(&src) {
            if let Some(x) = g.images.get_mut(n as usize) {
                *x = fmt;
            }
        }
        for (n, t) in sampler_types(&src) {
            if let Some(x) = g.textures.get_mut(n as usize) {
                *x = t;
            }
        }
        g.clip_cull = clip_cull(&src);
    }
    let out = dmsh_spv::translate_graphics(&prog.code, &cfg, &Options::default())
        .map_err(|e| e.to_string())?;
    let r = &out.reflection;
    let reflection = dmsh_vk::Reflection {
        version: r.version,
        stage: r.stage.to_string(),
        entry: r.entry.to_string(),
        local_size: r.local_size,
        local_size_spec: r.local_size_spec,
        shared_bytes: r.shared_bytes,
        local_bytes: r.local_bytes,
        uses_global_addresses: r.uses_global_addresses,
        fma_mode: r.fma_mode.to_string(),
        abi: r.abi.to_string(),
        warp_ops: r.warp_ops,
        resources: r
            .resources
            .iter()
            .map(|x| dmsh_vk::Resource {
                kind: x.kind.to_string(),
                bank: (x.kind == "cbuf").then_some(x.bank),
                slot: (x.kind != "cbuf").then_some(x.bank),
                guest_offset: x.guest_offset,
                size: (x.size > 0).then_some(x.size as u64),
                set: x.set,
                binding: Some(x.binding),
                metal_index: Some(x.metal_index),
            })
            .collect(),
    };
    Ok(Stage {
        spirv: out.words,
        reflection,
    })
}

#[test]
fn dksh_pairs_render_like_glslang() {
    if let Err(e) = dmsh_vk::shared() {
        println!("skipped: no Vulkan device ({e})");
        return;
    }
    if !dmsh_vk::reference::glsl::available() {
        println!("skipped: glslangValidator not installed");
        return;
    }
    let dir = dmsh_vk::reference::dksh::corpus_dir();
    let (mut pass, mut total, mut unexpected) = (0, 0, Vec::new());
    for case in dksh_render::cases(&dir) {
        if let Some(why) = case.unsupported {
            println!("skip {}: {why}", case.name);
            continue;
        }
        total += 1;
        let yq = case.quirk.is_some_and(|q| q.contains("c[1][0]"));
        let side = |s: &Side| match s {
            Side::Corpus(n) => Some(translate(&dir, n, yq)),
            Side::Helper(_) => None,
        };
        let (v, f) = (side(&case.vertex), side(&case.fragment));
        let err = [&v, &f]
            .iter()
            .find_map(|x| x.as_ref().and_then(|r| r.as_ref().err().cloned()));
        let known = KNOWN.iter().find(|k| k.0 == case.name).map(|k| k.1);
        if let Some(e) = err {
            println!("FAIL {}: translation: {e}", case.name);
            if known.is_none() {
                unexpected.push(case.name.clone());
            }
            continue;
        }
        let v = v.map(|r| r.unwrap());
        let f = f.map(|r| r.unwrap());
        if std::env::var("DMSH_DEBUG_CASE").ok().as_deref() == Some(case.name.as_str()) {
            let rv = dksh_render::reference_stage(&dir, &case.vertex, "vertex").unwrap();
            let rf = dksh_render::reference_stage(&dir, &case.fragment, "fragment").unwrap();
            let want = dksh_render::run(&case, rv.clone(), rf.clone()).unwrap();
            let got =
                dksh_render::run(&case, v.clone().unwrap_or(rv), f.clone().unwrap_or(rf)).unwrap();
            let (a, b) = (&want.targets[0], &got.targets[0]);
            let mut n = 0;
            for (k, (p, q)) in a.data.chunks(4).zip(b.data.chunks(4)).enumerate() {
                if p.iter().zip(q).any(|(x, y)| x.abs_diff(*y) > 1) && n < 40 {
                    n += 1;
                    println!(
                        "px {},{}: want {:?} got {:?}",
                        k % a.width as usize,
                        k / a.width as usize,
                        p,
                        q
                    );
                }
            }
        }
        match dksh_render::check_translation(&dir, &case, v, f) {
            Ok(r) => {
                let worst = r.targets.iter().map(|t| t.0).fold(1.0f64, f64::min);
                let maxd = r.targets.iter().map(|t| t.1).max().unwrap_or(0);
                if r.ok(0.999) {
                    pass += 1;
                    println!(
                        "ok   {}: {:.4}% of pixels within 1/255 (max diff {maxd})",
                        case.name,
                        worst * 100.0
                    );
                } else {
                    println!(
                        "FAIL {}: {:.4}% within 1/255 (max diff {maxd}), {} other mismatches{}{}",
                        case.name,
                        worst * 100.0,
                        r.mismatches.len(),
                        case.quirk
                            .map(|q| format!(" [quirk: {q}]"))
                            .unwrap_or_default(),
                        known.map(|k| format!(" [known: {k}]")).unwrap_or_default()
                    );
                    if known.is_none() {
                        unexpected.push(case.name.clone());
                    }
                }
            }
            Err(e) => {
                println!("FAIL {}: render: {e}", case.name);
                if known.is_none() {
                    unexpected.push(case.name.clone());
                }
            }
        }
    }
    println!("{pass}/{total} dksh render cases match glslang's rendering");
    println!("unexpected: {unexpected:?}");
    assert!(unexpected.is_empty(), "unexpected failures: {unexpected:?}");
}
