//! A syntax and type check of MSL without Apple's compiler (criterion (a) of the Metal build,
//! docs/build.md "Checking the MSL: three checks"): Debian's clang 19 parses the MSL as C++17 against the
//! stand-in `<metal_stdlib>` ([`crate::standin`]).
//!
//! ```no_run
//! match dmsh_msl::syntax::check("kernel void main0() {}") {
//!     Ok(()) => {}
//!     Err(dmsh_msl::syntax::SyntaxError::ClangNotFound(why)) => println!("skipped: {why}"),
//!     Err(e) => panic!("{e}"),
//! }
//! ```

use crate::standin;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The environment variable that names the clang to use instead of `clang++-19`.
pub const CLANG_ENV: &str = "DMSH_CLANG";

/// The compiler looked for on `PATH` when [`CLANG_ENV`] is not set.
pub const CLANG: &str = "clang++-19";

/// clang's language and diagnostic arguments (the same for the precompiled stand-in and the
/// check, as clang requires):
/// - C++17, no system headers: the stand-in is the whole library;
/// - `-cl-single-precision-constant`: an unsuffixed floating literal is `float`, as in MSL
///   (C++ makes it `double`, which changes overload resolution and template deduction);
/// - `-flax-vector-conversions=none`: no implicit conversion between vector types, as in MSL;
/// - errors for variable-length arrays (MSL has none) and, stricter than Apple's compiler,
///   for implicit float → integer and float → half conversions (SPIRV-Cross writes every
///   conversion explicitly, so an implicit one in our MSL is a fix-up's mistake);
/// - MSL's attributes (`[[buffer(0)]]`, …) are unknown to C++ and ignored; the stand-in's
///   `constant` is `const`, so `const constant T` repeats `const`.
pub const FLAGS: &[&str] = &[
    "-std=c++17",
    "-nostdinc",
    "-nostdinc++",
    "-cl-single-precision-constant",
    "-flax-vector-conversions=none",
    "-Werror=float-conversion",
    "-Werror=implicit-float-conversion",
    "-Werror=vla",
    "-Werror=vla-cxx-extension",
    "-Wno-unknown-attributes",
    "-Wno-duplicate-decl-specifier",
    "-Wno-pragma-once-outside-header",
    "-fno-caret-diagnostics",
    "-fno-color-diagnostics",
    "-ferror-limit=20",
];

/// One error clang reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The MSL line (1-based) it concerns: the error's own, or for an error inside the
    /// stand-in, the MSL line that led there (a template instantiation, a macro call); 0
    /// when clang named none.
    pub line: u32,
    /// clang's message, with the stand-in location when the error is inside it.
    pub message: String,
}

/// clang's errors for one MSL text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics {
    /// Each error, in clang's order.
    pub errors: Vec<Diagnostic>,
    /// clang's whole output (errors, warnings and notes).
    pub text: String,
}

impl std::fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "msl:{}: {}", e.line, e.message)?;
        }
        Ok(())
    }
}

/// Why [`check`] did not pass.
#[derive(Debug, thiserror::Error)]
pub enum SyntaxError {
    /// No clang to run: neither [`CLANG_ENV`] nor [`CLANG`] on `PATH` (tests skip).
    #[error("clang not found: {0}")]
    ClangNotFound(String),
    /// clang rejects the MSL.
    #[error("{0}")]
    Rejected(Diagnostics),
    /// Writing the stand-in headers or talking to clang failed.
    #[error("running clang: {0}")]
    Io(#[from] std::io::Error),
}

/// The clang [`check`] runs: [`CLANG_ENV`] if set, else [`CLANG`] found on `PATH`.
pub fn clang() -> Result<PathBuf, SyntaxError> {
    if let Some(p) = std::env::var_os(CLANG_ENV) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(SyntaxError::ClangNotFound(format!(
                "{CLANG_ENV}={} is not a file",
                p.display()
            )))
        };
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join(CLANG))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            SyntaxError::ClangNotFound(format!(
                "no {CLANG} on PATH and {CLANG_ENV} unset (Debian: apt-get install clang-19)"
            ))
        })
}

/// The input's name in clang's messages (the MSL goes in on standard input).
const INPUT: &str = "<stdin>";

/// A diagnostic line `file:line:col: kind: message` split up.
fn parse_line(l: &str) -> Option<(&str, u32, &str, &str)> {
    for kind in ["fatal error", "error", "warning", "note"] {
        let Some(i) = l.find(&format!(": {kind}: ")) else {
            continue;
        };
        let (loc, msg) = (&l[..i], &l[i + kind.len() + 4..]);
        let mut parts = loc.rsplitn(3, ':');
        let (_col, line, file) = (parts.next()?, parts.next()?, parts.next()?);
        return Some((file, line.parse().ok()?, kind, msg));
    }
    None
}

