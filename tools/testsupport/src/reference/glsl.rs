//! GLSL → SPIR-V through `glslangValidator` (Debian glslang-tools).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use dmsh_vk::error::Error;

/// The glslang binary (`DMSH_GLSLANG` overrides).
fn tool() -> String {
    std::env::var("DMSH_GLSLANG").unwrap_or_else(|_| "glslangValidator".into())
}

/// Whether glslangValidator can be run.
pub fn available() -> bool {
    Command::new(tool())
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether glslangValidator and a Vulkan device are both there (what a reference test
/// needs); prints why the test is skipped when not.
pub fn ready_with_vulkan() -> bool {
    vulkan_device().is_some()
}

/// The shared Vulkan device ([`dmsh_vk::shared`]) when glslangValidator is there too, else
/// `None` after printing why the test is skipped.
pub fn vulkan_device() -> Option<&'static dmsh_vk::Device> {
    if !available() {
        println!("skipped: glslangValidator not installed");
        return None;
    }
    match dmsh_vk::shared() {
        Ok(dev) => Some(dev),
        Err(e) => {
            println!("skipped: no Vulkan device ({e})");
            None
        }
    }
}

fn scratch(ext: &str) -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("dmsh-vk-{}-{n}.{ext}", std::process::id()))
}

/// Compiles a GLSL file for Vulkan 1.2 (`-V --target-env vulkan1.2`), `stage` as glslang names
/// it (`comp`, `vert`, `frag`, …), with extra arguments (e.g. binding shifts). Returns words.
pub fn compile_file(path: &Path, stage: &str, extra: &[&str]) -> Result<Vec<u32>, Error> {
    let out = scratch("spv");
    let res = Command::new(tool())
        .args(["-V", "--target-env", "vulkan1.2", "-S", stage])
        .args(extra)
        .arg("-o")
        .arg(&out)
        .arg(path)
        .output()
        .map_err(|e| Error::Tool(format!("cannot run {}: {e}", tool())))?;
    let bytes = std::fs::read(&out);
    let _ = std::fs::remove_file(&out);
    if !res.status.success() {
        return Err(Error::Tool(format!(
            "glslangValidator failed on {}:\n{}{}",
            path.display(),
            String::from_utf8_lossy(&res.stdout),
            String::from_utf8_lossy(&res.stderr)
        )));
    }
    let bytes = bytes.map_err(|e| Error::Tool(format!("glslang output: {e}")))?;
    dmsh_vk::spirv_words(&bytes)
}

/// Compiles GLSL source text (written to a scratch file) like [`compile_file`].
pub fn compile_source(source: &str, stage: &str, extra: &[&str]) -> Result<Vec<u32>, Error> {
    let p = scratch(stage);
    std::fs::write(&p, source).map_err(|e| Error::Tool(format!("{}: {e}", p.display())))?;
    let r = compile_file(&p, stage, extra);
    let _ = std::fs::remove_file(&p);
    r
}

/// glslang arguments that shift GLSL bindings onto docs/reflection.md's table for the deko3d
/// ABI: uniform block n → cbuf bank 2+n (binding 2+n), buffer block n → sbuf slot n
/// (binding 32+n), sampler n → texture slot n (binding 64+n), image n → binding 128+n.
pub const DEKO3D_SHIFTS: &[&str] = &[
    "--shift-UBO-binding",
    "2",
    "--shift-ssbo-binding",
    "32",
    "--shift-texture-binding",
    "64",
    "--shift-sampler-binding",
    "96",
    "--shift-image-binding",
    "128",
];

/// The instructions of a SPIR-V module after its 5-word header, each with its operands (up to
/// the first malformed one).
fn instructions(words: &[u32]) -> impl Iterator<Item = &[u32]> {
    let mut rest = words.get(5..).unwrap_or_default();
    std::iter::from_fn(move || {
        let n = (*rest.first()? >> 16) as usize;
        if n == 0 || n > rest.len() {
            return None;
        }
        let (ins, tail) = rest.split_at(n);
        rest = tail;
        Some(ins)
    })
}

/// Per variable: whether its type is a separate image (`OpTypeImage` rather than a combined
/// image sampler; through one array level) and its array length (0: not an array).
fn var_shapes(words: &[u32]) -> std::collections::HashMap<u32, (bool, u32)> {
    use std::collections::{HashMap, HashSet};
    let (mut images, mut arrays, mut ptrs) = (HashSet::new(), HashMap::new(), HashMap::new());
    let mut consts = HashMap::new();
    let mut vars = HashMap::new();
    for ins in instructions(words) {
        let (n, op) = (ins.len(), ins[0] & 0xffff);
        match op {
            // OpTypeImage %id … with Sampled = 1 (sampled, not storage).
            25 if n >= 9 && ins[7] == 1 => {
                images.insert(ins[1]);
            }
            // OpConstant %type %id value
            43 if n >= 4 => {
                consts.insert(ins[2], ins[3]);
            }
            // OpTypeArray %id %elem %length
            28 if n >= 4 => {
                let len = consts.get(&ins[3]).copied().unwrap_or(0);
                arrays.insert(ins[1], (ins[2], len));
            }
            // OpTypePointer %id class %pointee
            32 if n >= 4 => {
                ptrs.insert(ins[1], ins[3]);
            }
            // OpVariable %type %id
            59 if n >= 4 => {
                let t = ptrs.get(&ins[1]).copied().unwrap_or(0);
                let (t, count) = arrays.get(&t).copied().unwrap_or((t, 0));
                vars.insert(ins[2], (images.contains(&t), count));
            }
            _ => {}
        }
    }
    vars
}

/// Reflection for a module compiled with [`DEKO3D_SHIFTS`]: every `Binding` decoration b
/// becomes a resource by range (2–31 cbuf bank b, 32–63 sbuf b−32, 64–95 texture b−64, 96–127
/// sampler b−96, 128– image b−128; a `texture2D`-style separate image is marked `separate`,
/// an array of textures or samplers gets its length as `count`);
/// `stage` names the stage (`compute`, `vertex`, `fragment`).
pub fn reflect_shifted(words: &[u32], stage: &str) -> dmsh_vk::reflection::Reflection {
    use dmsh_vk::reflection::{Reflection, Resource};
    let shapes = var_shapes(words);
    let mut resources = Vec::new();
    let mut local = [0u32; 3];
    for ins in instructions(words) {
        let (n, op) = (ins.len(), ins[0] & 0xffff);
        // OpDecorate %x Binding b
        if op == 71 && n >= 4 && ins[2] == 33 {
            let b = ins[3];
            let (kind, idx) = match b {
                0..=31 => ("cbuf", b),
                32..=63 => ("sbuf", b - 32),
                64..=95 => ("texture", b - 64),
                96..=127 => ("sampler", b - 96),
                _ => ("image", b - 128),
            };
            let (separate, count) = shapes.get(&ins[1]).copied().unwrap_or_default();
            let sampled = matches!(kind, "texture" | "sampler");
            resources.push(Resource {
                kind: kind.into(),
                bank: idx,
                binding: Some(b),
                separate: kind == "texture" && separate,
                count: if sampled { count } else { 0 },
                ..Default::default()
            });
        }
        // OpExecutionMode %main LocalSize x y z
        if op == 16 && n >= 6 && ins[2] == 17 {
            local = [ins[3], ins[4], ins[5]];
        }
    }
    resources.sort_by_key(|r| r.binding);
    Reflection {
        stage: stage.into(),
        entry: "main".into(),
        local_size: local,
        abi: "deko3d".into(),
        resources,
        ..Default::default()
    }
}
