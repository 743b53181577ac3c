//! Ampere corpus test: every instruction of every sm86 nvdisasm listing under tests/corpus
//! (ptxas code in `sass/` and `extra/`, Mesa NAK code in `nak/`) and
//! ../shared/corpus/external when present must print as nvdisasm prints it and re-encode to
//! the same 128 bits. One line per file, then the rates per folder; then the mismatches,
//! grouped by mnemonic (set `DMSH_SM86_FAILS=N` to print N examples of each, default 3).

use dmsh_isa::ampere;
use dmsh_isa::listing;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut v: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    v.sort();
    for p in v {
        if p.is_dir() {
            collect(&p, out);
        } else if let Some(n) = p.file_name().and_then(|n| n.to_str()) {
            if n.ends_with(".sass") && (n.contains(".sm86.") || n.contains(".sm87.")) {
                out.push(p);
            }
        }
    }
}

/// Known mismatches, reported but not failed on: (file name, offset, why). Each entry must
/// still mismatch; remove it when fixed.
const KNOWN: &[(&str, u64, &str)] = &[];

#[derive(Default, Clone, Copy)]
struct Count {
    instrs: usize,
    text_ok: usize,
    enc_ok: usize,
}

impl std::ops::AddAssign<&Count> for Count {
    fn add_assign(&mut self, c: &Count) {
        self.instrs += c.instrs;
        self.text_ok += c.text_ok;
        self.enc_ok += c.enc_ok;
    }
}

fn pct(a: usize, b: usize) -> f64 {
    100.0 * a as f64 / b.max(1) as f64
}

/// A mismatch: mnemonic of nvdisasm's text, then the report lines.
type Fail = (String, String);

fn check_file(p: &Path, fails: &mut Vec<Fail>, known_hit: &mut Vec<(String, u64)>) -> Count {
    let text = std::fs::read_to_string(p).unwrap();
    let name = p.file_name().unwrap().to_string_lossy().to_string();
    let mut c = Count::default();
    for e in listing::parse_tsv_as::<u128>(&text) {
        let Some(want) = &e.text else { continue };
        c.instrs += 1;
        let want = listing::normalize(want);
        let dec = ampere::decode_at(e.word, e.offset);
        if let Ok(i) = &dec {
            if i.encode() == e.word {
                c.enc_ok += 1;
            }
        }
        let got = match &dec {
            Ok(i) => listing::normalize(&i.print(e.offset, ampere::sched(e.word).reuse)),
            Err(err) => format!("<{err}>"),
        };
        if got == want {
            c.text_ok += 1;
            continue;
        }
        if let Some(k) = KNOWN.iter().find(|k| k.0 == name && k.1 == e.offset) {
            println!(
                "known mismatch {name}:{:#x}: {} (want {want}, got {got})",
                e.offset, k.2
            );
            known_hit.push((name.clone(), e.offset));
            continue;
        }
        let mn = want
            .split_whitespace()
            .find(|w| !w.starts_with('@'))
            .unwrap_or("")
            .split('.')
            .next()
            .unwrap_or("")
            .to_string();
        let form = dec.as_ref().map(|i| i.form_name()).unwrap_or("-");
        fails.push((
            mn,
            format!(
                "{name}:{:#06x} {:032x} [{form}]\n    want: {want}\n    got:  {got}",
                e.offset, e.word
            ),
        ));
    }
    c
}

/// Folders that must contribute listings (a missing copy fails the test instead of shrinking it).
const REQUIRED: &[(&str, usize)] = &[("tests/corpus/sass", 40), ("tests/corpus/nak", 40)];

#[test]
fn sm86_corpus_prints_and_reencodes_exactly() {
    let r = root();
    let mut files = Vec::new();
    collect(&r.join("tests/corpus"), &mut files);
    for (dir, min) in REQUIRED {
        let n = files
            .iter()
            .filter(|p| p.parent() == Some(&r.join(dir)))
            .count();
        assert!(
            n >= *min,
            "{dir}: {n} sm86 listings, expected at least {min}"
        );
    }
    let ext = r.join("../shared/corpus/external");
    if ext.is_dir() {
        collect(&ext, &mut files);
    } else {
        println!("(../shared/corpus/external absent: skipped)");
    }
    let mut per_dir: BTreeMap<String, Count> = BTreeMap::new();
    let mut fails = Vec::new();
    let mut known_hit = Vec::new();
    for p in &files {
        let c = check_file(p, &mut fails, &mut known_hit);
        println!(
            "{:60} instrs {:5}  text {:5} ({:6.2}%)  encode {:5} ({:6.2}%)",
            p.strip_prefix(&r).unwrap_or(p).display(),
            c.instrs,
            c.text_ok,
            pct(c.text_ok, c.instrs),
            c.enc_ok,
            pct(c.enc_ok, c.instrs)
        );
        let dir = p
            .parent()
            .and_then(|d| d.strip_prefix(&r).ok())
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        *per_dir.entry(dir).or_default() += &c;
    }
    let mut total = Count::default();
    for (dir, c) in &per_dir {
        println!(
            "TOTAL {dir:40} instrs {:6}  text {:6.2}%  encode {:6.2}%",
            c.instrs,
            pct(c.text_ok, c.instrs),
            pct(c.enc_ok, c.instrs)
        );
        total += c;
    }
    println!(
        "TOTAL all sm86 listings: {} instructions, text {:.2}%, encode {:.2}%",
        total.instrs,
        pct(total.text_ok, total.instrs),
        pct(total.enc_ok, total.instrs)
    );
    let mut by_mn: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (mn, f) in &fails {
        by_mn.entry(mn.clone()).or_default().push(f.clone());
    }
    let show: usize = std::env::var("DMSH_SM86_FAILS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let mut order: Vec<_> = by_mn.iter().collect();
    order.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
    for (mn, v) in &order {
        println!("MISMATCH {mn}: {} instructions", v.len());
        for f in v.iter().take(show) {
            println!("  {f}");
        }
    }
    let stale: Vec<_> = KNOWN
        .iter()
        .filter(|k| !known_hit.iter().any(|h| h.0 == k.0 && h.1 == k.1))
        .collect();
    assert!(stale.is_empty(), "KNOWN entries that now match: {stale:?}");
    assert!(
        total.instrs > 7000,
        "only {} sm86 instructions",
        total.instrs
    );
    assert!(
        fails.is_empty(),
        "{} sm86 instructions print or re-encode wrong (see above)",
        fails.len()
    );
}
