//! BNSH shader files (NintendoWare), found by magic anywhere: bfsha, effects, layouts, main.

use super::{ContainerReader, Found, Sniff};
use crate::bytes::{need_u32, need_u64, range, u32le};
use crate::error::{ReadError, ReadResult, WarnKind};
use crate::shader::{ContainerKind, Extractor, Hits, Spot};
use crate::stage::Stage;

/// BNSH magic (`BNSH` and four zero bytes).
pub const MAGIC: &[u8; 8] = b"BNSH\0\0\0\0";

/// The registry's BNSH reader: every BNSH at any offset of the buffer, so it takes any input.
pub const READER: ContainerReader = ContainerReader {
    name: ContainerKind::Bnsh.as_str(),
    sniff: Sniff::By(|_| true),
    read: |i| Ok(read_all(i.bytes)),
};

/// Reads every BNSH in `b`. The magic alone can be a constant in code; a BNSH also has `grsc`
/// at +0x60 (a candidate cut off before it is still read, to report the truncation).
fn read_all(b: &[u8]) -> Found<'static> {
    let mut all = Hits::default();
    let mut opened = 0;
    for at in find_all(b)
        .into_iter()
        .filter(|&at| b.get(at + 0x60..at + 0x64).is_none_or(|g| g == b"grsc"))
    {
        match read(b, at) {
            Ok(h) => {
                opened += 1;
                all.append(h);
            }
            Err(e) => all.errors.push(e),
        }
    }
    Found::Shaders {
        kind: ContainerKind::Bnsh,
        opened,
        hits: all,
    }
}

/// Offsets of every BNSH magic in `b`.
pub fn find_all(b: &[u8]) -> Vec<usize> {
    memchr::memmem::find_iter(b, MAGIC).collect()
}

/// Reads the BNSH at `at`: every variation's binary program, six stages each.
pub fn read(b: &[u8], at: usize) -> ReadResult<Hits> {
    let hdr = range(b, at as u64, 0x88, "BNSH header")?;
    let h = &b[hdr.start..];
    if h.get(0x60..0x64) != Some(b"grsc") {
        return Err(ReadError::new(
            WarnKind::BadHeader,
            at + 0x60,
            "no grsc block at +0x60",
        ));
    }
    let size = need_u32(h, 0x1C, "file size")? as usize;
    if size < 0x88 || size > h.len() {
        return Err(ReadError::new(
            WarnKind::Truncated,
            at + 0x1C,
            format!("BNSH says {size:#x} bytes, {:#x} remain", h.len()),
        ));
    }
    let f = &h[..size];
    let count = need_u32(f, 0x7C, "variation count")? as u64;
    let table = need_u64(f, 0x80, "variation table")?;
    range(f, table, count.saturating_mul(0x40), "variation table").map_err(|e| e.shifted(at))?;
    let mut hits = Hits::default();
    let mut ex = Extractor::new(size);
    for v in 0..count {
        let ve = (table + v * 0x40) as usize;
        let prog = need_u64(f, ve + 0x10, "program pointer").map_err(|e| e.shifted(at))?;
        if prog == 0 {
            continue;
        }
        let p = match range(f, prog, 0x38, "binary program") {
            Ok(r) => r.start,
            Err(e) => {
                hits.errors.push(e.shifted(at));
                continue;
            }
        };
        if f[p + 1] == 3 {
            continue; // source-text program, no machine code
        }
        let mut group = Vec::new();
        for (slot, stage) in Stage::ALL.into_iter().enumerate() {
            let sp = need_u64(f, p + 8 + slot * 8, "stage pointer").map_err(|e| e.shifted(at))?;
            if sp == 0 {
                continue;
            }
            match stage_at(&mut ex, f, sp, stage) {
                Ok(mut piece) => {
                    piece.shift(at);
                    let index = format!("var{v}.{stage}");
                    hits.push_in_group(&mut group, stage, piece, at as u64, index);
                }
                Err(e) => hits.errors.push(e.shifted(at)),
            }
        }
        hits.pair_vertex_with_next_fragment(&group);
    }
    Ok(hits)
}

fn stage_at(
    ex: &mut Extractor,
    f: &[u8],
    sp: u64,
    stage: Stage,
) -> ReadResult<crate::shader::Piece> {
    let d = range(f, sp, 0x20, "stage descriptor")?.start;
    let ctl = need_u64(f, d + 8, "control pointer")?;
    let code = need_u64(f, d + 0x10, "code pointer")?;
    let code_size = u32le(f, d + 0x18).unwrap_or(0) as u64;
    let ctl_size = u32le(f, d + 0x1C).unwrap_or(0) as u64;
    let c = range(f, ctl, ctl_size, "control section")?;
    let k = range(f, code, code_size, "code area")?;
    ex.get(
        f,
        Spot {
            ctl: c.start,
            ctl_end: c.end,
            ctl_size: Some(ctl_size as usize),
            code: k.start,
            code_end: k.end,
            claimed: Some(stage),
            allow_bare: true,
        },
    )
}
