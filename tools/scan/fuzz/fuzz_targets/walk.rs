//! Fuzz target: the whole recursive scan of a RomFS file and of a main, with small limits.
#![no_main]

use dmsh_scan::walk::FileScan;
use dmsh_scan::Limits;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let l = Limits { max_depth: 8, layer_cap: 16 << 20, file_budget: 64 << 20 };
    let f = FileScan::new(&l, true, 0, "romfs0".into());
    let _ = f.scan(data, "fuzz.bin", 0);
    let _ = f.scan_main(data, "main");
});
