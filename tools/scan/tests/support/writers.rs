//! Writers for NVN control sections, code areas and the shader containers (per
//! docs/formats.md), plus wrappers around the independent compression / archive crates.

use super::{Built, CorpusShader};

/// Writes `v` little endian at `o`.
pub fn put32(b: &mut [u8], o: usize, v: u32) {
    b[o..o + 4].copy_from_slice(&v.to_le_bytes());
}

/// Writes `v` little endian at `o`.
pub fn put64(b: &mut [u8], o: usize, v: u64) {
    b[o..o + 8].copy_from_slice(&v.to_le_bytes());
}

/// Appends zeros up to the next multiple of `a`.
pub fn pad_to(v: &mut Vec<u8>, a: usize) {
    while !v.len().is_multiple_of(a) {
        v.push(0);
    }
}

fn nvn_stage(stage: &str) -> u32 {
    match stage {
        "vertex" => 0,
        "fragment" => 1,
        "geometry" => 2,
        "tess_control" => 3,
        "tess_eval" => 4,
        _ => 5,
    }
}

/// How to wrap a corpus shader.
#[derive(Debug, Clone, Copy)]
pub struct Wrap {
    /// Control length written at +0x20 (0x880; 0x850 SDK 10; 0x848 BAHS v9; more with NV asm text).
    pub ctl_len: usize,
    /// Compute without the 0x12345679 header.
    pub bare_compute: bool,
    /// A value stored at control +0x790 (GLSLC option flags) to vary the control section.
    pub salt: u32,
}

impl Default for Wrap {
    fn default() -> Self {
        Wrap {
            ctl_len: 0x880,
            bare_compute: false,
            salt: 0,
        }
    }
}

/// Builds the code area of a corpus shader: graphics = 0x30-byte 0x12345678 header + SPH +
/// instructions; compute = 0x12345679 header + zero padding to 0x100 + instructions (or the
/// instructions alone); c1 data at the next 0x100 boundary. Returns (code, c1 offset).
pub fn code_area(s: &CorpusShader, bare: bool) -> (Vec<u8>, usize) {
    let mut code = Vec::new();
    if s.stage == "compute" {
        if !bare {
            code.extend_from_slice(&0x1234_5679u32.to_le_bytes());
            code.resize(0x100, 0);
        }
    } else {
        code.extend_from_slice(&0x1234_5678u32.to_le_bytes());
        code.resize(0x30, 0);
    }
    code.extend_from_slice(&s.program);
    pad_to(&mut code, 0x100);
    let c1_off = if s.c1.is_empty() { 0 } else { code.len() };
    code.extend_from_slice(&s.c1);
    pad_to(&mut code, 0x100);
    (code, c1_off)
}

/// A Switch 1 control section for `s` with code area `code`.
pub fn control(s: &CorpusShader, code: &[u8], c1_off: usize, w: Wrap) -> Vec<u8> {
    let mut c = vec![0u8; w.ctl_len.max(0x880)];
    put32(&mut c, 0, 0x9876_1234);
    put32(&mut c, 4, 1); // GPU code version major
    put32(&mut c, 8, 0x10); // minor
    put32(&mut c, 0xC, 0x120); // GM20B
    put32(&mut c, 0x10, 0xB);
    put32(&mut c, 0x20, w.ctl_len as u32);
    put32(&mut c, 0x6F8, s.program.len() as u32);
    put32(&mut c, 0x6FC, s.c1.len() as u32);
    put32(&mut c, 0x700, c1_off as u32);
    put32(&mut c, 0x704, code.len() as u32);
    let entry = match (s.stage, w.bare_compute) {
        ("compute", true) => 0,
        ("compute", false) => 0x100,
        _ => 0x30,
    };
    put32(&mut c, 0x708, entry);
    put32(&mut c, 0x70C, s.gprs);
    put32(&mut c, 0x714, nvn_stage(s.stage));
    put32(&mut c, 0x748, s.threads[0]);
    put32(&mut c, 0x74C, s.threads[1]);
    put32(&mut c, 0x750, s.threads[2]);
    put32(&mut c, 0x754, s.shared);
    if w.ctl_len >= 0x794 {
        put32(&mut c, 0x790, w.salt);
    }
    c.truncate(w.ctl_len);
    if w.ctl_len > 0x880 {
        // NV assembly text after the first 0x880 bytes (Metroid Dread).
        let text = format!(
            "!!NVfp5.0\n# {} ({})\nMOV.F result.color, {{0,0,0,1}};\nEND\n",
            s.name, s.stage
        );
        let n = text.len().min(w.ctl_len - 0x880);
        c[0x880..0x880 + n].copy_from_slice(&text.as_bytes()[..n]);
    }
    c
}

