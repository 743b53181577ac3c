//! Global SSA over the corpus: every sm53 kernel of tests/corpus/sass (and extra/ptx), every
//! deko3d compute shader and every graphics shader of tests/corpus/dksh (extra/glsl, and
//! ../shared/corpus/external when present)
//! that lifts goes through the passes with `dmsh_ir::passes::ssa::verify` after the `ssa`
//! pass and after the last pass (each use dominated by its definition, phis complete, no
//! guest-state access left), is in SSA form unless a `Dynamic` jump is left, and is emitted
//! twice — with the `ssa` pass and without it (guest state in variables, the scheme of
//! functions with unknown jump targets) — both through spirv-val. One line per shader with
//! the phis, SPIR-V words and `Function` variables of both; the totals line compares them.

mod common;

use dmsh_ir::lift::{dksh, Config};
use dmsh_ir::passes::{ssa, PASSES};
use dmsh_ir::{Op, Shader};
use dmsh_spv::{emit, Options};

/// Number of `OpVariable`s with storage class `Function` in a module.
fn function_vars(words: &[u32]) -> usize {
    let mut i = 5;
    let mut n = 0;
    while i < words.len() {
        let (len, op) = ((words[i] >> 16) as usize, words[i] & 0xffff);
        if op == 59 && words.get(i + 3) == Some(&7) {
            n += 1;
        }
        i += len.max(1);
    }
    n
}

#[derive(Default)]
struct Totals {
    shaders: usize,
    ssa: usize,
    phis: usize,
    words: [usize; 2],
    vars: [usize; 2],
}

fn check(name: &str, lifted: Result<Shader, String>, t: &mut Totals, bad: &mut Vec<String>) {
    let Ok(sh) = lifted else {
        return;
    };
    let mut with = sh.clone();
    let mut without = sh;
    for &(pass, run) in PASSES {
        run(&mut with.func);
        if pass != "ssa" {
            run(&mut without.func);
        }
        if pass == "ssa" || pass == PASSES[PASSES.len() - 1].0 {
            if let Err(e) = ssa::verify(&with.func) {
                bad.push(format!("{name}: after {pass}: {e}"));
                return;
            }
        }
    }
    let dynamic = with
        .func
        .blocks
        .iter()
        .any(|b| matches!(b.term, dmsh_ir::Terminator::Dynamic(_)));
    if !with.func.ssa && !dynamic {
        bad.push(format!("{name}: not in SSA form without a dynamic jump"));
    }
    let phis = with
        .func
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .filter(|&&v| matches!(with.func.inst(v).op, Op::Phi(_)))
        .count();
    let mut words = [0; 2];
    let mut vars = [0; 2];
    for (k, s) in [&with, &without].into_iter().enumerate() {
        match emit(s, &Options::default()) {
            Ok(o) => {
                if let Err(e) = common::spirv_val(&o.words) {
                    bad.push(format!(
                        "{name} ({}): spirv-val: {e}",
                        ["ssa", "variables"][k]
                    ));
                }
                words[k] = o.words.len();
                vars[k] = function_vars(&o.words);
            }
            Err(e) => {
                // Emission errors are the translation tests' business.
                if k == 0 {
                    println!("unemitted {name}: {e}");
                    return;
                }
                // Folding across blocks can make an operand constant that the variables
                // scheme only knows at run time (a texture offset): SSA emits more.
                println!("note {name}: emits in SSA form only ({e})");
                return;
            }
        }
    }
    println!(
        "{:<9} {name}: {} blocks, {phis} phis, words {} -> {}, function variables {} -> {}",
        if with.func.ssa { "ssa" } else { "variables" },
        with.func.blocks.len(),
        words[1],
        words[0],
        vars[1],
        vars[0]
    );
    t.shaders += 1;
    t.ssa += with.func.ssa as usize;
    t.phis += phis;
    for k in 0..2 {
        t.words[k] += words[k];
        t.vars[k] += vars[k];
    }
}

fn cuda(path: &std::path::Path, name: &str, ls: [u32; 3]) -> Result<Shader, String> {
    let c = dmsh_cubin::read(path).map_err(|e| e.to_string())?;
    let k = c.kernel(name).map_err(|e| e.to_string())?;
    let cfg: Config = common::cuda_config(k, ls);
    dmsh_ir::lift::lift(&k.code, &cfg).map_err(|e| e.to_string())
}

#[test]
fn corpus_in_ssa_form() {
    let mut t = Totals::default();
    let mut bad = Vec::new();
    for (name, path) in common::sass_kernels() {
        let ls = common::io_block(&name).unwrap_or([32, 1, 1]);
        check(&name, cuda(&path, &name, ls), &mut t, &mut bad);
    }
    for (name, path) in common::extra_ptx_kernels() {
        check(&name, cuda(&path, &name, [32, 1, 1]), &mut t, &mut bad);
    }
    for (name, code, ls, shared, local) in common::dksh_compute() {
        let cfg = common::deko3d_config(ls, shared, local);
        let sh = dmsh_ir::lift::lift(&code, &cfg).map_err(|e| e.to_string());
        check(&name, sh, &mut t, &mut bad);
    }
    for p in common::graphics_corpus_files() {
        let Ok(bytes) = std::fs::read(&p) else {
            continue;
        };
        let Ok(prog) = dksh::parse(&bytes) else {
            continue;
        };
        if prog.stage == dmsh_ir::Stage::Compute {
            continue;
        }
        let key = p.file_name().unwrap().to_string_lossy().to_string();
        let sh = common::deko3d_graphics_config(&prog, &key).and_then(|cfg| {
            dmsh_ir::lift::lift_graphics(&prog.code, &cfg).map_err(|e| e.to_string())
        });
        check(&key, sh, &mut t, &mut bad);
    }
    println!(
        "ssa: {} of {} shaders in SSA form, {} phis; SPIR-V words {} -> {} ({:+.1}%), \
         function variables {} -> {} ({:+.1}%) (variables scheme -> SSA)",
        t.ssa,
        t.shaders,
        t.phis,
        t.words[1],
        t.words[0],
        100.0 * (t.words[0] as f64 / t.words[1].max(1) as f64 - 1.0),
        t.vars[1],
        t.vars[0],
        100.0 * (t.vars[0] as f64 / t.vars[1].max(1) as f64 - 1.0),
    );
    assert!(t.shaders > 100, "only {} shaders lifted", t.shaders);
    assert!(bad.is_empty(), "{bad:#?}");
}
