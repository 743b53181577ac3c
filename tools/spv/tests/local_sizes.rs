//! Local memory sizes the containers declare reach the translation: DKSH compute programs'
//! `local_pos_mem_sz` and graphics programs' SPH local-memory sizes. Oracles: uam's
//! meta.json (its dump of the DKSH header) and nvdisasm's listing (the highest constant-offset
//! `LDL`/`STL`). One line per shader.

mod common;

use dmsh_ir::lift::dksh;
use dmsh_spv::Options;
use std::path::Path;

/// Every DKSH compute program's parsed local size is uam's `local_pos_mem_sz`.
#[test]
fn dksh_compute_local_size_is_local_pos_mem_sz() {
    let dir = common::root().join("tests/corpus/dksh");
    let mut n = 0;
    for (name, _, _, _, local) in common::dksh_compute() {
        let bytes = std::fs::read(dir.join(format!("{name}.comp.dksh"))).expect("dksh");
        let prog = dksh::parse(&bytes).expect("parses");
        println!("{name}: local {} (meta {local})", prog.local_bytes);
        assert_eq!(prog.local_bytes, local, "{name}");
        n += 1;
    }
    assert!(n >= 11, "{n} compute programs");
}

/// Translates a graphics DKSH with the deko3d layout; returns the reflection's local bytes.
fn graphics_local_bytes(p: &Path) -> u32 {
    let bytes = std::fs::read(p).expect("dksh");
    let prog = dksh::parse(&bytes).expect("parses");
    let key = p.file_name().unwrap().to_string_lossy().to_string();
    let cfg = common::deko3d_graphics_config(&prog, &key).expect("config");
    assert_eq!(cfg.declared_local_bytes, prog.local_bytes, "{key}");
    let out = dmsh_spv::translate_graphics(&prog.code, &cfg, &Options::default())
        .unwrap_or_else(|e| panic!("{key}: {e}"));
    out.reflection.local_bytes
}

/// Every graphics shader with local memory (`vs_indexed_io`: dynamically indexed arrays, SPH
/// local size 112 bytes) gets the larger of the SPH's size and its constant-offset accesses
/// (nvdisasm's listing); uam's `per_warp_scratch_sz` (32 lanes × the SPH size for graphics)
/// is the oracle for the SPH's size.
#[test]
fn graphics_local_size_comes_from_the_sph() {
    let root = common::root();
    let mut checked = 0;
    for d in ["tests/corpus/dksh", "tests/corpus/extra/glsl"] {
        let dir = root.join(d);
        let mut files = Vec::new();
        common::dksh_files(&dir, &mut files);
        for p in files {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            let stem = name.trim_end_matches(".dksh");
            if stem.ends_with(".comp") {
                continue;
            }
            let meta =
                std::fs::read_to_string(dir.join(format!("{stem}.meta.json"))).expect("meta.json");
            let scratch = common::json_number(&meta, "per_warp_scratch_sz").expect("scratch");
            if scratch == 0 {
                continue;
            }
            let listing = std::fs::read_to_string(dir.join(format!("{stem}.sm53.sass")))
                .or_else(|_| std::fs::read_to_string(dir.join(format!("{stem}.sass"))))
                .expect("listing");
            let bound = common::corpus_text::listing_local_bound(&listing);
            let declared = scratch / 32;
            let local = graphics_local_bytes(&p);
            println!(
                "{name}: local_bytes {local} (SPH per meta {declared}, listing bound {bound})"
            );
            assert_eq!(local, declared.max(bound.next_multiple_of(4)), "{name}");
            checked += 1;
        }
    }
    assert!(checked >= 1, "no graphics shader with local memory");
}

/// `cs_local_array` (a dynamically indexed `int arr[24]`, insertion-sorted) declares 384
/// local bytes (`local_pos_mem_sz`); its constant-offset accesses reach less (nvdisasm's
/// listing), so the declared size must be what the translation uses when the configuration
/// carries it as the container's declaration (no explicit size).
#[test]
fn declared_local_size_beats_the_constant_offset_bound() {
    let dir = common::root().join("tests/corpus/dksh");
    let bytes = std::fs::read(dir.join("cs_local_array.comp.dksh")).expect("dksh");
    let prog = dksh::parse(&bytes).expect("parses");
    let meta = std::fs::read_to_string(dir.join("cs_local_array.comp.meta.json")).expect("meta");
    let declared = common::json_number(&meta, "local_pos_mem_sz").expect("local_pos_mem_sz");
    let listing = std::fs::read_to_string(dir.join("cs_local_array.comp.sass")).expect("listing");
    let bound = common::corpus_text::listing_local_bound(&listing);
    assert!(
        bound > 0 && bound < declared,
        "bound {bound}, declared {declared}"
    );
    let mut cfg = common::deko3d_config(prog.local_size, prog.shared_bytes, 0);
    cfg.declared_local_bytes = prog.local_bytes;
    let out = dmsh_spv::translate(&prog.code, &cfg, &Options::default()).expect("translates");
    common::spirv_val(&out.words).expect("spirv-val");
    println!(
        "cs_local_array: local_bytes {} (declared {declared}, listing bound {bound})",
        out.reflection.local_bytes
    );
    assert_eq!(out.reflection.local_bytes, declared);
    // Without the declaration the bound alone is used.
    cfg.declared_local_bytes = 0;
    let out = dmsh_spv::translate(&prog.code, &cfg, &Options::default()).expect("translates");
    assert_eq!(out.reflection.local_bytes, bound.next_multiple_of(4));
}
