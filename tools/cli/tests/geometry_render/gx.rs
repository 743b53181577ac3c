//! GX-style geometry shaders (seed 000: Super Mario Galaxy) as emulators write them.

use super::*;

/// A GX-style vertex shader (seed 000: Super Mario Galaxy's two geometry shaders expand GX
/// points and lines to quads): the vertex data as one block, as Dolphin-like emulators write
/// it.
const GX_VS: &str = "#version 460
layout(location = 0) in vec4 aPos;
layout(location = 0) out VertexData { vec4 pos; vec4 colors_0; vec3 tex0; } vs;
void main() {
    vs.pos = aPos;
    vs.colors_0 = vec4(fract(aPos.xy * 3.7 + 0.5), 0.6, 1.0);
    vs.tex0 = vec3(aPos.xy * 0.5 + 0.5, float(gl_VertexIndex % 4));
    gl_Position = aPos;
}
";

/// GX line and point expansion in the emulators' style: the block copied into a struct, the
/// quad's corners emitted by a helper function, widths from a uniform block.
const GX_GS: &str = "#version 460
layout(INPUT, invocations = 1) in;
layout(triangle_strip, max_vertices = 4) out;
layout(std140, binding = 0) uniform GSBlock { vec4 clinept; };
struct VS_OUTPUT { vec4 pos; vec4 colors_0; vec3 tex0; };
layout(location = 0) in VertexData { vec4 pos; vec4 colors_0; vec3 tex0; } vs[];
layout(location = 0) out VertexData { vec4 pos; vec4 colors_0; vec3 tex0; } ps;
VS_OUTPUT load(int i) { VS_OUTPUT o; o.pos = vs[i].pos; o.colors_0 = vs[i].colors_0; o.tex0 = vs[i].tex0; return o; }
void emit(VS_OUTPUT o, vec2 off, float u) {
    o.pos.xy += off * o.pos.w;
    ps.pos = o.pos; ps.colors_0 = o.colors_0; ps.tex0 = vec3(o.tex0.xy, u);
    gl_Position = o.pos;
    EmitVertex();
}
void main() {
#ifdef LINES
    VS_OUTPUT s = load(0), e = load(1);
    vec2 to = abs(e.pos.xy / e.pos.w - s.pos.xy / s.pos.w);
    vec2 off = clinept.y * to.y > clinept.x * to.x ? vec2(clinept.z, 0.0) : vec2(0.0, clinept.w);
    emit(s, -off, 0.0); emit(s, off, 1.0); emit(e, -off, 0.0); emit(e, off, 1.0);
#else
    VS_OUTPUT c = load(0);
    emit(c, -clinept.zw, 0.0); emit(c, vec2(clinept.z, -clinept.w), 1.0);
    emit(c, vec2(-clinept.z, clinept.w), 2.0); emit(c, clinept.zw, 3.0);
#endif
    EndPrimitive();
}
";

/// GX points and lines expanded to quads (seed 000's Super Mario Galaxy geometry shaders, as
/// emulators write them: blocks, a struct, a helper that emits), from glslang's modules as a
/// capture folder's, against lavapipe's geometry stage.
#[test]
fn gx_points_and_lines_expand_to_quads() {
    if !ready() {
        return;
    }
    let fragment = glslang(
        "#version 460
layout(location = 0) in VertexData { vec4 pos; vec4 colors_0; vec3 tex0; } ps;
layout(location = 0) out vec4 o;
void main() { o = ps.colors_0 * vec4(ps.tex0.xy, 1.0, 1.0) + vec4(0.0, 0.0, ps.tex0.z * 0.2, 0.0); }
",
        "frag",
        "fragment",
    );
    let ubo = f32s(&[1.0, 1.0, 0.06, 0.05]);
    let mut vertices = Vec::new();
    for k in 0..24 {
        let (x, y) = ((k % 6) as f32 * 0.3 - 0.8, (k / 6) as f32 * 0.45 - 0.75);
        vertices.extend([
            x + 0.07 * (k % 3) as f32,
            y - 0.05 * (k % 2) as f32,
            0.5,
            1.0,
        ]);
    }
    for (input, topology) in [
        ("lines", Topology::LineList),
        ("points", Topology::PointList),
    ] {
        let src = GX_GS.replace("INPUT", input).replace(
            "#version 460\n",
            if input == "lines" {
                "#version 460\n#define LINES\n"
            } else {
                "#version 460\n"
            },
        );
        let gs = glslang(&src, "geom", "geometry");
        let d = Draw::new(
            glslang(GX_VS, "vert", "vertex"),
            fragment.clone(),
            vertices.clone(),
            4,
            topology,
        );
        let data = || Data {
            ubos: vec![ubo.clone()],
            ..Data::default()
        };
        let want = run(&d, Middle::Geometry(gs.clone(), data()));
        let got = run(&d, captured_geometry(&d.vertex.spirv, &gs.spirv, data()));
        compare(
            &format!("GX {input} to quads, captured, lowered"),
            &want,
            &got,
        );
    }
}
