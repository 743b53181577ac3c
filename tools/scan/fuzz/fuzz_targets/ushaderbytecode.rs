//! Fuzz target: Unreal shader code archives (arrays, Oodle-decoded shaders) and LSLG records.
#![no_main]

use dmsh_scan::containers::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let i = Input {
        bytes: data,
        name: "f.ushaderbytecode",
        cap: 1 << 24,
        glslc_in_main: false,
        ..Input::default()
    };
    if let Ok(Found::Inner { inner, .. }) = (ushaderbytecode::READER.read)(&i) {
        for s in inner {
            let _ = lslg::read(&s.bytes);
        }
    }
    let _ = lslg::read(data);
    let _ = oodle::decode(data, data.len() as u64 * 4, 1 << 24);
});
