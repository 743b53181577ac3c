//! The lowered tessellation pipeline (issue 16, docs/exec-job.md "lowered_tessellation") on
//! lavapipe: tessellation control and evaluation shaders written by hand in GLSL, drawn once as
//! Vulkan tessellation stages and once lowered into the passes Metal runs (a capture vertex
//! shader, the control shader as a compute kernel writing control points, patch data and
//! Metal's half-float tessellation factors, dmsh-vk's host tessellator standing in for
//! Metal's fixed-function one, and the evaluation shader as a vertex shader over the domain
//! points), also written by hand in GLSL to the lowering contract. The two pictures must agree
//! within 1/255 on ≥ 99.9 % of pixels.
//!
//! Why the pictures can be compared at all: how a tessellator triangulates the rings between
//! an outer edge and the next inner ring is up to the implementation, so our tessellator and
//! lavapipe's need not make the same triangles. Every evaluation shader here maps the domain
//! onto a flat triangle or parallelogram with position and colour affine (linear) in the
//! tessellation coordinate, so any triangulation of the whole domain draws the same pixels
//! with the same colours; only which patches and which part of the domain are covered, the
//! control points, the patch varying and the winding (the fragment shader inverts back faces'
//! colours) show. `DMSH_VK_DUMP=DIR` writes both pictures of each comparison as PNG.

mod lowered_common;
use dmsh_reflect::lowered::Pass;
use dmsh_reflect::{Lowering, Tessellation as TessMode};
use dmsh_testsupport::reference::glsl;
use dmsh_vk::job::RenderJobFile;
use dmsh_vk::render::{
    attribute_format, LoweredTessellation, MiddleStage, RenderJob, RenderOutputs, Stage,
    Tessellation, VertexAttribute, VertexBuffer,
};
use dmsh_vk::tessellator::{self, Levels, Mode};
use dmsh_vk::{Bind, BufferSpec, ResourceRef};
use lowered_common::{assert_same, cbuf, draw, drawn, lowered_buffer, reflection, stage};

/// The application's vertex shader.
const VS: &str = r#"#version 460
layout(location = 0) in vec2 pos;
layout(location = 1) in vec3 col;
layout(location = 0) out vec3 vcol;
void main() { vcol = col; gl_Position = vec4(pos, 0.0, 1.0); }"#;

/// The tessellation control shader: three control points passed through, a colour per
/// control point, a patch varying, and levels from a uniform block: set 1 of two where the
/// first control point's green is at least ½, else set 0. (Not by `gl_PrimitiveID`'s parity:
/// with that, the 2 000-patch draw below differed from the lowered one on a third of its
/// pixels by exactly the patch varying's share, first seen between 1 000 and 1 400 patches,
/// which looks like lavapipe's direct pipeline numbering the patches of a large draw afresh
/// part-way through; not investigated further.)
const TCS: &str = r#"#version 460
layout(vertices = 3) out;
layout(std140, binding = 3) uniform Levels { vec4 outer[2]; vec4 inner[2]; } lv;
layout(location = 0) in vec3 vcol[];
layout(location = 0) out vec3 tcol[];
layout(location = 1) patch out vec4 pdata;
void main() {
    tcol[gl_InvocationID] = vcol[gl_InvocationID];
    gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position;
    if (gl_InvocationID == 0) {
        uint s = vcol[0].g >= 0.5 ? 1u : 0u;
        for (int k = 0; k < 4; k++) {
            gl_TessLevelOuter[k] = lv.outer[s][k];
        }
        gl_TessLevelInner[0] = lv.inner[s].x;
        gl_TessLevelInner[1] = lv.inner[s].y;
        pdata = vec4(0.2 + 0.6 * float(s), 0.5, 0.9 - 0.5 * float(s), 1.0);
    }
}"#;

