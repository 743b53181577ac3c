//! What the runtime's integration tests share: the demo title split and built by the `dmsh`
//! binary (`cargo build --release -p dmsh-cli`), and small hand-made titles.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The demo title, split and built: `split/` holds shader_map.tsv, pkg/ and `b-<V>/`.
pub struct Demo {
    /// The split folder (also the library folder: `dmsh demo` builds into it).
    pub split: PathBuf,
    /// The chain version of its `b-<V>/`.
    pub chain: String,
}

impl Demo {
    /// Column `col` of the shader map by key (its first column), the header skipped.
    pub fn map_column(&self, col: usize) -> std::collections::BTreeMap<String, String> {
        let map = std::fs::read_to_string(self.map()).unwrap();
        map.lines()
            .skip(1)
            .map(|l| {
                let c: Vec<&str> = l.split('\t').collect();
                (c[0].to_string(), c[col].to_string())
            })
            .collect()
    }

    /// `split/shader_map.tsv`.
    pub fn map(&self) -> PathBuf {
        self.split.join("shader_map.tsv")
    }

    /// `split/b-<V>`.
    pub fn b_dir(&self) -> PathBuf {
        self.split.join(format!("b-{}", self.chain))
    }

    /// The map's keys, as split wrote them.
    pub fn keys(&self) -> Vec<String> {
        let map = std::fs::read_to_string(self.map()).unwrap();
        let mut k: Vec<String> = map
            .lines()
            .skip(1)
            .map(|l| l.split('\t').next().unwrap().to_string())
            .collect();
        k.sort();
        k.dedup();
        k
    }
}

/// The `dmsh` binary: `$DMSH_BIN`, else `dmsh` in this test's target folder.
pub fn dmsh_bin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("DMSH_BIN") {
        return Some(p.into());
    }
    let exe = std::env::current_exe().ok()?;
    let p = exe.parent()?.parent()?.join("dmsh");
    p.is_file().then_some(p)
}

/// The demo title, split and built once per test binary; `None` (with a message) when the
/// `dmsh` binary is not built.
pub fn demo() -> Option<&'static Demo> {
    static D: OnceLock<Option<Demo>> = OnceLock::new();
    D.get_or_init(|| {
        let Some(bin) = dmsh_bin() else {
            println!(
                "SKIP: no dmsh binary next to this test (build it: cargo build --release -p \
                 dmsh-cli, or set DMSH_BIN)"
            );
            return None;
        };
        let exe = std::env::current_exe().unwrap();
        let name = exe.file_name().unwrap().to_string_lossy().into_owned();
        let split =
            std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("dmsh-rt-{name}"));
        let _ = std::fs::remove_dir_all(&split);
        let o = Command::new(&bin)
            .args(["demo", "--out"])
            .arg(&split)
            .arg("--title")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../games/demo"))
            .output()
            .expect("dmsh runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let chain = std::fs::read_dir(&split)
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .find_map(|n| n.strip_prefix("b-").map(str::to_string))
            .expect("dmsh demo writes a b-<V> folder");
        Some(Demo { split, chain })
    })
    .as_ref()
}

/// The chain version of the hand-made titles.
pub const V: &str = "0123456789ab";

/// A hand-made title in a fresh folder: `shader_map.tsv` with `rows` (key, stage),
/// `b-<V>/` with `_b_build.json` and `<key>_b.json` for each of `jsons`.
pub fn hand_title(name: &str, rows: &[(&str, &str)], jsons: &[(&str, String)]) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("dmsh-rt-hand-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    let b = d.join(format!("b-{V}"));
    std::fs::create_dir_all(&b).unwrap();
    let mut map = String::from("key\tstage\tgen\n");
    for (k, s) in rows {
        map.push_str(&format!("{k}\t{s}\tnvn1\n"));
    }
    std::fs::write(d.join("shader_map.tsv"), map).unwrap();
    std::fs::write(b.join("_b_build.json"), format!("{{\"chain\": \"{V}\"}}")).unwrap();
    for (k, j) in jsons {
        std::fs::write(b.join(format!("{k}_b.json")), j).unwrap();
    }
    d
}

