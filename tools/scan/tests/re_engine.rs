//! RE Engine (Monster Hunter Rise): KPKA PAKs of SDF shader definitions holding the real
//! corpus shaders, stored, raw deflate (flate2) and zstd (zstd crate; one-shot and streamed).
//! Every shader put in is found exactly once with its key and stage, an entry's vertex and
//! pixel stages pair, a path a patch PAK holds is read from the patch only, and hostile sizes
//! give warnings naming the file and offset.

mod support;

use std::collections::BTreeMap;

use dmsh_scan::walk::{FileScan, Scan};
use dmsh_scan::{ContainerKind, Inputs, Limits, Profile, Quiet, WarnKind};
use rand::{Rng, SeedableRng};
use support::re_engine::{self as re, PakEntry, Store};
use support::writers::{self as w, Wrap};
use support::Built;

/// Definitions made from every corpus shader: vertex + pixel programs, five-stage programs
/// (vertex, hull, domain, geometry, pixel), lone pixel / geometry stages, headerless compute
/// and one definition without stages. `salt` varies every control section (a new set of keys).
fn definitions(salt: u32) -> Vec<Vec<Built>> {
    let all = support::load_dksh();
    let of = |stage: &str, k: u32| -> Vec<Built> {
        all.iter()
            .filter(|s| s.stage == stage)
            .map(|s| {
                w::build(
                    s,
                    Wrap {
                        // SDF compute code has no header; a variable group size (0) needs one.
                        bare_compute: s.threads[0] != 0,
                        salt: salt * 4 + k,
                        ..Wrap::default()
                    },
                )
            })
            .collect()
    };
    let (vs, fs, cs, gs) = (
        of("vertex", 0),
        of("fragment", 0),
        of("compute", 0),
        of("geometry", 0),
    );
    let (hs, ds) = (of("tess_control", 0), of("tess_eval", 0));
    let (vs2, fs2) = (of("vertex", 1), of("fragment", 1));
    let mut defs: Vec<Vec<Built>> = Vec::new();
    for (i, v) in vs.iter().enumerate() {
        defs.push(vec![v.clone(), fs[i].clone()]);
    }
    for f in &fs[vs.len()..] {
        defs.push(vec![f.clone()]);
    }
    for i in 0..hs.len() {
        defs.push(vec![
            vs2[i].clone(),
            hs[i].clone(),
            ds[i].clone(),
            gs[i].clone(),
            fs2[i].clone(),
        ]);
    }
    for g in &gs[hs.len()..] {
        defs.push(vec![g.clone()]);
    }
    for c in cs {
        defs.push(vec![c]);
    }
    defs.push(vec![]);
    defs
}

/// The SDF files of `defs`, `per` definitions each.
fn sdf_files(defs: &[Vec<Built>], per: usize) -> Vec<Vec<u8>> {
    defs.chunks(per)
        .map(|c| re::sdf(&c.iter().map(|d| d.iter().collect()).collect::<Vec<_>>()))
        .collect()
}

/// (key, stage) → how many times it was put in.
fn expected(defs: &[Vec<Built>]) -> BTreeMap<(String, String), usize> {
    let mut m = BTreeMap::new();
    for b in defs.iter().flatten() {
        *m.entry((b.key(), b.stage.to_string())).or_default() += 1;
    }
    m
}

fn found(s: &Scan) -> BTreeMap<(String, String), usize> {
    let mut m = BTreeMap::new();
    for sh in &s.shaders {
        assert_eq!(sh.kind, ContainerKind::Sdf);
        *m.entry((sh.piece.key.clone(), sh.piece.stage.as_str().to_string()))
            .or_default() += 1;
    }
    m
}

fn pairs_of(defs: &[Vec<Built>]) -> Vec<(String, String)> {
    defs.iter()
        .filter_map(|d| {
            let v = d.iter().find(|b| b.stage == "vertex")?;
            let f = d.iter().find(|b| b.stage == "fragment")?;
            Some((v.key(), f.key()))
        })
        .collect()
}

fn scan(b: &[u8], name: &str, limits: &Limits) -> Scan {
    FileScan::new(limits, false, 0, "romfs0".into()).scan(b, name, 0)
}

