//! Bindless NVN texture handles that reach a `TEX.B` from another block — across a branch
//! merge, or kept in a loop variable — resolve after SSA (the `handles` pass) to the same
//! binding a handle computed in the `TEX.B`'s own block gets; two different handles meeting
//! at a phi stay a clear "unresolvable handle" error with shader key and offset.
//!
//! The fragment programs are assembled here with dmsh-isa's encoder (maxwell.tbl) plus the
//! raw words of `graphics_valid.rs`'s `nvn_fragment`. Expected bindings come from the NVN
//! layout's definition (texture r at c\[2\]\[0x20 + 8r\], separate sampler n at
//! c\[2\]\[0x568 + 8n\], separate texture n at `nvn_septex_base` + 8n → slot 128 + n, a
//! constant ORed in → `samp_id` = its high 12 bits) and from the block-local translation of
//! the same handle; spirv-val checks the SPIR-V.

mod common;

use common::asm::{at, bra, ins, isetp_ne, ldc, lop_or, mov32i, G};
use dmsh_ir::lift::dksh;
use dmsh_ir::lift::BindingLayout;
use dmsh_isa::Field;
use dmsh_spv::{Options, Output, TranslateError};

/// `TEX.B R4, R2, R0, 2D, 0xf`: coordinates R2, R3; handle R0.
const TEX_B: u64 = 0xdeb8_0000_0000_0000 | 4 | 2 << 8 | 1 << 29 | 0xf << 31 | G;
/// `MOV R0, R4`.
const MOV_R0_R4: u64 = 0x5c98_0780_0047_0000;
/// `EXIT`.
const EXIT: u64 = 0xe300_0000_0007_000f;

/// A fragment program (SPH with one RGBA target) from instruction words.
fn fragment(insts: &[u64]) -> Vec<u8> {
    let mut w = [0u32; 20];
    w[0] = 0x0006_5462;
    w[18] = 0xf;
    let mut code: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
    for (k, q) in insts.iter().enumerate() {
        if k % 3 == 0 {
            code.extend_from_slice(&0x001f_8000_fc00_07e0u64.to_le_bytes());
        }
        code.extend_from_slice(&q.to_le_bytes());
    }
    code
}

fn layout() -> BindingLayout {
    let mut l = BindingLayout::nvn(dmsh_ir::Stage::Fragment, 0x20);
    l.septex_base = Some(0x168);
    l
}

fn run(code: &[u8]) -> Result<Output, TranslateError> {
    let st = dmsh_ir::Stage::Fragment;
    let cfg = dksh::graphics_config(st, code, &[], layout(), "handles-test").expect("config");
    dmsh_spv::translate_graphics(code, &cfg, &Options::default())
}

/// The texture-side resources (kind, bank, binding, separate) of a translation, sorted.
fn tex_resources(o: &Output) -> Vec<(String, u32, u32, bool)> {
    let mut v: Vec<_> = o
        .reflection
        .resources
        .iter()
        .filter(|r| r.kind != "cbuf")
        .map(|r| (r.kind.to_string(), r.bank, r.vk_binding(), r.separate))
        .collect();
    v.sort();
    v
}

/// The handle computed in the `TEX.B`'s own block: `LDC R0; <R1>; LOP.OR R0, R0, R1; TEX.B`.
fn block_local(tex: u64, samp: u64) -> Vec<u64> {
    vec![
        ldc(0, 2, tex),
        samp,
        lop_or(0, 0, 1),
        TEX_B,
        MOV_R0_R4,
        EXIT,
    ]
}

/// Handle `c[2][0x28] | c[2][0x570]` (texture slot 1, separate sampler 1) computed before a
/// branch on a uniform word and recomputed the same way on the fall-through path: a phi of
/// two structurally equal expressions at the merge, where `TEX.B` reads it.
fn merge(tex_else: u64) -> Vec<u64> {
    vec![
        ldc(3, 3, 0),        // 0: R3 = c[3][0] (uniform buffer 0): a run-time condition
        ldc(0, 2, 0x28),     // 1
        ldc(1, 2, 0x570),    // 2
        lop_or(0, 0, 1),     // 3: R0 = handle
        isetp_ne(0, 3, 0),   // 4: P0 = R3 != 0
        bra(0, false, 5, 9), // 5: @P0 BRA 9
        ldc(0, 2, tex_else), // 6
        ldc(1, 2, 0x570),    // 7
        lop_or(0, 0, 1),     // 8: R0 = handle (again, or a different one)
        TEX_B,               // 9: merge
        MOV_R0_R4,           // 10
        EXIT,                // 11
    ]
}

