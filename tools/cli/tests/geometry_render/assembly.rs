//! How the lowered kernel assembles its input: every topology, index buffers, instancing,
//! primitive restart, a geometry shader that only stores, and interface blocks through the
//! records.

use super::*;

/// Every input topology the lowered kernel assembles, against lavapipe's own assembly for a
/// geometry stage: gs_passthrough_tri (which reads gl_in[0..2]) drawn as a triangle strip and
/// fan, and with its input primitive given as triangles or lines with adjacency (the GLSL
/// reference likewise) drawn as lists and strips with adjacency. The shader reads the first
/// three elements of each input primitive, so those are what this checks; the strip's
/// adjacency elements 3–5 follow the specification's table (docs/geometry.md).
#[test]
pub(crate) fn every_input_topology_assembles_like_a_geometry_stage() {
    use dmsh_ir::lift::GsInput;
    if !ready() {
        return;
    }
    let vertex = glslang(PASSTHROUGH_VS, "vert", "vertex");
    let fragment = glslang(PASSTHROUGH_FS, "frag", "fragment");
    let capture = passthrough_capture();
    // 14 vertices zig-zagging across the target (a strip of 12 triangles; 5 with adjacency).
    let mut vertices = Vec::new();
    for k in 0..14 {
        let x = -0.95 + 0.14 * k as f32;
        let y = if k % 2 == 0 { -0.8 } else { 0.7 } + 0.05 * (k % 3) as f32;
        vertices.extend([x, y, 0.1 + 0.05 * k as f32, 1.0]);
    }
    let name = "gs_passthrough_tri.geom";
    let src = dksh_render::corpus_glsl(&dksh::corpus_dir(), name).expect("corpus GLSL");
    let cases = [
        (None, Topology::TriangleStrip),
        (None, Topology::TriangleFan),
        (
            Some(GsInput::TrianglesAdjacency),
            Topology::TriangleListAdjacency,
        ),
        (
            Some(GsInput::TrianglesAdjacency),
            Topology::TriangleStripAdjacency,
        ),
        (Some(GsInput::LinesAdjacency), Topology::LineListAdjacency),
        (Some(GsInput::LinesAdjacency), Topology::LineStripAdjacency),
    ];
    for (prim, topology) in cases {
        let d = Draw {
            vertex: vertex.clone(),
            fragment: fragment.clone(),
            vertices: vertices.clone(),
            floats_per_vertex: 4,
            topology,
            layers: 1,
            viewports: vec![[0.0, 0.0, 32.0, 64.0], [32.0, 0.0, 32.0, 64.0]],
            vertex_ubos: Vec::new(),
            indices: Vec::new(),
            instances: 1,
            restart: false,
        };
        let reference = match prim {
            None => glslang(&src, "geom", "geometry"),
            Some(p) => {
                let glsl = src.replace("layout(triangles,", &format!("layout({},", p.name()));
                assert_ne!(glsl, src);
                glslang(&glsl, "geom", "geometry")
            }
        };
        let stage = |form| match prim {
            None => ours_in(name, form),
            Some(p) => translate::corpus_geometry_stage(&dksh::corpus_dir(), name, p, form)
                .unwrap_or_else(|e| panic!("{name}: {e}")),
        };
        let want = run(&d, Middle::Geometry(reference.clone(), Data::default()));
        let got = run(
            &d,
            Middle::Lowered(
                capture.clone(),
                stage(Form::Lowered(Pass::GeometryKernel)),
                Data::default(),
                stage(Form::Lowered(Pass::GeometryDraw)),
            ),
        );
        compare(&format!("{name} as {topology:?}, lowered"), &want, &got);
        let got = run(
            &d,
            captured_geometry(&d.vertex.spirv, &reference.spirv, Data::default()),
        );
        compare(
            &format!("{name} as {topology:?}, captured, lowered"),
            &want,
            &got,
        );
    }
}

/// An indexed draw (indices reused and out of order) through gs_passthrough_tri, directly and
/// lowered: the kernel assembles its input vertices through the index buffer
/// (`index_source`), the capture pass writes the record of every index reached.
#[test]
pub(crate) fn indexed_draws_assemble_through_the_index_buffer() {
    if !ready() {
        return;
    }
    let vertex = glslang(PASSTHROUGH_VS, "vert", "vertex");
    let fragment = glslang(PASSTHROUGH_FS, "frag", "fragment");
    let capture = passthrough_capture();
    let mut vertices = Vec::new();
    for k in 0..9 {
        let (x, y) = ((k % 3) as f32 * 0.9 - 0.9, (k / 3) as f32 * 0.9 - 0.9);
        vertices.extend([x, y, 0.2 + 0.07 * k as f32, 1.0]);
    }
    let name = "gs_passthrough_tri.geom";
    for topology in [Topology::TriangleList, Topology::TriangleStrip] {
        let d = Draw {
            viewports: vec![[0.0, 0.0, 32.0, 64.0], [32.0, 0.0, 32.0, 64.0]],
            indices: vec![4, 0, 1, 4, 1, 2, 8, 5, 4, 3, 6, 7, 7, 4, 3],
            ..Draw::new(
                vertex.clone(),
                fragment.clone(),
                vertices.clone(),
                4,
                topology,
            )
        };
        let want = run(
            &d,
            Middle::Geometry(reference(name, "geom", "geometry"), Data::default()),
        );
        compare_lowerings(
            &d,
            Data::default,
            &capture,
            name,
            &format!("{name} indexed {topology:?}"),
            &want,
        );
    }
}

