//! The fast hasher of the translator's small-key maps: the lifter's constant cache and the
//! SPIR-V emitter's id caches (keys are a few small integers; SipHash costs more than the
//! lookup saves).

/// A small multiplicative hasher for maps keyed by a few small integers.
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

impl std::hash::Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u8(&mut self, v: u8) {
        self.write_u64(v as u64);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
    fn write_isize(&mut self, v: isize) {
        self.write_u64(v as u64);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// The `BuildHasher` of [`FastHasher`], for `HashMap::with_hasher` / `HashMap<K, V, FastState>`.
pub type FastState = std::hash::BuildHasherDefault<FastHasher>;
