//! Test support and the demo-title generator: builds NVN control sections and code areas from
//! the real shader binaries of `tests/corpus` and wraps them in every container the scanner
//! reads. Compression and archives are written by independent crates (`zstd`, `yaz0`, `sarc`,
//! `lz4_flex`, `flate2`; Unity bundles by UnityPy); the NVN containers have no independent writer and follow docs/formats.md.
//! Expected keys are computed here with sha2 directly, not with the scanner's key module.

#![allow(dead_code)]

pub mod demo;
pub mod ktgl;
pub mod re_engine;
pub mod ue;
pub mod unity;
pub mod writers;

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The split outputs under `dir`: `pkg/`, `map.tsv`, `facts.tsv` and `pairs.tsv`.
pub fn split_outputs(dir: &Path) -> dmsh_scan::Outputs {
    dmsh_scan::Outputs {
        pkg_dir: dir.join("pkg"),
        map: dir.join("map.tsv"),
        facts: dir.join("facts.tsv"),
        pairs: Some(dir.join("pairs.tsv")),
    }
}

/// The rows of the TSV file `p` after its header line, split at tabs.
pub fn tsv_rows(p: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split('\t').map(String::from).collect())
        .collect()
}

/// One shader of the dksh corpus (uam output): stage, code and program header fields.
#[derive(Debug, Clone)]
pub struct CorpusShader {
    /// File stem, e.g. `vs_basic_mvp.vert`.
    pub name: String,
    /// Stage name.
    pub stage: &'static str,
    /// Graphics: SPH + instructions; compute: instructions.
    pub program: Vec<u8>,
    /// c1 data, if any.
    pub c1: Vec<u8>,
    /// Registers.
    pub gprs: u32,
    /// Compute thread group.
    pub threads: [u32; 3],
    /// Compute shared bytes.
    pub shared: u32,
}

fn rd32(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
}

/// Loads every `.dksh` of `tests/corpus/dksh`, sorted by name.
pub fn load_dksh() -> Vec<CorpusShader> {
    let dir = repo_root().join("tests/corpus/dksh");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/corpus/dksh")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".dksh"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let b = std::fs::read(dir.join(&n)).unwrap();
            assert_eq!(rd32(&b, 0), 0x4853_4B44, "{n}: DKSH magic");
            let control_sz = rd32(&b, 8) as usize;
            let code_sz = rd32(&b, 12) as usize;
            let p = rd32(&b, 16) as usize;
            let ty = rd32(&b, p);
            let entry = rd32(&b, p + 4) as usize;
            let gprs = rd32(&b, p + 8);
            let c1_off = rd32(&b, p + 12) as usize;
            let c1_sz = rd32(&b, p + 16) as usize;
            let code = &b[control_sz..control_sz + code_sz];
            let end = if c1_sz > 0 { c1_off } else { code_sz };
            let stage = [
                "vertex",
                "fragment",
                "geometry",
                "tess_control",
                "tess_eval",
                "compute",
            ][ty as usize];
            let (threads, shared) = if stage == "compute" {
                (
                    [rd32(&b, p + 0x18), rd32(&b, p + 0x1C), rd32(&b, p + 0x20)],
                    rd32(&b, p + 0x24),
                )
            } else {
                ([0; 3], 0)
            };
            CorpusShader {
                name: n.trim_end_matches(".dksh").to_string(),
                stage,
                program: code[entry..end].to_vec(),
                c1: code[c1_off..c1_off + c1_sz].to_vec(),
                gprs,
                threads,
                shared,
            }
        })
        .collect()
}

/// Raw sm_86 (Ampere) code of the sass corpus kernels, sorted by name.
pub fn load_sm86() -> Vec<(String, Vec<u8>)> {
    let dir = repo_root().join("tests/corpus/sass");
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .expect("tests/corpus/sass")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sm86.bin"))
        .map(|n| {
            let b = std::fs::read(dir.join(&n)).unwrap();
            (n.trim_end_matches(".sm86.bin").to_string(), b)
        })
        .collect();
    v.sort();
    v
}

/// NAK's sm86 program of `name` (`vs_basic_mvp.vert`): tests/corpus/nak's code.bin, the
/// graphics stages' 0x80-byte SPH (version 4) followed by the code.
pub fn load_nak_sm86(name: &str) -> Vec<u8> {
    let p = repo_root().join(format!("tests/corpus/nak/{name}.sm86.code.bin"));
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A shader as put into a fixture: the bytes the host would see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    /// Where it came from (corpus name + variant).
    pub name: String,
    /// Stage name.
    pub stage: &'static str,
    /// NVN2?
    pub nvn2: bool,
    /// The control section as stored (its own length, plus any text the container keeps).
    pub control: Vec<u8>,
    /// The code area, exactly the bytes the key covers.
    pub code: Vec<u8>,
}

impl Built {
    /// The key, computed independently of the scanner: sha256 over the first
    /// min(0x880, u32 at +0x20) control bytes (NVN2: 0x48 bytes with +0x30 zeroed) and the code.
    pub fn key(&self) -> String {
        let mut h = Sha256::new();
        if self.nvn2 {
            let mut c = self.control[..0x48].to_vec();
            c[0x30..0x34].copy_from_slice(&[0; 4]);
            h.update(&c);
        } else {
            let l = rd32(&self.control, 0x20) as usize;
            h.update(&self.control[..l.min(0x880)]);
        }
        h.update(&self.code);
        h.finalize()[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}
