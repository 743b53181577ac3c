//! Bad input: truncated, cyclic / too deep, size-lying archives and random bytes give warnings
//! naming the file and offset; the scan goes on; nothing panics, hangs or allocates past the
//! limits.

mod support;

use dmsh_scan::walk::{FileScan, Scan};
use dmsh_scan::{Limits, WarnKind};
use rand::{Rng, SeedableRng};
use support::writers as w;

fn scan(b: &[u8], limits: &Limits) -> Scan {
    FileScan::new(limits, true, 0, "romfs0".into()).scan(b, "f.bin", 0)
}

fn kinds(s: &Scan) -> Vec<WarnKind> {
    s.warnings.iter().map(|w| w.kind).collect()
}

fn demo_files() -> Vec<(String, Vec<u8>)> {
    let tmp = tempfile::tempdir().unwrap();
    let d = support::demo::build(tmp.path());
    d.files
        .iter()
        .map(|f| (f.clone(), std::fs::read(tmp.path().join(f)).unwrap()))
        .collect()
}

#[test]
fn random_bytes_find_nothing() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let l = Limits::default();
    for n in [0usize, 1, 3, 16, 100, 4096, 1 << 20] {
        let b: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
        let s = scan(&b, &l);
        assert!(s.shaders.is_empty());
        let m = FileScan::new(&l, true, 0, "main0".into()).scan_main(&b, "main");
        assert!(m.shaders.is_empty());
    }
}

#[test]
fn every_truncation_of_every_demo_file_is_survived() {
    let l = Limits::default();
    for (name, b) in demo_files() {
        let step = (b.len() / 200).max(1);
        let mut warned = 0;
        for cut in (0..b.len()).step_by(step) {
            let s = if name.ends_with("main") {
                FileScan::new(&l, true, 0, "main0".into()).scan_main(&b[..cut], &name)
            } else {
                FileScan::new(&l, true, 0, "romfs0".into()).scan(&b[..cut], &name, 0)
            };
            warned += usize::from(!s.warnings.is_empty());
            for wn in &s.warnings {
                assert!(wn.path.starts_with(&name), "{wn}");
            }
        }
        println!("{name}: {} cuts, {warned} warned", b.len().div_ceil(step));
    }
}

#[test]
fn random_mutations_of_demo_files_are_survived() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(2);
    let l = Limits {
        layer_cap: 64 << 20,
        ..Limits::default()
    };
    let files = demo_files();
    for i in 0..1500 {
        let (name, b) = &files[i % files.len()];
        let mut m = b.clone();
        for _ in 0..rng.gen_range(1..8) {
            let at = rng.gen_range(0..m.len());
            m[at] = rng.gen();
        }
        if name.ends_with("main") {
            FileScan::new(&l, true, 0, "main0".into()).scan_main(&m, name);
        } else {
            scan(&m, &l);
        }
    }
}

#[test]
fn yaz0_that_lies_about_its_size() {
    let l = Limits {
        layer_cap: 1 << 20,
        ..Limits::default()
    };
    let mut z = w::yaz0(&[1u8; 1000]);
    z[4..8].copy_from_slice(&0xFFFF_FFF0u32.to_be_bytes());
    let s = scan(&z, &l);
    assert_eq!(kinds(&s), [WarnKind::SizeCap]);
    assert_eq!(s.warnings[0].path, "f.bin");
    // Announces more than the stream holds.
    let data: Vec<u8> = (0..1000u32).map(|i| (i * i % 251) as u8).collect();
    let mut z = w::yaz0(&data);
    z[4..8].copy_from_slice(&5000u32.to_be_bytes());
    assert_eq!(kinds(&scan(&z, &Limits::default())), [WarnKind::Truncated]);
    // Announces more than any stream of this length can hold.
    let mut z = w::yaz0(&[1u8; 1000]);
    z[4..8].copy_from_slice(&50000u32.to_be_bytes());
    assert_eq!(kinds(&scan(&z, &Limits::default())), [WarnKind::BadHeader]);
}

