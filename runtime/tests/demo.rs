//! The runtime on the demo title (split and built by `dmsh demo`): its keys agree with split
//! for every shader (Switch 1 and NVN2 control sections), its C records equal the build's
//! reflection JSON for every shader, and lookups from many threads agree with one thread's.

mod common;

use std::collections::BTreeMap;

use dmsh_runtime::abi::{DEPTH_GL, DEPTH_ZERO_TO_ONE};
use dmsh_runtime::{OpenOptions, Title};

fn open(d: &common::Demo) -> Title {
    Title::open(&OpenOptions {
        shader_map: Some(d.map()),
        library_dir: d.split.clone(),
        chain: Some(d.chain.clone()),
        ..Default::default()
    })
    .unwrap()
}

#[test]
fn keys_agree_with_split_for_every_demo_shader() {
    let Some(d) = common::demo() else { return };
    let mut by_len: BTreeMap<(String, usize), usize> = BTreeMap::new();
    let gen = d.map_column(2);
    let keys = d.keys();
    for k in &keys {
        let control = std::fs::read(d.split.join(format!("pkg/{k}.control"))).unwrap();
        let mut code = std::fs::read(d.split.join(format!("pkg/{k}.code"))).unwrap();
        let got = dmsh_runtime::key::of(&control, &code).unwrap();
        assert_eq!(dmsh_runtime::key::to_string(got), *k);
        // The game hands over a code area that goes on past the code size.
        code.extend_from_slice(&[0xa5; 256]);
        let mut c_key = 0u64;
        // SAFETY: the slices are live; c_key is a u64.
        let s = unsafe {
            dmsh_runtime::ffi::dmsh_shader_key(
                control.as_ptr(),
                control.len(),
                code.as_ptr(),
                code.len(),
                &mut c_key,
            )
        };
        assert_eq!((s, c_key), (dmsh_runtime::Status::Ok, got), "{k}");
        println!(
            "{k} {} control {:#x}: agrees",
            gen[k.as_str()],
            control.len()
        );
        *by_len
            .entry((gen[k.as_str()].to_string(), control.len()))
            .or_default() += 1;
    }
    println!("{} keys agree with split: {by_len:?}", keys.len());
    assert!(by_len.keys().any(|(g, _)| g == "nvn2") && by_len.keys().any(|(g, _)| g == "nvn1"));
}

/// Each key's dump through the Rust API (both depth modes checked against each other).
fn dump(t: &Title, keys: &[u64]) -> String {
    let mut out = String::new();
    for &k in keys {
        match t.lookup(k, DEPTH_ZERO_TO_ONE) {
            Ok(z) => {
                let gl = t.lookup(k, DEPTH_GL).unwrap();
                assert!(std::ptr::eq(gl.shader, z.shader));
                assert_eq!(
                    gl.entry.as_ptr(),
                    gl.shader.shader().entry_gl,
                    "GL mode gives entry_gl"
                );
                out += &common::dump_from_record(z.shader.shader(), z.entry);
            }
            Err(e) => {
                out += &format!(
                    "fail {} {}\n",
                    dmsh_runtime::key::to_string(k),
                    e.status as u32
                )
            }
        }
    }
    out
}

#[test]
fn c_records_equal_the_json_for_every_demo_shader() {
    let Some(d) = common::demo() else { return };
    let t = open(d);
    // `dmsh demo` ran `dmsh c1-guard`: its list, next to the map, is for this build.
    assert_eq!(t.c1(), Ok(()), "the demo's c1_full.tsv");
    let got = dump(&t, t.keys());
    let want = common::expected_demo_dump(d);
    for (g, w) in got.lines().zip(want.lines()) {
        assert_eq!(g, w);
    }
    assert_eq!(got, want);
    let built = got.lines().filter(|l| l.starts_with("shader ")).count();
    let vertex_z = got
        .lines()
        .filter(|l| l.contains(" stage=0 ") && l.contains(" z=main0_z "))
        .count();
    println!(
        "{built} of {} demo shaders equal their JSON ({} lines); {vertex_z} vertex shaders with main0_z",
        t.keys().len(),
        got.lines().count()
    );
    assert!(built > 0 && vertex_z > 0);
}

