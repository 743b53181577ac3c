//! The sass corpus' `K.io.json` launch + expected-output files (tests/corpus/sass/README.md),
//! turned into a [`ComputeJob`] for a translated kernel and checked against `expected`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::b64;
use crate::compute::{Bind, BufferSpec, ComputeJob, Outputs, PointerPatch, ResourceRef};
use crate::error::Error;
use crate::reflection::Reflection;

/// Byte offset of the first kernel parameter in constant bank 0 on sm_5x.
pub const SM5X_PARAM_BASE: u32 = 0x140;
/// Byte offset of the first kernel parameter in constant bank 0 on sm_8x.
pub const SM8X_PARAM_BASE: u32 = 0x160;
/// Name of the parameter buffer in jobs built from an io.json.
pub const PARAM_BUFFER: &str = "params";

/// A parsed `K.io.json`.
#[derive(Debug, Clone, Deserialize)]
pub struct IoJson {
    /// `sass-corpus-io/1`.
    #[serde(default)]
    pub format: String,
    /// Kernel name.
    pub kernel: String,
    /// Blocks in x, y, z.
    pub grid: [u32; 3],
    /// Threads per block (must equal the translation's local size).
    pub block: [u32; 3],
    /// Dynamic shared memory bytes (0 throughout the corpus).
    #[serde(default)]
    pub dynamic_shared_bytes: u32,
    /// Kernel parameters.
    pub params: Vec<IoParam>,
    /// The parameter block with pointer slots zero.
    #[serde(default)]
    pub param_buffer_hex_without_pointers: String,
    /// Buffers by name.
    pub buffers: BTreeMap<String, IoBuffer>,
    /// Expected final contents by buffer name.
    #[serde(default)]
    pub expected: BTreeMap<String, IoExpected>,
    /// Comparison mode by buffer name (`bitexact`).
    #[serde(default)]
    pub compare: BTreeMap<String, String>,
    /// Free-form notes.
    #[serde(default)]
    pub notes: String,
}

/// One kernel parameter.
#[derive(Debug, Clone, Deserialize)]
pub struct IoParam {
    /// PTX name.
    pub name: String,
    /// Byte offset in the parameter block.
    pub offset: u32,
    /// Bytes.
    pub size: u32,
    /// `buffer` (a pointer to the named buffer) or a scalar type (`u32`, …).
    pub kind: String,
    /// For pointers: the buffer.
    #[serde(default)]
    pub buffer: Option<String>,
    /// For scalars: little-endian bytes in hex.
    #[serde(default)]
    pub hex: Option<String>,
}

/// One buffer's size and initial contents.
#[derive(Debug, Clone, Deserialize)]
pub struct IoBuffer {
    /// Bytes.
    pub size: u64,
    /// Initial contents, base64.
    #[serde(default)]
    pub init_b64: String,
}

/// Expected final contents.
#[derive(Debug, Clone, Deserialize)]
pub struct IoExpected {
    /// Bytes.
    pub size: u64,
    /// Contents, base64.
    pub b64: String,
}

/// A difference between a result buffer and its expected contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// Buffer name.
    pub buffer: String,
    /// Byte offset of the first differing 32-bit word.
    pub first_offset: usize,
    /// Expected word there.
    pub expected: u32,
    /// Actual word there.
    pub got: u32,
    /// How many 32-bit words differ.
    pub words: usize,
    /// Words compared.
    pub total_words: usize,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {}/{} words differ, first at byte {:#x}: expected {:#010x}, got {:#010x}",
            self.buffer, self.words, self.total_words, self.first_offset, self.expected, self.got
        )
    }
}

/// Compares two byte strings word by word (a missing tail counts as differing).
pub fn compare_bytes(name: &str, expected: &[u8], got: &[u8]) -> Option<Mismatch> {
    let word = |b: &[u8], i: usize| {
        let mut w = [0u8; 4];
        for (k, x) in w.iter_mut().enumerate() {
            *x = *b.get(i * 4 + k).unwrap_or(&0);
        }
        u32::from_le_bytes(w)
    };
    let n = expected.len().div_ceil(4);
    let mut first = None;
    let mut count = 0;
    for i in 0..n {
        let lo = i * 4;
        let hi = (lo + 4).min(expected.len());
        if got.get(lo..hi) != Some(&expected[lo..hi]) {
            count += 1;
            first.get_or_insert(i);
        }
    }
    first.map(|i| Mismatch {
        buffer: name.to_string(),
        first_offset: i * 4,
        expected: word(expected, i),
        got: word(got, i),
        words: count,
        total_words: n,
    })
}

