//! Integer, logic, shift, bit-field, move, select, permute and predicate instructions, with
//! Maxwell's rules (shift clamping, BFE/BFI ranges, the CC carry chain, XMAD halves).

use super::{Cx, Result};
use crate::ir::{BlockId, Flag, Op, Type, Value};
use dmsh_isa::mods::{self, Ccn, Icmp};
use dmsh_isa::{Field, Instr, Opcode};

/// Combines two Bools with a Maxwell boolean op (`.AND`, `.OR`, `.XOR`: `mods::Bop`; `.AND`
/// when the form has none).
pub fn bop(cx: &mut Cx, i: &Instr, f: Field, a: Value, b: Value) -> Result<Value> {
    use mods::Bop;
    Ok(match cx.modifier::<Bop>(i, f)? {
        Some(Bop::And) | None => cx.and(a, b),
        Some(Bop::Or) => cx.or(a, b),
        Some(Bop::Xor) => cx.bin(Op::Xor, a, b),
    })
}

/// `a + b + k` (all U32), without the carry out; adds nothing for a constant k = 0.
pub fn add3(cx: &mut Cx, a: Value, b: Value, k: Value) -> Value {
    let s1 = cx.add(a, b);
    if cx.f.const_of(k) == Some(0) {
        s1
    } else {
        cx.add(s1, k)
    }
}

/// `a + b + k` with the carry out when `carry` asks for it (else the carry is
/// [`Value::NONE`]); all U32, k ≤ 2.
pub fn add3_cc(cx: &mut Cx, a: Value, b: Value, k: Value, carry: bool) -> (Value, Value) {
    if carry {
        add3_carry(cx, a, b, k)
    } else {
        (add3(cx, a, b, k), Value::NONE)
    }
}

/// `a + b + k` with the carry out (all U32; k ≤ 2).
pub fn add3_carry(cx: &mut Cx, a: Value, b: Value, k: Value) -> (Value, Value) {
    let s1 = cx.add(a, b);
    let c1 = cx.cmp(Op::AddCarry, a, b);
    // Mostly k is 0 (no `.X`): no second carry, whose constant false would be made for
    // nothing.
    if cx.f.const_of(k) == Some(0) {
        return (s1, c1);
    }
    let s = cx.add(s1, k);
    let c2 = cx.cmp(Op::AddCarry, s1, k);
    let c = cx.or(c1, c2);
    (s, c)
}

/// Writes the condition codes of an addition result.
pub fn set_cc_add(cx: &mut Cx, a: Value, b: Value, s: Value, carry: Value) {
    if !cx.zso_flags {
        cx.set_flag(Flag::Carry, carry);
        return;
    }
    let z = cx.c32(0);
    let zf = cx.cmp(Op::IEq, s, z);
    let sf = cx.cmp(Op::SLt, s, z);
    let x1 = cx.bin(Op::Xor, a, s);
    let x2 = cx.bin(Op::Xor, b, s);
    let o = cx.and(x1, x2);
    let of = cx.cmp(Op::SLt, o, z);
    cx.set_flag(Flag::Carry, carry);
    cx.set_flag(Flag::Zero, zf);
    cx.set_flag(Flag::Sign, sf);
    cx.set_flag(Flag::Overflow, of);
}

/// Writes zero/sign flags of a logic result (carry and overflow cleared).
pub fn set_cc_logic(cx: &mut Cx, s: Value) {
    if !cx.zso_flags {
        let f = cx.cbool(false);
        cx.set_flag(Flag::Carry, f);
        return;
    }
    let z = cx.c32(0);
    let zf = cx.cmp(Op::IEq, s, z);
    let sf = cx.cmp(Op::SLt, s, z);
    let f = cx.cbool(false);
    cx.set_flag(Flag::Zero, zf);
    cx.set_flag(Flag::Sign, sf);
    cx.set_flag(Flag::Carry, f);
    cx.set_flag(Flag::Overflow, f);
}

/// Writes a logic-style result to Rd, and with `.CC` its zero/sign flags first
/// ([`set_cc_logic`]).
pub fn set_rd_logic(cx: &mut Cx, i: &Instr, r: Value) {
    if i.flag(Field::Cc) {
        set_cc_logic(cx, r);
    }
    cx.set_rd(i, r);
}

/// The carry-in of an `.X` (extended) addition: the CC carry as 0/1, else 0.
fn carry_in(cx: &mut Cx, i: &Instr) -> Value {
    if i.flag(Field::X) {
        cx.carry_u32()
    } else {
        cx.c32(0)
    }
}

/// `a + b + k`, with `.CC` the addition's flags written ([`set_cc_add`]); the sum.
fn add_cc(cx: &mut Cx, i: &Instr, a: Value, b: Value, k: Value) -> Value {
    let cc = i.flag(Field::Cc);
    let (s, carry) = add3_cc(cx, a, b, k, cc);
    if cc {
        set_cc_add(cx, a, b, s, carry);
    }
    s
}

/// The shared tail of the xSETP / xSET comparisons: the test `t` combined with the predicate
/// Pc (`.NOT` as asked) by `.BOP`. xSETP (`setp`) writes it to Pd and `!t` combined likewise
/// to Pd2; xSET writes Rd = 1.0 (`.BF`) or `!0` where it holds and 0 elsewhere, with
/// `logic_cc` through [`set_rd_logic`].
pub fn set_compare(cx: &mut Cx, i: &Instr, setp: bool, t: Value, logic_cc: bool) -> Result<()> {
    // Pc is mostly PT: `t AND true` is `t`, and the constant is not made for nothing.
    let pc_true = i.pred(Field::Pc).is_none_or(|p| p.is_pt()) && !i.flag(Field::NotC);
    let plain_and = pc_true
        && matches!(
            cx.modifier::<mods::Bop>(i, Field::Bop)?,
            Some(mods::Bop::And) | None
        );
    let pc = if plain_and {
        Value::NONE
    } else {
        cx.p(i, Field::Pc, Field::NotC)
    };
    let combine = |cx: &mut Cx, t: Value| {
        if plain_and {
            Ok(t)
        } else {
            bop(cx, i, Field::Bop, t, pc)
        }
    };
    let v = combine(cx, t)?;
    if setp {
        cx.set_p(i, Field::Pd, v);
        // Pd2 is mostly PT, whose write is dropped: then its value is not made.
        if i.pred(Field::Pd2).is_some_and(|p| !p.is_pt()) {
            let nt = cx.not(t);
            let v2 = combine(cx, nt)?;
            cx.set_p(i, Field::Pd2, v2);
        }
    } else {
        let tv = cx.c32(if i.flag(Field::Bf) { 0x3f80_0000 } else { !0 });
        let z = cx.c32(0);
        let r = cx.sel(v, tv, z);
        if logic_cc {
            set_rd_logic(cx, i, r);
        } else {
            cx.set_rd(i, r);
        }
    }
    Ok(())
}

