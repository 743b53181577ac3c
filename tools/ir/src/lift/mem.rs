//! Memory: LDG/STG, LD/ST (generic, treated as global), LDL/STL, LDS/STS, LDC, ATOM, ATOMS,
//! RED, CCTL, MEMBAR.

use super::{Cx, Result};
use crate::ir::{AtomOp, Op, Space, Terminator, Type, Value, Width};
use dmsh_isa::mods::{self, Atomop, Atomssz, Atomsz, Ldcm, Ldcsz, Ldssz, Ldsz, Redop, Stsz};
use dmsh_isa::{Field, Instr, Opcode};

/// Access shape: a scalar width, or a number of 32-bit words (2 or 4).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Shape {
    /// One access of this width (into or from one register).
    One(Width),
    /// This many consecutive 32-bit words (registers `Rd`, `Rd+1`, ...).
    Words(u32),
}

impl Shape {
    /// The bytes the access covers.
    pub fn bytes(self) -> u32 {
        match self {
            Shape::One(w) => match w {
                Width::U8 | Width::S8 => 1,
                Width::U16 | Width::S16 => 2,
                Width::B64 => 8,
                _ => 4,
            },
            Shape::Words(n) => 4 * n,
        }
    }
}

/// The access shape of a load or store's `Size`: `mods::Ldsz` (LDG, LD), `mods::Ldssz` (LDS,
/// whose `.U.` prefix, a uniform access, changes nothing here), `mods::Ldcsz` (LDC) or
/// `mods::Stsz` (the others); nothing is one 32-bit word.
fn shape(cx: &Cx, i: &Instr) -> Result<Shape> {
    use Shape::{One, Words};
    let f = Field::Size;
    let bad = |m: &dyn std::fmt::Display| Err(cx.unsupported(i, format!("access size {m}")));
    Ok(match i.opcode() {
        Opcode::Ldg | Opcode::Ld => match cx.modifier::<Ldsz>(i, f)? {
            Some(Ldsz::U8) => One(Width::U8),
            Some(Ldsz::S8) => One(Width::S8),
            Some(Ldsz::U16) => One(Width::U16),
            Some(Ldsz::S16) => One(Width::S16),
            Some(Ldsz::Default) | None => One(Width::B32),
            Some(Ldsz::N64) => Words(2),
            Some(Ldsz::N128 | Ldsz::U128) => Words(4),
        },
        Opcode::Lds => match cx.modifier::<Ldssz>(i, f)? {
            Some(Ldssz::U8 | Ldssz::UU8) => One(Width::U8),
            Some(Ldssz::S8 | Ldssz::US8) => One(Width::S8),
            Some(Ldssz::U16 | Ldssz::UU16) => One(Width::U16),
            Some(Ldssz::S16 | Ldssz::US16) => One(Width::S16),
            Some(Ldssz::Default | Ldssz::U32) | None => One(Width::B32),
            Some(Ldssz::N64 | Ldssz::U64) => Words(2),
            Some(Ldssz::N128 | Ldssz::U128) => Words(4),
            Some(m @ (Ldssz::Invalidsize7 | Ldssz::UInvalidsize7)) => return bad(&m),
        },
        Opcode::Ldc => match cx.modifier::<Ldcsz>(i, f)? {
            Some(Ldcsz::U8) => One(Width::U8),
            Some(Ldcsz::S8) => One(Width::S8),
            Some(Ldcsz::U16) => One(Width::U16),
            Some(Ldcsz::S16) => One(Width::S16),
            Some(Ldcsz::Default) | None => One(Width::B32),
            Some(Ldcsz::N64) => Words(2),
        },
        _ => match cx.modifier::<Stsz>(i, f)? {
            Some(Stsz::U8) => One(Width::U8),
            Some(Stsz::S8) => One(Width::S8),
            Some(Stsz::U16) => One(Width::U16),
            Some(Stsz::S16) => One(Width::S16),
            Some(Stsz::Default) | None => One(Width::B32),
            Some(Stsz::N64) => Words(2),
            Some(Stsz::N128) => Words(4),
            Some(m @ Stsz::Invalidsize7) => return bad(&m),
        },
    })
}

