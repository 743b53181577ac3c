//! `dmsh disasm` against NVIDIA's listings: for every sm86 kernel of tests/corpus/sass (bare
//! streams, `--raw`) and every sm86 shader of tests/corpus/nak (`*.code.bin`, `--code-area`:
//! the version-4 SPH skipped), each printed line must carry nvdisasm's offset and text (blanks
//! normalised), and `--hex` must print each word's two halves. One sm53 kernel checks the
//! Maxwell path the same way.

use dmsh_isa::listing;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn disasm(args: &[&str], file: &Path) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_dmsh"))
        .arg("disasm")
        .args(args)
        .arg(file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// `(offset, text)` of the instruction lines of a `dmsh disasm` listing.
fn lines(out: &str) -> Vec<(u64, String)> {
    out.lines()
        .filter_map(|l| {
            let r = l.trim_start().strip_prefix("/*")?;
            let (off, body) = r.split_once("*/")?;
            let body = body.split("/* 0x").next().unwrap_or("");
            Some((u64::from_str_radix(off, 16).ok()?, listing::normalize(body)))
        })
        .collect()
}

/// Compares a listing file's `(offset, text)` rows with what `dmsh disasm` printed.
fn check(sass: &Path, got: &str) -> usize {
    let text = std::fs::read_to_string(sass).unwrap();
    let want: Vec<(u64, String)> = listing::parse_tsv_as::<u128>(&text)
        .into_iter()
        .map(|e| {
            (
                e.offset,
                listing::normalize(e.text.as_deref().unwrap_or("")),
            )
        })
        .collect();
    let got = lines(got);
    assert_eq!(got.len(), want.len(), "{}: line count", sass.display());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w, "{}", sass.display());
    }
    want.len()
}

fn listings(dir: &str, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    v.sort();
    v
}

#[test]
fn sm86_bare_streams_print_as_nvdisasm() {
    let mut n = 0;
    for sass in listings("tests/corpus/sass", ".sm86.sass") {
        let bin = sass.with_extension("bin");
        n += check(&sass, &disasm(&["--arch", "sm86"], &bin));
    }
    assert!(n > 4000, "{n} instructions");
}

#[test]
fn sm86_code_areas_print_as_nvdisasm() {
    let mut n = 0;
    for sass in listings("tests/corpus/nak", ".sm86.sass") {
        let bin = PathBuf::from(sass.to_string_lossy().replace(".sass", ".code.bin"));
        let out = disasm(&["--arch", "sm86", "--code-area"], &bin);
        n += check(&sass, &out);
        if !sass.to_string_lossy().contains("/cs_") {
            assert!(out.contains("SPH version = 4"), "{}", sass.display());
        }
    }
    assert!(n > 3000, "{n} instructions");
}

#[test]
fn sm86_hex_prints_both_halves() {
    let sass = root().join("tests/corpus/sass/atomics_global.sm86.sass");
    let out = disasm(&["--arch", "sm86", "--hex"], &sass.with_extension("bin"));
    let text = std::fs::read_to_string(&sass).unwrap();
    let entries = listing::parse_tsv_as::<u128>(&text);
    let halves: Vec<u64> = out
        .lines()
        .filter_map(|l| {
            let h = l.split("/* 0x").nth(1)?;
            u64::from_str_radix(h.get(..16)?, 16).ok()
        })
        .collect();
    let want: Vec<u64> = entries
        .iter()
        .flat_map(|e| [e.word as u64, (e.word >> 64) as u64])
        .collect();
    assert_eq!(halves, want);
}

#[test]
fn sm53_stream_prints_as_nvdisasm() {
    let sass = root().join("tests/corpus/sass/atomics_global.sm53.sass");
    let out = disasm(&["--arch", "sm53"], &sass.with_extension("bin"));
    let text = std::fs::read_to_string(&sass).unwrap();
    let want: Vec<(u64, String)> = listing::parse_tsv(&text)
        .into_iter()
        .filter_map(|e| Some((e.offset, listing::normalize(e.text.as_deref()?))))
        .filter(|(_, t)| t != ".ctrl")
        .collect();
    assert_eq!(lines(&out), want);
}

#[test]
fn unknown_arch_is_refused() {
    let o = Command::new(env!("CARGO_BIN_EXE_dmsh"))
        .args(["disasm", "--arch", "sm75", "x.bin"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("sm86"));
}
