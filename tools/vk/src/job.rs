//! The `dmsh exec` job file (docs/exec-job.md): a JSON description of one compute dispatch
//! that names files relative to itself, turned into a [`ComputeJob`], plus the run report.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::b64;
use crate::compute::{Bind, BufferSpec, ComputeJob, Outputs, PointerPatch, ResourceRef};
use crate::error::Error;
use crate::image::{TexFormat, TextureSpec};
use crate::io_json::{compare_bytes, IoJson, Mismatch};
use crate::reflection::Reflection;
use crate::render::{
    attribute_format, Image, LoweredGeometry, LoweredTessellation, MiddleStage, RenderJob, Stage,
    Tessellation, Topology, VertexAttribute, VertexBuffer,
};

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

/// Binds a buffer or texture to a resource: exactly one of `cbuf` / `sbuf` / `sbuf_ubo` /
/// `texture` / `image` / `sampler` / `tex_ubo` / `tex_dyn` / `samp_dyn` / `samp_id` / `samp_ubo`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BindDesc {
    /// Constant bank (uniform buffer).
    pub cbuf: Option<u32>,
    /// Storage buffer slot.
    pub sbuf: Option<u32>,
    /// `sbuf_ubo` storage buffer: [uniform-buffer slot, byte offset of its address] (`buffer`
    /// names the buffer; a `pointers` entry writes its address into the uniform buffer).
    pub sbuf_ubo: Option<[Num; 2]>,
    /// Texture slot (combined image + sampler; `buffer` names a texture).
    pub texture: Option<u32>,
    /// Image slot (storage image; `buffer` names a texture).
    pub image: Option<u32>,
    /// Separate sampler slot (`buffer` names a texture; its sampler is bound).
    pub sampler: Option<u32>,
    /// `tex_ubo` handle word: [uniform bank, guest byte offset] (`buffer` names the texture
    /// the handle selects).
    pub tex_ubo: Option<[u32; 2]>,
    /// `tex_dyn` array element (texture ID; `buffer` names a texture).
    pub tex_dyn: Option<u32>,
    /// `samp_dyn` array element (sampler ID; `buffer` names a texture whose sampler it is).
    pub samp_dyn: Option<u32>,
    /// `samp_id`: a constant sampler ID ORed into a handle (`buffer` names a texture whose
    /// sampler the texture binding carrying that ID uses).
    pub samp_id: Option<u32>,
    /// `samp_ubo`: [uniform bank, guest byte offset] of a handle word whose sampler half
    /// (`buffer` names a texture whose sampler it is) the `tex_ubo` binding uses.
    pub samp_ubo: Option<[u32; 2]>,
    /// Buffer or texture name.
    pub buffer: String,
}

/// A texture or storage image.
#[derive(Debug, Clone, Deserialize)]
pub struct TextureDesc {
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
    /// Array layers (default 1).
    #[serde(default)]
    pub layers: u32,
    /// Depth for 3D images (default 1).
    #[serde(default)]
    pub depth: u32,
    /// `rgba8` (default), `rgba8ui`, `rgba16f`, `rgba32f`, `r32ui`, `r32i`, `r32f`.
    #[serde(default)]
    pub format: Option<String>,
    /// Linear filtering (default nearest).
    #[serde(default)]
    pub linear: bool,
    /// Repeat addressing (default clamp to edge).
    #[serde(default)]
    pub repeat: bool,
    /// A cube map (`layers` 6, or a multiple of 6 for a cube array).
    #[serde(default)]
    pub cube: bool,
    /// A depth-compare sampler (shadow lookups; use format `d32f`).
    #[serde(default)]
    pub compare: bool,
    /// A texel buffer of `width` texels (`samplerBuffer` / `imageBuffer`); `height` 1.
    #[serde(default)]
    pub buffer: bool,
    /// Mip levels (default 1); data holds level after level.
    #[serde(default)]
    pub mips: u32,
    /// A 1D image (`height` 1; `layers` > 1: a 1D array).
    #[serde(default)]
    pub one_d: bool,
    /// Samples (default 1); a multisampled texture is filled with its first texel.
    #[serde(default)]
    pub samples: u32,
    /// Texels (tightly packed rows, layer after layer); zero-filled when absent.
    #[serde(flatten)]
    pub data: Data,
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
    /// Textures and storage images by name (created in name order).
    #[serde(default)]
    pub textures: BTreeMap<String, TextureDesc>,
    /// Parameter block (creates buffer `params`).
    #[serde(default)]
    pub params: Option<ParamsDesc>,
    /// Resource bindings.
    #[serde(default)]
    pub bind: Vec<BindDesc>,
    /// Device addresses to write.
    #[serde(default)]
    pub pointers: Vec<PointerDesc>,
    /// Buffers or textures to write to files after the run (name → path relative to the job
    /// or `--out-dir`).
    #[serde(default)]
    pub outputs: BTreeMap<String, String>,
    /// Expected final contents (name → data), compared bit for bit.
    #[serde(default)]
    pub expected: BTreeMap<String, Data>,
}

