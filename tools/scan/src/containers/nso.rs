//! NSO executables (ExeFS `main`): LZ4-compressed segments laid out as the flat memory image.

use sha2::{Digest, Sha256};

use super::{ContainerReader, Found, Sniff};
use crate::bytes::{need_u32, range};
use crate::error::{ReadError, ReadResult, WarnKind};

/// NSO magic.
pub const MAGIC: &[u8; 4] = b"NSO0";

/// The registry's NSO reader: the decoded image (`|nso`); hash mismatches are problems.
pub const READER: ContainerReader = ContainerReader {
    name: "nso",
    sniff: Sniff::Magic(0, MAGIC),
    read: |i| flat_image(i.bytes, i.cap).map(|(img, p)| Found::layer(img).with_problems(p)),
};

/// The flat image (text at 0, then rodata and data at their memory offsets) and any
/// non-fatal problems (segment hash mismatches).
pub fn flat_image(b: &[u8], cap: u64) -> ReadResult<(Vec<u8>, Vec<ReadError>)> {
    if b.len() < 0x100 {
        return Err(ReadError::new(
            WarnKind::Truncated,
            0,
            "NSO header cut short",
        ));
    }
    let flags = need_u32(b, 0xC, "flags")?;
    let mut segs = Vec::new();
    let mut image_size = 0u64;
    for i in 0..3usize {
        let h = 0x10 + i * 0x10;
        let file_off = need_u32(b, h, "segment file offset")? as u64;
        let mem_off = need_u32(b, h + 4, "segment memory offset")? as u64;
        let size = need_u32(b, h + 8, "segment size")? as u64;
        let file_size = need_u32(b, 0x60 + i * 4, "segment file size")? as u64;
        image_size = image_size.max(mem_off + size);
        segs.push((i, file_off, mem_off, size, file_size));
    }
    if image_size > cap {
        return Err(ReadError::new(
            WarnKind::SizeCap,
            0x10,
            format!("image of {image_size:#x} bytes over limit {cap:#x}"),
        ));
    }
    let mut img = vec![0u8; image_size as usize];
    let mut warnings = Vec::new();
    for (i, file_off, mem_off, size, file_size) in segs {
        let dst = &mut img[mem_off as usize..(mem_off + size) as usize];
        let compressed = flags >> i & 1 != 0;
        if compressed {
            let src = &b[range(b, file_off, file_size, "compressed segment")?];
            let n = lz4_flex::block::decompress_into(src, dst).map_err(|e| {
                ReadError::new(
                    WarnKind::DecodeFailed,
                    file_off as usize,
                    format!("segment {i}: {e}"),
                )
            })?;
            if n as u64 != size {
                return Err(ReadError::new(
                    WarnKind::DecodeFailed,
                    file_off as usize,
                    format!("segment {i} decodes to {n:#x} bytes, header says {size:#x}"),
                ));
            }
        } else {
            let src = &b[range(b, file_off, size, "stored segment")?];
            dst.copy_from_slice(src);
        }
        if flags >> (3 + i) & 1 != 0 {
            let want = &b[0xA0 + i * 0x20..0xC0 + i * 0x20];
            if Sha256::digest(&*dst).as_slice() != want {
                warnings.push(ReadError::new(
                    WarnKind::BadHeader,
                    0xA0 + i * 0x20,
                    format!("segment {i} SHA-256 mismatch"),
                ));
            }
        }
    }
    Ok((img, warnings))
}
