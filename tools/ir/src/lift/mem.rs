//! Memory: LDG/STG, LD/ST (generic, treated as global), LDL/STL, LDS/STS, LDC, ATOM, ATOMS,
//! RED, CCTL, MEMBAR.

use super::{Cx, Result};
use crate::ir::{AtomOp, Op, Space, Type, Value, Width};
use dmsh_isa::{Field, Instr, Opcode};

/// Access shape: a scalar width, or a number of 32-bit words (2 or 4).
#[derive(Clone, Copy, PartialEq)]
enum Shape {
    One(Width),
    Words(u32),
}

fn shape(cx: &Cx, i: &Instr) -> Result<Shape> {
    let m = i.modifier(Field::Size).unwrap_or("");
    let m = m
        .strip_prefix(".U.")
        .map(|r| format!(".{r}"))
        .unwrap_or_else(|| m.to_string());
    Ok(match m.as_str() {
        ".U8" => Shape::One(Width::U8),
        ".S8" => Shape::One(Width::S8),
        ".U16" => Shape::One(Width::U16),
        ".S16" => Shape::One(Width::S16),
        "" | ".32" => Shape::One(Width::B32),
        ".64" => Shape::Words(2),
        ".128" | ".U.128" => Shape::Words(4),
        other => return Err(cx.unsupported(i, format!("access size {other}"))),
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
        let k = cx.c64(imm as u64);
        cx.add(base, k)
    } else {
        let r = cx.reg(ra);
        let k = cx.c32(imm as u32);
        cx.add(r, k)
    }
}

fn offset(cx: &mut Cx, a: Value, by: u32) -> Value {
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
    let bytes = match sh {
        Shape::One(w) => match w {
            Width::U8 | Width::S8 => 1,
            Width::U16 | Width::S16 => 2,
            Width::B64 => 8,
            _ => 4,
        },
        Shape::Words(n) => 4 * n,
    };
    // Offsets are 24-bit signed: only a non-negative one bounds the array from below.
    let imm = i.get(Field::Imm).unwrap_or(0);
    if (0..1 << 24).contains(&imm) {
        cx.local_extent = cx.local_extent.max(imm as u32 + bytes);
    }
}

fn load(cx: &mut Cx, i: &Instr, space: Space) -> Result<()> {
    let sh = shape(cx, i)?;
    note_local(cx, i, space, &sh);
    let a = address(cx, i, space);
    let rd = cx.rf(i, Field::Rd);
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
    Ok(())
}

fn store(cx: &mut Cx, i: &Instr, space: Space) -> Result<()> {
    let sh = shape(cx, i)?;
    note_local(cx, i, space, &sh);
    let a = address(cx, i, space);
    let rd = cx.rf(i, Field::Rd);
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
    Ok(())
}

fn atom_op(cx: &Cx, i: &Instr, op: &str, size: &str) -> Result<(AtomOp, Width)> {
    let w = match size {
        "" | ".S32" | ".F32.FTZ.RN" => Width::B32,
        ".U64" | ".64" | ".S64" => Width::B64,
        s => return Err(cx.unsupported(i, format!("atomic size {s}"))),
    };
    let signed = size.starts_with(".S");
    let o = match op {
        ".ADD" if size == ".F32.FTZ.RN" => AtomOp::FAdd,
        ".ADD" => AtomOp::Add,
        ".MIN" if signed => AtomOp::SMin,
        ".MIN" => AtomOp::UMin,
        ".MAX" if signed => AtomOp::SMax,
        ".MAX" => AtomOp::UMax,
        ".INC" => AtomOp::Inc,
        ".DEC" => AtomOp::Dec,
        ".AND" => AtomOp::And,
        ".OR" => AtomOp::Or,
        ".XOR" => AtomOp::Xor,
        ".EXCH" => AtomOp::Exch,
        o => return Err(cx.unsupported(i, format!("atomic op {o}"))),
    };
    Ok((o, w))
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
            let old = cx.emit(Op::AtomicCas(space, Width::B64), Type::U64, &[a, c, v]);
            cx.set_reg64(rd, old);
        } else {
            let c = cx.reg(rb);
            let v = cx.reg(rb.saturating_add(1));
            let old = cx.emit(Op::AtomicCas(space, Width::B32), Type::U32, &[a, c, v]);
            cx.set_reg(rd, old);
        }
        return Ok(());
    }
    let op = i.modifier(Field::Op).unwrap_or("");
    let size = i.modifier(Field::Size).unwrap_or("");
    let (o, w) = atom_op(cx, i, op, size)?;
    let src = if red { Field::Rd } else { Field::Rb };
    let rs = cx.rf(i, src);
    let t = if w == Width::B64 {
        Type::U64
    } else {
        Type::U32
    };
    let v = if w == Width::B64 {
        cx.reg64(rs)
    } else {
        cx.reg(rs)
    };
    let old = cx.emit(Op::Atomic(space, o, w), t, &[a, v]);
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
            if !i.modifier(Field::Mode).unwrap_or("").is_empty() {
                return Err(cx.unsupported(i, "LDC addressing mode"));
            }
            let bank = i.get(Field::CbufBank).unwrap_or(0) as u8;
            let imm = i.get(Field::Imm).unwrap_or(0) as u32;
            let r = cx.r(i, Field::Ra);
            let k = cx.c32(imm);
            let off = cx.add(r, k);
            let rd = cx.rf(i, Field::Rd);
            match shape(cx, i)? {
                Shape::One(Width::B32) => {
                    let v = cx.const_dyn(bank, off);
                    cx.set_reg(rd, v);
                }
                Shape::One(w) => {
                    let m = cx.c32(!3);
                    let wa = cx.and(off, m);
                    let word = cx.const_dyn(bank, wa);
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
                        let v = cx.const_dyn(bank, ok);
                        if rd != 255 {
                            cx.set_reg(reg_plus(rd, k), v);
                        }
                    }
                }
            }
            Ok(())
        }
        O::Atom => atomic(cx, i, Space::Global, false),
        O::Atoms => atomic(cx, i, Space::Shared, false),
        O::Red => atomic(cx, i, Space::Global, true),
        O::Cctl => Ok(()),
        O::Membar => {
            let dev = i.modifier(Field::Level) != Some(".CTA");
            cx.emit(Op::MemBarrier(dev), Type::Void, &[]);
            Ok(())
        }
        _ => Err(cx.unsupported(i, "no semantics for this instruction")),
    }
}

/// Register `rd + k` of a vector access; past R254 it is RZ (reads 0, writes dropped).
fn reg_plus(rd: u8, k: u32) -> u8 {
    let n = rd as u32 + k;
    if rd == 255 || n > 254 {
        255
    } else {
        n as u8
    }
}
