//! Ampere integer, logic, shift, move and predicate instructions, and the uniform datapath
//! (`UIADD3` is `IADD3` on uniform registers: every source and destination is read through
//! [`super::operand`], which knows both files).
//!
//! Carries are predicates: `IADD3 R0, P0, P1, a, b, c` writes the carry of `a + b` to P0
//! and that of `(a + b) + c` to P1, and `IADD3.X` adds both back (`…, P0, P1`), so a carry
//! chain counts each carry once. A negated source (`-R2`) is `~R2 + 1`, the `+1` entering
//! the first addition (so `a + -b` carries exactly when `a >= b`, as 64-bit subtraction
//! needs); `.X` forms negate with `~` alone.

use super::super::{int as mint, Cx, Result};
use super::operand::{src, Src};
use crate::ir::{Op, Type, Value};
use dmsh_isa::ampere::{mods, Instr, Opcode};
use dmsh_isa::Field;

/// The combining predicate (`Pc`, or `UPc`; `PT` when the form has none).
fn pc(cx: &mut Cx, i: &Instr) -> Value {
    if i.has(Field::UPc) {
        return cx.apred(i, Field::UPc, Field::NotC);
    }
    cx.apred(i, Field::Pc, Field::NotC)
}

/// The carry-in predicates of a `.X` form: (`Pc`, `Pc2`) or the uniform (`UPa`, `UPb`).
fn carry_ins(cx: &mut Cx, i: &Instr) -> (Value, Value) {
    if i.has(Field::UPa) {
        let a = cx.apred(i, Field::UPa, Field::NotA);
        let b = if i.has(Field::UPb) {
            cx.apred(i, Field::UPb, Field::NotB)
        } else {
            cx.cbool(false)
        };
        return (a, b);
    }
    let a = if i.has(Field::Pc) {
        cx.apred(i, Field::Pc, Field::NotC)
    } else {
        cx.cbool(false)
    };
    let b = if i.has(Field::Pc2) {
        cx.apred(i, Field::Pc2, Field::NotC2)
    } else {
        cx.cbool(false)
    };
    (a, b)
}

/// Writes destination predicate `k` (0: `Pd`/`UPd`, 1: `Pd2`/`UPd2`).
fn set_pd(cx: &mut Cx, i: &Instr, k: usize, v: Value) {
    let (p, u) = if k == 0 {
        (Field::Pd, Field::UPd)
    } else {
        (Field::Pd2, Field::UPd2)
    };
    if i.has(u) {
        cx.set_apred(i, u, v);
    } else {
        cx.set_apred(i, p, v);
    }
}

/// Whether the form writes destination predicate `k`.
fn has_pd(i: &Instr, k: usize) -> bool {
    let (p, u) = if k == 0 {
        (Field::Pd, Field::UPd)
    } else {
        (Field::Pd2, Field::UPd2)
    };
    let pt = |f: Field| i.pred(f).or_else(|| i.upred(f)).is_some_and(|p| !p.is_pt());
    pt(p) || pt(u)
}

/// Whether the form is the `.X` (carry-in) variant.
fn is_x(i: &Instr) -> bool {
    i.form_name().contains("_X_") || i.form_name().ends_with("_X")
}

/// Signedness of a `SIGN32` field (signed when the form has none).
fn signed(cx: &Cx, i: &Instr) -> Result<bool> {
    Ok(cx.modifier::<mods::Sign32>(i, Field::Signed)? != Some(mods::Sign32::U32))
}

/// Bool → 0/1.
fn b2i(cx: &mut Cx, b: Value) -> Value {
    let one = cx.c32(1);
    let zero = cx.c32(0);
    cx.sel(b, one, zero)
}

/// `a + b` with its carry (U32).
fn add_c(cx: &mut Cx, a: Value, b: Value) -> (Value, Value) {
    let s = cx.add(a, b);
    let c = cx.cmp(Op::AddCarry, a, b);
    (s, c)
}

/// `a + b + k` with its carry, k a 0..=2 value (U32).
fn add_k(cx: &mut Cx, a: Value, b: Value, k: Value) -> (Value, Value) {
    if cx.f.const_of(k) == Some(0) {
        return add_c(cx, a, b);
    }
    let (s, c) = mint::add3_carry(cx, a, b, k);
    (s, c)
}

