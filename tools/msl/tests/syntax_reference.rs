//! The clang stand-in check (`dmsh_msl::syntax`) against SPIRV-Cross's own MSL reference
//! outputs in ../shared/corpus/msl-reference (third-party data, used when present): every
//! vertex, fragment and compute file must pass except those in `KNOWN` (known-valid MSL that
//! the stand-in cannot take, each with the reason), and deterministic mutations of the
//! passing files (a narrowed vector, a double, a bad swizzle, a wrong member name, a texture
//! call without its sampler or value, a written texture made read-only, a constructor with a
//! component too many or too few) must be rejected. Skips with a message when the folder or
//! clang is absent.

use dmsh_msl::syntax::{check, SyntaxError};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Reference files the stand-in cannot take, with the reason (paths under the folder).
const KNOWN: &[(&str, &str)] = &[
    (
        "comp/ray-query.spv14.vk.ios.msl24..invalid.comp",
        "ray queries (<metal_raytracing>): not in the stand-in",
    ),
    (
        "frag/ray-query-object-in-function.spv14.vk.msl24.frag",
        "ray queries (<metal_raytracing>): not in the stand-in",
    ),
    (
        "frag/runtime_array_as_argument_buffer.msl3.argument-tier-1.rich-descriptor.frag",
        "ray-tracing intersection_params (<metal_raytracing>): not in the stand-in",
    ),
    (
        "asm/comp/quantize.asm.comp",
        "`H(fval)` with H a template parameter (half2 from float2): C++ has no element-wise \
         conversion cast of clang vectors (only the stand-in's floatN(...) macros convert)",
    ),
];

/// The reference folder, when present.
fn reference_dir() -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/msl-reference");
    d.is_dir().then_some(d)
}

/// Every `.vert`, `.frag` and `.comp` file under `dir`, as (path relative to it, text), sorted.
fn stage_files(dir: &Path) -> Vec<(String, String)> {
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p
                .extension()
                .is_some_and(|x| x == "vert" || x == "frag" || x == "comp")
            {
                out.push(p);
            }
        }
    }
    let mut paths = Vec::new();
    walk(dir, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// The reference files and whether clang is there; None (after a message) to skip.
fn setup() -> Option<Vec<(String, String)>> {
    let Some(dir) = reference_dir() else {
        println!("skipped: ../shared/corpus/msl-reference is absent");
        return None;
    };
    if let Err(e) = dmsh_msl::syntax::clang() {
        println!("skipped: {e}");
        return None;
    }
    Some(stage_files(&dir))
}

fn known(rel: &str) -> Option<&'static str> {
    KNOWN.iter().find(|k| k.0 == rel).map(|k| k.1)
}

#[test]
fn reference_msl_passes_the_standin_check() {
    let Some(files) = setup() else { return };
    let start = Instant::now();
    let results: Vec<_> = files.par_iter().map(|(_, src)| check(src)).collect();
    let secs = start.elapsed().as_secs_f64();
    let (mut passed, mut listed, mut unexpected) = (0, 0, Vec::new());
    for ((rel, _), r) in files.iter().zip(&results) {
        match (r, known(rel)) {
            (Ok(()), None) => passed += 1,
            (Ok(()), Some(_)) => unexpected.push(format!("{rel}: in KNOWN but passes now")),
            (Err(SyntaxError::Rejected(d)), Some(why)) => {
                listed += 1;
                println!("known {rel}: {} [{why}]", d.errors[0].message);
            }
            (Err(e), _) => {
                println!("FAIL {rel}: {e}");
                unexpected.push(format!("{rel}: {e}"));
            }
        }
    }
    for k in KNOWN {
        assert!(
            files.iter().any(|f| f.0 == k.0),
            "KNOWN {} is not a reference file",
            k.0
        );
    }
    println!(
        "{passed} of {} reference vertex/fragment/compute files pass, {listed} known; \
         {secs:.1} s ({:.0} ms a file)",
        files.len(),
        secs * 1000.0 / files.len().max(1) as f64
    );
    assert!(unexpected.is_empty(), "unexpected: {unexpected:#?}");
}

/// Where a mutation applies: from the entry point's line on, so that the changed code is
/// not an uninstantiated helper template (which C++ does not fully check).
fn body_start(src: &str) -> usize {
    src.find(" main0(")
        .map(|i| src[..i].rfind('\n').map_or(0, |j| j + 1))
        .unwrap_or(src.len())
}

