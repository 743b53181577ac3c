//! Every geometry and tessellation shader with GLSL sources in the corpus, drawn on lavapipe
//! in its direct SPIR-V form (a Vulkan geometry or tessellation stage): glslang's SPIR-V of
//! the GLSL against our translation of uam's binary (dksh corpus) and of NAK's sm53 and sm86
//! binaries (nak corpus), between the same glslang vertex and fragment shaders written here,
//! with the same vertices, uniforms, textures and targets; within 1/255 on ≥ 99.9 % of pixels
//! (docs/graphics.md). This is the reference half of issue 16's check: the lowered forms
//! Metal runs must draw the same pictures — the translations' (`dmsh_spv::lower::Form`) and
//! glslang's modules lowered as a capture folder's ("captured": `dmsh_fixup::lower`), with
//! instanced draws, primitive restart and a geometry shader that only stores to memory.
//!
//! This file holds the corpus shaders' checks; `geometry_render/` the harness (`harness.rs`),
//! the extra corpus (`extra.rs`), input assembly, instancing, restart and stores
//! (`assembly.rs`), the cost measurement (`cost.rs`) and the GX shaders (`gx.rs`).

#[path = "geometry_render/assembly.rs"]
mod assembly;
mod common;
#[path = "geometry_render/cost.rs"]
mod cost;
#[path = "geometry_render/extra.rs"]
mod extra;
#[path = "geometry_render/gx.rs"]
mod gx;
#[path = "geometry_render/harness.rs"]
mod harness;

use dmsh_fixup::lower::Pass;
use dmsh_spv::lower::Form;
use dmsh_testsupport::reference::{dksh, dksh_render, glsl, translate};
use dmsh_vk::render::{Stage, Topology};
use dmsh_vk::TexFormat;
use harness::*;

/// Draws geometry shader `name` both ways (glslang's, ours) with `data`: uam's binary, then
/// NAK's for sm53 and sm86 (`nak`: how NAK's binaries reach the uniform block, if any).
/// Draws geometry shader `name` in its direct form and lowered (`capture`: the draw's vertex
/// shader in capture form), from uam's binary and NAK's two, against glslang's direct picture.
fn check(name: &str, d: &Draw, data: impl Fn() -> Data, nak: [Option<Nvk>; 2], capture: &Stage) {
    let want = run(
        d,
        Middle::Geometry(reference(name, "geom", "geometry"), data()),
    );
    let got = run(d, Middle::Geometry(ours(name), data()));
    compare(name, &want, &got);
    compare_lowerings(d, &data, capture, name, name, &want);
    let lowered = |kernel: Stage, draw: Stage, data: Data| {
        run(d, Middle::Lowered(capture.clone(), kernel, data, draw))
    };
    // A Vulkan 1.0 title's SPIR-V 1.0: the lowered buffers through
    // SPV_KHR_storage_buffer_storage_class, the draw's layer and viewport outputs through
    // SPV_EXT_shader_viewport_index_layer.
    let src = dksh_render::corpus_glsl(&dksh::corpus_dir(), name).expect("corpus GLSL");
    let mut args = vec!["--target-env", "vulkan1.0"];
    args.extend_from_slice(glsl::DEKO3D_SHIFTS);
    let gs10 = glsl::compile_source(&src, "geom", &args).expect("glslang");
    let got = run(d, captured_geometry(&d.vertex.spirv, &gs10, data()));
    compare(
        &format!("{name} (SPIR-V 1.0) captured, lowered"),
        &want,
        &got,
    );
    for (sm, nvk) in ["sm53", "sm86"].into_iter().zip(nak) {
        let nd = || Data { nvk, ..data() };
        let g = dmsh_ir::Stage::Geometry;
        let got = run(d, Middle::Geometry(ours_nak(name, sm, g, None), nd()));
        compare(&format!("{name} (NAK {sm})"), &want, &got);
        let got = lowered(
            ours_nak_in(name, sm, g, None, Form::Lowered(Pass::GeometryKernel)),
            ours_nak_in(name, sm, g, None, Form::Lowered(Pass::GeometryDraw)),
            nd(),
        );
        compare(&format!("{name} (NAK {sm}) lowered"), &want, &got);
    }
}

