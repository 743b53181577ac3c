//! The render path on glslang-compiled shaders: a vertex-attribute triangle, and dksh
//! vertex + fragment pairs (vs_fullscreen_const + fs_tex2d_basic checked texel by texel;
//! vs_basic_mvp + fs_lighting_loops with per-stage uniform blocks).

use std::path::PathBuf;

use dmsh_testsupport::reference::{dksh, glsl};
use dmsh_vk::render::{attribute_format, RenderJob, Stage, VertexAttribute, VertexBuffer};
use dmsh_vk::{Bind, BufferSpec, ResourceRef, TexFormat, TextureSpec};

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn ready() -> bool {
    glsl::ready_with_vulkan()
}

fn stage(src: &str, st: &str, name: &str) -> Stage {
    let spirv = glsl::compile_source(src, st, glsl::DEKO3D_SHIFTS).unwrap();
    let reflection = glsl::reflect_shifted(&spirv, name);
    Stage { spirv, reflection }
}

fn dksh_src(name: &str) -> String {
    let p: PathBuf = dksh::corpus_dir().join(format!("{name}.glsl"));
    std::fs::read_to_string(p)
        .unwrap()
        .replace("gl_VertexID", "gl_VertexIndex")
        .replace("gl_InstanceID", "gl_InstanceIndex")
}

#[test]
fn triangle_with_vertex_colors() {
    if !ready() {
        return;
    }
    let vs = r#"#version 460
layout(location = 0) in vec2 pos;
layout(location = 1) in vec3 col;
layout(location = 0) out vec3 vcol;
void main() { vcol = col; gl_Position = vec4(pos, 0.0, 1.0); }"#;
    let fs = r#"#version 460
layout(location = 0) in vec3 vcol;
layout(location = 0) out vec4 o;
void main() { o = vec4(vcol, 1.0); }"#;
    // A red triangle covering the top-left half (Vulkan: +Y down).
    let verts = f32s(&[
        -1.0, -1.0, 1.0, 0.0, 0.0, 1.0, -1.0, 1.0, 0.0, 0.0, -1.0, 1.0, 1.0, 0.0, 0.0,
    ]);
    let job = RenderJob {
        vertex: stage(vs, "vert", "vertex"),
        fragment: stage(fs, "frag", "fragment"),
        width: 32,
        height: 32,
        clear: [0.0, 0.0, 1.0, 1.0],
        vertex_buffers: vec![VertexBuffer {
            data: verts,
            stride: 20,
            per_instance: false,
        }],
        attributes: vec![
            VertexAttribute {
                location: 0,
                binding: 0,
                format: attribute_format("rg32f").unwrap(),
                offset: 0,
            },
            VertexAttribute {
                location: 1,
                binding: 0,
                format: attribute_format("rgb32f").unwrap(),
                offset: 8,
            },
        ],
        vertex_count: 3,
        ..Default::default()
    };
    let out = dmsh_vk::render(&job).unwrap();
    let img = &out.targets[0];
    let px = |x: usize, y: usize| &img.data[(y * 32 + x) * 4..(y * 32 + x) * 4 + 4];
    assert_eq!(px(2, 2), &[255, 0, 0, 255], "inside the triangle");
    assert_eq!(px(30, 30), &[0, 0, 255, 255], "clear color");
    let png = img.to_png().unwrap();
    assert_eq!(&png[1..4], b"PNG");
    println!(
        "ok triangle: 32x32 on {} (pipeline {:.1} ms, draw {:.1} ms)",
        out.device, out.pipeline_ms, out.draw_ms
    );
}

#[test]
fn dksh_fullscreen_textured_pair() {
    if !ready() {
        return;
    }
    let vs = stage(&dksh_src("vs_fullscreen_const.vert"), "vert", "vertex");
    let fs = stage(&dksh_src("fs_tex2d_basic.frag"), "frag", "fragment");
    assert!(vs.reflection.resources.is_empty());
    let kinds: Vec<(String, u32)> = fs
        .reflection
        .resources
        .iter()
        .map(|r| (r.kind.clone(), r.index()))
        .collect();
    assert_eq!(kinds, vec![("cbuf".into(), 2), ("texture".into(), 0)]);
    let texels: Vec<u8> = (0..64 * 64 * 4).map(|i| (i * 7 % 251) as u8).collect();
    let job = RenderJob {
        vertex: vs,
        fragment: fs,
        width: 64,
        height: 64,
        vertex_count: 3,
        buffers: vec![BufferSpec {
            name: "Material".into(),
            size: 16,
            init: f32s(&[1.0, 0.5, 1.0, 1.0]),
        }],
        textures: vec![TextureSpec {
            name: "albedo".into(),
            width: 64,
            height: 64,
            format: TexFormat::Rgba8Unorm,
            data: texels.clone(),
            ..Default::default()
        }],
        fragment_binds: vec![
            Bind {
                resource: ResourceRef::Cbuf(2),
                buffer: 0,
            },
            Bind {
                resource: ResourceRef::Texture(0),
                buffer: 0,
            },
        ],
        ..Default::default()
    };
    let out = dmsh_vk::render(&job).unwrap();
    let img = &out.targets[0].data;
    for (i, (got, tex)) in img.iter().zip(&texels).enumerate() {
        let tint = [1.0, 0.5, 1.0, 1.0][i % 4];
        let want = (*tex as f32 * tint).round() as i32;
        assert!((*got as i32 - want).abs() <= 1, "byte {i}: {got} vs {want}");
    }
    println!(
        "ok vs_fullscreen_const + fs_tex2d_basic: 64x64 texel-exact (±1) on {}",
        out.device
    );
}

