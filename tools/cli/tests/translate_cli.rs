//! `dmsh translate` end to end: a corpus cubin kernel → OUT.spv + OUT.json, the SPIR-V passes
//! spirv-val, the reflection names the parameter bank; bad input is an error, not a panic.

mod common;

use common::root;
use std::process::Command;

fn dmsh() -> Command {
    Command::new(env!("CARGO_BIN_EXE_dmsh"))
}

#[test]
fn translate_cubin_kernel() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-translate");
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
    common::assert_spirv_val(&out);
    let json = std::fs::read_to_string(out.with_extension("json")).expect("reflection");
    assert!(json.contains("\"kind\": \"cbuf\""), "{json}");
    assert!(json.contains("\"guest_offset\": 320"), "{json}");
    assert!(json.contains("\"uses_global_addresses\": true"), "{json}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn translate_rejects_garbage_without_panicking() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-translate-bad");
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

#[test]
fn translate_nvn_compute_with_control_section() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-translate-nvn");
    std::fs::create_dir_all(&dir).expect("temp dir");
    // A code area as NVN lays it out: header (magic 0x12345679), instructions at +0x100, then
    // the c1 data; the instructions are a corpus compute program.
    let insts =
        std::fs::read(root().join("tests/corpus/dksh/cs_ssbo_saxpy.comp.code.bin")).expect("code");
    let code = common::nvn_code_area(&insts);
    let c1 = [1, 0, 0, 0, 2, 0, 0, 0];
    let (kpath, cpath) = common::write_nvn_compute(&dir, code, &c1, &[(0x754, 256)]);
    let out = dir.join("k.spv");
    let json = common::translate_with_control("nvn", &kpath, &cpath, &[], &out);
    assert!(
        json.contains("\"local_size\": [\n    64,\n    1,\n    1\n  ]"),
        "{json}"
    );
    assert!(json.contains("\"shared_bytes\": 256"), "{json}");
    assert!(json.contains("\"abi\": \"nvn\""), "{json}");
    common::assert_spirv_val(&out);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Without `--local-bytes`, local memory is at least as large as the highest LDL/STL at a
/// constant offset: read here from nvdisasm's listing, independently of our decoder.
#[test]
fn local_memory_size_covers_constant_offsets() {
    let dir = root().join("tests/corpus/dksh");
    let listing = std::fs::read_to_string(dir.join("cs_local_array.comp.sass")).unwrap();
    let need = dmsh_testsupport::corpus_text::listing_local_bound(&listing);
    assert!(need > 0x100, "the listing has local accesses ({need:#x})");
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-local.spv");
    let st = dmsh()
        .args([
            "translate",
            "--abi",
            "deko3d",
            "--local-size",
            "64,1,1",
            "--code",
        ])
        .arg(dir.join("cs_local_array.comp.code.bin"))
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap();
    assert!(st.success());
    let json = std::fs::read_to_string(out.with_extension("json")).unwrap();
    let local: u32 = json
        .lines()
        .find_map(|l| l.trim().strip_prefix("\"local_bytes\": "))
        .and_then(|v| v.trim_end_matches(',').parse().ok())
        .expect("local_bytes in the reflection");
    println!("local_bytes {local} (listing needs at least {need})");
    assert!(local >= need, "local_bytes {local} < {need}");
    let _ = std::fs::remove_file(&out);
    let _ = std::fs::remove_file(out.with_extension("json"));
}

/// An sm86 cubin kernel translates (the cubin says Ampere) and `dmsh exec` runs it against
/// the corpus's expected outputs (parameters at c[0x0][0x160]); exit 3 = no device.
#[test]
fn translate_and_exec_sm86_kernel() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-translate-sm86");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out = dir.join("logic.spv");
    let st = dmsh()
        .args(["translate", "--abi", "cuda", "--cubin"])
        .arg(root().join("tests/corpus/sass/logic.sm86.cubin"))
        .args(["--kernel", "logic", "--local-size", "64,1,1", "-o"])
        .arg(&out)
        .status()
        .expect("run dmsh");
    assert!(st.success());
    common::assert_spirv_val(&out);
    let json = std::fs::read_to_string(out.with_extension("json")).expect("reflection");
    assert!(json.contains("\"guest_offset\": 352"), "{json}");
    let o = dmsh()
        .args(["exec", "--param-base", "0x160", "--io"])
        .arg(root().join("tests/corpus/sass/logic.io.json"))
        .arg("--spv")
        .arg(&out)
        .output()
        .expect("run dmsh exec");
    let code = o.status.code();
    assert!(
        code == Some(0) || code == Some(3),
        "{code:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Ampere garbage: an error naming the offset of the word that does not decode, not a panic.
#[test]
fn translate_sm86_rejects_garbage_without_panicking() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-translate-bad86");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let code = dir.join("bad.bin");
    // NOP, then a word no form matches.
    let mut bytes = 0x000fc200000000000000000000007918u128
        .to_le_bytes()
        .to_vec();
    bytes.extend_from_slice(&[0xffu8; 16]);
    std::fs::write(&code, &bytes).expect("write");
    let o = dmsh()
        .args(["translate", "--arch", "sm86", "--abi", "nvn", "--code"])
        .arg(&code)
        .arg("-o")
        .arg(dir.join("bad.spv"))
        .output()
        .expect("run dmsh");
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("offset 0x10"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
