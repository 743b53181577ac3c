//! NVN's storage-buffer layout: a compute program whose buffers are reached through c0 records
//! at 0x310 + 16·r is translated with `Abi::Nvn`, its accesses become `sbuf` resources, and it
//! runs on the Vulkan device with the right results. A second test reaches one buffer through
//! a 64-bit address in the game's own uniform buffer (c\[3\]\[0x38\], seed 000's `sbuf_ubo`).
//!
//! No NVN-compiled compute binary is available here, so the program is the corpus's
//! `cs_ssbo_saxpy` (uam) moved onto NVN's binding layout with our encoder: every operand
//! `c[0x0][0x140 + k]` (deko3d's storage-buffer records, k < 0x100) becomes
//! `c[0x0][0x310 + k]`, and `c[0x2][k]` (uam's uniform buffer 0) becomes `c[0x3][k]` (NVN's).
//! Each moved word must print exactly as the original with only that operand changed (the
//! re-encoding checked against the decoder/printer that matches nvdisasm). The expected
//! results come from the GLSL's semantics (`y[i] = a * x[i] + y[i]` for `i < n`), computed here
//! on inputs whose products and sums are exact.

#[path = "../../spv/tests/common/mod.rs"]
mod common;

use dmsh_ir::lift::{Abi, Config};
use dmsh_isa::{Field, Instr};
use dmsh_spv::{translate, Options};
use dmsh_vk::{Bind, BufferSpec, ComputeJob, PointerPatch, ResourceRef};

const DEKO3D_SBUF: u32 = 0x140;
const NVN_SBUF: u32 = 0x310;

/// Translates `code` as an NVN compute program (64×1×1; c0 and the uniform banks 3–17 as
/// buffer banks) and checks the module with spirv-val.
fn translate_nvn(code: &[u8]) -> dmsh_spv::Output {
    let mut cfg = Config::compute(Abi::Nvn, [64, 1, 1]);
    cfg.buffer_banks.insert(0, (0, 0x1000));
    for b in 3..18u8 {
        cfg.buffer_banks.insert(b, (0, 0x10000));
    }
    let out = translate(code, &cfg, &Options::default()).expect("translate");
    common::spirv_val(&out.words).expect("spirv-val");
    out
}

/// 128 x and 128 y inputs, k/8 values in [-8, 8) from a xorshift seeded with `seed`, so
/// a * x + y is exact in f32 (fused or not).
fn saxpy_inputs(seed: u32) -> (Vec<f32>, Vec<f32>) {
    let mut s = seed;
    let mut eighth = || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        (s % 128) as f32 / 8.0 - 8.0
    };
    let x: Vec<f32> = (0..128).map(|_| eighth()).collect();
    let y: Vec<f32> = (0..128).map(|_| eighth()).collect();
    (x, y)
}

/// The uniform buffer of cs_ssbo_saxpy: a, n, zeros up to `len` bytes.
fn saxpy_ubo(a: f32, n: u32, len: usize) -> Vec<u8> {
    let mut ubo = a.to_le_bytes().to_vec();
    ubo.extend(n.to_le_bytes());
    ubo.resize(len, 0);
    ubo
}

/// The job's buffers, in the order the binds name them: x (0), y (1), ubo (2), c0 (3).
fn saxpy_buffers(x: &[f32], y: &[f32], ubo: Vec<u8>, c0: Vec<u8>) -> Vec<BufferSpec> {
    let bytes = |v: &[f32]| v.iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<u8>>();
    let spec = |name: &str, init: Vec<u8>| BufferSpec {
        name: name.into(),
        size: init.len() as u64,
        init,
    };
    vec![
        spec("x", bytes(x)),
        spec("y", bytes(y)),
        spec("ubo", ubo),
        spec("c0", c0),
    ]
}

/// Binds each resource of `reflection` to a buffer of [`saxpy_buffers`]: storage buffer 0
/// to x, the resource `y` names to y, c\[3\] to the uniform buffer and c\[0\] to c0; panics on
/// any other resource.
fn saxpy_binds(
    reflection: &dmsh_vk::Reflection,
    y: impl Fn(&dmsh_vk::Resource) -> Option<ResourceRef>,
) -> Vec<Bind> {
    let bind = |r: &dmsh_vk::Resource| {
        if let Some(resource) = y(r) {
            return Bind {
                resource,
                buffer: 1,
            };
        }
        let (resource, buffer) = match (r.kind.as_str(), r.index()) {
            ("sbuf", 0) => (ResourceRef::Sbuf(0), 0),
            ("cbuf", 3) => (ResourceRef::Cbuf(3), 2),
            ("cbuf", 0) => (ResourceRef::Cbuf(0), 3),
            (k, n) => panic!("unexpected resource {k} {n}"),
        };
        Bind { resource, buffer }
    };
    reflection.resources.iter().map(bind).collect()
}

