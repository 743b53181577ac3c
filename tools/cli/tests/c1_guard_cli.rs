//! `dmsh c1-guard` and the reflection's `c1` it reads. (a) Hand-assembled NVN compute
//! code areas (instruction words from the corpus's nvdisasm listings, fields re-encoded)
//! with c1 in the code area, through `dmsh translate --control`: an index masked with
//! `& 0x3c` is proven inside the span (c1 data rounded up to 256 bytes, plus 256), the raw
//! thread ID is not. (b) On the demo title built by `dmsh demo`: the list the command writes
//! opens in the runtime (`dmsh_runtime::c1::parse` for this build's `b-<V>`), lists exactly
//! the shaders whose record's `c1.dynamic` is not `none` / `proven` (failed builds
//! included), and a list for another version is refused. A title without a build is an
//! error naming the folder.

mod common;

use common::{b_dir, dmsh, root};

/// Instruction words (each checked against the text nvdisasm prints for it in the corpus).
const S2R_R0_TID_X: u64 = 0xf0c8_0000_0217_0000;
/// `LOP32I.AND R1, R0, 0x3c` (the corpus's `LOP32I.AND R6, R0, 0xf`, Rd and the mask changed).
const AND_R1_R0_3C: u64 = 0x0400_0000_03c7_0001;
/// `LDC R2, c[0x1][R1]` (the corpus's `LDC R4, c[0x1][R1]`, Rd changed).
const LDC_R2_C1_R1: u64 = 0xef94_0010_0007_0102;
/// `LDC R3, c[0x1][R0+0x4]`.
const LDC_R3_C1_R0_4: u64 = 0xef94_0010_0047_0003;
/// `STG.E [R4], R2` and `STG.E [R4], R3`.
const STG_R4_R2: u64 = 0xeedc_2000_0007_0402;
const STG_R4_R3: u64 = 0xeedc_2000_0007_0403;
const EXIT: u64 = 0xe300_0000_0007_000f;
/// `BRA` to itself (at the end of every program) and a scheduling word of the corpus.
const BRA_SELF: u64 = 0xe240_0fff_ff87_000f;
const SCHED: u64 = 0x0004_0401_fcc0_070f;

/// The code: S2R, the mask, then `loads` (each with its store), EXIT.
fn program(loads: &[(u64, u64)]) -> Vec<u8> {
    let mut insts = vec![S2R_R0_TID_X, AND_R1_R0_3C];
    for &(l, s) in loads {
        insts.extend([l, s]);
    }
    insts.extend([EXIT, BRA_SELF]);
    let mut words = Vec::new();
    for group in insts.chunks(3) {
        words.push(SCHED);
        words.extend(group);
        words.extend(std::iter::repeat_n(BRA_SELF, 3 - group.len()));
    }
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Translates `insts` as an NVN compute code area with `c1_len` bytes of c1; the reflection.
fn translate(tag: &str, insts: &[u8], c1_len: usize) -> serde_json::Value {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("dmsh-c1g-{tag}"));
    std::fs::create_dir_all(&dir).unwrap();
    let mut code = common::nvn_code_area(insts);
    code.resize(code.len().next_multiple_of(0x100), 0);
    let c1_off = code.len() as u32;
    code.extend((0..c1_len).map(|i| i as u8));
    let control = common::nvn_compute_control(code.len() as u32, c1_off, c1_len as u32, &[]);
    let (c, k, o) = (dir.join("c.bin"), dir.join("k.bin"), dir.join("k.spv"));
    std::fs::write(&c, control).unwrap();
    std::fs::write(&k, code).unwrap();
    let json = common::translate_with_control("cuda", &k, &c, &[], &o);
    let _ = std::fs::remove_dir_all(&dir);
    serde_json::from_str(&json).unwrap()
}

#[test]
fn the_instruction_words_are_what_they_say() {
    let want = [
        (S2R_R0_TID_X, "S2R R0, SR_TID.X"),
        (AND_R1_R0_3C, "LOP32I.AND R1, R0, 0x3c"),
        (LDC_R2_C1_R1, "LDC R2, c[0x1][R1]"),
        (LDC_R3_C1_R0_4, "LDC R3, c[0x1][R0+0x4]"),
        (STG_R4_R2, "STG.E [R4], R2"),
        (STG_R4_R3, "STG.E [R4], R3"),
    ];
    for (w, text) in want {
        let i = dmsh_isa::decode(w).expect("decodes");
        let printed = i.print(0, 0);
        assert_eq!(
            printed.trim().trim_end_matches(';').trim(),
            text,
            "{w:#018x}"
        );
    }
}

#[test]
fn a_masked_c1_index_is_proven_and_a_raw_one_is_not() {
    // (tid & 0x3c) reads bytes up to 0x40: inside 16 bytes of c1 rounded to 256, plus 256.
    let r = translate("masked", &program(&[(LDC_R2_C1_R1, STG_R4_R2)]), 16);
    println!("masked: {}", r["c1"]);
    assert_eq!(
        r["c1"],
        serde_json::json!({"dynamic": "proven", "end": 0x40, "span": 512})
    );
    // tid + 4 straight from the register: unbounded.
    let both = &[(LDC_R2_C1_R1, STG_R4_R2), (LDC_R3_C1_R0_4, STG_R4_R3)];
    let r = translate("raw", &program(both), 16);
    println!("raw: {}", r["c1"]);
    assert_eq!(
        (&r["c1"]["dynamic"], &r["c1"]["end"]),
        (&"unproven".into(), &(1u64 << 32).into())
    );
    // No run-time index: none.
    let r = translate("none", &program(&[]), 16);
    assert_eq!(r["c1"]["dynamic"], "none");
}

