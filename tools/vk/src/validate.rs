//! spirv-val, the Khronos validator, on a module in memory (what the runner's callers and the
//! tests check translated SPIR-V with before running it, and the Metal build's `validate`
//! step).
//!
//! Three ways, first that applies: the program `DMSH_SPIRV_VAL` names (a stand-in, in
//! tests, or a newer SPIRV-Tools than the distribution's, e.g. for
//! SPV_KHR_cooperative_matrix); SPIRV-Tools' library linked into this crate (build.rs finds Debian's static
//! `libSPIRV-Tools.a`; one validation is then a function call instead of a process, which
//! cost about 2.5 ms of CPU a module); the `spirv-val` program on `PATH`. All validate for
//! Vulkan 1.2 (`--target-env vulkan1.2`).

/// How modules are validated here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Validator {
    /// SPIRV-Tools linked into this program.
    Linked,
    /// A `spirv-val` program: the one `DMSH_SPIRV_VAL` names, else `spirv-val` on `PATH`.
    Program(std::ffi::OsString),
}

/// The validator [`spirv_val`] uses.
pub fn validator() -> Validator {
    if let Some(p) = std::env::var_os("DMSH_SPIRV_VAL") {
        return Validator::Program(p);
    }
    if linked::AVAILABLE {
        return Validator::Linked;
    }
    Validator::Program("spirv-val".into())
}

/// The validator's version (its `--version` first line, or the linked library's, which is
/// the same text), or `None` when no validator runs here.
pub fn version() -> Option<String> {
    match validator() {
        Validator::Linked => linked::version(),
        Validator::Program(p) => first_line_of(&p, &["--version"]),
    }
}

/// The first line `program args` prints, when it runs and succeeds (a tool's version).
pub fn first_line_of(program: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Option<String> {
    let o = std::process::Command::new(program)
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&o.stdout);
    o.status
        .success()
        .then(|| text.lines().next().unwrap_or("").trim().to_string())
}

/// Validates `words` for Vulkan 1.2; `Err` with the first lines of the validator's message
/// when it rejects the module (or cannot be run).
pub fn spirv_val(words: &[u32]) -> Result<(), String> {
    match validator() {
        Validator::Linked => linked::validate(words),
        Validator::Program(p) => program(&p, words),
    }
}

