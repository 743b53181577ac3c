//! Storage-buffer accesses of every width and kind, emitted from a hand-built IR function and
//! run on the Vulkan device (4 invocations at once): 8/16-bit loads (zero- and sign-extended),
//! 8/16-bit stores from several invocations into one word (none may lose another's bytes),
//! 64-bit loads and stores, 64-bit atomic add (with a carry between the halves), 64-bit
//! compare-and-swap (exactly one invocation wins), float atomic add and the wrapping
//! increment. Expected values follow from each operation's definition (docs/ir.md), computed
//! in the test.

#[path = "../../spv/tests/common/mod.rs"]
mod common;

use dmsh_ir::*;
use dmsh_spv::{emit, Options};
use dmsh_vk::{Bind, BufferSpec, ComputeJob, ResourceRef};

const OUT: u8 = 0;
const IN: u8 = 1;

struct B<'a> {
    f: &'a mut Function,
    b: BlockId,
}

impl B<'_> {
    fn c(&mut self, t: Type, k: u64) -> Value {
        self.f.push(self.b, Op::Const(k), t, &[])
    }
    fn op(&mut self, op: Op, t: Type, args: &[Value]) -> Value {
        self.f.push(self.b, op, t, args)
    }
}

/// The test program; `tid` = local invocation index (0..4).
fn program() -> Function {
    let mut f = Function::new();
    let b = f.add_block(Some(0));
    let mut p = B { f: &mut f, b };
    let u = Type::U32;
    let tid = p.op(Op::SysVal(Sys::Tid(0)), u, &[]);
    let one = p.c(u, 1);
    let four = p.c(u, 4);
    // Word 0: byte tid := 0x11 * (tid + 1).
    let t1 = p.op(Op::IAdd, u, &[tid, one]);
    let k11 = p.c(u, 0x11);
    let byte = p.op(Op::IMul, u, &[t1, k11]);
    p.op(
        Op::Store(Space::Storage(OUT), Width::U8),
        Type::Void,
        &[tid, byte],
    );
    // Word 1: halfword (tid & 1) := 0xa000 + (tid & 1) (two invocations write each half).
    let odd = p.op(Op::And, u, &[tid, one]);
    let ho = p.op(Op::Shl, u, &[odd, one]);
    let hoff = p.op(Op::IAdd, u, &[ho, four]);
    let ka = p.c(u, 0xa000);
    let half = p.op(Op::IAdd, u, &[ka, odd]);
    p.op(
        Op::Store(Space::Storage(OUT), Width::U16),
        Type::Void,
        &[hoff, half],
    );
    // Words 2-3: 64-bit atomic add of 0x1_0000_0001.
    let k8 = p.c(u, 8);
    let add = p.c(Type::U64, 0x1_0000_0001);
    p.op(
        Op::Atomic(Space::Storage(OUT), AtomOp::Add, Width::B64),
        Type::U64,
        &[k8, add],
    );
    // Word 4: float add of 1.5.
    let k16 = p.c(u, 16);
    let f15 = p.c(u, 1.5f32.to_bits() as u64);
    p.op(
        Op::Atomic(Space::Storage(OUT), AtomOp::FAdd, Width::B32),
        u,
        &[k16, f15],
    );
    // Word 5: wrapping increment with limit 100.
    let k20 = p.c(u, 20);
    let lim = p.c(u, 100);
    p.op(
        Op::Atomic(Space::Storage(OUT), AtomOp::Inc, Width::B32),
        u,
        &[k20, lim],
    );
    // Words 6-7: 64-bit CAS from the initial value to 0x11111111_0000000t.
    let k24 = p.c(u, 24);
    let cmp = p.c(Type::U64, 0x1234_5678_9abc_def0);
    let hi = p.c(u, 0x1111_1111);
    let new = p.op(Op::Pack64, Type::U64, &[tid, hi]);
    p.op(
        Op::AtomicCas(Space::Storage(OUT), Width::B64),
        Type::U64,
        &[k24, cmp, new],
    );
    // Words 8 + 4·tid ..: narrow loads of the input.
    let base = p.op(Op::Shl, u, &[tid, four]);
    let k32 = p.c(u, 32);
    let obase = p.op(Op::IAdd, u, &[base, k32]);
    let loads = [
        (Width::U8, tid),
        (Width::S8, tid),
        (Width::S16, hoff),
        (Width::U16, hoff),
    ];
    for (k, (w, at)) in loads.into_iter().enumerate() {
        let v = p.op(Op::Load(Space::Storage(IN), w), u, &[at]);
        let kk = p.c(u, 4 * k as u64);
        let o = p.op(Op::IAdd, u, &[obase, kk]);
        p.op(
            Op::Store(Space::Storage(OUT), Width::B32),
            Type::Void,
            &[o, v],
        );
    }
    // Words 24-25: a 64-bit load of input bytes 8..16, stored 64 bits wide.
    let w = p.op(Op::Load(Space::Storage(IN), Width::B64), Type::U64, &[k8]);
    let k96 = p.c(u, 96);
    p.op(
        Op::Store(Space::Storage(OUT), Width::B64),
        Type::Void,
        &[k96, w],
    );
    f.blocks[0].term = Terminator::Exit;
    f
}

