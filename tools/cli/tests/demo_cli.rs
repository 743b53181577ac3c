//! `dmsh demo` end to end: split the bundled demo title, translate every unique shader, and
//! check the coverage report against the shader map; every translated module must pass
//! spirv-val (an independent validator), when it is installed.

use std::collections::BTreeSet;
use std::process::Command;

#[test]
fn demo_splits_and_translates() {
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-demo-test");
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(env!("CARGO_BIN_EXE_dmsh"))
        .args(["demo", "--out"])
        .arg(&out)
        .output()
        .expect("run dmsh demo");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "dmsh demo failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    print!("{stdout}");

    let map = std::fs::read_to_string(out.join("shader_map.tsv")).unwrap();
    let keys: BTreeSet<&str> = map
        .lines()
        .skip(1)
        .filter_map(|l| l.split('\t').next())
        .collect();
    let report = std::fs::read_to_string(out.join("translate_report.tsv")).unwrap();
    let mut reported = BTreeSet::new();
    let mut translated = Vec::new();
    for line in report.lines().skip(1) {
        let c: Vec<&str> = line.split('\t').collect();
        assert_eq!(c.len(), 4, "report row {line:?}");
        assert!(
            ["translated", "failed", "unsupported"].contains(&c[2]),
            "{line}"
        );
        assert!(
            c[2] == "translated" || !c[3].is_empty(),
            "a failure without a reason: {line}"
        );
        assert!(reported.insert(c[0]), "key reported twice: {}", c[0]);
        if c[2] == "translated" {
            translated.push(c[0].to_string());
        }
    }
    assert_eq!(
        reported, keys,
        "every unique shader of the map is in the report"
    );
    // The demo's tessellation shader gets its domain and spacing from games/demo's manual
    // facts (its container does not carry them): nothing is left as a guess.
    assert!(!report.contains("guessed"), "{report}");
    assert!(
        translated.len() * 4 >= keys.len() * 3,
        "most demo shaders translate"
    );

    // The variable-group-size compute shader (uam's cs_variable_group, control +0x748 zero)
    // translates with its size as specialization constants.
    let var = "512986ac7073a672";
    assert!(translated.iter().any(|k| k == var), "{var} not translated");
    let json = std::fs::read_to_string(out.join("spv").join(format!("{var}.json"))).unwrap();
    assert!(json.contains("\"local_size_spec\": true"), "{json}");

    let have_val = Command::new("spirv-val").arg("--version").output().is_ok();
    if !have_val {
        println!("skipped spirv-val: not installed");
    } else {
        let mut bad = Vec::new();
        for key in &translated {
            let spv = out.join("spv").join(format!("{key}.spv"));
            let json = out.join("spv").join(format!("{key}.json"));
            assert!(json.is_file(), "{key}: reflection missing");
            let v = Command::new("spirv-val")
                .args(["--target-env", "vulkan1.2"])
                .arg(&spv)
                .output()
                .unwrap();
            if !v.status.success() {
                bad.push(format!("{key}: {}", String::from_utf8_lossy(&v.stderr)));
            }
        }
        println!(
            "spirv-val: {} of {} translated demo shaders valid",
            translated.len() - bad.len(),
            translated.len()
        );
        assert!(bad.is_empty(), "invalid SPIR-V:\n{}", bad.join("\n"));
    }
    let _ = std::fs::remove_dir_all(&out);
}
