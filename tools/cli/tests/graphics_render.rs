//! Every vertex + fragment case of the dksh corpus (`dmsh_testsupport::reference::dksh_render::cases`:
//! corpus pairs, and corpus shaders paired with generated glslang partners) drawn twice on the
//! Vulkan device — glslang's SPIR-V of the GLSL, then our translation of uam's binary for the
//! corpus side(s) — with the same vertex data, uniforms and textures. A case passes when every
//! target matches within 1/255 per channel on at least 99.9 % of pixels. One line per case;
//! exceptions and their causes are listed in `KNOWN` and docs/graphics.md.
//! `DMSH_DEBUG_CASE=NAME` prints the first differing pixels of one case.

use dmsh_ir::lift::{dksh, BindingLayout};
use dmsh_spv::{F64Mode, Options};
use dmsh_testsupport::reference::dksh_render::{self, Side};
use dmsh_testsupport::reference::translate::{corpus_stage, with_f64};
use dmsh_vk::render::Stage;

#[path = "../../spv/tests/common/asm.rs"]
mod asm;
use asm::{bra, ins, isetp_ne, ldc, lop_or, mov, mov32i, G};

/// Cases that do not match yet, with the cause.
const KNOWN: &[(&str, &str)] = &[];

#[test]
fn dksh_pairs_render_like_glslang() {
    render_cases(F64Mode::Native);
}

/// The same cases with the corpus sides translated in soft-f64 mode (the Metal build's f64:
/// integer routines, no 64-bit float type), where a side's native translation declares a
/// 64-bit float type (f64 guest code such as `vs_image_fp64`, or the exact FMA's and
/// directed rounding's f64): they must render like glslang's SPIR-V as well.
#[test]
fn dksh_pairs_render_like_glslang_soft_f64() {
    render_cases(F64Mode::Soft);
}

