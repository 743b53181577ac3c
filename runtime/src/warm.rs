//! The warm-up lists' row format (docs/runtime.md, "Warm-up lists"): the bundled seed list
//! `pso_manifest.tsv` and the device list `pso_user.tsv` share it. A header line
//! ([`HEADER`]), then one row per line, in pre-build order (never sorted):
//!
//! * `S\t<key>`: a shader (its library and functions);
//! * `R\t<vertex key>\t<fragment key | ->\t<gl | z>\t<state hex>`: a render pipeline, its
//!   depth mode, and the host's pipeline settings as hex (opaque to the runtime);
//! * `C\t<key>`: a compute pipeline.
//!
//! The parse is bounded: the file ([`MAX_LIST_BYTES`]), each line ([`MAX_LINE_BYTES`]), the
//! rows ([`MAX_ROWS`]) and the skip messages kept ([`MAX_SKIP_MESSAGES`]). A list that breaks
//! the structure (no or another header, a line over the bound, no newline at the end) is
//! unusable as a whole; a well-formed line a build cannot use is skipped and counted.

use crate::abi::{DEPTH_GL, DEPTH_ZERO_TO_ONE};

/// The first line of every warm-up list.
pub const HEADER: &str = "kind\tkey\tfragment\tdepth\tstate";
/// The largest list read (the seed list of seed 002, 3,793 rows, is about 300 KiB).
pub const MAX_LIST_BYTES: u64 = 16 << 20;
/// The longest line (a row with [`MAX_STATE_BYTES`] of state is 2,092 bytes).
pub const MAX_LINE_BYTES: usize = 4096;
/// The most rows a list may hold.
pub const MAX_ROWS: usize = 1 << 18;
/// The largest host pipeline state of a render row.
pub const MAX_STATE_BYTES: usize = 1024;
/// Skipped lines whose reason is kept (all are counted).
pub const MAX_SKIP_MESSAGES: usize = 64;

/// What a row asks to build (its letter; `DMSH_WARM_*` is [`Kind::code`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `S`: a shader's library and functions.
    Shader,
    /// `R`: a render pipeline.
    Render,
    /// `C`: a compute pipeline.
    Compute,
}

impl Kind {
    /// Its number in the C ABI (`DMSH_WARM_SHADER` 1, `_RENDER` 2, `_COMPUTE` 3).
    pub const fn code(self) -> u32 {
        self as u32 + 1
    }

    /// The row's letter.
    pub fn letter(self) -> char {
        match self {
            Kind::Shader => 'S',
            Kind::Render => 'R',
            Kind::Compute => 'C',
        }
    }

    /// The kind numbered `n` (`DMSH_WARM_*`), if any.
    pub fn from_u32(n: u32) -> Option<Kind> {
        [Kind::Shader, Kind::Render, Kind::Compute]
            .into_iter()
            .find(|k| k.code() == n)
    }
}

/// Which list a row comes from (`as u32`: `DMSH_WARM_SEED` 0, `DMSH_WARM_DEVICE` 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum List {
    /// The bundled seed list (`pso_manifest.tsv`), pre-built first.
    Seed,
    /// This device's list (`pso_user.tsv`), pre-built after the seed list.
    Device,
}

/// One row of a list.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Row {
    /// What to build.
    pub kind: Kind,
    /// The shader (`S`, `C`) or the vertex shader (`R`).
    pub key: u64,
    /// `R`: the fragment shader, if the pipeline has one.
    pub fragment: Option<u64>,
    /// `R`: the depth mode (`abi::DEPTH_*`, which vertex entry point); else `DEPTH_GL`.
    pub depth: u32,
    /// `R`: the host's pipeline settings (formats, blend, samples …); else empty.
    pub state: Box<[u8]>,
}

fn hex_digit(d: u8) -> char {
    char::from(if d < 10 { b'0' + d } else { b'a' + d - 10 })
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    if !b.len().is_multiple_of(2) {
        return None;
    }
    let d = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    b.chunks(2)
        .map(|p| Some(d(p[0])? << 4 | d(p[1])?))
        .collect()
}

fn key(field: &str, what: &str) -> Result<u64, String> {
    crate::key::parse(field)
        .ok_or_else(|| format!("{what} {:?} is not 16 lower-case hex digits", short(field)))
}

/// At most 40 characters of `s`, for messages.
fn short(s: &str) -> &str {
    s.char_indices().nth(40).map_or(s, |(i, _)| &s[..i])
}

impl Row {
    /// An `S` or `C` row: a key and nothing else.
    pub fn keyed(kind: Kind, key: u64) -> Row {
        Row {
            kind,
            key,
            fragment: None,
            depth: DEPTH_GL,
            state: Box::default(),
        }
    }

