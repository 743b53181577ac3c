//! Fuzz target: UnityFS bundles and serialized files, with the common string table of the
//! fixture main, and the second pass over what the first kept.
#![no_main]

use dmsh_scan::containers::unity::{strings, Shared};
use dmsh_scan::containers::unityfs;
use dmsh_scan::walk::FileScan;
use dmsh_scan::Limits;
use libfuzzer_sys::fuzz_target;

const MAIN: &[u8] = include_bytes!("../../tests/fixtures/unity/main_common_strings.bin");

fuzz_target!(|data: &[u8]| {
    let _ = unityfs::read(data, 16 << 20);
    let u = Shared::default();
    let _ = u.common.set(strings::require(MAIN).unwrap());
    let l = Limits { max_depth: 8, layer_cap: 16 << 20, file_budget: 64 << 20 };
    let f = FileScan::new(&l, false, 0, "romfs0".into()).with_unity(&u);
    let _ = f.scan(data, "fuzz.unityfs", 0);
    let _ = u.second_pass(16 << 20);
});