/// The map's keys of a split folder.
fn keys(split: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(split.join("shader_map.tsv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect()
}

#[test]
fn the_demo_list_opens_in_the_runtime_with_the_unproven_shaders_full() {
    let (split, out) = common::demo_split("c1g-demo");
    assert!(out.contains("c1-guard: "), "demo runs c1-guard: {out}");
    let b = b_dir(&split);
    let v = b.file_name().unwrap().to_str().unwrap()[2..].to_string();
    // The command on its own, into another folder: the same list as the demo's.
    let other = split.join("elsewhere");
    let o = dmsh(&[
        "c1-guard",
        "--game",
        root().join("games/demo").to_str().unwrap(),
        "--split",
        split.to_str().unwrap(),
        "--out",
        other.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let line = String::from_utf8_lossy(&o.stdout).trim().to_string();
    println!("{line}");
    let text = std::fs::read_to_string(split.join("c1_full.tsv")).unwrap();
    assert_eq!(
        std::fs::read_to_string(other.join("c1_full.tsv")).unwrap(),
        text
    );
    assert!(text.starts_with(&format!("b-{v}\n")), "{text}");
    // The runtime reads it for this build: the listed keys.
    let listed = dmsh_runtime::c1::parse(&text, &v).expect("the runtime reads the list");
    // Which shaders must be listed, from each key's build record and reflection.
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(b.join("_b_build.json")).unwrap()).unwrap();
    let built: Vec<&str> = record["shaders"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["status"] == "built")
        .map(|s| s["key"].as_str().unwrap())
        .collect();
    let (mut none, mut proven, mut unproven, mut failed) = (0, 0, 0, 0);
    let t = dmsh_runtime::Title::open(&dmsh_runtime::OpenOptions {
        shader_map: Some(split.join("shader_map.tsv")),
        library_dir: split.clone(),
        chain: Some(v.clone()),
        ..Default::default()
    })
    .expect("the title opens");
    assert_eq!(t.c1(), Ok(()), "the list is up to date");
    for k in keys(&split) {
        let n = dmsh_runtime::key::parse(&k).unwrap();
        let want = if built.contains(&k.as_str()) {
            let r: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(b.join(format!("{k}_b.json"))).unwrap(),
            )
            .unwrap();
            match r["c1"]["dynamic"].as_str() {
                Some("none") => none += 1,
                Some("proven") => proven += 1,
                _ => unproven += 1,
            }
            !matches!(r["c1"]["dynamic"].as_str(), Some("none" | "proven"))
        } else {
            failed += 1;
            true
        };
        assert_eq!(listed.binary_search(&n).is_ok(), want, "{k}");
        if let Ok(f) = t.lookup(n, dmsh_runtime::abi::DEPTH_GL) {
            let full = f.shader.shader().flags & dmsh_runtime::abi::SHADER_C1_FULL != 0;
            assert_eq!(full, want, "{k}: the runtime's c1-full flag");
        }
    }
    println!(
        "demo: {none} without a run-time c1 index, {proven} proven, {unproven} unproven, \
         {failed} not built; {} listed",
        listed.len()
    );
    assert_eq!(listed.len(), unproven + failed);
    // Hand-checked: the demo's only run-time c1 indices are two vertex shaders (one in main,
    // one in a bfsha) that read a constant array at gl_VertexID << 4 (`ALD R0, a[0x2fc]; SHL
    // R1, R0, 0x4; LDC … c[0x1][R1] … c[0x1][R1+0x34]`): the vertex ID is unbounded; and
    // NAK's sm86 fs_lighting_loops (NVN2, in the NDSR pack), whose loop over a uniform
    // buffer's lights reads `c[0x1][R]` up to a count the buffer itself holds.
    assert_eq!(unproven, 3);
    for k in ["1c702b2762780557", "49e335d96a00aaff", "9e28dda65e8e06d7"] {
        assert!(text.contains(&format!("\n{k}\n")), "{k} is listed");
    }
    // A list for another build is refused (the runtime then makes every shader full).
    let stale = text.replacen(&format!("b-{v}"), "b-ffffffffffff", 1);
    let e = dmsh_runtime::c1::parse(&stale, &v).unwrap_err();
    assert_eq!(e.status, dmsh_runtime::Status::C1Version);
    let _ = std::fs::remove_dir_all(&split);
}

#[test]
fn a_title_without_a_build_is_a_clear_error() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-c1g-empty");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("shader_map.tsv"), "key\tstage\tgen\n").unwrap();
    let o = dmsh(&["c1-guard", "--game", dir.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    println!("{err}");
    assert!(!o.status.success());
    assert!(
        err.contains(&format!("{}: no b-<V> folder", dir.display())),
        "{err}"
    );
    assert!(!dir.join("c1_full.tsv").exists(), "nothing written");
    let _ = std::fs::remove_dir_all(&dir);
}
