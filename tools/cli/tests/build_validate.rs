//! The build's `validate` step (spirv-val on each module after the fix-ups), wired end to end
//! with a stand-in spirv-val that refuses every module: each translated key fails at step
//! `validate` with the validator's message, the build goes on (non-zero only with --strict),
//! the report groups the keys under `invalid_spirv`, and spirv-val's version is on the chain
//! (V differs from the build with the real one). That the real spirv-val accepts every demo
//! module is `build_cli`'s count of built keys.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{b_dir, build_args, demo_game, demo_split, stand_in};

const STAND_IN: &str = r#"#!/bin/sh
case "$*" in
  *--version*) echo "SPIRV-Tools stand-in (dmsh test)"; exit 0 ;;
esac
echo "error: line 1: stand-in spirv-val refuses $1" >&2
exit 1
"#;

/// `dmsh args` with `bin` first on PATH and its spirv-val as the validator (a linked
/// SPIRV-Tools is used otherwise, `dmsh_vk::validate`).
fn dmsh_with(bin: &Path, args: &[&str]) -> std::process::Output {
    let old = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::iter::once(bin.to_path_buf()).chain(std::env::split_paths(&old));
    Command::new(env!("CARGO_BIN_EXE_dmsh"))
        .args(args)
        .env("PATH", std::env::join_paths(dirs).unwrap())
        .env("DMSH_SPIRV_VAL", bin.join("spirv-val"))
        .output()
        .expect("dmsh runs")
}

fn json(p: PathBuf) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

#[test]
fn a_module_spirv_val_refuses_fails_at_validate() {
    let (split, _) = demo_split("validate-test");
    let bin = split.join("bin");
    stand_in(&bin, "spirv-val", STAND_IN);
    let game = demo_game();
    let out = split.join("o");
    let o_arg = ["--out", out.to_str().unwrap()];
    let o = dmsh_with(&bin, &build_args(&split, &game, &o_arg));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let strict = [o_arg[0], o_arg[1], "--strict"];
    let o = dmsh_with(&bin, &build_args(&split, &game, &strict));
    assert!(!o.status.success(), "--strict fails");
    let dir = b_dir(&out);
    let real = b_dir(&split);
    let same = dir.file_name() == real.file_name();
    assert!(!same, "spirv-val's version is on V");
    let rec = json(dir.join("_b_build.json"));
    let mut refused = 0;
    for s in rec["shaders"].as_array().unwrap() {
        let key = s["key"].as_str().unwrap();
        let (status, step) = (s["status"].as_str().unwrap(), s["step"].as_str().unwrap());
        assert_ne!(status, "built", "{key}: every translated module is refused");
        if step == "validate" {
            refused += 1;
            let msg = s["message"].as_str().unwrap();
            assert!(msg.contains("stand-in spirv-val refuses"), "{key}: {msg}");
            assert!(!dir.join(format!("{key}_b.metal")).exists(), "{key}");
        } else {
            panic!("{key}: every demo key translates, yet it stopped at {step}");
        }
    }
    // Every key translates (all 54 reach MSL otherwise).
    assert_eq!(refused, 54, "{refused} refused");
    let report = split.join("report-validate");
    let [sp, b, r] = [&split, &dir, &report].map(|p| p.to_str().unwrap());
    let args = ["report", "--split", sp, "--build", b, "--out", r];
    let o = common::dmsh(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rep = json(report.join("report.json"));
    let failures = rep["failures"].as_array().unwrap();
    let group = failures.iter().find(|g| g["cause"] == "invalid_spirv");
    let group = group.expect("an invalid_spirv group");
    assert_eq!(group["count"].as_u64(), Some(refused as u64));
    let _ = std::fs::remove_dir_all(&split);
}
