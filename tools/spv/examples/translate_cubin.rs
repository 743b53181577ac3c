//! Translates one corpus kernel and prints the IR and writes the SPIR-V (debugging aid):
//! `cargo run -p dmsh-spv --example translate_cubin -- NAME OUT.spv`.

#[path = "../tests/common/mod.rs"]
mod common;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let name = &args[1];
    let path = common::root().join(format!("tests/corpus/sass/{name}.sm53.cubin"));
    let cubin = dmsh_cubin::read(&path).expect("cubin");
    let k = cubin.kernel(name).expect("kernel");
    let cfg = common::cuda_config(k, common::io_block(name).unwrap_or([1, 1, 1]));
    let opts = dmsh_spv::Options::default();
    let sh = dmsh_ir::lift::lift(&k.code, &cfg).expect("lift");
    let sh = dmsh_spv::pipeline::passes(sh, &opts).expect("passes");
    println!("{}", sh.func);
    let out = dmsh_spv::emit(&sh, &opts).expect("emit");
    let bytes: Vec<u8> = out.words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(&args[2], bytes).expect("write");
    println!("{}", out.reflection.to_json());
}
