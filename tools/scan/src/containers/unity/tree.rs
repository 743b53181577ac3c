//! Unity type trees (the blob format of serialized-file versions 12 and later): the nodes, their
//! names (local string buffer, or Unity's common string table for offsets with the high bit
//! set), and a reader of an object's bytes through its tree.

use std::ops::Range;

use super::cursor::Cursor;
use super::CommonStrings;
use crate::error::{ReadError, ReadResult, WarnKind};

/// Type flag of an `Array` node.
const FLAG_ARRAY: u8 = 1;
/// Meta flag: align to 4 after the node's value.
const META_ALIGN: u32 = 0x4000;

/// One node of a type tree.
#[derive(Debug, Clone)]
pub struct Node {
    /// Depth (the root is 0).
    pub level: u8,
    /// Type flags (1 = array).
    pub flags: u8,
    /// Type name (`int`, `vector`, `Array`, …); empty where unresolved.
    pub ty: String,
    /// Field name; empty where unresolved.
    pub name: String,
    /// Byte size of a fixed-size value, −1 otherwise.
    pub size: i32,
    /// Meta flags (0x4000 = align after).
    pub meta: u32,
    /// One past the last node of this node's subtree.
    pub end: usize,
}

/// A parsed type tree.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    /// Nodes in pre-order.
    pub nodes: Vec<Node>,
    /// Offset of a name that indexes Unity's common string table when none was given.
    pub unresolved: Option<usize>,
}

/// A value read through a type tree: leaves as integers, arrays of bytes as ranges of the
/// object, other arrays as lists, structures as (node index, value) fields.
#[derive(Debug, Clone)]
pub enum Value {
    /// A fixed-size leaf (1, 2, 4 or 8 bytes), zero-extended.
    Int(u64),
    /// An array of 1-byte elements (strings, `compressedBlob`): its bytes in the object.
    Bytes(Range<usize>),
    /// Any other array.
    List(Vec<Value>),
    /// A structure: (node index, value) per field.
    Struct(Vec<(usize, Value)>),
}

/// Reads the type-tree blob at `c` (version `version` of the file); names with the high bit set
/// are looked up in `common`. Returns the tree and leaves `c` after the blob.
pub fn parse(c: &mut Cursor, version: u32, common: Option<&CommonStrings>) -> ReadResult<Tree> {
    if version >= 23 {
        let at = c.pos;
        if c.bytes(4, "type-tree magic")? != b"mhtt" {
            return Err(ReadError::new(
                WarnKind::BadHeader,
                at,
                "type tree without mhtt",
            ));
        }
        c.u32("type-tree format")?;
    }
    let node_size = if version >= 19 { 32 } else { 24 };
    let count = c.count(node_size, "type-tree node count")?;
    let strings_len = c.u32("type-tree string size")? as usize;
    let nodes_at = c.pos;
    let raw = c.bytes(count * node_size, "type-tree nodes")?;
    let strings = c.bytes(strings_len, "type-tree strings")?;
    let mut tree = Tree::default();
    let mut n = Cursor::new(raw, 0, c.be);
    let name = |off: u32, at: usize, tree: &mut Tree| -> ReadResult<String> {
        let s = if off & 0x8000_0000 == 0 {
            strings.get(off as usize..)
        } else {
            match common {
                Some(t) => t.get(off & 0x7FFF_FFFF),
                None => {
                    tree.unresolved.get_or_insert(at);
                    return Ok(String::new());
                }
            }
        };
        let s = s.ok_or_else(|| {
            ReadError::new(
                WarnKind::BadHeader,
                at,
                format!("type-tree name offset {off:#x} outside its table"),
            )
        })?;
        let len = s.iter().position(|&b| b == 0).unwrap_or(s.len());
        Ok(String::from_utf8_lossy(&s[..len]).into_owned())
    };
    for i in 0..count {
        let at = nodes_at + i * node_size;
        n.pos = i * node_size;
        n.u16("node version")?;
        let level = n.u8("node level")?;
        let flags = n.u8("node flags")?;
        let ty = n.u32("node type name")?;
        let nm = n.u32("node field name")?;
        let size = n.i32("node byte size")?;
        n.i32("node index")?;
        let meta = n.u32("node meta flags")?;
        if (i == 0) != (level == 0) || (i > 0 && level as u16 > tree.nodes[i - 1].level as u16 + 1)
        {
            return Err(ReadError::new(
                WarnKind::BadHeader,
                at,
                format!("type-tree node {i} at level {level} breaks the tree"),
            ));
        }
        let ty = name(ty, at + 4, &mut tree)?;
        let name = name(nm, at + 8, &mut tree)?;
        tree.nodes.push(Node {
            level,
            flags,
            ty,
            name,
            size,
            meta,
            end: count,
        });
    }
    // Each node's subtree ends at the next node at its level or above.
    let mut open: Vec<usize> = Vec::new();
    for i in 0..tree.nodes.len() {
        while let Some(&j) = open.last() {
            if tree.nodes[j].level >= tree.nodes[i].level {
                tree.nodes[j].end = i;
                open.pop();
            } else {
                break;
            }
        }
        open.push(i);
    }
    if tree.nodes.is_empty() {
        return Err(ReadError::new(
            WarnKind::BadHeader,
            nodes_at,
            "empty type tree",
        ));
    }
    Ok(tree)
}

