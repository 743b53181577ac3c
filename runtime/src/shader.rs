//! One built shader as the host walks it: its reflection (`<key>_b.json`, or a variant's
//! `_p`, `_g`, `_q`, `_d`) turned into the fixed-size records of [`crate::abi`], with the storage
//! those records point into.

use std::ffi::{CStr, CString};
use std::path::Path;

use dmsh_formats::Stage;
use dmsh_reflect::{Reflection, Resource, SCHEMA_VERSION};

use crate::abi::{self, Binding, Io, Lowering, Range, Shader};
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
    _lowering: Option<Box<Lowering>>,
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

    /// The lowered pass this module is, or `None` for a direct shader.
    pub fn lowering(&self) -> Option<&Lowering> {
        self._lowering.as_deref()
    }

    /// Whether this geometry kernel assembles draws of `VkPrimitiveTopology` `vk_topology`:
    /// `Ok` when it does; `Status::Topology` naming the key, the topology asked and the ones
    /// served when not; `Status::Argument` when this is not a geometry kernel. No allocation
    /// when `Ok`.
    pub fn check_topology(&self, vk_topology: u32) -> Result<(), Error> {
        topology_check(self.shader.key, self.lowering(), vk_topology)
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

    /// The library path (`<key>_b.metallib`, or the variant's `_p` / `_g` / `_q` / `_d`).
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
    load_variant(dir, key, stage, abi::VARIANT_MAIN, chain, c1_full)
}

/// The Metal stage the module of a lowered pass is (`DMSH_PASS_*`): what its reflection's
/// `stage` says.
fn pass_stage(pass: u32) -> &'static str {
    match pass {
        abi::PASS_GEOMETRY_KERNEL | abi::PASS_TESS_CONTROL_KERNEL => "compute",
        abi::PASS_TESS_EVAL_POST => "tess_eval",
        _ => "vertex",
    }
}

/// The pass of `<key>_b` of a key the map says is `stage`, for stages Metal lacks (the
/// build lowers them, docs/geometry.md, docs/tessellation.md).
pub fn main_pass(stage: Stage) -> Option<u32> {
    match stage {
        Stage::Geometry => Some(abi::PASS_GEOMETRY_KERNEL),
        Stage::TessControl => Some(abi::PASS_TESS_CONTROL_KERNEL),
        Stage::TessEval => Some(abi::PASS_TESS_EVAL_POST),
        _ => None,
    }
}

/// What variant `variant` (`abi::VARIANT_*` other than main) is: the map stage it belongs
/// to, its name, its pass (none for `_q` and `_d`) and when the build writes it.
fn variant_of(variant: u32) -> (Stage, &'static str, u32, &'static str) {
    match variant {
        abi::VARIANT_DRAW => (
            Stage::Geometry,
            "draw",
            abi::PASS_GEOMETRY_DRAW,
            "the build writes it with every geometry shader it lowers",
        ),
        abi::VARIANT_CAPTURE => (
            Stage::Vertex,
            "capture",
            abi::PASS_VERTEX_CAPTURE,
            "the build writes it for every vertex shader of a title with geometry or \
             tessellation control shaders",
        ),
        abi::VARIANT_DUAL_SOURCE => (
            Stage::Fragment,
            "dual-source",
            abi::PASS_NONE,
            "the build writes it only for a Vulkan fragment module (dmsh build --spirv) with \
             plain outputs at locations 0 and 1",
        ),
        _ => (
            Stage::Fragment,
            "primitive ID",
            abi::PASS_NONE,
            "the build writes it only for a fragment shader that reads gl_PrimitiveID, in a \
             title with geometry shaders",
        ),
    }
}

/// The variants (`abi::VARIANT_*` other than main) a key of map stage `stage` can have.
pub fn variants_of(stage: Stage) -> &'static [u32] {
    match stage {
        Stage::Geometry => &[abi::VARIANT_DRAW],
        Stage::Vertex => &[abi::VARIANT_CAPTURE],
        Stage::Fragment => &[abi::VARIANT_PRIMITIVE_ID, abi::VARIANT_DUAL_SOURCE],
        _ => &[],
    }
}

use abi::pass_name;

