//! The lowered geometry pipeline (issue 16, docs/geometry.md) on lavapipe: a geometry shader
//! written by hand in GLSL, drawn once as a Vulkan geometry stage and once lowered into the
//! three passes Metal can run (a capture vertex shader, the geometry shader as a compute
//! kernel, a pass-through draw), also written by hand in GLSL to the lowering contract. The
//! two pictures must agree within 1/255 on ≥ 99.9 % of pixels. `DMSH_VK_DUMP=DIR` writes
//! both pictures of each comparison as PNG.

mod lowered_common;
use dmsh_reflect::lowered::Pass;
use dmsh_reflect::Lowering;
use dmsh_testsupport::reference::glsl;
use dmsh_vk::job::RenderJobFile;
use dmsh_vk::render::{
    attribute_format, LoweredGeometry, MiddleStage, RenderJob, RenderOutputs, Stage, Topology,
    VertexAttribute, VertexBuffer,
};
use dmsh_vk::{Bind, BufferSpec, Resource, ResourceRef};
use lowered_common::{assert_same, cbuf, draw, drawn, lowered_buffer, reflection, stage};

/// The application's vertex shader.
const VS: &str = r#"#version 460
layout(location = 0) in vec2 pos;
layout(location = 1) in vec3 col;
layout(location = 0) out vec3 vcol;
void main() { vcol = col; gl_Position = vec4(pos, 0.0, 1.0); }"#;

/// The geometry shader: each triangle, then a shifted, recoloured copy (a uniform block
/// gives the shift), as two strips.
const GS: &str = r#"#version 460
layout(triangles) in;
layout(triangle_strip, max_vertices = 6) out;
layout(std140, binding = 2) uniform Shift { vec4 shift; };
layout(location = 0) in vec3 vcol[];
layout(location = 0) out vec3 gcol;
void main() {
    for (int i = 0; i < 3; i++) {
        gcol = vcol[i];
        gl_Position = gl_in[i].gl_Position;
        EmitVertex();
    }
    EndPrimitive();
    for (int i = 0; i < 3; i++) {
        gcol = vcol[i].zxy * 0.75 + 0.125;
        gl_Position = gl_in[i].gl_Position + shift;
        EmitVertex();
    }
    EndPrimitive();
}"#;

/// The fragment shader both pipelines share.
const FS: &str = r#"#version 460
layout(location = 0) in vec3 gcol;
layout(location = 0) out vec4 o;
void main() { o = vec4(gcol, 1.0); }"#;

/// Words per vertex record: varying location n at words 4n..4n+3, gl_Position at 128..131.
const RECORD_WORDS: u32 = 132;
/// The geometry shader's max_vertices.
const MAX_VERTICES: u32 = 6;
/// Index slots per invocation: a strip of max_vertices vertices makes max_vertices − 2
/// triangles.
const INDICES_PER_INVOCATION: u32 = (MAX_VERTICES - 2) * 3;
/// The kernel's workgroup size.
const LOCAL_SIZE: u32 = 64;

/// Pass 1: the vertex shader in capture form, writing its outputs as vertex record
/// gl_VertexIndex of vertices_in (role 0, binding 240).
const CAPTURE: &str = r#"#version 460
layout(location = 0) in vec2 pos;
layout(location = 1) in vec3 col;
layout(std430, set = 0, binding = 240) writeonly buffer VerticesIn { uint w[]; } vin;
const uint R = 132u;
void main() {
    vec3 vcol = col;
    vec4 position = vec4(pos, 0.0, 1.0);
    uint b = uint(gl_VertexIndex) * R;
    vin.w[b + 0u] = floatBitsToUint(vcol.x);
    vin.w[b + 1u] = floatBitsToUint(vcol.y);
    vin.w[b + 2u] = floatBitsToUint(vcol.z);
    vin.w[b + 3u] = 0u;
    for (uint c = 0u; c < 4u; c++) {
        vin.w[b + 128u + c] = floatBitsToUint(position[c]);
    }
}"#;

