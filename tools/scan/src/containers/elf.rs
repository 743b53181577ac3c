//! Plain ELF64 mains: PT_LOAD segments placed at their addresses (lowest address at offset 0).
//! The header and program headers are read with the `object` crate.

use object::elf::{FileHeader64, ProgramHeader64, ELFCLASS64, ELFDATA2LSB, PT_LOAD};
use object::read::elf::{FileHeader as _, ProgramHeader as _};
use object::{LittleEndian as LE, ReadRef as _};

use super::{ContainerReader, Found, Sniff};
use crate::error::{ReadError, ReadResult, WarnKind};

/// The registry's ELF reader: the image built from the PT_LOAD segments (`|elf`).
pub const READER: ContainerReader = ContainerReader {
    name: "elf",
    sniff: Sniff::Magic(0, b"\x7fELF"),
    read: |i| flat_image(i.bytes, i.cap).map(Found::layer),
};

/// The flat image of a little-endian ELF64 file.
///
/// The identification's version byte is not checked (`object`'s `FileHeader::parse` would ask
/// for 1): only the program headers are needed, and a main whose version byte is off still
/// has them.
pub fn flat_image(b: &[u8], cap: u64) -> ReadResult<Vec<u8>> {
    if b.get(4) != Some(&ELFCLASS64) || b.get(5) != Some(&ELFDATA2LSB) {
        return Err(ReadError::new(
            WarnKind::BadHeader,
            4,
            "only little-endian ELF64 is read",
        ));
    }
    let hdr: &FileHeader64<LE> = b
        .read_at(0)
        .map_err(|()| ReadError::new(WarnKind::Truncated, 0, "ELF header cut short"))?;
    let entry = std::mem::size_of::<ProgramHeader64<LE>>();
    if hdr.e_phnum(LE) != 0 && usize::from(hdr.e_phentsize(LE)) != entry {
        return Err(ReadError::new(
            WarnKind::BadHeader,
            0x36,
            format!(
                "program header entries of {:#x} bytes, not {entry:#x}",
                hdr.e_phentsize(LE)
            ),
        ));
    }
    let phoff = hdr.e_phoff(LE);
    let phdrs = hdr.program_headers(LE, b).map_err(|e| {
        ReadError::new(
            WarnKind::Truncated,
            phoff.min(usize::MAX as u64) as usize,
            format!("program headers: {e}"),
        )
    })?;
    let loads: Vec<&ProgramHeader64<LE>> =
        phdrs.iter().filter(|p| p.p_type(LE) == PT_LOAD).collect();
    let base = loads.iter().map(|p| p.p_vaddr(LE)).min().unwrap_or(0);
    let mut size = 0u64;
    for p in &loads {
        let end = (p.p_vaddr(LE) - base)
            .checked_add(p.p_memsz(LE).max(p.p_filesz(LE)))
            .ok_or_else(|| ReadError::new(WarnKind::BadHeader, 0, "segment end overflows"))?;
        size = size.max(end);
    }
    if size > cap {
        return Err(ReadError::new(
            WarnKind::SizeCap,
            0,
            format!("image of {size:#x} bytes over limit {cap:#x}"),
        ));
    }
    let mut img = vec![0u8; size as usize];
    for p in loads {
        let (off, len) = (p.p_offset(LE), p.p_filesz(LE));
        let src = p.data(LE, b).map_err(|()| {
            ReadError::new(
                WarnKind::Truncated,
                off.min(usize::MAX as u64) as usize,
                format!(
                    "PT_LOAD segment ({len:#x} bytes at {off:#x}) runs past the end ({:#x})",
                    b.len()
                ),
            )
        })?;
        let d = (p.p_vaddr(LE) - base) as usize;
        img[d..d + src.len()].copy_from_slice(src);
    }
    Ok(img)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ELF64 header with `phnum` program headers of `phentsize` bytes at 0x40.
    fn header(phnum: u16, phentsize: u16) -> Vec<u8> {
        let mut e = vec![0u8; 0x40];
        e[..6].copy_from_slice(b"\x7fELF\x02\x01");
        e[0x20..0x28].copy_from_slice(&0x40u64.to_le_bytes());
        e[0x36..0x38].copy_from_slice(&phentsize.to_le_bytes());
        e[0x38..0x3A].copy_from_slice(&phnum.to_le_bytes());
        e
    }

    /// A PT_LOAD program header.
    fn load(off: u64, vaddr: u64, filesz: u64, memsz: u64) -> Vec<u8> {
        let mut p = vec![0u8; 0x38];
        p[..4].copy_from_slice(&PT_LOAD.to_le_bytes());
        for (at, v) in [(8, off), (0x10, vaddr), (0x20, filesz), (0x28, memsz)] {
            p[at..at + 8].copy_from_slice(&v.to_le_bytes());
        }
        p
    }

    #[test]
    fn segments_at_their_addresses() {
        let mut e = header(2, 0x38);
        e.extend(load(0xB0, 0x1000, 4, 8));
        e.extend(load(0xB4, 0x1010, 2, 2));
        e.extend_from_slice(b"abcdXY");
        let img = flat_image(&e, 1 << 20).unwrap();
        assert_eq!(img, b"abcd\0\0\0\0\0\0\0\0\0\0\0\0XY");
        // Any alignment of the buffer (an archive member, a sub-slice).
        let mut shifted = vec![0u8];
        shifted.extend_from_slice(&e);
        assert_eq!(flat_image(&shifted[1..], 1 << 20).unwrap(), img);
    }

    #[test]
    fn hostile_headers_are_errors() {
        let kind = |b: &[u8], cap| flat_image(b, cap).unwrap_err().kind;
        let mut e = header(1, 0x38);
        e.extend(load(0x78, 0, 0x10, 0x10));
        // Every truncation: the header, the program headers, the segment.
        for cut in 6..e.len() + 0x10 {
            assert_eq!(kind(&e[..cut.min(e.len())], 1 << 20), WarnKind::Truncated);
        }
        assert_eq!(kind(b"\x7fELF\x01\x01", 1 << 20), WarnKind::BadHeader);
        assert_eq!(kind(&header(1, 0x20), 1 << 20), WarnKind::BadHeader);
        // 0xFFFF headers (PN_XNUM without section 0) and headers past the end.
        assert_eq!(kind(&header(0xFFFF, 0x38), 1 << 20), WarnKind::Truncated);
        assert_eq!(kind(&header(0x7000, 0x38), 1 << 20), WarnKind::Truncated);
        let mut big = header(2, 0x38);
        big.extend(load(0, 0, 0, 1 << 40));
        big.extend(load(0, u64::MAX - 4, 0, 0x10));
        assert_eq!(kind(&big, 1 << 20), WarnKind::BadHeader);
        let mut over = header(1, 0x38);
        over.extend(load(0, 0, 0, 1 << 21));
        assert_eq!(kind(&over, 1 << 20), WarnKind::SizeCap);
        // No program headers: an empty image.
        assert_eq!(flat_image(&header(0, 0), 1 << 20).unwrap(), b"");
    }
}
