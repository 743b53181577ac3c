//! The NAK corpus (tests/corpus/nak: NVK/NAK's sm53 and sm86 binaries of the dksh corpus'
//! GLSL) under NVK's binding layout (`BindingLayout::nvk`).
//!
//! Render: every vertex + fragment case of `dksh_render::cases` (corpus pairs, and corpus
//! shaders paired with glslang helper partners) over the NAK corpus' Vulkan GLSL, drawn twice —
//! glslang's SPIR-V of that GLSL, then our translation of NAK's binary for the corpus side(s) —
//! with the same inputs; a case passes when every target matches within 1/255 on >= 99.9 % of
//! pixels. Our side is bound as NVK binds it (README §4): a root descriptor table in c\[0\]
//! with the descriptor-set buffers' addresses, the set buffers holding handles, {address,
//! size} records of uniform and storage buffers, and the constant banks the shader's cbuf
//! map (meta.json) names. A handle's texture and sampler IDs are the descriptor's slot
//! (handle-word offset / 4) + 1: NAK's code treats ID 0 as NVK's null descriptor (`handle
//! == 0` selects 0 after a `TXQ`), so NVK never hands it out. Validation: every geometry, tessellation
//! and compute shader translates to SPIR-V spirv-val accepts. One line per shader or case;
//! exceptions and their causes are in the `KNOWN` lists. Compute: every case of `dksh::cases`
//! (the dksh corpus' inputs) run with glslang's SPIR-V and with our translation.
//! `DMSH_DEBUG_CASE=NAME` prints a case's first differing pixels, `DMSH_NAK_DUMP=DIR` writes
//! each translation and its reflection there.

use std::path::{Path, PathBuf};

use dmsh_ir::lift::{dksh, Abi, Arch, BindingLayout, Config};
use dmsh_spv::{F64Mode, Options};
use dmsh_testsupport::reference::dksh_render::{self, PairCase, Side, StageData};
use dmsh_testsupport::reference::translate::glsl_facts;
use dmsh_vk::compute::{Bind, BufferSpec, PointerEncoding, PointerPatch, ResourceRef};
use dmsh_vk::render::{RenderJob, Stage};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};

/// sm53 render cases that do not match yet, with the cause.
const KNOWN_SM53: &[(&str, &str)] = &[];

/// sm86 render cases that do not match yet, with the cause (the first instruction the Ampere
/// lifter cannot translate yet).
const KNOWN_SM86: &[(&str, &str)] = &[];

/// Set in a child process whose case name starts with `soft/`: translate with
/// `F64Mode::Soft` (the Metal build's f64).
static SOFT_F64: AtomicBool = AtomicBool::new(false);

/// The translation options: the defaults, with soft f64 where [`SOFT_F64`] says.
fn options() -> Options {
    let soft = SOFT_F64.load(Ordering::Relaxed);
    Options {
        f64: if soft { F64Mode::Soft } else { F64Mode::Native },
        ..Options::default()
    }
}

/// With soft f64, an error when the module still declares a 64-bit float type.
fn check_soft(words: &[u32]) -> Result<(), String> {
    if SOFT_F64.load(Ordering::Relaxed) && dmsh_msl::limits::uses_f64(words) {
        return Err("soft f64: the module declares a 64-bit float type".into());
    }
    Ok(())
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/nak")
}

/// The meta.json of `name` (e.g. `vs_basic_mvp.vert`) for `sm`.
fn meta(name: &str, sm: &str) -> Result<Value, String> {
    let p = corpus().join(format!("{name}.{sm}.meta.json"));
    let s = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
    serde_json::from_str(&s).map_err(|e| format!("{}: {e}", p.display()))
}

/// `layout(set = N, …)` qualifiers removed: glslang's bindings are then shifted onto the
/// reference harness' table (set numbers are descriptor numbering only).
fn strip_sets(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    for line in src.lines() {
        let mut l = line.to_string();
        while let Some(at) = set_qualifier(&l) {
            let end = l[at..].find([',', ')']).map_or(l.len(), |e| {
                at + e + usize::from(l[at + e..].starts_with(','))
            });
            let end = end + l[end..].len() - l[end..].trim_start().len();
            l.replace_range(at..end, "");
        }
        out += l.replace("(, ", "(").replace(", )", ")").trim_end();
        out.push('\n');
    }
    out
}

/// Where a `set = N` / `set=N` layout qualifier starts in `l` (not `offset = …`).
fn set_qualifier(l: &str) -> Option<usize> {
    let b = l.as_bytes();
    (0..l.len()).find(|&i| {
        l[i..].starts_with("set")
            && (i == 0 || matches!(b[i - 1], b'(' | b' ' | b','))
            && l[i + 3..].trim_start().starts_with('=')
    })
}

/// A fresh scratch folder with every NAK shader's Vulkan GLSL as `NAME.glsl` (sets removed),
/// the file names `dksh_render::cases` reads.
fn glsl_dir() -> PathBuf {
    // One folder per call: the tests of this file run at once and each removes its own.
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    // The process id too: the render cases run in child processes of this binary.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "dmsh-nak-glsl-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    for e in std::fs::read_dir(corpus()).unwrap().flatten() {
        let n = e.file_name().to_string_lossy().to_string();
        if let Some(base) = n.strip_suffix(".vk.glsl") {
            let src = std::fs::read_to_string(e.path()).unwrap();
            std::fs::write(dir.join(format!("{base}.glsl")), strip_sets(&src)).unwrap();
        }
    }
    dir
}

/// One binding of a descriptor-set layout, as NVK lays it out in the set buffer.
#[derive(Debug, Clone)]
struct SetBinding {
    set: u32,
    binding: u32,
    ty: String,
    count: u32,
    offset: u32,
    stride: u32,
}

