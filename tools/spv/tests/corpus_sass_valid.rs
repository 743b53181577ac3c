//! Every sm53 kernel of tests/corpus/sass translates (CUDA ABI) to SPIR-V that
//! `spirv-val --target-env vulkan1.2` accepts. One line per kernel; the failures are listed
//! at the end and the test fails unless each one is in `KNOWN_FAILURES` with its cause.

mod common;

use dmsh_spv::{translate, Options};

/// Kernels that do not translate yet, with the cause. Keep this list honest and short.
const KNOWN_FAILURES: &[(&str, &str)] = &[];

#[test]
fn sass_sm53_translates_and_validates() {
    let cases = common::sass_kernels().into_iter().map(|(name, path)| {
        let cubin = dmsh_cubin::read(&path).expect("cubin");
        let k = cubin.kernel(&name).expect("kernel");
        let ls = common::io_block(&name).unwrap_or([32, 1, 1]);
        let cfg = common::cuda_config(k, ls);
        let r = translate(&k.code, &cfg, &Options::default()).map_err(|e| e.to_string());
        (name, r)
    });
    common::validate_each("sass sm53", KNOWN_FAILURES, cases);
}
