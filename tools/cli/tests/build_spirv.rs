//! `dmsh build --spirv` on a capture folder of Vulkan modules (glslang's SPIR-V of the GLSL
//! below; seed 000, Super Mario Galaxy): a vertex shader with push constants and an array of
//! 4 uniform blocks, a fragment shader with push constants, a uniform block and 8 combined
//! samplers, a fragment shader writing locations 0 and 1 (dual source), a fragment shader made
//! Vulkan-style (ArrayStride on the struct members), one with a runtime-sized sampler array,
//! a truncated module and random bytes.
//! Every other module builds; every `.metal` passes the clang stand-in check (skipped without clang)
//! and `check_bindings` against its reflection; the push block's `[[buffer(n)]]` is the
//! reflection's, after every other buffer; the dual-source variant has `[[color(0),
//! index(1)]]`; the runtime-sized array fails at its fix-up step and the two bad files are
//! recorded with their file and offset, and the build goes on; a second build takes every
//! module from the cache and is byte-identical.
//!
//! A second folder holds geometry and tessellation modules (glslang's SPIR-V 1.0 of every
//! corpus geometry and tessellation GLSL, gs_stores_only's draw with no output but the
//! position it adds) with a vertex shader and a fragment shader reading
//! gl_PrimitiveID: each is lowered at the SPIR-V level (docs/geometry.md,
//! docs/tessellation.md) — geometry `_b` kernel and `_p` draw, control and evaluation `_b`,
//! the vertex shader's capture form `_g`, the fragment shader's `_q` — and every library
//! passes the stand-in check and `check_bindings`; a geometry module declaring 2000 output
//! vertices fails naming why; the report counts the rest as built lowered.

mod common;
use common::{b_dir, dmsh, snapshot};

use dmsh_reflect::Reflection;
use dmsh_testsupport::reference::{glsl, vulkan_style};
use std::path::Path;

const VS_PUSH: &str = r#"#version 450
layout(push_constant) uniform P { mat4 mvp; vec4 tint; } pc;
layout(std140, set = 0, binding = 0) uniform M { vec4 rows[4]; } mats[4];
layout(location = 0) in vec4 pos;
layout(location = 0) out vec4 col;
void main() {
    int k = gl_InstanceIndex & 3;
    vec4 p = vec4(dot(mats[k].rows[0], pos), dot(mats[k].rows[1], pos),
                  dot(mats[k].rows[2], pos), dot(mats[k].rows[3], pos));
    col = pc.tint + mats[0].rows[0] + mats[3].rows[3];
    gl_Position = pc.mvp * p;
}
"#;

const FS_TEXTURES: &str = r#"#version 450
layout(push_constant) uniform P { layout(offset = 80) vec4 k; } pc;
layout(std140, set = 0, binding = 0) uniform U { vec4 c; } u;
layout(set = 0, binding = 1) uniform sampler2D tex[8];
layout(location = 0) in vec4 col;
layout(location = 0) out vec4 o;
void main() {
    o = col * pc.k + u.c;
    for (int i = 0; i < 8; i++) o += texture(tex[i], col.xy);
}
"#;

const FS_DUAL: &str = r#"#version 450
layout(std140, set = 0, binding = 0) uniform U { vec4 c; } u;
layout(location = 0) in vec4 col;
layout(location = 0) out vec4 c0;
layout(location = 1) out vec4 c1;
void main() { c0 = col; c1 = u.c * col.w; }
"#;

const FS_STRIDES: &str = r#"#version 450
struct Item { vec4 c; float w; };
layout(std140, set = 0, binding = 0) uniform U { vec4 a[4]; float f[3]; } u;
layout(std430, set = 0, binding = 1) readonly buffer S { float g[3]; Item items[2]; } s;
layout(location = 0) out vec4 o;
void main() {
    int i = int(gl_FragCoord.x) & 3;
    o = u.a[i] * u.f[i % 3] + vec4(s.g[i % 3]) + s.items[i & 1].c * s.items[1].w;
}
"#;

