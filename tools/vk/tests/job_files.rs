//! The JSON job formats of docs/exec-job.md, end to end: files written next to a job,
//! `ExecJob` / `RenderJobFile` prepared from them, run, checked.

use std::path::PathBuf;

use dmsh_testsupport::reference::glsl;
use dmsh_vk::job::{self, ExecJob, RenderJobFile};

fn scratch(name: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("dmsh-vk-jobs-{name}"));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn ready() -> bool {
    glsl::ready_with_vulkan()
}

fn write_words(path: &std::path::Path, w: &[u32]) {
    let b: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(path, b).unwrap();
}

/// Writes a compute kernel next to a job: glslang's SPIR-V of the GLSL `src` as `k.spv`, the
/// reflection `json` as `k.json`.
fn write_kernel(dir: &std::path::Path, src: &str, json: &str) {
    let spirv = glsl::compile_source(src, "comp", &[]).unwrap();
    write_words(&dir.join("k.spv"), &spirv);
    std::fs::write(dir.join("k.json"), json).unwrap();
}

/// Writes `job` as `job.json` in `dir`, loads and prepares it.
fn prepare_job(dir: &std::path::Path, job: &str) -> job::Prepared {
    std::fs::write(dir.join("job.json"), job).unwrap();
    ExecJob::load(&dir.join("job.json"))
        .unwrap()
        .prepare(dir, None)
        .unwrap()
}

