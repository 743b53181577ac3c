use super::*;
use crate::ir::Reg;
use crate::ir::{Terminator, Width};

/// deko3d compute: slot r's base at c0[0x140 + 16r].
const T: SbufTable = SbufTable {
    bank: 0,
    base: 0x140,
    stride: 16,
    count: 16,
    ubo_bank: 2,
};

fn func() -> Function {
    let mut f = Function::new();
    f.sbuf_table = Some(T);
    f
}

fn c0(f: &mut Function, b: BlockId, off: u32) -> Value {
    cb(f, b, 0, off)
}

fn cb(f: &mut Function, b: BlockId, bank: u8, off: u32) -> Value {
    let k = f.push(b, Op::Const(off as u64), Type::U32, &[]);
    f.push(b, Op::LoadConst(bank), Type::U32, &[k])
}

/// `IADD lo.CC, x, c0[lo_off]; IADD.X hi, RZ, c0[hi_off]` as the lifter writes it: the
/// 64-bit address `{lo, hi}`.
fn carry_pair(f: &mut Function, b: BlockId, x: Value, lo_off: u32, hi_off: u32) -> Value {
    carry_pair_in(f, b, x, (0, lo_off), (0, hi_off))
}

/// [`carry_pair`] with the low and high base words in any banks.
fn carry_pair_in(
    f: &mut Function,
    b: BlockId,
    x: Value,
    (lo_bank, lo_off): (u8, u32),
    (hi_bank, hi_off): (u8, u32),
) -> Value {
    let base = cb(f, b, lo_bank, lo_off);
    let bh = cb(f, b, hi_bank, hi_off);
    let (lo, hi) = add_carry(f, b, x, base, bh);
    f.push(b, Op::Pack64, Type::U64, &[lo, hi])
}

/// `IADD lo.CC, a, k; IADD.X hi, hi, RZ` as the lifter writes it: `(a + k, hi + carry)`.
fn add_carry(f: &mut Function, b: BlockId, a: Value, k: Value, hi: Value) -> (Value, Value) {
    let lo = f.push(b, Op::IAdd, Type::U32, &[a, k]);
    let c = f.push(b, Op::AddCarry, Type::Bool, &[a, k]);
    let one = f.push(b, Op::Const(1), Type::U32, &[]);
    let zero = f.push(b, Op::Const(0), Type::U32, &[]);
    let cv = f.push(b, Op::Select, Type::U32, &[c, one, zero]);
    (lo, f.push(b, Op::IAdd, Type::U32, &[hi, cv]))
}

/// Writes the halves of the 64-bit address `a` (a `Pack64`) to R0 and R1 in block `b`.
fn set_r0_r1(f: &mut Function, b: BlockId, a: Value) {
    let (lo, hi) = (f.inst(a).args[0], f.inst(a).args[1]);
    f.push(b, Op::Set(Reg::gpr(0)), Type::Void, &[lo]);
    f.push(b, Op::Set(Reg::gpr(1)), Type::Void, &[hi]);
}

/// Reads R0:R1 in block `b` as a 64-bit address: `(R0, R1, {R0, R1})`.
fn get_r0_r1(f: &mut Function, b: BlockId) -> (Value, Value, Value) {
    let r0 = f.push(b, Op::Get(Reg::gpr(0)), Type::U32, &[]);
    let r1 = f.push(b, Op::Get(Reg::gpr(1)), Type::U32, &[]);
    (r0, r1, f.push(b, Op::Pack64, Type::U64, &[r0, r1]))
}

/// `{lo, hi} + 4` with the carry into the high word, as the lifter writes it.
fn plus4(f: &mut Function, b: BlockId, lo: Value, hi: Value) -> (Value, Value) {
    let k = f.push(b, Op::Const(4), Type::U32, &[]);
    add_carry(f, b, lo, k, hi)
}

/// Three blocks, the first of which puts slot 0's address plus R2 in R0:R1 and jumps to the
/// second.
fn slot0_in_r0_r1() -> (Function, [BlockId; 3]) {
    let mut f = func();
    let b = [0, 8, 16].map(|addr| f.add_block(Some(addr)));
    let x = f.push(b[0], Op::Get(Reg::gpr(2)), Type::U32, &[]);
    let a = carry_pair(&mut f, b[0], x, 0x140, 0x144);
    set_r0_r1(&mut f, b[0], a);
    f.blocks[0].term = Terminator::Jump(b[1]);
    (f, b)
}

