//! The C ABI (`include/dmsh_runtime.h`): every function catches panics, checks its pointers
//! and returns a [`Status`]; the message of the last failure on a thread is
//! `dmsh_last_error()`.

use std::cell::RefCell;
use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use crate::abi::{self, OpenParams, Shader, WarmRow};
use crate::error::{Error, Status};
use crate::title::{OpenOptions, Title};
use crate::warm::{Kind, List, Row};

/// An open title as C sees it (`DmshTitle`, opaque; the same layout as [`Title`]).
#[repr(transparent)]
pub struct DmshTitle(Title);

/// The message of the last failure on this thread: a copy, or a pointer into a title's
/// storage (a shader's recorded failure) valid while that title is open.
enum Last {
    None,
    Owned(std::ffi::CString),
    Static(&'static CStr),
    Borrowed(*const c_char),
}

thread_local! {
    static LAST: RefCell<Last> = const { RefCell::new(Last::None) };
}

fn set_last(l: Last) {
    LAST.with(|c| *c.borrow_mut() = l);
}

fn fail(e: Error) -> Status {
    let s = e.status;
    set_last(match e.message {
        std::borrow::Cow::Borrowed(m) => Last::Static(m),
        std::borrow::Cow::Owned(m) => Last::Owned(m),
    });
    s
}

/// Runs `f` on an open title under [`guard`] (a NULL title is `DMSH_ERR_ARGUMENT`).
///
/// # Safety
/// `title` is NULL or an open title.
unsafe fn with_title(title: *const DmshTitle, f: impl FnOnce(&Title) -> Status) -> Status {
    guard(|| match title.as_ref() {
        Some(t) => f(&t.0),
        None => arg("title"),
    })
}

/// Runs `f`, turning a panic into `Status::Internal` (never unwinding into C).
fn guard(f: impl FnOnce() -> Status) -> Status {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let what = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        fail(Error::new(
            Status::Internal,
            format!("internal error (please report): {what}"),
        ))
    })
}

fn arg(what: &str) -> Status {
    fail(Error::new(Status::Argument, format!("{what} is NULL")))
}

/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn text<'a>(p: *const c_char, what: &str) -> Result<Option<&'a str>, Status> {
    if p.is_null() {
        return Ok(None);
    }
    CStr::from_ptr(p)
        .to_str()
        .map(Some)
        .map_err(|_| fail(Error::new(Status::Argument, format!("{what} is not UTF-8"))))
}

/// The message of the last call that failed on this thread (empty when none). Valid until
/// the next failing call on this thread, and, for a shader's failure, while its title is open.
#[no_mangle]
pub extern "C" fn dmsh_last_error() -> *const c_char {
    LAST.with(|c| match &*c.borrow() {
        Last::None => c"".as_ptr(),
        Last::Owned(m) => m.as_ptr(),
        Last::Static(m) => m.as_ptr(),
        Last::Borrowed(p) => *p,
    })
}

/// The chain version compiled in (`DMSH_CHAIN`), or NULL.
#[no_mangle]
pub extern "C" fn dmsh_compiled_chain() -> *const c_char {
    crate::chain::compiled_c().map_or(ptr::null(), CStr::as_ptr)
}

/// Computes the key of the program the game hands over.
///
/// # Safety
/// `control` points to `control_len` readable bytes, `code` to `code_len`, `key` to a
/// `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn dmsh_shader_key(
    control: *const u8,
    control_len: usize,
    code: *const u8,
    code_len: usize,
    key: *mut u64,
) -> Status {
    guard(|| {
        if control.is_null() || code.is_null() || key.is_null() {
            return arg("control, code or key");
        }
        let (c, d) = (
            std::slice::from_raw_parts(control, control_len),
            std::slice::from_raw_parts(code, code_len),
        );
        match crate::key::of(c, d) {
            Ok(k) => {
                *key = k;
                Status::Ok
            }
            Err(e) => fail(e),
        }
    })
}

