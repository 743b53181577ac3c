//! Measured lavapipe behaviour that translated shaders run into.

use dmsh_testsupport::reference::glsl;
use dmsh_vk::{Bind, BufferSpec, ComputeJob, Reflection, ResourceRef};

/// lavapipe (Mesa 22.3 gallivm) stops every invocation after 65535 loop iterations counted
/// over all its loops together: longer loops end early without any error.
#[test]
fn lavapipe_caps_loops_at_65535_iterations() {
    let Some(dev) = glsl::vulkan_device() else {
        return;
    };
    let src = r#"#version 460
layout(local_size_x = 1) in;
layout(std430, binding = 32) buffer B { uint v[]; };
void main() { for (uint i = 0; i < v[0]; i++) { v[1] += 1u; } }"#;
    let spirv = glsl::compile_source(src, "comp", &[]).unwrap();
    let job = ComputeJob {
        spirv,
        reflection: Reflection::from_json(r#"{"resources":[{"kind":"sbuf","bank":0}]}"#).unwrap(),
        buffers: vec![BufferSpec {
            name: "b".into(),
            size: 16,
            init: 70000u32.to_le_bytes().to_vec(),
        }],
        binds: vec![Bind {
            resource: ResourceRef::Sbuf(0),
            buffer: 0,
        }],
        grid: [1, 1, 1],
        ..Default::default()
    };
    let n = dev.run_compute(&job).unwrap().u32s(0)[1];
    println!("{}: a 70000-iteration loop ran {n} times", dev.info().name);
    if dev.info().name.contains("llvmpipe") {
        assert_eq!(n, 65535, "lavapipe's loop cap changed");
    } else {
        assert_eq!(n, 70000);
    }
}