/// Draws every case (with `F64Mode::Soft`: those with a side whose native translation
/// declares f64) and asserts that all match glslang's rendering or are in `KNOWN`.
fn render_cases(f64: F64Mode) {
    if let Err(e) = dmsh_vk::shared() {
        println!("skipped: no Vulkan device ({e})");
        return;
    }
    if !dmsh_testsupport::reference::glsl::available() {
        println!("skipped: glslangValidator not installed");
        return;
    }
    let dir = dmsh_testsupport::reference::dksh::corpus_dir();
    let (mut pass, mut total, mut unexpected) = (0, 0, Vec::new());
    let soft = f64 == F64Mode::Soft;
    let translate =
        |dir: &std::path::Path, n: &str, yq: bool| with_f64(f64, || corpus_stage(dir, n, yq));
    for case in dksh_render::cases(&dir) {
        if let Some(why) = case.unsupported {
            println!("skip {}: {why}", case.name);
            continue;
        }
        let yq = case.quirk.is_some_and(|q| q.contains("c[1][0]"));
        if soft {
            let native_f64 = |s: &Side| match s {
                Side::Corpus(n) => {
                    corpus_stage(&dir, n, yq).is_ok_and(|st| dmsh_msl::limits::uses_f64(&st.spirv))
                }
                Side::Helper(_) => false,
            };
            if !native_f64(&case.vertex) && !native_f64(&case.fragment) {
                continue;
            }
        }
        total += 1;
        let side = |s: &Side| match s {
            Side::Corpus(n) => Some(translate(&dir, n, yq)),
            Side::Helper(_) => None,
        };
        let (v, f) = (side(&case.vertex), side(&case.fragment));
        if soft {
            for st in [&v, &f].into_iter().flatten().flatten() {
                if dmsh_msl::limits::uses_f64(&st.spirv) {
                    println!("FAIL {}: soft f64 left a 64-bit float type", case.name);
                    unexpected.push(case.name.clone());
                }
            }
        }
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
    println!(
        "{pass}/{total} dksh render cases match glslang's rendering{}",
        if soft { " (soft f64)" } else { "" }
    );
    println!("unexpected: {unexpected:?}");
    assert!(unexpected.is_empty(), "unexpected failures: {unexpected:?}");
}

/// An NVN fragment program that samples 2D textures at `vUV.xy` through bindless handles and
/// writes their sum to colour target 0. `setup` computes the handles (LDC / LOP.OR words, the
/// builders below); `handles` are the registers holding them, one `TEX.B` each (at most two).
/// The SPH is fs_sampler_dyn_all's (vUV perspective at location 0, vIdx flat at 1, one RGBA
/// target); the IPA / MUFU / TEX.B / FADD / MOV words are that shader's listing's with other
/// registers, LDC and LOP.OR as `nvn_fragment` in tools/spv/tests/graphics_valid.rs.
fn nvn_sampling(setup: &[u64], handles: &[u64]) -> Vec<u8> {
    // TEX.B Rd, R2 (x, y), Rh (handle), 2D, mask 0xf.
    let tex =
        |rd: u64, rh: u64| 0xdeb8_0000_0000_0000 | rd | 2 << 8 | rh << 20 | 1 << 29 | 0xf << 31 | G;
    let fadd = |rd: u64, ra: u64, rb: u64| 0x5c58_1000_0007_0000 | rb << 20 | ra << 8 | rd;
    let mut words = vec![
        0xe003_ff87_cff7_ff00u64, // IPA.PASS R0, a[0x7c], RZ
        0x5080_0000_0047_0007,    // MUFU.RCP R7, R0
        0xe043_ff88_0077_ff02,    // IPA R2, a[0x80], R7
        0xe043_ff88_4077_ff03,    // IPA R3, a[0x84], R7
    ];
    words.extend_from_slice(setup);
    for (k, &h) in handles.iter().enumerate() {
        words.push(tex(4 + 8 * k as u64, h));
    }
    for c in 0..4 {
        words.push(match handles.len() {
            1 => mov(c, 4 + c),
            _ => fadd(c, 4 + c, 12 + c),
        });
    }
    words.push(0xe300_0000_0007_000f); // EXIT
    nvn_program(&words)
}

/// fs_sampler_dyn_all's SPH followed by `words`, a scheduling word before every three.
fn nvn_program(words: &[u64]) -> Vec<u8> {
    let mut code =
        include_bytes!("../../../tests/corpus/extra/glsl/fs_sampler_dyn_all.frag.sph.bin").to_vec();
    for chunk in words.chunks(3) {
        code.extend_from_slice(&0x001f_8000_fc00_07e0u64.to_le_bytes());
        for w in chunk {
            code.extend_from_slice(&w.to_le_bytes());
        }
    }
    code
}

/// Binds what the separate-sampler NVN cases read: c\[2\] (GLSL uniform binding 0 in the
/// harness) as the replay fills it — texture slot 0 at 0x168, sampler slots 0 and 1 (<< 20) at
/// 0x568 and 0x570 — texture `t`, sampler 0 (nearest, clamp to edge) and sampler 1 (linear,
/// repeat; the samplers' textures only carry the settings).
fn bind_separate_samplers(case: &mut dksh_render::PairCase) {
    use dmsh_testsupport::reference::dksh_render::tex;
    use dmsh_vk::TexFormat;
    let mut c2 = vec![0u8; 0x580];
    c2[0x570..0x574].copy_from_slice(&(1u32 << 20).to_le_bytes());
    case.fs.ubos.push((0, c2));
    case.fs
        .textures
        .push((0, tex("t", 8, TexFormat::Rgba8Unorm, 3)));
    case.fs
        .samplers
        .push((0, tex("s0", 1, TexFormat::Rgba8Unorm, 1)));
    let mut s1 = tex("s1", 1, TexFormat::Rgba8Unorm, 1);
    (s1.linear, s1.repeat) = (true, true);
    case.fs.samplers.push((1, s1));
}

/// A translated resource as the NVN tests check it: (kind, bank / slot, binding, separate,
/// count).
type ResKey = (&'static str, u32, u32, bool, u32);

/// Translates an NVN fragment program under `layout`; (SPIR-V + runner reflection, the
/// translator's reflection as (kind, bank, binding, separate, count)).
fn translate_nvn(code: &[u8], layout: BindingLayout) -> (Stage, Vec<ResKey>) {
    let st = dmsh_ir::Stage::Fragment;
    let cfg = dksh::graphics_config(st, code, &[], layout, "nvn-test").unwrap();
    let out = dmsh_spv::translate_graphics(code, &cfg, &Options::default()).unwrap();
    let kinds = out
        .reflection
        .resources
        .iter()
        // The kinds are a handful of names: leaking them keeps the literal comparisons below.
        .map(|r| {
            let kind: &'static str = Box::leak(r.kind.clone().into_boxed_str());
            (kind, r.bank, r.vk_binding(), r.separate, r.count)
        })
        .collect();
    // One file per call: the NVN tests run in parallel in one process.
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let k = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let spv = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("dmsh-nvn-{k}.spv"));
    let bytes: Vec<u8> = out.words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(&spv, bytes).unwrap();
    match std::process::Command::new("spirv-val")
        .args(["--target-env", "vulkan1.2"])
        .arg(&spv)
        .output()
    {
        Ok(o) => assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => println!("spirv-val not run: {e}"),
    }
    let _ = std::fs::remove_file(&spv);
    let reflection = dmsh_vk::Reflection::from_json(&out.reflection.to_json()).unwrap();
    (
        Stage {
            spirv: out.words,
            reflection,
        },
        kinds,
    )
}

/// Draws `case` (fragment GLSL `glsl`, written as `NAME.frag.glsl`) from glslang's SPIR-V and
/// with `ours` as the fragment stage; returns (fraction within 1/255, max difference), or None
/// when there is no Vulkan device or glslang.
fn render_against_glslang(
    name: &str,
    glsl: &str,
    ours: Stage,
    setup: impl FnOnce(&mut dksh_render::PairCase),
) -> Option<(f64, u8)> {
    if let Err(e) = dmsh_vk::shared() {
        println!("skipped render: no Vulkan device ({e})");
        return None;
    }
    if !dmsh_testsupport::reference::glsl::available() {
        println!("skipped render: glslangValidator not installed");
        return None;
    }
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("dmsh-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.frag.glsl")), glsl).unwrap();
    let mut case = dksh_render::fragment_case(&dir, name);
    setup(&mut case);
    let r = dksh_render::check_translation(&dir, &case, None, Some(ours)).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(r.mismatches.is_empty(), "{r:?}");
    println!(
        "{name}: {:.4}% of pixels within 1/255 (max diff {})",
        r.targets[0].0 * 100.0,
        r.targets[0].1
    );
    Some(r.targets[0])
}

