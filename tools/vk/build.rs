//! Links Khronos' SPIR-V validator (SPIRV-Tools' static library, Debian's `spirv-tools`
//! package) when it is installed, so that `dmsh_vk::spirv_val` validates in this process
//! instead of starting a `spirv-val` process per module (about 2.5 ms of CPU each, most of a
//! small module's validation). Found through pkg-config (`SPIRV-Tools`); without it, or with
//! `DMSH_NO_LINKED_SPIRV_TOOLS` set, the crate runs the `spirv-val` program as before.

use std::path::PathBuf;
use std::process::Command;

fn pkg_config(args: &[&str]) -> Option<String> {
    let o = Command::new("pkg-config").args(args).output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

fn main() {
    println!("cargo:rustc-check-cfg=cfg(dmsh_spirv_tools)");
    println!("cargo:rerun-if-env-changed=DMSH_NO_LINKED_SPIRV_TOOLS");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    // Installing the package changes pkg-config's folders: look again then.
    if let Some(path) = pkg_config(&["--variable", "pc_path", "pkg-config"]) {
        for d in path.split(':').filter(|d| std::path::Path::new(d).is_dir()) {
            println!("cargo:rerun-if-changed={d}");
        }
    }
    if std::env::var_os("DMSH_NO_LINKED_SPIRV_TOOLS").is_some() {
        return;
    }
    let target = std::env::var("TARGET").unwrap_or_default();
    let host = std::env::var("HOST").unwrap_or_default();
    if target != host {
        return;
    }
    let Some(libdir) = pkg_config(&["--variable", "libdir", "SPIRV-Tools"]) else {
        return;
    };
    let lib = PathBuf::from(&libdir).join("libSPIRV-Tools.a");
    if !lib.is_file() {
        return;
    }
    println!("cargo:rustc-link-search=native={libdir}");
    println!("cargo:rustc-link-lib=static=SPIRV-Tools");
    println!(
        "cargo:rustc-link-lib={}",
        if target.contains("apple") {
            "c++"
        } else {
            "stdc++"
        }
    );
    println!("cargo:rustc-cfg=dmsh_spirv_tools");
}
