//! Snapshot tests in the style of naga's tests/in → tests/out: for the corpus shaders listed in
//! `tests/snapshots/in.txt`, the IR after the passes (`out/NAME.ir`), the SPIR-V disassembly
//! (`out/NAME.spvasm`, rspirv's disassembler) and the reflection (`out/NAME.json`) are
//! committed, so every change's diff shows what it did to the output. `DMSH_BLESS=1` rewrites
//! them. These complement the oracle tests (execution against independent references, nvdisasm
//! listings); they never replace them: a snapshot only says the output changed, not that it is
//! right.

mod common;

use dmsh_spv::{pipeline, Options};
use rspirv::binary::Disassemble;
use std::path::Path;

/// (NAME, KIND, PATH) rows of in.txt.
fn inputs(dir: &Path) -> Vec<(String, String, String)> {
    std::fs::read_to_string(dir.join("in.txt"))
        .expect("in.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let c: Vec<&str> = l.split_whitespace().collect();
            (c[0].to_string(), c[1].to_string(), c[2].to_string())
        })
        .collect()
}

/// Lifts one input and runs the passes: the shader emission starts from.
fn prepared(root: &Path, name: &str, kind: &str, path: &str) -> dmsh_ir::Shader {
    let opts = Options {
        debug: dmsh_spv::Debug::default(),
        ..Default::default()
    };
    let sh = match kind {
        "cuda" => {
            let c = dmsh_cubin::read(&root.join(path)).expect("cubin");
            let k = c.kernel(name).expect("kernel");
            let ls = common::io_block(name).unwrap_or([1, 1, 1]);
            dmsh_ir::lift::lift(&k.code, &common::cuda_config(k, ls)).expect("lifts")
        }
        "dksh" => {
            let prog =
                dmsh_ir::lift::dksh::parse(&std::fs::read(root.join(path)).unwrap()).expect("DKSH");
            if prog.stage == dmsh_ir::Stage::Compute {
                let cfg = common::deko3d_config(prog.local_size, prog.shared_bytes, 0);
                dmsh_ir::lift::lift(&prog.code, &cfg).expect("lifts")
            } else {
                let cfg = common::deko3d_graphics_config(&prog, name).expect("config");
                dmsh_ir::lift::lift_graphics(&prog.code, &cfg).expect("lifts")
            }
        }
        k => panic!("{name}: unknown kind {k}"),
    };
    pipeline::passes(sh, &opts).expect("passes")
}

#[test]
fn snapshots() {
    let root = common::root();
    let dir = root.join("tools/spv/tests/snapshots");
    let bless = std::env::var_os("DMSH_BLESS").is_some();
    let mut stale = Vec::new();
    for (name, kind, path) in inputs(&dir) {
        let sh = prepared(&root, &name, &kind, &path);
        let ir = format!("{}", sh.func);
        let out = dmsh_spv::emit(&sh, &Options::default()).expect("emits");
        let module = rspirv::dr::load_words(&out.words).expect("SPIR-V loads");
        let files = [
            (format!("{name}.ir"), ir),
            (format!("{name}.spvasm"), module.disassemble() + "\n"),
            (format!("{name}.json"), out.reflection.to_json() + "\n"),
        ];
        for (file, text) in files {
            let p = dir.join("out").join(&file);
            if bless {
                std::fs::write(&p, &text).unwrap();
            }
            if std::fs::read_to_string(&p).ok().as_deref() != Some(text.as_str()) {
                stale.push(file);
            }
        }
        println!("{name}: {} words", out.words.len());
    }
    assert!(
        stale.is_empty(),
        "snapshots differ (review the diff, then DMSH_BLESS=1 cargo test --release -p dmsh-spv --test snapshots): {stale:?}"
    );
}