/// Source `k` complemented when its negation field says so (`~x` for `.X` forms and as
/// the first half of `-x`); returns whether it was.
fn neg_src(cx: &mut Cx, i: &Instr, k: usize, neg: Field) -> Result<(Value, bool)> {
    let v = cx.asrc(i, k)?;
    if i.flag(neg) {
        Ok((cx.not(v), true))
    } else {
        Ok((v, false))
    }
}

fn iadd3(cx: &mut Cx, i: &Instr) -> Result<()> {
    let (a, na) = neg_src(cx, i, 0, Field::NegA)?;
    let (b, nb) = neg_src(cx, i, 1, Field::NegB)?;
    let (c, nc) = neg_src(cx, i, 2, Field::NegC)?;
    let (k1, k2) = if is_x(i) {
        let (p, q) = carry_ins(cx, i);
        (b2i(cx, p), b2i(cx, q))
    } else {
        let n = na as u32 + nb as u32 + nc as u32;
        (cx.c32(n), cx.c32(0))
    };
    let (s1, c1) = add_k(cx, a, b, k1);
    let (s, c2) = add_k(cx, s1, c, k2);
    cx.set_dst(i, s);
    if has_pd(i, 0) {
        set_pd(cx, i, 0, c1);
    }
    if has_pd(i, 1) {
        set_pd(cx, i, 1, c2);
    }
    Ok(())
}

/// `v` negated when `neg`: `~v` in a `.X` form (the carry-in completes it), else `-v`.
fn negate(cx: &mut Cx, v: Value, neg: bool, x: bool) -> Value {
    if !neg {
        return v;
    }
    let nv = cx.not(v);
    if x {
        return nv;
    }
    let one = if cx.f.ty(v) == Type::U64 {
        cx.c64(1)
    } else {
        cx.c32(1)
    };
    cx.add(nv, one)
}

/// IMAD: `A * B + C` (`.WIDE`: 64-bit with C the pair; `.HI`: its high word; `.X`: plus
/// the carry-in).
fn imad(cx: &mut Cx, i: &Instr) -> Result<()> {
    let name = i.form_name();
    let wide = name.contains("WIDE");
    let hi = name.starts_with("IMAD_HI") || name.starts_with("UIMAD_HI");
    let x = is_x(i);
    let s = signed(cx, i)?;
    let a = cx.asrc(i, 0)?;
    let b = cx.asrc(i, 1)?;
    let negc = i.flag(Field::NegC);
    let carry = if x {
        let (p, _) = carry_ins(cx, i);
        b2i(cx, p)
    } else {
        cx.c32(0)
    };
    if wide || hi {
        // `.WIDE`: the 64-bit `a * b + C`, C the pair `{Rc+1:Rc}`; `.HI`: its high word.
        let ext = if s { Op::SConvert } else { Op::UConvert };
        let a64 = cx.emit(ext, Type::U64, &[a]);
        let b64 = cx.emit(ext, Type::U64, &[b]);
        let p = cx.bin(Op::IMul, a64, b64);
        let c = cx.asrc64(i, 2)?;
        let c = negate(cx, c, negc, x);
        let r = cx.add(p, c);
        let cin = cx.emit(Op::UConvert, Type::U64, &[carry]);
        let r = cx.add(r, cin);
        if hi {
            let h = cx.hi(r);
            cx.set_dst(i, h);
        } else {
            cx.set_dst64(i, r);
        }
        if has_pd(i, 0) {
            // The carry out of the 64-bit addition.
            let c1 = cx.cmp(Op::ULt, r, p);
            set_pd(cx, i, 0, c1);
        }
        return Ok(());
    }
    let c = cx.asrc(i, 2)?;
    let c = negate(cx, c, negc, x);
    let prod = cx.bin(Op::IMul, a, b);
    let (r, c1) = add_k(cx, prod, c, carry);
    cx.set_dst(i, r);
    if has_pd(i, 0) {
        set_pd(cx, i, 0, c1);
    }
    Ok(())
}

