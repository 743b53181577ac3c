//! RE-Engine-like scan throughput (Monster Hunter Rise): thousands of SDF shader definitions
//! made from the corpus shaders (unique keys by control salt), half raw deflate (flate2), half
//! zstd, with two other resources per SDF, in four large KPKA PAKs written to a temporary
//! folder. Times `split::scan` of the folder (the PAK pre-pass, the peek, the inflate, the SDF
//! reads, the control / code check and keys) against reading the same files and inflating the
//! same SDF entries in this process (rayon, the same threads), and prints shaders/s, the ratio,
//! and the rate per thread and per CPU second beside the seed's (63,111 shaders in 5 s with 12
//! jobs). Asserts the counts, nothing about time.
//! `cargo bench -p dmsh-scan --bench re_engine` (`DMSH_BENCH_SDF=N` SDF files, default 2,700;
//! `DMSH_BENCH_ROUNDS=N` rounds, default 5: the best wall time, the mean CPU time).

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::Path;
use std::time::Instant;

use dmsh_scan::{split, Inputs, Limits, Profile, Quiet};
use rayon::prelude::*;
use support::re_engine::{self as re, PakEntry, Store};
use support::writers::{self as w, Wrap};

/// The seed's run: shaders, seconds, jobs.
const SEED: (f64, f64, f64) = (63_111.0, 5.0, 12.0);
const PAKS: usize = 4;
const DEFS_PER_SDF: usize = 8;

/// This process's CPU seconds (user + system), from /proc (0 where there is none).
fn cpu_now() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let f: Vec<&str> = s
        .rsplit_once(')')
        .map(|(_, t)| t.split_whitespace().collect())
        .unwrap_or_default();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // Fields 14 and 15 (utime, stime) are 11 and 12 after the command name; 100 ticks/s.
    (tick(11) + tick(12)) / 100.0
}

/// A PAK being written: its entries, and their stored bytes and attribute words.
type Pak = (Vec<PakEntry>, Vec<(Vec<u8>, u64)>);

/// One SDF entry as the baseline decodes it: where its bytes lie, how, and its size.
struct Sdf {
    pak: usize,
    at: usize,
    len: usize,
    zstd: bool,
    size: usize,
}

/// Writes the PAKs into `dir`; returns the SDF entries and the number of shaders put in.
fn generate(dir: &Path, n_sdf: usize) -> (Vec<Sdf>, usize) {
    let corpus = support::load_dksh();
    let pick = |stage: &str| -> Vec<&support::CorpusShader> {
        corpus.iter().filter(|s| s.stage == stage).collect()
    };
    let (vs, fs, cs) = (pick("vertex"), pick("fragment"), pick("compute"));
    let mut paks: Vec<Pak> = (0..PAKS).map(|_| Default::default()).collect();
    let mut shaders = 0;
    for j in 0..n_sdf {
        let mut defs: Vec<Vec<support::Built>> = Vec::new();
        for k in 0..DEFS_PER_SDF {
            let i = j * DEFS_PER_SDF + k;
            let wrap = |s: &support::CorpusShader| {
                w::build(
                    s,
                    Wrap {
                        salt: i as u32,
                        bare_compute: s.threads[0] != 0,
                        ..Wrap::default()
                    },
                )
            };
            defs.push(if i % 4 == 3 {
                vec![wrap(cs[i % cs.len()])]
            } else {
                vec![wrap(vs[i % vs.len()]), wrap(fs[i % fs.len()])]
            });
        }
        shaders += defs.iter().map(|d| d.len()).sum::<usize>();
        let sdf = re::sdf(&defs.iter().map(|d| d.iter().collect()).collect::<Vec<_>>());
        let (entries, bodies) = &mut paks[j % PAKS];
        let zstd = j % 2 == 1;
        let body = if zstd {
            (zstd::bulk::compress(&sdf, 3).unwrap(), 2)
        } else {
            (re::deflate(&sdf, 6), 1)
        };
        entries.push(PakEntry {
            hash: j as u64,
            data: sdf,
            store: if zstd { Store::Zstd } else { Store::Deflate(6) },
        });
        bodies.push(body);
        // Two other resources: a texture-like deflated one and a stored one.
        for (m, store) in [(1u64, 1u64), (2, 0)] {
            let data: Vec<u8> = (0..4096u32)
                .map(|x| (x.wrapping_mul(2_654_435_761) >> (j % 7 + 8)) as u8)
                .collect();
            let stored = if store == 1 {
                re::deflate(&data, 1)
            } else {
                data.clone()
            };
            entries.push(PakEntry {
                hash: (m << 40) | j as u64,
                data,
                store: if store == 1 {
                    Store::Deflate(1)
                } else {
                    Store::Stored
                },
            });
            bodies.push((stored, store));
        }
    }
    let mut sdfs = Vec::new();
    for (p, (entries, bodies)) in paks.iter().enumerate() {
        let name = match p {
            0 => "re_chunk_000.pak".to_string(),
            p => format!("re_chunk_000.pak.patch_{p:03}.pak"),
        };
        let f = re::pak_raw(entries, bodies);
        for (i, (e, (body, attr))) in entries.iter().zip(bodies).enumerate() {
            if e.data.starts_with(b"SDF\0") {
                let at = 16 + i * 48;
                sdfs.push(Sdf {
                    pak: p,
                    at: u64::from_le_bytes(f[at + 8..at + 16].try_into().unwrap()) as usize,
                    len: body.len(),
                    zstd: *attr == 2,
                    size: e.data.len(),
                });
            }
        }
        std::fs::write(dir.join(name), f).unwrap();
    }
    (sdfs, shaders)
}