fn hex(v: &Value) -> u32 {
    match v {
        Value::String(s) => u32::from_str_radix(s.trim_start_matches("0x"), 16).unwrap_or(0),
        v => v.as_u64().unwrap_or(0) as u32,
    }
}

/// The descriptor-set layouts the pipeline was built with (meta.json `build`).
fn set_layouts(m: &Value) -> Vec<SetBinding> {
    let mut v = Vec::new();
    for s in m["build"]["descriptor_set_layouts"]
        .as_array()
        .into_iter()
        .flatten()
    {
        for b in s["bindings"].as_array().into_iter().flatten() {
            v.push(SetBinding {
                set: b["set"].as_u64().unwrap_or(0) as u32,
                binding: b["binding"].as_u64().unwrap_or(0) as u32,
                ty: b["type"].as_str().unwrap_or("").into(),
                count: b["count"].as_u64().unwrap_or(1) as u32,
                offset: hex(&b["offset_in_set_buffer"]),
                stride: b["stride"].as_u64().unwrap_or(4) as u32,
            });
        }
    }
    v
}

/// What a hardware constant bank holds (meta.json `cbuf_map`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Bank {
    Root,
    Data,
    Set(u32),
    Ubo(u32, u32),
}

fn cbuf_map(m: &Value) -> Vec<(u32, Bank)> {
    let mut v = Vec::new();
    for c in m["cbuf_map"].as_array().into_iter().flatten() {
        let n = c["hw_bank"].as_u64().unwrap_or(0) as u32;
        let s = c["desc_set"].as_u64().unwrap_or(0) as u32;
        let b = match c["type"].as_str().unwrap_or("") {
            "ROOT_DESC" => Bank::Root,
            "SHADER_DATA" => Bank::Data,
            "DESC_SET" => Bank::Set(s),
            _ => Bank::Ubo(s, c["binding"].as_u64().unwrap_or(0) as u32),
        };
        v.push((n, b));
    }
    v
}

/// The slot of GLSL binding `b` in descriptor set `set` (its handle word's byte offset / 4).
fn slot_of(layouts: &[SetBinding], set: u32, b: u32) -> Option<u32> {
    layouts
        .iter()
        .find(|l| l.set == set && l.binding == b)
        .map(|l| l.offset / 4)
}

fn stage_of(m: &Value) -> Option<dmsh_ir::Stage> {
    use dmsh_ir::Stage as S;
    Some(match m["stage_suffix"].as_str()? {
        "vert" => S::Vertex,
        "tesc" => S::TessControl,
        "tese" => S::TessEval,
        "geom" => S::Geometry,
        "frag" => S::Fragment,
        "comp" => S::Compute,
        _ => return None,
    })
}

/// Our translation of NAK's binary of graphics shader `name` for `sm` under the NVK profile,
/// with the I/O and sampler types its GLSL declares (`glsl`: its source).
fn translate(name: &str, sm: &str, glsl: &str) -> Result<Stage, String> {
    let m = meta(name, sm)?;
    if stage_of(&m) == Some(dmsh_ir::Stage::Compute) {
        return translate_compute(name, sm, &m);
    }
    let code = std::fs::read(corpus().join(format!("{name}.{sm}.code.bin")))
        .map_err(|e| format!("{name}: {e}"))?;
    let st = stage_of(&m).ok_or("no stage")?;
    let banks = cbuf_map(&m);
    let mut layout = nvk_layout(&m);
    // The sets' sizes bound the slots (a run-time indexed sampler array has no more
    // elements than set 1 has handle words).
    let words = |set: u64| {
        m["build"]["descriptor_set_layouts"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|l| l["set"] == set)
            .and_then(|l| l["set_buffer_bytes"].as_u64())
            .map(|b| (b as u32 / 4).clamp(1, 32))
    };
    // The harness' texture IDs are slot + 1: the `tex_dyn` arrays cover one more.
    layout.tex_count = words(1).map_or(layout.tex_count, |w| (w + 1).min(32));
    layout.image_count = words(2).unwrap_or(layout.image_count);
    let mut cfg = dksh::graphics_config(st, &code, &[], layout, &format!("{name}.{sm}"))?;
    if sm == "sm86" {
        cfg.arch = Arch::Ampere;
    }
    cfg.embedded_banks.clear();
    if let Some(&(n, _)) = banks.iter().find(|b| b.1 == Bank::Data) {
        let data = std::fs::read(corpus().join(format!("{name}.{sm}.data.bin")))
            .map_err(|e| format!("{name}: data.bin: {e}"))?;
        let words = data
            .chunks(4)
            .map(|c| c.iter().rev().fold(0u32, |a, &b| a << 8 | b as u32))
            .collect();
        cfg.embedded_banks.insert(n as u8, words);
        cfg.buffer_banks.remove(&(n as u8));
    }
    let layouts = set_layouts(&m);
    if let Some(g) = cfg.gfx.as_mut() {
        g.early_fragment_tests = m["stage_info"]["early_fragment_tests"] == true;
        let t = &m["stage_info"]["tessellation"];
        let names = [&t["domain"], &t["spacing"], &t["prims"]].map(|v| v.as_str().unwrap_or(""));
        if let Some(p) = dmsh_ir::lift::pipeline_state::tess::parse(names[0], names[1], names[2]) {
            g.tess_from_container(p);
        }
        glsl_facts(g, glsl, true, &|b| slot_of(&layouts, 1, b), &|b| {
            slot_of(&layouts, 2, b)
        });
    }
    let out = dmsh_spv::translate_graphics(&code, &cfg, &options()).map_err(|e| e.to_string())?;
    check_soft(&out.words)?;
    if let Ok(d) = std::env::var("DMSH_NAK_DUMP") {
        let bytes: Vec<u8> = out.words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let _ = std::fs::write(Path::new(&d).join(format!("{name}.{sm}.spv")), bytes);
        let _ = std::fs::write(
            Path::new(&d).join(format!("{name}.{sm}.json")),
            out.reflection.to_json(),
        );
    }
    Ok(Stage {
        spirv: out.words,
        reflection: out.reflection,
    })
}

