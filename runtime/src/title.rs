//! An open title: the shader map's keys, the checked `b-<V>/` folder, the c1 list, and each
//! shader's record, loaded once (at its first lookup, or all at open with `eager`).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use dmsh_formats::Stage;

use crate::abi::DEPTH_ZERO_TO_ONE;
use crate::c1::{self, C1};
use crate::error::{Error, Status};
use crate::prewarm::{ListState, Warm, WarmRow};
use crate::shader::{self, Loaded};
use crate::warm::{List, Row};

/// What to open.
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    /// The shader map (`shader_map.tsv`); `None`: the keys and stages `b-<V>/_b_build.json`
    /// records (a Vulkan capture build, `dmsh build --spirv`, has no map).
    pub shader_map: Option<PathBuf>,
    /// The folder holding `b-<V>/`.
    pub library_dir: PathBuf,
    /// `c1_full.tsv`; `None`: the one next to the shader map (without a map: none, since a
    /// capture build has no guest constant banks).
    pub c1_list: Option<PathBuf>,
    /// The chain version V; `None`: the compiled-in one.
    pub chain: Option<String>,
    /// Load and check every reflection at open (no lookup reads a file afterwards).
    pub eager: bool,
    /// The seed warm-up list (`pso_manifest.tsv`); `None`: the one next to the shader map
    /// (without a map: none).
    pub warm_seed: Option<PathBuf>,
    /// The device warm-up list (`pso_user.tsv`); `None`: none (and no appends).
    pub warm_device: Option<PathBuf>,
    /// Read neither warm-up list (the seed's `DM_PSO_MANIFEST=off`).
    pub warm_off: bool,
}

type Slot = OnceLock<Result<Box<Loaded>, Error>>;

struct Entry {
    stage: Stage,
    slot: Slot,
    /// The variants `_p`, `_g`, `_q`, `_d` (`abi::VARIANT_DRAW` … `VARIANT_DUAL_SOURCE`),
    /// made at the key's first variant lookup.
    variants: OnceLock<Box<[Slot; 4]>>,
}

/// An open title. Lookups take `&self` and may run on many threads at once.
pub struct Title {
    chain: String,
    chain_c: std::ffi::CString,
    dir: PathBuf,
    keys: Vec<u64>,
    entries: Vec<Entry>,
    c1: C1,
    warm: Warm,
    warm_device: Option<PathBuf>,
    appending: std::sync::Mutex<()>,
}

/// A successful lookup.
#[derive(Clone, Copy, Debug)]
pub struct Found<'a> {
    /// The shader's record.
    pub shader: &'a Loaded,
    /// The entry point for the depth mode asked for.
    pub entry: &'a std::ffi::CStr,
}

static UNKNOWN_KEY: Error = Error::fixed(Status::UnknownKey, c"the key is not in the shader map");

static UNKNOWN_VARIANT: Error = Error::fixed(
    Status::Argument,
    c"variant is DMSH_VARIANT_MAIN, DMSH_VARIANT_DRAW, DMSH_VARIANT_CAPTURE, \
      DMSH_VARIANT_PRIMITIVE_ID or DMSH_VARIANT_DUAL_SOURCE",
);

/// `_b_build.json`'s chain version and its keys' stages (the rest is skipped unparsed).
#[derive(serde::Deserialize)]
struct BuildRecord {
    chain: Option<String>,
    #[serde(default)]
    shaders: Vec<KeyRecord>,
}

/// One key of `_b_build.json`: its key and stage.
#[derive(serde::Deserialize)]
struct KeyRecord {
    key: String,
    stage: String,
}

/// The keys and stages a build record lists, sorted, for a title opened without a shader map.
/// A key whose stage is `unknown` (a capture file that is not a module) is left out: nothing
/// was built for it.
fn record_keys(rec: &Path, r: BuildRecord) -> Result<Vec<(u64, Stage)>, Error> {
    let at = |m: String| Error::new(Status::Map, format!("{}: {m}", rec.display()));
    let mut rows = Vec::with_capacity(r.shaders.len());
    for s in r.shaders.iter().filter(|s| s.stage != "unknown") {
        let key = crate::key::parse(&s.key)
            .ok_or_else(|| at(format!("key {:?} is not 16 lower-case hex digits", s.key)))?;
        let stage = Stage::parse(&s.stage)
            .ok_or_else(|| at(format!("key {}: unknown stage {:?}", s.key, s.stage)))?;
        rows.push((key, stage));
    }
    rows.sort_by_key(|r| r.0);
    if let Some(w) = rows.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(at(format!(
            "key {} is recorded twice",
            crate::key::to_string(w[0].0)
        )));
    }
    Ok(rows)
}

/// The largest `_b_build.json` read.
const MAX_BUILD_RECORD_BYTES: u64 = 256 << 20;

