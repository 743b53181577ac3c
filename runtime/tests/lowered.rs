//! Lowered geometry and tessellation passes on hand-made titles: the variants the demo
//! title does not have (a vertex shader's capture form `_g`, a fragment shader's
//! primitive-ID variant `_q`), an eager open that caches variants, topology checks, and
//! every mismatch of stage, pass and variant refused with its message.

mod common;

use dmsh_runtime::abi::{self, DEPTH_GL};
use dmsh_runtime::Status;

const VS: &str = "00000000000000a1";
const FS: &str = "00000000000000a2";
const GS: &str = "00000000000000a3";
const TCS: &str = "00000000000000a4";
const TES: &str = "00000000000000a5";

fn lowered(role: u32) -> String {
    format!(
        r#"{{"kind": "lowered", "bank": {role}, "binding": {}, "metal_index": {role}}}"#,
        240 + role
    )
}

fn kernel_json() -> String {
    common::lowered_json(
        common::V,
        "compute",
        r#""pass": "geometry_kernel", "record_bytes": 576, "input_vertices": 3, "invocations": 1,
           "max_vertices": 6, "output": "triangles", "indices_per_invocation": 12,
           "topologies": ["triangle_list", "line_strip_adjacency"], "local_size": 64,
           "primitive_id_location": 31"#,
        &(0..5).map(lowered).collect::<Vec<_>>().join(", "),
    )
}

fn draw_json() -> String {
    common::lowered_json(
        common::V,
        "vertex",
        r#""pass": "geometry_draw", "record_bytes": 576, "max_vertices": 6, "output": "triangles",
           "topologies": ["triangle_list", "line_strip_adjacency"], "primitive_id_location": 31"#,
        &lowered(1),
    )
}

fn capture_json() -> String {
    common::lowered_json(
        common::V,
        "vertex",
        r#""pass": "vertex_capture", "record_bytes": 576"#,
        &lowered(0),
    )
}

fn primitive_id_json() -> String {
    format!(
        r#"{{"version": 1, "stage": "fragment", "chain": "{}", "metal_entry_points": ["main0"],
  "fixups": ["primitive_id_varying"], "inputs": [{{"location": 31, "component_type": "sint"}}]}}"#,
        common::V
    )
}

/// A title with a vertex, fragment, geometry and tessellation pair, each with its variants.
fn title(name: &str) -> std::path::PathBuf {
    let d = common::hand_title(
        name,
        &[
            (VS, "vertex"),
            (FS, "fragment"),
            (GS, "geometry"),
            (TCS, "tess_control"),
            (TES, "tess_eval"),
        ],
        &[
            (VS, common::vertex_json(common::V, 1)),
            (FS, common::plain_json(common::V, "fragment")),
            (GS, kernel_json()),
            (
                TCS,
                common::lowered_json(
                    common::V,
                    "compute",
                    r#""pass": "tess_control_kernel", "record_bytes": 576, "local_size": 4,
                       "control_points": 4, "factor_bytes": 12, "patch_bytes": 96"#,
                    &[0, 3, 5, 6, 7].map(lowered).join(", "),
                ),
            ),
            (
                TES,
                common::lowered_json(
                    common::V,
                    "tess_eval",
                    r#""pass": "tess_eval_post", "record_bytes": 576, "control_points": 4,
                       "factor_bytes": 12, "patch_bytes": 96"#,
                    &[3, 5, 6].map(lowered).join(", "),
                ),
            ),
        ],
    );
    let b = d.join(format!("b-{}", common::V));
    std::fs::write(b.join(format!("{VS}_g.json")), capture_json()).unwrap();
    std::fs::write(b.join(format!("{FS}_q.json")), primitive_id_json()).unwrap();
    std::fs::write(b.join(format!("{GS}_p.json")), draw_json()).unwrap();
    d
}

fn key(k: &str) -> u64 {
    dmsh_runtime::key::parse(k).unwrap()
}

