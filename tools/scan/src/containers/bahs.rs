//! agl BAHS shader archives (`*.sharcb`): 16-byte binary records pair code with a control section.

use super::{ContainerReader, Found, Sniff};
use crate::bytes::{need_u32, u32le};
use crate::error::{ReadError, ReadResult, WarnKind};
use crate::shader::{ContainerKind, Extractor, Hits, Spot};

/// BAHS magic.
pub const MAGIC: &[u8; 4] = b"BAHS";

/// Control sizes a record may carry (Switch 1: 0x880, 0x88C; version 9: 0x848).
pub const CONTROL_SIZES: [u32; 3] = [0x848, 0x880, 0x88C];

/// The registry's BAHS reader.
pub const READER: ContainerReader = ContainerReader {
    name: ContainerKind::Bahs.as_str(),
    sniff: Sniff::Magic(0, MAGIC),
    read: |i| read(i.bytes).map(|h| Found::shaders(ContainerKind::Bahs, h)),
};

/// Reads every binary record of the BAHS at the start of `b`. Records are
/// `{code offset in the code region, 0, control size, signed offset from the record to its
/// control section}`; they are found by scanning outside the code region and checking each.
pub fn read(b: &[u8]) -> ReadResult<Hits> {
    let size = (need_u32(b, 8, "file size")? as usize).min(b.len());
    let region_size = need_u32(b, 0x18, "code region size")? as usize;
    let region_off = need_u32(b, 0x1C, "code region offset")? as usize;
    let region_end = region_off
        .checked_add(region_size)
        .filter(|&e| e <= size)
        .ok_or_else(|| {
            ReadError::new(
                WarnKind::BadHeader,
                0x18,
                format!("code region {region_off:#x}+{region_size:#x} outside {size:#x} bytes"),
            )
        })?;
    let f = &b[..size];
    let mut hits = Hits::default();
    let mut ex = Extractor::new(b.len());
    let mut group = Vec::new();
    let mut next = 0x20usize;
    for r in candidates(f) {
        if r < next || r + 16 > size || (r >= region_off && r < region_end) {
            continue;
        }
        if let Some((spot, code_rel)) = record(f, r, region_off, region_end) {
            match ex.get(f, spot) {
                Ok(piece) => {
                    let index = format!("rec{r:#x}.code{code_rel:#x}");
                    hits.push_in_group(&mut group, piece.stage, piece, 0, index);
                    next = r + 16;
                }
                Err(e) => hits.errors.push(e),
            }
        }
    }
    hits.pair_vertex_with_next_fragment(&group);
    Ok(hits)
}

/// 4-byte-aligned offsets where a record may start: `{_, 0, control size}` with a Switch 1
/// control size (found with memmem), or every such offset when the file holds an NVN2 control
/// section (their sizes vary). Sorted, without repeats.
fn candidates(f: &[u8]) -> Vec<usize> {
    let magic = crate::control::CONTROL_MAGIC.to_le_bytes();
    let nvn2 = memchr::memmem::find_iter(f, &magic)
        .any(|c| u32le(f, c + 4) == Some(crate::control::NVN2_VERSION));
    if nvn2 {
        return (0..f.len()).step_by(4).collect();
    }
    let mut v = Vec::new();
    for size in CONTROL_SIZES {
        let mut pat = [0u8; 8];
        pat[4..].copy_from_slice(&size.to_le_bytes());
        v.extend(
            memchr::memmem::find_iter(f, &pat)
                .filter(|&h| h >= 4 && (h - 4) % 4 == 0)
                .map(|h| h - 4),
        );
    }
    v.sort_unstable();
    v.dedup();
    v
}

fn record(f: &[u8], r: usize, region_off: usize, region_end: usize) -> Option<(Spot, usize)> {
    let code_rel = u32le(f, r)? as usize;
    let zero = u32le(f, r + 4)?;
    let ctl_size = u32le(f, r + 8)?;
    let rel = u32le(f, r + 12)? as i32 as i64;
    let nvn2_size = (0x64..=0x200).contains(&ctl_size) && ctl_size.is_multiple_of(4);
    if zero != 0 || !(CONTROL_SIZES.contains(&ctl_size) || nvn2_size) {
        return None;
    }
    let ctl = r as i64 + rel;
    if ctl < 0 || ctl as usize + ctl_size as usize > f.len() {
        return None;
    }
    let ctl = ctl as usize;
    if u32le(f, ctl)? != crate::control::CONTROL_MAGIC {
        return None;
    }
    if nvn2_size && u32le(f, ctl + 4)? != crate::control::NVN2_VERSION {
        return None;
    }
    let code = region_off.checked_add(code_rel)?;
    if code >= region_end {
        return None;
    }
    Some((
        Spot {
            ctl,
            ctl_end: ctl + ctl_size as usize,
            ctl_size: Some(ctl_size as usize),
            code,
            code_end: region_end,
            claimed: None,
            allow_bare: true,
        },
        code_rel,
    ))
}
