//! Per-file scan cost on the demo title: where a split's time goes (helper for scripts/bench-split).

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Instant;

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let d = support::demo::build(tmp.path());
    let l = dmsh_scan::Limits::default();
    for f in &d.files {
        let b = std::fs::read(tmp.path().join(f)).unwrap();
        let n = 300;
        let t = Instant::now();
        for _ in 0..n {
            let s = dmsh_scan::walk::FileScan::new(&l, true, 0, "x".into());
            if f.ends_with("main") {
                std::hint::black_box(s.scan_main(&b, f));
            } else {
                std::hint::black_box(s.scan(&b, f, 0));
            }
        }
        let dt = t.elapsed().as_secs_f64() / n as f64;
        println!(
            "{:>8} bytes {:>8.1} us {:>7.0} MB/s  {f}",
            b.len(),
            dt * 1e6,
            b.len() as f64 / dt / 1e6
        );
    }
}
