//! Unreal Engine (Octopath Traveler 0): pak → `*.ushaderbytecode` v2 → Oodle → LSLG records
//! holding real corpus shaders. No independent writer exists for any of these layers, so the
//! writers below follow the public layouts (docs/formats.md, "Unreal"): the pak from UE's
//! `FPakInfo` / `FPakEntry` / full directory index, the archive from `FSerializedShaderArchive`,
//! the LSLG record from seed 000. No open Mermaid encoder exists either: the Oodle streams are
//! stored blocks and a memset quantum, framed as oozextract's block / quantum headers describe
//! (a 2-byte block header every 0x40000 output bytes: byte 0 = 0x0C | 0x40 stored | 0x80
//! restart, byte 1 = decoder type; a 3-byte big-endian quantum header whose all-ones size with
//! bit 18 set means "memset with the next byte"), never with the scanner's code.

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use dmsh_scan::containers::{lslg, ushaderbytecode, Found, Input};
use dmsh_scan::walk::{FileScan, Scan};
use dmsh_scan::{split, Inputs, Limits, Profile, Quiet, WarnKind};
use rand::{Rng, SeedableRng};
use support::writers::{self as w, Wrap};
use support::Built;
use support::{split_outputs, tsv_rows};

const GLOBAL: &str =
    "ShaderArchive-Global-SF_GLSL_SWITCH_MOBILE-SP_GLSL_SWITCH_MOBILE.ushaderbytecode";
const CHUNK0: &str = "ShaderArchive-Octopath_Traveler0_Chunk0-SF_GLSL_SWITCH_MOBILE-SP_GLSL_SWITCH_MOBILE.ushaderbytecode";

// ---- writers (from the documented layouts) ----

fn u32s(v: u32) -> [u8; 4] {
    v.to_le_bytes()
}

/// An FString: i32 length with the NUL, the bytes, NUL.
fn fstring(s: &str) -> Vec<u8> {
    let mut v = u32s(s.len() as u32 + 1).to_vec();
    v.extend_from_slice(s.as_bytes());
    v.push(0);
    v
}

/// An LSLG record: magic, stage tag, a header (opaque bytes and the source name), u32 code
/// length, code area, u32 control length, control section, `tail` bytes.
fn lslg_record(b: &Built, source: &str, tail: usize) -> Vec<u8> {
    let tag: &[u8; 2] = match b.stage {
        "vertex" => b"SV",
        "fragment" => b"SP",
        _ => b"SC",
    };
    let mut r = b"LSLG".to_vec();
    r.extend_from_slice(tag);
    r.extend_from_slice(&[1, 0, 0, 3]);
    r.extend(fstring(source));
    r.extend_from_slice(&u32s(b.code.len() as u32));
    r.extend_from_slice(&b.code);
    r.extend_from_slice(&u32s(b.control.len() as u32));
    r.extend_from_slice(&b.control);
    r.extend((0..tail).map(|i| i as u8 ^ 0x5A));
    r
}

/// `raw` as Oodle stored blocks of decoder type `ty` (0x0A Mermaid): a block header before
/// every 0x40000 bytes, the first one with the restart bit.
fn oodle_stored(raw: &[u8], ty: u8) -> Vec<u8> {
    let mut v = Vec::new();
    for (i, chunk) in raw.chunks(0x40000).enumerate() {
        v.push(if i == 0 { 0xCC } else { 0x4C });
        v.push(ty);
        v.extend_from_slice(chunk);
    }
    v
}

/// A Mermaid block that decodes to any number (≤ 0x40000) of `fill` bytes: block header
/// `8C 0A`, quantum header 0x07FFFF (size all ones, bit 18: memset), the byte.
fn oodle_memset(fill: u8) -> Vec<u8> {
    vec![0x8C, 0x0A, 0x07, 0xFF, 0xFF, fill]
}

/// One shader entry of an archive: stored bytes, raw size, UE frequency.
struct Entry {
    data: Vec<u8>,
    raw: u32,
    freq: u8,
}

fn freq(stage: &str) -> u8 {
    match stage {
        "vertex" => 0,
        "fragment" => 3,
        _ => 5,
    }
}

/// An Oodle (stored-block) entry for the record `r` of a shader of `stage`.
fn oodle_entry(r: &[u8], stage: &str) -> Entry {
    Entry {
        data: oodle_stored(r, 0x0A),
        raw: r.len() as u32,
        freq: freq(stage),
    }
}

