//! Helpers shared by the CLI tests: the repository root, NVN code areas and control sections,
//! `dmsh translate` with a control section, spirv-val on a written module, running `dmsh`, the
//! arguments of `dmsh translate` and `dmsh build`, and a build's `b-<V>` folder and its bytes.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root.
pub fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// An NVN compute code area: a 0x100-byte header (magic 0x12345679), then `insts`.
pub fn nvn_code_area(insts: &[u8]) -> Vec<u8> {
    let mut code = vec![0u8; 0x100];
    code[..4].copy_from_slice(&0x1234_5679u32.to_le_bytes());
    code.extend_from_slice(insts);
    code
}

/// A Switch 1 control section (0x880 bytes: magic, length) with the little-endian words
/// `fields` (offset, value) written into it.
pub fn control_section(fields: &[(usize, u32)]) -> Vec<u8> {
    let mut control = vec![0u8; 0x880];
    let mut put = |off: usize, v: u32| control[off..off + 4].copy_from_slice(&v.to_le_bytes());
    put(0, 0x9876_1234);
    put(0x20, 0x880);
    for &(off, v) in fields {
        put(off, v);
    }
    control
}

/// The control section of an NVN compute code area of `code_len` bytes with the instructions
/// at +0x100 and `c1_len` bytes of c1 at `c1_off`: stage 5 (compute), 64×1×1 threads, and
/// the further words `extra` (offset, value).
pub fn nvn_compute_control(
    code_len: u32,
    c1_off: u32,
    c1_len: u32,
    extra: &[(usize, u32)],
) -> Vec<u8> {
    let mut fields = vec![
        (0x6fc, c1_len),
        (0x700, c1_off),
        (0x704, code_len),
        (0x708, 0x100),
        (0x714, 5),
        (0x748, 64),
        (0x74c, 1),
        (0x750, 1),
    ];
    fields.extend_from_slice(extra);
    control_section(&fields)
}

/// Writes an NVN compute program into `dir`: the code area `code` with `c1` appended (c1 at
/// `code.len()`) as `k.bin`, and its control section ([`nvn_compute_control`] with the further
/// words `extra`) as `c.bin`. Returns (code path, control path).
pub fn write_nvn_compute(
    dir: &Path,
    mut code: Vec<u8>,
    c1: &[u8],
    extra: &[(usize, u32)],
) -> (PathBuf, PathBuf) {
    let c1_off = code.len() as u32;
    code.extend_from_slice(c1);
    let control = nvn_compute_control(code.len() as u32, c1_off, c1.len() as u32, extra);
    let (kpath, cpath) = (dir.join("k.bin"), dir.join("c.bin"));
    std::fs::write(&cpath, &control).expect("write");
    std::fs::write(&kpath, &code).expect("write");
    (kpath, cpath)
}

/// Runs `dmsh translate --abi ABI --code CODE --control CONTROL EXTRA… -o OUT`, asserts that
/// it succeeds and returns the reflection (OUT.json).
pub fn translate_with_control(
    abi: &str,
    code: &Path,
    control: &Path,
    extra: &[&str],
    out: &Path,
) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_dmsh"))
        .args(["translate", "--abi", abi, "--code"])
        .arg(code)
        .arg("--control")
        .arg(control)
        .args(extra)
        .arg("-o")
        .arg(out)
        .output()
        .expect("run dmsh");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(out.with_extension("json")).expect("reflection")
}

/// Asserts that `spirv-val --target-env vulkan1.2` accepts the module at `path`.
pub fn assert_spirv_val(path: &Path) {
    let bytes = std::fs::read(path).expect("the module");
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if let Err(e) = dmsh_vk::spirv_val(&words) {
        panic!("spirv-val rejects {}: {e}", path.display());
    }
}

/// Runs `dmsh` with `args`.
pub fn dmsh(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_dmsh"))
        .args(args)
        .output()
        .expect("dmsh runs")
}

/// The arguments of `dmsh translate --stage STAGE --code CODE EXTRA… -o OUT`.
pub fn translate_args<'a>(
    stage: &'a str,
    code: &'a Path,
    extra: &[&'a str],
    out: &'a Path,
) -> Vec<&'a str> {
    let mut args = vec![
        "translate",
        "--stage",
        stage,
        "--code",
        code.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    args.extend(["-o", out.to_str().unwrap()]);
    args
}

/// The arguments of `dmsh build --split SPLIT --game GAME EXTRA…`.
pub fn build_args<'a>(split: &'a Path, game: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "build",
        "--split",
        split.to_str().unwrap(),
        "--game",
        game.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    args
}

/// Runs `dmsh demo --out DIR` into a fresh temporary folder `dmsh-NAME-<pid>` and asserts
/// that it succeeds: the folder (the demo's split, `b-<V>/` and `report/`) and the standard
/// output.
pub fn demo_split(name: &str) -> (PathBuf, String) {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("dmsh-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    let o = dmsh(&["demo", "--out", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (dir, String::from_utf8_lossy(&o.stdout).into_owned())
}

/// The bundled demo title's game folder (`games/demo`: its profile).
pub fn demo_game() -> PathBuf {
    root().join("games/demo")
}

/// Writes `script` as the executable `dir/name` (a stand-in for a tool this machine lacks or
/// a test wants to control) and returns its path.
pub fn stand_in(dir: &Path, name: &str, script: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, script).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    p
}

/// The `b-<V>` folder a build wrote into `out`.
pub fn b_dir(out: &Path) -> PathBuf {
    std::fs::read_dir(out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("b-"))
        })
        .expect("a b-<V> folder")
}

/// Every file of `dir` (which holds only files) with its bytes, by name.
pub fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            let p = e.path();
            assert!(p.is_file(), "{} is not a file", p.display());
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}
