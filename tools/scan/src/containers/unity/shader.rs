//! Shader objects (class 48): the compressed blob of each Switch platform (LZ4 segments, an
//! index of {offset, length, segment} entries), the sub-program records it holds, and the whole
//! NVN program of each (a 0x60-byte stage header, then control section + code area per stage).

use super::cursor::Cursor;
use super::tree::{flatten, Tree, Value};
use crate::error::{ReadError, ReadResult, WarnKind};
use crate::shader::{Extractor, Hits, Spot};
use crate::stage::Stage;

/// `kShaderCompPlatformSwitch`.
pub const PLATFORM_SWITCH: u64 = 19;
/// Sub-program version from which the keyword block has a second (local) list.
const LOCAL_KEYWORDS_FROM: i32 = 201806140;
/// Sub-program version from which it has none again (Unity 2021.2).
const LOCAL_KEYWORDS_UNTIL: i32 = 202012090;
/// The first bytes of a parameter blob (Unity 2022).
const PARAMETERS: &[u8] = b"PGlobals";

/// Reads the Shader object `obj` (found at `at` of its file, path ID `id`) through `t`,
/// adding its shaders, pairs and problems to `hits`. Each decoded segment is at most `cap`.
pub fn read(t: &Tree, obj: &[u8], be: bool, id: i64, cap: u64, hits: &mut Hits, at: usize) {
    let first = hits.shaders.len();
    if let Err(e) = read_object(t, obj, be, id, cap, hits, at) {
        hits.errors.push(e.shifted(at));
    }
    for h in &mut hits.shaders[first..] {
        h.offset = at as u64;
    }
}

fn ints(v: Option<&Value>) -> Vec<u64> {
    let mut out = Vec::new();
    if let Some(v) = v {
        flatten(v, &mut out);
    }
    out
}

