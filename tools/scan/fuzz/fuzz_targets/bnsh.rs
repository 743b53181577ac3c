//! Fuzz target: BNSH reading at offset 0 and at every magic.
#![no_main]

use dmsh_scan::containers::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = bnsh::read(data, 0);
    for at in bnsh::find_all(data) {
        let _ = bnsh::read(data, at);
    }
});