#[test]
fn gs_passthrough_tri_renders_like_glslang() {
    if !ready() {
        return;
    }
    // Two invocations, each to its own viewport (gl_ViewportIndex = gl_InvocationID).
    let vertex = glslang(PASSTHROUGH_VS, "vert", "vertex");
    let fragment = glslang(PASSTHROUGH_FS, "frag", "fragment");
    #[rustfmt::skip]
    let vertices = vec![
        -0.9, -0.9, 0.1, 1.0,   0.8, -0.7, 0.5, 1.0,   -0.2, 0.9, 0.9, 1.0,
        0.9, 0.9, 0.3, 1.0,   -0.7, 0.6, 0.2, 1.0,   0.3, -0.95, 0.7, 1.0,
    ];
    let d = Draw {
        vertex,
        fragment,
        vertices,
        floats_per_vertex: 4,
        topology: Topology::TriangleList,
        layers: 1,
        viewports: vec![[0.0, 0.0, 32.0, 64.0], [32.0, 0.0, 32.0, 64.0]],
        vertex_ubos: Vec::new(),
        indices: Vec::new(),
        instances: 1,
        restart: false,
    };
    let capture = passthrough_capture();
    check(
        "gs_passthrough_tri.geom",
        &d,
        Data::default,
        [None, None],
        &capture,
    );
    // The same draw from a `dmsh render` job file (`geometry` / `geometry_bind`) with our
    // translation: the raw target equals glslang's picture drawn through the API.
    let want = run(
        &d,
        Middle::Geometry(
            reference("gs_passthrough_tri.geom", "geom", "geometry"),
            Data::default(),
        ),
    );
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-geo-job");
    std::fs::create_dir_all(&dir).unwrap();
    let g = ours("gs_passthrough_tri.geom");
    for (n, st) in [("vs", &d.vertex), ("gs", &g), ("fs", &d.fragment)] {
        let words: Vec<u8> = st.spirv.iter().flat_map(|w| w.to_le_bytes()).collect();
        std::fs::write(dir.join(format!("{n}.spv")), words).unwrap();
        std::fs::write(dir.join(format!("{n}.json")), st.reflection.to_json()).unwrap();
    }
    let shader =
        |n: &str| serde_json::json!({"spv": format!("{n}.spv"), "reflection": format!("{n}.json")});
    let job = serde_json::json!({
        "format": "dmsh-render/1",
        "vertex": shader("vs"), "geometry": shader("gs"), "fragment": shader("fs"),
        "width": 64, "height": 64,
        "viewports": d.viewports,
        "vertex_buffers": [{"stride": 16, "f32": d.vertices}],
        "attributes": [{"location": 0, "binding": 0, "format": "rgba32f"}],
        "vertex_count": d.vertices.len() / 4,
        "out_raw": "out.raw",
    });
    std::fs::write(dir.join("job.json"), job.to_string()).unwrap();
    let o = common::dmsh(&["render", dir.join("job.json").to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let raw = std::fs::read(dir.join("out.raw")).unwrap();
    let (share, max) = close(&want[0].data, &raw);
    println!(
        "job file: {:.4} % within 1/255 (max diff {max})",
        share * 100.0
    );
    assert_eq!(raw.len(), want[0].data.len());
    assert!(share >= 0.999);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn gs_expand_points_renders_like_glslang() {
    if !ready() {
        return;
    }
    // Points expanded to quads on layer 1 of two (the read-back stacks the layers).
    let vertex = glslang(
        "#version 460\n\
         layout(location = 0) in vec4 aPos;\n\
         layout(location = 1) in vec4 aColor;\n\
         layout(location = 0) out vec4 vColor;\n\
         void main() { gl_Position = aPos; vColor = aColor; }\n",
        "vert",
        "vertex",
    );
    let fragment = glslang(
        "#version 460\n\
         layout(location = 0) in vec4 gColor;\n\
         layout(location = 1) in vec2 gUV;\n\
         layout(location = 0) out vec4 o;\n\
         void main() { o = gColor * vec4(gUV, 1.0, 1.0) + vec4(0.0, 0.0, float(gl_PrimitiveID) * 0.25, 0.0); }\n",
        "frag",
        "fragment",
    );
    #[rustfmt::skip]
    let vertices = vec![
        -0.5, -0.5, 0.5, 1.0,   1.0, 0.2, 0.1, 1.0,
        0.5, -0.4, 0.5, 1.0,    0.1, 0.9, 0.3, 1.0,
        0.0, 0.5, 0.5, 1.0,     0.6, 0.5, 1.0, 1.0,
    ];
    // Cam: mat4 proj (a scale and shift), vec2 size, int layer (std140).
    #[rustfmt::skip]
    let mut cam = f32s(&[
        0.9, 0.0, 0.0, 0.0,
        0.1, 0.8, 0.0, 0.0,
        0.0, 0.0, 1.0, 0.0,
        0.05, -0.02, 0.0, 1.0,
        0.6, 0.45,
    ]);
    cam.extend_from_slice(&1i32.to_le_bytes());
    cam.resize(96, 0);
    let d = Draw {
        vertex,
        fragment,
        vertices,
        floats_per_vertex: 8,
        topology: Topology::PointList,
        layers: 2,
        viewports: Vec::new(),
        vertex_ubos: Vec::new(),
        indices: Vec::new(),
        instances: 1,
        restart: false,
    };
    let data = || Data {
        ubos: vec![cam.clone()],
        ..Data::default()
    };
    let capture = capture_glsl(
        "layout(location = 0) in vec4 aPos;\nlayout(location = 1) in vec4 aColor;",
        "vec4 pos = aPos;",
        &[(0, "aColor")],
    );
    check(
        "gs_expand_points.geom",
        &d,
        data,
        [Some(Nvk::Memory), Some(Nvk::Bank)],
        &capture,
    );
}

#[test]
fn tcs_tes_triangle_render_like_glslang() {
    if !ready() {
        return;
    }
    // Triangle patches tessellated by distance to an eye, displaced by a texture.
    let vertex = glslang(
        "#version 460\n\
         layout(location = 0) in vec4 aPos;\n\
         layout(location = 1) in vec4 aUV;\n\
         layout(location = 0) out vec3 vPos;\n\
         layout(location = 1) out vec2 vUV;\n\
         void main() { vPos = aPos.xyz; vUV = aUV.xy; }\n",
        "vert",
        "vertex",
    );
    let fragment = glslang(
        "#version 460\n\
         layout(location = 0) in vec2 eUV;\n\
         layout(location = 0) out vec4 o;\n\
         void main() { o = vec4(eUV, 0.5, 1.0); }\n",
        "frag",
        "fragment",
    );
    #[rustfmt::skip]
    let vertices = vec![
        -0.9, -0.2, -0.9, 1.0,   0.0, 0.0, 0.0, 0.0,
        0.9, -0.1, -0.8, 1.0,    1.0, 0.0, 0.0, 0.0,
        0.0, 0.1, 0.9, 1.0,      0.5, 1.0, 0.0, 0.0,
        -0.8, 0.0, 0.2, 1.0,     0.0, 1.0, 0.0, 0.0,
        0.7, 0.2, 0.6, 1.0,      1.0, 1.0, 0.0, 0.0,
        0.1, -0.3, -0.6, 1.0,    0.3, 0.2, 0.0, 0.0,
    ];
    // Tess: vec4 eye, float maxLevel, float falloff. Falloff 0 makes every level maxLevel
    // (5, odd: exact under fractional_odd_spacing) whatever `distance` rounds to: uam's
    // binary computes it through MUFU.RSQ, glslang's through an exact square root, and with a
    // falloff the slightly different fractional levels move edges (98 % of pixels within
    // 1/255 at falloff 2.5). Eval: mat4 viewProj (x, z to the screen, y up into depth),
    // float dispScale.
    let tess = f32s(&[0.0, 1.0, -1.5, 1.0, 5.0, 0.0, 0.0, 0.0]);
    #[rustfmt::skip]
    let eval = f32s(&[
        1.0, 0.0, 0.0, 0.0,
        0.0, 0.3, 0.2, 0.0,
        0.0, 0.9, 0.0, 0.0,
        0.0, 0.0, 0.5, 1.0,
        0.4, 0.0, 0.0, 0.0,
    ]);
    let disp = dksh_render::tex("dispMap", 32, TexFormat::Rgba8Unorm, 7);
    let d = Draw::new(vertex, fragment, vertices, 8, Topology::TriangleList);
    let cdata = || Data {
        ubos: vec![tess.clone()],
        ..Data::default()
    };
    let edata = || Data {
        ubos: vec![eval.clone()],
        textures: vec![disp.clone()],
        ..Data::default()
    };
    let (c, e) = ("tcs_triangle.tesc", "tes_triangle.tese");
    let (rc, re) = (
        reference(c, "tesc", "tess_control"),
        reference(e, "tese", "tess_eval"),
    );
    let want = run(&d, Middle::Tessellation(rc, cdata(), re, edata(), 3));
    let got = run(
        &d,
        Middle::Tessellation(ours(c), cdata(), ours(e), edata(), 3),
    );
    compare("tcs_triangle + tes_triangle", &want, &got);
    // Lowered (docs/tessellation.md): the vertex shader in capture form (GLSL), our control
    // kernel, the harness's tessellator in place of Metal's, our evaluation shader's draw form.
    let capture = capture_glsl(
        "layout(location = 0) in vec4 aPos;\nlayout(location = 1) in vec4 aUV;",
        "vec4 pos = vec4(0.0);",
        &[(0, "vec4(aPos.xyz, 1.0)"), (1, "vec4(aUV.xy, 0.0, 1.0)")],
    );
    let lowered = |c: Stage, cd: Data, e: Stage, ed: Data| {
        run(&d, Middle::LoweredTess(capture.clone(), c, cd, e, ed, 3))
    };
    let got = lowered(
        ours_in(c, Form::Lowered(Pass::TessControlKernel)),
        cdata(),
        ours_in(e, Form::Lowered(Pass::TessEvalDraw)),
        edata(),
    );
    compare("tcs_triangle + tes_triangle lowered", &want, &got);
    let got = run(
        &d,
        Middle::LoweredTess(
            captured(&d.vertex.spirv, Pass::VertexCapture),
            captured(
                &reference(c, "tesc", "tess_control").spirv,
                Pass::TessControlKernel,
            ),
            cdata(),
            captured(&reference(e, "tese", "tess_eval").spirv, Pass::TessEvalDraw),
            edata(),
            3,
        ),
    );
    compare("tcs_triangle + tes_triangle captured, lowered", &want, &got);
    // NAK's binaries: the uniform blocks as bank c[1] on sm86, through set 0 in memory on sm53;
    // the displacement texture's handle in set 1's bank (c[1] on sm53, c[2] on sm86).
    for (sm, nvk, bank) in [("sm53", Nvk::Memory, 1), ("sm86", Nvk::Bank, 2)] {
        use dmsh_ir::Stage as S;
        let cd = Data {
            nvk: Some(nvk),
            ..cdata()
        };
        let ed = Data {
            nvk: Some(nvk),
            handles: Some(bank),
            ..edata()
        };
        let tc = ours_nak(c, sm, S::TessControl, None);
        let te = ours_nak(e, sm, S::TessEval, Some(bank as u8));
        let got = run(&d, Middle::Tessellation(tc, cd.clone(), te, ed.clone(), 3));
        compare(
            &format!("tcs_triangle + tes_triangle (NAK {sm})"),
            &want,
            &got,
        );
        let got = lowered(
            ours_nak_in(
                c,
                sm,
                S::TessControl,
                None,
                Form::Lowered(Pass::TessControlKernel),
            ),
            cd,
            ours_nak_in(
                e,
                sm,
                S::TessEval,
                Some(bank as u8),
                Form::Lowered(Pass::TessEvalDraw),
            ),
            ed,
        );
        compare(
            &format!("tcs_triangle + tes_triangle (NAK {sm}) lowered"),
            &want,
            &got,
        );
    }
    // Our stages only pair with each other: the translator puts patch attribute n at
    // Location 16 + n (Vulkan's per-vertex and per-patch locations share one space; the
    // hardware's do not), glslang at the GLSL location, so one of ours with one of glslang's
    // loses tPatchScale (about 98 % of pixels within 1/255).
}

/// The whole lowered pipeline from translations: uam's vs_basic_mvp in capture form feeding
/// gs_passthrough_tri's kernel and draw, against glslang's direct pipeline of the same GLSL.
#[test]
fn translated_vertex_capture_feeds_the_kernel() {
    if !ready() {
        return;
    }
    let fragment = glslang(PASSTHROUGH_FS, "frag", "fragment");
    // model, viewProj (column-major mat4s), normalMat (std140 mat3: three vec4 columns).
    #[rustfmt::skip]
    let ubo = f32s(&[
        1.0, 0.1, 0.0, 0.0,   0.0, 0.9, 0.2, 0.0,   0.1, 0.0, 1.1, 0.0,   0.05, -0.1, 0.2, 1.0,
        0.8, 0.0, 0.0, 0.0,   0.0, 0.8, 0.0, 0.0,   0.0, 0.0, 0.5, 0.0,   0.0, 0.0, 0.3, 1.0,
        1.0, 0.0, 0.0, 0.0,   0.0, 1.0, 0.0, 0.0,   0.0, 0.0, 1.0, 0.0,
    ]);
    // inPos, inNormal, inUV (padded to vec4s).
    #[rustfmt::skip]
    let vertices = vec![
        -0.9, -0.9, 0.1, 0.0,  0.0, 0.0, 1.0, 0.0,  0.0, 0.0, 0.0, 0.0,
        0.8, -0.7, 0.5, 0.0,   0.0, 1.0, 0.0, 0.0,  1.0, 0.0, 0.0, 0.0,
        -0.2, 0.9, 0.9, 0.0,   1.0, 0.0, 0.0, 0.0,  0.0, 1.0, 0.0, 0.0,
        0.9, 0.9, 0.3, 0.0,    0.0, 0.0, 1.0, 0.0,  1.0, 1.0, 0.0, 0.0,
        -0.7, 0.6, 0.2, 0.0,   0.0, 1.0, 0.0, 0.0,  0.5, 0.5, 0.0, 0.0,
        0.3, -0.95, 0.7, 0.0,  1.0, 0.0, 0.0, 0.0,  0.2, 0.8, 0.0, 0.0,
    ];
    let d = Draw {
        vertex: reference("vs_basic_mvp.vert", "vert", "vertex"),
        fragment,
        vertices,
        floats_per_vertex: 12,
        topology: Topology::TriangleList,
        layers: 1,
        viewports: vec![[0.0, 0.0, 32.0, 64.0], [32.0, 0.0, 32.0, 64.0]],
        vertex_ubos: vec![ubo],
        indices: Vec::new(),
        instances: 1,
        restart: false,
    };
    let name = "gs_passthrough_tri.geom";
    let want = run(
        &d,
        Middle::Geometry(reference(name, "geom", "geometry"), Data::default()),
    );
    let capture = ours_in("vs_basic_mvp.vert", Form::Lowered(Pass::VertexCapture));
    assert_eq!(
        capture.reflection.lowering.as_ref().map(|l| l.pass.name()),
        Some("vertex_capture")
    );
    let got = run(
        &d,
        Middle::Lowered(
            capture,
            ours_in(name, Form::Lowered(Pass::GeometryKernel)),
            Data::default(),
            ours_in(name, Form::Lowered(Pass::GeometryDraw)),
        ),
    );
    compare(
        "vs_basic_mvp (capture) + gs_passthrough_tri lowered",
        &want,
        &got,
    );
    // The same pipeline from glslang's modules as a capture folder's, with a uniform block in
    // the captured vertex shader.
    let gs = reference(name, "geom", "geometry").spirv;
    let got = run(&d, captured_geometry(&d.vertex.spirv, &gs, Data::default()));
    compare(
        "vs_basic_mvp + gs_passthrough_tri captured, lowered",
        &want,
        &got,
    );
}

/// A geometry shader beyond the lowered form's limits fails to translate in that form with an
/// error naming the key (docs/geometry.md, "Limits and errors"); the direct form still builds.
#[test]
fn too_many_output_vertices_is_an_error_naming_the_key() {
    use dmsh_ir::lift::{dksh as lift_dksh, BindingLayout};
    let name = "gs_passthrough_tri.geom";
    let bytes = std::fs::read(dksh::corpus_dir().join(format!("{name}.dksh"))).unwrap();
    let mut prog = lift_dksh::parse(&bytes).unwrap();
    // SPH word 4 bits 0..12: the maximum output vertex count.
    let w = u32::from_le_bytes(prog.code[16..20].try_into().unwrap());
    let w = (w & !0xfff) | 2000;
    prog.code[16..20].copy_from_slice(&w.to_le_bytes());
    let layout = BindingLayout::deko3d(prog.stage);
    let cfg =
        lift_dksh::graphics_config(prog.stage, &prog.code, &prog.cbuf1, layout, "k123").unwrap();
    let opts = |form| dmsh_spv::Options {
        form,
        ..Default::default()
    };
    let e =
        dmsh_spv::translate_graphics(&prog.code, &cfg, &opts(Form::Lowered(Pass::GeometryKernel)))
            .expect_err("refused");
    let msg = e.to_string();
    assert!(msg.contains("shader k123") && msg.contains("2000"), "{msg}");
    assert!(dmsh_spv::translate_graphics(&prog.code, &cfg, &opts(Form::Direct)).is_ok());
}

/// The render tests above again with every translation of ours in soft-f64 mode (the Metal
/// build's f64: integer routines, no 64-bit float type), direct and lowered forms alike.
#[test]
fn soft_f64_renders_like_glslang() {
    translate::with_f64(dmsh_spv::F64Mode::Soft, || {
        gs_passthrough_tri_renders_like_glslang();
        gs_expand_points_renders_like_glslang();
        tcs_tes_triangle_render_like_glslang();
        translated_vertex_capture_feeds_the_kernel();
        extra::extra_geometry_shaders_render_like_glslang();
        extra::extra_tessellation_pair_renders_like_glslang();
        assembly::every_input_topology_assembles_like_a_geometry_stage();
        assembly::indexed_draws_assemble_through_the_index_buffer();
    });
}