/// The address of a memory operand `[Ra + Imm]`: U64 for global (`.E` = 64-bit register pair),
/// U32 otherwise.
fn address(cx: &mut Cx, i: &Instr, space: Space) -> Value {
    let imm = i.get(Field::Imm).unwrap_or(0);
    let ra = cx.rf(i, Field::Ra);
    if space == Space::Global {
        let base = if i.flag(Field::E) {
            cx.reg64(ra)
        } else {
            let r = cx.reg(ra);
            cx.emit(Op::UConvert, Type::U64, &[r])
        };
        if imm == 0 {
            return base;
        }
        let k = cx.c64(imm as u64);
        cx.add(base, k)
    } else {
        let r = cx.reg(ra);
        if imm == 0 {
            return r;
        }
        let k = cx.c32(imm as u32);
        cx.add(r, k)
    }
}

/// `a + by` in the address's own width (U64 or U32).
pub fn offset(cx: &mut Cx, a: Value, by: u32) -> Value {
    if by == 0 {
        return a;
    }
    let k = if cx.f.ty(a) == Type::U64 {
        cx.c64(by as u64)
    } else {
        cx.c32(by)
    };
    cx.add(a, k)
}

/// Records the extent of a local-memory access at `imm` from its base register.
fn note_local(cx: &mut Cx, i: &Instr, space: Space, sh: &Shape) {
    if space != Space::Local {
        return;
    }
    note_local_extent(cx, i.get(Field::Imm).unwrap_or(0), *sh);
}

/// Records the extent of a local-memory access of shape `sh` at the constant offset `imm`
/// from its base register in [`Cx::local_extent`].
pub fn note_local_extent(cx: &mut Cx, imm: i64, sh: Shape) {
    // Offsets are 24-bit signed: only a non-negative one bounds the array from below.
    if (0..1 << 24).contains(&imm) {
        cx.local_extent = cx.local_extent.max(imm as u32 + sh.bytes());
    }
}

/// The shape, address and data register (Rd) of a load or store, its local extent noted.
fn access(cx: &mut Cx, i: &Instr, space: Space) -> Result<(Shape, Value, u8)> {
    let sh = shape(cx, i)?;
    note_local(cx, i, space, &sh);
    let a = address(cx, i, space);
    let rd = cx.rf(i, Field::Rd);
    Ok((sh, a, rd))
}

fn load(cx: &mut Cx, i: &Instr, space: Space) -> Result<()> {
    let (sh, a, rd) = access(cx, i, space)?;
    load_regs(cx, space, sh, a, rd);
    Ok(())
}

fn store(cx: &mut Cx, i: &Instr, space: Space) -> Result<()> {
    let (sh, a, rd) = access(cx, i, space)?;
    store_regs(cx, space, sh, a, rd);
    Ok(())
}

/// Loads `sh` from address `a` of `space` into the registers from `rd` (RZ: dropped).
pub fn load_regs(cx: &mut Cx, space: Space, sh: Shape, a: Value, rd: u8) {
    match sh {
        Shape::One(w) => {
            let v = cx.emit(Op::Load(space, w), Type::U32, &[a]);
            cx.set_reg(rd, v);
        }
        Shape::Words(n) => {
            for k in 0..n {
                let ak = offset(cx, a, 4 * k);
                let v = cx.emit(Op::Load(space, Width::B32), Type::U32, &[ak]);
                if rd != 255 {
                    cx.set_reg(reg_plus(rd, k), v);
                }
            }
        }
    }
}

/// Stores `sh` from the registers from `rd` (RZ: zeros) to address `a` of `space`.
pub fn store_regs(cx: &mut Cx, space: Space, sh: Shape, a: Value, rd: u8) {
    match sh {
        Shape::One(w) => {
            let v = cx.reg(rd);
            cx.emit(Op::Store(space, w), Type::Void, &[a, v]);
        }
        Shape::Words(n) => {
            let vals: Vec<Value> = (0..n)
                .map(|k| {
                    if rd == 255 {
                        cx.c32(0)
                    } else {
                        cx.reg(reg_plus(rd, k))
                    }
                })
                .collect();
            for (k, v) in vals.into_iter().enumerate() {
                let ak = offset(cx, a, 4 * k as u32);
                cx.emit(Op::Store(space, Width::B32), Type::Void, &[ak, v]);
            }
        }
    }
}

/// Which constant buffer an LDC reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConstBank {
    /// A bound bank `c[n]`.
    Bound(u8),
    /// A bindless one, `cx[URn]`: the uniform register pair from `URn` holds its handle.
    Bindless(u8),
}