/// A version-2 shader code archive: the six arrays, then the code. `maps` are lists of
/// shader indices.
fn archive(entries: &[Entry], maps: &[Vec<u32>]) -> Vec<u8> {
    let mut f = u32s(2).to_vec();
    f.extend_from_slice(&u32s(maps.len() as u32));
    for m in 0..maps.len() {
        f.extend_from_slice(&[m as u8 | 0x80; 20]);
    }
    f.extend_from_slice(&u32s(entries.len() as u32));
    for s in 0..entries.len() {
        f.extend_from_slice(&[s as u8; 20]);
    }
    f.extend_from_slice(&u32s(maps.len() as u32));
    let mut at = 0u32;
    for m in maps {
        for v in [at, m.len() as u32, 0, 0] {
            f.extend_from_slice(&u32s(v));
        }
        at += m.len() as u32;
    }
    f.extend_from_slice(&u32s(entries.len() as u32));
    let mut off = 0u64;
    for e in entries {
        f.extend_from_slice(&off.to_le_bytes());
        f.extend_from_slice(&u32s(e.data.len() as u32));
        f.extend_from_slice(&u32s(e.raw));
        f.push(e.freq);
        off += e.data.len() as u64;
    }
    f.extend_from_slice(&u32s(0)); // preload entries
    f.extend_from_slice(&u32s(at));
    for m in maps {
        for &i in m {
            f.extend_from_slice(&u32s(i));
        }
    }
    for e in entries {
        f.extend_from_slice(&e.data);
    }
    f
}

/// How a pak member is stored.
#[derive(Clone, Copy, PartialEq)]
enum Store {
    /// As is.
    Plain,
    /// Pak-compressed with Oodle (method 1) in blocks of this many bytes (stored blocks).
    Oodle(usize),
    /// Pak-compressed with method 2 (`Zlib` in the footer), which the scanner does not read.
    Zlib,
    /// Marked AES-encrypted.
    Encrypted,
    /// Listed in the index's unencoded entry list (a negative location).
    Unencoded,
    /// Listed with a location past the encoded entries.
    Lost,
}

/// A member's full-form entry (UE `FPakEntry`): offset, size, raw size, u32 method, SHA-1,
/// [block count, (start, end) relative to the entry], flags, block size.
fn full_entry(
    offset: u64,
    size: u64,
    raw: u64,
    method: u32,
    blocks: &[(u64, u64)],
    flags: u8,
    bs: u32,
) -> Vec<u8> {
    let mut v = Vec::new();
    for x in [offset, size, raw] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.extend_from_slice(&u32s(method));
    v.extend_from_slice(&[0xEE; 20]);
    if method != 0 {
        v.extend_from_slice(&u32s(blocks.len() as u32));
        for (s, e) in blocks {
            v.extend_from_slice(&s.to_le_bytes());
            v.extend_from_slice(&e.to_le_bytes());
        }
    }
    v.push(flags);
    v.extend_from_slice(&u32s(bs));
    v
}

/// A member laid out in the data area: its full entry (real offset), encoded entry, bytes.
struct Laid {
    full: Vec<u8>,
    encoded: Vec<u8>,
}

/// Appends member `data` to `f` stored as `st`; returns its index records.
fn lay(f: &mut Vec<u8>, data: &[u8], st: Store) -> Laid {
    let offset = f.len() as u64;
    let raw = data.len() as u64;
    let (method, chunks): (u32, Vec<Vec<u8>>) = match st {
        Store::Oodle(bs) => (1, data.chunks(bs).map(|c| oodle_stored(c, 0x0A)).collect()),
        Store::Zlib => (2, vec![data.to_vec()]),
        _ => (0, vec![]),
    };
    let bs = match st {
        Store::Oodle(bs) => bs as u32,
        Store::Zlib => raw as u32,
        _ => 0,
    };
    let size = if method == 0 {
        raw
    } else {
        chunks.iter().map(|c| c.len() as u64).sum()
    };
    let flags = u8::from(st == Store::Encrypted);
    let head = 53
        + if method != 0 {
            4 + 16 * chunks.len() as u64
        } else {
            0
        };
    let mut blocks = Vec::new();
    let mut at = head;
    for c in &chunks {
        blocks.push((at, at + c.len() as u64));
        at += c.len() as u64;
    }
    f.extend(full_entry(0, size, raw, method, &blocks, flags, bs));
    if method == 0 {
        f.extend_from_slice(data);
    } else {
        for c in &chunks {
            f.extend_from_slice(c);
        }
    }
    // Encoded: block size / 2 KiB (or 0x3F + u32), block count, encrypted, method, 32-bit flags.
    let bs_bits = if bs % 2048 == 0 && bs / 2048 < 0x3F {
        bs / 2048
    } else {
        0x3F
    };
    let bits = bs_bits
        | (chunks.len() as u32) << 6
        | u32::from(flags) << 22
        | method << 23
        | 1 << 29
        | 1 << 30
        | 1 << 31;
    let mut e = u32s(bits).to_vec();
    if bs_bits == 0x3F {
        e.extend_from_slice(&u32s(bs));
    }
    e.extend_from_slice(&u32s(offset as u32));
    e.extend_from_slice(&u32s(raw as u32));
    if method != 0 {
        e.extend_from_slice(&u32s(size as u32));
        if chunks.len() != 1 || flags != 0 {
            for c in &chunks {
                e.extend_from_slice(&u32s(c.len() as u32));
            }
        }
    }
    Laid {
        full: full_entry(offset, size, raw, method, &blocks, flags, bs),
        encoded: e,
    }
}

