//! What a module may hold that no Metal GPU runs, found before SPIRV-Cross so the build can
//! report it with the key instead of writing MSL that Apple's compiler refuses.

/// `OpTypeFloat`.
const OP_TYPE_FLOAT: u32 = 22;

/// Whether the module declares a 64-bit float type: Metal has no 64-bit floating point at
/// all, and SPIRV-Cross would write `double` (seed 000; issue 11 "No doubles").
pub fn uses_f64(words: &[u32]) -> bool {
    let mut i = 5; // past the header
    while let Some(&w) = words.get(i) {
        let (n, op) = ((w >> 16) as usize, w & 0xffff);
        if n == 0 {
            return false; // malformed; spirv-val and SPIRV-Cross report it
        }
        if op == OP_TYPE_FLOAT && n >= 3 && words.get(i + 2) == Some(&64) {
            return true;
        }
        i += n;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header, `OpCapability Shader`, `OpMemoryModel`, `OpTypeInt 32 0` and
    /// `OpTypeFloat width`.
    fn module(float_width: u32) -> Vec<u32> {
        vec![
            0x0723_0203,
            0x0001_0000,
            0,
            3,
            0,
            (2 << 16) | 17,
            1,
            (3 << 16) | 14,
            0,
            1,
            (4 << 16) | 21,
            1,
            32,
            0,
            (3 << 16) | OP_TYPE_FLOAT,
            2,
            float_width,
        ]
    }

    #[test]
    fn finds_a_64_bit_float_type_only() {
        assert!(uses_f64(&module(64)));
        assert!(!uses_f64(&module(32)));
        assert!(!uses_f64(&[0x0723_0203, 0x10000, 0, 10, 0, 0]));
    }
}