/// Whether an integer operation is signed: its `Signed` field (`mods::U32`: `.U32` or
/// nothing, meaning `.S32`); signed when the form has none.
fn signed(cx: &Cx, i: &Instr) -> Result<bool> {
    Ok(cx.modifier::<mods::U32>(i, Field::Signed)? != Some(mods::U32::U32))
}

/// The comparison of ISETP, ISET and ICMP (`Cmp`, `mods::Icmp`); `.F` when the form has none.
fn icmp_of(cx: &Cx, i: &Instr) -> Result<Icmp> {
    Ok(cx.modifier::<Icmp>(i, Field::Cmp)?.unwrap_or(Icmp::F))
}

/// Integer comparison (`.LT`, …) → Bool.
pub fn icmp(cx: &mut Cx, c: Icmp, s: bool, a: Value, b: Value) -> Value {
    match c {
        Icmp::F => cx.cbool(false),
        Icmp::T => cx.cbool(true),
        Icmp::Eq => cx.cmp(Op::IEq, a, b),
        Icmp::Ne => cx.cmp(Op::INe, a, b),
        Icmp::Lt => cx.cmp(if s { Op::SLt } else { Op::ULt }, a, b),
        Icmp::Le => cx.cmp(if s { Op::SLe } else { Op::ULe }, a, b),
        Icmp::Gt => cx.cmp(if s { Op::SGt } else { Op::UGt }, a, b),
        Icmp::Ge => cx.cmp(if s { Op::SGe } else { Op::UGe }, a, b),
    }
}

/// The 64-bit comparison `{hi_a:lo_a} cmp {hi_b:lo_b}` whose low half was subtracted by a
/// preceding `.CC` instruction (Z and C flags), as ISETP/ISET `.X` do.
fn icmp_x(cx: &mut Cx, cmp: Icmp, s: bool, a: Value, b: Value) -> Value {
    let z = cx.flag(Flag::Zero);
    let c = cx.flag(Flag::Carry);
    let heq = cx.cmp(Op::IEq, a, b);
    let hlt = cx.cmp(if s { Op::SLt } else { Op::ULt }, a, b);
    let hgt = cx.cmp(if s { Op::SGt } else { Op::UGt }, a, b);
    let nc = cx.not(c);
    let eq = cx.and(heq, z);
    let lt0 = cx.and(heq, nc);
    let lt = cx.or(hlt, lt0);
    match cmp {
        Icmp::F => cx.cbool(false),
        Icmp::T => cx.cbool(true),
        Icmp::Eq => eq,
        Icmp::Ne => cx.not(eq),
        Icmp::Lt => lt,
        Icmp::Ge => cx.not(lt),
        Icmp::Le => cx.or(lt, eq),
        Icmp::Gt => {
            let le = cx.or(lt, eq);
            let _ = hgt;
            cx.not(le)
        }
    }
}

fn mul_ext(cx: &mut Cx, v: Value, s: bool) -> Value {
    cx.emit(if s { Op::SConvert } else { Op::UConvert }, Type::U64, &[v])
}

/// 32×32 → 64 multiply with per-operand signedness.
fn mul64(cx: &mut Cx, a: Value, b: Value, sa: bool, sb: bool) -> Value {
    let a = mul_ext(cx, a, sa);
    let b = mul_ext(cx, b, sb);
    cx.bin(Op::IMul, a, b)
}

/// (A signed, B signed) of IMUL/IMAD (`Signed`, `mods::Multy`; nothing prints `.S32.S32`).
fn mul_signs(cx: &Cx, i: &Instr) -> Result<(bool, bool)> {
    use mods::Multy;
    Ok(match cx.modifier::<Multy>(i, Field::Signed)? {
        Some(Multy::U32U32) => (false, false),
        Some(Multy::S32U32) => (true, false),
        Some(Multy::U32S32) => (false, true),
        Some(Multy::Default) | None => (true, true),
    })
}

/// Shift count handling shared by SHL/SHR: the count masked to 0..31, and whether the count
/// is out of range (above 31 without `.W`), `None` where it never is (`.W`, or a constant
/// count below 32: then no comparison and no constant for its result are made).
fn shift_count(cx: &mut Cx, s: Value, wrap: bool) -> (Value, Option<Value>) {
    if let Some(c) = cx.f.const_of(s) {
        let c = c as u32;
        let sc = cx.c32(c & 31);
        let big = (!wrap && c > 31).then(|| cx.cbool(true));
        return (sc, big);
    }
    let m = cx.c32(31);
    let sc = cx.and(s, m);
    let big = (!wrap).then(|| cx.cmp(Op::UGt, s, m));
    (sc, big)
}

/// FLO: the index of the highest one bit of `v` (`~v` if `inv`; for `signed`, the highest
/// bit that differs from the sign), or with `sh` the shift that brings it to bit 31; all
/// ones when there is none.
pub fn flo(cx: &mut Cx, v: Value, signed: bool, inv: bool, sh: bool) -> Value {
    let v = if inv { cx.not(v) } else { v };
    let idx = cx.un(if signed { Op::FindSMsb } else { Op::FindUMsb }, v);
    if !sh {
        return idx;
    }
    let m1 = cx.c32(!0);
    let none = cx.cmp(Op::IEq, idx, m1);
    let k = cx.c32(31);
    let d = cx.bin(Op::ISub, k, idx);
    cx.sel(none, m1, d)
}

/// Evaluates a LOP3 lookup table on three U32 values ([`super::lut`]).
pub fn lut3(cx: &mut Cx, lut: u8, a: Value, b: Value, c: Value) -> Value {
    super::lut::lut3(&mut super::lut::OnCx { cx, bools: false }, lut, a, b, c)
}

/// Writes the LOP/LOP3 predicate output (`.T/.Z/.NZ`).
fn lop_pred(cx: &mut Cx, i: &Instr, r: Value) -> Result<()> {
    use mods::Po;
    let v = match cx.modifier::<Po>(i, Field::Po)? {
        Some(Po::Default) | None => return Ok(()),
        Some(Po::T) => cx.cbool(true),
        Some(Po::Z) => {
            let z = cx.c32(0);
            cx.cmp(Op::IEq, r, z)
        }
        Some(Po::Nz) => {
            let z = cx.c32(0);
            cx.cmp(Op::INe, r, z)
        }
    };
    cx.set_p(i, Field::Pd, v);
    Ok(())
}