/// A named thing a job creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item {
    /// Buffer index.
    Buffer(usize),
    /// Texture index.
    Texture(usize),
}

/// A job ready to run, with what to do afterwards.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The dispatch.
    pub job: ComputeJob,
    /// Buffer names in job order.
    pub names: Vec<String>,
    /// Texture names in job order.
    pub texture_names: Vec<String>,
    /// (item, file) to write.
    pub outputs: Vec<(Item, PathBuf)>,
    /// (item, expected bytes).
    pub expected: Vec<(Item, Vec<u8>)>,
}

impl Prepared {
    /// The name of an item.
    pub fn name(&self, it: Item) -> &str {
        match it {
            Item::Buffer(i) => &self.names[i],
            Item::Texture(i) => &self.texture_names[i],
        }
    }
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

/// Files to write and bytes to expect, per item.
type OutputsAndExpected = (Vec<(Item, PathBuf)>, Vec<(Item, Vec<u8>)>);

/// Buffers and textures of a job file, resolved, with name lookup.
#[derive(Debug, Default)]
struct Pool {
    buffers: Vec<BufferSpec>,
    textures: Vec<TextureSpec>,
    pointers: Vec<PointerPatch>,
    param_shift: u64,
}

impl Pool {
    fn new(
        base: &Path,
        buffers: &BTreeMap<String, BufferDesc>,
        textures: &BTreeMap<String, TextureDesc>,
    ) -> Result<Self, Error> {
        let mut p = Pool::default();
        for (name, b) in buffers {
            let size = b.size.map(|n| n.0);
            let init = b.data.bytes(base, size)?;
            let size = size.unwrap_or(init.len() as u64);
            if (init.len() as u64) > size {
                return Err(Error::Job(format!(
                    "buffer {name:?}: {} bytes of data exceed its size {size}",
                    init.len()
                )));
            }
            p.buffers.push(BufferSpec {
                name: name.clone(),
                size,
                init,
            });
        }
        for (name, t) in textures {
            if buffers.contains_key(name) {
                return Err(Error::Job(format!(
                    "{name:?} names both a buffer and a texture"
                )));
            }
            let format = TexFormat::parse(t.format.as_deref().unwrap_or("rgba8"))?;
            let mut spec = TextureSpec {
                name: name.clone(),
                width: t.width,
                height: t.height,
                layers: t.layers,
                depth: t.depth,
                format,
                data: Vec::new(),
                linear: t.linear,
                repeat: t.repeat,
                cube: t.cube,
                compare: t.compare,
                samples: t.samples,
                buffer: t.buffer,
                mips: t.mips,
                one_d: t.one_d,
            };
            spec.data = t.data.bytes(base, Some(spec.byte_size()))?;
            p.textures.push(spec);
        }
        Ok(p)
    }

    fn item(&self, n: &str) -> Result<Item, Error> {
        if let Some(i) = self.buffers.iter().position(|b| b.name == n) {
            return Ok(Item::Buffer(i));
        }
        if let Some(i) = self.textures.iter().position(|b| b.name == n) {
            return Ok(Item::Texture(i));
        }
        let all: Vec<&str> = self
            .buffers
            .iter()
            .map(|b| b.name.as_str())
            .chain(self.textures.iter().map(|t| t.name.as_str()))
            .collect();
        Err(Error::Job(format!(
            "no buffer or texture named {n:?} (have: {})",
            all.join(", ")
        )))
    }

