//! The stand-in Metal headers (`tools/msl/standin/`: `<metal_stdlib>`, `<simd/simd.h>`,
//! `<metal_atomic>`) and the line-preserving rewrite that adapts SPIRV-Cross's MSL to them
//! where C++ cannot say what MSL says (docs/build.md, "Checking the MSL: three checks").

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The stand-in headers: (path under the include folder, text).
pub const HEADERS: &[(&str, &str)] = &[
    ("metal_stdlib", include_str!("../standin/metal_stdlib")),
    ("simd/simd.h", include_str!("../standin/simd/simd.h")),
    ("metal_atomic", include_str!("../standin/metal_atomic")),
];

/// Address spaces other than `thread`, MSL's default for locals and parameters.
const ADDRESS_SPACES: &[&str] = &[
    "device",
    "constant",
    "threadgroup",
    "threadgroup_imageblock",
    "ray_data",
    "object_data",
];

/// MSL's scalar types that have vector types (`float4`, `packed_float3`, …).
const VECTOR_ELEMENTS: &[&str] = &[
    "bool", "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "half", "float",
];

/// The folder holding [`HEADERS`] under the system temp folder, named by a hash of the
/// headers (processes share it; a changed header gets a new one). Once per process, each
/// header missing there or different is written (atomically: a temp file, then a rename).
pub fn include_dir() -> std::io::Result<&'static Path> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let write = || -> std::io::Result<PathBuf> {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for (name, text) in HEADERS {
            for b in name.bytes().chain(text.bytes()) {
                h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
            }
        }
        let dir = std::env::temp_dir().join(format!("dmsh-msl-standin-{h:016x}"));
        for (name, text) in HEADERS {
            let p = dir.join(name);
            if std::fs::read(&p).is_ok_and(|t| t == text.as_bytes()) {
                continue;
            }
            std::fs::create_dir_all(p.parent().unwrap_or(&dir))?;
            let tmp = p.with_extension(format!("tmp{}", std::process::id()));
            std::fs::write(&tmp, text)?;
            std::fs::rename(&tmp, &p)?;
        }
        Ok(dir)
    };
    match DIR.get_or_init(|| write().map_err(|e| e.to_string())) {
        Ok(d) => Ok(d),
        Err(e) => Err(std::io::Error::other(format!(
            "writing the stand-in headers: {e}"
        ))),
    }
}

/// Whether `c` can continue an identifier.
fn ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Whether `word` occurs in `line` as a whole identifier.
fn has_word(line: &str, word: &str) -> bool {
    line.match_indices(word).any(|(i, _)| {
        let b = line.as_bytes();
        (i == 0 || !ident(b[i - 1])) && b.get(i + word.len()).is_none_or(|&c| !ident(c))
    })
}

