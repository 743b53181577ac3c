//! The shader map (`shader_map.tsv`, `dmsh split`): at run time only key → stage is used.
//!
//! A header line names the columns (`key` and `stage` must be among them; the others are
//! ignored), then one row per shader variant; a key may repeat (variants sharing a shader)
//! but always with one stage. Every line ends with a newline (a map without one at the end
//! is truncated).

use std::path::Path;

use dmsh_formats::Stage;

use crate::error::{Error, Status};
use crate::files;

/// The largest shader map read (a title's map is a few MiB).
pub const MAX_MAP_BYTES: u64 = 256 << 20;

/// Reads the map at `path`: (key, stage) sorted by key, each key once.
pub fn read(path: &Path) -> Result<Vec<(u64, Stage)>, Error> {
    let text = files::read_text(path, MAX_MAP_BYTES, Status::Map)?;
    parse(&text).map_err(|e| Error::new(Status::Map, format!("{}: {e}", path.display())))
}

/// Parses the text of a shader map (errors name the line).
pub fn parse(text: &str) -> Result<Vec<(u64, Stage)>, String> {
    if !text.is_empty() && !text.ends_with('\n') {
        return Err(format!(
            "line {}: no newline at the end: the file is truncated",
            text.lines().count()
        ));
    }
    let mut lines = text.lines();
    let header: Vec<&str> = lines
        .next()
        .ok_or("empty: no header line")?
        .split('\t')
        .collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h.trim_end_matches('\r') == name)
            .ok_or_else(|| format!("line 1: no column `{name}`"))
    };
    let (kc, sc) = (col("key")?, col("stage")?);
    let mut rows: Vec<(u64, Stage, usize)> = Vec::new();
    for (i, line) in lines.enumerate() {
        let n = i + 2;
        let line = line.trim_end_matches('\r');
        if line.is_empty() {
            continue;
        }
        let c: Vec<&str> = line.split('\t').collect();
        let (Some(k), Some(s)) = (c.get(kc), c.get(sc)) else {
            return Err(format!("line {n}: fewer than {} columns", kc.max(sc) + 1));
        };
        let key = crate::key::parse(k)
            .ok_or_else(|| format!("line {n}: key {k:?} is not 16 lower-case hex digits"))?;
        let stage = Stage::parse(s).ok_or_else(|| format!("line {n}: unknown stage {s:?}"))?;
        rows.push((key, stage, n));
    }
    rows.sort_by_key(|r| (r.0, r.2));
    let mut out: Vec<(u64, Stage)> = Vec::with_capacity(rows.len());
    let mut first_line = 0;
    for (key, stage, n) in rows {
        match out.last() {
            Some(&(k, s)) if k == key => {
                if s != stage {
                    return Err(format!(
                        "key {} is {s} at line {first_line} and {stage} at line {n}",
                        crate::key::to_string(key)
                    ));
                }
            }
            _ => {
                out.push((key, stage));
                first_line = n;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_key_and_stage_and_merges_repeats() {
        let t = "container\tkey\tstage\tgen\n\
                 bnsh\t00000000000000ff\tfragment\tnvn1\n\
                 bnsh\t0000000000000001\tvertex\tnvn1\n\
                 bnsh\t00000000000000ff\tfragment\tnvn1\n";
        assert_eq!(
            parse(t).unwrap(),
            vec![(1, Stage::Vertex), (0xff, Stage::Fragment)]
        );
    }

    #[test]
    fn bad_rows_name_their_line() {
        let h = "key\tstage\n";
        for (body, want) in [
            ("0000000000000001\n", "line 2: fewer than 2 columns"),
            ("0000000000000001\tvertex", "line 2: no newline at the end"),
            ("000000000000001\tvertex\n", "line 2: key"),
            ("0000000000000001\tpixel\n", "line 2: unknown stage"),
            (
                "0000000000000001\tvertex\n0000000000000001\tcompute\n",
                "is vertex at line 2 and compute at line 3",
            ),
        ] {
            let e = parse(&format!("{h}{body}")).unwrap_err();
            assert!(e.contains(want), "{e}");
        }
        assert!(parse("").unwrap_err().contains("empty"));
        assert!(parse("key\tgen\n")
            .unwrap_err()
            .contains("no column `stage`"));
    }
}
