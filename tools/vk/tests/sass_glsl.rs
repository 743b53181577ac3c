//! Proves the runner against the sass corpus' expected outputs without our translator:
//! GLSL re-implementations of a few PTX kernels (compiled by glslang) read their pointer
//! parameters from the parameter uniform buffer exactly as the CUDA ABI lays them out
//! (docs/reflection.md, cbuf bank 0 from guest offset 0x140), run through `IoJson::job` +
//! `run_compute`, and must match `expected` bit for bit.

use std::path::{Path, PathBuf};

use dmsh_testsupport::reference::glsl;
use dmsh_vk::io_json::{IoJson, SM5X_PARAM_BASE};
use dmsh_vk::{Error, Reflection};

fn sass(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../tests/corpus/sass/{name}.io.json"))
}

const HEADER: &str = r#"#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words { uint w[]; };
"#;

const INT_ADDSUB: &str = r#"
layout(local_size_x = 64) in;
layout(std140, set = 0, binding = 0) uniform Params { Words p_out; Words p_in; uint p_n; };
int sat(int64_t v) { return int(clamp(v, int64_t(-2147483648), int64_t(2147483647))); }
void main() {
    uint i = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (i >= p_n) return;
    int a = int(p_in.w[2 * i]);
    int b = int(p_in.w[2 * i + 1]);
    uint o = 8 * i;
    p_out.w[o + 0] = uint(a + b);
    p_out.w[o + 1] = uint(a - b);
    p_out.w[o + 2] = uint(a + 12345);
    p_out.w[o + 3] = uint(7 - b);
    p_out.w[o + 4] = uint(sat(int64_t(a) + int64_t(b)));
    p_out.w[o + 5] = uint(sat(int64_t(a) - int64_t(b)));
    p_out.w[o + 6] = uint(-a);
    p_out.w[o + 7] = uint(a + b) + uint(a - b) - i;
}
"#;

const SHARED_REDUCE: &str = r#"
layout(local_size_x = 128) in;
layout(std140, set = 0, binding = 0) uniform Params { Words p_out; Words p_in; };
shared uint s_sum[128];
shared uint s_max[128];
shared uint s_odd;
void main() {
    uint t = gl_LocalInvocationID.x;
    uint b = gl_WorkGroupID.x;
    uint v = p_in.w[b * 128 + t];
    s_sum[t] = v;
    s_max[t] = v;
    if (t == 0) s_odd = 0;
    barrier();
    for (uint s = 64; s != 0; s >>= 1) {
        if (t < s) {
            s_sum[t] += s_sum[t + s];
            s_max[t] = max(s_max[t], s_max[t + s]);
        }
        barrier();
    }
    if ((v & 1u) != 0) atomicAdd(s_odd, 1u);
    barrier();
    if (t == 0) {
        p_out.w[3 * b] = s_sum[0];
        p_out.w[3 * b + 1] = s_max[0];
        p_out.w[3 * b + 2] = s_odd;
    }
}
"#;

const SPECIAL_REGS: &str = r#"
layout(local_size_x = 8, local_size_y = 4, local_size_z = 2) in;
layout(std140, set = 0, binding = 0) uniform Params { Words p_out; };
void main() {
    uvec3 t = gl_LocalInvocationID, n = gl_WorkGroupSize, c = gl_WorkGroupID, nc = gl_NumWorkGroups;
    uint lin = (t.z * n.y + t.y) * n.x + t.x;
    uint lane = lin % 32u;
    uint g = (c.y * nc.x + c.x) * (n.x * n.y * n.z) + lin;
    uint o = 18 * g;
    uint eq = 1u << lane, lt = eq - 1u, le = lt | eq;
    uint v[18] = uint[18](t.x, t.y, t.z, n.x, n.y, n.z, c.x, c.y, c.z, nc.x, nc.y, nc.z,
                          lane, eq, lt, le, ~le, ~lt);
    for (int k = 0; k < 18; k++) p_out.w[o + k] = v[k];
}
"#;

fn reflection(local: [u32; 3], param_size: u64, warp: bool) -> Reflection {
    Reflection::from_json(&format!(
        r#"{{"version":1,"stage":"compute","entry":"main","local_size":{local:?},
            "uses_global_addresses":true,"abi":"cuda","warp_ops":{warp},
            "resources":[{{"kind":"cbuf","bank":0,"guest_offset":320,"size":{param_size},
                          "set":0,"binding":0,"metal_index":0}}]}}"#
    ))
    .unwrap()
}

