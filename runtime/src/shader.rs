//! One built shader as the host walks it: its reflection (`<key>_b.json`) turned into the
//! fixed-size records of [`crate::abi`], with the storage those records point into.

use std::ffi::{CStr, CString};
use std::path::Path;

use dmsh_formats::Stage;
use dmsh_reflect::{Reflection, Resource, SCHEMA_VERSION};

use crate::abi::{self, Binding, Io, Range, Shader};
use crate::error::{Error, Status};

/// The largest reflection record read.
pub const MAX_REFLECTION_BYTES: u64 = 16 << 20;

/// A loaded shader: the C record and everything it points into (heap storage, so the
/// pointers stay valid when the value moves).
#[derive(Debug)]
pub struct Loaded {
    shader: Shader,
    _bindings: Box<[Binding]>,
    _reads: Box<[Range]>,
    _inputs: Box<[Io]>,
    _outputs: Box<[Io]>,
    _strings: [CString; 4],
}

// SAFETY: `shader`'s pointers point into the boxes and strings owned next to it, which are
// never changed after `Loaded` is made; sharing read-only data between threads is sound.
unsafe impl Send for Loaded {}
// SAFETY: as above.
unsafe impl Sync for Loaded {}

impl Loaded {
    /// The C record.
    pub fn shader(&self) -> &Shader {
        &self.shader
    }

    /// The resources.
    pub fn bindings(&self) -> &[Binding] {
        &self._bindings
    }

    /// The cbuf read ranges.
    pub fn reads(&self) -> &[Range] {
        &self._reads
    }

    /// The stage inputs.
    pub fn inputs(&self) -> &[Io] {
        &self._inputs
    }

    /// The stage outputs.
    pub fn outputs(&self) -> &[Io] {
        &self._outputs
    }

    /// The entry point for depth mode `depth` (`abi::DEPTH_*`).
    pub fn entry(&self, depth: u32) -> &CStr {
        let i = if depth == abi::DEPTH_ZERO_TO_ONE {
            3
        } else {
            2
        };
        &self._strings[i]
    }

    /// The library path (`<key>_b.metallib`).
    pub fn library_path(&self) -> &CStr {
        &self._strings[0]
    }
}

/// Reads, checks and converts `<dir>/<key>_b.json` of a shader the map says is `stage`.
pub fn load(
    dir: &Path,
    key: u64,
    stage: Stage,
    chain: &str,
    c1_full: bool,
) -> Result<Loaded, Error> {
    let k = crate::key::to_string(key);
    let json = dir.join(format!("{k}_b.json"));
    let text = crate::files::read_text_opt(&json, MAX_REFLECTION_BYTES, Status::Reflection)?
        .ok_or_else(|| {
            Error::new(
                Status::NotBuilt,
                format!(
                    "{}: key {k} ({stage}) has no reflection in b-{chain}: it was not built \
                     (see _b_build.json)",
                    json.display()
                ),
            )
        })?;
    let at = |e: String| Error::new(Status::Reflection, format!("{}: {e}", json.display()));
    let r: Reflection = serde_json::from_str(&text).map_err(|e| at(e.to_string()))?;
    if r.version.0 != SCHEMA_VERSION {
        return Err(Error::new(
            Status::ReflectionSchema,
            format!(
                "{}: schema version {}, this runtime reads version {SCHEMA_VERSION}: rebuild \
                 with the matching dmsh",
                json.display(),
                r.version.0
            ),
        ));
    }
    match r.chain.as_deref() {
        Some(c) if c == chain => {}
        Some(c) => {
            return Err(Error::new(
                Status::ReflectionChain,
                format!(
                    "{}: built by chain {c}, this runtime loads b-{chain}: rebuild the title or \
                     the host; not loaded",
                    json.display()
                ),
            ))
        }
        None => {
            return Err(Error::new(
                Status::ReflectionChain,
                format!(
                    "{}: records no chain version (not a dmsh build record); not loaded",
                    json.display()
                ),
            ))
        }
    }
    if r.stage != stage.as_str() {
        return Err(at(format!(
            "stage {:?}, the shader map says {stage}",
            r.stage
        )));
    }
    convert(&r, dir, key, stage, c1_full).map_err(at)
}

fn u32_len(n: usize, what: &str) -> Result<u32, String> {
    u32::try_from(n).map_err(|_| format!("{n} {what}: too many"))
}

fn io(v: &[dmsh_reflect::IoVar], what: &str) -> Result<Box<[Io]>, String> {
    v.iter()
        .map(|x| {
            let t = abi::COMPONENT_TYPES
                .iter()
                .position(|t| *t == x.component_type)
                .ok_or_else(|| {
                    format!(
                        "{what} location {}: unknown component type {:?}",
                        x.location, x.component_type
                    )
                })?;
            Ok(Io {
                location: x.location,
                component_type: t as u32,
            })
        })
        .collect()
}

