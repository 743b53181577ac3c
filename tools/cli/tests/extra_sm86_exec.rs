//! The executable kernels of tests/corpus/extra/sm86 (those with a `K.io.json`): the tensor
//! kernels of `tensor/` (PTX `mma.sync` with f16, bf16, tf32 and s8/u8 inputs, `ldmatrix`
//! .x1/.x2/.x4 and .trans, `movmatrix`, and a tile loaded with `ldmatrix` and multiplied with
//! `mma.sync`), the warp kernels of `ctrl/` (`match.sync`, `vote.sync`, `redux.sync`) and the
//! kernels of `forms/` (xorsign min/max, f16 / bf16 min/max, bf16 FMA, cache-policy
//! descriptors, cp.async zero fill, named barriers), all compiled by ptxas for sm_86:
//! translated and run on the Vulkan device against their `K.io.json` (expected values from an
//! independent CPU model of the PTX ISA's definitions, see the folders' READMEs), bit for bit.
//! Kernels whose PTX ptxas also compiled for sm_53 (`K.sm53.cubin` next to the sm86 one: the
//! named-barrier kernels of `forms/`) run a second time from that Maxwell code, against the
//! same `K.io.json`.
//!
//! Each warp kernel runs twice, in child processes: with the workgroup-memory warp emulation
//! (`WarpMode::Workgroup`, any subgroup size: it runs on lavapipe), and as the default
//! translation (subgroup operations), which is reported as skipped where subgroups are not 32
//! lanes wide. Both must say `tensor: subgroup_emulation` in the reflection when the kernel
//! has HMMA or IMMA. A kernel without warp operations runs once.

#[path = "../../spv/tests/common/mod.rs"]
mod common;

use dmsh_spv::{translate, Options, WarpMode};
use dmsh_testsupport::child;

const ENV: &str = "DMSH_EXTRA_SM86_EXEC_ONE";

/// The folders with executable kernels.
const DIRS: &[&str] = &["tensor", "ctrl", "forms"];

/// The folder of a kernel.
fn dir_of(name: &str) -> std::path::PathBuf {
    let d = if name.starts_with("x_ctrl_") {
        "ctrl"
    } else if name.starts_with("x_forms_") {
        "forms"
    } else {
        "tensor"
    };
    common::root().join("tests/corpus/extra/sm86").join(d)
}

/// Whether a kernel's code for `sm` has warp operations (the tensor and warp kernels, the
/// sm86 `x_forms_bar`); the others run once, with no warp operation in their reflection.
fn uses_warp(sm: &str, name: &str) -> bool {
    // x_forms_bar: for sm_86 ptxas guards `barrier.sync` with a register id by
    // `BRA.CONV ~URZ` (a ballot); its sm_53 code has no warp operation.
    name.starts_with("x_tensor_")
        || name.starts_with("x_ctrl_")
        || (sm == "sm86" && name == "x_forms_bar")
}

/// The architectures a kernel was compiled for: sm86, and sm53 where its cubin is there.
fn archs(name: &str) -> Vec<&'static str> {
    let sm53 = dir_of(name).join(format!("{name}.sm53.cubin")).exists();
    if sm53 {
        vec!["sm86", "sm53"]
    } else {
        vec!["sm86"]
    }
}

/// The kernels with an io.json, sorted.
fn kernels() -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for d in DIRS {
        let dir = common::root().join("tests/corpus/extra/sm86").join(d);
        v.extend(
            std::fs::read_dir(dir)
                .expect("extra sm86 corpus")
                .filter_map(|e| {
                    let n = e.ok()?.file_name().to_string_lossy().into_owned();
                    n.strip_suffix(".io.json").map(str::to_string)
                }),
        );
    }
    v.sort();
    v
}