/// Wraps a corpus shader as a Switch 1 control section + code area.
pub fn build(s: &CorpusShader, w: Wrap) -> Built {
    let bare = w.bare_compute && s.stage == "compute";
    let (code, c1) = code_area(s, bare);
    let control = control(
        s,
        &code,
        c1,
        Wrap {
            bare_compute: bare,
            ..w
        },
    );
    Built {
        name: format!(
            "{}#{:x}{}",
            s.name,
            w.ctl_len,
            if bare { "bare" } else { "" }
        ),
        stage: s.stage,
        nvn2: false,
        control,
        code,
    }
}

/// An NVN2 control section (0xD8 bytes; +0x30 = `own_len`, 0 in agl containers) and code area
/// made from Ampere instructions `instr` (with `sph` in front for graphics stages).
pub fn build_nvn2(
    name: &str,
    stage: &'static str,
    sph: &[u8],
    instr: &[u8],
    own_len: u32,
    threads: [u32; 3],
) -> Built {
    let mut code = sph.to_vec();
    code.extend_from_slice(instr);
    let instr_len = code.len();
    pad_to(&mut code, 0x100);
    let rounded = code.len();
    let mut c = vec![0u8; 0xD8];
    put32(&mut c, 0, 0x9876_1234);
    put32(&mut c, 4, 0xC9);
    put32(&mut c, 0x30, own_len);
    put32(&mut c, 0x38, instr_len as u32);
    put32(&mut c, 0x40, rounded as u32);
    put32(&mut c, 0x44, code.len() as u32);
    put32(&mut c, 0x4C, 24);
    put32(&mut c, 0x58, threads[0]);
    put32(&mut c, 0x5C, threads[1]);
    put32(&mut c, 0x60, threads[2]);
    Built {
        name: format!("{name}#nvn2"),
        stage,
        nvn2: true,
        control: c,
        code,
    }
}

/// Slot order of BNSH stage pointers.
pub fn slot(stage: &str) -> usize {
    dmsh_formats::Stage::ALL
        .iter()
        .position(|s| s.as_str() == stage)
        .unwrap()
}

/// A BNSH file: one variation per entry of `variations`, each a list of built stages.
pub fn bnsh(variations: &[Vec<&Built>]) -> Vec<u8> {
    let n = variations.len();
    let vt = 0xC0usize;
    let progs = vt + n * 0x40;
    let nstages: usize = variations.iter().map(|v| v.len()).sum();
    let descs = progs + n * 0x40;
    let mut data_at = descs + nstages * 0x20;
    data_at = (data_at + 0xFF) & !0xFF;
    let mut f = vec![0u8; data_at];
    f[0..8].copy_from_slice(b"BNSH\0\0\0\0");
    put32(&mut f, 8, 0x0002_0100); // version
    f[0xC] = 0xFF;
    f[0xD] = 0xFE;
    f[0xE] = 0x0C;
    f[0xF] = 0x40;
    put32(&mut f, 0x14, 0x0060_0000);
    f[0x60..0x64].copy_from_slice(b"grsc");
    put32(&mut f, 0x7C, n as u32);
    put64(&mut f, 0x80, vt as u64);
    let mut d = descs;
    for (i, v) in variations.iter().enumerate() {
        let e = vt + i * 0x40;
        let p = progs + i * 0x40;
        put64(&mut f, e + 0x10, p as u64);
        put64(&mut f, e + 0x18, 0x60);
        for b in v {
            let ctl_at = f.len();
            f.extend_from_slice(&b.control);
            pad_to(&mut f, 0x100);
            let code_at = f.len();
            f.extend_from_slice(&b.code);
            pad_to(&mut f, 0x100);
            put64(&mut f, p + 8 + slot(b.stage) * 8, d as u64);
            put64(&mut f, d + 8, ctl_at as u64);
            put64(&mut f, d + 0x10, code_at as u64);
            put32(&mut f, d + 0x18, b.code.len() as u32);
            put32(&mut f, d + 0x1C, b.control.len() as u32);
            d += 0x20;
        }
    }
    let size = f.len() as u32;
    put32(&mut f, 0x1C, size);
    put64(&mut f, 0x68, (size - 0x60) as u64);
    f
}

