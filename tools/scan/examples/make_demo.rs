//! Regenerates the demo title in `games/demo/` (romfs/ and exefs/main) from tests/corpus.
//! Usage: `cargo run -p dmsh-scan --example make_demo [-- OUT_DIR]` (default: games/demo).
//! Tests check that the committed files equal what this writes.

#[path = "../tests/support/mod.rs"]
mod support;

fn main() {
    let out = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| support::repo_root().join("games/demo"));
    for sub in ["romfs", "exefs"] {
        let _ = std::fs::remove_dir_all(out.join(sub));
    }
    let demo = support::demo::build(&out);
    let mut keys: Vec<String> = demo.shaders.iter().map(|(_, b)| b.key()).collect();
    keys.sort();
    keys.dedup();
    println!(
        "wrote {} files to {}: {} shaders put in, {} unique keys, {} pairs",
        demo.files.len(),
        out.display(),
        demo.shaders.len(),
        keys.len(),
        demo.pairs.len()
    );
}
