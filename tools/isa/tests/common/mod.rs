//! Helpers shared by the isa tests: the repository root, listing discovery, a seeded RNG.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every file under `dir` (recursively, sorted) whose name `keep` accepts.
pub fn collect(dir: &Path, keep: fn(&str) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut v: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    v.sort();
    for p in v {
        if p.is_dir() {
            collect(&p, keep, out);
        } else if p.file_name().and_then(|n| n.to_str()).is_some_and(keep) {
            out.push(p);
        }
    }
}

/// xorshift64*: small, fast, deterministic.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// The next 128 random bits.
    pub fn word128(&mut self) -> u128 {
        (self.next() as u128) << 64 | self.next() as u128
    }
}
