//! Status codes (the C ABI's `DmshStatus`) and errors with their messages.

use std::borrow::Cow;
use std::ffi::{CStr, CString};

/// What a call of the runtime returns: 0 for success, one code per cause of failure.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// Success.
    Ok = 0,
    /// A null pointer, a path that is not UTF-8, an unknown depth mode or a parameter block
    /// of an unknown size.
    Argument = 1,
    /// No chain version was supplied and none is compiled in, or it is not 12 hex digits.
    Chain = 2,
    /// The shader map cannot be read or is malformed.
    Map = 3,
    /// The library folder holds no `b-<V>` folder at all.
    FolderMissing = 4,
    /// The library folder holds only other versions' `b-*` folders, or `b-<V>/_b_build.json`
    /// records another chain version.
    FolderVersion = 5,
    /// The key is not in the shader map.
    UnknownKey = 6,
    /// The key is in the map but `b-<V>` has no reflection for it (its build failed).
    NotBuilt = 7,
    /// The reflection cannot be read, is malformed or does not fit the map.
    Reflection = 8,
    /// The reflection's schema version is not the one this runtime reads.
    ReflectionSchema = 9,
    /// The reflection records another chain version (or none).
    ReflectionChain = 10,
    /// There is no c1 list: every shader gets its own 64 KiB c1 buffer.
    C1Missing = 11,
    /// The c1 list records another `b-<V>`: it is not loaded, every shader gets its own c1
    /// buffer.
    C1Version = 12,
    /// The c1 list is malformed: it is not loaded, every shader gets its own c1 buffer.
    C1Bad = 13,
    /// The control section or code area handed over has no key.
    Key = 14,
    /// An internal error was caught at the C boundary (a bug; please report it).
    Internal = 15,
    /// A warm-up list does not exist (or none was given): nothing is pre-built from it.
    WarmMissing = 16,
    /// A warm-up list is unusable as a whole (unreadable, too large, no or another header, a
    /// line over the bound, truncated): nothing is pre-built from it.
    WarmBad = 17,
    /// The device warm-up list could not be written (or none was given at open).
    WarmWrite = 18,
    /// The macOS Metal layer could not make a library, function or pipeline (reported once
    /// with its keys; `metal` feature).
    Metal = 19,
    /// `dmsh_check_topology`: the geometry kernel does not assemble the draw's topology (the
    /// draw must be refused, split or converted; drawing it would be silently wrong).
    Topology = 20,
}

/// A failure: its status and a message (a C string, so the C ABI hands it out as it is).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The cause.
    pub status: Status,
    /// One sentence saying what failed, naming the file and line or key.
    pub message: Cow<'static, CStr>,
}

impl Error {
    /// An error with a formatted message (NUL bytes in it become spaces).
    pub fn new(status: Status, message: impl Into<String>) -> Error {
        let mut m = message.into().into_bytes();
        for b in m.iter_mut().filter(|b| **b == 0) {
            *b = b' ';
        }
        let message = CString::new(m).unwrap_or_default();
        Error {
            status,
            message: Cow::Owned(message),
        }
    }

    /// An error with a fixed message (no allocation).
    pub const fn fixed(status: Status, message: &'static CStr) -> Error {
        Error {
            status,
            message: Cow::Borrowed(message),
        }
    }

    /// The message as text.
    pub fn text(&self) -> Cow<'_, str> {
        self.message.to_string_lossy()
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text())
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_never_hold_nul() {
        let e = Error::new(Status::Map, "a\0b");
        assert_eq!(e.text(), "a b");
        assert_eq!(e.status, Status::Map);
    }
}
