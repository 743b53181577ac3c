//! The video-instruction kernels of `tests/corpus/extra/ptx` (ptxas, sm53) translate (CUDA
//! ABI) to SPIR-V that `spirv-val` accepts, including `x_vset_imm`, whose `VSET`-with-immediate
//! words nvdisasm lists as `ST`. One line per kernel; failures not in `KNOWN_FAILURES` fail.

mod common;

use dmsh_spv::{translate, Options};

const KERNELS: &[&str] = &[
    "x_video_forms",
    "x_video_forms_o0",
    "x_video_imm",
    "x_vset_imm",
];

/// Kernels that do not translate yet, with the cause.
const KNOWN_FAILURES: &[(&str, &str)] = &[];

#[test]
fn extra_video_kernels_translate_and_validate() {
    let dir = common::root().join("tests/corpus/extra/ptx");
    let cases = KERNELS.iter().map(|name| {
        let cubin = dmsh_cubin::read(&dir.join(format!("{name}.sm53.cubin"))).expect("cubin");
        let k = cubin.kernel(name).expect("kernel");
        let cfg = common::cuda_config(k, [32, 1, 1]);
        let r = translate(&k.code, &cfg, &Options::default()).map_err(|e| e.to_string());
        (name.to_string(), r)
    });
    common::validate_each("video kernels", KNOWN_FAILURES, cases);
}
