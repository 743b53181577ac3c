//! Every sm53 kernel of tests/corpus/sass with a K.io.json (plus the video launches of
//! tests/corpus/video, see its README), and every sm86 kernel of tests/corpus/sass with one
//! (the same PTX through ptxas for Ampere): translate (CUDA ABI), run on the
//! Vulkan device (lavapipe in CI) through dmsh-vk, compare with the expected outputs bit for
//! bit. Each kernel runs in a child process (lavapipe has no fault isolation). Kernels whose
//! translation relies on 32-lane subgroups are reported as skipped where the device's subgroup
//! size is not 32 — never as passed. The test fails on any mismatch or error not listed in
//! `KNOWN_FAILURES`.

#[path = "../../spv/tests/common/mod.rs"]
mod common;

use dmsh_testsupport::child;

use dmsh_spv::{translate, F64Mode, Options};

/// Kernels that do not pass yet, with the cause. The gap stays visible here.
const KNOWN_FAILURES: &[(&str, &str)] = &[];
/// The same for the sm86 code.
const KNOWN_FAILURES_SM86: &[(&str, &str)] = &[];

const ENV: &str = "DMSH_EXEC_ONE";

/// The launch and expected outputs of a kernel: the corpus's `K.io.json` (its independent
/// PTX model), else one made for this project in `tests/corpus/video/` (`video_ops`, and the
/// extra kernels `x_vset_imm`, `x_video_imm`: expected values from the PTX ISA's
/// video-instruction pseudo-code, `scripts/corpus/video-ref.py`).
/// Kernels written for operand modifiers no other test executed (`tests/corpus/modifiers`:
/// PTX → ptxas, expected values from the PTX semantics, `scripts/corpus/modifiers-ref.py`).
fn io_path(name: &str) -> Option<std::path::PathBuf> {
    first_in(&["sass", "video", "modifiers"], &format!("{name}.io.json"))
}

/// The first `tests/corpus/DIR/file` of `dirs` that exists.
fn first_in(dirs: &[&str], file: &str) -> Option<std::path::PathBuf> {
    dirs.iter()
        .map(|d| common::root().join("tests/corpus").join(d).join(file))
        .find(|p| p.exists())
}

/// Runs one kernel (in the child; `name` or `sm86:name`, after `soft:` for [`F64Mode::Soft`]
/// and / or `warp:` for the workgroup-memory warp emulation); prints
/// `RESULT pass|fail|skip|error detail`.
fn run_one(spec: &str) -> String {
    let (soft, spec) = match spec.strip_prefix("soft:") {
        Some(s) => (true, s),
        None => (false, spec),
    };
    let (warp, spec) = match spec.strip_prefix("warp:") {
        Some(s) => (dmsh_spv::WarpMode::Workgroup, s),
        None => (dmsh_spv::WarpMode::Subgroup, spec),
    };
    let (sm, name) = spec.split_once(':').unwrap_or(("sm53", spec));
    let path = first_in(
        &["sass", "extra/ptx", "modifiers"],
        &format!("{name}.{sm}.cubin"),
    )
    .unwrap_or_default();
    let Some(io_path) = io_path(name) else {
        return format!("error no io.json for {name}");
    };
    let io = match dmsh_vk::io_json::IoJson::load(&io_path) {
        Ok(io) => io,
        Err(e) => return format!("error io.json: {e}"),
    };
    let cubin = match dmsh_cubin::read(&path) {
        Ok(c) => c,
        Err(e) => return format!("error cubin: {e}"),
    };
    let k = match cubin.kernel(name) {
        Ok(k) => k,
        Err(e) => return format!("error kernel: {e}"),
    };
    let ls = common::io_block(name).unwrap_or([1, 1, 1]);
    let cfg = common::cuda_config(k, ls);
    let opts = Options {
        warp,
        f64: if soft { F64Mode::Soft } else { F64Mode::Native },
        ..Options::default()
    };
    let out = match translate(&k.code, &cfg, &opts) {
        Ok(o) => o,
        Err(e) => return format!("error translate: {e}"),
    };
    if warp == dmsh_spv::WarpMode::Workgroup
        && (out.reflection.warp_ops || !out.reflection.warp_emulated)
    {
        return "error warp emulation: the reflection does not say the warp operations were \
                emulated"
            .into();
    }
    if soft && dmsh_msl::limits::uses_f64(&out.words) {
        return "fail soft f64: the module declares a 64-bit float type".into();
    }
    if let Err(e) = common::spirv_val(&out.words) {
        return format!("error spirv-val: {e}");
    }
    child::io_verdict(&io, out.words, &out.reflection, k.param_base)
}

#[test]
#[ignore = "child process of sass_sm53_exec and sass_sm86_exec"]
fn exec_one() {
    child::run_named(ENV, run_one);
}