fn ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Where the identifier that ends at byte `end` of `src` starts (`end` when none does).
fn ident_start(src: &str, end: usize) -> usize {
    src[..end]
        .bytes()
        .rposition(|c| !ident(c))
        .map_or(0, |p| p + 1)
}

/// The end (index of the closing parenthesis) of the argument list opening at `open`, and
/// the indices of its top-level commas.
fn arguments(src: &str, open: usize) -> Option<(usize, Vec<usize>)> {
    let (mut depth, mut commas) = (0i32, Vec::new());
    for (i, c) in src[open..].char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some((open + i, commas));
                }
            }
            ',' if depth == 1 => commas.push(open + i),
            '\n' | ';' => return None,
            _ => {}
        }
    }
    None
}

/// `float4 name = …` → `float2 name = …`: a float4 local narrowed.
fn narrow_vector(src: &str, from: usize) -> Option<String> {
    let i = src[from..].find("\n    float4 ").map(|i| from + i + 5)?;
    let decl = &src[i..src[i..].find('\n').map_or(src.len(), |j| i + j)];
    if !decl.contains(" = ") {
        return None;
    }
    Some(format!("{}float2{}", &src[..i], &src[i + 6..]))
}

/// `float name = …` → `double name = …`: Metal has no 64-bit float.
fn double_local(src: &str, from: usize) -> Option<String> {
    let i = src[from..].find("\n    float ").map(|i| from + i + 5)?;
    Some(format!("{}double{}", &src[..i], &src[i + 5..]))
}

/// The first swizzle `.xy` (followed by no identifier character) → `.xq`.
fn bad_swizzle(src: &str, from: usize) -> Option<String> {
    let b = src.as_bytes();
    let i = src[from..]
        .match_indices(".xy")
        .map(|(i, _)| from + i)
        .find(|&i| b.get(i + 3).is_none_or(|&c| !ident(c)) && ident(b[i - 1]))?;
    Some(format!("{}.xq{}", &src[..i], &src[i + 3..]))
}

/// A component past a float2's end: the first use `name.x` / `name.y` of a float2 local
/// `name` → `name.z`.
fn swizzle_past_the_end(src: &str, from: usize) -> Option<String> {
    let b = src.as_bytes();
    for (d, _) in src[from..].match_indices("\n    float2 ") {
        let start = from + d + 12;
        let len = src[start..].bytes().take_while(|&c| ident(c)).count();
        let name = &src[start..start + len];
        let after = start + len;
        for (u, _) in src[after..].match_indices(name) {
            let at = after + u;
            let dot = at + len;
            if !ident(b[at - 1])
                && src[dot..].starts_with('.')
                && matches!(b.get(dot + 1), Some(b'x' | b'y'))
                && b.get(dot + 2).is_none_or(|&c| !ident(c))
            {
                return Some(format!("{}.z{}", &src[..dot], &src[dot + 2..]));
            }
        }
    }
    None
}

/// The first member access `out.m`, `in.m` or `_N.m` → `….m_renamed`.
fn wrong_member(src: &str, from: usize) -> Option<String> {
    let b = src.as_bytes();
    for (i, _) in src[from..].match_indices('.') {
        let dot = from + i;
        let base = &src[ident_start(src, dot)..dot];
        let ok_base = base == "out"
            || base == "in"
            || (base.len() > 1
                && base.starts_with('_')
                && base[1..].bytes().all(|c| c.is_ascii_digit()));
        let len = src[dot + 1..].bytes().take_while(|&c| ident(c)).count();
        let member = &src[dot + 1..dot + 1 + len];
        let swizzle = member.bytes().all(|c| b"xyzwrgba".contains(&c));
        let call = b.get(dot + 1 + len) == Some(&b'(');
        if ok_base && len > 0 && !swizzle && !call && !member.as_bytes()[0].is_ascii_digit() {
            let end = dot + 1 + len;
            return Some(format!("{}_renamed{}", &src[..end], &src[end..]));
        }
    }
    None
}

/// A texture call without an argument: `.sample(s, uv, …)` without the sampler, or
/// `.write(value, coord, …)` without the value.
fn texture_call(src: &str, from: usize) -> Option<String> {
    for call in [".sample(", ".write("] {
        for (i, _) in src[from..].match_indices(call) {
            let open = from + i + call.len() - 1;
            let Some((_, commas)) = arguments(src, open) else {
                continue;
            };
            let Some(&first) = commas.first() else {
                continue;
            };
            let next = first + 1 + src[first + 1..].len() - src[first + 1..].trim_start().len();
            return Some(format!("{}{}", &src[..open + 1], &src[next..]));
        }
    }
    None
}