/// `line` with every address space other than `thread` replaced by `thread`.
fn in_thread_space(line: &str) -> String {
    let b = line.as_bytes();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < line.len() {
        let word = ADDRESS_SPACES.iter().find(|s| {
            line[i..].starts_with(*s)
                && (i == 0 || !ident(b[i - 1]))
                && b.get(i + s.len()).is_none_or(|&c| !ident(c))
        });
        match word {
            Some(w) => {
                out.push_str("thread");
                i += w.len();
            }
            None => {
                let c = line[i..].chars().next().unwrap_or(' ');
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    out
}

/// `float4 (&a)[2]` → `__dmsh_t_float4 (&a)[2]`: a vector type name followed by `(` is the
/// stand-in's constructor macro, so a parenthesised declarator gets the type's other name.
fn rename_declarator_types(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(i) = rest.find(" (") {
        let (head, tail) = rest.split_at(i);
        let next = tail[2..].bytes().next();
        let start = head.bytes().rposition(|c| !ident(c)).map_or(0, |p| p + 1);
        let word = &head[start..];
        let base = word.strip_prefix("packed_").unwrap_or(word);
        let is_vector = VECTOR_ELEMENTS.iter().any(|e| {
            base.strip_prefix(e)
                .is_some_and(|n| matches!(n, "2" | "3" | "4"))
        });
        if is_vector && matches!(next, Some(b'&' | b'*')) {
            out.push_str(&head[..start]);
            out.push_str("__dmsh_t_");
            out.push_str(word);
        } else {
            out.push_str(head);
        }
        out.push_str(" (");
        rest = &tail[2..];
    }
    out.push_str(rest);
    out
}

/// Templates that name vector types: MSL's `vec` and SPIRV-Cross's gather helpers' result
/// aliases.
const VECTOR_TEMPLATES: &[&str] = &["vec", "spvGatherReturn", "spvGatherCompareReturn"];

/// `vec<T, 4>(a, b, c, d)` → `::metal::__dmsh_make<vec<T, 4>>(a, b, c, d)` (and the same for
/// the other [`VECTOR_TEMPLATES`]): the vector constructor of a dependent type, which C++ has
/// no syntax for.
fn vec_constructors(line: &str) -> String {
    let b = line.as_bytes();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < line.len() {
        let at_word = i == 0 || !ident(b[i - 1]);
        let name = VECTOR_TEMPLATES
            .iter()
            .find(|t| at_word && line[i..].starts_with(*t) && b.get(i + t.len()) == Some(&b'<'));
        let close = name.and_then(|t| line[i + t.len()..].find('>').map(|j| i + t.len() + j));
        match (name, close) {
            (Some(t), Some(j))
                if line[j + 1..].starts_with('(') && !line[i + t.len() + 1..j].contains('<') =>
            {
                out.push_str("::metal::__dmsh_make<");
                out.push_str(&line[i..=j]);
                out.push('>');
                i = j + 1;
            }
            _ => {
                let c = line[i..].chars().next().unwrap_or(' ');
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    out
}

/// `constant T x [[function_constant(0)]];` gets `= {}`: the pipeline gives it its value,
/// and the stand-in's `constant` is `const`, which must be initialised.
fn initialise_function_constant(line: &str) -> String {
    let t = line.trim_end();
    match t.strip_suffix(';') {
        Some(head) if head.trim_end().ends_with(")]]") && head.contains("[[function_constant(") => {
            format!("{} = {{}};", head.trim_end())
        }
        _ => line.to_string(),
    }
}

/// The MSL as the stand-in checks it, line for line (so clang's line numbers are the MSL's):
/// - a definition whose line differs from another line of the file only in address spaces
///   (SPIRV-Cross's `spvUnsafeArray` and `spvStorageMatrix` members and its texture-gather
///   helpers, written once for `thread` and again for `device`, `constant`, `threadgroup`
///   objects) becomes empty lines, body and template header too: the stand-in has no
///   address spaces, so it would redefine the `thread` one, which stays;
/// - parenthesised declarators of vector types, `vec<…>(…)` constructors and function
///   constants are rewritten as above.
pub fn prepare(msl: &str) -> String {
    let lines: Vec<&str> = msl.lines().collect();
    let all: std::collections::HashSet<&str> = lines.iter().map(|l| l.trim()).collect();
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        let thread = ADDRESS_SPACES
            .iter()
            .any(|s| has_word(line, s))
            .then(|| in_thread_space(line));
        if thread.is_some_and(|t| t != line && all.contains(t.trim())) {
            out.push(String::new());
            let n = out.len();
            if n >= 2 && out[n - 2].trim_start().starts_with("template") {
                out[n - 2].clear();
            }
            if !line.trim_end().ends_with(';') {
                // The body: up to the line that closes the brace it opens.
                let (mut depth, mut opened) = (0i32, false);
                while i < lines.len() {
                    let body = lines[i];
                    i += 1;
                    out.push(String::new());
                    depth += body.matches('{').count() as i32 - body.matches('}').count() as i32;
                    opened |= body.contains('{');
                    if opened && depth <= 0 {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(initialise_function_constant(&vec_constructors(
            &rename_declarator_types(line),
        )));
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_space_overloads_become_empty_lines() {
        let src = "struct A {\n    thread T& operator [] (size_t pos) thread\n    {\n        \
                   return e[pos];\n    }\n    device T& operator [] (size_t pos) device\n    \
                   {\n        return e[pos];\n    }\n    S(const thread S& m) thread = default;\n    \
                   S(const constant S& m) thread = default;\n};\ntemplate<typename T>\n\
                   void f(const thread T& t)\n{\n}\ntemplate<typename T>\n\
                   void f(const device T& t)\n{\n}\nvoid g(device int& x);\n";
        let out = prepare(src);
        assert_eq!(out.lines().count(), src.lines().count());
        assert!(out.contains("thread T& operator [] (size_t pos) thread"));
        assert!(!out.contains("device T"));
        assert!(!out.contains("constant"));
        assert_eq!(out.matches("template").count(), 1);
        assert!(
            out.contains("void g(device int& x);"),
            "no thread twin: kept"
        );
    }

    #[test]
    fn rewrites_keep_other_text() {
        assert_eq!(
            rename_declarator_types("void f(thread float4 (&r)[2], float4 (a))"),
            "void f(thread __dmsh_t_float4 (&r)[2], float4 (a))"
        );
        assert_eq!(
            vec_constructors("return vec<T, 4>(a, b), ivec<T>(c);"),
            "return ::metal::__dmsh_make<vec<T, 4>>(a, b), ivec<T>(c);"
        );
        assert_eq!(
            initialise_function_constant("constant int a_tmp [[function_constant(0)]];"),
            "constant int a_tmp [[function_constant(0)]] = {};"
        );
    }
}
