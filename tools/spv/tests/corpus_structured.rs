//! Control flow over the corpus: every sm53 kernel of tests/corpus/sass (CUDA ABI) and every
//! deko3d compute shader of tests/corpus/dksh that translates must come out as structured
//! SPIR-V (never the dispatcher loop, except the shaders of `KNOWN_DISPATCHER`, each with the
//! reflection's `dispatcher_reason`) and pass spirv-val; so must the graphics shaders (their
//! spirv-val is `graphics_valid`'s). One line per shader with its block and goto counts (and
//! the reason for a dispatcher); the totals lines give structured vs dispatcher. Shaders that do not translate yet are counted
//! and left to the translation tests.

mod common;

use dmsh_spv::{translate, Options, Output};

/// Shaders that take the dispatcher: name, the reflection's `dispatcher_reason`, the cause.
/// Keep this list honest and short.
const KNOWN_DISPATCHER: &[(&str, &str, &str)] = &[
    (
        "x_ctrl_forms",
        "unstructurable",
        "recursive CAL keeps the run-time stack; the return switches make the graph irreducible \
         and node splitting would pass its bound (45 -> 133 blocks)",
    ),
    (
        "mem_misc",
        "barrier after divergent exit",
        "`if (i >= n) return; ... __syncthreads()`: invocations past n end before the barrier \
         (fine on Maxwell, undefined for a structured Vulkan barrier), so the \
         barrier-synchronised dispatcher runs it",
    ),
];

fn one(name: &str, r: Result<Output, String>, counts: &mut [usize; 3], bad: &mut Vec<String>) {
    match r {
        Ok(o) => {
            let cf = o.reflection.control_flow;
            println!(
                "{cf:<10} {name} ({} blocks, {} gotos)",
                o.reflection.blocks, o.reflection.gotos
            );
            if let Err(e) = common::spirv_val(&o.words) {
                bad.push(format!("{name}: spirv-val: {e}"));
            }
            if o.reflection.dispatcher {
                counts[1] += 1;
                let why = o.reflection.dispatcher_reason.as_deref().unwrap_or("none");
                println!("           reason: {why}");
                match KNOWN_DISPATCHER.iter().find(|k| k.0 == name) {
                    Some(k) if k.1 == why => {}
                    Some(k) => bad.push(format!("{name}: dispatcher for {why}, not {}", k.1)),
                    None => bad.push(format!("{name}: dispatcher control flow ({why})")),
                }
            } else {
                counts[0] += 1;
                if let Some(why) = o.reflection.dispatcher_reason {
                    bad.push(format!(
                        "{name}: structured with a dispatcher reason ({why})"
                    ));
                }
                if KNOWN_DISPATCHER.iter().any(|k| k.0 == name) {
                    bad.push(format!("{name}: listed as dispatcher but structured"));
                }
            }
        }
        Err(e) => {
            counts[2] += 1;
            println!("untranslated {name}: {e}");
        }
    }
}

#[test]
fn corpus_control_flow_is_structured() {
    let mut bad = Vec::new();
    let mut sass = [0usize; 3];
    for (name, path) in common::sass_kernels() {
        let cubin = dmsh_cubin::read(&path).expect("cubin");
        let k = cubin.kernel(&name).expect("kernel");
        let ls = common::io_block(&name).unwrap_or([32, 1, 1]);
        let cfg = common::cuda_config(k, ls);
        let r = translate(&k.code, &cfg, &Options::default()).map_err(|e| e.to_string());
        one(&name, r, &mut sass, &mut bad);
    }
    // The extra PTX kernels (control-flow forms, -O0 and relocatable builds).
    let mut extra = [0usize; 3];
    for (name, path) in common::extra_ptx_kernels() {
        let r = dmsh_cubin::read(&path)
            .map_err(|e| e.to_string())
            .and_then(|c| {
                let k = c.kernel(&name).map_err(|e| e.to_string())?;
                let cfg = common::cuda_config(k, [32, 1, 1]);
                translate(&k.code, &cfg, &Options::default()).map_err(|e| e.to_string())
            });
        one(&name, r, &mut extra, &mut bad);
    }
    let mut dksh = [0usize; 3];
    for (name, code, ls, shared, local) in common::dksh_compute() {
        let cfg = common::deko3d_config(ls, shared, local);
        let r = translate(&code, &cfg, &Options::default()).map_err(|e| e.to_string());
        one(&name, r, &mut dksh, &mut bad);
    }
    println!(
        "control flow: sass sm53 {} structured, {} dispatcher ({} untranslated); extra ptx sm53 {} structured, {} dispatcher ({} untranslated); dksh compute {} structured, {} dispatcher ({} untranslated)",
        sass[0], sass[1], sass[2], extra[0], extra[1], extra[2], dksh[0], dksh[1], dksh[2]
    );
    assert!(bad.is_empty(), "{bad:#?}");
}

/// The graphics shaders (vertex, fragment, geometry, tessellation) of the dksh corpus, the
/// extra GLSL corpus and ../shared/corpus/external (when present): those that translate must
/// be structured too.
#[test]
fn graphics_control_flow_is_structured() {
    use dmsh_ir::lift::dksh;
    let mut counts = [0usize; 3];
    let mut bad = Vec::new();
    for p in common::graphics_corpus_files() {
        let Ok(bytes) = std::fs::read(&p) else {
            continue;
        };
        let prog = match dksh::parse(&bytes) {
            Ok(p) => p,
            Err(e) => {
                counts[2] += 1;
                println!("untranslated {}: {e}", p.display());
                continue;
            }
        };
        if prog.stage == dmsh_ir::Stage::Compute {
            continue;
        }
        let key = p.file_name().unwrap().to_string_lossy().to_string();
        let r = common::deko3d_graphics_config(&prog, &key).and_then(|cfg| {
            dmsh_spv::translate_graphics(&prog.code, &cfg, &Options::default())
                .map_err(|e| e.to_string())
        });
        one(&key, r, &mut counts, &mut bad);
    }
    println!(
        "control flow: graphics {} structured, {} dispatcher ({} untranslated)",
        counts[0], counts[1], counts[2]
    );
    let dispatcher: Vec<_> = bad.iter().filter(|b| b.contains("dispatcher")).collect();
    assert!(dispatcher.is_empty(), "{dispatcher:#?}");
}
