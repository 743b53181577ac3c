//! Unreal Engine (Octopath Traveler 0): pak → `*.ushaderbytecode` v2 → Oodle → LSLG records
//! holding real corpus shaders, written by `support::ue` from the public layouts (no
//! independent writer exists; no open Mermaid encoder either: the Oodle streams are stored
//! blocks and a memset quantum).

mod support;

use std::path::Path;

use dmsh_scan::containers::{lslg, ushaderbytecode, Found, Input};
use dmsh_scan::walk::{FileScan, Scan};
use dmsh_scan::{split, Inputs, Limits, Profile, Quiet, WarnKind};
use rand::{Rng, SeedableRng};
use support::ue::*;
use support::writers::{self as w, Wrap};
use support::Built;
use support::{split_outputs, tsv_rows};

const GLOBAL: &str =
    "ShaderArchive-Global-SF_GLSL_SWITCH_MOBILE-SP_GLSL_SWITCH_MOBILE.ushaderbytecode";
const CHUNK0: &str = "ShaderArchive-Octopath_Traveler0_Chunk0-SF_GLSL_SWITCH_MOBILE-SP_GLSL_SWITCH_MOBILE.ushaderbytecode";

// ---- fixtures ----

/// Real corpus shaders as Built: 3 vertex, 3 fragment, 2 compute (one without a header).
fn shaders() -> Vec<Built> {
    let all = support::load_dksh();
    let mut out = Vec::new();
    for (stage, n) in [("vertex", 3), ("fragment", 3), ("compute", 1)] {
        out.extend(
            all.iter()
                .filter(|s| s.stage == stage)
                .take(n)
                .map(|s| w::build(s, Wrap::default())),
        );
    }
    let cs = all
        .iter()
        .find(|s| s.stage == "compute" && s.threads != [0; 3])
        .unwrap();
    out.push(w::build(
        cs,
        Wrap {
            bare_compute: true,
            salt: 7,
            ..Wrap::default()
        },
    ));
    out
}

fn record(b: &Built, i: usize) -> Vec<u8> {
    lslg_record(
        b,
        &format!("/Engine/Private/Shader{i}.usf:Main"),
        [24, 29][i % 2],
    )
}

/// The Global archive holds the first five shaders (the fourth stored as is), Chunk0 the rest
/// and the first vertex shader again (as UE shares nothing between archives, a copy).
fn archives(s: &[Built]) -> (Vec<u8>, Vec<u8>) {
    let mut g = Vec::new();
    for (i, b) in s[..5].iter().enumerate() {
        let r = record(b, i);
        if i == 3 {
            g.push(Entry {
                raw: r.len() as u32,
                data: r,
                freq: freq(b.stage),
            });
        } else {
            g.push(oodle_entry(&r, b.stage));
        }
    }
    let mut c: Vec<Entry> = s[5..]
        .iter()
        .enumerate()
        .map(|(i, b)| oodle_entry(&record(b, i + 5), b.stage))
        .collect();
    c.push(oodle_entry(&record(&s[0], 0), "vertex"));
    (
        archive(&g, &[vec![0, 1, 3], vec![2, 4]]),
        archive(&c, &[vec![0, 1, 2, 3]]),
    )
}

fn octopath() -> Profile {
    Profile::load(&support::repo_root().join("games/unknown-octopath-traveler-0")).unwrap()
}

fn scan(b: &[u8], name: &str, limits: &Limits) -> Scan {
    FileScan::new(limits, false, 0, "romfs0".into()).scan(b, name, 0)
}

fn found(s: &Scan) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = s
        .shaders
        .iter()
        .map(|x| (x.piece.key.clone(), x.piece.stage.to_string()))
        .collect();
    v.sort();
    v
}

fn want(s: &[&Built]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = s.iter().map(|b| (b.key(), b.stage.to_string())).collect();
    v.sort();
    v
}

fn pak_of(s: &[Built]) -> Vec<u8> {
    let (g, c) = archives(s);
    pak_v11(&[
        (&format!("Octopath/Content/{GLOBAL}"), g, Store::Plain),
        (&format!("Octopath/Content/{CHUNK0}"), c, Store::Unencoded),
        (
            "Octopath/Content/Movies/Opening.mp4",
            vec![7; 300],
            Store::Plain,
        ),
    ])
}

