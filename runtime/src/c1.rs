//! `c1_full.tsv`: the shaders whose run-time c1 index is not proven bounded (docs/runtime.md).
//!
//! The first line is `b-<V>` (the build it was made for); then one shader key per line
//! (16 lower-case hex digits); blank lines are ignored; every line ends with a newline (a list
//! without one at the end is truncated). A shader on the list gets its own
//! whole 64 KiB c1 buffer. A missing list, a list for another `b-<V>` or a malformed one is
//! reported and not used: every shader is then treated as unprovable.

use std::path::Path;

use crate::error::{Error, Status};
use crate::files;

/// The largest c1 list read (17 bytes a key).
pub const MAX_C1_BYTES: u64 = 64 << 20;

/// What the c1 list says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum C1 {
    /// The list was read: these keys (sorted, each once) need their own c1 buffer.
    Listed(Vec<u64>),
    /// The list is not used (missing, another version, malformed): every shader needs its own
    /// c1 buffer. The error says why (`C1Missing`, `C1Version`, `C1Bad`).
    Unusable(Error),
}

impl C1 {
    /// Whether shader `key` needs its own 64 KiB c1 buffer.
    pub fn full(&self, key: u64) -> bool {
        match self {
            C1::Listed(k) => k.binary_search(&key).is_ok(),
            C1::Unusable(_) => true,
        }
    }
}

/// Reads the list at `path` for chain version `chain`.
pub fn read(path: &Path, chain: &str) -> C1 {
    let text = match files::read_text_opt(path, MAX_C1_BYTES, Status::C1Bad) {
        Ok(Some(t)) => t,
        Ok(None) => {
            return C1::Unusable(Error::new(
                Status::C1Missing,
                format!(
                    "{}: no c1 list; every shader gets its own 64 KiB c1 buffer",
                    path.display()
                ),
            ))
        }
        Err(e) => return C1::Unusable(e),
    };
    match parse(&text, chain) {
        Ok(keys) => C1::Listed(keys),
        Err(e) => C1::Unusable(Error::new(
            e.status,
            format!(
                "{}: {}; every shader gets its own 64 KiB c1 buffer",
                path.display(),
                e.text()
            ),
        )),
    }
}

/// Parses a c1 list's text for chain version `chain`: its keys, sorted.
pub fn parse(text: &str, chain: &str) -> Result<Vec<u64>, Error> {
    if !text.ends_with('\n') {
        return Err(Error::new(
            Status::C1Bad,
            "no newline at the end: the list is truncated",
        ));
    }
    let mut lines = text.lines().map(|l| l.trim_end_matches('\r'));
    let first = lines.next().unwrap_or("");
    let Some(v) = first.strip_prefix("b-") else {
        return Err(Error::new(
            Status::C1Bad,
            format!("line 1 is {first:?}, not the b-<V> the list was made for"),
        ));
    };
    if v != chain {
        return Err(Error::new(
            Status::C1Version,
            format!("made for b-{v}, this title loads b-{chain}"),
        ));
    }
    let mut keys = Vec::new();
    for (i, l) in lines.enumerate() {
        if l.is_empty() {
            continue;
        }
        keys.push(crate::key::parse(l).ok_or_else(|| {
            Error::new(
                Status::C1Bad,
                format!("line {}: {l:?} is not a 16-hex-digit shader key", i + 2),
            )
        })?);
    }
    keys.sort_unstable();
    keys.dedup();
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: &str = "0123456789ab";

    #[test]
    fn lists_keys_for_its_version() {
        let k = parse(
            "b-0123456789ab\r\n00000000000000ff\n\n0000000000000001\n",
            V,
        )
        .unwrap();
        assert_eq!(k, vec![1, 0xff]);
        let c = C1::Listed(k);
        assert!(c.full(0xff) && !c.full(2));
    }

    #[test]
    fn another_version_or_bad_lines_are_refused() {
        let e = parse("b-ffffffffffff\n0000000000000001\n", V).unwrap_err();
        assert_eq!(e.status, Status::C1Version);
        assert!(e.text().contains("made for b-ffffffffffff"), "{e}");
        for t in [
            "",
            "0000000000000001\n",
            "b-0123456789ab\nxyz\n",
            "b-0123456789ab\n00",
        ] {
            assert_eq!(parse(t, V).unwrap_err().status, Status::C1Bad, "{t:?}");
        }
        let c = C1::Unusable(e);
        assert!(c.full(1));
    }
}