/// Computes the key `dmsh build --spirv` gives a Vulkan module captured without the host's
/// own key: the first 16 hex digits of the sha256 of its `len` bytes. Does not allocate.
///
/// # Safety
/// `module` points to `len` readable bytes, `key` to a `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn dmsh_spirv_key(module: *const u8, len: usize, key: *mut u64) -> Status {
    guard(|| {
        if module.is_null() || key.is_null() {
            return arg("module or key");
        }
        *key = crate::key::of_spirv(std::slice::from_raw_parts(module, len));
        Status::Ok
    })
}

/// Parses a key's 16 lower-case hex digits.
///
/// # Safety
/// `hex` is a NUL-terminated string, `key` points to a `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn dmsh_key_parse(hex: *const c_char, key: *mut u64) -> Status {
    guard(|| {
        if hex.is_null() || key.is_null() {
            return arg("hex or key");
        }
        match CStr::from_ptr(hex)
            .to_str()
            .ok()
            .and_then(crate::key::parse)
        {
            Some(k) => {
                *key = k;
                Status::Ok
            }
            None => fail(Error::fixed(
                Status::Argument,
                c"a key is 16 lower-case hex digits",
            )),
        }
    })
}

/// Writes a key's 16 hex digits and a NUL to `out` (17 bytes).
///
/// # Safety
/// `out` points to 17 writable bytes.
#[no_mangle]
pub unsafe extern "C" fn dmsh_key_format(key: u64, out: *mut c_char) {
    if out.is_null() {
        return;
    }
    let h = crate::key::format(key);
    ptr::copy_nonoverlapping(h.as_ptr().cast::<c_char>(), out, 16);
    *out.add(16) = 0;
}

/// The size of the first version of `DmshOpenParams` (up to `chain`).
const OPEN_PARAMS_V1: usize = std::mem::offset_of!(OpenParams, pso_manifest);
/// The size of the version with the warm-up lists.
const OPEN_PARAMS_V2: usize = std::mem::size_of::<OpenParams>();

/// Opens a title; `*out` is the title (close it with `dmsh_close`) or NULL on failure.
///
/// # Safety
/// `params` points to a `DmshOpenParams` of `params->size` bytes whose strings are NULL or
/// NUL-terminated; `out` points to a `DmshTitle *`.
#[no_mangle]
pub unsafe extern "C" fn dmsh_open(params: *const OpenParams, out: *mut *mut DmshTitle) -> Status {
    guard(|| {
        if out.is_null() {
            return arg("out");
        }
        *out = ptr::null_mut();
        if params.is_null() {
            return arg("params");
        }
        // Read the size first: an older caller's block may be shorter than ours.
        let size = ptr::read(params.cast::<u32>()) as usize;
        if size < OPEN_PARAMS_V1 {
            return fail(Error::new(
                Status::Argument,
                format!("DmshOpenParams.size {size}, this runtime needs at least {OPEN_PARAMS_V1}"),
            ));
        }
        // Fields after `chain` only when the caller's block has them.
        let v1 = ptr::read(params.cast::<[u8; OPEN_PARAMS_V1]>());
        let p = if size >= OPEN_PARAMS_V2 {
            ptr::read(params)
        } else {
            let mut p = OpenParams {
                size: 0,
                flags: 0,
                shader_map: ptr::null(),
                library_dir: ptr::null(),
                c1_list: ptr::null(),
                chain: ptr::null(),
                pso_manifest: ptr::null(),
                pso_user: ptr::null(),
            };
            ptr::copy_nonoverlapping(v1.as_ptr(), ptr::addr_of_mut!(p).cast::<u8>(), v1.len());
            p
        };
        let get = |ptr, what| text(ptr, what);
        let (map, lib, c1, chain) = match (
            get(p.shader_map, "shader_map"),
            get(p.library_dir, "library_dir"),
            get(p.c1_list, "c1_list"),
            get(p.chain, "chain"),
        ) {
            (Ok(m), Ok(Some(l)), Ok(c), Ok(v)) => (m, l, c, v),
            (_, Ok(None), ..) => return arg("library_dir"),
            (Err(s), ..) | (_, Err(s), ..) | (.., Err(s), _) | (.., Err(s)) => return s,
        };
        let (seed, device) = match (
            get(p.pso_manifest, "pso_manifest"),
            get(p.pso_user, "pso_user"),
        ) {
            (Ok(s), Ok(d)) => (s, d),
            (Err(s), _) | (_, Err(s)) => return s,
        };
        let o = OpenOptions {
            shader_map: map.map(Into::into),
            library_dir: lib.into(),
            c1_list: c1.map(Into::into),
            chain: chain.map(str::to_string),
            eager: p.flags & abi::OPEN_EAGER != 0,
            warm_seed: seed.map(Into::into),
            warm_device: device.map(Into::into),
            warm_off: p.flags & abi::OPEN_WARM_OFF != 0,
        };
        match Title::open(&o) {
            Ok(t) => {
                *out = Box::into_raw(Box::new(DmshTitle(t)));
                Status::Ok
            }
            Err(e) => fail(e),
        }
    })
}