/// Ampere's comparison as the shared one.
fn icmp_of(cx: &Cx, i: &Instr) -> Result<dmsh_isa::mods::Icmp> {
    use dmsh_isa::mods::Icmp as M;
    use mods::Icmp as A;
    Ok(match cx.modifier::<A>(i, Field::Cmp)? {
        Some(A::F) | None => M::F,
        Some(A::Lt) => M::Lt,
        Some(A::Eq) => M::Eq,
        Some(A::Le) => M::Le,
        Some(A::Gt) => M::Gt,
        Some(A::Ne) => M::Ne,
        Some(A::Ge) => M::Ge,
        Some(A::T) => M::T,
    })
}

/// `a op b` for a `BOP` field (`.AND` when absent).
fn bop(cx: &mut Cx, i: &Instr, a: Value, b: Value) -> Result<Value> {
    use mods::Bop;
    Ok(match cx.modifier::<Bop>(i, Field::Bop)? {
        Some(Bop::And) | None => cx.and(a, b),
        Some(Bop::Or) => cx.or(a, b),
        Some(Bop::Xor) => cx.bin(Op::Xor, a, b),
        Some(Bop::Invalid3) => return Err(cx.unsupported(i, "BOP .INVALID3")),
    })
}

fn isetp(cx: &mut Cx, i: &Instr) -> Result<()> {
    use dmsh_isa::mods::Icmp as M;
    let cmp = icmp_of(cx, i)?;
    let s = signed(cx, i)?;
    let a = cx.asrc(i, 0)?;
    let b = cx.asrc(i, 1)?;
    let ex = i.form_name().contains("_EX");
    let t = if ex {
        // The high halves of a 64-bit comparison; the low halves' result (same test,
        // unsigned) is the chained predicate.
        let lo = if i.has(Field::UPa) {
            cx.apred(i, Field::UPa, Field::NotA)
        } else if i.has(Field::Pc2) {
            cx.apred(i, Field::Pc2, Field::NotC2)
        } else {
            cx.cbool(true)
        };
        let eq = cx.cmp(Op::IEq, a, b);
        match cmp {
            M::F => cx.cbool(false),
            M::T => cx.cbool(true),
            M::Eq => cx.and(eq, lo),
            M::Ne => {
                let ne = cx.not(eq);
                cx.or(ne, lo)
            }
            M::Lt | M::Le | M::Gt | M::Ge => {
                let strict = match cmp {
                    M::Lt | M::Le => M::Lt,
                    _ => M::Gt,
                };
                let st = mint::icmp(cx, strict, s, a, b);
                let tie = cx.and(eq, lo);
                cx.or(st, tie)
            }
        }
    } else {
        mint::icmp(cx, cmp, s, a, b)
    };
    let p = pc(cx, i);
    let v = bop(cx, i, t, p)?;
    set_pd(cx, i, 0, v);
    if has_pd(i, 1) {
        let nt = cx.not(t);
        let v2 = bop(cx, i, nt, p)?;
        set_pd(cx, i, 1, v2);
    }
    Ok(())
}

/// A three-input lookup table on Bools (PLOP3's `Lut`, [`crate::lift::lut`]).
fn plut3(cx: &mut Cx, lut: u8, a: Value, b: Value, c: Value) -> Value {
    crate::lift::lut::lut3(
        &mut crate::lift::lut::OnCx { cx, bools: true },
        lut,
        a,
        b,
        c,
    )
}