/// The footer of a v ≥ 8 pak: key GUID, encrypted-index byte, magic, version, index offset and
/// size, SHA-1, five 32-byte method names.
fn footer(version: u32, index: (u64, u64), encrypted: bool, names: &[&str]) -> Vec<u8> {
    let mut v = vec![0u8; 16];
    v.push(u8::from(encrypted));
    v.extend_from_slice(&u32s(0x5A6F_12E1));
    v.extend_from_slice(&u32s(version));
    v.extend_from_slice(&index.0.to_le_bytes());
    v.extend_from_slice(&index.1.to_le_bytes());
    v.extend_from_slice(&[0xAA; 20]);
    for k in 0..names.len() {
        let mut n = [0u8; 32];
        n[..names[k].len()].copy_from_slice(names[k].as_bytes());
        v.extend_from_slice(&n);
    }
    v
}

/// A version-11 pak (UE 4.26+): members, the full directory index, the index (mount point,
/// count, path-hash seed, no path-hash index, the directory index's place, encoded entries,
/// unencoded entries), the footer.
fn pak_v11(files: &[(&str, Vec<u8>, Store)]) -> Vec<u8> {
    let mut f = Vec::new();
    let mut encoded = Vec::new();
    let mut unencoded = Vec::new();
    let mut dirs: BTreeMap<String, Vec<(String, i32)>> = BTreeMap::new();
    for (path, data, st) in files {
        let laid = lay(&mut f, data, *st);
        let loc = if *st == Store::Lost {
            0x7FFF_FFF0
        } else if *st == Store::Unencoded {
            unencoded.push(laid.full);
            -(unencoded.len() as i32)
        } else {
            let at = encoded.len() as i32;
            encoded.extend(laid.encoded);
            at
        };
        let (d, n) = path.rsplit_once('/').unwrap();
        dirs.entry(format!("/{d}/"))
            .or_default()
            .push((n.to_string(), loc));
    }
    let fdi_at = f.len() as u64;
    f.extend_from_slice(&u32s(dirs.len() as u32));
    for (d, names) in &dirs {
        f.extend(fstring(d));
        f.extend_from_slice(&u32s(names.len() as u32));
        for (n, loc) in names {
            f.extend(fstring(n));
            f.extend_from_slice(&loc.to_le_bytes());
        }
    }
    let fdi_size = f.len() as u64 - fdi_at;
    let index_at = f.len() as u64;
    f.extend(fstring("../../../"));
    f.extend_from_slice(&u32s(files.len() as u32));
    f.extend_from_slice(&0x1234u64.to_le_bytes());
    f.extend_from_slice(&u32s(0));
    f.extend_from_slice(&u32s(1));
    f.extend_from_slice(&fdi_at.to_le_bytes());
    f.extend_from_slice(&fdi_size.to_le_bytes());
    f.extend_from_slice(&[0xBB; 20]);
    f.extend_from_slice(&u32s(encoded.len() as u32));
    f.extend_from_slice(&encoded);
    f.extend_from_slice(&u32s(unencoded.len() as u32));
    for u in &unencoded {
        f.extend_from_slice(u);
    }
    let index_size = f.len() as u64 - index_at;
    f.extend(footer(
        11,
        (index_at, index_size),
        false,
        &["Oodle", "Zlib", "", "", ""],
    ));
    f
}

/// A version-7 pak (legacy index: mount point, count, then name + full entry per member;
/// footer without method names).
fn pak_v7(files: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut f = Vec::new();
    let mut index = fstring("../../../");
    index.extend_from_slice(&u32s(files.len() as u32));
    for (path, data) in files {
        let laid = lay(&mut f, data, Store::Plain);
        index.extend(fstring(path));
        index.extend(laid.full);
    }
    let at = f.len() as u64;
    f.extend_from_slice(&index);
    f.extend(footer(7, (at, index.len() as u64), false, &[]));
    f
}

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