/// Runs one kernel (`warp:K` emulated, `sub:K` with subgroups, `plain:K` without warp
/// operations; `warp:sm53:K` … for its sm_53 code); `RESULT pass|fail|skip|…`.
fn run_one(spec: &str) -> String {
    let (warp, name) = match spec.split_once(':') {
        Some(("warp", n)) => (WarpMode::Workgroup, n),
        Some(("sub" | "plain", n)) => (WarpMode::Subgroup, n),
        _ => return format!("error bad spec {spec}"),
    };
    let (sm, name) = match name.strip_prefix("sm53:") {
        Some(n) => ("sm53", n),
        None => ("sm86", name),
    };
    let io_path = dir_of(name).join(format!("{name}.io.json"));
    let io = match dmsh_vk::io_json::IoJson::load(&io_path) {
        Ok(io) => io,
        Err(e) => return format!("error io.json: {e}"),
    };
    let cubin = match dmsh_cubin::read(&dir_of(name).join(format!("{name}.{sm}.cubin"))) {
        Ok(c) => c,
        Err(e) => return format!("error cubin: {e}"),
    };
    let k = match cubin.kernel(name) {
        Ok(k) => k,
        Err(e) => return format!("error kernel: {e}"),
    };
    let cfg = common::cuda_config(k, io.block);
    let opts = Options {
        warp,
        ..Default::default()
    };
    let out = match translate(&k.code, &cfg, &opts) {
        Ok(o) => o,
        Err(e) => return format!("error translate: {e}"),
    };
    if let Err(e) = common::spirv_val(&out.words) {
        return format!("error spirv-val: {e}");
    }
    let r = &out.reflection;
    // `tensor` describes HMMA / IMMA; LDSM and MOVM are shuffles and loads.
    let mma = name.starts_with("x_tensor_") && !matches!(name, "x_tensor_ldsm" | "x_tensor_movm");
    if r.tensor.as_deref() != mma.then_some("subgroup_emulation") {
        return format!("error reflection tensor {:?}", r.tensor);
    }
    let warp_ok = if uses_warp(sm, name) {
        r.warp_emulated == (warp == WarpMode::Workgroup) && r.warp_ops != r.warp_emulated
    } else {
        !r.warp_ops && !r.warp_emulated
    };
    if !warp_ok {
        return format!(
            "error reflection warp_ops {} warp_emulated {}",
            r.warp_ops, r.warp_emulated
        );
    }
    // The named-barrier kernels (both architectures) count arrivals per barrier id in the
    // barrier-synchronised dispatcher.
    let named = name.starts_with("x_forms_bar");
    if named != (r.dispatcher_reason.as_deref() == Some("named barriers")) {
        return format!(
            "error reflection dispatcher_reason {:?}",
            r.dispatcher_reason
        );
    }
    child::io_verdict(&io, out.words, r, k.param_base)
}

#[test]
#[ignore = "child process of extra_sm86_exec"]
fn extra_sm86_exec_one() {
    child::run_named(ENV, run_one);
}

#[test]
fn extra_sm86_exec() {
    let names = kernels();
    assert!(names.len() >= 9, "kernels: {names:?}");
    let spec = |sm: &str, n: &str| {
        if sm == "sm86" {
            n.to_string()
        } else {
            format!("{sm}:{n}")
        }
    };
    let emulated: Vec<String> = names
        .iter()
        .flat_map(|n| archs(n).into_iter().map(move |sm| (sm, n)))
        .map(|(sm, n)| {
            if uses_warp(sm, n) {
                format!("warp:{}", spec(sm, n))
            } else {
                format!("plain:{}", spec(sm, n))
            }
        })
        .collect();
    let sm53 = emulated.iter().filter(|s| s.contains(":sm53:")).count();
    assert!(sm53 >= 2, "sm53 runs: {emulated:?}");
    let runs = child::run_children("extra_sm86_exec_one", ENV, &emulated);
    println!(
        "extra sm86 exec, warp-emulated (workgroup memory) or without warp operations: {} pass, {} skipped, {} fail of {} ({sm53} of them the sm_53 code)",
        runs.pass,
        runs.skip,
        runs.bad.len(),
        emulated.len()
    );
    let sub: Vec<String> = names
        .iter()
        .flat_map(|n| archs(n).into_iter().map(move |sm| (sm, n)))
        .filter(|(sm, n)| uses_warp(sm, n))
        .map(|(sm, n)| format!("sub:{}", spec(sm, n)))
        .collect();
    let subs = child::run_children("extra_sm86_exec_one", ENV, &sub);
    println!(
        "extra sm86 exec, subgroups: {} pass, {} skipped (warp-size), {} fail of {}",
        subs.pass,
        subs.skip,
        subs.bad.len(),
        sub.len()
    );
    let mut bad = runs.bad;
    bad.extend(subs.bad);
    child::assert_only_known(&bad, &[]);
    assert_eq!(runs.pass, emulated.len(), "every emulated run must pass");
}
