//! A barrier after a divergent early exit, run with invocations that really leave: corpus
//! kernel `mem_misc` (`if (i >= n) return; sbuf[tid] = in[i]; bar.sync; … sbuf[(tid + 1) &
//! 63] …`) launched as in its io.json (2 workgroups of 64) but with `n` below 128, so some
//! invocations of a workgroup exit before the barrier that the others wait at. The
//! translation must take the barrier-synchronised dispatcher (reflection `dispatcher_reason`),
//! and on the Vulkan device (lavapipe in CI):
//! * every surviving invocation whose neighbour `(tid + 1) & 63` survived too writes exactly
//!   the 32 bytes of the full launch's expected output (the corpus's io.json, made by its
//!   independent PTX model): the neighbour's shared-memory words written before the barrier
//!   are seen, and nothing in the kernel depends on `n` otherwise;
//! * a survivor whose neighbour left still writes its words 2 and 3 (computed from its own
//!   input only); the rest of its record reads shared memory nobody wrote, and is not checked;
//! * an invocation that left writes nothing: its record keeps the buffer's initial bytes.

#[path = "../../spv/tests/common/mod.rs"]
mod common;

use dmsh_spv::{translate, Options};

/// Runs `mem_misc` with `p_n = n`; returns the full launch's expected `out`, the initial `out`
/// and the `out` of the run.
fn run(n: u32) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let name = "mem_misc";
    let root = common::root();
    let mut io =
        dmsh_vk::io_json::IoJson::load(&root.join(format!("tests/corpus/sass/{name}.io.json")))
            .expect("io.json");
    assert_eq!((io.grid, io.block), ([2, 1, 1], [64, 1, 1]));
    let p = io.params.iter_mut().find(|p| p.name == "p_n").expect("p_n");
    assert_eq!(
        p.hex.as_deref(),
        Some("80000000"),
        "the io.json launches n = 128"
    );
    p.hex = Some(n.to_le_bytes().iter().map(|b| format!("{b:02x}")).collect());
    let cubin = dmsh_cubin::read(&root.join(format!("tests/corpus/sass/{name}.sm53.cubin")))
        .expect("cubin");
    let k = cubin.kernel(name).expect("kernel");
    let cfg = common::cuda_config(k, io.block);
    let out = translate(&k.code, &cfg, &Options::default()).expect("translate");
    common::spirv_val(&out.words).expect("spirv-val");
    assert_eq!(out.reflection.control_flow, "dispatcher");
    assert_eq!(
        out.reflection.dispatcher_reason.as_deref(),
        Some("barrier after divergent exit")
    );
    let refl = dmsh_vk::Reflection::from_json(&out.reflection.to_json()).expect("reflection");
    let job = io.job(out.words.clone(), refl, k.param_base).expect("job");
    let o = dmsh_vk::run_compute(&job).expect("run");
    let b64 = dmsh_vk::b64::decode;
    let idx = io.buffer_names().iter().position(|&b| b == "out").unwrap();
    let want = b64(&io.expected["out"].b64).expect("expected");
    let init = b64(&io.buffers["out"].init_b64).expect("init");
    (want, init, o.buffers[idx].clone())
}

fn check(n: u32) {
    let (want, init, got) = run(n);
    let rec = |b: &[u8], i: usize, w: usize| b[32 * i + 4 * w..32 * i + 4 * w + 4].to_vec();
    let mut checked = 0;
    for i in 0..128usize {
        let neighbour = (i & !63) | ((i + 1) & 63);
        for w in 0..8 {
            let expect = if i as u32 >= n {
                Some(rec(&init, i, w))
            } else if (neighbour as u32) < n || w == 2 || w == 3 {
                Some(rec(&want, i, w))
            } else {
                None
            };
            if let Some(e) = expect {
                assert_eq!(rec(&got, i, w), e, "n = {n}: invocation {i}, word {w}");
                checked += 1;
            }
        }
    }
    println!("n = {n}: {checked} of 1024 output words checked, all equal");
}

/// Part of the second workgroup leaves (invocations 100..127).
#[test]
fn mem_misc_with_part_of_a_workgroup_exited() {
    check(100);
}

/// All but one invocation of the second workgroup leave.
#[test]
fn mem_misc_with_one_survivor_in_a_workgroup() {
    check(65);
}

/// One invocation survives in the first workgroup; the second workgroup leaves entirely.
#[test]
fn mem_misc_with_one_survivor_in_all() {
    check(1);
}