/// Closes a title (NULL is ignored). Its shaders' records and strings go with it.
///
/// # Safety
/// `title` is NULL or from `dmsh_open`, not closed before, and no other thread uses it.
#[no_mangle]
pub unsafe extern "C" fn dmsh_close(title: *mut DmshTitle) {
    if !title.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(title))));
    }
}

/// Looks `key` up for depth mode `depth` (`DMSH_DEPTH_*`): `*shader` is its record, `*entry`
/// the Metal entry point for that mode. Safe from many threads at once; after a shader's
/// first lookup (or an `DMSH_OPEN_EAGER` open) it neither allocates nor reads a file.
///
/// # Safety
/// `title` is an open title, `shader` and `entry` point to writable pointers.
#[no_mangle]
pub unsafe extern "C" fn dmsh_lookup(
    title: *const DmshTitle,
    key: u64,
    depth: u32,
    shader: *mut *const Shader,
    entry: *mut *const c_char,
) -> Status {
    lookup(title, key, abi::VARIANT_MAIN, depth, shader, entry)
}

/// Looks up variant `variant` of `key` (`DMSH_VARIANT_*`) for depth mode `depth`: MAIN is
/// `<key>_b` (as `dmsh_lookup`), DRAW `<key>_p` (a geometry shader's draw vertex function),
/// CAPTURE `<key>_g` (a vertex shader's capture form), PRIMITIVE_ID `<key>_q` (a fragment
/// shader reading gl_PrimitiveID from the geometry draw's varying), DUAL_SOURCE `<key>_d` (a
/// Vulkan fragment module's dual-source form). A variant that was not
/// built is `DMSH_ERR_NOT_BUILT` naming the key and file. The same thread-safety and
/// no-allocation promises as `dmsh_lookup` (variants are cached like shaders).
///
/// # Safety
/// `title` is an open title, `shader` and `entry` point to writable pointers.
#[no_mangle]
pub unsafe extern "C" fn dmsh_lookup_pass(
    title: *const DmshTitle,
    key: u64,
    variant: u32,
    depth: u32,
    shader: *mut *const Shader,
    entry: *mut *const c_char,
) -> Status {
    lookup(title, key, variant, depth, shader, entry)
}