/// A geometry shader that emits no vertex and only stores to memory (issue 16; the extra
/// corpus' gs_stores_only: every input triangle × invocation writes a record of its inputs,
/// gl_PrimitiveIDIn and gl_InvocationID to its own slot of a storage buffer and counts itself
/// atomically). glslang's SPIR-V drawn by lavapipe's geometry stage is the reference; uam's
/// binary translated (directly and lowered: kernel and draw) and glslang's module lowered as
/// a capture folder's (kernel, draw, the vertex shader's capture form) store the same bytes,
/// and nothing is drawn any way.
#[test]
fn a_geometry_shader_that_only_stores_matches_the_geometry_stage() {
    if !ready() {
        return;
    }
    let name = "gs_stores_only.geom";
    let gs = extra_reference(name, "geom", "geometry");
    let vertex = glslang(PASSTHROUGH_VS, "vert", "vertex");
    let fragment = glslang(PASSTHROUGH_FS, "frag", "fragment");
    let mut vertices = Vec::new();
    for k in 0..30 {
        let (x, y) = ((k % 6) as f32 * 0.3 - 0.9, (k / 6) as f32 * 0.35 - 0.8);
        vertices.extend([x, y, 0.1 * (k % 4) as f32, 1.0]);
    }
    let d = Draw::new(vertex, fragment, vertices, 4, Topology::TriangleList);
    // 10 triangles × 2 invocations, 8 words each, after the counter (and its padding).
    let data = || Data {
        sbufs: vec![vec![0u8; 16 + 10 * 2 * 32]],
        ..Data::default()
    };
    let words = |(out, names): (dmsh_vk::render::RenderOutputs, Vec<String>)| -> Vec<u32> {
        let k = names
            .iter()
            .position(|n| n == "sbuf0")
            .expect("the storage buffer");
        let blank = out.targets[0].data.chunks(4).all(|p| p[..3] == [0, 0, 0]);
        assert!(blank, "a shader emitting no vertex draws nothing");
        out.buffers[k]
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let want = words(run_outputs(&d, Middle::Geometry(gs.clone(), data())));
    assert_eq!(want[0], 20, "every triangle × invocation counted");
    for i in 0..20 {
        let at = 4 + 8 * i as usize;
        assert_eq!(
            (want[at + 3], want[at + 7]),
            (i + 1, i / 2 + 100),
            "slot {i} written"
        );
    }
    let capture = passthrough_capture();
    let cases = [
        (
            "translated",
            Middle::Geometry(extra_ours(name, Form::Direct), data()),
        ),
        (
            "translated, lowered",
            Middle::Lowered(
                capture,
                extra_ours(name, Form::Lowered(Pass::GeometryKernel)),
                data(),
                extra_ours(name, Form::Lowered(Pass::GeometryDraw)),
            ),
        ),
        (
            "captured, lowered",
            captured_geometry(&d.vertex.spirv, &gs.spirv, data()),
        ),
    ];
    for (what, middle) in cases {
        let got = words(run_outputs(&d, middle));
        // uam fuses s = v0 + v1 × 2 + v2 × 3 into FFMAs, glslang's module does not: the
        // translations' float words may differ by a rounding of the sum (operands of size 1:
        // within 1e-6, even where the sum cancels to near 0); every integer word is exact, and
        // the captured module's stores are glslang's own arithmetic, exact.
        let exact = what.starts_with("captured");
        let mut off = 0;
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            let float = k >= 4 && !matches!((k - 4) % 8, 3 | 7);
            let (gf, wf) = (f32::from_bits(*g), f32::from_bits(*w));
            let near = float && !exact && (gf - wf).abs() <= 1e-6;
            assert!(
                g == w || near,
                "{name} {what}: word {k} is {g:#x}, the geometry stage's {w:#x}"
            );
            off += usize::from(g != w);
        }
        assert_eq!(got.len(), want.len());
        println!(
            "{name} {what}: {} bytes of stores as the geometry stage's ({off} float words \
             rounded differently)",
            4 * want.len()
        );
    }
}

