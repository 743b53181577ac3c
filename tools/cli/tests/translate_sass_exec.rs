//! Every sm53 kernel of tests/corpus/sass with a K.io.json: translate (CUDA ABI), run on the
//! Vulkan device (lavapipe in CI) through dmsh-vk, compare with the expected outputs bit for
//! bit. Each kernel runs in a child process (lavapipe has no fault isolation). Kernels whose
//! translation relies on 32-lane subgroups are reported as skipped where the device's subgroup
//! size is not 32 — never as passed. The test fails on any mismatch or error not listed in
//! `KNOWN_FAILURES`.

#[path = "../../spv/tests/common/mod.rs"]
mod common;

use dmsh_spv::{translate, Options};
use std::process::Command;

/// Kernels that do not pass yet, with the cause. The gap stays visible here.
const KNOWN_FAILURES: &[(&str, &str)] = &[(
    "setp_f32",
    "testp.normal(±0): ptxas's code (ISETP.EQ.U32.OR P0, |x|, RZ, P0 then SEL) says \
         normal, the PTX reference says not normal; we follow the machine code",
)];

const ENV: &str = "DMSH_EXEC_ONE";

/// Runs one kernel (in the child); prints `RESULT pass|fail|skip|error detail`.
fn run_one(name: &str) -> String {
    let path = common::root().join(format!("tests/corpus/sass/{name}.sm53.cubin"));
    let io_path = common::root().join(format!("tests/corpus/sass/{name}.io.json"));
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
    let out = match translate(&k.code, &cfg, &Options::default()) {
        Ok(o) => o,
        Err(e) => return format!("error translate: {e}"),
    };
    if let Err(e) = common::spirv_val(&out.words) {
        return format!("error spirv-val: {e}");
    }
    let refl = match dmsh_vk::Reflection::from_json(&out.reflection.to_json()) {
        Ok(r) => r,
        Err(e) => return format!("error reflection: {e}"),
    };
    let job = match io.job(out.words.clone(), refl, k.param_base) {
        Ok(j) => j,
        Err(e) => return format!("error job: {e}"),
    };
    match dmsh_vk::run_compute(&job) {
        Ok(o) => match io.check(&o) {
            Ok(m) if m.is_empty() => "pass".into(),
            Ok(m) => format!(
                "fail {}",
                m.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            Err(e) => format!("error check: {e}"),
        },
        Err(e) if e.is_skip() => format!("skip {e}"),
        Err(e) => format!("error run: {e}"),
    }
}

#[test]
#[ignore = "child process of sass_sm53_exec"]
fn exec_one() {
    if let Ok(name) = std::env::var(ENV) {
        println!("RESULT {}", run_one(&name));
    }
}

#[test]
fn sass_sm53_exec() {
    let exe = std::env::current_exe().expect("test binary");
    let kernels: Vec<String> = common::sass_kernels()
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| {
            common::root()
                .join(format!("tests/corpus/sass/{n}.io.json"))
                .exists()
        })
        .collect();
    let (mut pass, mut skip) = (0, 0);
    let mut bad = Vec::new();
    for name in &kernels {
        let out = Command::new(&exe)
            .args([
                "--ignored",
                "--exact",
                "exec_one",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(ENV, name)
            .output()
            .expect("spawn child");
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .find_map(|l| l.find("RESULT ").map(|i| &l[i + 7..]))
            .map(str::to_string)
            .unwrap_or_else(|| format!("error crashed ({})", out.status));
        let short: String = line.chars().take(300).collect();
        println!("{name}: {short}");
        if line == "pass" {
            pass += 1;
        } else if line.starts_with("skip") {
            skip += 1;
        } else {
            bad.push((name.clone(), short));
        }
    }
    println!(
        "sass sm53 exec: {pass} pass, {skip} skipped (warp-size), {} fail of {}",
        bad.len(),
        kernels.len()
    );
    for (k, why) in KNOWN_FAILURES {
        if !bad.iter().any(|(n, _)| n == k) {
            println!("note: {k} is listed as a known failure ({why}) but did not fail");
        }
    }
    let unexpected: Vec<_> = bad
        .iter()
        .filter(|(n, _)| !KNOWN_FAILURES.iter().any(|(k, _)| k == n))
        .collect();
    assert!(
        unexpected.is_empty(),
        "unexpected failures: {unexpected:#?}"
    );
}
