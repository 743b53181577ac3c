//! Fuzz target: KPKA PAK tables, the SDF peek and bounded decoding (raw deflate, zstd), and the scan
//! of a PAK with small limits.
#![no_main]

use dmsh_scan::containers::*;
use dmsh_scan::walk::FileScan;
use dmsh_scan::Limits;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = kpka::entries(data);
    let _ = kpka::inflate(data, 1 << 16, |_| true);
    let _ = kpka::inflate(data, 4, |h| h.starts_with(kpka::WANTED));
    let _ = kpka::unzstd(data, 1 << 16, |_| true);
    let mut pak = kpka::MAGIC.to_vec();
    pak.extend_from_slice(data);
    let l = Limits { max_depth: 4, layer_cap: 16 << 20, file_budget: 64 << 20 };
    let _ = FileScan::new(&l, false, 0, "romfs0".into()).scan(&pak, "fuzz.pak", 0);
});