fn binding(r: &Resource, reads: &mut Vec<Range>) -> Result<Binding, String> {
    let kind =
        abi::binding_kind(&r.kind).ok_or_else(|| format!("unknown binding kind {:?}", r.kind))?;
    let (slot, guest_offset) = if r.kind == "sbuf_ubo" {
        r.sbuf_ubo()
    } else {
        (r.bank, r.guest_offset)
    };
    let read_first = u32_len(reads.len(), "read ranges")?;
    for &[start, end] in &r.reads {
        if start > end {
            return Err(format!(
                "{} bank {}: read range [{start}, {end}) ends before it starts",
                r.kind, r.bank
            ));
        }
        reads.push(Range { start, end });
    }
    let mut flags = 0;
    if r.separate {
        flags |= abi::BINDING_SEPARATE;
    }
    if r.reads_dynamic {
        flags |= abi::BINDING_READS_DYNAMIC;
    }
    if r.size.is_some() {
        flags |= abi::BINDING_SIZE_KNOWN;
    }
    Ok(Binding {
        kind,
        slot,
        guest_offset,
        vk_binding: r.vk_binding(),
        metal_index: r.metal_index,
        metal_sampler: r.metal_sampler.unwrap_or(abi::NO_INDEX),
        count: r.count.max(1),
        flags,
        read_first,
        read_count: u32_len(r.reads.len(), "read ranges")?,
        size: r.size.unwrap_or(0),
    })
}

/// The entry points: (GL mode, zero-to-one mode).
fn entries(r: &Reflection) -> Result<(String, String), String> {
    let z = r.metal_entry_z.as_deref();
    let gl = r
        .metal_entry_points
        .iter()
        .find(|e| Some(e.as_str()) != z)
        .ok_or("no Metal entry point (metal_entry_points) for GL depth mode")?;
    if let Some(z) = z {
        if !r.metal_entry_points.iter().any(|e| e == z) {
            return Err(format!(
                "metal_entry_z {z:?} is not among metal_entry_points {:?}",
                r.metal_entry_points
            ));
        }
    }
    Ok((gl.clone(), z.unwrap_or(gl).to_string()))
}

fn cstring(s: String, what: &str) -> Result<CString, String> {
    CString::new(s).map_err(|_| format!("{what} holds a NUL byte"))
}

fn convert(
    r: &Reflection,
    dir: &Path,
    key: u64,
    stage: Stage,
    c1_full: bool,
) -> Result<Loaded, String> {
    let mut reads = Vec::new();
    let bindings: Box<[Binding]> = r
        .resources
        .iter()
        .map(|x| binding(x, &mut reads))
        .collect::<Result<_, _>>()?;
    let reads = reads.into_boxed_slice();
    let inputs = io(&r.inputs, "input")?;
    let outputs = io(&r.outputs, "output")?;
    let (gl, z) = entries(r)?;
    let k = crate::key::to_string(key);
    let path = |ext: &str| {
        dir.join(format!("{k}_b.{ext}"))
            .to_str()
            .map(str::to_string)
            .ok_or_else(|| "the library folder's path is not UTF-8".to_string())
    };
    let strings = [
        cstring(path("metallib")?, "the library path")?,
        cstring(path("metal")?, "the source path")?,
        cstring(gl, "an entry point")?,
        cstring(z, "an entry point")?,
    ];
    let mut flags = 0;
    for (on, f) in [
        (c1_full, abi::SHADER_C1_FULL),
        (r.metal.fits, abi::SHADER_METAL_FITS),
        (r.metal_direct, abi::SHADER_METAL_DIRECT),
        (r.warp_ops, abi::SHADER_WARP_OPS),
        (r.local_size_spec, abi::SHADER_LOCAL_SIZE_SPEC),
        (r.uses_global_addresses, abi::SHADER_GLOBAL_ADDRESSES),
        (r.int64_atomics, abi::SHADER_INT64_ATOMICS),
    ] {
        if on {
            flags |= f;
        }
    }
    let shader = Shader {
        key,
        stage: Stage::ALL.iter().position(|s| *s == stage).unwrap_or(0) as u32,
        flags,
        library_path: strings[0].as_ptr(),
        source_path: strings[1].as_ptr(),
        entry_gl: strings[2].as_ptr(),
        entry_zero_one: strings[3].as_ptr(),
        bindings: bindings.as_ptr(),
        reads: reads.as_ptr(),
        inputs: inputs.as_ptr(),
        outputs: outputs.as_ptr(),
        binding_count: u32_len(bindings.len(), "resources")?,
        read_count: u32_len(reads.len(), "read ranges")?,
        input_count: u32_len(inputs.len(), "inputs")?,
        output_count: u32_len(outputs.len(), "outputs")?,
        metal_buffers: r.metal.buffers,
        metal_textures: r.metal.textures,
        metal_samplers: r.metal.samplers,
        local_size: r.local_size,
        shared_bytes: r.shared_bytes,
        local_bytes: r.local_bytes,
    };
    Ok(Loaded {
        shader,
        _bindings: bindings,
        _reads: reads,
        _inputs: inputs,
        _outputs: outputs,
        _strings: strings,
    })
}