#[test]
fn carry_chain_in_one_block_becomes_slot_and_offset() {
    let mut f = func();
    let b = f.add_block(Some(0));
    let x = f.push(b, Op::Get(Reg::gpr(2)), Type::U32, &[]);
    let a = carry_pair(&mut f, b, x, 0x150, 0x154);
    let k = f.push(b, Op::Const(8), Type::U64, &[]);
    let a8 = f.push(b, Op::IAdd, Type::U64, &[a, k]);
    let ld = f.push(b, Op::Load(Space::Global, Width::B32), Type::U32, &[a8]);
    let v = f.push(b, Op::Get(Reg::gpr(3)), Type::U32, &[]);
    let st = f.push(b, Op::Store(Space::Global, Width::U8), Type::Void, &[a, v]);
    f.blocks[0].term = Terminator::Exit;
    run(&mut f);
    assert_eq!(f.inst(ld).op, Op::Load(Space::Storage(1), Width::B32));
    // Offset of [a + 8]: x + 8, with the base left out.
    let off = f.inst(ld).args[0];
    assert_eq!(f.inst(off).op, Op::IAdd);
    assert_eq!(f.inst(off).args[0], x);
    assert_eq!(f.const_of(f.inst(off).args[1]), Some(8));
    assert_eq!(f.inst(st).op, Op::Store(Space::Storage(1), Width::U8));
    assert_eq!(f.inst(st).args[0], x, "offset of [a] is x itself");
    // New instructions come before their access.
    let pos = |v: Value| f.blocks[0].insts.iter().position(|&w| w == v);
    assert!(pos(off) < pos(ld));
}

#[test]
fn ldc64_base_and_lea_shapes() {
    // LDC.64 R0, c0[0x150]; STG [R0]: the base itself is the address (offset 0).
    let mut f = func();
    let b = f.add_block(Some(0));
    let lo = c0(&mut f, b, 0x150);
    let hi = c0(&mut f, b, 0x154);
    let a = f.push(b, Op::Pack64, Type::U64, &[lo, hi]);
    let v = f.push(b, Op::Get(Reg::gpr(3)), Type::U32, &[]);
    let st = f.push(b, Op::Store(Space::Global, Width::B32), Type::Void, &[a, v]);
    // LEA lo.CC, i, c0[0x160], 2; LEA.HI.X hi, i, c0[0x164], RZ, 2 (hi gets i >> 30).
    let i = f.push(b, Op::Get(Reg::gpr(4)), Type::U32, &[]);
    let two = f.push(b, Op::Const(2), Type::U32, &[]);
    let sh = f.push(b, Op::Shl, Type::U32, &[i, two]);
    let a2 = carry_pair(&mut f, b, sh, 0x160, 0x164);
    let hi2 = f.inst(a2).args[1];
    let k30 = f.push(b, Op::Const(30), Type::U32, &[]);
    let top = f.push(b, Op::LShr, Type::U32, &[i, k30]);
    let hi3 = f.push(b, Op::IAdd, Type::U32, &[hi2, top]);
    let lo2 = f.inst(a2).args[0];
    let a3 = f.push(b, Op::Pack64, Type::U64, &[lo2, hi3]);
    let ld = f.push(b, Op::Load(Space::Global, Width::B64), Type::U64, &[a3]);
    f.blocks[0].term = Terminator::Exit;
    run(&mut f);
    assert_eq!(f.inst(st).op, Op::Store(Space::Storage(1), Width::B32));
    assert_eq!(f.const_of(f.inst(st).args[0]), Some(0));
    assert_eq!(f.inst(ld).op, Op::Load(Space::Storage(2), Width::B64));
    assert_eq!(f.inst(ld).args[0], sh);
}

