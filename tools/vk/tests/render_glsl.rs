//! The render path on glslang-compiled shaders: a vertex-attribute triangle, and dksh
//! vertex + fragment pairs (vs_fullscreen_const + fs_tex2d_basic checked texel by texel;
//! vs_basic_mvp + fs_lighting_loops with per-stage uniform blocks).

use std::path::PathBuf;

use dmsh_testsupport::reference::{dksh, dksh_render, glsl};
use dmsh_vk::render::{attribute_format, RenderJob, Stage, VertexAttribute, VertexBuffer};
use dmsh_vk::{Bind, BufferSpec, ResourceRef, TexFormat, TextureSpec};

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Vertex attribute `location` of vertex buffer 0: `format` as the job files name it, at
/// byte `offset` of a vertex.
fn attr(location: u32, format: &str, offset: u32) -> VertexAttribute {
    VertexAttribute {
        location,
        binding: 0,
        format: attribute_format(format).unwrap(),
        offset,
    }
}

/// Binds of (resource, job buffer or texture index).
fn binds(list: &[(ResourceRef, usize)]) -> Vec<Bind> {
    list.iter()
        .map(|&(resource, buffer)| Bind { resource, buffer })
        .collect()
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

/// glslang's stages of the corpus GLSL pair `vs` + `fs` (e.g. `vs_basic_mvp.vert`), when
/// glslang and a Vulkan device are there.
fn dksh_pair(vs: &str, fs: &str) -> Option<(Stage, Stage)> {
    if !ready() {
        return None;
    }
    Some((
        stage(&dksh_src(vs), "vert", "vertex"),
        stage(&dksh_src(fs), "frag", "fragment"),
    ))
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
        attributes: vec![attr(0, "rg32f", 0), attr(1, "rgb32f", 8)],
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
    let Some((vs, fs)) = dksh_pair("vs_fullscreen_const.vert", "fs_tex2d_basic.frag") else {
        return;
    };
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
        fragment_binds: binds(&[(ResourceRef::Cbuf(2), 0), (ResourceRef::Texture(0), 0)]),
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
    let Some((vs, fs)) = dksh_pair("vs_basic_mvp.vert", "fs_lighting_loops.frag") else {
        return;
    };
    // Transforms: model = viewProj = normalMat = identity; two lights (the dksh render case's
    // uniform blocks).
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
            attr(0, "rgb32f", 0),
            attr(1, "rgb32f", 12),
            attr(2, "rg32f", 24),
        ],
        vertex_count: 6,
        buffers: vec![
            BufferSpec {
                name: "Transforms".into(),
                size: 0,
                init: dksh_render::mvp_transforms(),
            },
            BufferSpec {
                name: "Lights".into(),
                size: 0,
                init: dksh_render::lights(),
            },
            BufferSpec {
                name: "Mat".into(),
                size: 0,
                init: mat,
            },
        ],
        vertex_binds: binds(&[(ResourceRef::Cbuf(2), 0)]),
        fragment_binds: binds(&[(ResourceRef::Cbuf(3), 1), (ResourceRef::Cbuf(4), 2)]),
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
