//! `dmsh build` on the demo title: split (through `dmsh demo`), then MSL for every shader into
//! `b-<V>/`. Every shader that builds has its `.metal` and its reflection with the chain
//! version and the Metal entry point, and passes the clang stand-in check (`dmsh_msl::syntax`,
//! skipped without clang) unless `KNOWN_SYNTAX` lists it; the failures are the known kinds,
//! each with its step; two builds of the same inputs are byte-identical.

mod common;
use common::{b_dir, build_args, demo_game, demo_split, dmsh, snapshot};

use dmsh_msl::syntax::{self, SyntaxError};
use rayon::prelude::*;
use std::path::Path;
use std::process::Command;

/// Built `.metal` files of the demo title that the clang stand-in check rejects, by key, with
/// the cause: real problems of our MSL. None today.
const KNOWN_SYNTAX: &[(&str, &str)] = &[];

/// The demo title's shaders that compute in f64, which Metal does not have: the build
/// translates them with soft f64 (integer routines, no 64-bit float type; before that they
/// stopped at step `f64`), so they reach MSL without `double` like every other key.
const F64_KEYS: &[(&str, &str)] = &[
    (
        "1c7abee3b86fc123",
        "the compute shader of Shader/Misc.Nin_NX_NVN.bfsha: f64 guest arithmetic (DFMA, \
         DMNMX, DADD, F2F.F64 floor)",
    ),
    (
        "64be8abaa9776f52",
        "the agl_v9.sharcb vertex shader: converts floats to f64 and adds them (F2F.F64.F32, \
         DADD)",
    ),
];

/// The clang stand-in check of every built (key, MSL): one line per file that does not pass,
/// then the totals; the unexpected results (a rejection not in `KNOWN_SYNTAX`, or an entry of
/// it that passes). Nothing, after a message, without clang.
fn standin_check(metal: &[(String, String)]) -> Vec<String> {
    if let Err(e) = syntax::clang() {
        println!("clang stand-in check skipped: {e}");
        return Vec::new();
    }
    let results: Vec<_> = metal.par_iter().map(|(_, m)| syntax::check(m)).collect();
    let (mut passed, mut unexpected) = (0, Vec::new());
    for ((key, _), r) in metal.iter().zip(&results) {
        let why = KNOWN_SYNTAX.iter().find(|k| k.0 == key).map(|k| k.1);
        match (r, why) {
            (Ok(()), None) => passed += 1,
            (Ok(()), Some(_)) => unexpected.push(format!("{key}: in KNOWN_SYNTAX but passes")),
            (Err(SyntaxError::Rejected(d)), Some(why)) => println!("known {key}: {d} [{why}]"),
            (Err(e), _) => {
                println!("FAIL {key}_b.metal: clang stand-in: {e}");
                unexpected.push(format!("{key}: {e}"));
            }
        }
    }
    println!(
        "clang stand-in: {passed} of {} built .metal files pass",
        metal.len()
    );
    unexpected
}