#[test]
fn register_from_another_block_subtracts_the_base() {
    let (mut f, [_, b1, b2]) = slot0_in_r0_r1();
    // b1 is a loop that keeps R0/R1 unchanged.
    let p = f.push(b1, Op::Get(Reg::pred(0)), Type::Bool, &[]);
    f.blocks[1].term = Terminator::Branch(p, b1, b2);
    let (r0, _, a2) = get_r0_r1(&mut f, b2);
    let v = f.push(b2, Op::Get(Reg::gpr(5)), Type::U32, &[]);
    let at = f.push(
        b2,
        Op::Atomic(Space::Global, crate::ir::AtomOp::Add, Width::B32),
        Type::U32,
        &[a2, v],
    );
    f.blocks[2].term = Terminator::Exit;
    run(&mut f);
    assert_eq!(
        f.inst(at).op,
        Op::Atomic(Space::Storage(0), crate::ir::AtomOp::Add, Width::B32)
    );
    let off = f.inst(at).args[0];
    assert_eq!(f.inst(off).op, Op::ISub);
    assert_eq!(f.inst(off).args[0], r0);
    let base = f.inst(off).args[1];
    assert_eq!(f.inst(base).op, Op::LoadConst(0));
    assert_eq!(f.const_of(f.inst(base).args[0]), Some(0x140));
}

/// Builds `b0: R0/R1 = slot s0 address; b1: R0/R1 = slot s1 address (lo/hi offsets given);
/// b2: load [R0:R1]` with b0 and b1 both reaching b2; returns the load.
fn merge(lo1: u32, hi1: u32) -> (Function, Value) {
    let mut f = func();
    let e = f.add_block(Some(0));
    let b0 = f.add_block(Some(8));
    let b1 = f.add_block(Some(16));
    let b2 = f.add_block(Some(24));
    let p = f.push(e, Op::Get(Reg::pred(0)), Type::Bool, &[]);
    f.blocks[0].term = Terminator::Branch(p, b0, b1);
    for (b, lo_off, hi_off) in [(b0, 0x140, 0x144), (b1, lo1, hi1)] {
        let x = f.push(b, Op::Get(Reg::gpr(2)), Type::U32, &[]);
        let a = carry_pair(&mut f, b, x, lo_off, hi_off);
        set_r0_r1(&mut f, b, a);
        f.blocks[b.index()].term = Terminator::Jump(b2);
    }
    let (_, _, a) = get_r0_r1(&mut f, b2);
    let ld = f.push(b2, Op::Load(Space::Global, Width::B32), Type::U32, &[a]);
    f.blocks[3].term = Terminator::Exit;
    (f, ld)
}

#[test]
fn merges_trace_only_when_every_path_agrees() {
    let (mut f, ld) = merge(0x140, 0x144);
    run(&mut f);
    assert_eq!(f.inst(ld).op, Op::Load(Space::Storage(0), Width::B32));
    let (mut f, ld) = merge(0x150, 0x154);
    run(&mut f);
    assert_eq!(
        f.inst(ld).op,
        Op::Load(Space::Global, Width::B32),
        "two buffers"
    );
    // Low word of slot 0 with the high word of slot 1: not a buffer address.
    let (mut f, ld) = merge(0x140, 0x154);
    run(&mut f);
    assert_eq!(f.inst(ld).op, Op::Load(Space::Global, Width::B32));
}