/// `dmsh_lookup` and `dmsh_lookup_pass`.
///
/// # Safety
/// As `dmsh_lookup_pass`.
unsafe fn lookup(
    title: *const DmshTitle,
    key: u64,
    variant: u32,
    depth: u32,
    shader: *mut *const Shader,
    entry: *mut *const c_char,
) -> Status {
    guard(|| {
        if title.is_null() || shader.is_null() || entry.is_null() {
            return arg("title, shader or entry");
        }
        *shader = ptr::null();
        *entry = ptr::null();
        if depth > abi::DEPTH_ZERO_TO_ONE {
            return fail(Error::fixed(
                Status::Argument,
                c"depth is DMSH_DEPTH_GL or DMSH_DEPTH_ZERO_TO_ONE",
            ));
        }
        match (*title).0.lookup_pass(key, variant, depth) {
            Ok(f) => {
                *shader = f.shader.shader();
                *entry = f.entry.as_ptr();
                Status::Ok
            }
            Err(e) => {
                set_last(Last::Borrowed(e.message.as_ptr()));
                e.status
            }
        }
    })
}

/// Whether the geometry kernel `kernel` (a geometry key's `<key>_b`, `lowering->pass`
/// `DMSH_PASS_GEOMETRY_KERNEL`) assembles draws of `VkPrimitiveTopology` `vk_topology`:
/// `DMSH_OK` when it does, else `DMSH_ERR_TOPOLOGY` with a message naming the key, the
/// topology asked and the ones served (the host must not draw it: the result would be
/// silently wrong). A NULL shader or one that is not a geometry kernel is
/// `DMSH_ERR_ARGUMENT`. No allocation when `DMSH_OK`.
///
/// # Safety
/// `kernel` is NULL or a record of an open title.
#[no_mangle]
pub unsafe extern "C" fn dmsh_check_topology(kernel: *const Shader, vk_topology: u32) -> Status {
    guard(|| {
        let Some(s) = kernel.as_ref() else {
            return arg("kernel");
        };
        // SAFETY: a record of an open title points to its lowering record or is NULL.
        match crate::shader::check_topology(s, vk_topology) {
            Ok(()) => Status::Ok,
            Err(e) => fail(e),
        }
    })
}

/// The number of keys in the title's shader map.
///
/// # Safety
/// `title` is an open title or NULL (0).
#[no_mangle]
pub unsafe extern "C" fn dmsh_title_key_count(title: *const DmshTitle) -> u32 {
    if title.is_null() {
        return 0;
    }
    (*title).0.keys().len().try_into().unwrap_or(u32::MAX)
}

/// The `i`-th key of the shader map (sorted), or 0 past the end.
///
/// # Safety
/// `title` is an open title or NULL (0).
#[no_mangle]
pub unsafe extern "C" fn dmsh_title_key_at(title: *const DmshTitle, i: u32) -> u64 {
    if title.is_null() {
        return 0;
    }
    (*title).0.keys().get(i as usize).copied().unwrap_or(0)
}

/// The title's chain version V (valid while it is open), or NULL for a NULL title.
///
/// # Safety
/// `title` is an open title or NULL.
#[no_mangle]
pub unsafe extern "C" fn dmsh_title_chain(title: *const DmshTitle) -> *const c_char {
    if title.is_null() {
        return ptr::null();
    }
    (*title).0.chain_c().as_ptr()
}

/// The c1 list's state: `DMSH_OK` when it was read, else `DMSH_ERR_C1_MISSING`,
/// `DMSH_ERR_C1_VERSION` or `DMSH_ERR_C1_BAD` (every shader then has `DMSH_SHADER_C1_FULL`);
/// `*message` (when not NULL) is why, or "" (valid while the title is open).
///
/// # Safety
/// `title` is an open title; `message` is NULL or points to a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn dmsh_title_c1_status(
    title: *const DmshTitle,
    message: *mut *const c_char,
) -> Status {
    guard(|| {
        if title.is_null() {
            return arg("title");
        }
        let (s, m) = match (*title).0.c1() {
            Ok(()) => (Status::Ok, c"".as_ptr()),
            Err(e) => (e.status, e.message.as_ptr()),
        };
        if !message.is_null() {
            *message = m;
        }
        s
    })
}

