//! Fuzz target: zstd decoding with an output cap.
#![no_main]

use dmsh_scan::containers::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = zstd::dictionary_id(data);
    let _ = zstd::decode(data, 16 << 20);
});
