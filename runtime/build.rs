//! Rebuilds the library when the compiled-in chain version (`DMSH_CHAIN`, docs/runtime.md)
//! changes.

fn main() {
    println!("cargo:rerun-if-env-changed=DMSH_CHAIN");
}
