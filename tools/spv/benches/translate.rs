//! Throughput of decode + lift + passes + SPIR-V emission over the 92 corpus shaders (every
//! sm53 kernel of tests/corpus/sass, every DKSH program of tests/corpus/dksh: compute and
//! graphics), on one thread: for all of them, compute only and graphics only.
//! Prints shaders/s and instructions/s by wall time and by this thread's CPU time (the
//! machine may be shared), the ratio to issue 4's goal, the same for all of them under the
//! Metal build's options (native FMA, soft f64: issue 11's goal) with that output's digest,
//! and a per-phase breakdown; asserts nothing about time.
//! Issue 11 compares with yuzu's recompiler on the corpus shaders it translates
//! (`yuzu_set.txt`): the Metal build's options and the defaults over exactly those.
//! Then Ampere against Maxwell: the sass kernels that translate from both their sm53 and
//! their sm86 builds, timed in alternating rounds in this process, per guest instruction
//! lifted (ptxas pads sm86 code with unreachable NOPs, so slots would flatter Ampere).
//! `cargo bench -p dmsh-spv --bench translate` (`DMSH_BENCH_SECS=N` sets the measuring time;
//! `DMSH_BENCH_ROUNDS=N` runs exactly N rounds, e.g. under callgrind; `DMSH_BENCH_YUZU_SET=1`
//! measures only yuzu's set, for runs alternating with yuzu's; `DMSH_BENCH_ONLY=metal` stops
//! after the Metal build's measurement, for profiling that alone; `DMSH_BENCH_SHADERS=NAME,…`
//! prints instead each named shader's phases, `DMSH_BENCH_ROUNDS` rounds, default 200, and
//! with `DMSH_BENCH_CALLGRIND=1` only translates them, in `callgrind_rounds`; the name `yuzu`
//! stands for yuzu's set, and `DMSH_BENCH_OPTIONS=metal` uses the Metal build's options there).
//! Instruction counts under callgrind do not depend on the machine's load:
//! `DMSH_BENCH_SHADERS=yuzu DMSH_BENCH_OPTIONS=metal DMSH_BENCH_CALLGRIND=1 DMSH_BENCH_ROUNDS=20
//! valgrind --tool=callgrind --toggle-collect='translate::callgrind_rounds' <bench> --bench`.

#[path = "../tests/common/mod.rs"]
mod common;
mod corpus;

use corpus::{corpus, corpus_sm86, cpu_now, Job};
use dmsh_spv::{F64Mode, FmaMode, Options};
use std::time::{Duration, Instant};

/// Issue 4's goal: twice yuzu's shader recompiler on one core.
const GOAL_SHADERS: f64 = 12_000.0;
const GOAL_INSTS: f64 = 900_000.0;
/// Issue 11's goal: twice yuzu's shader recompiler (14,216 shaders/s on one core, on the 56
/// corpus shaders both translate) with the Metal build's options.
const GOAL_METAL_SHADERS: f64 = 2.0 * 14_216.0;
/// The corpus shaders yuzu's shader recompiler translates, one name a line (how the list was
/// made: its header).
const YUZU_SET: &str = include_str!("yuzu_set.txt");

/// Wall and CPU seconds of a stretch of work.
#[derive(Default, Clone, Copy)]
struct Clock {
    wall: f64,
    cpu: f64,
}

impl Clock {
    fn time<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let (w0, c0) = (Instant::now(), cpu_now());
        let r = f();
        self.cpu += cpu_now() - c0;
        self.wall += w0.elapsed().as_secs_f64();
        r
    }
}