/// NVK's banks of sampled-texture (set 1) and storage-image (set 2) descriptors.
fn nvk_layout(m: &Value) -> BindingLayout {
    let banks = cbuf_map(m);
    let bank_of = |s: u32| {
        banks
            .iter()
            .find(|b| b.1 == Bank::Set(s))
            .map(|b| b.0 as u8)
    };
    let (tex, img) = (bank_of(1), bank_of(2));
    // A shader without such a set: a bank no instruction names.
    BindingLayout::nvk(tex.unwrap_or(u8::MAX), img.unwrap_or(u8::MAX))
}

/// Our translation of NAK's compute binary `name` (instructions from byte 0; the QMD's data
/// — workgroup size, shared and local memory — from meta.json).
fn translate_compute(name: &str, sm: &str, m: &Value) -> Result<Stage, String> {
    translate_compute_with(name, sm, m, dmsh_spv::WarpMode::Subgroup)
}

/// [`translate_compute`] with the warp operations translated as `warp` says.
fn translate_compute_with(
    name: &str,
    sm: &str,
    m: &Value,
    warp: dmsh_spv::WarpMode,
) -> Result<Stage, String> {
    let code = std::fs::read(corpus().join(format!("{name}.{sm}.code.bin")))
        .map_err(|e| format!("{name}: {e}"))?;
    let si = &m["stage_info"];
    let n = |v: &Value| v.as_u64().unwrap_or(1) as u32;
    let wg = &si["workgroup_size"];
    let mut cfg = Config::compute(Abi::Nvk, [n(&wg[0]), n(&wg[1]), n(&wg[2])]);
    if sm == "sm86" {
        cfg.arch = Arch::Ampere;
    }
    cfg.shared_bytes = si["shared_memory_bytes"].as_u64().unwrap_or(0) as u32;
    cfg.local_bytes = m["memory"]["local_memory_bytes_per_thread"]
        .as_u64()
        .unwrap_or(0) as u32;
    for (bank, kind) in cbuf_map(m) {
        if kind != Bank::Data {
            cfg.buffer_banks.insert(bank as u8, (0, 0x10000));
        }
    }
    cfg.layout = Some(nvk_layout(m));
    let opts = Options { warp, ..options() };
    let out = dmsh_spv::translate(&code, &cfg, &opts).map_err(|e| e.to_string())?;
    check_soft(&out.words)?;
    Ok(Stage {
        spirv: out.words,
        reflection: out.reflection,
    })
}

/// Every geometry, tessellation and compute shader of the corpus for `sm` translates to
/// SPIR-V that spirv-val accepts; returns the failures (name, why).
fn validate_all(sm: &str) -> Vec<(String, String)> {
    let index = std::fs::read_to_string(corpus().join("INDEX.tsv")).unwrap();
    let mut bad = Vec::new();
    let mut n = 0;
    for row in index.lines().skip(1) {
        let cols: Vec<&str> = row.split('\t').collect();
        let [name, stage, s, ..] = cols[..] else {
            continue;
        };
        if s != sm || !matches!(stage, "tesc" | "tese" | "geom" | "comp") {
            continue;
        }
        n += 1;
        let src = std::fs::read_to_string(corpus().join(format!("{name}.vk.glsl")))
            .map(|t| strip_sets(&t))
            .unwrap_or_default();
        let r = translate(name, sm, &src)
            .and_then(|st| dmsh_vk::spirv_val(&st.spirv).map_err(|e| e.to_string()));
        match r {
            Ok(()) => println!("ok   {sm} {name}: spirv-val accepts the translation"),
            Err(e) => {
                let e: String = e.chars().take(300).collect();
                println!("FAIL {sm} {name}: {e}");
                bad.push((name.to_string(), e));
            }
        }
    }
    println!(
        "{}/{n} {sm} geometry, tessellation and compute shaders validate",
        n - bad.len()
    );
    bad
}

/// sm53 geometry / tessellation / compute shaders whose translation does not validate yet.
const KNOWN_VALID_SM53: &[(&str, &str)] = &[];

/// sm86 geometry / tessellation / compute shaders whose translation does not validate yet.
const KNOWN_VALID_SM86: &[(&str, &str)] = &[];

fn check_known(bad: &[(String, String)], known: &[(&str, &str)]) {
    let unexpected: Vec<&String> = bad
        .iter()
        .map(|b| &b.0)
        .filter(|n| !known.iter().any(|k| k.0 == n.as_str()))
        .collect();
    let stale: Vec<&str> = known
        .iter()
        .map(|k| k.0)
        .filter(|k| !bad.iter().any(|b| b.0 == *k))
        .collect();
    assert!(
        unexpected.is_empty() && stale.is_empty(),
        "unexpected {unexpected:?}, listed but passing {stale:?}"
    );
}

#[test]
fn nak_sm53_other_stages_validate() {
    check_known(&validate_all("sm53"), KNOWN_VALID_SM53);
}

#[test]
fn nak_sm86_other_stages_validate() {
    check_known(&validate_all("sm86"), KNOWN_VALID_SM86);
}

/// Where the reference job (`dksh_render::job` with glslang's stages on both sides) put one
/// stage's inputs: first storage buffer, first uniform buffer, first texture, image, sampler.
#[derive(Clone, Copy)]
struct Placed {
    ssbo: usize,
    ubo: usize,
    tex: usize,
    img: usize,
}

