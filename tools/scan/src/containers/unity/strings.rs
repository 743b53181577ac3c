//! Unity's common string table in a main's image: the NUL-separated names that type-tree
//! offsets with the high bit set index, found by its first two names.

use super::CommonStrings;
use crate::containers::{ContainerReader, Found, Sniff};
use crate::error::{ReadError, ReadResult, WarnKind};
use crate::shader::{ContainerKind, Hits};

/// The table's first two names (Unity 5 to 2022: `AABB`, then `AnimationClip`).
pub const START: &[u8] = b"AABB\0AnimationClip\0";
/// The most bytes a table may have.
pub const MAX_LEN: usize = 64 << 10;

/// The registry's main-image reader: gives the split's Unity readers the common string table
/// (only in a split, where [`Input::unity`](crate::containers::Input) is set). It finds no
/// shaders.
pub const READER: ContainerReader = ContainerReader {
    name: "unity_strings",
    sniff: Sniff::By(|i| i.unity.is_some()),
    read: |i| {
        if let (Some(u), Some(t)) = (i.unity, find(i.bytes)) {
            if let Err(old) = u.shared.common.set(t) {
                if u.shared.common.get().map(|c| &c.bytes) != Some(&old.bytes) {
                    return Err(ReadError::new(
                        WarnKind::BadHeader,
                        0,
                        "a second main has another Unity common string table; the first is used",
                    ));
                }
            }
        }
        Ok(Found::Shaders {
            kind: ContainerKind::Unity,
            opened: 0,
            hits: Hits::default(),
        })
    },
};

/// The common string table of `image`: from the first `AABB\0AnimationClip\0` through the last
/// name, which is followed by a second NUL or a byte that is not printable ASCII.
pub fn find(image: &[u8]) -> Option<CommonStrings> {
    let at = memchr::memmem::find(image, START)?;
    let tail = &image[at..image.len().min(at + MAX_LEN)];
    let mut end = 0;
    while end < tail.len() {
        let n = tail[end..].iter().position(|&c| c == 0)?;
        let name = &tail[end..end + n];
        if name.is_empty() || !name.iter().all(|c| c.is_ascii_graphic() || *c == b' ') {
            break;
        }
        end += n + 1;
    }
    Some(CommonStrings {
        bytes: tail[..end].to_vec(),
    })
}

/// [`find`], or an error naming what is missing (for readers given a main by hand).
pub fn require(image: &[u8]) -> ReadResult<CommonStrings> {
    find(image).ok_or_else(|| {
        ReadError::new(
            WarnKind::BadHeader,
            0,
            "no Unity common string table (AABB\\0AnimationClip\\0…)",
        )
    })
}
