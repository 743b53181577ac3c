//! Koei Tecmo KTGL titles end to end: Age of Calamity's RDB data files (zlib-chunked IDRK
//! records holding G2S / `_DOK0000` containers) and Three Houses' LINKDATA (DATA0 / DATA1,
//! KTGL "gz" tables, SPKG / `_SPK4100` packages, SARCs, map archives) plus loose `*.gz` /
//! `*.spkg` files. Containers are built here from docs/formats.md (KTGL) around GLSLC outputs of
//! real corpus shaders (`w::glslc`); zlib streams come from the independent `flate2` encoder,
//! SARCs from the `sarc` crate. Expected keys are sha256 over the built bytes (`Built::key`).

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use dmsh_scan::containers::ktgl::{gz, linkdata, rdb};
use dmsh_scan::walk::{FileScan, Scan};
use dmsh_scan::{split, Inputs, Limits, Profile, Quiet, WarnKind};
use support::ktgl::{gz_table, idrk, package, records, zlib, zlib_record};
use support::writers::{self as w, pad_to, put32, put64, Wrap};
use support::Built;

/// Corpus shaders wrapped as KTGL's GLSLC writes them: 0x850 / 0x848 controls, compute
/// without a code header (those with a fixed thread group), `salt` making each set distinct.
fn shaders(names: &[&str], salt: u32) -> Vec<Built> {
    let all = support::load_dksh();
    names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let s = all.iter().find(|s| s.name == *n).unwrap();
            let bare = s.stage == "compute";
            assert!(!bare || s.threads != [0; 3], "{n}");
            w::build(
                s,
                Wrap {
                    ctl_len: [0x850, 0x848, 0x880][i % 3],
                    bare_compute: bare,
                    salt: salt + i as u32,
                },
            )
        })
        .collect()
}

fn refs(v: &[Built]) -> Vec<&Built> {
    v.iter().collect()
}

/// Random bytes (zlib cannot shrink them).
fn noise(n: usize) -> Vec<u8> {
    use rand::{Rng, SeedableRng};
    let mut r = rand::rngs::StdRng::seed_from_u64(15);
    (0..n).map(|_| r.gen()).collect()
}

/// DATA0 / DATA1 of `entries` (`None`: an empty slot); `true` stores the entry as a gz table.
fn linkdata_pair(entries: &[Option<(&[u8], bool)>]) -> (Vec<u8>, Vec<u8>) {
    let (mut d0, mut d1) = (Vec::new(), Vec::new());
    for e in entries {
        let mut r = [0u8; 0x20];
        if let Some((data, compressed)) = e {
            pad_to(&mut d1, 0x100);
            let stored = if *compressed {
                gz_table(data, 0x4000)
            } else {
                data.to_vec()
            };
            put64(&mut r, 0, d1.len() as u64);
            put64(&mut r, 8, data.len() as u64);
            put64(&mut r, 0x10, stored.len() as u64);
            r[0x18] = u8::from(*compressed);
            d1.extend(stored);
        }
        d0.extend_from_slice(&r);
    }
    (d0, d1)
}

fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

fn profile(id: &str) -> Profile {
    Profile::load(&support::repo_root().join("games").join(id)).unwrap()
}

fn scan_romfs(root: &Path, p: &Profile) -> Scan {
    let inputs = Inputs {
        romfs: vec![root.to_path_buf()],
        mains: vec![],
    };
    split::scan(&inputs, p, &Limits::default(), &Quiet).unwrap()
}

/// Key → (stage, origin paths) of every shader found, duplicates included.
fn found(s: &Scan) -> BTreeMap<String, (String, Vec<String>)> {
    let mut m: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
    for sh in &s.shaders {
        let e = m
            .entry(sh.piece.key.clone())
            .or_insert_with(|| (sh.piece.stage.as_str().to_string(), Vec::new()));
        assert_eq!(e.0, sh.piece.stage.as_str(), "{}", sh.piece.key);
        e.1.push(sh.path.to_string());
    }
    m
}