/// A PAK of `files`, entries stored in turn as stored, deflate (levels 1, 6, 9), zstd
/// one-shot and streamed; non-SDF entries between them.
fn mixed_pak(files: &[Vec<u8>], first_hash: u64) -> Vec<u8> {
    let stores = [
        Store::Stored,
        Store::Deflate(1),
        Store::Deflate(6),
        Store::Zstd,
        Store::ZstdStream,
        Store::Deflate(9),
    ];
    let mut entries = Vec::new();
    for (i, f) in files.iter().enumerate() {
        entries.push(PakEntry {
            hash: first_hash + i as u64,
            data: f.clone(),
            store: stores[i % stores.len()],
        });
        // Another resource (here: a BNSH): not an SDF, so never inflated or scanned.
        let vs = w::build(&support::load_dksh()[0], Wrap::default());
        entries.push(PakEntry {
            hash: 0xAAAA_0000_0000_0000 + i as u64,
            data: w::bnsh(&[vec![&vs]]),
            store: stores[(i + 1) % stores.len()],
        });
    }
    entries.push(PakEntry {
        hash: 0xEEEE,
        data: re::sdf_empty(),
        store: Store::Deflate(6),
    });
    re::pak(&entries)
}

#[test]
fn every_shader_of_every_definition_once_with_pairs() {
    let defs = definitions(0);
    let want = expected(&defs);
    assert_eq!(want.len(), 46, "distinct shaders");
    // Straight from the SDFs.
    let mut s = Scan::default();
    for f in sdf_files(&defs, 9) {
        s = s.merge(scan(&f, "natives/x.sdf", &Limits::default()));
    }
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert_eq!(found(&s), want);
    assert_eq!(s.pairs, pairs_of(&defs));
    // Through a PAK.
    let pak = mixed_pak(&sdf_files(&defs, 9), 0x1000);
    let s = scan(&pak, "re_chunk_000.pak", &Limits::default());
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert_eq!(found(&s), want);
    let mut got = s.pairs.clone();
    got.sort();
    let mut pairs = pairs_of(&defs);
    pairs.sort();
    assert_eq!(got, pairs);
    assert_eq!(s.opened.get("kpka"), Some(&1));
    // Every non-empty SDF entry plus the empty one was opened; the BNSH entries were not.
    assert_eq!(
        s.opened.get("sdf"),
        Some(&(sdf_files(&defs, 9).len() as u64 + 1))
    );
    assert_eq!(s.opened.get("bnsh"), None);
    for sh in &s.shaders {
        assert!(
            sh.path.starts_with("re_chunk_000.pak//hash_00000000000010"),
            "{}",
            sh.path
        );
        assert!(sh.index.starts_with("def"));
    }
    let bare = s
        .shaders
        .iter()
        .filter(|s| s.piece.layout == dmsh_scan::code::Layout::ComputeBare)
        .count();
    assert!(bare >= 8, "{bare} headerless compute shaders");
    let stages: Vec<_> = s.shaders.iter().map(|s| s.piece.stage.as_str()).collect();
    for st in re::SDF_STAGES {
        assert!(stages.contains(&st), "no {st}");
    }
}

#[test]
fn shared_stages_and_v2_paks() {
    let defs = definitions(1);
    // Two definitions point at one vertex stage: found once per definition, paired each time.
    let (v, f1, f2) = (&defs[0][0], &defs[0][1], &defs[1][1]);
    let sdf = re::sdf(&[vec![v, f1], vec![v, f2]]);
    let pak = re::pak_v2(&[(7, sdf), (8, b"TEX\0 something else".to_vec())]);
    let s = scan(&pak, "old.pak", &Limits::default());
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert_eq!(s.shaders.len(), 4);
    assert_eq!(s.pairs, vec![(v.key(), f1.key()), (v.key(), f2.key())]);
    assert!(s
        .shaders
        .iter()
        .all(|s| &*s.path == "old.pak//hash_0000000000000007"));
}