#[test]
fn zstd_bomb_hits_the_layer_cap() {
    let bomb = w::zstd(&vec![0u8; 64 << 20]);
    let l = Limits {
        layer_cap: 4 << 20,
        ..Limits::default()
    };
    assert_eq!(kinds(&scan(&bomb, &l)), [WarnKind::SizeCap]);
    let mut dict = bomb.clone();
    dict[4] |= 1; // claim a dictionary
    let s = scan(&dict, &l);
    assert!(!s.warnings.is_empty());
}

#[test]
fn file_budget_bounds_many_layers() {
    // Ten copies of a 2 MiB member, zstd-compressed each: the file budget stops decompression.
    let member = w::zstd(&vec![0u8; 2 << 20]);
    let files: Vec<(String, Vec<u8>)> = (0..10)
        .map(|i| (format!("m{i}.zs"), member.clone()))
        .collect();
    let refs: Vec<(&str, Vec<u8>)> = files.iter().map(|(n, d)| (n.as_str(), d.clone())).collect();
    let arc = w::sarc(&refs);
    let l = Limits {
        layer_cap: 4 << 20,
        file_budget: 9 << 20,
        max_depth: 12,
    };
    let s = scan(&arc, &l);
    assert!(kinds(&s).contains(&WarnKind::SizeCap), "{:?}", s.warnings);
}

#[test]
fn nesting_deeper_than_the_limit() {
    let mut b = b"leaf".to_vec();
    for i in 0..30 {
        b = if i % 2 == 0 {
            w::sarc(&[("x", b)])
        } else {
            w::zstd(&b)
        };
    }
    let l = Limits {
        max_depth: 12,
        ..Limits::default()
    };
    let s = scan(&b, &l);
    assert_eq!(kinds(&s), [WarnKind::DepthCap]);
    assert!(s.warnings[0].path.contains("|zstd//x"), "{}", s.warnings[0]);
}

#[test]
fn sarc_members_overlapping_and_lying() {
    let mut arc = w::sarc(&[("a", vec![1; 100]), ("b", vec![2; 100])]);
    // Point member b at member a's bytes (overlap) — allowed, read twice, no loop.
    let (a_start, a_end) = (arc[0x28..0x2C].to_vec(), arc[0x2C..0x30].to_vec());
    arc[0x38..0x3C].copy_from_slice(&a_start);
    arc[0x3C..0x40].copy_from_slice(&a_end);
    assert!(scan(&arc, &Limits::default()).warnings.is_empty());
    // End before start.
    let mut bad = arc.clone();
    bad[0x3C..0x40].copy_from_slice(&0u32.to_le_bytes());
    bad[0x38..0x3C].copy_from_slice(&50u32.to_le_bytes());
    let s = scan(&bad, &Limits::default());
    assert_eq!(kinds(&s), [WarnKind::BadHeader]);
    assert_eq!(s.warnings[0].offset, 0x38);
    // Node count larger than the file.
    let mut big = arc.clone();
    big[0x1A..0x1C].copy_from_slice(&0xFFFFu16.to_le_bytes());
    assert_eq!(
        kinds(&scan(&big, &Limits::default())),
        [WarnKind::BadHeader]
    );
}

#[test]
fn bnsh_with_lying_counts_and_pointers() {
    let s = support::load_dksh()
        .into_iter()
        .find(|s| s.name == "vs_basic_mvp.vert")
        .unwrap();
    let b = w::build(&s, w::Wrap::default());
    let good = w::bnsh(&[vec![&b]]);
    assert_eq!(scan(&good, &Limits::default()).shaders.len(), 1);
    let mut huge = good.clone();
    huge[0x7C..0x80].copy_from_slice(&u32::MAX.to_le_bytes());
    let r = scan(&huge, &Limits::default());
    assert!(
        r.shaders.is_empty() && kinds(&r) == [WarnKind::Truncated],
        "{:?}",
        r.warnings
    );
    let mut ptr = good.clone();
    ptr[0x80..0x88].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(!scan(&ptr, &Limits::default()).warnings.is_empty());
    let mut size = good.clone();
    size[0x1C..0x20].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(
        kinds(&scan(&size, &Limits::default())),
        [WarnKind::Truncated]
    );
}