/// PRMT byte index tables for the special modes, by the mode's text (`.F4E`, as both
/// generations print it): `[selector & 3][output byte]`. `None` for the default
/// (per-byte selector) mode.
fn prmt_table(mode: &str) -> Option<[[u32; 4]; 4]> {
    Some(match mode {
        ".F4E" => [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]],
        ".B4E" => [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]],
        ".RC8" => [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]],
        ".ECL" => [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]],
        ".ECR" => [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]],
        ".RC16" => [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]],
        _ => return None,
    })
}

fn prmt(cx: &mut Cx, i: &Instr, a: Value, sel: Value, c: Value) -> Result<Value> {
    let mode = cx
        .modifier::<mods::Prmt>(i, Field::Mode)?
        .unwrap_or(mods::Prmt::Default);
    Ok(permute(cx, mode.name(), a, sel, c))
}

/// PRMT: the bytes of `{c:a}` picked by `sel` in mode `mode` (its text: `""` the per-byte
/// selectors, `.F4E`, `.B4E`, `.RC8`, `.ECL`, `.ECR`, `.RC16`).
pub fn permute(cx: &mut Cx, mode: &str, a: Value, sel: Value, c: Value) -> Value {
    let wide = cx.pack(a, c);
    let byte_at = |cx: &mut Cx, idx: Value| -> Value {
        let eight = cx.c32(8);
        let sh = cx.bin(Op::IMul, idx, eight);
        let sh64 = cx.emit(Op::UConvert, Type::U64, &[sh]);
        let w = cx.bin(Op::LShr, wide, sh64);
        let lo = cx.lo(w);
        cx.bits(lo, 0, 8)
    };
    let mut out = cx.c32(0);
    let Some(t) = prmt_table(mode) else {
        for k in 0..4u32 {
            let nib = cx.bits(sel, 4 * k, 4);
            let seven = cx.c32(7);
            let idx = cx.and(nib, seven);
            let byte = byte_at(cx, idx);
            let sgn = cx.bits(nib, 3, 1);
            let z = cx.c32(0);
            let rep = cx.cmp(Op::INe, sgn, z);
            let msb = cx.sbits(byte, 7, 1);
            let ff = cx.c32(0xff);
            let msb = cx.and(msb, ff);
            let byte = cx.sel(rep, msb, byte);
            let sh = cx.shl_c(byte, 8 * k);
            out = cx.or(out, sh);
        }
        return out;
    };
    let three = cx.c32(3);
    let s = cx.and(sel, three);
    for k in 0..4usize {
        let mut idx = cx.c32(t[3][k]);
        for (sv, row) in t.iter().enumerate().take(3) {
            let svc = cx.c32(sv as u32);
            let is = cx.cmp(Op::IEq, s, svc);
            let v = cx.c32(row[k]);
            idx = cx.sel(is, v, idx);
        }
        let byte = byte_at(cx, idx);
        let sh = cx.shl_c(byte, 8 * k as u32);
        out = cx.or(out, sh);
    }
    out
}

/// Lifts one integer-family instruction.
/// MOV / MOV32I's quad-lane mask (bit k: quad lane k, i.e. lane & 3, writes; 0xf: all): a
/// lane outside the mask keeps Rd. uam's manual cube `textureGrad` gathers each lane's result
/// with `MOV Rd, Rs, 1 << k`.
fn quad_lane_masked(cx: &mut Cx, i: &Instr, v: Value) -> Value {
    let mask = i.raw(Field::Mask).unwrap_or(0xf) as u32 & 0xf;
    if mask == 0xf {
        return v;
    }
    let old = cx.r(i, Field::Rd);
    if mask == 0 {
        return old;
    }
    let lane = cx.sys(crate::Sys::LaneId);
    let three = cx.c32(3);
    let q = cx.and(lane, three);
    let m = cx.c32(mask);
    let bit = cx.bin(Op::LShr, m, q);
    let one = cx.c32(1);
    let b = cx.and(bit, one);
    let z = cx.c32(0);
    let on = cx.cmp(Op::INe, b, z);
    cx.sel(on, v, old)
}

/// Operand A, bit-reversed under `.BREV` (SHR, BFE).
fn ra_brev(cx: &mut Cx, i: &Instr) -> Value {
    let a = cx.r(i, Field::Ra);
    if i.flag(Field::Brev) {
        cx.un(Op::Brev, a)
    } else {
        a
    }
}

/// The forms whose `.X` (extended, carry-chained) variant is not lifted, with the name an
/// error gives it.
const NO_X: [(Opcode, &str); 5] = [
    (Opcode::Lop, "LOP.X"),
    (Opcode::Lop32i, "LOP.X"),
    (Opcode::Lop3, "LOP3.X"),
    (Opcode::Shl, "SHL.X"),
    (Opcode::Shr, "SHR.X"),
];

