//! The build's `xcrun metal` step, with a stand-in xcrun (this machine has no Xcode): a shell
//! script that answers `--find metal` and `metal --version`, records every command line, and
//! "compiles" by writing a file that starts with the MSL it was given. The test checks what can
//! be checked without Apple's compiler: every built key gets its `.metallib` from its own
//! `.metal`, with `-std=metal3.1 -fpreserve-invariance` (and `-fmetal-math-mode=relaxed` for
//! iOS), a compiler failure fails that key alone at step `metallib`, and the compiler's
//! version is on the chain (V differs from a build without xcrun).

mod common;
use common::{b_dir, build_args, demo_game, stand_in};

use std::path::Path;
use std::process::Command;

const STAND_IN: &str = r#"#!/bin/sh
echo "$@" >> "$DMSH_XCRUN_LOG"
case "$*" in
  *"--find metal"*) echo /stand-in/metal; exit 0 ;;
  *"metal --version"*) echo "Apple metal version 0.0 (dmsh test stand-in)"; exit 0 ;;
esac
out=""; prev=""; src=""
for a in "$@"; do
  if [ "$prev" = "-o" ]; then out="$a"; fi
  prev="$a"; src="$a"
done
case "$src" in
  *"$DMSH_XCRUN_FAIL"*) echo "$src:1:1: error: stand-in refuses this file" >&2; exit 1 ;;
esac
{ printf 'MTLB-stand-in\n'; cat "$src"; } > "$out"
"#;

fn dmsh(args: &[&str], envs: &[(&str, &Path)], fail: &str) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dmsh"));
    c.args(args).env("DMSH_XCRUN_FAIL", fail);
    for (k, v) in envs {
        c.env(k, v);
    }
    c.output().expect("dmsh runs")
}

#[test]
fn metallibs_with_a_stand_in_xcrun() {
    let t = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-metallib-test");
    let _ = std::fs::remove_dir_all(&t);
    let xcrun = stand_in(&t, "xcrun", STAND_IN);
    let log = t.join("xcrun.log");
    let split = t.join("split");
    let o = dmsh(&["demo", "--out", split.to_str().unwrap()], &[], "none");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let game = demo_game();
    let build = |out: &Path, ios: bool, with_xcrun: bool, fail: &str| {
        let mut args = build_args(&split, &game, &["--out", out.to_str().unwrap()]);
        if ios {
            args.push("--ios");
        }
        let envs: Vec<(&str, &Path)> = if with_xcrun {
            vec![
                ("DMSH_XCRUN", xcrun.as_path()),
                ("DMSH_XCRUN_LOG", log.as_path()),
            ]
        } else {
            vec![("DMSH_XCRUN", Path::new("/nonexistent/xcrun"))]
        };
        let o = dmsh(&args, &envs, fail);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        (b_dir(out), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let (plain, err) = build(&t.join("none"), false, false, "none");
    assert!(err.contains("no xcrun metal here"), "{err}");
    let (mac, _) = build(&t.join("mac"), false, true, "8d4ca18ad47d2b4c");
    assert_ne!(
        plain.file_name(),
        mac.file_name(),
        "xcrun's version is on the chain"
    );
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(mac.join("_b_build.json")).unwrap()).unwrap();
    let (mut libs, mut failed_at_metallib) = (0, Vec::new());
    for s in record["shaders"].as_array().unwrap() {
        let key = s["key"].as_str().unwrap();
        match (s["status"].as_str().unwrap(), s["step"].as_str()) {
            ("built", _) => {
                // `_b`, and a lowered pipeline's other passes (`_p`, `_g`, `_q`:
                // docs/geometry.md) or the dual-source variant: one library per MSL file.
                for suffix in ["_b", "_p", "_g", "_q", "_d"] {
                    let Ok(metal) =
                        std::fs::read_to_string(mac.join(format!("{key}{suffix}.metal")))
                    else {
                        assert_ne!(suffix, "_b", "{key}");
                        continue;
                    };
                    let lib = mac.join(format!("{key}{suffix}.metallib"));
                    let lib = std::fs::read_to_string(lib).unwrap();
                    assert_eq!(lib, format!("MTLB-stand-in\n{metal}"), "{key}{suffix}");
                    libs += 1;
                }
            }
            ("failed", Some("metallib")) => {
                assert!(s["message"].as_str().unwrap().contains("stand-in refuses"));
                assert!(!mac.join(format!("{key}_b.metal")).exists());
                failed_at_metallib.push(key.to_string());
            }
            _ => {}
        }
    }
    assert_eq!(failed_at_metallib, ["8d4ca18ad47d2b4c"]);
    assert!(libs >= 39, "{libs} metallibs");
    let lines = std::fs::read_to_string(&log).unwrap();
    let compiles: Vec<&str> = lines.lines().filter(|l| l.contains(" -o ")).collect();
    assert_eq!(compiles.len(), libs + 1);
    assert!(compiles
        .iter()
        .all(|l| l.starts_with("-sdk macosx metal -std=metal3.1 -fpreserve-invariance -o ")));
    // iOS: the iPhone SDK and relaxed math, invariance kept.
    std::fs::remove_file(&log).unwrap();
    build(&t.join("ios"), true, true, "none");
    let lines = std::fs::read_to_string(&log).unwrap();
    let compiles: Vec<&str> = lines.lines().filter(|l| l.contains(" -o ")).collect();
    assert!(compiles.len() >= 40);
    assert!(compiles.iter().all(|l| l.starts_with(
        "-sdk iphoneos metal -std=metal3.1 -fpreserve-invariance -fmetal-math-mode=relaxed -o "
    )));
    let _ = std::fs::remove_dir_all(&t);
}