#[test]
fn dksh_mvp_lighting_pair_with_per_stage_uniforms() {
    if !ready() {
        return;
    }
    let vs = stage(&dksh_src("vs_basic_mvp.vert"), "vert", "vertex");
    let fs = stage(&dksh_src("fs_lighting_loops.frag"), "frag", "fragment");
    // Transforms: model = identity, viewProj = identity, normalMat = identity (std140 mat3 =
    // three vec4 columns).
    let id4: Vec<f32> = (0..16)
        .map(|i| if i % 5 == 0 { 1.0 } else { 0.0 })
        .collect();
    let mut transforms = [id4.clone(), id4].concat();
    transforms.extend([1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    // Lights: 16 × (position, color, attenuation), numLights, eyePos.
    let mut lights = vec![0f32; 16 * 12];
    lights[0..12].copy_from_slice(&[0.0, 0.0, -1.0, 0.0, 1.0, 0.9, 0.8, 1.0, 1.0, 0.0, 0.0, 0.0]);
    lights[12..24].copy_from_slice(&[0.5, 0.5, -0.5, 1.0, 0.2, 0.4, 1.0, 2.0, 1.0, 0.1, 0.1, 0.0]);
    let mut lbytes = f32s(&lights);
    lbytes.extend(2i32.to_le_bytes());
    lbytes.extend([0u8; 12]);
    lbytes.extend(f32s(&[0.0, 0.0, -2.0, 0.0]));
    let mat = f32s(&[0.8, 0.6, 0.4, 1.0, 0.5, 0.5, 0.5, 16.0]);
    // A quad as two triangles: pos, normal, uv.
    let mut v = Vec::new();
    for (x, y) in [
        (-0.8f32, -0.8f32),
        (0.8, -0.8),
        (0.8, 0.8),
        (-0.8, -0.8),
        (0.8, 0.8),
        (-0.8, 0.8),
    ] {
        v.extend([x, y, 0.5, x * 0.3, y * 0.3, -1.0, x, y]);
    }
    let fmt = |s| attribute_format(s).unwrap();
    let job = RenderJob {
        vertex: vs,
        fragment: fs,
        width: 48,
        height: 48,
        clear: [0.0, 0.0, 0.0, 1.0],
        vertex_buffers: vec![VertexBuffer {
            data: f32s(&v),
            stride: 32,
            per_instance: false,
        }],
        attributes: vec![
            VertexAttribute {
                location: 0,
                binding: 0,
                format: fmt("rgb32f"),
                offset: 0,
            },
            VertexAttribute {
                location: 1,
                binding: 0,
                format: fmt("rgb32f"),
                offset: 12,
            },
            VertexAttribute {
                location: 2,
                binding: 0,
                format: fmt("rg32f"),
                offset: 24,
            },
        ],
        vertex_count: 6,
        buffers: vec![
            BufferSpec {
                name: "Transforms".into(),
                size: 0,
                init: f32s(&transforms),
            },
            BufferSpec {
                name: "Lights".into(),
                size: 0,
                init: lbytes,
            },
            BufferSpec {
                name: "Mat".into(),
                size: 0,
                init: mat,
            },
        ],
        vertex_binds: vec![Bind {
            resource: ResourceRef::Cbuf(2),
            buffer: 0,
        }],
        fragment_binds: vec![
            Bind {
                resource: ResourceRef::Cbuf(3),
                buffer: 1,
            },
            Bind {
                resource: ResourceRef::Cbuf(4),
                buffer: 2,
            },
        ],
        ..Default::default()
    };
    let a = dmsh_vk::render(&job).unwrap();
    let b = dmsh_vk::render(&job).unwrap();
    assert_eq!(a.targets[0], b.targets[0], "deterministic");
    let img = &a.targets[0];
    let lit = img.data.chunks_exact(4).filter(|p| p[0] > 20).count();
    assert!(lit > 1000, "{lit} lit pixels");
    assert_eq!(
        &img.data[0..4],
        &[0, 0, 0, 255],
        "corner keeps the clear color"
    );
    let (same, worst) = a.targets[0].compare(&b.targets[0], 1);
    assert_eq!((same, worst), (1.0, 0));
    println!("ok vs_basic_mvp + fs_lighting_loops: {lit} lit pixels of 2304, deterministic");
}