fn placed(case: &PairCase, fragment: bool) -> Placed {
    let v = &case.vs;
    let (b0, t0) = if fragment {
        (
            v.ssbos.len() + v.ubos.len(),
            v.textures.len() + v.images.len() + v.samplers.len(),
        )
    } else {
        (0, 0)
    };
    let d = if fragment { &case.fs } else { &case.vs };
    Placed {
        ssbo: b0,
        ubo: b0 + d.ssbos.len(),
        tex: t0,
        img: t0 + d.textures.len(),
    }
}

/// A pointer patch being built: byte offset, the job buffer whose address goes there, and how.
type Patch = (u64, usize, PointerEncoding);

/// A descriptor-set buffer being built: (set, bytes, pointer patches).
type SetBuffer = (u32, Vec<u8>, Vec<Patch>);

/// Vulkan's standard 4-sample locations in 1/16 pixel (x | y << 4), as the root table's
/// `draw.sample_locations` holds them.
const SAMPLE_LOCATIONS_4: [u8; 4] = [6 | 2 << 4, 14 | 6 << 4, 2 | 10 << 4, 10 | 14 << 4];

/// Adds one translated stage's NVK memory (root table, descriptor-set buffers) to `job` and
/// returns its binds: the stage's data is the reference job's, bound where NVK's layout
/// (meta.json `build` and `cbuf_map`) and our reflection put it.
/// One stage's inputs by GLSL binding, and where the job holds them.
struct Inputs<'a> {
    ubos: &'a [(u32, Vec<u8>)],
    ssbos: &'a [(u32, Vec<u8>)],
    textures: &'a [(u32, dmsh_vk::TextureSpec)],
    images: &'a [(u32, dmsh_vk::TextureSpec)],
    at: Placed,
}

/// A job's buffers and pointer patches, which NVK's memory is added to.
struct Memory<'a> {
    buffers: &'a mut Vec<BufferSpec>,
    pointers: &'a mut Vec<PointerPatch>,
}

/// [`nvk_memory`] for a render job's vertex or fragment stage.
fn nvk_binds(
    job: &mut RenderJob,
    case: &PairCase,
    fragment: bool,
    m: &Value,
    refl: &dmsh_vk::Reflection,
) -> Result<Vec<Bind>, String> {
    let d: &StageData = if fragment { &case.fs } else { &case.vs };
    let inputs = Inputs {
        ubos: &d.ubos,
        ssbos: &d.ssbos,
        textures: &d.textures,
        images: &d.images,
        at: placed(case, fragment),
    };
    let mut root = vec![0u8; 0x800];
    if case.samples == 4 {
        root[0x10..0x14].copy_from_slice(&SAMPLE_LOCATIONS_4);
    }
    let mem = Memory {
        buffers: &mut job.buffers,
        pointers: &mut job.pointers,
    };
    let tag = format!("{} {}", case.name, if fragment { "fs" } else { "vs" });
    nvk_memory(mem, &inputs, root, m, refl, &tag)
}

