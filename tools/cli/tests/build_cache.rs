//! `dmsh build`'s per-shader cache and chain version on the demo title: a second build
//! converts nothing and writes the same bytes; an interrupted build resumes with exactly the
//! keys it lacks; a changed facts row converts exactly the keys it concerns (a partner's row
//! counts, seed 001's pair_keyed) and leaves V alone; a changed profile row or pairs table
//! moves V; `dmsh report --since` names the keys whose outputs changed and the input that
//! did; `dmsh chain` prints the build's V, writes the header and checks the lock.

mod common;
use common::{build_args, demo_game, dmsh, snapshot};

use std::path::{Path, PathBuf};

fn ok(o: std::process::Output) -> String {
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The summary's "N converted, M from the cache" and the b-<V> folder.
fn build(split: &Path, game: &Path, out: &Path) -> (usize, usize, PathBuf) {
    let text = ok(dmsh(&build_args(split, game, &["--out", s(out)])));
    let first = text.lines().next().unwrap();
    println!("{first}");
    let num = |before: &str| -> usize {
        let head = first.split(before).next().unwrap();
        head.rsplit(' ').next().unwrap().parse().unwrap()
    };
    let v = first.split("b-").nth(1).unwrap().split(':').next().unwrap();
    (
        num(" converted"),
        num(" from the cache"),
        out.join(format!("b-{v}")),
    )
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        if e.path().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Rewrites `path`'s line starting with `prefix` through `f`.
fn edit_line(path: &Path, prefix: &str, f: impl Fn(&str) -> String) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut hit = false;
    let out: String = text
        .lines()
        .map(|l| {
            if !hit && l.starts_with(prefix) {
                hit = true;
                f(l) + "\n"
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    assert!(hit, "{prefix} not in {}", path.display());
    std::fs::write(path, out).unwrap();
}

#[test]
fn the_cache_converts_exactly_what_changed() {
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-build-cache");
    let _ = std::fs::remove_dir_all(&tmp);
    let split = tmp.join("split");
    ok(dmsh(&["demo", "--out", s(&split)]));
    // A title folder of our own (the profile and manual facts), to change.
    let game = tmp.join("game");
    copy_dir(&demo_game(), &game);
    let out = tmp.join("out");
    let keys = std::fs::read_to_string(split.join("shader_map.tsv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect::<std::collections::BTreeSet<_>>()
        .len();

    let (conv, cached, dir) = build(&split, &game, &out);
    assert_eq!(
        (conv, cached),
        (keys, 0),
        "a fresh cache converts every key"
    );
    let first = snapshot(&dir);
    let mtime = |p: &Path| std::fs::metadata(p).unwrap().modified().unwrap();
    let some_json = dir.join(
        &first
            .iter()
            .find(|(n, _)| n.ends_with("_b.json"))
            .unwrap()
            .0,
    );
    let t0 = mtime(&some_json);
    let (conv, cached, dir2) = build(&split, &game, &out);
    assert_eq!(
        mtime(&some_json),
        t0,
        "an output already right is not rewritten"
    );
    assert_eq!(
        (conv, cached),
        (0, keys),
        "nothing changed, nothing converted"
    );
    assert_eq!(dir2, dir);
    assert!(
        snapshot(&dir) == first,
        "a cached build writes the same bytes"
    );
    let before = tmp.join("before");
    copy_dir(&dir, &before);

    // Interrupted: three entries never stored, outputs missing, a staging folder and a
    // temporary file left behind. The rerun converts exactly those three and cleans up.
    let entries: Vec<PathBuf> = {
        let mut v: Vec<PathBuf> = std::fs::read_dir(out.join("cache/entries"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        v.sort();
        v
    };
    for e in &entries[..3] {
        std::fs::remove_file(e).unwrap();
    }
    let metal: Vec<PathBuf> = first
        .iter()
        .filter(|(n, _)| n.ends_with("_b.metal"))
        .take(4)
        .map(|(n, _)| dir.join(n))
        .collect();
    for m in &metal {
        std::fs::remove_file(m).unwrap();
    }
    std::fs::create_dir_all(dir.join(".stage-0000000000000000")).unwrap();
    std::fs::write(dir.join("0000000000000000_b.tmp~"), "partial").unwrap();
    let (conv, _, _) = build(&split, &game, &out);
    assert_eq!(conv, 3, "the interrupted build resumes");
    assert!(
        snapshot(&dir) == first,
        "the resumed build is the whole build"
    );

    // A damaged blob: the keys whose outputs it holds are converted again, and it is whole.
    let rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("_b_build.json")).unwrap()).unwrap();
    let shaders = rec["shaders"].as_array().unwrap();
    let sha = shaders.iter().find(|k| k["status"] == "built").unwrap()["outputs"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()
        .as_str()
        .unwrap()
        .to_string();
    let users = shaders
        .iter()
        .filter(|k| {
            k["outputs"]
                .as_object()
                .unwrap()
                .values()
                .any(|v| v == sha.as_str())
        })
        .count();
    let blob = out.join("cache/blobs").join(&sha[..2]).join(&sha);
    std::fs::write(&blob, "damaged").unwrap();
    for f in std::fs::read_dir(&dir).unwrap().flatten() {
        std::fs::remove_file(f.path()).unwrap();
    }
    let (conv, _, _) = build(&split, &game, &out);
    assert!(
        (1..=users).contains(&conv),
        "{conv} converted, {users} keys use the blob"
    );
    assert!(snapshot(&dir) == first, "the damaged blob is repaired");

    // A facts row of a compute shader without partners: exactly that key, same V.
    let facts = split.join("shader_facts.tsv");
    let text = std::fs::read_to_string(&facts).unwrap();
    let pairs = std::fs::read_to_string(split.join("shader_pairs.tsv")).unwrap();
    let compute = text
        .lines()
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .find(|c| c.get(1) == Some(&"compute") && c[2] == "nvn1" && !pairs.contains(c[0]))
        .unwrap()[0]
        .to_string();
    edit_line(&facts, &compute, |l| {
        let mut c: Vec<String> = l.split('\t').map(String::from).collect();
        c[8] = format!("{}", c[8].parse::<u32>().unwrap() + 1);
        c.join("\t")
    });
    let (conv, _, dir3) = build(&split, &game, &out);
    assert_eq!(conv, 1, "one facts row, one key");
    assert_eq!(dir3, dir, "facts rows are not on the chain");

    // A manual facts row of a fragment shader with a vertex partner: that key and its
    // partner (whose cache key carries its partners' facts).
    let (vertex, fragment) = pairs
        .lines()
        .skip(1)
        .map(|l| l.split_once('\t').unwrap())
        .find(|(v, f)| {
            first.iter().any(|(n, _)| n == &format!("{f}_b.metal"))
                && first.iter().any(|(n, _)| n == &format!("{v}_b.metal"))
        })
        .unwrap();
    let partners = pairs.lines().filter(|l| l.contains(fragment)).count();
    let manual = game.join("shader_facts_manual.tsv");
    let mut m = std::fs::read_to_string(&manual).unwrap();
    m.push_str(&format!("{fragment} out 0 uint\n"));
    std::fs::write(&manual, m).unwrap();
    let (conv, _, _) = build(&split, &game, &out);
    assert_eq!(conv, 1 + partners, "the fragment shader and its partners");
    let report = ok(dmsh(&[
        "report",
        "--split",
        s(&split),
        "--build",
        s(&dir),
        "--since",
        s(&before),
        "--out",
        s(&tmp.join("report")),
    ]));
    println!("{report}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.join("report/report.json")).unwrap())
            .unwrap();
    let changed = r["since"]["changed"].as_array().unwrap();
    let frag = changed
        .iter()
        .find(|c| c["key"] == fragment)
        .unwrap_or_else(|| panic!("{fragment} not listed as changed: {changed:?}"));
    assert_eq!(frag["inputs"], serde_json::json!(["facts"]));
    let vert = changed.iter().find(|c| c["key"] == vertex);
    if let Some(v) = vert {
        assert_eq!(v["inputs"], serde_json::json!(["partners"]));
    }
    for c in changed {
        assert!(
            [compute.as_str(), fragment, vertex].contains(&c["key"].as_str().unwrap()),
            "{c}"
        );
    }

    // The pairs table is on the chain: a new V, and only the pair's two keys converted.
    let pair_line = pairs.lines().nth(1).unwrap().to_string();
    let fewer: String = pairs
        .lines()
        .filter(|l| *l != pair_line)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(split.join("shader_pairs.tsv"), fewer).unwrap();
    let (conv, _, dir4) = build(&split, &game, &out);
    assert_ne!(dir4, dir, "the pairs table moves V");
    assert_eq!(conv, 2, "the pair's vertex and fragment shaders");
    // Across chain versions outputs compare without V: still only the keys whose MSL or
    // reflection changed are listed, and the pair's keys show their partners changed.
    ok(dmsh(&[
        "report",
        "--split",
        s(&split),
        "--build",
        s(&dir4),
        "--since",
        s(&before),
        "--out",
        s(&tmp.join("report4")),
    ]));
    let r4: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.join("report4/report.json")).unwrap())
            .unwrap();
    assert_ne!(r4["since"]["from"], r4["since"]["to"]);
    let keys_of = |r: &serde_json::Value| -> Vec<String> {
        r["since"]["changed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["key"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(keys_of(&r4), keys_of(&r), "the same outputs differ");
    let partners_changed = r4["since"]["inputs_changed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "partners")
        .unwrap()["count"]
        .as_u64()
        .unwrap();
    assert!(partners_changed >= 2, "{}", r4["since"]);

    // `dmsh chain` prints the build's V, and writes the host's header.
    let v4 = dir4.file_name().unwrap().to_string_lossy()[2..].to_string();
    let chain = ok(dmsh(&[
        "chain",
        "--split",
        s(&split),
        "--game",
        s(&game),
        "--header",
    ]));
    assert_eq!(chain.lines().last().unwrap(), v4);
    let header = std::fs::read_to_string(game.join("dmsh_chain.h")).unwrap();
    assert!(
        header.contains(&format!("#define DMSH_CHAIN_VERSION \"{v4}\"")),
        "{header}"
    );

    // A profile row that affects translation moves V and converts every key.
    edit_line(&game.join("profile.toml"), "nvn_tex_slots", |_| {
        "nvn_tex_slots = 33".into()
    });
    let (conv, _, dir5) = build(&split, &game, &out);
    assert_ne!(dir5, dir4, "a profile row moves V");
    assert_eq!(conv, keys);
    // One that does not (a host-only setting) moves nothing.
    let mut p = std::fs::read_to_string(game.join("profile.toml")).unwrap();
    p.push_str("present_snap = true\n");
    std::fs::write(game.join("profile.toml"), p).unwrap();
    let (conv, _, dir6) = build(&split, &game, &out);
    assert_eq!((conv, &dir6), (0, &dir5));

    // The lock: registered from the local tools, checked against them.
    let lock = tmp.join("dmsh_chain.lock");
    ok(dmsh(&["chain", "--update-lock", "--lock", s(&lock)]));
    ok(dmsh(&["chain", "--check-tools", "--lock", s(&lock)]));
    std::fs::write(&lock, "spirv-cross\tsomething else\n").unwrap();
    let o = dmsh(&["chain", "--check-tools", "--lock", s(&lock)]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "a lock that differs fails the check"
    );
    let _ = std::fs::remove_dir_all(&tmp);
}