/// Runs one kernel; returns false when skipped.
fn run(kernel: &str, body: &str, local: [u32; 3], warp: bool) -> Result<bool, Error> {
    if !glsl::available() {
        println!("skipped {kernel}: glslangValidator not installed");
        return Ok(false);
    }
    let io = IoJson::load(&sass(kernel))?;
    let spirv = glsl::compile_source(&format!("{HEADER}{body}"), "comp", &[])?;
    let size = io.param_bytes()?.len() as u64;
    let job = io.job(spirv, reflection(local, size, warp), SM5X_PARAM_BASE)?;
    let out = match dmsh_vk::run_compute(&job) {
        Err(e) if e.is_skip() => {
            println!("skipped {kernel}: {e}");
            return Ok(false);
        }
        r => r?,
    };
    let bad = io.check(&out)?;
    for m in &bad {
        println!("MISMATCH {kernel}: {m}");
    }
    assert!(bad.is_empty(), "{kernel}: output differs from io.json");
    println!(
        "ok {kernel}: {} expected bytes bit-exact on {} (pipeline {:.1} ms, dispatch {:.1} ms)",
        io.expected.values().map(|e| e.size).sum::<u64>(),
        out.device,
        out.pipeline_ms,
        out.dispatch_ms
    );
    Ok(true)
}

#[test]
fn int_addsub_matches_io_json() {
    run("int_addsub", INT_ADDSUB, [64, 1, 1], false).unwrap();
}

#[test]
fn shared_reduce_matches_io_json() {
    run("shared_reduce", SHARED_REDUCE, [128, 1, 1], false).unwrap();
}

#[test]
fn special_regs_matches_io_json() {
    run("special_regs", SPECIAL_REGS, [8, 4, 2], false).unwrap();
}

#[test]
fn warp32_shader_is_skipped_on_narrow_subgroups() {
    let dev = match dmsh_vk::shared() {
        Ok(d) => d,
        Err(e) => return println!("skipped: {e}"),
    };
    let ran = run("int_addsub", INT_ADDSUB, [64, 1, 1], true).unwrap();
    if dev.info().can_run_warp32() {
        assert!(ran || !glsl::available());
    } else {
        assert!(
            !ran,
            "a warp_ops shader must be skipped on {}",
            dev.info().name
        );
    }
}

#[test]
fn bad_jobs_are_errors_not_crashes() {
    if dmsh_vk::shared().is_err() {
        return println!("skipped: no Vulkan device");
    }
    let io = IoJson::load(&sass("int_addsub")).unwrap();
    // Bad SPIR-V magic.
    let job = io
        .job(
            vec![0xdead_beef; 8],
            reflection([64, 1, 1], 20, false),
            SM5X_PARAM_BASE,
        )
        .unwrap();
    assert!(matches!(dmsh_vk::run_compute(&job), Err(Error::Job(_))));
    // A resource without a buffer.
    let mut job = job;
    job.spirv = vec![0x0723_0203, 0x10000, 0, 1, 0];
    job.binds.clear();
    let e = dmsh_vk::run_compute(&job).unwrap_err();
    assert!(e.to_string().contains("cbuf bank 0"), "{e}");
    // An empty or oversized grid.
    let mut j2 = io
        .job(
            vec![0x0723_0203, 0x10000, 0, 1, 0],
            reflection([64, 1, 1], 20, false),
            SM5X_PARAM_BASE,
        )
        .unwrap();
    j2.grid = [0, 1, 1];
    assert!(matches!(dmsh_vk::run_compute(&j2), Err(Error::Job(_))));
    j2.grid = [1, u32::MAX, 1];
    assert!(matches!(dmsh_vk::run_compute(&j2), Err(Error::Job(_))));
    // Local size disagreeing with the io.json block.
    assert!(io
        .job(vec![], reflection([32, 1, 1], 20, false), SM5X_PARAM_BASE)
        .is_err());
}

#[test]
fn device_info_is_reported() {
    match dmsh_vk::shared() {
        Ok(d) => {
            let i = d.info();
            println!(
                "device: {} ({}, Vulkan {}, driver {}), subgroup {} [{}..{}], ops {:?}",
                i.name,
                i.device_type,
                i.api_version,
                i.driver,
                i.subgroup_size,
                i.min_subgroup_size,
                i.max_subgroup_size,
                i.subgroup_ops
            );
            assert!(i.subgroup_size > 0);
            assert!(
                i.has("bufferDeviceAddress"),
                "runner needs bufferDeviceAddress"
            );
        }
        Err(e) => {
            assert!(e.is_skip());
            println!("skipped: no Vulkan device ({e})");
        }
    }
}

#[test]
fn a_wrong_shader_is_caught() {
    if !glsl::available() || dmsh_vk::shared().is_err() {
        return println!("skipped: no glslang or no Vulkan device");
    }
    let io = IoJson::load(&sass("int_addsub")).unwrap();
    let wrong = INT_ADDSUB.replace("uint(a + 12345)", "uint(a + 12346)");
    let spirv = glsl::compile_source(&format!("{HEADER}{wrong}"), "comp", &[]).unwrap();
    let job = io
        .job(spirv, reflection([64, 1, 1], 20, false), SM5X_PARAM_BASE)
        .unwrap();
    let out = dmsh_vk::run_compute(&job).unwrap();
    let bad = io.check(&out).unwrap();
    assert_eq!(bad.len(), 1);
    assert_eq!(bad[0].words, 128, "{}", bad[0]);
    assert_eq!(bad[0].first_offset, 8);
}