    /// The row as a line of a list, with its newline; `Err` says why it cannot be one.
    pub fn line(&self) -> Result<String, String> {
        let k = crate::key::to_string(self.key);
        if self.kind != Kind::Render {
            if self.fragment.is_some() || !self.state.is_empty() || self.depth != DEPTH_GL {
                return Err(format!(
                    "a {} row has a key only (no fragment key, depth or state)",
                    self.kind.letter()
                ));
            }
            return Ok(format!("{}\t{k}\n", self.kind.letter()));
        }
        if self.state.len() > MAX_STATE_BYTES {
            return Err(format!(
                "{} bytes of pipeline state, at most {MAX_STATE_BYTES}",
                self.state.len()
            ));
        }
        let depth = match self.depth {
            DEPTH_GL => "gl",
            DEPTH_ZERO_TO_ONE => "z",
            d => {
                return Err(format!(
                    "depth mode {d} is not DMSH_DEPTH_GL or _ZERO_TO_ONE"
                ))
            }
        };
        let f = self
            .fragment
            .map_or_else(|| "-".to_string(), crate::key::to_string);
        let mut s = String::with_capacity(40 + 2 * self.state.len());
        s.push_str(&format!("R\t{k}\t{f}\t{depth}\t"));
        for b in self.state.iter() {
            s.push(hex_digit(b >> 4));
            s.push(hex_digit(b & 15));
        }
        s.push('\n');
        Ok(s)
    }

    /// Parses one non-blank line (no newline); `Err` is why a build cannot use it.
    pub fn parse(line: &str) -> Result<Row, String> {
        let f: Vec<&str> = line.splitn(6, '\t').collect();
        let letter = f[0];
        let fields = |n: usize| {
            if f.len() == n {
                Ok(())
            } else {
                Err(format!(
                    "a {letter} row has {n} fields, this one {}",
                    f.len()
                ))
            }
        };
        let kind = match letter {
            "S" => Kind::Shader,
            "R" => Kind::Render,
            "C" => Kind::Compute,
            _ => return Err(format!("unknown row kind {:?}", short(letter))),
        };
        if kind != Kind::Render {
            fields(2)?;
            return Ok(Row::keyed(kind, key(f[1], "key")?));
        }
        fields(5)?;
        let fragment = match f[2] {
            "-" => None,
            k => Some(key(k, "fragment key")?),
        };
        let depth = match f[3] {
            "gl" => DEPTH_GL,
            "z" => DEPTH_ZERO_TO_ONE,
            d => return Err(format!("depth {:?} is not gl or z", short(d))),
        };
        let state = unhex(f[4])
            .ok_or_else(|| "the pipeline state is not an even number of hex digits".to_string())?;
        if state.len() > MAX_STATE_BYTES {
            return Err(format!(
                "{} bytes of pipeline state, at most {MAX_STATE_BYTES}",
                state.len()
            ));
        }
        Ok(Row {
            kind,
            key: key(f[1], "vertex key")?,
            fragment,
            depth,
            state: state.into_boxed_slice(),
        })
    }
}

/// A list as read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    /// The rows (with their line numbers; line 1 is the header), in the file's order.
    pub rows: Vec<(u32, Row)>,
    /// Lines skipped.
    pub skipped: u32,
    /// The first [`MAX_SKIP_MESSAGES`] skipped lines: `line N: why`.
    pub skips: Vec<String>,
}

impl Parsed {
    /// Counts a skipped line, keeping its reason while there is room.
    pub fn skip(&mut self, line: u32, why: impl FnOnce() -> String) {
        self.skipped += 1;
        if self.skips.len() < MAX_SKIP_MESSAGES {
            self.skips.push(format!("line {line}: {}", why()));
        }
    }
}

/// Checks that `text` has the structure of a list (header, bounded lines, a newline at the
/// end); `Err` names the line.
pub fn check_structure(text: &str) -> Result<(), String> {
    if text.is_empty() {
        return Err("empty: no header line".into());
    }
    if !text.ends_with('\n') {
        return Err(format!(
            "line {}: no newline at the end: the file is truncated",
            text.lines().count()
        ));
    }
    for (i, line) in text.split_terminator('\n').enumerate() {
        if line.len() > MAX_LINE_BYTES {
            return Err(format!(
                "line {}: longer than {MAX_LINE_BYTES} bytes",
                i + 1
            ));
        }
        if i == 0 && line.trim_end_matches('\r') != HEADER {
            return Err(format!(
                "line 1: header {:?}, a warm-up list starts with {HEADER:?}",
                short(line)
            ));
        }
    }
    Ok(())
}