/// The GLSL prologue of the NVN render tests (the inputs the SPH declares).
const NVN_GLSL_HEAD: &str = "#version 460\n\
     layout(location = 0) in vec4 vUV;\n\
     layout(location = 1) flat in int vIdx;\n\
     layout(location = 0) out vec4 o0;\n";

/// Separate textures and samplers (issue 5): one texture (Engage's table, c\[2\]\[0x168\])
/// sampled through separate samplers 0 and 1 (c\[2\]\[0x568\], c\[2\]\[0x570\]; nearest + clamp
/// and linear + repeat) — an image at binding 64, samplers at 96 and 97, `OpSampledImage` at
/// each use — drawn like glslang's SPIR-V of `texture2D t; sampler s0, s1;`.
#[test]
fn nvn_separate_samplers_render_like_glslang() {
    let mut layout = BindingLayout::nvn(dmsh_ir::Stage::Fragment, 0x168);
    layout.samp_base = Some(0x568);
    let setup = [
        ldc(8, 2, 0x168),
        ldc(9, 2, 0x568),
        lop_or(10, 8, 9),
        ldc(9, 2, 0x570),
        lop_or(11, 8, 9),
    ];
    let (ours, kinds) = translate_nvn(&nvn_sampling(&setup, &[10, 11]), layout);
    let kinds: Vec<_> = kinds.into_iter().filter(|k| k.0 != "cbuf").collect();
    assert_eq!(
        kinds,
        [
            ("texture", 0, 64, true, 0),
            ("sampler", 0, 96, false, 0),
            ("sampler", 1, 97, false, 0)
        ]
    );
    let glsl = format!(
        "{NVN_GLSL_HEAD}layout(binding = 0) uniform texture2D t;\n\
         layout(binding = 0) uniform sampler s0;\n\
         layout(binding = 1) uniform sampler s1;\n\
         void main() {{ o0 = texture(sampler2D(t, s0), vUV.xy) + texture(sampler2D(t, s1), vUV.xy); }}\n"
    );
    let r = render_against_glslang("nvn_separate_samplers", &glsl, ours, bind_separate_samplers);
    if let Some((frac, _)) = r {
        assert!(frac >= 0.999);
    }
}

