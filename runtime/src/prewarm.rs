//! An open title's warm-up rows: the seed list, then the device list (each read on its own,
//! so a missing or bad seed list never hides the device list: seed 002), every row resolved to
//! the title's shaders (their reflections loaded at open, on all cores), and the crash-safe
//! append of on-the-spot builds to the device list.

use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};

use crate::abi;
use crate::error::{Error, Status};
use crate::shader::Loaded;
use crate::title::Title;
use crate::warm::{self, Kind, List, Parsed, Row};

/// One list's state after open.
#[derive(Debug)]
pub struct ListState {
    result: Result<(), Error>,
    rows: u32,
    skipped: u32,
    report: CString,
}

impl Default for ListState {
    fn default() -> ListState {
        ListState {
            result: Err(Error::fixed(Status::WarmMissing, c"warm-up lists not read")),
            rows: 0,
            skipped: 0,
            report: CString::default(),
        }
    }
}

impl ListState {
    /// `Ok` when the list was read; else why nothing is pre-built from it (`WarmMissing`,
    /// `WarmBad`).
    pub fn status(&self) -> Result<(), &Error> {
        self.result.as_ref().map(|_| ())
    }

    /// Rows resolved (pre-built).
    pub fn rows(&self) -> u32 {
        self.rows
    }

    /// Lines skipped (a build cannot use them).
    pub fn skipped(&self) -> u32 {
        self.skipped
    }

    /// What to report: why the list is not used, or its skipped lines with their reasons
    /// (the first 64), or "".
    pub fn report(&self) -> &CStr {
        match &self.result {
            Err(e) => &e.message,
            Ok(()) => &self.report,
        }
    }
}

/// A resolved row: indices of the title's shaders.
#[derive(Debug)]
struct Resolved {
    kind: Kind,
    list: List,
    line: u32,
    depth: u32,
    shader: usize,
    fragment: Option<usize>,
    state: Box<[u8]>,
}

/// The warm-up rows of a title, in pre-build order, and the C records of them.
#[derive(Debug, Default)]
pub struct Warm {
    rows: Vec<Resolved>,
    c: Box<[abi::WarmRow]>,
    lists: [ListState; 2],
}

// SAFETY: `c`'s pointers point into `rows`' state boxes and the title's loaded shaders,
// neither changed nor dropped while the title (which owns this) is open.
unsafe impl Send for Warm {}
// SAFETY: as above; all of it is read-only after open.
unsafe impl Sync for Warm {}

/// A warm-up row as Rust hosts see it.
#[derive(Clone, Copy, Debug)]
pub struct WarmRow<'a> {
    /// What to build.
    pub kind: Kind,
    /// The list it comes from.
    pub list: List,
    /// Its line in that list (line 1 is the header).
    pub line: u32,
    /// `R`: the depth mode (`abi::DEPTH_*`); else `DEPTH_GL`.
    pub depth: u32,
    /// The shader (`S`, `C`) or the vertex shader (`R`).
    pub shader: &'a Loaded,
    /// `R`: the fragment shader, if any.
    pub fragment: Option<&'a Loaded>,
    /// `shader`'s entry point for `depth`.
    pub entry: &'a CStr,
    /// `R`: the host's pipeline settings.
    pub state: &'a [u8],
}

fn read_list(path: Option<&Path>, list: List) -> Result<Parsed, Error> {
    let name = match list {
        List::Seed => "seed",
        List::Device => "device",
    };
    let Some(path) = path else {
        return Err(Error::new(
            Status::WarmMissing,
            format!("no {name} warm-up list was given"),
        ));
    };
    let text = crate::files::read_text_opt(path, warm::MAX_LIST_BYTES, Status::WarmBad)
        .map_err(|e| Error::new(Status::WarmBad, format!("{e}; nothing pre-built from it")))?
        .ok_or_else(|| {
            Error::new(
                Status::WarmMissing,
                format!("{}: no {name} warm-up list", path.display()),
            )
        })?;
    warm::parse(&text).map_err(|e| {
        Error::new(
            Status::WarmBad,
            format!("{}: {e}; nothing pre-built from it", path.display()),
        )
    })
}

/// The index of `key` in `t` if its stage is `want` (any stage when `None`), loaded.
fn resolve_key(t: &Title, key: u64, want: Option<dmsh_formats::Stage>) -> Result<usize, String> {
    let k = crate::key::to_string(key);
    let i = t
        .index(key)
        .ok_or_else(|| format!("key {k} is not in the shader map"))?;
    let stage = t.stage_at(i);
    if let Some(w) = want.filter(|w| *w != stage) {
        return Err(format!("key {k} is a {stage} shader, not {w}"));
    }
    t.loaded_at(i).map(|_| i).map_err(|e| e.text().into_owned())
}

fn resolve(t: &Title, list: List, line: u32, r: Row) -> Result<Resolved, String> {
    use dmsh_formats::Stage;
    let (shader, fragment) = match r.kind {
        Kind::Shader => (resolve_key(t, r.key, None)?, None),
        Kind::Compute => (resolve_key(t, r.key, Some(Stage::Compute))?, None),
        Kind::Render => (
            resolve_key(t, r.key, Some(Stage::Vertex))?,
            r.fragment
                .map(|f| resolve_key(t, f, Some(Stage::Fragment)))
                .transpose()?,
        ),
    };
    Ok(Resolved {
        kind: r.kind,
        list,
        line,
        depth: r.depth,
        shader,
        fragment,
        state: r.state,
    })
}