/// Lifts one integer, logic, shift, bit-field, move, select, permute or predicate instruction.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    use Opcode as O;
    let op = i.opcode();
    if i.flag(Field::X) {
        if let Some(&(_, name)) = NO_X.iter().find(|(o, _)| *o == op) {
            return Err(cx.unsupported(i, name));
        }
    }
    match op {
        O::Mov => {
            let b = cx.src_b(i)?;
            let v = quad_lane_masked(cx, i, b);
            cx.set_rd(i, v);
        }
        O::Mov32i => {
            let v = i.imm32(Field::Imm).unwrap_or(0);
            let c = cx.c32(v);
            let v = quad_lane_masked(cx, i, c);
            cx.set_rd(i, v);
        }
        O::Sel => {
            let a = cx.r(i, Field::Ra);
            let b = cx.src_b(i)?;
            let r = cx.pick(i, (Field::Pc, Field::NotC), |_| a, |_| b);
            cx.set_rd(i, r);
        }
        O::Iadd | O::Iadd32i => {
            let a = cx.r(i, Field::Ra);
            let b = cx.src_b(i)?;
            let (mut na, nb, x) = (i.flag(Field::NegA), i.flag(Field::NegB), i.flag(Field::X));
            // IADD32I packs "negate A" (2) and ".PO", plus one (3), into one field.
            let po = i.raw(Field::Po).unwrap_or(0);
            let plus_one = op == O::Iadd32i && po == 3;
            if op == O::Iadd32i && po == 2 {
                na = true;
            }
            if !x && !plus_one && !i.flag(Field::Cc) && !i.flag(Field::Sat) {
                // Without carries or flags, `~a + b + 1` is `b - a` and `~a + ~b + 2` is
                // `-(a + b)`: one or two operations instead of three or four.
                let s = match (na, nb) {
                    (false, false) => cx.add(a, b),
                    (false, true) => cx.bin(Op::ISub, a, b),
                    (true, false) => cx.bin(Op::ISub, b, a),
                    (true, true) => {
                        let t = cx.add(a, b);
                        cx.un(Op::INeg, t)
                    }
                };
                cx.set_rd(i, s);
                return Ok(());
            }
            let aa = if na { cx.not(a) } else { a };
            let bb = if nb { cx.not(b) } else { b };
            let k = if x {
                cx.carry_u32()
            } else {
                cx.c32(na as u32 + nb as u32 + plus_one as u32)
            };
            let (s, carry) = add3_cc(cx, aa, bb, k, i.flag(Field::Cc));
            let s = if i.flag(Field::Sat) {
                if x || (na && nb) {
                    return Err(cx.unsupported(i, "saturating extended add"));
                }
                let sa = mul_ext(cx, a, true);
                let sb = mul_ext(cx, b, true);
                let sa = if na { cx.un(Op::INeg, sa) } else { sa };
                let sb = if nb { cx.un(Op::INeg, sb) } else { sb };
                let t = cx.add(sa, sb);
                let mx = cx.c64(0x7fff_ffff);
                let mn = cx.c64(0xffff_ffff_8000_0000);
                let t = cx.bin(Op::SMin, t, mx);
                let t = cx.bin(Op::SMax, t, mn);
                cx.lo(t)
            } else {
                s
            };
            if i.flag(Field::Cc) {
                set_cc_add(cx, aa, bb, s, carry);
            }
            cx.set_rd(i, s);
        }
        O::Iscadd | O::Iscadd32i => {
            let a = cx.r(i, Field::Ra);
            let b = cx.src_b(i)?;
            let sh = i.get(Field::Shift).unwrap_or(0) as u32 & 31;
            let (na, nb) = (i.flag(Field::NegA), i.flag(Field::NegB));
            let a2 = cx.shl_c(a, sh);
            let aa = if na { cx.not(a2) } else { a2 };
            let bb = if nb { cx.not(b) } else { b };
            let k = cx.c32(na as u32 + nb as u32);
            let s = add_cc(cx, i, aa, bb, k);
            cx.set_rd(i, s);
        }
        O::Iadd3 => {
            let a0 = cx.r(i, Field::Ra);
            let b0 = cx.src_b(i)?;
            let c0 = cx.r(i, Field::Rc);
            let half = |cx: &mut Cx, v: Value, f: Field| -> Result<Value> {
                use mods::Iadd3h as H;
                Ok(match cx.modifier::<H>(i, f)? {
                    Some(H::H0) => cx.bits(v, 0, 16),
                    Some(H::H1) => cx.bits(v, 16, 16),
                    Some(H::Default) | None => v,
                })
            };
            let a = half(cx, a0, Field::SelA)?;
            let b = half(cx, b0, Field::SelB)?;
            let c = half(cx, c0, Field::SelC)?;
            let neg =
                |cx: &mut Cx, v: Value, f: Field| if i.flag(f) { cx.un(Op::INeg, v) } else { v };
            let a = neg(cx, a, Field::NegA);
            let b = neg(cx, b, Field::NegB);
            let c = neg(cx, c, Field::NegC);
            let a64 = mul_ext(cx, a, false);
            let b64 = mul_ext(cx, b, false);
            let c64 = mul_ext(cx, c, false);
            let mut ab = cx.add(a64, b64);
            match cx.modifier::<mods::Iadd3sh>(i, Field::Mode)? {
                Some(mods::Iadd3sh::Default) | None => {}
                Some(mods::Iadd3sh::Rs) => {
                    // The 33-bit sum of the first two operands, shifted right by 16.
                    let k = cx.c64(16);
                    ab = cx.bin(Op::LShr, ab, k);
                }
                Some(mods::Iadd3sh::Ls) => {
                    let k = cx.c64(16);
                    ab = cx.bin(Op::Shl, ab, k);
                }
            }
            let mut s = cx.add(ab, c64);
            if i.flag(Field::X) {
                let cy = cx.carry_u32();
                let cy = mul_ext(cx, cy, false);
                s = cx.add(s, cy);
            }
            let r = cx.lo(s);
            if i.flag(Field::Cc) {
                let h = cx.hi(s);
                let z = cx.c32(0);
                let carry = cx.cmp(Op::INe, h, z);
                set_cc_add(cx, a, b, r, carry);
            }
            cx.set_rd(i, r);
        }
        O::Imul | O::Imul32i => {
            let a = cx.r(i, Field::Ra);
            let b = cx.src_b(i)?;
            let (sa, sb) = mul_signs(cx, i)?;
            let r = if i.flag(Field::Hi) {
                let p = mul64(cx, a, b, sa, sb);
                cx.hi(p)
            } else {
                cx.bin(Op::IMul, a, b)
            };
            set_rd_logic(cx, i, r);
        }
        O::Imad | O::Imad32i => {
            let a = cx.r(i, Field::Ra);
            let b = cx.src_b(i)?;
            let c = cx.src_c_or_rd(i, op == O::Imad32i)?;
            if i.flag(Field::Sat) {
                return Err(cx.unsupported(i, "IMAD.SAT"));
            }
            let (sa, sb) = mul_signs(cx, i)?;
            let p = mul64(cx, a, b, sa, sb);
            let p = if i.flag(Field::NegA) ^ i.flag(Field::NegB) {
                cx.un(Op::INeg, p)
            } else {
                p
            };
            let m = if i.flag(Field::Hi) {
                cx.hi(p)
            } else {
                cx.lo(p)
            };
            let c = if i.flag(Field::NegC) {
                cx.un(Op::INeg, c)
            } else {
                c
            };
            let k = carry_in(cx, i);
            let s = add_cc(cx, i, m, c, k);
            cx.set_rd(i, s);
        }
        O::Xmad => xmad(cx, i)?,
        O::Imnmx => {
            let a = cx.r(i, Field::Ra);
            let b = cx.src_b(i)?;
            let s = signed(cx, i)?;
            match cx.modifier::<mods::Xmode>(i, Field::XMode)? {
                Some(mods::Xmode::Default) | None => {}
                // 64-bit min/max in two steps: .XHI picks between the high words and records
                // in CC whether they were equal (Z) and whether A won (C); .XLO then picks the
                // low word of the same operand, or compares the low words (unsigned) on a tie.
                Some(mods::Xmode::Xhi) => {
                    let p = cx.p(i, Field::Pc, Field::NotC);
                    let lt = cx.cmp(if s { Op::SLt } else { Op::ULt }, a, b);
                    let gt = cx.cmp(if s { Op::SGt } else { Op::UGt }, a, b);
                    let eq = cx.cmp(Op::IEq, a, b);
                    let a_wins = cx.sel(p, lt, gt);
                    let r = cx.sel(a_wins, a, b);
                    if i.flag(Field::Cc) {
                        cx.set_flag(Flag::Zero, eq);
                        cx.set_flag(Flag::Carry, a_wins);
                    }
                    cx.set_rd(i, r);
                    return Ok(());
                }
                Some(mods::Xmode::Xlo) => {
                    let p = cx.p(i, Field::Pc, Field::NotC);
                    let z = cx.flag(Flag::Zero);
                    let c = cx.flag(Flag::Carry);
                    let mn = cx.bin(Op::UMin, a, b);
                    let mx = cx.bin(Op::UMax, a, b);
                    let tie = cx.sel(p, mn, mx);
                    let pick = cx.sel(c, a, b);
                    let r = cx.sel(z, tie, pick);
                    cx.set_rd(i, r);
                    return Ok(());
                }
                Some(m @ mods::Xmode::Xmed) => return Err(cx.unsupported(i, format!("IMNMX{m}"))),
            }
            let (min, max) = if s {
                (Op::SMin, Op::SMax)
            } else {
                (Op::UMin, Op::UMax)
            };
            let r = cx.pick(
                i,
                (Field::Pc, Field::NotC),
                |cx| cx.bin(min, a, b),
                |cx| cx.bin(max, a, b),
            );
            set_rd_logic(cx, i, r);
        }
        O::Isetp | O::Iset => {
            let a = cx.r(i, Field::Ra);
            let b = cx.src_b(i)?;
            let c = icmp_of(cx, i)?;
            let s = signed(cx, i)?;
            let r = if i.flag(Field::X) {
                icmp_x(cx, c, s, a, b)
            } else {
                icmp(cx, c, s, a, b)
            };
            set_compare(cx, i, op == O::Isetp, r, true)?;
        }
        O::Icmp => {
            let a = cx.r(i, Field::Ra);
            let b = cx.src_b(i)?;
            let c = cx.src_c(i)?;
            let z = cx.c32(0);
            let cmp = icmp_of(cx, i)?;
            let s = signed(cx, i)?;
            let t = icmp(cx, cmp, s, c, z);
            let r = cx.sel(t, a, b);
            cx.set_rd(i, r);
        }
        O::Lop | O::Lop32i => {
            let a = cx.r(i, Field::Ra);
            let b = cx.src_b(i)?;
            let a = if i.flag(Field::InvA) { cx.not(a) } else { a };
            let b = if i.flag(Field::InvB) { cx.not(b) } else { b };
            use mods::Lopop;
            let r = match cx.modifier::<Lopop>(i, Field::Mode)? {
                Some(Lopop::And) => cx.and(a, b),
                Some(Lopop::Or) => cx.or(a, b),
                Some(Lopop::Xor) => cx.bin(Op::Xor, a, b),
                Some(Lopop::PassB) => b,
                None => return Err(cx.unsupported(i, "LOP without an operation")),
            };
            lop_pred(cx, i, r)?;
            set_rd_logic(cx, i, r);
        }
        O::Lop3 => {
            let a = cx.r(i, Field::Ra);
            let b = cx.src_b(i)?;
            let c = cx.r(i, Field::Rc);
            let lut = i.get(Field::Lut).unwrap_or(0) as u8;
            let r = lut3(cx, lut, a, b, c);
            lop_pred(cx, i, r)?;
            set_rd_logic(cx, i, r);
        }
        O::Shl => {
            let a = cx.r(i, Field::Ra);
            let s = cx.src_b(i)?;
            let (sc, big) = shift_count(cx, s, i.flag(Field::W));
            let mut r = cx.bin(Op::Shl, a, sc);
            if let Some(big) = big {
                let z = cx.c32(0);
                r = cx.sel(big, z, r);
            }
            set_rd_logic(cx, i, r);
        }
        O::Shr => {
            let a = ra_brev(cx, i);
            let s = cx.src_b(i)?;
            let (sc, big) = shift_count(cx, s, i.flag(Field::W));
            let sg = signed(cx, i)?;
            let mut r = cx.bin(if sg { Op::AShr } else { Op::LShr }, a, sc);
            if let Some(big) = big {
                let fill = if sg {
                    let k = cx.c32(31);
                    cx.bin(Op::AShr, a, k)
                } else {
                    cx.c32(0)
                };
                r = cx.sel(big, fill, r);
            }
            set_rd_logic(cx, i, r);
        }
        O::Shf => {
            let left = i.form_name().starts_with("SHF_L");
            use mods::{Shfhi, Shfty};
            let hi_out = match cx.modifier::<Shfhi>(i, Field::Hi)? {
                Some(Shfhi::Default) | None => false,
                Some(Shfhi::Hi) if !left => true,
                Some(m) => return Err(cx.unsupported(i, format!("SHF with {m}"))),
            };
            let lo = cx.r(i, Field::Ra);
            let s = cx.src_b(i)?;
            let hi = cx.r(i, Field::Rc);
            let mode = cx.modifier::<Shfty>(i, Field::Mode)?;
            let wide64 = matches!(mode, Some(Shfty::U64 | Shfty::S64));
            let max = if wide64 { 64 } else { 32 };
            let s = if i.flag(Field::W) {
                let m = cx.c32(max - 1);
                cx.and(s, m)
            } else {
                let m = cx.c32(max);
                cx.bin(Op::UMin, s, m)
            };
            let w = cx.pack(lo, hi);
            let k63 = cx.c32(63);
            let sc = cx.bin(Op::UMin, s, k63);
            let sc64 = cx.emit(Op::UConvert, Type::U64, &[sc]);
            let k64 = cx.c32(64);
            let full = cx.cmp(Op::IEq, s, k64);
            let r = if left {
                let t = cx.bin(Op::Shl, w, sc64);
                let h = cx.hi(t);
                let z = cx.c32(0);
                cx.sel(full, z, h)
            } else {
                let arith = mode == Some(Shfty::S64);
                let t = cx.bin(if arith { Op::AShr } else { Op::LShr }, w, sc64);
                let l = if hi_out { cx.hi(t) } else { cx.lo(t) };
                let fill = if arith {
                    let k = cx.c32(31);
                    cx.bin(Op::AShr, hi, k)
                } else {
                    cx.c32(0)
                };
                // A shift by 64 leaves only sign fill in both halves.
                cx.sel(full, fill, l)
            };
            cx.set_rd(i, r);
        }
        O::Bfe => {
            let a = ra_brev(cx, i);
            let b = cx.src_b(i)?;
            let pos = cx.bits(b, 0, 8);
            let len = cx.bits(b, 8, 8);
            let sg = signed(cx, i)?;
            let k31 = cx.c32(31);
            let pc = cx.bin(Op::UMin, pos, k31);
            let pos_big = cx.cmp(Op::UGt, pos, k31);
            let shifted = cx.bin(if sg { Op::AShr } else { Op::LShr }, a, pc);
            let fill = if sg {
                cx.bin(Op::AShr, a, k31)
            } else {
                cx.c32(0)
            };
            let shifted = cx.sel(pos_big, fill, shifted);
            let k32 = cx.c32(32);
            let lc = cx.bin(Op::UMin, len, k32);
            let z = cx.c32(0);
            let len0 = cx.cmp(Op::IEq, lc, z);
            let lfull = cx.cmp(Op::IEq, lc, k32);
            let one = cx.c32(1);
            let lc1 = cx.bin(Op::UMax, lc, one);
            let lc1 = cx.bin(Op::UMin, lc1, k31);
            let ext = cx.emit(
                if sg { Op::BfeS } else { Op::BfeU },
                Type::U32,
                &[shifted, z, lc1],
            );
            let r = cx.sel(lfull, shifted, ext);
            let r = cx.sel(len0, z, r);
            set_rd_logic(cx, i, r);
        }
        O::Bfi => {
            let a = cx.r(i, Field::Ra);
            let b = cx.src_b(i)?;
            let c = cx.src_c(i)?;
            let pos = cx.bits(b, 0, 8);
            let len = cx.bits(b, 8, 8);
            let k32 = cx.c32(32);
            let p = cx.bin(Op::UMin, pos, k32);
            let room = cx.bin(Op::ISub, k32, p);
            let l = cx.bin(Op::UMin, len, room);
            let z = cx.c32(0);
            let l0 = cx.cmp(Op::IEq, l, z);
            let k31 = cx.c32(31);
            let p2 = cx.bin(Op::UMin, p, k31);
            let ins = cx.emit(Op::Bfi, Type::U32, &[c, a, p2, l]);
            let r = cx.sel(l0, c, ins);
            set_rd_logic(cx, i, r);
        }
        O::Flo => {
            let b = cx.src_b(i)?;
            let r = flo(
                cx,
                b,
                signed(cx, i)?,
                i.flag(Field::InvB),
                i.flag(Field::Sh),
            );
            cx.set_rd(i, r);
        }
        O::Popc => {
            let b = cx.src_b(i)?;
            let b = if i.flag(Field::InvB) { cx.not(b) } else { b };
            let r = cx.un(Op::Popc, b);
            cx.set_rd(i, r);
        }
        O::Lea => {
            let a = cx.r(i, Field::Ra);
            let b = cx.src_b(i)?;
            let sh = i.get(Field::Shift).unwrap_or(0) as u32 & 31;
            let base = if i.form_name().starts_with("LEA_HI") {
                let c = cx.r(i, Field::Rc);
                let w = cx.pack(a, c);
                let w = if i.flag(Field::NegA) {
                    cx.un(Op::INeg, w)
                } else {
                    w
                };
                let k = cx.c64(sh as u64);
                let t = cx.bin(Op::Shl, w, k);
                cx.hi(t)
            } else {
                let a = if i.flag(Field::NegA) {
                    cx.un(Op::INeg, a)
                } else {
                    a
                };
                cx.shl_c(a, sh)
            };
            let k = carry_in(cx, i);
            let (s, carry) = add3_carry(cx, base, b, k);
            if i.flag(Field::Cc) {
                set_cc_add(cx, base, b, s, carry);
            }
            // The predicate output is the carry out of the addition.
            cx.set_p(i, Field::Pd, carry);
            cx.set_rd(i, s);
        }
        O::Prmt => {
            let a = cx.r(i, Field::Ra);
            let sel = cx.src_b(i)?;
            let c = cx.src_c(i)?;
            let r = prmt(cx, i, a, sel, c)?;
            cx.set_rd(i, r);
        }
        O::Psetp | O::Pset => {
            let pa = cx.p(i, Field::Pa, Field::NotA);
            let pb = cx.p(i, Field::Pb, Field::NotB);
            let t = bop(cx, i, Field::Bop2, pa, pb)?;
            set_compare(cx, i, op == O::Psetp, t, false)?;
        }
        O::Csetp | O::Cset => {
            let t = cc_test(cx, i)?;
            set_compare(cx, i, op == O::Csetp, t, false)?;
        }
        O::P2r => {
            if !predicate_register_byte_0(cx, i)? {
                return Err(cx.unsupported(i, "P2R of CC or a byte other than 0"));
            }
            let a = cx.r(i, Field::Ra);
            let mask = cx.src_b(i)?;
            let mut bits = cx.c32(0);
            for k in 0..7u8 {
                let p = cx.pred(k, false);
                let one = cx.c32(1 << k);
                let z = cx.c32(0);
                let v = cx.sel(p, one, z);
                bits = cx.or(bits, v);
            }
            let nm = cx.not(mask);
            let keep = cx.and(a, nm);
            let put = cx.and(bits, mask);
            let r = cx.or(keep, put);
            cx.set_rd(i, r);
        }
        O::R2p => {
            if !predicate_register_byte_0(cx, i)? {
                return Err(cx.unsupported(i, "R2P to CC or from a byte other than 0"));
            }
            let a = cx.r(i, Field::Ra);
            let mask = cx.src_b(i)?;
            for k in 0..7u8 {
                let bit = cx.bits(a, k as u32, 1);
                let m = cx.bits(mask, k as u32, 1);
                let z = cx.c32(0);
                let set = cx.cmp(Op::INe, bit, z);
                let en = cx.cmp(Op::INe, m, z);
                let old = cx.pred(k, false);
                let v = cx.sel(en, set, old);
                cx.set_pred(k, v);
            }
        }
        _ => return Err(cx.unsupported(i, "no semantics for this instruction")),
    }
    Ok(())
}

