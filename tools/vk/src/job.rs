//! The `dmsh exec` job file (docs/exec-job.md): a JSON description of one compute dispatch
//! that names files relative to itself, turned into a [`ComputeJob`], plus the run report.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::b64;
use crate::compute::{Bind, BufferSpec, ComputeJob, Outputs, PointerPatch, ResourceRef};
use crate::error::Error;
use crate::io_json::{compare_bytes, IoJson, Mismatch};
use crate::reflection::Reflection;

/// A number given as JSON number or as a string (`"0x140"`, `"320"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Num(pub u64);

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum N {
            U(u64),
            S(String),
        }
        match N::deserialize(d)? {
            N::U(v) => Ok(Num(v)),
            N::S(s) => {
                let t = s.trim();
                let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                    Some(h) => u64::from_str_radix(h, 16),
                    None => t.parse(),
                };
                r.map(Num)
                    .map_err(|_| serde::de::Error::custom(format!("not a number: {s:?}")))
            }
        }
    }
}

/// Bytes given inline or by file. At most one source; none means zeros.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Data {
    /// File path, relative to the job file.
    pub file: Option<String>,
    /// Base64.
    pub b64: Option<String>,
    /// Hex digits.
    pub hex: Option<String>,
    /// Little-endian u32 words.
    pub u32: Option<Vec<u32>>,
    /// Little-endian i32 words.
    pub i32: Option<Vec<i32>>,
    /// Little-endian f32 values.
    pub f32: Option<Vec<f32>>,
    /// Little-endian u64 values.
    pub u64: Option<Vec<u64>>,
    /// Fill the whole buffer (its `size`) with this u32 word, before any other data.
    pub fill_u32: Option<Num>,
}

impl Data {
    /// Resolves the bytes (files relative to `base`); `size` is used by `fill_u32`.
    pub fn bytes(&self, base: &Path, size: Option<u64>) -> Result<Vec<u8>, Error> {
        let mut sources = 0;
        let mut out = Vec::new();
        if let Some(f) = &self.file {
            sources += 1;
            let p = base.join(f);
            out = std::fs::read(&p).map_err(|e| Error::Job(format!("{}: {e}", p.display())))?;
        }
        if let Some(s) = &self.b64 {
            sources += 1;
            out = b64::decode(s)?;
        }
        if let Some(s) = &self.hex {
            sources += 1;
            out = b64::hex(s)?;
        }
        if let Some(v) = &self.u32 {
            sources += 1;
            out = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        }
        if let Some(v) = &self.i32 {
            sources += 1;
            out = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        }
        if let Some(v) = &self.f32 {
            sources += 1;
            out = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        }
        if let Some(v) = &self.u64 {
            sources += 1;
            out = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        }
        if sources > 1 {
            return Err(Error::Job(
                "give at most one of file / b64 / hex / u32 / i32 / f32 / u64".into(),
            ));
        }
        if let Some(Num(w)) = self.fill_u32 {
            let n = size.unwrap_or(out.len() as u64).max(out.len() as u64);
            if n > 1 << 30 {
                return Err(Error::Job(format!("fill of {n} bytes is too large")));
            }
            let mut f: Vec<u8> = (0..n.div_ceil(4))
                .flat_map(|_| (w as u32).to_le_bytes())
                .collect();
            f.truncate(n as usize);
            f[..out.len()].copy_from_slice(&out);
            out = f;
        }
        Ok(out)
    }
}

/// One buffer of the job.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct BufferDesc {
    /// Bytes (default: the data's length).
    pub size: Option<Num>,
    /// Initial contents (zero-filled up to `size`).
    #[serde(flatten)]
    pub data: Data,
}

/// Binds a buffer to a resource: exactly one of `cbuf` / `sbuf`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BindDesc {
    /// Constant bank.
    pub cbuf: Option<u32>,
    /// Storage buffer slot.
    pub sbuf: Option<u32>,
    /// Buffer name.
    pub buffer: String,
}

/// Writes the device address of buffer `target` into buffer `buffer` at `offset`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PointerDesc {
    /// Buffer written to (default: `params`).
    #[serde(default)]
    pub buffer: Option<String>,
    /// Byte offset (inside `params`: relative to the first parameter).
    pub offset: Num,
    /// Buffer whose address is written.
    pub target: String,
    /// Added to the address.
    #[serde(default)]
    pub add: Num,
}

/// The kernel parameter block: a buffer named `params` bound to constant bank `bank`, whose
/// first byte is guest offset `base`.
#[derive(Debug, Clone, Deserialize)]
pub struct ParamsDesc {
    /// Constant bank (default 0).
    #[serde(default)]
    pub bank: u32,
    /// Guest offset of the first parameter (default 0x140, sm_5x CUDA).
    pub base: Option<Num>,
    /// Bytes (default: data length, at least what the pointers need).
    pub size: Option<Num>,
    /// Contents.
    #[serde(flatten)]
    pub data: Data,
}