/// What the GLSL computes: `y[i] = a * x[i] + y[i]` for `i < n`, y\[i\] otherwise.
fn saxpy_expected(a: f32, n: u32, x: &[f32], y: &[f32]) -> Vec<f32> {
    (0..y.len())
        .map(|i| {
            if (i as u32) < n {
                a.mul_add(x[i], y[i])
            } else {
                y[i]
            }
        })
        .collect()
}

/// Rewrites the constant-bank operand of one instruction; returns the new word.
fn moved(i: &Instr, bank: i64, off: i64) -> u64 {
    let fields: Vec<(Field, i64)> = i
        .fields()
        .map(|(f, v)| match f {
            Field::CbufBank => (f, bank),
            Field::CbufOffset => (f, off),
            _ => (f, v),
        })
        .collect();
    Instr::build(i.form(), &fields).expect("re-encode").encode()
}

/// cs_ssbo_saxpy's code on NVN's layout, with the number of moved operands.
fn nvn_saxpy() -> (Vec<u8>, usize) {
    moved_saxpy(|bank, at| match bank {
        0 if (DEKO3D_SBUF..DEKO3D_SBUF + 0x100).contains(&at) => {
            Some((0, at - DEKO3D_SBUF + NVN_SBUF))
        }
        2 => Some((3, at)),
        _ => None,
    })
}

/// cs_ssbo_saxpy's code with each constant operand c\[bank\]\[at\] that `to` maps moved there.
fn moved_saxpy(to: impl Fn(u32, u32) -> Option<(u32, u32)>) -> (Vec<u8>, usize) {
    let path = dmsh_testsupport::reference::dksh::corpus_dir().join("cs_ssbo_saxpy.comp.code.bin");
    let mut code = std::fs::read(&path).expect("corpus code");
    let mut n = 0;
    let words: Vec<(u64, Instr)> = dmsh_isa::stream::instructions(&code)
        .filter_map(|(off, r, _)| r.ok().map(|i| (off, i)))
        .collect();
    for (off, i) in words {
        let Some(c) = i.cbuf() else { continue };
        if c.index.is_some() {
            continue;
        }
        let (bank, at) = (c.bank, c.offset as u32);
        let Some(to) = to(bank, at) else {
            continue;
        };
        let w = moved(&i, to.0 as i64, to.1 as i64);
        let j = dmsh_isa::decode(w).expect("moved word decodes");
        let want = i.print(off, 0).replace(
            &format!("c[{bank:#x}][{at:#x}]"),
            &format!("c[{:#x}][{:#x}]", to.0, to.1),
        );
        assert_eq!(j.print(off, 0), want, "word at {off:#x}");
        code[off as usize..off as usize + 8].copy_from_slice(&w.to_le_bytes());
        n += 1;
    }
    (code, n)
}

#[test]
fn nvn_compute_storage_buffers_at_0x310() {
    let (code, moved) = nvn_saxpy();
    // Four record words (x and y, low and high) and two uniform reads (a, n).
    assert_eq!(moved, 6, "operands moved onto NVN's layout");
    let out = translate_nvn(&code);
    let refl = &out.reflection;
    let sbufs: Vec<u32> = refl
        .resources
        .iter()
        .filter(|r| r.kind == "sbuf")
        .map(|r| r.bank)
        .collect();
    assert_eq!(sbufs, [0, 1], "x and y are storage buffers 0 and 1");
    assert!(!refl.uses_global_addresses, "every access traced");

    if dmsh_vk::shared().is_err() {
        return println!("skipped run: no Vulkan device");
    }
    let (x, y) = saxpy_inputs(0x1234_5678);
    let (a, n) = (1.5f32, 100u32);
    let ubo = saxpy_ubo(a, n, 16);
    // NVN's driver bank: storage buffer r's {address, size} at 0x310 + 16r.
    let mut c0 = vec![0u8; 0x400];
    for r in 0..2 {
        let at = (NVN_SBUF + 16 * r + 8) as usize;
        c0[at..at + 4].copy_from_slice(&512u32.to_le_bytes());
    }
    let reflection = dmsh_vk::Reflection::from_json(&refl.to_json()).expect("reflection");
    let binds = saxpy_binds(&reflection, |r| {
        (r.kind == "sbuf" && r.index() == 1).then_some(ResourceRef::Sbuf(1))
    });
    let job = ComputeJob {
        spirv: out.words.clone(),
        reflection,
        buffers: saxpy_buffers(&x, &y, ubo, c0),
        binds,
        pointers: (0..2)
            .map(|r| PointerPatch {
                buffer: 3,
                offset: (NVN_SBUF + 16 * r) as u64,
                target: r as usize,
                add: 0,
                encoding: Default::default(),
            })
            .collect(),
        grid: [2, 1, 1],
        textures: Vec::new(),
    };
    let res = dmsh_vk::run_compute(&job).expect("run");
    let got = res.u32s(1);
    for (i, want) in saxpy_expected(a, n, &x, &y).iter().enumerate() {
        assert_eq!(got[i], want.to_bits(), "y[{i}]");
    }
    let xs = res.u32s(0);
    assert!(
        xs.iter().zip(&x).all(|(g, w)| *g == w.to_bits()),
        "x is read-only"
    );
}