    fn buffer(&self, n: &str) -> Result<usize, Error> {
        match self.item(n)? {
            Item::Buffer(i) => Ok(i),
            Item::Texture(_) => Err(Error::Job(format!("{n:?} is a texture, not a buffer"))),
        }
    }

    /// Adds the `params` block bound to its cbuf; the shift maps parameter offsets to bytes.
    fn params(
        &mut self,
        base: &Path,
        p: &ParamsDesc,
        reflection: &Reflection,
        pointers: &[PointerDesc],
        binds: &mut Vec<Bind>,
    ) -> Result<(), Error> {
        if self.buffers.iter().any(|b| b.name == "params") {
            return Err(Error::Job(
                "buffer name `params` is taken by the params block".into(),
            ));
        }
        let base_off = p.base.map_or(0x140, |n| n.0);
        if base_off > 0x10000 {
            return Err(Error::Job(format!(
                "params.base {base_off:#x} lies beyond a 64 KiB constant bank"
            )));
        }
        let guest = reflection
            .cbuf(p.bank)
            .map_or(base_off, |r| r.guest_offset as u64);
        if guest > base_off {
            return Err(Error::Job(format!(
                "cbuf bank {} starts at guest offset {guest:#x}, after params.base {base_off:#x}",
                p.bank
            )));
        }
        self.param_shift = base_off - guest;
        let bytes = p.data.bytes(base, p.size.map(|n| n.0))?;
        let mut init = vec![0u8; self.param_shift as usize];
        init.extend_from_slice(&bytes);
        let mut size = p
            .size
            .map_or(init.len() as u64, |n| n.0.saturating_add(self.param_shift))
            .max(init.len() as u64);
        for q in pointers {
            if q.buffer.as_deref().unwrap_or("params") == "params" {
                size = size.max(
                    self.param_shift
                        .saturating_add(q.offset.0)
                        .saturating_add(8),
                );
            }
        }
        self.buffers.push(BufferSpec {
            name: "params".into(),
            size,
            init,
        });
        binds.push(Bind {
            resource: ResourceRef::Cbuf(p.bank),
            buffer: self.buffers.len() - 1,
        });
        Ok(())
    }

    fn binds(&self, list: &[BindDesc], binds: &mut Vec<Bind>) -> Result<(), Error> {
        for b in list {
            let mut named = Vec::new();
            let one = |v: Option<u32>, f: fn(u32) -> ResourceRef| v.map(f);
            named.extend(one(b.cbuf, ResourceRef::Cbuf).map(|r| (r, false)));
            named.extend(one(b.sbuf, ResourceRef::Sbuf).map(|r| (r, false)));
            named.extend(
                b.sbuf_ubo
                    .map(|[u, o]| (ResourceRef::SbufUbo(u.0 as u32, o.0 as u32), false)),
            );
            named.extend(one(b.texture, ResourceRef::Texture).map(|r| (r, true)));
            named.extend(one(b.image, ResourceRef::Image).map(|r| (r, true)));
            named.extend(one(b.sampler, ResourceRef::Sampler).map(|r| (r, true)));
            named.extend(b.tex_ubo.map(|[k, o]| (ResourceRef::TexUbo(k, o), true)));
            named.extend(one(b.tex_dyn, ResourceRef::TexDyn).map(|r| (r, true)));
            named.extend(one(b.samp_dyn, ResourceRef::SampDyn).map(|r| (r, true)));
            named.extend(one(b.samp_id, ResourceRef::SampId).map(|r| (r, true)));
            named.extend(b.samp_ubo.map(|[k, o]| (ResourceRef::SampUbo(k, o), true)));
            let [(resource, is_tex)] = named[..] else {
                return Err(Error::Job(format!(
                    "bind of {:?}: give exactly one of cbuf / sbuf / sbuf_ubo / texture / image / \
                     sampler / tex_ubo / tex_dyn / samp_dyn / samp_id / samp_ubo",
                    b.buffer
                )));
            };
            if binds.iter().any(|x: &Bind| x.resource == resource) {
                return Err(Error::Job(format!("{resource} is bound twice")));
            }
            let index = match (self.item(&b.buffer)?, is_tex) {
                (Item::Buffer(i), false) | (Item::Texture(i), true) => i,
                _ => {
                    return Err(Error::Job(format!(
                        "{resource} cannot take {:?} (buffers go to cbuf/sbuf, textures to the \
                         texture and sampler kinds)",
                        b.buffer
                    )))
                }
            };
            binds.push(Bind {
                resource,
                buffer: index,
            });
        }
        Ok(())
    }

