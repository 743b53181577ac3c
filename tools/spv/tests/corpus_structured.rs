//! Control flow over the corpus: every sm53 kernel of tests/corpus/sass (CUDA ABI) and every
//! deko3d compute shader of tests/corpus/dksh that translates must come out as structured
//! SPIR-V (never the dispatcher loop) and pass spirv-val. One line per shader with its block
//! and goto counts; the totals line gives structured vs dispatcher. Shaders that do not
//! translate yet are counted and left to the translation tests.

mod common;

use dmsh_spv::{translate, Options, Output};

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
                bad.push(format!("{name}: dispatcher control flow"));
            } else {
                counts[0] += 1;
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
    let mut dksh = [0usize; 3];
    for (name, code, ls, shared, local) in common::dksh_compute() {
        let cfg = common::deko3d_config(ls, shared, local);
        let r = translate(&code, &cfg, &Options::default()).map_err(|e| e.to_string());
        one(&name, r, &mut dksh, &mut bad);
    }
    println!(
        "control flow: sass sm53 {} structured, {} dispatcher ({} untranslated); dksh compute {} structured, {} dispatcher ({} untranslated)",
        sass[0], sass[1], sass[2], dksh[0], dksh[1], dksh[2]
    );
    assert!(bad.is_empty(), "{bad:#?}");
}
