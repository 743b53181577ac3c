//! Unity: UnityFS bundles (LZ4 / LZMA blocks) and serialized files with Shader objects (class
//! 48) of Unity 2020.3 and 2022.3, written by UnityPy (tests/fixtures/unity/make_unity_fixtures.py)
//! around real corpus shaders; the common string table from a main; the second pass.

mod support;

use support::unity::SHADERS;
use support::writers::{self as w, Wrap};
use support::Built;

fn built(name: &str) -> Built {
    let s = support::load_dksh()
        .into_iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("{name} not in the corpus"));
    w::build(&s, Wrap::default())
}

/// Writes `<name>.control` / `<name>.code` of every shader the fixtures hold into
/// `$DMSH_UNITY_EXPORT` (default /tmp/unity_shaders), for make_unity_fixtures.py.
#[test]
#[ignore]
fn export_corpus_shaders() {
    let dir = std::env::var("DMSH_UNITY_EXPORT").unwrap_or_else(|_| "/tmp/unity_shaders".into());
    std::fs::create_dir_all(&dir).unwrap();
    for (_, progs) in SHADERS {
        for name in progs.iter().flat_map(|p| p.iter()) {
            let b = built(name);
            std::fs::write(format!("{dir}/{name}.control"), &b.control).unwrap();
            std::fs::write(format!("{dir}/{name}.code"), &b.code).unwrap();
        }
    }
}

use std::path::PathBuf;
use std::sync::Arc;

use dmsh_scan::containers::unity::{strings, Shared};
use dmsh_scan::profile::Profile;
use dmsh_scan::walk::FileScan;
use dmsh_scan::{Inputs, Limits, Scan, WarnKind};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(fixture_path(name)).unwrap()
}

fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/unity")
        .join(name)
}

/// (key, stage) of shaders, and (vertex key, fragment key) pairs.
type Finds = (Vec<(String, String)>, Vec<(String, String)>);

/// (key, stage) of every shader, and the (vertex, fragment) pairs, the fixture `tag` holds.
fn expected(tag: &str) -> Finds {
    let progs = SHADERS.iter().find(|(t, _)| *t == tag).unwrap().1;
    let mut shaders = Vec::new();
    let mut pairs = Vec::new();
    for p in progs {
        let b: Vec<Built> = p.iter().map(|n| built(n)).collect();
        shaders.extend(b.iter().map(|b| (b.key(), b.stage.to_string())));
        let v = b.iter().find(|b| b.stage == "vertex").unwrap();
        let f = b.iter().find(|b| b.stage == "fragment").unwrap();
        pairs.push((v.key(), f.key()));
    }
    (shaders, pairs)
}

fn found(s: &Scan) -> Finds {
    let mut a: Vec<_> = s
        .shaders
        .iter()
        .map(|x| (x.piece.key.clone(), x.piece.stage.to_string()))
        .collect();
    let mut p = s.pairs.clone();
    a.sort();
    p.sort();
    (a, p)
}

fn sorted(mut e: Finds) -> Finds {
    e.0.sort();
    e.1.sort();
    e
}

fn shared_with_main() -> Shared {
    let u = Shared::default();
    u.common
        .set(strings::require(&fixture("main_common_strings.bin")).unwrap())
        .unwrap();
    u
}

fn scan_with(u: Option<&Shared>, name: &str, limits: &Limits) -> Scan {
    let b = fixture(name);
    let fs = FileScan::new(limits, false, 0, Arc::from("romfs0"));
    match u {
        Some(u) => fs.with_unity(u).scan(&b, name, 0),
        None => fs.scan(&b, name, 0),
    }
}

#[test]
fn bundles_hold_every_shader_once_with_its_key_stage_and_pair() {
    for (tag, packer) in [
        ("shader_2020_3", "lz4"),
        ("shader_2020_3", "lzma"),
        ("shader_2022_3", "lz4"),
        ("shader_2022_3", "lzma"),
    ] {
        let u = shared_with_main();
        let name = format!("{tag}_{packer}.unityfs");
        let s = scan_with(Some(&u), &name, &Limits::default());
        assert!(s.warnings.is_empty(), "{name}: {:?}", s.warnings);
        assert_eq!(found(&s), sorted(expected(tag)), "{name}");
        assert_eq!(s.opened.get("unityfs"), Some(&1), "{name}");
        assert_eq!(s.opened.get("unity"), Some(&1), "{name}: one Shader object");
        // The pieces hold their bytes, and the key covers them as the support writers say.
        for sh in &s.shaders {
            assert_eq!(sh.path.as_ref(), format!("{name}//CAB-{tag}"));
            assert!(sh.index.starts_with("1.b"), "{}", sh.index);
            let b = SHADERS
                .iter()
                .flat_map(|(_, p)| p.iter().flat_map(|p| p.iter()))
                .map(|n| built(n))
                .find(|b| b.key() == sh.piece.key)
                .unwrap();
            assert_eq!((&sh.piece.control, &sh.piece.code), (&b.control, &b.code));
        }
        // 2022.3: blob 1 is the PGlobals parameter blob, skipped; programs at blobs 0 and 2.
        if tag == "shader_2022_3" {
            let mut blobs: Vec<_> = s
                .shaders
                .iter()
                .map(|x| x.index.split('.').nth(1).unwrap().to_string())
                .collect();
            blobs.sort();
            blobs.dedup();
            assert_eq!(blobs, ["b0", "b2"]);
        }
    }
}

