//! Runs translations of the dksh compute shaders found in `$DMSH_DKSH_SPV_DIR` (files
//! `NAME.spv` + `NAME.json`, e.g. from `dmsh translate --abi deko3d --code
//! tests/corpus/dksh/NAME.comp.code.bin ...`) against glslang's SPIR-V of the same GLSL on the
//! same inputs, one line per shader. Without the variable the test only says so; with
//! `DMSH_DKSH_STRICT=1` any difference fails it. (The translator's own tests do this for every
//! shader; this is the runner-side tool for looking at one translation.)

use std::path::PathBuf;

use dmsh_testsupport::reference::{dksh, glsl};

#[test]
fn dksh_translations_in_dir() {
    let Ok(dir) = std::env::var("DMSH_DKSH_SPV_DIR") else {
        return println!("skipped: set DMSH_DKSH_SPV_DIR to a directory of NAME.spv + NAME.json");
    };
    if !glsl::available() || dmsh_vk::shared().is_err() {
        return println!("skipped: no glslang or no Vulkan device");
    }
    let dir = PathBuf::from(dir);
    let strict = std::env::var("DMSH_DKSH_STRICT").is_ok_and(|v| v == "1");
    let (mut pass, mut bad) = (0, 0);
    for case in dksh::cases(&dksh::corpus_dir()) {
        let spv = dir.join(format!("{}.spv", case.name));
        if !spv.exists() {
            println!("{}: no translation", case.name);
            continue;
        }
        let r = dmsh_vk::job::load_shader(&spv, None)
            .and_then(|(s, r)| dksh::check_translation(&case, s, r));
        match r {
            Ok(m) if m.is_empty() => {
                println!("{}: pass", case.name);
                pass += 1;
            }
            Ok(m) => {
                println!("{}: FAIL {}", case.name, m[0]);
                bad += 1;
            }
            Err(e) if e.is_skip() => println!("{}: skipped ({e})", case.name),
            Err(e) => {
                println!("{}: ERROR {e}", case.name);
                bad += 1;
            }
        }
    }
    println!("{pass} pass, {bad} fail/error");
    assert!(!strict || bad == 0);
}
