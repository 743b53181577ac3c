//! The demo title end to end: the committed games/demo equals what the generator writes, and
//! the split finds every shader put in exactly once (key, stage, copies) and nothing else.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use dmsh_scan::{split, Inputs, Limits, Outputs, Profile, Quiet};

fn read_tsv(p: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').map(String::from).collect())
        .collect()
}

fn run_split(title: &Path, out: &Path) -> dmsh_scan::Summary {
    let profile = Profile::load(&support::repo_root().join("games/demo")).unwrap();
    let inputs = Inputs {
        romfs: vec![title.join("romfs")],
        mains: vec![title.join("exefs/main")],
    };
    let o = Outputs {
        pkg_dir: out.join("pkg"),
        map: out.join("shader_map.tsv"),
        facts: out.join("shader_facts.tsv"),
        pairs: Some(out.join("shader_pairs.tsv")),
    };
    split(&inputs, &o, &profile, &Limits::default(), &Quiet).unwrap()
}

#[test]
fn committed_demo_is_reproducible() {
    let tmp = tempfile::tempdir().unwrap();
    let demo = support::demo::build(tmp.path());
    let committed = support::repo_root().join("games/demo");
    for f in &demo.files {
        let want = std::fs::read(tmp.path().join(f)).unwrap();
        let have = std::fs::read(committed.join(f)).unwrap_or_default();
        assert!(want == have, "games/demo/{f} differs from the generator's output: run `cargo run -p dmsh-scan --example make_demo`");
    }
}

#[test]
fn split_finds_every_demo_shader_exactly_once() {
    let tmp = tempfile::tempdir().unwrap();
    let title = tmp.path().join("title");
    let demo = support::demo::build(&title);
    let out = tmp.path().join("out");
    let summary = run_split(&title, &out);

    // What was put in: key (computed here with sha2) → (stage, count, control, code).
    let mut want: BTreeMap<String, (&str, u64, &support::Built)> = BTreeMap::new();
    for (_, b) in &demo.shaders {
        let e = want.entry(b.key()).or_insert((b.stage, 0, b));
        e.1 += 1;
    }
    let map = read_tsv(&out.join("shader_map.tsv"));
    assert_eq!(map[0][..2], ["key".to_string(), "stage".to_string()]);
    let mut got = BTreeMap::new();
    for row in &map[1..] {
        println!("{}", row.join(" "));
        assert!(
            got.insert(
                row[0].clone(),
                (row[1].clone(), row[8].parse::<u64>().unwrap())
            )
            .is_none(),
            "key {} twice",
            row[0]
        );
    }
    let missing: Vec<_> = want
        .iter()
        .filter(|(k, _)| !got.contains_key(*k))
        .map(|(k, v)| (k, &v.2.name))
        .collect();
    let extra: Vec<_> = got.keys().filter(|k| !want.contains_key(*k)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:?}, extra {extra:?}"
    );
    for (k, (stage, n, b)) in &want {
        assert_eq!(got[k], (stage.to_string(), *n), "{k} ({})", b.name);
        assert_eq!(
            std::fs::read(out.join("pkg").join(format!("{k}.control"))).unwrap(),
            b.control,
            "{k}.control"
        );
        assert_eq!(
            std::fs::read(out.join("pkg").join(format!("{k}.code"))).unwrap(),
            b.code,
            "{k}.code"
        );
    }
    // Pairs: exactly those the containers define.
    let pairs: BTreeSet<(String, String)> = read_tsv(&out.join("shader_pairs.tsv"))[1..]
        .iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect();
    let want_pairs: BTreeSet<(String, String)> = demo.pairs.iter().cloned().collect();
    assert_eq!(pairs, want_pairs);
    // Only the two damaged files warn.
    let bad: BTreeSet<&str> = summary.warnings.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(
        bad,
        BTreeSet::from(["romfs0:Bad/lying.sarc", "romfs0:Bad/truncated.pack.zs"]),
        "{:?}",
        summary.warnings
    );
    // The other engines' files are read: the UnityFS bundle and its Shader object; the RDB
    // data file and its one G2S record (the other record's content is no shader container),
    // the gz table of the patch SPKG; the G2S and the SPKG are the two KTGL containers; the
    // KPKA PAK and its two SDF entries (the third entry is no SDF); the Unreal pak, its shader
    // archive and the archive's two LSLG records.
    for (kind, n) in [
        ("unityfs", 1),
        ("unity", 1),
        ("rdb", 2),
        ("ktgl_gz", 1),
        ("ktgl", 2),
        ("kpka", 1),
        ("sdf", 2),
        ("uepak", 1),
        ("ushaderbytecode", 1),
        ("lslg", 2),
    ] {
        assert_eq!(
            summary.opened.get(kind),
            Some(&n),
            "{kind}: {:?}",
            summary.opened
        );
    }
    println!("{summary}");
}

#[test]
fn two_runs_give_identical_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let title = tmp.path().join("title");
    support::demo::build(&title);
    run_split(&title, &tmp.path().join("a"));
    run_split(&title, &tmp.path().join("b"));
    for t in ["shader_map.tsv", "shader_facts.tsv", "shader_pairs.tsv"] {
        assert_eq!(
            std::fs::read(tmp.path().join("a").join(t)).unwrap(),
            std::fs::read(tmp.path().join("b").join(t)).unwrap(),
            "{t}"
        );
    }
}