fn plop3(cx: &mut Cx, i: &Instr) -> Result<()> {
    if i.has(Field::Ra) {
        // `PLOP3.LUT P0, P1, R2.SIGN, R3.SIGN, R4.SIGN, …`: the sources' sign bits.
        let mut sg = [Value::NONE; 3];
        for (k, v) in sg.iter_mut().enumerate() {
            let x = cx.asrc(i, k)?;
            let z = cx.c32(0);
            *v = cx.cmp(Op::SLt, x, z);
        }
        let lut = i.get(Field::Lut).unwrap_or(0) as u8;
        let lut2 = i.get(Field::Lut2).unwrap_or(0) as u8;
        let v = plut3(cx, lut, sg[0], sg[1], sg[2]);
        let v2 = plut3(cx, lut2, sg[0], sg[1], sg[2]);
        set_pd(cx, i, 0, v);
        set_pd(cx, i, 1, v2);
        return Ok(());
    }
    let a = if i.has(Field::UPa) {
        cx.apred(i, Field::UPa, Field::NotA)
    } else {
        cx.apred(i, Field::Pa, Field::NotA)
    };
    let b = if i.has(Field::UPb) {
        cx.apred(i, Field::UPb, Field::NotB)
    } else {
        cx.apred(i, Field::Pb, Field::NotB)
    };
    let c = if i.has(Field::UPc) {
        cx.apred(i, Field::UPc, Field::NotC)
    } else {
        cx.apred(i, Field::Pc, Field::NotC)
    };
    let lut = i.get(Field::Lut).unwrap_or(0) as u8;
    let lut2 = i.get(Field::Lut2).unwrap_or(0) as u8;
    let v = plut3(cx, lut, a, b, c);
    let v2 = plut3(cx, lut2, a, b, c);
    set_pd(cx, i, 0, v);
    set_pd(cx, i, 1, v2);
    Ok(())
}

fn lop3(cx: &mut Cx, i: &Instr) -> Result<()> {
    let a = cx.asrc(i, 0)?;
    let b = cx.asrc(i, 1)?;
    let c = cx.asrc(i, 2)?;
    let lut = i.get(Field::Lut).unwrap_or(0) as u8;
    let r = mint::lut3(cx, lut, a, b, c);
    cx.set_dst(i, r);
    if has_pd(i, 0) {
        // The predicate output: result != 0, ORed with the combining predicate (ANDed
        // with `.PAND`).
        let z = cx.c32(0);
        let nz = cx.cmp(Op::INe, r, z);
        let p = pc(cx, i);
        let v = if i.flag(Field::PAnd) || i.flag(Field::Po) {
            cx.and(nz, p)
        } else {
            cx.or(nz, p)
        };
        set_pd(cx, i, 0, v);
    }
    Ok(())
}

/// SHF: funnel shift of `{C:A}` by B.
fn shf(cx: &mut Cx, i: &Instr) -> Result<()> {
    let name = i.form_name();
    let left = if name.starts_with("USHF") {
        name.starts_with("USHF_L")
    } else {
        cx.modifier::<mods::ShfLr>(i, Field::Dir)? == Some(mods::ShfLr::L)
    };
    let ty = match cx.modifier::<mods::Shfty>(i, Field::Type)? {
        Some(t) => t,
        None => cx
            .modifier::<mods::Shfty>(i, Field::Mode)?
            .unwrap_or(mods::Shfty::U32),
    };
    let (wide, sgn) = match ty {
        mods::Shfty::S64 => (true, true),
        mods::Shfty::U64 => (true, false),
        mods::Shfty::S32 => (false, true),
        mods::Shfty::U32 => (false, false),
    };
    let wrap = i.flag(Field::W);
    let high = i.flag(Field::Hi);
    let a = cx.asrc(i, 0)?;
    let b = cx.asrc(i, 1)?;
    let c = cx.asrc(i, 2)?;
    let bits = if wide { 64 } else { 32 };
    let s = if wrap {
        let m = cx.c32(bits - 1);
        cx.and(b, m)
    } else {
        let lim = cx.c32(bits);
        cx.bin(Op::UMin, b, lim)
    };
    let x = cx.pack(a, c);
    // Shift by at most 63 in the IR; a clamped 64 is a shift by 63 and one more.
    let s63 = {
        let m = cx.c32(63);
        cx.bin(Op::UMin, s, m)
    };
    let s64 = cx.emit(Op::UConvert, Type::U64, &[s63]);
    let op = if left {
        Op::Shl
    } else if sgn && !left {
        Op::AShr
    } else {
        Op::LShr
    };
    let mut r = cx.bin(op, x, s64);
    if wide && !wrap {
        let one = cx.c64(1);
        let r2 = cx.bin(op, r, one);
        let c64 = cx.c32(64);
        let full = cx.cmp(Op::IEq, s, c64);
        r = cx.sel(full, r2, r);
    }
    let out = if high { cx.hi(r) } else { cx.lo(r) };
    cx.set_dst(i, out);
    Ok(())
}

