//! For every form of the table: name, fixed value, mask, the bits of its `Reserved` field (bits
//! nvdisasm ignores), whether it has a guard and a relative branch target, and the first word of
//! that form found in the nvdisasm listings (`*.sass`, `*.synth.tsv`) under the given folders with
//! its 21-bit scheduling field (`0000000000000000 000000` when none), one line per form. Input
//! for `tests/data/gen-bit-flips.py`.
//!
//! `cargo run --release -p dmsh-isa --example form_samples -- tests/corpus`
use dmsh_isa::{listing, Ctrl, Field};
use std::path::{Path, PathBuf};

fn walk(d: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(d) else { return };
    let mut v: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    v.sort();
    for p in v {
        let n = p.to_string_lossy().to_string();
        if p.is_dir() {
            walk(&p, out)
        } else if (n.ends_with(".sass") || n.ends_with(".synth.tsv")) && !n.contains(".sm8") {
            out.push(p)
        }
    }
}

fn main() {
    let t = dmsh_isa::table::table();
    let mut files = vec![];
    for a in std::env::args().skip(1) {
        walk(a.as_ref(), &mut files);
    }
    let mut sample: Vec<Option<(u64, u32)>> = vec![None; t.forms.len()];
    for p in files {
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        let mut ctrl = Ctrl::default();
        for e in listing::parse(&text) {
            if e.offset % 32 == 0 {
                ctrl = Ctrl::decode(e.word);
                continue;
            }
            let s = ctrl.slots[(e.offset % 32 / 8 - 1) as usize];
            if let (Ok(i), Some(_)) = (dmsh_isa::decode(e.word), &e.text) {
                sample[i.form() as usize].get_or_insert((e.word, s.to_bits()));
            }
        }
    }
    for (k, f) in t.forms.iter().enumerate() {
        let reserved = f.field(Field::Reserved).map_or(0, |d| d.mask::<u64>());
        let guard = f.field(Field::Guard).is_some() as u8;
        let target = f.field(Field::Target).is_some() as u8;
        let (w, s) = sample[k].unwrap_or((0, 0));
        println!(
            "{} {:016x} {:016x} {reserved:016x} {guard} {target} {w:016x} {s:06x}",
            f.name, f.value, f.mask
        );
    }
}