#[test]
fn handle_across_a_merge_resolves_like_a_block_local_one() {
    let local = run(&fragment(&block_local(0x28, ldc(1, 2, 0x570)))).expect("block-local");
    let o = run(&fragment(&merge(0x28))).expect("handle through a merge phi");
    common::spirv_val(&o.words).expect("spirv-val");
    let t = tex_resources(&o);
    assert_eq!(
        t,
        tex_resources(&local),
        "same bindings as the block-local handle"
    );
    // Texture slot 1 ((0x28 - 0x20) / 8) sampled with separate sampler 1 ((0x570 - 0x568) / 8).
    assert!(
        t.iter().any(|r| r.0 == "texture" && r.1 == 1 && r.3),
        "{t:?}"
    );
    assert!(t.iter().any(|r| r.0 == "sampler" && r.1 == 1), "{t:?}");
}

#[test]
fn different_handles_meeting_at_a_phi_stay_unresolvable() {
    // The fall-through path loads texture slot 2 (c[2][0x30]) instead.
    let e = run(&fragment(&merge(0x30))).unwrap_err().to_string();
    let tex_off = format!("offset {:#x}", at(9));
    assert!(
        e.contains("handles-test") && e.contains("unresolvable handle") && e.contains(&tex_off),
        "{e}"
    );
    assert!(e.contains("different handles meet at a phi"), "{e}");
    println!("{e}");
}

/// The seed's case: handle `c2[0x1A0] | 0x10500000` (separate texture slot 7 under
/// `nvn_septex_base` 0x168, constant sampler 0x105) kept in a loop variable that the body
/// recomputes on some iterations only (a phi feeding the loop header's phi).
fn seed_loop() -> Vec<u64> {
    vec![
        ldc(3, 3, 0),           // 0: R3 = loop count (uniform)
        ldc(0, 2, 0x1a0),       // 1
        mov32i(1, 0x1050_0000), // 2
        lop_or(0, 0, 1),        // 3: R0 = handle
        TEX_B,                  // 4: loop head
        isetp_ne(1, 3, 1),      // 5: P1 = R3 != 1
        bra(1, false, 6, 10),   // 6: @P1 BRA 10 (skip the recompute)
        ldc(0, 2, 0x1a0),       // 7
        mov32i(1, 0x1050_0000), // 8
        lop_or(0, 0, 1),        // 9: R0 = the same handle, recomputed
        ins(
            "IADD32I",
            &[(Field::Rd, 3), (Field::Ra, 3), (Field::Imm, -1)],
        ), // 10: R3 -= 1
        isetp_ne(0, 3, 0),      // 11
        bra(0, false, 12, 4),   // 12: @P0 BRA 4
        MOV_R0_R4,              // 13
        EXIT,                   // 14
    ]
}

#[test]
fn seed_loop_handle_is_a_separate_texture_with_a_sampler_id() {
    let local = run(&fragment(&block_local(0x1a0, mov32i(1, 0x1050_0000)))).expect("local");
    let o = run(&fragment(&seed_loop())).expect("handle kept in a loop variable");
    common::spirv_val(&o.words).expect("spirv-val");
    let t = tex_resources(&o);
    assert_eq!(
        t,
        tex_resources(&local),
        "same bindings as the block-local handle"
    );
    // Separate texture 7 = (0x1a0 - 0x168) / 8 → slot 128 + 7; samp_id 0x105 on its binding.
    let tex = t.iter().find(|r| r.0 == "texture").expect("texture");
    assert_eq!(tex.1, 128 + 7, "{t:?}");
    assert!(
        t.iter()
            .any(|r| r.0 == "samp_id" && r.1 == 0x105 && r.2 == tex.2),
        "{t:?}"
    );
}

/// `TXQ.B R4, R0, TEX_HEADER_DIMENSION, 0x3`: the handle in R0, the level in R1.
fn txq_b() -> u64 {
    ins(
        "TXQ_B",
        &[
            (Field::Rd, 4),
            (Field::Ra, 0),
            (Field::Mode, 1),
            (Field::WriteMask, 3),
        ],
    )
}

#[test]
fn txq_handle_across_a_merge_resolves_like_a_block_local_one() {
    let mut local = block_local(0x28, ldc(1, 2, 0x570));
    local[3] = txq_b();
    let local = run(&fragment(&local)).expect("block-local");
    let mut merged = merge(0x28);
    merged[9] = txq_b();
    let o = run(&fragment(&merged)).expect("TXQ.B handle through a merge phi");
    common::spirv_val(&o.words).expect("spirv-val");
    let t = tex_resources(&o);
    assert_eq!(
        t,
        tex_resources(&local),
        "same bindings as the block-local handle"
    );
    // Texture slot 1 ((0x28 - 0x20) / 8).
    assert!(t.iter().any(|r| r.0 == "texture" && r.1 == 1), "{t:?}");
    let mut merged = merge(0x30);
    merged[9] = txq_b();
    let e = run(&fragment(&merged)).unwrap_err().to_string();
    assert!(e.contains("different handles meet at a phi"), "{e}");
}