/// Every shader of `want` is found exactly once, at a path ending in its `suffix`, with its
/// stage; nothing else is found.
fn assert_each_once(s: &Scan, want: &[(&Built, &str)]) {
    let got = found(s);
    for (b, suffix) in want {
        let (stage, paths) = got
            .get(&b.key())
            .unwrap_or_else(|| panic!("{} ({}) not found", b.name, b.key()));
        assert_eq!(stage, b.stage, "{}", b.name);
        assert_eq!(paths.len(), 1, "{} found at {paths:?}", b.name);
        assert!(paths[0].ends_with(suffix), "{}: {}", b.name, paths[0]);
    }
    assert_eq!(
        got.len(),
        want.len(),
        "{:?}",
        got.keys().collect::<Vec<_>>()
    );
}

#[test]
fn age_of_calamity_g2s_and_dok_in_rdb_data_files() {
    let t = tempfile::tempdir().unwrap();
    let g2s_a = shaders(
        &[
            "vs_basic_mvp.vert",
            "fs_tex2d_basic.frag",
            "fs_mrt.frag",
            "cs_ssbo_saxpy.comp",
            "vs_skinning.vert",
            "fs_shadow.frag",
        ],
        0x100,
    );
    let g2s_b = shaders(
        &[
            "vs_clipdist.vert",
            "fs_gather.frag",
            "gs_passthrough_tri.geom",
        ],
        0x200,
    );
    let dok = shaders(
        &[
            "vs_fullscreen_const.vert",
            "fs_lod_grad.frag",
            "cs_matmul_tiled.comp",
        ],
        0x300,
    );
    let plain = shaders(&["fs_interp_modes.frag"], 0x400);
    let hidden = shaders(&["fs_discard_alpha.frag"], 0x500);
    let g2s_a_bytes = package(b"_S2G3000", &refs(&g2s_a));
    // Small chunks: the container spans many zlib chunks.
    assert!(g2s_a_bytes.len() > 2 * 0x1000);
    // A texture record: GLSLC outputs inside a record of another type are not read.
    let mut texture = b"G1TG0060".to_vec();
    texture.extend(w::glslc(&hidden[0], "x"));
    let bin0 = records(&[
        zlib_record(0x1111_0001, 0x7BCD_279F, &g2s_a_bytes, 0x1000, false),
        zlib_record(0x1111_0002, 0x1234_5678, &texture, 0x10000, false),
        zlib_record(
            0x1111_0003,
            0x20A6_A0BB,
            &package(b"_DOK0000", &refs(&dok)),
            0x10000,
            true,
        ),
        idrk(0x1111_0004, 0x1234_5678, rdb::LZ4, 0x100, &[0x11; 0x40]),
    ]);
    let bin1 = records(&[
        zlib_record(
            0x2222_0001,
            0x7BCD_279F,
            &package(b"_S2G3000", &refs(&g2s_b)),
            0x8000,
            false,
        ),
        idrk(
            0x2222_0002,
            0x7BCD_279F,
            0,
            0,
            &package(b"_S2G3000", &refs(&plain)),
        ),
    ]);
    // The index: external entries whose content is a locator string.
    let mut index = vec![0u8; 0x20];
    index[0..4].copy_from_slice(b"_DRK");
    put32(&mut index, 8, 0x20);
    put32(&mut index, 0x10, 2);
    index.extend(records(&[
        idrk(0x1111_0001, 0x7BCD_279F, 0, 0, b"0@4a2c#0\0"),
        idrk(0x2222_0001, 0x7BCD_279F, 0, 0, b"0@3c10#1\0"),
    ]));
    write(t.path(), "asset/system.rdb", &index);
    write(t.path(), "asset/system.rdb.bin0", &bin0);
    write(t.path(), "asset/system.rdb.bin1", &bin1);
    let p = profile("01002B00111A2000");
    let s = scan_romfs(t.path(), &p);
    assert!(s.warnings.is_empty(), "{:#?}", s.warnings);
    let mut want: Vec<(&Built, &str)> = Vec::new();
    want.extend(g2s_a.iter().map(|b| (b, "bin0//11110001.g2s|rdb")));
    want.extend(dok.iter().map(|b| (b, "bin0//11110003.dok|rdb")));
    want.extend(g2s_b.iter().map(|b| (b, "bin1//22220001.g2s|rdb")));
    want.extend(plain.iter().map(|b| (b, "bin1//22220002.g2s|rdb")));
    assert_each_once(&s, &want);
    assert_eq!(support::ktgl::IDRK_ZLIB, rdb::ZLIB);
    assert!(s.shaders.iter().all(|x| x.kind.as_str() == "ktgl"));
    // No pair information in the files; the profile's shader_separable pairs them.
    assert!(s.pairs.is_empty());
    assert!(p.shader_separable && p.shader_main_glslc);
    assert_eq!(s.opened.get("ktgl"), Some(&4));
    let mut s = s;
    let tables = dmsh_scan::tables::Tables::build(&mut s, &p);
    assert_eq!(tables.shaders.len(), want.len());
    let vertex = want.iter().filter(|(b, _)| b.stage == "vertex").count();
    assert!(tables.pairs.len() >= vertex && tables.cover_pairs as usize == tables.pairs.len());
}