/// Measures whole translations of `set` (as a user calls it), prints rates and the ratio to
/// the goal, and returns the shaders/s by thread CPU time.
fn measure(label: &str, set: &[&Job], opts: &Options, more: &dyn Fn(u64, Instant) -> bool) -> f64 {
    let insts: usize = set.iter().map(|j| j.insts()).sum();
    let start = Instant::now();
    let cpu0 = cpu_now();
    let mut rounds = 0u64;
    let mut words = 0usize;
    while more(rounds, start) {
        for j in set {
            let out = j.translate(opts).expect("translated before");
            words += out.words.len();
        }
        rounds += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    let cpu = cpu_now() - cpu0;
    let shaders = rounds as f64 * set.len() as f64;
    let n_insts = rounds as f64 * insts as f64;
    println!(
        "{label}: {} shaders, {} instruction slots each round",
        set.len(),
        insts
    );
    println!(
        "  wall: {:.0} shaders/s, {:.0} instructions/s, {:.1} MB/s of SPIR-V ({} rounds in {:.2} s, one thread)",
        shaders / secs,
        n_insts / secs,
        words as f64 * 4.0 / secs / 1e6,
        rounds,
        secs
    );
    if cpu > 0.0 {
        println!(
            "  cpu:  {:.0} shaders/s, {:.0} instructions/s ({:.2} s of thread CPU time, {:.0}% of wall)",
            shaders / cpu,
            n_insts / cpu,
            cpu,
            100.0 * cpu / secs
        );
        println!(
            "  goal (issue 4: {:.0} shaders/s, {:.0} instructions/s): cpu {:.2}× / {:.2}×, wall {:.2}× / {:.2}×",
            GOAL_SHADERS,
            GOAL_INSTS,
            shaders / cpu / GOAL_SHADERS,
            n_insts / cpu / GOAL_INSTS,
            shaders / secs / GOAL_SHADERS,
            n_insts / secs / GOAL_INSTS
        );
    }
    shaders / cpu.max(1e-9)
}

/// `DMSH_BENCH_SHADERS=NAME,…` (or `all`): each named shader's sizes and the thread-CPU µs of
/// one translation and of each phase (passes over 3 µs), averaged over `rounds`; with
/// `DMSH_BENCH_CALLGRIND=1` only whole translations, inside [`callgrind_rounds`].
fn per_shader(jobs: &[Job], names: &str, rounds: u64) {
    let opts = if std::env::var("DMSH_BENCH_OPTIONS").is_ok_and(|v| v == "metal") {
        metal_options()
    } else {
        Options::default()
    };
    let yuzu = yuzu_names();
    let passes = dmsh_ir::passes::PASSES;
    let callgrind = std::env::var_os("DMSH_BENCH_CALLGRIND").is_some();
    for j in jobs.iter().filter(|j| {
        names
            .split(',')
            .any(|n| n == j.name || n == "all" || (n == "yuzu" && yuzu.contains(&j.name.as_str())))
    }) {
        let words = j.translate(&opts).expect("translates").words.len();
        if callgrind {
            callgrind_rounds(j, &opts, rounds);
            continue;
        }
        let (mut lift, mut structurize, mut emit, mut total) = Default::default();
        let mut pass_clocks = vec![Clock::default(); passes.len()];
        let (mut made, mut blocks, mut sink) = (0, 0, 0usize);
        for _ in 0..rounds {
            let mut sh = Clock::time(&mut lift, || j.lift());
            (made, blocks) = (sh.func.insts.len(), sh.func.blocks.len());
            for (k, (_, pass)) in passes.iter().enumerate() {
                pass_clocks[k].time(|| pass(&mut sh.func));
            }
            sink += Clock::time(&mut structurize, || {
                (blocks > 1)
                    .then(|| dmsh_ir::structure::structurize(&sh.func).ok())
                    .flatten()
                    .map_or(0, |t| t.gotos)
            });
            sink += Clock::time(&mut emit, || {
                dmsh_spv::emit(&sh, &opts).expect("emits").words.len()
            });
            sink += Clock::time(&mut total, || {
                j.translate(&opts).expect("translates").words.len()
            });
        }
        std::hint::black_box(sink);
        let us = |c: &Clock| c.cpu * 1e6 / rounds.max(1) as f64;
        print!(
            "{}: {} slots, {made} IR instructions, {blocks} blocks, {words} words | total {:.1} µs, lift {:.1}",
            j.name,
            j.insts(),
            us(&total),
            us(&lift)
        );
        for ((name, _), c) in passes.iter().zip(&pass_clocks) {
            if us(c) > 3.0 {
                print!(", {name} {:.1}", us(c));
            }
        }
        println!(
            ", structurize {:.1}, emit {:.1} (with structurize)",
            us(&structurize),
            us(&emit)
        );
    }
}

/// `rounds` translations of `j`, in a function of their own for callgrind's
/// `--toggle-collect=translate::callgrind_rounds`.
#[inline(never)]
fn callgrind_rounds(j: &Job, opts: &Options, rounds: u64) {
    for _ in 0..rounds {
        std::hint::black_box(j.translate(opts).expect("translates"));
    }
}

fn main() {
    let jobs = corpus();
    if let Ok(names) = std::env::var("DMSH_BENCH_SHADERS") {
        let rounds = std::env::var("DMSH_BENCH_ROUNDS")
            .ok()
            .and_then(|s| s.parse().ok());
        per_shader(&jobs, &names, rounds.unwrap_or(200));
        return;
    }
    let opts = Options::default();
    let mut ok: Vec<&Job> = Vec::new();
    let mut failed = Vec::new();
    // FNV-1a over every output word: equal digests = identical SPIR-V.
    let mut digest = 0xcbf2_9ce4_8422_2325u64;
    for j in &jobs {
        match j.translate(&opts) {
            Ok(out) => {
                for &w in &out.words {
                    digest = (digest ^ w as u64).wrapping_mul(0x100_0000_01b3);
                }
                ok.push(j)
            }
            Err(e) => failed.push(format!("{}: {e}", j.name)),
        }
    }
    let fixed_rounds: Option<u64> = std::env::var("DMSH_BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok());
    let budget = Duration::from_secs_f64(
        std::env::var("DMSH_BENCH_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(3.0),
    );
    let more = move |rounds: u64, start: Instant| match fixed_rounds {
        Some(n) => rounds < n,
        None => start.elapsed() < budget,
    };
    println!(
        "translate (decode + lift + passes + SPIR-V), one thread: {} of {} corpus shaders translate ({} fail and are excluded)",
        ok.len(),
        jobs.len(),
        failed.len()
    );
    for f in &failed {
        println!("  excluded: {f}");
    }
    println!("SPIR-V digest of the round: {digest:016x}");
    let yuzu_only = std::env::var_os("DMSH_BENCH_YUZU_SET").is_some();
    if !yuzu_only {
        measure("all", &ok, &opts, &more);
    }
    // The Metal build's options (docs/build.md): issue 11's goal is twice yuzu's rate with them.
    let metal = metal_options();
    yuzu_set(&ok, &opts, &metal, &more);
    if yuzu_only {
        return;
    }
    let mut metal_digest = 0xcbf2_9ce4_8422_2325u64;
    for j in &ok {
        for &w in &j.translate(&metal).expect("translates").words {
            metal_digest = (metal_digest ^ w as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    println!("SPIR-V digest of the round with the Metal build's options: {metal_digest:016x}");
    let rate = measure(
        "metal build (native FMA, soft f64), all",
        &ok,
        &metal,
        &more,
    );
    println!(
        "  goal (issue 11: 2 × yuzu's 14,216 = {GOAL_METAL_SHADERS:.0} shaders/s, on all {} here, not yuzu's 56): cpu {:.2}×",
        ok.len(),
        rate / GOAL_METAL_SHADERS
    );
    if std::env::var("DMSH_BENCH_ONLY").is_ok_and(|v| v == "metal") {
        return;
    }
    let compute: Vec<&Job> = ok.iter().copied().filter(|j| !j.graphics).collect();
    measure("compute only", &compute, &opts, &more);
    let graphics: Vec<&Job> = ok.iter().copied().filter(|j| j.graphics).collect();
    measure("graphics only", &graphics, &opts, &more);
    soft_f64(&ok, &more);
    // Per-phase breakdown over all: the same work, phase by phase (decode alone is measured
    // apart: lifting decodes again).
    let insts: usize = ok.iter().map(|j| j.insts()).sum();
    let passes = dmsh_ir::passes::PASSES;
    let mut decode = Clock::default();
    let mut lift = Clock::default();
    let mut pass_clocks = vec![Clock::default(); passes.len()];
    let mut structurize = Clock::default();
    let mut barrier_rule = Clock::default();
    let mut emit = Clock::default();
    let start = Instant::now();
    let mut prounds = 0u64;
    let mut sink = 0usize;
    // IR volume of one round: instructions made by lifting, live after the passes.
    let (mut made, mut live, mut guest) = (0usize, 0usize, 0usize);
    while more(prounds, start) {
        for j in &ok {
            sink += decode.time(|| {
                dmsh_isa::stream::instructions(j.instrs())
                    .filter(|(_, r, _)| r.is_ok())
                    .count()
            });
            let mut sh = lift.time(|| j.lift());
            if prounds == 0 {
                made += sh.func.insts.len();
                guest += sh.guest_insts;
            }
            for (k, (_, pass)) in passes.iter().enumerate() {
                pass_clocks[k].time(|| pass(&mut sh.func));
            }
            if prounds == 0 {
                live += sh.func.live_insts();
            }
            sink += structurize.time(|| {
                (sh.func.blocks.len() > 1)
                    .then(|| dmsh_ir::structure::structurize(&sh.func).ok())
                    .flatten()
                    .map_or(0, |t| t.gotos)
            });
            sink += barrier_rule.time(|| {
                dmsh_ir::uniform::barrier::exit_divergent_barrier(&sh.func).map_or(0, |b| b.index())
            });
            sink += emit.time(|| dmsh_spv::emit(&sh, &opts).expect("emits").words.len());
        }
        prounds += 1;
    }
    std::hint::black_box(sink);
    let per = |c: &Clock| c.cpu * 1e6 / (prounds as f64 * ok.len() as f64);
    let pass_total: f64 = pass_clocks.iter().map(|c| c.cpu).sum();
    let total = lift.cpu + pass_total + emit.cpu;
    let pct = |c: f64| 100.0 * c / total;
    println!("phases (thread CPU, µs per shader, % of lift + passes + emit; {prounds} rounds):");
    println!(
        "  decode alone     {:8.1} µs  ({:.0} M instructions/s; part of lift)",
        per(&decode),
        prounds as f64 * insts as f64 / decode.cpu.max(1e-9) / 1e6
    );
    println!(
        "  lift             {:8.1} µs  {:5.1}%",
        per(&lift),
        pct(lift.cpu)
    );
    for ((name, _), c) in passes.iter().zip(&pass_clocks) {
        println!("  pass {name:<17}{:6.1} µs  {:5.1}%", per(c), pct(c.cpu));
    }
    println!(
        "  emit             {:8.1} µs  {:5.1}%  (structurize + SPIR-V + assembly)",
        per(&emit),
        pct(emit.cpu)
    );
    println!(
        "    structurize    {:8.1} µs  {:5.1}%  (measured apart; part of emit)",
        per(&structurize),
        pct(structurize.cpu)
    );
    println!(
        "    barrier rule   {:8.1} µs  {:5.1}%  (uniformity + exit-divergent barriers; measured apart; part of emit)",
        per(&barrier_rule),
        pct(barrier_rule.cpu)
    );
    println!(
        "IR per round: {guest} guest instructions lifted, {made} IR instructions made ({:.1} each), {live} live after the passes ({:.1} each)",
        made as f64 / guest.max(1) as f64,
        live as f64 / guest.max(1) as f64
    );
    ampere_vs_maxwell(&jobs, &opts, &more);
}

/// The Metal build's options (docs/build.md): native FMA, soft f64.
fn metal_options() -> Options {
    Options {
        fma: FmaMode::Native,
        f64: F64Mode::Soft,
        ..Options::default()
    }
}

/// The names `yuzu_set.txt` lists.
fn yuzu_names() -> Vec<&'static str> {
    YUZU_SET
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

/// Issue 11's comparison: the shaders of `yuzu_set.txt` (each must translate here), under the
/// Metal build's options (`metal`) and the defaults.
fn yuzu_set(ok: &[&Job], opts: &Options, metal: &Options, more: &dyn Fn(u64, Instant) -> bool) {
    let names = yuzu_names();
    let set: Vec<&Job> = ok
        .iter()
        .copied()
        .filter(|j| names.contains(&j.name.as_str()))
        .collect();
    let missing: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| !set.iter().any(|j| j.name == *n))
        .collect();
    assert!(
        missing.is_empty(),
        "yuzu_set.txt names shaders that do not translate: {missing:?}"
    );
    let rate = measure(
        "metal build (native FMA, soft f64), yuzu's set",
        &set,
        metal,
        more,
    );
    println!(
        "  goal (issue 11: 2 × yuzu's 14,216 = {GOAL_METAL_SHADERS:.0} shaders/s, on these {}): cpu {:.2}×",
        set.len(),
        rate / GOAL_METAL_SHADERS
    );
    measure("default options, yuzu's set", &set, opts, more);
}

/// Whether `words` declares a 64-bit float type (`OpTypeFloat 64`).
fn declares_f64(words: &[u32]) -> bool {
    let mut i = 5;
    while i < words.len() {
        let (n, op) = ((words[i] >> 16) as usize, words[i] & 0xffff);
        if op == 22 && words.get(i + 2) == Some(&64) {
            return true;
        }
        i += n.max(1);
    }
    false
}

/// The build's options (native FMA) with native and with soft f64 (docs/build.md): the
/// shaders whose native-f64 module has no 64-bit float type, and those that have one, each
/// set measured both ways, with the SPIR-V words per shader.
fn soft_f64(ok: &[&Job], more: &dyn Fn(u64, Instant) -> bool) {
    let native = Options {
        fma: FmaMode::Native,
        ..Options::default()
    };
    let soft = Options {
        f64: F64Mode::Soft,
        ..native
    };
    let (with, without): (Vec<&Job>, Vec<&Job>) = ok
        .iter()
        .copied()
        .partition(|j| j.translate(&native).is_ok_and(|o| declares_f64(&o.words)));
    let words = |set: &[&Job], o: &Options| -> usize {
        set.iter()
            .filter_map(|j| j.translate(o).ok())
            .map(|o| o.words.len())
            .sum()
    };
    for (label, set) in [("without f64", &without), ("with f64", &with)] {
        println!(
            "native FMA, {label} ({} shaders): {} SPIR-V words native f64, {} soft f64",
            set.len(),
            words(set, &native),
            words(set, &soft)
        );
        measure(&format!("  {label}, native f64"), set, &native, more);
        measure(&format!("  {label}, soft f64"), set, &soft, more);
    }
}

/// Translation throughput of the sm86 kernels against their sm53 builds (per guest
/// instruction lifted, thread CPU time, alternating rounds).
fn ampere_vs_maxwell(jobs: &[Job], opts: &Options, more: &dyn Fn(u64, Instant) -> bool) {
    let sm86 = corpus_sm86();
    let mut pairs: Vec<(&Job, &Job)> = Vec::new();
    let mut failed = Vec::new();
    for a in &sm86 {
        let Some(m) = jobs.iter().find(|j| j.name == a.name && !j.graphics) else {
            continue;
        };
        match (a.translate(opts), m.translate(opts)) {
            (Ok(_), Ok(_)) => pairs.push((m, a)),
            (Err(e), _) => failed.push(format!("{}: {e}", a.name)),
            _ => {}
        }
    }
    let guest = |j: &Job| j.lift().guest_insts;
    let (gm, ga): (usize, usize) = (
        pairs.iter().map(|p| guest(p.0)).sum(),
        pairs.iter().map(|p| guest(p.1)).sum(),
    );
    println!(
        "ampere vs maxwell: {} kernels translate from both builds ({} sm86 builds fail: excluded); guest instructions per round: sm53 {gm}, sm86 {ga}",
        pairs.len(),
        failed.len()
    );
    let (mut cm, mut ca) = (0.0f64, 0.0f64);
    let start = Instant::now();
    let mut rounds = 0u64;
    while more(rounds, start) {
        let c0 = cpu_now();
        for p in &pairs {
            std::hint::black_box(p.0.translate(opts).expect("translated before"));
        }
        let c1 = cpu_now();
        for p in &pairs {
            std::hint::black_box(p.1.translate(opts).expect("translated before"));
        }
        cm += c1 - c0;
        ca += cpu_now() - c1;
        rounds += 1;
    }
    let rm = rounds as f64 * gm as f64 / cm.max(1e-9);
    let ra = rounds as f64 * ga as f64 / ca.max(1e-9);
    println!(
        "  sm53 {rm:.0} guest instructions/s, sm86 {ra:.0} guest instructions/s (thread CPU, {rounds} rounds): sm86/sm53 = {:.2}",
        ra / rm
    );
}

/// The allocator the dmsh binaries use (tools/cli), so that the bench measures what a build does.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;
