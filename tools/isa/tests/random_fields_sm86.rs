//! Random operand and modifier bits against nvdisasm: tools/isa/tests/data/
//! random_fields.FAMILY.sm86.synth.tsv holds, for every form of tools/isa/src/ampere/
//! FAMILY.tbl when it was made, words with the form's fixed bits and random other bits that
//! nvdisasm 13.5 accepted, with its text (SYNTHETIC, not compiler output; gen-sm86-random.py). Every such word must decode,
//! re-encode to its bits and print nvdisasm's text, except those listed in `KNOWN` with
//! their reason. Words nvdisasm rejected are not in the file (the decoder may accept more).

mod common;

use dmsh_isa::{ampere, listing};

/// Mnemonics whose random words print differently, with the reason (each must still have
/// a mismatch; remove it when fixed).
const KNOWN: &[(&str, &str)] = &[];

#[test]
fn random_field_values_print_as_nvdisasm() {
    let mut files = Vec::new();
    common::collect(
        &common::root().join("tools/isa/tests/data"),
        |n| n.starts_with("random_fields.") && n.ends_with(".sm86.synth.tsv"),
        &mut files,
    );
    let mut entries = Vec::new();
    for p in &files {
        let text = std::fs::read_to_string(p).unwrap();
        entries.extend(listing::parse_tsv_as::<u128>(&text));
    }
    assert!(entries.len() > 500, "{} words in {files:?}", entries.len());
    let (mut ok, mut known) = (0usize, 0usize);
    let mut fails = Vec::new();
    let mut known_hit = std::collections::BTreeSet::new();
    for e in &entries {
        let want = listing::normalize(e.text.as_deref().unwrap_or(""));
        let mn = want
            .split(['.', ' '])
            .find(|w| !w.starts_with('@'))
            .unwrap_or("");
        let got = match ampere::decode_at(e.word, e.offset) {
            Ok(i) if i.encode() != e.word => format!("<re-encodes to {:032x}>", i.encode()),
            Ok(i) => listing::normalize(&i.print(e.offset, 0)),
            Err(err) => format!("<{err}>"),
        };
        if got == want {
            ok += 1;
        } else if let Some(k) = KNOWN.iter().find(|k| k.0 == mn) {
            known += 1;
            known_hit.insert(k.0);
        } else {
            fails.push(format!(
                "{:032x}\n    want: {want}\n    got:  {got}",
                e.word
            ));
        }
    }
    println!(
        "{} random words: {ok} print as nvdisasm, {known} known mismatches, {} mismatches",
        entries.len(),
        fails.len()
    );
    for f in fails.iter().take(60) {
        println!("  {f}");
    }
    let stale: Vec<_> = KNOWN.iter().filter(|k| !known_hit.contains(k.0)).collect();
    assert!(
        stale.is_empty(),
        "KNOWN entries without a mismatch: {stale:?}"
    );
    assert!(fails.is_empty(), "{} random words print wrong", fails.len());
}
