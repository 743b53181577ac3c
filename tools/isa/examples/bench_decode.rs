//! Decode throughput over the whole corpus: `cargo run --release -p dmsh-isa --example
//! bench_decode`. Prints instructions per second for decode alone, decode + encode and
//! decode + print (single thread), for Maxwell (sm53 listings) and Ampere (sm86 listings),
//! and Ampere's rate as a ratio of Maxwell's, both measured in this process.

use dmsh_isa::engine::Instr;
use dmsh_isa::{Isa, Word};
use std::path::Path;
use std::time::{Duration, Instant};

/// The instruction words of the corpus's listings: Maxwell's (no scheduling words) and
/// Ampere's.
#[derive(Default)]
struct Words {
    sm53: Vec<u64>,
    sm86: Vec<u128>,
}

fn collect(dir: &Path, out: &mut Words) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
            continue;
        }
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let text = match std::fs::read_to_string(&p) {
            Ok(t) if name.ends_with(".sass") => t,
            _ => continue,
        };
        if name.contains(".sm86.") {
            let es = dmsh_isa::listing::parse_tsv_as::<u128>(&text);
            out.sm86.extend(es.iter().map(|e| e.word));
            continue;
        }
        for e in dmsh_isa::listing::parse(&text) {
            if e.offset % 32 != 0 {
                out.sm53.push(e.word);
            }
        }
    }
}

/// CPU time of this thread in seconds (Linux: /proc/thread-self/stat, 10 ms ticks), so a
/// loaded machine does not distort the rate; `None` elsewhere.
fn thread_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = f.get(11)?.parse().ok()?;
    let stime: f64 = f.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

/// Runs `f` over `words` for 3 s; returns instructions per CPU-second (per wall second
/// where CPU time is not available).
fn run<W, F: FnMut(&[W]) -> u64>(name: &str, words: &[W], mut f: F) -> f64 {
    let mut n = 0u64;
    let mut sink = 0u64;
    let cpu0 = thread_cpu_seconds();
    let t = Instant::now();
    while t.elapsed() < Duration::from_millis(3000) {
        sink = sink.wrapping_add(f(words));
        n += words.len() as u64;
    }
    let s = t.elapsed().as_secs_f64();
    let (cpu, rate) = match (cpu0, thread_cpu_seconds()) {
        (Some(a), Some(b)) if b > a => {
            let r = n as f64 / (b - a);
            (format!(", {:.1} M/s per CPU-second", r / 1e6), r)
        }
        _ => (String::new(), n as f64 / s),
    };
    println!(
        "{name:20} {:8.1} M instructions/s wall{cpu}  ({n} in {s:.2} s, checksum {sink:x})",
        n as f64 / s / 1e6
    );
    rate
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut words = Words::default();
    collect(&root.join("tests/corpus"), &mut words);
    collect(&root.join("../shared/corpus/external"), &mut words);
    println!(
        "corpus: {} Maxwell and {} Ampere instruction words",
        words.sm53.len(),
        words.sm86.len()
    );
    let _ = dmsh_isa::table::table(); // parse the tables outside the timed loops
    let _ = dmsh_isa::ampere::decode(0);
    let m = rates::<dmsh_isa::Maxwell>("sm53", &words.sm53);
    let a = rates::<dmsh_isa::ampere::Ampere>("sm86", &words.sm86);
    for (k, what) in ["decode", "decode+encode", "decode+print"]
        .iter()
        .enumerate()
    {
        println!("sm86 / sm53 {what:14} {:.2}", a[k] / m[k]);
    }
}

/// Decode, decode + encode and decode + print rates of one ISA's words (one engine, so one
/// loop for every ISA; scheduling reuse flags are left out of the print).
fn rates<I: Isa>(isa: &str, words: &[I::Word]) -> [f64; 3] {
    let dec = |w: I::Word| Instr::<I>::decode(w).ok();
    [
        run(&format!("{isa} decode"), words, |ws| {
            ws.iter()
                .filter_map(|&w| dec(w))
                .map(|i| i.form() as u64)
                .sum()
        }),
        run(&format!("{isa} decode+encode"), words, |ws| {
            ws.iter()
                .filter_map(|&w| dec(w))
                .map(|i| i.encode().to_u128() as u64)
                .fold(0, u64::wrapping_add)
        }),
        run(&format!("{isa} decode+print"), words, |ws| {
            ws.iter()
                .filter_map(|&w| dec(w))
                .map(|i| i.print(0, 0).len() as u64)
                .sum()
        }),
    ]
}
