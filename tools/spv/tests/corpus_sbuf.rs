//! Storage buffers over the uam corpora (tests/corpus/dksh, tests/corpus/extra/glsl): every
//! shader whose GLSL declares buffer blocks translates with exactly those bindings as `sbuf`
//! slots and no 64-bit global access left (the GLSL source is the oracle), graphics stages and
//! compute alike. One line per shader.

mod common;

use dmsh_ir::lift::dksh;
use dmsh_ir::Stage;
use dmsh_spv::Options;
use std::path::Path;

/// Shaders that keep 64-bit global accesses by design, with the reason.
const GLOBAL_BY_DESIGN: &[(&str, &str)] = &[(
    "cs_ubo_emulated.comp",
    "uniform binding 9 is emulated by uam: LDG through the address at c[0][0x68], a \
     uniform-buffer record",
)];

/// Translates a DKSH file under deko3d's layout.
fn translate(p: &Path) -> Result<dmsh_spv::Output, String> {
    let bytes = std::fs::read(p).map_err(|e| e.to_string())?;
    let prog = dksh::parse(&bytes)?;
    let key = p.file_name().unwrap().to_string_lossy().to_string();
    if prog.stage == Stage::Compute {
        let mut cfg = common::deko3d_config(prog.local_size, prog.shared_bytes, 0);
        cfg.embedded_banks.insert(1, prog.cbuf1.clone());
        cfg.buffer_banks.remove(&1);
        return dmsh_spv::translate(&prog.code, &cfg, &Options::default())
            .map_err(|e| e.to_string());
    }
    let cfg = common::deko3d_graphics_config(&prog, &key)?;
    dmsh_spv::translate_graphics(&prog.code, &cfg, &Options::default()).map_err(|e| e.to_string())
}

#[test]
fn glsl_buffer_blocks_are_sbuf_slots() {
    let root = common::root();
    let (mut checked, mut bad) = (0, Vec::new());
    for dir in ["tests/corpus/dksh", "tests/corpus/extra/glsl"] {
        let mut files = Vec::new();
        common::dksh_files(&root.join(dir), &mut files);
        for p in files {
            let name = p.file_stem().unwrap().to_string_lossy().to_string();
            let Ok(src) = std::fs::read_to_string(p.with_extension("glsl")) else {
                continue;
            };
            let want = common::corpus_text::buffer_bindings(&src);
            if want.is_empty() {
                continue;
            }
            let out = match translate(&p) {
                Ok(o) => o,
                Err(e) => {
                    // Translation failures are counted by corpus_structured / graphics_valid.
                    println!("{name}: not translated ({e})");
                    continue;
                }
            };
            common::spirv_val(&out.words).unwrap_or_else(|e| panic!("{name}: {e}"));
            let r = &out.reflection;
            let got = common::sbuf_slots(r);
            let global = GLOBAL_BY_DESIGN.iter().any(|(n, _)| *n == name);
            checked += 1;
            let line = format!(
                "{name}: sbuf {got:?} (GLSL buffers {want:?}), global addresses {}",
                r.uses_global_addresses
            );
            println!("{line}");
            if got != want || r.uses_global_addresses != global {
                bad.push(line);
            }
        }
    }
    println!("{checked} shaders with buffer blocks, {} wrong", bad.len());
    assert!(checked >= 14, "only {checked} shaders checked");
    assert!(bad.is_empty(), "{bad:#?}");
}