#[test]
fn trees_naming_common_strings_need_main() {
    let s = scan_with(None, "shader_2020_3_lz4.unityfs", &Limits::default());
    assert!(s.shaders.is_empty());
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    let w = &s.warnings[0];
    assert_eq!(w.path, "shader_2020_3_lz4.unityfs//CAB-shader_2020_3");
    assert!(w.detail.contains("common string table"), "{w}");
    // The offset names the first node name with the high bit set.
    assert!(w.offset > 0x20, "{w}");
    // A table from a main that lacks it is refused by name.
    assert!(strings::require(b"no table here").is_err());
    let t = strings::require(&fixture("main_common_strings.bin")).unwrap();
    assert!(t.bytes.starts_with(b"AABB\0AnimationClip\0"));
    assert!(t.bytes.ends_with(b"\0"));
}

fn romfs_with(files: &[&str]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for f in files {
        std::fs::copy(fixture_path(f), d.path().join(f)).unwrap();
    }
    d
}

fn split_scan(files: &[&str], main: bool) -> Scan {
    let d = romfs_with(files);
    let inputs = Inputs {
        romfs: vec![d.path().to_path_buf()],
        mains: if main {
            vec![fixture_path("main_common_strings.bin")]
        } else {
            vec![]
        },
    };
    dmsh_scan::split::scan(
        &inputs,
        &Profile::default(),
        &Limits::default(),
        &dmsh_scan::Quiet,
    )
    .unwrap()
}

#[test]
fn the_second_pass_borrows_the_tree_of_the_same_type_hash() {
    let s = split_scan(
        &[
            "shader_2020_3_lzma.unityfs",
            "player_2020_3_lz4.unityfs",
            "shader_2022_3_lz4.unityfs",
            "player_2022_3.assets",
        ],
        true,
    );
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let mut want = (Vec::new(), Vec::new());
    for tag in [
        "shader_2020_3",
        "player_2020_3",
        "shader_2022_3",
        "player_2022_3",
    ] {
        let (a, p) = expected(tag);
        want.0.extend(a);
        want.1.extend(p);
    }
    assert_eq!(found(&s), sorted(want));
    assert_eq!(
        s.opened.get("unity"),
        Some(&6),
        "2 bundle Shaders + 4 player Shaders"
    );
    let player: Vec<_> = s
        .shaders
        .iter()
        .filter(|x| x.path.starts_with("player_2022_3.assets"))
        .collect();
    assert_eq!(player.len(), 4);
    assert!(player
        .iter()
        .all(|x| x.source_name.as_ref() == "romfs0" && !x.piece.code.is_empty()));
}

#[test]
fn without_a_tree_of_its_hash_a_player_file_warns() {
    // The 2020.3 player's hash has no bundle here; the 2022.3 one has.
    let s = split_scan(
        &[
            "player_2020_3.assets",
            "shader_2022_3_lzma.unityfs",
            "player_2022_3_lzma.unityfs",
        ],
        true,
    );
    let (a, _) = found(&s);
    let mut want = expected("shader_2022_3").0;
    want.extend(expected("player_2022_3").0);
    want.sort();
    assert_eq!(a, want);
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    let w = &s.warnings[0];
    assert_eq!(w.path, "romfs0:player_2020_3.assets");
    assert!(w.detail.contains("Shader type hash 101112"), "{w}");
    // Without main, the typed bundles wait too, and then warn in the second pass.
    let s = split_scan(
        &["shader_2022_3_lz4.unityfs", "player_2022_3.assets"],
        false,
    );
    assert!(s.shaders.is_empty());
    assert_eq!(s.warnings.len(), 2, "{:?}", s.warnings);
    assert!(s
        .warnings
        .iter()
        .any(|w| w.detail.contains("common string table")));
}