#[test]
fn compute_job_file_with_params_pointers_binds_and_textures() {
    if !ready() {
        return;
    }
    let dir = scratch("compute");
    // out[i] = in[i] * k + ubo.add + texel(i,0).r, with `out` reached by a pointer parameter.
    let src = r#"#version 460
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 4) in;
layout(buffer_reference, std430) buffer Words { uint w[]; };
layout(std140, binding = 0) uniform Params { Words p_out; uint k; };
layout(std140, binding = 3) uniform U { uint add; };
layout(std430, binding = 32) readonly buffer In { uint v[]; };
layout(binding = 64) uniform usampler2D tex;
void main() {
    uint i = gl_GlobalInvocationID.x;
    p_out.w[i] = v[i] * k + add + texelFetch(tex, ivec2(int(i), 0), 0).r;
}"#;
    write_kernel(
        &dir,
        src,
        r#"{"stage":"compute","local_size":[4,1,1],"uses_global_addresses":true,
            "resources":[{"kind":"cbuf","bank":0,"guest_offset":320,"size":12},
                         {"kind":"cbuf","bank":3,"size":16},
                         {"kind":"sbuf","bank":0},
                         {"kind":"texture","bank":0}]}"#,
    );
    let ins: Vec<u8> = (0..8u32).flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(dir.join("in.bin"), ins).unwrap();
    let want: Vec<u32> = (0..8u32).map(|i| i * 3 + 100 + i * 10).collect();
    let p = prepare_job(
        &dir,
        &format!(
            r#"{{"format":"dmsh-exec/1","spv":"k.spv","grid":[2,1,1],
                "buffers":{{"in":{{"file":"in.bin"}},"out":{{"size":32,"fill_u32":"0xdeadbeef"}},
                            "u":{{"u32":[100]}}}},
                "textures":{{"t":{{"width":8,"height":1,"format":"r32ui",
                                   "u32":[0,10,20,30,40,50,60,70]}}}},
                "params":{{"base":"0x140","hex":"0000000000000000 03000000"}},
                "pointers":[{{"offset":0,"target":"out"}}],
                "bind":[{{"cbuf":3,"buffer":"u"}},{{"sbuf":0,"buffer":"in"}},{{"texture":0,"buffer":"t"}}],
                "outputs":{{"out":"res/out.bin"}},
                "expected":{{"out":{{"u32":{want:?}}}}}}}"#
        ),
    );
    let out = dmsh_vk::run_compute(&p.job).unwrap();
    let bad = job::check(&p, &out);
    assert!(bad.is_empty(), "{bad:?}");
    assert_eq!(p.outputs[0].1, dir.join("res/out.bin"));
    // A wrong expectation is reported.
    let mut p2 = p.clone();
    p2.expected[0].1[0] ^= 1;
    assert_eq!(job::check(&p2, &out).len(), 1);
    println!("ok compute job file: params + pointer + cbuf + sbuf + texture");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compute_job_file_binds_sbuf_ubo() {
    if !ready() {
        return;
    }
    let dir = scratch("sbuf_ubo");
    // y is both the storage buffer at sbuf_ubo (uniform slot 0, offset 0x38)'s binding
    // (32 + (0x4000 | 0x38 / 4) = 16430, from the reflection table: no binding given) and the
    // 64-bit address at 0x38 of the uniform buffer, which the job's pointer writes there.
    let src = r#"#version 460
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 4) in;
layout(buffer_reference, std430) buffer Words { uint w[]; };
layout(std140, binding = 3) uniform U { uint a; uint b; uvec2 c; uvec4 p1; uvec4 p2; uvec2 p3; Words ptr; };
layout(std430, binding = 16430) buffer Y { uint y[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    y[i] = y[i] * 2u + a;
    ptr.w[i + 8u] = i + 1000u;
}"#;
    write_kernel(
        &dir,
        src,
        r#"{"stage":"compute","local_size":[4,1,1],"uses_global_addresses":true,
            "resources":[{"kind":"cbuf","bank":3,"size":64},
                         {"kind":"sbuf_ubo","ubo":0,"offset":56}]}"#,
    );
    let init: Vec<u32> = (0..16u32).map(|i| i * 7).collect();
    let want: Vec<u32> = (0..16u32)
        .map(|i| if i < 8 { i * 14 + 5 } else { i - 8 + 1000 })
        .collect();
    let p = prepare_job(
        &dir,
        &format!(
            r#"{{"format":"dmsh-exec/1","spv":"k.spv","grid":[2,1,1],
                "buffers":{{"y":{{"u32":{init:?}}},"ubo":{{"size":64,"u32":[5]}}}},
                "pointers":[{{"buffer":"ubo","offset":"0x38","target":"y"}}],
                "bind":[{{"cbuf":3,"buffer":"ubo"}},{{"sbuf_ubo":[0,"0x38"],"buffer":"y"}}],
                "outputs":{{}},
                "expected":{{"y":{{"u32":{want:?}}}}}}}"#
        ),
    );
    let out = dmsh_vk::run_compute(&p.job).unwrap();
    let bad = job::check(&p, &out);
    assert!(bad.is_empty(), "{bad:?}");
    let mut p2 = p.clone();
    p2.expected[0].1[0] ^= 1;
    assert_eq!(
        job::check(&p2, &out).len(),
        1,
        "a wrong expectation is reported"
    );
    // Binding it to another (uniform slot, offset) leaves the resource unbound: an error.
    let mut p3 = p.clone();
    for b in &mut p3.job.binds {
        if let dmsh_vk::ResourceRef::SbufUbo(_, o) = &mut b.resource {
            *o = 0x40;
        }
    }
    let e = dmsh_vk::run_compute(&p3.job).unwrap_err().to_string();
    assert!(e.contains("sbuf_ubo ubo 0 offset 0x38"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn job_file_errors_are_clear() {
    let dir = scratch("errors");
    let bad = ExecJob::parse(r#"{"spv":"x.spv","grid":[1,1,1],"bogus":1}"#);
    assert!(bad.unwrap_err().to_string().contains("bogus"));
    let j = ExecJob::parse(r#"{"spv":"missing.spv","grid":[1,1,1]}"#).unwrap();
    let e = j.prepare(&dir, None).unwrap_err().to_string();
    assert!(e.contains("missing.spv"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn render_job_file_writes_png_and_compares() {
    if !ready() {
        return;
    }
    let dir = scratch("render");
    let vs = r#"#version 460
layout(location = 0) in vec2 pos;
void main() { gl_Position = vec4(pos, 0.0, 1.0); }"#;
    let fs = r#"#version 460
layout(std140, binding = 2) uniform C { vec4 color; };
layout(location = 0) out vec4 o;
void main() { o = color; }"#;
    write_words(
        &dir.join("v.spv"),
        &glsl::compile_source(vs, "vert", &[]).unwrap(),
    );
    write_words(
        &dir.join("f.spv"),
        &glsl::compile_source(fs, "frag", &[]).unwrap(),
    );
    std::fs::write(dir.join("v.json"), r#"{"stage":"vertex"}"#).unwrap();
    std::fs::write(
        dir.join("f.json"),
        r#"{"stage":"fragment","resources":[{"kind":"cbuf","bank":2,"size":16}]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("r.json"),
        r#"{"vertex":{"spv":"v.spv"},"fragment":{"spv":"f.spv"},"width":16,"height":16,
            "vertex_buffers":[{"stride":8,"f32":[-1,-1, 3,-1, -1,3]}],
            "attributes":[{"location":0,"format":"rg32f"}],
            "vertex_count":3,"buffers":{"c":{"f32":[0,1,0,1]}},
            "fragment_bind":[{"cbuf":2,"buffer":"c"}],"out_png":"o.png"}"#,
    )
    .unwrap();
    let p = RenderJobFile::load(&dir.join("r.json"))
        .unwrap()
        .prepare(&dir, None)
        .unwrap();
    let out = dmsh_vk::render(&p.job).unwrap();
    let img = &out.targets[0];
    assert!(img.data.chunks_exact(4).all(|px| px == [0, 255, 0, 255]));
    let png = img.to_png().unwrap();
    let back = job::read_png(&png).unwrap();
    assert_eq!(back.data, img.data);
    assert_eq!(p.out_png.as_deref(), Some(dir.join("o.png").as_path()));
    println!("ok render job file: 16x16 green, PNG round trip");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Mutated job files (numbers swapped for extremes, bytes flipped) are errors or jobs, never
/// panics or huge allocations. Needs no device: only parsing and preparation run.
#[test]
fn mutated_job_files_never_panic() {
    let dir = scratch("mutate");
    write_words(&dir.join("k.spv"), &[0x0723_0203, 0x10000, 0, 1, 0]);
    std::fs::write(
        dir.join("k.json"),
        r#"{"stage":"compute","resources":[{"kind":"cbuf","bank":0,"guest_offset":320,"size":12}]}"#,
    )
    .unwrap();
    let base = r#"{"spv":"k.spv","grid":[2,1,1],
        "buffers":{"a":{"size":64,"fill_u32":"0x1"},"b":{"hex":"00ff"},"c":{"u32":[1,2,3]}},
        "textures":{"t":{"width":4,"height":4,"format":"r32ui","layers":2}},
        "params":{"base":"0x140","size":12,"hex":"0000000000000000 05000000"},
        "pointers":[{"offset":0,"target":"a","add":4}],
        "bind":[{"sbuf":0,"buffer":"a"},{"texture":1,"buffer":"t"}],
        "outputs":{"a":"o.bin"},"expected":{"a":{"u32":[1,1]}}}"#;
    let extremes = [
        "0",
        "4294967295",
        "18446744073709551615",
        "\"0xffffffffffffffff\"",
        "-1",
        "1e30",
    ];
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let digits: Vec<usize> = base
        .char_indices()
        .filter(|(_, c)| c.is_ascii_digit())
        .map(|(i, _)| i)
        .collect();
    let mut prepared = 0;
    for round in 0..3000 {
        let mut text = base.to_string();
        if round % 2 == 0 {
            let at = digits[next() as usize % digits.len()];
            let rep = extremes[next() as usize % extremes.len()];
            text.replace_range(at..at + 1, rep);
        } else {
            let mut b = text.into_bytes();
            let i = next() as usize % b.len();
            b[i] = (next() % 128) as u8;
            text = String::from_utf8_lossy(&b).into_owned();
        }
        if let Ok(j) = ExecJob::parse(&text) {
            if j.prepare(&dir, None).is_ok() {
                prepared += 1;
            }
        }
    }
    println!("{prepared} of 3000 mutated job files still prepared; none panicked");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Mip levels are uploaded level after level; a multisampled texture is filled with its first
/// texel.
#[test]
fn mips_and_multisampled_textures() {
    if !ready() {
        return;
    }
    let src = r#"#version 460
layout(local_size_x = 1) in;
layout(binding = 64) uniform usampler2D t;
layout(binding = 65) uniform usampler2DMS m;
layout(std430, binding = 32) buffer B { uint v[]; };
void main() {
    v[0] = texelFetch(t, ivec2(0, 0), 0).r;
    v[1] = texelFetch(t, ivec2(1, 1), 1).r;
    v[2] = texelFetch(t, ivec2(0, 0), 2).r;
    v[3] = uint(textureQueryLevels(t));
    v[4] = texelFetch(m, ivec2(3, 2), 3).g;
}"#;
    let spirv = glsl::compile_source(src, "comp", &[]).unwrap();
    let reflection = glsl::reflect_shifted(&spirv, "compute");
    // 4x4 level 0 = 10.., 2x2 level 1 = 100.., 1x1 level 2 = 1000.
    let mut data: Vec<u32> = (0..16).map(|i| 10 + i).collect();
    data.extend((0..4).map(|i| 100 + i));
    data.push(1000);
    let t = dmsh_vk::TextureSpec {
        name: "t".into(),
        width: 4,
        height: 4,
        format: dmsh_vk::TexFormat::R32Uint,
        data: data.iter().flat_map(|x| x.to_le_bytes()).collect(),
        mips: 3,
        ..Default::default()
    };
    let m = dmsh_vk::TextureSpec {
        name: "m".into(),
        width: 4,
        height: 4,
        format: dmsh_vk::TexFormat::Rgba8Uint,
        data: vec![7, 42, 9, 1],
        samples: 4,
        ..Default::default()
    };
    let job = dmsh_vk::ComputeJob {
        spirv,
        reflection,
        buffers: vec![dmsh_vk::BufferSpec {
            name: "b".into(),
            size: 32,
            init: vec![],
        }],
        textures: vec![t, m],
        binds: vec![
            dmsh_vk::Bind {
                resource: dmsh_vk::ResourceRef::Sbuf(0),
                buffer: 0,
            },
            dmsh_vk::Bind {
                resource: dmsh_vk::ResourceRef::Texture(0),
                buffer: 0,
            },
            dmsh_vk::Bind {
                resource: dmsh_vk::ResourceRef::Texture(1),
                buffer: 1,
            },
        ],
        grid: [1, 1, 1],
        ..Default::default()
    };
    let out = dmsh_vk::run_compute(&job).unwrap();
    assert_eq!(&out.u32s(0)[..5], &[10, 103, 1000, 3, 42]);
}

/// `one_d` textures: a 1D image and view (`usampler1D`) and a 1D array (`usampler1DArray`,
/// `layers` 2) from a job file; texelFetch reads the uploaded texels.
#[test]
fn one_d_textures_from_a_job_file() {
    if !ready() {
        return;
    }
    let dir = scratch("one_d");
    let src = r#"#version 460
layout(local_size_x = 4) in;
layout(std430, binding = 32) buffer Out { uint v[]; };
layout(binding = 64) uniform usampler1D t;
layout(binding = 65) uniform usampler1DArray a;
void main() {
    uint i = gl_GlobalInvocationID.x;
    v[i] = texelFetch(t, int(i), 0).r + texelFetch(a, ivec2(int(i), 1), 0).r;
}"#;
    write_kernel(
        &dir,
        src,
        r#"{"stage":"compute","local_size":[4,1,1],
            "resources":[{"kind":"sbuf","bank":0},{"kind":"texture","bank":0},
                         {"kind":"texture","bank":1}]}"#,
    );
    let p = prepare_job(
        &dir,
        r#"{"format":"dmsh-exec/1","spv":"k.spv","grid":[1,1,1],
            "buffers":{"out":{"size":16}},
            "textures":{"t":{"width":4,"height":1,"one_d":true,"format":"r32ui","u32":[1,2,3,4]},
                        "a":{"width":4,"height":1,"layers":2,"one_d":true,"format":"r32ui",
                             "u32":[10,20,30,40,100,200,300,400]}},
            "bind":[{"sbuf":0,"buffer":"out"},{"texture":0,"buffer":"t"},{"texture":1,"buffer":"a"}],
            "expected":{"out":{"u32":[101,202,303,404]}}}"#,
    );
    assert!(p.job.textures.iter().all(|t| t.one_d));
    let out = dmsh_vk::run_compute(&p.job).unwrap();
    let bad = job::check(&p, &out);
    assert!(bad.is_empty(), "{bad:?}");
    // A 1D image has height 1.
    let mut p2 = p.clone();
    p2.job.textures[0].height = 2;
    let e = dmsh_vk::run_compute(&p2.job).unwrap_err().to_string();
    assert!(e.contains("a 1D image has height 1"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