/// Three Houses' title: LINKDATA entries, loose files; returns the shaders with the path
/// suffix each must be found at.
struct ThreeHouses {
    shaders: Vec<(Built, String)>,
    data0: Vec<u8>,
    data1: Vec<u8>,
}

fn three_houses(root: &Path) -> ThreeHouses {
    let spkg_a = shaders(
        &[
            "vs_basic_mvp.vert",
            "fs_tex2d_basic.frag",
            "cs_shared_reduce.comp",
            "fs_lighting_loops.frag",
        ],
        0x1000,
    );
    let spkg_b = shaders(&["vs_skinning.vert", "fs_shadow.frag"], 0x1100);
    let post = shaders(&["vs_fullscreen_const.vert", "fs_lod_grad.frag"], 0x1200);
    let raw = shaders(&["vs_displace_tex.vert", "fs_gather.frag"], 0x1300);
    let map = shaders(&["vs_multi_attr_int.vert", "fs_mrt.frag"], 0x1400);
    let bnsh = shaders(&["vs_clipdist.vert", "fs_int_outputs.frag"], 0x1500);
    let patch = shaders(&["vs_layer_viewport.vert", "fs_switch_bitops.frag"], 0x1600);
    let loose = shaders(&["vs_pointsize_ids.vert", "fs_shadow.frag"], 0x1700);
    // SPKG of two G2S containers; the `_SPK4100` package holds outputs without G2S.
    let mut pkg = b"SPKG".to_vec();
    pkg.extend_from_slice(&[0; 12]);
    pkg.extend(package(b"_S2G3000", &refs(&spkg_a)));
    pkg.extend(package(b"_S2G3000", &refs(&spkg_b)));
    // A 0x1d.0 output with something else at control +0x20: not a shader.
    let mut odd = shaders(&["fs_fragdepth.frag"], 0x1800).remove(0);
    put32(&mut odd.control, 0x20, 0x136b);
    let mut post_pkg = package(b"_SPK4100", &refs(&post));
    post_pkg.extend(w::glslc(&odd, "0x1d.0"));
    // A map archive (unknown layout) carrying a package of its own at an offset.
    let mut map_arc = b"MDLRESPK".to_vec();
    map_arc.extend_from_slice(&[0x5A; 0x38]);
    map_arc.extend(package(b"SPKG", &refs(&map)));
    let sarc = w::sarc(&[
        ("ui/layout.bfsha", w::bnsh(&[refs(&bnsh)])),
        ("ui/readme.txt", b"text".to_vec()),
    ]);
    // Incompressible bytes: the table stores its last chunk raw.
    let noise = noise(0x5000);
    let raw_pkg = package(b"SPKG", &refs(&raw));
    let (data0, data1) = linkdata_pair(&[
        Some((&pkg, true)),
        None,
        Some((&post_pkg, true)),
        Some((&raw_pkg, false)),
        Some((&map_arc, true)),
        Some((&sarc, true)),
        Some((&noise, true)),
        Some((b"plain entry, no shaders", false)),
    ]);
    write(root, "DATA0.bin", &data0);
    write(root, "DATA1.bin", &data1);
    write(
        root,
        "patch1/nx/shader/water.spkg",
        &gz_table(&package(b"SPKG", &refs(&patch[..1])), 0x10000),
    );
    write(
        root,
        "patch1/data/water2.gz",
        &gz_table(&package(b"_S2G3000", &refs(&patch[1..])), 0x20000),
    );
    write(
        root,
        "patch1/nx/shader/loose.spkg",
        &package(b"SPKG", &refs(&loose)),
    );
    let mut v = Vec::new();
    let mut add = |set: Vec<Built>, suffix: &str| {
        v.extend(set.into_iter().map(|b| (b, suffix.to_string())));
    };
    add(spkg_a, "DATA1.bin//00000|ktgl_gz");
    add(spkg_b, "DATA1.bin//00000|ktgl_gz");
    add(post, "DATA1.bin//00002|ktgl_gz");
    add(raw, "DATA1.bin//00003");
    add(map, "DATA1.bin//00004|ktgl_gz");
    add(bnsh, "DATA1.bin//00005|ktgl_gz//ui/layout.bfsha");
    let mut patch = patch.into_iter();
    add(patch.next().into_iter().collect(), "water.spkg|ktgl_gz");
    add(patch.collect(), "water2.gz|ktgl_gz");
    add(loose, "loose.spkg");
    ThreeHouses {
        shaders: v,
        data0,
        data1,
    }
}