/// Whether P2R/R2P move the predicate register (`mods::P2rm::Pr`, not CC) through byte 0 of
/// the register (`SelB`, `mods::Bsel`).
fn predicate_register_byte_0(cx: &Cx, i: &Instr) -> Result<bool> {
    use mods::{Bsel, P2rm};
    Ok(cx.modifier::<P2rm>(i, Field::Mode)? == Some(P2rm::Pr)
        && matches!(
            cx.modifier::<Bsel>(i, Field::SelB)?,
            Some(Bsel::Default) | None
        ))
}

/// (A signed, B signed) of XMAD: `Signed` is `mods::Xmadty` (register and constant forms),
/// `mods::Xmadtyu` (XMAD_I) or `mods::Xmadtys` (XMAD_IS); nothing prints `.U16.U16`.
fn xmad_signs(cx: &Cx, i: &Instr) -> Result<(bool, bool)> {
    use mods::{Xmadty as T, Xmadtys as S, Xmadtyu as U};
    if let Some(t) = i.modifier_as::<U>(Field::Signed) {
        return Ok((t == U::S16U16, false));
    }
    if let Some(t) = i.modifier_as::<S>(Field::Signed) {
        return Ok((t == S::S16S16, true));
    }
    Ok(match cx.modifier::<T>(i, Field::Signed)? {
        Some(T::S16U16) => (true, false),
        Some(T::U16S16) => (false, true),
        Some(T::S16S16) => (true, true),
        Some(T::Default) | None => (false, false),
    })
}

