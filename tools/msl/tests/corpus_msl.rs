//! Every corpus shader goes SPIR-V → MSL: the sm53 kernels of tests/corpus/sass (CUDA ABI),
//! the deko3d compute shaders of tests/corpus/dksh, and the graphics programs of
//! tests/corpus/dksh, tests/corpus/extra/glsl and ../shared/corpus/external (when present).
//! Each must reach MSL (or be in `KNOWN` with the reason) and `check_bindings` must find
//! nothing. One line per shader with SPIRV-Cross's time; totals per set; the MSL files that
//! use `double` (Metal has none) are counted and listed. Every MSL file also goes through the
//! clang stand-in check (`dmsh_msl::syntax`, skipped without clang): it must pass, or be
//! rejected for `double` only, or be in `KNOWN_SYNTAX`. `DMSH_MSL_OUT=dir` writes the MSL.

#[path = "../../spv/tests/common/mod.rs"]
mod common;

use dmsh_ir::lift::dksh;
use dmsh_msl::syntax::{self, SyntaxError};
use dmsh_msl::{check_bindings, to_msl, Error, MslOptions, Platform};
use dmsh_spv::lower::{Form, Pass};
use dmsh_spv::{translate, translate_graphics, F64Mode, FmaMode, Options, Output, Resource};
use rayon::prelude::*;
use std::time::Instant;

/// Stages that are refused before SPIRV-Cross, with the reason: Metal has no geometry stage,
/// and runs tessellation differently (the control stage as a compute kernel, the evaluation
/// stage as a post-tessellation vertex function); a later step lowers them.
const KNOWN_STAGES: &[(&str, &str)] = &[
    ("geometry", "Metal has no geometry stage"),
    ("tess_control", "Metal tessellation is not built yet"),
    ("tess_eval", "Metal tessellation is not built yet"),
];

/// Shaders that do not reach MSL, or whose MSL disagrees with the reflection, with the cause.
const KNOWN: &[(&str, &str)] = &[(
    "sass/atomics_global",
    "SPIRV-Cross: \"MSL currently does not support 64-bit atomics\" (ATOM.64 / RED.64; \
         Metal has 64-bit min/max on some families only)",
)];

/// MSL files the clang stand-in check rejects for a reason other than `double`, with the
/// cause: real problems of our MSL, not gaps of the stand-in.
const KNOWN_SYNTAX: &[(&str, &str)] = &[];

/// With the build's options (`FmaMode::Native`, `F64Mode::Soft`), the MSL files that still
/// use `double`, which Metal does not have: none. (With native f64 there were 15: f64 guest
/// code, and f64 in the translation of conversions, directed rounding and division.) The
/// clang stand-in check would reject them.
const DOUBLE_WITH_NATIVE_FMA: &[&str] = &[];

/// Whether every error of `d` is the stand-in's refusal of `double` (the type, or an `lf`
/// literal).
fn only_double(d: &syntax::Diagnostics) -> bool {
    d.errors
        .iter()
        .all(|e| e.message.contains("__metal_has_no_double") || e.message.contains("suffix 'lf'"))
}

