//! The lowering of captured Vulkan modules (`dmsh_fixup::lower`, docs/geometry.md "Vulkan
//! modules") on glslang's SPIR-V of small GLSL shaders: what it refuses says why, the passes
//! it makes pass spirv-val, and only the `gl_PerVertex` members a shader uses move (the
//! pictures are proven in tools/cli/tests/geometry_render.rs).

use dmsh_fixup::lower::{lower, Pass};
use dmsh_testsupport::reference::glsl;
use dmsh_testsupport::spirv_val;

fn spv(src: &str, stage: &str) -> Option<Vec<u32>> {
    if !glsl::available() {
        println!("skipped: glslangValidator not installed");
        return None;
    }
    Some(glsl::compile_source(src, stage, &[]).unwrap_or_else(|e| panic!("glslang: {e}")))
}

/// `lower`'s error for `words` in `pass`.
fn refused(words: &[u32], pass: Pass) -> String {
    match lower(words, pass) {
        Ok(_) => panic!("{pass:?}: lowered, but should be refused"),
        Err(e) => e.to_string(),
    }
}

const GS: &str = "#version 450
layout(triangles) in;
layout(triangle_strip, max_vertices = 3) out;
layout(location = 0) in vec4 v[];
layout(location = 0) out vec4 o;
void main() {
    for (int i = 0; i < 3; i++) { gl_Position = gl_in[i].gl_Position; o = v[i]; EmitVertex(); }
}
";

#[test]
fn passes_validate_and_move_only_what_the_shader_uses() {
    let Some(gs) = spv(GS, "geom") else { return };
    for pass in [Pass::GeometryKernel, Pass::GeometryDraw] {
        let (w, r) = lower(&gs, pass).unwrap_or_else(|e| panic!("{pass:?}: {e}"));
        spirv_val(&w).unwrap_or_else(|e| panic!("{pass:?}: {e}"));
        let l = r.lowering.expect("a lowering record");
        assert_eq!(l.pass, pass);
        assert_eq!(
            (l.input_vertices, l.max_vertices, l.output.as_str()),
            (3, 3, "triangles")
        );
        assert_eq!(r.geometry_input.unwrap().source, "module");
        // glslang declares gl_PointSize, gl_ClipDistance and gl_CullDistance; the shader
        // uses none of them, so neither pass reads or writes them.
        let m = rspirv::dr::load_words(&w).unwrap();
        let caps: Vec<String> = m
            .capabilities
            .iter()
            .map(|c| format!("{:?}", c.operands[0]))
            .collect();
        assert!(
            !caps
                .iter()
                .any(|c| c.contains("Distance") || c.contains("Geometry")),
            "{pass:?}: {caps:?}"
        );
    }
    let (_, r) = lower(&gs, Pass::GeometryDraw).unwrap();
    let locations: Vec<u32> = r.outputs.iter().map(|o| o.location).collect();
    assert_eq!((r.stage.as_str(), locations), ("vertex", vec![0]));
    let (_, k) = lower(&gs, Pass::GeometryKernel).unwrap();
    let roles: Vec<u32> = k.resources.iter().map(|r| r.bank).collect();
    assert_eq!(
        (k.stage.as_str(), k.local_size, roles),
        ("compute", [64, 1, 1], vec![0, 1, 2, 3, 4])
    );
}

#[test]
fn a_module_of_another_stage_is_refused() {
    let Some(gs) = spv(GS, "geom") else { return };
    let e = refused(&gs, Pass::VertexCapture);
    assert!(
        e.contains("geometry module has no vertex_capture pass"),
        "{e}"
    );
}

#[test]
fn what_the_records_cannot_hold_is_refused_saying_why() {
    let cases = [
        (
            "#version 450
layout(points) in;
layout(points, max_vertices = 1) out;
layout(location = 0) out dvec4 o;
void main() { o = dvec4(1.0); EmitVertex(); }
",
            "geom",
            Pass::GeometryKernel,
            "64-bit varying",
        ),
        (
            "#version 450
layout(points) in;
layout(points, max_vertices = 1) out;
layout(location = 31) out vec4 o;
void main() { o = vec4(1.0); gl_PrimitiveID = 3; EmitVertex(); }
",
            "geom",
            Pass::GeometryDraw,
            "location 31",
        ),
        (
            "#version 450
layout(vertices = 1) out;
layout(location = 4) patch out vec4 p;
void main() { p = vec4(1.0); gl_TessLevelOuter[0] = 1.0; }
",
            "tesc",
            Pass::TessControlKernel,
            "patch varying at location 4",
        ),
        (
            "#version 450
layout(points) in;
layout(points, max_vertices = 1) out;
layout(std430, set = 0, binding = 241) buffer B { uint x; };
void main() { x = 1u; }
",
            "geom",
            Pass::GeometryKernel,
            "set 0 binding 241 is where the lowered pipeline's vertices_out",
        ),
    ];
    for (src, stage, pass, why) in cases {
        let Some(w) = spv(src, stage) else { return };
        let e = refused(&w, pass);
        assert!(e.contains(why), "{pass:?}: {e}");
        println!("{pass:?}: {e}");
    }
}