/// Where the uniform buffer keeps y's address in [`storage_buffer_address_in_the_uniform_buffer`].
const Y_AT: u32 = 0x38;

/// cs_ssbo_saxpy with x (storage buffer 0) on NVN's c0 record 0 and y's address moved from its
/// record into the uniform buffer (c\[3\]\[0x38\], c\[3\]\[0x3c\]): y must become an `sbuf_ubo`
/// (uniform slot 0, offset 0x38), read and written at offsets from that address.
#[test]
fn storage_buffer_address_in_the_uniform_buffer() {
    let (code, moved) = moved_saxpy(|bank, at| match (bank, at) {
        (0, 0x140..=0x14f) => Some((0, at - DEKO3D_SBUF + NVN_SBUF)),
        // y's record: address words only (the size word would have no uniform counterpart).
        (0, 0x150..=0x157) => Some((3, at - 0x150 + Y_AT)),
        (2, _) => Some((3, at)),
        _ => None,
    });
    assert_eq!(moved, 6, "operands moved");
    let out = translate_nvn(&code);
    let refl = &out.reflection;
    let kinds: Vec<(&str, u32, Option<u32>, Option<u32>)> = refl
        .resources
        .iter()
        .filter(|r| r.kind.starts_with("sbuf"))
        .map(|r| (r.kind.as_str(), r.bank, r.ubo, r.offset))
        .collect();
    assert_eq!(
        kinds,
        [
            ("sbuf", 0, None, None),
            ("sbuf_ubo", 0, Some(0), Some(Y_AT))
        ],
        "x in record 0, y through c[3][0x38]"
    );
    let y_res = refl
        .resources
        .iter()
        .find(|r| r.kind == "sbuf_ubo")
        .unwrap();
    assert_eq!(y_res.binding, Some(32 + (0x4000 | (Y_AT / 4))));
    // Metal indices are compact per table (docs/reflection.md): the sbuf_ubo has the highest
    // binding of the buffer-table resources, so it takes the last buffer index.
    assert_eq!(y_res.metal_index + 1, refl.metal.buffers);
    assert!(refl.metal.fits);
    assert!(!refl.uses_global_addresses, "no access left 64-bit");
    // The JSON a runner reads names the uniform slot and offset.
    let json = refl.to_json();
    let parsed = dmsh_vk::Reflection::from_json(&json).expect("reflection");
    let r = parsed.resources.iter().find(|r| r.kind == "sbuf_ubo");
    assert_eq!(r.map(|r| (r.ubo, r.offset)), Some((Some(0), Some(Y_AT))));

    if dmsh_vk::shared().is_err() {
        return println!("skipped run: no Vulkan device");
    }
    let (x, y) = saxpy_inputs(0x9e37_79b9);
    let (a, n) = (-2.5f32, 77u32);
    // The uniform buffer: a, n, and (patched below) y's device address at 0x38.
    let ubo = saxpy_ubo(a, n, 0x40);
    let mut c0 = vec![0u8; 0x400];
    c0[NVN_SBUF as usize + 8..NVN_SBUF as usize + 12].copy_from_slice(&512u32.to_le_bytes());
    let reflection = dmsh_vk::Reflection::from_json(&json).expect("reflection");
    let binds = saxpy_binds(&reflection, |r| {
        (r.kind == "sbuf_ubo").then(|| {
            let (u, o) = r.sbuf_ubo();
            ResourceRef::SbufUbo(u, o)
        })
    });
    let job = ComputeJob {
        spirv: out.words.clone(),
        reflection,
        buffers: saxpy_buffers(&x, &y, ubo, c0),
        binds,
        // The host writes the same addresses the guest code would read: x's into its c0
        // record, y's into the uniform buffer.
        pointers: vec![
            PointerPatch {
                buffer: 3,
                offset: NVN_SBUF as u64,
                target: 0,
                add: 0,
                encoding: Default::default(),
            },
            PointerPatch {
                buffer: 2,
                offset: Y_AT as u64,
                target: 1,
                add: 0,
                encoding: Default::default(),
            },
        ],
        grid: [2, 1, 1],
        textures: Vec::new(),
    };
    let res = dmsh_vk::run_compute(&job).expect("run");
    let got = res.u32s(1);
    let mut changed = 0;
    for (i, want) in saxpy_expected(a, n, &x, &y).iter().enumerate() {
        changed += usize::from(want.to_bits() != y[i].to_bits());
        assert_eq!(got[i], want.to_bits(), "y[{i}]");
    }
    assert!(
        changed > 60,
        "the expected values differ from y's initial contents"
    );
    assert!(
        res.u32s(0).iter().zip(&x).all(|(g, w)| *g == w.to_bits()),
        "x is read-only"
    );
}