/// The evaluation shader's body for `domain`: a flat triangle (barycentric) or parallelogram
/// (p0 + u (p1 − p0) + v (p2 − p0)), position and colour affine in the coordinate. `P(k)` and
/// `C(k)` are control point k's position and colour, `PATCH` the patch varying.
fn tes_body(domain: &str) -> &'static str {
    match domain {
        "triangles" => {
            r#"
    vec3 t = TESS_COORD;
    gl_Position = t.x * P(0) + t.y * P(1) + t.z * P(2);
    ecol = (t.x * C(0) + t.y * C(1) + t.z * C(2)) * 0.75 + PATCH.rgb * 0.25;"#
        }
        _ => {
            r#"
    vec2 t = TESS_COORD.xy;
    gl_Position = P(0) + t.x * (P(1) - P(0)) + t.y * (P(2) - P(0));
    ecol = (C(0) + t.x * (C(1) - C(0)) + t.y * (C(2) - C(0))) * 0.75 + PATCH.rgb * 0.25;"#
        }
    }
}

/// The direct evaluation shader.
fn tes(domain: &str) -> String {
    format!(
        r#"#version 460
layout({domain}, equal_spacing, ccw) in;
layout(location = 0) in vec3 tcol[];
layout(location = 1) patch in vec4 pdata;
layout(location = 0) out vec3 ecol;
#define TESS_COORD gl_TessCoord
#define P(k) gl_in[k].gl_Position
#define C(k) tcol[k]
#define PATCH pdata
void main() {{{}
}}"#,
        tes_body(domain)
    )
}

/// The fragment shader both pipelines share; back faces show inverted colours.
const FS: &str = r#"#version 460
layout(location = 0) in vec3 ecol;
layout(location = 0) out vec4 o;
void main() { o = vec4(gl_FrontFacing ? ecol : vec3(1.0) - ecol, 1.0); }"#;

/// Words per vertex / control-point record: varying location n at 4n..4n+3, gl_Position at
/// 128..131 (docs/geometry.md "Vertex records").
const RECORD_WORDS: u32 = 144;
/// Words per patch record: outer levels 0..3, inner 4..5, patch varying n at 8 + 4n.
const PATCH_WORDS: u32 = 24;

/// Pass 1: the vertex shader in capture form (role 0, binding 240).
const CAPTURE: &str = r#"#version 460
layout(location = 0) in vec2 pos;
layout(location = 1) in vec3 col;
layout(std430, set = 0, binding = 240) writeonly buffer VerticesIn { uint w[]; } vin;
const uint R = 144u;
void main() {
    vec3 vcol = col;
    vec4 position = vec4(pos, 0.0, 1.0);
    uint b = uint(gl_VertexIndex) * R;
    for (uint c = 0u; c < 3u; c++) {
        vin.w[b + c] = floatBitsToUint(vcol[c]);
    }
    vin.w[b + 3u] = 0u;
    for (uint c = 0u; c < 4u; c++) {
        vin.w[b + 128u + c] = floatBitsToUint(position[c]);
    }
    gl_Position = position;
    gl_PointSize = 1.0;
}"#;