/// LEA: `(A << s) + B`; `.HI`: `({C:A} << s) >> 32 + B` (`.SX32`: C is A's sign).
fn lea(cx: &mut Cx, i: &Instr) -> Result<()> {
    let name = i.form_name();
    let hi = name.contains("_HI");
    let sx = name.contains("SX32");
    let x = is_x(i);
    let sh = i.get(Field::Shift).unwrap_or(0) as u32;
    let (a, na) = neg_src(cx, i, 0, Field::NegA)?;
    let (b, nb) = neg_src(cx, i, 1, Field::NegB)?;
    let shifted = if hi {
        let c = if sx {
            let k = cx.c32(31);
            cx.bin(Op::AShr, a, k)
        } else {
            cx.asrc(i, 2)?
        };
        let w = cx.pack(a, c);
        let k = cx.c64(sh as u64);
        let w = cx.bin(Op::Shl, w, k);
        cx.hi(w)
    } else {
        cx.shl_c(a, sh)
    };
    let k = if x {
        let (p, _) = carry_ins(cx, i);
        b2i(cx, p)
    } else {
        cx.c32(na as u32 + nb as u32)
    };
    let (r, c) = add_k(cx, shifted, b, k);
    cx.set_dst(i, r);
    if has_pd(i, 0) {
        set_pd(cx, i, 0, c);
    }
    Ok(())
}

/// P2R: the predicate register's bits into one byte of Rd (`Mode`: which byte).
fn p2r(cx: &mut Cx, i: &Instr) -> Result<()> {
    let byte = byte_sel(cx, i)?;
    let a = cx.asrc(i, 0)?;
    let mask = cx.asrc(i, 1)?;
    let mut pr = cx.c32(0);
    for n in 0..7u8 {
        let p = cx.pred(n, false);
        let bit = b2i(cx, p);
        let bit = cx.shl_c(bit, n as u32);
        pr = cx.or(pr, bit);
    }
    let ff = cx.c32(0xff);
    let m = cx.and(mask, ff);
    let m = cx.shl_c(m, 8 * byte);
    let v = cx.shl_c(pr, 8 * byte);
    let v = cx.and(v, m);
    let nm = cx.not(m);
    let keep = cx.and(a, nm);
    let r = cx.or(keep, v);
    cx.set_rd(i, r);
    Ok(())
}

/// R2P: predicates P0..P6 from one byte of Ra where the mask has bits.
fn r2p(cx: &mut Cx, i: &Instr) -> Result<()> {
    let byte = byte_sel(cx, i)?;
    let a = cx.asrc(i, 0)?;
    let mask = match src(i, 1) {
        Src::Imm(v) => v,
        _ => return Err(cx.unsupported(i, "R2P with a register mask")),
    };
    for n in 0..7u32 {
        if mask & (1 << n) == 0 {
            continue;
        }
        let bit = cx.bits(a, 8 * byte + n, 1);
        let z = cx.c32(0);
        let p = cx.cmp(Op::INe, bit, z);
        cx.set_pred(n as u8, p);
    }
    Ok(())
}

fn byte_sel(cx: &Cx, i: &Instr) -> Result<u32> {
    Ok(match cx.modifier::<mods::Bsel>(i, Field::Mode)? {
        Some(mods::Bsel::B1) => 1,
        Some(mods::Bsel::B2) => 2,
        Some(mods::Bsel::B3) => 3,
        _ => 0,
    })
}

/// FLO: the index of the highest one bit (or the shift to it, `.SH`), all ones for none.
fn flo(cx: &mut Cx, i: &Instr) -> Result<()> {
    let s = signed(cx, i)?;
    let v = cx.asrc(i, 0)?;
    let r = mint::flo(cx, v, s, i.flag(Field::InvB), i.flag(Field::Sh));
    cx.set_dst(i, r);
    Ok(())
}