/// A small vertex shader's build record for chain `chain` and schema `version`.
pub fn vertex_json(chain: &str, version: u32) -> String {
    format!(
        r#"{{"version": {version}, "stage": "vertex", "chain": "{chain}",
  "metal_entry_points": ["main0", "main0_z"], "metal_entry_z": "main0_z",
  "metal": {{"buffers": 2, "textures": 1, "samplers": 1, "fits": true}}, "metal_direct": true,
  "resources": [
    {{"kind": "cbuf", "bank": 0, "guest_offset": 0, "size": 512, "binding": 0, "metal_index": 0,
      "reads": [[0, 64], [256, 272]], "reads_dynamic": true}},
    {{"kind": "sbuf_ubo", "bank": 1, "guest_offset": 56, "ubo": 1, "offset": 56,
      "binding": 17486, "metal_index": 1}},
    {{"kind": "texture", "bank": 2, "binding": 66, "metal_index": 0, "metal_sampler": 0}}
  ],
  "inputs": [{{"location": 0, "component_type": "float"}}, {{"location": 3, "component_type": "uint"}}],
  "outputs": [{{"location": 0, "component_type": "float"}}]}}"#
    )
}

/// Opens `dir` (map, `b-<V>` beneath it) with chain `V`.
pub fn open(dir: &Path) -> Result<dmsh_runtime::Title, dmsh_runtime::Error> {
    dmsh_runtime::Title::open(&dmsh_runtime::OpenOptions {
        shader_map: Some(dir.join("shader_map.tsv")),
        library_dir: dir.to_path_buf(),
        chain: Some(V.into()),
        ..Default::default()
    })
}

/// The reflection `kind` numbers, written out again (independently of `abi::BINDING_KINDS`).
fn kind_number(k: &str) -> u64 {
    match k {
        "cbuf" => 1,
        "sbuf" => 2,
        "sbuf_ubo" => 3,
        "texture" => 4,
        "sampler" => 5,
        "image" => 6,
        "tex_ubo" => 7,
        "samp_ubo" => 8,
        "samp_id" => 9,
        "tex_dyn" => 10,
        "samp_dyn" => 11,
        "lowered" => 12,
        "push" => 13,
        _ => panic!("kind {k}"),
    }
}

fn type_number(t: &str) -> u64 {
    ["float", "sint", "uint"]
        .iter()
        .position(|x| *x == t)
        .unwrap_or_else(|| panic!("type {t}")) as u64
}

/// `DMSH_PASS_*` by the reflection's `lowering.pass` (written out again).
fn pass_number(p: &str) -> u64 {
    match p {
        "vertex_capture" => 1,
        "geometry_kernel" => 2,
        "geometry_draw" => 3,
        "tess_control_kernel" => 4,
        "tess_eval_post" => 5,
        "tess_eval_draw" => 6,
        _ => panic!("pass {p}"),
    }
}

/// `VkPrimitiveTopology` numbers of the reflection's topology names (written out again).
pub fn topology_number(t: &str) -> u32 {
    match t {
        "point_list" => 0,
        "line_list" => 1,
        "line_strip" => 2,
        "triangle_list" => 3,
        "triangle_strip" => 4,
        "triangle_fan" => 5,
        "line_list_adjacency" => 6,
        "line_strip_adjacency" => 7,
        "triangle_list_adjacency" => 8,
        "triangle_strip_adjacency" => 9,
        _ => panic!("topology {t}"),
    }
}