/// Pass 2: the geometry shader as a kernel, one invocation per input triangle. EmitVertex
/// writes vertex record 1 + gid × max_vertices + k of vertices_out; a strip's triangle j is
/// written to the index list as a list triangle (even j: a, b, c; odd j: a, c, b); unused
/// index slots are 0, the null vertex (record 0, gl_Position (2, 2, 2, 1), written by
/// gid 0).
const KERNEL: &str = r#"#version 460
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 240) readonly buffer VerticesIn { uint w[]; } vin;
layout(std430, set = 0, binding = 241) writeonly buffer VerticesOut { uint w[]; } vout;
layout(std430, set = 0, binding = 242) writeonly buffer Indices { uint w[]; } idx;
layout(std430, set = 0, binding = 243) readonly buffer Params { uint w[]; } params;
layout(std430, set = 0, binding = 244) readonly buffer IndexSource { uint w[]; } isrc;
layout(std140, set = 0, binding = 2) uniform Shift { vec4 shift; };

const uint R = 132u;
const uint MAX_VERTICES = 6u;
const uint INDICES = 12u;
const uint INVOCATIONS = 1u;

uint gid;
uint emitted = 0u;
uint strip_start = 0u;
uint triangles = 0u;
// The geometry shader's outputs.
vec3 gcol;
vec4 position;

void write_record(uint rec, vec3 col, vec4 p) {
    uint b = rec * R;
    for (uint c = 0u; c < 3u; c++) {
        vout.w[b + c] = floatBitsToUint(col[c]);
    }
    vout.w[b + 3u] = 0u;
    for (uint c = 0u; c < 4u; c++) {
        vout.w[b + 128u + c] = floatBitsToUint(p[c]);
    }
}

void triangle(uint a, uint b, uint c) {
    uint o = gid * INDICES + triangles * 3u;
    idx.w[o] = a;
    idx.w[o + 1u] = b;
    idx.w[o + 2u] = c;
    triangles++;
}

void emit_vertex() {
    if (emitted >= MAX_VERTICES) {
        return;
    }
    uint rec = 1u + gid * MAX_VERTICES + emitted;
    write_record(rec, gcol, position);
    uint m = emitted - strip_start;
    if (m >= 2u) {
        if (((m - 2u) & 1u) == 0u) {
            triangle(rec - 2u, rec - 1u, rec);
        } else {
            triangle(rec - 2u, rec, rec - 1u);
        }
    }
    emitted++;
}

void end_primitive() {
    strip_start = emitted;
}

// The vertex index of vertex k of input triangle p (params: [0] topology, [2] first vertex,
// [3] index size, [4] first index, [5] base vertex).
uint vertex_index(uint p, uint k) {
    uint v;
    if (params.w[0] == 4u) {
        // VK_PRIMITIVE_TOPOLOGY_TRIANGLE_STRIP: {i, i + 1 + i % 2, i + 2 - i % 2}.
        uint odd = p & 1u;
        v = p + (k == 0u ? 0u : (k == 1u ? 1u + odd : 2u - odd));
    } else {
        v = p * 3u + k;
    }
    uint size = params.w[3];
    uint i = params.w[4] + v;
    if (size == 4u) {
        return isrc.w[i] + params.w[5];
    }
    if (size == 2u) {
        return ((isrc.w[i >> 1u] >> ((i & 1u) * 16u)) & 0xffffu) + params.w[5];
    }
    return params.w[2] + v;
}

vec3 in_col(uint v) {
    uint b = v * R;
    return uintBitsToFloat(uvec3(vin.w[b], vin.w[b + 1u], vin.w[b + 2u]));
}

vec4 in_position(uint v) {
    uint b = v * R + 128u;
    return uintBitsToFloat(uvec4(vin.w[b], vin.w[b + 1u], vin.w[b + 2u], vin.w[b + 3u]));
}

void main() {
    gid = gl_GlobalInvocationID.x;
    if (gid == 0u) {
        write_record(0u, vec3(0.0), vec4(2.0, 2.0, 2.0, 1.0));
    }
    if (gid >= params.w[1] * INVOCATIONS) {
        return;
    }
    uint p = gid / INVOCATIONS;
    uint v[3] = uint[3](vertex_index(p, 0u), vertex_index(p, 1u), vertex_index(p, 2u));
    // The geometry shader's body.
    for (int i = 0; i < 3; i++) {
        gcol = in_col(v[i]);
        position = in_position(v[i]);
        emit_vertex();
    }
    end_primitive();
    for (int i = 0; i < 3; i++) {
        gcol = in_col(v[i]).zxy * 0.75 + 0.125;
        position = in_position(v[i]) + shift;
        emit_vertex();
    }
    end_primitive();
    // Unused index slots: the null vertex.
    for (uint t = triangles; t < INDICES / 3u; t++) {
        triangle(0u, 0u, 0u);
    }
}"#;

