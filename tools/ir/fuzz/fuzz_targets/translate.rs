//! Random instruction streams through lift + passes + SPIR-V emission: errors are fine,
//! panics are bugs. The first byte picks the ABI and a few flags; the rest is the code.
#![no_main]

use dmsh_ir::lift::{Abi, Config};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.is_empty() {
        return;
    }
    let abi = match data[0] % 3 {
        0 => Abi::Cuda,
        1 => Abi::Nvn,
        _ => Abi::Deko3d,
    };
    let mut cfg = Config::compute(abi, [32, 1, 1]);
    cfg.shared_bytes = if data[0] & 8 != 0 { 256 } else { 0 };
    cfg.local_bytes = if data[0] & 16 != 0 { 64 } else { 0 };
    cfg.buffer_banks.insert(0, (0, 0x1000));
    cfg.embedded_banks.insert(2, vec![0x20, 0x28, 0x30]);
    let code = &data[1..];
    let fma = if data[0] & 32 != 0 { dmsh_spv::FmaMode::Native } else { dmsh_spv::FmaMode::Exact };
    let f64 = if data[0] & 64 != 0 { dmsh_spv::F64Mode::Soft } else { dmsh_spv::F64Mode::Native };
    let _ = dmsh_spv::translate(code, &cfg, &dmsh_spv::Options { fma, f64, ..Default::default() });
});
