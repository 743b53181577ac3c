//! Shader records: one control section + code area, validated and keyed, with where it came from.

use std::sync::Arc;

use crate::code::{self, Layout};
use crate::control::{self, Control, Gen};
use crate::error::{ReadError, WarnKind};
use crate::key;
use crate::sph::{self, SphIo};
use crate::stage::Stage;

/// The container kinds that hold shaders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ContainerKind {
    /// NintendoWare BNSH (bfsha, effects, layouts, main).
    Bnsh,
    /// agl BAHS (.sharcb).
    Bahs,
    /// GLSLC compiler output (in main).
    Glslc,
    /// MercurySteam MSHD (.bshdat).
    Mshd,
    /// agl NDSR pack (agl_ndsr.pck).
    Ndsr,
    /// Koei Tecmo KTGL package (G2S, `_DOK0000`, SPKG) of GLSLC outputs.
    Ktgl,
    /// Unity Shader object (class 48) in a serialized file.
    Unity,
}

impl ContainerKind {
    /// All kinds, in table order.
    pub const ALL: [ContainerKind; 7] = [
        ContainerKind::Bnsh,
        ContainerKind::Bahs,
        ContainerKind::Glslc,
        ContainerKind::Mshd,
        ContainerKind::Ndsr,
        ContainerKind::Ktgl,
        ContainerKind::Unity,
    ];

    /// The name in shader_map.tsv.
    pub const fn as_str(self) -> &'static str {
        match self {
            ContainerKind::Bnsh => "bnsh",
            ContainerKind::Bahs => "bahs",
            ContainerKind::Glslc => "glslc",
            ContainerKind::Mshd => "mshd",
            ContainerKind::Ndsr => "ndsr",
            ContainerKind::Ktgl => "ktgl",
            ContainerKind::Unity => "unity",
        }
    }
}

/// A validated, keyed shader stage (without its origin).
#[derive(Debug, Clone)]
pub struct Piece {
    /// 16 lower-case hex digits.
    pub key: String,
    /// Stage.
    pub stage: Stage,
    /// Code layout.
    pub layout: Layout,
    /// The control section's fields.
    pub ctl: Control,
    /// Control section bytes (`ctl.len` of them); empty until `fill` copies them (the scan
    /// copies only the first find of each key).
    pub control: Vec<u8>,
    /// Code area bytes (the ones the key covers); empty until `fill`.
    pub code: Vec<u8>,
    /// Where the control section lies in the buffer the container was read from.
    pub control_at: std::ops::Range<usize>,
    /// Where the code area lies in that buffer.
    pub code_at: std::ops::Range<usize>,
    /// SPH inputs / outputs.
    pub io: SphIo,
}

impl Piece {
    /// Moves the byte ranges by `by` (for readers working on a sub-slice of the buffer).
    pub fn shift(&mut self, by: usize) {
        self.control_at = self.control_at.start + by..self.control_at.end + by;
        self.code_at = self.code_at.start + by..self.code_at.end + by;
    }

    /// Copies the control section and code area out of `buf` (the buffer the ranges index).
    pub fn fill(&mut self, buf: &[u8]) {
        self.control = buf[self.control_at.clone()].to_vec();
        self.code = buf[self.code_at.clone()].to_vec();
    }
}

/// A shader found in a container, with its position there.
#[derive(Debug, Clone)]
pub struct Hit {
    /// The shader.
    pub piece: Piece,
    /// Offset of the container inside the buffer scanned.
    pub offset: u64,
    /// Variation / program / record index inside the container, e.g. `var3.vertex`.
    pub index: String,
}

/// A shader with its origin: a row of shader_map.tsv.
#[derive(Debug, Clone)]
pub struct Shader {
    /// The shader.
    pub piece: Piece,
    /// Container kind.
    pub kind: ContainerKind,
    /// Input list position: RomFS inputs first (0..), then mains.
    pub source: u32,
    /// Name of the input (`romfs0`, `main1`, …).
    pub source_name: Arc<str>,
    /// Path with archive nesting.
    pub path: Arc<str>,
    /// Offset of the container in the innermost buffer.
    pub offset: u64,
    /// Index inside the container.
    pub index: String,
}

/// Where to look for one control section + code area inside a buffer.
#[derive(Debug, Clone, Copy)]
pub struct Spot {
    /// Control section offset.
    pub ctl: usize,
    /// End of the bytes the control section may occupy.
    pub ctl_end: usize,
    /// Control size the container records, if any.
    pub ctl_size: Option<usize>,
    /// Code area offset.
    pub code: usize,
    /// End of the bytes the code area may occupy.
    pub code_end: usize,
    /// Stage the container claims, if any.
    pub claimed: Option<Stage>,
    /// Whether headerless compute code is allowed here.
    pub allow_bare: bool,
}

/// Validates and keys the shader at `spot` of `buf` (the control / code / length check).
pub fn extract(buf: &[u8], spot: Spot) -> Result<Piece, ReadError> {
    extract_with(buf, spot, &mut Work::unlimited())
}

/// How many control + code bytes one container may still check and hash. Containers whose
/// shaders overlap (many records pointing into one large area) would otherwise cost time
/// quadratic in their size.
#[derive(Debug, Clone)]
pub struct Work {
    left: u64,
}

impl Work {
    /// No limit.
    pub fn unlimited() -> Work {
        Work { left: u64::MAX }
    }