/// Adds one translated stage's NVK memory — the root table (`root`: its draw / dispatch
/// words, the set addresses are added here) and the descriptor-set buffers — to `mem` and
/// returns the binds of its reflection's resources: the inputs are the reference job's,
/// bound where NVK's layout (meta.json `build` and `cbuf_map`) and our reflection put them.
fn nvk_memory(
    mut mem: Memory,
    d: &Inputs,
    mut root: Vec<u8>,
    m: &Value,
    refl: &dmsh_vk::Reflection,
    tag: &str,
) -> Result<Vec<Bind>, String> {
    let at = d.at;
    let layouts = set_layouts(m);
    let banks = cbuf_map(m);
    let find = |list: &[u32], n: u32| list.iter().position(|&b| b == n);
    let ubo_ids: Vec<u32> = d.ubos.iter().map(|x| x.0).collect();
    let ssbo_ids: Vec<u32> = d.ssbos.iter().map(|x| x.0).collect();
    let tex_ids: Vec<u32> = d.textures.iter().map(|x| x.0).collect();
    let img_ids: Vec<u32> = d.images.iter().map(|x| x.0).collect();
    // Set buffers: bytes and pointer patches (offset, target buffer).
    let mut sets: Vec<SetBuffer> = Vec::new();
    for l in &layouts {
        let k = match sets.iter().position(|s| s.0 == l.set) {
            Some(k) => k,
            None => {
                sets.push((l.set, Vec::new(), Vec::new()));
                sets.len() - 1
            }
        };
        let end = (l.offset + l.stride * l.count) as usize;
        let s = &mut sets[k];
        if s.1.len() < end {
            s.1.resize(end, 0);
        }
        for e in 0..l.count {
            let o = (l.offset + l.stride * e) as usize;
            let w = |s: &mut SetBuffer, at: usize, x: u32| {
                s.1[at..at + 4].copy_from_slice(&x.to_le_bytes())
            };
            match l.ty.as_str() {
                "UNIFORM_BUFFER" | "STORAGE_BUFFER" => {
                    let (ids, first, list) = if l.ty == "UNIFORM_BUFFER" {
                        (&ubo_ids, at.ubo, &d.ubos)
                    } else {
                        (&ssbo_ids, at.ssbo, &d.ssbos)
                    };
                    if let Some(i) = find(ids, l.binding + e) {
                        let size = list[i].1.len() as u32;
                        // Turing+ UBO descriptors are bindless constant-buffer handles
                        // (README §4.2); SSBOs and sm53 UBOs are {u64 address, u32 size}.
                        if l.ty == "UNIFORM_BUFFER" && m["sm"].as_u64() == Some(86) {
                            s.2.push((o as u64, first + i, PointerEncoding::CbufHandle { size }));
                        } else {
                            s.2.push((o as u64, first + i, PointerEncoding::Address));
                            w(s, o + 8, size);
                        }
                    }
                }
                "STORAGE_IMAGE" | "STORAGE_TEXEL_BUFFER" => w(s, o, o as u32 / 4 + 1),
                _ => {
                    let id = o as u32 / 4 + 1;
                    w(s, o, id | id << 20);
                }
            }
        }
    }
    let push = |mem: &mut Memory, name: String, bytes: &[u8], patches: &[Patch]| {
        let n = mem.buffers.len();
        mem.buffers.push(BufferSpec {
            name,
            size: bytes.len().max(16) as u64,
            init: bytes.to_vec(),
        });
        for &(offset, target, encoding) in patches {
            mem.pointers.push(PointerPatch {
                buffer: n,
                offset,
                target,
                add: 0,
                encoding,
            });
        }
        n
    };
    let stage = tag;
    let set_index: Vec<(u32, usize)> = sets
        .iter()
        .map(|s| {
            (
                s.0,
                push(&mut mem, format!("{stage}_set{}", s.0), &s.1, &s.2),
            )
        })
        .collect();
    // The root descriptor table's set addresses.
    let mut root_patches = Vec::new();
    for (s, bytes, _) in &sets {
        let o = 0x128 + 16 * *s as usize;
        let k = set_index.iter().find(|x| x.0 == *s).map(|x| x.1).unwrap();
        root_patches.push((o as u64, k, PointerEncoding::Address));
        root[o + 8..o + 12].copy_from_slice(&(bytes.len() as u32).to_le_bytes());
    }
    let root_set = (root, root_patches);
    // A texture (set 1) or image (set 2) slot — its handle word's offset / 4 — to the case's
    // input (element e of binding b = the input at binding b + e).
    let of = |set: u32, slot: u32, ids: &[u32], first: usize| -> Option<usize> {
        let l = layouts.iter().find(|l| {
            let rel = (4 * slot).checked_sub(l.offset);
            l.set == set && rel.is_some_and(|r| r % l.stride == 0 && r / l.stride < l.count)
        })?;
        find(ids, l.binding + (4 * slot - l.offset) / l.stride).map(|i| first + i)
    };
    let tex_of = |slot: u32| of(1, slot, &tex_ids, at.tex);
    let img_of = |slot: u32| of(2, slot, &img_ids, at.img);
    let missing = |what: String| format!("{stage} {what}: the case has no input");
    let mut binds = Vec::new();
    for r in &refl.resources {
        let n = r.index();
        let (resource, buffer) = match r.kind.as_str() {
            "cbuf" => {
                let bank = banks.iter().find(|b| b.0 == n).map(|b| b.1);
                let g = r.guest_offset as usize;
                let (bytes, patches): (Vec<u8>, Vec<Patch>) = match bank {
                    Some(Bank::Root) => root_set.clone(),
                    Some(Bank::Set(s)) => sets
                        .iter()
                        .find(|x| x.0 == s)
                        .map(|x| (x.1.clone(), x.2.clone()))
                        .ok_or_else(|| missing(format!("set {s}")))?,
                    Some(Bank::Ubo(_, b)) => {
                        let i = find(&ubo_ids, b).ok_or_else(|| missing(format!("ubo {b}")))?;
                        binds.push(Bind {
                            resource: ResourceRef::Cbuf(n),
                            buffer: at.ubo + i,
                        });
                        continue;
                    }
                    _ => return Err(missing(format!("bank {n}"))),
                };
                let full = bytes.len().max(g + r.size.unwrap_or(0) as usize);
                let mut b = bytes;
                b.resize(full, 0);
                let p: Vec<Patch> = patches
                    .iter()
                    .filter(|p| p.0 as usize >= g)
                    .map(|p| (p.0 - g as u64, p.1, p.2))
                    .collect();
                let k = push(&mut mem, format!("{stage}_cbuf{n}"), &b[g..], &p);
                (ResourceRef::Cbuf(n), k)
            }
            "sbuf_ubo" => {
                let (u, o) = (r.bank, r.guest_offset);
                let bank = banks.iter().find(|b| b.0 == u + 1).map(|b| b.1);
                let Some(Bank::Set(s)) = bank else {
                    return Err(missing(format!("sbuf_ubo bank {}", u + 1)));
                };
                let k = sets
                    .iter()
                    .find(|x| x.0 == s)
                    .and_then(|x| x.2.iter().find(|p| p.0 == o as u64))
                    .map(|p| p.1)
                    .ok_or_else(|| missing(format!("sbuf_ubo set {s} offset {o:#x}")))?;
                (ResourceRef::SbufUbo(u, o), k)
            }
            "texture" if r.count > 0 => {
                // The array's elements are the GLSL array's: the slots of the set binding its
                // first slot is in (the translation's array may run on over later bindings).
                let within = |slot: u32| {
                    let b = |s: u32| {
                        layouts.iter().position(|l| {
                            l.set == 1
                                && (4 * s)
                                    .checked_sub(l.offset)
                                    .is_some_and(|r| r / l.stride < l.count)
                        })
                    };
                    b(slot).is_some() && b(slot) == b(n)
                };
                for e in (0..r.count).filter(|&e| within(n + e)) {
                    if let Some(t) = tex_of(n + e) {
                        binds.push(Bind {
                            resource: ResourceRef::Texture(n + e),
                            buffer: t,
                        });
                    }
                }
                continue;
            }
            "texture" => (
                ResourceRef::Texture(n),
                tex_of(n).ok_or_else(|| missing(format!("texture slot {n}")))?,
            ),
            "tex_dyn" | "samp_dyn" => {
                for k in 1..r.count {
                    if let Some(t) = tex_of(k - 1) {
                        let res = if r.kind == "tex_dyn" {
                            ResourceRef::TexDyn(k)
                        } else {
                            ResourceRef::SampDyn(k)
                        };
                        binds.push(Bind {
                            resource: res,
                            buffer: t,
                        });
                    }
                }
                continue;
            }
            "image" => (
                ResourceRef::Image(n),
                img_of(n).ok_or_else(|| missing(format!("image slot {n}")))?,
            ),
            k => return Err(missing(format!("resource {k} {n}"))),
        };
        binds.push(Bind { resource, buffer });
    }
    Ok(binds)
}