/// The clang stand-in check of every (id, MSL) in `msl`, in parallel: one line per file
/// that does not pass, then the totals. Returns the ids rejected for `double` only, and
/// the unexpected results (a rejection not in `known`, or a `known` entry that passes).
/// Empty lists, after a message, when clang is absent.
fn standin_check(msl: &[(String, String)], known: &[(&str, &str)]) -> (Vec<String>, Vec<String>) {
    if let Err(e) = syntax::clang() {
        println!("clang stand-in check skipped: {e}");
        return (Vec::new(), Vec::new());
    }
    let start = Instant::now();
    let results: Vec<_> = msl.par_iter().map(|(_, src)| syntax::check(src)).collect();
    let secs = start.elapsed().as_secs_f64();
    let (mut passed, mut doubles, mut unexpected) = (0, Vec::new(), Vec::new());
    for ((id, _), r) in msl.iter().zip(&results) {
        let why = known.iter().find(|k| k.0 == id).map(|k| k.1);
        match (r, why) {
            (Ok(()), None) => passed += 1,
            (Ok(()), Some(_)) => unexpected.push(format!("{id}: in KNOWN_SYNTAX but passes")),
            (Err(SyntaxError::Rejected(d)), _) if only_double(d) => {
                println!("double {id}: {}", d.errors[0].message);
                doubles.push(id.clone());
            }
            (Err(SyntaxError::Rejected(d)), Some(why)) => println!("known {id}: {d} [{why}]"),
            (Err(e), _) => {
                println!("FAIL {id}: clang stand-in: {e}");
                unexpected.push(format!("{id}: {e}"));
            }
        }
    }
    println!(
        "clang stand-in: {passed} of {} MSL files pass, {} rejected for `double`, {} known; \
         {secs:.1} s",
        msl.len(),
        doubles.len(),
        msl.len() - passed - doubles.len() - unexpected.len()
    );
    (doubles, unexpected)
}

/// One translated corpus shader.
struct Case {
    set: &'static str,
    name: String,
    out: Result<Output, String>,
}

fn sass_cases(opts: &Options) -> Vec<Case> {
    common::sass_kernels()
        .into_iter()
        .map(|(name, path)| {
            let cubin = dmsh_cubin::read(&path).expect("cubin");
            let k = cubin.kernel(&name).expect("kernel");
            let ls = common::io_block(&name).unwrap_or([32, 1, 1]);
            let cfg = common::cuda_config(k, ls);
            let out = translate(&k.code, &cfg, opts).map_err(|e| e.to_string());
            Case {
                set: "sass",
                name,
                out,
            }
        })
        .collect()
}

fn dksh_compute_cases(opts: &Options) -> Vec<Case> {
    common::dksh_compute()
        .into_iter()
        .map(|(name, code, ls, shared, local)| {
            let cfg = common::deko3d_config(ls, shared, local);
            let out = translate(&code, &cfg, opts).map_err(|e| e.to_string());
            Case {
                set: "dksh compute",
                name: format!("{name}.comp"),
                out,
            }
        })
        .collect()
}

fn graphics_cases(opts: &Options) -> Vec<Case> {
    let sets = ["dksh graphics", "extra glsl", "external"];
    let mut v = Vec::new();
    for (set, dir) in sets.into_iter().zip(common::graphics_corpus_dirs()) {
        let mut files = Vec::new();
        common::dksh_files(&dir, &mut files);
        for p in files {
            let bytes = std::fs::read(&p).expect("dksh");
            let key = p.file_name().unwrap().to_string_lossy().to_string();
            let rel = p
                .strip_prefix(&dir)
                .unwrap_or(&p)
                .to_string_lossy()
                .to_string();
            let name = rel.trim_end_matches(".dksh").to_string();
            let out = dksh::parse(&bytes).and_then(|prog| {
                if prog.stage == dmsh_ir::Stage::Compute {
                    return Err("compute".into());
                }
                let cfg = common::deko3d_graphics_config(&prog, &key)?;
                translate_graphics(&prog.code, &cfg, opts).map_err(|e| e.to_string())
            });
            if out.as_ref().is_err_and(|e| e == "compute") {
                continue;
            }
            let stage = dksh::parse(&bytes).map(|p| p.stage).ok();
            v.push(Case {
                set,
                name: name.clone(),
                out,
            });
            // The lowered pipelines' passes Metal runs (docs/geometry.md,
            // docs/tessellation.md).
            let forms: &[(Form, &str)] = match stage {
                Some(dmsh_ir::Stage::Geometry) => &[
                    (Form::Lowered(Pass::GeometryKernel), "kernel"),
                    (Form::Lowered(Pass::GeometryDraw), "draw"),
                ],
                Some(dmsh_ir::Stage::TessControl) => {
                    &[(Form::Lowered(Pass::TessControlKernel), "kernel")]
                }
                Some(dmsh_ir::Stage::TessEval) => &[(Form::Lowered(Pass::TessEvalPost), "post")],
                Some(dmsh_ir::Stage::Vertex) => &[(Form::Lowered(Pass::VertexCapture), "capture")],
                _ => &[],
            };
            {
                for &(form, tag) in forms {
                    let o = Options { form, ..*opts };
                    let out = dksh::parse(&bytes).and_then(|prog| {
                        let cfg = common::deko3d_graphics_config(&prog, &key)?;
                        translate_graphics(&prog.code, &cfg, &o).map_err(|e| e.to_string())
                    });
                    // The build's fix-ups (a post-tessellation function has no SIMD groups:
                    // spv_single_lane).
                    let out = out.and_then(|mut o| {
                        if o.reflection.stage == "tess_eval" {
                            o.words = dmsh_fixup::for_metal(
                                &o.words,
                                &mut o.reflection,
                                &Default::default(),
                            )
                            .map_err(|e| e.to_string())?;
                        }
                        Ok(o)
                    });
                    let name = format!("{name}#{tag}");
                    v.push(Case { set, name, out });
                }
            }
        }
    }
    v
}

