//! GPU work that does not finish in time is a `Timeout` error, not a hung test; the device then
//! refuses further work instead of freeing memory the stuck shader may still use. lavapipe
//! cannot really hang in a loop (it caps loop iterations, see lavapipe_facts.rs), so the timeout
//! path is exercised with a zero timeout.
//!
//! The hung dispatch runs in a child process (this same test binary, re-run with
//! `DMSH_HANG_CHILD=1`): the driver is still busy with the endless shader when that process
//! exits, and lavapipe may then abort the process from its compile thread ("LLVM ERROR"), which
//! must not take the test harness down with it. The parent checks what the child printed.

use dmsh_testsupport::reference::glsl;
use dmsh_vk::{Bind, BufferSpec, ComputeJob, Device, Error, Reflection, ResourceRef};

#[test]
fn endless_loop_times_out() {
    if std::env::var_os("DMSH_HANG_CHILD").is_some() {
        return hang_child();
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "endless_loop_times_out",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("DMSH_HANG_CHILD", "1")
        .output()
        .expect("re-run the test binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    if let Some(line) = stdout
        .lines()
        .find_map(|l| l.find("skipped:").map(|i| &l[i..]))
    {
        return println!("{line}");
    }
    let line = stdout
        .lines()
        .find_map(|l| l.find("ok: hung shader").map(|i| &l[i..]));
    assert!(
        line.is_some(),
        "child did not report the timeout (status {:?}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{}", line.unwrap());
}

/// The hung dispatch itself (runs only in the child process).
fn hang_child() {
    if !glsl::available() {
        return println!("skipped: glslangValidator not installed");
    }
    std::env::set_var("DMSH_VK_TIMEOUT_S", "0");
    let dev = match Device::new() {
        Ok(d) => d,
        Err(e) => return println!("skipped: no Vulkan device ({e})"),
    };
    let src = r#"#version 460
layout(local_size_x = 64) in;
layout(std430, binding = 32) buffer B { uint v[]; };
void main() {
    // Long on any device (lavapipe stops each invocation after ~65535 iterations in all;
    // 1024 invocations keep it busy for a while even with a warm shader cache).
    for (uint a = 0; a != v[0] + 1u; a++)
        for (uint b = 0; b != v[0] + 1u; b++)
            for (uint c = 0; c != v[0] + 1u; c++)
                v[1] += a ^ b ^ c;
}"#;
    let spirv = glsl::compile_source(src, "comp", &[]).unwrap();
    let job = ComputeJob {
        spirv,
        reflection: Reflection::from_json(
            r#"{"stage":"compute","resources":[{"kind":"sbuf","bank":0}]}"#,
        )
        .unwrap(),
        buffers: vec![BufferSpec {
            name: "b".into(),
            size: 16,
            init: (u32::MAX - 1).to_le_bytes().to_vec(),
        }],
        binds: vec![Bind {
            resource: ResourceRef::Sbuf(0),
            buffer: 0,
        }],
        grid: [16, 1, 1],
        ..Default::default()
    };
    let t = std::time::Instant::now();
    let e = dev.run_compute(&job).unwrap_err();
    assert!(matches!(e, Error::Timeout(0)), "{e}");
    assert!(t.elapsed().as_secs() < 20);
    let again = dev.run_compute(&job).unwrap_err();
    assert!(again.to_string().contains("unusable"), "{again}");
    println!(
        "ok: hung shader -> {e} after {:.1} s",
        t.elapsed().as_secs_f64()
    );
    std::mem::forget(dev);
}
