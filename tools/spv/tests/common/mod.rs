//! Helpers shared by the corpus tests: cubin → lifting configuration, spirv-val, hand-assembled
//! Maxwell instructions (`asm`), and dmsh-testsupport's std-only modules (what the corpus'
//! text says, known-failure lists).

#![allow(dead_code)]

// These tests cannot depend on dmsh-testsupport (it depends on dmsh-spv): its std-only
// modules are included by path, one definition for both.
pub mod asm;
#[path = "../../../testsupport/src/corpus_text.rs"]
pub mod corpus_text;
#[path = "../../../testsupport/src/known.rs"]
pub mod known;

use dmsh_ir::lift::{Abi, Config};
use std::path::{Path, PathBuf};

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every sm53 kernel of the sass corpus: (name, cubin path).
pub fn sass_kernels() -> Vec<(String, PathBuf)> {
    sm53_cubins("tests/corpus/sass")
}

/// The kernels of tests/corpus/modifiers (operand modifiers the other sets never execute).
pub fn modifier_kernels() -> Vec<(String, PathBuf)> {
    sm53_cubins("tests/corpus/modifiers")
}

fn sm53_cubins(set: &str) -> Vec<(String, PathBuf)> {
    let dir = root().join(set);
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .expect("corpus dir")
        .filter_map(|e| {
            let p = e.ok()?.path();
            let n = p
                .file_name()?
                .to_str()?
                .strip_suffix(".sm53.cubin")?
                .to_string();
            Some((n, p))
        })
        .collect();
    v.sort();
    v
}

/// The io.json `block` of a kernel, if it has one (the corpus's, else `tests/corpus/video`'s).
pub fn io_block(name: &str) -> Option<[u32; 3]> {
    let text = ["sass", "video", "modifiers"].iter().find_map(|d| {
        std::fs::read_to_string(root().join(format!("tests/corpus/{d}/{name}.io.json"))).ok()
    })?;
    json_array(&text, "block")
}

/// The CUDA-ABI configuration of a cubin kernel.
pub fn cuda_config(k: &dmsh_cubin::Kernel, local_size: [u32; 3]) -> Config {
    Config::cuda_kernel(k, local_size)
}

/// Runs `spirv-val --target-env vulkan1.2`; `Err(message)` when it rejects the module.
pub use dmsh_vk::spirv_val;

/// One deko3d compute shader of the corpus: (name, code, block dims, shared bytes, local bytes).
pub type DkshShader = (String, Vec<u8>, [u32; 3], u32, u32);

/// The deko3d compute shaders of tests/corpus/dksh.
pub fn dksh_compute() -> Vec<DkshShader> {
    let dir = root().join("tests/corpus/dksh");
    let mut v = Vec::new();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("dksh dir")
        .filter_map(|e| {
            let n = e.ok()?.file_name().to_str()?.to_string();
            n.strip_suffix(".comp.code.bin").map(str::to_string)
        })
        .collect();
    names.sort();
    for n in names {
        let code = std::fs::read(dir.join(format!("{n}.comp.code.bin"))).expect("code");
        let meta = std::fs::read_to_string(dir.join(format!("{n}.comp.meta.json"))).expect("meta");
        let dims = json_array(&meta, "block_dims").unwrap_or([1, 1, 1]);
        let shared = json_number(&meta, "shared_mem_sz").unwrap_or(0);
        let local = json_number(&meta, "local_pos_mem_sz").unwrap_or(0);
        v.push((n, code, dims, shared, local));
    }
    v
}

/// The deko3d compute configuration: c0 (driver constants, storage-buffer descriptors) and
/// the uniform buffers c2.. are bound at run time.
pub fn deko3d_config(ls: [u32; 3], shared: u32, local: u32) -> Config {
    let mut cfg = Config::compute(Abi::Deko3d, ls);
    cfg.shared_bytes = shared;
    cfg.local_bytes = local;
    cfg.buffer_banks.insert(0, (0, 0x1000));
    for b in 2..18u8 {
        cfg.buffer_banks.insert(b, (0, 0x10000));
    }
    cfg
}

