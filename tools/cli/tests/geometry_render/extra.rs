//! The extra GLSL corpus (tests/corpus/extra/glsl): geometry shaders and a tessellation pair
//! written for forms the dksh set lacks.

use super::*;

/// An extra-corpus geometry shader drawn directly and lowered against glslang's picture.
fn check_extra_gs(name: &str, d: &Draw, capture: &Stage) {
    let want = run(
        d,
        Middle::Geometry(extra_reference(name, "geom", "geometry"), Data::default()),
    );
    let got = run(
        d,
        Middle::Geometry(extra_ours(name, Form::Direct), Data::default()),
    );
    compare(name, &want, &got);
    let got = run(
        d,
        Middle::Lowered(
            capture.clone(),
            extra_ours(name, Form::Lowered(Pass::GeometryKernel)),
            Data::default(),
            extra_ours(name, Form::Lowered(Pass::GeometryDraw)),
        ),
    );
    compare(&format!("{name} lowered"), &want, &got);
    let gs = extra_reference(name, "geom", "geometry").spirv;
    let got = run(d, captured_geometry(&d.vertex.spirv, &gs, Data::default()));
    compare(&format!("{name} captured, lowered"), &want, &got);
}

/// gs_indexed_in (run-time indexed per-vertex arrays, points out with a point size),
/// gs_streams (two vertex streams: only stream 0 is rasterized) and gs_streams_cut
/// (invocations, strips cut in a loop, a conditional emit, layer and viewport outputs).
#[test]
pub(crate) fn extra_geometry_shaders_render_like_glslang() {
    if !ready() {
        return;
    }
    // gs_indexed_in: vIn[3] at locations 0–2, flat int vSel at 3.
    let vertex = glslang(
        "#version 460\n\
         layout(location = 0) in vec4 aPos;\n\
         layout(location = 1) in vec4 aCol;\n\
         layout(location = 0) out vec4 vIn[3];\n\
         layout(location = 3) flat out int vSel;\n\
         void main() { gl_Position = aPos; vIn[0] = aCol; vIn[1] = aCol.yzwx * 0.5; \
         vIn[2] = aPos * 0.25 + 0.5; vSel = gl_VertexIndex % 5; }\n",
        "vert",
        "vertex",
    );
    let capture = capture_glsl(
        "layout(location = 0) in vec4 aPos;\nlayout(location = 1) in vec4 aCol;",
        "vec4 pos = aPos;",
        &[
            (0, "aCol"),
            (1, "aCol.yzwx * 0.5"),
            (2, "aPos * 0.25 + 0.5"),
            (3, "intBitsToFloat(ivec4(gl_VertexIndex % 5, 0, 0, 0))"),
        ],
    );
    let fragment = glslang(
        "#version 460\n\
         layout(location = 0) in vec4 gOut;\n\
         layout(location = 0) out vec4 o;\n\
         void main() { o = vec4(gOut.xyz * 0.5, 1.0); }\n",
        "frag",
        "fragment",
    );
    let mut vertices = Vec::new();
    for k in 0..600 {
        let (x, y) = ((k % 30) as f32 / 16.0 - 0.93, (k / 30) as f32 / 10.5 - 0.95);
        vertices.extend([x, y, 0.5, 1.0, 0.1 * (k % 7) as f32, 0.9, 0.3, 1.0]);
    }
    let d = Draw::new(vertex, fragment, vertices, 8, Topology::TriangleList);
    check_extra_gs("gs_indexed_in.geom", &d, &capture);

    // gs_streams: points; the fragment shader reads stream 0's gA only.
    let vertex = glslang(
        "#version 460\n\
         layout(location = 0) in vec4 aPos;\n\
         layout(location = 1) in vec4 aCol;\n\
         layout(location = 0) out vec4 vIn;\n\
         void main() { gl_Position = aPos; gl_PointSize = 1.0; vIn = aCol; }\n",
        "vert",
        "vertex",
    );
    let capture = capture_glsl(
        "layout(location = 0) in vec4 aPos;\nlayout(location = 1) in vec4 aCol;",
        "vec4 pos = aPos;",
        &[(0, "aCol")],
    );
    let fragment = glslang(
        "#version 460\n\
         layout(location = 0) in vec4 gA;\n\
         layout(location = 0) out vec4 o;\n\
         void main() { o = vec4(gA.xyz, 1.0); }\n",
        "frag",
        "fragment",
    );
    let mut vertices = Vec::new();
    for k in 0..200 {
        let (x, y) = ((k % 20) as f32 / 10.5 - 0.95, (k / 20) as f32 / 5.5 - 0.9);
        vertices.extend([x, y, 0.5, 1.0, 0.05 * (k % 19) as f32, 0.7, 0.2, 1.0]);
    }
    let d = Draw::new(vertex, fragment, vertices, 8, Topology::PointList);
    check_extra_gs("gs_streams.geom", &d, &capture);

    // gs_streams_cut: three layers (gl_Layer = k), two viewports (gl_ViewportIndex =
    // invocation); vertices with w ≤ 0 are skipped by the shader, so give every vertex w = 1
    // and a colour whose w sign varies.
    let vertex = glslang(
        "#version 460\n\
         layout(location = 0) in vec4 aPos;\n\
         layout(location = 1) in vec4 aCol;\n\
         layout(location = 0) out vec4 vIn;\n\
         void main() { gl_Position = aPos; vIn = aCol; }\n",
        "vert",
        "vertex",
    );
    let fragment = glslang(
        "#version 460\n\
         layout(location = 0) in vec4 gOut;\n\
         layout(location = 0) out vec4 o;\n\
         void main() { o = vec4(fract(gOut.xyz * 0.37), 1.0); }\n",
        "frag",
        "fragment",
    );
    #[rustfmt::skip]
    let vertices = vec![
        -0.9, -0.9, 0.5, 1.0,   0.2, 0.4, 0.6, 1.0,
        -0.1, -0.8, 0.5, 1.0,   0.8, 0.1, 0.3, 1.0,
        -0.6, 0.7, 0.5, 1.0,    0.5, 0.9, 0.2, 1.0,
        -0.95, 0.1, 0.5, 1.0,   0.3, 0.3, 0.3, 1.0,
        -0.3, 0.2, 0.5, 1.0,    0.9, 0.6, 0.1, -1.0,
        -0.7, 0.9, 0.5, 1.0,    0.1, 0.8, 0.7, 1.0,
    ];
    let d = Draw {
        vertex,
        fragment,
        vertices,
        floats_per_vertex: 8,
        topology: Topology::TriangleList,
        layers: 3,
        viewports: vec![[0.0, 0.0, 32.0, 64.0], [32.0, 0.0, 32.0, 64.0]],
        vertex_ubos: Vec::new(),
        indices: Vec::new(),
        instances: 1,
        restart: false,
    };
    check_extra_gs("gs_streams_cut.geom", &d, &capture);
}