/// A written texture made read-only: the first `access::write>` or `access::read_write>`
/// (from the entry point's parameters on) → `access::read>`.
fn read_only_texture(src: &str, from: usize) -> Option<String> {
    let (i, w) = ["access::write>", "access::read_write>"]
        .iter()
        .filter_map(|w| src[from..].find(w).map(|i| (from + i, *w)))
        .min()?;
    Some(format!("{}access::read>{}", &src[..i], &src[i + w.len()..]))
}

/// A vector constructor `floatN(…)`, `intN(…)`, … of two or more arguments with the last
/// argument repeated (one component too many) or, for N ≥ 3, dropped (too few).
fn constructor_arity(src: &str, from: usize, drop: bool) -> Option<String> {
    let b = src.as_bytes();
    for (i, _) in src[from..].match_indices('(') {
        let open = from + i;
        let start = ident_start(src, open);
        let name = &src[start..open];
        let n = match name
            .strip_prefix("float")
            .or_else(|| name.strip_prefix("int"))
        {
            Some("2") => 2,
            Some("3") => 3,
            Some("4") => 4,
            _ => continue,
        };
        if start > 0 && (ident(b[start - 1]) || b[start - 1] == b'.') {
            continue;
        }
        let Some((close, commas)) = arguments(src, open) else {
            continue;
        };
        let Some(&last) = commas.last() else { continue };
        if drop && n >= 3 {
            return Some(format!("{}{}", &src[..last], &src[close..]));
        }
        if !drop {
            let arg = src[last + 1..close].trim();
            return Some(format!("{}, {arg}{}", &src[..close], &src[close..]));
        }
    }
    None
}

/// A mutation: its name and what it does to a file (None where it does not apply).
type Mutation = (&'static str, fn(&str, usize) -> Option<String>);

const MUTATIONS: &[Mutation] = &[
    ("narrowed float4 local", narrow_vector),
    ("float local made double", double_local),
    ("swizzle .xq", bad_swizzle),
    ("float2 component .z", swizzle_past_the_end),
    ("wrong member name", wrong_member),
    ("texture call missing an argument", texture_call),
    ("written texture made read-only", read_only_texture),
    ("constructor with a component too many", |s, f| {
        constructor_arity(s, f, false)
    }),
    ("constructor with a component too few", |s, f| {
        constructor_arity(s, f, true)
    }),
];

#[test]
fn mutated_reference_msl_is_rejected() {
    let Some(files) = setup() else { return };
    let mutants: Vec<(String, &str, String)> = files
        .iter()
        .filter(|(rel, _)| known(rel).is_none())
        .flat_map(|(rel, src)| {
            let from = body_start(src);
            MUTATIONS
                .iter()
                .filter_map(move |(what, m)| m(src, from).map(|s| (rel.clone(), *what, s)))
        })
        .collect();
    let start = Instant::now();
    let results: Vec<_> = mutants.par_iter().map(|(_, _, s)| check(s)).collect();
    let secs = start.elapsed().as_secs_f64();
    let mut survivors = Vec::new();
    let mut per_kind: Vec<(&str, usize, usize)> = MUTATIONS.iter().map(|m| (m.0, 0, 0)).collect();
    for ((rel, what, _), r) in mutants.iter().zip(&results) {
        let k = per_kind.iter_mut().find(|k| k.0 == *what).unwrap();
        k.1 += 1;
        match r {
            Err(SyntaxError::Rejected(_)) => k.2 += 1,
            Ok(()) => survivors.push(format!("{rel}: {what}")),
            Err(e) => panic!("{rel}: {what}: {e}"),
        }
    }
    for (what, n, rejected) in &per_kind {
        println!("{what}: {rejected} of {n} rejected");
    }
    for s in &survivors {
        println!("survivor {s}");
    }
    let rejected = mutants.len() - survivors.len();
    let rate = rejected as f64 / mutants.len().max(1) as f64;
    println!(
        "{rejected} of {} mutants rejected ({:.1} %), {} survive; {secs:.1} s",
        mutants.len(),
        rate * 100.0,
        survivors.len()
    );
    assert!(
        per_kind.iter().all(|k| k.1 > 0),
        "a mutation never applied: {per_kind:?}"
    );
    assert!(
        rate >= 0.95,
        "only {:.1} % of the mutants were rejected",
        rate * 100.0
    );
}
