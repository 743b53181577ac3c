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
    if !available() {
        println!("skipped: glslangValidator not installed");
        return false;
    }
    if let Err(e) = dmsh_vk::shared() {
        println!("skipped: no Vulkan device ({e})");
        return false;
    }
    true
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

/// Per variable: whether its type is a separate image (`OpTypeImage` rather than a combined
/// image sampler; through one array level) and its array length (0: not an array).
fn var_shapes(words: &[u32]) -> std::collections::HashMap<u32, (bool, u32)> {
    use std::collections::{HashMap, HashSet};
    let (mut images, mut arrays, mut ptrs) = (HashSet::new(), HashMap::new(), HashMap::new());
    let mut consts = HashMap::new();
    let mut vars = HashMap::new();
    let mut i = 5;
    while i < words.len() {
        let n = (words[i] >> 16) as usize;
        let op = words[i] & 0xffff;
        if n == 0 || i + n > words.len() {
            break;
        }
        match op {
            // OpTypeImage %id … with Sampled = 1 (sampled, not storage).
            25 if n >= 9 && words[i + 7] == 1 => {
                images.insert(words[i + 1]);
            }
            // OpConstant %type %id value
            43 if n >= 4 => {
                consts.insert(words[i + 2], words[i + 3]);
            }
            // OpTypeArray %id %elem %length
            28 if n >= 4 => {
                let len = consts.get(&words[i + 3]).copied().unwrap_or(0);
                arrays.insert(words[i + 1], (words[i + 2], len));
            }
            // OpTypePointer %id class %pointee
            32 if n >= 4 => {
                ptrs.insert(words[i + 1], words[i + 3]);
            }
            // OpVariable %type %id
            59 if n >= 4 => {
                let t = ptrs.get(&words[i + 1]).copied().unwrap_or(0);
                let (t, count) = arrays.get(&t).copied().unwrap_or((t, 0));
                vars.insert(words[i + 2], (images.contains(&t), count));
            }
            _ => {}
        }
        i += n;
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
    let mut i = 5;
    while i < words.len() {
        let n = (words[i] >> 16) as usize;
        let op = words[i] & 0xffff;
        if n == 0 || i + n > words.len() {
            break;
        }
        // OpDecorate %x Binding b
        if op == 71 && n >= 4 && words[i + 2] == 33 {
            let b = words[i + 3];
            let (kind, idx) = match b {
                0..=31 => ("cbuf", b),
                32..=63 => ("sbuf", b - 32),
                64..=95 => ("texture", b - 64),
                96..=127 => ("sampler", b - 96),
                _ => ("image", b - 128),
            };
            let (separate, count) = shapes.get(&words[i + 1]).copied().unwrap_or_default();
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
        if op == 16 && n >= 6 && words[i + 2] == 17 {
            local = [words[i + 3], words[i + 4], words[i + 5]];
        }
        i += n;
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
