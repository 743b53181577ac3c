//! Hand-built control-flow graphs (diamonds, nested loops with break and continue, multi-exit
//! loops, switches, early returns, branches out of two loops, random reducible graphs) are
//! emitted as structured SPIR-V and must pass `spirv-val --target-env vulkan1.2`; an
//! irreducible graph (until node splitting) and a dynamic jump must take the dispatcher.

mod common;

use dmsh_ir::{BlockId, Function, Op, Shader, Stage, Terminator, Type};
use dmsh_spv::{emit, Options};

enum T {
    J(u32),
    B(u32, u32),
    S(Vec<u32>, u32),
    X,
}
use dmsh_ir::Reg;
use T::*;

fn shader(spec: &[T]) -> Shader {
    let mut f = Function::new();
    let mut conds = Vec::new();
    let mut regs = Vec::new();
    for i in 0..spec.len() {
        let b = f.add_block(Some(0x8 + 8 * i as u32));
        // Each block bumps R1 and tests it, so every branch depends on run-time data.
        let r = f.push(b, Op::Get(Reg::gpr(1)), Type::U32, &[]);
        let k = f.push(b, Op::Const(i as u64 + 1), Type::U32, &[]);
        let s = f.push(b, Op::IAdd, Type::U32, &[r, k]);
        f.push(b, Op::Set(Reg::gpr(1)), Type::Void, &[s]);
        let m = f.push(b, Op::Const(3), Type::U32, &[]);
        let low = f.push(b, Op::And, Type::U32, &[s, m]);
        let z = f.push(b, Op::Const(0), Type::U32, &[]);
        let c = f.push(b, Op::IEq, Type::Bool, &[low, z]);
        conds.push(c);
        regs.push(low);
    }
    for (i, t) in spec.iter().enumerate() {
        f.blocks[i].term = match t {
            J(t) => Terminator::Jump(BlockId(*t)),
            B(t, e) => Terminator::Branch(conds[i], BlockId(*t), BlockId(*e)),
            S(cases, d) => Terminator::Switch(
                regs[i],
                cases
                    .iter()
                    .enumerate()
                    .map(|(k, &t)| (k as u32, BlockId(t)))
                    .collect(),
                BlockId(*d),
            ),
            X => Terminator::Exit,
        };
    }
    Shader {
        func: f,
        stage: Stage::Compute,
        local_size: [1, 1, 1],
        shared_bytes: 0,
        local_bytes: 0,
        banks: Vec::new(),
        abi: "cuda",
        guest_insts: spec.len(),
        gfx: None,
    }
}

fn emit_valid(name: &str, spec: &[T]) -> dmsh_spv::Reflection {
    let sh = shader(spec);
    let out = emit(&sh, &Options::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
    if let Err(e) = common::spirv_val(&out.words) {
        panic!("{name}: spirv-val: {e}\n{}", sh.func);
    }
    println!(
        "{name}: {} ({} gotos)",
        out.reflection.control_flow, out.reflection.gotos
    );
    out.reflection
}

fn structured(name: &str, spec: &[T]) {
    let r = emit_valid(name, spec);
    assert_eq!(r.control_flow, "structured", "{name}");
}

#[test]
fn shapes_are_structured_and_valid() {
    structured("diamond", &[B(1, 2), J(3), J(3), X]);
    structured("if_then", &[B(1, 2), J(2), X]);
    structured("while", &[J(1), B(2, 3), J(1), X]);
    structured("self_loop", &[J(1), B(1, 2), X]);
    structured(
        "nested_loops_break_continue",
        &[J(1), J(2), B(3, 4), B(2, 4), B(5, 1), X],
    );
    structured("multi_exit_loop", &[J(1), B(2, 3), B(1, 4), J(5), J(5), X]);
    structured(
        "break_out_of_two_loops",
        &[J(1), J(2), B(3, 4), B(2, 5), B(1, 6), J(6), X],
    );
    structured("early_returns", &[B(1, 2), X, B(3, 4), X, J(5), X]);
    structured("switch", &[S(vec![1, 2, 1], 3), J(4), J(4), J(4), X]);
    structured(
        "loop_with_switch",
        &[J(1), S(vec![2, 3, 1], 4), J(1), J(4), X],
    );
    structured("join_from_nested_if", &[B(1, 2), B(3, 2), J(3), X]);
    structured("entry_is_loop_header", &[B(0, 1), X]);
}

#[test]
fn irreducible_and_dynamic_take_the_dispatcher() {
    let r = emit_valid("irreducible", &[B(1, 2), B(2, 3), B(1, 3), X]);
    assert_eq!(r.control_flow, "dispatcher");
    // After node splitting (a pass in the pipeline) the same graph is structured.
    let mut sh = shader(&[B(1, 2), B(2, 3), B(1, 3), X]);
    dmsh_ir::structure::split::run(&mut sh.func);
    let out = emit(&sh, &Options::default()).expect("emit");
    common::spirv_val(&out.words).expect("spirv-val");
    assert_eq!(out.reflection.control_flow, "structured");
    let mut sh = shader(&[J(1), X]);
    let v = sh.func.blocks[0].insts[0];
    sh.func.blocks[0].term = Terminator::Dynamic(v);
    let out = emit(&sh, &Options::default()).expect("emit");
    common::spirv_val(&out.words).expect("spirv-val");
    assert_eq!(out.reflection.control_flow, "dispatcher");
}

fn mix(seed: u64, a: u64) -> u64 {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ a.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 31;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 29)
}

#[test]
fn random_graphs_are_valid() {
    let (mut s, mut d) = (0, 0);
    for seed in 0..150u64 {
        let n = 3 + (mix(seed, 1) % 12) as u32;
        let spec: Vec<T> = (0..n)
            .map(|i| {
                let r = mix(seed, 100 + i as u64);
                let fwd = |k: u64| i + 1 + ((r >> k) % (n - i - 1).max(1) as u64) as u32;
                if i + 1 == n {
                    X
                } else {
                    match r % 5 {
                        0 => J(fwd(8)),
                        1 => B(fwd(8), fwd(16)),
                        2 => B(fwd(8), (r >> 24) as u32 % (i + 1)),
                        3 => S(vec![fwd(8), fwd(16), fwd(24)], fwd(32)),
                        _ => B(fwd(8), n - 1),
                    }
                }
            })
            .collect();
        let r = emit_valid(&format!("random {seed}"), &spec);
        if r.control_flow == "structured" {
            s += 1;
        } else {
            d += 1;
        }
    }
    println!("random graphs: {s} structured, {d} dispatcher (irreducible)");
    assert!(s > 100);
}
