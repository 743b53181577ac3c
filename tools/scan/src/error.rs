//! Warnings: what the scanner could not read, naming the file (with its archive path) and offset.

use std::fmt;

/// Why a piece of input was skipped or only partly read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WarnKind {
    /// The bytes end before a structure they announce.
    Truncated,
    /// A header or table field is inconsistent.
    BadHeader,
    /// A compressed stream does not decode.
    DecodeFailed,
    /// A decompressed size exceeds the stated limit.
    SizeCap,
    /// Archives nest deeper than the stated limit.
    DepthCap,
    /// A zstd frame needs a dictionary we do not have.
    NeedsDictionary,
    /// A shader a container points at fails the control / code / length check.
    BadShader,
    /// The file could not be read from disk.
    Io,
}

impl WarnKind {
    /// The short name used in summaries.
    pub fn as_str(self) -> &'static str {
        match self {
            WarnKind::Truncated => "truncated",
            WarnKind::BadHeader => "bad header",
            WarnKind::DecodeFailed => "decode failed",
            WarnKind::SizeCap => "size over limit",
            WarnKind::DepthCap => "nesting over limit",
            WarnKind::NeedsDictionary => "needs zstd dictionary",
            WarnKind::BadShader => "bad shader",
            WarnKind::Io => "unreadable",
        }
    }
}

impl fmt::Display for WarnKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A reader's error: what is wrong and at which offset of the buffer it was given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("offset {offset:#x}: {kind}: {detail}")]
pub struct ReadError {
    /// What kind of problem.
    pub kind: WarnKind,
    /// Offset inside the buffer the reader was given.
    pub offset: u64,
    /// Human-readable detail.
    pub detail: String,
}

impl ReadError {
    /// Builds a reader error.
    pub fn new(kind: WarnKind, offset: usize, detail: impl Into<String>) -> Self {
        ReadError {
            kind,
            offset: offset as u64,
            detail: detail.into(),
        }
    }

    /// The same error moved by `base` bytes (for readers called on a sub-slice).
    pub fn shifted(mut self, base: usize) -> Self {
        self.offset += base as u64;
        self
    }

    /// The same error placed at `offset`, its detail prefixed with `what` (`what: detail`).
    pub fn within(self, offset: usize, what: impl fmt::Display) -> Self {
        ReadError::new(self.kind, offset, format!("{what}: {}", self.detail))
    }

    /// Attaches the file / archive path, making a warning.
    pub fn at(self, path: &str) -> Warning {
        Warning {
            path: path.to_string(),
            offset: self.offset,
            kind: self.kind,
            detail: self.detail,
        }
    }
}

/// A warning of the scan: the file with its archive nesting, the offset, and why. The scan goes on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, thiserror::Error)]
#[error("{path}: offset {offset:#x}: {kind}: {detail}")]
pub struct Warning {
    /// Path of the file, with archive nesting (see `origin`).
    pub path: String,
    /// Offset inside the innermost buffer of `path`.
    pub offset: u64,
    /// What kind of problem.
    pub kind: WarnKind,
    /// Human-readable detail.
    pub detail: String,
}

/// Short-hand for reader results.
pub type ReadResult<T> = Result<T, ReadError>;
