//! Values crossing blocks, run on the Vulkan device (lavapipe in CI): a hand-built loop whose
//! registers are rotated and swapped every iteration (after the `ssa` pass, phis whose operands
//! are each other — the swap and lost-copy problems of leaving SSA), a value defined before the
//! loop and used after it, and a branch inside the loop, through the passes and the structured
//! and dispatcher emission. The expected stores come from the same algorithm in Rust.

use dmsh_ir::passes::run_all;
use dmsh_ir::Reg;
use dmsh_ir::*;
use dmsh_spv::{emit, Options};
use dmsh_vk::{Bind, BufferSpec, ComputeJob, PointerPatch, ResourceRef};

/// c0 word `off` (the output buffer's address lives in c0[0..8]).
fn c0(f: &mut Function, b: BlockId, off: u64) -> Value {
    let o = f.push(b, Op::Const(off), Type::U32, &[]);
    f.push(b, Op::LoadConst(0), Type::U32, &[o])
}

/// `out[slot] = v`.
fn store(f: &mut Function, b: BlockId, slot: u64, v: Value) {
    let lo = c0(f, b, 0);
    let hi = c0(f, b, 4);
    let base = f.push(b, Op::Pack64, Type::U64, &[lo, hi]);
    let k = f.push(b, Op::Const(4 * slot), Type::U64, &[]);
    let a = f.push(b, Op::IAdd, Type::U64, &[base, k]);
    f.push(b, Op::Store(Space::Global, Width::B32), Type::Void, &[a, v]);
}

fn reg(f: &mut Function, b: BlockId, n: u8) -> Value {
    f.push(b, Op::Get(Reg::gpr(n)), Type::U32, &[])
}

/// b0: R0 = 1, R1 = 2, R2 = 0 (counter), R3 = 7, R4 = 9, R5 = c0[8] (an input); b1: loop while
/// R2 < R5; b2: (R0, R1) = (R1, R0 + R1), swap R3 and R4, R2 += 1, and if R2 is odd R6 = R0;
/// b3 (the odd branch) / b4 (latch): back to b1; b5: store R0..R6.
fn program() -> Function {
    let mut f = Function::new();
    let b: Vec<BlockId> = (0..6).map(|i| f.add_block(Some(i * 8))).collect();
    for (n, k) in [(0u8, 1u64), (1, 2), (2, 0), (3, 7), (4, 9), (6, 0)] {
        let c = f.push(b[0], Op::Const(k), Type::U32, &[]);
        f.push(b[0], Op::Set(Reg::gpr(n)), Type::Void, &[c]);
    }
    let n = c0(&mut f, b[0], 8);
    f.push(b[0], Op::Set(Reg::gpr(5)), Type::Void, &[n]);
    f.blocks[0].term = Terminator::Jump(b[1]);
    let i = reg(&mut f, b[1], 2);
    let n = reg(&mut f, b[1], 5);
    let go = f.push(b[1], Op::ULt, Type::Bool, &[i, n]);
    f.blocks[1].term = Terminator::Branch(go, b[2], b[5]);
    let (r0, r1, r3, r4, r2) = (
        reg(&mut f, b[2], 0),
        reg(&mut f, b[2], 1),
        reg(&mut f, b[2], 3),
        reg(&mut f, b[2], 4),
        reg(&mut f, b[2], 2),
    );
    let sum = f.push(b[2], Op::IAdd, Type::U32, &[r0, r1]);
    f.push(b[2], Op::Set(Reg::gpr(0)), Type::Void, &[r1]);
    f.push(b[2], Op::Set(Reg::gpr(1)), Type::Void, &[sum]);
    f.push(b[2], Op::Set(Reg::gpr(3)), Type::Void, &[r4]);
    f.push(b[2], Op::Set(Reg::gpr(4)), Type::Void, &[r3]);
    let one = f.push(b[2], Op::Const(1), Type::U32, &[]);
    let i1 = f.push(b[2], Op::IAdd, Type::U32, &[r2, one]);
    f.push(b[2], Op::Set(Reg::gpr(2)), Type::Void, &[i1]);
    let odd = f.push(b[2], Op::And, Type::U32, &[i1, one]);
    let zero = f.push(b[2], Op::Const(0), Type::U32, &[]);
    let is_odd = f.push(b[2], Op::INe, Type::Bool, &[odd, zero]);
    f.blocks[2].term = Terminator::Branch(is_odd, b[3], b[4]);
    let r0 = reg(&mut f, b[3], 0);
    f.push(b[3], Op::Set(Reg::gpr(6)), Type::Void, &[r0]);
    f.blocks[3].term = Terminator::Jump(b[4]);
    f.blocks[4].term = Terminator::Jump(b[1]);
    for k in 0..7u8 {
        let v = reg(&mut f, b[5], k);
        store(&mut f, b[5], k as u64, v);
    }
    f.blocks[5].term = Terminator::Exit;
    f
}

