//! Unreal LSLG records (one decoded shader of a `*.ushaderbytecode` archive): `LSLG`, a stage
//! tag, a header with the source name, then u32 code length, the code area, u32 control
//! length, the control section and a 24- or 29-byte tail, all at unaligned offsets.

use super::{ContainerReader, Found, Sniff};
use crate::bytes::u32le;
use crate::control::CONTROL_MAGIC;
use crate::error::{ReadError, ReadResult, WarnKind};
use crate::shader::{ContainerKind, Extractor, Hit, Hits, Spot};
use crate::stage::Stage;

/// LSLG magic (u32 0x474C534C, UE OpenGL's GLSL marker).
pub const MAGIC: &[u8; 4] = b"LSLG";

/// Stage tags after the magic (the bytes of UE's u16 frequency marker).
pub const TAGS: [(&[u8; 2], Stage); 6] = [
    (b"SV", Stage::Vertex),
    (b"SP", Stage::Fragment),
    (b"SC", Stage::Compute),
    (b"SG", Stage::Geometry),
    (b"SH", Stage::TessControl),
    (b"SD", Stage::TessEval),
];

/// Tail lengths after the control section (seed 000); another length is a warning.
pub const TAILS: [usize; 2] = [24, 29];

/// Bytes before the header: magic and stage tag.
const HEAD: usize = 6;

/// The registry's LSLG reader.
pub const READER: ContainerReader = ContainerReader {
    name: ContainerKind::Lslg.as_str(),
    sniff: Sniff::Magic(0, MAGIC),
    read: |i| read(i.bytes).map(|h| Found::shaders(ContainerKind::Lslg, h)),
};

/// The stage the tag of the LSLG record at the start of `b` names (`None`: no record there, or
/// an unknown tag).
pub fn stage(b: &[u8]) -> Option<Stage> {
    if !b.starts_with(MAGIC) {
        return None;
    }
    let tag = b.get(4..HEAD)?;
    TAGS.iter().find(|(t, _)| &t[..] == tag).map(|(_, s)| *s)
}

/// Reads the one shader of the LSLG record `b`. The header between the tag and the code length
/// is not public, so the record is found from its end: a control magic whose u32 before it is
/// the control length, with the code area of the control's code size (+0x704) before that and
/// that size as the u32 before the code.
pub fn read(b: &[u8]) -> ReadResult<Hits> {
    let stage = stage(b).ok_or_else(|| {
        ReadError::new(
            WarnKind::BadHeader,
            4,
            format!(
                "stage tag {:02x?} is none of SV SP SC SG SH SD",
                b.get(4..HEAD)
            ),
        )
    })?;
    let mut hits = Hits::default();
    let mut ex = Extractor::new(b.len());
    let magic = CONTROL_MAGIC.to_le_bytes();
    for c in memchr::memmem::find_iter(b, &magic).filter(|&c| c >= HEAD + 8) {
        let Some(spot) = frame(b, c, stage) else {
            continue;
        };
        match ex.get(b, spot) {
            Ok(piece) => {
                let tail = b.len() - spot.ctl_end;
                if !TAILS.contains(&tail) {
                    hits.errors.push(ReadError::new(
                        WarnKind::BadHeader,
                        spot.ctl_end,
                        format!("tail of {tail} bytes after the control section, not 24 or 29"),
                    ));
                }
                let index = source_name(&b[HEAD..spot.code - 4]).unwrap_or("lslg");
                hits.shaders.push(Hit {
                    piece,
                    offset: 0,
                    index: index.to_string(),
                });
                return Ok(hits);
            }
            Err(e) => hits.errors.push(e),
        }
    }
    if hits.errors.is_empty() {
        hits.errors.push(ReadError::new(
            WarnKind::BadShader,
            HEAD,
            "no code length, code area, control length and control section in the record",
        ));
    }
    Ok(hits)
}

/// The spot of a control section at `c`: u32 control length at c − 4, the code area (of the
/// control's code size) right before it, its u32 length right before the code.
fn frame(b: &[u8], c: usize, stage: Stage) -> Option<Spot> {
    let ctl_len = u32le(b, c - 4)? as usize;
    let code_len = u32le(b, c.checked_add(0x704)?)? as usize;
    let code = (c - 4).checked_sub(code_len)?;
    let len_at = code.checked_sub(4)?;
    if len_at < HEAD || u32le(b, len_at)? as usize != code_len {
        return None;
    }
    let ctl_end = c.checked_add(ctl_len).filter(|&e| e <= b.len())?;
    Some(Spot {
        ctl: c,
        ctl_end,
        ctl_size: Some(ctl_len),
        code,
        code_end: c - 4,
        claimed: Some(stage),
        allow_bare: stage == Stage::Compute,
    })
}

/// The source name in the header (`/Engine/Private/….usf:MainPS`): the printable run around
/// the first `.usf`.
fn source_name(h: &[u8]) -> Option<&str> {
    let at = memchr::memmem::find(h, b".usf")?;
    let printable = |c: &u8| (0x21..0x7F).contains(c);
    let start = h[..at]
        .iter()
        .rposition(|c| !printable(c))
        .map_or(0, |p| p + 1);
    let end = h[at..]
        .iter()
        .position(|c| !printable(c))
        .map_or(h.len(), |p| at + p);
    std::str::from_utf8(&h[start..end]).ok()
}
