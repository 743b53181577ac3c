//! Fuzz target: Yaz0 decoding.
#![no_main]

use dmsh_scan::containers::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = yaz0::decode(data, 16 << 20);
});
