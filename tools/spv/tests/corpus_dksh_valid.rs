//! The deko3d compute shaders of tests/corpus/dksh translate (deko3d ABI) to SPIR-V that
//! `spirv-val --target-env vulkan1.2` accepts. One line per shader; failures not listed in
//! `KNOWN_FAILURES` fail the test.

mod common;

use dmsh_spv::{translate, Options};

/// Shaders that do not translate yet, with the cause.
const KNOWN_FAILURES: &[(&str, &str)] = &[];

#[test]
fn dksh_compute_translates_and_validates() {
    let cases = common::dksh_compute()
        .into_iter()
        .map(|(name, code, ls, shared, local)| {
            let cfg = common::deko3d_config(ls, shared, local);
            let r = translate(&code, &cfg, &Options::default()).map_err(|e| e.to_string());
            (name, r)
        });
    common::validate_each("dksh compute", KNOWN_FAILURES, cases);
}
