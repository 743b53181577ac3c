//! The child-process harness of the exec tests: each case runs in a child process of the test
//! binary (lavapipe has no fault isolation) and reports one `RESULT …` line — `pass`,
//! `skip …`, or anything else for a failure.

use std::process::Command;

pub use crate::known::assert_only_known;

/// The outcomes of one child run per case.
pub struct ChildRuns {
    /// Cases that printed `RESULT pass`.
    pub pass: usize,
    /// Cases that printed `RESULT skip …`.
    pub skip: usize,
    /// The other cases: (name, their result line cut to 300 characters).
    pub bad: Vec<(String, String)>,
}

/// Runs the ignored test `test` of this test binary once per name in `names`, each in a child
/// process with the environment variable `env` set to the name; prints `NAME: RESULT` lines
/// and counts them (a child that prints no result line failed: `error crashed (STATUS)`).
pub fn run_children(test: &str, env: &str, names: &[String]) -> ChildRuns {
    let exe = std::env::current_exe().expect("test binary");
    let mut runs = ChildRuns {
        pass: 0,
        skip: 0,
        bad: Vec::new(),
    };
    for name in names {
        let out = Command::new(&exe)
            .args([
                "--ignored",
                "--exact",
                test,
                "--nocapture",
                "--test-threads=1",
            ])
            .env(env, name)
            .output()
            .expect("spawn child");
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .find_map(|l| l.find("RESULT ").map(|i| &l[i + 7..]))
            .map(str::to_string)
            .unwrap_or_else(|| format!("error crashed ({})", out.status));
        let short: String = line.chars().take(300).collect();
        println!("{name}: {short}");
        if line == "pass" {
            runs.pass += 1;
        } else if line.starts_with("skip") {
            runs.skip += 1;
        } else {
            runs.bad.push((name.clone(), short));
        }
    }
    runs
}

/// In the child process: runs the case that the environment variable `env` names with
/// `run_one` and prints its `RESULT` line (nothing when `env` is unset).
pub fn run_named(env: &str, run_one: impl FnOnce(&str) -> String) {
    if let Ok(name) = std::env::var(env) {
        println!("RESULT {}", run_one(&name));
    }
}

/// The result of a case that ran and was compared: `pass` without `mismatches`, else `fail`
/// and the mismatches joined by `; `.
pub fn verdict(mismatches: &[impl std::fmt::Display]) -> String {
    if mismatches.is_empty() {
        return "pass".into();
    }
    let m: Vec<String> = mismatches.iter().map(|x| x.to_string()).collect();
    format!("fail {}", m.join("; "))
}

/// The result of a case whose run failed: `skip …` where the device cannot run it (warp size,
/// a missing feature), else `error run: …`.
pub fn run_failed(e: &dmsh_vk::Error) -> String {
    if e.is_skip() {
        format!("skip {e}")
    } else {
        format!("error run: {e}")
    }
}

/// The result of running translated kernel `words` (with its translator's `reflection`) on
/// its io.json launch: `pass`, `fail …` (the mismatches), `skip …`, or `error …` naming the
/// step (reflection, job, run, check).
pub fn io_verdict(
    io: &dmsh_vk::io_json::IoJson,
    words: Vec<u32>,
    reflection: &dmsh_spv::Reflection,
    param_base: u32,
) -> String {
    let refl = match dmsh_vk::Reflection::from_json(&reflection.to_json()) {
        Ok(r) => r,
        Err(e) => return format!("error reflection: {e}"),
    };
    let job = match io.job(words, refl, param_base) {
        Ok(j) => j,
        Err(e) => return format!("error job: {e}"),
    };
    match dmsh_vk::run_compute(&job) {
        Ok(o) => match io.check(&o) {
            Ok(m) => verdict(&m),
            Err(e) => format!("error check: {e}"),
        },
        Err(e) => run_failed(&e),
    }
}
