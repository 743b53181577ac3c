//! Plain ELF64 mains: PT_LOAD segments placed at their addresses (lowest address at offset 0).

use crate::bytes::{range, u16le, u32le, u64le};
use crate::error::{ReadError, ReadResult, WarnKind};

/// Whether `b` starts with an ELF identification.
pub fn is(b: &[u8]) -> bool {
    b.starts_with(b"\x7fELF")
}

/// The flat image of a little-endian ELF64 file.
pub fn flat_image(b: &[u8], cap: u64) -> ReadResult<Vec<u8>> {
    let t = |o: usize| ReadError::new(WarnKind::Truncated, o, "ELF header cut short");
    if b.get(4) != Some(&2) || b.get(5) != Some(&1) {
        return Err(ReadError::new(
            WarnKind::BadHeader,
            4,
            "only little-endian ELF64 is read",
        ));
    }
    let phoff = u64le(b, 0x20).ok_or_else(|| t(0x20))?;
    let phentsize = u16le(b, 0x36).ok_or_else(|| t(0x36))? as u64;
    let phnum = u16le(b, 0x38).ok_or_else(|| t(0x38))? as u64;
    if phentsize < 0x38 {
        return Err(ReadError::new(
            WarnKind::BadHeader,
            0x36,
            "program header entries too small",
        ));
    }
    let mut loads = Vec::new();
    for i in 0..phnum {
        let p = range(b, phoff + i * phentsize, 0x38, "program header")?.start;
        if u32le(b, p) != Some(1) {
            continue;
        }
        let off = u64le(b, p + 8).unwrap_or(0);
        let vaddr = u64le(b, p + 0x10).unwrap_or(0);
        let filesz = u64le(b, p + 0x20).unwrap_or(0);
        let memsz = u64le(b, p + 0x28).unwrap_or(0);
        loads.push((off, vaddr, filesz, memsz.max(filesz)));
    }
    let base = loads.iter().map(|l| l.1).min().unwrap_or(0);
    let mut size = 0u64;
    for &(_, v, _, m) in &loads {
        size = size.max(
            (v - base)
                .checked_add(m)
                .ok_or_else(|| ReadError::new(WarnKind::BadHeader, 0, "segment end overflows"))?,
        );
    }
    if size > cap {
        return Err(ReadError::new(
            WarnKind::SizeCap,
            0,
            format!("image of {size:#x} bytes over limit {cap:#x}"),
        ));
    }
    let mut img = vec![0u8; size as usize];
    for (off, v, f, _) in loads {
        let src = &b[range(b, off, f, "PT_LOAD segment")?];
        let d = (v - base) as usize;
        img[d..d + src.len()].copy_from_slice(src);
    }
    Ok(img)
}