#[test]
fn untraceable_addresses_stay_global() {
    let mut f = func();
    let b = f.add_block(Some(0));
    // An address loaded from memory.
    let z = f.push(b, Op::Const(0), Type::U64, &[]);
    let p = f.push(b, Op::Load(Space::Global, Width::B64), Type::U64, &[z]);
    let ld = f.push(b, Op::Load(Space::Global, Width::B32), Type::U32, &[p]);
    // The base twice in the low word: base + base + x is no address in the buffer.
    let x = f.push(b, Op::Get(Reg::gpr(2)), Type::U32, &[]);
    let a = carry_pair(&mut f, b, x, 0x140, 0x144);
    let lo = f.inst(a).args[0];
    let hi = f.inst(a).args[1];
    let base = c0(&mut f, b, 0x140);
    let lo2 = f.push(b, Op::IAdd, Type::U32, &[lo, base]);
    let a2 = f.push(b, Op::Pack64, Type::U64, &[lo2, hi]);
    let ld2 = f.push(b, Op::Load(Space::Global, Width::B32), Type::U32, &[a2]);
    // The size word (+8) is no base.
    let a3 = carry_pair(&mut f, b, x, 0x148, 0x14c);
    let ld3 = f.push(b, Op::Load(Space::Global, Width::B32), Type::U32, &[a3]);
    // The register's value at entry (no predecessor wrote it).
    let (_, _, a4) = get_r0_r1(&mut f, b);
    let ld4 = f.push(b, Op::Load(Space::Global, Width::B32), Type::U32, &[a4]);
    f.blocks[0].term = Terminator::Exit;
    let mut g = f.clone();
    run(&mut f);
    for l in [p, ld, ld2, ld3, ld4] {
        assert!(
            matches!(f.inst(l).op, Op::Load(Space::Global, _)),
            "{l} traced"
        );
    }
    // Without a table (CUDA), nothing changes even for a traceable address.
    let a5 = carry_pair(&mut g, BlockId(0), x, 0x140, 0x144);
    let ld5 = g.push(
        BlockId(0),
        Op::Load(Space::Global, Width::B32),
        Type::U32,
        &[a5],
    );
    g.sbuf_table = None;
    run(&mut g);
    assert_eq!(g.inst(ld5).op, Op::Load(Space::Global, Width::B32));
}

/// deko3d: uniform buffer u is bank 2 + u.
const UBO: u8 = 2;

#[test]
fn address_in_a_uniform_buffer_becomes_sbuf_ubo() {
    let mut f = func();
    let b = f.add_block(Some(0));
    let x = f.push(b, Op::Get(Reg::gpr(2)), Type::U32, &[]);
    // Uniform buffer 1 (bank 3), address at 0x38: two accesses share one resource.
    let a = carry_pair_in(&mut f, b, x, (UBO + 1, 0x38), (UBO + 1, 0x3c));
    let ld = f.push(b, Op::Load(Space::Global, Width::B32), Type::U32, &[a]);
    let k = f.push(b, Op::Const(4), Type::U64, &[]);
    let a4 = f.push(b, Op::IAdd, Type::U64, &[a, k]);
    let v = f.push(b, Op::Get(Reg::gpr(3)), Type::U32, &[]);
    let st = f.push(
        b,
        Op::Store(Space::Global, Width::B32),
        Type::Void,
        &[a4, v],
    );
    // Uniform buffer 0 at 0x40 (LDC.64 shape): a second resource.
    let lo = cb(&mut f, b, UBO, 0x40);
    let hi = cb(&mut f, b, UBO, 0x44);
    let p = f.push(b, Op::Pack64, Type::U64, &[lo, hi]);
    let ld2 = f.push(b, Op::Load(Space::Global, Width::B64), Type::U64, &[p]);
    // A c0 record next to them keeps its slot number.
    let r = carry_pair(&mut f, b, x, 0x150, 0x154);
    let ld3 = f.push(b, Op::Load(Space::Global, Width::B32), Type::U32, &[r]);
    f.blocks[0].term = Terminator::Exit;
    run(&mut f);
    let s0 = Space::Storage(SBUF_UBO_SLOT);
    assert_eq!(f.inst(ld).op, Op::Load(s0, Width::B32));
    assert_eq!(f.inst(ld).args[0], x, "offset of [a] is x");
    assert_eq!(f.inst(st).op, Op::Store(s0, Width::B32));
    let off = f.inst(st).args[0];
    assert_eq!(f.inst(off).op, Op::IAdd);
    assert_eq!(f.const_of(f.inst(off).args[1]), Some(4));
    let s1 = Space::Storage(SBUF_UBO_SLOT + 1);
    assert_eq!(f.inst(ld2).op, Op::Load(s1, Width::B64));
    assert_eq!(f.const_of(f.inst(ld2).args[0]), Some(0));
    assert_eq!(f.inst(ld3).op, Op::Load(Space::Storage(1), Width::B32));
    assert_eq!(
        f.sbuf_ubo,
        [
            SbufUbo {
                ubo: 1,
                offset: 0x38
            },
            SbufUbo {
                ubo: 0,
                offset: 0x40
            }
        ]
    );
}