/// The `lower …` line of a reflection's `lowering` record (empty without one).
fn lowering_from_json(j: &serde_json::Value) -> String {
    let Some(l) = j.get("lowering") else {
        return String::new();
    };
    let u = |f: &str| l.get(f).and_then(|x| x.as_u64()).unwrap_or(0);
    let output = match l.get("output").and_then(|o| o.as_str()).unwrap_or("") {
        "" => 0,
        "points" => 1,
        "lines" => 2,
        "triangles" => 3,
        o => panic!("output {o}"),
    };
    let topologies: u32 = (l.get("topologies").and_then(|t| t.as_array()).into_iter())
        .flatten()
        .map(|t| 1 << topology_number(t.as_str().unwrap()))
        .sum();
    // The evaluation shader's tessellation state (numbers as DMSH_TESS_*).
    let tess = |f: &str, names: &[&str]| -> usize {
        (j.get("tessellation")
            .and_then(|t| t.get(f))
            .and_then(|v| v.as_str()))
        .map_or(0, |v| {
            names.iter().position(|n| *n == v).expect("known name")
        })
    };
    let (td, ts, to) = (
        tess("domain", &["", "triangles", "quads", "isolines"]),
        tess(
            "spacing",
            &["", "equal", "fractional_odd", "fractional_even"],
        ),
        tess(
            "output",
            &["", "triangles_ccw", "triangles_cw", "points", "lines"],
        ),
    );
    format!(
        "lower {} {} {} {} {} {output} {} {topologies} {} {} {} {} {} {td} {ts} {to}\n",
        pass_number(l["pass"].as_str().unwrap()),
        u("record_bytes"),
        u("input_vertices"),
        u("invocations"),
        u("max_vertices"),
        u("indices_per_invocation"),
        u("local_size"),
        l.get("primitive_id_location")
            .and_then(|x| x.as_u64())
            .unwrap_or(0xffff_ffff),
        u("control_points"),
        u("factor_bytes"),
        u("patch_bytes"),
    )
}

/// The dump of one shader (the lines the C example prints), made from its reflection JSON
/// read as plain JSON values: what the runtime's records must say.
pub fn dump_from_json(
    j: &serde_json::Value,
    key: &str,
    stage: u64,
    c1_full: bool,
    dir: &Path,
) -> String {
    dump_variant_from_json(j, key, "_b", stage, c1_full, dir)
}

