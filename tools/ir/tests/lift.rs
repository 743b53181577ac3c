//! A small lifting-test harness: instruction words (taken from the corpus' nvdisasm listings)
//! are laid out as a Maxwell code stream (a scheduling word before every three, EXIT at the
//! end), lifted without passes, and the IR of the register writes is inspected.
//!
//! First use: the MOV / MOV32I quad-lane write mask (`lift/int.rs` `quad_lane_masked`).

use dmsh_ir::lift::{dksh, lift, lift_graphics, Abi, BindingLayout, Config, LiftError};
use dmsh_ir::{Function, Op, Shader, Sys, Value};
use dmsh_ir::{Reg, RegFile};

/// A scheduling word the corpus uses (no waits that matter to lifting).
const CTRL: u64 = 0x001f_8000_fc00_07e0;
/// `EXIT` (nvdisasm: `EXIT ;`).
const EXIT: u64 = 0xe300_0000_0007_000f;

/// `words` (instructions only) and EXIT as a code stream after `prefix` (an SPH for
/// graphics): CTRL before every three.
fn stream(prefix: &[u8], words: &[u64]) -> Vec<u8> {
    let mut all: Vec<u64> = words.to_vec();
    all.push(EXIT);
    let mut code = prefix.to_vec();
    for chunk in all.chunks(3) {
        code.extend_from_slice(&CTRL.to_le_bytes());
        for w in chunk {
            code.extend_from_slice(&w.to_le_bytes());
        }
    }
    code
}

/// Lifts `words` (instructions only) as a compute stream, keeping every register write
/// (nothing reads them: lifting would drop them as `ssa` does).
fn lift_words(words: &[u64]) -> Shader {
    let mut cfg = Config::compute(Abi::Nvn, [1, 1, 1]);
    cfg.keep_unread_sets = true;
    lift(&stream(&[], words), &cfg).expect("lifts")
}

/// Every register write of the entry block, in order: (register, value written).
fn writes(f: &Function) -> Vec<(u8, Value)> {
    f.blocks[0]
        .insts
        .iter()
        .filter_map(|&v| match f.inst(v).op {
            Op::Set(Reg {
                file: RegFile::Gpr,
                index: n,
            }) => Some((n, f.inst(v).args[0])),
            _ => None,
        })
        .collect()
}

/// Looks through bitcasts.
fn strip(f: &Function, mut v: Value) -> Value {
    while f.inst(v).op == Op::Bitcast {
        v = f.inst(v).args[0];
    }
    v
}

/// The register a value reads (`Get` of a GPR), through bitcasts.
fn reg_of(f: &Function, v: Value) -> Option<u8> {
    match f.inst(strip(f, v)).op {
        Op::Get(Reg {
            file: RegFile::Gpr,
            index: n,
        }) => Some(n),
        _ => None,
    }
}

/// The quad lane mask a `Select` tests: it must be `((mask >> (lane & 3)) & 1) != 0` with the
/// lane from `SR_LANEID`. Returns the mask constant.
fn lane_mask_of(f: &Function, cond: Value) -> u32 {
    let ne = f.inst(cond);
    assert_eq!(ne.op, Op::INe, "condition is a compare with 0");
    assert_eq!(f.const_of(ne.args[1]), Some(0));
    let and1 = f.inst(ne.args[0]);
    assert_eq!(and1.op, Op::And);
    assert_eq!(f.const_of(and1.args[1]), Some(1));
    let shr = f.inst(and1.args[0]);
    assert_eq!(shr.op, Op::LShr);
    let q = f.inst(shr.args[1]);
    assert_eq!(q.op, Op::And);
    assert_eq!(f.const_of(q.args[1]), Some(3), "lane & 3");
    assert_eq!(f.inst(q.args[0]).op, Op::SysVal(Sys::LaneId));
    f.const_of(shr.args[0]).expect("mask constant") as u32
}