#[test]
fn a_patch_pak_supersedes_the_base_copy_of_a_path() {
    let t = tempfile::tempdir().unwrap();
    let (old, new, other, newest) = (
        definitions(2),
        definitions(3),
        definitions(4),
        definitions(5),
    );
    let one = |d: &[Vec<Built>]| {
        re::sdf(
            &d[..3]
                .iter()
                .map(|d| d.iter().collect())
                .collect::<Vec<_>>(),
        )
    };
    let entry = |hash, data, store| PakEntry { hash, data, store };
    let base = t.path().join("base");
    let upd = t.path().join("update");
    std::fs::create_dir_all(&base).unwrap();
    std::fs::create_dir_all(&upd).unwrap();
    // Base: paths A (old), B (other), C (old copy); patch 1: A (new); update's patch 2: C.
    std::fs::write(
        base.join("re_chunk_000.pak"),
        re::pak(&[
            entry(0xA, one(&old), Store::Deflate(6)),
            entry(0xB, one(&other), Store::Zstd),
            entry(0xC, one(&old[3..]), Store::Stored),
        ]),
    )
    .unwrap();
    std::fs::write(
        base.join("re_chunk_000.pak.patch_001.pak"),
        re::pak(&[entry(0xA, one(&new), Store::Zstd)]),
    )
    .unwrap();
    std::fs::write(
        upd.join("re_chunk_000.pak.patch_002.pak"),
        re::pak(&[entry(0xC, one(&newest), Store::Deflate(9))]),
    )
    .unwrap();
    let inputs = Inputs {
        romfs: vec![base, upd],
        mains: vec![],
    };
    let s =
        dmsh_scan::split::scan(&inputs, &Profile::default(), &Limits::default(), &Quiet).unwrap();
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let mut want = expected(&new[..3]);
    for (k, n) in expected(&other[..3])
        .into_iter()
        .chain(expected(&newest[..3]))
    {
        *want.entry(k).or_default() += n;
    }
    assert_eq!(found(&s), want);
    let path_of = |key: &str| {
        s.shaders
            .iter()
            .find(|x| x.piece.key == key)
            .map(|x| format!("{}:{}", x.source_name, x.path))
    };
    assert_eq!(
        path_of(&new[0][0].key()).unwrap(),
        "romfs0:re_chunk_000.pak.patch_001.pak//hash_000000000000000a"
    );
    assert_eq!(
        path_of(&newest[0][0].key()).unwrap(),
        "romfs1:re_chunk_000.pak.patch_002.pak//hash_000000000000000c"
    );
    assert_eq!(
        path_of(&other[0][0].key()).unwrap(),
        "romfs0:re_chunk_000.pak//hash_000000000000000b"
    );
    assert!(path_of(&old[0][0].key()).is_none());
    assert!(path_of(&old[3][0].key()).is_none());
}