/// Lifts one instruction of the family.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    use Opcode as O;
    match i.opcode() {
        O::Mov | O::Umov | O::R2ur => {
            let v = cx.asrc(i, 0)?;
            cx.set_dst(i, v);
            Ok(())
        }
        O::Uldc => {
            let Some(off) = i.get(Field::CbufOffset) else {
                return Err(cx.unsupported(i, "no constant operand"));
            };
            let bank = i.get(Field::CbufBank);
            let wide = i.modifier(Field::Size) == Some(".64");
            if i.modifier(Field::Size)
                .is_some_and(|m| m != ".64" && !m.is_empty())
            {
                return Err(cx.unsupported(i, "sub-word ULDC"));
            }
            let n = if wide { 2 } else { 1 };
            for k in 0..n {
                let v = match (bank, i.ureg(Field::URa)) {
                    (Some(b), Some(u)) => {
                        let base = cx.ureg(u.0);
                        let o = cx.c32(off as u32 + 4 * k);
                        let a = cx.add(base, o);
                        cx.const_dyn(b as u8, a)
                    }
                    (Some(b), None) => cx.const_word(b as u8, off as u32 + 4 * k),
                    (None, Some(u)) => {
                        let o = cx.c32(off as u32 + 4 * k);
                        cx.bindless_const(u.0, o)
                    }
                    (None, None) => return Err(cx.unsupported(i, "no constant bank")),
                };
                if let Some(u) = i.ureg(Field::URd) {
                    cx.set_ureg(u.0.saturating_add(k as u8), v);
                }
            }
            Ok(())
        }
        O::Iadd3 | O::Uiadd3 => iadd3(cx, i),
        O::Imad | O::Uimad => imad(cx, i),
        O::Isetp | O::Uisetp => isetp(cx, i),
        O::Lop3 | O::Ulop3 => lop3(cx, i),
        O::Plop3 | O::Uplop3 => plop3(cx, i),
        O::Shf | O::Ushf => shf(cx, i),
        O::Lea | O::Ulea => lea(cx, i),
        O::Sel | O::Usel => {
            let a = cx.asrc(i, 0)?;
            let b = cx.asrc(i, 1)?;
            let p = pc(cx, i);
            let r = cx.sel(p, a, b);
            cx.set_dst(i, r);
            Ok(())
        }
        O::Prmt | O::Uprmt => {
            let mode = if i.opcode() == O::Uprmt {
                ""
            } else {
                cx.modifier::<mods::PrmtMode>(i, Field::Mode)?
                    .map_or("", |m| m.name())
            };
            let a = cx.asrc(i, 0)?;
            let sel = cx.asrc(i, 1)?;
            let c = cx.asrc(i, 2)?;
            let r = mint::permute(cx, mode, a, sel, c);
            cx.set_dst(i, r);
            Ok(())
        }
        O::Imnmx => {
            let s = signed(cx, i)?;
            let a = cx.asrc(i, 0)?;
            let b = cx.asrc(i, 1)?;
            let p = pc(cx, i);
            let (mn, mx) = if s {
                (Op::SMin, Op::SMax)
            } else {
                (Op::UMin, Op::UMax)
            };
            let lo = cx.bin(mn, a, b);
            let hi = cx.bin(mx, a, b);
            let r = cx.sel(p, lo, hi);
            cx.set_dst(i, r);
            Ok(())
        }
        O::Iabs => {
            let v = cx.asrc(i, 0)?;
            let z = cx.c32(0);
            let neg = cx.cmp(Op::SLt, v, z);
            let n = cx.un(Op::INeg, v);
            let r = cx.sel(neg, n, v);
            cx.set_dst(i, r);
            Ok(())
        }
        O::Flo | O::Uflo => flo(cx, i),
        O::Popc | O::Upopc => {
            let v = cx.asrc(i, 0)?;
            let v = if i.flag(Field::InvB) { cx.not(v) } else { v };
            let r = cx.un(Op::Popc, v);
            cx.set_dst(i, r);
            Ok(())
        }
        O::Brev | O::Ubrev => {
            let v = cx.asrc(i, 0)?;
            let r = cx.un(Op::Brev, v);
            cx.set_dst(i, r);
            Ok(())
        }
        O::Bmsk | O::Ubmsk => {
            // ((1 << width) - 1) << pos, widths and positions clamped to 32 (`.W`: mod 32).
            let pos = cx.asrc(i, 0)?;
            let width = cx.asrc(i, 1)?;
            let (pos, width) = if i.flag(Field::W) {
                let m = cx.c32(31);
                (cx.and(pos, m), cx.and(width, m))
            } else {
                let m = cx.c32(32);
                (cx.bin(Op::UMin, pos, m), cx.bin(Op::UMin, width, m))
            };
            let one = cx.c64(1);
            let w64 = cx.emit(Op::UConvert, Type::U64, &[width]);
            let m = cx.bin(Op::Shl, one, w64);
            let m = cx.bin(Op::ISub, m, one);
            let p64 = cx.emit(Op::UConvert, Type::U64, &[pos]);
            let m = cx.bin(Op::Shl, m, p64);
            let r = cx.lo(m);
            cx.set_dst(i, r);
            Ok(())
        }
        O::Sgxt | O::Usgxt => {
            // Sign- (or zero-, `.U32`) extension of A's low B bits; B clamped to 32.
            let s = signed(cx, i)?;
            let a = cx.asrc(i, 0)?;
            let b = cx.asrc(i, 1)?;
            let b = if i.flag(Field::W) {
                let m = cx.c32(31);
                cx.and(b, m)
            } else {
                let m = cx.c32(32);
                cx.bin(Op::UMin, b, m)
            };
            let z = cx.c32(0);
            let r = cx.emit(if s { Op::BfeS } else { Op::BfeU }, Type::U32, &[a, z, b]);
            let zero = cx.cmp(Op::IEq, b, z);
            let r = cx.sel(zero, z, r);
            cx.set_dst(i, r);
            Ok(())
        }
        O::Idp => idp(cx, i),
        O::Vabsdiff => {
            let s = signed(cx, i)?;
            let a = cx.asrc(i, 0)?;
            let b = cx.asrc(i, 1)?;
            let c = cx.asrc(i, 2)?;
            let (mx, mn) = if s {
                (Op::SMax, Op::SMin)
            } else {
                (Op::UMax, Op::UMin)
            };
            let hi = cx.bin(mx, a, b);
            let lo = cx.bin(mn, a, b);
            let d = cx.bin(Op::ISub, hi, lo);
            let r = cx.add(d, c);
            cx.set_dst(i, r);
            Ok(())
        }
        O::P2r => p2r(cx, i),
        O::R2p => r2p(cx, i),
        O::Lepc => {
            // The address of this instruction in the program (its code starts at 0).
            let lo = cx.c32(cx.addr);
            let hi = cx.c32(0);
            let v = cx.pack(lo, hi);
            cx.set_dst64(i, v);
            Ok(())
        }
        _ => Err(cx.unsupported(i, "no semantics for this instruction")),
    }
}

