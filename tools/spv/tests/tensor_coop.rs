//! The tensor kernels of tests/corpus/extra/sm86/tensor translated with
//! `TensorMode::CooperativeMatrix`: HMMA / IMMA become SPV_KHR_cooperative_matrix operations
//! (f16 and 8-bit integer inputs; bf16 and tf32 are refused with a clear error), the module
//! uses the Vulkan memory model, and the reflection says `tensor: cooperative_matrix` and
//! `warp_ops` (one subgroup is one warp). `spirv-val` checks the modules where it knows the
//! extension (SPIRV-Tools 2023.6+; `DMSH_SPIRV_VAL` may name one); the distribution's 2023.1
//! does not, and the check is then reported as skipped. No device here runs them (lavapipe has
//! no cooperative matrices): the exact results are the subgroup emulation's (`extra_sm86_exec`).

mod common;

use dmsh_spv::{translate, Options, TensorMode};

#[test]
fn cooperative_matrix_modules() {
    let dir = common::root().join("tests/corpus/extra/sm86/tensor");
    let opts = Options {
        tensor: TensorMode::CooperativeMatrix,
        ..Default::default()
    };
    let (mut valid, mut skipped, mut refused) = (0, 0, 0);
    for name in [
        "x_tensor_hmma_f16",
        "x_tensor_hmma_bf16",
        "x_tensor_hmma_tf32",
        "x_tensor_imma",
        "x_tensor_gemm",
    ] {
        let cubin = dmsh_cubin::read(&dir.join(format!("{name}.sm86.cubin"))).expect("cubin");
        let k = cubin.kernel(name).expect("kernel");
        let cfg = common::cuda_config(k, [64, 1, 1]);
        let out = translate(&k.code, &cfg, &opts);
        if name.ends_with("bf16") || name.ends_with("tf32") {
            let e = out.expect_err("no cooperative-matrix type").to_string();
            assert!(
                e.contains("cooperative-matrix component type"),
                "{name}: {e}"
            );
            refused += 1;
            continue;
        }
        let out = out.unwrap_or_else(|e| panic!("{name}: {e}"));
        let r = &out.reflection;
        assert_eq!(r.tensor.as_deref(), Some("cooperative_matrix"), "{name}");
        assert!(r.warp_ops && !r.warp_emulated, "{name}");
        match common::spirv_val(&out.words) {
            Ok(()) => valid += 1,
            // SPIRV-Tools before 2023.6: "Invalid capability operand: 6022".
            Err(e) if e.contains("nvalid capability operand: 6022") => skipped += 1,
            Err(e) => panic!("{name}: spirv-val: {e}"),
        }
    }
    println!(
        "cooperative matrices: {valid} valid, {skipped} not checked (spirv-val predates \
         SPV_KHR_cooperative_matrix), {refused} refused (bf16, tf32)"
    );
    assert_eq!(refused, 2);
}

/// With the workgroup-memory warp emulation the tensor instructions are always emulated
/// (cooperative matrices need 32-lane subgroups).
#[test]
fn warp_emulation_overrides_cooperative_matrices() {
    let dir = common::root().join("tests/corpus/extra/sm86/tensor");
    let cubin = dmsh_cubin::read(&dir.join("x_tensor_hmma_f16.sm86.cubin")).expect("cubin");
    let k = cubin.kernel("x_tensor_hmma_f16").expect("kernel");
    let cfg = common::cuda_config(k, [64, 1, 1]);
    let opts = Options {
        tensor: TensorMode::CooperativeMatrix,
        warp: dmsh_spv::WarpMode::Workgroup,
        ..Default::default()
    };
    let out = translate(&k.code, &cfg, &opts).expect("translates");
    assert_eq!(out.reflection.tensor.as_deref(), Some("subgroup_emulation"));
    assert!(out.reflection.warp_emulated && !out.reflection.warp_ops);
}