/// Writes `bytes` as fuzz seed `name` when `DMSH_UE_FUZZ_SEEDS` names a folder
/// (`tools/scan/fuzz`: `cargo fuzz run uepak $DMSH_UE_FUZZ_SEEDS`).
fn seed(name: &str, bytes: &[u8]) {
    if let Some(d) = std::env::var_os("DMSH_UE_FUZZ_SEEDS") {
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(Path::new(&d).join(name), bytes).unwrap();
    }
}

// ---- tests ----

#[test]
fn octopath_pak_every_shader_once_with_key_stage_and_cover_pairs() {
    let s = shaders();
    let t = tempfile::tempdir().unwrap();
    let romfs = t.path().join("romfs");
    std::fs::create_dir_all(romfs.join("Octopath/Content/Paks")).unwrap();
    std::fs::write(
        romfs.join("Octopath/Content/Paks/pakchunk0-Switch.pak"),
        pak_of(&s),
    )
    .unwrap();
    let inputs = Inputs {
        romfs: vec![romfs],
        mains: vec![],
    };
    let profile = octopath();
    assert!(profile.shader_separable && profile.unknown_keys().is_empty());
    let sum = split(
        &inputs,
        &split_outputs(t.path()),
        &profile,
        &Limits::default(),
        &Quiet,
    )
    .unwrap();
    let map = tsv_rows(&t.path().join("map.tsv"));
    let got: Vec<(String, String)> = {
        let mut v: Vec<_> = map.iter().map(|r| (r[0].clone(), r[1].clone())).collect();
        v.sort();
        v
    };
    assert_eq!(got, want(&s.iter().collect::<Vec<_>>()));
    assert_eq!(sum.unique, 8);
    for r in &map {
        assert_eq!(r[3], "lslg", "{r:?}");
        let copies = if r[0] == s[0].key() { "2" } else { "1" };
        assert_eq!(r[8], copies, "{r:?}");
        assert!(
            r[5].starts_with(
                "Octopath/Content/Paks/pakchunk0-Switch.pak//Octopath/Content/ShaderArchive-"
            ),
            "{r:?}"
        );
        assert!(r[7].starts_with("/Engine/Private/Shader"), "{r:?}");
    }
    let first = map.iter().find(|r| r[0] == s[0].key()).unwrap();
    assert!(
        first[5].ends_with(&format!("{GLOBAL}//shader0")),
        "{first:?}"
    );
    // No pairs in the files: the cover rule pairs every vertex shader.
    let pairs = tsv_rows(&t.path().join("pairs.tsv"));
    let vs: Vec<String> = s
        .iter()
        .filter(|b| b.stage == "vertex")
        .map(|b| b.key())
        .collect();
    let fs: Vec<String> = s
        .iter()
        .filter(|b| b.stage == "fragment")
        .map(|b| b.key())
        .collect();
    assert!(!pairs.is_empty());
    assert_eq!(sum.cover_pairs as usize, pairs.len());
    for v in &vs {
        assert!(pairs.iter().any(|p| &p[0] == v), "{v} unpaired");
    }
    assert!(pairs
        .iter()
        .all(|p| vs.contains(&p[0]) && fs.contains(&p[1])));
    // Without the switch: the same shaders, no pairs.
    let off = Profile {
        shader_separable: false,
        ..profile
    };
    let sum = split(
        &inputs,
        &split_outputs(t.path()),
        &off,
        &Limits::default(),
        &Quiet,
    )
    .unwrap();
    assert_eq!((sum.unique, sum.pairs), (8, 0));
}

#[test]
fn lslg_offsets_are_unaligned_and_both_tails_read() {
    let s = shaders();
    for (i, b) in s.iter().enumerate() {
        let r = record(b, i);
        let code_at = 6 + 4 + fstring(&format!("/Engine/Private/Shader{i}.usf:Main")).len() + 4;
        assert_ne!(
            code_at % 4,
            0,
            "the fixture must put the code at an unaligned offset"
        );
        let h = lslg::read(&r).unwrap();
        assert!(h.errors.is_empty(), "{:?}", h.errors);
        assert_eq!(h.shaders.len(), 1);
        let p = &h.shaders[0].piece;
        assert_eq!(
            (p.key.clone(), p.stage.to_string()),
            (b.key(), b.stage.to_string())
        );
        assert_eq!(p.code_at.start, code_at);
        assert_eq!(
            h.shaders[0].index,
            format!("/Engine/Private/Shader{i}.usf:Main")
        );
    }
    // Another tail length is a warning; the shader is still found.
    let r = lslg_record(&s[1], "x.usf:MainVS", 30);
    let h = lslg::read(&r).unwrap();
    assert_eq!(h.shaders.len(), 1);
    assert_eq!(h.errors.len(), 1);
    assert!(h.errors[0].detail.contains("30 bytes"), "{:?}", h.errors);
    // A tag that lies about the stage: the SPH check refuses the shader.
    let mut r = record(&s[0], 0);
    r[4..6].copy_from_slice(b"SP");
    let h = lslg::read(&r).unwrap();
    assert!(h.shaders.is_empty() && !h.errors.is_empty());
    // An unknown tag is an error at offset 4.
    r[4..6].copy_from_slice(b"ZZ");
    assert_eq!(lslg::read(&r).unwrap_err().offset, 4);
}

