//! Serialized files (versions 17 to 23): the header, the types (the Shader type's hash and
//! tree), the objects; Shader objects are read through their tree, or kept for the second pass.

use std::sync::Arc;

use super::cursor::Cursor;
use super::tree;
use super::{no_common, shader, Deferred};
use crate::containers::{ContainerReader, Found, Input, Sniff};
use crate::error::{ReadError, ReadResult, WarnKind};
use crate::shader::{ContainerKind, Hits};

/// Unity's class ID of Shader.
pub const CLASS_SHADER: i32 = 48;
/// The versions read (Unity 2017.x to 2022.x and later).
pub const VERSIONS: std::ops::RangeInclusive<u32> = 17..=23;

/// The registry's serialized-file reader: the Shader objects of a file that looks like one.
pub const READER: ContainerReader = ContainerReader {
    name: ContainerKind::Unity.as_str(),
    sniff: Sniff::By(|i| header(i.bytes).is_ok()),
    read,
};

/// The fixed header: version, byte order of the metadata and data, metadata start, data offset.
#[derive(Debug, Clone, Copy)]
pub struct Header {
    /// Format version.
    pub version: u32,
    /// Metadata and objects are big endian.
    pub be: bool,
    /// Where the metadata starts.
    pub meta: usize,
    /// Where object data starts.
    pub data: u64,
}

/// Reads the header of the serialized file `b`, checking its sizes against `b`'s length.
pub fn header(b: &[u8]) -> ReadResult<Header> {
    let mut c = Cursor::new(b, 0, true);
    c.u32("metadata size")?;
    let small_size = c.u32("file size")? as u64;
    let version = c.u32("version")?;
    let small_data = c.u32("data offset")? as u64;
    if !VERSIONS.contains(&version) {
        return Err(ReadError::new(
            WarnKind::BadHeader,
            8,
            format!("version {version} not read"),
        ));
    }
    let be = match c.u8("endianness")? {
        0 => false,
        1 => true,
        e => {
            return Err(ReadError::new(
                WarnKind::BadHeader,
                0x10,
                format!("endianness {e}"),
            ))
        }
    };
    c.bytes(3, "reserved")?;
    let (size, data) = if version >= 22 {
        c.u32("metadata size")?;
        let s = c.u64("file size")?;
        let d = c.u64("data offset")?;
        c.u64("reserved")?;
        (s, d)
    } else {
        (small_size, small_data)
    };
    if size != b.len() as u64 || data > size || data < c.pos as u64 {
        return Err(ReadError::new(
            WarnKind::BadHeader,
            4,
            format!(
                "file size {size:#x} / data offset {data:#x} do not fit {:#x} bytes",
                b.len()
            ),
        ));
    }
    Ok(Header {
        version,
        be,
        meta: c.pos,
        data,
    })
}

/// A type of the file: class, hash, and (for Shader) where its tree blob lies.
struct Type {
    class: i32,
    hash: [u8; 16],
    tree: Option<std::ops::Range<usize>>,
}

fn types(c: &mut Cursor, version: u32, trees: bool) -> ReadResult<Vec<Type>> {
    let n = c.count(23, "type count")?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let class = c.i32("class ID")?;
        c.u8("stripped")?;
        c.u16("script type index")?;
        if class == 114 {
            c.bytes(16, "script ID")?;
        }
        let hash: [u8; 16] = c.bytes(16, "type hash")?.try_into().unwrap();
        let mut tree = None;
        if trees {
            let mut has = true;
            if version >= 23 {
                c.bytes(16, "type-tree hash")?;
                has = c.u32("type-tree size")? != 0;
            }
            if has {
                let start = c.pos;
                let mut skip = *c;
                skip_blob(&mut skip, version)?;
                c.pos = skip.pos;
                tree = Some(start..c.pos);
            }
            if version >= 21 {
                let d = c.count(4, "type dependency count")?;
                c.bytes(d * 4, "type dependencies")?;
            }
        }
        out.push(Type { class, hash, tree });
    }
    Ok(out)
}

/// Moves `c` past a type-tree blob without reading its names.
fn skip_blob(c: &mut Cursor, version: u32) -> ReadResult<()> {
    if version >= 23 {
        c.bytes(8, "type-tree magic")?;
    }
    let size = if version >= 19 { 32 } else { 24 };
    let n = c.count(size, "type-tree node count")?;
    let s = c.u32("type-tree string size")? as usize;
    c.bytes(n * size, "type-tree nodes")?;
    c.bytes(s, "type-tree strings")?;
    Ok(())
}