#[test]
fn uniform_words_that_are_no_address_pair_stay_global() {
    let mut f = func();
    let b = f.add_block(Some(0));
    let x = f.push(b, Op::Get(Reg::gpr(2)), Type::U32, &[]);
    let mut loads = Vec::new();
    for (lo, hi) in [
        // High word not at low + 4.
        ((UBO, 0x38), (UBO, 0x44)),
        // Halves in different uniform buffers.
        ((UBO, 0x38), (UBO + 1, 0x3c)),
        // Bank 1 is below the first uniform bank.
        ((1, 0x38), (1, 0x3c)),
        // Not word aligned; past the packable offsets.
        ((UBO, 0x3a), (UBO, 0x3e)),
        ((UBO, 0x1000), (UBO, 0x1004)),
        ((UBO + 8, 0x38), (UBO + 8, 0x3c)),
        // Low word from a record, high word from a uniform buffer.
        ((0, 0x140), (UBO, 0x144)),
    ] {
        let a = carry_pair_in(&mut f, b, x, lo, hi);
        loads.push(f.push(b, Op::Load(Space::Global, Width::B32), Type::U32, &[a]));
    }
    // The uniform base twice in the low word.
    let a = carry_pair_in(&mut f, b, x, (UBO, 0x38), (UBO, 0x3c));
    let (lo, hi) = (f.inst(a).args[0], f.inst(a).args[1]);
    let base = cb(&mut f, b, UBO, 0x38);
    let lo2 = f.push(b, Op::IAdd, Type::U32, &[lo, base]);
    let a2 = f.push(b, Op::Pack64, Type::U64, &[lo2, hi]);
    loads.push(f.push(b, Op::Load(Space::Global, Width::B32), Type::U32, &[a2]));
    f.blocks[0].term = Terminator::Exit;
    run(&mut f);
    for l in loads {
        assert_eq!(f.inst(l).op, Op::Load(Space::Global, Width::B32), "{l}");
    }
    assert!(f.sbuf_ubo.is_empty());
}

#[test]
fn uniform_address_in_a_register_from_another_block() {
    let mut f = func();
    let b0 = f.add_block(Some(0));
    let b1 = f.add_block(Some(8));
    let x = f.push(b0, Op::Get(Reg::gpr(2)), Type::U32, &[]);
    let a = carry_pair_in(&mut f, b0, x, (UBO, 0x38), (UBO, 0x3c));
    set_r0_r1(&mut f, b0, a);
    f.blocks[0].term = Terminator::Jump(b1);
    let (r0, _, a2) = get_r0_r1(&mut f, b1);
    let ld = f.push(b1, Op::Load(Space::Global, Width::B32), Type::U32, &[a2]);
    f.blocks[1].term = Terminator::Exit;
    run(&mut f);
    assert_eq!(
        f.inst(ld).op,
        Op::Load(Space::Storage(SBUF_UBO_SLOT), Width::B32)
    );
    // Offset: R0 − c[2][0x38], the base word as the code loaded it.
    let off = f.inst(ld).args[0];
    assert_eq!(f.inst(off).op, Op::ISub);
    assert_eq!(f.inst(off).args[0], r0);
    let base = f.inst(off).args[1];
    assert_eq!(f.inst(base).op, Op::LoadConst(UBO));
    assert_eq!(f.const_of(f.inst(base).args[0]), Some(0x38));
}

/// `b0: R0:R1 = slot 0 + x; b1 (loop): load [R0:R1]; R0:R1 = step(R0:R1)`.
fn pointer_loop(
    step: fn(&mut Function, BlockId, Value, Value) -> (Value, Value),
) -> (Function, Value) {
    let (mut f, [_, b1, b2]) = slot0_in_r0_r1();
    let (r0, r1, a) = get_r0_r1(&mut f, b1);
    let ld = f.push(b1, Op::Load(Space::Global, Width::B32), Type::U32, &[a]);
    let (lo, hi) = step(&mut f, b1, r0, r1);
    f.push(b1, Op::Set(Reg::gpr(0)), Type::Void, &[lo]);
    f.push(b1, Op::Set(Reg::gpr(1)), Type::Void, &[hi]);
    let p = f.push(b1, Op::Get(Reg::pred(0)), Type::Bool, &[]);
    f.blocks[1].term = Terminator::Branch(p, b1, b2);
    f.blocks[2].term = Terminator::Exit;
    (f, ld)
}