#[test]
fn legacy_v7_pak_and_stored_archive() {
    let s = shaders();
    let (g, _) = archives(&s);
    seed("global.ushaderbytecode", &g);
    let pak = pak_v7(&[
        ("Octopath/Content/Global.ushaderbytecode", g),
        ("Octopath/a.txt", b"hi".to_vec()),
    ]);
    seed("legacy_v7.pak", &pak);
    let sc = scan(&pak, "p.pak", &Limits::default());
    assert!(sc.warnings.is_empty(), "{:?}", sc.warnings);
    assert_eq!(found(&sc), want(&s[..5].iter().collect::<Vec<_>>()));
    assert_eq!(sc.opened.get("uepak"), Some(&1));
    assert_eq!(sc.opened.get("ushaderbytecode"), Some(&1));
    assert_eq!(sc.opened.get("lslg"), Some(&5));
}

#[test]
fn oodle_pak_members_encrypted_and_unknown_methods() {
    let s = shaders();
    let (g, c) = archives(&s);
    // Chunk0 compressed by the pak in 0x400-byte Oodle blocks; one encrypted; one Zlib.
    let pak = pak_v11(&[
        (
            "Game/Content/Chunk0.ushaderbytecode",
            c.clone(),
            Store::Oodle(0x400),
        ),
        (
            "Game/Content/Secret.ushaderbytecode",
            g.clone(),
            Store::Encrypted,
        ),
        ("Game/Content/Z.ushaderbytecode", g.clone(), Store::Zlib),
        ("Game/Content/One.ushaderbytecode", g, Store::Oodle(1 << 20)),
    ]);
    seed("oodle_v11.pak", &pak);
    seed("chunk0.ushaderbytecode", &c);
    let sc = scan(&pak, "p.pak", &Limits::default());
    let mut w = want(&s[5..].iter().chain([&s[0]]).collect::<Vec<_>>());
    w.extend(want(&s[..5].iter().collect::<Vec<_>>()));
    w.sort();
    assert_eq!(found(&sc), w);
    let mut msgs: Vec<String> = sc.warnings.iter().map(|w| w.to_string()).collect();
    msgs.sort();
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert!(
        msgs[0].starts_with("p.pak: offset ")
            && msgs[0].contains("Secret.ushaderbytecode: AES-encrypted"),
        "{msgs:?}"
    );
    assert!(
        msgs[1].contains("Z.ushaderbytecode: compression method Zlib is not read"),
        "{msgs:?}"
    );
}

#[test]
fn a_path_listed_twice_keeps_its_later_entry() {
    // The older archive under the same path is superseded: its shaders are not reported.
    let s = shaders();
    let old = archive(&[oodle_entry(&record(&s[0], 0), "vertex")], &[]);
    let new = archive(&[oodle_entry(&record(&s[3], 3), "fragment")], &[]);
    let pak = pak_v11(&[
        ("Game/Content/X.ushaderbytecode", old, Store::Plain),
        ("Game/Content/X.ushaderbytecode", new, Store::Plain),
    ]);
    let sc = scan(&pak, "p.pak", &Limits::default());
    assert!(sc.warnings.is_empty(), "{:?}", sc.warnings);
    assert_eq!(found(&sc), want(&[&s[3]]));
}