/// Instanced draws (docs/geometry.md: the three passes once per instance, gl_InstanceIndex the
/// instance, gl_PrimitiveIDIn from 0 again): gs_expand_points (points to quads on layer 1,
/// gl_PrimitiveID read by the fragment shader) over three instances that the vertex shader
/// moves apart, directly and lowered (uam's binary translated; glslang's modules as a capture
/// folder's), against glslang's direct picture.
#[test]
fn instanced_draws_run_the_passes_per_instance() {
    if !ready() {
        return;
    }
    let vertex = glslang(
        "#version 460\n\
         layout(location = 0) in vec4 aPos;\n\
         layout(location = 1) in vec4 aColor;\n\
         layout(location = 0) out vec4 vColor;\n\
         void main() { gl_Position = aPos + vec4(0.3, -0.25, 0.0, 0.0) * float(gl_InstanceIndex);\n\
         vColor = aColor * (1.0 - 0.3 * float(gl_InstanceIndex)); }\n",
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
        -0.7, 0.4, 0.5, 1.0,    1.0, 0.2, 0.1, 1.0,
        -0.4, 0.6, 0.5, 1.0,    0.1, 0.9, 0.3, 1.0,
        -0.6, 0.8, 0.5, 1.0,    0.6, 0.5, 1.0, 1.0,
    ];
    let mut cam = f32s(&[
        0.9, 0.0, 0.0, 0.0, 0.1, 0.8, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.05, -0.02, 0.0, 1.0, 0.3,
        0.25,
    ]);
    cam.extend_from_slice(&1i32.to_le_bytes());
    cam.resize(96, 0);
    let d = Draw {
        layers: 2,
        instances: 3,
        ..Draw::new(vertex, fragment, vertices, 8, Topology::PointList)
    };
    let data = || Data {
        ubos: vec![cam.clone()],
        ..Data::default()
    };
    let name = "gs_expand_points.geom";
    let want = run(
        &d,
        Middle::Geometry(reference(name, "geom", "geometry"), data()),
    );
    let capture = capture_glsl(
        "layout(location = 0) in vec4 aPos;\nlayout(location = 1) in vec4 aColor;",
        "vec4 pos = aPos + vec4(0.3, -0.25, 0.0, 0.0) * float(gl_InstanceIndex);",
        &[(0, "aColor * (1.0 - 0.3 * float(gl_InstanceIndex))")],
    );
    let what = format!("{name} × 3 instances");
    compare_lowerings(&d, data, &capture, name, &what, &want);
}

/// A geometry shader that colours each triangle by gl_PrimitiveIDIn and passes it on as
/// gl_PrimitiveID (read by [`PRIM_ID_FS`]).
const GS_PRIMITIVE_COLOUR: &str = "#version 460
layout(triangles) in;
layout(triangle_strip, max_vertices = 3) out;
layout(location = 0) in vec3 vWorldPos[];
layout(location = 0) out vec3 gNormal;
layout(location = 1) out vec3 gBary;
void main() {
    for (int i = 0; i < 3; i++) {
        gl_Position = gl_in[i].gl_Position;
        gNormal = vec3(float(gl_PrimitiveIDIn) * 0.125, vWorldPos[i].x * 0.1, 0.5);
        gBary = vec3(i == 0, i == 1, i == 2);
        gl_PrimitiveID = gl_PrimitiveIDIn;
        EmitVertex();
    }
}
";

/// The fragment shader of the restart draws: the passed-through colours and gl_PrimitiveID.
const PRIM_ID_FS: &str = "#version 460
layout(location = 0) in vec3 gNormal;
layout(location = 1) in vec3 gBary;
layout(location = 0) out vec4 o;
void main() { o = vec4(gNormal * 0.5 + gBary * 0.25, 1.0) + vec4(0.0, 0.0, float(gl_PrimitiveID) * 0.0625, 0.0); }
";

