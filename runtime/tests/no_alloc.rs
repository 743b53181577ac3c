//! After a shader's first lookup, lookups (found, failed, unknown key; Rust API and C ABI)
//! allocate nothing: a global allocator counting each thread's allocations sees none across 10,000 of them.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    /// Allocations made by this thread (tests run on threads of their own).
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
}

fn allocs() -> usize {
    ALLOCS.with(Cell::get)
}

// SAFETY: forwards to the system allocator, counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count();
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count();
        System.realloc(p, l, n)
    }
}

#[global_allocator]
static A: Counting = Counting;

#[test]
fn lookups_after_the_first_allocate_nothing() {
    let good = "00000000000000aa";
    let bad = "00000000000000bb";
    let d = common::hand_title(
        "noalloc",
        &[(good, "vertex"), (bad, "vertex")],
        &[(good, common::vertex_json(common::V, 1))],
    );
    let opening = allocs();
    let t = common::open(&d).unwrap();
    let keys = [0xaa_u64, 0xbb, 0xcc];
    for &k in &keys {
        let _ = t.lookup(k, 0);
    }
    // The counter works: opening and the first lookups allocate.
    assert!(allocs() > opening);
    let before = allocs();
    let mut found = 0;
    for i in 0..10_000 {
        let k = keys[i % keys.len()];
        if let Ok(f) = t.lookup(std::hint::black_box(k), (i % 2) as u32) {
            found += std::hint::black_box(f.shader.bindings().len());
        }
    }
    let after = allocs();
    println!(
        "10000 lookups: {} allocations, {found} bindings seen",
        after - before
    );
    assert_eq!(after, before);
}

#[test]
fn c_abi_lookups_after_the_first_allocate_nothing() {
    use dmsh_runtime::ffi::*;
    use std::ffi::CString;
    let good = "00000000000000aa";
    let d = common::hand_title(
        "noalloc-c",
        &[(good, "vertex"), ("00000000000000bb", "fragment")],
        &[(good, common::vertex_json(common::V, 1))],
    );
    let map = CString::new(d.join("shader_map.tsv").to_str().unwrap()).unwrap();
    let lib = CString::new(d.to_str().unwrap()).unwrap();
    let v = CString::new(common::V).unwrap();
    let p = dmsh_runtime::abi::OpenParams {
        size: std::mem::size_of::<dmsh_runtime::abi::OpenParams>() as u32,
        flags: dmsh_runtime::abi::OPEN_EAGER,
        shader_map: map.as_ptr(),
        library_dir: lib.as_ptr(),
        c1_list: std::ptr::null(),
        chain: v.as_ptr(),
        pso_manifest: std::ptr::null(),
        pso_user: std::ptr::null(),
    };
    let mut t = std::ptr::null_mut();
    let (mut s, mut e) = (std::ptr::null(), std::ptr::null());
    // SAFETY: live pointers; the title is closed at the end.
    unsafe {
        assert_eq!(dmsh_open(&p, &mut t), dmsh_runtime::Status::Ok);
        // One failing call first, so this thread's error slot exists.
        let _ = dmsh_lookup(t, 0xcc, 0, &mut s, &mut e);
        let before = allocs();
        let mut statuses = [0usize; 16];
        for i in 0..10_000u64 {
            let k = [0xaa, 0xbb, 0xcc][(i % 3) as usize];
            statuses[dmsh_lookup(t, k, (i % 2) as u32, &mut s, &mut e) as usize] += 1;
        }
        let after = allocs();
        dmsh_close(t);
        println!(
            "10000 C lookups (eager open): {} allocations, statuses {statuses:?}",
            after - before
        );
        assert_eq!(after, before);
        assert!(statuses[0] > 0 && statuses[7] > 0 && statuses[6] > 0);
    }
}