/// Checks that `library_dir/b-<chain>` exists and is that version's build; returns the folder
/// and, when `keys` is asked for, the keys and stages its `_b_build.json` records (which must
/// then exist).
fn check_folder(
    library_dir: &Path,
    chain: &str,
    keys: bool,
) -> Result<(PathBuf, Vec<(u64, Stage)>), Error> {
    let dir = library_dir.join(format!("b-{chain}"));
    if !dir.is_dir() {
        let mut others: Vec<String> = std::fs::read_dir(library_dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|n| n.strip_prefix("b-").is_some_and(crate::chain::is_version))
            .collect();
        others.sort();
        if others.is_empty() {
            return Err(Error::new(
                Status::FolderMissing,
                format!(
                    "{}: no b-{chain} folder (no build at all): run dmsh build",
                    library_dir.display()
                ),
            ));
        }
        return Err(Error::new(
            Status::FolderVersion,
            format!(
                "{}: no b-{chain} folder, only {}: the libraries were built by another chain; \
                 rebuild them or the host; nothing loaded",
                library_dir.display(),
                others.join(", ")
            ),
        ));
    }
    let rec = dir.join("_b_build.json");
    let text = crate::files::read_text_opt(&rec, MAX_BUILD_RECORD_BYTES, Status::FolderVersion)?;
    if text.is_none() && keys {
        return Err(Error::new(
            Status::Map,
            format!(
                "{}: no build record, and no shader map was given: the keys of a title opened \
                 without a map come from its build record",
                rec.display()
            ),
        ));
    }
    let mut rows = Vec::new();
    if let Some(text) = text {
        let r: BuildRecord = serde_json::from_str(&text)
            .map_err(|e| Error::new(Status::FolderVersion, format!("{}: {e}", rec.display())))?;
        if r.chain.as_deref() != Some(chain) {
            return Err(Error::new(
                Status::FolderVersion,
                format!(
                    "{}: records chain {}, the folder's name says {chain}; nothing loaded",
                    rec.display(),
                    r.chain.as_deref().unwrap_or("(none)")
                ),
            ));
        }
        if keys {
            rows = record_keys(&rec, r)?;
        }
    }
    Ok((dir, rows))
}

impl Title {
    /// Opens a title: reads the map and the c1 list, checks the `b-<V>` folder; reads no
    /// reflection unless `eager`.
    pub fn open(o: &OpenOptions) -> Result<Title, Error> {
        let chain = crate::chain::choose(o.chain.as_deref())?;
        let map_rows = o.shader_map.as_deref().map(crate::map::read).transpose()?;
        let (dir, record_rows) = check_folder(&o.library_dir, &chain, map_rows.is_none())?;
        let beside_map = |name: &str| {
            (o.shader_map.as_deref()).map(|m| m.parent().unwrap_or(Path::new(".")).join(name))
        };
        let c1 = match o.c1_list.clone().or_else(|| beside_map("c1_full.tsv")) {
            Some(p) => c1::read(&p, &chain),
            None => C1::Listed(Vec::new()),
        };
        let rows = map_rows.unwrap_or(record_rows);
        let (keys, entries) = rows
            .into_iter()
            .map(|(k, stage)| {
                (
                    k,
                    Entry {
                        stage,
                        slot: OnceLock::new(),
                        variants: OnceLock::new(),
                    },
                )
            })
            .unzip();
        let mut t = Title {
            chain_c: std::ffi::CString::new(chain.clone()).unwrap_or_default(),
            chain,
            dir,
            keys,
            entries,
            c1,
            warm: Warm::default(),
            warm_device: o.warm_device.clone(),
            appending: std::sync::Mutex::new(()),
        };
        if o.eager {
            t.load(&(0..t.keys.len()).collect::<Vec<_>>(), true);
        }
        if !o.warm_off {
            let seed = (o.warm_seed.clone())
                .or_else(|| o.shader_map.as_deref().map(crate::prewarm::default_seed));
            t.warm = Warm::read(&t, seed.as_deref(), o.warm_device.as_deref());
        }
        Ok(t)
    }

    /// Loads the records of the shaders at `indices` (and, with `variants`, the variants their
    /// stage can have: `_p` geometry, `_g` vertex, `_q` and `_d` fragment), on as many threads
    /// as the machine has.
    pub(crate) fn load(&self, indices: &[usize], variants: bool) {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        let chunk = indices.len().div_ceil(n).max(1);
        std::thread::scope(|s| {
            for part in indices.chunks(chunk) {
                s.spawn(move || {
                    for &j in part {
                        let _ = self.get(j);
                        if !variants {
                            continue;
                        }
                        for &v in shader::variants_of(self.entries[j].stage) {
                            let _ = self.get_variant(j, v);
                        }
                    }
                });
            }
        });
    }

    /// The index of `key` in the map.
    pub(crate) fn index(&self, key: u64) -> Option<usize> {
        self.keys.binary_search(&key).ok()
    }

    /// The map's stage of the shader at `i`.
    pub(crate) fn stage_at(&self, i: usize) -> Stage {
        self.entries[i].stage
    }

    /// The record of the shader at `i` (loaded now if it was not).
    pub(crate) fn loaded_at(&self, i: usize) -> Result<&Loaded, &Error> {
        self.get(i).as_deref()
    }