/// Every corpus shader translated with `opts`.
fn all_cases(opts: &Options) -> Vec<Case> {
    let mut cases = sass_cases(opts);
    cases.extend(dksh_compute_cases(opts));
    cases.extend(graphics_cases(opts));
    cases
}

/// Whether `msl` uses the word `double`.
fn uses_double(msl: &str) -> bool {
    msl.match_indices("double").any(|(i, _)| {
        let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !ident(msl[..i].chars().next_back()) && !ident(msl[i + 6..].chars().next())
    })
}

#[derive(Default)]
struct Totals {
    shaders: usize,
    msl: usize,
    clean: usize,
    known: usize,
    micros: u128,
    words: usize,
}

impl Totals {
    fn add(&mut self, t: &Totals) {
        self.shaders += t.shaders;
        self.msl += t.msl;
        self.clean += t.clean;
        self.known += t.known;
        self.micros += t.micros;
        self.words += t.words;
    }

    fn line(&self, set: &str) -> String {
        format!(
            "{set}: {}/{} reach MSL, {} of them agree with the reflection, {} known; \
             SPIRV-Cross {} µs per shader, {} µs per 1000 SPIR-V words",
            self.msl,
            self.shaders,
            self.clean,
            self.known,
            self.micros / self.msl.max(1) as u128,
            self.micros * 1000 / self.words.max(1) as u128
        )
    }
}

/// The reason `id` (or its failing stage) is known not to pass.
fn known(id: &str, e: Option<&Error>) -> Option<&'static str> {
    if let Some(Error::Stage { stage, .. }) = e {
        if let Some(k) = KNOWN_STAGES.iter().find(|k| k.0 == stage) {
            return Some(k.1);
        }
    }
    KNOWN.iter().find(|k| k.0 == id).map(|k| k.1)
}