/// A NintendoWare-style wrapper (`FSHA` bfsha, `VFXB` effect, …) with `inner` embedded at 0x400.
pub fn wrap_nw(magic: &[u8; 4], name: &str, inner: &[u8]) -> Vec<u8> {
    let mut f = vec![0u8; 0x400];
    f[0..4].copy_from_slice(magic);
    f[4..8].copy_from_slice(b"    ");
    put32(&mut f, 8, 0x0007_0000);
    f[0xC] = 0xFF;
    f[0xD] = 0xFE;
    f[0x40..0x40 + name.len()].copy_from_slice(name.as_bytes());
    put64(&mut f, 0x80, 0x400);
    f.extend_from_slice(inner);
    pad_to(&mut f, 0x100);
    let size = f.len() as u32;
    put32(&mut f, 0x1C, size);
    f
}

/// An agl BAHS archive. `controls` are shared control sections; each record is
/// (control index, code area). Records follow the name area; code areas form the code region.
pub fn bahs(version: u32, controls: &[Vec<u8>], records: &[(usize, &[u8])]) -> Vec<u8> {
    let mut f = vec![0u8; 0x40];
    f[0..4].copy_from_slice(b"BAHS");
    put32(&mut f, 4, version);
    put32(&mut f, 0x14, 0x100);
    f.extend_from_slice(b"agl_common\0\0");
    pad_to(&mut f, 0x10);
    put32(&mut f, 0x10, records.len() as u32);
    let rec_at = f.len();
    f.resize(rec_at + records.len() * 16 + 16, 0);
    let mut ctl_at = Vec::new();
    for c in controls {
        pad_to(&mut f, 0x10);
        ctl_at.push(f.len());
        f.extend_from_slice(c);
    }
    pad_to(&mut f, 0x100);
    let region = f.len();
    let mut code_rel = Vec::new();
    for (_, code) in records {
        code_rel.push(f.len() - region);
        f.extend_from_slice(code);
        pad_to(&mut f, 0x100);
    }
    let region_size = f.len() - region;
    for (i, (ci, _)) in records.iter().enumerate() {
        let r = rec_at + i * 16;
        put32(&mut f, r, code_rel[i] as u32);
        put32(&mut f, r + 8, controls[*ci].len() as u32);
        put32(
            &mut f,
            r + 12,
            (ctl_at[*ci] as i64 - r as i64) as i32 as u32,
        );
    }
    put32(&mut f, 0x18, region_size as u32);
    put32(&mut f, 0x1C, region as u32);
    let size = f.len() as u32;
    put32(&mut f, 8, size);
    f
}

/// A GLSLC output: header, one GPU-code section header (+0x90), the control section with the
/// code area right after it, then a debug section with `debug` text.
pub fn glslc(b: &Built, debug: &str) -> Vec<u8> {
    let data = 0x200usize;
    let mut f = vec![0u8; data];
    put32(&mut f, 0, 0x1986_6891);
    put32(&mut f, 0x10, 0x37); // API major
    put32(&mut f, 0x14, 0x14); // API minor
    put32(&mut f, 0x18, 1); // GPU code major
    put32(&mut f, 0x1C, 0x10);
    put32(&mut f, 0x48, data as u32);
    put32(&mut f, 0x4C, 2);
    f.extend_from_slice(&b.control);
    let code_rel = f.len() - data;
    f.extend_from_slice(&b.code);
    let gpu_size = f.len() - data;
    let dbg_at = f.len();
    f.extend_from_slice(debug.as_bytes());
    f.push(0);
    pad_to(&mut f, 0x10);
    let h = 0x90;
    put32(&mut f, h, gpu_size as u32);
    put32(&mut f, h + 4, 0);
    put32(&mut f, h + 8, 0); // GPU code
    put32(&mut f, h + 0x2C, nvn_stage(b.stage));
    put32(&mut f, h + 0x30, 0);
    put32(&mut f, h + 0x34, code_rel as u32);
    put32(&mut f, h + 0x38, b.code.len() as u32);
    put32(&mut f, h + 0x3C, b.control.len() as u32);
    let h2 = 0x120;
    let dbg_len = f.len() - dbg_at;
    put32(&mut f, h2, dbg_len as u32);
    put32(&mut f, h2 + 4, (dbg_at - data) as u32);
    put32(&mut f, h2 + 8, 4); // debug info
    let total = f.len() as u32;
    put32(&mut f, 0x44, total);
    f
}

/// An MSHD `.bshdat`: stages in order, each control (with NV asm text when longer than
/// 0x880), an optional option table, the code area at the next 0x100 boundary, then `sass` text.
pub fn mshd(stages: &[(&Built, bool, &str)]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(b"MSHD");
    f.extend_from_slice(&3u32.to_le_bytes());
    f.extend_from_slice(&(stages.len() as u32).to_le_bytes());
    pad_to(&mut f, 0x10);
    for (b, fastmath, sass) in stages {
        f.extend_from_slice(&b.control);
        if *fastmath {
            f.extend_from_slice(b"fastmath\0true\0\0\0");
        }
        pad_to(&mut f, 0x100);
        f.extend_from_slice(&b.code);
        f.extend_from_slice(sass.as_bytes());
        pad_to(&mut f, 0x10);
    }
    f
}

