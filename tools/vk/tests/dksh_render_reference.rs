//! The dksh render harness on glslang's SPIR-V: every runnable vertex/fragment case compiles,
//! draws something, and draws it identically twice. The translator's tests draw the same case
//! with their translation of uam's binary on the corpus side(s) and `dksh_render::compare`.
//! `DMSH_VK_DUMP=DIR` writes every target as PNG.

use dmsh_testsupport::reference::dksh_render::{self as dr, Side};
use dmsh_testsupport::reference::{dksh, glsl};

#[test]
fn dksh_render_cases_draw_on_glslang_spirv() {
    let Some(dev) = glsl::vulkan_device() else {
        return;
    };
    let dir = dksh::corpus_dir();
    let cases = dr::cases(&dir);
    let (mut ran, mut skipped) = (0, 0);
    for case in &cases {
        if let Some(u) = case.unsupported {
            println!("skipped {}: {u}", case.name);
            skipped += 1;
            continue;
        }
        let vs = dr::reference_stage(&dir, &case.vertex, "vertex").unwrap();
        let fs = dr::reference_stage(&dir, &case.fragment, "fragment").unwrap();
        let a =
            dr::run(case, vs.clone(), fs.clone()).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        let b = dr::run(case, vs, fs).unwrap();
        let r = dr::compare(case, &a, &b);
        assert!(r.ok(1.0), "{}: not deterministic: {r:?}", case.name);
        if let Ok(d) = std::env::var("DMSH_VK_DUMP") {
            for (k, t) in a.targets.iter().enumerate() {
                let p = std::path::Path::new(&d).join(format!("{}.{k}.png", case.name));
                std::fs::create_dir_all(&d).unwrap();
                std::fs::write(p, t.to_png().unwrap()).unwrap();
            }
        }
        let t = &a.targets[0];
        let bg = t.data[..t.format.texel_bytes() as usize].to_vec();
        let drawn = t
            .data
            .chunks(t.format.texel_bytes() as usize)
            .filter(|p| *p != bg.as_slice())
            .count();
        // fs_sample_shading clears its own sample's bit in gl_SampleMask, so every sample is
        // discarded: an empty image is its right result.
        assert!(
            drawn > 0 || case.name == "helper+fs_sample_shading",
            "{}: nothing drawn",
            case.name
        );
        let corpus: Vec<&str> = [&case.vertex, &case.fragment]
            .iter()
            .filter_map(|s| match s {
                Side::Corpus(n) => Some(n.as_str()),
                Side::Helper(_) => None,
            })
            .collect();
        println!(
            "ok {}: {} target(s), {drawn} of {} pixels differ from the corner, corpus side(s) {corpus:?}{}",
            case.name,
            a.targets.len(),
            t.width * t.height,
            case.quirk.map(|q| format!(" (quirk: {q})")).unwrap_or_default()
        );
        ran += 1;
    }
    println!(
        "{ran} render cases drawn, {skipped} skipped, on {}",
        dev.info().name
    );
    assert!(ran >= 29, "{ran}");
}

#[test]
fn interface_parsing_and_helpers() {
    let src = "layout(location = 0) flat in uint vKey;\nlayout(location = 2) noperspective in vec4 vC; // x\nlayout(std140, binding = 0) uniform U { vec4 a; };\n";
    let v = dr::interface(src, "in");
    assert_eq!(v.len(), 2);
    assert_eq!((v[0].location, v[0].ty.as_str()), (0, "uint"));
    assert_eq!(v[1].quals, vec!["noperspective".to_string()]);
    let vs = dr::helper_vertex(&v);
    assert!(
        vs.contains("layout(location = 0) flat out uint o0;"),
        "{vs}"
    );
    assert!(vs.contains("noperspective out vec4 o2"), "{vs}");
    let fs = dr::helper_fragment(&v);
    assert!(fs.contains("flat in uint i0"), "{fs}");
}

#[test]
fn render_check_translation_api() {
    if !glsl::available() || dmsh_vk::shared().is_err() {
        return println!("skipped: no glslang or no Vulkan device");
    }
    let dir = dksh::corpus_dir();
    let cases = dr::cases(&dir);
    let case = cases
        .iter()
        .find(|c| c.name == "helper+fs_tex2d_basic")
        .unwrap();
    let r = dr::check_translation(&dir, case, None, None).unwrap();
    assert!(r.ok(1.0), "{r:?}");
    // A different fragment shader in place of the corpus one is caught.
    let text = dr::corpus_glsl(&dir, "fs_tex2d_basic.frag")
        .unwrap()
        .replace(
            "texture(albedo, vUV) * tint",
            "texture(albedo, vUV).bgra * tint",
        );
    let spirv = glsl::compile_source(&text, "frag", glsl::DEKO3D_SHIFTS).unwrap();
    let reflection = glsl::reflect_shifted(&spirv, "fragment");
    let r = dr::check_translation(&dir, case, None, Some(dmsh_vk::Stage { spirv, reflection }))
        .unwrap();
    assert!(!r.ok(0.999), "{r:?}");
    println!(
        "ok: wrong fragment shader matches only {:.1} % of pixels",
        r.targets[0].0 * 100.0
    );
}
