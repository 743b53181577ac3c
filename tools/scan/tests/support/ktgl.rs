//! Writers for Koei Tecmo KTGL containers (docs/formats.md, "Koei Tecmo KTGL"): packages of
//! GLSLC outputs, Age of Calamity's IDRK records and Three Houses' "gz" tables. zlib streams
//! come from the independent `flate2` encoder.

use std::io::Write;

use super::writers::{self as w, pad_to, put32, put64};
use super::Built;

/// IDRK flag: content stored as zlib chunks.
pub const IDRK_ZLIB: u32 = 0x10_0000;

/// A zlib stream written by flate2.
pub fn zlib(b: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

/// GLSLC outputs after a KTGL magic (internal layout unknown: a count, outputs 0x10-aligned).
pub fn package(magic: &[u8], outs: &[&Built]) -> Vec<u8> {
    let mut f = magic.to_vec();
    f.extend_from_slice(&(outs.len() as u32).to_le_bytes());
    for b in outs {
        pad_to(&mut f, 0x10);
        f.extend(w::glslc(b, "// KTGL material\nvoid main() {}\n"));
    }
    pad_to(&mut f, 0x10);
    f
}

/// Content as zlib chunks of `chunk` bytes: `{u32 length, zlib stream}`…, a zero length;
/// with `prefix` the decompressed size first.
pub fn zlib_chunks(data: &[u8], chunk: usize, prefix: bool) -> Vec<u8> {
    let mut c = Vec::new();
    if prefix {
        c.extend_from_slice(&(data.len() as u32).to_le_bytes());
    }
    for part in data.chunks(chunk) {
        let z = zlib(part);
        c.extend_from_slice(&(z.len() as u32).to_le_bytes());
        c.extend(z);
    }
    c.extend_from_slice(&0u32.to_le_bytes());
    c
}

/// An IDRK record: 0x30-byte header, a type blob, then `content` (stored bytes).
pub fn idrk(ktid: u32, type_ktid: u32, flags: u32, raw_size: usize, content: &[u8]) -> Vec<u8> {
    let blob = [0xC5u8; 0x14];
    let mut r = vec![0u8; 0x30];
    r[0..4].copy_from_slice(b"IDRK");
    r[4..8].copy_from_slice(b"0000");
    let size = 0x30 + blob.len() + content.len();
    put64(&mut r, 8, size as u64);
    put64(&mut r, 0x10, content.len() as u64);
    put64(&mut r, 0x18, raw_size as u64);
    put32(&mut r, 0x24, ktid);
    put32(&mut r, 0x28, type_ktid);
    put32(&mut r, 0x2C, 0x2_0000 | flags);
    r.extend_from_slice(&blob);
    r.extend_from_slice(content);
    r
}

/// An IDRK record whose content is `data` as zlib chunks of `chunk` bytes.
pub fn zlib_record(ktid: u32, type_ktid: u32, data: &[u8], chunk: usize, prefix: bool) -> Vec<u8> {
    idrk(
        ktid,
        type_ktid,
        IDRK_ZLIB,
        data.len(),
        &zlib_chunks(data, chunk, prefix),
    )
}

/// Records one after another, each at a 4-byte boundary.
pub fn records(rs: &[Vec<u8>]) -> Vec<u8> {
    let mut f = Vec::new();
    for r in rs {
        pad_to(&mut f, 4);
        f.extend_from_slice(r);
    }
    f
}

/// A KTGL "gz" table (docs/formats.md, LINKDATA), as KTGL's writer lays it out: the header,
/// stored chunk lengths (length word included), chunks from the next 0x80 boundary, each
/// 0x80-aligned; a chunk that does not shrink is stored raw.
pub fn gz_table(data: &[u8], chunk_size: usize) -> Vec<u8> {
    let n = data.len().div_ceil(chunk_size);
    let mut f = vec![0u8; 12 + 4 * n];
    put32(&mut f, 0, chunk_size as u32);
    put32(&mut f, 4, n as u32);
    put32(&mut f, 8, data.len() as u32);
    pad_to(&mut f, 0x80);
    for (i, part) in data.chunks(chunk_size).enumerate() {
        let z = zlib(part);
        let body = if z.len() < part.len() || i + 1 < n {
            z
        } else {
            part.to_vec()
        };
        let at = f.len();
        f.extend_from_slice(&(body.len() as u32).to_le_bytes());
        f.extend_from_slice(&body);
        let len = (f.len() - at) as u32;
        put32(&mut f, 12 + 4 * i, len);
        pad_to(&mut f, 0x80);
    }
    f
}