/// Draws `case` with glslang's SPIR-V, then with our stages in place of the corpus sides
/// (bound as NVK binds them), and compares the draws.
fn check(
    dir: &Path,
    case: &PairCase,
    sm: &str,
    v: Option<Stage>,
    f: Option<Stage>,
) -> Result<dksh_render::PairResult, String> {
    let e = |e: dmsh_vk::error::Error| e.to_string();
    let rv = dksh_render::reference_stage(dir, &case.vertex, "vertex").map_err(e)?;
    let rf = dksh_render::reference_stage(dir, &case.fragment, "fragment").map_err(e)?;
    let want = dksh_render::run(case, rv.clone(), rf.clone()).map_err(e)?;
    if std::env::var("DMSH_DEBUG_CASE").ok().as_deref() == Some(case.name.as_str()) {
        println!("reference drawn");
    }
    let mut job = dksh_render::job(case, rv, rf).map_err(e)?;
    let name = |s: &Side| match s {
        Side::Corpus(n) => n.clone(),
        Side::Helper(_) => String::new(),
    };
    if let Some(v) = v {
        let m = meta(&name(&case.vertex), sm)?;
        job.vertex_binds = nvk_binds(&mut job, case, false, &m, &v.reflection)?;
        job.vertex = v;
    }
    if let Some(f) = f {
        let m = meta(&name(&case.fragment), sm)?;
        job.fragment_binds = nvk_binds(&mut job, case, true, &m, &f.reflection)?;
        job.fragment = f;
    }
    let got = dmsh_vk::render::render(&job).map_err(e)?;
    if std::env::var("DMSH_DEBUG_CASE").ok().as_deref() == Some(case.name.as_str()) {
        let (a, b) = (&want.targets[0], &got.targets[0]);
        let px = a.format.texel_bytes() as usize;
        let diff = a.data.chunks(px).zip(b.data.chunks(px)).enumerate();
        for (k, (p, q)) in diff.filter(|(_, (p, q))| p != q).take(40) {
            let (x, y) = (k % a.width as usize, k / a.width as usize);
            println!("px {x},{y}: want {p:?} got {q:?}");
        }
    }
    Ok(dksh_render::compare(case, &want, &got))
}

/// `dksh_render::cases` over the NAK GLSL in `dir`, with `fs_sampler_array_dyn` drawn: the
/// NAK corpus' GLSL samples `rectTex` as a `sampler2D` with `textureLod` (Vulkan has no
/// rectangle textures), so glslang's SPIR-V of it is valid. Both draws bind the same
/// (normalized-coordinate, repeating) sampler there: the comparison does not depend on it.
fn nak_cases(dir: &Path) -> Vec<PairCase> {
    use dmsh_testsupport::reference::dksh_render::tex;
    use dmsh_vk::TexFormat;
    let mut v = dksh_render::cases(dir);
    for c in &mut v {
        if c.name != "helper+fs_sampler_array_dyn" {
            continue;
        }
        c.unsupported = None;
        for k in 0..4 {
            let t = tex(&format!("layersTex{k}"), 32, TexFormat::Rgba8Unorm, 20 + k);
            c.fs.textures.push((4 + k, t));
        }
        let mut pal = tex("palette", 64, TexFormat::Rgba8Uint, 24);
        (pal.height, pal.buffer) = (1, true);
        pal.data.truncate(64 * 4);
        c.fs.textures.push((8, pal));
        let mut ramp = tex("ramp", 16, TexFormat::Rgba8Unorm, 25);
        (ramp.height, ramp.one_d, ramp.linear) = (1, true, true);
        ramp.data.truncate(16 * 4);
        c.fs.textures.push((9, ramp));
        c.fs.textures
            .push((10, tex("rectTex", 32, TexFormat::Rgba8Unorm, 26)));
    }
    v
}

/// The child's environment variable: `SM:CASE`.
const ENV: &str = "DMSH_NAK_CASE";

/// Runs one case (`sm`, case name) and returns its result line.
fn run_case(sm: &str, name: &str) -> String {
    let dir = glsl_dir();
    let Some(case) = nak_cases(&dir).into_iter().find(|c| c.name == name) else {
        return format!("error no case {name}");
    };
    let side = |s: &Side| match s {
        Side::Corpus(n) => {
            let src = dksh_render::corpus_glsl(&dir, n).unwrap_or_default();
            Some(translate(n, sm, &src))
        }
        Side::Helper(_) => None,
    };
    let (v, f) = (side(&case.vertex), side(&case.fragment));
    let r = match (v.transpose(), f.transpose()) {
        (Ok(v), Ok(f)) => check(&dir, &case, sm, v, f),
        (Err(e), _) | (_, Err(e)) => Err(format!("translation: {e}")),
    };
    let _ = std::fs::remove_dir_all(&dir);
    match r {
        Ok(r) => {
            let worst = r.targets.iter().map(|t| t.0).fold(1.0f64, f64::min);
            let maxd = r.targets.iter().map(|t| t.1).max().unwrap_or(0);
            let line = format!(
                "{:.4}% of pixels within 1/255 (max diff {maxd}), {} other mismatches",
                worst * 100.0,
                r.mismatches.len()
            );
            if r.ok(0.999) {
                println!("{line}");
                "pass".into()
            } else {
                format!("fail {line}")
            }
        }
        Err(e) => format!("error {e}"),
    }
}