/// Pass 2: the control shader as a kernel: workgroup = patch, invocation = output control
/// point. Writes the control-point records, the patch record and Metal's factors (halves via
/// packHalf2x16: triangles edge[3] + inside; quads edge[4] + inside[2]).
fn kernel(domain: &str) -> String {
    let factors = match domain {
        "triangles" => {
            r#"
        tf.w[pid * 2u] = packHalf2x16(outer.xy);
        tf.w[pid * 2u + 1u] = packHalf2x16(vec2(outer.z, inner.x));"#
        }
        _ => {
            r#"
        tf.w[pid * 3u] = packHalf2x16(outer.xy);
        tf.w[pid * 3u + 1u] = packHalf2x16(outer.zw);
        tf.w[pid * 3u + 2u] = packHalf2x16(inner);"#
        }
    };
    format!(
        r#"#version 460
layout(local_size_x = 3) in;
layout(std430, set = 0, binding = 240) readonly buffer VerticesIn {{ uint w[]; }} vin;
layout(std430, set = 0, binding = 243) readonly buffer Params {{ uint w[]; }} params;
layout(std430, set = 0, binding = 245) writeonly buffer ControlPoints {{ uint w[]; }} cpo;
layout(std430, set = 0, binding = 246) writeonly buffer PatchData {{ uint w[]; }} pd;
layout(std430, set = 0, binding = 247) writeonly buffer TessFactors {{ uint w[]; }} tf;
layout(std140, set = 0, binding = 3) uniform Levels {{ vec4 outer[2]; vec4 inner[2]; }} lv;
const uint R = 144u;
const uint PW = 24u;
void main() {{
    uint pid = gl_WorkGroupID.x;
    uint i = gl_LocalInvocationID.x;
    // params: [0] input control points, [1] patches, [2] first vertex, [3] output points.
    if (pid >= params.w[1]) {{
        return;
    }}
    uint src = (params.w[2] + pid * params.w[0] + i) * R;
    uint dst = (pid * params.w[3] + i) * R;
    // tcol[i] = vcol[i]; gl_out[i].gl_Position = gl_in[i].gl_Position.
    for (uint c = 0u; c < 4u; c++) {{
        cpo.w[dst + c] = vin.w[src + c];
        cpo.w[dst + 128u + c] = vin.w[src + 128u + c];
    }}
    if (i == 0u) {{
        // vcol[0].g: control point 0's varying 0, component 1.
        uint s = uintBitsToFloat(vin.w[(params.w[2] + pid * params.w[0]) * R + 1u]) >= 0.5 ? 1u : 0u;
        vec4 outer = lv.outer[s];
        vec2 inner = lv.inner[s].xy;
        vec4 pdata = vec4(0.2 + 0.6 * float(s), 0.5, 0.9 - 0.5 * float(s), 1.0);
        uint b = pid * PW;
        for (uint c = 0u; c < 4u; c++) {{
            pd.w[b + c] = floatBitsToUint(outer[c]);
            pd.w[b + 12u + c] = floatBitsToUint(pdata[c]);
        }}
        pd.w[b + 4u] = floatBitsToUint(inner.x);
        pd.w[b + 5u] = floatBitsToUint(inner.y);{factors}
    }}
}}"#
    )
}

/// Pass 4: the evaluation shader as a vertex shader over the domain points.
fn eval_draw(domain: &str) -> String {
    format!(
        r#"#version 460
layout(std430, set = 0, binding = 243) readonly buffer Params {{ uint w[]; }} params;
layout(std430, set = 0, binding = 245) readonly buffer ControlPoints {{ uint w[]; }} cpi;
layout(std430, set = 0, binding = 246) readonly buffer PatchData {{ uint w[]; }} pd;
layout(std430, set = 0, binding = 248) readonly buffer DomainPoints {{ uint w[]; }} dp;
layout(location = 0) out vec3 ecol;
const uint R = 144u;
const uint PW = 24u;
uint pid;
vec4 cp_position(uint k) {{
    uint b = (pid * params.w[3] + k) * R + 128u;
    return uintBitsToFloat(uvec4(cpi.w[b], cpi.w[b + 1u], cpi.w[b + 2u], cpi.w[b + 3u]));
}}
vec3 cp_colour(uint k) {{
    uint b = (pid * params.w[3] + k) * R;
    return uintBitsToFloat(uvec3(cpi.w[b], cpi.w[b + 1u], cpi.w[b + 2u]));
}}
#define P(k) cp_position(k)
#define C(k) cp_colour(k)
#define PATCH pdata
#define TESS_COORD coord
void main() {{
    uint d = uint(gl_VertexIndex) * 4u;
    pid = dp.w[d];
    vec3 coord = uintBitsToFloat(uvec3(dp.w[d + 1u], dp.w[d + 2u], dp.w[d + 3u]));
    uint b = pid * PW + 12u;
    vec4 pdata = uintBitsToFloat(uvec4(pd.w[b], pd.w[b + 1u], pd.w[b + 2u], pd.w[b + 3u]));{}
}}"#,
        tes_body(domain)
    )
}

/// The levels uniform (job buffer 0) on cbuf bank 3.
fn levels_bind() -> Vec<Bind> {
    vec![Bind {
        resource: ResourceRef::Cbuf(3),
        buffer: 0,
    }]
}

/// The lowering record of pass `pass` for `domain`.
fn lowering(pass: Pass, domain: &str) -> Lowering {
    Lowering {
        pass,
        record_bytes: RECORD_WORDS * 4,
        control_points: 3,
        factor_bytes: if domain == "triangles" { 8 } else { 12 },
        patch_bytes: PATCH_WORDS * 4,
        ..Default::default()
    }
}