    fn get(&self, i: usize) -> &Result<Box<Loaded>, Error> {
        let e = &self.entries[i];
        let key = self.keys[i];
        e.slot.get_or_init(|| {
            shader::load(&self.dir, key, e.stage, &self.chain, self.c1.full(key)).map(Box::new)
        })
    }

    /// Variant `variant` (`abi::VARIANT_DRAW` … `VARIANT_DUAL_SOURCE`) of the shader at
    /// `i` (loaded now if it was not).
    fn get_variant(&self, i: usize, variant: u32) -> &Result<Box<Loaded>, Error> {
        let e = &self.entries[i];
        let key = self.keys[i];
        let slots = e.variants.get_or_init(Default::default);
        slots[variant as usize - 1].get_or_init(|| {
            shader::load_variant(
                &self.dir,
                key,
                e.stage,
                variant,
                &self.chain,
                self.c1.full(key),
            )
            .map(Box::new)
        })
    }

    /// Looks `key` up for depth mode `depth` (`abi::DEPTH_*`). After the shader's first
    /// lookup (or an eager open) this neither allocates nor reads a file.
    pub fn lookup(&self, key: u64, depth: u32) -> Result<Found<'_>, &Error> {
        self.lookup_pass(key, crate::abi::VARIANT_MAIN, depth)
    }

    /// Looks up variant `variant` of `key` (`abi::VARIANT_*`: `VARIANT_MAIN` is `<key>_b`, as
    /// [`Title::lookup`]; `VARIANT_DRAW` `<key>_p`, a geometry shader's draw;
    /// `VARIANT_CAPTURE` `<key>_g`, a vertex shader's capture form; `VARIANT_PRIMITIVE_ID`
    /// `<key>_q`, a fragment shader reading gl_PrimitiveID from the draw's varying;
    /// `VARIANT_DUAL_SOURCE` `<key>_d`, a Vulkan fragment module's dual-source form) for
    /// depth mode `depth`. A variant that was not built is `Status::NotBuilt` naming the key
    /// and file; an unknown `variant` is `Status::Argument`. After the variant's first lookup
    /// (or an eager open) this neither allocates nor reads a file.
    pub fn lookup_pass(&self, key: u64, variant: u32, depth: u32) -> Result<Found<'_>, &Error> {
        let i = self.keys.binary_search(&key).map_err(|_| &UNKNOWN_KEY)?;
        let shader = match variant {
            crate::abi::VARIANT_MAIN => self.get(i),
            crate::abi::VARIANT_DRAW
            | crate::abi::VARIANT_CAPTURE
            | crate::abi::VARIANT_PRIMITIVE_ID
            | crate::abi::VARIANT_DUAL_SOURCE => self.get_variant(i, variant),
            _ => return Err(&UNKNOWN_VARIANT),
        };
        let shader = shader.as_deref()?;
        let entry = shader.entry(if depth == DEPTH_ZERO_TO_ONE {
            DEPTH_ZERO_TO_ONE
        } else {
            crate::abi::DEPTH_GL
        });
        Ok(Found { shader, entry })
    }

    /// The chain version V.
    pub fn chain(&self) -> &str {
        &self.chain
    }

    /// V as a C string.
    pub fn chain_c(&self) -> &std::ffi::CStr {
        &self.chain_c
    }

    /// The `b-<V>` folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The map's keys, sorted.
    pub fn keys(&self) -> &[u64] {
        &self.keys
    }

    /// The stage the map gives `key`.
    pub fn stage(&self, key: u64) -> Option<Stage> {
        self.keys
            .binary_search(&key)
            .ok()
            .map(|i| self.entries[i].stage)
    }

    /// The warm-up rows, seed list first, then device list, each in its order (resolved to
    /// this title's shaders; no allocation).
    pub fn warm_rows(&self) -> impl ExactSizeIterator<Item = WarmRow<'_>> + '_ {
        self.warm.rows(self)
    }

    /// The warm-up rows as C records (`DmshWarmRow`), in the same order.
    pub fn warm_c_rows(&self) -> &[crate::abi::WarmRow] {
        self.warm.c_rows()
    }

    /// A warm-up list's state: read or why not, rows, skipped lines and their reasons.
    pub fn warm_list(&self, list: List) -> &ListState {
        self.warm.list(list)
    }

    /// Appends `row` (built on the spot) to the device list crash-safely: `Ok(true)` when
    /// written, `Ok(false)` when the list already holds it. Appends from many threads are
    /// serialised; the rows read at open are unchanged.
    pub fn warm_append(&self, row: &Row) -> Result<bool, Error> {
        let Some(path) = &self.warm_device else {
            return Err(Error::fixed(
                Status::WarmWrite,
                c"no device warm-up list (pso_user) was given at open",
            ));
        };
        let _one = self.appending.lock().unwrap_or_else(|e| e.into_inner());
        crate::prewarm::append(path, row)
    }

    /// The c1 list's state: `Ok` when it was read, else why every shader gets its own c1
    /// buffer.
    pub fn c1(&self) -> Result<(), &Error> {
        match &self.c1 {
            C1::Listed(_) => Ok(()),
            C1::Unusable(e) => Err(e),
        }
    }
}
