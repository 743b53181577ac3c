//! `dmsh report` on the demo title (through `dmsh demo`, which leaves DIR/b-<V>/ and
//! DIR/report/): the coverage agrees with `_b_build.json` and the shader map, every failure
//! is in exactly one cause group, and the HTML page is self-contained. Every key of the demo
//! builds, so `dmsh build --strict` succeeds on it. Bad input (a shader whose code is damaged
//! or cut short) fails that key only, recorded with its cause, and the build goes on; with
//! `--strict` the run then fails while the build still writes every record.

mod common;
use common::{build_args, demo_game, demo_split, dmsh};

#[test]
fn demo_report_covers_every_shader() {
    let (out, stdout) = demo_split("report-test");
    let line = stdout.lines().find(|l| l.starts_with("report:")).unwrap();
    println!("{line}");
    let b = common::b_dir(&out);
    let build: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(b.join("_b_build.json")).unwrap()).unwrap();
    let dir = out.join("report");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let shaders = build["shaders"].as_array().unwrap();
    assert_eq!(r["shaders"].as_u64().unwrap() as usize, shaders.len());
    assert_eq!(r["chain"], build["chain"]);
    let sum = |v: &serde_json::Value| -> u64 {
        v.as_array()
            .unwrap()
            .iter()
            .map(|c| c["count"].as_u64().unwrap())
            .sum()
    };
    assert_eq!(sum(&r["stages"]), shaders.len() as u64);
    assert_eq!(sum(&r["containers"]), shaders.len() as u64);
    assert_eq!(sum(&r["container_stages"]), shaders.len() as u64);
    // The levels fall along the chain; the last built level is the build's count.
    let levels: Vec<u64> = r["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["count"].as_u64().unwrap())
        .collect();
    assert_eq!(levels.len(), 6);
    assert_eq!(levels[0], shaders.len() as u64);
    assert!(levels.windows(2).all(|w| w[0] >= w[1]), "{levels:?}");
    assert_eq!(levels[4], build["built"].as_u64().unwrap());
    // Every failure is in one cause group.
    let failed = shaders.iter().filter(|s| s["status"] != "built").count() as u64;
    assert_eq!(sum(&r["failures"]), failed);
    let causes: Vec<&str> = r["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["cause"].as_str().unwrap())
        .collect();
    // The demo's geometry and tessellation shaders are built lowered: no stage refusals.
    assert!(!causes.contains(&"stage_not_in_metal"), "{causes:?}");
    // One Metal argument per guest slot: no binding mismatches are left in the demo.
    assert!(!causes.contains(&"binding_mismatch"), "{causes:?}");
    // The demo's geometry and tessellation shaders are listed.
    let gt = shaders
        .iter()
        .filter(|s| {
            ["geometry", "tess_control", "tess_eval"].contains(&s["stage"].as_str().unwrap())
        })
        .count();
    let listed = r["not_in_metal"].as_array().unwrap();
    assert_eq!(listed.len(), gt);
    assert!(gt > 0);
    assert!(
        listed.iter().all(|n| n["note"] == "built lowered"),
        "{listed:?}"
    );
    assert_eq!(r["unresolved_bindings"].as_array().unwrap().len(), 0);
    // Markdown and a self-contained page.
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        md.contains("## Failures by cause") && md.contains("| reached MSL |"),
        "{md}"
    );
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("<svg"));
    for bad in [
        "http:", "https:", "//", "src=", "href=", "<script", "<link", "url(", "@import",
    ] {
        assert!(!html.contains(bad), "report.html contains {bad:?}");
    }
    // --strict: every demo key builds, so the same build succeeds; the records are the same.
    let game = demo_game();
    assert_eq!(build["failed"].as_u64(), Some(0), "every demo key builds");
    let o = dmsh(&build_args(&out, &game, &["--strict"]));
    assert_eq!(o.status.code(), Some(0), "--strict without failing shaders");
    let again: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(b.join("_b_build.json")).unwrap()).unwrap();
    assert_eq!(again, build);

    // Bad input: one compute shader's instructions overwritten with words no form matches,
    // one vertex shader's code cut short. Those two keys fail, with their causes; the rest
    // build as before.
    let built_key = |stage: &str| {
        shaders
            .iter()
            .find(|s| s["stage"] == stage && s["status"] == "built")
            .unwrap()["key"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (compute, vertex) = (built_key("compute"), built_key("vertex"));
    let code = |k: &str| out.join("pkg").join(format!("{k}.code"));
    let mut bytes = std::fs::read(code(&compute)).unwrap();
    let end = bytes.len().min(0x140);
    bytes[0x100..end].fill(0xff);
    std::fs::write(code(&compute), bytes).unwrap();
    std::fs::write(code(&vertex), [0u8; 10]).unwrap();
    let o = dmsh(&build_args(&out, &game, &[]));
    assert!(o.status.success(), "bad input fails keys, not the build");
    // --strict: now a failing run.
    let o = dmsh(&build_args(&out, &game, &["--strict"]));
    assert_eq!(o.status.code(), Some(1), "--strict with failing shaders");
    let o = dmsh(&["report", "--split", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let group = |cause: &str| {
        r["failures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["cause"] == cause)
            .unwrap_or_else(|| panic!("no {cause} group"))
            .clone()
    };
    assert_eq!(
        group("unknown_encoding")["examples"][0]["key"],
        compute.as_str()
    );
    assert_eq!(
        group("translation_error")["examples"][0]["key"],
        vertex.as_str()
    );
    let levels = r["levels"].as_array().unwrap();
    assert_eq!(
        levels[4]["count"].as_u64(),
        Some(build["built"].as_u64().unwrap() - 2)
    );
    let _ = std::fs::remove_dir_all(&out);
}
