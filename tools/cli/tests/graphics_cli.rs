//! `dmsh translate` on graphics stages: a DKSH fragment shader (texture + uniform block in the
//! reflection), a vertex code.bin with facts and a partner, and clear errors for a bad SPH.

mod common;
use common::{dmsh, translate_args};

use std::path::PathBuf;

fn corpus(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/corpus/dksh")
        .join(name)
}

#[test]
fn translate_graphics_stages() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-graphics-cli");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("fs.spv");
    let code = corpus("fs_tex2d_basic.frag.dksh");
    let o = dmsh(&translate_args("fragment", &code, &[], &out));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let json = std::fs::read_to_string(out.with_extension("json")).unwrap();
    assert!(json.contains("\"kind\": \"texture\"") && json.contains("\"binding\": 64"));
    assert!(json.contains("\"stage\": \"fragment\"") && json.contains("\"outputs\""));
    println!(
        "ok fs_tex2d_basic.frag.dksh → {} bytes",
        std::fs::metadata(&out).unwrap().len()
    );

    let facts = dir.join("facts.tsv");
    std::fs::write(&facts, "vs.code.bin\tin\t1\ti\nvs.code.bin\tin\t2\tu\n").unwrap();
    let vs = dir.join("vs.code.bin");
    std::fs::copy(corpus("vs_multi_attr_int.vert.code.bin"), &vs).unwrap();
    let out = dir.join("vs.spv");
    let partner = corpus("fs_mrt.frag.dksh");
    let profile_partner = [
        "--profile",
        "deko3d",
        "--partner",
        partner.to_str().unwrap(),
    ];
    let o = dmsh(&translate_args(
        "vertex",
        &vs,
        &[&profile_partner[..], &["--facts", facts.to_str().unwrap()]].concat(),
        &out,
    ));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let json = std::fs::read_to_string(out.with_extension("json")).unwrap();
    assert!(
        json.contains("\"sint\"") && json.contains("\"uint\""),
        "{json}"
    );

    // vs_fullscreen_const writes location 0 only; fs_mrt reads 0, 1 and 2: --partner pads
    // the other two (vs_pad, dmsh-fixup).
    let code = corpus("vs_fullscreen_const.vert.dksh");
    let o = dmsh(&translate_args("vertex", &code, &profile_partner, &out));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = dmsh_reflect::Reflection::from_json(
        &std::fs::read_to_string(out.with_extension("json")).unwrap(),
    )
    .unwrap();
    let locs: Vec<u32> = r.outputs.iter().map(|o| o.location).collect();
    assert_eq!(
        (locs, r.fixups),
        (vec![0, 1, 2], vec!["vs_pad".to_string()])
    );

    // A fragment program given as a vertex shader, and a truncated SPH.
    let code = corpus("fs_mrt.frag.code.bin");
    let o = dmsh(&translate_args("vertex", &code, &[], &out));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && e.contains("SPH says fragment"),
        "{e}"
    );
    let bad = dir.join("bad.bin");
    std::fs::write(&bad, [0u8; 16]).unwrap();
    let o = dmsh(&translate_args("vertex", &bad, &[], &out));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("need 0x50"), "{e}");
    println!("ok bad inputs: clear errors");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An NVN code area (0x30-byte header + the corpus' SPH and code) and a minimal Switch 1
/// control section for it (magic, length 0x880, code size, NVN stage).
fn nvn_program(code_bin: &str, nvn_stage: u32) -> (Vec<u8>, Vec<u8>) {
    let mut code = vec![0u8; 0x30];
    code[..4].copy_from_slice(&0x1234_5678u32.to_le_bytes());
    code.extend(std::fs::read(corpus(code_bin)).unwrap());
    while !code.len().is_multiple_of(0x100) {
        code.push(0);
    }
    let ctl = common::control_section(&[(0x704, code.len() as u32), (0x714, nvn_stage)]);
    (ctl, code)
}

#[test]
fn facts_by_shader_key() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-facts-cli");
    std::fs::create_dir_all(&dir).unwrap();
    let (ctl, code) = nvn_program("vs_multi_attr_int.vert.code.bin", 0);
    let c = dmsh_scan::control::parse(&ctl, None).unwrap();
    let key = dmsh_scan::key::key(&c, &ctl, &code);
    let (cp, kp) = (dir.join("v.control"), dir.join("v.code"));
    std::fs::write(&cp, &ctl).unwrap();
    std::fs::write(&kp, &code).unwrap();
    // The split's table (its header, one row for the key) and a manual table.
    let split = dir.join("shader_facts.tsv");
    std::fs::write(
        &split,
        format!(
            "{}\n{key}\tvertex\tnvn1\tgraphics\t0x880\t{:#x}\t0x0\t0x0\t8\t0\t0\t0\t0\t0\t0\t0x0\t0\n",
            dmsh_scan::tables::FACTS_HEADER,
            code.len()
        ),
    )
    .unwrap();
    let manual = dir.join("shader_facts_manual.tsv");
    std::fs::write(
        &manual,
        format!("# key kind index type\n{key} in 1 i\n{key} in 2 u\nffff in 1 u\n"),
    )
    .unwrap();
    let out = dir.join("v.spv");
    let extra = [
        "--profile",
        "deko3d",
        "--control",
        cp.to_str().unwrap(),
        "--facts",
        split.to_str().unwrap(),
        "--facts",
        manual.to_str().unwrap(),
    ];
    let run = |stage: &str| dmsh(&translate_args(stage, &kp, &extra, &out));
    let o = run("vertex");
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success() && !e.contains("no facts"), "{e}");
    let json = std::fs::read_to_string(out.with_extension("json")).unwrap();
    assert!(
        json.contains("\"sint\"") && json.contains("\"uint\""),
        "{json}"
    );
    // The split's row says vertex: asking for another stage is an error naming the key.
    let o = run("fragment");
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains(&key), "{e}");
    println!("ok key {key}: manual types applied, stage checked");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Whether a SPIR-V module declares `OpCapability CullDistance` (capability 33).
