//! Checks dmsh-cubin against the corpus' meta.json files, written by an independent tool
//! (ptxas -v, cuobjdump -res-usage and a Python ELF reader).

use std::path::{Path, PathBuf};

use serde_json::Value;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/sass")
}

fn hexnum(v: &Value) -> u64 {
    match v {
        Value::String(s) => u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap(),
        v => v.as_u64().unwrap(),
    }
}

fn hex_bytes(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

#[test]
fn cubins_match_meta_json() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".meta.json"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 90,
        "corpus missing? {} meta files",
        files.len()
    );
    let mut checked = 0;
    for meta_path in files {
        let meta: Value = serde_json::from_slice(&std::fs::read(&meta_path).unwrap()).unwrap();
        let stem = meta_path
            .to_string_lossy()
            .trim_end_matches(".meta.json")
            .to_string();
        let cubin = dmsh_cubin::read(Path::new(&format!("{stem}.cubin"))).unwrap();
        let name = meta["kernel"].as_str().unwrap();
        let k = cubin.kernel(name).unwrap();
        let sm: u32 = meta["sm"]
            .as_str()
            .unwrap()
            .trim_start_matches("sm_")
            .parse()
            .unwrap();
        assert_eq!(cubin.sm, sm, "{stem}: sm");
        // Code equals the raw .bin and the text size.
        let bin = std::fs::read(format!("{stem}.bin")).unwrap();
        assert_eq!(k.code, bin, "{stem}: code");
        assert_eq!(k.code.len() as u64, meta["text_size"].as_u64().unwrap());
        assert_eq!(
            k.registers,
            Some(meta["registers"].as_u64().unwrap() as u32),
            "{stem}"
        );
        assert_eq!(
            k.shared_bytes,
            meta["shared_bytes"].as_u64().unwrap(),
            "{stem}"
        );
        assert_eq!(
            k.frame_size as u64,
            meta["stack_frame_bytes"].as_u64().unwrap(),
            "{stem}: frame"
        );
        let ru = &meta["res_usage"];
        assert_eq!(
            k.max_stack_size.max(k.min_stack_size) as u64,
            ru["STACK"].as_u64().unwrap(),
            "{stem}: STACK"
        );
        let cb = &meta["constant_bank"];
        assert_eq!(k.param_bank as u64, cb["param_cbank"].as_u64().unwrap());
        assert_eq!(k.param_base as u64, hexnum(&cb["param_base"]), "{stem}");
        assert_eq!(
            k.param_size as u64,
            cb["param_size"].as_u64().unwrap(),
            "{stem}"
        );
        let params = meta["params"].as_array().unwrap();
        assert_eq!(k.params.len(), params.len(), "{stem}: params");
        for (p, m) in k.params.iter().zip(params) {
            assert_eq!(p.ordinal as u64, m["ordinal"].as_u64().unwrap());
            assert_eq!(p.offset as u64, m["offset"].as_u64().unwrap());
            assert_eq!(
                p.size as u64,
                m["size"].as_u64().unwrap(),
                "{stem}: param size"
            );
            assert_eq!(
                k.param_base as u64 + p.offset as u64,
                hexnum(&m["cbank0_offset"])
            );
        }
        // cmem: sizes of every constant bank.
        for (bank, size) in meta["cmem"].as_object().unwrap() {
            let n: u32 = bank.trim_start_matches('c').parse().unwrap();
            assert_eq!(
                k.constant_banks.get(&n).map(|b| b.len() as u64),
                Some(size.as_u64().unwrap()),
                "{stem}: {bank}"
            );
        }
        for (bank, hex) in meta["constant_banks_nonzero_index"].as_object().unwrap() {
            let n: u32 = bank.trim_start_matches('c').parse().unwrap();
            assert_eq!(
                k.constant_banks[&n],
                hex_bytes(hex.as_str().unwrap()),
                "{stem}: {bank}"
            );
        }
        assert_eq!(
            k.constant_banks.keys().filter(|&&n| n != 0).count(),
            meta["constant_banks_nonzero_index"]
                .as_object()
                .unwrap()
                .len(),
            "{stem}: banks"
        );
        // Relocations against .text / constant sections.
        let rels = meta["relocations"].as_array().unwrap();
        assert_eq!(
            k.relocations.len(),
            rels.len(),
            "{stem}: relocations {:?}",
            k.relocations
        );
        for (r, m) in k.relocations.iter().zip(rels) {
            assert_eq!(r.section, m["section"].as_str().unwrap());
            assert_eq!(r.offset, hexnum(&m["offset"]));
            assert_eq!(r.symbol, m["symbol"].as_str().unwrap());
            assert_eq!(r.kind_name(), m["type"].as_str().unwrap());
        }
        let mut names: Vec<String> = meta["nv_info_attributes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        names.sort();
        assert_eq!(k.attribute_names(), names, "{stem}: attributes");
        println!(
            "ok {}: {} bytes, {} params, {} regs, banks {:?}, {} relocs, {} brx",
            meta_path.file_name().unwrap().to_string_lossy(),
            k.code.len(),
            k.params.len(),
            k.registers.unwrap_or(0),
            k.constant_banks.keys().collect::<Vec<_>>(),
            k.relocations.len(),
            k.indirect_branches.len()
        );
        checked += 1;
    }
    println!("{checked} cubins match their meta.json");
}

