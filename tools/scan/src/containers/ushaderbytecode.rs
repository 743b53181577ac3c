//! Unreal shader code archives (`ShaderArchive-*.ushaderbytecode`, version 2): the arrays of
//! `FSerializedShaderArchive`, then the code. Every shader is one inner buffer (an LSLG
//! record), Oodle-decoded when its size differs from its raw size.

use std::borrow::Cow;

use super::{lslg, oodle, ContainerReader, Found, Inner, Input, Sniff};
use crate::bytes::{range, u32le, u64le};
use crate::error::{ReadError, ReadResult, WarnKind};
use crate::stage::Stage;

/// Archive version (the u32 at +0).
pub const VERSION: u32 = 2;

/// Element sizes of the six arrays, in file order: shader-map hashes, shader hashes, shader-map
/// entries, shader entries (17 bytes, packed), preload entries, shader indices.
pub const ARRAYS: [usize; 6] = [20, 20, 16, SHADER_ENTRY, 16, 4];

/// Bytes of one packed shader entry `{u64 offset, u32 size, u32 raw size, u8 frequency}`.
pub const SHADER_ENTRY: usize = 17;

/// UE's shader frequencies the seeds name, and the stage each is.
pub const FREQUENCIES: [(u8, Stage); 3] = [
    (0, Stage::Vertex),
    (3, Stage::Fragment),
    (5, Stage::Compute),
];

/// File name ending of the archives.
pub const SUFFIX: &str = ".ushaderbytecode";

/// The registry's reader: every shader of the archive, scanned again as `//shader<i>`. It takes
/// a buffer that starts with version 2 and either is named `*.ushaderbytecode` (so a broken
/// archive is reported) or has a header that holds together with at least one shader.
pub const READER: ContainerReader = ContainerReader {
    name: "ushaderbytecode",
    sniff: Sniff::By(|i| {
        u32le(i.bytes, 0) == Some(VERSION)
            && (i.name.ends_with(SUFFIX) || layout(i.bytes).is_ok_and(|l| l.count[3] > 0))
    }),
    read,
};

/// Where the arrays lie: each one's element count and start, and where the code starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Element count of each of [`ARRAYS`].
    pub count: [usize; 6],
    /// Offset of each array's first element.
    pub at: [usize; 6],
    /// Start of the code: entry offsets are relative to it (UE's `LibraryCodeOffset`).
    pub code: usize,
}

/// Reads the archive header of `b` (no allocation): version 2, six arrays whose counts fit the
/// bytes, as many hashes as entries.
pub fn layout(b: &[u8]) -> ReadResult<Layout> {
    let v = u32le(b, 0)
        .ok_or_else(|| ReadError::new(WarnKind::Truncated, 0, "archive version past the end"))?;
    if v != VERSION {
        return Err(ReadError::new(
            WarnKind::BadHeader,
            0,
            format!("archive version {v}, not 2"),
        ));
    }
    let mut l = Layout {
        count: [0; 6],
        at: [0; 6],
        code: 0,
    };
    let mut p = 4usize;
    for (i, size) in ARRAYS.into_iter().enumerate() {
        let n = u32le(b, p)
            .ok_or_else(|| ReadError::new(WarnKind::Truncated, p, "array count past the end"))?;
        if n > i32::MAX as u32 {
            return Err(ReadError::new(
                WarnKind::BadHeader,
                p,
                format!("negative array count {}", n as i32),
            ));
        }
        let r = range(b, p as u64 + 4, n as u64 * size as u64, "array")?;
        l.count[i] = n as usize;
        l.at[i] = r.start;
        p = r.end;
    }
    if l.count[0] != l.count[2] || l.count[1] != l.count[3] {
        return Err(ReadError::new(
            WarnKind::BadHeader,
            4,
            format!(
                "{} shader-map hashes for {} maps, {} shader hashes for {} shaders",
                l.count[0], l.count[2], l.count[1], l.count[3]
            ),
        ));
    }
    l.code = p;
    Ok(l)
}