/// `tex_ubo`: the handle is word 4 of NVN uniform buffer 1 (c\[4\]\[0x10\]; texture ID 2,
/// sampler ID 2); the runner binds the texture that ID names (the harness puts slot numbers in
/// handles, as the replay does). Texture 0 holds other data, so a wrong pick shows.
#[test]
fn nvn_tex_ubo_renders_like_glslang() {
    let layout = BindingLayout::nvn(dmsh_ir::Stage::Fragment, 0x20);
    let (ours, kinds) = translate_nvn(&nvn_sampling(&[ldc(8, 4, 0x10)], &[8]), layout);
    let b = 64 + (0x8000 | 1 << 11 | 4);
    assert!(kinds.contains(&("tex_ubo", 4, b, false, 0)), "{kinds:?}");
    assert!(kinds.contains(&("samp_ubo", 4, b, false, 0)), "{kinds:?}");
    let glsl = format!(
        "{NVN_GLSL_HEAD}layout(binding = 2) uniform sampler2D t2;\n\
         void main() {{ o0 = texture(t2, vUV.xy); }}\n"
    );
    use dmsh_testsupport::reference::dksh_render::tex;
    use dmsh_vk::TexFormat;
    let r = render_against_glslang("nvn_tex_ubo", &glsl, ours, |case| {
        // Uniform bank 4 is GLSL uniform binding 2 in the harness; word 4 = 2 | 2 << 20.
        let mut ubo = vec![0u8; 32];
        ubo[0x10..0x14].copy_from_slice(&(2u32 | 2 << 20).to_le_bytes());
        case.fs.ubos.push((2, ubo));
        case.fs
            .textures
            .push((0, tex("t0", 8, TexFormat::Rgba8Unorm, 5)));
        let mut t2 = tex("t2", 8, TexFormat::Rgba8Unorm, 6);
        t2.linear = true;
        case.fs.textures.push((2, t2));
    });
    if let Some((frac, _)) = r {
        assert!(frac >= 0.999);
    }
}

/// `tex_dyn` / `samp_dyn` (profile `tex_dyn_slots`): a handle that is no table word
/// (c\[2\]\[0x164\] | c\[2\]\[0x568\]) indexes the texture array by its texture ID (1) and the
/// sampler array by its sampler ID (1); the runner binds element k = texture / sampler k.
#[test]
fn nvn_tex_dyn_renders_like_glslang() {
    let mut layout = BindingLayout::nvn(dmsh_ir::Stage::Fragment, 0x168);
    layout.tex_dyn = true;
    let setup = [ldc(8, 2, 0x164), ldc(9, 2, 0x568), lop_or(10, 8, 9)];
    let (ours, kinds) = translate_nvn(&nvn_sampling(&setup, &[10]), layout);
    let t = 64 + dmsh_ir::TEX_DYN as u32;
    assert!(kinds.contains(&("tex_dyn", 0, t, false, 32)), "{kinds:?}");
    assert!(
        kinds.contains(&("samp_dyn", 0, t + 32, false, 32)),
        "{kinds:?}"
    );
    let glsl = format!(
        "{NVN_GLSL_HEAD}layout(binding = 1) uniform sampler2D t1;\n\
         void main() {{ o0 = texture(t1, vUV.xy); }}\n"
    );
    use dmsh_testsupport::reference::dksh_render::tex;
    use dmsh_vk::TexFormat;
    let r = render_against_glslang("nvn_tex_dyn", &glsl, ours, |case| {
        // c[2] (GLSL uniform binding 0 in the harness): texture ID 1 at 0x164, sampler ID 1
        // (<< 20) at 0x568.
        let mut c2 = vec![0u8; 0x570];
        c2[0x164..0x168].copy_from_slice(&1u32.to_le_bytes());
        c2[0x568..0x56c].copy_from_slice(&(1u32 << 20).to_le_bytes());
        case.fs.ubos.push((0, c2));
        case.fs
            .textures
            .push((0, tex("t0", 8, TexFormat::Rgba8Unorm, 5)));
        let mut t1 = tex("t1", 8, TexFormat::Rgba8Unorm, 6);
        (t1.linear, t1.repeat) = (true, true);
        case.fs.textures.push((1, t1));
    });
    if let Some((frac, _)) = r {
        assert!(frac >= 0.999);
    }
}