fn words(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|w| w.to_le_bytes()).collect()
}

#[test]
fn storage_buffer_widths_and_atomics() {
    let sh = Shader {
        func: program(),
        stage: Stage::Compute,
        local_size: [4, 1, 1],
        shared_bytes: 0,
        local_bytes: 0,
        banks: Vec::new(),
        abi: "deko3d",
        guest_insts: 0,
        gfx: None,
    };
    let out = emit(&sh, &Options::default()).expect("emits");
    common::spirv_val(&out.words).expect("spirv-val");
    let r = &out.reflection;
    assert!(!r.uses_global_addresses);
    let sb: Vec<(u32, u32)> = r
        .resources
        .iter()
        .filter(|x| x.kind == "sbuf")
        .map(|x| (x.bank, x.vk_binding()))
        .collect();
    assert_eq!(sb, [(0, 32), (1, 33)]);
    if dmsh_vk::shared().is_err() {
        return println!("skipped run: no Vulkan device");
    }
    let mut init = vec![0u32; 32];
    init[2] = 0xffff_ffff; // 64-bit counter 0x2_ffff_ffff: the adds carry into the high word
    init[3] = 2;
    init[4] = 1.0f32.to_bits();
    init[6] = 0x9abc_def0;
    init[7] = 0x1234_5678;
    let input = [0x017f_ff80u32, 0x7fff_8000, 0x89ab_cdef, 0x0123_4567];
    let spec = |name: &str, init: Vec<u8>| BufferSpec {
        name: name.into(),
        size: init.len() as u64,
        init,
    };
    let job = ComputeJob {
        spirv: out.words.clone(),
        reflection: dmsh_vk::Reflection::from_json(&r.to_json()).expect("reflection"),
        buffers: vec![spec("out", words(&init)), spec("in", words(&input))],
        binds: vec![
            Bind {
                resource: ResourceRef::Sbuf(0),
                buffer: 0,
            },
            Bind {
                resource: ResourceRef::Sbuf(1),
                buffer: 1,
            },
        ],
        pointers: Vec::new(),
        grid: [1, 1, 1],
        textures: Vec::new(),
    };
    let got = dmsh_vk::run_compute(&job).expect("run").u32s(0);
    assert_eq!(got[0], 0x4433_2211, "bytes of four invocations");
    assert_eq!(got[1], 0xa001_a000, "halfwords");
    let sum = (0x2_ffff_ffffu64).wrapping_add(4 * 0x1_0000_0001);
    assert_eq!(
        (got[2], got[3]),
        (sum as u32, (sum >> 32) as u32),
        "64-bit add"
    );
    assert_eq!(got[4], 7.0f32.to_bits(), "1.0 + 4 × 1.5");
    assert_eq!(got[5], 4, "four increments below the limit");
    assert_eq!(got[7], 0x1111_1111, "one CAS won");
    assert!(got[6] < 4, "the winner's tid");
    let bytes = input[0].to_le_bytes();
    let halves = [input[1] & 0xffff, input[1] >> 16];
    for t in 0..4usize {
        let h = halves[t & 1];
        let want = [
            bytes[t] as u32,
            bytes[t] as i8 as i32 as u32,
            h as u16 as i16 as i32 as u32,
            h,
        ];
        assert_eq!(got[8 + 4 * t..12 + 4 * t], want, "loads of invocation {t}");
    }
    assert_eq!(got[24..26], input[2..4], "64-bit load and store");
}
