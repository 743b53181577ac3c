//! Fuzz target: KTGL RDB records, gz tables and LINKDATA entries (the input is a DATA0 table
//! and a DATA1 split at its first byte), with small bounds.
#![no_main]

use dmsh_scan::containers::ktgl::{self, gz, linkdata, rdb};
use dmsh_scan::containers::Found;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let cap = 16 << 20;
    if let Ok(Found::Inner { inner, .. }) = rdb::read(data, cap) {
        for i in inner {
            let _ = rdb::read(&i.bytes, cap);
        }
    }
    if let Ok(out) = gz::decode(data, cap) {
        assert!(out.len() as u64 <= cap);
        let _ = ktgl::read(&out);
    }
    let _ = ktgl::read(data);
    if let Some((&n, rest)) = data.split_first() {
        let (d0, d1) = rest.split_at((n as usize * linkdata::RECORD).min(rest.len()));
        let entries = linkdata::entries(d0);
        for part in linkdata::parts(&entries, 4) {
            if let Found::Inner { inner, .. } = linkdata::members(d1, &entries, part) {
                assert!(inner.iter().all(|i| i.bytes.len() <= d1.len()));
            }
        }
    }
});