#[test]
fn three_houses_linkdata_and_loose_packages() {
    let t = tempfile::tempdir().unwrap();
    let th = three_houses(t.path());
    let p = profile("010055D009F78000");
    let s = scan_romfs(t.path(), &p);
    assert!(s.warnings.is_empty(), "{:#?}", s.warnings);
    let want: Vec<(&Built, &str)> = th.shaders.iter().map(|(b, x)| (b, x.as_str())).collect();
    assert_each_once(&s, &want);
    // BNSH from the SARC pair as BNSH pairs; KTGL outputs bring no pairs.
    let bnsh: Vec<&Built> = th
        .shaders
        .iter()
        .filter(|(_, x)| x.ends_with("layout.bfsha"))
        .map(|(b, _)| b)
        .collect();
    assert_eq!(s.pairs, vec![(bnsh[0].key(), bnsh[1].key())]);
    // One DATA1 counts as one LINKDATA, its eight entries as jobs of their own; five files
    // read (DATA0, DATA1, three loose packages).
    assert_eq!(s.opened.get("linkdata"), Some(&1));
    assert_eq!(s.files, 5);
    assert_eq!(s.opened.get("ktgl_gz"), Some(&7));
}

#[test]
fn data1_entry_range_jobs_find_what_one_job_finds() {
    let t = tempfile::tempdir().unwrap();
    let th = three_houses(t.path());
    let entries = linkdata::entries(&th.data0);
    assert_eq!(entries.len(), 8);
    // The split cuts DATA1 into ranges that cover every entry once, in order.
    for jobs in [1, 2, 3, 5, 64] {
        let parts = linkdata::parts(&entries, jobs);
        assert!(parts.len() <= jobs && !parts.is_empty());
        assert_eq!(parts[0].start, 0);
        assert_eq!(parts.last().unwrap().end, entries.len());
        assert!(parts.windows(2).all(|w| w[0].end == w[1].start));
    }
    assert!(linkdata::parts(&entries, 64).len() > 1);
    let limits = Limits::default();
    let one = |range: std::ops::Range<usize>| {
        let fs = FileScan::new(&limits, false, 0, "romfs0".into());
        let found = linkdata::members(&th.data1, &entries, range);
        fs.scan_found(&th.data1, "DATA1.bin", linkdata::NAME, Ok(found))
    };
    let whole = one(0..entries.len());
    let by_parts = linkdata::parts(&entries, 3)
        .into_iter()
        .map(one)
        .fold(Scan::default(), Scan::merge);
    let split_scan = scan_romfs(t.path(), &Profile::default());
    let only_data1 = |s: &Scan| {
        let mut v: Vec<(String, String)> = s
            .shaders
            .iter()
            .filter(|x| x.path.starts_with("DATA1.bin"))
            .map(|x| (x.piece.key.clone(), x.path.to_string()))
            .collect();
        v.sort();
        v
    };
    assert_eq!(only_data1(&whole).len(), 14);
    assert_eq!(only_data1(&whole), only_data1(&by_parts));
    assert_eq!(only_data1(&whole), only_data1(&split_scan));
    let mut pw = whole.pairs.clone();
    let mut pp = by_parts.pairs.clone();
    pw.sort();
    pp.sort();
    assert_eq!(pw, pp);
}

