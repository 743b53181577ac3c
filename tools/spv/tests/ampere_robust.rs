//! Bad Ampere input never panics the translator: seeded random streams of words with some
//! form's fixed bits (every field random: registers, predicates, branch targets, constant
//! offsets) lift to a shader or a typed error naming an offset; what lifts goes through the
//! passes, the structurizer and the SPIR-V back end (which may refuse it, never panic).
//! CUDA and NVN ABIs.

use dmsh_ir::lift::{lifter, Abi, Arch, Config, LiftError};
use dmsh_isa::{ampere, Isa};

/// xorshift64*.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn word(&mut self) -> u128 {
        (self.next() as u128) << 64 | self.next() as u128
    }
}

#[test]
fn random_streams_lift_or_fail_cleanly() {
    let forms = &ampere::Ampere::table().forms;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut ok, mut failed, mut translated) = (0usize, 0usize, 0usize);
    for round in 0..3000 {
        let n = 1 + (rng.next() % 24) as usize;
        let mut code = Vec::with_capacity(16 * n);
        for _ in 0..n {
            let f = &forms[(rng.next() % forms.len() as u64) as usize];
            // Most words keep a form's fixed bits; a few are noise.
            let w = if rng.next().is_multiple_of(16) {
                rng.word()
            } else {
                (rng.word() & !f.mask) | f.value
            };
            code.extend_from_slice(&w.to_le_bytes());
        }
        let abi = if round % 2 == 0 { Abi::Cuda } else { Abi::Nvn };
        let mut cfg = Config::compute(abi, [32, 1, 1]);
        cfg.arch = Arch::Ampere;
        cfg.param_base = 0x160;
        cfg.buffer_banks.insert(0, (0x160, 0x100));
        match lifter(Arch::Ampere).lift_compute(&code, &cfg) {
            Ok(sh) => {
                ok += 1;
                assert!(!sh.func.blocks.is_empty());
                if let Ok(out) = dmsh_spv::translate(&code, &cfg, &dmsh_spv::Options::default()) {
                    translated += 1;
                    assert!(!out.words.is_empty());
                }
            }
            Err(e) => {
                failed += 1;
                let offset = match &e {
                    LiftError::Decode { offset, .. }
                    | LiftError::Unsupported { offset, .. }
                    | LiftError::ModifierEnum { offset, .. }
                    | LiftError::BadTarget { offset, .. } => *offset,
                };
                assert!((offset as usize) < code.len().max(16), "{e}");
                assert!(!e.to_string().is_empty());
            }
        }
    }
    // Both outcomes happen: the test exercises the lifter, not only the decoder.
    assert!(ok > 50 && failed > 50, "{ok} lifted, {failed} failed");
    println!("{ok} lifted ({translated} to SPIR-V), {failed} refused");
}