    fn pointers(&mut self, list: &[PointerDesc]) -> Result<(), Error> {
        for q in list {
            let dst = q.buffer.as_deref().unwrap_or("params");
            let shift = if dst == "params" { self.param_shift } else { 0 };
            let patch = PointerPatch {
                buffer: self.buffer(dst)?,
                offset: q.offset.0.saturating_add(shift),
                target: self.buffer(&q.target)?,
                add: q.add.0,
                encoding: Default::default(),
            };
            self.pointers.push(patch);
        }
        Ok(())
    }

    fn files(
        &self,
        outputs: &BTreeMap<String, String>,
        expected: &BTreeMap<String, Data>,
        base: &Path,
        out_dir: Option<&Path>,
    ) -> Result<OutputsAndExpected, Error> {
        let o = outputs
            .iter()
            .map(|(n, f)| Ok((self.item(n)?, out_dir.unwrap_or(base).join(f))))
            .collect::<Result<Vec<_>, Error>>()?;
        let e = expected
            .iter()
            .map(|(n, d)| Ok((self.item(n)?, d.bytes(base, None)?)))
            .collect::<Result<Vec<_>, Error>>()?;
        Ok((o, e))
    }
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
        let mut pool = Pool::new(base, &self.buffers, &self.textures)?;
        let mut binds = Vec::new();
        if let Some(p) = &self.params {
            pool.params(base, p, &reflection, &self.pointers, &mut binds)?;
        }
        pool.binds(&self.bind, &mut binds)?;
        pool.pointers(&self.pointers)?;
        let (outputs, expected) = pool.files(&self.outputs, &self.expected, base, out_dir)?;
        Ok(Prepared {
            names: pool.buffers.iter().map(|b| b.name.clone()).collect(),
            texture_names: pool.textures.iter().map(|t| t.name.clone()).collect(),
            job: ComputeJob {
                spirv,
                reflection,
                buffers: pool.buffers,
                binds,
                pointers: pool.pointers,
                grid: self.grid,
                textures: pool.textures,
            },
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

/// The bytes of an item after a run.
pub fn item_bytes(out: &Outputs, it: Item) -> &[u8] {
    match it {
        Item::Buffer(i) => out.buffers.get(i),
        Item::Texture(i) => out.images.get(i),
    }
    .map(Vec::as_slice)
    .unwrap_or(&[])
}

/// Compares a prepared job's outputs with its `expected`.
pub fn check(p: &Prepared, out: &Outputs) -> Vec<Mismatch> {
    p.expected
        .iter()
        .filter_map(|(it, want)| compare_bytes(p.name(*it), want, item_bytes(out, *it)))
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
        expected.push((Item::Buffer(i), b64::decode(&e.b64)?));
    }
    let outputs = match out_dir {
        Some(d) => io
            .buffers
            .keys()
            .enumerate()
            .map(|(i, n)| (Item::Buffer(i), d.join(format!("{n}.bin"))))
            .collect(),
        None => Vec::new(),
    };
    Ok(Prepared {
        job,
        names,
        texture_names: Vec::new(),
        outputs,
        expected,
    })
}

/// One shader of a render job file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShaderDesc {
    /// SPIR-V file.
    pub spv: String,
    /// Reflection JSON (default: the spv path with `.json`).
    #[serde(default)]
    pub reflection: Option<String>,
}

/// A vertex buffer of a render job file.
#[derive(Debug, Clone, Deserialize)]
pub struct VertexBufferDesc {
    /// Bytes per vertex.
    pub stride: u32,
    /// Advance per instance.
    #[serde(default)]
    pub per_instance: bool,
    /// Contents.
    #[serde(flatten)]
    pub data: Data,
}

/// A vertex attribute of a render job file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttributeDesc {
    /// Shader input location.
    pub location: u32,
    /// Vertex buffer index (default 0).
    #[serde(default)]
    pub binding: u32,
    /// Format name (`rg32f`, `rgba8unorm`, … see `dmsh_vk::render::attribute_format`).
    pub format: String,
    /// Byte offset in the vertex.
    #[serde(default)]
    pub offset: u32,
}

/// The three passes of a lowered geometry pipeline in a render job file (docs/exec-job.md):
/// drawn instead of `vertex`, bound like the stages they replace.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoweredGeometryDesc {
    /// The capture vertex shader (`vertex_capture`; bound with `vertex_bind`).
    pub capture: ShaderDesc,
    /// The geometry kernel (`geometry_kernel`, a compute module).
    pub kernel: ShaderDesc,
    /// The draw pass's vertex shader (`geometry_draw`).
    pub draw: ShaderDesc,
    /// The kernel's bindings (the geometry shader's own resources).
    #[serde(default)]
    pub kernel_bind: Vec<BindDesc>,
}