#[test]
fn nso_that_lies_about_segment_sizes() {
    let f = w::nso(&[1u8; 5000], &[2u8; 100], &[3u8; 10], true);
    let l = Limits {
        layer_cap: 1 << 20,
        ..Limits::default()
    };
    let mut big = f.clone();
    big[0x18..0x1C].copy_from_slice(&0xF000_0000u32.to_le_bytes());
    let s = FileScan::new(&l, false, 0, "main0".into()).scan_main(&big, "main");
    assert_eq!(kinds(&s), [WarnKind::SizeCap]);
    let mut wrong = f.clone();
    wrong[0x18..0x1C].copy_from_slice(&4000u32.to_le_bytes());
    let s = FileScan::new(&l, false, 0, "main0".into()).scan_main(&wrong, "main");
    assert_eq!(kinds(&s), [WarnKind::DecodeFailed]);
}

#[test]
fn hostile_repetition_stays_linear() {
    // 1 MiB of GLSLC magics whose sizes claim the rest of the buffer, with no control section:
    // each candidate must not rescan the buffer.
    let mut main = Vec::new();
    while main.len() < (1 << 20) {
        main.extend_from_slice(&0x1986_6891u32.to_le_bytes());
        main.extend_from_slice(&[0u8; 0x40]);
        main.extend_from_slice(&0x000F_FFFFu32.to_le_bytes());
    }
    let s = FileScan::new(&Limits::default(), true, 0, "main0".into()).scan_main(&main, "main");
    assert!(s.shaders.is_empty());
    // A BNSH whose 16,000 variations all point at one program: read once, found 16,000 times.
    let sh = support::load_dksh()
        .into_iter()
        .find(|s| s.name == "cs_matmul_tiled.comp")
        .unwrap();
    let b = w::build(&sh, w::Wrap::default());
    let mut f = w::bnsh(&[vec![&b]]);
    let n = 16_000usize;
    let table = f.len();
    for _ in 0..n {
        let mut e = [0u8; 0x40];
        e[0x10..0x18].copy_from_slice(&0x100u64.to_le_bytes()); // the first variation's program
        f.extend_from_slice(&e);
    }
    f[0x7C..0x80].copy_from_slice(&(n as u32).to_le_bytes());
    f[0x80..0x88].copy_from_slice(&(table as u64).to_le_bytes());
    let size = f.len() as u32;
    f[0x1C..0x20].copy_from_slice(&size.to_le_bytes());
    let s = scan(&f, &Limits::default());
    assert_eq!(s.shaders.len(), n, "{:?}", s.warnings.first());
    assert!(s.shaders.iter().all(|x| x.piece.key == b.key()));
}

#[test]
fn a_bnsh_magic_constant_in_code_is_not_a_file() {
    let mut main = vec![0x11u8; 4096];
    main[0x100..0x108].copy_from_slice(b"BNSH\0\0\0\0");
    let s = FileScan::new(&Limits::default(), true, 0, "main0".into()).scan_main(&main, "main");
    assert!(
        s.warnings.is_empty() && s.shaders.is_empty(),
        "{:?}",
        s.warnings
    );
    // With grsc in place but a lying size, it is reported.
    main[0x160..0x164].copy_from_slice(b"grsc");
    let s = FileScan::new(&Limits::default(), true, 0, "main0".into()).scan_main(&main, "main");
    assert_eq!(kinds(&s), [WarnKind::Truncated]);
    assert_eq!(s.warnings[0].offset, 0x11C);
}