/// glslang's reflection of a sampler array (`sampler2D t2[4]`, binding 64) carries its length
/// (`count` 4), and the runner binds it as a descriptor array from the case's textures at
/// bindings 0–3 (element k = binding k): the draw indexed by `vIdx & 3` runs.
#[test]
fn glslang_sampler_array_binds() {
    if dmsh_vk::shared().is_err() || !dmsh_testsupport::reference::glsl::available() {
        println!("skipped: no Vulkan device or glslang");
        return;
    }
    use dmsh_testsupport::reference::dksh_render::tex;
    use dmsh_vk::TexFormat;
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-arr");
    std::fs::create_dir_all(&dir).unwrap();
    let glsl = format!(
        "{NVN_GLSL_HEAD}layout(binding = 0) uniform sampler2D t2[4];\n\
         void main() {{ o0 = texture(t2[vIdx & 3], vUV.xy); }}\n"
    );
    std::fs::write(dir.join("arr.frag.glsl"), glsl).unwrap();
    let mut case = dksh_render::fragment_case(&dir, "arr");
    for k in 0..4 {
        let t = tex(&format!("t{k}"), 16, TexFormat::Rgba8Unorm, 20 + k);
        case.fs.textures.push((k, t));
    }
    let rv = dksh_render::reference_stage(&dir, &case.vertex, "vertex").unwrap();
    let rf = dksh_render::reference_stage(&dir, &case.fragment, "fragment").unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let r = &rf.reflection.resources;
    assert_eq!(
        (r.len(), r[0].kind.as_str(), r[0].vk_binding(), r[0].count),
        (1, "texture", 64, 4)
    );
    let out = dksh_render::run(&case, rv, rf).unwrap();
    assert_eq!(out.targets.len(), 1);
    println!("sampler array t2[4]: drawn");
}

/// A handle that reaches `TEX.B` through a branch merge (the `handles` pass, docs/ir.md):
/// texture slot 0 (c\[2\]\[0x168\]) ORed with separate sampler 1 (c\[2\]\[0x570\]) computed before
/// `@P0 BRA` (P0 = R3 != 0, R3 the interpolated y) and recomputed on the fall-through path —
/// a phi of two equal handles at the `TEX.B`. It binds like the block-local handle (a separate
/// image at 64, sampler 1 at 97) and draws like glslang's SPIR-V of `texture(sampler2D(t, s1))`.
#[test]
fn nvn_handle_through_a_merge_renders_like_glslang() {
    let mut layout = BindingLayout::nvn(dmsh_ir::Stage::Fragment, 0x168);
    layout.samp_base = Some(0x568);
    let handle = [ldc(8, 2, 0x168), ldc(9, 2, 0x570), lop_or(10, 8, 9)];
    let mut setup = handle.to_vec();
    // Words 0-3 are the IPA / MUFU prologue, the setup starts at word 4: ISETP is word 7,
    // the branch word 8, the recomputation words 9-11, TEX.B word 12 (`nvn_sampling` puts a
    // scheduling word before every three, as `asm::at` counts).
    setup.push(isetp_ne(0, 3, 0));
    setup.push(bra(0, false, 8, 12));
    setup.extend_from_slice(&handle);
    let (ours, kinds) = translate_nvn(&nvn_sampling(&setup, &[10]), layout);
    let kinds: Vec<_> = kinds.into_iter().filter(|k| k.0 != "cbuf").collect();
    assert_eq!(
        kinds,
        [("texture", 0, 64, true, 0), ("sampler", 1, 97, false, 0)]
    );
    let glsl = format!(
        "{NVN_GLSL_HEAD}layout(binding = 0) uniform texture2D t;\n\
         layout(binding = 1) uniform sampler s1;\n\
         void main() {{ o0 = texture(sampler2D(t, s1), vUV.xy); }}\n"
    );
    let r = render_against_glslang("nvn_handle_merge", &glsl, ours, bind_separate_samplers);
    if let Some((frac, _)) = r {
        assert!(frac >= 0.999);
    }
}

