//! Fuzz target: Unreal pak footer, index and members (stored and Oodle blocks).
#![no_main]

use dmsh_scan::containers::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let i = Input {
        bytes: data,
        name: "f.pak",
        cap: 1 << 24,
        glslc_in_main: false,
        ..Input::default()
    };
    if uepak::READER.sniff.takes(&i) {
        let _ = (uepak::READER.read)(&i);
    }
});