/// Pass 3: the pass-through vertex shader drawing record gl_VertexIndex of vertices_out
/// (role 1, binding 241).
const DRAW: &str = r#"#version 460
layout(std430, set = 0, binding = 241) readonly buffer VerticesOut { uint w[]; } vout;
layout(location = 0) out vec3 gcol;
const uint R = 132u;
void main() {
    uint b = uint(gl_VertexIndex) * R;
    gcol = uintBitsToFloat(uvec3(vout.w[b], vout.w[b + 1u], vout.w[b + 2u]));
    gl_Position = uintBitsToFloat(
        uvec4(vout.w[b + 128u], vout.w[b + 129u], vout.w[b + 130u], vout.w[b + 131u]));
}"#;

/// The lowering record of pass `pass` (the kernel's facts on every pass, as a translator
/// writes them).
fn lowering(pass: Pass) -> Lowering {
    Lowering {
        pass,
        record_bytes: RECORD_WORDS * 4,
        input_vertices: 3,
        invocations: 1,
        max_vertices: MAX_VERTICES,
        output: "triangles".into(),
        indices_per_invocation: INDICES_PER_INVOCATION,
        topologies: vec!["triangle_list".into(), "triangle_strip".into()],
        local_size: LOCAL_SIZE,
        primitive_id_location: None,
        ..Default::default()
    }
}

/// The shaders of both pipelines, compiled once.
struct Shaders {
    vertex: Stage,
    geometry: Stage,
    fragment: Stage,
    lowered: LoweredGeometry,
}

fn shaders() -> Shaders {
    let capture = reflection(
        "vertex",
        vec![lowered_buffer(0)],
        Some(lowering(Pass::VertexCapture)),
    );
    let mut kernel_resources: Vec<Resource> = (0..5).map(lowered_buffer).collect();
    kernel_resources.push(cbuf(2, 16));
    let mut kernel = reflection(
        "compute",
        kernel_resources,
        Some(lowering(Pass::GeometryKernel)),
    );
    kernel.local_size = [LOCAL_SIZE, 1, 1];
    let draw = reflection(
        "vertex",
        vec![lowered_buffer(1)],
        Some(lowering(Pass::GeometryDraw)),
    );
    Shaders {
        vertex: stage(VS, "vert", reflection("vertex", Vec::new(), None)),
        geometry: stage(GS, "geom", reflection("geometry", vec![cbuf(2, 16)], None)),
        fragment: stage(FS, "frag", reflection("fragment", Vec::new(), None)),
        lowered: LoweredGeometry {
            capture: stage(CAPTURE, "vert", capture),
            kernel: MiddleStage {
                stage: stage(KERNEL, "comp", kernel),
                binds: shift_bind(),
            },
            draw: stage(DRAW, "vert", draw),
        },
    }
}

/// The shift uniform (job buffer 0) on cbuf bank 2.
fn shift_bind() -> Vec<Bind> {
    vec![Bind {
        resource: ResourceRef::Cbuf(2),
        buffer: 0,
    }]
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The job drawing `vertices` (x, y, r, g, b each) as `topology` through the geometry stage;
/// [`lowered`] turns it into the lowered pipeline's job.
fn direct_job(sh: &Shaders, size: u32, vertices: &[f32], topology: Topology) -> RenderJob {
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
        topology,
        buffers: vec![BufferSpec {
            name: "shift".into(),
            size: 16,
            init: f32s(&[0.3, 0.2, 0.0, 0.0]),
        }],
        geometry: Some(MiddleStage {
            stage: sh.geometry.clone(),
            binds: shift_bind(),
        }),
        ..Default::default()
    }
}

/// `job` with the lowered pipeline in place of its vertex and geometry stages.
fn lowered(sh: &Shaders, job: &RenderJob) -> RenderJob {
    RenderJob {
        vertex: Stage::default(),
        geometry: None,
        lowered_geometry: Some(sh.lowered.clone()),
        ..job.clone()
    }
}

/// A few overlapping triangles (x, y, r, g, b per vertex).
fn small_scene() -> Vec<f32> {
    vec![
        -0.9, -0.9, 1.0, 0.0, 0.0, //
        0.2, -0.8, 0.0, 1.0, 0.0, //
        -0.7, 0.3, 0.0, 0.0, 1.0, //
        -0.2, -0.1, 1.0, 1.0, 0.0, //
        0.6, 0.0, 0.0, 1.0, 1.0, //
        0.0, 0.6, 1.0, 0.0, 1.0, //
        0.1, 0.4, 0.9, 0.5, 0.1, //
        0.7, 0.5, 0.2, 0.6, 0.9, //
        0.3, 0.7, 0.4, 0.4, 0.4, //
    ]
}