/// One shader entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Offset from the start of the code.
    pub offset: u64,
    /// Stored size.
    pub size: u32,
    /// Decoded size (equal to `size`: stored as is).
    pub raw: u32,
    /// UE shader frequency.
    pub frequency: u8,
}

/// Shader entry `i` of the archive `b` laid out as `l` (`i` < its count).
pub fn entry(b: &[u8], l: &Layout, i: usize) -> Option<Entry> {
    let e = l.at[3] + i * SHADER_ENTRY;
    Some(Entry {
        offset: u64le(b, e)?,
        size: u32le(b, e + 8)?,
        raw: u32le(b, e + 12)?,
        frequency: *b.get(e + 16)?,
    })
}

fn read<'b>(i: &Input<'b>) -> ReadResult<Found<'b>> {
    let b = i.bytes;
    let l = layout(b)?;
    let mut problems = check_maps(b, &l);
    let mut inner = Vec::new();
    let mut left = i.cap;
    for n in 0..l.count[3] {
        let at = l.at[3] + n * SHADER_ENTRY;
        let Some(e) = entry(b, &l, n) else { break };
        let data = match range(
            b,
            (l.code as u64).saturating_add(e.offset),
            e.size as u64,
            "shader",
        ) {
            Ok(r) => r,
            Err(err) => {
                problems.push(err.within(at, format!("shader {n}")));
                continue;
            }
        };
        let bytes: Cow<'b, [u8]> = if e.size == e.raw {
            Cow::Borrowed(&b[data.clone()])
        } else {
            match oodle::decode(&b[data.clone()], e.raw as u64, left) {
                Ok(v) => {
                    left -= v.len() as u64;
                    Cow::Owned(v)
                }
                Err(err) => {
                    problems.push(ReadError {
                        detail: format!("shader {n}: {}", err.detail),
                        ..err.shifted(data.start)
                    });
                    continue;
                }
            }
        };
        let claimed = FREQUENCIES.iter().find(|f| f.0 == e.frequency).map(|f| f.1);
        if let (Some(f), Some(s)) = (claimed, lslg::stage(&bytes)) {
            if f != s {
                problems.push(ReadError::new(
                    WarnKind::BadHeader,
                    at + 16,
                    format!(
                        "shader {n}: frequency {} is {f}, its LSLG tag says {s}",
                        e.frequency
                    ),
                ));
            }
        }
        inner.push(Inner {
            member: Some(format!("shader{n}")),
            bytes,
        });
    }
    Ok(Found::Inner { inner, problems })
}

/// Problems of the shader-map entries `{indices offset, shader count, first preload, preload
/// count}` and the shader indices: ranges outside their arrays, indices past the shaders (one
/// problem per kind; the shaders are read anyway).
fn check_maps(b: &[u8], l: &Layout) -> Vec<ReadError> {
    let mut out = Vec::new();
    let bad_map = (0..l.count[2]).find(|&m| {
        let e = l.at[2] + m * 16;
        let f = |k: usize| u32le(b, e + 4 * k).unwrap_or(u32::MAX) as u64;
        f(0) + f(1) > l.count[5] as u64 || f(2) + f(3) > l.count[4] as u64
    });
    if let Some(m) = bad_map {
        out.push(ReadError::new(
            WarnKind::BadHeader,
            l.at[2] + m * 16,
            format!("shader map {m} points past the shader indices or preload entries"),
        ));
    }
    let bad_index = (0..l.count[5])
        .find(|&k| u32le(b, l.at[5] + 4 * k).is_none_or(|v| v as usize >= l.count[3]));
    if let Some(k) = bad_index {
        out.push(ReadError::new(
            WarnKind::BadHeader,
            l.at[5] + 4 * k,
            format!("shader index {k} is past the {} shaders", l.count[3]),
        ));
    }
    out
}
