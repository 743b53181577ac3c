//! check_bindings catches a reflection that does not match the MSL: the MSL of a real corpus
//! shader is checked against its own reflection (clean), then against copies with one Metal
//! index, sampler index or location changed (each reported).

#[path = "../../spv/tests/common/mod.rs"]
mod common;

use dmsh_ir::lift::dksh;
use dmsh_msl::{check_bindings, to_msl, MslOptions};
use dmsh_spv::{translate_graphics, Options, Output};

fn graphics(name: &str) -> Output {
    let p = common::root().join("tests/corpus/dksh").join(name);
    let prog = dksh::parse(&std::fs::read(&p).unwrap()).unwrap();
    let cfg = common::deko3d_graphics_config(&prog, name).unwrap();
    translate_graphics(&prog.code, &cfg, &Options::default()).unwrap()
}

/// `check_bindings` of `msl` against `refl` after `change`; asserts it reports something.
fn caught(
    msl: &str,
    refl: &dmsh_spv::Reflection,
    what: &str,
    change: impl Fn(&mut dmsh_spv::Reflection),
) {
    let mut wrong = refl.clone();
    change(&mut wrong);
    let bad = check_bindings(msl, &wrong);
    println!("{what}: {bad:?}");
    assert!(!bad.is_empty(), "{what} was not caught");
}

#[test]
fn a_changed_reflection_is_caught() {
    let o = graphics("fs_tex2d_basic.frag.dksh");
    let r = &o.reflection;
    let m = to_msl(&o.words, r, &MslOptions::default()).unwrap();
    assert_eq!(check_bindings(&m.source, r), Vec::<String>::new());
    let tex = r
        .resources
        .iter()
        .position(|x| x.kind == "texture")
        .unwrap();
    let buf = r.resources.iter().position(|x| x.kind == "cbuf").unwrap();
    caught(&m.source, r, "texture metal_index + 1", |w| {
        w.resources[tex].metal_index += 1
    });
    caught(&m.source, r, "metal_sampler + 1", |w| {
        w.resources[tex].metal_sampler = w.resources[tex].metal_sampler.map(|s| s + 1)
    });
    caught(&m.source, r, "cbuf metal_index 7", |w| {
        w.resources[buf].metal_index = 7
    });
    caught(&m.source, r, "texture dropped", |w| {
        w.resources.remove(tex);
    });
    caught(&m.source, r, "array count", |w| w.resources[tex].count = 4);
    caught(&m.source, r, "stage compute", |w| {
        w.stage = "compute".into()
    });
    caught(&m.source, r, "fragment output location + 1", |w| {
        w.outputs[0].location += 1
    });
    if !r.inputs.is_empty() {
        caught(&m.source, r, "fragment input location + 8", |w| {
            w.inputs[0].location += 8
        });
    }

    let o = graphics("vs_multi_attr_int.vert.dksh");
    let r = &o.reflection;
    let m = to_msl(&o.words, r, &MslOptions::default()).unwrap();
    assert_eq!(check_bindings(&m.source, r), Vec::<String>::new());
    caught(&m.source, r, "vertex attribute dropped", |w| {
        w.inputs.pop();
    });
    caught(&m.source, r, "varying location + 9", |w| {
        w.outputs[0].location += 9
    });
}
