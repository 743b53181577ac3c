//! The dksh compute harness on glslang's SPIR-V: every runnable case compiles, runs
//! deterministically and changes its outputs; saxpy and matmul are checked against a CPU
//! computation so the harness itself is proven. The translator's tests run their translation
//! of uam's binary through the same `dksh::run` and compare with `dksh::compare`.

use dmsh_testsupport::reference::{dksh, glsl};

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn half(h: u16) -> f32 {
    let e = ((h >> 10) & 31) as i32;
    let m = (h & 1023) as f32;
    let v = if e == 0 {
        m * 2f32.powi(-24)
    } else {
        (1.0 + m / 1024.0) * 2f32.powi(e - 15)
    };
    if h & 0x8000 != 0 {
        -v
    } else {
        v
    }
}

#[test]
fn dksh_compute_cases_run_on_glslang_spirv() {
    let Some(dev) = glsl::vulkan_device() else {
        return;
    };
    let cases = dksh::cases(&dksh::corpus_dir());
    assert_eq!(cases.len(), 11);
    let mut ran = 0;
    for case in &cases {
        if let Some(u) = case.unsupported {
            println!("skipped {}: {u}", case.name);
            continue;
        }
        let (spirv, refl) = dksh::reference(case).unwrap();
        let a = dksh::run(case, spirv.clone(), refl.clone()).unwrap();
        let b = dksh::run(case, spirv, refl).unwrap();
        let diff = dksh::compare(case, &a, &b);
        assert!(
            diff.is_empty() || case.name == "cs_atomics",
            "{}: not deterministic: {diff:?}",
            case.name
        );
        // Something was written.
        let changed = case.compare.iter().any(|(n, r)| {
            let init = &case.ssbos.iter().find(|(b, _)| b == n).unwrap().1[r.clone()];
            let got = &a.ssbos.iter().find(|(b, _)| b == n).unwrap().1[r.clone()];
            init != got
        }) || case.compare_images.iter().any(|(n, r)| {
            let init = &case.images.iter().find(|(b, _)| b == n).unwrap().1.data[r.clone()];
            let got = &a.images.iter().find(|(b, _)| b == n).unwrap().1[r.clone()];
            init != got
        });
        assert!(changed, "{}: outputs unchanged", case.name);
        if case.name == "cs_ssbo_saxpy" {
            let x = f32s(&case.ssbos[0].1);
            let y0 = f32s(&case.ssbos[1].1);
            let y = f32s(&a.ssbos[1].1);
            for i in 0..128 {
                let want = if i < 100 { 1.5 * x[i] + y0[i] } else { y0[i] };
                assert_eq!(y[i].to_bits(), want.to_bits(), "saxpy[{i}]");
            }
        }
        if case.name == "cs_matmul_tiled" {
            let (am, bm) = (f32s(&case.ssbos[0].1), f32s(&case.ssbos[1].1));
            let c = f32s(&a.ssbos[2].1);
            for row in 0..20 {
                for col in 0..24 {
                    let want: f32 = (0..40).map(|k| am[row * 40 + k] * bm[k * 24 + col]).sum();
                    assert_eq!(c[row * 24 + col], want, "C[{row}][{col}]");
                }
            }
        }
        if case.name == "cs_texture_sample" {
            // Where the mask is set, the output is the texel itself (rgba8 -> f16).
            let src = &case.textures[0].1.data;
            let mask: Vec<u32> = case.textures[1]
                .1
                .data
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                .collect();
            let out = &a.images[0].1;
            let mut checked = 0;
            for y in 0..32usize {
                for x in 0..32usize {
                    if mask[(y / 2) * 16 + x / 2] == 0 {
                        continue;
                    }
                    for ch in 0..4 {
                        let i = (y * 32 + x) * 4 + ch;
                        let h = u16::from_le_bytes([out[2 * i], out[2 * i + 1]]);
                        let want = src[i] as f32 / 255.0;
                        assert!((half(h) - want).abs() < 1e-3, "texel ({x},{y}).{ch}");
                    }
                    checked += 1;
                }
            }
            assert!(checked > 100);
        }
        let note = if case.warp_ops && !dev.info().can_run_warp32() {
            " (warp-dependent: a translation is compared only on 32-lane devices)"
        } else {
            ""
        };
        println!("ok {}: ran twice, identical{note}", case.name);
        ran += 1;
    }
    println!("{ran} dksh compute cases ran on {}", dev.info().name);
    assert_eq!(ran, 11);
}

#[test]
fn driver_cbuf_mapping_for_translations() {
    // A translation that reads deko3d's driver cbuf (bank 0) gets addresses and sizes there.
    let cases = dksh::cases(&dksh::corpus_dir());
    let case = cases.iter().find(|c| c.name == "cs_ssbo_saxpy").unwrap();
    let refl = dmsh_vk::Reflection::from_json(
        r#"{"stage":"compute","local_size":[64,1,1],"uses_global_addresses":true,"abi":"deko3d",
            "resources":[{"kind":"cbuf","bank":0,"guest_offset":0,"size":352},
                         {"kind":"cbuf","bank":2,"size":16}]}"#,
    )
    .unwrap();
    let job = dksh::job(case, vec![], refl).unwrap();
    let cb = job
        .buffers
        .iter()
        .position(|b| b.name == "driver_cbuf")
        .unwrap();
    let offs: Vec<u64> = job.pointers.iter().map(|p| p.offset).collect();
    assert_eq!(offs, vec![0x20, 0x140, 0x150]);
    assert_eq!(&job.buffers[cb].init[0..4], &64u32.to_le_bytes());
    assert_eq!(&job.buffers[cb].init[0xc..0x10], &2u32.to_le_bytes());
    assert_eq!(&job.buffers[cb].init[0x148..0x14c], &512u32.to_le_bytes());
}

#[test]
fn check_translation_api() {
    if !glsl::available() || dmsh_vk::shared().is_err() {
        return println!("skipped: no glslang or no Vulkan device");
    }
    let cases = dksh::cases(&dksh::corpus_dir());
    // glslang's own SPIR-V stands in for a translation: no differences.
    let saxpy = cases.iter().find(|c| c.name == "cs_ssbo_saxpy").unwrap();
    let (s, r) = dksh::reference(saxpy).unwrap();
    assert!(dksh::check_translation(saxpy, s, r).unwrap().is_empty());
    // A wrong "translation" is caught.
    let text = std::fs::read_to_string(&saxpy.source)
        .unwrap()
        .replace("a * x[i] + y[i]", "a * x[i] - y[i]");
    let bad = glsl::compile_source(&text, "comp", glsl::DEKO3D_SHIFTS).unwrap();
    let refl = glsl::reflect_shifted(&bad, "compute");
    let m = dksh::check_translation(saxpy, bad, refl).unwrap();
    assert_eq!(m.len(), 1, "{m:?}");
    // Warp-dependent cases are skipped where subgroups are not 32 wide.
    let ballot = cases
        .iter()
        .find(|c| c.name == "cs_subgroup_ballot")
        .unwrap();
    let (s, r) = dksh::reference(ballot).unwrap();
    match dksh::check_translation(ballot, s, r) {
        Err(e) => assert!(e.is_skip(), "{e}"),
        Ok(m) => assert!(dmsh_vk::shared().unwrap().info().can_run_warp32() && m.is_empty()),
    }
}
