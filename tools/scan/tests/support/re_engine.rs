//! RE Engine writers (per ../shared/docs/formats.md §10; no independent writer exists): SDF
//! shader definitions and KPKA PAKs, whose entries are compressed by the independent `flate2`
//! (raw deflate) and `zstd` crates.

use std::io::Write;

use super::Built;

/// The stages of an SDF entry's six offsets, in order (vertex, hull, domain, geometry, pixel,
/// compute).
pub const SDF_STAGES: [&str; 6] = [
    "vertex",
    "tess_control",
    "tess_eval",
    "geometry",
    "fragment",
    "compute",
];

/// Slot of a stage in an SDF entry's six offsets ([`SDF_STAGES`]).
pub fn sdf_slot(stage: &str) -> usize {
    SDF_STAGES.iter().position(|s| *s == stage).unwrap()
}

/// An SDF (version 1): one 0x108-byte entry per definition, each a list of stages; the stage
/// data (`{u32 control length, u32 code length}`, control, code) follows the entries at 0x10
/// boundaries, offsets from the SDF start. A stage listed twice is written once (both entries
/// point at it).
pub fn sdf(defs: &[Vec<&Built>]) -> Vec<u8> {
    let mut f = vec![0u8; 0x10 + defs.len() * 0x108];
    f[0..4].copy_from_slice(b"SDF\0");
    f[4..6].copy_from_slice(&1u16.to_le_bytes());
    f[6..8].copy_from_slice(&(defs.len() as u16).to_le_bytes());
    f[8..16].copy_from_slice(&0x5E5E_0001u64.to_le_bytes());
    let mut written: Vec<(*const Built, usize)> = Vec::new();
    for (d, stages) in defs.iter().enumerate() {
        for b in stages {
            let at = match written.iter().find(|(p, _)| std::ptr::eq(*p, *b)) {
                Some(&(_, at)) => at,
                None => {
                    while !f.len().is_multiple_of(0x10) {
                        f.push(0);
                    }
                    let at = f.len();
                    f.extend_from_slice(&(b.control.len() as u32).to_le_bytes());
                    f.extend_from_slice(&(b.code.len() as u32).to_le_bytes());
                    f.extend_from_slice(&b.control);
                    f.extend_from_slice(&b.code);
                    written.push((*b as *const Built, at));
                    at
                }
            };
            let o = 0x10 + d * 0x108 + 0x10 + sdf_slot(b.stage) * 8;
            f[o..o + 8].copy_from_slice(&(at as u64).to_le_bytes());
        }
    }
    f
}

/// An empty definition: 16 bytes of version 0.
pub fn sdf_empty() -> Vec<u8> {
    let mut f = vec![0u8; 16];
    f[0..4].copy_from_slice(b"SDF\0");
    f
}

/// How a PAK entry is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    /// As it is.
    Stored,
    /// Raw deflate by flate2 at this level.
    Deflate(u32),
    /// zstd, one-shot (content size in the frame).
    Zstd,
    /// zstd, streaming encoder (no content size).
    ZstdStream,
}

/// One PAK entry: path hash (upper << 32 | lower), the decoded bytes, how they are stored.
#[derive(Debug, Clone)]
pub struct PakEntry {
    /// Path hash.
    pub hash: u64,
    /// Decoded bytes.
    pub data: Vec<u8>,
    /// Storage.
    pub store: Store,
}

/// Raw deflate by the flate2 crate.
pub fn deflate(b: &[u8], level: u32) -> Vec<u8> {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(level));
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

/// The stored bytes and attribute word of an entry.
pub fn stored(e: &PakEntry) -> (Vec<u8>, u64) {
    match e.store {
        Store::Stored => (e.data.clone(), 0),
        Store::Deflate(l) => (deflate(&e.data, l), 1),
        Store::Zstd => (super::writers::zstd(&e.data), 2),
        Store::ZstdStream => (super::writers::zstd_stream(&e.data), 2),
    }
}

/// A KPKA v4.0 PAK: 16-byte header, 48-byte entries, then the stored data.
pub fn pak(entries: &[PakEntry]) -> Vec<u8> {
    let bodies: Vec<(Vec<u8>, u64)> = entries.iter().map(stored).collect();
    pak_raw(entries, &bodies)
}

/// A PAK with given stored bytes and attribute words (e.g. sizes that lie).
pub fn pak_raw(entries: &[PakEntry], bodies: &[(Vec<u8>, u64)]) -> Vec<u8> {
    let mut f = vec![0u8; 16 + entries.len() * 48];
    f[0..4].copy_from_slice(b"KPKA");
    f[4] = 4;
    f[8..12].copy_from_slice(&(entries.len() as u32).to_le_bytes());
    for (i, (e, (body, attr))) in entries.iter().zip(bodies).enumerate() {
        let at = 16 + i * 48;
        let off = f.len() as u64;
        f[at..at + 4].copy_from_slice(&(e.hash as u32).to_le_bytes());
        f[at + 4..at + 8].copy_from_slice(&((e.hash >> 32) as u32).to_le_bytes());
        for (k, v) in [off, body.len() as u64, e.data.len() as u64, *attr, 0]
            .into_iter()
            .enumerate()
        {
            f[at + 8 + k * 8..at + 16 + k * 8].copy_from_slice(&v.to_le_bytes());
        }
        f.extend_from_slice(body);
    }
    f
}

/// A KPKA v2.0 PAK: 24-byte entries `{offset, size, hash lower, hash upper}`, stored data.
pub fn pak_v2(entries: &[(u64, Vec<u8>)]) -> Vec<u8> {
    let mut f = vec![0u8; 16 + entries.len() * 24];
    f[0..4].copy_from_slice(b"KPKA");
    f[4] = 2;
    f[8..12].copy_from_slice(&(entries.len() as u32).to_le_bytes());
    for (i, (hash, data)) in entries.iter().enumerate() {
        let at = 16 + i * 24;
        let off = f.len() as u64;
        f[at..at + 8].copy_from_slice(&off.to_le_bytes());
        f[at + 8..at + 16].copy_from_slice(&(data.len() as u64).to_le_bytes());
        f[at + 16..at + 24].copy_from_slice(&hash.to_le_bytes());
        f.extend_from_slice(data);
    }
    f
}