/// Per platform: the segments' numbers (vector<vector<u32>> since 2019.3, vector<u32> before).
fn per_platform(v: Option<&Value>) -> Vec<Vec<u64>> {
    match v {
        Some(Value::List(l)) => l
            .iter()
            .map(|x| {
                let mut o = Vec::new();
                flatten(x, &mut o);
                o
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn read_object(
    t: &Tree,
    obj: &[u8],
    be: bool,
    id: i64,
    cap: u64,
    hits: &mut Hits,
    at: usize,
) -> ReadResult<()> {
    let v = t.read(obj, be)?;
    let platforms = ints(t.field(&v, "platforms"));
    let offsets = per_platform(t.field(&v, "offsets"));
    let clens = per_platform(t.field(&v, "compressedLengths"));
    let dlens = per_platform(t.field(&v, "decompressedLengths"));
    let Some(Value::Bytes(blob)) = t.field(&v, "compressedBlob") else {
        return Err(ReadError::new(
            WarnKind::BadHeader,
            0,
            "Shader without compressedBlob",
        ));
    };
    let blob = &obj[blob.clone()];
    // Unity 2022: the player's programs are listed; parameter blobs are skipped.
    let listed = t.has_field("m_PlayerSubPrograms").then(|| {
        let mut l = Vec::new();
        t.ints_under(&v, "m_PlayerSubPrograms", "m_BlobIndex", &mut l);
        l
    });
    let mut params = Vec::new();
    t.ints_under(&v, "m_ParsedForm", "m_ParameterBlobIndices", &mut params);
    for (pi, &p) in platforms.iter().enumerate() {
        if p != PLATFORM_SWITCH {
            continue;
        }
        let (Some(o), Some(c), Some(d)) = (offsets.get(pi), clens.get(pi), dlens.get(pi)) else {
            hits.errors.push(ReadError::new(
                WarnKind::BadHeader,
                at,
                format!("object {id}: platform {pi} has no segment table"),
            ));
            continue;
        };
        let mut segs = Vec::new();
        let mut left = cap;
        for j in 0..o.len().min(c.len()).min(d.len()) {
            match segment(blob, o[j], c[j], d[j], left) {
                Ok(s) => {
                    left -= s.len() as u64;
                    segs.push(s);
                }
                Err(e) => {
                    let what = format!("object {id}: platform {pi} segment {j}");
                    hits.errors.push(e.within(at, what));
                    break;
                }
            }
        }
        programs(&segs, listed.as_deref(), &params, id, hits, at);
    }
    Ok(())
}

/// LZ4-decodes `blob[off .. off+clen]` to exactly `dlen` bytes, at most `cap`.
fn segment(blob: &[u8], off: u64, clen: u64, dlen: u64, cap: u64) -> ReadResult<Vec<u8>> {
    let r = crate::bytes::range(blob, off, clen, "segment")?;
    if dlen > cap || dlen > clen.saturating_mul(255).saturating_add(16) {
        return Err(ReadError::new(
            WarnKind::SizeCap,
            r.start,
            format!("{clen:#x} bytes claim to decode to {dlen:#x} (limit {cap:#x}, or 255 × their size)"),
        ));
    }
    let mut out = vec![0u8; dlen as usize];
    match lz4_flex::block::decompress_into(&blob[r.clone()], &mut out) {
        Ok(n) if n as u64 == dlen => Ok(out),
        Ok(n) => Err(ReadError::new(
            WarnKind::DecodeFailed,
            r.start,
            format!("LZ4 gives {n:#x} bytes, {dlen:#x} stated"),
        )),
        Err(e) => Err(ReadError::new(
            WarnKind::DecodeFailed,
            r.start,
            format!("LZ4: {e}"),
        )),
    }
}

/// The entries of a platform's index (in segment 0): sub-programs, unless `listed` leaves them
/// out or they are parameter blobs.
fn programs(
    segs: &[Vec<u8>],
    listed: Option<&[u64]>,
    params: &[u64],
    id: i64,
    hits: &mut Hits,
    at: usize,
) {
    let Some(first) = segs.first() else { return };
    let mut c = Cursor::new(first, 0, false);
    let count = match c.count(12, "blob index count") {
        Ok(n) => n,
        Err(e) => {
            hits.errors.push(e.within(at, format!("object {id}")));
            return;
        }
    };
    for k in 0..count {
        let kk = k as u64;
        if listed.is_some_and(|l| !l.contains(&kk)) || params.contains(&kk) {
            continue;
        }
        c.pos = 4 + 12 * k;
        let entry = (|| -> ReadResult<(usize, usize, usize)> {
            Ok((
                c.u32("entry offset")? as usize,
                c.u32("entry length")? as usize,
                c.u32("entry segment")? as usize,
            ))
        })();
        let r = entry.and_then(|(off, len, seg)| {
            let s = segs.get(seg).ok_or_else(|| {
                ReadError::new(
                    WarnKind::BadHeader,
                    4 + 12 * k,
                    format!("segment {seg} not decoded"),
                )
            })?;
            let r = crate::bytes::range(s, off as u64, len as u64, "blob entry")?;
            if s[r.clone()].starts_with(PARAMETERS) {
                return Ok(Hits::default());
            }
            let mut h = Hits::default();
            program(s, r, id, k, &mut h)?;
            Ok(h)
        });
        let wrap = |e: ReadError| {
            let what = format!("object {id}: blob entry {k}: at {:#x}", e.offset);
            e.within(at, what)
        };
        match r {
            Ok(mut h) => {
                h.errors = h.errors.into_iter().map(wrap).collect();
                hits.append(h);
            }
            Err(e) => hits.errors.push(wrap(e)),
        }
    }
}

/// One sub-program record at `r` of segment `s`: keywords, then the code (one NVN program).
fn program(
    s: &[u8],
    r: std::ops::Range<usize>,
    id: i64,
    k: usize,
    hits: &mut Hits,
) -> ReadResult<()> {
    let mut c = Cursor::new(&s[..r.end], r.start, false);
    let version = c.i32("sub-program version")?;
    c.i32("GPU program type")?;
    c.bytes(if version >= 201608170 { 16 } else { 12 }, "statistics")?;
    let lists = if (LOCAL_KEYWORDS_FROM..LOCAL_KEYWORDS_UNTIL).contains(&version) {
        2
    } else {
        1
    };
    for _ in 0..lists {
        for _ in 0..c.count(4, "keyword count")? {
            let n = c.count(1, "keyword length")?;
            c.bytes(n, "keyword")?;
            c.align(4);
        }
    }
    let n = c.count(1, "code length")?;
    let code = c.pos;
    c.bytes(n, "program code")?;
    nvn_program(s, code, n, id, k, hits)
}

/// The whole NVN program at `code` of `s` (`len` bytes): the 0x60-byte header of four i32 × 6
/// arrays by NVN stage (scratch, block offset from +0x60 or −1, control size, code size).
fn nvn_program(
    s: &[u8],
    code: usize,
    len: usize,
    id: i64,
    k: usize,
    hits: &mut Hits,
) -> ReadResult<()> {
    if len < 0x60 {
        return Err(ReadError::new(
            WarnKind::Truncated,
            code,
            "program shorter than its 0x60-byte header",
        ));
    }
    let end = code + len;
    let field = |arr: usize, st: usize| -> i64 {
        let o = code + arr * 24 + st * 4;
        i32::from_le_bytes(s[o..o + 4].try_into().unwrap()) as i64
    };
    let mut ex = Extractor::new(len);
    let mut group = Vec::new();
    for nvn in 0..6u32 {
        let st = nvn as usize;
        let off = field(1, st);
        if off < 0 {
            continue;
        }
        let stage = Stage::from_nvn(nvn).expect("six NVN stages");
        let (csz, dsz) = (field(2, st), field(3, st));
        let start = code as i64 + 0x60 + off;
        let ctl_end = start.checked_add(csz);
        let code_end = ctl_end.and_then(|e| e.checked_add(dsz));
        let (Some(ctl_end), Some(code_end)) = (ctl_end, code_end) else {
            continue;
        };
        if csz <= 0 || dsz <= 0 || code_end > end as i64 {
            hits.errors.push(ReadError::new(
                WarnKind::BadHeader,
                code + 24 + st * 4,
                format!("{stage} block {off:#x} + {csz:#x} + {dsz:#x} outside the {len:#x}-byte program"),
            ));
            continue;
        }
        let spot = Spot {
            ctl: start as usize,
            ctl_end: ctl_end as usize,
            ctl_size: Some(csz as usize),
            code: ctl_end as usize,
            code_end: code_end as usize,
            claimed: Some(stage),
            allow_bare: false,
        };
        match ex.get(s, spot) {
            Ok(mut piece) => {
                piece.fill(s);
                let index = format!("{id}.b{k}.{stage}");
                hits.push_in_group(&mut group, stage, piece, 0, index);
            }
            Err(e) => hits.errors.push(e),
        }
    }
    hits.pair_vertex_with_next_fragment(&group);
    Ok(())
}
