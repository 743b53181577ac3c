//! NRO executables: uncompressed, file offset = memory offset, so the file is the flat image.

use super::{ContainerReader, Found, Sniff};
use crate::bytes::u32le;
use crate::error::{ReadError, ReadResult, WarnKind};

/// The registry's NRO reader: the image is a range of the file (`|nro`).
pub const READER: ContainerReader = ContainerReader {
    name: "nro",
    sniff: Sniff::Magic(0x10, b"NRO0"),
    read: |i| flat_image(i.bytes).map(Found::layer),
};

/// The flat image: the first `size` (+0x18) bytes of the file.
pub fn flat_image(b: &[u8]) -> ReadResult<&[u8]> {
    let size = u32le(b, 0x18)
        .ok_or_else(|| ReadError::new(WarnKind::Truncated, 0x18, "NRO header cut short"))?
        as usize;
    if size > b.len() {
        return Err(ReadError::new(
            WarnKind::Truncated,
            0x18,
            format!("NRO says {size:#x} bytes, have {:#x}", b.len()),
        ));
    }
    Ok(&b[..size])
}
