//! The code-area reader finds the instructions of every uam `*.code.bin` and `*.dksh` in the
//! corpus, and the listing of those bytes matches nvdisasm's (one line per instruction).

use dmsh_isa::{code_area, listing};
use std::path::{Path, PathBuf};

/// The folder of uam's outputs and their nvdisasm listings (tests/corpus/dksh).
fn dksh_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/dksh")
}

/// The nvdisasm listings there: (file stem before `.sass`, listing text), in folder order.
fn dksh_listings() -> Vec<(String, String)> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dksh_dir()).unwrap().flatten() {
        let p = e.path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if let Some(stem) = name.strip_suffix(".sass") {
            v.push((stem.to_string(), std::fs::read_to_string(&p).unwrap()));
        }
    }
    v
}

fn check(bytes: &[u8], sass: &str, what: &str) -> usize {
    let progs = if code_area::is_dksh(bytes) {
        code_area::locate_dksh(bytes).expect("dksh parses")
    } else {
        vec![code_area::locate_code_area(bytes)]
    };
    assert_eq!(progs.len(), 1, "{what}");
    let p = &progs[0];
    let code = &bytes[p.code_start..p.code_end];
    let want = listing::parse(sass);
    let got = dmsh_isa::stream::listing(code);
    let got: Vec<&str> = got.lines().collect();
    let mut n = 0;
    for e in want.iter().filter(|e| e.offset % 32 != 0) {
        let line = got[n];
        n += 1;
        let Some(t) = &e.text else { continue };
        let body = line.split_once("*/").unwrap().1;
        assert_eq!(
            listing::normalize(body),
            listing::normalize(t),
            "{what} at {:#x}",
            e.offset
        );
    }
    n
}

#[test]
fn dksh_code_areas_disassemble_like_nvdisasm() {
    let dir = dksh_dir();
    let mut files = 0;
    for (stem, sass) in dksh_listings() {
        for ext in [".code.bin", ".dksh"] {
            let f = dir.join(format!("{stem}{ext}"));
            if let Ok(bytes) = std::fs::read(&f) {
                let n = check(&bytes, &sass, &f.display().to_string());
                assert!(n > 0);
                files += 1;
            }
        }
    }
    println!("{files} code areas checked");
    assert!(
        files >= 80,
        "expected the corpus' .code.bin and .dksh files"
    );
}

/// Line by line, the listing is nvdisasm's own text (offset column, guard column, dual-issue
/// braces, `NOP;`), not just the same instructions: compare after dropping nvdisasm's hex
/// comment and trailing blanks.
#[test]
fn dksh_listings_are_nvdisasm_lines() {
    let dir = dksh_dir();
    let mut lines_checked = 0;
    for (stem, sass) in dksh_listings() {
        let Ok(bytes) = std::fs::read(dir.join(format!("{stem}.code.bin"))) else {
            continue;
        };
        let prog = code_area::locate_code_area(&bytes);
        let ours = dmsh_isa::stream::listing(&bytes[prog.code_start..prog.code_end]);
        let ours: Vec<&str> = ours.lines().collect();
        let theirs: Vec<String> = sass
            .lines()
            .filter(|l| l.trim_start().starts_with("/*") && !l.trim_start().starts_with("/* 0x"))
            .map(|l| l.split("/* 0x").next().unwrap().trim_end().to_string())
            .collect();
        for (k, t) in theirs.iter().enumerate() {
            if t.contains("UNDECODED") {
                continue;
            }
            assert_eq!(ours[k].trim_end(), t, "{stem}.sass line {k}");
            lines_checked += 1;
        }
    }
    println!("{lines_checked} listing lines identical");
    assert!(lines_checked > 3000);
}