/// The program in Rust: R0..R6 after `n` iterations.
fn expected(n: u32) -> [u32; 7] {
    let mut r = [1u32, 2, 0, 7, 9, n, 0];
    while r[2] < r[5] {
        let (a, b) = (r[0], r[1]);
        r[0] = b;
        r[1] = a.wrapping_add(b);
        r.swap(3, 4);
        r[2] += 1;
        if r[2] & 1 == 1 {
            r[6] = r[0];
        }
    }
    r
}

/// The stores of one run, or `None` when the device cannot run it (a skip).
fn run(sh: &Shader, n: u32) -> Result<Option<Vec<u32>>, String> {
    let out = emit(sh, &Options::default()).map_err(|e| e.to_string())?;
    let refl =
        dmsh_vk::Reflection::from_json(&out.reflection.to_json()).map_err(|e| e.to_string())?;
    let mut params = vec![0u8; 16];
    params[8..12].copy_from_slice(&n.to_le_bytes());
    let job = ComputeJob {
        spirv: out.words,
        reflection: refl,
        buffers: vec![
            BufferSpec {
                name: "c0".into(),
                size: 16,
                init: params,
            },
            BufferSpec {
                name: "out".into(),
                size: 32,
                init: Vec::new(),
            },
        ],
        binds: vec![Bind {
            resource: ResourceRef::Cbuf(0),
            buffer: 0,
        }],
        pointers: vec![PointerPatch {
            buffer: 0,
            offset: 0,
            target: 1,
            add: 0,
            encoding: Default::default(),
        }],
        grid: [1, 1, 1],
        textures: Vec::new(),
    };
    let o = match dmsh_vk::run_compute(&job) {
        Ok(o) => o,
        Err(e) if e.is_skip() => {
            println!("skipped: {e}");
            return Ok(None);
        }
        Err(e) => return Err(e.to_string()),
    };
    Ok(Some(
        o.buffers[1][..28]
            .chunks(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect(),
    ))
}

#[test]
fn rotated_and_swapped_registers_run_right() {
    let mut f = program();
    run_all(&mut f);
    assert!(f.ssa);
    dmsh_ir::passes::ssa::verify(&f).expect("SSA form");
    let phis = f
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .filter(|&&v| matches!(f.inst(v).op, Op::Phi(_)))
        .count();
    assert!(
        phis >= 5,
        "R0, R1, R2, R3, R4 and R6 meet at the loop header: {phis} phis\n{f}"
    );
    let sh = Shader {
        func: f,
        stage: Stage::Compute,
        local_size: [1, 1, 1],
        shared_bytes: 0,
        local_bytes: 0,
        banks: vec![Bank {
            bank: 0,
            source: BankSource::Buffer {
                guest_offset: 0,
                size: 16,
            },
        }],
        abi: "cuda",
        guest_insts: 0,
        gfx: None,
    };
    for n in [0u32, 1, 4, 5, 9] {
        match run(&sh, n) {
            Ok(Some(got)) => {
                println!("n = {n}: {got:?}");
                assert_eq!(got, expected(n).to_vec(), "n = {n}");
            }
            Ok(None) => return,
            Err(e) => panic!("n = {n}: {e}"),
        }
    }
}
