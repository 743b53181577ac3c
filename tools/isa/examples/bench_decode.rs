//! Decode throughput over the whole corpus: `cargo run --release -p dmsh-isa --example
//! bench_decode`. Prints instructions per second for decode alone, decode + encode and
//! decode + print (single thread).

use std::path::Path;
use std::time::{Duration, Instant};

fn collect(dir: &Path, out: &mut Vec<u64>) {
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
            Ok(t) if name.ends_with(".sass") && !name.contains(".sm86.") => t,
            _ => continue,
        };
        for e in dmsh_isa::listing::parse(&text) {
            if e.offset % 32 != 0 {
                out.push(e.word);
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

fn run<F: FnMut(&[u64]) -> u64>(name: &str, words: &[u64], mut f: F) {
    let mut n = 0u64;
    let mut sink = 0u64;
    let cpu0 = thread_cpu_seconds();
    let t = Instant::now();
    while t.elapsed() < Duration::from_millis(3000) {
        sink = sink.wrapping_add(f(words));
        n += words.len() as u64;
    }
    let s = t.elapsed().as_secs_f64();
    let cpu = match (cpu0, thread_cpu_seconds()) {
        (Some(a), Some(b)) if b > a => {
            format!(", {:.1} M/s per CPU-second", n as f64 / (b - a) / 1e6)
        }
        _ => String::new(),
    };
    println!(
        "{name:14} {:8.1} M instructions/s wall{cpu}  ({n} in {s:.2} s, checksum {sink:x})",
        n as f64 / s / 1e6
    );
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut words = Vec::new();
    collect(&root.join("tests/corpus"), &mut words);
    collect(&root.join("../shared/corpus/external"), &mut words);
    println!("corpus: {} instruction words", words.len());
    let _ = dmsh_isa::table::table(); // parse the table outside the timed loops
    run("decode", &words, |ws| {
        ws.iter()
            .map(|&w| dmsh_isa::decode(w).map(|i| i.form() as u64).unwrap_or(0))
            .sum()
    });
    run("decode+encode", &words, |ws| {
        ws.iter()
            .map(|&w| dmsh_isa::decode(w).map(|i| i.encode()).unwrap_or(0))
            .fold(0, u64::wrapping_add)
    });
    run("decode+print", &words, |ws| {
        ws.iter()
            .map(|&w| {
                dmsh_isa::decode(w)
                    .map(|i| i.print(0, 0).len() as u64)
                    .unwrap_or(0)
            })
            .sum()
    });
}