#[test]
fn lookups_from_many_threads_agree_with_one_thread() {
    let Some(d) = common::demo() else { return };
    let one = open(d);
    let want: BTreeMap<u64, String> = one.keys().iter().map(|&k| (k, dump(&one, &[k]))).collect();
    // A fresh title, so that the threads race on every shader's first load.
    let many = open(d);
    let keys = many.keys().to_vec();
    let rounds = 50;
    std::thread::scope(|s| {
        for i in 0..16 {
            let (many, keys, want) = (&many, &keys, &want);
            s.spawn(move || {
                let mut order = keys.clone();
                order.rotate_left(i * 7 % keys.len());
                for _ in 0..rounds {
                    for &k in &order {
                        assert_eq!(dump(many, &[k]), want[&k]);
                    }
                }
            });
        }
    });
    println!(
        "16 threads × {rounds} rounds × {} keys agree with one thread",
        keys.len()
    );
}

/// The demo title's lowered pipelines: every geometry key loads as its kernel with a
/// lowering record and has its draw (`_p`), whose record equals its JSON; the tessellation
/// pair loads as control kernel and post-tessellation function; a variant that was not built
/// is NOT_BUILT naming the key; `dmsh_check_topology` accepts what a kernel serves and
/// refuses the rest naming the key (Rust API and C ABI).
#[test]
fn lowered_geometry_and_tessellation_keys_load_with_their_passes() {
    use dmsh_runtime::abi::{self, Shader};
    use dmsh_runtime::ffi::{dmsh_check_topology, dmsh_last_error, dmsh_lookup_pass, DmshTitle};
    use dmsh_runtime::Status;
    let Some(d) = common::demo() else { return };
    let t = open(d);
    let of = |st: &str| -> Vec<u64> {
        (t.keys().iter().copied())
            .filter(|&k| t.stage(k).map(|s| s.as_str()) == Some(st))
            .collect()
    };
    let (gs, tcs, tes, vs) = (
        of("geometry"),
        of("tess_control"),
        of("tess_eval"),
        of("vertex"),
    );
    assert_eq!(gs.len(), 2, "the demo has two geometry keys");
    assert!(
        !tcs.is_empty() && !tes.is_empty(),
        "and a tessellation pair"
    );
    let tp = std::ptr::addr_of!(t).cast::<DmshTitle>();
    let last = || {
        // SAFETY: dmsh_last_error is a NUL-terminated string.
        unsafe { std::ffi::CStr::from_ptr(dmsh_last_error()) }
            .to_string_lossy()
            .into_owned()
    };
    let stage_of = d.map_column(1);
    for &k in &gs {
        let ks = dmsh_runtime::key::to_string(k);
        let b = t.lookup(k, DEPTH_GL).unwrap().shader;
        assert_eq!(b.shader().stage, 3, "{ks}: the map's stage (geometry)");
        let l = *b
            .lowering()
            .expect("a geometry key's _b has a lowering record");
        assert_eq!(l.pass, abi::PASS_GEOMETRY_KERNEL, "{ks}");
        assert!(
            l.max_vertices > 0 && l.topologies != 0 && l.local_size > 0,
            "{ks}: {l:?}"
        );
        assert!(l.output >= abi::PRIM_POINTS && l.output <= abi::PRIM_TRIANGLES);
        let roles: Vec<u32> = (b.bindings().iter())
            .filter(|x| x.kind == abi::BIND_LOWERED)
            .map(|x| x.slot)
            .collect();
        for r in [
            abi::LOWERED_VERTICES_IN,
            abi::LOWERED_VERTICES_OUT,
            abi::LOWERED_INDICES,
            abi::LOWERED_PARAMS,
            abi::LOWERED_INDEX_SOURCE,
        ] {
            assert!(roles.contains(&r), "{ks}: kernel roles {roles:?}");
        }
        // The draw, through the Rust API and the C ABI: the same record.
        let p = t
            .lookup_pass(k, abi::VARIANT_DRAW, DEPTH_ZERO_TO_ONE)
            .unwrap();
        let pl = p.shader.lowering().expect("the draw has a lowering record");
        assert_eq!(pl.pass, abi::PASS_GEOMETRY_DRAW, "{ks}");
        assert_eq!(
            (pl.max_vertices, pl.output, pl.topologies),
            (l.max_vertices, l.output, l.topologies)
        );
        assert!(
            (p.shader.bindings().iter())
                .any(|x| x.kind == abi::BIND_LOWERED && x.slot == abi::LOWERED_VERTICES_OUT),
            "{ks}: the draw reads vertices_out"
        );
        let j: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(d.b_dir().join(format!("{ks}_p.json"))).unwrap(),
        )
        .unwrap();
        let full = b.shader().flags & abi::SHADER_C1_FULL != 0;
        assert_eq!(
            common::dump_from_record(p.shader.shader(), p.entry),
            common::dump_variant_from_json(&j, &ks, "_p", 3, full, &d.b_dir())
        );
        let (mut s, mut e): (*const Shader, _) = (std::ptr::null(), std::ptr::null());
        // SAFETY: the title is open; s and e are writable.
        let st = unsafe { dmsh_lookup_pass(tp, k, abi::VARIANT_DRAW, 1, &mut s, &mut e) };
        assert_eq!(st, Status::Ok);
        assert!(std::ptr::eq(s, p.shader.shader()));
        // Topologies: every served one is accepted, every other refused naming the key.
        let served: Vec<u32> = (0..10).filter(|n| l.topologies & (1 << n) != 0).collect();
        assert!(!served.is_empty());
        let mut refused = 0;
        for n in 0..12 {
            // SAFETY: a record of the open title.
            let st = unsafe { dmsh_check_topology(b.shader(), n) };
            let rust = b.check_topology(n);
            if served.contains(&n) {
                assert_eq!((st, rust), (Status::Ok, Ok(())), "{ks} topology {n}");
            } else {
                assert_eq!(st, Status::Topology, "{ks} topology {n}");
                let m = last();
                assert!(
                    m.contains(&ks) && m.contains(&format!("topology {n}")),
                    "{m}"
                );
                assert_eq!(rust.unwrap_err().text(), m);
                refused += 1;
            }
        }
        println!(
            "{ks}: kernel {l:?}; draw ok; {} topologies served, {refused} refused: {}",
            served.len(),
            last()
        );
        // The draw is no kernel.
        // SAFETY: a record of the open title.
        assert_eq!(
            unsafe { dmsh_check_topology(p.shader.shader(), 3) },
            Status::Argument
        );
        // A geometry key has no capture form.
        let e = t
            .lookup_pass(k, abi::VARIANT_CAPTURE, DEPTH_GL)
            .unwrap_err();
        assert_eq!(e.status, Status::NotBuilt);
        assert!(e.text().contains(&ks), "{e}");
    }
    for &k in &tcs {
        let b = t.lookup(k, DEPTH_GL).unwrap().shader;
        let l = b
            .lowering()
            .expect("a tess control key's _b has a lowering record");
        assert_eq!(b.shader().stage, 1);
        assert_eq!(l.pass, abi::PASS_TESS_CONTROL_KERNEL);
        // The control kernel writes the factor layout params[4] names (factor_bytes 0).
        assert!(l.control_points > 0 && l.factor_bytes == 0 && l.patch_bytes > 0);
        assert_eq!(b.shader().local_size[0], l.control_points);
        assert!(b
            .bindings()
            .iter()
            .any(|x| x.kind == abi::BIND_LOWERED && x.slot == abi::LOWERED_TESS_FACTORS));
        // SAFETY: a record of the open title.
        assert_eq!(
            unsafe { dmsh_check_topology(b.shader(), 3) },
            Status::Argument
        );
        println!("{}: control kernel {l:?}", dmsh_runtime::key::to_string(k));
    }
    for &k in &tes {
        let b = t.lookup(k, DEPTH_GL).unwrap().shader;
        let l = b
            .lowering()
            .expect("a tess eval key's _b has a lowering record");
        assert_eq!(b.shader().stage, 2);
        assert_eq!(l.pass, abi::PASS_TESS_EVAL_POST);
        assert!(l.control_points > 0);
        // The pipeline's tessellation state for Metal.
        assert!(
            l.tess_domain > 0 && l.tess_spacing > 0 && l.tess_output > 0,
            "{l:?}"
        );
        assert!(b
            .bindings()
            .iter()
            .any(|x| x.kind == abi::BIND_LOWERED && x.slot == abi::LOWERED_CONTROL_POINTS));
        println!(
            "{}: post-tessellation function {l:?}",
            dmsh_runtime::key::to_string(k)
        );
    }
    // The title has geometry and tessellation shaders, so every built vertex shader has its
    // capture form (docs/geometry.md).
    let mut captures = 0;
    for &k in &vs {
        if t.lookup(k, DEPTH_GL).is_err() {
            continue;
        }
        let c = t.lookup_pass(k, abi::VARIANT_CAPTURE, DEPTH_GL).unwrap();
        let l = c
            .shader
            .lowering()
            .expect("a capture form has a lowering record");
        assert_eq!(l.pass, abi::PASS_VERTEX_CAPTURE);
        assert!(c
            .shader
            .bindings()
            .iter()
            .any(|x| x.kind == abi::BIND_LOWERED && x.slot == abi::LOWERED_VERTICES_IN));
        captures += 1;
    }
    assert!(captures >= 15, "{captures} capture forms");
    // Variants that do not exist: NOT_BUILT naming the key (and the file).
    let built_vs = (vs.iter().copied())
        .find(|&k| t.lookup(k, DEPTH_GL).is_ok())
        .unwrap();
    for (k, v, file) in [
        (built_vs, abi::VARIANT_DRAW, "_p.json"),
        (built_vs, abi::VARIANT_CAPTURE, "_g.json"),
        (tcs[0], abi::VARIANT_DRAW, "_p.json"),
    ] {
        let ks = dmsh_runtime::key::to_string(k);
        if v == abi::VARIANT_CAPTURE && d.b_dir().join(format!("{ks}_g.json")).is_file() {
            continue;
        }
        let e = t.lookup_pass(k, v, DEPTH_GL).unwrap_err();
        assert_eq!(e.status, Status::NotBuilt, "{e}");
        assert!(e.text().contains(&format!("{ks}{file}")), "{e}");
        let (mut s, mut en): (*const Shader, _) = (std::ptr::null(), std::ptr::null());
        // SAFETY: the title is open; s and en are writable.
        let st = unsafe { dmsh_lookup_pass(tp, k, v, 0, &mut s, &mut en) };
        assert_eq!(st, Status::NotBuilt);
        assert!(s.is_null() && last().contains(&ks));
        println!("{}: {e}", stage_of[ks.as_str()]);
    }
    // An unknown variant (the last is DMSH_VARIANT_DUAL_SOURCE, 4).
    let e = t.lookup_pass(gs[0], 5, DEPTH_GL).unwrap_err();
    assert_eq!(e.status, Status::Argument);
    // A split title has no dual-source variants (only Vulkan fragment modules do).
    let e = t
        .lookup_pass(gs[0], abi::VARIANT_DUAL_SOURCE, DEPTH_GL)
        .unwrap_err();
    assert!(e.text().contains("only fragment keys"), "{e}");
}