/// The seed's loop case (issue 5): handle `c2[0x1A0] | 0x10500000` — separate texture 7 under
/// `nvn_septex_base` 0x168, so texture slot 128 + 7 = 135, with the constant sampler ID 0x105
/// (`samp_id`) — computed before a loop, sampled by `TEX.B` at the loop head and recomputed in
/// the body on every iteration but the last (a phi at the head; the `handles` pass resolves
/// it). The runner combines texture 135 with the sampler the job binds to sampler ID 0x105
/// (linear + repeat) rather than the texture's own (nearest + clamp): it draws like glslang's
/// SPIR-V of `texture(sampler2D(t, s))`, and with the texture's own sampler it does not.
#[test]
fn nvn_sampler_id_loop_handle_renders_like_glslang() {
    use dmsh_isa::Field;
    let mut layout = BindingLayout::nvn(dmsh_ir::Stage::Fragment, 0x20);
    layout.septex_base = Some(0x168);
    // TEX.B R4, R2 (x, y), R10 (handle), 2D, mask 0xf.
    let tex_b = 0xdeb8_0000_0000_0000u64 | 4 | 2 << 8 | 10 << 20 | 1 << 29 | 0xf << 31 | G;
    let words = [
        0xe003_ff87_cff7_ff00u64, // 0: IPA.PASS R0, a[0x7c], RZ
        0x5080_0000_0047_0007,    // 1: MUFU.RCP R7, R0
        0xe043_ff88_0077_ff02,    // 2: IPA R2, a[0x80], R7
        0xe043_ff88_4077_ff03,    // 3: IPA R3, a[0x84], R7
        ldc(8, 2, 0x1a0),         // 4
        mov32i(9, 0x1050_0000),   // 5
        lop_or(10, 8, 9),         // 6: R10 = handle
        mov32i(11, 3),            // 7: R11 = 3 iterations
        tex_b,                    // 8: loop head
        ins(
            "IADD32I",
            &[(Field::Rd, 11), (Field::Ra, 11), (Field::Imm, -1)],
        ), // 9: R11 -= 1
        isetp_ne(0, 11, 0),       // 10: P0 = R11 != 0
        bra(0, true, 11, 16),     // 11: @!P0 BRA 16 (leave)
        ldc(8, 2, 0x1a0),         // 12
        mov32i(9, 0x1050_0000),   // 13
        lop_or(10, 8, 9),         // 14: the same handle, recomputed
        bra(7, false, 15, 8),     // 15: BRA 8
        mov(0, 4),                // 16
        mov(1, 5),
        mov(2, 6),
        mov(3, 7),
        0xe300_0000_0007_000f, // 20: EXIT
    ];
    let (ours, kinds) = translate_nvn(&nvn_program(&words), layout);
    let kinds: Vec<_> = kinds.into_iter().filter(|k| k.0 != "cbuf").collect();
    // Texture slot 128 + (0x1a0 - 0x168) / 8 = 135 at binding 64 + 135, sampler ID 0x105 (the
    // constant's high 12 bits) on the same binding.
    assert_eq!(
        kinds,
        [
            ("texture", 135, 64 + 135, false, 0),
            ("samp_id", 0x105, 64 + 135, false, 0)
        ]
    );
    let glsl = format!(
        "{NVN_GLSL_HEAD}layout(binding = 7) uniform texture2D t;\n\
         layout(binding = 1) uniform sampler s;\n\
         void main() {{ o0 = texture(sampler2D(t, s), vUV.xy); }}\n"
    );
    use dmsh_testsupport::reference::dksh_render::tex;
    use dmsh_vk::TexFormat;
    let setup = |case: &mut dksh_render::PairCase| {
        // c[2] as the replay fills it: texture ID 135 at 0x1a0.
        let mut c2 = vec![0u8; 0x1b0];
        c2[0x1a0..0x1a4].copy_from_slice(&135u32.to_le_bytes());
        case.fs.ubos.push((0, c2));
        // The texture's own sampler: nearest, clamp; sampler ID 0x105: linear, repeat. The
        // harness binds our slot 135 / sampler ID 0x105 to the case's bindings of those
        // numbers; glslang's reflection takes bindings below 32 only, so its GLSL names the
        // same texture and sampler at 7 and 1.
        let t = tex("t", 8, TexFormat::Rgba8Unorm, 3);
        case.fs.textures.push((7, t.clone()));
        case.fs.textures.push((135, t));
        let mut s = tex("s", 1, TexFormat::Rgba8Unorm, 1);
        (s.linear, s.repeat) = (true, true);
        case.fs.samplers.push((1, s.clone()));
        case.fs.samplers.push((0x105, s));
    };
    let r = render_against_glslang("nvn_samp_id_loop", &glsl, ours.clone(), setup);
    let Some((frac, _)) = r else { return };
    assert!(frac >= 0.999);
    // The same draw with the texture's own sampler (the sampler ID dropped from the
    // reflection): visibly different, so the runner's choice of sampler is what matched.
    let mut wrong = ours;
    wrong.reflection.resources.retain(|r| r.kind != "samp_id");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-samp-id-wrong");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("wrong.frag.glsl"), &glsl).unwrap();
    let mut case = dksh_render::fragment_case(&dir, "wrong");
    setup(&mut case);
    let r = dksh_render::check_translation(&dir, &case, None, Some(wrong)).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "with the texture's own sampler: {:.4}% within 1/255 (max diff {})",
        r.targets[0].0 * 100.0,
        r.targets[0].1
    );
    assert!(r.targets[0].0 < 0.9, "{:?}", r.targets[0]);
}