impl Cx<'_> {
    /// The word of `bank` at the run-time byte offset `off`.
    pub fn const_in(&mut self, bank: ConstBank, off: Value) -> Value {
        match bank {
            ConstBank::Bound(b) => self.const_dyn(b, off),
            ConstBank::Bindless(u) => self.bindless_const(u, off),
        }
    }

    /// A word of a bindless constant buffer, `cx[URh][off]`: the uniform pair `URh, URh+1`
    /// holds the Turing+ handle (bits 0–44 the address >> 4, bits 45–63 the size >> 4; NAK's
    /// README §4.2). A word at or past the size reads 0: its load is moved to the buffer's
    /// first word and the result replaced (a null handle, size 0, still reads its address).
    pub fn bindless_const(&mut self, handle: u8, off: Value) -> Value {
        let lo = self.ureg(handle);
        let hi = if handle >= 63 {
            self.c32(0)
        } else {
            self.ureg(handle.saturating_add(1))
        };
        // address = (lo | (hi & 0x1fff) << 32) << 4, in 32-bit halves.
        let addr_lo = self.shl_c(lo, 4);
        let m = self.c32(0x1fff);
        let h = self.and(hi, m);
        let h = self.shl_c(h, 4);
        let top = self.shr_c(lo, 28);
        let addr_hi = self.or(h, top);
        let base = self.pack(addr_lo, addr_hi);
        let size = self.shr_c(hi, 13);
        let size = self.shl_c(size, 4);
        let inside = self.cmp(Op::ULt, off, size);
        let zero = self.c32(0);
        let at = self.sel(inside, off, zero);
        let at = self.emit(Op::UConvert, Type::U64, &[at]);
        let a = self.add(base, at);
        let v = self.emit(Op::Load(Space::Global, Width::B32), Type::U32, &[a]);
        self.sel(inside, v, zero)
    }
}

/// Loads `sh` from constant buffer `bank` at the run-time byte offset `off` into the
/// registers from `rd` (LDC): a narrow access extracts its bytes from the containing word.
pub fn load_const_regs(cx: &mut Cx, bank: ConstBank, off: Value, sh: Shape, rd: u8) {
    match sh {
        Shape::One(Width::B32) => {
            let v = cx.const_in(bank, off);
            cx.set_reg(rd, v);
        }
        Shape::One(w) => {
            let m = cx.c32(!3);
            let wa = cx.and(off, m);
            let word = cx.const_in(bank, wa);
            let three = cx.c32(3);
            let b = cx.and(off, three);
            let eight = cx.c32(8);
            let sh = cx.bin(Op::IMul, b, eight);
            let n = cx.c32(w.bytes() * 8);
            let op = if matches!(w, Width::S8 | Width::S16) {
                Op::BfeS
            } else {
                Op::BfeU
            };
            let v = cx.emit(op, Type::U32, &[word, sh, n]);
            cx.set_reg(rd, v);
        }
        Shape::Words(n) => {
            for k in 0..n {
                let ok = offset(cx, off, 4 * k);
                let v = cx.const_in(bank, ok);
                if rd != 255 {
                    cx.set_reg(reg_plus(rd, k), v);
                }
            }
        }
    }
}

/// An atomic read-modify-write of width `w` (B32 or B64) at `a`: the old value (U32, U64).
pub fn atomic_rmw(cx: &mut Cx, space: Space, o: AtomOp, w: Width, a: Value, v: Value) -> Value {
    let t = if w == Width::B64 {
        Type::U64
    } else {
        Type::U32
    };
    cx.emit(Op::Atomic(space, o, w), t, &[a, v])
}

/// An atomic compare-and-swap of width `w` (B32 or B64) at `a`: the old value.
pub fn atomic_cas(cx: &mut Cx, space: Space, w: Width, a: Value, cmp: Value, v: Value) -> Value {
    let t = if w == Width::B64 {
        Type::U64
    } else {
        Type::U32
    };
    cx.emit(Op::AtomicCas(space, w), t, &[a, cmp, v])
}