#[test]
fn gz_tables_decode_compressed_and_raw_chunks() {
    let data: Vec<u8> = (0..0x2_3456u32).map(|i| (i % 97) as u8).collect();
    for cs in gz::CHUNK_SIZES {
        let t = gz_table(&data, cs as usize);
        let h = gz::header(&t).unwrap();
        assert_eq!((h.chunk_size, h.total as usize), (cs, data.len()));
        assert_eq!(gz::decode(&t, 1 << 30).unwrap(), data);
    }
    // The last chunk of incompressible data is stored raw (length word = the rest).
    let n = noise(0x5000);
    let t = gz_table(&n, 0x4000);
    let last = 0x80 + (4 + u32::from_le_bytes(t[0x80..0x84].try_into().unwrap()) as usize);
    let last = last.next_multiple_of(0x80);
    assert_eq!(&t[last..last + 4], &0x1000u32.to_le_bytes());
    assert_eq!(&t[last + 4..last + 4 + 0x1000], &n[0x4000..]);
    assert_eq!(gz::decode(&t, 1 << 30).unwrap(), n);
    // Not a table: wrong chunk size, or a count that does not match the size.
    let mut t = gz_table(&data, 0x4000);
    put32(&mut t, 4, 3);
    assert!(gz::header(&t).is_none());
    assert!(gz::header(b"\x00\x40\x00\x00\x01\x00\x00\x00").is_none());
}

