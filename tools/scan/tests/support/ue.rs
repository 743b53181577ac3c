//! Unreal Engine writers (no independent writer exists): pak, `*.ushaderbytecode` v2 and
//! LSLG records from the public layouts (docs/formats.md, "Unreal Engine": the pak from UE's
//! `FPakInfo` / `FPakEntry` / full directory index, the archive from
//! `FSerializedShaderArchive`, the LSLG record from seed 000), and Oodle streams of stored
//! blocks and a memset quantum framed as oozextract's block / quantum headers describe (a
//! 2-byte block header every 0x40000 output bytes: byte 0 = 0x0C | 0x40 stored | 0x80
//! restart, byte 1 = decoder type; a 3-byte big-endian quantum header whose all-ones size with
//! bit 18 set means "memset with the next byte"), never with the scanner's code.

use std::collections::BTreeMap;

use super::Built;

pub fn u32s(v: u32) -> [u8; 4] {
    v.to_le_bytes()
}

/// An FString: i32 length with the NUL, the bytes, NUL.
pub fn fstring(s: &str) -> Vec<u8> {
    let mut v = u32s(s.len() as u32 + 1).to_vec();
    v.extend_from_slice(s.as_bytes());
    v.push(0);
    v
}

/// An LSLG record: magic, stage tag, a header (opaque bytes and the source name), u32 code
/// length, code area, u32 control length, control section, `tail` bytes.
pub fn lslg_record(b: &Built, source: &str, tail: usize) -> Vec<u8> {
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
pub fn oodle_stored(raw: &[u8], ty: u8) -> Vec<u8> {
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
pub fn oodle_memset(fill: u8) -> Vec<u8> {
    vec![0x8C, 0x0A, 0x07, 0xFF, 0xFF, fill]
}

/// One shader entry of an archive: stored bytes, raw size, UE frequency.
pub struct Entry {
    pub data: Vec<u8>,
    pub raw: u32,
    pub freq: u8,
}

pub fn freq(stage: &str) -> u8 {
    match stage {
        "vertex" => 0,
        "fragment" => 3,
        _ => 5,
    }
}

/// An Oodle (stored-block) entry for the record `r` of a shader of `stage`.
pub fn oodle_entry(r: &[u8], stage: &str) -> Entry {
    Entry {
        data: oodle_stored(r, 0x0A),
        raw: r.len() as u32,
        freq: freq(stage),
    }
}

/// A version-2 shader code archive: the six arrays, then the code. `maps` are lists of
/// shader indices.
pub fn archive(entries: &[Entry], maps: &[Vec<u32>]) -> Vec<u8> {
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
pub enum Store {
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
pub fn full_entry(
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
pub struct Laid {
    pub full: Vec<u8>,
    pub encoded: Vec<u8>,
}

/// Appends member `data` to `f` stored as `st`; returns its index records.
pub fn lay(f: &mut Vec<u8>, data: &[u8], st: Store) -> Laid {
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
pub fn footer(version: u32, index: (u64, u64), encrypted: bool, names: &[&str]) -> Vec<u8> {
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
pub fn pak_v11(files: &[(&str, Vec<u8>, Store)]) -> Vec<u8> {
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
pub fn pak_v7(files: &[(&str, Vec<u8>)]) -> Vec<u8> {
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