/// Runs compute case `name` (`dksh::cases` over the NAK GLSL: the dksh corpus' inputs)
/// with glslang's SPIR-V and with our translation of NAK's binary bound as NVK binds it
/// (root table: `cs.group_count` at 0xc = the grid); returns the result line.
fn run_compute_case(sm: &str, name: &str) -> String {
    run_compute(sm, name, false)
}

/// [`run_compute_case`], or with `warp_emulated` the case translated with the
/// workgroup-memory warp emulation and compared with a CPU model of its GLSL with 32-lane
/// subgroups (only `cs_subgroup_ballot` has one) instead of glslang's run, which needs
/// 32-lane subgroups.
fn run_compute(sm: &str, name: &str, warp_emulated: bool) -> String {
    use dmsh_testsupport::reference::dksh;
    let dir = glsl_dir();
    let case = dksh::cases(&dir).into_iter().find(|c| c.name == name);
    let r = (|| -> Result<String, String> {
        let case = case.ok_or(format!("no case {name}"))?;
        if let Some(u) = case.unsupported {
            return Ok(format!("skip {u}"));
        }
        let e = |e: dmsh_vk::Error| e.to_string();
        let dev = dmsh_vk::device::shared().map_err(e)?;
        if case.warp_ops && !dev.info().can_run_warp32() && !warp_emulated {
            return Ok("skip depends on 32-lane subgroups".into());
        }
        let full = format!("{name}.comp");
        let warp = if warp_emulated {
            dmsh_spv::WarpMode::Workgroup
        } else {
            dmsh_spv::WarpMode::Subgroup
        };
        let ours = translate_compute_with(&full, sm, &meta(&full, sm)?, warp)?;
        if warp_emulated && (ours.reflection.warp_ops || !ours.reflection.warp_emulated) {
            return Err("the reflection does not say the warp operations were emulated".into());
        }
        let (rs, rr) = dksh::reference(&case).map_err(e)?;
        let want = if warp_emulated {
            let Some((_, input)) = case.ssbos.iter().find(|s| s.0 == 0) else {
                return Err("no input buffer".into());
            };
            let values: Vec<u32> = input
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            dksh::Results {
                ssbos: vec![(1, dksh::subgroup_ballot_model(&values))],
                images: Vec::new(),
            }
        } else {
            dksh::run(&case, rs.clone(), rr.clone()).map_err(e)?
        };
        let mut job = dksh::job(&case, rs, rr).map_err(e)?;
        let mut root = vec![0u8; 0x800];
        for (k, g) in case.grid.iter().enumerate() {
            root[0xc + 4 * k..0x10 + 4 * k].copy_from_slice(&g.to_le_bytes());
        }
        let inputs = Inputs {
            ubos: &case.ubos,
            ssbos: &case.ssbos,
            textures: &case.textures,
            images: &case.images,
            at: Placed {
                ssbo: 0,
                ubo: case.ssbos.len(),
                tex: 0,
                img: case.textures.len(),
            },
        };
        let mem = Memory {
            buffers: &mut job.buffers,
            pointers: &mut job.pointers,
        };
        let m = meta(&full, sm)?;
        job.binds = nvk_memory(mem, &inputs, root, &m, &ours.reflection, name)?;
        (job.spirv, job.reflection) = (ours.spirv, ours.reflection);
        let out = dmsh_vk::compute::run_compute(&job).map_err(e)?;
        let got = dksh::Results {
            ssbos: case
                .ssbos
                .iter()
                .zip(out.buffers)
                .map(|((n, _), b)| (*n, b))
                .collect(),
            images: case
                .images
                .iter()
                .zip(out.images.into_iter().skip(case.textures.len()))
                .map(|((n, _), b)| (*n, b))
                .collect(),
        };
        Ok(dmsh_testsupport::child::verdict(&dksh::compare(
            &case, &want, &got,
        )))
    })();
    let _ = std::fs::remove_dir_all(&dir);
    r.unwrap_or_else(|e| format!("error {e}"))
}

/// sm53 compute cases that do not match glslang's run yet, with the cause.
const KNOWN_EXEC_SM53: &[(&str, &str)] = &[];

/// Runs every compute case of the dksh corpus' inputs for `sm` in child processes; returns
/// the unexpected failures.
fn exec_all(sm: &str, known: &[(&str, &str)]) -> Vec<String> {
    use dmsh_testsupport::reference::dksh;
    let dir = glsl_dir();
    // `soft/sm53`: the same cases with soft f64.
    let names: Vec<String> = dksh::cases(&dir)
        .iter()
        .map(|c| format!("{sm}:comp:{}", c.name))
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    let runs = dmsh_testsupport::child::run_children("nak_render_one", ENV, &names);
    println!(
        "{}/{} {sm} NAK compute cases match glslang's run ({} skipped)",
        runs.pass,
        names.len(),
        runs.skip
    );
    let mut unexpected = Vec::new();
    for (name, line) in &runs.bad {
        let case = name.rsplit(':').next().unwrap_or(name);
        match known.iter().find(|k| k.0 == case) {
            Some(k) => println!("known {case}: {}", k.1),
            None => {
                println!("UNEXPECTED {case}: {line}");
                unexpected.push(case.to_string());
            }
        }
    }
    for (case, _) in known {
        if !runs
            .bad
            .iter()
            .any(|b| b.0.rsplit(':').next() == Some(*case))
        {
            println!("STALE {case}: listed as known but matches now");
            unexpected.push(format!("{case} (stale)"));
        }
    }
    unexpected
}

/// sm86 compute cases that do not match glslang's run yet, with the cause.
const KNOWN_EXEC_SM86: &[(&str, &str)] = &[];

#[test]
fn nak_sm86_compute_matches_glslang() {
    if dmsh_testsupport::reference::glsl::vulkan_device().is_none() {
        return;
    }
    let unexpected = exec_all("sm86", KNOWN_EXEC_SM86);
    assert!(unexpected.is_empty(), "unexpected failures: {unexpected:?}");
}