/// Reads, checks and converts variant `variant` (`abi::VARIANT_*`: `<key>_b`, `_p`, `_g`,
/// `_q`, `_d`) of a shader the map says is `stage`. The reflection's stage must be the map's, or,
/// for a stage Metal lacks, that of its lowered pass ([`main_pass`]); a variant's reflection
/// must carry its pass.
pub fn load_variant(
    dir: &Path,
    key: u64,
    stage: Stage,
    variant: u32,
    chain: &str,
    c1_full: bool,
) -> Result<Loaded, Error> {
    let k = crate::key::to_string(key);
    let suffix = abi::VARIANT_SUFFIXES
        .get(variant as usize)
        .copied()
        .unwrap_or("_b");
    let json = dir.join(format!("{k}{suffix}.json"));
    if variant != abi::VARIANT_MAIN {
        let (want, what, _, _) = variant_of(variant);
        if stage != want {
            return Err(Error::new(
                Status::NotBuilt,
                format!(
                    "{}: key {k} ({stage}) has no {what} variant {k}{suffix}.json: only {want} \
                     keys have one",
                    json.display()
                ),
            ));
        }
    }
    let text = crate::files::read_text_opt(&json, MAX_REFLECTION_BYTES, Status::Reflection)?
        .ok_or_else(|| {
            let m = if variant == abi::VARIANT_MAIN {
                format!(
                    "{}: key {k} ({stage}) has no reflection in b-{chain}: it was not built \
                     (see _b_build.json)",
                    json.display()
                )
            } else {
                let (_, what, _, when) = variant_of(variant);
                format!(
                    "{}: key {k} ({stage}) has no {what} variant {k}{suffix}.json in \
                     b-{chain}: {when}; it was not built (see _b_build.json)",
                    json.display()
                )
            };
            Error::new(Status::NotBuilt, m)
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
    check_stage(&r, stage, variant).map_err(at)?;
    convert(&r, dir, key, stage, suffix, c1_full).map_err(at)
}

/// The reflection's stage and lowering pass fit the map's `stage` and the variant.
fn check_stage(r: &Reflection, stage: Stage, variant: u32) -> Result<(), String> {
    let want = if variant == abi::VARIANT_MAIN {
        main_pass(stage)
    } else {
        Some(variant_of(variant).2).filter(|&p| p != abi::PASS_NONE)
    };
    let got = r.lowering.as_ref().map(|l| abi::pass(l.pass));
    match (got, want) {
        (None, _)
            if r.stage == stage.as_str() && (variant == abi::VARIANT_MAIN || want.is_none()) =>
        {
            Ok(())
        }
        (None, Some(w)) if variant != abi::VARIANT_MAIN => Err(format!(
            "stage {:?} without a lowering record: the {} variant of a {stage} key is pass {}",
            r.stage,
            variant_of(variant).1,
            pass_name(w)
        )),
        (None, _) => Err(format!(
            "stage {:?}, the shader map says {stage}{}",
            r.stage,
            match want {
                Some(w) => format!(" (a lowered {stage} shader is pass {})", pass_name(w)),
                None => String::new(),
            }
        )),
        (Some(g), Some(w)) if g == w => {
            if r.stage == pass_stage(g) {
                Ok(())
            } else {
                Err(format!(
                    "stage {:?} with lowering pass {}, which is a {} module",
                    r.stage,
                    pass_name(g),
                    pass_stage(g)
                ))
            }
        }
        (Some(g), w) => Err(format!(
            "stage {:?} with lowering pass {}, but {} of a {stage} key is {}",
            r.stage,
            pass_name(g),
            if variant == abi::VARIANT_MAIN {
                "the shader (_b)".to_string()
            } else {
                format!("the {} variant", variant_of(variant).1)
            },
            match w {
                Some(w) => format!("pass {}", pass_name(w)),
                None => "a direct shader (no lowering record)".into(),
            }
        )),
    }
}

/// The C record of a reflection's `lowering` (and its `tessellation` record, on an
/// evaluation shader).
fn lowering(
    l: &dmsh_reflect::Lowering,
    tess: Option<&dmsh_reflect::Tessellation>,
) -> Result<Lowering, String> {
    let number = |names: &[&str], v: &str, what: &str| {
        (names.iter().position(|n| *n == v))
            .map(|i| i as u32)
            .ok_or_else(|| format!("tessellation: unknown {what} {v:?}"))
    };
    let (tess_domain, tess_spacing, tess_output) = match tess {
        Some(t) => (
            number(&abi::TESS_DOMAINS, &t.domain, "domain")?,
            number(&abi::TESS_SPACINGS, &t.spacing, "spacing")?,
            number(&abi::TESS_OUTPUTS, &t.output, "output")?,
        ),
        None => (0, 0, 0),
    };
    let pass = abi::pass(l.pass);
    let output = if l.output.is_empty() {
        0
    } else {
        abi::PRIMITIVES[1..]
            .iter()
            .position(|p| *p == l.output)
            .map(|i| i as u32 + 1)
            .ok_or_else(|| format!("lowering: unknown output primitive {:?}", l.output))?
    };
    let mut topologies = 0;
    for t in &l.topologies {
        let n = abi::topology(t).ok_or_else(|| format!("lowering: unknown topology {t:?}"))?;
        topologies |= 1 << n;
    }
    Ok(Lowering {
        pass,
        record_bytes: l.record_bytes,
        input_vertices: l.input_vertices,
        invocations: l.invocations,
        max_vertices: l.max_vertices,
        output,
        indices_per_invocation: l.indices_per_invocation,
        topologies,
        local_size: l.local_size,
        primitive_id_location: l.primitive_id_location.unwrap_or(abi::NO_INDEX),
        control_points: l.control_points,
        factor_bytes: l.factor_bytes,
        patch_bytes: l.patch_bytes,
        tess_domain,
        tess_spacing,
        tess_output,
    })
}

/// [`Loaded::check_topology`] on a C record (`dmsh_check_topology`).
///
/// # Safety
/// `s.lowering` is NULL or points to a valid record (as every record of an open title).
pub unsafe fn check_topology(s: &Shader, vk_topology: u32) -> Result<(), Error> {
    topology_check(s.key, s.lowering.as_ref(), vk_topology)
}

fn topology_check(key: u64, lowering: Option<&Lowering>, vk_topology: u32) -> Result<(), Error> {
    let k = || crate::key::to_string(key);
    let l = match lowering {
        Some(l) if l.pass == abi::PASS_GEOMETRY_KERNEL => l,
        l => {
            return Err(Error::new(
                Status::Argument,
                format!(
                    "key {}: not a geometry kernel (lowering pass {}): only a geometry \
                     key's shader (_b) assembles topologies",
                    k(),
                    pass_name(l.map_or(abi::PASS_NONE, |l| l.pass))
                ),
            ))
        }
    };
    if vk_topology < 32 && l.topologies & (1 << vk_topology) != 0 {
        return Ok(());
    }
    let asked = match abi::TOPOLOGIES.get(vk_topology as usize) {
        Some(t) => (*t).to_string(),
        None if vk_topology == 10 => "patch_list".into(),
        None => "not a topology the lowering knows".into(),
    };
    Err(Error::new(
        Status::Topology,
        format!(
            "key {}: the lowered geometry shader's kernel does not assemble topology \
             {vk_topology} ({asked}); it serves {}: refuse, split or convert the draw \
             (docs/geometry.md)",
            k(),
            topology_names(l.topologies)
        ),
    ))
}

/// The topology names of mask `m` (`DmshLowering.topologies`), comma-separated, or "none".
pub fn topology_names(m: u32) -> String {
    let v: Vec<&str> = (abi::TOPOLOGIES.iter().enumerate())
        .filter(|&(i, _)| m & (1 << i) != 0)
        .map(|(_, t)| *t)
        .collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
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
                index: x.index,
            })
        })
        .collect()
}

fn binding(r: &Resource, reads: &mut Vec<Range>) -> Result<Binding, String> {
    let kind =
        abi::binding_kind(&r.kind).ok_or_else(|| format!("unknown binding kind {:?}", r.kind))?;
    if kind == abi::BIND_LOWERED && dmsh_reflect::LoweredBuffer::from_bank(r.bank).is_none() {
        return Err(format!("lowered buffer of unknown role {}", r.bank));
    }
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
    suffix: &str,
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
    let low = (r.lowering.as_ref())
        .map(|l| lowering(l, r.tessellation.as_ref()))
        .transpose()?
        .map(Box::new);
    let k = crate::key::to_string(key);
    let path = |ext: &str| {
        dir.join(format!("{k}{suffix}.{ext}"))
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
        lowering: low
            .as_deref()
            .map_or(std::ptr::null(), |l| l as *const Lowering),
    };
    Ok(Loaded {
        shader,
        _bindings: bindings,
        _reads: reads,
        _inputs: inputs,
        _outputs: outputs,
        _lowering: low,
        _strings: strings,
    })
}