#[test]
fn corpus_reaches_msl_with_the_reflections_indices() {
    let out_dir = std::env::var_os("DMSH_MSL_OUT").map(std::path::PathBuf::from);
    if let Some(d) = &out_dir {
        std::fs::create_dir_all(d).unwrap();
    }
    let opts = MslOptions::default();
    let cases = all_cases(&Options::default());
    let mut sets: Vec<(&str, Totals)> = Vec::new();
    let (mut unexpected, mut doubles) = (Vec::new(), Vec::new());
    let mut produced = Vec::new();
    for c in &cases {
        if sets.last().is_none_or(|s| s.0 != c.set) {
            sets.push((c.set, Totals::default()));
        }
        let t = &mut sets.last_mut().unwrap().1;
        t.shaders += 1;
        let id = format!("{}/{}", c.set, c.name);
        let o = match &c.out {
            Ok(o) => o,
            Err(e) => {
                println!("FAIL {id}: translation: {e}");
                unexpected.push(format!("{id}: translation: {e}"));
                continue;
            }
        };
        let start = Instant::now();
        let r = to_msl(&o.words, &o.reflection, &opts);
        let us = start.elapsed().as_micros();
        let m = match r {
            Ok(m) => m,
            Err(e) => {
                if let Some(why) = known(&id, Some(&e)) {
                    println!("known {id}: {e} [{why}]");
                    t.known += 1;
                } else {
                    println!("FAIL {id}: {e}");
                    unexpected.push(format!("{id}: {e}"));
                }
                continue;
            }
        };
        t.msl += 1;
        t.micros += us;
        t.words += o.words.len();
        if let Some(d) = &out_dir {
            let f = d.join(format!("{}.metal", id.replace('/', "__")));
            std::fs::write(f, &m.source).unwrap();
        }
        let bad = check_bindings(&m.source, &o.reflection);
        produced.push((id.clone(), m.source.clone()));
        let mut notes = String::new();
        if uses_double(&m.source) {
            doubles.push(id.clone());
            notes.push_str(" double");
        }
        if !m.unused.is_empty() {
            notes.push_str(&format!(" unused {:?}", m.unused));
        }
        if !m.aux_buffers.is_empty() {
            notes.push_str(&format!(" aux {:?}", m.aux_buffers));
        }
        let why = known(&id, None);
        let status = match (bad.is_empty(), why) {
            (true, None) => "ok   ",
            (false, Some(_)) => "known",
            _ => "BAD  ",
        };
        let per_k = us as f64 * 1000.0 / o.words.len().max(1) as f64;
        println!(
            "{status} {id}: {} words, {} bytes of MSL, {us} µs ({per_k:.0} µs/1000 words){notes}",
            o.words.len(),
            m.source.len()
        );
        for b in &bad {
            println!("      {b}");
        }
        match (bad.is_empty(), why) {
            (true, None) => t.clean += 1,
            (false, Some(why)) => {
                println!("      [{why}]");
                t.known += 1;
            }
            (true, Some(_)) => unexpected.push(format!("{id}: in KNOWN but agrees now")),
            (false, None) => unexpected.extend(bad.iter().map(|b| format!("{id}: {b}"))),
        }
    }
    let mut all = Totals::default();
    for (set, t) in &sets {
        println!("{}", t.line(set));
        all.add(t);
    }
    println!("{}", all.line("all"));
    println!(
        "{} of {} MSL files use `double` (Metal has none; FmaMode::Exact's f64 emulation is \
         one source): {doubles:?}",
        doubles.len(),
        all.msl
    );
    let (rejected_doubles, syntax_unexpected) = standin_check(&produced, KNOWN_SYNTAX);
    unexpected.extend(syntax_unexpected);
    // The stand-in refuses `double` where the word test finds it, and nowhere else.
    if syntax::clang().is_ok() {
        assert_eq!(
            rejected_doubles, doubles,
            "`double` rejections differ from its uses"
        );
    }
    assert!(unexpected.is_empty(), "unexpected: {unexpected:#?}");
}