#[test]
fn demo_title_builds_to_msl() {
    let (split, _) = demo_split("build-test");
    let game = demo_game();
    let run = |out: &Path| {
        let o = dmsh(&build_args(
            &split,
            &game,
            &["--out", out.to_str().unwrap()],
        ));
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let out1 = split.join("o1");
    let summary = run(&out1);
    println!("{summary}");
    let dir = b_dir(&out1);
    let v = dir.file_name().unwrap().to_string_lossy()[2..].to_string();
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("_b_build.json")).unwrap()).unwrap();
    assert_eq!(report["chain"], v.as_str());
    let shaders = report["shaders"].as_array().unwrap();
    let map = std::fs::read_to_string(split.join("shader_map.tsv")).unwrap();
    let keys: std::collections::BTreeSet<&str> = map
        .lines()
        .skip(1)
        .filter_map(|l| l.split('\t').next())
        .collect();
    assert_eq!(shaders.len(), keys.len(), "every unique key has a record");
    // NVN2 (Ampere) keys: decoded into `<key>.sass` whatever happens after.
    let nvn2: std::collections::BTreeSet<&str> = map
        .lines()
        .skip(1)
        .filter(|l| l.split('\t').nth(2) == Some("nvn2"))
        .filter_map(|l| l.split('\t').next())
        .collect();
    assert_eq!(nvn2.len(), 6, "the demo's NVN2 keys");
    for key in &nvn2 {
        let sass = std::fs::read_to_string(dir.join(format!("{key}.sass"))).unwrap();
        assert!(sass.lines().count() > 4, "{key}: {sass}");
        assert!(!sass.contains("UNKNOWN"), "{key}: {sass}");
    }
    let mut built = Vec::new();
    for s in shaders {
        let key = s["key"].as_str().unwrap();
        match s["status"].as_str().unwrap() {
            "built" => {
                let metal = std::fs::read_to_string(dir.join(format!("{key}_b.metal"))).unwrap();
                assert!(metal.contains("main0"), "{key}");
                let j = std::fs::read_to_string(dir.join(format!("{key}_b.json"))).unwrap();
                let r = dmsh_reflect::Reflection::from_json(&j).unwrap();
                assert_eq!(r.chain.as_deref(), Some(v.as_str()), "{key}");
                if r.stage == "vertex" {
                    // vs_depth: the GL-mode entry point and the depth-as-is one.
                    assert_eq!(r.metal_entry_points, ["main0", "main0_z"], "{key}");
                    assert_eq!(r.metal_entry_z.as_deref(), Some("main0_z"), "{key}");
                    assert!(r.fixups.iter().any(|f| f == "vs_depth"), "{key}");
                    // Position invariance holds in both entry points.
                    assert_eq!(metal.matches("[[position, invariant]]").count(), 2, "{key}");
                } else {
                    assert_eq!(r.metal_entry_points, ["main0"], "{key}");
                }
                assert!(
                    dmsh_msl::check_bindings(&metal, &r).is_empty(),
                    "{key}: MSL and reflection disagree"
                );
                built.push((key.to_string(), metal));
            }
            status => {
                let (step, msg) = (s["step"].as_str().unwrap(), s["message"].as_str().unwrap());
                panic!("{key}: {status} at {step}: {msg}");
            }
        }
    }
    // All 54 (the 6 NVN2 keys among them: NAK's sm86 vertex and fragment programs, ptxas'
    // sm86 compute kernels; the geometry and tessellation shaders lowered; the 2 f64 ones
    // with soft f64).
    assert_eq!(built.len(), keys.len(), "{} shaders built", built.len());
    // A geometry key's `_b` is its kernel, `_p` the draw's vertex function
    // (docs/geometry.md).
    let mut lowered = 0;
    for s in shaders.iter().filter(|s| s["stage"] == "geometry") {
        let key = s["key"].as_str().unwrap();
        assert_eq!(s["status"], "built", "{key}");
        for (suffix, pass, entry) in [
            ("_b", "geometry_kernel", "kernel"),
            ("_p", "geometry_draw", "vertex"),
        ] {
            let j = std::fs::read_to_string(dir.join(format!("{key}{suffix}.json"))).unwrap();
            let r = dmsh_reflect::Reflection::from_json(&j).unwrap();
            assert_eq!(
                r.lowering.as_ref().map(|l| l.pass.name()),
                Some(pass),
                "{key}"
            );
            let metal = std::fs::read_to_string(dir.join(format!("{key}{suffix}.metal"))).unwrap();
            assert!(
                metal.contains(&format!("{entry} ")),
                "{key}{suffix}: no {entry} function"
            );
            assert!(
                dmsh_msl::check_bindings(&metal, &r).is_empty(),
                "{key}{suffix}"
            );
        }
        lowered += 1;
    }
    assert_eq!(lowered, 2, "the demo's geometry shaders");
    // With geometry shaders in the title, every built vertex shader has its capture form and
    // every fragment shader reading gl_PrimitiveID its `_q` variant.
    for s in shaders.iter().filter(|s| s["status"] == "built") {
        let key = s["key"].as_str().unwrap();
        let variant = |suffix: &str| {
            std::fs::read_to_string(dir.join(format!("{key}{suffix}.json")))
                .ok()
                .map(|j| dmsh_reflect::Reflection::from_json(&j).unwrap())
        };
        match s["stage"].as_str().unwrap() {
            "vertex" => {
                let r = variant("_g").unwrap_or_else(|| panic!("{key}: no capture form"));
                assert_eq!(
                    r.lowering.map(|l| l.pass),
                    Some(dmsh_reflect::lowered::Pass::VertexCapture)
                );
            }
            "fragment" => {
                if let Some(r) = variant("_q") {
                    assert!(
                        r.fixups.iter().any(|f| f == "primitive_id_varying"),
                        "{key}"
                    );
                    assert!(r.inputs.iter().any(|i| i.location == 31), "{key}");
                }
            }
            _ => {}
        }
    }
    // Tessellation: the control shader's `_b` is its kernel, the evaluation shader's a
    // post-tessellation vertex function (docs/tessellation.md).
    for (stage, pass, decl) in [
        ("tess_control", "tess_control_kernel", "kernel "),
        ("tess_eval", "tess_eval_post", "[[ patch("),
    ] {
        let s = shaders.iter().find(|s| s["stage"] == stage).expect(stage);
        let key = s["key"].as_str().unwrap();
        assert_eq!(s["status"], "built", "{key}");
        let j = std::fs::read_to_string(dir.join(format!("{key}_b.json"))).unwrap();
        let r = dmsh_reflect::Reflection::from_json(&j).unwrap();
        assert_eq!(
            r.lowering.as_ref().map(|l| l.pass.name()),
            Some(pass),
            "{key}"
        );
        let metal = std::fs::read_to_string(dir.join(format!("{key}_b.metal"))).unwrap();
        assert!(metal.contains(decl), "{key}: no {decl}");
    }
    let nvn2_built = built
        .iter()
        .filter(|(k, _)| nvn2.contains(k.as_str()))
        .count();
    assert_eq!(nvn2_built, 6, "the NVN2 keys build");
    for (key, why) in F64_KEYS {
        let s = shaders.iter().find(|s| s["key"] == *key).expect(key);
        assert_eq!(s["status"], "built", "{key}: {why}");
        let j = std::fs::read_to_string(dir.join(format!("{key}_b.json"))).unwrap();
        let r = dmsh_reflect::Reflection::from_json(&j).unwrap();
        assert_eq!(r.f64_mode, "soft", "{key}");
        let metal = std::fs::read_to_string(dir.join(format!("{key}_b.metal"))).unwrap();
        assert!(!metal.contains("double"), "{key}: {why}");
    }
    // No built key's MSL uses `double`.
    for (key, metal) in &built {
        assert!(!metal.contains("double"), "{key}");
    }
    let unexpected = standin_check(&built);
    assert!(unexpected.is_empty(), "clang stand-in: {unexpected:#?}");

    // vs_pad: every built vertex shader writes every location its built fragment partners
    // read (shader_pairs.tsv).
    let refl = |key: &str| {
        std::fs::read_to_string(dir.join(format!("{key}_b.json")))
            .ok()
            .and_then(|j| dmsh_reflect::Reflection::from_json(&j).ok())
    };
    let pairs = std::fs::read_to_string(split.join("shader_pairs.tsv")).unwrap();
    let mut padded = 0;
    for line in pairs.lines().skip(1) {
        let (v, f) = line.split_once('\t').unwrap();
        let (Some(vr), Some(fr)) = (refl(v), refl(f)) else {
            continue;
        };
        for i in &fr.inputs {
            assert!(
                vr.outputs.iter().any(|o| o.location == i.location),
                "{v} does not write location {} that {f} reads",
                i.location
            );
        }
        padded += vr.fixups.iter().any(|f| f == "vs_pad") as usize;
    }
    assert!(padded > 0, "no vertex shader of the demo needed vs_pad");
    // Deterministic: a second build of the same inputs writes the same bytes.
    let out2 = split.join("o2");
    run(&out2);
    let dir2 = b_dir(&out2);
    assert_eq!(dir2.file_name(), dir.file_name(), "same chain version");
    assert!(snapshot(&dir) == snapshot(&dir2), "two builds differ");
    // The seed's name for the command takes the same arguments and writes the same folder.
    let out3 = split.join("o3");
    let o = Command::new(env!("CARGO_BIN_EXE_dmsh_build"))
        .args([
            "--split",
            split.to_str().unwrap(),
            "--game",
            game.to_str().unwrap(),
        ])
        .args(["--out", out3.to_str().unwrap()])
        .output()
        .expect("dmsh_build runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        snapshot(&dir) == snapshot(&b_dir(&out3)),
        "dmsh_build differs"
    );
    let _ = std::fs::remove_dir_all(&split);
}