/// The passes of a lowered tessellation pipeline in a render job file (docs/exec-job.md):
/// drawn instead of `vertex`, bound like the stages they replace.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoweredTessellationDesc {
    /// The capture vertex shader (`vertex_capture`; bound with `vertex_bind`).
    pub capture: ShaderDesc,
    /// The control kernel (`tess_control_kernel`, a compute module).
    pub control: ShaderDesc,
    /// The evaluation draw's vertex shader (`tess_eval_draw`).
    pub eval: ShaderDesc,
    /// The control kernel's bindings (the tessellation control shader's own resources).
    #[serde(default)]
    pub control_bind: Vec<BindDesc>,
    /// The evaluation draw's bindings (the tessellation evaluation shader's own resources).
    #[serde(default)]
    pub eval_bind: Vec<BindDesc>,
    /// Input control points per patch.
    pub patch_points: u32,
}

/// A `dmsh render` job file (docs/exec-job.md).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RenderJobFile {
    /// Format tag, `dmsh-render/1` (optional).
    #[serde(default)]
    pub format: Option<String>,
    /// Vertex shader (required unless `lowered_geometry` replaces it).
    #[serde(default)]
    pub vertex: Option<ShaderDesc>,
    /// Fragment shader.
    pub fragment: ShaderDesc,
    /// Target width.
    pub width: u32,
    /// Target height.
    pub height: u32,
    /// Color target formats (default `["rgba8"]`).
    #[serde(default)]
    pub targets: Vec<String>,
    /// Clear color.
    #[serde(default)]
    pub clear: [f32; 4],
    /// Alpha blending.
    #[serde(default)]
    pub blend: bool,
    /// Samples per pixel (1 default; 2, 4, 8 render multisampled and resolve).
    #[serde(default)]
    pub samples: u32,
    /// Framebuffer layers (default 1; the PNG stacks them vertically).
    #[serde(default)]
    pub layers: u32,
    /// Viewports as [x, y, width, height] (default: the whole target).
    #[serde(default)]
    pub viewports: Vec<[f32; 4]>,
    /// Vertex buffers.
    #[serde(default)]
    pub vertex_buffers: Vec<VertexBufferDesc>,
    /// Vertex attributes.
    #[serde(default)]
    pub attributes: Vec<AttributeDesc>,
    /// Vertices.
    pub vertex_count: u32,
    /// 32-bit indices: an indexed draw of all of them (absent: not indexed).
    #[serde(default)]
    pub indices: Vec<u32>,
    /// Instances (default 1).
    #[serde(default)]
    pub instance_count: u32,
    /// Primitive restart (index 0xFFFFFFFF; indexed strips and fans).
    #[serde(default)]
    pub primitive_restart: bool,
    /// `triangle_list` (default), `triangle_strip`, `triangle_fan`, `line_list`, `line_strip`,
    /// `point_list`, `line_list_adjacency`, `line_strip_adjacency`, `triangle_list_adjacency`,
    /// `triangle_strip_adjacency`.
    #[serde(default)]
    pub topology: Option<String>,
    /// Buffers by name.
    #[serde(default)]
    pub buffers: BTreeMap<String, BufferDesc>,
    /// Textures by name.
    #[serde(default)]
    pub textures: BTreeMap<String, TextureDesc>,
    /// Vertex stage bindings.
    #[serde(default)]
    pub vertex_bind: Vec<BindDesc>,
    /// Fragment stage bindings.
    #[serde(default)]
    pub fragment_bind: Vec<BindDesc>,
    /// A geometry shader (optional; needs the geometryShader feature).
    #[serde(default)]
    pub geometry: Option<ShaderDesc>,
    /// Geometry stage bindings.
    #[serde(default)]
    pub geometry_bind: Vec<BindDesc>,
    /// A tessellation control shader (with `tess_eval` and `patch_points`).
    #[serde(default)]
    pub tess_control: Option<ShaderDesc>,
    /// Tessellation control stage bindings.
    #[serde(default)]
    pub tess_control_bind: Vec<BindDesc>,
    /// A tessellation evaluation shader (with `tess_control`).
    #[serde(default)]
    pub tess_eval: Option<ShaderDesc>,
    /// Tessellation evaluation stage bindings.
    #[serde(default)]
    pub tess_eval_bind: Vec<BindDesc>,
    /// Control points per patch (tessellation; the draw's vertices are patches of this many).
    #[serde(default)]
    pub patch_points: u32,
    /// A lowered geometry pipeline drawn instead of `vertex` (not with `geometry`).
    #[serde(default)]
    pub lowered_geometry: Option<LoweredGeometryDesc>,
    /// A lowered tessellation pipeline drawn instead of `vertex` (not with `geometry`,
    /// `tess_control` / `tess_eval` or `lowered_geometry`).
    #[serde(default)]
    pub lowered_tessellation: Option<LoweredTessellationDesc>,
    /// Device addresses to write (`buffer` must be given).
    #[serde(default)]
    pub pointers: Vec<PointerDesc>,
    /// PNG of target 0 (RGBA8).
    #[serde(default)]
    pub out_png: Option<String>,
    /// Raw texels of target 0 (tightly packed rows).
    #[serde(default)]
    pub out_raw: Option<String>,
    /// Buffers to write after the draw (name → file).
    #[serde(default)]
    pub outputs: BTreeMap<String, String>,
    /// A reference PNG to compare target 0 with.
    #[serde(default)]
    pub expected_png: Option<String>,
    /// Largest allowed per-channel difference in RGBA8 (default 1).
    #[serde(default)]
    pub tolerance: Option<u8>,
    /// Smallest fraction of pixels that must be within `tolerance` (default 0.999).
    #[serde(default)]
    pub min_fraction: Option<f64>,
}

