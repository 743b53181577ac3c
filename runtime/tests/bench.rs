//! Speed on a title of 22,852 keys made from the demo's built shaders (each key's
//! reflection a hard link to one of them): open (lazy and eager), a shader's first lookup
//! (read, check, convert) and the lookup afterwards. Prints the times; asserts only that
//! every lookup succeeds (goals, docs/runtime.md: open under 50 ms, lookup under 200 ns).

mod common;

use std::time::{Duration, Instant};

use dmsh_runtime::abi::{DEPTH_GL, DEPTH_ZERO_TO_ONE};
use dmsh_runtime::{OpenOptions, Title};

const KEYS: usize = 22_852;

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[test]
fn open_and_lookup_speed_on_a_22852_key_title() {
    let Some(d) = common::demo() else { return };
    let src = d.b_dir();
    let map = std::fs::read_to_string(d.map()).unwrap();
    // The built demo shaders: (stage, the rest of the map row, json path).
    let built: Vec<(String, String, std::path::PathBuf)> = map
        .lines()
        .skip(1)
        .filter_map(|l| {
            let (k, rest) = l.split_once('\t')?;
            let j = src.join(format!("{k}_b.json"));
            j.is_file().then(|| (k.to_string(), rest.to_string(), j))
        })
        .collect();
    assert!(!built.is_empty());
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-rt-bench");
    let _ = std::fs::remove_dir_all(&dir);
    let b = dir.join(format!("b-{}", d.chain));
    std::fs::create_dir_all(&b).unwrap();
    let mut text = String::from(map.lines().next().unwrap());
    text.push('\n');
    let mut c1 = format!("b-{}\n", d.chain);
    let mut record = Vec::new();
    let mut keys = Vec::with_capacity(KEYS);
    for i in 0..KEYS {
        let k = splitmix(i as u64);
        let ks = dmsh_runtime::key::to_string(k);
        let (_, rest, j) = &built[i % built.len()];
        text += &format!("{ks}\t{rest}\n");
        std::fs::hard_link(j, b.join(format!("{ks}_b.json"))).unwrap();
        if i % 10 == 0 {
            c1 += &format!("{ks}\n");
        }
        let stage = rest.split('\t').next().unwrap();
        record.push(serde_json::json!({"key": ks, "stage": stage, "status": "built"}));
        keys.push(k);
    }
    std::fs::write(dir.join("shader_map.tsv"), &text).unwrap();
    std::fs::write(dir.join("c1_full.tsv"), &c1).unwrap();
    let rec = serde_json::json!({"chain": d.chain, "built": KEYS, "shaders": record});
    std::fs::write(
        b.join("_b_build.json"),
        serde_json::to_string_pretty(&rec).unwrap(),
    )
    .unwrap();
    let opts = |eager| OpenOptions {
        shader_map: Some(dir.join("shader_map.tsv")),
        library_dir: dir.clone(),
        chain: Some(d.chain.clone()),
        eager,
        ..Default::default()
    };
    let mut opens = Vec::new();
    for _ in 0..7 {
        let t0 = Instant::now();
        let t = Title::open(&opts(false)).unwrap();
        opens.push(t0.elapsed());
        assert_eq!(t.keys().len(), KEYS);
        assert_eq!(t.c1(), Ok(()));
    }
    let t = Title::open(&opts(false)).unwrap();
    // Lookups in a scattered order, as draws come.
    let mut order = keys.clone();
    order.sort_by_key(|&k| splitmix(k));
    let t0 = Instant::now();
    for &k in &order {
        t.lookup(k, DEPTH_GL).unwrap();
    }
    let first = t0.elapsed();
    let rounds = 20;
    let t0 = Instant::now();
    let mut n = 0u64;
    for r in 0..rounds {
        let depth = if r % 2 == 0 {
            DEPTH_GL
        } else {
            DEPTH_ZERO_TO_ONE
        };
        for &k in &order {
            let f = t.lookup(std::hint::black_box(k), depth).unwrap();
            n += u64::from(std::hint::black_box(f.shader.shader().binding_count));
        }
    }
    let steady = t0.elapsed();
    let t0 = Instant::now();
    let e = Title::open(&opts(true)).unwrap();
    let eager = t0.elapsed();
    for &k in &order {
        e.lookup(k, DEPTH_GL).unwrap();
    }
    // Seed 002's seed list: 1,726 shaders, 2,030 render pipelines, 37 compute pipelines.
    let stage_keys = |st: &str| -> Vec<String> {
        (0..KEYS)
            .filter(|i| built[i % built.len()].1.split('\t').next() == Some(st))
            .map(|i| dmsh_runtime::key::to_string(keys[i]))
            .collect()
    };
    let (vs, fs, cs) = (
        stage_keys("vertex"),
        stage_keys("fragment"),
        stage_keys("compute"),
    );
    let mut seed = format!("{}\n", dmsh_runtime::warm::HEADER);
    for i in 0..1726 {
        seed += &format!("S\t{}\n", dmsh_runtime::key::to_string(keys[i * 13 % KEYS]));
    }
    for i in 0..2030 {
        seed += &format!(
            "R\t{}\t{}\tgl\t{:032x}\n",
            vs[i % vs.len()],
            fs[i * 7 % fs.len()],
            i
        );
    }
    for c in cs.iter().take(37) {
        seed += &format!("C\t{c}\n");
    }
    std::fs::write(dir.join("pso_manifest.tsv"), &seed).unwrap();
    let device = dir.join("pso_user.tsv");
    let mut warm_opens = Vec::new();
    let mut rows = 0;
    for _ in 0..3 {
        let t0 = Instant::now();
        let w = Title::open(&OpenOptions {
            warm_device: Some(device.clone()),
            ..opts(false)
        })
        .unwrap();
        warm_opens.push(t0.elapsed());
        rows = w.warm_rows().len();
    }
    let w = Title::open(&OpenOptions {
        warm_device: Some(device.clone()),
        ..opts(false)
    })
    .unwrap();
    std::fs::write(&device, &seed).unwrap();
    let appends = 50;
    let t0 = Instant::now();
    for i in 0..appends {
        let r = dmsh_runtime::warm::Row {
            kind: dmsh_runtime::warm::Kind::Render,
            key: keys[0],
            fragment: None,
            depth: DEPTH_GL,
            state: (i as u64).to_be_bytes().into(),
        };
        assert_eq!(w.warm_append(&r), Ok(true));
    }
    let append = t0.elapsed();
    println!(
        "open with a {}-row seed list ({} KiB; 1,726 S, 2,030 R, {} C, as seed 002's): {:.0} ms \
         (median of 3, its shaders loaded); crash-safe append to a {} KiB device list: {:.1} ms \
         each (fsync twice)",
        rows,
        seed.len() / 1024,
        cs.len().min(37),
        median(warm_opens).as_secs_f64() * 1e3,
        seed.len() / 1024,
        append.as_secs_f64() * 1e3 / appends as f64
    );
    let lookups = (rounds * KEYS) as f64;
    println!(
        "{KEYS} keys ({} demo shaders repeated): open {:.2} ms (median of 7, lazy), eager open \
         {:.0} ms ({} threads); first lookup (read + parse + convert) {:.1} µs a key; lookup \
         {:.0} ns a key ({} lookups, {n} bindings walked)",
        built.len(),
        median(opens).as_secs_f64() * 1e3,
        eager.as_secs_f64() * 1e3,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        first.as_secs_f64() * 1e6 / KEYS as f64,
        steady.as_secs_f64() * 1e9 / lookups,
        lookups
    );
    let _ = std::fs::remove_dir_all(&dir);
}