/// Runs the validator program `p` on `words` (through a temporary file).
fn program(p: &std::ffi::OsStr, words: &[u32]) -> Result<(), String> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let path = std::env::temp_dir().join(format!(
        "dmsh-val-{}-{}.spv",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(&path, bytes).map_err(|e| e.to_string())?;
    let out = std::process::Command::new(p)
        .args(["--target-env", "vulkan1.2"])
        .arg(&path)
        .output()
        .map_err(|e| format!("spirv-val: {e}"));
    let _ = std::fs::remove_file(&path);
    let out = out?;
    if out.status.success() {
        Ok(())
    } else {
        let mut s = String::from_utf8_lossy(&out.stderr).to_string();
        s.push_str(&String::from_utf8_lossy(&out.stdout));
        Err(first_lines(&s))
    }
}

/// The first three lines of a validator's message, joined.
fn first_lines(s: &str) -> String {
    s.lines().take(3).collect::<Vec<_>>().join(" | ")
}

/// SPIRV-Tools' C API (`spirv-tools/libspirv.h`), where build.rs linked it.
#[cfg(dmsh_spirv_tools)]
mod linked {
    use std::ffi::{c_char, c_int, c_void, CStr};

    /// The library is linked.
    pub const AVAILABLE: bool = true;

    /// `spv_const_binary_t`.
    #[repr(C)]
    struct Binary {
        code: *const u32,
        word_count: usize,
    }

    /// `spv_position_t`.
    #[repr(C)]
    struct Position {
        line: usize,
        column: usize,
        index: usize,
    }

    /// `spv_diagnostic_t`.
    #[repr(C)]
    struct Diagnostic {
        position: Position,
        error: *mut c_char,
        is_text_source: bool,
    }

    /// `SPV_ENV_VULKAN_1_2`.
    const ENV_VULKAN_1_2: c_int = 23;

    extern "C" {
        fn spvContextCreate(env: c_int) -> *mut c_void;
        fn spvValidate(
            context: *const c_void,
            binary: *const Binary,
            diagnostic: *mut *mut Diagnostic,
        ) -> c_int;
        fn spvDiagnosticDestroy(diagnostic: *mut Diagnostic);
        fn spvSoftwareVersionDetailsString() -> *const c_char;
    }

    /// One context per thread (it holds the grammar tables; never destroyed: threads of a
    /// build live as long as the program).
    struct Context(*mut c_void);

    thread_local! {
        static CONTEXT: Context = Context(unsafe { spvContextCreate(ENV_VULKAN_1_2) });
    }

    /// The library's version text (what `spirv-val --version` prints first).
    pub fn version() -> Option<String> {
        // SAFETY: a static NUL-terminated string.
        let s = unsafe { CStr::from_ptr(spvSoftwareVersionDetailsString()) };
        Some(s.to_string_lossy().into_owned())
    }

    /// Validates `words` in this process.
    pub fn validate(words: &[u32]) -> Result<(), String> {
        CONTEXT.with(|c| {
            if c.0.is_null() {
                return Err("SPIRV-Tools: no context for Vulkan 1.2".into());
            }
            let b = Binary {
                code: words.as_ptr(),
                word_count: words.len(),
            };
            let mut d: *mut Diagnostic = std::ptr::null_mut();
            // SAFETY: a live context, a binary over `words`, a diagnostic pointer to fill.
            let r = unsafe { spvValidate(c.0, &b, &mut d) };
            let msg = if d.is_null() {
                String::new()
            } else {
                // SAFETY: the library made `d`; its error text is NUL-terminated or NULL.
                let m = unsafe {
                    let e = (*d).error;
                    let m = if e.is_null() {
                        String::new()
                    } else {
                        CStr::from_ptr(e).to_string_lossy().into_owned()
                    };
                    spvDiagnosticDestroy(d);
                    m
                };
                m
            };
            if r == 0 {
                Ok(())
            } else {
                Err(super::first_lines(&format!("error: {msg}")))
            }
        })
    }
}

/// Without the library: nothing linked.
#[cfg(not(dmsh_spirv_tools))]
mod linked {
    /// The library is not linked.
    pub const AVAILABLE: bool = false;

    /// Never called without the library.
    pub fn version() -> Option<String> {
        None
    }

    /// Never called without the library.
    pub fn validate(_: &[u32]) -> Result<(), String> {
        Err("SPIRV-Tools is not linked".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_truncated_module_is_refused_and_a_minimal_one_accepted() {
        if version().is_none() {
            println!("SKIP: no SPIR-V validator here");
            return;
        }
        // An empty compute shader: OpCapability Shader, OpMemoryModel Logical GLSL450,
        // OpEntryPoint GLCompute %1 "main", OpExecutionMode %1 LocalSize 1 1 1, %2 void,
        // %3 void(), %1 = OpFunction, a label, OpReturn, OpFunctionEnd.
        #[rustfmt::skip]
        let ok = [
            0x0723_0203, 0x0001_0500, 0, 5, 0,
            0x0002_0011, 1,
            0x0003_000e, 0, 1,
            0x0005_000f, 5, 1, 0x6e69_616d, 0,
            0x0006_0010, 1, 17, 1, 1, 1,
            0x0002_0013, 2,
            0x0003_0021, 3, 2,
            0x0005_0036, 2, 1, 0, 3,
            0x0002_00f8, 4,
            0x0001_00fd,
            0x0001_0038,
        ];
        assert_eq!(spirv_val(&ok), Ok(()));
        let e = spirv_val(&ok[..ok.len() - 1]).unwrap_err();
        assert!(e.contains("error"), "{e}");
        println!("{:?}: {e}", validator());
    }
}
