//! Pipeline state and container data a bare code area lacks (issue 9, items 5 and 6):
//! a geometry shader's input primitive (inferred, guessed, or given by `--gs-input` / a facts
//! row, and said so in the reflection), a tessellation-evaluation shader's domain, spacing and
//! output primitive (`--tess`, facts rows), and the c[1] compiler constants (`--c1`), so a
//! shader translates from the split's outputs alone exactly as from its full container.

mod common;
use common::dmsh;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn corpus(rel: &str) -> PathBuf {
    common::root().join("tests/corpus").join(rel)
}

fn tmp(name: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-pipeline-state");
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// Runs `dmsh translate --stage STAGE --code CODE EXTRA… -o OUT`: (arguments, output).
fn run_translate<'a>(
    stage: &'a str,
    code: &'a Path,
    extra: &[&'a str],
    out: &'a Path,
) -> (Vec<&'a str>, Output) {
    let args = common::translate_args(stage, code, extra, out);
    let o = dmsh(&args);
    (args, o)
}

/// `dmsh translate --stage STAGE --code CODE EXTRA… -o OUT`: (SPIR-V bytes, reflection).
fn translate(stage: &str, code: &Path, extra: &[&str], out: &Path) -> (Vec<u8>, serde_json::Value) {
    let (args, o) = run_translate(stage, code, extra, out);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    common::assert_spirv_val(out);
    let json = std::fs::read_to_string(out.with_extension("json")).unwrap();
    (
        std::fs::read(out).unwrap(),
        serde_json::from_str(&json).unwrap(),
    )
}

/// `dmsh translate --stage STAGE --code CODE EXTRA… -o OUT` that must fail: its stderr.
fn translate_err(stage: &str, code: &Path, extra: &[&str], out: &Path) -> String {
    let (args, o) = run_translate(stage, code, extra, out);
    assert!(!o.status.success(), "{args:?} should fail");
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The SPIR-V disassembly (spirv-dis).
fn dis(spv: &[u8]) -> String {
    let p = tmp(&format!("dis-{}.spv", spv.len()));
    std::fs::write(&p, spv).unwrap();
    let o = Command::new("spirv-dis")
        .arg(&p)
        .output()
        .expect("spirv-dis");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn gs_input(refl: &serde_json::Value) -> (String, u64, String) {
    let g = &refl["geometry_input"];
    (
        g["primitive"].as_str().unwrap_or("?").to_string(),
        g["vertices"].as_u64().unwrap_or(0),
        g["source"].as_str().unwrap_or("?").to_string(),
    )
}

#[test]
fn geometry_input_primitive_is_inferred_guessed_or_given() {
    let out = tmp("gs.spv");
    // Constant vertex indices (uam computes them from SR_INVOCATION_INFO, which folds):
    // the primitive the GLSL declares.
    for (file, prim) in [
        ("dksh/gs_passthrough_tri.geom.dksh", "triangles"),
        ("dksh/gs_expand_points.geom.dksh", "points"),
        ("extra/glsl/gs_streams.geom.dksh", "points"),
        ("extra/glsl/gs_streams_cut.geom.dksh", "triangles"),
    ] {
        let (_, r) = translate("geometry", &corpus(file), &[], &out);
        let (p, _, src) = gs_input(&r);
        assert_eq!((p.as_str(), src.as_str()), (prim, "inferred"), "{file}");
    }

    // gs_indexed_in reads `gl_in[(i + vSel[0]) % 3]`: a run-time vertex index. Before, the
    // translation declared points with one-element input arrays (nothing drawn); now it is
    // a guess, triangles, said so.
    let gs = corpus("extra/glsl/gs_indexed_in.geom.dksh");
    let (spv, r) = translate("geometry", &gs, &[], &out);
    assert_eq!(gs_input(&r), ("triangles".into(), 3, "guessed".into()));
    let text = dis(&spv);
    assert!(text.contains(" Triangles\n"), "{text}");
    assert!(!text.contains("InputPoints"), "{text}");

    // Given by the option.
    let (spv, r) = translate("geometry", &gs, &["--gs-input", "triangles"], &out);
    assert_eq!(gs_input(&r), ("triangles".into(), 3, "given".into()));
    assert!(dis(&spv).contains(" Triangles\n"));

    // Given by a manual facts row, by key (as the split's keys are given with --key).
    let facts = tmp("gs_facts.tsv");
    std::fs::write(&facts, "0123456789abcdef gs_input triangles_adjacency\n").unwrap();
    let f = [
        "--facts",
        facts.to_str().unwrap(),
        "--key",
        "0123456789abcdef",
    ];
    let (spv, r) = translate("geometry", &gs, &f, &out);
    assert_eq!(
        gs_input(&r),
        ("triangles_adjacency".into(), 6, "given".into())
    );
    assert!(dis(&spv).contains("InputTrianglesAdjacency"));

    // A given primitive too small for the constant indices the code reads is an error that
    // names the shader.
    let tri = corpus("dksh/gs_passthrough_tri.geom.dksh");
    let err = translate_err("geometry", &tri, &["--gs-input", "lines"], &out);
    assert!(err.contains("reads vertex 2"), "{err}");
    assert!(err.contains("gs_passthrough_tri"), "{err}");
    let err = translate_err("geometry", &tri, &["--gs-input", "hexagons"], &out);
    assert!(err.contains("triangles_adjacency"), "{err}");
}

/// The DKSH's c[1] data as raw bytes, and its code area (SPH + instructions).
fn dksh_parts(path: &Path) -> (Vec<u8>, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap();
    let p = dmsh_ir::lift::dksh::parse(&bytes).unwrap();
    let c1 = p.cbuf1.iter().flat_map(|w| w.to_le_bytes()).collect();
    (c1, p.code)
}

#[test]
fn a_bare_code_area_with_c1_translates_like_its_container() {
    // fs_frontfacing_deriv multiplies by uam's c[1][0] (STATE_FB_WPOS_Y_TRANSFORM.x).
    let dksh = corpus("dksh/fs_frontfacing_deriv.frag.dksh");
    let (c1, code) = dksh_parts(&dksh);
    assert!(!c1.is_empty(), "the corpus shader has c1 data");
    let bare = tmp("fs.code.bin");
    std::fs::write(&bare, &code).unwrap();
    let c1_file = tmp("fs.c1.bin");
    std::fs::write(&c1_file, &c1).unwrap();
    let prof = ["--profile", "deko3d"];
    let (want, _) = translate("fragment", &dksh, &[], &tmp("a.spv"));
    let mut args = prof.to_vec();
    args.extend(["--c1", c1_file.to_str().unwrap()]);
    let (got, _) = translate("fragment", &bare, &args, &tmp("b.spv"));
    assert!(got == want, "bare code area + --c1 differs from the DKSH");
    // Other c1 contents give another module (the option is what the code reads).
    let mut other = c1.clone();
    other[..4].copy_from_slice(&1.0f32.to_bits().to_le_bytes());
    std::fs::write(&c1_file, &other).unwrap();
    let (changed, _) = translate("fragment", &bare, &args, &tmp("c.spv"));
    assert!(changed != want, "c1[0] = 1.0 should change the module");
    // A c1 file larger than a constant bank is refused.
    std::fs::write(&c1_file, vec![0u8; 0x10004]).unwrap();
    let c1 = c1_file.to_str().unwrap();
    let err = translate_err("fragment", &bare, &["--c1", c1], &tmp("d.spv"));
    assert!(err.contains("64 KiB"), "{err}");
}

fn tess(refl: &serde_json::Value) -> [String; 4] {
    let t = &refl["tessellation"];
    ["domain", "spacing", "output", "source"].map(|k| t[k].as_str().unwrap_or("?").to_string())
}

#[test]
fn tessellation_parameters_for_a_bare_code_area() {
    // tes_quad_isolevels: quads, equal spacing, CCW in its DKSH header.
    let dksh = corpus("extra/glsl/tes_quad_isolevels.tese.dksh");
    let (_, code) = dksh_parts(&dksh);
    let bare = tmp("tes.code.bin");
    std::fs::write(&bare, &code).unwrap();
    let (want, r) = translate("tess_eval", &dksh, &[], &tmp("t1.spv"));
    let from_header = tess(&r);
    assert_eq!(from_header[3], "container");
    assert_eq!(from_header[0], "quads");
    // The bare code area alone: the default, marked as a guess.
    let (guess, r) = translate("tess_eval", &bare, &["--profile", "deko3d"], &tmp("t2.spv"));
    assert_eq!(
        tess(&r),
        ["triangles", "equal", "triangles_ccw", "guessed"].map(String::from)
    );
    assert!(guess != want);
    // --tess with the header's values: the same module as the container's.
    let list = format!("{},{},{}", from_header[0], from_header[1], from_header[2]);
    let (got, r) = translate(
        "tess_eval",
        &bare,
        &["--profile", "deko3d", "--tess", &list],
        &tmp("t3.spv"),
    );
    assert!(
        got == want,
        "bare code area + --tess {list} differs from the DKSH"
    );
    assert_eq!(tess(&r)[3], "given");
    // A facts row does the same; the option wins over it.
    // (The key of a bare code area without --key or --control is its file name.)
    let facts = tmp("tes_facts.tsv");
    let row = format!("tes.code.bin tess {}\n", from_header[..3].join(" "));
    std::fs::write(&facts, row).unwrap();
    let f = ["--profile", "deko3d", "--facts", facts.to_str().unwrap()];
    let (got, r) = translate("tess_eval", &bare, &f, &tmp("t4.spv"));
    assert!(got == want && tess(&r)[3] == "given");
    let mut f2 = f.to_vec();
    f2.extend(["--tess", "isolines,fractional_odd,points"]);
    let (iso, r) = translate("tess_eval", &bare, &f2, &tmp("t5.spv"));
    assert_eq!(
        tess(&r),
        ["isolines", "fractional_odd", "points", "given"].map(String::from)
    );
    let text = dis(&iso);
    assert!(
        text.contains("Isolines")
            && text.contains("SpacingFractionalOdd")
            && text.contains("PointMode"),
        "{text}"
    );
    // A bad list names the choices.
    let err = translate_err("tess_eval", &bare, &["--tess", "quads,odd"], &tmp("t6.spv"));
    assert!(err.contains("fractional_odd"), "{err}");
}