#[test]
fn lowered_pipeline_draws_the_geometry_stage_picture() {
    if glsl::vulkan_device().is_none() {
        return;
    }
    let sh = shaders();
    for topology in [Topology::TriangleList, Topology::TriangleStrip] {
        let job = direct_job(&sh, 64, &small_scene(), topology);
        let Some(direct) = draw(&job) else { return };
        let Some(low) = draw(&lowered(&sh, &job)) else {
            return;
        };
        let (fraction, worst) = assert_same("lowered_geometry", topology.name(), &direct, &low);
        let n = drawn(&direct);
        assert!(n > 800, "{}: {n} pixels drawn", topology.name());
        // The kernel's outputs: the null vertex, then the first triangle's six vertices.
        let words = |b: &[u8], i: usize| {
            f32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
        };
        let out = &low.geometry[1];
        assert_eq!(
            (128..132).map(|i| words(out, i)).collect::<Vec<_>>(),
            [2.0, 2.0, 2.0, 1.0]
        );
        let r = RECORD_WORDS as usize;
        assert_eq!((words(out, r + 128), words(out, r + 129)), (-0.9, -0.9));
        let idx: Vec<u32> = low.geometry[2][..48]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        assert_eq!(idx, [1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0]);
        let passes: Vec<&str> = low.pass_ms.iter().map(|p| p.0.as_str()).collect();
        assert!(
            passes.is_empty() || passes == ["vertex_capture", "geometry_kernel", "geometry_draw"],
            "{passes:?}"
        );
        println!(
            "ok {}: {:.3} % of 4096 pixels within 1/255 (largest difference {worst}), {n} drawn",
            topology.name(),
            fraction * 100.0
        );
    }
}

#[test]
fn unserved_topologies_and_broken_lowerings_are_clear_errors() {
    if glsl::vulkan_device().is_none() {
        return;
    }
    let sh = shaders();
    let job = lowered(
        &sh,
        &direct_job(&sh, 16, &small_scene(), Topology::TriangleFan),
    );
    let e = dmsh_vk::render(&job).unwrap_err();
    assert!(matches!(e, dmsh_vk::Error::Job(_)), "{e}");
    let e = e.to_string();
    assert!(
        e.contains("triangle_fan") && e.contains("triangle_list, triangle_strip"),
        "{e}"
    );
    println!("unserved topology: {e}");
    // Both a geometry stage and a lowered pipeline.
    let mut both = lowered(
        &sh,
        &direct_job(&sh, 16, &small_scene(), Topology::TriangleList),
    );
    both.geometry = direct_job(&sh, 16, &[], Topology::TriangleList).geometry;
    let e = dmsh_vk::render(&both).unwrap_err().to_string();
    assert!(e.contains("not both"), "{e}");
    // A pass whose lowering record names another pass.
    let mut swapped = lowered(
        &sh,
        &direct_job(&sh, 16, &small_scene(), Topology::TriangleList),
    );
    let lg = swapped.lowered_geometry.as_mut().unwrap();
    std::mem::swap(&mut lg.capture, &mut lg.draw);
    let e = dmsh_vk::render(&swapped).unwrap_err().to_string();
    assert!(
        e.contains("vertex_capture") && e.contains("geometry_draw"),
        "{e}"
    );
    // A kernel without max_vertices.
    let mut empty = lowered(
        &sh,
        &direct_job(&sh, 16, &small_scene(), Topology::TriangleList),
    );
    let k = &mut empty
        .lowered_geometry
        .as_mut()
        .unwrap()
        .kernel
        .stage
        .reflection;
    k.lowering.as_mut().unwrap().max_vertices = 0;
    let e = dmsh_vk::render(&empty).unwrap_err().to_string();
    assert!(e.contains("max_vertices is 0"), "{e}");
    // Geometry buffers outside a lowered pipeline.
    let mut stray = direct_job(&sh, 16, &small_scene(), Topology::TriangleList);
    stray.vertex.reflection.resources.push(lowered_buffer(0));
    let e = dmsh_vk::render(&stray).unwrap_err().to_string();
    assert!(e.contains("outside a lowered geometry pipeline"), "{e}");
}

