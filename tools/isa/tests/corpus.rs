//! Corpus test: every instruction of every nvdisasm listing under tests/corpus (ptxas, uam and
//! NAK code: `sass/`, `dksh/`, `extra/`, `modifiers/`, `nak/`), tools/isa/tests/data (nvdisasm
//! 12.4 listings of the all-zero padding and of bits nvdisasm ignores) and
//! ../shared/corpus/external when present must print as nvdisasm prints it and re-encode to the
//! same bits. One line per file, then totals per folder.

use dmsh_isa::print::Context;
use dmsh_isa::{listing, Ctrl};
use std::collections::BTreeMap;
mod common;

use common::{collect, root};
use std::path::{Path, PathBuf};

/// sm53 TSV listings and dksh/nvdisasm listings; not the sm86 ones.
fn is_sm53_listing(n: &str) -> bool {
    n.ends_with(".sass") && !n.contains(".sm86.") && !n.contains(".sm8")
}

/// Known mismatches, reported but not failed on: (file name, offset, why). Each entry must
/// still mismatch; remove it when fixed.
const KNOWN: &[(&str, u64, &str)] = &[(
    "x_tex_f16.sm53.sass",
    0x228,
    "texture-phase marker: nvdisasm prints .T where the stream heuristic predicts .P",
)];

#[derive(Default, Clone, Copy)]
struct Count {
    instrs: usize,
    text_ok: usize,
    enc_ok: usize,
    unchecked: usize,
}

impl std::ops::AddAssign<&Count> for Count {
    fn add_assign(&mut self, c: &Count) {
        self.instrs += c.instrs;
        self.text_ok += c.text_ok;
        self.enc_ok += c.enc_ok;
        self.unchecked += c.unchecked;
    }
}

impl Count {
    /// The instructions nvdisasm decoded (what the text comparison covers).
    fn checked(&self) -> usize {
        self.instrs - self.unchecked
    }

    /// Percent of the checked instructions whose text matches nvdisasm's.
    fn text_pct(&self) -> f64 {
        100.0 * self.text_ok as f64 / self.checked().max(1) as f64
    }

    /// Percent of the instructions that re-encode to their bits.
    fn enc_pct(&self) -> f64 {
        100.0 * self.enc_ok as f64 / self.instrs.max(1) as f64
    }
}

fn check_file(
    p: &Path,
    fails: &mut Vec<String>,
    seen: &mut std::collections::BTreeSet<u16>,
) -> Count {
    let text = std::fs::read_to_string(p).unwrap();
    let entries = listing::parse(&text);
    let mut c = Count::default();
    let mut ctrl = Ctrl::default();
    let mut items = Vec::new();
    let mut wanted = Vec::new();
    for e in &entries {
        if e.offset % 32 == 0 {
            ctrl = Ctrl::decode(e.word);
            if ctrl.encode() != e.word {
                fails.push(format!(
                    "{}: ctrl {:#x} re-encodes wrong",
                    p.display(),
                    e.offset
                ));
            }
            continue;
        }
        let sched = ctrl.slots[(e.offset % 32 / 8 - 1) as usize];
        items.push((e.offset, dmsh_isa::decode_at(e.word, e.offset), sched));
        wanted.push(e);
    }
    let phases = dmsh_isa::stream::tex_phases(&items);
    for (((_, dec, sched), e), tp) in items.iter().zip(wanted).zip(phases) {
        c.instrs += 1;
        if let Ok(i) = dec {
            seen.insert(i.form());
            if i.encode() == e.word {
                c.enc_ok += 1;
            }
        }
        let Some(want) = &e.text else {
            c.unchecked += 1;
            continue;
        };
        let want = listing::normalize(want);
        let ctx = Context {
            reuse: sched.reuse,
            tex_phase: tp,
        };
        let got = match dec {
            Ok(i) => listing::normalize(&i.print_ctx(e.offset, ctx)),
            Err(err) => format!("<{err}>"),
        };
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if got == want {
            c.text_ok += 1;
        } else if let Some(k) = KNOWN.iter().find(|k| k.0 == name && k.1 == e.offset) {
            println!(
                "known mismatch {name}:{:#x}: {} (want {want}, got {got})",
                e.offset, k.2
            );
        } else {
            let form = dec.as_ref().map(|i| i.form_name()).unwrap_or("-");
            fails.push(format!(
                "{}:{:#06x} {:016x} [{}]\n    want: {}\n    got:  {}",
                p.file_name().unwrap().to_string_lossy(),
                e.offset,
                e.word,
                form,
                want,
                got
            ));
        }
    }
    c
}

/// Folders that must contribute listings (a missing copy fails the test instead of shrinking it).
const REQUIRED: &[(&str, usize)] = &[
    ("tests/corpus/sass", 40),
    ("tests/corpus/dksh", 40),
    ("tests/corpus/nak", 44),
    ("tools/isa/tests/data", 2),
];