#[test]
fn oodle_block_kinds_the_tests_cover() {
    // Stored blocks of four decoder types (with and without the restart bit) and a Mermaid
    // memset quantum, each as one archive entry; the buffers come back as decoded.
    let payload: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
    let mut entries = Vec::new();
    for (h0, ty) in [(0xCCu8, 0x0Au8), (0x4C, 0x0A), (0x4C, 0x06), (0xCC, 0x0C)] {
        let mut d = vec![h0, ty];
        d.extend_from_slice(&payload);
        entries.push(Entry {
            data: d,
            raw: 1000,
            freq: 5,
        });
    }
    entries.push(Entry {
        data: oodle_memset(0xAB),
        raw: 0x40000,
        freq: 5,
    });
    // Two stored blocks: the decoder reads a block header again after 0x40000 bytes.
    let big: Vec<u8> = (0..0x40000 + 77u32).map(|i| (i % 253) as u8).collect();
    entries.push(Entry {
        data: oodle_stored(&big, 0x0A),
        raw: big.len() as u32,
        freq: 5,
    });
    let a = archive(&entries, &[]);
    let i = Input {
        bytes: &a,
        name: "x.ushaderbytecode",
        cap: 1 << 24,
        glslc_in_main: false,
        ..Input::default()
    };
    let Ok(Found::Inner { inner, problems }) = (ushaderbytecode::READER.read)(&i) else {
        panic!()
    };
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(inner.len(), 6);
    for x in &inner[..4] {
        assert_eq!(&x.bytes[..], &payload[..]);
    }
    assert!(inner[4].bytes.len() == 0x40000 && inner[4].bytes.iter().all(|&b| b == 0xAB));
    assert_eq!(&inner[5].bytes[..], &big[..]);
    assert_eq!(inner[2].member.as_deref(), Some("shader2"));
}

#[test]
fn raw_sizes_that_lie_and_hostile_counts() {
    let s = shaders();
    let r0 = record(&s[0], 0);
    let r1 = record(&s[3], 1);
    let hdr_len = |a: &[u8]| ushaderbytecode::layout(a).unwrap().code;
    // Entry 0 says 100 bytes more than its stream holds; entry 1 says a raw size over the cap
    // (refused before allocating); entry 2 a size no 6-byte stream can decode to; entry 3 is
    // fine; entry 4 says fewer bytes than the record (the record is cut).
    let mut e0 = oodle_entry(&r0, "vertex");
    e0.raw += 100;
    let e1 = Entry {
        data: oodle_memset(1),
        raw: 0xFFFF_FF00,
        freq: 0,
    };
    let e2 = Entry {
        data: oodle_memset(1),
        raw: 0x0100_0000,
        freq: 0,
    };
    let e3 = oodle_entry(&r1, "fragment");
    let mut e4 = oodle_entry(&r0, "vertex");
    e4.raw -= 40;
    let mut e5 = oodle_entry(&r1, "fragment");
    e5.freq = 0;
    let a = archive(&[e0, e1, e2, e3, e4, e5], &[vec![0, 9]]);
    let code = hdr_len(&a);
    let sc = scan(&a, "x.ushaderbytecode", &Limits::default());
    assert_eq!(found(&sc), want(&[&s[3], &s[3]]));
    let kinds: Vec<(WarnKind, u64)> = sc.warnings.iter().map(|w| (w.kind, w.offset)).collect();
    let e_at = |n: usize| 4 + 4 + 20 + 4 + 6 * 20 + 4 + 16 + 4 + n * 17;
    assert!(
        kinds.contains(&(WarnKind::DecodeFailed, code as u64)),
        "{kinds:?}"
    );
    assert!(
        kinds.iter().filter(|k| k.0 == WarnKind::SizeCap).count() == 2,
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&(WarnKind::BadHeader, (e_at(5) + 16) as u64)),
        "{kinds:?}"
    );
    assert!(
        sc.warnings
            .iter()
            .any(|w| w.detail.contains("shader index 1 is past")),
        "{:?}",
        sc.warnings
    );
    assert!(
        sc.warnings
            .iter()
            .any(|w| w.path == "x.ushaderbytecode//shader4"),
        "{:?}",
        sc.warnings
    );
    assert!(sc
        .warnings
        .iter()
        .all(|w| w.path.starts_with("x.ushaderbytecode")));
    // A small layer cap: the archive's total decoded bytes stop at it.
    let l = Limits {
        layer_cap: r1.len() as u64 + 10,
        ..Limits::default()
    };
    let two = archive(
        &[oodle_entry(&r1, "fragment"), oodle_entry(&r1, "fragment")],
        &[],
    );
    let sc = scan(&two, "x.ushaderbytecode", &l);
    assert_eq!(sc.shaders.len(), 1);
    assert_eq!(
        sc.warnings
            .iter()
            .filter(|w| w.kind == WarnKind::SizeCap)
            .count(),
        1
    );
    // Counts that do not fit: a warning at the count, nothing allocated.
    let mut bad = archive(&[oodle_entry(&r1, "fragment")], &[]);
    // version, no map hashes, one shader hash, no maps: the shader entry count is at 36.
    bad[36..40].copy_from_slice(&0x7FFF_FFFFu32.to_le_bytes());
    let sc = scan(&bad, "x.ushaderbytecode", &Limits::default());
    assert!(sc.shaders.is_empty());
    assert_eq!(sc.warnings.len(), 1);
    assert_eq!(sc.warnings[0].kind, WarnKind::Truncated);
}