/// A render job ready to draw, with what to do afterwards.
#[derive(Debug, Clone)]
pub struct RenderPrepared {
    /// The draw.
    pub job: RenderJob,
    /// Buffer names in job order.
    pub names: Vec<String>,
    /// PNG output path.
    pub out_png: Option<PathBuf>,
    /// Raw output path.
    pub out_raw: Option<PathBuf>,
    /// (buffer index, file) to write.
    pub outputs: Vec<(usize, PathBuf)>,
    /// Expected RGBA8 image (width, height, pixels) from `expected_png`.
    pub expected: Option<Image>,
    /// Per-channel tolerance.
    pub tolerance: u8,
    /// Required matching fraction.
    pub min_fraction: f64,
}

/// Decodes a PNG into an RGBA8 [`Image`].
pub fn read_png(bytes: &[u8]) -> Result<Image, Error> {
    let mut dec = png::Decoder::new(bytes);
    dec.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut r = dec
        .read_info()
        .map_err(|e| Error::Job(format!("PNG: {e}")))?;
    let mut buf = vec![0u8; r.output_buffer_size()];
    let info = r
        .next_frame(&mut buf)
        .map_err(|e| Error::Job(format!("PNG: {e}")))?;
    buf.truncate(info.buffer_size());
    let px = (info.width * info.height) as usize;
    let data: Vec<u8> = match info.color_type {
        png::ColorType::Rgba => buf,
        png::ColorType::Rgb => buf
            .chunks_exact(3)
            .flat_map(|c| [c[0], c[1], c[2], 255])
            .collect(),
        png::ColorType::GrayscaleAlpha => buf
            .chunks_exact(2)
            .flat_map(|c| [c[0], c[0], c[0], c[1]])
            .collect(),
        png::ColorType::Grayscale => buf.iter().flat_map(|&g| [g, g, g, 255]).collect(),
        png::ColorType::Indexed => {
            return Err(Error::Job("PNG: indexed color is not supported".into()))
        }
    };
    if data.len() != px * 4 {
        return Err(Error::Job("PNG: unexpected pixel data length".into()));
    }
    Ok(Image {
        width: info.width,
        height: info.height,
        format: TexFormat::Rgba8Unorm,
        data,
    })
}