#[test]
fn bombs_and_lies_are_bounded_by_the_cap() {
    // The layer cap bounds the bundle's blocks (LZ4 and LZMA) and the Shader's blob segments.
    for name in ["shader_2020_3_lz4.unityfs", "shader_2022_3_lzma.unityfs"] {
        let u = shared_with_main();
        let tiny = Limits {
            layer_cap: 0x1000,
            ..Limits::default()
        };
        let s = scan_with(Some(&u), name, &tiny);
        assert!(s.shaders.is_empty());
        assert!(
            s.warnings.iter().all(|w| w.kind == WarnKind::SizeCap),
            "{:?}",
            s.warnings
        );
        assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    }
    // A hand-made bundle whose one stored block claims 4 GiB: refused before any allocation.
    let mut b = b"UnityFS\0".to_vec();
    b.extend_from_slice(&8u32.to_be_bytes());
    b.extend_from_slice(b"5.x.x\x002020.3.12f1\0");
    let info = {
        let mut i = vec![0u8; 16];
        i.extend_from_slice(&1i32.to_be_bytes());
        i.extend_from_slice(&u32::MAX.to_be_bytes());
        i.extend_from_slice(&16u32.to_be_bytes());
        i.extend_from_slice(&2u16.to_be_bytes());
        i.extend_from_slice(&0i32.to_be_bytes());
        i
    };
    b.extend_from_slice(&0u64.to_be_bytes());
    b.extend_from_slice(&(info.len() as u32).to_be_bytes());
    b.extend_from_slice(&(info.len() as u32).to_be_bytes());
    b.extend_from_slice(&0x40u32.to_be_bytes());
    while !b.len().is_multiple_of(16) {
        b.push(0);
    }
    b.extend_from_slice(&info);
    b.extend_from_slice(&[0u8; 16]);
    let s = FileScan::new(&Limits::default(), false, 0, Arc::from("romfs0")).scan(
        &b,
        "bomb.unityfs",
        0,
    );
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    assert_eq!(s.warnings[0].kind, WarnKind::SizeCap);
}

#[test]
fn every_truncation_and_mutation_is_survived() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(15);
    for name in [
        "shader_2020_3_lz4.unityfs",
        "shader_2022_3_lzma.unityfs",
        "player_2022_3.assets",
        "player_2020_3_lz4.unityfs",
        "hostile_2020_3_lz4.unityfs",
    ] {
        let b = fixture(name);
        let u = shared_with_main();
        let limits = Limits::default();
        let fs = FileScan::new(&limits, false, 0, Arc::from("romfs0")).with_unity(&u);
        for cut in (0..b.len()).step_by(97) {
            let s = fs.scan(&b[..cut], name, 0);
            assert!(s.shaders.len() <= 7, "{name} cut at {cut}");
        }
        for _ in 0..300 {
            let mut m = b.clone();
            for _ in 0..rng.gen_range(1..8) {
                let i = rng.gen_range(0..m.len());
                m[i] = rng.gen();
            }
            let s = fs.scan(&m, name, 0);
            for w in &s.warnings {
                assert!(w.path.starts_with(name), "{w}");
            }
        }
        u.second_pass(1 << 20);
    }
}

#[test]
fn one_bad_blob_stage_or_segment_never_stops_the_rest() {
    let u = shared_with_main();
    let name = "hostile_2020_3_lz4.unityfs";
    let s = scan_with(Some(&u), name, &Limits::default());
    let key = |n: &str| built(n).key();
    // Shader 1's segment is a bomb; shader 2's program 0 keeps only its vertex stage; program 1
    // and shader 3 (two segments) are whole.
    let mut want: Vec<(String, String)> = [
        "vs_ssbo_drawparams.vert",
        "vs_image_fp64.vert",
        "fs_lod_grad.frag",
        "vs_basic_mvp.vert",
        "fs_pointcoord_layer.frag",
        "vs_skinning.vert",
        "fs_sample_shading.frag",
    ]
    .iter()
    .map(|n| (key(n), built(n).stage.to_string()))
    .collect();
    want.sort();
    let mut pairs = vec![
        (key("vs_image_fp64.vert"), key("fs_lod_grad.frag")),
        (key("vs_basic_mvp.vert"), key("fs_pointcoord_layer.frag")),
        (key("vs_skinning.vert"), key("fs_sample_shading.frag")),
    ];
    pairs.sort();
    assert_eq!(found(&s), (want, pairs));
    let path = "hostile_2020_3_lz4.unityfs//CAB-hostile";
    let mut kinds: Vec<_> = s
        .warnings
        .iter()
        .map(|w| (w.kind, w.path.as_str()))
        .collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            (WarnKind::BadHeader, path),
            (WarnKind::SizeCap, path),
            (WarnKind::BadShader, path)
        ],
        "{:?}",
        s.warnings
    );
    for w in &s.warnings {
        assert!(w.detail.starts_with("object "), "{w}");
        assert!(w.offset > 0, "{w}: the Shader object's offset in the file");
    }
    let bomb = s
        .warnings
        .iter()
        .find(|w| w.kind == WarnKind::SizeCap)
        .unwrap();
    assert!(bomb.detail.contains("0x7ffffff0"), "{bomb}");
    let outside = s
        .warnings
        .iter()
        .find(|w| w.kind == WarnKind::BadHeader)
        .unwrap();
    assert!(
        outside.detail.contains("geometry block 0x100000"),
        "{outside}"
    );
}