    /// The budget for a container of `size` bytes: 8 × its size + 16 MiB.
    pub fn for_container(size: usize) -> Work {
        Work {
            left: (size as u64).saturating_mul(8).saturating_add(16 << 20),
        }
    }

    /// Takes `n` bytes from the budget; false when it is spent.
    pub fn take(&mut self, n: usize) -> bool {
        match self.left.checked_sub(n as u64) {
            Some(l) => {
                self.left = l;
                true
            }
            None => false,
        }
    }
}

/// What identifies a spot for the memo: control, code, their ends, the claimed stage.
type SpotKey = (usize, usize, usize, usize, Option<Stage>);

/// `extract` memoised by spot (repeated pointers cost nothing) and charged to a work budget.
#[derive(Debug)]
pub struct Extractor {
    work: Work,
    memo: std::collections::HashMap<SpotKey, Result<Piece, ReadError>>,
}

impl Extractor {
    /// An extractor for a container of `size` bytes.
    pub fn new(size: usize) -> Extractor {
        Extractor {
            work: Work::for_container(size),
            memo: Default::default(),
        }
    }

    /// Extracts the shader at `spot` of `buf`, or returns the earlier result for the same spot.
    pub fn get(&mut self, buf: &[u8], spot: Spot) -> Result<Piece, ReadError> {
        let k = (
            spot.ctl,
            spot.code,
            spot.ctl_end,
            spot.code_end,
            spot.claimed,
        );
        if let Some(r) = self.memo.get(&k) {
            return r.clone();
        }
        let r = extract_with(buf, spot, &mut self.work);
        self.memo.insert(k, r.clone());
        r
    }
}

/// `extract`, charging the control + code bytes to `work`.
pub fn extract_with(buf: &[u8], spot: Spot, work: &mut Work) -> Result<Piece, ReadError> {
    let bad = |d: String| ReadError::new(WarnKind::BadShader, spot.ctl, d);
    let ctl_end = spot.ctl_end.min(buf.len());
    let code_end = spot.code_end.min(buf.len());
    if spot.ctl >= ctl_end || spot.code >= code_end {
        return Err(ReadError::new(
            WarnKind::Truncated,
            spot.ctl,
            "control or code outside the buffer",
        ));
    }
    let cbytes = &buf[spot.ctl..ctl_end];
    let ctl = control::parse(cbytes, spot.ctl_size).map_err(|e| bad(e.0))?;
    if !work.take(ctl.len.saturating_add(ctl.code_size)) {
        return Err(ReadError::new(
            WarnKind::SizeCap,
            spot.ctl,
            "the container's shaders overlap more than 8 × its size; the rest is skipped",
        ));
    }
    let code_all = &buf[spot.code..code_end];
    let (stage, layout) =
        code::classify(&ctl, code_all, spot.claimed, spot.allow_bare).map_err(bad)?;
    if ctl.gen == Gen::Nvn2 && cbytes.len() < control::NVN2_KEY_CONTROL_LEN {
        return Err(bad("NVN2 control shorter than 0x48".into()));
    }
    let code = &code_all[..ctl.code_size];
    let key = key::key(&ctl, cbytes, code);
    let io = layout
        .sph_start()
        .and_then(|at| code.get(at..))
        .map(|sph| sph::io(sph, stage))
        .unwrap_or_default();
    Ok(Piece {
        key,
        stage,
        layout,
        control: Vec::new(),
        code: Vec::new(),
        control_at: spot.ctl..spot.ctl + ctl.len,
        code_at: spot.code..spot.code + ctl.code_size,
        io,
        ctl,
    })
}

/// A container's findings: shaders, (vertex, fragment) key pairs, and errors met on the way.
#[derive(Debug, Default)]
pub struct Hits {
    /// Shaders found.
    pub shaders: Vec<Hit>,
    /// (vertex key, fragment key) pairs the container defines.
    pub pairs: Vec<(String, String)>,
    /// Problems that did not stop the container.
    pub errors: Vec<ReadError>,
}

impl Hits {
    /// Moves another container's findings after these.
    pub fn append(&mut self, mut o: Hits) {
        self.shaders.append(&mut o.shaders);
        self.pairs.append(&mut o.pairs);
        self.errors.append(&mut o.errors);
    }

    /// Adds a shader found at `offset` (its `index` within the container), noting `stage` and
    /// its key in `group`, the program it belongs to, for
    /// [`pair_vertex_with_next_fragment`](Self::pair_vertex_with_next_fragment).
    pub fn push_in_group(
        &mut self,
        group: &mut Vec<(Stage, String)>,
        stage: Stage,
        piece: Piece,
        offset: u64,
        index: String,
    ) {
        group.push((stage, piece.key.clone()));
        self.shaders.push(Hit {
            piece,
            offset,
            index,
        });
    }

    /// Pairs each vertex shader of `group` with the fragment shader right after it.
    pub fn pair_vertex_with_next_fragment(&mut self, group: &[(Stage, String)]) {
        for (i, (s, k)) in group.iter().enumerate() {
            if *s == Stage::Vertex {
                if let Some((_, f)) = group[i + 1..]
                    .iter()
                    .take_while(|(s2, _)| *s2 != Stage::Vertex)
                    .find(|(s2, _)| *s2 == Stage::Fragment)
                {
                    self.pairs.push((k.clone(), f.clone()));
                }
            }
        }
    }
}