#[test]
fn capture_and_primitive_id_variants_load_with_their_passes() {
    let d = title("variants");
    let t = common::open(&d).unwrap();
    let b = d.join(format!("b-{}", common::V));
    let g = t
        .lookup_pass(key(VS), abi::VARIANT_CAPTURE, DEPTH_GL)
        .unwrap();
    let s = g.shader.shader();
    assert_eq!((s.key, s.stage), (key(VS), 0));
    let l = g.shader.lowering().unwrap();
    assert_eq!((l.pass, l.record_bytes), (abi::PASS_VERTEX_CAPTURE, 576));
    assert_eq!(
        g.shader.library_path().to_str().unwrap(),
        b.join(format!("{VS}_g.metallib")).to_str().unwrap()
    );
    assert_eq!(g.shader.bindings()[0].kind, abi::BIND_LOWERED);
    assert_eq!(g.shader.bindings()[0].slot, abi::LOWERED_VERTICES_IN);
    assert_eq!(g.shader.bindings()[0].vk_binding, 240);
    // The capture form is its own record, not the shader's.
    let main = t.lookup(key(VS), DEPTH_GL).unwrap().shader;
    assert!(!std::ptr::eq(main, g.shader) && main.lowering().is_none());

    let q = t
        .lookup_pass(key(FS), abi::VARIANT_PRIMITIVE_ID, DEPTH_GL)
        .unwrap();
    assert!(q.shader.lowering().is_none() && q.shader.shader().lowering.is_null());
    assert_eq!(q.shader.shader().stage, 4);
    assert_eq!(q.shader.inputs()[0].location, 31);
    assert!(q
        .shader
        .library_path()
        .to_str()
        .unwrap()
        .ends_with(&format!("{FS}_q.metallib")));

    let p = t.lookup_pass(key(GS), abi::VARIANT_DRAW, DEPTH_GL).unwrap();
    let pl = p.shader.lowering().unwrap();
    assert_eq!(pl.pass, abi::PASS_GEOMETRY_DRAW);
    assert_eq!(pl.primitive_id_location, 31);
    // The kernel: topologies as a bit mask of VkPrimitiveTopology numbers.
    let k = t.lookup(key(GS), DEPTH_GL).unwrap().shader;
    let kl = k.lowering().unwrap();
    assert_eq!(k.shader().stage, 3);
    assert_eq!(kl.topologies, (1 << 3) | (1 << 7));
    assert_eq!(
        (kl.output, kl.indices_per_invocation),
        (abi::PRIM_TRIANGLES, 12)
    );
    assert_eq!(k.check_topology(3), Ok(()));
    assert_eq!(k.check_topology(7), Ok(()));
    let e = k.check_topology(4).unwrap_err();
    assert_eq!(e.status, Status::Topology);
    assert!(
        e.text().contains(GS)
            && e.text().contains("topology 4 (triangle_strip)")
            && e.text()
                .contains("serves triangle_list, line_strip_adjacency"),
        "{e}"
    );
    assert_eq!(k.check_topology(10).unwrap_err().status, Status::Topology);
    assert_eq!(
        k.check_topology(u32::MAX).unwrap_err().status,
        Status::Topology
    );
    let e = p.shader.check_topology(3).unwrap_err();
    assert_eq!(e.status, Status::Argument);
    assert!(e.text().contains("geometry_draw"), "{e}");

    // Tessellation.
    let c = t.lookup(key(TCS), DEPTH_GL).unwrap().shader;
    let cl = c.lowering().unwrap();
    assert_eq!(
        (
            c.shader().stage,
            cl.pass,
            cl.control_points,
            cl.factor_bytes
        ),
        (1, abi::PASS_TESS_CONTROL_KERNEL, 4, 12)
    );
    let ev = t.lookup(key(TES), DEPTH_GL).unwrap().shader;
    assert_eq!(ev.lowering().unwrap().pass, abi::PASS_TESS_EVAL_POST);
    assert_eq!(ev.shader().stage, 2);

    // What a stage cannot have, and an unknown variant.
    for (k, v, what) in [
        (VS, abi::VARIANT_DRAW, "no draw variant"),
        (FS, abi::VARIANT_CAPTURE, "no capture variant"),
        (GS, abi::VARIANT_PRIMITIVE_ID, "no primitive ID variant"),
        (TCS, abi::VARIANT_CAPTURE, "no capture variant"),
        (GS, abi::VARIANT_DUAL_SOURCE, "no dual-source variant"),
        (FS, abi::VARIANT_DUAL_SOURCE, "no dual-source variant"),
    ] {
        let e = t.lookup_pass(key(k), v, DEPTH_GL).unwrap_err();
        assert_eq!(e.status, Status::NotBuilt);
        assert!(e.text().contains(k) && e.text().contains(what), "{e}");
    }
    assert_eq!(
        t.lookup_pass(key(VS), 5, DEPTH_GL).unwrap_err().status,
        Status::Argument
    );
    assert_eq!(
        t.lookup_pass(1, abi::VARIANT_DRAW, DEPTH_GL)
            .unwrap_err()
            .status,
        Status::UnknownKey
    );
    println!("capture, primitive-ID, draw, kernels: {e}");
}