/// A `dmsh exec` job file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecJob {
    /// Format tag, `dmsh-exec/1` (optional).
    #[serde(default)]
    pub format: Option<String>,
    /// SPIR-V file.
    pub spv: String,
    /// Reflection JSON (default: the spv path with `.json`).
    #[serde(default)]
    pub reflection: Option<String>,
    /// Workgroups.
    pub grid: [u32; 3],
    /// Buffers by name (created in name order).
    #[serde(default)]
    pub buffers: BTreeMap<String, BufferDesc>,
    /// Parameter block (creates buffer `params`).
    #[serde(default)]
    pub params: Option<ParamsDesc>,
    /// Resource bindings.
    #[serde(default)]
    pub bind: Vec<BindDesc>,
    /// Device addresses to write.
    #[serde(default)]
    pub pointers: Vec<PointerDesc>,
    /// Buffers to write to files after the run (name → path relative to the job or `--out-dir`).
    #[serde(default)]
    pub outputs: BTreeMap<String, String>,
    /// Expected final contents (name → data), compared bit for bit.
    #[serde(default)]
    pub expected: BTreeMap<String, Data>,
}

/// A job ready to run, with what to do afterwards.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The dispatch.
    pub job: ComputeJob,
    /// Buffer names in job order.
    pub names: Vec<String>,
    /// (buffer index, file) to write.
    pub outputs: Vec<(usize, PathBuf)>,
    /// (buffer index, expected bytes).
    pub expected: Vec<(usize, Vec<u8>)>,
}

fn read(base: &Path, rel: &str) -> Result<Vec<u8>, Error> {
    let p = base.join(rel);
    std::fs::read(&p).map_err(|e| Error::Job(format!("{}: {e}", p.display())))
}

/// Reads a SPIR-V file and its reflection.
pub fn load_shader(spv: &Path, reflection: Option<&Path>) -> Result<(Vec<u32>, Reflection), Error> {
    let words = crate::spirv_words(&read(Path::new(""), &spv.to_string_lossy())?)
        .map_err(|e| Error::Job(format!("{}: {e}", spv.display())))?;
    let rp = reflection
        .map(Path::to_path_buf)
        .unwrap_or_else(|| spv.with_extension("json"));
    let text = String::from_utf8(read(Path::new(""), &rp.to_string_lossy())?)
        .map_err(|_| Error::Job(format!("{}: not UTF-8", rp.display())))?;
    let refl =
        Reflection::from_json(&text).map_err(|e| Error::Job(format!("{}: {e}", rp.display())))?;
    Ok((words, refl))
}

impl ExecJob {
    /// Parses job JSON text.
    pub fn parse(text: &str) -> Result<Self, Error> {
        serde_json::from_str(text).map_err(|e| Error::Job(format!("job JSON: {e}")))
    }

    /// Reads a job file.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let t = std::fs::read_to_string(path)
            .map_err(|e| Error::Job(format!("{}: {e}", path.display())))?;
        Self::parse(&t).map_err(|e| Error::Job(format!("{}: {e}", path.display())))
    }

    /// Resolves files (relative to `base`) and builds the dispatch. Output files go to
    /// `out_dir` when given, else relative to `base`.
    pub fn prepare(&self, base: &Path, out_dir: Option<&Path>) -> Result<Prepared, Error> {
        let (spirv, reflection) = load_shader(
            &base.join(&self.spv),
            self.reflection.as_ref().map(|r| base.join(r)).as_deref(),
        )?;
        let mut names = Vec::new();
        let mut buffers = Vec::new();
        for (name, b) in &self.buffers {
            if name == "params" && self.params.is_some() {
                return Err(Error::Job(
                    "buffer name `params` is taken by the params block".into(),
                ));
            }
            let size = b.size.map(|n| n.0);
            let init = b.data.bytes(base, size)?;
            let size = size.unwrap_or(init.len() as u64);
            if (init.len() as u64) > size {
                return Err(Error::Job(format!(
                    "buffer {name:?}: {} bytes of data exceed its size {size}",
                    init.len()
                )));
            }
            names.push(name.clone());
            buffers.push(BufferSpec {
                name: name.clone(),
                size,
                init,
            });
        }
        let find = |names: &[String], n: &str| {
            names.iter().position(|x| x == n).ok_or_else(|| {
                Error::Job(format!(
                    "no buffer named {n:?} (buffers: {})",
                    names.join(", ")
                ))
            })
        };
        let mut binds = Vec::new();
        let mut pointers = Vec::new();
        let mut param_shift = 0u64;
        if let Some(p) = &self.params {
            let base_off = p.base.map_or(0x140, |n| n.0);
            let guest = reflection
                .cbuf(p.bank)
                .map_or(base_off, |r| r.guest_offset as u64);
            if guest > base_off {
                return Err(Error::Job(format!(
                    "cbuf bank {} starts at guest offset {guest:#x}, after params.base {base_off:#x}",
                    p.bank
                )));
            }
            param_shift = base_off - guest;
            let bytes = p.data.bytes(base, p.size.map(|n| n.0))?;
            let mut init = vec![0u8; param_shift as usize];
            init.extend_from_slice(&bytes);
            let mut size = p
                .size
                .map_or(init.len() as u64, |n| n.0 + param_shift)
                .max(init.len() as u64);
            for q in &self.pointers {
                if q.buffer.as_deref().unwrap_or("params") == "params" {
                    size = size.max(param_shift + q.offset.0 + 8);
                }
            }
            names.push("params".into());
            buffers.push(BufferSpec {
                name: "params".into(),
                size,
                init,
            });
            binds.push(Bind {
                resource: ResourceRef::Cbuf(p.bank),
                buffer: names.len() - 1,
            });
        }
        for b in &self.bind {
            let resource = match (b.cbuf, b.sbuf) {
                (Some(n), None) => ResourceRef::Cbuf(n),
                (None, Some(n)) => ResourceRef::Sbuf(n),
                _ => {
                    return Err(Error::Job(format!(
                        "bind of {:?}: give exactly one of cbuf / sbuf",
                        b.buffer
                    )))
                }
            };
            if binds.iter().any(|x: &Bind| x.resource == resource) {
                return Err(Error::Job(format!("{resource} is bound twice")));
            }
            binds.push(Bind {
                resource,
                buffer: find(&names, &b.buffer)?,
            });
        }
        for q in &self.pointers {
            let dst = q.buffer.as_deref().unwrap_or("params");
            let shift = if dst == "params" { param_shift } else { 0 };
            pointers.push(PointerPatch {
                buffer: find(&names, dst)?,
                offset: q.offset.0 + shift,
                target: find(&names, &q.target)?,
                add: q.add.0,
            });
        }
        let outputs = self
            .outputs
            .iter()
            .map(|(n, f)| Ok((find(&names, n)?, out_dir.unwrap_or(base).join(f))))
            .collect::<Result<Vec<_>, Error>>()?;
        let expected = self
            .expected
            .iter()
            .map(|(n, d)| Ok((find(&names, n)?, d.bytes(base, None)?)))
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(Prepared {
            job: ComputeJob {
                spirv,
                reflection,
                buffers,
                binds,
                pointers,
                grid: self.grid,
                textures: Vec::new(),
            },
            names,
            outputs,
            expected,
        })
    }
}