/// The evaluation shader's mode record.
fn tess_mode(domain: &str) -> TessMode {
    TessMode {
        domain: domain.into(),
        spacing: "equal".into(),
        output: "triangles_ccw".into(),
        source: "given".into(),
    }
}

/// The shaders of both pipelines for one domain, compiled once.
struct Shaders {
    domain: &'static str,
    vertex: Stage,
    fragment: Stage,
    direct: Tessellation,
    lowered: LoweredTessellation,
}

fn shaders(domain: &'static str) -> Shaders {
    let mut tes_refl = reflection("tess_eval", Vec::new(), None);
    tes_refl.tessellation = Some(tess_mode(domain));
    let mut control = reflection(
        "compute",
        [0, 3, 5, 6, 7]
            .into_iter()
            .map(lowered_buffer)
            .chain([cbuf(3, 64)])
            .collect(),
        Some(lowering(Pass::TessControlKernel, domain)),
    );
    control.local_size = [3, 1, 1];
    let mut eval = reflection(
        "vertex",
        [3, 5, 6, 8].into_iter().map(lowered_buffer).collect(),
        Some(lowering(Pass::TessEvalDraw, domain)),
    );
    eval.tessellation = Some(tess_mode(domain));
    Shaders {
        domain,
        vertex: stage(VS, "vert", reflection("vertex", Vec::new(), None)),
        fragment: stage(FS, "frag", reflection("fragment", Vec::new(), None)),
        direct: Tessellation {
            control: MiddleStage {
                stage: stage(
                    TCS,
                    "tesc",
                    reflection("tess_control", vec![cbuf(3, 64)], None),
                ),
                binds: levels_bind(),
            },
            eval: MiddleStage {
                stage: stage(&tes(domain), "tese", tes_refl),
                binds: Vec::new(),
            },
            patch_points: 3,
        },
        lowered: LoweredTessellation {
            capture: stage(
                CAPTURE,
                "vert",
                reflection(
                    "vertex",
                    vec![lowered_buffer(0)],
                    Some(lowering(Pass::VertexCapture, domain)),
                ),
            ),
            control: MiddleStage {
                stage: stage(&kernel(domain), "comp", control),
                binds: levels_bind(),
            },
            eval: MiddleStage {
                stage: stage(&eval_draw(domain), "vert", eval),
                binds: Vec::new(),
            },
            patch_points: 3,
        },
    }
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Two level sets (outer[4], inner[2]) for even and odd patches.
type LevelSets = [([f32; 4], [f32; 2]); 2];

/// The uniform block's bytes for `sets`.
fn levels_bytes(sets: &LevelSets) -> Vec<u8> {
    let mut v = Vec::new();
    for (o, _) in sets {
        v.extend(f32s(o));
    }
    for (_, i) in sets {
        v.extend(f32s(&[i[0], i[1], 0.0, 0.0]));
    }
    v
}

/// The direct job: patches of 3 vertices (x, y, r, g, b each) through the tessellation
/// stages; [`lowered`] turns it into the lowered pipeline's job.
fn direct_job(sh: &Shaders, size: u32, vertices: &[f32], sets: &LevelSets) -> RenderJob {
    let attr = |location, format, offset| VertexAttribute {
        location,
        binding: 0,
        format: attribute_format(format).unwrap(),
        offset,
    };
    RenderJob {
        vertex: sh.vertex.clone(),
        fragment: sh.fragment.clone(),
        width: size,
        height: size,
        clear: [0.0, 0.0, 0.0, 1.0],
        vertex_buffers: vec![VertexBuffer {
            data: f32s(vertices),
            stride: 20,
            per_instance: false,
        }],
        attributes: vec![attr(0, "rg32f", 0), attr(1, "rgb32f", 8)],
        vertex_count: vertices.len() as u32 / 5,
        buffers: vec![BufferSpec {
            name: "levels".into(),
            size: 64,
            init: levels_bytes(sets),
        }],
        tessellation: Some(sh.direct.clone()),
        ..Default::default()
    }
}

/// `job` with the lowered pipeline in place of its vertex and tessellation stages.
fn lowered(sh: &Shaders, job: &RenderJob) -> RenderJob {
    RenderJob {
        vertex: Stage::default(),
        tessellation: None,
        lowered_tessellation: Some(sh.lowered.clone()),
        ..job.clone()
    }
}

/// Two patches that do not overlap (the first vertex's green picks level set 0, then 1).
fn two_patches() -> Vec<f32> {
    vec![
        -0.9, -0.9, 1.0, 0.0, 0.0, //
        0.1, -0.8, 0.0, 1.0, 0.0, //
        -0.6, 0.2, 0.0, 0.0, 1.0, //
        0.0, 0.1, 1.0, 1.0, 0.0, //
        0.9, 0.3, 0.0, 1.0, 1.0, //
        0.2, 0.9, 1.0, 0.0, 1.0, //
    ]
}

/// Domain points the host tessellator makes for [`two_patches`] (set 0, then set 1).
fn expected_points(sh: &Shaders, sets: &LevelSets, patches: usize) -> usize {
    let mode = Mode::from_reflection(&tess_mode(sh.domain)).unwrap();
    (0..patches)
        .map(|p| {
            let (outer, inner) = sets[p & 1];
            tessellator::tessellate(mode, Levels { outer, inner }).len()
        })
        .sum()
}

/// Draws both ways at `sets` and compares; checks the lowered buffers.
fn compare(sh: &Shaders, what: &str, sets: &LevelSets, min_drawn: usize) {
    let job = direct_job(sh, 96, &two_patches(), sets);
    let Some(direct) = draw(&job) else { return };
    let Some(low) = draw(&lowered(sh, &job)) else {
        return;
    };
    let (fraction, worst) = assert_same("lowered_tessellation", what, &direct, &low);
    let n = drawn(&direct);
    assert!(n >= min_drawn, "{what}: {n} pixels drawn");
    // The control kernel's factors decode to the levels; the domain points are all there.
    let factors = &low.geometry[7];
    let mode = Mode::from_reflection(&tess_mode(sh.domain)).unwrap();
    for (p, &(o, i)) in sets.iter().enumerate() {
        let l = Levels::from_factors(factors, mode.domain, p);
        let k = if sh.domain == "triangles" { 3 } else { 4 };
        // Halves: within their precision.
        let near = |a: f32, b: f32| (a - b).abs() <= b.abs() / 1024.0;
        assert!(
            (0..k).all(|c| near(l.outer[c], o[c])) && near(l.inner[0], i[0]),
            "{what}: patch {p}: {l:?}"
        );
    }
    let points = low.geometry[8].len() / 16;
    assert_eq!(points, expected_points(sh, sets, 2), "{what}");
    let passes: Vec<&str> = low.pass_ms.iter().map(|p| p.0.as_str()).collect();
    assert!(
        passes.is_empty()
            || passes
                == [
                    "vertex_capture",
                    "tess_control_kernel",
                    "tessellator_host",
                    "tess_eval_draw"
                ],
        "{passes:?}"
    );
    println!(
        "ok {what}: {:.3} % of {} pixels within 1/255 (largest difference {worst}), {n} drawn, \
         {points} domain points",
        fraction * 100.0,
        96 * 96
    );
}

#[test]
fn lowered_pipeline_draws_the_tessellation_stages_picture() {
    if glsl::vulkan_device().is_none() {
        return;
    }
    let sh = shaders("triangles");
    let z = 0.0;
    compare(
        &sh,
        "triangles 4 4 4 / 5 and 2 3 4 / 3",
        &[
            ([4.0, 4.0, 4.0, z], [5.0, z]),
            ([2.0, 3.0, 4.0, z], [3.0, z]),
        ],
        1500,
    );
    compare(
        &sh,
        "triangles 1 1 1 / 1 and 5 1 7 / 1",
        &[
            ([1.0, 1.0, 1.0, z], [1.0, z]),
            ([5.0, 1.0, 7.0, z], [1.0, z]),
        ],
        1500,
    );
    // Patch 0 culled (an outer level 0), patch 1 at non-integer levels (rounded up).
    compare(
        &sh,
        "triangles culled and 2.5 6.2 3 / 4.7",
        &[
            ([0.0, 4.0, 4.0, z], [4.0, z]),
            ([2.5, 6.2, 3.0, z], [4.7, z]),
        ],
        500,
    );
}

#[test]
fn lowered_pipeline_draws_the_quad_domain_picture() {
    if glsl::vulkan_device().is_none() {
        return;
    }
    let sh = shaders("quads");
    compare(
        &sh,
        "quads 3 4 3 4 / 2 3 and 4 4 4 4 / 5 5",
        &[([3.0, 4.0, 3.0, 4.0], [2.0, 3.0]), ([4.0; 4], [5.0, 5.0])],
        2000,
    );
    compare(
        &sh,
        "quads 1 1 1 1 / 1 1 and 2 7 3 1 / 1 4",
        &[([1.0; 4], [1.0; 2]), ([2.0, 7.0, 3.0, 1.0], [1.0, 4.0])],
        2000,
    );
}

#[test]
fn broken_lowerings_are_clear_errors() {
    if glsl::vulkan_device().is_none() {
        return;
    }
    let sh = shaders("triangles");
    let sets = [([4.0; 4], [4.0; 2]); 2];
    let base = lowered(&sh, &direct_job(&sh, 16, &two_patches(), &sets));
    let err = |job: &RenderJob| {
        let e = dmsh_vk::render(job).unwrap_err();
        assert!(matches!(e, dmsh_vk::Error::Job(_)), "{e}");
        e.to_string()
    };
    // Together with direct tessellation stages.
    let mut both = base.clone();
    both.tessellation = Some(sh.direct.clone());
    let e = err(&both);
    assert!(
        e.contains("tessellation stages") && e.contains("not both"),
        "{e}"
    );
    // A pass whose lowering record names another pass.
    let mut swapped = base.clone();
    let lt = swapped.lowered_tessellation.as_mut().unwrap();
    std::mem::swap(&mut lt.capture, &mut lt.eval.stage);
    let e = err(&swapped);
    assert!(
        e.contains("vertex_capture") && e.contains("tess_eval_draw"),
        "{e}"
    );
    // An evaluation stage without its mode.
    let mut modeless = base.clone();
    let lt = modeless.lowered_tessellation.as_mut().unwrap();
    lt.eval.stage.reflection.tessellation = None;
    let e = err(&modeless);
    assert!(e.contains("no tessellation record"), "{e}");
    // Quad factors for a triangle domain.
    let mut factors = base.clone();
    let lt = factors.lowered_tessellation.as_mut().unwrap();
    lt.control
        .stage
        .reflection
        .lowering
        .as_mut()
        .unwrap()
        .factor_bytes = 12;
    let e = err(&factors);
    assert!(e.contains("factor_bytes 12"), "{e}");
    // A kernel whose local size is not the control points.
    let mut wide = base.clone();
    let lt = wide.lowered_tessellation.as_mut().unwrap();
    lt.control.stage.reflection.local_size = [64, 1, 1];
    let e = err(&wide);
    assert!(e.contains("one invocation per output control point"), "{e}");
    let mut no_patch = base.clone();
    no_patch.lowered_tessellation.as_mut().unwrap().patch_points = 0;
    let e = err(&no_patch);
    assert!(e.contains("0 control points per patch"), "{e}");
}

/// A pseudo-random scene of `n` small patches.
fn many_patches(n: usize) -> Vec<f32> {
    let mut state = 0x2545_f491u32;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        (state >> 8) as f32 / (1u32 << 24) as f32
    };
    let mut v = Vec::with_capacity(n * 15);
    for _ in 0..n {
        let (cx, cy) = (next() * 1.7 - 0.95, next() * 1.7 - 0.95);
        for _ in 0..3 {
            v.extend([
                cx + next() * 0.2 - 0.1,
                cy + next() * 0.2 - 0.1,
                next(),
                next(),
                next(),
            ]);
        }
    }
    v
}