/// Primitive restart in indexed strips (docs/geometry.md: one sub-draw per run between
/// restarts, `params[4]` its first index, `params[6]` its first primitive ID — restart does not
/// reset the count): gs_passthrough_tri (uam's binary translated; glslang's module captured)
/// and a geometry shader colouring by gl_PrimitiveIDIn (captured), over a triangle strip and a
/// fan cut by restarts, against lavapipe's direct pipeline with primitive restart on.
#[test]
fn primitive_restart_splits_the_draw_into_sub_draws() {
    if !ready() {
        return;
    }
    let vertex = glslang(PASSTHROUGH_VS, "vert", "vertex");
    let capture = passthrough_capture();
    let mut vertices = Vec::new();
    for k in 0..16 {
        let (x, y) = ((k % 4) as f32 * 0.6 - 0.9, (k / 4) as f32 * 0.6 - 0.9);
        vertices.extend([x + 0.05 * (k % 3) as f32, y, 0.2 + 0.04 * k as f32, 1.0]);
    }
    const R: u32 = u32::MAX;
    for (topology, indices) in [
        (
            Topology::TriangleStrip,
            vec![
                0, 4, 1, 5, 2, 6, R, 5, 9, 6, 10, 7, 11, R, R, 8, 12, 9, 13, 10, 14, 11, 15,
            ],
        ),
        (
            Topology::TriangleFan,
            vec![5, 0, 1, 2, 6, R, 10, 6, 7, 11, 15, 14, R, 8, 9, 12],
        ),
    ] {
        let draw = |fragment: Stage| Draw {
            viewports: vec![[0.0, 0.0, 32.0, 64.0], [32.0, 0.0, 32.0, 64.0]],
            indices: indices.clone(),
            restart: true,
            ..Draw::new(vertex.clone(), fragment, vertices.clone(), 4, topology)
        };
        let d = draw(glslang(PASSTHROUGH_FS, "frag", "fragment"));
        let name = "gs_passthrough_tri.geom";
        let want = run(
            &d,
            Middle::Geometry(reference(name, "geom", "geometry"), Data::default()),
        );
        compare_lowerings(
            &d,
            Data::default,
            &capture,
            name,
            &format!("{name} {topology:?} with restarts"),
            &want,
        );
        let d = draw(glslang(PRIM_ID_FS, "frag", "fragment"));
        let gs = glslang(GS_PRIMITIVE_COLOUR, "geom", "geometry");
        let want = run(&d, Middle::Geometry(gs.clone(), Data::default()));
        let got = run(
            &d,
            captured_geometry(&d.vertex.spirv, &gs.spirv, Data::default()),
        );
        compare(
            &format!("gl_PrimitiveIDIn over a {topology:?} with restarts, captured, lowered"),
            &want,
            &got,
        );
    }
}

/// Interface blocks, matrices, arrays and structs between captured modules (a Vulkan title's
/// shaders use them where the corpus' loose vec4s do not): a vertex shader writing a block
/// (a vec3, a flat int), a mat2 and a float[2], a geometry shader reading them per vertex and
/// writing a block whose members take locations 0 and 1 — glslang's modules lowered as a
/// capture folder's against lavapipe's direct pipeline.
#[test]
fn blocks_matrices_and_arrays_pass_through_the_records() {
    if !ready() {
        return;
    }
    let vertex = glslang(
        "#version 460
layout(location = 0) in vec4 aPos;
layout(location = 0) out VOut { vec3 wp; flat int id; } vo;
layout(location = 2) out mat2 vm;
layout(location = 4) out float vf[2];
void main() {
    gl_Position = aPos;
    vo.wp = aPos.xyz * vec3(2.0, 3.0, 5.0) + aPos.yzx;
    vo.id = gl_VertexIndex % 3;
    vm = mat2(aPos.x, aPos.y, -aPos.y, aPos.x * 0.5);
    vf[0] = aPos.z;
    vf[1] = 1.0 - aPos.x;
}
",
        "vert",
        "vertex",
    );
    let gs = glslang(
        "#version 460
layout(triangles) in;
layout(triangle_strip, max_vertices = 3) out;
layout(location = 0) in VOut { vec3 wp; flat int id; } vi[];
layout(location = 2) in mat2 vm[];
layout(location = 4) in float vf[][2];
layout(location = 0) out GOut { vec3 n; vec3 bary; } go;
void main() {
    vec3 n = normalize(cross(vi[1].wp - vi[0].wp, vi[2].wp - vi[0].wp));
    for (int i = 0; i < 3; i++) {
        gl_Position = gl_in[i].gl_Position;
        go.n = n * 0.5 + vec3(vm[i][1], vf[i][vi[i].id & 1]) * 0.25;
        go.bary = vec3(i == 0, i == 1, i == 2) * (1.0 - 0.25 * float(vi[i].id));
        EmitVertex();
    }
}
",
        "geom",
        "geometry",
    );
    let fragment = glslang(PASSTHROUGH_FS, "frag", "fragment");
    #[rustfmt::skip]
    let vertices = vec![
        -0.9, -0.9, 0.1, 1.0,   0.8, -0.7, 0.5, 1.0,   -0.2, 0.9, 0.9, 1.0,
        0.9, 0.9, 0.3, 1.0,   -0.7, 0.6, 0.2, 1.0,   0.3, -0.95, 0.7, 1.0,
    ];
    let d = Draw::new(vertex, fragment, vertices, 4, Topology::TriangleList);
    let want = run(&d, Middle::Geometry(gs.clone(), Data::default()));
    let got = run(
        &d,
        captured_geometry(&d.vertex.spirv, &gs.spirv, Data::default()),
    );
    compare(
        "blocks, matrices and arrays, captured, lowered",
        &want,
        &got,
    );
}