/// A 1D texture (issue 5; no corpus shader with a `sampler1D` is drawn: fs_tex_dims needs
/// every sampler kind at once, fs_sampler_array_dyn has no glslang reference): `TEX.B` of
/// type 1D (TexType 0) at `vUV.x` with the NVN handle c\[2\]\[0x20\] (texture slot 0), drawn
/// with a 16×1 linear-filtered texture (`TextureSpec::one_d`: a 1D image and view) like
/// glslang's SPIR-V of `texture(sampler1D, vUV.x)`.
#[test]
fn nvn_1d_texture_renders_like_glslang() {
    let layout = BindingLayout::nvn(dmsh_ir::Stage::Fragment, 0x20);
    // TEX.B R4, R2 (x), R8 (handle), 1D, mask 0xf.
    let tex_b = 0xdeb8_0000_0000_0000u64 | 4 | 2 << 8 | 8 << 20 | 0xf << 31 | G;
    let words = [
        0xe003_ff87_cff7_ff00u64, // IPA.PASS R0, a[0x7c], RZ
        0x5080_0000_0047_0007,    // MUFU.RCP R7, R0
        0xe043_ff88_0077_ff02,    // IPA R2, a[0x80], R7
        0xe043_ff88_4077_ff03,    // IPA R3, a[0x84], R7
        ldc(8, 2, 0x20),
        tex_b,
        mov(0, 4),
        mov(1, 5),
        mov(2, 6),
        mov(3, 7),
        0xe300_0000_0007_000f, // EXIT
    ];
    let (ours, kinds) = translate_nvn(&nvn_program(&words), layout);
    let kinds: Vec<_> = kinds.into_iter().filter(|k| k.0 != "cbuf").collect();
    assert_eq!(kinds, [("texture", 0, 64, false, 0)]);
    let glsl = format!(
        "{NVN_GLSL_HEAD}layout(binding = 0) uniform sampler1D t;\n\
         void main() {{ o0 = texture(t, vUV.x); }}\n"
    );
    use dmsh_testsupport::reference::dksh_render::tex;
    use dmsh_vk::TexFormat;
    let r = render_against_glslang("nvn_1d", &glsl, ours, |case| {
        case.fs.ubos.push((0, vec![0u8; 0x30]));
        let mut t = tex("t", 16, TexFormat::Rgba8Unorm, 9);
        (t.height, t.one_d, t.linear) = (1, true, true);
        t.data.truncate(16 * 4);
        case.fs.textures.push((0, t));
    });
    if let Some((frac, _)) = r {
        assert!(frac >= 0.999);
    }
}
