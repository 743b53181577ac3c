//! Benchmark of the split scan against a baseline of reading + zstd-decompressing + sha256-hashing
//! the same bytes. Builds the demo title, scales it up (copies in numbered folders) to at least
//! `--mb` MB (default 500) in a temporary folder, then times both with the same parallelism.
//! Usage: `cargo run --release -p dmsh-scan --example bench_split [-- --mb N]` (scripts/bench-split).

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;
use sha2::{Digest, Sha256};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    for p in v {
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// The baseline: list the folder, read every file, zstd-decompress it when it is zstd, sha256
/// the result.
fn baseline(romfs: &Path, main: &Path) -> u64 {
    let mut list = Vec::new();
    files(romfs, &mut list);
    list.push(main.to_path_buf());
    list.par_iter()
        .map(|p| {
            let b = std::fs::read(p).unwrap();
            let data = if b.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]) {
                zstd::stream::decode_all(&b[..]).unwrap_or(b.clone())
            } else {
                b.clone()
            };
            let d = Sha256::digest(&data);
            std::hint::black_box(d);
            b.len() as u64
        })
        .sum()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mb: u64 = args
        .iter()
        .position(|a| a == "--mb")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(500);
    let tmp = tempfile::tempdir().unwrap();
    let demo = tmp.path().join("demo");
    support::demo::build(&demo);
    let romfs = tmp.path().join("romfs");
    let mut src = Vec::new();
    files(&demo.join("romfs"), &mut src);
    let one: u64 = src
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    let copies = (mb * 1_000_000).div_ceil(one);
    eprintln!(
        "bench: {copies} copies of the demo RomFS ({one} bytes each) in {}",
        romfs.display()
    );
    (0..copies).into_par_iter().for_each(|i| {
        for p in &src {
            let rel = p.strip_prefix(demo.join("romfs")).unwrap();
            let dst = romfs.join(format!("copy{i:05}")).join(rel);
            std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
            std::fs::copy(p, &dst).unwrap();
        }
    });
    let main = demo.join("exefs/main");
    let mut list = Vec::new();
    files(&romfs, &mut list);
    list.push(main.clone());
    let total: u64 = list
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    eprintln!(
        "bench: {} files, {:.1} MB, {} threads",
        list.len(),
        total as f64 / 1e6,
        rayon::current_num_threads()
    );

    baseline(&romfs, &main); // warm the page cache
    let mut base = f64::MAX;
    let mut scan = f64::MAX;
    let mut found = 0;
    let profile = dmsh_scan::Profile::load(&support::repo_root().join("games/demo")).unwrap();
    let inputs = dmsh_scan::Inputs {
        romfs: vec![romfs.clone()],
        mains: vec![main.clone()],
    };
    for _ in 0..3 {
        let t = Instant::now();
        baseline(&romfs, &main);
        base = base.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let mut s = dmsh_scan::split::scan(
            &inputs,
            &profile,
            &dmsh_scan::Limits::default(),
            &dmsh_scan::Quiet,
        )
        .unwrap();
        let tables = dmsh_scan::tables::Tables::build(&mut s, &profile);
        scan = scan.min(t.elapsed().as_secs_f64());
        found = s.files;
        assert_eq!(tables.shaders.len(), 54);
    }
    let out = tmp.path().join("out");
    let t = Instant::now();
    let summary = dmsh_scan::split(
        &inputs,
        &dmsh_scan::Outputs {
            pkg_dir: out.join("pkg"),
            map: out.join("map.tsv"),
            facts: out.join("facts.tsv"),
            pairs: Some(out.join("pairs.tsv")),
        },
        &profile,
        &dmsh_scan::Limits::default(),
        &dmsh_scan::Quiet,
    )
    .unwrap();
    let whole = t.elapsed().as_secs_f64();
    let mbs = |s: f64| total as f64 / 1e6 / s;
    println!(
        "input: {} files, {:.1} MB ({} scanned)",
        list.len(),
        total as f64 / 1e6,
        found
    );
    println!(
        "baseline (list + read + zstd-decompress + sha256): {:.3} s, {:.0} MB/s",
        base,
        mbs(base)
    );
    println!(
        "split scan (scan + merge, best of 3):      {:.3} s, {:.0} MB/s",
        scan,
        mbs(scan)
    );
    println!(
        "split with outputs written:                {:.3} s, {:.0} MB/s",
        whole,
        mbs(whole)
    );
    println!("ratio scan / baseline: {:.2} (goal >= 0.8)", base / scan);
    println!(
        "{} shader finds, {} unique",
        summary.unique + summary.duplicates,
        summary.unique
    );
}