/// The number of warm-up rows (seed list first, then device list), 0 for a NULL title.
///
/// # Safety
/// `title` is an open title or NULL.
#[no_mangle]
pub unsafe extern "C" fn dmsh_warm_count(title: *const DmshTitle) -> u32 {
    if title.is_null() {
        return 0;
    }
    (*title).0.warm_c_rows().len() as u32
}

/// The `i`-th warm-up row (valid while the title is open), or NULL past the end. No
/// allocation.
///
/// # Safety
/// `title` is an open title or NULL.
#[no_mangle]
pub unsafe extern "C" fn dmsh_warm_row(title: *const DmshTitle, i: u32) -> *const WarmRow {
    if title.is_null() {
        return ptr::null();
    }
    (*title)
        .0
        .warm_c_rows()
        .get(i as usize)
        .map_or(ptr::null(), |r| r as *const WarmRow)
}

/// A warm-up list's state (`list`: `DMSH_WARM_SEED` or `DMSH_WARM_DEVICE`): `DMSH_OK` when it
/// was read, else `DMSH_ERR_WARM_MISSING` or `DMSH_ERR_WARM_BAD`. `*rows` and `*skipped`
/// (when not NULL) are its rows and skipped lines; `*message` (when not NULL) is why it is not
/// used, or its skipped lines with their reasons, or "" (valid while the title is open).
///
/// # Safety
/// `title` is an open title; `rows`, `skipped` and `message` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn dmsh_warm_list(
    title: *const DmshTitle,
    list: u32,
    rows: *mut u32,
    skipped: *mut u32,
    message: *mut *const c_char,
) -> Status {
    with_title(title, |t| {
        let l = match list {
            abi::WARM_SEED => List::Seed,
            abi::WARM_DEVICE => List::Device,
            _ => {
                return fail(Error::fixed(
                    Status::Argument,
                    c"list is DMSH_WARM_SEED or DMSH_WARM_DEVICE",
                ))
            }
        };
        let st = t.warm_list(l);
        if !rows.is_null() {
            *rows = st.rows();
        }
        if !skipped.is_null() {
            *skipped = st.skipped();
        }
        if !message.is_null() {
            *message = st.report().as_ptr();
        }
        st.status().map_or_else(|e| e.status, |()| Status::Ok)
    })
}

/// Appends a row built on the spot to the device list, crash-safely (the old list or the
/// new one survives a kill): `kind` `DMSH_WARM_*`; `R` rows give `fragment_key` (NULL: none),
/// `depth` and `state_len` bytes of the host's settings; `S` and `C` rows NULL, 0, NULL, 0.
/// A row already listed is not written again (`DMSH_OK`). Thread-safe.
///
/// # Safety
/// `title` is an open title; `fragment_key` is NULL or readable; `state` points to
/// `state_len` readable bytes (or is NULL with 0).
#[no_mangle]
pub unsafe extern "C" fn dmsh_warm_append(
    title: *const DmshTitle,
    kind: u32,
    key: u64,
    fragment_key: *const u64,
    depth: u32,
    state: *const u8,
    state_len: usize,
) -> Status {
    with_title(title, |t| {
        if state.is_null() && state_len != 0 {
            return arg("state");
        }
        let Some(kind) = Kind::from_u32(kind) else {
            return fail(Error::fixed(
                Status::Argument,
                c"kind is DMSH_WARM_SHADER, DMSH_WARM_RENDER or DMSH_WARM_COMPUTE",
            ));
        };
        let state = if state_len == 0 {
            &[][..]
        } else {
            std::slice::from_raw_parts(state, state_len)
        };
        let row = Row {
            kind,
            key,
            fragment: (!fragment_key.is_null()).then(|| *fragment_key),
            depth,
            state: state.into(),
        };
        match t.warm_append(&row) {
            Ok(_) => Status::Ok,
            Err(e) => fail(e),
        }
    })
}