#[test]
fn sass_sm53_exec() {
    // The sass corpus, the modifier kernels, and the extra ptx kernels that have an io.json in
    // tests/corpus/video.
    let extra = ["x_vset_imm", "x_video_imm"];
    let kernels: Vec<String> = common::sass_kernels()
        .into_iter()
        .chain(common::modifier_kernels())
        .map(|(n, _)| n)
        .chain(extra.iter().map(|n| n.to_string()))
        .filter(|n| io_path(n).is_some())
        .collect();
    let child::ChildRuns { pass, skip, bad } = child::run_children("exec_one", ENV, &kernels);
    println!(
        "sass sm53 exec: {pass} pass, {skip} skipped (warp-size), {} fail of {}",
        bad.len(),
        kernels.len()
    );
    child::assert_only_known(&bad, KNOWN_FAILURES);
}

/// Every kernel of `sass_sm53_exec` and `sass_sm86_exec` in soft-f64 mode (exact FMA: the
/// mode lavapipe, which does not fuse, needs): its module holds no 64-bit float type, and it
/// computes the io.json's expected outputs bit for bit.
#[test]
fn sass_soft_f64_exec() {
    let extra = ["x_vset_imm", "x_video_imm"];
    let sm53 = common::sass_kernels()
        .into_iter()
        .chain(common::modifier_kernels())
        .map(|(n, _)| n)
        .chain(extra.iter().map(|n| n.to_string()))
        .filter(|n| io_path(n).is_some());
    let sm86 = common::sass_kernels()
        .into_iter()
        .chain(common::modifier_kernels())
        .map(|(n, _)| n)
        .filter(|n| io_path(n).is_some())
        .filter(|n| first_in(&["sass", "modifiers"], &format!("{n}.sm86.cubin")).is_some())
        .map(|n| format!("sm86:{n}"));
    let kernels: Vec<String> = sm53.chain(sm86).map(|n| format!("soft:{n}")).collect();
    let child::ChildRuns { pass, skip, bad } = child::run_children("exec_one", ENV, &kernels);
    println!(
        "sass soft-f64 exec (sm53 + sm86): {pass} pass, {skip} skipped (warp-size), {} fail of {}",
        bad.len(),
        kernels.len()
    );
    child::assert_only_known(&bad, &[]);
}

#[test]
fn sass_sm86_exec() {
    // The sass corpus and the modifier kernels, where ptxas made sm86 code of them.
    let kernels: Vec<String> = common::sass_kernels()
        .into_iter()
        .chain(common::modifier_kernels())
        .map(|(n, _)| n)
        .filter(|n| io_path(n).is_some())
        .filter(|n| first_in(&["sass", "modifiers"], &format!("{n}.sm86.cubin")).is_some())
        .map(|n| format!("sm86:{n}"))
        .collect();
    let child::ChildRuns { pass, skip, bad } = child::run_children("exec_one", ENV, &kernels);
    println!(
        "sass sm86 exec: {pass} pass, {skip} skipped (warp-size), {} fail of {}",
        bad.len(),
        kernels.len()
    );
    child::assert_only_known(&bad, KNOWN_FAILURES_SM86);
}

/// The kernels of [`sass_sm53_exec`] and [`sass_sm86_exec`] whose translation uses 32-lane
/// warp operations (`warp_ops`), as `warp:` specs.
fn warp_dependent() -> Vec<String> {
    let mut v = Vec::new();
    let kernels: Vec<String> = common::sass_kernels()
        .into_iter()
        .chain(common::modifier_kernels())
        .map(|(n, _)| n)
        .filter(|n| io_path(n).is_some())
        .collect();
    for sm in ["sm53", "sm86"] {
        for name in &kernels {
            let Some(path) = first_in(&["sass", "modifiers"], &format!("{name}.{sm}.cubin")) else {
                continue;
            };
            let Ok(cubin) = dmsh_cubin::read(&path) else {
                continue;
            };
            let Ok(k) = cubin.kernel(name) else { continue };
            let cfg = common::cuda_config(k, common::io_block(name).unwrap_or([1, 1, 1]));
            let warp =
                translate(&k.code, &cfg, &Options::default()).is_ok_and(|o| o.reflection.warp_ops);
            if warp {
                v.push(format!("warp:{sm}:{name}"));
            }
        }
    }
    v
}

/// The warp-dependent kernels (those the two tests above skip where subgroups are not 32
/// wide), translated with the workgroup-memory warp emulation (`WarpMode::Workgroup`: 32-lane
/// warps exchange through workgroup memory, any subgroup size) and run against their
/// io.json: the check of the warp operations' translation that runs on lavapipe. Counted
/// apart from the plain runs.
#[test]
fn sass_warp_emulated_exec() {
    let kernels = warp_dependent();
    assert!(kernels.len() >= 8, "warp-dependent kernels: {kernels:?}");
    let child::ChildRuns { pass, skip, bad } = child::run_children("exec_one", ENV, &kernels);
    println!(
        "sass warp-emulated exec (workgroup memory): {pass} pass, {skip} skipped, {} fail of {}",
        bad.len(),
        kernels.len()
    );
    child::assert_only_known(&bad, &[]);
}
