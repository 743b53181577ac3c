//! RE Engine shader definitions (`SDF\0`, in KPKA PAKs): 0x108-byte entries of up to six
//! stages, each a control section and code area; an entry's vertex and pixel stages pair.

use super::{ContainerReader, Found, Sniff};
use crate::bytes::{need_u32, need_u64, range, u16le};
use crate::error::{ReadError, ReadResult, WarnKind};
use crate::shader::{ContainerKind, Extractor, Hits, Piece, Spot};
use crate::stage::Stage;

/// SDF magic.
pub const MAGIC: &[u8; 4] = b"SDF\0";

/// Size of one entry; the entries start at +0x10.
pub const ENTRY_SIZE: usize = 0x108;

/// Offset of the six stage offsets inside an entry.
pub const STAGES_AT: usize = 0x10;

/// The stages of an entry's six offsets, in order (vertex, hull, domain, geometry, pixel,
/// compute: BNSH's order).
pub const STAGES: [Stage; 6] = Stage::ALL;

/// The registry's SDF reader.
pub const READER: ContainerReader = ContainerReader {
    name: ContainerKind::Sdf.as_str(),
    sniff: Sniff::Magic(0, MAGIC),
    read: |i| read(i.bytes).map(|h| Found::shaders(ContainerKind::Sdf, h)),
};

/// Reads the SDF at the start of `b`: every entry's stages (a bad stage or entry is an error
/// in the hits; the others are kept). Version 0 is an empty definition.
pub fn read(b: &[u8]) -> ReadResult<Hits> {
    range(b, 0, 0x10, "SDF header")?;
    let version = u16le(b, 4).unwrap_or(0);
    let count = u16le(b, 6).unwrap_or(0) as usize;
    let mut hits = Hits::default();
    match version {
        0 => return Ok(hits),
        1 => {}
        v => {
            return Err(ReadError::new(
                WarnKind::BadHeader,
                4,
                format!("SDF version {v} (read: 0 empty, 1)"),
            ))
        }
    }
    let fits = (b.len() - 0x10) / ENTRY_SIZE;
    if count > fits {
        hits.errors.push(ReadError::new(
            WarnKind::Truncated,
            6,
            format!("{count} entries of {ENTRY_SIZE:#x} bytes, {fits} fit"),
        ));
    }
    let mut ex = Extractor::new(b.len());
    for d in 0..count.min(fits) {
        let e = 0x10 + d * ENTRY_SIZE;
        let mut group = Vec::new();
        for (slot, stage) in STAGES.into_iter().enumerate() {
            let at = e + STAGES_AT + slot * 8;
            let off = need_u64(b, at, "stage offset")?;
            if off == 0 {
                continue;
            }
            match stage_at(&mut ex, b, at, off, stage) {
                Ok(piece) => {
                    let index = format!("def{d}.{stage}");
                    hits.push_in_group(&mut group, stage, piece, 0, index);
                }
                Err(x) => hits.errors.push(ReadError {
                    detail: format!("definition {d} {stage}: {}", x.detail),
                    ..x
                }),
            }
        }
        hits.pair_vertex_with_next_fragment(&group);
    }
    Ok(hits)
}

/// The stage at `off` (read from the entry field at `field`): `{u32 control length, u32 code
/// length}`, the control section, the code area (compute: without its header).
fn stage_at(
    ex: &mut Extractor,
    b: &[u8],
    field: usize,
    off: u64,
    stage: Stage,
) -> ReadResult<Piece> {
    let head = range(b, off, 8, "stage header").map_err(|x| ReadError {
        offset: field as u64,
        ..x
    })?;
    let ctl_len = need_u32(b, head.start, "control length")? as u64;
    let code_len = need_u32(b, head.start + 4, "code length")? as u64;
    let ctl = range(b, head.end as u64, ctl_len, "control section")?;
    let code = range(b, ctl.end as u64, code_len, "code area")?;
    ex.get(
        b,
        Spot {
            ctl: ctl.start,
            ctl_end: ctl.end,
            ctl_size: Some(ctl.len()),
            code: code.start,
            code_end: code.end,
            claimed: Some(stage),
            allow_bare: stage == Stage::Compute,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        let mut h = b"SDF\0\0\0\0\0\0\0\0\0\0\0\0\0".to_vec();
        assert!(read(&h).unwrap().shaders.is_empty());
        h[4] = 2;
        assert_eq!(read(&h).unwrap_err().offset, 4);
        h[4] = 1;
        h[6] = 3;
        let r = read(&h).unwrap();
        assert_eq!(r.errors[0].kind, WarnKind::Truncated);
        assert!(read(&h[..8]).is_err());
        // One entry whose vertex offset points past the end: an error naming the field.
        h[6] = 1;
        h.resize(0x10 + ENTRY_SIZE, 0);
        h[0x20..0x28].copy_from_slice(&0x9999u64.to_le_bytes());
        let r = read(&h).unwrap();
        assert_eq!(r.errors.len(), 1);
        assert_eq!(r.errors[0].offset, 0x20);
    }
}
