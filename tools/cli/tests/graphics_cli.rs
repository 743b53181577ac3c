//! `dmsh translate` on graphics stages: a DKSH fragment shader (texture + uniform block in the
//! reflection), a vertex code.bin with facts and a partner, and clear errors for a bad SPH.

use std::path::PathBuf;
use std::process::Command;

fn corpus(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/corpus/dksh")
        .join(name)
}

fn dmsh(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_dmsh"))
        .args(args)
        .output()
        .expect("dmsh runs")
}

#[test]
fn translate_graphics_stages() {
    let dir = std::env::temp_dir().join(format!("dmsh-graphics-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("fs.spv");
    let o = dmsh(&[
        "translate",
        "--stage",
        "fragment",
        "--code",
        corpus("fs_tex2d_basic.frag.dksh").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
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
    let o = dmsh(&[
        "translate",
        "--stage",
        "vertex",
        "--profile",
        "deko3d",
        "--code",
        vs.to_str().unwrap(),
        "--facts",
        facts.to_str().unwrap(),
        "--partner",
        corpus("fs_mrt.frag.dksh").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let json = std::fs::read_to_string(out.with_extension("json")).unwrap();
    assert!(
        json.contains("\"sint\"") && json.contains("\"uint\""),
        "{json}"
    );

    // A fragment program given as a vertex shader, and a truncated SPH.
    let o = dmsh(&[
        "translate",
        "--stage",
        "vertex",
        "--code",
        corpus("fs_mrt.frag.code.bin").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && e.contains("SPH says fragment"),
        "{e}"
    );
    let bad = dir.join("bad.bin");
    std::fs::write(&bad, [0u8; 16]).unwrap();
    let o = dmsh(&[
        "translate",
        "--stage",
        "vertex",
        "--code",
        bad.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("need 0x50"), "{e}");
    println!("ok bad inputs: clear errors");
    let _ = std::fs::remove_dir_all(&dir);
}
