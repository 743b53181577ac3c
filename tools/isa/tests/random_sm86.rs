//! Every 128-bit Ampere word decodes to an instruction or a typed `UnknownEncoding` error
//! naming its offset; decoded words print without panicking and re-encode to the same bits.
//! 10 million seeded words, half of them given a form's fixed bits so that every form is
//! exercised and not only the unknown-encoding path.

mod common;

use common::Rng;
use dmsh_isa::{ampere, Error, Isa};

#[test]
fn ten_million_random_words() {
    let forms = &ampere::Ampere::table().forms;
    let mut rng = Rng(0x243f_6a88_85a3_08d3);
    let (mut ok, mut unknown) = (0u64, 0u64);
    let n = 10_000_000u64;
    for k in 0..n {
        let mut w = rng.word128();
        if k & 1 == 1 {
            let f = &forms[(rng.next() % forms.len() as u64) as usize];
            w = (w & !f.mask) | f.value;
        }
        let offset = k * 16;
        match ampere::decode_at(w, offset) {
            Ok(i) => {
                ok += 1;
                assert_eq!(
                    i.encode(),
                    w,
                    "{} re-encodes {w:#034x} wrong",
                    i.form_name()
                );
                if k % 8 == 1 {
                    let text = i.print(offset, ampere::sched(w).reuse);
                    assert!(!text.is_empty());
                }
            }
            Err(Error::UnknownEncoding { offset: o, bits }) => {
                unknown += 1;
                assert_eq!((o, bits), (offset, w));
            }
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    println!("{n} words: {ok} decoded, {unknown} unknown encodings");
    assert_eq!(ok + unknown, n);
    assert!(ok > n / 4, "too few words decoded: {ok}");
}

#[test]
fn every_form_round_trips_its_fixed_bits() {
    for f in &ampere::Ampere::table().forms {
        if let Ok(i) = ampere::decode(f.value) {
            assert_eq!(i.encode(), f.value, "{}", f.name);
        }
    }
}

/// A stream cut short or of random bytes lists without panicking; a partial last word is
/// ignored.
#[test]
fn odd_streams_list() {
    let mut rng = Rng(7);
    let bytes: Vec<u8> = (0..16 * 1000 + 9).map(|_| rng.next() as u8).collect();
    let l = ampere::listing(&bytes, true);
    assert_eq!(l.lines().count(), 2000);
    assert_eq!(ampere::instructions(&bytes[..15]).count(), 0);
}