/// With the build's options — `FmaMode::Native` (Apple GPUs fuse) and `F64Mode::Soft` (Metal
/// has no `double`) — no MSL file uses `double`: the shaders that compute in f64 (guest code,
/// or the native translation's f64 in conversions, directed rounding and division) get the
/// soft routines. Prints the count and the list; every MSL file goes through the clang
/// stand-in check, which must reject exactly `DOUBLE_WITH_NATIVE_FMA` (for `double`: none)
/// and `KNOWN_SYNTAX`; every module passes spirv-val (where installed). Then, for every
/// shader whose native-f64 module declares a 64-bit float type, one line: SPIR-V words and
/// SPIRV-Cross time (best of three) native against soft (docs/build.md).
#[test]
fn native_fma_msl_passes_the_standin_check() {
    let opts = Options {
        fma: FmaMode::Native,
        f64: F64Mode::Soft,
        ..Options::default()
    };
    let native_f64 = Options {
        f64: F64Mode::Native,
        ..opts
    };
    let (mut produced, mut doubles) = (Vec::new(), Vec::new());
    let (soft_cases, native_cases) = (all_cases(&opts), all_cases(&native_f64));
    let mut sizes = (0, 0, 0u128, 0u128, 0);
    let mut invalid = Vec::new();
    for (c, n) in soft_cases.iter().zip(&native_cases) {
        let Ok(o) = &c.out else { continue };
        let id = format!("{}/{}", c.set, c.name);
        // The soft routines are valid SPIR-V wherever they are used.
        if let Err(e) = dmsh_vk::spirv_val(&o.words) {
            println!("FAIL {id}: spirv-val: {e}");
            invalid.push(id.clone());
        }
        let Ok(m) = to_msl(&o.words, &o.reflection, &MslOptions::default()) else {
            continue;
        };
        if uses_double(&m.source) {
            doubles.push(id.clone());
        }
        produced.push((id.clone(), m.source));
        // The same shader with native f64, where it declares a 64-bit float type.
        let Ok(no) = &n.out else { continue };
        if !dmsh_msl::limits::uses_f64(&no.words) {
            continue;
        }
        // The best of three of each (the machine may be shared).
        let best = |w: &[u32], r: &dmsh_spv::Reflection| -> (bool, u128) {
            let mut t = u128::MAX;
            let mut ok = false;
            for _ in 0..3 {
                let start = Instant::now();
                ok = to_msl(w, r, &MslOptions::default()).is_ok();
                t = t.min(start.elapsed().as_micros());
            }
            (ok, t)
        };
        let (native_ok, native_us) = best(&no.words, &no.reflection);
        let soft_us = best(&o.words, &o.reflection).1;
        println!(
            "f64 {id}: {} SPIR-V words soft, {} native; SPIRV-Cross {soft_us} µs soft, \
             {native_us} µs native{}",
            o.words.len(),
            no.words.len(),
            if native_ok { "" } else { " (native fails)" }
        );
        sizes.0 += o.words.len();
        sizes.1 += no.words.len();
        sizes.2 += soft_us;
        sizes.3 += native_us;
        sizes.4 += 1;
    }
    println!(
        "{} shaders declare f64 natively: {} SPIR-V words soft against {} native ({:+.0} %); \
         SPIRV-Cross {} µs against {} µs",
        sizes.4,
        sizes.0,
        sizes.1,
        (sizes.0 as f64 / sizes.1.max(1) as f64 - 1.0) * 100.0,
        sizes.2,
        sizes.3
    );
    println!(
        "FmaMode::Native + F64Mode::Soft: {} of {} MSL files use `double`: {doubles:?}",
        doubles.len(),
        produced.len()
    );
    let (rejected_doubles, mut unexpected) = standin_check(&produced, KNOWN_SYNTAX);
    unexpected.extend(invalid.into_iter().map(|id| format!("{id}: spirv-val")));
    if syntax::clang().is_ok() {
        assert_eq!(
            rejected_doubles, doubles,
            "`double` rejections differ from its uses"
        );
        for id in &rejected_doubles {
            if !DOUBLE_WITH_NATIVE_FMA.contains(&id.as_str()) {
                unexpected.push(format!(
                    "{id}: uses `double`, not in DOUBLE_WITH_NATIVE_FMA"
                ));
            }
        }
        for id in DOUBLE_WITH_NATIVE_FMA {
            if !rejected_doubles.iter().any(|d| d == id) {
                unexpected.push(format!("{id}: in DOUBLE_WITH_NATIVE_FMA, no `double` now"));
            }
        }
    }
    assert!(unexpected.is_empty(), "unexpected: {unexpected:#?}");
}