/// tcs_quad_barrier + tes_quad_isolevels (quads, fractional_odd, cw; outputs read back after
/// a barrier, levels from neighbours, patch outputs, the levels read in the evaluation
/// stage), drawn directly and lowered against glslang's picture. The patches are
/// parallelograms and the colours linear in v, so the picture does not depend on how the
/// tessellator triangulates the rings; the levels are odd integers (exact under
/// fractional_odd spacing and as half floats).
#[test]
pub(crate) fn extra_tessellation_pair_renders_like_glslang() {
    if !ready() {
        return;
    }
    let vertex = glslang(
        "#version 460\n\
         layout(location = 0) in vec4 aPos;\n\
         layout(location = 1) in vec4 aVal;\n\
         layout(location = 0) out vec4 vIn;\n\
         void main() { gl_Position = aPos; vIn = aVal; }\n",
        "vert",
        "vertex",
    );
    let capture = capture_glsl(
        "layout(location = 0) in vec4 aPos;\nlayout(location = 1) in vec4 aVal;",
        "vec4 pos = aPos;",
        &[(0, "aVal")],
    );
    let fragment = glslang(
        "#version 460\n\
         layout(location = 0) in vec4 eOut;\n\
         layout(location = 0) out vec4 o;\n\
         void main() { o = vec4(fract(eOut.xyz * 0.05), 1.0); }\n",
        "frag",
        "fragment",
    );
    // Two parallelogram patches (corners 0, 1, 2, 3 with 3 = 0 + 2 − 1 as the evaluation
    // shader's mix order wants); tOut = 2 × vIn: outer levels = tOut[1], inner = (tOut[2].x,
    // tOut[3].y).
    let patch = |ox: f32, oy: f32| {
        let p = [
            [ox, oy],
            [ox + 0.7, oy + 0.1],
            [ox + 0.8, oy + 0.8],
            [ox + 0.1, oy + 0.7],
        ];
        let vals = [
            [0.5, 0.2, 0.3, 0.1],
            [1.5, 2.5, 0.5, 1.5],
            [1.5, 0.5, 0.5, 0.5],
            [0.5, 2.5, 0.5, 0.5],
        ];
        let mut v = Vec::new();
        for k in 0..4 {
            v.extend([p[k][0], p[k][1], 0.5, 1.0]);
            v.extend(vals[k]);
        }
        v
    };
    let mut vertices = patch(-0.9, -0.9);
    vertices.extend(patch(0.0, 0.05));
    let d = Draw::new(vertex, fragment, vertices, 8, Topology::TriangleList);
    let (c, e) = ("tcs_quad_barrier.tesc", "tes_quad_isolevels.tese");
    let want = run(
        &d,
        Middle::Tessellation(
            extra_reference(c, "tesc", "tess_control"),
            Data::default(),
            extra_reference(e, "tese", "tess_eval"),
            Data::default(),
            4,
        ),
    );
    let got = run(
        &d,
        Middle::Tessellation(
            extra_ours(c, Form::Direct),
            Data::default(),
            extra_ours(e, Form::Direct),
            Data::default(),
            4,
        ),
    );
    compare("tcs_quad_barrier + tes_quad_isolevels", &want, &got);
    let control =
        translate::corpus_control_stage(&extra_dir(), c, e, Form::Lowered(Pass::TessControlKernel))
            .unwrap_or_else(|err| panic!("{c}: {err}"));
    let got = run(
        &d,
        Middle::LoweredTess(
            capture,
            control,
            Data::default(),
            extra_ours(e, Form::Lowered(Pass::TessEvalDraw)),
            Data::default(),
            4,
        ),
    );
    compare("tcs_quad_barrier + tes_quad_isolevels lowered", &want, &got);
    let got = run(
        &d,
        Middle::LoweredTess(
            captured(&d.vertex.spirv, Pass::VertexCapture),
            captured(
                &extra_reference(c, "tesc", "tess_control").spirv,
                Pass::TessControlKernel,
            ),
            Data::default(),
            captured(
                &extra_reference(e, "tese", "tess_eval").spirv,
                Pass::TessEvalDraw,
            ),
            Data::default(),
            4,
        ),
    );
    compare(
        "tcs_quad_barrier + tes_quad_isolevels captured, lowered",
        &want,
        &got,
    );
}