/// Outcome of `dmsh exec`, printed as JSON with `--json`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// pass (ran; matched every expected output, or nothing to compare) | fail | skip | error.
    pub status: String,
    /// Device name.
    pub device: String,
    /// Device subgroup size.
    pub subgroup_size: u32,
    /// Why it was skipped or failed to run.
    pub reason: String,
    /// One line per mismatching buffer.
    pub mismatches: Vec<String>,
    /// Buffers compared.
    pub compared: usize,
    /// Files written.
    pub written: Vec<String>,
    /// Pipeline creation milliseconds.
    pub pipeline_ms: f64,
    /// Dispatch milliseconds.
    pub dispatch_ms: f64,
}

impl Report {
    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Fills device, timings and mismatches from a run.
    pub fn from_run(out: &Outputs, mismatches: &[Mismatch], compared: usize) -> Self {
        let dev = crate::device::shared().ok();
        Report {
            status: if mismatches.is_empty() {
                "pass"
            } else {
                "fail"
            }
            .into(),
            device: out.device.clone(),
            subgroup_size: dev.map_or(0, |d| d.info().subgroup_size),
            mismatches: mismatches.iter().map(ToString::to_string).collect(),
            compared,
            pipeline_ms: out.pipeline_ms,
            dispatch_ms: out.dispatch_ms,
            ..Default::default()
        }
    }
}

/// Compares a prepared job's outputs with its `expected`.
pub fn check(p: &Prepared, out: &Outputs) -> Vec<Mismatch> {
    p.expected
        .iter()
        .filter_map(|(i, want)| {
            compare_bytes(
                &p.names[*i],
                want,
                out.buffers.get(*i).map(Vec::as_slice).unwrap_or(&[]),
            )
        })
        .collect()
}

/// Builds a [`Prepared`] from a corpus io.json and a translated kernel; outputs named in
/// `expected` are written to `out_dir` as `NAME.bin` when given.
pub fn prepare_io(
    io: &IoJson,
    spirv: Vec<u32>,
    reflection: Reflection,
    param_base: u32,
    out_dir: Option<&Path>,
) -> Result<Prepared, Error> {
    let job = io.job(spirv, reflection, param_base)?;
    let names: Vec<String> = job.buffers.iter().map(|b| b.name.clone()).collect();
    let mut expected = Vec::new();
    for (n, e) in &io.expected {
        let i = names
            .iter()
            .position(|x| x == n)
            .ok_or_else(|| Error::Job(format!("expected output {n:?} is not a buffer")))?;
        expected.push((i, b64::decode(&e.b64)?));
    }
    let outputs = match out_dir {
        Some(d) => io
            .buffers
            .keys()
            .enumerate()
            .map(|(i, n)| (i, d.join(format!("{n}.bin"))))
            .collect(),
        None => Vec::new(),
    };
    Ok(Prepared {
        job,
        names,
        outputs,
        expected,
    })
}
