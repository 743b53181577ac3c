//! MSHD shader data (`.bshdat`, MercurySteam): control sections each followed (after optional
//! text) by the next code-area header; stages alternate vertex / pixel and pair two by two.

use super::{ContainerReader, Found, Sniff};
use crate::bytes::{align_up, u32le};
use crate::code::{COMPUTE_MAGIC, GFX_MAGIC};
use crate::control::CONTROL_MAGIC;
use crate::error::ReadResult;
use crate::shader::{extract, ContainerKind, Hit, Hits, Spot};
use crate::stage::Stage;

/// MSHD magic.
pub const MAGIC: &[u8; 4] = b"MSHD";

/// The registry's MSHD reader.
pub const READER: ContainerReader = ContainerReader {
    name: ContainerKind::Mshd.as_str(),
    sniff: Sniff::Magic(0, MAGIC),
    read: |i| read(i.bytes).map(|h| Found::shaders(ContainerKind::Mshd, h)),
};

/// Reads every stage of the MSHD file `b`.
pub fn read(b: &[u8]) -> ReadResult<Hits> {
    let mut hits = Hits::default();
    let mut stages = Vec::new();
    let magic = CONTROL_MAGIC.to_le_bytes();
    let mut p = 4usize;
    while p + 4 <= b.len() {
        // Jump to the next 4-byte-aligned control magic.
        match memchr::memmem::find_iter(&b[p..], &magic)
            .map(|h| p + h)
            .find(|h| h % 4 == 0)
        {
            Some(h) => p = h,
            None => break,
        }
        let len = u32le(b, p + 0x20).unwrap_or(0) as usize;
        let mut c = align_up(p.saturating_add(len.max(4)), 4);
        let mut found = None;
        while c + 4 <= b.len() {
            let m = u32le(b, c).unwrap_or(0);
            if m == GFX_MAGIC || m == COMPUTE_MAGIC {
                found = Some(c);
                break;
            }
            if m == CONTROL_MAGIC {
                break;
            }
            c += 4;
        }
        let Some(code) = found else {
            p += 4;
            continue;
        };
        let spot = Spot {
            ctl: p,
            ctl_end: b.len(),
            ctl_size: None,
            code,
            code_end: b.len(),
            claimed: None,
            allow_bare: false,
        };
        match extract(b, spot) {
            Ok(piece) => {
                let next = piece.code_at.end;
                stages.push((piece.stage, piece.key.clone()));
                hits.shaders.push(Hit {
                    piece,
                    offset: 0,
                    index: format!("stage{}", stages.len() - 1),
                });
                p = align_up(next, 4);
            }
            Err(e) => {
                hits.errors.push(e);
                p += 4;
            }
        }
    }
    for pair in stages.chunks(2) {
        if let [(Stage::Vertex, v), (Stage::Fragment, f)] = pair {
            hits.pairs.push((v.clone(), f.clone()));
        }
    }
    Ok(hits)
}
