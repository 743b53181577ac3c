//! What the lowered-pipeline tests (lowered_geometry.rs, lowered_tessellation.rs) share:
//! drawing a job where the device can, and comparing a direct picture with a lowered one.

use dmsh_reflect::{Lowering, Resource, LOWERED_BUFFER};
use dmsh_testsupport::reference::glsl;
use dmsh_vk::reflection::Reflection;
use dmsh_vk::render::{RenderJob, RenderOutputs, Stage};

/// glslang's SPIR-V of `src` (GLSL bindings as written) with the reflection `reflection`.
pub fn stage(src: &str, glslang_stage: &str, reflection: Reflection) -> Stage {
    let spirv = glsl::compile_source(src, glslang_stage, &[])
        .unwrap_or_else(|e| panic!("glslang {glslang_stage}: {e}\n{src}"));
    Stage { spirv, reflection }
}

/// A reflection of stage `stage` with `resources` and a lowering record (when given).
pub fn reflection(stage: &str, resources: Vec<Resource>, lowering: Option<Lowering>) -> Reflection {
    Reflection {
        stage: stage.into(),
        entry: "main".into(),
        resources,
        lowering,
        ..Default::default()
    }
}

/// Lowered buffer `role` (set 0, binding 240 + role).
pub fn lowered_buffer(role: u32) -> Resource {
    Resource {
        kind: LOWERED_BUFFER.into(),
        bank: role,
        binding: Some(240 + role),
        ..Default::default()
    }
}

/// A uniform block: cbuf `bank` (binding `bank`) of `size` bytes.
pub fn cbuf(bank: u32, size: u64) -> Resource {
    Resource {
        kind: "cbuf".into(),
        bank,
        binding: Some(bank),
        size: Some(size),
        ..Default::default()
    }
}

/// Draws `job`, or `None` (after saying why) where the device cannot.
pub fn draw(job: &RenderJob) -> Option<RenderOutputs> {
    match dmsh_vk::render(job) {
        Ok(o) => Some(o),
        Err(e) if e.is_skip() => {
            println!("skipped: {e}");
            None
        }
        Err(e) => panic!("render: {e}"),
    }
}

/// Asserts the two pictures agree within 1/255 on ≥ 99.9 % of pixels; returns the fraction
/// and the largest difference. With `DMSH_VK_DUMP=DIR` both go to `DIR` as
/// `<test>.<what>.{direct,lowered}.png`.
pub fn assert_same(
    test: &str,
    what: &str,
    direct: &RenderOutputs,
    low: &RenderOutputs,
) -> (f64, u8) {
    if let Ok(d) = std::env::var("DMSH_VK_DUMP") {
        std::fs::create_dir_all(&d).unwrap();
        for (side, o) in [("direct", direct), ("lowered", low)] {
            let name = format!("{test}.{}.{side}.png", what.replace(' ', "_"));
            std::fs::write(
                std::path::Path::new(&d).join(name),
                o.targets[0].to_png().unwrap(),
            )
            .unwrap();
        }
    }
    let (fraction, worst) = direct.targets[0].compare(&low.targets[0], 1);
    assert!(
        fraction >= 0.999,
        "{what}: {:.4} % of pixels within 1/255 (largest difference {worst})",
        fraction * 100.0
    );
    (fraction, worst)
}

/// Pixels that are not the clear colour.
pub fn drawn(o: &RenderOutputs) -> usize {
    o.targets[0]
        .data
        .chunks_exact(4)
        .filter(|p| p[..3] != [0, 0, 0])
        .count()
}
