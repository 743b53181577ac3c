//! The reflection's per-cbuf `reads` (the guest byte ranges each constant bank is read at
//! constant offsets) against NVIDIA's listings of the same code: for every dksh corpus
//! shader, every `c[0xB][0xOFF]` operand nvdisasm prints (an `LDC.64` reads two words) of a
//! bank the reflection binds is inside the bank's `reads`, and every word in `reads` is one
//! the listing reads; an `LDC` with a register (`c[0xB][R1+0x10]`) makes the bank's
//! `reads_dynamic` true. The storage-buffer descriptors of c[0] (resolved into sbuf bindings)
//! are not cbuf reads.

mod common;

use dmsh_ir::lift::dksh;
use dmsh_spv::{translate, translate_graphics, Options};
use std::collections::{BTreeMap, BTreeSet};

/// (bank → constant word offsets, banks read through a register) of an nvdisasm listing.
fn listing_reads(sass: &str) -> (BTreeMap<u32, BTreeSet<u32>>, BTreeSet<u32>) {
    let (mut words, mut dynamic): (BTreeMap<u32, BTreeSet<u32>>, BTreeSet<u32>) =
        Default::default();
    for line in sass.lines() {
        let code = line.split("/*").nth(1).map(|_| line).unwrap_or(line);
        let code = code.split(';').next().unwrap_or("");
        let wide = code.contains("LDC.64");
        let mut rest = code;
        while let Some(p) = rest.find("c[0x") {
            rest = &rest[p + 4..];
            let Some((bank, tail)) = rest.split_once("][") else {
                break;
            };
            let Ok(bank) = u32::from_str_radix(bank, 16) else {
                continue;
            };
            let idx = tail.split(']').next().unwrap_or("");
            if let Some(off) = idx.strip_prefix("0x") {
                if let Ok(off) = u32::from_str_radix(off, 16) {
                    let e = words.entry(bank).or_default();
                    e.insert(off);
                    if wide {
                        e.insert(off + 4);
                    }
                }
            } else {
                dynamic.insert(bank);
            }
        }
    }
    (words, dynamic)
}

#[test]
fn cbuf_reads_match_the_listings() {
    let dir = common::root().join("tests/corpus/dksh");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".dksh").map(str::to_string))
        .collect();
    names.sort();
    let (mut checked, mut words_checked) = (0, 0);
    for n in &names {
        let prog = dksh::parse(&std::fs::read(dir.join(format!("{n}.dksh"))).unwrap()).unwrap();
        let out = if n.ends_with(".comp") {
            let meta = std::fs::read_to_string(dir.join(format!("{n}.meta.json"))).unwrap();
            let ls = common::json_array(&meta, "block_dims").unwrap_or([1, 1, 1]);
            let shared = common::json_number(&meta, "shared_mem_sz").unwrap_or(0);
            let local = common::json_number(&meta, "local_pos_mem_sz").unwrap_or(0);
            let code = std::fs::read(dir.join(format!("{n}.code.bin"))).unwrap();
            translate(
                &code,
                &common::deko3d_config(ls, shared, local),
                &Options::default(),
            )
        } else {
            let cfg = common::deko3d_graphics_config(&prog, n).unwrap();
            translate_graphics(&prog.code, &cfg, &Options::default())
        };
        let Ok(out) = out else { continue };
        let sass = std::fs::read_to_string(dir.join(format!("{n}.sass"))).unwrap();
        let (mut listed, dynamic) = listing_reads(&sass);
        // The storage-buffer descriptors (16 bytes per slot in c[0]) become sbuf bindings.
        if let Some(base) = dmsh_ir::lift::BindingLayout::deko3d(prog.stage).sbuf_base {
            for r in out.reflection.resources.iter().filter(|r| r.kind == "sbuf") {
                let d = base + 16 * r.bank;
                if let Some(w) = listed.get_mut(&0) {
                    w.retain(|&o| !(d..d + 16).contains(&o));
                }
            }
        }
        for r in out.reflection.resources.iter().filter(|r| r.kind == "cbuf") {
            let bank = r.bank;
            let want = listed.get(&bank).cloned().unwrap_or_default();
            let got: BTreeSet<u32> = r
                .reads
                .iter()
                .flat_map(|&[a, b]| (a..b).step_by(4))
                .collect();
            assert!(
                got.is_subset(&want),
                "{n} c[{bank}]: reads {:?} not in the listing",
                got.difference(&want).collect::<Vec<_>>()
            );
            assert!(
                want.is_subset(&got),
                "{n} c[{bank}]: the listing reads {:?}, the reflection does not say so",
                want.difference(&got).collect::<Vec<_>>()
            );
            assert_eq!(
                r.reads_dynamic,
                dynamic.contains(&bank),
                "{n} c[{bank}] dynamic"
            );
            checked += 1;
            words_checked += got.len();
        }
    }
    println!("{checked} cbuf resources, {words_checked} words agree with nvdisasm");
    assert!(checked >= 20, "{checked} cbufs checked");
}