impl Warm {
    /// Reads the seed list, then the device list, and resolves their rows against `t`
    /// (loading the shaders they name on all cores).
    pub fn read(t: &Title, seed: Option<&Path>, device: Option<&Path>) -> Warm {
        let parsed = [read_list(seed, List::Seed), read_list(device, List::Device)];
        let mut keys: Vec<usize> = parsed
            .iter()
            .flatten()
            .flat_map(|p| &p.rows)
            .flat_map(|(_, r)| [Some(r.key), r.fragment])
            .flatten()
            .filter_map(|k| t.index(k))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        t.load(&keys, false);
        let mut w = Warm::default();
        for (list, (p, path)) in [List::Seed, List::Device]
            .into_iter()
            .zip(parsed.into_iter().zip([seed, device]))
        {
            let mut p = match p {
                Ok(p) => p,
                Err(e) => {
                    w.lists[list as usize].result = Err(e);
                    continue;
                }
            };
            let before = w.rows.len();
            for (line, r) in std::mem::take(&mut p.rows) {
                match resolve(t, list, line, r) {
                    Ok(r) => w.rows.push(r),
                    Err(e) => p.skip(line, || e),
                }
            }
            let report = if p.skipped == 0 {
                String::new()
            } else {
                format!(
                    "{}: {} lines skipped (a build cannot use them; the first {} follow): {}",
                    path.map_or_else(String::new, |p| p.display().to_string()),
                    p.skipped,
                    warm::MAX_SKIP_MESSAGES,
                    p.skips.join("; ")
                )
            };
            w.lists[list as usize] = ListState {
                result: Ok(()),
                rows: (w.rows.len() - before) as u32,
                skipped: p.skipped,
                report: Error::new(Status::Ok, report).message.into_owned(),
            };
        }
        w.c = w.rows.iter().map(|r| c_row(t, r)).collect();
        w
    }

    /// The C records, in pre-build order.
    pub fn c_rows(&self) -> &[abi::WarmRow] {
        &self.c
    }

    /// A list's state.
    pub fn list(&self, list: List) -> &ListState {
        &self.lists[list as usize]
    }

    /// The rows, in pre-build order (no allocation).
    pub fn rows<'a>(&'a self, t: &'a Title) -> impl ExactSizeIterator<Item = WarmRow<'a>> + 'a {
        self.rows.iter().map(move |r| {
            let shader = loaded(t, r.shader);
            WarmRow {
                kind: r.kind,
                list: r.list,
                line: r.line,
                depth: r.depth,
                shader,
                fragment: r.fragment.map(|f| loaded(t, f)),
                entry: shader.entry(r.depth),
                state: &r.state,
            }
        })
    }
}

/// A shader resolution proved loaded.
fn loaded(t: &Title, i: usize) -> &Loaded {
    match t.loaded_at(i) {
        Ok(l) => l,
        Err(_) => unreachable!("warm-up rows name loaded shaders only"),
    }
}

fn c_row(t: &Title, r: &Resolved) -> abi::WarmRow {
    let s = loaded(t, r.shader);
    let f = r.fragment.map(|f| loaded(t, f));
    abi::WarmRow {
        kind: r.kind.code(),
        list: r.list as u32,
        line: r.line,
        depth: r.depth,
        shader: s.shader(),
        fragment: f.map_or(std::ptr::null(), |f| f.shader()),
        entry: s.entry(r.depth).as_ptr(),
        fragment_entry: f.map_or(std::ptr::null(), |f| f.entry(abi::DEPTH_GL).as_ptr()),
        state: if r.state.is_empty() {
            std::ptr::null()
        } else {
            r.state.as_ptr()
        },
        state_len: r.state.len() as u32,
    }
}

/// Appends `row` to the device list at `path`, crash-safely (`files::replace`): `Ok(false)`
/// when the list already holds it. A missing or unusable list is started afresh (header and
/// the row); one that cannot be read is an error.
pub fn append(path: &Path, row: &Row) -> Result<bool, Error> {
    let line = row
        .line()
        .map_err(|e| Error::new(Status::Argument, format!("not a warm-up row: {e}")))?;
    let at = |e: String| Error::new(Status::WarmWrite, format!("{}: {e}", path.display()));
    let old = crate::files::read_text_opt(path, warm::MAX_LIST_BYTES, Status::WarmWrite)?
        .filter(|t| warm::check_structure(t).is_ok())
        .unwrap_or_else(|| format!("{}\n", warm::HEADER));
    let new = line.trim_end_matches('\n');
    if old
        .split_terminator('\n')
        .any(|l| l.trim_end_matches('\r') == new)
    {
        return Ok(false);
    }
    if (old.len() + line.len()) as u64 > warm::MAX_LIST_BYTES {
        return Err(at(format!(
            "the device list is full ({} bytes at most)",
            warm::MAX_LIST_BYTES
        )));
    }
    crate::files::replace(path, format!("{old}{line}").as_bytes())
        .map_err(|e| at(format!("not written: {e}")))?;
    Ok(true)
}

/// The default seed list: `pso_manifest.tsv` next to the shader map (as the seed's host).
pub fn default_seed(shader_map: &Path) -> PathBuf {
    shader_map
        .parent()
        .unwrap_or(Path::new("."))
        .join("pso_manifest.tsv")
}