#[test]
fn corpus_prints_and_reencodes_exactly() {
    let r = root();
    let mut files = Vec::new();
    collect(&r.join("tests/corpus"), is_sm53_listing, &mut files);
    collect(&r.join("tools/isa/tests/data"), is_sm53_listing, &mut files);
    for (dir, min) in REQUIRED {
        let n = files
            .iter()
            .filter(|p| p.parent() == Some(&r.join(dir)))
            .count();
        assert!(n >= *min, "{dir}: {n} listings, expected at least {min}");
    }
    let ext = r.join("../shared/corpus/external");
    if ext.is_dir() {
        collect(&ext, is_sm53_listing, &mut files);
    } else {
        println!("(../shared/corpus/external absent: skipped)");
    }
    assert!(!files.is_empty(), "no listings found");
    let mut per_dir: BTreeMap<String, Count> = BTreeMap::new();
    let mut fails = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let synthetic_dir = r.join("tools/isa/tests/data");
    for p in &files {
        // Forms "in corpus" are those of compiler-made listings, not of the synthetic ones.
        let mut scratch = std::collections::BTreeSet::new();
        let forms_seen = if p.starts_with(&synthetic_dir) {
            &mut scratch
        } else {
            &mut seen
        };
        let c = check_file(p, &mut fails, forms_seen);
        println!(
            "{:60} instrs {:5}  text {:5}/{:5} ({:6.2}%)  encode {:5}/{:5} ({:6.2}%){}",
            p.strip_prefix(&r).unwrap_or(p).display(),
            c.instrs,
            c.text_ok,
            c.checked(),
            c.text_pct(),
            c.enc_ok,
            c.instrs,
            c.enc_pct(),
            if c.unchecked > 0 {
                format!("  ({} not decoded by nvdisasm)", c.unchecked)
            } else {
                String::new()
            }
        );
        let dir = p
            .parent()
            .unwrap()
            .strip_prefix(&r)
            .unwrap_or(p.parent().unwrap())
            .display()
            .to_string();
        *per_dir.entry(dir).or_default() += &c;
    }
    let mut tot = Count::default();
    for (d, c) in &per_dir {
        println!(
            "TOTAL {d:50} text {}/{} ({:.2}%)  encode {}/{} ({:.2}%)",
            c.text_ok,
            c.checked(),
            c.text_pct(),
            c.enc_ok,
            c.instrs,
            c.enc_pct()
        );
        tot += c;
    }
    println!(
        "TOTAL all: {} files, text {}/{} ({:.3}%), encode {}/{} ({:.3}%)",
        files.len(),
        tot.text_ok,
        tot.checked(),
        tot.text_pct(),
        tot.enc_ok,
        tot.instrs,
        tot.enc_pct()
    );
    let forms = &dmsh_isa::table::table().forms;
    let missing: Vec<&str> = forms
        .iter()
        .enumerate()
        .filter(|(i, _)| !seen.contains(&(*i as u16)))
        .map(|(_, f)| f.name.as_str())
        .collect();
    println!(
        "FORMS in corpus: {}/{}; not in corpus: {}",
        forms.len() - missing.len(),
        forms.len(),
        missing.join(" ")
    );
    if let Ok(path) = std::env::var("DMSH_ISA_FAILS") {
        std::fs::write(path, fails.join("\n")).unwrap();
    }
    for f in fails.iter().take(40) {
        println!("{f}");
    }
    assert!(
        fails.is_empty() && tot.enc_ok == tot.instrs,
        "{} mismatches",
        fails.len()
    );
}

/// The synthetic sets (`tests/corpus/extra/synth/*.synth.tsv`, nvdisasm 11.8, and
/// `tools/isa/tests/data/*.synth.tsv`, nvdisasm 12.4: words edited from compiler output, listed
/// by nvdisasm) are opt-in ground truth for forms no compiler emits. Reported, not failed on:
/// nvdisasm prints reserved values (`INVALID…`, `???`) the table rejects.
#[test]
fn synthetic_sets_report() {
    let mut files: Vec<PathBuf> = ["tests/corpus/extra/synth", "tools/isa/tests/data"]
        .iter()
        .filter_map(|d| std::fs::read_dir(root().join(d)).ok())
        .flat_map(|rd| rd.flatten().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".synth.tsv"))
        .collect();
    if files.is_empty() {
        println!("(no synthetic sets)");
        return;
    }
    files.sort();
    let mut fails = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for p in &files {
        let c = check_file(p, &mut fails, &mut seen);
        println!(
            "SYNTH {:50} text {}/{} ({:.2}%)  encode {}/{}",
            p.file_name().unwrap().to_string_lossy(),
            c.text_ok,
            c.checked(),
            c.text_pct(),
            c.enc_ok,
            c.instrs
        );
    }
    if let Ok(path) = std::env::var("DMSH_ISA_SYNTH_FAILS") {
        std::fs::write(path, fails.join("\n")).unwrap();
    }
}

/// nvdisasm's dual-issue braces (the TSV `dual` column, `{` on the first of a pair) are
/// exactly the instructions whose scheduling field says so (`Sched::dual_issue`).
#[test]
fn dual_issue_matches_listings() {
    let mut files = Vec::new();
    collect(&root().join("tests/corpus"), is_sm53_listing, &mut files);
    let (mut pairs, mut checked) = (0, 0);
    for p in files
        .iter()
        .filter(|p| p.to_string_lossy().ends_with(".sm53.sass"))
    {
        let text = std::fs::read_to_string(p).unwrap();
        let mut ctrl = Ctrl::default();
        for l in text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        {
            let c: Vec<&str> = l.split('\t').collect();
            let (Ok(off), Ok(word)) = (
                u64::from_str_radix(c[0].trim_start_matches("0x"), 16),
                u64::from_str_radix(c[1], 16),
            ) else {
                continue;
            };
            if off % 32 == 0 {
                ctrl = Ctrl::decode(word);
                continue;
            }
            // `DEPBAR {1}` was split into text + `}` by the listing converter: not a pair.
            if c[2].starts_with("DEPBAR {") {
                continue;
            }
            let first = c.get(4) == Some(&"{");
            let sched = ctrl.slots[(off % 32 / 8 - 1) as usize];
            assert_eq!(sched.dual_issue(), first, "{}:{off:#x}", p.display());
            checked += 1;
            pairs += first as usize;
        }
    }
    println!("dual issue: {pairs} pairs in {checked} instructions agree with the listings");
    assert!(checked > 1000);
}
