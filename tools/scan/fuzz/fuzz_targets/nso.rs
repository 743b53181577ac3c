//! Fuzz target: NSO flat image (LZ4 segments).
#![no_main]

use dmsh_scan::containers::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = nso::flat_image(data, 64 << 20);
});