/// [`dump_from_json`] of variant `suffix` (`_b`, `_p`, `_g`, `_q`) of a key.
pub fn dump_variant_from_json(
    j: &serde_json::Value,
    key: &str,
    suffix: &str,
    stage: u64,
    c1_full: bool,
    dir: &Path,
) -> String {
    let u = |v: &serde_json::Value, f: &str| v.get(f).and_then(|x| x.as_u64());
    let b = |v: &serde_json::Value, f: &str| v.get(f).and_then(|x| x.as_bool()).unwrap_or(false);
    let z = j["metal_entry_z"].as_str();
    let gl = j["metal_entry_points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .find(|e| Some(*e) != z)
        .unwrap();
    let mut flags = 0;
    for (on, f) in [
        (c1_full, 1),
        (b(&j["metal"], "fits"), 2),
        (b(j, "metal_direct"), 4),
        (b(j, "warp_ops"), 8),
        (b(j, "local_size_spec"), 16),
        (b(j, "uses_global_addresses"), 32),
        (b(j, "int64_atomics"), 64),
    ] {
        if on {
            flags |= f;
        }
    }
    let ls: Vec<String> = j["local_size"]
        .as_array()
        .map(|a| a.iter().map(|x| x.to_string()).collect())
        .unwrap_or_else(|| vec!["0".into(); 3]);
    let mut s = format!(
        "shader {key} stage={stage} flags={flags} gl={gl} z={} lib={}/{key}{suffix}.metallib src={}/{key}{suffix}.metal tables={},{},{} local={} shared={} lbytes={}\n",
        z.unwrap_or(gl),
        dir.display(),
        dir.display(),
        u(&j["metal"], "buffers").unwrap_or(0),
        u(&j["metal"], "textures").unwrap_or(0),
        u(&j["metal"], "samplers").unwrap_or(0),
        ls.join(","),
        u(j, "shared_bytes").unwrap_or(0),
        u(j, "local_bytes").unwrap_or(0),
    );
    s += &lowering_from_json(j);
    let mut reads = Vec::new();
    for r in j["resources"].as_array().into_iter().flatten() {
        let kind = r["kind"].as_str().unwrap();
        let (slot, off) = if kind == "sbuf_ubo" {
            (
                u(r, "ubo").or(u(r, "bank")).unwrap_or(0),
                u(r, "offset").or(u(r, "guest_offset")).unwrap_or(0),
            )
        } else {
            (u(r, "bank").unwrap_or(0), u(r, "guest_offset").unwrap_or(0))
        };
        let rr: Vec<(u64, u64)> = r["reads"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| (p[0].as_u64().unwrap(), p[1].as_u64().unwrap()))
            .collect();
        let mut fl = 0;
        if b(r, "separate") {
            fl |= 1;
        }
        if b(r, "reads_dynamic") {
            fl |= 2;
        }
        if r.get("size").is_some() {
            fl |= 4;
        }
        s += &format!(
            "bind {} {slot} {off} {} {} {} {} {fl} {} {} {}\n",
            kind_number(kind),
            u(r, "binding").expect("build records give bindings"),
            u(r, "metal_index").unwrap_or(0),
            u(r, "metal_sampler").unwrap_or(0xffff_ffff),
            u(r, "count").unwrap_or(0).max(1),
            reads.len(),
            rr.len(),
            u(r, "size").unwrap_or(0),
        );
        reads.extend(rr);
    }
    for (a, e) in reads {
        s += &format!("read {a} {e}\n");
    }
    for (what, f) in [("in", "inputs"), ("out", "outputs")] {
        for io in j[f].as_array().into_iter().flatten() {
            s += &format!(
                "{what} {} {} {}\n",
                u(io, "location").unwrap(),
                type_number(io["component_type"].as_str().unwrap()),
                u(io, "index").unwrap_or(0)
            );
        }
    }
    s
}

/// `n` records at `p` (none when `n` is 0).
///
/// # Safety
/// `p` points to `n` records that outlive the slice.
unsafe fn sl<'a, T>(p: *const T, n: u32) -> &'a [T] {
    if n == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(p, n as usize)
    }
}

/// The same dump made from the runtime's C records (through their pointers, as C reads them).
pub fn dump_from_record(s: &dmsh_runtime::abi::Shader, z_entry: &std::ffi::CStr) -> String {
    use std::ffi::CStr;
    // SAFETY: the record's pointers and counts come from a title that is open.
    unsafe {
        let st = |p| CStr::from_ptr(p).to_str().unwrap().to_string();
        let mut out = format!(
            "shader {} stage={} flags={} gl={} z={} lib={} src={} tables={},{},{} local={},{},{} shared={} lbytes={}\n",
            dmsh_runtime::key::to_string(s.key),
            s.stage,
            s.flags,
            st(s.entry_gl),
            z_entry.to_str().unwrap(),
            st(s.library_path),
            st(s.source_path),
            s.metal_buffers,
            s.metal_textures,
            s.metal_samplers,
            s.local_size[0],
            s.local_size[1],
            s.local_size[2],
            s.shared_bytes,
            s.local_bytes
        );
        assert_eq!(st(s.entry_zero_one), z_entry.to_str().unwrap());
        if let Some(l) = s.lowering.as_ref() {
            out += &format!(
                "lower {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}\n",
                l.pass,
                l.record_bytes,
                l.input_vertices,
                l.invocations,
                l.max_vertices,
                l.output,
                l.indices_per_invocation,
                l.topologies,
                l.local_size,
                l.primitive_id_location,
                l.control_points,
                l.factor_bytes,
                l.patch_bytes,
                l.tess_domain,
                l.tess_spacing,
                l.tess_output
            );
        }
        for b in sl(s.bindings, s.binding_count) {
            out += &format!(
                "bind {} {} {} {} {} {} {} {} {} {} {}\n",
                b.kind,
                b.slot,
                b.guest_offset,
                b.vk_binding,
                b.metal_index,
                b.metal_sampler,
                b.count,
                b.flags,
                b.read_first,
                b.read_count,
                b.size
            );
        }
        for r in sl(s.reads, s.read_count) {
            out += &format!("read {} {}\n", r.start, r.end);
        }
        for i in sl(s.inputs, s.input_count) {
            out += &format!("in {} {} {}\n", i.location, i.component_type, i.index);
        }
        for o in sl(s.outputs, s.output_count) {
            out += &format!("out {} {} {}\n", o.location, o.component_type, o.index);
        }
        out
    }
}

