//! SARC archives (`*.sarc`, `*.pack`, `*.blarc`, inside `.szs`): member names and byte ranges.

use std::borrow::Cow;

use super::{ContainerReader, Found, Inner, Sniff};
use crate::error::{ReadError, ReadResult, WarnKind};

/// SARC magic.
pub const MAGIC: &[u8; 4] = b"SARC";

/// The registry's SARC reader: every member, scanned again as `//name` (in parallel).
pub const READER: ContainerReader = ContainerReader {
    name: "sarc",
    sniff: Sniff::Magic(0, MAGIC),
    read: |i| {
        let inner = members(i.bytes)?
            .into_iter()
            .map(|m| Inner {
                member: Some(m.name),
                bytes: Cow::Borrowed(&i.bytes[m.range]),
            })
            .collect();
        Ok(Found::Inner {
            inner,
            problems: Vec::new(),
        })
    },
};

/// One member: its name (or `hash_XXXXXXXX`) and its byte range in the archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Member name.
    pub name: String,
    /// Byte range inside the archive buffer.
    pub range: std::ops::Range<usize>,
}

/// Lists the members of the SARC at the start of `b` (either byte order).
pub fn members(b: &[u8]) -> ReadResult<Vec<Member>> {
    let bad = |off: usize, d: &str| ReadError::new(WarnKind::BadHeader, off, d.to_string());
    if b.len() < 0x20 {
        return Err(ReadError::new(
            WarnKind::Truncated,
            0,
            "SARC header cut short",
        ));
    }
    let be = match (b[6], b[7]) {
        (0xFF, 0xFE) => false,
        (0xFE, 0xFF) => true,
        _ => return Err(bad(6, "byte-order mark is neither FF FE nor FE FF")),
    };
    let r16 = |o: usize| -> ReadResult<usize> {
        let s = b
            .get(o..o + 2)
            .ok_or_else(|| ReadError::new(WarnKind::Truncated, o, "SARC field past the end"))?;
        Ok(if be {
            u16::from_be_bytes([s[0], s[1]])
        } else {
            u16::from_le_bytes([s[0], s[1]])
        } as usize)
    };
    let r32 = |o: usize| -> ReadResult<usize> {
        let s = b
            .get(o..o + 4)
            .ok_or_else(|| ReadError::new(WarnKind::Truncated, o, "SARC field past the end"))?;
        let a = [s[0], s[1], s[2], s[3]];
        Ok(if be {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        } as usize)
    };
    if r16(4)? != 0x14 {
        return Err(bad(4, "SARC header size is not 0x14"));
    }
    let file_size = r32(8)?;
    let data_off = r32(0xC)?;
    if file_size > b.len() {
        return Err(ReadError::new(
            WarnKind::Truncated,
            8,
            format!("SARC says {file_size:#x} bytes, have {:#x}", b.len()),
        ));
    }
    if &b[0x14..0x18] != b"SFAT" || r16(0x18)? != 0xC {
        return Err(bad(0x14, "no SFAT header"));
    }
    let count = r16(0x1A)?;
    let nodes = 0x20usize;
    let sfnt = nodes + count * 0x10;
    if sfnt + 8 > file_size || b.get(sfnt..sfnt + 4) != Some(b"SFNT") {
        return Err(bad(sfnt, "node table does not end in an SFNT header"));
    }
    let names = sfnt + 8;
    if data_off > file_size || data_off < names {
        return Err(bad(0xC, "data offset outside the archive"));
    }
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let n = nodes + i * 0x10;
        let hash = r32(n)?;
        let attr = r32(n + 4)?;
        let start = r32(n + 8)?;
        let end = r32(n + 0xC)?;
        if start > end || end > file_size - data_off {
            return Err(bad(
                n + 8,
                &format!("member {i} range {start:#x}..{end:#x} outside the data"),
            ));
        }
        let name = if attr & 0x0100_0000 != 0 {
            let at = names + (attr & 0xFFFF) * 4;
            let tail = b
                .get(at..data_off)
                .ok_or_else(|| bad(n + 4, "name offset outside the name table"))?;
            let len = tail.iter().position(|&c| c == 0).unwrap_or(tail.len());
            String::from_utf8_lossy(&tail[..len]).into_owned()
        } else {
            format!("hash_{hash:08x}")
        };
        out.push(Member {
            name,
            range: data_off + start..data_off + end,
        });
    }
    Ok(out)
}