/// The iOS libraries: every shader that reaches MSL for macOS reaches it for iOS with the same
/// binding check result, and the same shaders fail. One line per difference, then totals.
/// The iOS MSL (SIMD-group functions, base vertex and instance) goes through the clang
/// stand-in check too: it passes, or is rejected for `double` where it uses `double`.
#[test]
fn ios_matches_macos() {
    let (mac, ios) = (
        MslOptions::default(),
        MslOptions {
            platform: Platform::Ios,
        },
    );
    let (mut n, mut same, mut diffs) = (0, 0, Vec::new());
    let (mut ios_msl, mut ios_doubles) = (Vec::new(), Vec::new());
    for c in all_cases(&Options::default()) {
        let Ok(o) = &c.out else { continue };
        n += 1;
        let id = format!("{}/{}", c.set, c.name);
        let msl = |opts: &MslOptions| to_msl(&o.words, &o.reflection, opts);
        let outcome = |m: &Result<dmsh_msl::Msl, Error>| match m {
            Ok(m) => Ok(check_bindings(&m.source, &o.reflection)),
            Err(e) => Err(e.to_string()),
        };
        let ios_m = msl(&ios);
        let (a, b) = (outcome(&msl(&mac)), outcome(&ios_m));
        if a == b {
            same += 1;
        } else {
            println!("differs {id}: macOS {a:?}, iOS {b:?}");
            diffs.push(id.clone());
        }
        if let Ok(m) = ios_m {
            if uses_double(&m.source) {
                ios_doubles.push(id.clone());
            }
            ios_msl.push((id, m.source));
        }
    }
    println!("iOS: {same} of {n} shaders have the macOS outcome");
    let (rejected_doubles, unexpected) = standin_check(&ios_msl, KNOWN_SYNTAX);
    if syntax::clang().is_ok() {
        assert_eq!(
            rejected_doubles, ios_doubles,
            "iOS: `double` rejections differ from its uses"
        );
    }
    assert!(diffs.is_empty(), "{diffs:?}");
    assert!(unexpected.is_empty(), "iOS: {unexpected:#?}");
}

/// The (set, binding) of every `OpDecorate`d variable of a SPIR-V module, by id.
fn decorated_bindings(words: &[u32]) -> Vec<(u32, u32)> {
    const OP_DECORATE: u32 = 71;
    const BINDING: u32 = 33;
    const DESCRIPTOR_SET: u32 = 34;
    let mut by_id: std::collections::BTreeMap<u32, (Option<u32>, Option<u32>)> = Default::default();
    let mut i = 5;
    while i < words.len() {
        let (n, op) = ((words[i] >> 16) as usize, words[i] & 0xffff);
        if op == OP_DECORATE && n == 4 {
            let e = by_id.entry(words[i + 1]).or_default();
            match words[i + 2] {
                DESCRIPTOR_SET => e.0 = Some(words[i + 3]),
                BINDING => e.1 = Some(words[i + 3]),
                _ => {}
            }
        }
        i += n.max(1);
    }
    by_id
        .values()
        .filter_map(|&(s, b)| Some((s?, b?)))
        .collect()
}

/// Every guest texture and image slot is one SPIR-V variable (docs/reflection.md, "One
/// declaration per slot"): in every corpus shader, geometry and tessellation included, no two
/// variables share a (set, binding) — which SPIRV-Cross would turn into two Metal arguments
/// at one index — and every reflection resource's binding is declared.
#[test]
fn one_variable_per_binding() {
    let (mut bad, mut aliases) = (Vec::new(), Vec::new());
    let cases = all_cases(&Options::default());
    for c in &cases {
        let Ok(o) = &c.out else { continue };
        for r in o.reflection.resources.iter().filter(|r| r.view.is_some()) {
            aliases.push(format!("{}/{} {} {}", c.set, c.name, r.kind, r.bank));
        }
        let mut b = decorated_bindings(&o.words);
        let n = b.len();
        b.sort_unstable();
        b.dedup();
        if b.len() != n {
            bad.push(format!(
                "{}/{}: {} variables share a binding",
                c.set,
                c.name,
                n - b.len()
            ));
        }
        for r in &o.reflection.resources {
            if !b.contains(&(r.set, r.vk_binding())) {
                bad.push(format!(
                    "{}/{}: {} {} binding {} not declared",
                    c.set,
                    c.name,
                    r.kind,
                    r.bank,
                    r.vk_binding()
                ));
            }
        }
    }
    println!("{} shaders checked; aliases: {aliases:?}", cases.len());
    assert!(bad.is_empty(), "{bad:#?}");
}

