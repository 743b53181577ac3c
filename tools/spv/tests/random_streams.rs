//! Deterministic fuzzing in CI: random and mutated instruction streams must never panic the
//! translator (lift, passes, emission; every other stream with soft f64); errors are fine. The cargo-fuzz target in
//! tools/ir/fuzz does the same without a budget.

mod common;

use dmsh_ir::lift::{Abi, Config};
use dmsh_spv::{translate, F64Mode, Options};
use rand::{Rng, SeedableRng};

fn corpus_words() -> Vec<u64> {
    let mut v = Vec::new();
    for (name, path) in common::sass_kernels() {
        let c = dmsh_cubin::read(&path).expect("cubin");
        let k = c.kernel(&name).expect("kernel");
        for (i, ch) in k.code.chunks_exact(8).enumerate() {
            if i % 4 != 0 {
                v.push(u64::from_le_bytes(ch.try_into().expect("8")));
            }
        }
    }
    v
}

#[test]
fn random_and_mutated_streams_never_panic() {
    let words = corpus_words();
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x5eed);
    let mut decoded_ok = 0usize;
    let mut translated = 0usize;
    let n = 20000;
    let mut validated = 0usize;
    let mut invalid = Vec::new();
    for iter in 0..n {
        let len = rng.gen_range(1..40usize);
        let mut code = Vec::with_capacity(len * 8);
        for slot in 0..len {
            let w: u64 = if slot % 4 == 0 {
                rng.gen()
            } else if rng.gen_bool(0.8) {
                let orig = words[rng.gen_range(0..words.len())];
                let mut w = orig;
                for _ in 0..rng.gen_range(0..4) {
                    w ^= 1u64 << rng.gen_range(0..64);
                }
                if dmsh_isa::decode(w).is_ok() {
                    w
                } else {
                    orig
                }
            } else {
                rng.gen()
            };
            if slot % 4 != 0 && dmsh_isa::decode(w).is_ok() {
                decoded_ok += 1;
            }
            code.extend_from_slice(&w.to_le_bytes());
        }
        let abi = [Abi::Cuda, Abi::Nvn, Abi::Deko3d][iter % 3];
        let mut cfg = Config::compute(abi, [32, 1, 1]);
        cfg.shared_bytes = 256;
        cfg.local_bytes = 64;
        cfg.buffer_banks.insert(0, (0, 0x1000));
        cfg.embedded_banks.insert(2, vec![0x20, 0x28, 0x30]);
        // Every other stream with soft f64 (the Metal build's).
        let opts = Options {
            f64: if iter % 2 == 1 {
                F64Mode::Soft
            } else {
                F64Mode::Native
            },
            ..Options::default()
        };
        if let Ok(out) = translate(&code, &cfg, &opts) {
            translated += 1;
            // Validate a sample: the translator must not emit invalid SPIR-V either.
            if translated % 8 == 1 {
                validated += 1;
                if let Err(e) = common::spirv_val(&out.words) {
                    invalid.push((iter, e));
                }
            }
        }
    }
    println!(
        "{n} streams, {decoded_ok} decodable instructions, {translated} streams translated, \
         {validated} validated, {} invalid",
        invalid.len()
    );
    for (i, e) in invalid.iter().take(10) {
        println!("invalid SPIR-V from stream {i}: {e}");
    }
    assert!(invalid.is_empty(), "the translator emitted invalid SPIR-V");
}