/// Valid SPIR-V the Metal build cannot bind without argument buffers: a runtime-sized array.
const FS_UNBOUNDED: &str = r#"#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(set = 0, binding = 0) uniform sampler2D tex[];
layout(location = 0) flat in int i;
layout(location = 0) out vec4 o;
void main() { o = texture(tex[nonuniformEXT(i)], vec2(0.5)); }
"#;

fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The capture folder: file name → bytes.
fn capture(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let spv = |src: &str, stage: &str| glsl::compile_source(src, stage, &[]).expect("glslang");
    let vs = spv(VS_PUSH, "vert");
    let (strides, moved) = vulkan_style::member_strides(&spv(FS_STRIDES, "frag"), false);
    assert_eq!(moved, 4);
    dmsh_vk::spirv_val(&strides).expect_err("the Vulkan-style module is invalid SPIR-V");
    let truncated = bytes(&vs)[..vs.len() / 2 * 4].to_vec();
    let mut x = 0x2545_f491u32;
    let random: Vec<u8> = (0..999)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    let files = vec![
        ("vs_push.spv".to_string(), bytes(&vs)),
        (
            "0123456789abcdef.spv".into(),
            bytes(&spv(FS_TEXTURES, "frag")),
        ),
        ("fs_dual.spv".into(), bytes(&spv(FS_DUAL, "frag"))),
        ("deep/fs_strides.spv".into(), bytes(&strides)),
        ("fs_unbounded.spv".into(), bytes(&spv(FS_UNBOUNDED, "frag"))),
        ("deep/truncated.spv".into(), truncated),
        ("random.spv".into(), random),
        ("notes.txt".into(), b"not a module".to_vec()),
    ];
    for (name, b) in &files {
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b).unwrap();
    }
    files
}