/// The first `"key": [a, b, c]` in a JSON text (enough for the corpus files).
pub fn json_array(text: &str, key: &str) -> Option<[u32; 3]> {
    let i = text.find(&format!("\"{key}\""))?;
    let rest = &text[i..];
    let a = rest.find('[')?;
    let b = rest.find(']')?;
    let nums: Vec<u32> = rest[a + 1..b]
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    (nums.len() == 3).then(|| [nums[0], nums[1], nums[2]])
}

/// The first `"key": number` in a JSON text.
pub fn json_number(text: &str, key: &str) -> Option<u32> {
    let i = text.find(&format!("\"{key}\""))?;
    let rest = text[i + key.len() + 2..]
        .trim_start()
        .strip_prefix(':')?
        .trim_start();
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// The `sbuf` slots a translation's reflection lists, sorted.
pub fn sbuf_slots(r: &dmsh_spv::Reflection) -> Vec<u32> {
    let mut v: Vec<u32> = r
        .resources
        .iter()
        .filter(|x| x.kind == "sbuf")
        .map(|x| x.bank)
        .collect();
    v.sort_unstable();
    v
}

/// Appends the `.dksh` files under `dir` (recursively, sorted per folder); nothing when
/// `dir` is absent.
pub fn dksh_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut v: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    v.sort();
    for p in v {
        if p.is_dir() {
            dksh_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "dksh") {
            out.push(p);
        }
    }
}

/// The sm53 cubins of tests/corpus/extra/ptx (one kernel each, named like the file):
/// (name, cubin path), sorted; empty when the folder is absent.
pub fn extra_ptx_kernels() -> Vec<(String, PathBuf)> {
    let dir = root().join("tests/corpus/extra/ptx");
    let mut cubins: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    cubins.retain(|p| p.to_str().is_some_and(|s| s.ends_with(".sm53.cubin")));
    cubins.sort();
    cubins
        .into_iter()
        .map(|path| {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".sm53.cubin"))
                .unwrap_or("?")
                .to_string();
            (name, path)
        })
        .collect()
}

/// The deko3d graphics configuration of a parsed DKSH program (`key` names it in errors),
/// with the program's early fragment tests and tessellation parameters.
pub fn deko3d_graphics_config(
    prog: &dmsh_ir::lift::dksh::DkshProgram,
    key: &str,
) -> Result<Config, String> {
    use dmsh_ir::lift::{dksh, BindingLayout};
    let mut cfg = dksh::graphics_config(
        prog.stage,
        &prog.code,
        &prog.cbuf1,
        BindingLayout::deko3d(prog.stage),
        key,
    )?;
    if let Some(g) = cfg.gfx.as_mut() {
        g.early_fragment_tests = prog.early_fragment_tests;
        if let Some(t) = prog.tess_param {
            g.tess_from_container(t);
        }
    }
    Ok(cfg)
}

/// The folders of graphics DKSH programs: the dksh corpus, the extra GLSL corpus and
/// ../shared/corpus/external (which may be absent).
pub fn graphics_corpus_dirs() -> [PathBuf; 3] {
    let root = root();
    [
        root.join("tests/corpus/dksh"),
        root.join("tests/corpus/extra/glsl"),
        root.join("../shared/corpus/external"),
    ]
}

/// The `.dksh` files of every [`graphics_corpus_dirs`] folder, folder by folder.
pub fn graphics_corpus_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for d in graphics_corpus_dirs() {
        dksh_files(&d, &mut files);
    }
    files
}

/// Validates each case's translation with spirv-val, prints one line per case and a count
/// under `label`, and fails the test for every failure that `known` (name, cause) does not
/// list ([`known::assert_only_known`]).
pub fn validate_each(
    label: &str,
    known: &[(&str, &str)],
    cases: impl IntoIterator<Item = (String, Result<dmsh_spv::Output, String>)>,
) {
    let (mut ok, mut bad) = (0, Vec::new());
    for (name, r) in cases {
        match r.and_then(|o| spirv_val(&o.words).map(|_| o)) {
            Ok(o) => {
                ok += 1;
                let (words, blocks) = (o.words.len(), o.reflection.blocks);
                println!("ok   {name} ({words} words, {blocks} blocks)");
            }
            Err(e) => {
                println!("FAIL {name}: {e}");
                bad.push((name, e));
            }
        }
    }
    println!(
        "{label}: {ok}/{} translate and pass spirv-val",
        ok + bad.len()
    );
    known::assert_only_known(&bad, known);
}