#[test]
fn nak_sm53_compute_matches_glslang() {
    if dmsh_testsupport::reference::glsl::vulkan_device().is_none() {
        return;
    }
    let unexpected = exec_all("sm53", KNOWN_EXEC_SM53);
    assert!(unexpected.is_empty(), "unexpected failures: {unexpected:?}");
}

/// NAK's warp-dependent compute case (`cs_subgroup_ballot`, sm53 and sm86: skipped by
/// [`exec_all`] where subgroups are not 32 lanes wide) through the workgroup-memory warp
/// emulation, against a CPU model of its GLSL with 32-lane subgroups; counted apart.
#[test]
fn nak_warp_emulated_compute() {
    if dmsh_testsupport::reference::glsl::vulkan_device().is_none() {
        return;
    }
    let names: Vec<String> = ["sm53", "sm86"]
        .iter()
        .map(|sm| format!("{sm}:warp:cs_subgroup_ballot"))
        .collect();
    let runs = dmsh_testsupport::child::run_children("nak_render_one", ENV, &names);
    println!(
        "NAK warp-emulated compute vs CPU model: {} pass, {} skipped, {} fail of {}",
        runs.pass,
        runs.skip,
        runs.bad.len(),
        names.len()
    );
    dmsh_testsupport::child::assert_only_known(&runs.bad, &[]);
}

/// The child process of [`render_all`]: the case `DMSH_NAK_CASE` names.
#[test]
#[ignore]
fn nak_render_one() {
    dmsh_testsupport::child::run_named(ENV, |arg| {
        let arg = match arg.strip_prefix("soft/") {
            Some(a) => {
                SOFT_F64.store(true, Ordering::Relaxed);
                a
            }
            None => arg,
        };
        let (sm, name) = arg.split_once(':').unwrap_or(("sm53", arg));
        if let Some(n) = name.strip_prefix("comp:") {
            run_compute_case(sm, n)
        } else if let Some(n) = name.strip_prefix("warp:") {
            run_compute(sm, n, true)
        } else {
            run_case(sm, name)
        }
    });
}

/// Renders every case for `sm`, each in a child process (lavapipe has no fault isolation);
/// returns the unexpected failures.
fn render_all(sm: &str, known: &[(&str, &str)]) -> Vec<String> {
    let dir = glsl_dir();
    let mut names = Vec::new();
    for case in nak_cases(&dir) {
        match case.unsupported {
            Some(why) => println!("skip {sm} {}: {why}", case.name),
            None => names.push(format!("{sm}:{}", case.name)),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let runs = dmsh_testsupport::child::run_children("nak_render_one", ENV, &names);
    println!(
        "{}/{} {sm} NAK render cases match glslang's rendering",
        runs.pass,
        names.len()
    );
    let mut unexpected = Vec::new();
    for (name, line) in &runs.bad {
        let case = name.split_once(':').map_or(name.as_str(), |x| x.1);
        match known.iter().find(|k| k.0 == case) {
            Some(k) => println!("known {case}: {}", k.1),
            None => {
                println!("UNEXPECTED {case}: {line}");
                unexpected.push(case.to_string());
            }
        }
    }
    for k in known {
        if !runs.bad.iter().any(|b| b.0.ends_with(&format!(":{}", k.0))) {
            println!("{}: listed as known but passes or is gone: remove it", k.0);
            unexpected.push(k.0.to_string());
        }
    }
    unexpected
}

#[test]
fn nak_sm53_pairs_render_like_glslang() {
    if dmsh_testsupport::reference::glsl::vulkan_device().is_none() {
        return;
    }
    let unexpected = render_all("sm53", KNOWN_SM53);
    assert!(unexpected.is_empty(), "unexpected failures: {unexpected:?}");
}

#[test]
fn nak_sm86_pairs_render_like_glslang() {
    if dmsh_testsupport::reference::glsl::vulkan_device().is_none() {
        return;
    }
    let unexpected = render_all("sm86", KNOWN_SM86);
    assert!(unexpected.is_empty(), "unexpected failures: {unexpected:?}");
}

/// Every compute and render case of both architectures with soft f64 (the Metal build's
/// f64: integer routines, no 64-bit float type; `cs_fp64_int64` and `vs_image_fp64` compute
/// in f64, most others round through f64 in the exact FMA): each matches glslang's run.
#[test]
fn nak_soft_f64_matches_glslang() {
    if dmsh_testsupport::reference::glsl::vulkan_device().is_none() {
        return;
    }
    let mut unexpected = Vec::new();
    for sm in ["soft/sm53", "soft/sm86"] {
        let known_exec = if sm.ends_with("sm53") {
            KNOWN_EXEC_SM53
        } else {
            KNOWN_EXEC_SM86
        };
        let known = if sm.ends_with("sm53") {
            KNOWN_SM53
        } else {
            KNOWN_SM86
        };
        unexpected.extend(exec_all(sm, known_exec));
        unexpected.extend(render_all(sm, known));
    }
    assert!(unexpected.is_empty(), "unexpected failures: {unexpected:?}");
}

#[test]
fn set_qualifiers_are_removed() {
    assert_eq!(
        strip_sets("layout(set = 3, std430, binding = 3) buffer Atom {"),
        "layout(std430, binding = 3) buffer Atom {\n"
    );
    assert_eq!(
        strip_sets("layout(std140, set = 0, binding = 1) uniform U"),
        "layout(std140, binding = 1) uniform U\n"
    );
    assert_eq!(
        strip_sets("layout(binding = 2, set = 1) uniform sampler2D s;"),
        "layout(binding = 2) uniform sampler2D s;\n"
    );
    assert_eq!(
        strip_sets("layout(offset = 16) uniform"),
        "layout(offset = 16) uniform\n"
    );
}
