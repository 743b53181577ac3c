//! The deko3d compute shaders of tests/corpus/dksh translate (deko3d ABI) to SPIR-V that
//! `spirv-val --target-env vulkan1.2` accepts. One line per shader; failures not listed in
//! `KNOWN_FAILURES` fail the test.

mod common;

use dmsh_spv::{translate, Options};

/// Shaders that do not translate yet, with the cause.
const KNOWN_FAILURES: &[(&str, &str)] = &[];

#[test]
fn dksh_compute_translates_and_validates() {
    let mut ok = 0;
    let mut bad = Vec::new();
    let shaders = common::dksh_compute();
    for (name, code, ls, shared, local) in &shaders {
        let cfg = common::deko3d_config(*ls, *shared, *local);
        let r = translate(code, &cfg, &Options::default())
            .map_err(|e| e.to_string())
            .and_then(|o| common::spirv_val(&o.words).map(|_| o));
        match r {
            Ok(o) => {
                ok += 1;
                println!(
                    "ok   {name} ({} words, {} blocks)",
                    o.words.len(),
                    o.reflection.blocks
                );
            }
            Err(e) => {
                println!("FAIL {name}: {e}");
                bad.push((name.clone(), e));
            }
        }
    }
    println!(
        "dksh compute: {ok}/{} translate and pass spirv-val",
        shaders.len()
    );
    let unexpected: Vec<_> = bad
        .iter()
        .filter(|(n, _)| !KNOWN_FAILURES.iter().any(|(k, _)| k == n))
        .collect();
    assert!(
        unexpected.is_empty(),
        "unexpected failures: {unexpected:#?}"
    );
}