/// The errors of clang's output `text`, each with the MSL line it concerns.
fn diagnostics(text: &str) -> Diagnostics {
    let mut errors: Vec<Diagnostic> = Vec::new();
    let mut open = false;
    for l in text.lines() {
        let Some((file, line, kind, msg)) = parse_line(l) else {
            continue;
        };
        let in_msl = file == INPUT;
        match kind {
            "error" | "fatal error" => {
                if msg.starts_with("too many errors emitted") {
                    continue;
                }
                let message = if in_msl {
                    msg.to_string()
                } else {
                    let name = file.rsplit('/').next().unwrap_or(file);
                    format!("{msg} (in the stand-in {name}:{line})")
                };
                errors.push(Diagnostic {
                    line: if in_msl { line } else { 0 },
                    message,
                });
                open = !in_msl;
            }
            "note" if open && in_msl => {
                if let Some(e) = errors.last_mut() {
                    e.line = line;
                }
                open = false;
            }
            _ => {}
        }
    }
    Diagnostics {
        errors,
        text: text.to_string(),
    }
}

/// `<metal_stdlib>` precompiled by `clang` (beside the headers, named by the clang's path),
/// once per process, and rebuilt when clang refuses the one there (a header rewritten since,
/// another clang); None when clang cannot precompile it (the check then parses the header
/// each time, three times slower).
fn precompiled(clang: &Path, include: &Path) -> Option<PathBuf> {
    static PCH: OnceLock<Option<PathBuf>> = OnceLock::new();
    PCH.get_or_init(|| {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in clang.as_os_str().as_encoded_bytes() {
            h = (h ^ *b as u64).wrapping_mul(0x100_0000_01b3);
        }
        let pch = include.join(format!("metal_stdlib-{h:016x}.pch"));
        let runs = |cmd: &mut Command| {
            cmd.stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        let usable = |pch: &Path| {
            runs(
                Command::new(clang)
                    .args(["-x", "c++", "-fsyntax-only"])
                    .args(FLAGS)
                    .arg("-I")
                    .arg(include)
                    .arg("-include-pch")
                    .arg(pch)
                    .arg("-"),
            )
        };
        if pch.is_file() && usable(&pch) {
            return Some(pch);
        }
        let tmp = pch.with_extension(format!("tmp{}", std::process::id()));
        let built = runs(
            Command::new(clang)
                .args(["-x", "c++-header"])
                .args(FLAGS)
                .arg("-I")
                .arg(include)
                .arg(include.join("metal_stdlib"))
                .arg("-o")
                .arg(&tmp),
        );
        (built && std::fs::rename(&tmp, &pch).is_ok()).then_some(pch)
    })
    .clone()
}

/// Checks `msl` with clang and the stand-in headers: Ok when clang accepts it, else
/// [`SyntaxError::Rejected`] with clang's errors (lines are the MSL's).
pub fn check(msl: &str) -> Result<(), SyntaxError> {
    let clang = clang()?;
    let include = standin::include_dir()?;
    let mut cmd = Command::new(&clang);
    cmd.args(["-x", "c++", "-fsyntax-only"])
        .args(FLAGS)
        .arg("-I")
        .arg(include);
    if let Some(pch) = precompiled(&clang, include) {
        cmd.arg("-include-pch").arg(pch);
    }
    let mut child = cmd
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| SyntaxError::ClangNotFound(format!("{}: {e}", clang.display())))?;
    let input = standin::prepare(msl);
    let mut stdin = child.stdin.take().expect("piped stdin");
    // clang reads all of its input before it writes much; a thread keeps a large input from
    // blocking on a full pipe either way.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output()?;
    writer.join().expect("stdin writer")?;
    if out.status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    let mut d = diagnostics(&text);
    if d.errors.is_empty() {
        d.errors.push(Diagnostic {
            line: 0,
            message: format!("clang failed ({}) without an error line", out.status),
        });
    }
    Err(SyntaxError::Rejected(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_take_the_msl_line_that_led_into_the_standin() {
        let text = "<stdin>:3:5: error: unknown type name 'foo'\n\
                    /tmp/x/metal_stdlib:10:3: error: static assertion failed: vector\n\
                    /tmp/x/metal_stdlib:10:3: note: in instantiation of a\n\
                    <stdin>:7:9: note: in instantiation of b requested here\n\
                    <stdin>:8:1: warning: w\n";
        let d = diagnostics(text);
        assert_eq!(d.errors.len(), 2);
        assert_eq!(d.errors[0].line, 3);
        assert_eq!(d.errors[1].line, 7);
        assert!(d.errors[1].message.contains("metal_stdlib:10"));
        assert_eq!(d.to_string().matches("msl:").count(), 2);
    }
}