/// The warm-up rows' shaders are loaded at open: their very first lookups, and walking the
/// rows (Rust API and C ABI), allocate nothing.
#[test]
fn warm_up_rows_and_their_first_lookups_allocate_nothing() {
    use dmsh_runtime::warm::HEADER;
    let (vs, fs) = ("00000000000000aa", "00000000000000bb");
    let d = common::hand_title(
        "noalloc-warm",
        &[(vs, "vertex"), (fs, "fragment")],
        &[
            (vs, common::vertex_json(common::V, 1)),
            (fs, common::plain_json(common::V, "fragment")),
        ],
    );
    std::fs::write(
        d.join("pso_manifest.tsv"),
        format!("{HEADER}\nR\t{vs}\t{fs}\tz\t0102\nS\t{fs}\n"),
    )
    .unwrap();
    let t = common::open_warm(&d, None, None).unwrap();
    let before = allocs();
    let mut seen = 0;
    for i in 0..10_000 {
        let k = [0xaa_u64, 0xbb][i % 2];
        seen += std::hint::black_box(t.lookup(k, (i % 2) as u32).unwrap().shader.bindings().len());
        for r in t.warm_rows() {
            seen += std::hint::black_box(r.state.len() + r.entry.to_bytes().len());
        }
        // SAFETY: the title is open; the C records point into it.
        unsafe {
            let tp = std::ptr::addr_of!(t).cast::<dmsh_runtime::ffi::DmshTitle>();
            let n = dmsh_runtime::ffi::dmsh_warm_count(tp);
            for j in 0..n {
                seen += (*dmsh_runtime::ffi::dmsh_warm_row(tp, j)).state_len as usize;
            }
        }
    }
    let after = allocs();
    println!(
        "10000 first-and-later lookups and row walks of a warmed title: {} allocations ({seen})",
        after - before
    );
    assert_eq!(t.warm_rows().len(), 2);
    assert_eq!(after, before);
}

/// Variant lookups (found, not built, a stage that cannot have one) and topology checks
/// that pass allocate nothing after the first, through the Rust API and the C ABI.
#[test]
fn variant_lookups_and_topology_checks_after_the_first_allocate_nothing() {
    use dmsh_runtime::abi::{self, Shader};
    use dmsh_runtime::ffi::{dmsh_check_topology, dmsh_lookup_pass, DmshTitle};
    let (gs, vs) = ("00000000000000aa", "00000000000000bb");
    let d = common::hand_title(
        "noalloc-variants",
        &[(gs, "geometry"), (vs, "vertex")],
        &[
            (
                gs,
                common::lowered_json(
                    common::V,
                    "compute",
                    r#""pass": "geometry_kernel", "topologies": ["triangle_list"]"#,
                    "",
                ),
            ),
            (vs, common::vertex_json(common::V, 1)),
        ],
    );
    std::fs::write(
        d.join(format!("b-{}/{gs}_p.json", common::V)),
        common::lowered_json(common::V, "vertex", r#""pass": "geometry_draw""#, ""),
    )
    .unwrap();
    let t = common::open(&d).unwrap();
    let tp = std::ptr::addr_of!(t).cast::<DmshTitle>();
    let asks = [
        (0xaa_u64, abi::VARIANT_DRAW),
        (0xaa, abi::VARIANT_MAIN),
        (0xbb, abi::VARIANT_CAPTURE),
        (0xbb, abi::VARIANT_DRAW),
    ];
    for &(k, v) in &asks {
        let _ = t.lookup_pass(k, v, 0);
    }
    let kernel = t.lookup(0xaa, 0).unwrap().shader;
    let (mut s, mut e): (*const Shader, _) = (std::ptr::null(), std::ptr::null());
    // SAFETY: the title is open; s and e are writable. One failing call first, so this
    // thread's error slot exists.
    unsafe {
        let _ = dmsh_lookup_pass(tp, 0xbb, abi::VARIANT_CAPTURE, 0, &mut s, &mut e);
    }
    let before = allocs();
    let mut statuses = [0usize; 32];
    for i in 0..10_000 {
        let (k, v) = asks[i % asks.len()];
        if let Ok(f) = t.lookup_pass(std::hint::black_box(k), v, (i % 2) as u32) {
            statuses[0] += std::hint::black_box(f.shader.bindings().len()) + 1;
        }
        assert!(kernel.check_topology(3).is_ok());
        // SAFETY: as above; the kernel is a record of the open title.
        unsafe {
            statuses[dmsh_lookup_pass(tp, k, v, (i % 2) as u32, &mut s, &mut e) as usize] += 1;
            statuses[dmsh_check_topology(kernel.shader(), 3) as usize] += 1;
        }
    }
    let after = allocs();
    println!(
        "10000 variant lookups and topology checks: {} allocations, statuses {statuses:?}",
        after - before
    );
    assert_eq!(after, before);
    assert!(statuses[7] > 0);
}
