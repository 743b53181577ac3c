//! Which decoded instruction shapes the execution and render tests run (issue 9, item 9).
//!
//! A *shape* is an instruction as nvdisasm prints it with register numbers, predicate numbers
//! and numbers abstracted (`F2F.F16.F16 R, -R.H1`, `I2F.F32.U16 R, R.H1`, `RED.E.MIN.S64 [R+N], R`):
//! the full mnemonic with every modifier, and each operand's kind with its own modifiers
//! (`|R|`, `-R`, `.H1`, `.B2`, `c[N][N]`, immediates). The universe is every shape in the
//! corpus's sm53 binaries (tests/corpus: sass, extra, extra/sm86/forms' sm53 builds, modifiers,
//! dksh, nak); *executed* are
//! the shapes of the shaders that the exec and render tests run on lavapipe and compare with an
//! independent reference (sass kernels with an io.json, dksh compute cases, render pairs;
//! those needing 32-lane subgroups run through the workgroup-memory warp emulation:
//! `sass_warp_emulated_exec`, `dksh_warp_emulated_exec`). A shape's presence in a run
//! shader is what is counted (not whether a branch reached it).
//!
//! The figure is printed; the shapes no test executes are listed in `docs/exec-coverage.md`,
//! which this test checks is current (`DMSH_BLESS=1` rewrites it).

#[path = "../../spv/tests/common/mod.rs"]
mod spv_common;