/// Parses the text of a list; `Err` (naming the line) when the list is unusable as a whole.
pub fn parse(text: &str) -> Result<Parsed, String> {
    check_structure(text)?;
    let mut p = Parsed::default();
    for (i, line) in text.split_terminator('\n').enumerate().skip(1) {
        let n = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let line = line.trim_end_matches('\r');
        if line.is_empty() {
            continue;
        }
        match Row::parse(line) {
            Ok(r) if p.rows.len() < MAX_ROWS => p.rows.push((n, r)),
            Ok(_) => return Err(format!("line {n}: more than {MAX_ROWS} rows")),
            Err(e) => p.skip(n, || e),
        }
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kind: Kind, key: u64, fragment: Option<u64>, depth: u32, state: &[u8]) -> Row {
        Row {
            kind,
            key,
            fragment,
            depth,
            state: state.into(),
        }
    }

    #[test]
    fn rows_round_trip_through_their_lines() {
        for r in [
            row(Kind::Shader, 0xaa, None, DEPTH_GL, &[]),
            row(Kind::Compute, u64::MAX, None, DEPTH_GL, &[]),
            row(
                Kind::Render,
                1,
                Some(2),
                DEPTH_ZERO_TO_ONE,
                &[0, 0xff, 0x10],
            ),
            row(Kind::Render, 1, None, DEPTH_GL, &[]),
            row(Kind::Render, 1, None, DEPTH_GL, &[7; MAX_STATE_BYTES]),
        ] {
            let l = r.line().unwrap();
            assert!(l.len() <= MAX_LINE_BYTES);
            assert_eq!(Row::parse(l.trim_end_matches('\n')).unwrap(), r, "{l}");
        }
        assert_eq!(
            row(Kind::Render, 0xab, Some(0xcd), DEPTH_ZERO_TO_ONE, &[0x1f])
                .line()
                .unwrap(),
            "R\t00000000000000ab\t00000000000000cd\tz\t1f\n"
        );
        assert!(row(Kind::Shader, 1, Some(2), DEPTH_GL, &[]).line().is_err());
        assert!(row(Kind::Render, 1, None, 5, &[]).line().is_err());
        assert!(row(Kind::Render, 1, None, 0, &[0; MAX_STATE_BYTES + 1])
            .line()
            .is_err());
    }

    #[test]
    fn lines_a_build_cannot_use_are_skipped_with_their_reason() {
        let k = "00000000000000aa";
        let text = format!(
            "{HEADER}\nS\t{k}\n\nX\t{k}\nS\t{k}\textra\nC\t{}\nR\t{k}\t-\tgl\t0\n\
             R\t{k}\t-\tw\t00\nR\t{k}\tnope\tgl\t\nR\t{k}\nC\t{k}\r\n\
             R\t{k}\t{k}\tgl\tABCD\n",
            &k[1..]
        );
        let p = parse(&text).unwrap();
        assert_eq!(
            p.rows.iter().map(|(n, r)| (*n, r.kind)).collect::<Vec<_>>(),
            [(2, Kind::Shader), (11, Kind::Compute)]
        );
        assert_eq!(p.skipped, 8);
        for (s, want) in p.skips.iter().zip([
            "line 4: unknown row kind \"X\"",
            "line 5: a S row has 2 fields, this one 3",
            "line 6: key \"0000000000000aa\" is not 16",
            "line 7: the pipeline state is not an even number",
            "line 8: depth \"w\" is not gl or z",
            "line 9: fragment key \"nope\"",
            "line 10: a R row has 5 fields, this one 2",
            "line 12: the pipeline state is not",
        ]) {
            assert!(s.starts_with(want), "{s} / {want}");
        }
    }

    #[test]
    fn lists_without_their_structure_are_unusable() {
        let long = format!("{HEADER}\nS\t{}\n", "0".repeat(MAX_LINE_BYTES));
        for (text, want) in [
            ("", "empty"),
            ("kind\tkey\n", "line 1: header \"kind\\tkey\""),
            (
                &format!("{HEADER}\nS\t00000000000000aa"),
                "line 2: no newline",
            ),
            (&long, "line 2: longer than 4096 bytes"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.starts_with(want), "{e}");
        }
        assert_eq!(parse(&format!("{HEADER}\r\n")).unwrap(), Parsed::default());
    }

    #[test]
    fn skip_messages_are_bounded_and_every_skip_is_counted() {
        let text = format!("{HEADER}\n{}", "?\n".repeat(1000));
        let p = parse(&text).unwrap();
        assert_eq!((p.skipped, p.skips.len()), (1000, MAX_SKIP_MESSAGES));
    }
}
