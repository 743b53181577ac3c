//! The build's `validate` step (spirv-val on each module after the fix-ups), wired end to end
//! with a stand-in spirv-val that refuses every module: each translated key fails at step
//! `validate` with the validator's message, the build goes on (non-zero only with --strict),
//! the report groups the keys under `invalid_spirv`, and spirv-val's version is on the chain
//! (V differs from the build with the real one). That the real spirv-val accepts every demo
//! module is `build_cli`'s count of built keys.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::b_dir;

const STAND_IN: &str = r#"#!/bin/sh
case "$*" in
  *--version*) echo "SPIRV-Tools stand-in (dmsh test)"; exit 0 ;;
esac
echo "error: line 1: stand-in spirv-val refuses $1" >&2
exit 1
"#;

fn dmsh(args: &[&str], path: Option<&Path>) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dmsh"));
    c.args(args);
    if let Some(p) = path {
        let old = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![p.to_path_buf()];
        dirs.extend(std::env::split_paths(&old));
        c.env("PATH", std::env::join_paths(dirs).unwrap());
    }
    c.output().expect("dmsh runs")
}

fn json(p: PathBuf) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

#[test]
fn a_module_spirv_val_refuses_fails_at_validate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let t = std::env::temp_dir().join(format!("dmsh-validate-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&t);
    let bin = t.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let val = bin.join("spirv-val");
    std::fs::write(&val, STAND_IN).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&val, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let split = t.join("split");
    let o = dmsh(&["demo", "--out", split.to_str().unwrap()], None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let game = root.join("games/demo");
    let build = |out: &Path, strict: bool| {
        let mut a = vec![
            "build",
            "--split",
            split.to_str().unwrap(),
            "--game",
            game.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        if strict {
            a.push("--strict");
        }
        dmsh(&a, Some(&bin))
    };
    let out = t.join("o");
    let o = build(&out, false);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!build(&out, true).status.success(), "--strict fails");
    let dir = b_dir(&out);
    let real = b_dir(&split);
    assert_ne!(
        dir.file_name(),
        real.file_name(),
        "spirv-val's version is on V"
    );
    let rec = json(dir.join("_b_build.json"));
    let mut refused = 0;
    for s in rec["shaders"].as_array().unwrap() {
        let key = s["key"].as_str().unwrap();
        let (status, step) = (s["status"].as_str().unwrap(), s["step"].as_str().unwrap());
        assert_ne!(status, "built", "{key}: every translated module is refused");
        if step == "validate" {
            refused += 1;
            assert!(
                s["message"]
                    .as_str()
                    .unwrap()
                    .contains("stand-in spirv-val refuses"),
                "{key}: the validator's message"
            );
            assert!(!dir.join(format!("{key}_b.metal")).exists(), "{key}");
        } else {
            // Only keys that never reach a module: NVN2 code.
            assert_eq!(status, "unsupported", "{key} at {step}");
        }
    }
    // The 48 keys that translate (44 that reach MSL, 4 geometry / tessellation).
    assert!(refused >= 48, "{refused} refused");
    let o = dmsh(
        &[
            "report",
            "--split",
            split.to_str().unwrap(),
            "--build",
            dir.to_str().unwrap(),
            "--out",
            t.join("report").to_str().unwrap(),
        ],
        None,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rep = json(t.join("report/report.json"));
    let group = rep["failures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["cause"] == "invalid_spirv")
        .expect("an invalid_spirv group");
    assert_eq!(group["count"].as_u64(), Some(refused as u64));
    let _ = std::fs::remove_dir_all(&t);
}