/// XMAD's `Mode`: `mods::Xmadmode`, or `mods::Xmadmode2` (the constant-bank forms, without
/// `.CBCC`) as the same variant of it.
fn xmad_mode(cx: &Cx, i: &Instr) -> Result<mods::Xmadmode> {
    use mods::{Xmadmode as M, Xmadmode2 as M2};
    Ok(match i.modifier_as::<M2>(Field::Mode) {
        Some(M2::Default) => M::Default,
        Some(M2::Clo) => M::Clo,
        Some(M2::Chi) => M::Chi,
        Some(M2::Csfu) => M::Csfu,
        None => cx.modifier::<M>(i, Field::Mode)?.unwrap_or(M::Default),
    })
}

/// Whether XMAD's `SelA`/`SelB` (`mods::Hsel`) picks the high half.
fn xmad_high(cx: &Cx, i: &Instr, f: Field) -> Result<bool> {
    Ok(cx.modifier::<mods::Hsel>(i, f)? == Some(mods::Hsel::H1))
}

/// The first instructions of Maxwell's 32-bit multiply-add idioms, as their results and
/// operand values (block, then result, A, B and, for the low product, C):
///
/// ```text
/// XMAD t, a, b, c                t = a.lo · b.lo + c
/// XMAD.MRG u, a, b.H1, RZ        u = (a.lo · b.hi mod 2^16) | b.lo << 16
/// XMAD.PSL.CBCC d, a.H1, u.H1, t d = (a.hi · u.hi) << 16 + t + u << 16
/// XMAD.PSL d, a.H1, b, t         d = (a.hi · b.lo) << 16 + t
/// ```
///
/// With `a = ah·2^16 + al` and `b = bh·2^16 + bl`: `u.hi = bl` and `u << 16 = al·bh << 16`
/// (mod 2^32), so the three-instruction form is `d = al·bl + (ah·bl + al·bh)·2^16 + c =
/// a · b + c` and the two-instruction one (a 16-bit factor) `d = (ah·2^16 + al)·bl + c =
/// a · b.lo + c`, mod 2^32. The last instruction is lifted as that `IMul` (and `IAdd`)
/// when its operands are the values the first ones computed from the same `a` and `b` (IR
/// values: a register written in between, a predicated instruction or a new block gives
/// other values, and the instructions are still lifted one by one). The first ones are
/// lifted as they are; `dce` removes them when nothing else reads them.
#[derive(Clone, Copy, Default)]
pub(crate) struct XmadSeen {
    /// `t = a.lo · b.lo + c`.
    lo: Option<(BlockId, [Value; 4])>,
    /// `u`, the merge.
    mrg: Option<(BlockId, [Value; 3])>,
}