/// The translation of `set/name` in the corpus.
fn case(set: &str, name: &str) -> Output {
    let cases = all_cases(&Options::default());
    let c = cases
        .into_iter()
        .find(|c| c.set == set && c.name == name)
        .unwrap_or_else(|| panic!("no case {set}/{name}"));
    c.out.unwrap_or_else(|e| panic!("{set}/{name}: {e}"))
}

/// The resources of a translation's reflection that `keep` selects.
fn resources_where(o: &Output, keep: impl Fn(&Resource) -> bool) -> Vec<&Resource> {
    o.reflection.resources.iter().filter(|r| keep(r)).collect()
}

/// The MSL argument declared at `[[texture(index)]]`: its type and name.
fn texture_argument(msl: &str, index: u32) -> Option<(String, String)> {
    let at = msl.find(&format!("[[texture({index})]]"))?;
    let start = msl[..at].rfind([',', '('])? + 1;
    let decl = msl[start..at].trim();
    let sp = decl.rfind(' ')?;
    Some((decl[..sp].trim().to_string(), decl[sp + 1..].to_string()))
}

/// sass/tex_sample samples one texture object, `p_tex2d` (parameter word 2: texture slot 2,
/// binding 66), with `tex.2d` and `tex.a2d` (tex_sample.ptx): two dimensionalities, so the
/// first keeps binding 66 and the 2D-array one is an alias at 66 + 0x10000 with view
/// `2d_array`, a `texture2d_array` argument of its own.
#[test]
fn two_dimensionalities_get_an_alias() {
    let o = case("sass", "tex_sample");
    let at = |b: u32| resources_where(&o, |r| r.vk_binding() == b);
    let (first, alias) = (at(66), at(66 + 0x10000));
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(alias.len(), 1, "{alias:?}");
    let (first, alias) = (first[0], alias[0]);
    assert_eq!(
        (first.kind.as_str(), first.bank, first.view.as_deref()),
        ("texture", 2, None)
    );
    assert_eq!(
        (alias.kind.as_str(), alias.bank, alias.view.as_deref()),
        ("texture", 2, Some("2d_array"))
    );
    assert_ne!(alias.metal_index, first.metal_index);
    assert_ne!(alias.metal_sampler, first.metal_sampler);
    let m = to_msl(&o.words, &o.reflection, &MslOptions::default()).unwrap();
    assert!(check_bindings(&m.source, &o.reflection).is_empty());
    let ty = |i| texture_argument(&m.source, i).unwrap_or_default().0;
    assert_eq!(ty(first.metal_index), "texture2d<float>");
    assert_eq!(ty(alias.metal_index), "texture2d_array<float>");
}

/// fs_texelfetch_size.frag (GLSL): `msImg` (binding 1, a `sampler2DMS`) is fetched with a
/// sample index and its size queried (`textureSize(msImg)`): one resource, no alias, and the
/// query reads the multisampled argument; `img` (binding 0) keeps its levels query.
#[test]
fn queries_take_the_slots_type() {
    let o = case("dksh graphics", "fs_texelfetch_size.frag");
    let slot = |n: u32| resources_where(&o, |r| r.kind == "texture" && r.bank == n);
    let ms = slot(1);
    assert_eq!(ms.len(), 1, "{ms:?}");
    assert_eq!(ms[0].view, None);
    let m = to_msl(&o.words, &o.reflection, &MslOptions::default()).unwrap();
    assert!(check_bindings(&m.source, &o.reflection).is_empty());
    let (ty, name) = texture_argument(&m.source, ms[0].metal_index).unwrap();
    assert_eq!(ty, "texture2d_ms<float>");
    assert!(m.source.contains(&format!("{name}.get_width()")), "{name}");
    let img = slot(0);
    assert_eq!(img.len(), 1, "{img:?}");
    let (ty, name) = texture_argument(&m.source, img[0].metal_index).unwrap();
    assert_eq!(ty, "texture2d<float>");
    assert!(
        m.source.contains(&format!("{name}.get_num_mip_levels()")),
        "{name}"
    );
}
