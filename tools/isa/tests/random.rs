//! Every 64-bit word decodes to an instruction or a typed `UnknownEncoding` error; decoded
//! words print without panicking and re-encode to the same bits. 10 million seeded words.

mod common;

use common::Rng;
use dmsh_isa::{decode_at, Error};

#[test]
fn ten_million_random_words() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut ok, mut unknown) = (0u64, 0u64);
    let n = 10_000_000u64;
    for k in 0..n {
        let mut w = rng.next();
        // Half the words get a known opcode prefix so most forms are exercised, not just
        // the unknown-encoding path.
        if k & 1 == 1 {
            let forms = &dmsh_isa::table::table().forms;
            let f = &forms[(rng.next() % forms.len() as u64) as usize];
            w = (w & !f.mask) | f.value;
        }
        match decode_at(w, k * 8) {
            Ok(i) => {
                ok += 1;
                assert_eq!(
                    i.encode(),
                    w,
                    "{} re-encodes {w:#018x} wrong",
                    i.form_name()
                );
                if k % 8 == 1 {
                    let text = i.print(k * 8, (k >> 3) as u8 & 7);
                    assert!(!text.is_empty());
                }
            }
            Err(Error::UnknownEncoding { offset, bits }) => {
                unknown += 1;
                assert_eq!((offset, bits), (k * 8, w as u128));
            }
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    println!("{n} words: {ok} decoded, {unknown} unknown encodings");
    assert_eq!(ok + unknown, n);
    assert!(ok > n / 3, "too few words decoded: {ok}");
}

#[test]
fn every_form_round_trips_its_fixed_bits() {
    let forms = &dmsh_isa::table::table().forms;
    for f in forms {
        // The fixed bits alone may be rejected by an enum with holes; what decodes must
        // come back unchanged, whichever form claims it.
        if let Ok(i) = dmsh_isa::decode(f.value) {
            assert_eq!(i.encode(), f.value, "{}", f.name);
        }
    }
}