/// Which instruction of the multiply idiom ([`XmadSeen`]) an `XMAD` is, if any.
#[derive(Clone, Copy, PartialEq, Eq)]
enum XmadPart {
    Lo,
    Mrg,
    /// `.PSL.CBCC`, after `Lo` and `Mrg`.
    PslCbcc,
    /// `.PSL`, after `Lo`.
    Psl,
    Other,
}

/// The last instruction of a multiply idiom ([`XmadSeen`]) as `a · b + c` (`a · b.lo + c`),
/// when its operands `a`, `b` and `c` are what the idiom's first instructions computed.
fn xmad_idiom(cx: &mut Cx, part: XmadPart, a: Value, b: Value, c: Value) -> Option<Value> {
    let here = cx.b;
    let (lb, [t, la, lo_b, lo_c]) = cx.xmad.lo?;
    if lb != here || la != a || t != c {
        return None;
    }
    let p = match part {
        XmadPart::PslCbcc => {
            let (mb, [u, ma, mrg_b]) = cx.xmad.mrg?;
            if mb != here || u != b || ma != a || mrg_b != lo_b {
                return None;
            }
            cx.bin(Op::IMul, a, lo_b)
        }
        XmadPart::Psl if b == lo_b => {
            let bl = cx.bits(lo_b, 0, 16);
            cx.bin(Op::IMul, a, bl)
        }
        _ => return None,
    };
    Some(cx.add(p, lo_c))
}