#[test]
fn lowered_pipeline_cost_on_a_large_draw() {
    if glsl::vulkan_device().is_none() {
        return;
    }
    let sh = shaders("triangles");
    let n = 2000;
    let z = 0.0;
    let sets = [
        ([4.0, 4.0, 4.0, z], [5.0, z]),
        ([2.0, 3.0, 4.0, z], [3.0, z]),
    ];
    let job = direct_job(&sh, 256, &many_patches(n), &sets);
    let low_job = lowered(&sh, &job);
    // A first draw of each compiles lavapipe's shaders; time the second.
    let (Some(_), Some(_)) = (draw(&job), draw(&low_job)) else {
        return;
    };
    let (Some(direct), Some(low)) = (draw(&job), draw(&low_job)) else {
        return;
    };
    let (fraction, worst) = assert_same("lowered_tessellation", "2 000 patches", &direct, &low);
    let gpu = |o: &RenderOutputs| {
        o.pass_ms
            .iter()
            .filter(|p| p.0 != "tessellator_host")
            .map(|p| p.1)
            .sum::<f64>()
    };
    println!(
        "{n} patches ({} domain points) on {}: {:.3} % within 1/255 (largest difference \
         {worst}); submission direct {:.2} ms, lowered {:.2} ms (two submissions and the host \
         tessellator), ratio {:.2}; GPU direct {:.2} ms, lowered {:.2} ms ({}), ratio {:.2}",
        low.geometry[8].len() / 16,
        direct.device,
        fraction * 100.0,
        direct.draw_ms,
        low.draw_ms,
        low.draw_ms / direct.draw_ms,
        gpu(&direct),
        gpu(&low),
        low.pass_ms
            .iter()
            .map(|(p, ms)| format!("{p} {ms:.2}"))
            .collect::<Vec<_>>()
            .join(", "),
        gpu(&low) / gpu(&direct),
    );
}

