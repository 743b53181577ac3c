//! `BRX` through a jump table in NVN's c1 (the code area's constant segment, located by the
//! control section) resolves statically: the corpus kernel `ctrl_switch_brx` (a `switch`
//! that ptxas compiled to `LDC R4, c[0x2][R4]; BRX R4`) is laid out as an NVN compute code
//! area with its jump table moved to c1 (the `LDC` re-encoded to read bank 1), given a
//! control section, and translated by `dmsh translate --control`. The reflection must say
//! `structured` (no dispatcher), and the SPIR-V must compute the kernel's expected outputs
//! (K.io.json, from the corpus's independent model) on the Vulkan device. The CUDA ABI is
//! kept for c0 (the kernel's parameters live there), so only c1 comes from the NVN layout.

mod common;

use common::root;
use dmsh_isa::{Field, Opcode};

/// The kernel's code with every `LDC c[0x2]` reading c[0x1] instead, and bank 2's bytes.
fn kernel_with_table_in_c1(name: &str) -> (Vec<u8>, Vec<u8>, u32) {
    let path = root().join(format!("tests/corpus/sass/{name}.sm53.cubin"));
    let cubin = dmsh_cubin::read(&path).expect("cubin");
    let k = cubin.kernel(name).expect("kernel");
    let table = k
        .constant_banks
        .get(&2)
        .expect("jump table in c[0x2]")
        .clone();
    let mut code = k.code.clone();
    let mut patched = 0;
    for (off, r, _) in dmsh_isa::stream::instructions(&k.code) {
        let Ok(i) = r else { continue };
        if i.opcode() == Opcode::Ldc && i.get(Field::CbufBank) == Some(2) {
            let j = i.with(Field::CbufBank, 1).expect("re-encode LDC");
            code[off as usize..off as usize + 8].copy_from_slice(&j.bits().to_le_bytes());
            patched += 1;
        }
    }
    assert_eq!(patched, 1, "one LDC reads the jump table");
    (code, table, k.param_base)
}

#[test]
fn brx_through_c1_jump_table_is_structured_and_runs() {
    let name = "ctrl_switch_brx";
    let (insts, table, param_base) = kernel_with_table_in_c1(name);
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-nvn-brx");
    std::fs::create_dir_all(&dir).expect("temp dir");
    // NVN compute code area: header (magic 0x12345679) with the instructions at +0x100, then
    // c1 at the next 256-byte boundary.
    let mut code = common::nvn_code_area(&insts);
    code.resize(code.len().next_multiple_of(0x100), 0);
    let (kpath, cpath) = common::write_nvn_compute(&dir, code, &table, &[]);
    let out = dir.join("k.spv");
    let json = common::translate_with_control("cuda", &kpath, &cpath, &[], &out);
    assert!(
        json.contains("\"control_flow\": \"structured\""),
        "BRX through c1 must not need the dispatcher: {json}"
    );
    let bytes = std::fs::read(&out).expect("spv");
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    common::assert_spirv_val(&out);
    let io_path = root().join(format!("tests/corpus/sass/{name}.io.json"));
    let io = dmsh_vk::io_json::IoJson::load(&io_path).expect("io.json");
    let refl = dmsh_vk::Reflection::from_json(&json).expect("reflection");
    let job = io.job(words, refl, param_base).expect("job");
    match dmsh_vk::run_compute(&job) {
        Ok(outputs) => {
            let m = io.check(&outputs).expect("check");
            assert!(m.is_empty(), "mismatches: {m:?}");
            println!("{name} with its jump table in NVN c1: structured, outputs match");
        }
        Err(e) if e.is_skip() => println!("skip {name}: {e}"),
        Err(e) => panic!("run: {e}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