/// (path ID, offset, size) of each object of a Shader type.
fn shader_objects(
    c: &mut Cursor,
    h: &Header,
    types: &[Type],
    b: &[u8],
) -> ReadResult<Vec<(i64, std::ops::Range<usize>, usize)>> {
    let n = c.count(20, "object count")?;
    let mut out = Vec::new();
    for _ in 0..n {
        c.align(4);
        let id = c.u64("path ID")? as i64;
        let at = c.pos;
        let start = if h.version >= 22 {
            c.u64("byte start")?
        } else {
            c.u32("byte start")? as u64
        };
        let size = c.u32("byte size")? as u64;
        let ti = c.i32("type index")?;
        let Some(t) = usize::try_from(ti).ok().and_then(|i| types.get(i)) else {
            return Err(ReadError::new(
                WarnKind::BadHeader,
                at + 8,
                format!("type index {ti}"),
            ));
        };
        if t.class == CLASS_SHADER {
            let r = h
                .data
                .checked_add(start)
                .ok_or_else(|| ReadError::new(WarnKind::BadHeader, at, "byte start overflows"))
                .and_then(|s| crate::bytes::range(b, s, size, "Shader object"))
                .map_err(|e| ReadError {
                    offset: at as u64,
                    ..e
                })?;
            out.push((id, r, ti as usize));
        }
    }
    Ok(out)
}

fn read<'b>(i: &Input<'b>) -> ReadResult<Found<'b>> {
    let b = i.bytes;
    let h = header(b)?;
    let mut c = Cursor::new(b, h.meta, h.be);
    c.cstr("engine version")?;
    let platform = c.i32("target platform")?;
    let trees = c.u8("type trees enabled")? != 0;
    let types = types(&mut c, h.version, trees)?;
    let objects = shader_objects(&mut c, &h, &types, b)?;
    let mut hits = Hits::default();
    if objects.is_empty() {
        return Ok(Found::Shaders {
            kind: ContainerKind::Unity,
            opened: 0,
            hits,
        });
    }
    if platform != 38 {
        hits.errors.push(ReadError::new(
            WarnKind::BadHeader,
            h.meta,
            format!("target platform {platform}, not Switch (38); read anyway"),
        ));
    }
    let mut opened = 0;
    // Group the objects by type: each type has its own tree (or borrows one).
    let mut by_type: std::collections::BTreeMap<usize, Vec<_>> = Default::default();
    for (id, r, ti) in objects {
        by_type.entry(ti).or_default().push((id, r));
    }
    for (ti, objs) in by_type {
        let t = &types[ti];
        let own = match &t.tree {
            Some(r) => {
                let mut tc = Cursor::new(&b[..r.end], r.start, h.be);
                let common = i.unity.and_then(|u| u.shared.common.get());
                match tree::parse(&mut tc, h.version, common) {
                    Ok(t) => Some(t),
                    Err(e) => {
                        // A bad tree stops only its own type's objects.
                        hits.errors.push(e);
                        continue;
                    }
                }
            }
            None => None,
        };
        match own {
            Some(tr) if tr.unresolved.is_none() => {
                let tr = Arc::new(tr);
                if let Some(u) = i.unity {
                    u.shared.add_tree(t.hash, &tr);
                }
                for (id, r) in &objs {
                    opened += 1;
                    shader::read(&tr, &b[r.clone()], h.be, *id, i.cap, &mut hits, r.start);
                }
            }
            own => {
                let needs = match &own {
                    Some(tr) => no_common(tr.unresolved.unwrap_or(0)),
                    None => ReadError::new(
                        WarnKind::BadHeader,
                        h.meta,
                        "Shader objects without a type tree (read in a split's second pass, \
                         with the tree of a file that has one)",
                    ),
                };
                let Some(u) = i.unity else {
                    hits.errors.push(needs);
                    continue;
                };
                let d = Deferred {
                    source: u.source,
                    source_name: u.source_name.clone(),
                    path: u.path.to_string(),
                    hash: t.hash,
                    tree: own.is_some().then(|| b[t.tree.clone().unwrap()].to_vec()),
                    version: h.version,
                    be: h.be,
                    objects: objs
                        .iter()
                        .map(|(id, r)| (*id, r.start, b[r.clone()].to_vec()))
                        .collect(),
                };
                if let Err(e) = u.shared.defer(d) {
                    hits.errors.push(e);
                }
            }
        }
    }
    Ok(Found::Shaders {
        kind: ContainerKind::Unity,
        opened,
        hits,
    })
}
