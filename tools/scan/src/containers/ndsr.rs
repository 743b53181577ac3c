//! agl NDSR packs (`agl_ndsr.pck`, DK Bananza's upscaler): 16-byte records from +0x10,
//! `{control offset, control length << 4 | type, code offset, (code length / 16) << 8 | type}`,
//! up to an all-zero record. Type: NVN stage numbering (0 vertex, 1 pixel, 5 compute).

use super::{ContainerReader, Found, Sniff};
use crate::bytes::u32le;
use crate::error::{ReadError, ReadResult, WarnKind};
use crate::shader::{ContainerKind, Extractor, Hits, Spot};
use crate::stage::Stage;

/// NDSR magic.
pub const MAGIC: &[u8; 4] = b"NDSR";

/// File name agl gives the pack.
pub const FILE_NAME: &str = "agl_ndsr.pck";

/// Whether `b` (named `name`) is an NDSR pack.
pub fn is(b: &[u8], name: &str) -> bool {
    b.starts_with(MAGIC) || name.ends_with(FILE_NAME)
}

/// The registry's NDSR reader (by magic, or by agl's file name).
pub const READER: ContainerReader = ContainerReader {
    name: ContainerKind::Ndsr.as_str(),
    sniff: Sniff::By(|i| is(i.bytes, i.name)),
    read: |i| read(i.bytes).map(|h| Found::shaders(ContainerKind::Ndsr, h)),
};

/// Reads every record of the pack `b`.
pub fn read(b: &[u8]) -> ReadResult<Hits> {
    let mut hits = Hits::default();
    let mut ex = Extractor::new(b.len());
    let mut group = Vec::new();
    let mut r = 0x10usize;
    loop {
        let (Some(co), Some(cl), Some(ko), Some(kl)) = (
            u32le(b, r),
            u32le(b, r + 4),
            u32le(b, r + 8),
            u32le(b, r + 12),
        ) else {
            return Err(ReadError::new(
                WarnKind::Truncated,
                r,
                "record table has no terminating zero record",
            ));
        };
        if co == 0 && cl == 0 && ko == 0 && kl == 0 {
            break;
        }
        let (t1, t2) = (cl & 0xF, kl & 0xFF);
        let ctl_len = (cl >> 4) as usize;
        let code_len = (kl >> 8) as usize * 16;
        let claimed = Stage::from_nvn(t1);
        if t1 != t2 || claimed.is_none() {
            hits.errors.push(ReadError::new(
                WarnKind::BadHeader,
                r,
                format!("record types {t1} / {t2} unknown or disagree"),
            ));
            r += 16;
            continue;
        }
        let (co, ko) = (co as usize, ko as usize);
        let spot = Spot {
            ctl: co,
            ctl_end: co.saturating_add(ctl_len),
            ctl_size: Some(ctl_len),
            code: ko,
            code_end: ko.saturating_add(code_len),
            claimed,
            allow_bare: true,
        };
        match ex.get(b, spot) {
            Ok(piece) => {
                let index = format!("rec{}", (r - 0x10) / 16);
                hits.push_in_group(&mut group, piece.stage, piece, 0, index);
            }
            Err(e) => hits.errors.push(e.shifted(0)),
        }
        r += 16;
    }
    hits.pair_vertex_with_next_fragment(&group);
    Ok(hits)
}
