//! Throughput of decode + lift + passes + SPIR-V emission over the corpus (every sm53 kernel
//! of tests/corpus/sass and every dksh compute shader that translates), on one thread.
//! Prints shaders/s and instructions/s; asserts nothing about time.
//! `cargo bench -p dmsh-spv --bench translate`

#[path = "../tests/common/mod.rs"]
mod common;

use dmsh_ir::lift::Config;
use dmsh_spv::{translate, Options};
use std::time::{Duration, Instant};

fn main() {
    let mut jobs: Vec<(String, Vec<u8>, Config)> = Vec::new();
    for (name, path) in common::sass_kernels() {
        let c = dmsh_cubin::read(&path).expect("cubin");
        let k = c.kernel(&name).expect("kernel");
        let cfg = common::cuda_config(k, common::io_block(&name).unwrap_or([32, 1, 1]));
        jobs.push((name, k.code.clone(), cfg));
    }
    for (name, code, ls, shared, local) in common::dksh_compute() {
        jobs.push((name, code, common::deko3d_config(ls, shared, local)));
    }
    let opts = Options::default();
    let mut ok: Vec<&(String, Vec<u8>, Config)> = Vec::new();
    let mut failed = 0;
    for j in &jobs {
        if translate(&j.1, &j.2, &opts).is_ok() {
            ok.push(j);
        } else {
            failed += 1;
        }
    }
    // Guest instructions (excluding scheduling words) of the shaders that translate.
    let insts: usize = ok.iter().map(|j| j.1.len() / 8 * 3 / 4).sum();
    let budget = Duration::from_secs(3);
    let start = Instant::now();
    let mut rounds = 0u64;
    let mut words = 0usize;
    while start.elapsed() < budget {
        for j in &ok {
            let out = translate(&j.1, &j.2, &opts).expect("translated before");
            words += out.words.len();
        }
        rounds += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    let shaders = rounds as f64 * ok.len() as f64;
    println!(
        "translate (decode + lift + passes + SPIR-V): {} shaders ({} fail and are excluded), {} instruction slots each round",
        ok.len(),
        failed,
        insts
    );
    println!(
        "{:.0} shaders/s, {:.0} instructions/s, {:.1} MB/s of SPIR-V ({} rounds in {:.2} s, one thread)",
        shaders / secs,
        rounds as f64 * insts as f64 / secs,
        words as f64 * 4.0 / secs / 1e6,
        rounds,
        secs
    );
}