use dmsh_testsupport::reference::{dksh, dksh_render};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Replaces register and predicate numbers and numbers by `R`, `P` and `N`, drops the guard
/// predicate and `.reuse`.
fn shape(text: &str) -> String {
    let t = text
        .trim()
        .trim_end_matches(';')
        .trim()
        .replace(".reuse", "");
    let t = match t.strip_prefix('@') {
        Some(rest) => rest.split_once(' ').map_or("", |x| x.1).to_string(),
        None => t,
    };
    let c: Vec<char> = t.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    let word = |ch: char| ch.is_ascii_alphanumeric() || ch == '_';
    while i < c.len() {
        let starts = i == 0 || !(word(c[i - 1]) || c[i - 1] == '.');
        if starts
            && (c[i] == 'R' || c[i] == 'P')
            && c.get(i + 1).is_some_and(|d| d.is_ascii_digit())
        {
            out.push(c[i]);
            i += 1;
            while i < c.len() && c[i].is_ascii_digit() {
                i += 1;
            }
            continue;
        }
        // Texture geometries (1D, 2D, 3D, 2DMS) are names, not numbers.
        let geometry = matches!(c[i], '1'..='3')
            && c.get(i + 1) == Some(&'D')
            && !c.get(i + 2).is_some_and(|x| x.is_ascii_hexdigit());
        if geometry {
            out.push(c[i]);
            out.push('D');
            i += 2;
            continue;
        }
        // A number starts a token; digits after a letter or a dot belong to a name or a
        // modifier (`.F16`, `.64`, `.128`, `SR_CTAID.X`).
        if c[i].is_ascii_digit() && (i == 0 || !(word(c[i - 1]) || c[i - 1] == '.')) {
            out.push('N');
            while i < c.len()
                && (c[i].is_ascii_hexdigit()
                    || c[i] == 'x'
                    || c[i] == '.'
                    || ((c[i] == '+' || c[i] == '-') && matches!(c[i - 1], 'e' | 'E')))
            {
                i += 1;
            }
            continue;
        }
        out.push(c[i]);
        i += 1;
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The shapes of a code stream (instructions from byte 0); undecodable words are skipped
/// (the decoder's own corpus test accounts for them).
fn shapes_of(code: &[u8], into: &mut BTreeSet<String>) {
    for (off, r, _) in dmsh_isa::stream::instructions(code) {
        if let Ok(i) = r {
            into.insert(shape(&i.print(off, 0)));
        }
    }
}

/// Instructions of a uam / NAK program: graphics code areas start with the 0x50-byte SPH.
fn program_code(name: &str, code: &[u8]) -> Vec<u8> {
    let graphics = [".vert", ".frag", ".geom", ".tesc", ".tese"]
        .iter()
        .any(|s| name.contains(s));
    if graphics {
        code.get(0x50..).unwrap_or(&[]).to_vec()
    } else {
        code.to_vec()
    }
}

fn files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().ends_with(suffix))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Every shape of the corpus's sm53 programs, with the first file it occurs in.
fn universe(root: &Path) -> BTreeMap<String, String> {
    let mut all = BTreeMap::new();
    let mut add = |name: String, code: Vec<u8>| {
        let mut s = BTreeSet::new();
        shapes_of(&code, &mut s);
        for k in s {
            all.entry(k).or_insert_with(|| name.clone());
        }
    };
    let c = root.join("tests/corpus");
    for set in [
        "sass",
        "extra/ptx",
        "modifiers",
        "extra/glsl",
        "extra/sm86/forms",
    ] {
        for p in files(&c.join(set), ".sm53.bin") {
            add(
                format!("{set}/{}", p.file_name().unwrap().to_string_lossy()),
                std::fs::read(&p).unwrap(),
            );
        }
    }
    for p in files(&c.join("dksh"), ".dksh") {
        let prog = dmsh_ir::lift::dksh::parse(&std::fs::read(&p).unwrap()).unwrap();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        add(format!("dksh/{name}"), program_code(&name, &prog.code));
    }
    for p in files(&c.join("nak"), ".sm53.code.bin") {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        add(
            format!("nak/{name}"),
            program_code(&name, &std::fs::read(&p).unwrap()),
        );
    }
    all
}

/// The shapes of the shaders the exec and render tests run on a device with 8-lane subgroups.
fn executed(root: &Path) -> (BTreeSet<String>, usize) {
    let mut s = BTreeSet::new();
    let mut shaders = 0;
    // sass / modifier / video kernels with an io.json (translate_sass_exec.rs).
    let io = |n: &str| {
        ["sass", "video", "modifiers"]
            .iter()
            .any(|d| root.join(format!("tests/corpus/{d}/{n}.io.json")).exists())
    };
    let mut kernels: Vec<(String, PathBuf)> = spv_common::sass_kernels();
    kernels.extend(spv_common::modifier_kernels());
    for n in ["x_vset_imm", "x_video_imm"] {
        kernels.push((
            n.into(),
            root.join(format!("tests/corpus/extra/ptx/{n}.sm53.cubin")),
        ));
    }
    // Forms kernels built for sm53 too run against their io.json (extra_sm86_exec.rs).
    let forms = root.join("tests/corpus/extra/sm86/forms");
    for p in files(&forms, ".sm53.cubin") {
        let n = p.file_name().unwrap().to_string_lossy();
        let n = n.trim_end_matches(".sm53.cubin").to_string();
        if forms.join(format!("{n}.io.json")).exists() {
            let c = dmsh_cubin::read(&p).unwrap();
            shapes_of(&c.kernel(&n).unwrap().code, &mut s);
            shaders += 1;
        }
    }
    for (name, cubin) in kernels.iter().filter(|(n, _)| io(n)) {
        let c = dmsh_cubin::read(cubin).unwrap();
        let k = c.kernel(name).unwrap();
        shapes_of(&k.code, &mut s);
        shaders += 1;
    }
    let dir = dksh::corpus_dir();
    // dksh compute cases (translate_dksh_exec.rs).
    for case in dksh::cases(&dir) {
        // The one warp-dependent case runs through the warp emulation against a CPU model
        // (translate_dksh_exec.rs, `dksh_warp_emulated_exec`).
        if case.unsupported.is_some() || (case.warp_ops && case.name != "cs_subgroup_ballot") {
            continue;
        }
        let p = dir.join(format!("{}.comp.dksh", case.name));
        let prog = dmsh_ir::lift::dksh::parse(&std::fs::read(&p).unwrap()).unwrap();
        shapes_of(&prog.code, &mut s);
        shaders += 1;
    }
    // Vertex + fragment pairs drawn against glslang (graphics_render.rs).
    let mut drawn = BTreeSet::new();
    for case in dksh_render::cases(&dir) {
        if case.unsupported.is_some() {
            continue;
        }
        for side in [&case.vertex, &case.fragment] {
            if let dksh_render::Side::Corpus(n) = side {
                drawn.insert(n.clone());
            }
        }
    }
    for n in drawn {
        let prog =
            dmsh_ir::lift::dksh::parse(&std::fs::read(dir.join(format!("{n}.dksh"))).unwrap())
                .unwrap();
        shapes_of(&program_code(&n, &prog.code), &mut s);
        shaders += 1;
    }
    (s, shaders)
}

/// docs/exec-coverage.md's text.
fn report(all: &BTreeMap<String, String>, run: &BTreeSet<String>, shaders: usize) -> String {
    let done = all.keys().filter(|k| run.contains(*k)).count();
    // mnemonic → (shapes executed, [(shape not executed, first file)])
    type Row<'a> = (usize, Vec<(&'a str, &'a str)>);
    let mut by_mn: BTreeMap<&str, Row> = BTreeMap::new();
    for (k, file) in all {
        let mn = k.split(['.', ' ']).next().unwrap_or("");
        let e = by_mn.entry(mn).or_default();
        if run.contains(k) {
            e.0 += 1;
        } else {
            e.1.push((k, file));
        }
    }
    let mut md = String::new();
    md.push_str("# Instruction shapes the execution tests do not run\n\n");
    md.push_str(
        "Generated by `tools/cli/tests/exec_coverage.rs` (`DMSH_BLESS=1 cargo test --release -p \
         dmsh-cli --test exec_coverage` rewrites it; the test fails when it is stale). A *shape* is \
         an instruction as nvdisasm prints it with register numbers, predicates and numbers \
         abstracted: the full mnemonic with its modifiers and each operand's kind with its own \
         modifiers (`|R|`, `-R`, `.H1`, `.B2`). *Executed* shapes occur in a shader that an exec or \
         render test runs on lavapipe against an independent reference (sass kernels with an \
         io.json, dksh compute cases, vertex + fragment render pairs; those needing 32-lane \
         subgroups through the workgroup-memory warp emulation). The universe is every sm53 \
         program of tests/corpus.\n\n",
    );
    md.push_str(&format!(
        "**{done} of {} shapes executed ({:.1} %)**, by {shaders} shaders.\n\n",
        all.len(),
        100.0 * done as f64 / all.len().max(1) as f64
    ));
    md.push_str("| mnemonic | executed | not executed | shapes not executed (first file) |\n|---|---|---|---|\n");
    for (mn, (n, missing)) in &by_mn {
        let list: Vec<String> = missing
            .iter()
            .map(|(k, f)| format!("`{}` ({f})", k.replace('|', "\\|")))
            .collect();
        md.push_str(&format!(
            "| {mn} | {n} | {} | {} |\n",
            missing.len(),
            list.join("<br>")
        ));
    }
    md
}

#[test]
fn exec_coverage() {
    let root = spv_common::root();
    let all = universe(&root);
    let (run, shaders) = executed(&root);
    let done = all.keys().filter(|k| run.contains(*k)).count();
    println!(
        "exec coverage: {done} of {} instruction shapes executed by {shaders} shaders ({:.1} %)",
        all.len(),
        100.0 * done as f64 / all.len().max(1) as f64
    );
    // Issue 9's defects sit in shapes no test ran before; the modifier kernels run them now.
    for must in [
        "F2F.F16.F16 R, |R|",
        "F2F.F16.F16 R, -R.H1",
        "I2F.F32.U16 R, R.H1",
        "I2I.S8.S16.SAT R, R.H1",
        "RED.E.MIN.S64 [R], R",
    ] {
        assert!(all.contains_key(must), "{must} is not in the corpus");
        assert!(run.contains(must), "{must} is not executed");
    }
    let md = report(&all, &run, shaders);
    let doc = root.join("docs/exec-coverage.md");
    if std::env::var_os("DMSH_BLESS").is_some() {
        std::fs::write(&doc, &md).unwrap();
    }
    let committed = std::fs::read_to_string(&doc).unwrap_or_default();
    assert!(
        committed == md,
        "docs/exec-coverage.md is stale: DMSH_BLESS=1 cargo test --release -p dmsh-cli --test exec_coverage"
    );
}

#[test]
fn shapes_abstract_numbers_not_modifiers() {
    for (line, want) in [
        ("F2F.F16.F16 R7, -R8.H1 ;", "F2F.F16.F16 R, -R.H1"),
        (
            "@!P0 IADD R2.CC, R4.reuse, c[0x0][0x148] ;",
            "IADD R.CC, R, c[N][N]",
        ),
        ("I2F.F32.U8 R13, R0.B1", "I2F.F32.U8 R, R.B1"),
        (
            "FMUL32I R0, R1, 4.29496678400000000000e+09",
            "FMUL32I R, R, N",
        ),
        (
            "ISETP.NE.U32.AND P0, PT, R8, RZ, !P0",
            "ISETP.NE.U32.AND P, PT, R, RZ, !P",
        ),
        ("RED.E.MIN.S64 [R6+0x40], R2", "RED.E.MIN.S64 [R+N], R"),
        ("S2R R0, SR_TID.X", "S2R R, SR_TID.X"),
        (
            "ATOM.E.CAS.64 R4, [R2+0x8], R6, R8",
            "ATOM.E.CAS.64 R, [R+N], R, R",
        ),
        ("FADD R0, R1, -0.5", "FADD R, R, -N"),
        ("SULD.D.2DMS.P R0, [R2], 0x3", "SULD.D.2DMS.P R, [R], N"),
        (
            "TEXS.NODEP.LZ R2, R0, R0, R2, 0x52, 2D, RGBA",
            "TEXS.NODEP.LZ R, R, R, R, N, 2D, RGBA",
        ),
    ] {
        assert_eq!(shape(line), want, "{line}");
    }
}