#[test]
fn more_output_vertices_than_the_lowered_form_takes_are_refused() {
    let Some(mut gs) = spv(GS, "geom") else {
        return;
    };
    // OpExecutionMode %main OutputVertices 3 → 1025.
    let at = (5..gs.len())
        .find(|&i| gs[i] == (4 << 16 | 16) && gs[i + 2] == 26)
        .expect("OutputVertices");
    gs[at + 3] = 1025;
    let e = refused(&gs, Pass::GeometryKernel);
    assert!(e.contains("1025 output vertices"), "{e}");
}

/// Damaged modules (words of glslang's geometry, control and evaluation modules overwritten
/// at random) give an error or a module, never a panic or a hang.
#[test]
fn damaged_modules_never_panic() {
    let Some(gs) = spv(GS, "geom") else { return };
    let tcs = "#version 450
layout(vertices = 3) out;
layout(location = 0) in vec4 v[];
layout(location = 0) out vec4 o[];
layout(location = 1) patch out vec4 p;
void main() {
    o[gl_InvocationID] = v[gl_InvocationID];
    barrier();
    if (gl_InvocationID == 0) { p = o[1]; gl_TessLevelOuter[0] = 2.0; gl_TessLevelInner[0] = 3.0; }
}
";
    let tes = "#version 450
layout(triangles, equal_spacing, cw) in;
layout(location = 0) in vec4 v[];
layout(location = 1) patch in vec4 p;
void main() { gl_Position = v[0] * gl_TessCoord.x + v[1] * gl_TessCoord.y + p * gl_TessCoord.z; }
";
    let Some(tcs) = spv(tcs, "tesc") else { return };
    let Some(tes) = spv(tes, "tese") else { return };
    let mut x = 0x9e37_79b9u32;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    let mut lowered = 0;
    for (words, passes) in [
        (&gs, &[Pass::GeometryKernel, Pass::GeometryDraw][..]),
        (&tcs, &[Pass::TessControlKernel][..]),
        (&tes, &[Pass::TessEvalPost, Pass::TessEvalDraw][..]),
    ] {
        for &pass in passes {
            assert!(
                lower(words, pass).is_ok(),
                "{pass:?}: the undamaged module lowers"
            );
            for _ in 0..300 {
                let mut w = words.clone();
                for _ in 0..1 + next() % 3 {
                    let at = 5 + (next() as usize) % (w.len() - 5);
                    w[at] = match next() % 4 {
                        0 => next(),
                        1 => next() % 64,
                        2 => w[at] ^ (1 << (next() % 32)),
                        _ => u32::MAX,
                    };
                }
                let r = std::panic::catch_unwind(|| lower(&w, pass).is_ok());
                match r {
                    Ok(ok) => lowered += usize::from(ok),
                    Err(_) => panic!("{pass:?}: lowering a damaged module panicked: {w:?}"),
                }
            }
        }
    }
    println!("{lowered} of 1500 damaged modules still lowered; the rest refused");
}

/// A Vulkan module's reflection lists a block's members, a matrix's columns and an array's
/// elements at their locations (and a geometry module's per-vertex inputs by their element).
#[test]
fn reflection_lists_blocks_matrices_and_arrays_by_location() {
    let vs = "#version 460
layout(location = 0) in vec4 aPos;
layout(location = 0) out VOut { vec3 wp; flat int id; } vo;
layout(location = 2) out mat2 vm;
layout(location = 4) out float vf[2];
layout(location = 7) out Late { layout(location = 9) vec2 a; uint b; } late;
void main() { gl_Position = aPos; vo.wp = aPos.xyz; vo.id = 1; vm = mat2(1.0); vf[0] = 0.0;
    vf[1] = 1.0; late.a = vec2(0.0); late.b = 2u; }
";
    let Some(w) = spv(vs, "vert") else { return };
    let (_, r) = dmsh_fixup::vulkan::prepare(&w).expect("reflection");
    let at: Vec<(u32, &str)> = r
        .outputs
        .iter()
        .map(|o| (o.location, o.component_type.as_str()))
        .collect();
    assert_eq!(
        at,
        [
            (0, "float"),
            (1, "sint"),
            (2, "float"),
            (3, "float"),
            (4, "float"),
            (5, "float"),
            (9, "float"),
            (10, "uint")
        ]
    );
    let gs = "#version 460
layout(triangles) in;
layout(points, max_vertices = 1) out;
layout(location = 0) in VOut { vec3 wp; flat int id; } vi[];
layout(location = 2) in mat2 vm[];
void main() { gl_Position = vec4(vi[0].wp, float(vi[1].id)) + vm[2][0].xyxy; EmitVertex(); }
";
    let Some(w) = spv(gs, "geom") else { return };
    let (_, r) = dmsh_fixup::vulkan::prepare(&w).expect("reflection");
    let at: Vec<u32> = r.inputs.iter().map(|o| o.location).collect();
    assert_eq!(at, [0, 1, 2, 3], "per-vertex arrays by their element");
}
