//! `dmsh translate --control`: NVN compute's local memory size comes from the control
//! section's scratch bytes per warp (+0x710) when the code uses local memory, and
//! `--local-bytes` replaces it. The code is the corpus's `cs_local_array` (a dynamically
//! indexed `int arr[24]`); +0x710 holds what uam wrote as `per_warp_scratch_sz` and the size
//! must cover the program's `local_pos_mem_sz` (both from its meta.json, the oracle).

mod common;

use common::root;
use std::path::Path;

fn number(text: &str, key: &str) -> u32 {
    let i = text.find(&format!("\"{key}\"")).expect(key);
    let rest = text[i + key.len() + 2..]
        .trim_start()
        .trim_start_matches(':');
    let rest = rest.trim_start();
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().expect("number")
}

/// Translates the NVN code area + control section; returns the reflection's local bytes.
fn local_bytes(dir: &Path, extra: &[&str]) -> u32 {
    let out = dir.join("k.spv");
    let (code, control) = (dir.join("k.bin"), dir.join("c.bin"));
    let json = common::translate_with_control("nvn", &code, &control, extra, &out);
    number(&json, "local_bytes")
}

#[test]
fn nvn_compute_local_size_from_control_section() {
    let corpus = root().join("tests/corpus/dksh");
    let insts = std::fs::read(corpus.join("cs_local_array.comp.code.bin")).expect("code");
    let meta = std::fs::read_to_string(corpus.join("cs_local_array.comp.meta.json")).unwrap();
    let scratch = number(&meta, "per_warp_scratch_sz");
    let local = number(&meta, "local_pos_mem_sz");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-nvn-local");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let code = common::nvn_code_area(&insts);
    common::write_nvn_compute(&dir, code, &[], &[(0x710, scratch)]);
    let from_control = local_bytes(&dir, &[]);
    println!("local_bytes {from_control} (scratch per warp {scratch}, local_pos_mem_sz {local})");
    assert!(from_control >= local, "{from_control} < {local}");
    assert!(
        from_control * 32 <= scratch,
        "no more than the scratch per lane"
    );
    let given = local + 0x100;
    assert_eq!(
        local_bytes(&dir, &["--local-bytes", &given.to_string()]),
        given
    );
    let _ = std::fs::remove_dir_all(&dir);
}
