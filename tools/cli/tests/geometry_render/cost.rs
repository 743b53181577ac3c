//! The lowered forms' cost against the direct geometry stage on one large draw.

use super::*;

/// The cost of the lowered forms against the direct geometry stage on one large draw
/// (gs_passthrough_tri, two invocations, 20 000 triangles), in one run: GPU milliseconds per
/// path, the least of five draws after a first that compiles lavapipe's shaders (the machine
/// is shared). Printed, not asserted.
#[test]
fn lowered_forms_cost_on_a_large_draw() {
    if !ready() {
        return;
    }
    let n = 20_000;
    let mut x = 0x2545_f491u32;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        (x >> 8) as f32 / (1u32 << 24) as f32
    };
    let mut vertices = Vec::with_capacity(n * 12);
    for _ in 0..n {
        let (cx, cy) = (next() * 1.6 - 0.9, next() * 1.6 - 0.9);
        for _ in 0..3 {
            vertices.extend([cx + next() * 0.1, cy + next() * 0.1, next(), 1.0]);
        }
    }
    let d = Draw {
        viewports: vec![[0.0, 0.0, 32.0, 64.0], [32.0, 0.0, 32.0, 64.0]],
        ..Draw::new(
            glslang(PASSTHROUGH_VS, "vert", "vertex"),
            glslang(PASSTHROUGH_FS, "frag", "fragment"),
            vertices,
            4,
            Topology::TriangleList,
        )
    };
    let name = "gs_passthrough_tri.geom";
    let capture = passthrough_capture();
    let gs = reference(name, "geom", "geometry");
    let middles = || {
        [
            ("direct", Middle::Geometry(gs.clone(), Data::default())),
            (
                "translated, lowered",
                Middle::Lowered(
                    capture.clone(),
                    ours_in(name, Form::Lowered(Pass::GeometryKernel)),
                    Data::default(),
                    ours_in(name, Form::Lowered(Pass::GeometryDraw)),
                ),
            ),
            (
                "captured, lowered",
                captured_geometry(&d.vertex.spirv, &gs.spirv, Data::default()),
            ),
        ]
    };
    let mut direct_ms = 0.0;
    let mut want = Vec::new();
    for (k, (what, middle)) in middles().into_iter().enumerate() {
        let _ = run_outputs(&d, middle);
        let mut best: Option<dmsh_vk::render::RenderOutputs> = None;
        for _ in 0..5 {
            let middle = middles().into_iter().nth(k).unwrap().1;
            let (out, _) = run_outputs(&d, middle);
            let ms =
                |o: &dmsh_vk::render::RenderOutputs| o.pass_ms.iter().map(|p| p.1).sum::<f64>();
            if best.as_ref().is_none_or(|b| ms(&out) < ms(b)) {
                best = Some(out);
            }
        }
        let out = best.expect("five draws");
        let gpu: f64 = out.pass_ms.iter().map(|p| p.1).sum();
        if k == 0 {
            direct_ms = gpu;
            want = out.targets.clone();
        } else {
            compare(
                &format!("{name}, {n} triangles, {what}"),
                &want,
                &out.targets,
            );
        }
        println!(
            "{name}, {n} triangles × 2 invocations, {what}: GPU {gpu:.2} ms ({}), {:.3} µs per \
             input triangle, {:.2} × direct",
            out.pass_ms
                .iter()
                .map(|(p, ms)| format!("{p} {ms:.2}"))
                .collect::<Vec<_>>()
                .join(", "),
            gpu * 1e3 / n as f64,
            gpu / direct_ms.max(1e-9),
        );
    }
}