#[test]
fn an_eager_open_caches_the_variants() {
    let d = title("eager");
    let t = dmsh_runtime::Title::open(&dmsh_runtime::OpenOptions {
        shader_map: Some(d.join("shader_map.tsv")),
        library_dir: d.clone(),
        chain: Some(common::V.into()),
        eager: true,
        ..Default::default()
    })
    .unwrap();
    // Every reflection gone: lookups read no file.
    let b = d.join(format!("b-{}", common::V));
    for e in std::fs::read_dir(&b).unwrap().flatten() {
        if e.file_name().to_string_lossy().ends_with(".json") && e.file_name() != "_b_build.json" {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
    for (k, v) in [
        (GS, abi::VARIANT_DRAW),
        (VS, abi::VARIANT_CAPTURE),
        (FS, abi::VARIANT_PRIMITIVE_ID),
        (GS, abi::VARIANT_MAIN),
    ] {
        t.lookup_pass(key(k), v, DEPTH_GL)
            .unwrap_or_else(|e| panic!("{k} variant {v}: {e}"));
    }
}

#[test]
fn mismatched_stages_and_passes_are_refused() {
    let v = common::V;
    let geo = r#""pass": "geometry_kernel", "record_bytes": 576, "max_vertices": 3, "topologies": ["point_list"]"#;
    // (map stage, file suffix, reflection, status, message part)
    let cases: Vec<(&str, &str, String, Status, &str)> = vec![
        ("geometry", "_b", common::plain_json(v, "compute"), Status::Reflection,
         "stage \"compute\", the shader map says geometry (a lowered geometry shader is pass geometry_kernel)"),
        ("geometry", "_b", common::lowered_json(v, "compute", r#""pass": "geometry_draw""#, ""),
         Status::Reflection, "lowering pass geometry_draw, but the shader (_b) of a geometry key is pass geometry_kernel"),
        ("geometry", "_b", common::lowered_json(v, "vertex", geo, ""), Status::Reflection,
         "lowering pass geometry_kernel, which is a compute module"),
        ("tess_control", "_b", common::lowered_json(v, "compute", geo, ""), Status::Reflection,
         "of a tess_control key is pass tess_control_kernel"),
        ("tess_eval", "_b", common::lowered_json(v, "vertex", r#""pass": "tess_eval_draw""#, ""),
         Status::Reflection, "of a tess_eval key is pass tess_eval_post"),
        ("vertex", "_b", common::lowered_json(v, "vertex", r#""pass": "vertex_capture""#, ""),
         Status::Reflection, "is a direct shader (no lowering record)"),
        ("compute", "_b", common::lowered_json(v, "compute", geo, ""), Status::Reflection,
         "is a direct shader"),
        ("geometry", "_p", common::plain_json(v, "vertex"), Status::Reflection,
         "without a lowering record: the draw variant of a geometry key is pass geometry_draw"),
        ("geometry", "_p", common::lowered_json(v, "vertex", geo, ""), Status::Reflection,
         "but the draw variant of a geometry key is pass geometry_draw"),
        ("vertex", "_g", common::lowered_json(v, "vertex", r#""pass": "geometry_draw""#, ""),
         Status::Reflection, "the capture variant of a vertex key is pass vertex_capture"),
        ("vertex", "_g", common::lowered_json(v, "compute", r#""pass": "vertex_capture""#, ""),
         Status::Reflection, "which is a vertex module"),
        ("fragment", "_q", common::lowered_json(v, "fragment", r#""pass": "vertex_capture""#, ""),
         Status::Reflection, "is a direct shader"),
        ("fragment", "_q", common::plain_json(v, "vertex"), Status::Reflection,
         "the shader map says fragment"),
        ("geometry", "_b", common::lowered_json(v, "compute", r#""pass": "mystery""#, ""),
         Status::Reflection, "unknown variant `mystery`, expected one of `vertex_capture`"),
        ("geometry", "_b", common::lowered_json(v, "compute",
            r#""pass": "geometry_kernel", "topologies": ["patch_list"]"#, ""),
         Status::Reflection, "unknown topology \"patch_list\""),
        ("geometry", "_b", common::lowered_json(v, "compute",
            r#""pass": "geometry_kernel", "output": "quads""#, ""),
         Status::Reflection, "unknown output primitive \"quads\""),
        ("geometry", "_b", common::lowered_json(v, "compute", geo, &lowered(9)),
         Status::Reflection, "lowered buffer of unknown role 9"),
        ("geometry", "_b", common::lowered_json("ffffffffffff", "compute", geo, ""),
         Status::ReflectionChain, "built by chain ffffffffffff"),
    ];
    for (i, (stage, suffix, json, status, want)) in cases.iter().enumerate() {
        let k = "00000000000000b1";
        let d = common::hand_title(&format!("mismatch{i}"), &[(k, stage)], &[]);
        let b = d.join(format!("b-{v}"));
        std::fs::write(b.join(format!("{k}{suffix}.json")), json).unwrap();
        let t = common::open(&d).unwrap();
        let variant = abi::VARIANT_SUFFIXES
            .iter()
            .position(|s| s == suffix)
            .unwrap() as u32;
        let e = t.lookup_pass(key(k), variant, DEPTH_GL).unwrap_err();
        assert_eq!(e.status, *status, "case {i}: {e}");
        assert!(e.text().contains(want), "case {i}: {e}");
        assert!(
            e.text().contains(&format!("{k}{suffix}.json")),
            "case {i}: {e}"
        );
        println!("case {i} {stage} {suffix}: {e}");
    }
    // Accepted: each stage Metal lacks with its own pass.
    for (stage, json) in [
        ("geometry", common::lowered_json(v, "compute", geo, "")),
        ("geometry", common::plain_json(v, "geometry")),
        (
            "tess_control",
            common::lowered_json(v, "compute", r#""pass": "tess_control_kernel""#, ""),
        ),
        (
            "tess_eval",
            common::lowered_json(v, "tess_eval", r#""pass": "tess_eval_post""#, ""),
        ),
        ("tess_eval", common::plain_json(v, "tess_eval")),
    ] {
        let k = "00000000000000b2";
        let d = common::hand_title(&format!("accept-{stage}"), &[(k, stage)], &[(k, json)]);
        let t = common::open(&d).unwrap();
        t.lookup(key(k), DEPTH_GL)
            .unwrap_or_else(|e| panic!("{stage}: {e}"));
    }
}