/// The PAK fields of entry `i`: +8 offset, +0x10 stored size, +0x18 size, +0x20 attributes.
fn set(pak: &mut [u8], i: usize, field: usize, v: u64) {
    let at = 16 + i * 48 + field;
    pak[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn warned(s: &Scan, kind: WarnKind, path: &str, offset: u64) -> bool {
    s.warnings
        .iter()
        .any(|w| w.kind == kind && w.path == path && w.offset == offset)
}

#[test]
fn sizes_that_lie_and_bombs_are_warnings_naming_file_and_offset() {
    let defs = definitions(6);
    let sdf = re::sdf(
        &defs[..2]
            .iter()
            .map(|d| d.iter().collect())
            .collect::<Vec<_>>(),
    );
    let n = sdf.len() as u64;
    let l = Limits::default();
    for store in [Store::Deflate(6), Store::Zstd, Store::ZstdStream] {
        let e = |h| PakEntry {
            hash: h,
            data: sdf.clone(),
            store,
        };
        let good = re::pak(&[e(1), e(2)]);
        let data_at = |pak: &[u8], i: usize| {
            u64::from_le_bytes(pak[16 + i * 48 + 8..][..8].try_into().unwrap())
        };
        // Entry 0 states one byte less than it decodes to, entry 1 more: both warned, at the
        // stream; nothing of them is read.
        let mut p = good.clone();
        set(&mut p, 0, 0x18, n - 1);
        set(&mut p, 1, 0x18, n + 100);
        let s = scan(&p, "f.pak", &l);
        assert!(s.shaders.is_empty(), "{store:?}");
        assert_eq!(s.warnings.len(), 2, "{store:?} {:?}", s.warnings);
        for (i, w) in s.warnings.iter().enumerate() {
            assert_eq!(w.path, "f.pak");
            assert!(w.offset >= data_at(&p, i), "{w}");
            assert!(w.detail.contains(&format!("hash_{:016x}", i + 1)), "{w}");
        }
        // Data past the end: a warning at the entry's offset field; the other entry is read.
        let mut p = good.clone();
        set(&mut p, 0, 8, 1 << 40);
        let s = scan(&p, "f.pak", &l);
        assert!(
            warned(&s, WarnKind::Truncated, "f.pak", 16 + 8),
            "{:?}",
            s.warnings
        );
        assert_eq!(s.shaders.len(), 4, "two pairs of the other entry");
        // Decoded sizes over the file's budget (the two entries together) or over the layer
        // cap (each) are refused after the 4-byte peek, at the entry's size field.
        for (layer_cap, file_budget, read) in [
            (n + n / 2, 4 << 30, 8),
            (4 << 30, n + n / 2, 4),
            (n - 1, 4 << 30, 0),
        ] {
            let small = Limits {
                layer_cap,
                file_budget,
                ..Limits::default()
            };
            let s = scan(&good, "f.pak", &small);
            assert_eq!(
                s.shaders.len(),
                read,
                "{store:?} {layer_cap:#x} {file_budget:#x}"
            );
            // Over the budget, which of the two is refused depends on thread timing.
            let refused = [16 + 0x18, 16 + 48 + 0x18]
                .into_iter()
                .filter(|&at| warned(&s, WarnKind::SizeCap, "f.pak", at))
                .count();
            assert_eq!(refused, (8 - read) / 4, "{:?}", s.warnings);
        }
    }
    // A real bomb: 256 MiB of zeros after the SDF, deflated to a few hundred KiB.
    let mut big = sdf.clone();
    big.resize(256 << 20, 0);
    let p = re::pak(&[PakEntry {
        hash: 3,
        data: big,
        store: Store::Deflate(9),
    }]);
    assert!(p.len() < 2 << 20);
    let s = scan(
        &p,
        "bomb.pak",
        &Limits {
            layer_cap: 64 << 20,
            ..Limits::default()
        },
    );
    assert!(
        warned(&s, WarnKind::SizeCap, "bomb.pak", 16 + 0x18),
        "{:?}",
        s.warnings
    );
    // An encrypted table.
    let mut p = re::pak(&[]);
    p[6] = 8;
    let s = scan(&p, "enc.pak", &l);
    assert!(
        warned(&s, WarnKind::BadHeader, "enc.pak", 6),
        "{:?}",
        s.warnings
    );
}

#[test]
fn bad_definitions_keep_the_other_stages() {
    let defs = definitions(7);
    let refs: Vec<Vec<&Built>> = defs[..3].iter().map(|d| d.iter().collect()).collect();
    let good = re::sdf(&refs);
    let path = "re_chunk_000.pak//hash_0000000000000001";
    let in_pak = |sdf: Vec<u8>| {
        let p = re::pak(&[PakEntry {
            hash: 1,
            data: sdf,
            store: Store::Deflate(6),
        }]);
        scan(&p, "re_chunk_000.pak", &Limits::default())
    };
    let field = |d: usize, slot: usize| 0x10 + d * 0x108 + 0x10 + slot * 8;
    let off_of = |b: &[u8], d: usize, slot: usize| {
        u64::from_le_bytes(b[field(d, slot)..][..8].try_into().unwrap()) as usize
    };
    // Definition 0's vertex offset points past the end: warned at the field.
    let mut b = good.clone();
    b[field(0, 0)..field(0, 0) + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    let s = in_pak(b);
    assert!(
        warned(&s, WarnKind::Truncated, path, field(0, 0) as u64),
        "{:?}",
        s.warnings
    );
    assert_eq!(s.shaders.len(), 5);
    // Definition 1's pixel stage states a control length past the end.
    let mut b = good.clone();
    let at = off_of(&b, 1, 4);
    b[at..at + 4].copy_from_slice(&0x7FFF_FFF0u32.to_le_bytes());
    let s = in_pak(b);
    assert!(
        warned(&s, WarnKind::Truncated, path, at as u64 + 8),
        "{:?}",
        s.warnings
    );
    assert_eq!(s.shaders.len(), 5);
    // Definition 2's vertex stage states a code length shorter than its control's: bad shader.
    let mut b = good.clone();
    let at = off_of(&b, 2, 0);
    b[at + 4..at + 8].copy_from_slice(&0x10u32.to_le_bytes());
    let s = in_pak(b);
    assert!(
        warned(&s, WarnKind::BadShader, path, at as u64 + 8),
        "{:?}",
        s.warnings
    );
    assert_eq!(s.shaders.len(), 5);
    // More entries than fit, and an unknown version.
    let mut b = good.clone();
    b[6..8].copy_from_slice(&500u16.to_le_bytes());
    let s = in_pak(b);
    assert!(warned(&s, WarnKind::Truncated, path, 6), "{:?}", s.warnings);
    let mut b = good;
    b[4] = 9;
    let s = in_pak(b);
    assert!(warned(&s, WarnKind::BadHeader, path, 4), "{:?}", s.warnings);
}

#[test]
fn truncations_and_mutations_are_survived() {
    let defs = definitions(8);
    let pak = mixed_pak(&sdf_files(&defs[..12], 4), 1);
    let l = Limits {
        layer_cap: 16 << 20,
        ..Limits::default()
    };
    let step = (pak.len() / 300).max(1);
    for cut in (0..pak.len()).step_by(step) {
        let s = scan(&pak[..cut], "t.pak", &l);
        for wn in &s.warnings {
            assert!(wn.path.starts_with("t.pak"), "{wn}");
        }
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(15);
    let n: usize = std::env::var("DMSH_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(600);
    for i in 0..n {
        let mut m = pak.clone();
        // Half of them in the table and the first (stored) SDF, half anywhere.
        let span = if i % 2 == 0 {
            m.len().min(0x4000)
        } else {
            m.len()
        };
        for _ in 0..rng.gen_range(1..6) {
            let at = rng.gen_range(0..span);
            m[at] = rng.gen();
        }
        scan(&m, "m.pak", &l);
    }
}

#[test]
fn a_pak_written_by_python_zlib() {
    // corpus.sdf: a few definitions of real corpus shaders (this file's writer); py_zlib.pak:
    // that SDF deflated by Python's zlib into a PAK laid out by make_pak.py.
    let fx = support::repo_root().join("tools/scan/tests/fixtures/re_engine");
    let all = definitions(9);
    let defs: Vec<Vec<Built>> = [0, 1, 10, 19, 20, 21, 22, 32]
        .iter()
        .map(|&i| all[i].clone())
        .collect();
    let sdf = re::sdf(&defs.iter().map(|d| d.iter().collect()).collect::<Vec<_>>());
    if std::env::var_os("DMSH_WRITE_FIXTURES").is_some() {
        std::fs::write(fx.join("corpus.sdf"), &sdf).unwrap();
    }
    assert_eq!(
        std::fs::read(fx.join("corpus.sdf")).unwrap(),
        sdf,
        "corpus.sdf is stale: DMSH_WRITE_FIXTURES=1, then make_pak.py"
    );
    let s = scan(
        &std::fs::read(fx.join("py_zlib.pak")).unwrap(),
        "py_zlib.pak",
        &Limits::default(),
    );
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let mut want = expected(&defs);
    for n in want.values_mut() {
        *n *= 3;
    }
    assert_eq!(found(&s), want);
    assert_eq!(s.opened.get("sdf"), Some(&4));
    assert_eq!(s.pairs.len(), 3 * pairs_of(&defs).len());
    let paths: std::collections::BTreeSet<&str> = s.shaders.iter().map(|x| &*x.path).collect();
    assert_eq!(
        paths.into_iter().collect::<Vec<_>>(),
        [0x11, 0x22, 0x33].map(|h| format!("py_zlib.pak//hash_{h:016x}"))
    );
}
