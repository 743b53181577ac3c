//! `dmsh translate` end to end: a corpus cubin kernel → OUT.spv + OUT.json, the SPIR-V passes
//! spirv-val, the reflection names the parameter bank; bad input is an error, not a panic.

use std::path::Path;
use std::process::Command;

fn dmsh() -> Command {
    Command::new(env!("CARGO_BIN_EXE_dmsh"))
}

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

#[test]
fn translate_cubin_kernel() {
    let dir = std::env::temp_dir().join(format!("dmsh-translate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out = dir.join("int_addsub.spv");
    let st = dmsh()
        .args([
            "translate",
            "--arch",
            "sm53",
            "--stage",
            "compute",
            "--abi",
            "cuda",
        ])
        .arg("--cubin")
        .arg(root().join("tests/corpus/sass/int_addsub.sm53.cubin"))
        .args(["--kernel", "int_addsub", "--local-size", "64,1,1", "-o"])
        .arg(&out)
        .status()
        .expect("run dmsh");
    assert!(st.success());
    let val = Command::new("spirv-val")
        .args(["--target-env", "vulkan1.2"])
        .arg(&out)
        .status()
        .expect("spirv-val");
    assert!(val.success());
    let json = std::fs::read_to_string(out.with_extension("json")).expect("reflection");
    assert!(json.contains("\"kind\": \"cbuf\""), "{json}");
    assert!(json.contains("\"guest_offset\": 320"), "{json}");
    assert!(json.contains("\"uses_global_addresses\": true"), "{json}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn translate_rejects_garbage_without_panicking() {
    let dir = std::env::temp_dir().join(format!("dmsh-translate-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let code = dir.join("bad.bin");
    std::fs::write(&code, [0xffu8; 64]).expect("write");
    let o = dmsh()
        .args(["translate", "--abi", "nvn", "--code"])
        .arg(&code)
        .arg("-o")
        .arg(dir.join("bad.spv"))
        .output()
        .expect("run dmsh");
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("offset 0x8"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