impl RenderJobFile {
    /// Reads a render job file.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let t = std::fs::read_to_string(path)
            .map_err(|e| Error::Job(format!("{}: {e}", path.display())))?;
        serde_json::from_str(&t).map_err(|e| Error::Job(format!("{}: {e}", path.display())))
    }

    /// Resolves files (relative to `base`) and builds the draw.
    pub fn prepare(&self, base: &Path, out_dir: Option<&Path>) -> Result<RenderPrepared, Error> {
        let stage = |d: &ShaderDesc| -> Result<Stage, Error> {
            let (spirv, reflection) = load_shader(
                &base.join(&d.spv),
                d.reflection.as_ref().map(|r| base.join(r)).as_deref(),
            )?;
            Ok(Stage { spirv, reflection })
        };
        let mut pool = Pool::new(base, &self.buffers, &self.textures)?;
        let mut vertex_binds = Vec::new();
        let mut fragment_binds = Vec::new();
        pool.binds(&self.vertex_bind, &mut vertex_binds)?;
        pool.binds(&self.fragment_bind, &mut fragment_binds)?;
        let middle = |d: &ShaderDesc, b: &[BindDesc]| -> Result<MiddleStage, Error> {
            let mut binds = Vec::new();
            pool.binds(b, &mut binds)?;
            Ok(MiddleStage {
                stage: stage(d)?,
                binds,
            })
        };
        let geometry = match &self.geometry {
            Some(g) => Some(middle(g, &self.geometry_bind)?),
            None => None,
        };
        let lowered_geometry = match &self.lowered_geometry {
            Some(l) => {
                if self.geometry.is_some() {
                    return Err(Error::Job(
                        "a job has geometry or lowered_geometry, not both".into(),
                    ));
                }
                Some(LoweredGeometry {
                    capture: stage(&l.capture)?,
                    kernel: middle(&l.kernel, &l.kernel_bind)?,
                    draw: stage(&l.draw)?,
                })
            }
            None => None,
        };
        let lowered_tessellation = match &self.lowered_tessellation {
            Some(l) => {
                for (other, name) in [
                    (self.geometry.is_some(), "geometry"),
                    (
                        self.tess_control.is_some() || self.tess_eval.is_some(),
                        "tess_control / tess_eval",
                    ),
                    (self.lowered_geometry.is_some(), "lowered_geometry"),
                ] {
                    if other {
                        return Err(Error::Job(format!(
                            "a job has {name} or lowered_tessellation, not both"
                        )));
                    }
                }
                Some(LoweredTessellation {
                    capture: stage(&l.capture)?,
                    control: middle(&l.control, &l.control_bind)?,
                    eval: middle(&l.eval, &l.eval_bind)?,
                    patch_points: l.patch_points,
                })
            }
            None => None,
        };
        let vertex = match (&self.vertex, &lowered_geometry, &lowered_tessellation) {
            (Some(v), _, _) => stage(v)?,
            (None, Some(_), _) | (None, _, Some(_)) => Stage::default(),
            (None, None, None) => {
                return Err(Error::Job(
                    "a render job needs a vertex shader (or lowered_geometry or \
                     lowered_tessellation)"
                        .into(),
                ))
            }
        };
        let tessellation = match (&self.tess_control, &self.tess_eval) {
            (Some(c), Some(e)) => Some(Tessellation {
                control: middle(c, &self.tess_control_bind)?,
                eval: middle(e, &self.tess_eval_bind)?,
                patch_points: self.patch_points,
            }),
            (None, None) => None,
            _ => {
                return Err(Error::Job(
                    "tessellation needs both tess_control and tess_eval".into(),
                ))
            }
        };
        for q in &self.pointers {
            if q.buffer.is_none() {
                return Err(Error::Job(
                    "render job pointers must name the buffer written to".into(),
                ));
            }
        }
        pool.pointers(&self.pointers)?;
        let mut vertex_buffers = Vec::new();
        for v in &self.vertex_buffers {
            vertex_buffers.push(VertexBuffer {
                data: v.data.bytes(base, None)?,
                stride: v.stride,
                per_instance: v.per_instance,
            });
        }
        let attributes = self
            .attributes
            .iter()
            .map(|a| {
                Ok(VertexAttribute {
                    location: a.location,
                    binding: a.binding,
                    format: attribute_format(&a.format)?,
                    offset: a.offset,
                })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let targets = self
            .targets
            .iter()
            .map(|t| TexFormat::parse(t))
            .collect::<Result<Vec<_>, Error>>()?;
        let dir = out_dir.unwrap_or(base);
        let outputs = self
            .outputs
            .iter()
            .map(|(n, f)| Ok((pool.buffer(n)?, dir.join(f))))
            .collect::<Result<Vec<_>, Error>>()?;
        let expected = match &self.expected_png {
            Some(p) => Some(read_png(&read(base, p)?)?),
            None => None,
        };
        Ok(RenderPrepared {
            names: pool.buffers.iter().map(|b| b.name.clone()).collect(),
            job: RenderJob {
                vertex,
                fragment: stage(&self.fragment)?,
                width: self.width,
                height: self.height,
                targets,
                clear: self.clear,
                blend: self.blend,
                dual_source: false,
                depth: false,
                samples: self.samples,
                layers: self.layers,
                viewports: self.viewports.clone(),
                vertex_buffers,
                attributes,
                vertex_count: self.vertex_count,
                indices: self.indices.clone(),
                instance_count: self.instance_count,
                primitive_restart: self.primitive_restart,
                topology: match &self.topology {
                    Some(t) => Topology::parse(t)?,
                    None => Topology::TriangleList,
                },
                buffers: pool.buffers,
                textures: pool.textures,
                vertex_binds,
                fragment_binds,
                pointers: pool.pointers,
                geometry,
                tessellation,
                lowered_geometry,
                lowered_tessellation,
            },
            out_png: self.out_png.as_ref().map(|p| dir.join(p)),
            out_raw: self.out_raw.as_ref().map(|p| dir.join(p)),
            outputs,
            expected,
            tolerance: self.tolerance.unwrap_or(1),
            min_fraction: self.min_fraction.unwrap_or(0.999),
        })
    }
}

/// Formats bytes as lines of little-endian u32 words in hex, with the f32 reading of each
/// word, at most `max_words` words (for `dmsh exec --print`).
pub fn hex_words(bytes: &[u8], max_words: usize) -> String {
    let mut out = String::new();
    for (i, c) in bytes.chunks(4).take(max_words).enumerate() {
        let mut w = [0u8; 4];
        w[..c.len()].copy_from_slice(c);
        let v = u32::from_le_bytes(w);
        if i % 4 == 0 {
            out += &format!("{:#07x}:", i * 4);
        }
        out += &format!(" {v:08x} ({:<12})", format!("{:e}", f32::from_bits(v)));
        if i % 4 == 3 {
            out.push('\n');
        }
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    if bytes.len() > max_words * 4 {
        out += &format!("… {} more bytes\n", bytes.len() - max_words * 4);
    }
    out
}