/// The whole expected dump of the demo title, one block per key in key order; keys without a
/// reflection are `fail KEY 7`. A shader is c1-full unless its reflection's `c1.dynamic`
/// is `none` or `proven` (what `dmsh c1-guard`, run by `dmsh demo`, lists).
pub fn expected_demo_dump(d: &Demo) -> String {
    let stage_of = d.map_column(1);
    let dir = d.b_dir();
    let mut out = String::new();
    for k in d.keys() {
        let p = dir.join(format!("{k}_b.json"));
        match std::fs::read_to_string(&p) {
            Ok(t) => {
                let j: serde_json::Value = serde_json::from_str(&t).unwrap();
                // `DMSH_STAGE_*` is the order of `Stage::ALL`.
                let st = dmsh_formats::Stage::ALL
                    .iter()
                    .position(|s| s.as_str() == stage_of[k.as_str()])
                    .unwrap() as u64;
                let full = !matches!(j["c1"]["dynamic"].as_str(), Some("none" | "proven"));
                out += &dump_from_json(&j, &k, st, full, &dir);
            }
            Err(_) => out += &format!("fail {k} 7\n"),
        }
    }
    out
}

/// The variant files of the demo build (`<key>_p`, `_g`, `_q`, `_d`, in key order, then that
/// order) and, for each geometry kernel, the topologies it serves: the lines the C example
/// prints after the main records (`variant KEY SUFFIX` then the dump;
/// `topology KEY MASK`), made from the JSON.
pub fn expected_demo_variants(d: &Demo) -> String {
    let stage_of = d.map_column(1);
    let dir = d.b_dir();
    let mut out = String::new();
    for k in d.keys() {
        let st = dmsh_formats::Stage::ALL
            .iter()
            .position(|s| s.as_str() == stage_of[k.as_str()])
            .unwrap() as u64;
        let Ok(main) = std::fs::read_to_string(dir.join(format!("{k}_b.json"))) else {
            continue;
        };
        let main: serde_json::Value = serde_json::from_str(&main).unwrap();
        let full = !matches!(main["c1"]["dynamic"].as_str(), Some("none" | "proven"));
        for suffix in ["_p", "_g", "_q", "_d"] {
            if let Ok(t) = std::fs::read_to_string(dir.join(format!("{k}{suffix}.json"))) {
                let j: serde_json::Value = serde_json::from_str(&t).unwrap();
                out += &format!("variant {k} {suffix}\n");
                out += &dump_variant_from_json(&j, &k, suffix, st, full, &dir);
            }
        }
        if main["lowering"]["pass"].as_str() == Some("geometry_kernel") {
            let mask: u32 = (main["lowering"]["topologies"].as_array().into_iter())
                .flatten()
                .map(|t| 1 << topology_number(t.as_str().unwrap()))
                .sum();
            out += &format!("topology {k} {mask}\n");
        }
    }
    out
}

/// A build record of pass `pass` (`lowering`) with reflection stage `stage`: `lowering` is
/// the record's JSON body (without braces), `resources` the resources' JSON array body.
pub fn lowered_json(chain: &str, stage: &str, lowering: &str, resources: &str) -> String {
    format!(
        r#"{{"version": 1, "stage": "{stage}", "chain": "{chain}", "metal_entry_points": ["main0"],
  "resources": [{resources}], "lowering": {{{lowering}}}}}"#
    )
}

