//! Fuzz target: ELF64 flat image.
#![no_main]

use dmsh_scan::containers::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = elf::flat_image(data, 64 << 20);
});