/// The key the build gives a file: its stem when it is a key, else sha256's first 16 digits.
fn key_of(name: &str, b: &[u8]) -> String {
    let stem = Path::new(name).file_stem().unwrap().to_str().unwrap();
    if stem.len() == 16 && stem.bytes().all(|c| c.is_ascii_hexdigit()) {
        return stem.into();
    }
    use sha2::Digest;
    sha2::Sha256::digest(b)[..8]
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// Checks one built library: the stand-in syntax check, check_bindings, and the push block.
fn check_library(b: &Path, base: &str, clang: bool) -> Reflection {
    let msl = std::fs::read_to_string(b.join(format!("{base}.metal"))).unwrap();
    let refl =
        Reflection::from_json(&std::fs::read_to_string(b.join(format!("{base}.json"))).unwrap())
            .unwrap();
    assert_eq!(
        dmsh_msl::check_bindings(&msl, &refl),
        Vec::<String>::new(),
        "{base}"
    );
    if clang {
        if let Err(e) = dmsh_msl::syntax::check(&msl) {
            panic!("{base}.metal: clang stand-in: {e}\n{msl}");
        }
    }
    if let Some(push) = refl.resources.iter().find(|r| r.kind == dmsh_reflect::PUSH) {
        let after = refl
            .resources
            .iter()
            .filter(|r| matches!(r.kind.as_str(), "cbuf" | "sbuf" | "lowered"))
            .map(|r| r.metal_index + r.count.max(1))
            .max()
            .unwrap_or(0);
        assert_eq!(push.metal_index, after, "{base}: push after every buffer");
        let f = &dmsh_msl::signature::functions(&msl)[0];
        let args: Vec<(&str, &str)> = f
            .params
            .iter()
            .filter_map(|p| Some((p.name.as_str(), p.attr("buffer")?)))
            .collect();
        let want = push.metal_index.to_string();
        let at: Vec<&str> = args.iter().filter(|a| a.1 == want).map(|a| a.0).collect();
        assert_eq!(
            at,
            ["pc"],
            "{base}: the push block alone at buffer({want}); {args:?}"
        );
        println!(
            "{base}: push constants ({:?} bytes) at [[buffer({want})]]",
            push.size
        );
    }
    refl
}

/// `dmsh build --spirv dir --out out` and `extra`.
fn build(dir: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let (d, o) = (dir.to_str().unwrap(), out.to_str().unwrap());
    dmsh(&[&["build", "--spirv", d, "--out", o], extra].concat())
}

#[test]
fn a_capture_folder_builds_every_module() {
    if !glsl::available() {
        println!("skipped: glslangValidator not installed");
        return;
    }
    let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-build-spirv");
    let _ = std::fs::remove_dir_all(&root);
    let (dir, out) = (root.join("capture"), root.join("out"));
    let files = capture(&dir);
    let key = |name: &str| {
        let f = files.iter().find(|f| f.0 == name).unwrap();
        key_of(&f.0, &f.1)
    };
    let o = build(&dir, &out, &[]);
    let text = String::from_utf8_lossy(&o.stdout);
    println!("{text}{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        o.status.success(),
        "a failing module does not fail the build without --strict"
    );
    let b = b_dir(&out);
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(b.join("_b_build.json")).unwrap()).unwrap();
    assert_eq!(
        (record["built"].as_u64(), record["failed"].as_u64()),
        (Some(4), Some(3))
    );
    let by_key: std::collections::BTreeMap<&str, &serde_json::Value> = record["shaders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["key"].as_str().unwrap(), s))
        .collect();
    let rec = |k: &str| by_key[k].clone();
    for (name, offset) in [
        ("deep/truncated.spv", "offset 0x"),
        ("random.spv", "offset 0x0: not SPIR-V"),
    ] {
        let r = rec(&key(name));
        assert_eq!(
            (r["status"].as_str(), r["step"].as_str()),
            (Some("failed"), Some("read"))
        );
        let m = r["message"].as_str().unwrap();
        assert!(m.contains(name) && m.contains(offset), "{m}");
        println!("{name}: {m}");
    }
    // `dmsh report --build` alone reports the capture build: every module, the two
    // unreadable files and the fix-up failure among the causes.
    let o = dmsh(&["report", "--build", b.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rep: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report/report.json")).unwrap())
            .unwrap();
    assert_eq!(rep["shaders"], 7, "{rep}");
    let causes: Vec<&str> = rep["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["cause"].as_str().unwrap())
        .collect();
    assert!(causes.contains(&"unreadable"), "{causes:?}");
    assert!(causes.contains(&"fix_up"), "{causes:?}");
    let r = rec(&key("fs_unbounded.spv"));
    assert_eq!(
        (r["step"].as_str(), r["stage"].as_str()),
        (Some("fix-up"), Some("fragment"))
    );
    assert!(
        r["message"].as_str().unwrap().contains("runtime-sized"),
        "{r}"
    );
    assert!(rec(&key("deep/truncated.spv"))["message"]
        .as_str()
        .unwrap()
        .contains("truncated"));
    let clang = match dmsh_msl::syntax::clang() {
        Ok(_) => true,
        Err(e) => {
            println!("clang stand-in check skipped: {e}");
            false
        }
    };
    let (vs, fs, dual, strides) = (
        key("vs_push.spv"),
        key("0123456789abcdef.spv"),
        key("fs_dual.spv"),
        key("deep/fs_strides.spv"),
    );
    assert_eq!(fs, "0123456789abcdef", "a key-named file keeps its key");
    for k in [&vs, &fs, &dual, &strides] {
        let r = rec(k);
        assert_eq!(r["status"], "built", "{r}");
        let outputs: Vec<&str> = r["outputs"]
            .as_object()
            .unwrap()
            .keys()
            .map(|s| s.as_str())
            .collect();
        let mut want = vec![format!("{k}_b.json"), format!("{k}_b.metal")];
        if *k == dual {
            want.extend([format!("{k}_d.json"), format!("{k}_d.metal")]);
        }
        assert_eq!(outputs, want);
    }
    let v = check_library(&b, &format!("{vs}_b"), clang);
    assert_eq!(v.stage, "vertex");
    assert_eq!(v.metal_entry_points, ["main0", "main0_z"]);
    assert!(v.fixups.contains(&"vs_depth".to_string()), "{:?}", v.fixups);
    let mats = v.resources.iter().find(|r| r.kind == "cbuf").unwrap();
    assert_eq!((mats.count, mats.metal_index, mats.size), (4, 0, Some(64)));
    let push = v.resources.iter().find(|r| r.kind == "push").unwrap();
    assert_eq!((push.metal_index, push.size), (4, Some(80)));

    let f = check_library(&b, &format!("{fs}_b"), clang);
    let tex = f.resources.iter().find(|r| r.kind == "texture").unwrap();
    assert_eq!(
        (tex.count, tex.metal_index, tex.metal_sampler),
        (8, 0, Some(0))
    );
    assert_eq!(
        (f.metal.textures, f.metal.samplers, f.metal.buffers),
        (8, 8, 2)
    );
    let push = f.resources.iter().find(|r| r.kind == "push").unwrap();
    assert_eq!((push.metal_index, push.size), (1, Some(96)));

    let d = check_library(&b, &format!("{dual}_b"), clang);
    let dd = check_library(&b, &format!("{dual}_d"), clang);
    let at = |r: &Reflection| -> Vec<(u32, u32)> {
        r.outputs.iter().map(|o| (o.location, o.index)).collect()
    };
    assert_eq!(
        (at(&d), at(&dd)),
        (vec![(0, 0), (1, 0)], vec![(0, 0), (0, 1)])
    );
    let dmsl = std::fs::read_to_string(b.join(format!("{dual}_d.metal"))).unwrap();
    assert!(dmsl.contains("[[color(0), index(1)]]"), "{dmsl}");
    assert!(dd.chain.is_some() && dd.fixups.contains(&"dual_source".to_string()));

    let s = check_library(&b, &format!("{strides}_b"), clang);
    assert_eq!(s.fixups, ["fix_strides"]);
    for k in [&vs, &fs, &strides] {
        assert!(
            !b.join(format!("{k}_d.metal")).exists(),
            "{k}: no dual-source variant"
        );
    }

    runtime_opens_the_capture_build(
        &out,
        &b,
        &files,
        (&vs, &fs, &dual, &key("fs_unbounded.spv")),
    );

    // Again: every module from the cache, the same bytes.
    let before = snapshot(&b);
    let o = build(&dir, &out, &["--strict"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("2 converted, 5 from the cache"), "{text}");
    assert!(
        !o.status.success(),
        "--strict: the two bad files fail the build"
    );
    assert_eq!(snapshot(&b), before);
    let _ = std::fs::remove_dir_all(&root);
}

/// The vertex and fragment shaders around the captured geometry modules.
const VS_PLAIN: &str = r#"#version 450
layout(location = 0) in vec4 pos;
layout(location = 0) out vec4 col;
void main() { gl_Position = pos; col = pos.yzwx; }
"#;

/// Interface blocks (a flat member), a matrix and an array between a vertex and a geometry
/// module, and a block out of the geometry module, which reads push constants (the kernel's
/// push block after the lowered buffers).
const VS_BLOCK: &str = r#"#version 450
layout(location = 0) in vec4 pos;
layout(location = 0) out VOut { vec3 wp; flat int id; } vo;
layout(location = 2) out mat2 vm;
layout(location = 4) out float vf[2];
void main() { gl_Position = pos; vo.wp = pos.xyz; vo.id = gl_VertexIndex; vm = mat2(pos);
    vf[0] = pos.z; vf[1] = pos.w; }
"#;

const GS_BLOCK: &str = r#"#version 450
layout(triangles) in;
layout(triangle_strip, max_vertices = 3) out;
layout(location = 0) in VOut { vec3 wp; flat int id; } vi[];
layout(location = 2) in mat2 vm[];
layout(location = 4) in float vf[][2];
layout(location = 0) out GOut { vec3 n; flat int id; } go;
layout(push_constant) uniform P { vec4 offset; } pc;
void main() {
    for (int i = 0; i < 3; i++) {
        gl_Position = gl_in[i].gl_Position + vec4(vm[i][1], vf[i][1], 0.0) + pc.offset;
        go.n = vi[i].wp;
        go.id = vi[i].id;
        EmitVertex();
    }
}
"#;

const FS_PRIMITIVE_ID: &str = r#"#version 450
layout(location = 0) in vec4 col;
layout(location = 0) out vec4 o;
void main() { o = col + vec4(float(gl_PrimitiveID) * 0.25); }
"#;

#[test]
fn a_capture_folder_with_geometry_and_tessellation_builds_them_lowered() {
    use dmsh_testsupport::reference::{dksh, dksh_render};
    if !glsl::available() {
        println!("skipped: glslangValidator not installed");
        return;
    }
    let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-build-spirv-gs");
    let _ = std::fs::remove_dir_all(&root);
    let (dir, out) = (root.join("capture"), root.join("out"));
    std::fs::create_dir_all(&dir).unwrap();
    let extra = common::root().join("tests/corpus/extra/glsl");
    // SPIR-V 1.0 (a Vulkan 1.0 title's), the deko3d binding shifts keeping uniform blocks
    // and samplers apart.
    let vk10 = |src: &str, st: &str| {
        let mut args = vec!["--target-env", "vulkan1.0"];
        args.extend_from_slice(glsl::DEKO3D_SHIFTS);
        glsl::compile_source(src, st, &args).unwrap_or_else(|e| panic!("{st}: {e}"))
    };
    let mut files: Vec<(String, &str)> = Vec::new();
    let mut put = |name: &str, words: &[u32], stage: &'static str| {
        std::fs::write(dir.join(name), bytes(words)).unwrap();
        files.push((name.to_string(), stage));
    };
    for (d, name) in [
        (dksh::corpus_dir(), "gs_passthrough_tri.geom"),
        (dksh::corpus_dir(), "gs_expand_points.geom"),
        (dksh::corpus_dir(), "tcs_triangle.tesc"),
        (dksh::corpus_dir(), "tes_triangle.tese"),
        (extra.clone(), "gs_indexed_in.geom"),
        (extra.clone(), "gs_streams.geom"),
        (extra.clone(), "gs_streams_cut.geom"),
        (extra.clone(), "gs_stores_only.geom"),
        (extra.clone(), "tcs_quad_barrier.tesc"),
        (extra.clone(), "tes_quad_isolevels.tese"),
    ] {
        let src = dksh_render::corpus_glsl(&d, name).unwrap();
        let st = name.rsplit('.').next().unwrap();
        let stage = match st {
            "geom" => "geometry",
            "tesc" => "tess_control",
            _ => "tess_eval",
        };
        put(&format!("{name}.spv"), &vk10(&src, st), stage);
    }
    put("vs_plain.spv", &vk10(VS_PLAIN, "vert"), "vertex");
    put("vs_block.spv", &vk10(VS_BLOCK, "vert"), "vertex");
    put("gs_block.spv", &vk10(GS_BLOCK, "geom"), "geometry");
    put("fs_pid.spv", &vk10(FS_PRIMITIVE_ID, "frag"), "fragment");
    // OutputVertices 3 → 2000: beyond the lowered form.
    let mut big = vk10(
        &dksh_render::corpus_glsl(&dksh::corpus_dir(), "gs_passthrough_tri.geom").unwrap(),
        "geom",
    );
    let at = (5..big.len())
        .find(|&i| big[i] == (4 << 16 | 16) && big[i + 2] == 26)
        .expect("OpExecutionMode OutputVertices");
    big[at + 3] = 2000;
    std::fs::write(dir.join("gs_too_big.spv"), bytes(&big)).unwrap();
    let o = build(&dir, &out, &[]);
    println!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success());
    let b = b_dir(&out);
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(b.join("_b_build.json")).unwrap()).unwrap();
    let by_key: std::collections::BTreeMap<String, serde_json::Value> = record["shaders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["key"].as_str().unwrap().to_string(), s.clone()))
        .collect();
    let key = |name: &str| key_of(name, &std::fs::read(dir.join(name)).unwrap());
    let big = &by_key[&key("gs_too_big.spv")];
    assert_eq!(
        (big["status"].as_str(), big["step"].as_str()),
        (Some("failed"), Some("fix-up"))
    );
    let m = big["message"].as_str().unwrap();
    assert!(
        m.contains("geometry_kernel") && m.contains("2000 output vertices"),
        "{m}"
    );
    println!("gs_too_big: {m}");
    let clang = dmsh_msl::syntax::clang().is_ok();
    for (name, stage) in &files {
        let k = key(name);
        let r = &by_key[&k];
        assert_eq!(r["status"], "built", "{name}: {r}");
        let outputs: Vec<&str> = r["outputs"]
            .as_object()
            .unwrap()
            .keys()
            .map(|s| s.as_str())
            .collect();
        let variants: &[(&str, &str)] = match *stage {
            "geometry" => &[("_b", "geometry_kernel"), ("_p", "geometry_draw")],
            "tess_control" => &[("_b", "tess_control_kernel")],
            "tess_eval" => &[("_b", "tess_eval_post")],
            "vertex" => &[("_b", ""), ("_g", "vertex_capture")],
            _ => &[("_b", ""), ("_q", "")],
        };
        let mut want: Vec<String> = variants
            .iter()
            .flat_map(|(v, _)| [format!("{k}{v}.json"), format!("{k}{v}.metal")])
            .collect();
        want.sort();
        assert_eq!(outputs, want, "{name}");
        for (v, pass) in variants {
            let refl = check_library(&b, &format!("{k}{v}"), clang);
            let got = refl.lowering.as_ref().map_or("", |l| l.pass.name());
            assert_eq!(got, *pass, "{name}{v}");
            let msl = std::fs::read_to_string(b.join(format!("{k}{v}.metal"))).unwrap();
            match *pass {
                "geometry_kernel" => {
                    let l = refl.lowering.as_ref().unwrap();
                    assert_eq!((refl.stage.as_str(), l.local_size), ("compute", 64));
                    assert!(!l.topologies.is_empty() && refl.geometry_input.is_some());
                    assert!(msl.contains("kernel void main0("), "{name}");
                }
                "geometry_draw" => assert_eq!(refl.metal_entry_points, ["main0", "main0_z"]),
                "tess_eval_post" => assert!(msl.contains("[[ patch("), "{name}: {msl}"),
                "tess_control_kernel" => assert_eq!(refl.stage, "compute"),
                _ => {}
            }
            println!("{name}{v}: {got:?} built, MSL checked");
        }
    }
    // The report counts the geometry and tessellation keys as built lowered.
    let o = dmsh(&["report", "--build", b.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rep: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report/report.json")).unwrap())
            .unwrap();
    let notes = rep["not_in_metal"].as_array().unwrap();
    let lowered = notes
        .iter()
        .filter(|n| n["note"] == "built lowered")
        .count();
    assert_eq!((notes.len(), lowered), (12, 11), "{notes:?}");
    let _ = std::fs::remove_dir_all(&root);
}

/// The runtime opens the capture build without a shader map (the keys and stages its
/// `_b_build.json` records), hands out the push constant block as `DMSH_BIND_PUSH` where the
/// reflection put it and the dual-source variant `_d` with its second source at
/// `[[color(0), index(1)]]`, computes a module's key as the build did, and says why a key
/// has no library.
fn runtime_opens_the_capture_build(
    out: &Path,
    b: &Path,
    files: &[(String, Vec<u8>)],
    (vs, fs, dual, unbounded): (&str, &str, &str, &str),
) {
    use dmsh_runtime::abi::{self, Binding, Io};
    use dmsh_runtime::{key, OpenOptions, Status, Title};
    let chain = b.file_name().unwrap().to_str().unwrap()[2..].to_string();
    let t = Title::open(&OpenOptions {
        shader_map: None,
        library_dir: out.to_path_buf(),
        chain: Some(chain.clone()),
        eager: true,
        ..Default::default()
    })
    .expect("a capture build opens without a map");
    // The five modules that parsed (the truncated file and the random bytes have no stage).
    assert_eq!(t.keys().len(), 5, "{:x?}", t.keys());
    assert!(t.c1().is_ok(), "a capture has no guest constant banks");
    let k = |s: &str| key::parse(s).unwrap();
    assert_eq!(t.stage(k(unbounded)), Some(dmsh_formats::Stage::Fragment));

    let v = t.lookup(k(vs), abi::DEPTH_ZERO_TO_ONE).unwrap();
    assert_eq!(v.entry.to_str().unwrap(), "main0_z");
    let push: Vec<&Binding> = (v.shader.bindings().iter())
        .filter(|b| b.kind == abi::BIND_PUSH)
        .collect();
    assert_eq!(push.len(), 1);
    assert_eq!(
        (push[0].metal_index, push[0].size, push[0].count),
        (4, 80, 1),
        "the vertex module's push block: after the 4 uniform blocks, 80 bytes"
    );
    assert_ne!(push[0].flags & abi::BINDING_SIZE_KNOWN, 0);
    let f = t.lookup(k(fs), abi::DEPTH_GL).unwrap();
    let push = (f.shader.bindings().iter()).find(|b| b.kind == abi::BIND_PUSH);
    assert_eq!(push.map(|p| (p.metal_index, p.size)), Some((1, 96)));

    let d = t
        .lookup_pass(k(dual), abi::VARIANT_DUAL_SOURCE, abi::DEPTH_GL)
        .unwrap();
    let io = |l, i| Io {
        location: l,
        component_type: 0,
        index: i,
    };
    assert_eq!(d.shader.outputs(), [io(0, 0), io(0, 1)]);
    let main = t.lookup(k(dual), abi::DEPTH_GL).unwrap();
    assert_eq!(main.shader.outputs(), [io(0, 0), io(1, 0)]);
    let lib = d.shader.library_path().to_str().unwrap();
    assert!(lib.ends_with(&format!("{dual}_d.metallib")), "{lib}");

    let e = t
        .lookup_pass(k(fs), abi::VARIANT_DUAL_SOURCE, abi::DEPTH_GL)
        .unwrap_err();
    assert_eq!(e.status, Status::NotBuilt);
    assert!(
        e.text().contains(fs) && e.text().contains("dual-source"),
        "{}",
        e.text()
    );
    let e = t
        .lookup_pass(k(vs), abi::VARIANT_DUAL_SOURCE, abi::DEPTH_GL)
        .unwrap_err();
    assert!(e.text().contains("only fragment keys"), "{}", e.text());
    let e = t.lookup(k(unbounded), abi::DEPTH_GL).unwrap_err();
    assert_eq!(e.status, Status::NotBuilt, "{}", e.text());

    // The host's key of a module captured without one is the build's.
    let (_, bytes) = files.iter().find(|f| f.0 == "fs_dual.spv").unwrap();
    assert_eq!(key::of_spirv(bytes), k(dual));
    let mut through_c = 0u64;
    // SAFETY: a valid byte range and a writable key.
    let st =
        unsafe { dmsh_runtime::ffi::dmsh_spirv_key(bytes.as_ptr(), bytes.len(), &mut through_c) };
    assert_eq!((st, through_c), (Status::Ok, k(dual)));
    println!(
        "runtime: {} keys from the build record, push blocks at buffer 4 and 1, {dual}_d with \
         outputs {:?}",
        t.keys().len(),
        d.shader.outputs()
    );
}