#[test]
fn hostile_rdb_records_and_tables_are_bounded_and_named() {
    let b = shaders(&["vs_basic_mvp.vert", "fs_tex2d_basic.frag"], 0x2000);
    let pkg = package(b"_S2G3000", &b.iter().collect::<Vec<_>>());
    let limits = Limits::default();
    let fs = FileScan::new(&limits, false, 0, "romfs0".into());
    // A zip bomb: the record states 0x40 bytes, its chunk inflates to 1 MiB.
    let mut bomb = b"_S2G3000".to_vec();
    bomb.resize(1 << 20, 0);
    let mut bomb_rec = zlib_record(0x3333_0001, 0x7BCD_279F, &bomb, 1 << 20, false);
    put64(&mut bomb_rec, 0x18, 0x40);
    // A record stating more than the cap: refused before allocating.
    let mut huge = zlib_record(0x3333_0002, 0x7BCD_279F, &pkg, 0x10000, false);
    put64(&mut huge, 0x18, u64::MAX / 2);
    // A second chunk without its zlib header, after a good first one.
    let mut corrupt = zlib_record(0x3333_0003, 0x7BCD_279F, &pkg, 0x800, false);
    let second = 0x44 + 4 + u32::from_le_bytes(corrupt[0x44..0x48].try_into().unwrap()) as usize;
    corrupt[second + 4] = 0;
    let good = zlib_record(0x3333_0004, 0x7BCD_279F, &pkg, 0x10000, false);
    // A record whose sizes run past the file.
    let mut cut = good.clone();
    put64(&mut cut, 8, 0x10_0000);
    let file = records(&[bomb_rec, huge, corrupt, good.clone(), cut]);
    let s = fs.scan(&file, "asset/system.rdb.bin0", 0);
    let keys: Vec<_> = s.shaders.iter().map(|x| x.piece.key.clone()).collect();
    assert_eq!(keys, vec![b[0].key(), b[1].key()], "{:#?}", s.warnings);
    assert!(s.shaders[0].path.ends_with("//33330004.g2s|rdb"));
    let w = |member: &str| {
        s.warnings
            .iter()
            .find(|w| w.path.ends_with(member))
            .unwrap_or_else(|| panic!("{member}: {:#?}", s.warnings))
    };
    assert_eq!(w("33330001.g2s").kind, WarnKind::SizeCap);
    assert_eq!(w("33330002.g2s").kind, WarnKind::SizeCap);
    assert_eq!(w("33330002.g2s").offset, 0x18);
    assert_eq!(w("33330003.g2s").kind, WarnKind::DecodeFailed);
    assert_eq!(w("33330003.g2s").offset, second as u64 + 4);
    let cut_at = file.len() - good.len();
    let top = s
        .warnings
        .iter()
        .find(|w| w.path == "asset/system.rdb.bin0")
        .unwrap();
    assert_eq!((top.kind, top.offset), (WarnKind::Truncated, cut_at as u64));
    // Every truncation of a data file: no panic, the records before the cut still read.
    for end in (0..file.len()).step_by(97) {
        let _ = fs.scan(&file[..end], "t", 0);
    }
    // gz: a stated size over the cap, a chunk that inflates past its chunk size, truncations.
    let t = gz_table(&pkg, 0x4000);
    assert_eq!(gz::decode(&t, 0x100).unwrap_err().kind, WarnKind::SizeCap);
    let mut z = vec![0u8; 12 + 4];
    put32(&mut z, 0, 0x4000);
    put32(&mut z, 4, 1);
    put32(&mut z, 8, 0x100);
    pad_to(&mut z, 0x80);
    let big = zlib(&vec![7u8; 0x10_0000]);
    let at = z.len();
    z.extend_from_slice(&(big.len() as u32).to_le_bytes());
    z.extend(&big);
    let len = (z.len() - at) as u32;
    put32(&mut z, 12, len);
    let e = gz::decode(&z, 1 << 30).unwrap_err();
    assert_eq!((e.kind, e.offset), (WarnKind::SizeCap, at as u64 + 4));
    for end in 0..t.len() {
        let _ = gz::decode(&t[..end], 1 << 30);
    }
    // LINKDATA: an entry past DATA1's end is a warning at DATA1, the others are read.
    let (d0, d1) = linkdata_pair(&[Some((&pkg, true))]);
    let mut entries = linkdata::entries(&d0);
    entries.insert(
        0,
        linkdata::Entry {
            offset: d1.len() as u64 - 8,
            size: 0x100,
            stored: 0x100,
            compressed: true,
        },
    );
    let s = fs.scan_found(
        &d1,
        "DATA1.bin",
        linkdata::NAME,
        Ok(linkdata::members(&d1, &entries, 0..2)),
    );
    assert_eq!(s.shaders.len(), 2);
    assert_eq!(s.warnings.len(), 1);
    assert_eq!(
        (s.warnings[0].path.as_str(), s.warnings[0].offset),
        ("DATA1.bin", d1.len() as u64 - 8)
    );
}

#[test]
fn a_shader_in_data1_and_in_a_patch_package_is_one_row() {
    let t = tempfile::tempdir().unwrap();
    let b = shaders(&["vs_basic_mvp.vert", "fs_tex2d_basic.frag"], 0x3000);
    let pkg = package(b"_S2G3000", &refs(&b));
    let (d0, d1) = linkdata_pair(&[Some((&pkg, true)), Some((&pkg, false))]);
    write(t.path(), "DATA0.bin", &d0);
    write(t.path(), "DATA1.bin", &d1);
    write(
        t.path(),
        "patch2/nx/shader/same.spkg",
        &gz_table(&pkg, 0x4000),
    );
    let p = profile("010055D009F78000");
    let mut s = scan_romfs(t.path(), &p);
    assert!(s.warnings.is_empty(), "{:#?}", s.warnings);
    assert_eq!(s.shaders.len(), 6);
    let tables = dmsh_scan::tables::Tables::build(&mut s, &p);
    assert_eq!(tables.shaders.len(), 2);
    for x in &b {
        assert_eq!(tables.copies.get(&x.key()), Some(&3), "{}", x.name);
    }
    // The first origin (DATA1's first entry) is the one reported; its bytes are the shader's.
    let row = tables
        .shaders
        .iter()
        .find(|x| x.piece.key == b[0].key())
        .unwrap();
    assert_eq!(&*row.path, "DATA1.bin//00000|ktgl_gz");
    assert_eq!(row.piece.control, b[0].control);
    assert_eq!(row.piece.code, b[0].code);
}