/// A pseudo-random scene of `n` small triangles.
fn many_triangles(n: usize) -> Vec<f32> {
    let mut state = 0x2545_f491u32;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        (state >> 8) as f32 / (1u32 << 24) as f32
    };
    let mut v = Vec::with_capacity(n * 15);
    for _ in 0..n {
        let (cx, cy) = (next() * 1.6 - 1.1, next() * 1.6 - 1.1);
        for _ in 0..3 {
            v.extend([
                cx + next() * 0.12,
                cy + next() * 0.12,
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
    let sh = shaders();
    let n = 20_000;
    let job = direct_job(&sh, 256, &many_triangles(n), Topology::TriangleList);
    let low_job = lowered(&sh, &job);
    // A first draw of each compiles lavapipe's shaders; time the second.
    let (Some(_), Some(_)) = (draw(&job), draw(&low_job)) else {
        return;
    };
    let (Some(direct), Some(low)) = (draw(&job), draw(&low_job)) else {
        return;
    };
    let (fraction, worst) = assert_same("lowered_geometry", "20 000 triangles", &direct, &low);
    let gpu = |o: &RenderOutputs| o.pass_ms.iter().map(|p| p.1).sum::<f64>();
    println!(
        "{n} triangles ({} out) on {}: {:.3} % within 1/255 (largest difference {worst}); \
         submission direct {:.2} ms, lowered {:.2} ms, ratio {:.2}; GPU direct {:.2} ms, \
         lowered {:.2} ms ({}), ratio {:.2}; lowered cost per input primitive {:.3} µs",
        2 * n,
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
        gpu(&low) * 1e3 / n as f64,
    );
}

#[test]
fn job_file_draws_a_lowered_pipeline() {
    if glsl::vulkan_device().is_none() {
        return;
    }
    let sh = shaders();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-vk-lowered");
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, st: &Stage| {
        let bytes: Vec<u8> = st.spirv.iter().flat_map(|w| w.to_le_bytes()).collect();
        std::fs::write(dir.join(format!("{name}.spv")), bytes).unwrap();
        std::fs::write(dir.join(format!("{name}.json")), st.reflection.to_json()).unwrap();
    };
    let lg = &sh.lowered;
    write("capture", &lg.capture);
    write("kernel", &lg.kernel.stage);
    write("draw", &lg.draw);
    write("fs", &sh.fragment);
    let verts: Vec<String> = small_scene().iter().map(|x| x.to_string()).collect();
    let job = format!(
        r#"{{"format": "dmsh-render/1",
            "lowered_geometry": {{"capture": {{"spv": "capture.spv"}},
                                  "kernel": {{"spv": "kernel.spv"}},
                                  "draw": {{"spv": "draw.spv", "reflection": "draw.json"}},
                                  "kernel_bind": [{{"cbuf": 2, "buffer": "shift"}}]}},
            "fragment": {{"spv": "fs.spv"}},
            "width": 64, "height": 64, "clear": [0, 0, 0, 1],
            "vertex_buffers": [{{"stride": 20, "f32": [{}]}}],
            "attributes": [{{"location": 0, "format": "rg32f"}},
                           {{"location": 1, "format": "rgb32f", "offset": 8}}],
            "vertex_count": 9, "topology": "triangle_strip",
            "buffers": {{"shift": {{"f32": [0.3, 0.2, 0, 0]}}}}}}"#,
        verts.join(", ")
    );
    std::fs::write(dir.join("job.json"), job).unwrap();
    let p = RenderJobFile::load(&dir.join("job.json"))
        .unwrap()
        .prepare(&dir, None)
        .unwrap();
    assert!(p.job.lowered_geometry.is_some());
    let Some(from_file) = draw(&p.job) else {
        return;
    };
    let Some(direct) = draw(&direct_job(
        &sh,
        64,
        &small_scene(),
        Topology::TriangleStrip,
    )) else {
        return;
    };
    let (fraction, worst) = assert_same("lowered_geometry", "job file", &direct, &from_file);
    println!(
        "ok job file: {:.3} % within 1/255 (largest difference {worst})",
        fraction * 100.0
    );
    // Neither a vertex shader nor a lowered pipeline.
    let bare = r#"{"fragment": {"spv": "fs.spv"}, "width": 8, "height": 8, "vertex_count": 3}"#;
    std::fs::write(dir.join("bare.json"), bare).unwrap();
    let e = RenderJobFile::load(&dir.join("bare.json"))
        .unwrap()
        .prepare(&dir, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("needs a vertex shader"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