#[test]
fn job_file_draws_a_lowered_tessellation_pipeline() {
    if glsl::vulkan_device().is_none() {
        return;
    }
    let sh = shaders("triangles");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-vk-lowered-tess");
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, st: &Stage| {
        let bytes: Vec<u8> = st.spirv.iter().flat_map(|w| w.to_le_bytes()).collect();
        std::fs::write(dir.join(format!("{name}.spv")), bytes).unwrap();
        std::fs::write(dir.join(format!("{name}.json")), st.reflection.to_json()).unwrap();
    };
    let lt = &sh.lowered;
    write("capture", &lt.capture);
    write("control", &lt.control.stage);
    write("eval", &lt.eval.stage);
    write("fs", &sh.fragment);
    let z = 0.0;
    let sets = [
        ([4.0, 4.0, 4.0, z], [5.0, z]),
        ([2.0, 3.0, 4.0, z], [3.0, z]),
    ];
    let levels: Vec<String> = levels_bytes(&sets)
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]).to_string())
        .collect();
    let verts: Vec<String> = two_patches().iter().map(|x| x.to_string()).collect();
    let job = format!(
        r#"{{"format": "dmsh-render/1",
            "lowered_tessellation": {{"capture": {{"spv": "capture.spv"}},
                                      "control": {{"spv": "control.spv"}},
                                      "eval": {{"spv": "eval.spv", "reflection": "eval.json"}},
                                      "control_bind": [{{"cbuf": 3, "buffer": "levels"}}],
                                      "patch_points": 3}},
            "fragment": {{"spv": "fs.spv"}},
            "width": 96, "height": 96, "clear": [0, 0, 0, 1],
            "vertex_buffers": [{{"stride": 20, "f32": [{}]}}],
            "attributes": [{{"location": 0, "format": "rg32f"}},
                           {{"location": 1, "format": "rgb32f", "offset": 8}}],
            "vertex_count": 6,
            "buffers": {{"levels": {{"f32": [{}]}}}}}}"#,
        verts.join(", "),
        levels.join(", ")
    );
    std::fs::write(dir.join("job.json"), job).unwrap();
    let p = RenderJobFile::load(&dir.join("job.json"))
        .unwrap()
        .prepare(&dir, None)
        .unwrap();
    assert!(p.job.lowered_tessellation.is_some());
    let Some(from_file) = draw(&p.job) else {
        return;
    };
    let Some(direct) = draw(&direct_job(&sh, 96, &two_patches(), &sets)) else {
        return;
    };
    let (fraction, worst) = assert_same("lowered_tessellation", "job file", &direct, &from_file);
    println!(
        "ok job file: {:.3} % within 1/255 (largest difference {worst})",
        fraction * 100.0
    );
    let _ = std::fs::remove_dir_all(&dir);
}
