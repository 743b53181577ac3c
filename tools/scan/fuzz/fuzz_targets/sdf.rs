//! Fuzz target: RE Engine SDF shader definitions.
#![no_main]

use dmsh_scan::containers::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = sdf::read(data);
    let mut f = sdf::MAGIC.to_vec();
    f.extend_from_slice(data);
    let _ = sdf::read(&f);
});
