//! Every sm53 kernel of tests/corpus/sass translates (CUDA ABI) to SPIR-V that
//! `spirv-val --target-env vulkan1.2` accepts. One line per kernel; the failures are listed
//! at the end and the test fails unless each one is in `KNOWN_FAILURES` with its cause.

mod common;

use dmsh_spv::{translate, Options};

/// Kernels that do not translate yet, with the cause. Keep this list honest and short.
const KNOWN_FAILURES: &[(&str, &str)] = &[];

#[test]
fn sass_sm53_translates_and_validates() {
    let mut ok = 0;
    let mut failures = Vec::new();
    let kernels = common::sass_kernels();
    for (name, path) in &kernels {
        let cubin = dmsh_cubin::read(path).expect("cubin");
        let k = cubin.kernel(name).expect("kernel");
        let ls = common::io_block(name).unwrap_or([32, 1, 1]);
        let cfg = common::cuda_config(k, ls);
        let r = translate(&k.code, &cfg, &Options::default())
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
                failures.push((name.clone(), e));
            }
        }
    }
    println!(
        "sass sm53: {ok}/{} translate and pass spirv-val",
        kernels.len()
    );
    let unexpected: Vec<_> = failures
        .iter()
        .filter(|(n, _)| !KNOWN_FAILURES.iter().any(|(k, _)| k == n))
        .collect();
    assert!(
        unexpected.is_empty(),
        "unexpected failures: {unexpected:#?}"
    );
}