/// MOV Rd, Rs, mask (words from fs_lod_grad / fs_sampler_dyn_all's listings): 0xf is a plain
/// move, 0x1 / 0x2 / 0x4 / 0x8 select Rs in that quad lane and keep Rd elsewhere, 0 keeps Rd.
#[test]
fn mov_quad_lane_mask() {
    let cases: [(u64, u8, u8, u32); 6] = [
        (0x5c98_0780_0087_0000, 0, 8, 0xf),  // MOV R0, R8
        (0x5c98_0080_0007_0009, 9, 0, 0x1),  // MOV R9, R0, 0x1
        (0x5c98_0100_0017_000a, 10, 1, 0x2), // MOV R10, R1, 0x2
        (0x5c98_0200_0027_000b, 11, 2, 0x4), // MOV R11, R2, 0x4
        (0x5c98_0400_0037_000c, 12, 3, 0x8), // MOV R12, R3, 0x8
        (0x5c98_0000_0047_000d, 13, 4, 0x0), // MOV R13, R4, 0x0
    ];
    for (word, rd, rs, mask) in cases {
        let i = dmsh_isa::decode(word).expect("decodes");
        assert_eq!(
            i.raw(dmsh_isa::Field::Mask).unwrap_or(0xf) as u32 & 0xf,
            mask,
            "decoder's mask field of {word:#x}"
        );
        let sh = lift_words(&[word]);
        let f = &sh.func;
        let w = writes(f);
        assert_eq!(w.len(), 1, "{word:#x}: one write");
        let (r, v) = w[0];
        assert_eq!(r, rd);
        match mask {
            0xf => assert_eq!(reg_of(f, v), Some(rs), "plain move"),
            0 => assert_eq!(reg_of(f, v), Some(rd), "no write: Rd keeps its value"),
            _ => {
                let s = f.inst(strip(f, v));
                assert_eq!(s.op, Op::Select, "{word:#x}");
                assert_eq!(lane_mask_of(f, s.args[0]), mask);
                assert_eq!(reg_of(f, s.args[1]), Some(rs), "selected in the lane");
                assert_eq!(reg_of(f, s.args[2]), Some(rd), "kept elsewhere");
            }
        }
    }
}

/// MOV32I Rd, imm, mask (bits 12–15; `MOV32I R3, 0x1` is 0x010000000017f003 in
/// fs_sampler_dyn_all's listing): 0xf writes the constant, 0x2 selects it in quad lane 1,
/// 0 keeps Rd.
#[test]
fn mov32i_quad_lane_mask() {
    for (mask, word) in [
        (0xfu32, 0x0100_0000_0017_f003u64),
        (0x2, 0x0100_0000_0017_2003),
        (0x0, 0x0100_0000_0017_0003),
    ] {
        let sh = lift_words(&[word]);
        let f = &sh.func;
        let w = writes(f);
        assert_eq!(w.len(), 1);
        let (r, v) = w[0];
        assert_eq!(r, 3);
        let v = strip(f, v);
        match mask {
            0xf => assert_eq!(f.const_of(v), Some(1)),
            0 => assert_eq!(reg_of(f, v), Some(3)),
            _ => {
                let s = f.inst(v);
                assert_eq!(s.op, Op::Select);
                assert_eq!(lane_mask_of(f, s.args[0]), mask);
                assert_eq!(f.const_of(strip(f, s.args[1])), Some(1));
                assert_eq!(reg_of(f, s.args[2]), Some(3));
            }
        }
    }
}

/// xorshift64*: the random field bits of `every_form_reads_its_modifiers_with_the_tables_enums`.
fn next(s: &mut u64) -> u64 {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    s.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// The SPH and lifting configuration of a corpus graphics program (deko3d layout).
fn graphics(name: &str) -> (Vec<u8>, Config) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/dksh");
    let prog = dksh::parse(&std::fs::read(dir.join(name)).expect("corpus file")).expect("DKSH");
    let layout = BindingLayout::deko3d(prog.stage);
    let cfg = dksh::graphics_config(prog.stage, &prog.code, &prog.cbuf1, layout, name)
        .expect("graphics config");
    (prog.code[..0x50].to_vec(), cfg)
}

