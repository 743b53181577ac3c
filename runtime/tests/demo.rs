//! The runtime on the demo title (split and built by `dmsh demo`): its keys agree with split
//! for every shader (Switch 1 and NVN2 control sections), its C records equal the build's
//! reflection JSON for every shader, and lookups from many threads agree with one thread's.

mod common;

use std::collections::BTreeMap;

use dmsh_runtime::abi::{DEPTH_GL, DEPTH_ZERO_TO_ONE};
use dmsh_runtime::{OpenOptions, Title};

fn open(d: &common::Demo) -> Title {
    Title::open(&OpenOptions {
        shader_map: d.map(),
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