#[test]
fn random_damage_to_ktgl_files_is_survived() {
    use rand::{Rng, SeedableRng};
    let t = tempfile::tempdir().unwrap();
    let th = three_houses(t.path());
    let b = shaders(&["vs_basic_mvp.vert", "fs_tex2d_basic.frag"], 0x4000);
    let pkg = package(b"_S2G3000", &refs(&b));
    let bin = records(&[
        zlib_record(1, 0x7BCD_279F, &pkg, 0x400, false),
        zlib_record(2, 0x20A6_A0BB, &pkg, 0x10000, true),
    ]);
    let gz = gz_table(&pkg, 0x4000);
    let limits = Limits {
        max_depth: 8,
        layer_cap: 1 << 20,
        file_budget: 4 << 20,
    };
    let fs = FileScan::new(&limits, false, 0, "romfs0".into());
    let entries = linkdata::entries(&th.data0);
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x6b74);
    for round in 0..300 {
        let mut bad_bin = bin.clone();
        let mut bad_gz = gz.clone();
        let mut bad_d1 = th.data1.clone();
        for v in [&mut bad_bin, &mut bad_gz, &mut bad_d1] {
            for _ in 0..1 + round % 8 {
                let at = rng.gen_range(0..v.len());
                v[at] = rng.gen();
            }
        }
        for s in [
            fs.scan(&bad_bin, "system.rdb.bin0", 0),
            fs.scan(&bad_gz, "x.gz", 0),
            fs.scan_found(
                &bad_d1,
                "DATA1.bin",
                linkdata::NAME,
                Ok(linkdata::members(&bad_d1, &entries, 0..entries.len())),
            ),
        ] {
            for w in &s.warnings {
                assert!(!w.path.is_empty() && !w.detail.is_empty());
            }
        }
    }
}

#[test]
fn python_zlib_fixtures_give_the_payloads_shaders() {
    // Written by tests/fixtures/ktgl/make_ktgl_fixtures.py (C zlib, with Adler-32 trailers)
    // around the demo title's bfsha: the BNSH shaders of the payload, found through an IDRK
    // record with a size prefix and through a gz table.
    let root = support::repo_root();
    let fx = root.join("tools/scan/tests/fixtures/ktgl");
    let limits = Limits::default();
    let fs = FileScan::new(&limits, false, 0, "romfs0".into());
    let payload =
        std::fs::read(root.join("games/demo/romfs/Shader/Misc.Nin_NX_NVN.bfsha")).unwrap();
    let keys = |s: &Scan| {
        let mut k: Vec<String> = s.shaders.iter().map(|x| x.piece.key.clone()).collect();
        k.sort();
        k
    };
    let want = keys(&fs.scan(&payload, "Misc.bfsha", 0));
    assert!(!want.is_empty());
    let bin = std::fs::read(fx.join("system.rdb.bin0")).unwrap();
    let s = fs.scan(&bin, "asset/system.rdb.bin0", 0);
    assert!(s.warnings.is_empty(), "{:#?}", s.warnings);
    assert_eq!(keys(&s), want);
    assert!(s.shaders[0]
        .path
        .starts_with("asset/system.rdb.bin0//20a6a0bb.dok|rdb"));
    let gz = std::fs::read(fx.join("entry.gz")).unwrap();
    assert_eq!(gz::decode(&gz, 1 << 30).unwrap(), payload);
    let s = fs.scan(&gz, "entry.gz", 0);
    assert!(s.warnings.is_empty(), "{:#?}", s.warnings);
    assert_eq!(keys(&s), want);
}