impl IoJson {
    /// Reads and parses an io.json file.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Job(format!("{}: {e}", path.display())))?;
        Self::parse(&text).map_err(|e| Error::Job(format!("{}: {e}", path.display())))
    }

    /// Parses io.json text.
    pub fn parse(text: &str) -> Result<Self, Error> {
        serde_json::from_str(text).map_err(|e| Error::Job(format!("io.json: {e}")))
    }

    /// Sorted buffer names; the job's buffers are these, then [`PARAM_BUFFER`].
    pub fn buffer_names(&self) -> Vec<&str> {
        self.buffers.keys().map(String::as_str).collect()
    }

    /// The parameter block with scalars filled in (pointers are patched at run time).
    pub fn param_bytes(&self) -> Result<Vec<u8>, Error> {
        let mut p = b64::hex(&self.param_buffer_hex_without_pointers)?;
        for q in &self.params {
            let end = q.offset as usize + q.size as usize;
            if end > 1 << 16 {
                return Err(Error::Job(format!(
                    "parameter {} at {} + {} bytes lies beyond 64 KiB",
                    q.name, q.offset, q.size
                )));
            }
            if p.len() < end {
                p.resize(end, 0);
            }
            if let Some(h) = &q.hex {
                let v = b64::hex(h)?;
                let n = v.len().min(q.size as usize);
                p[q.offset as usize..q.offset as usize + n].copy_from_slice(&v[..n]);
            }
        }
        Ok(p)
    }

    /// Builds the job for a translated kernel: every io buffer (sorted by name) plus the
    /// parameter block, bound to the reflection's cbuf bank 0 so that the first parameter lands
    /// at guest offset `param_base` (0x140 on sm_5x); pointer parameters get device addresses.
    pub fn job(
        &self,
        spirv: Vec<u32>,
        reflection: Reflection,
        param_base: u32,
    ) -> Result<ComputeJob, Error> {
        if self.dynamic_shared_bytes != 0 {
            return Err(Error::Job(format!(
                "{}: dynamic shared memory ({} bytes) is not supported",
                self.kernel, self.dynamic_shared_bytes
            )));
        }
        let ls = reflection.local_size;
        if ls != [0, 0, 0] && ls != self.block {
            return Err(Error::Job(format!(
                "{}: io.json launches blocks of {:?} but the translation's local size is {:?}",
                self.kernel, self.block, ls
            )));
        }
        let mut buffers = Vec::new();
        for (name, b) in &self.buffers {
            let init = b64::decode(&b.init_b64)?;
            buffers.push(BufferSpec {
                name: name.clone(),
                size: b.size,
                init,
            });
        }
        let params = self.param_bytes()?;
        let guest = reflection.cbuf(0).map_or(param_base, |r| r.guest_offset);
        if guest > param_base {
            return Err(Error::Job(format!(
                "cbuf bank 0 starts at guest offset {guest:#x}, after the parameters at {param_base:#x}"
            )));
        }
        let shift = (param_base - guest) as u64;
        let mut init = vec![0u8; shift as usize];
        init.extend_from_slice(&params);
        let pidx = buffers.len();
        buffers.push(BufferSpec {
            name: PARAM_BUFFER.into(),
            size: init.len() as u64,
            init,
        });
        let mut pointers = Vec::new();
        for q in &self.params {
            if q.kind != "buffer" {
                continue;
            }
            let name = q.buffer.as_deref().unwrap_or("");
            let target = self.buffers.keys().position(|k| k == name).ok_or_else(|| {
                Error::Job(format!(
                    "parameter {} points at unknown buffer {name:?}",
                    q.name
                ))
            })?;
            pointers.push(PointerPatch {
                buffer: pidx,
                offset: shift + q.offset as u64,
                target,
                add: 0,
                encoding: Default::default(),
            });
        }
        let mut binds = vec![Bind {
            resource: ResourceRef::Cbuf(0),
            buffer: pidx,
        }];
        // Storage-buffer resources, if a translation exposes them: slot i = i-th pointer param.
        for r in &reflection.resources {
            if r.kind == "sbuf" {
                let slot = r.index() as usize;
                let p = pointers.get(slot).ok_or_else(|| {
                    Error::Job(format!(
                        "sbuf slot {slot} has no matching pointer parameter"
                    ))
                })?;
                binds.push(Bind {
                    resource: ResourceRef::Sbuf(slot as u32),
                    buffer: p.target,
                });
            }
        }
        Ok(ComputeJob {
            spirv,
            reflection,
            buffers,
            binds,
            pointers,
            grid: self.grid,
            textures: Vec::new(),
        })
    }

    /// Compares a run's outputs (from a job made by [`IoJson::job`]) with `expected`.
    pub fn check(&self, out: &Outputs) -> Result<Vec<Mismatch>, Error> {
        let mut v = Vec::new();
        for (name, e) in &self.expected {
            let i =
                self.buffers.keys().position(|k| k == name).ok_or_else(|| {
                    Error::Job(format!("expected output {name:?} is not a buffer"))
                })?;
            let want = b64::decode(&e.b64)?;
            let got = out.buffers.get(i).map(Vec::as_slice).unwrap_or(&[]);
            if let Some(m) = compare_bytes(name, &want, got) {
                v.push(m);
            }
        }
        Ok(v)
    }
}

/// Runs a translated kernel on its io.json launch on the shared device and returns the
/// mismatches (empty: bit-exact). A kernel with `warp_ops` on a device without 32-lane
/// subgroups, or a missing device, is an error with `is_skip()` true: report it as skipped.
pub fn run_check(
    io: &IoJson,
    spirv: Vec<u32>,
    reflection: Reflection,
    param_base: u32,
) -> Result<Vec<Mismatch>, Error> {
    let job = io.job(spirv, reflection, param_base)?;
    let out = crate::compute::run_compute(&job)?;
    io.check(&out)
}