/// NVN image r's handle word: c\[2\]\[tex_base + 8·32 + 8r\] (`BindingLayout::nvn`: the image
/// table follows the 32 texture handles), so image 1 is c\[2\]\[0x128\] under tex_base 0x20.
const IMG1: u64 = 0x20 + 8 * 32 + 8;

/// A 2D surface instruction with its handle in R0 (`imm`: the immediate-handle form naming
/// the same word), coordinates R2, R3, data R4 (SUATOM: operand R5).
fn surf(op: &str, imm: bool) -> u64 {
    let (form, mut f) = match (op, imm) {
        ("SULD", false) => ("SULD_DR", vec![(Field::Rd, 4), (Field::Size, 4)]),
        ("SULD", true) => ("SULD_D", vec![(Field::Rd, 4), (Field::Size, 4)]),
        ("SUST", false) => ("SUST_DR", vec![(Field::Rd, 4), (Field::Size, 4)]),
        ("SUST", true) => ("SUST_D", vec![(Field::Rd, 4), (Field::Size, 4)]),
        _ => (
            "SUATOM_D",
            vec![(Field::Rd, 4), (Field::Rb, 5), (Field::Op, 0)],
        ),
    };
    f.extend([(Field::Ra, 2), (Field::TexType, 3), (Field::Clamp, 1)]);
    if imm {
        f.push((Field::Handle, IMG1 as i64 / 4));
    } else {
        f.push((Field::Rc, 0));
    }
    ins(form, &f)
}

/// Image handle `c[2][IMG1]` loaded before a branch on a uniform word; the fall-through path
/// loads `c[2][img_else]`; the surface instruction at the merge reads the phi.
fn image_merge(op: &str, img_else: u64) -> Vec<u64> {
    vec![
        ldc(3, 3, 0),        // 0: R3 = c[3][0]: a run-time condition
        ldc(0, 2, IMG1),     // 1: R0 = image 1's handle
        isetp_ne(0, 3, 0),   // 2: P0 = R3 != 0
        bra(0, false, 3, 5), // 3: @P0 BRA 5
        ldc(0, 2, img_else), // 4: R0 = the same handle again, or another one
        surf(op, false),     // 5: merge
        MOV_R0_R4,           // 6
        EXIT,                // 7
    ]
}

#[test]
fn surface_handles_across_a_merge_resolve_like_block_local_and_immediate_ones() {
    for op in ["SULD", "SUST", "SUATOM"] {
        let local = vec![ldc(0, 2, IMG1), surf(op, false), MOV_R0_R4, EXIT];
        let local = run(&fragment(&local)).unwrap_or_else(|e| panic!("{op} block-local: {e}"));
        let o = run(&fragment(&image_merge(op, IMG1)))
            .unwrap_or_else(|e| panic!("{op} handle through a merge phi: {e}"));
        common::spirv_val(&o.words).unwrap_or_else(|e| panic!("{op} spirv-val: {e}"));
        let t = tex_resources(&o);
        assert_eq!(
            t,
            tex_resources(&local),
            "{op}: same bindings as block-local"
        );
        // Image slot 1 ((0x128 - 0x120) / 8).
        assert!(t.iter().any(|r| r.0 == "image" && r.1 == 1), "{op}: {t:?}");
        if op != "SUATOM" {
            // The immediate-handle form naming the same handle word binds the same image.
            let imm = run(&fragment(&[surf(op, true), MOV_R0_R4, EXIT])).expect("immediate");
            assert_eq!(
                t,
                tex_resources(&imm),
                "{op}: same bindings as the immediate form"
            );
        }
    }
}

#[test]
fn different_surface_handles_meeting_at_a_phi_stay_unresolvable() {
    for op in ["SULD", "SUST", "SUATOM"] {
        // The fall-through path loads image 2 (c[2][0x130]) instead.
        let e = run(&fragment(&image_merge(op, IMG1 + 8)))
            .unwrap_err()
            .to_string();
        let off = format!("offset {:#x}", at(5));
        assert!(
            e.contains("handles-test") && e.contains("unresolvable handle") && e.contains(&off),
            "{op}: {e}"
        );
        assert!(e.contains("different handles meet at a phi"), "{op}: {e}");
    }
}
