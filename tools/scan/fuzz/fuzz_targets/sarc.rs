//! Fuzz target: SARC member listing.
#![no_main]

use dmsh_scan::containers::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = sarc::members(data) {
        for x in m {
            assert!(x.range.end <= data.len());
        }
    }
});