#[test]
fn hostile_paks_give_warnings() {
    let s = shaders();
    let (g, _) = archives(&s);
    let good = pak_v11(&[("A/B.ushaderbytecode", g, Store::Plain)]);
    let foot = good.len() - 221;
    // Index offset past the end.
    let mut p = good.clone();
    p[foot + 25..foot + 33].copy_from_slice(&u64::MAX.to_le_bytes());
    let sc = scan(&p, "p.pak", &Limits::default());
    assert!(sc.shaders.is_empty());
    assert_eq!(sc.warnings[0].kind, WarnKind::Truncated);
    // Encrypted index: needs the key.
    let mut p = good.clone();
    p[foot + 16] = 1;
    let sc = scan(&p, "p.pak", &Limits::default());
    assert!(
        sc.warnings[0].detail.contains("AES-encrypted"),
        "{:?}",
        sc.warnings
    );
    assert_eq!(sc.warnings[0].offset, foot as u64 + 16);
    // Unknown version.
    let mut p = good.clone();
    p[foot + 21..foot + 25].copy_from_slice(&12u32.to_le_bytes());
    assert!(scan(&p, "p.pak", &Limits::default()).warnings.is_empty());
    // An entry whose location is outside the index: a warning naming it; the others are read.
    let (g, _) = archives(&s);
    let p = pak_v11(&[
        ("A/Lost.ushaderbytecode", vec![1; 10], Store::Lost),
        ("A/B.ushaderbytecode", g, Store::Plain),
    ]);
    let sc = scan(&p, "p.pak", &Limits::default());
    assert_eq!(sc.warnings.len(), 1, "{:?}", sc.warnings);
    assert_eq!(
        found(&sc),
        want(&s[..5].iter().collect::<Vec<_>>()),
        "{:?} {:?}",
        sc.warnings,
        sc.opened
    );
    assert!(
        sc.warnings[0]
            .detail
            .starts_with("A/Lost.ushaderbytecode: "),
        "{:?}",
        sc.warnings
    );
    // Every truncation of the index and every single-byte change of the pak: no panic.
    let mut rng = rand::rngs::StdRng::seed_from_u64(15);
    for _ in 0..400 {
        let mut p = good.clone();
        let at = rng.gen_range(0..p.len());
        p[at] = rng.gen();
        let _ = scan(&p, "p.pak", &Limits::default());
    }
    for n in (0..good.len()).step_by(97) {
        let _ = scan(&good[..n], "p.pak", &Limits::default());
    }
}

#[test]
fn truncated_archives_and_records_are_survived() {
    let s = shaders();
    let (g, _) = archives(&s);
    for n in (0..g.len()).step_by(13) {
        let sc = scan(&g[..n], "x.ushaderbytecode", &Limits::default());
        assert!(sc.shaders.len() <= 5);
        if n >= 4 {
            // Named as an archive and starting with version 2: a short one is reported.
            assert!(!sc.warnings.is_empty() || sc.shaders.len() == 5, "{n}");
        }
    }
    let r = record(&s[6], 6);
    for n in 0..r.len() {
        let h = lslg::read(&r[..n]);
        assert!(h.is_err() || h.unwrap().shaders.len() <= 1);
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(16);
    for _ in 0..300 {
        let mut a = g.clone();
        for _ in 0..4 {
            let at = rng.gen_range(0..a.len());
            a[at] = rng.gen();
        }
        let _ = scan(&a, "x.ushaderbytecode", &Limits::default());
    }
}