/// IDP.4A / IDP.2A: dot products of bytes (and halves) plus C.
fn idp(cx: &mut Cx, i: &Instr) -> Result<()> {
    let four = i.form_name().starts_with("IDP_4A");
    let sa = if four {
        cx.modifier::<mods::Int8>(i, Field::SignedA)? == Some(mods::Int8::S8)
    } else {
        cx.modifier::<mods::Int16>(i, Field::SignedA)? == Some(mods::Int16::S16)
    };
    let sb = cx.modifier::<mods::Int8>(i, Field::SignedB)? == Some(mods::Int8::S8);
    let hi = cx.modifier::<mods::IdpHl>(i, Field::Hi)? == Some(mods::IdpHl::Hi);
    let a = cx.asrc(i, 0)?;
    let b = cx.asrc(i, 1)?;
    let mut acc = cx.asrc(i, 2)?;
    let ext = |cx: &mut Cx, v: Value, off: u32, len: u32, s: bool| {
        if s {
            cx.sbits(v, off, len)
        } else {
            cx.bits(v, off, len)
        }
    };
    let n = if four { 4 } else { 2 };
    for k in 0..n {
        let x = if four {
            ext(cx, a, 8 * k, 8, sa)
        } else {
            ext(cx, a, 16 * k, 16, sa)
        };
        let boff = if four {
            8 * k
        } else {
            8 * (k + if hi { 2 } else { 0 })
        };
        let y = ext(cx, b, boff, 8, sb);
        let p = cx.bin(Op::IMul, x, y);
        acc = cx.add(acc, p);
    }
    cx.set_dst(i, acc);
    Ok(())
}
