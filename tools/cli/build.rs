//! Embeds a hash of the translator's own sources (`DMSH_SOURCES_SHA256`): the chain version
//! of `dmsh build` changes whenever any of them does (docs/build.md).

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Folders of the CLI that no output of `dmsh build` depends on: the coverage report reads
/// builds, it does not make them, so changing it must not move the chain version.
const OFF_CHAIN: [&str; 1] = ["cli/src/cmd/report"];

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if OFF_CHAIN.iter().any(|o| p.ends_with(o)) {
            continue;
        }
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut all = Vec::new();
    // Everything on the chain from bytes to MSL, and the CLI that wires it.
    for c in [
        "formats", "reflect", "scan", "isa", "ir", "spv", "fixup", "msl", "cli",
    ] {
        let d = tools.join(c);
        println!("cargo:rerun-if-changed={}", d.display());
        for sub in ["src", "build.rs", "Cargo.toml"] {
            let p = d.join(sub);
            if p.is_dir() {
                files(&p, &mut all);
            } else if p.is_file() {
                all.push(p);
            }
        }
    }
    all.sort();
    let mut h = Sha256::new();
    for p in &all {
        let rel = p.strip_prefix(&tools).unwrap_or(p);
        h.update(rel.to_string_lossy().as_bytes());
        h.update([0]);
        h.update(std::fs::read(p).unwrap_or_default());
        h.update([0]);
    }
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    println!("cargo:rustc-env=DMSH_SOURCES_SHA256={hex}");
}