/// An agl NDSR pack: header `NDSR`, version, count; 16-byte records from +0x10 up to a zero
/// record; then the control sections and code areas (offsets from the file start).
pub fn ndsr(shaders: &[&Built]) -> Vec<u8> {
    let n = shaders.len();
    let mut f = vec![0u8; 0x10 + (n + 1) * 16];
    f[0..4].copy_from_slice(b"NDSR");
    put32(&mut f, 4, 1);
    put32(&mut f, 8, n as u32);
    for (i, b) in shaders.iter().enumerate() {
        pad_to(&mut f, 0x100);
        let co = f.len();
        f.extend_from_slice(&b.control);
        pad_to(&mut f, 0x100);
        let ko = f.len();
        f.extend_from_slice(&b.code);
        let t = nvn_stage(b.stage);
        let r = 0x10 + i * 16;
        put32(&mut f, r, co as u32);
        put32(&mut f, r + 4, (b.control.len() as u32) << 4 | t);
        put32(&mut f, r + 8, ko as u32);
        put32(&mut f, r + 12, ((b.code.len() / 16) as u32) << 8 | t);
    }
    f
}

/// An NSO with the three segments at page-aligned memory offsets; `compress` LZ4-compresses
/// them (lz4_flex) and every segment carries its SHA-256 with the check flag set.
pub fn nso(text: &[u8], rodata: &[u8], data: &[u8], compress: bool) -> Vec<u8> {
    use sha2::{Digest, Sha256};
    let mut h = vec![0u8; 0x100];
    h[0..4].copy_from_slice(b"NSO0");
    let segs = [text, rodata, data];
    let mut mem = 0usize;
    let mut body = Vec::new();
    let mut flags = 0u32;
    for (i, s) in segs.iter().enumerate() {
        let stored = if compress {
            lz4_flex::block::compress(s)
        } else {
            s.to_vec()
        };
        if compress {
            flags |= 1 << i;
        }
        flags |= 1 << (3 + i);
        let file_off = 0x100 + body.len();
        body.extend_from_slice(&stored);
        let hh = 0x10 + i * 0x10;
        put32(&mut h, hh, file_off as u32);
        put32(&mut h, hh + 4, mem as u32);
        put32(&mut h, hh + 8, s.len() as u32);
        put32(&mut h, 0x60 + i * 4, stored.len() as u32);
        h[0xA0 + i * 0x20..0xC0 + i * 0x20].copy_from_slice(&Sha256::digest(s));
        mem = (mem + s.len() + 0xFFF) & !0xFFF;
    }
    put32(&mut h, 0xC, flags);
    put32(&mut h, 0x3C, 0x1000);
    h.extend_from_slice(&body);
    h
}

/// zstd-compresses (level 19, content size written by the one-shot encoder).
pub fn zstd(b: &[u8]) -> Vec<u8> {
    zstd::bulk::compress(b, 19).unwrap()
}

/// zstd-compresses with the streaming encoder (no content size in the frame header).
pub fn zstd_stream(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut e = zstd::stream::write::Encoder::new(&mut out, 3).unwrap();
    std::io::Write::write_all(&mut e, b).unwrap();
    e.finish().unwrap();
    out
}

/// Yaz0-compresses with the independent `yaz0` crate.
pub fn yaz0(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    yaz0::Yaz0Writer::new(&mut out)
        .compress_and_write(b, yaz0::CompressionLevel::Lookahead { quality: 6 })
        .unwrap();
    out
}

/// A little-endian SARC written by the independent `sarc` crate.
pub fn sarc(files: &[(&str, Vec<u8>)]) -> Vec<u8> {
    sarc_endian(files, sarc::Endian::Little)
}

/// A SARC in the given byte order, written by the `sarc` crate.
pub fn sarc_endian(files: &[(&str, Vec<u8>)], e: sarc::Endian) -> Vec<u8> {
    let s = sarc::SarcFile {
        byte_order: e,
        files: files
            .iter()
            .map(|(n, d)| sarc::SarcEntry {
                name: Some(n.to_string()),
                data: d.clone(),
            })
            .collect(),
    };
    let mut out = Vec::new();
    s.write(&mut out).unwrap();
    out
}
