//! KTGL LINKDATA of Three Houses: `DATA0.bin` lists the entries of `DATA1.bin` as 0x20-byte
//! records `{u64 offset in DATA1, u64 decompressed size, u64 stored size, compressed flag
//! (byte at +0x18)}`. DATA1 is not self-describing, so the split reads the pair itself
//! (`split.rs`): it cuts DATA1 into [`JOBS`] scan jobs by entry range, each scanning the
//! members [`members`] gives (compressed entries are KTGL "gz" tables, decoded by `gz.rs`).

use std::borrow::Cow;
use std::ops::Range;

use crate::bytes::{range, u64le};
use crate::containers::{Found, Inner};

/// The entry table's file name.
pub const INDEX: &str = "DATA0.bin";

/// The data file's name.
pub const DATA: &str = "DATA1.bin";

/// Size of one DATA0 record.
pub const RECORD: usize = 0x20;

/// Scan jobs DATA1 is cut into (the seed's `linkdata_jobs`).
pub const JOBS: usize = 64;

/// The name a LINKDATA part's members get in "containers opened".
pub const NAME: &str = "linkdata";

/// One DATA0 record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Offset in DATA1.
    pub offset: u64,
    /// Decompressed size (0: an empty slot).
    pub size: u64,
    /// Stored size.
    pub stored: u64,
    /// Stored as a KTGL "gz" table.
    pub compressed: bool,
}

impl Entry {
    /// Bytes the entry occupies in DATA1: the stored size when compressed, else its size.
    pub fn len(&self) -> u64 {
        if self.compressed {
            self.stored
        } else {
            self.size
        }
    }

    /// Whether the slot is empty.
    pub fn is_empty(&self) -> bool {
        self.size == 0 || self.len() == 0
    }
}

/// The records of a DATA0 table (a trailing partial record is ignored).
pub fn entries(data0: &[u8]) -> Vec<Entry> {
    data0
        .chunks_exact(RECORD)
        .map(|r| Entry {
            offset: u64le(r, 0).unwrap_or(0),
            size: u64le(r, 8).unwrap_or(0),
            stored: u64le(r, 0x10).unwrap_or(0),
            compressed: r[0x18] != 0,
        })
        .collect()
}

/// Cuts `entries` into at most `jobs` consecutive index ranges of about equal bytes.
pub fn parts(entries: &[Entry], jobs: usize) -> Vec<Range<usize>> {
    let total: u64 = entries.iter().map(|e| e.len().min(1 << 40)).sum();
    let target = total / jobs.max(1) as u64 + 1;
    let mut out = Vec::new();
    let (mut start, mut acc) = (0, 0u64);
    for (i, e) in entries.iter().enumerate() {
        acc += e.len().min(1 << 40);
        if acc >= target && out.len() + 1 < jobs {
            out.push(start..i + 1);
            (start, acc) = (i + 1, 0);
        }
    }
    if start < entries.len() || out.is_empty() {
        out.push(start..entries.len());
    }
    out
}

/// The members of DATA1 (`data1`) for the entries in `part`, named by entry index
/// (`00549`), borrowed from DATA1; an entry outside DATA1 is a problem, the others go on.
pub fn members<'b>(data1: &'b [u8], entries: &[Entry], part: Range<usize>) -> Found<'b> {
    let mut inner = Vec::new();
    let mut problems = Vec::new();
    for i in part {
        let Some(e) = entries.get(i) else { break };
        if e.is_empty() {
            continue;
        }
        match range(data1, e.offset, e.len(), &format!("LINKDATA entry {i}")) {
            Ok(r) => inner.push(Inner {
                member: Some(format!("{i:05}")),
                bytes: Cow::Borrowed(&data1[r]),
            }),
            Err(err) => problems.push(err),
        }
    }
    Found::Inner { inner, problems }
}

/// Whether `rel` (a path relative to its RomFS root) is a LINKDATA data file; its table is
/// the [`INDEX`] file in the same folder.
pub fn is_data(rel: &str) -> bool {
    rel.rsplit('/').next() == Some(DATA)
}

/// The path of the table that belongs to data file `rel`.
pub fn index_of(rel: &str) -> String {
    match rel.rsplit_once('/') {
        Some((dir, _)) => format!("{dir}/{INDEX}"),
        None => INDEX.to_string(),
    }
}