/// The smallest build record of a `stage` shader (one entry point, `main0`).
pub fn plain_json(chain: &str, stage: &str) -> String {
    format!(
        r#"{{"version": 1, "stage": "{stage}", "chain": "{chain}", "metal_entry_points": ["main0"]}}"#
    )
}

/// Opens `dir` (map, `b-<V>` beneath it) with chain `V` and the warm-up lists `seed` (`None`:
/// next to the map) and `device`.
pub fn open_warm(
    dir: &Path,
    seed: Option<&Path>,
    device: Option<&Path>,
) -> Result<dmsh_runtime::Title, dmsh_runtime::Error> {
    dmsh_runtime::Title::open(&dmsh_runtime::OpenOptions {
        shader_map: Some(dir.join("shader_map.tsv")),
        library_dir: dir.to_path_buf(),
        chain: Some(V.into()),
        warm_seed: seed.map(Path::to_path_buf),
        warm_device: device.map(Path::to_path_buf),
        ..Default::default()
    })
}

/// One warm-up row as the C example prints it:
/// `warm LIST LINE KIND KEY FRAGMENT|- DEPTH ENTRY FRAGMENT_ENTRY|- STATE_HEX`.
pub fn warm_line(r: &dmsh_runtime::WarmRow) -> String {
    let state: String = r.state.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "warm {} {} {} {} {} {} {} {} {state}\n",
        r.list as u32,
        r.line,
        r.kind.letter(),
        dmsh_runtime::key::to_string(r.shader.shader().key),
        r.fragment
            .map_or("-".into(), |f| dmsh_runtime::key::to_string(f.shader().key)),
        r.depth,
        r.entry.to_str().unwrap(),
        r.fragment.map_or("-", |f| f.entry(0).to_str().unwrap()),
    )
}

/// Warm-up lists written for the demo title, and what walking them must give.
pub struct DemoWarm {
    /// The seed list.
    pub seed: PathBuf,
    /// The device list.
    pub device: PathBuf,
    /// The device list's text as written.
    pub device_text: String,
    /// The warm lines (`warm_line`) and the two `warmlist LIST STATUS ROWS SKIPPED` lines,
    /// made from the lists and the build's JSON (read as plain JSON), not through the runtime.
    pub expected: String,
}

/// A row as walked: kind, key, fragment key, depth, entry, fragment entry, state hex.
type Want = (char, String, String, u32, String, String, String);