/// Reads every PAK and inflates every SDF entry; returns the bytes decoded.
fn baseline(dir: &Path, sdfs: &[Sdf]) -> usize {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    let files: Vec<Vec<u8>> = names.iter().map(|p| std::fs::read(p).unwrap()).collect();
    // One decoder of each kind per rayon job, as the scan keeps one per thread.
    sdfs.par_iter()
        .map_init(
            || {
                (
                    zstd::bulk::Decompressor::new().unwrap(),
                    flate2::Decompress::new(false),
                )
            },
            |(z, d), s| {
                let b = &files[s.pak][s.at..s.at + s.len];
                let out = if s.zstd {
                    z.decompress(b, s.size).unwrap()
                } else {
                    let mut v = Vec::with_capacity(s.size);
                    d.reset(false);
                    d.decompress_vec(b, &mut v, flate2::FlushDecompress::Finish)
                        .unwrap();
                    v
                };
                assert_eq!(out.len(), s.size);
                out.len()
            },
        )
        .sum()
}

fn main() {
    let env = |k: &str, d: usize| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let (n_sdf, rounds) = (
        env("DMSH_BENCH_SDF", 2700),
        env("DMSH_BENCH_ROUNDS", 5).max(1),
    );
    let tmp = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let (sdfs, put_in) = generate(tmp.path(), n_sdf);
    let stored: usize = sdfs.iter().map(|s| s.len).sum();
    let decoded: usize = sdfs.iter().map(|s| s.size).sum();
    let on_disk: u64 = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    println!(
        "generated in {:.1} s: {PAKS} PAKs ({:.1} MB), {} SDF entries ({:.1} MB stored, {:.1} MB decoded), {put_in} shaders",
        t0.elapsed().as_secs_f64(),
        on_disk as f64 / 1e6,
        sdfs.len(),
        stored as f64 / 1e6,
        decoded as f64 / 1e6,
    );
    let inputs = Inputs {
        romfs: vec![tmp.path().to_path_buf()],
        mains: vec![],
    };
    let threads = rayon::current_num_threads() as f64;
    // Best wall time of the rounds; CPU time as the mean over all of them (the machine may be
    // shared, and /proc counts in 10 ms ticks).
    let (mut scan_best, mut scan_cpu, mut base_best, mut base_cpu) = (f64::MAX, 0.0, f64::MAX, 0.0);
    for _ in 0..rounds {
        let (w0, c0) = (Instant::now(), cpu_now());
        let s = split::scan(&inputs, &Profile::default(), &Limits::default(), &Quiet).unwrap();
        scan_best = scan_best.min(w0.elapsed().as_secs_f64());
        scan_cpu += (cpu_now() - c0) / rounds as f64;
        assert!(s.warnings.is_empty(), "{:?}", &s.warnings[..1]);
        assert_eq!(s.shaders.len(), put_in);
        drop(s);
        let (w0, c0) = (Instant::now(), cpu_now());
        assert_eq!(baseline(tmp.path(), &sdfs), decoded);
        base_best = base_best.min(w0.elapsed().as_secs_f64());
        base_cpu += (cpu_now() - c0) / rounds as f64;
    }
    let rate = put_in as f64 / scan_best;
    println!(
        "scan: {scan_best:.3} s, {rate:.0} shaders/s, {:.1} MB/s decoded ({threads} threads, {scan_cpu:.2} CPU s)",
        decoded as f64 / 1e6 / scan_best
    );
    println!(
        "read + inflate the same SDF entries: {base_best:.3} s, {:.1} MB/s ({base_cpu:.2} CPU s)",
        decoded as f64 / 1e6 / base_best
    );
    println!(
        "ratio scan / (read + inflate): {:.2} by wall time, {:.2} by CPU time",
        scan_best / base_best,
        if base_cpu > 0.0 {
            scan_cpu / base_cpu
        } else {
            f64::NAN
        }
    );
    let seed_per_core = SEED.0 / SEED.1 / SEED.2;
    println!(
        "per core: {:.0} shaders/s per thread, {:.0} per CPU second; the seed's: {seed_per_core:.0} ({} shaders in {} s with {} jobs)",
        rate / threads,
        if scan_cpu > 0.0 { put_in as f64 / scan_cpu } else { f64::NAN },
        SEED.0,
        SEED.1,
        SEED.2
    );
}