#[test]
fn brx_targets_are_decoded() {
    let c = dmsh_cubin::read(&corpus().join("ctrl_switch_brx.sm53.cubin")).unwrap();
    let k = c.kernel("ctrl_switch_brx").unwrap();
    let first = &k.indirect_branches[0];
    assert_eq!(first.offset, 0x1d8);
    assert_eq!(
        first.targets,
        vec![0x1e0, 0x1f8, 0x218, 0x230, 0x240, 0x258]
    );
    // The same targets sit in the bank-2 jump table.
    let table: Vec<u32> = k.constant_banks[&2]
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(table, first.targets);
}

#[test]
fn bad_input_never_panics() {
    let good = std::fs::read(corpus().join("ctrl_switch_brx.sm53.cubin")).unwrap();
    assert!(matches!(
        dmsh_cubin::parse(b"nope"),
        Err(dmsh_cubin::Error::NotElf)
    ));
    let c = dmsh_cubin::parse(&good).unwrap();
    assert!(matches!(
        c.kernel("nope"),
        Err(dmsh_cubin::Error::NoKernel { .. })
    ));
    for len in (0..good.len()).step_by(7) {
        let _ = dmsh_cubin::parse(&good[..len]);
    }
    // Deterministic byte mutations.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..20_000 {
        let mut b = good.clone();
        for _ in 0..4 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let i = (x as usize) % b.len();
            b[i] = (x >> 32) as u8;
        }
        let _ = dmsh_cubin::parse(&b);
    }
}

/// Hostile and truncated ELF bytes give errors that name the offset of what failed.
#[test]
fn hostile_elf_gives_clear_errors() {
    use dmsh_cubin::Error;
    let good = std::fs::read(corpus().join("ctrl_switch_brx.sm53.cubin")).unwrap();
    let u16_at = |b: &[u8], o: usize| u16::from_le_bytes([b[o], b[o + 1]]) as usize;
    let shoff = u64::from_le_bytes(good[0x28..0x30].try_into().unwrap());
    let (shnum, sh) = (u16_at(&good, 0x3C), shoff as usize);
    let header = |i: usize| sh + 64 * i;
    let err = |b: &[u8]| dmsh_cubin::parse(b).unwrap_err();
    // Cut inside the header, then inside the section header table.
    for len in 0..64 {
        assert!(matches!(err(&good[..len]), Error::NotElf));
    }
    for len in (64..sh + 64 * shnum).step_by(5) {
        match err(&good[..len]) {
            Error::Malformed { offset, msg } if offset == shoff => {
                assert!(msg.starts_with("section headers"), "{msg}")
            }
            e => panic!("cut at {len}: {e}"),
        }
    }
    // ELF32, a wrong section header size, a table past the end.
    let mut b = good.clone();
    b[4] = 1;
    assert!(matches!(err(&b), Error::Unsupported(_)));
    let mut b = good.clone();
    b[0x3A] = 0x20;
    assert!(err(&b).to_string().contains("section header entry size"));
    let mut b = good.clone();
    b[0x28..0x30].copy_from_slice(&(u64::MAX - 8).to_le_bytes());
    assert!(matches!(err(&b), Error::Malformed { .. }));
    // A section name past its string table names the section header.
    let mut b = good.clone();
    b[header(3)..header(3) + 4].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    let e = err(&b).to_string();
    assert!(
        e.contains("section 3 name") && e.contains(&format!("{:#x}", header(3))),
        "{e}"
    );
    // The kernel's code past the end of the file names the section.
    let text = (1..shnum)
        .find(|&i| {
            let mut b = good.clone();
            b[header(i) + 32..header(i) + 40].copy_from_slice(&(1u64 << 40).to_le_bytes());
            dmsh_cubin::parse(&b)
                .err()
                .is_some_and(|e| e.to_string().contains(".text.ctrl_switch_brx"))
        })
        .expect("an error naming .text");
    // A relocation section that is not a whole number of entries (the 0x20-byte call graph
    // retyped as SHT_RELA against .text).
    let mut b = good.clone();
    let cg = header(6);
    b[cg + 4..cg + 8].copy_from_slice(&4u32.to_le_bytes());
    b[cg + 44..cg + 48].copy_from_slice(&(text as u32).to_le_bytes());
    assert!(err(&b)
        .to_string()
        .contains("not a whole number of entries"));
}