fn xmad(cx: &mut Cx, i: &Instr) -> Result<()> {
    let a_full = cx.r(i, Field::Ra);
    let variant = Cx::variant(i);
    let b_full = match variant {
        "I" => {
            let v = i.get(Field::Imm).unwrap_or(0) as u32 & 0xffff;
            cx.c32(v)
        }
        _ => cx.src_b(i)?,
    };
    let c = cx.src_c(i)?;
    let (sa, sb) = xmad_signs(cx, i)?;
    let (a_high, b_high) = (
        xmad_high(cx, i, Field::SelA)?,
        xmad_high(cx, i, Field::SelB)?,
    );
    let mode = xmad_mode(cx, i)?;
    let part = {
        use mods::Xmadmode as M;
        let plain = !sa && !sb && !i.flag(Field::X) && !i.flag(Field::Cc);
        let (psl, mrg) = (i.flag(Field::Psl), i.flag(Field::Mrg));
        let c_zero = cx.f.const_of(c) == Some(0);
        match (a_high, b_high, mode, psl, mrg) {
            _ if !plain => XmadPart::Other,
            (false, false, M::Default, false, false) => XmadPart::Lo,
            (false, true, M::Default, false, true) if c_zero => XmadPart::Mrg,
            (true, true, M::Cbcc, true, false) => XmadPart::PslCbcc,
            (true, false, M::Default, true, false) => XmadPart::Psl,
            _ => XmadPart::Other,
        }
    };
    if let Some(r) = xmad_idiom(cx, part, a_full, b_full, c) {
        cx.xmad = XmadSeen::default();
        cx.set_rd(i, r);
        return Ok(());
    }
    let half = |cx: &mut Cx, v: Value, high: bool, s: bool| -> Value {
        let off = if high { 16 } else { 0 };
        if s {
            cx.sbits(v, off, 16)
        } else {
            cx.bits(v, off, 16)
        }
    };
    let a = half(cx, a_full, a_high, sa);
    let b = half(cx, b_full, b_high, sb);
    let mut p = cx.bin(Op::IMul, a, b);
    if i.flag(Field::Psl) {
        p = cx.shl_c(p, 16);
    }
    let c_in = c;
    use mods::Xmadmode as M;
    let c = match mode {
        M::Default => c,
        M::Clo => cx.bits(c, 0, 16),
        M::Chi => cx.bits(c, 16, 16),
        M::Cbcc => {
            let t = cx.shl_c(b_full, 16);
            cx.add(c, t)
        }
        // Inferred from ptxas's mul.hi.s32 sequence (it matches every corpus input, but no
        // documentation confirms it): C is corrected for the unsigned 33-bit middle sum that
        // IADD3.RS shifts, subtracting 2^16 for each negative signed 16-bit factor whose
        // partner half (the other half of the other operand) is non-zero.
        M::Csfu => {
            let z = cx.c32(0);
            let an0 = cx.cmp(Op::SLt, a, z);
            let bn0 = cx.cmp(Op::SLt, b, z);
            let a_other = cx.bits(a_full, if a_high { 0 } else { 16 }, 16);
            let b_other = cx.bits(b_full, if b_high { 0 } else { 16 }, 16);
            let ao = cx.cmp(Op::INe, a_other, z);
            let bo = cx.cmp(Op::INe, b_other, z);
            let an = cx.and(an0, bo);
            let bn = cx.and(bn0, ao);
            let k = cx.c32(0x1_0000);
            let ka = cx.sel(an, k, z);
            let kb = cx.sel(bn, k, z);
            let t = cx.add(ka, kb);
            cx.bin(Op::ISub, c, t)
        }
    };
    let k = carry_in(cx, i);
    let s = add_cc(cx, i, p, c, k);
    let r = if i.flag(Field::Mrg) {
        let lo = cx.bits(s, 0, 16);
        let hi = cx.shl_c(b_full, 16);
        cx.or(lo, hi)
    } else {
        s
    };
    match part {
        XmadPart::Lo => cx.xmad.lo = Some((cx.b, [r, a_full, b_full, c_in])),
        XmadPart::Mrg => cx.xmad.mrg = Some((cx.b, [r, a_full, b_full])),
        _ => {}
    }
    cx.set_rd(i, r);
    Ok(())
}

/// Evaluates a condition-code test (`CSETP`/`CSET`) on the flags.
fn cc_test(cx: &mut Cx, i: &Instr) -> Result<Value> {
    let t = cx.modifier::<Ccn>(i, Field::CcTest)?.unwrap_or(Ccn::T);
    flag_test(cx, t).ok_or_else(|| cx.unsupported(i, format!("condition-code test {t}")))
}

/// A condition-code test (`.LT`, `.NEU`, `.HS`, …: `mods::Ccn`) on the Z, S, C, O
/// flags; `None` for the CSM tests. The float-style names are for flags set by float compares
/// (S and Z both set mean unordered): `.NUM` = !(S·Z), `.NAN` = S·Z, and the unordered
/// variants (`U`) are true for unordered results too. For integer flags S·Z never holds, so
/// each `U` test equals its ordered one. (Flag formulas: yuzu's shader recompiler,
/// `GetFlowTest`.)
pub fn flag_test(cx: &mut Cx, t: Ccn) -> Option<Value> {
    let z = cx.flag(Flag::Zero);
    let s = cx.flag(Flag::Sign);
    let c = cx.flag(Flag::Carry);
    let o = cx.flag(Flag::Overflow);
    let s_ne_o = cx.bin(Op::Xor, s, o);
    let nz = cx.not(z);
    let ns = cx.not(s);
    Some(match t {
        Ccn::F => cx.cbool(false),
        Ccn::T => cx.cbool(true),
        Ccn::Lt | Ccn::Ltu => s_ne_o,
        Ccn::Eq | Ccn::Equ => z,
        Ccn::Le | Ccn::Leu => cx.or(z, s_ne_o),
        Ccn::Gt => {
            let t = cx.or(z, s_ne_o);
            cx.not(t)
        }
        Ccn::Gtu => {
            let zo = cx.or(z, o);
            cx.bin(Op::Xor, ns, zo)
        }
        Ccn::Ne => nz,
        Ccn::Neu => cx.or(s, nz),
        Ccn::Ge => cx.not(s_ne_o),
        Ccn::Geu => {
            let t = cx.or(ns, z);
            cx.bin(Op::Xor, t, o)
        }
        Ccn::Num => cx.or(ns, nz),
        Ccn::Nan => cx.and(s, z),
        Ccn::Lo => cx.not(c),
        Ccn::Ls => {
            let nc = cx.not(c);
            cx.or(nc, z)
        }
        Ccn::Hi => cx.and(c, nz),
        Ccn::Hs => c,
        Ccn::Sff => ns,
        Ccn::Sft => s,
        Ccn::Off => cx.not(o),
        Ccn::Oft => o,
        Ccn::Rle => cx.or(s, z),
        Ccn::Rgt => cx.and(ns, nz),
        Ccn::CsmTa | Ccn::CsmTr | Ccn::CsmMx | Ccn::FcsmTa | Ccn::FcsmTr | Ccn::FcsmMx => {
            return None
        }
    })
}