/// An atomic read-modify-write as a compare-and-swap loop, for what the back ends have no
/// atomic for (64-bit shared RMW, f64 and f16x2 adds): read the element at `a` (a 64-bit
/// one as two words), `f(old)` is the new value, and go round again until the
/// compare-and-swap finds `old` there. The value is `old` (U32 or U64).
pub fn atomic_by_cas(
    cx: &mut Cx,
    space: Space,
    w: Width,
    a: Value,
    f: impl FnOnce(&mut Cx, Value) -> Value,
) -> Value {
    let lp = cx.f.add_block(None);
    cx.finish(Terminator::Jump(lp));
    cx.b = lp;
    cx.ended = false;
    let old = if w == Width::B64 {
        let lo = cx.emit(Op::Load(space, Width::B32), Type::U32, &[a]);
        let a4 = offset(cx, a, 4);
        let hi = cx.emit(Op::Load(space, Width::B32), Type::U32, &[a4]);
        cx.pack(lo, hi)
    } else {
        cx.emit(Op::Load(space, Width::B32), Type::U32, &[a])
    };
    let new = f(cx, old);
    let seen = atomic_cas(cx, space, w, a, old, new);
    let done = cx.cmp(Op::IEq, seen, old);
    let cont = cx.f.add_block(None);
    cx.finish(Terminator::Branch(done, cont, lp));
    cx.b = cont;
    cx.ended = false;
    old
}

/// The value an integer atomic `o` stores, from the old value and the operand (both U32 or
/// both U64); `None` for the float and wrapping operations.
pub fn atom_result(cx: &mut Cx, o: AtomOp, old: Value, v: Value) -> Option<Value> {
    let op = match o {
        AtomOp::Add => Op::IAdd,
        AtomOp::SMin => Op::SMin,
        AtomOp::UMin => Op::UMin,
        AtomOp::SMax => Op::SMax,
        AtomOp::UMax => Op::UMax,
        AtomOp::And => Op::And,
        AtomOp::Or => Op::Or,
        AtomOp::Xor => Op::Xor,
        AtomOp::Exch => return Some(v),
        AtomOp::FAdd | AtomOp::Inc | AtomOp::Dec => return None,
    };
    Some(cx.bin(op, old, v))
}

/// The element type of an atomic: 32 or 64 bits, signed, float.
#[derive(Clone, Copy, Debug)]
pub struct AtomType {
    /// B32 or B64.
    pub width: Width,
    /// Signed (MIN, MAX).
    pub signed: bool,
    /// Float (ADD).
    pub float: bool,
}

/// The IR operation of an atomic named as nvdisasm prints it (`.ADD`, `.MIN`, ...; the dot
/// optional) on elements of type `ty`; `None` for one without an IR equivalent.
pub fn atom_op_named(name: &str, ty: AtomType) -> Option<AtomOp> {
    Some(match name.trim_start_matches('.') {
        "ADD" if ty.float => AtomOp::FAdd,
        "ADD" => AtomOp::Add,
        "MIN" if ty.signed => AtomOp::SMin,
        "MIN" => AtomOp::UMin,
        "MAX" if ty.signed => AtomOp::SMax,
        "MAX" => AtomOp::UMax,
        "INC" => AtomOp::Inc,
        "DEC" => AtomOp::Dec,
        "AND" => AtomOp::And,
        "OR" => AtomOp::Or,
        "XOR" => AtomOp::Xor,
        "EXCH" => AtomOp::Exch,
        _ => return None,
    })
}

/// The operation and width of ATOM, ATOMS and RED: `Op` is `mods::Atomop` (ATOM, ATOMS) or
/// `mods::Redop` (RED, the same operations less EXCH and SAFEADD); `Size` is `mods::Atomsz`
/// (ATOM, RED) or `mods::Atomssz` (ATOMS); nothing is an unsigned 32-bit word.
fn atom_op(cx: &Cx, i: &Instr) -> Result<(AtomOp, Width)> {
    let t = |width, signed, float| AtomType {
        width,
        signed,
        float,
    };
    let ty = if let Some(s) = i.modifier_as::<Atomssz>(Field::Size) {
        match s {
            Atomssz::Default => t(Width::B32, false, false),
            Atomssz::S32 => t(Width::B32, true, false),
            Atomssz::U64 => t(Width::B64, false, false),
            Atomssz::S64 => t(Width::B64, true, false),
        }
    } else {
        match cx.modifier::<Atomsz>(i, Field::Size)? {
            Some(Atomsz::Default) | None => t(Width::B32, false, false),
            Some(Atomsz::S32) => t(Width::B32, true, false),
            Some(Atomsz::F32FtzRn) => t(Width::B32, false, true),
            Some(Atomsz::U64) => t(Width::B64, false, false),
            Some(Atomsz::S64) => t(Width::B64, true, false),
            Some(s @ Atomsz::F16x2FtzRn) => {
                return Err(cx.unsupported(i, format!("atomic size {s}")))
            }
        }
    };
    let op = match i.modifier_as::<Redop>(Field::Op) {
        Some(o) => Some(red_as_atom(o)),
        None => cx.modifier::<Atomop>(i, Field::Op)?,
    };
    let name = op.map_or("", Atomop::name);
    match atom_op_named(name, ty) {
        Some(o) => Ok((o, ty.width)),
        None => Err(cx.unsupported(i, format!("atomic op {name}"))),
    }
}