impl Tree {
    /// The children of node `i`.
    pub fn children(&self, i: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut j = i + 1;
        while j < self.nodes[i].end {
            out.push(j);
            j = self.nodes[j].end;
        }
        out
    }

    /// Whether any node is named `name`.
    pub fn has_field(&self, name: &str) -> bool {
        self.nodes.iter().any(|n| n.name == name)
    }

    fn is_array(&self, i: usize) -> bool {
        self.nodes[i].flags & FLAG_ARRAY != 0 || self.nodes[i].ty == "Array"
    }

    /// Reads `obj` (one object's bytes) through the tree, making at most `len + 64 Ki` values
    /// (real Shader objects make fewer than one per 2 bytes: byte arrays are one range).
    pub fn read(&self, obj: &[u8], be: bool) -> ReadResult<Value> {
        let mut c = Cursor::new(obj, 0, be);
        let mut work = obj.len() as u64 + (64 << 10);
        self.value(0, &mut c, &mut work)
    }

    fn value(&self, i: usize, c: &mut Cursor, work: &mut u64) -> ReadResult<Value> {
        *work = work.checked_sub(1).ok_or_else(|| {
            ReadError::new(
                WarnKind::SizeCap,
                c.pos,
                "object has more values than its size allows",
            )
        })?;
        let n = &self.nodes[i];
        let kids = self.children(i);
        let v = if self.is_array(i) {
            self.array(&kids, c, work, i)?
        } else if kids.is_empty() {
            let at = c.pos;
            match n.size {
                1 => Value::Int(c.u8("value")? as u64),
                2 => Value::Int(c.u16("value")? as u64),
                4 => Value::Int(c.u32("value")? as u64),
                8 => Value::Int(c.u64("value")?),
                0 => Value::Int(0),
                s => {
                    return Err(ReadError::new(
                        WarnKind::BadHeader,
                        at,
                        format!("leaf `{}` of {s} bytes", n.name),
                    ))
                }
            }
        } else if kids.len() == 1 && self.is_array(kids[0]) {
            // vector, string, map: the array is the value.
            self.value(kids[0], c, work)?
        } else {
            let mut fields = Vec::with_capacity(kids.len());
            for k in kids {
                fields.push((k, self.value(k, c, work)?));
            }
            Value::Struct(fields)
        };
        if n.meta & META_ALIGN != 0 {
            c.align(4);
        }
        Ok(v)
    }

    fn array(&self, kids: &[usize], c: &mut Cursor, work: &mut u64, i: usize) -> ReadResult<Value> {
        let &[_, elem] = kids else {
            return Err(ReadError::new(
                WarnKind::BadHeader,
                c.pos,
                format!("array node {i} without size and data"),
            ));
        };
        let e = &self.nodes[elem];
        let leaf = e.end == elem + 1 && !self.is_array(elem);
        let min = if leaf { e.size.max(1) as usize } else { 1 };
        let count = c.count(min, "array size")?;
        if leaf && e.size == 1 {
            let start = c.pos;
            c.bytes(count, "byte array")?;
            if e.meta & META_ALIGN != 0 {
                c.align(4);
            }
            return Ok(Value::Bytes(start..start + count));
        }
        let mut out = Vec::with_capacity(count.min(1 << 16));
        for _ in 0..count {
            out.push(self.value(elem, c, work)?);
        }
        Ok(Value::List(out))
    }

    /// The field `name` of the structure `v`.
    pub fn field<'v>(&self, v: &'v Value, name: &str) -> Option<&'v Value> {
        match v {
            Value::Struct(f) => f
                .iter()
                .find(|(k, _)| self.nodes[*k].name == name)
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// Every integer at or below fields named `name` that lie under a field named `under`
    /// (anywhere below `v`).
    pub fn ints_under(&self, v: &Value, under: &str, name: &str, out: &mut Vec<u64>) {
        self.collect(v, under, name, false, out)
    }

    fn collect(&self, v: &Value, under: &str, name: &str, inside: bool, out: &mut Vec<u64>) {
        match v {
            Value::Struct(f) => {
                for (k, x) in f {
                    let n = &self.nodes[*k].name;
                    if inside && n == name {
                        flatten(x, out);
                    } else {
                        self.collect(x, under, name, inside || n == under, out);
                    }
                }
            }
            Value::List(l) => {
                for x in l {
                    self.collect(x, under, name, inside, out);
                }
            }
            _ => {}
        }
    }
}

/// Every integer in `v`, in order.
pub fn flatten(v: &Value, out: &mut Vec<u64>) {
    match v {
        Value::Int(x) => out.push(*x),
        Value::List(l) => l.iter().for_each(|x| flatten(x, out)),
        Value::Struct(f) => f.iter().for_each(|(_, x)| flatten(x, out)),
        Value::Bytes(_) => {}
    }
}
