//! The back end on small hand-built IR functions (no decoder involved): every construct the
//! emitter has — straight code, the dispatcher with static and dynamic jumps, the reconvergence
//! stack, directed rounding and exact FMA, memory spaces, atomics, barriers — gives SPIR-V that
//! spirv-val accepts.

mod common;

use dmsh_ir::Reg;
use dmsh_ir::*;
use dmsh_spv::{emit, FmaMode, Options};

fn shader(f: Function, shared: u32, local: u32) -> Shader {
    Shader {
        func: f,
        stage: Stage::Compute,
        local_size: [8, 1, 1],
        shared_bytes: shared,
        local_bytes: local,
        banks: vec![
            Bank {
                bank: 0,
                source: BankSource::Buffer {
                    guest_offset: 0x140,
                    size: 16,
                },
            },
            Bank {
                bank: 2,
                source: BankSource::Embedded(vec![1, 2, 3]),
            },
        ],
        abi: "cuda",
        guest_insts: 0,
        gfx: None,
    }
}

fn check(sh: &Shader) {
    for fma in [FmaMode::Exact, FmaMode::Native] {
        let out = emit(
            sh,
            &Options {
                fma,
                ..Default::default()
            },
        )
        .expect("emits");
        common::spirv_val(&out.words).expect("spirv-val accepts");
    }
}

#[test]
fn float_rounding_modes_and_fma() {
    let mut f = Function::new();
    let b = f.add_block(Some(8));
    let r0 = f.push(b, Op::Get(Reg::gpr(0)), Type::U32, &[]);
    let r1 = f.push(b, Op::Get(Reg::gpr(1)), Type::U32, &[]);
    let x = f.push(b, Op::Bitcast, Type::F32, &[r0]);
    let y = f.push(b, Op::Bitcast, Type::F32, &[r1]);
    let mut acc = x;
    for rnd in [Round::Rn, Round::Rm, Round::Rp, Round::Rz] {
        let s = f.push(b, Op::FAdd(rnd), Type::F32, &[acc, y]);
        let m = f.push(b, Op::FMul(rnd), Type::F32, &[s, y]);
        acc = f.push(b, Op::FFma(rnd), Type::F32, &[m, y, s]);
    }
    let d = f.push(b, Op::FConvert(Round::Rn), Type::F64, &[acc]);
    let d2 = f.push(b, Op::FFma(Round::Rm), Type::F64, &[d, d, d]);
    let h = f.push(b, Op::FConvert(Round::Rz), Type::F16, &[d2]);
    let hb = f.push(b, Op::Bitcast, Type::U32, &[h]);
    f.push(b, Op::Set(Reg::gpr(2)), Type::Void, &[hb]);
    let i = f.push(b, Op::SToF(Round::Rp), Type::F32, &[r0]);
    let ib = f.push(b, Op::Bitcast, Type::U32, &[i]);
    f.push(b, Op::Set(Reg::gpr(3)), Type::Void, &[ib]);
    f.blocks[0].term = Terminator::Exit;
    check(&shader(f, 0, 0));
}

#[test]
fn dispatcher_stack_memory_and_barriers() {
    let mut f = Function::new();
    let b0 = f.add_block(Some(8));
    let b1 = f.add_block(Some(0x10));
    let b2 = f.add_block(Some(0x18));
    let b3 = f.add_block(None);
    // b0: push a sync target, branch on a predicate.
    let t = f.push(b0, Op::Const(0x18), Type::U32, &[]);
    f.push(b0, Op::StackPush(StackKind::Sync), Type::Void, &[t]);
    let p = f.push(b0, Op::Get(Reg::pred(0)), Type::Bool, &[]);
    f.blocks[0].term = Terminator::Branch(p, b1, b3);
    // b1: memory in every space, atomics, then SYNC (dynamic jump).
    let a = f.push(b1, Op::Get(Reg::gpr(4)), Type::U32, &[]);
    let v = f.push(b1, Op::Load(Space::Shared, Width::S8), Type::U32, &[a]);
    f.push(b1, Op::Store(Space::Local, Width::U16), Type::Void, &[a, v]);
    let g = f.push(b1, Op::Pack64, Type::U64, &[a, v]);
    let w = f.push(b1, Op::Load(Space::Global, Width::B64), Type::U64, &[g]);
    f.push(
        b1,
        Op::Atomic(Space::Global, AtomOp::Inc, Width::B32),
        Type::U32,
        &[g, a],
    );
    f.push(
        b1,
        Op::Atomic(Space::Shared, AtomOp::FAdd, Width::B32),
        Type::U32,
        &[a, v],
    );
    f.push(
        b1,
        Op::AtomicCas(Space::Global, Width::B64),
        Type::U64,
        &[g, w, w],
    );
    let c = f.push(b1, Op::LoadConst(2), Type::U32, &[a]);
    let c0 = f.push(b1, Op::LoadConst(0), Type::U32, &[a]);
    let s = f.push(b1, Op::IAdd, Type::U32, &[c, c0]);
    f.push(b1, Op::Set(Reg::gpr(5)), Type::Void, &[s]);
    let pop = f.push(b1, Op::StackPop(StackKind::Sync), Type::U32, &[]);
    f.blocks[1].term = Terminator::Dynamic(pop);
    // b2: a barrier block.
    f.push(b2, Op::Barrier, Type::Void, &[]);
    f.barrier_ops = true;
    f.blocks[2].term = Terminator::Exit;
    // b3: jump to b2.
    f.blocks[3].term = Terminator::Jump(b2);
    check(&shader(f, 64, 16));
}