/// Writes a seed list and a device list for the demo title into `d.split/name/`: every built
/// shader (S), every built compute shader (C), render pipelines of built vertex and fragment
/// shaders in both depth modes with host state bytes, one without a fragment shader, and
/// lines a build cannot use (an unknown key, a compute row naming a vertex shader, a shader
/// that was not built, an unknown kind), which must be skipped.
pub fn demo_warm(d: &Demo, name: &str) -> DemoWarm {
    let dir = d.split.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let map = std::fs::read_to_string(d.map()).unwrap();
    let mut shaders: Vec<(String, String)> = Vec::new();
    for l in map.lines().skip(1) {
        let c: Vec<&str> = l.split('\t').collect();
        if !shaders.iter().any(|(k, _)| k == c[0]) {
            shaders.push((c[0].to_string(), c[1].to_string()));
        }
    }
    let json = |k: &str| -> Option<serde_json::Value> {
        let t = std::fs::read_to_string(d.b_dir().join(format!("{k}_b.json"))).ok()?;
        Some(serde_json::from_str(&t).unwrap())
    };
    // (gl entry, z entry) from the JSON.
    let entries = |k: &str| {
        let j = json(k).unwrap();
        let z = j["metal_entry_z"].as_str().map(str::to_string);
        let gl = j["metal_entry_points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e.as_str().unwrap().to_string())
            .find(|e| Some(e) != z.as_ref())
            .unwrap();
        (gl.clone(), z.unwrap_or(gl))
    };
    let built: Vec<&(String, String)> = shaders.iter().filter(|(k, _)| json(k).is_some()).collect();
    let of = |st: &str| -> Vec<&str> {
        built
            .iter()
            .filter(|(_, s)| s == st)
            .map(|(k, _)| k.as_str())
            .collect()
    };
    let (vs, fs, cs) = (of("vertex"), of("fragment"), of("compute"));
    assert!(
        !vs.is_empty() && !fs.is_empty(),
        "the demo builds graphics pairs"
    );
    let not_built = shaders.iter().find(|(k, _)| json(k).is_none());
    const H: &str = "kind\tkey\tfragment\tdepth\tstate";
    let warm = |kind: char, k: &str, f: Option<&str>, z: bool, state: &str| {
        let (gl, ze) = entries(k);
        let e = if z { ze } else { gl };
        let fe = f.map_or("-".to_string(), |f| entries(f).0);
        (
            kind,
            k.to_string(),
            f.unwrap_or("-").to_string(),
            u32::from(z),
            e,
            fe,
            state.to_string(),
        )
    };
    let line = |w: &Want, list: u32, n: usize| {
        format!(
            "warm {list} {n} {} {} {} {} {} {} {}\n",
            w.0, w.1, w.2, w.3, w.4, w.5, w.6
        )
    };
    // (row text, what walking it gives; None: skipped, or a blank line)
    let mut rows: Vec<(String, Option<Want>)> = Vec::new();
    for (k, _) in &built {
        rows.push((format!("S\t{k}"), Some(warm('S', k, None, false, ""))));
    }
    for k in &cs {
        rows.push((format!("C\t{k}"), Some(warm('C', k, None, false, ""))));
    }
    rows.push(("S\t0000000000000001".into(), None));
    rows.push((format!("C\t{}", vs[0]), None));
    rows.push((format!("Q\t{}", vs[0]), None));
    rows.push(("".into(), None)); // a blank line: neither a row nor skipped
    if let Some((k, _)) = not_built {
        rows.push((format!("S\t{k}"), None));
    }
    for (i, v) in vs.iter().take(3).enumerate() {
        for f in fs.iter().take(2) {
            for z in [false, true] {
                let state = format!("{:02x}{:02x}ab", i, u8::from(z));
                rows.push((
                    format!("R\t{v}\t{f}\t{}\t{state}", if z { "z" } else { "gl" }),
                    Some(warm('R', v, Some(f), z, &state)),
                ));
            }
        }
    }
    rows.push((
        format!("R\t{}\t-\tz\t", vs[0]),
        Some(warm('R', vs[0], None, true, "")),
    ));
    rows.push((format!("R\t{}\t{}\tgl\t00", fs[0], fs[0]), None));
    let mut text = format!("{H}\n");
    let mut expected = String::new();
    let (mut used, mut skipped) = (0, 0);
    for (n, (r, w)) in rows.iter().enumerate() {
        text += &format!("{r}\n");
        match w {
            Some(w) => {
                expected += &line(w, 0, n + 2);
                used += 1;
            }
            None if r.is_empty() => {}
            None => skipped += 1,
        }
    }
    let seed_path = dir.join("pso_manifest.tsv");
    std::fs::write(&seed_path, text).unwrap();
    let dev_rows = [
        (
            format!("R\t{}\t{}\tz\tdeadbeef", vs[0], fs[0]),
            warm('R', vs[0], Some(fs[0]), true, "deadbeef"),
        ),
        (
            format!("S\t{}", built[0].0),
            warm('S', &built[0].0, None, false, ""),
        ),
    ];
    let mut device_text = format!("{H}\n");
    for (n, (r, w)) in dev_rows.iter().enumerate() {
        device_text += &format!("{r}\n");
        expected += &line(w, 1, n + 2);
    }
    let device = dir.join("pso_user.tsv");
    std::fs::write(&device, &device_text).unwrap();
    expected += &format!(
        "warmlist 0 0 {used} {skipped}\nwarmlist 1 0 {} 0\n",
        dev_rows.len()
    );
    DemoWarm {
        seed: seed_path,
        device,
        device_text,
        expected,
    }
}