/// RED's operation as the ATOM operation of the same name.
fn red_as_atom(o: Redop) -> Atomop {
    match o {
        Redop::Add => Atomop::Add,
        Redop::Min => Atomop::Min,
        Redop::Max => Atomop::Max,
        Redop::Inc => Atomop::Inc,
        Redop::Dec => Atomop::Dec,
        Redop::And => Atomop::And,
        Redop::Or => Atomop::Or,
        Redop::Xor => Atomop::Xor,
    }
}

fn atomic(cx: &mut Cx, i: &Instr, space: Space, red: bool) -> Result<()> {
    let name = i.form_name();
    let a = address(cx, i, space);
    if name.contains("CAS") {
        let rb = cx.rf(i, Field::Rb);
        let rd = cx.rf(i, Field::Rd);
        if name.ends_with("64") {
            let c = cx.reg64(rb);
            let v = cx.reg64(rb.saturating_add(2));
            let old = atomic_cas(cx, space, Width::B64, a, c, v);
            cx.set_reg64(rd, old);
        } else {
            let c = cx.reg(rb);
            let v = cx.reg(rb.saturating_add(1));
            let old = atomic_cas(cx, space, Width::B32, a, c, v);
            cx.set_reg(rd, old);
        }
        return Ok(());
    }
    let (o, w) = atom_op(cx, i)?;
    let src = if red { Field::Rd } else { Field::Rb };
    let rs = cx.rf(i, src);
    let v = if w == Width::B64 {
        cx.reg64(rs)
    } else {
        cx.reg(rs)
    };
    let old = atomic_rmw(cx, space, o, w, a, v);
    if !red {
        let rd = cx.rf(i, Field::Rd);
        if w == Width::B64 {
            cx.set_reg64(rd, old);
        } else {
            cx.set_reg(rd, old);
        }
    }
    Ok(())
}

/// Lifts one memory instruction.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    use Opcode as O;
    match i.opcode() {
        O::Ldg => load(cx, i, Space::Global),
        O::Stg => store(cx, i, Space::Global),
        // Generic accesses are treated as global: CUDA code in the corpus reaches only global
        // memory through them. The trailing predicate operand (written by LEA.HI.X from the
        // address computation) does not change the access.
        O::Ld => load(cx, i, Space::Global),
        O::St => store(cx, i, Space::Global),
        O::Ldl => load(cx, i, Space::Local),
        O::Stl => store(cx, i, Space::Local),
        O::Lds => load(cx, i, Space::Shared),
        O::Sts => store(cx, i, Space::Shared),
        O::Ldc => {
            if !matches!(
                cx.modifier::<Ldcm>(i, Field::Mode)?,
                Some(Ldcm::Default) | None
            ) {
                return Err(cx.unsupported(i, "LDC addressing mode"));
            }
            let bank = i.get(Field::CbufBank).unwrap_or(0) as u8;
            let imm = i.get(Field::Imm).unwrap_or(0) as u32;
            let r = cx.r(i, Field::Ra);
            let k = cx.c32(imm);
            let off = cx.add(r, k);
            let rd = cx.rf(i, Field::Rd);
            let sh = shape(cx, i)?;
            load_const_regs(cx, ConstBank::Bound(bank), off, sh, rd);
            Ok(())
        }
        O::Atom => atomic(cx, i, Space::Global, false),
        O::Atoms => atomic(cx, i, Space::Shared, false),
        O::Red => atomic(cx, i, Space::Global, true),
        O::Cctl => Ok(()),
        O::Membar => {
            let dev = cx.modifier::<mods::Membarl>(i, Field::Level)? != Some(mods::Membarl::Cta);
            cx.emit(Op::MemBarrier(dev), Type::Void, &[]);
            Ok(())
        }
        _ => Err(cx.unsupported(i, "no semantics for this instruction")),
    }
}

/// Register `rd + k` of a vector access; past R254 it is RZ (reads 0, writes dropped).
pub fn reg_plus(rd: u8, k: u32) -> u8 {
    let n = rd as u32 + k;
    if rd == 255 || n > 254 {
        255
    } else {
        n as u8
    }
}
