//! Throughput of the Metal build's per-shader work — translate (native FMA, as the build
//! does) → fix-ups (dmsh-fixup) → validation (SPIRV-Tools, where installed, as the build's
//! `validate` step) → SPIRV-Cross (dmsh-msl) → binding check — over the 92 corpus shaders, in
//! this process, with no file I/O. Prints:
//!
//! - shaders/s on one thread (thread CPU time) and the share of each step;
//! - shaders/s across every core (rayon, wall time) and the projection for a 22,852-shader
//!   title (DK Bananza's count) against the 60 s goal;
//! - SPIR-V words per guest instruction slot, and SPIRV-Cross time against module size.
//!
//! Asserts nothing about time. `DMSH_BENCH_ROUNDS=N` sets the rounds (default 20: 1,840
//! conversions, with ≥ 2,000 shaders reached by the parallel pass's extra rounds).
//! `cargo bench -p dmsh-msl --bench metal_build`.

#[path = "../../spv/tests/common/mod.rs"]
mod common;
#[path = "../../spv/benches/corpus/mod.rs"]
mod corpus;

use corpus::cpu_now;
use dmsh_fixup::Partners;
use dmsh_msl::{check_bindings, to_msl, MslOptions};
use dmsh_spv::{FmaMode, Options};
use rayon::prelude::*;
use std::time::Instant;

/// Thread-CPU seconds per step of one conversion, and its sizes.
#[derive(Default, Clone, Copy)]
struct Steps {
    translate: f64,
    fixup: f64,
    validate: f64,
    cross: f64,
    check: f64,
    words: usize,
    reached_msl: bool,
}

/// Converts one job as the build does; times each step on this thread.
fn convert(j: &corpus::Job, opts: &Options, msl: &MslOptions) -> Steps {
    let mut s = Steps::default();
    let t = cpu_now();
    let out = j.translate(opts);
    s.translate = cpu_now() - t;
    let Ok(out) = out else { return s };
    let mut refl = out.reflection;
    let t = cpu_now();
    let words = dmsh_fixup::for_metal(&out.words, &mut refl, &Partners::default());
    s.fixup = cpu_now() - t;
    let Ok(words) = words else { return s };
    s.words = words.len();
    if validating() {
        let t = cpu_now();
        let ok = dmsh_vk::spirv_val(&words);
        s.validate = cpu_now() - t;
        if ok.is_err() {
            return s;
        }
    }
    let t = cpu_now();
    let m = to_msl(&words, &refl, msl);
    s.cross = cpu_now() - t;
    if let Ok(m) = m {
        if refl.stage == "vertex" {
            refl.metal_entry_z = Some("main0_z".into());
        }
        let t = cpu_now();
        let _ = check_bindings(&m.source, &refl);
        s.check = cpu_now() - t;
        s.reached_msl = true;
    }
    s
}

/// Whether a validator runs here (the build's `validate` step runs where one does).
fn validating() -> bool {
    static V: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *V.get_or_init(|| dmsh_vk::validate::version().is_some())
}

fn main() {
    let jobs = corpus::corpus();
    let rounds: usize = std::env::var("DMSH_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let opts = Options {
        fma: FmaMode::Native,
        ..Default::default()
    };
    let msl = MslOptions::default();
    // One thread: where the time goes.
    let mut all: Vec<(usize, Steps)> = Vec::new();
    for _ in 0..rounds {
        for (k, j) in jobs.iter().enumerate() {
            all.push((k, convert(j, &opts, &msl)));
        }
    }
    let sum = |f: fn(&Steps) -> f64| all.iter().map(|(_, s)| f(s)).sum::<f64>();
    let (tr, fx, va, cr, ck) = (
        sum(|s| s.translate),
        sum(|s| s.fixup),
        sum(|s| s.validate),
        sum(|s| s.cross),
        sum(|s| s.check),
    );
    let total = tr + fx + va + cr + ck;
    let n = all.len() as f64;
    let reached = all.iter().filter(|(_, s)| s.reached_msl).count() / rounds;
    println!(
        "metal build, one thread: {} shaders × {rounds} rounds ({reached} reach MSL each round)",
        jobs.len()
    );
    println!(
        "  {:.0} shaders/s (thread CPU, {:.2} s); translate {:.0}%, fix-ups {:.0}%, validation {:.0}% ({}), SPIRV-Cross {:.0}%, binding check {:.0}%",
        n / total,
        total,
        100.0 * tr / total,
        100.0 * fx / total,
        100.0 * va / total,
        match (validating(), dmsh_vk::validate::validator()) {
            (false, _) => "no validator here".to_string(),
            (true, dmsh_vk::validate::Validator::Linked) => "SPIRV-Tools linked".to_string(),
            (true, v) => format!("{v:?}"),
        },
        100.0 * cr / total,
        100.0 * ck / total
    );
    let insts: usize = jobs.iter().map(|j| j.insts()).sum();
    let words: usize = all.iter().take(jobs.len()).map(|(_, s)| s.words).sum();
    println!(
        "  SPIR-V after the fix-ups: {words} words for {insts} guest instruction slots = {:.1} words per instruction",
        words as f64 / insts as f64
    );
    // SPIRV-Cross time against module size.
    let buckets = [
        (0, 2_000),
        (2_000, 5_000),
        (5_000, 10_000),
        (10_000, usize::MAX),
    ];
    for (lo, hi) in buckets {
        let sel: Vec<&Steps> = all
            .iter()
            .map(|(_, s)| s)
            .filter(|s| s.reached_msl && s.words >= lo && s.words < hi)
            .collect();
        if sel.is_empty() {
            continue;
        }
        let t: f64 = sel.iter().map(|s| s.cross).sum();
        let w: usize = sel.iter().map(|s| s.words).sum();
        println!(
            "  SPIRV-Cross, modules of {lo}..{} words: {:.2} ms per shader, {:.0} µs per 1,000 words ({} shaders)",
            if hi == usize::MAX { "∞".to_string() } else { hi.to_string() },
            1e3 * t / sel.len() as f64,
            1e9 * t / w as f64,
            sel.len() / rounds
        );
    }
    // Every core: the rate a title build gets (wall time; the build adds file I/O).
    let par_rounds = rounds.max(2_000usize.div_ceil(jobs.len()));
    let work: Vec<&corpus::Job> = (0..par_rounds).flat_map(|_| jobs.iter()).collect();
    let start = Instant::now();
    let done: usize = work
        .par_iter()
        .map(|j| convert(j, &opts, &msl).reached_msl as usize)
        .sum();
    let secs = start.elapsed().as_secs_f64();
    let rate = work.len() as f64 / secs;
    let projected = 22_852.0 / rate;
    println!(
        "metal build, {} threads: {} conversions ({done} reach MSL) in {secs:.2} s = {rate:.0} shaders/s",
        rayon::current_num_threads(),
        work.len()
    );
    println!(
        "  projected for 22,852 shaders: {projected:.0} s (goal 60 s: ratio {:.2})",
        60.0 / projected
    );
}
