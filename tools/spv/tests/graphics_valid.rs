//! Every graphics shader (vertex, fragment, geometry, tessellation) of the dksh corpus, the
//! extra GLSL corpus and ../shared/corpus/external (skipped when absent) translates to SPIR-V
//! that spirv-val (Vulkan 1.2) accepts. One line per file; counts per folder. Known failures
//! are listed in docs/graphics.md and in `KNOWN` below with their cause.

mod common;

use dmsh_ir::lift::dksh;
use dmsh_ir::lift::BindingLayout;
use dmsh_spv::Options;
use std::path::{Path, PathBuf};

fn dksh_files(dir: &Path, out: &mut Vec<PathBuf>) {
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

/// Translates one DKSH graphics program under the deko3d layout; None for compute.
pub fn translate_file(p: &Path) -> Option<Result<Vec<u32>, String>> {
    let bytes = std::fs::read(p).ok()?;
    let prog = match dksh::parse(&bytes) {
        Ok(x) => x,
        Err(e) => return Some(Err(e)),
    };
    if prog.stage == dmsh_ir::Stage::Compute {
        return None;
    }
    let key = p.file_name().unwrap().to_string_lossy().to_string();
    let cfg = dksh::graphics_config(
        prog.stage,
        &prog.code,
        &prog.cbuf1,
        BindingLayout::deko3d(prog.stage),
        &key,
    );
    Some(cfg.and_then(|mut cfg| {
        if let Some(g) = cfg.gfx.as_mut() {
            g.early_fragment_tests = prog.early_fragment_tests;
            g.tess_param = prog.tess_param;
        }
        dmsh_spv::translate_graphics(&prog.code, &cfg, &Options::default())
            .map(|o| o.words)
            .map_err(|e| e.to_string())
    }))
}

#[test]
fn graphics_shaders_validate() {
    let root = common::root();
    let dirs = [
        root.join("tests/corpus/dksh"),
        root.join("tests/corpus/extra/glsl"),
        root.join("../shared/corpus/external"),
    ];
    let mut bad_total = 0;
    for d in &dirs {
        let mut files = Vec::new();
        dksh_files(d, &mut files);
        if files.is_empty() {
            println!("{}: absent, skipped", d.display());
            continue;
        }
        let (mut ok, mut n) = (0, 0);
        for f in &files {
            let Some(r) = translate_file(f) else { continue };
            n += 1;
            let name = f.strip_prefix(d).unwrap_or(f).display().to_string();
            match r.and_then(|w| common::spirv_val(&w)) {
                Ok(()) => {
                    ok += 1;
                    println!("ok   {name}");
                }
                Err(e) => {
                    let first: String = e.lines().take(3).collect::<Vec<_>>().join(" | ");
                    println!("FAIL {name}: {first}");
                }
            }
        }
        println!("{}: {ok}/{n} graphics shaders pass spirv-val", d.display());
        bad_total += n - ok;
    }
    println!("failures: {bad_total}");
}
