//! The C example host (`tests/c/example_host.c`), compiled with the system C compiler
//! (`$CC`, else `cc`) against `include/dmsh_runtime.h` and linked with the static library:
//! the header's structs have the Rust layout, it declares exactly the library's functions,
//! and the example walks the built demo title printing exactly what the JSON says.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use dmsh_runtime::abi::{Binding, Io, Lowering, OpenParams, Range, Shader, WarmRow};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Compiles the example once; `None` (with a message) when there is no C compiler.
fn example() -> Option<PathBuf> {
    static E: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    E.get_or_init(|| {
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
        if Command::new(&cc).arg("--version").output().is_err() {
            println!("SKIP: no C compiler ({cc})");
            return None;
        }
        let lib_dir = std::env::current_exe()
            .unwrap()
            .parent()?
            .parent()?
            .to_path_buf();
        let lib = lib_dir.join("libdmsh_runtime.a");
        assert!(
            lib.is_file(),
            "{} not built: `cargo build --release -p dmsh-runtime` (scripts/test does) makes it",
            lib.display()
        );
        let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dmsh-rt-example");
        let mut c = Command::new(&cc);
        c.args([
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-O1",
            "-I",
        ])
        .arg(root().join("include"))
        .arg(root().join("tests/c/example_host.c"))
        .arg(&lib)
        .arg("-o")
        .arg(&out);
        if cfg!(target_os = "linux") {
            c.args(["-lpthread", "-ldl", "-lm"]);
        }
        let o = c.output().expect("the C compiler runs");
        assert!(
            o.status.success(),
            "{cc} failed:\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        println!("compiled {} with {cc}", out.display());
        Some(out)
    })
    .clone()
}

macro_rules! layout {
    ($out:ident, $t:ident, $c:literal, [$($f:ident),*]) => {
        $out.push(format!("size {} {}", $c, std::mem::size_of::<$t>()));
        $( $out.push(format!("offset {}.{} {}", $c, stringify!($f), std::mem::offset_of!($t, $f))); )*
    };
}

#[test]
fn the_header_has_the_rust_layout() {
    let Some(ex) = example() else { return };
    let o = Command::new(&ex).arg("layout").output().unwrap();
    assert!(o.status.success());
    let got = String::from_utf8(o.stdout).unwrap();
    let mut want: Vec<String> = Vec::new();
    layout!(
        want,
        Binding,
        "DmshBinding",
        [
            kind,
            slot,
            guest_offset,
            vk_binding,
            metal_index,
            metal_sampler,
            count,
            flags,
            read_first,
            read_count,
            size
        ]
    );
    layout!(want, Range, "DmshRange", [start, end]);
    layout!(want, Io, "DmshIo", [location, component_type, index]);
    layout!(
        want,
        Shader,
        "DmshShader",
        [
            key,
            stage,
            flags,
            library_path,
            source_path,
            entry_gl,
            entry_zero_one,
            bindings,
            reads,
            inputs,
            outputs,
            binding_count,
            read_count,
            input_count,
            output_count,
            metal_buffers,
            metal_textures,
            metal_samplers,
            local_size,
            shared_bytes,
            local_bytes,
            lowering
        ]
    );
    layout!(
        want,
        Lowering,
        "DmshLowering",
        [
            pass,
            record_bytes,
            input_vertices,
            invocations,
            max_vertices,
            output,
            indices_per_invocation,
            topologies,
            local_size,
            primitive_id_location,
            control_points,
            factor_bytes,
            patch_bytes,
            tess_domain,
            tess_spacing,
            tess_output
        ]
    );
    layout!(
        want,
        OpenParams,
        "DmshOpenParams",
        [
            size,
            flags,
            shader_map,
            library_dir,
            c1_list,
            chain,
            pso_manifest,
            pso_user
        ]
    );
    layout!(
        want,
        WarmRow,
        "DmshWarmRow",
        [
            kind,
            list,
            line,
            depth,
            shader,
            fragment,
            entry,
            fragment_entry,
            state,
            state_len
        ]
    );
    let got: Vec<&str> = got.lines().collect();
    assert_eq!(got, want);
    println!("{} sizes and offsets agree", want.len());
}

/// Names of `dmsh_*` functions: declared in the header / defined in src/ffi.rs.
fn names(text: &str, marker: &str) -> BTreeSet<String> {
    text.match_indices(marker)
        .filter_map(|(i, _)| {
            let rest = &text[i + marker.len()..];
            let n = rest.find('(')?;
            let name = rest[..n].trim();
            let start = name.rfind(|c: char| !(c.is_alphanumeric() || c == '_'));
            let name = start.map_or(name, |s| &name[s + 1..]);
            name.starts_with("dmsh_").then(|| name.to_string())
        })
        .collect()
}

#[test]
fn the_header_declares_exactly_the_library_functions() {
    let h = std::fs::read_to_string(root().join("include/dmsh_runtime.h")).unwrap();
    let rs = std::fs::read_to_string(root().join("src/ffi.rs")).unwrap();
    let declared: BTreeSet<String> = h
        .lines()
        .filter(|l| !l.trim_start().starts_with("/*") && !l.trim_start().starts_with('*'))
        .flat_map(|l| names(l, " "))
        .chain(h.lines().flat_map(|l| names(l, "*")))
        .filter(|n| h.contains(&format!("{n}(")))
        .collect();
    let defined = names(&rs, "extern \"C\" fn ");
    assert_eq!(declared, defined);
    println!("{} functions: {defined:?}", defined.len());
}

#[test]
fn the_c_example_walks_the_demo_title() {
    let Some(ex) = example() else { return };
    let Some(d) = common::demo() else { return };
    let w = common::demo_warm(d, "warm-c");
    let o = Command::new(&ex)
        .arg(d.map())
        .arg(&d.split)
        .arg(&d.chain)
        .arg(&w.seed)
        .arg(&w.device)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    println!("{}", err.lines().last().unwrap_or(""));
    assert!(o.status.success(), "{err}");
    let got = String::from_utf8(o.stdout).unwrap();
    let want = common::expected_demo_dump(d) + &common::expected_demo_variants(d) + &w.expected;
    for (g, e) in got.lines().zip(want.lines()) {
        assert_eq!(g, e);
    }
    assert_eq!(got, want);
    // The host appended an S row of the map's first key (unless the list held it).
    let first = &d.keys()[0];
    let row = format!("S\t{first}\n");
    let listed = w.device_text.contains(&format!("\n{row}"));
    let after = std::fs::read_to_string(&w.device).unwrap();
    if listed {
        assert_eq!(after, w.device_text);
    } else {
        assert_eq!(after, w.device_text + &row);
    }
    assert!(
        err.contains("warm-up list 0: ") && err.contains("lines skipped"),
        "{err}"
    );
    // `dmsh demo` wrote the title's c1_full.tsv next to the map: no c1 status to report.
    assert!(!err.contains("c1: "), "{err}");
}