/// The lifter reads every form's modifier fields with the enums the table gives that form
/// (`Cx::modifier` reports another as `LiftError::ModifierEnum`, a translator bug): words of
/// every form (its fixed bits, random field bits), each lifted alone as compute, vertex and
/// fragment code. Other errors (no semantics, a branch outside the code) are expected.
#[test]
fn every_form_reads_its_modifiers_with_the_tables_enums() {
    let compute = Config::compute(Abi::Nvn, [32, 1, 1]);
    let (vs_sph, vs) = graphics("vs_basic_mvp.vert.dksh");
    let (fs_sph, fs) = graphics("fs_tex2d_basic.frag.dksh");
    let forms = &dmsh_isa::table::table().forms;
    let mut seed = 0x5eed_f00d_u64;
    let (mut tried, mut lifted, mut covered) = (0usize, 0usize, 0usize);
    let mut wrong = Vec::new();
    for f in forms {
        let mut any = false;
        for _ in 0..24 {
            let w = f.value | (next(&mut seed) & !f.mask);
            match dmsh_isa::decode(w) {
                Ok(i) if i.form_name() == f.name => {}
                _ => continue,
            }
            any = true;
            for (sph, cfg) in [(&[][..], &compute), (&vs_sph[..], &vs), (&fs_sph[..], &fs)] {
                tried += 1;
                let code = stream(sph, &[w]);
                let r = if sph.is_empty() {
                    lift(&code, cfg).map(|_| ())
                } else {
                    lift_graphics(&code, cfg).map(|_| ())
                };
                match r {
                    Ok(()) => lifted += 1,
                    Err(e @ LiftError::ModifierEnum { .. }) => {
                        wrong.push(format!("{w:#018x}: {e}"))
                    }
                    Err(_) => {}
                }
            }
        }
        covered += any as usize;
    }
    println!(
        "{covered} of {} forms, {tried} liftings, {lifted} lifted, {} read a modifier with another enum",
        forms.len(),
        wrong.len()
    );
    assert!(
        covered * 10 > forms.len() * 9,
        "random words reach most forms"
    );
    assert!(lifted * 2 > tried, "most instructions lift");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A barrier op of a lifted BAR and its (id, count) where they are constants.
type BarOpArgs = (Op, Option<u64>, Option<u64>);

/// The `SetBarId` / `BarrierArrive` arguments of a lifted BAR (constants as numbers, `None`
/// for a computed value), the op, and whether it reduces (`BarrierPopc`).
fn bar_of(f: &Function) -> Vec<BarOpArgs> {
    let mut v = Vec::new();
    for b in &f.blocks {
        for &i in &b.insts {
            let inst = f.inst(i);
            match inst.op {
                Op::SetBarId | Op::BarrierArrive => {
                    v.push((inst.op, f.const_of(inst.args[0]), f.const_of(inst.args[1])))
                }
                Op::BarrierPopc => v.push((Op::BarrierPopc, None, None)),
                _ => {}
            }
        }
    }
    v
}

/// Maxwell BAR on named barriers, words of the sm_53 listings of
/// tests/corpus/extra/sm86/forms (guards made `PT`) and NAK's `BAR.SYNC RZ, R0`: the id and
/// count go to `SetBarId` (`BarrierArrive` for BAR.ARV), the ops the Ampere lifter emits;
/// barrier 0 without a count stays the plain barrier; BAR.SCAN is refused with its offset.
#[test]
fn maxwell_named_barriers() {
    let s = Op::SetBarId;
    let popc = (Op::BarrierPopc, None, None);
    let cases: &[(u64, &str, &[BarOpArgs])] = &[
        (
            0xf0a8_1b81_0807_0100,
            "BAR.ARV 0x1, 0x80",
            &[(Op::BarrierArrive, Some(1), Some(128))],
        ),
        (
            0xf0a8_1b80_0407_0200,
            "BAR.SYNC 0x2, 0x40",
            &[(s, Some(2), Some(64))],
        ),
        (
            0xf0a8_1b80_0007_0200,
            "BAR.SYNC 0x2",
            &[(s, Some(2), Some(0))],
        ),
        (
            0xf0a8_0b80_0407_0800,
            "BAR.SYNC R8, 0x40",
            &[(s, None, Some(64))],
        ),
        (
            0xf0a8_0380_00b7_0b00,
            "BAR.SYNC R11, R11",
            &[(s, None, None)],
        ),
        (
            0xf0a8_0380_0007_ff00,
            "BAR.SYNC RZ, R0",
            &[(s, Some(0), Some(0))],
        ),
        (
            0xf0a8_1802_0407_0400,
            "BAR.RED.POPC 0x4, 0x40, P0",
            &[(s, Some(4), Some(64)), popc],
        ),
        (
            0xf0a8_188a_0407_0500,
            "BAR.RED.AND 0x5, 0x40, P1",
            &[(s, Some(5), Some(64)), popc],
        ),
        (
            0xf0a8_1c12_0007_0100,
            "BAR.RED.OR 0x1, !P0",
            &[(s, Some(1), Some(0)), popc],
        ),
    ];
    for &(w, text, want) in cases {
        let i = dmsh_isa::decode(w).expect("decodes");
        assert_eq!(i.print(8, 0), text, "{w:#x}");
        let sh = lift_words(&[w]);
        assert_eq!(bar_of(&sh.func), want, "{text}");
        assert_eq!(
            sh.func.named_barriers(),
            text != "BAR.SYNC RZ, R0",
            "{text}"
        );
    }
    let scan = 0xf0a8_1b83_0007_0200;
    let cfg = Config::compute(Abi::Nvn, [1, 1, 1]);
    match lift(&stream(&[], &[scan]), &cfg) {
        Err(LiftError::Unsupported { offset, why, .. }) => {
            assert_eq!(offset, 8);
            assert!(why.contains("BAR.SCAN"), "{why}");
        }
        r => panic!("BAR.SCAN: {:?}", r.map(|_| ())),
    }
}