#[test]
fn traces_through_phis_after_ssa() {
    let ssa = crate::passes::ssa::run;
    let (mut f, ld) = merge(0x140, 0x144);
    ssa(&mut f);
    assert!(f.ssa);
    run(&mut f);
    assert_eq!(f.inst(ld).op, Op::Load(Space::Storage(0), Width::B32));
    let (mut f, ld) = merge(0x150, 0x154);
    ssa(&mut f);
    run(&mut f);
    assert_eq!(f.inst(ld).op, Op::Load(Space::Global, Width::B32));
    // p += 4 round a loop: the header's phis come back to themselves (a neutral cycle).
    let (mut f, ld) = pointer_loop(plus4);
    ssa(&mut f);
    run(&mut f);
    assert_eq!(f.inst(ld).op, Op::Load(Space::Storage(0), Width::B32));
    crate::passes::ssa::verify(&f).unwrap();
}

#[test]
fn pointer_incremented_in_a_loop() {
    // p += 4 with the carry into the high word: still slot 0.
    let (mut f, ld) = pointer_loop(plus4);
    run(&mut f);
    assert_eq!(f.inst(ld).op, Op::Load(Space::Storage(0), Width::B32));
    assert_eq!(f.inst(f.inst(ld).args[0]).op, Op::ISub);
    // p = value loaded from memory on the back edge: not a buffer address any more.
    let (mut f, ld) = pointer_loop(|f, b, r0, r1| {
        let a = f.push(b, Op::Pack64, Type::U64, &[r0, r1]);
        let q = f.push(b, Op::Load(Space::Global, Width::B64), Type::U64, &[a]);
        let lo = f.push(b, Op::UConvert, Type::U32, &[q]);
        let hi = f.push(b, Op::Hi32, Type::U32, &[q]);
        (lo, hi)
    });
    run(&mut f);
    assert_eq!(f.inst(ld).op, Op::Load(Space::Global, Width::B32));
    // p += base: the base twice.
    let (mut f, ld) = pointer_loop(|f, b, r0, r1| {
        let base = c0(f, b, 0x140);
        let lo = f.push(b, Op::IAdd, Type::U32, &[r0, base]);
        (lo, r1)
    });
    run(&mut f);
    assert_eq!(f.inst(ld).op, Op::Load(Space::Global, Width::B32));
}

/// Seed 002's storage base rule: an address that is a c0 record plus an offset read from
/// c1 (the compiler's constants) is that record's buffer at the c1 offset; the c1 term is
/// never the base (taking it as the base broke six effect shaders of DK Bananza).
#[test]
fn c0_record_plus_c1_offset_is_the_c0_buffer() {
    let mut f = func();
    let b = f.add_block(Some(0));
    let off = cb(&mut f, b, 1, 0x10);
    let a = carry_pair(&mut f, b, off, 0x160, 0x164);
    let ld = f.push(b, Op::Load(Space::Global, Width::B32), Type::U32, &[a]);
    // The same sum the other way round: the c1 word first in the addition.
    let off2 = cb(&mut f, b, 1, 0x14);
    let base = c0(&mut f, b, 0x160);
    let bh = c0(&mut f, b, 0x164);
    let (lo, hi) = add_carry(&mut f, b, base, off2, bh);
    let a2 = f.push(b, Op::Pack64, Type::U64, &[lo, hi]);
    let v = f.push(b, Op::Get(Reg::gpr(3)), Type::U32, &[]);
    let st = f.push(
        b,
        Op::Store(Space::Global, Width::B32),
        Type::Void,
        &[a2, v],
    );
    f.blocks[0].term = Terminator::Exit;
    run(&mut f);
    assert_eq!(f.inst(ld).op, Op::Load(Space::Storage(2), Width::B32));
    assert_eq!(f.inst(ld).args[0], off, "offset: the c1 word");
    assert_eq!(f.inst(st).op, Op::Store(Space::Storage(2), Width::B32));
    assert_eq!(f.inst(st).args[0], off2, "offset: the c1 word");
}
