//! Fuzz target: any bytes, read as an Ampere (sm86) code stream, decode -> print -> encode
//! without panicking; every decoded instruction re-encodes to its own bits, every unknown
//! word is a typed error naming its offset.
#![no_main]

use dmsh_isa::{ampere, Error};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for (offset, r, sched) in ampere::instructions(data) {
        match r {
            Ok(i) => {
                let _ = i.print(offset, sched.reuse);
                assert_eq!(i.encode(), i.bits());
            }
            Err(Error::UnknownEncoding { offset: o, .. }) => assert_eq!(o, offset),
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    let _ = ampere::listing(data, true);
});