fn has_cull_capability(spv: &[u8]) -> bool {
    let w: Vec<u32> = spv
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    w.windows(2).any(|p| p[0] == 0x0002_0011 && p[1] == 33)
}

/// vs_clipdist writes 4 clip and 1 cull distance (its GLSL); the binary cannot tell them apart.
/// The split comes from `--clip-cull`, else the facts: a manual `KEY clip_cull C K` row or the
/// split table's optional `clip_distances` / `cull_distances` columns; without any, every slot
/// is a clip distance.
#[test]
fn clip_cull_split_from_facts() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-clipcull-cli");
    std::fs::create_dir_all(&dir).unwrap();
    let code = corpus("vs_clipdist.vert.dksh");
    let out = dir.join("vs.spv");
    let run = |extra: &[&str]| {
        let key = ["--key", "00c11dc011dc0000"];
        let o = dmsh(&translate_args(
            "vertex",
            &code,
            &[&key, extra].concat(),
            &out,
        ));
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        has_cull_capability(&std::fs::read(&out).unwrap())
    };
    assert!(!run(&[]), "no split: clip distances only");
    let manual = dir.join("shader_facts_manual.tsv");
    std::fs::write(&manual, "# vs_clipdist\n00c11dc011dc0000 clip_cull 4 1\n").unwrap();
    assert!(run(&["--facts", manual.to_str().unwrap()]), "manual row");
    let split = dir.join("shader_facts.tsv");
    std::fs::write(
        &split,
        "key\tstage\tgen\tclip_distances\tcull_distances\n00c11dc011dc0000\tvertex\tnvn1\t4\t1\n",
    )
    .unwrap();
    assert!(run(&["--facts", split.to_str().unwrap()]), "split columns");
    assert!(
        !run(&["--facts", split.to_str().unwrap(), "--clip-cull", "8,0"]),
        "--clip-cull wins"
    );
    let bad = dir.join("bad.tsv");
    std::fs::write(&bad, "00c11dc011dc0000 clip_cull 6 3\n").unwrap();
    let o = dmsh(&translate_args(
        "vertex",
        &code,
        &["--facts", bad.to_str().unwrap()],
        &out,
    ));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("line 1"), "{e}");
    println!("ok clip/cull split from facts");
    let _ = std::fs::remove_dir_all(&dir);
}
