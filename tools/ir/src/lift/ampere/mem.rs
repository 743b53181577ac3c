//! Ampere memory instructions: LDG/STG, LD/ST (generic, treated as global as for Maxwell),
//! LDL/STL, LDS/STS, LDC, ATOMG/ATOM/RED, ATOMS, LDGSTS, and the cache, barrier and
//! space-query instructions (CCTL, CCTLL, MEMBAR, ERRBAR, QSPC, LDGDEPBAR). The accesses
//! themselves are Maxwell's ([`crate::lift::mem`]); what differs is the address operand,
//! which the form's name and fields tell: `[R4.64+0x30]` (a 64-bit register pair, `.E`),
//! `[R2]` (bit `E` says whether the register is a pair), `[R6.U32+UR4]` (a 32-bit register,
//! zero-extended), `[R2+UR4+0x10]` (a uniform register added; a pair for a 64-bit address),
//! `[R3.X4]` (the shared forms' scaled base register), `desc[UR4][...]` (a memory
//! descriptor: not translated).
//!
//! `ATOMS.CAST.SPIN` (and ATOM's) is a compare-and-store that reports whether it stored:
//! ptxas's shared-memory float-add loop retries until the destination reads 1 (corpus
//! `atomics_shared`: `ATOMS.CAST.SPIN R7, [0x28], R6, R7; ISETP.EQ.U32.AND P0, PT, R7, 0x1`),
//! so it lifts to a compare-and-swap whose result is `old == compare` as 0 or 1 (a pair's
//! high word 0). What the back ends have no atomic for (64-bit shared RMW, the f64 and
//! f16x2 adds) is a compare-and-swap loop ([`atomic_by_cas`]). A generic ATOM's predicate
//! destination is whether the address is global (outside the shared and local windows, as
//! QSPC answers); the atomic then runs only there.

use super::super::abi::{LOCAL_WINDOW, SHARED_WINDOW};
use super::super::half::{f2h_bits, h2f};
use super::super::mem::{
    atom_op_named, atom_result, atomic_by_cas, atomic_cas, atomic_rmw, load_const_regs, load_regs,
    note_local_extent, store_regs, AtomType, ConstBank, Shape,
};
use super::super::{Cx, Result};
use crate::ir::{AtomOp, Op, Round, Space, Type, Value, Width};
use dmsh_isa::ampere::mods::{
    Atomgop, Atomop, Atomscas, Atomsty, Atomty, Casty, Ldcmode, Ldcsz, Ldgpred, Ldgstssz, Ldssz,
    Membarsc, Memsz, Qspcsp, Redop,
};
use dmsh_isa::ampere::{Instr, Opcode};
use dmsh_isa::Field;

/// Lifts one memory instruction.
pub fn lift(cx: &mut Cx, i: &Instr) -> Result<()> {
    use Opcode as O;
    match i.opcode() {
        // Generic accesses are global, as in the Maxwell lifter: CUDA code in the corpus
        // reaches only global memory through them.
        O::Ldg | O::Ld => load(cx, i, Space::Global),
        O::Stg | O::St => store(cx, i, Space::Global),
        O::Ldl => load(cx, i, Space::Local),
        O::Stl => store(cx, i, Space::Local),
        O::Lds => load(cx, i, Space::Shared),
        O::Sts => store(cx, i, Space::Shared),
        O::Ldc => ldc(cx, i),
        O::Atomg | O::Atom | O::Red => atomic(cx, i, Space::Global),
        O::Atoms => atomic(cx, i, Space::Shared),
        // Cache control changes no value; ERRBAR waits for earlier errors to be reported.
        O::Cctl | O::Cctll | O::Errbar => Ok(()),
        O::Membar => {
            let dev = cx.modifier::<Membarsc>(i, Field::Level)? != Some(Membarsc::Cta);
            cx.emit(Op::MemBarrier(dev), Type::Void, &[]);
            Ok(())
        }
        O::Qspc => qspc(cx, i),
        O::Ldgsts => ldgsts(cx, i),
        // LDGSTS copies synchronously here: nothing is left for its barrier to wait for.
        O::Ldgdepbar => Ok(()),
        _ => Err(cx.unsupported(i, "no semantics for this instruction")),
    }
}

/// The part of the form name after the mnemonic (`E`, `U`, `UZ`, `U_X4`, ``).
fn suffix(i: &Instr) -> &'static str {
    let n = i.form_name();
    match n.split_once('_') {
        Some((_, s)) => s,
        None => "",
    }
}

/// Whether bit `E` (a flag or `mods::Meme`) says the address is 64 bits.
fn e_bit(i: &Instr) -> bool {
    i.raw(Field::E) == Some(1)
}

/// The address of a memory operand: U64 for a global (or generic) one, U32 otherwise.
///
/// A memory descriptor (`desc[URn][Ra.64+imm]`, the `_D` / `_UD` forms) does not move the
/// address: on sm_86 ptxas puts an L2 cache policy there (PTX `createpolicy` and the
/// `.L2::cache_hint` operand of ld / st / atom / red / cp.async), a hint the translation drops
/// like the other cache operators (`x_forms_desc`).
pub(super) fn address(cx: &mut Cx, i: &Instr, space: Space) -> Result<Value> {
    let sfx = suffix(i);
    let imm = i.get(Field::Imm).unwrap_or(0);
    let ra = i.reg(Field::Ra).map_or(255, |r| r.0);
    let ura = i.ureg(Field::URa).map(|r| r.0).filter(|&u| u < 63);
    if space != Space::Global {
        let scale = match sfx.rsplit('_').next() {
            Some("X4") => 4,
            Some("X8") => 8,
            Some("X16") => 16,
            _ => 1,
        };
        let mut a = cx.reg(ra);
        if scale != 1 {
            let k = cx.c32(scale);
            a = cx.bin(Op::IMul, a, k);
        }
        if let Some(u) = ura {
            let uv = cx.ureg(u);
            a = cx.add(a, uv);
        }
        let k = cx.c32(imm as u32);
        return Ok(cx.add(a, k));
    }
    let e = e_bit(i);
    // The register as printed: `.64` (forms _E, _U, _RU: bit E must say so; clear prints
    // `.???0`), `.U32` (_IU, _U32, _RU32), or plain (a pair when E is set).
    let pair = match sfx {
        "E" | "U" | "RU" => {
            if !e {
                return Err(cx.unsupported(i, "address size .???0"));
            }
            true
        }
        "IU" | "U32" | "RU32" => false,
        _ => e,
    };
    let base = if pair {
        cx.reg64(ra)
    } else {
        let r = cx.reg(ra);
        cx.emit(Op::UConvert, Type::U64, &[r])
    };
    let mut a = base;
    if let Some(u) = ura {
        let uv = if e {
            cx.ureg64(u)
        } else {
            let r = cx.ureg(u);
            cx.emit(Op::UConvert, Type::U64, &[r])
        };
        a = cx.add(a, uv);
    }
    let k = cx.c64(imm as u64);
    Ok(cx.add(a, k))
}

/// The access shape of a load or store: `mods::Memsz` (the global, generic, local forms and
/// STS), `mods::Ldssz` (LDS) or `mods::Ldcsz` (LDC).
fn shape(cx: &Cx, i: &Instr) -> Result<Shape> {
    use Shape::{One, Words};
    let f = Field::Size;
    let bad = |m: &dyn std::fmt::Display| Err(cx.unsupported(i, format!("access size {m}")));
    Ok(match i.opcode() {
        Opcode::Lds => match cx.modifier::<Ldssz>(i, f)? {
            Some(Ldssz::U8) => One(Width::U8),
            Some(Ldssz::S8) => One(Width::S8),
            Some(Ldssz::U16) => One(Width::U16),
            Some(Ldssz::S16) => One(Width::S16),
            Some(Ldssz::Default) | None => One(Width::B32),
            Some(Ldssz::N64) => Words(2),
            Some(Ldssz::N128) => Words(4),
            Some(m @ Ldssz::N7) => return bad(&m),
        },
        Opcode::Ldc => match cx.modifier::<Ldcsz>(i, f)? {
            Some(Ldcsz::U8) => One(Width::U8),
            Some(Ldcsz::S8) => One(Width::S8),
            Some(Ldcsz::U16) => One(Width::U16),
            Some(Ldcsz::S16) => One(Width::S16),
            Some(Ldcsz::Default) | None => One(Width::B32),
            Some(Ldcsz::N64) => Words(2),
            Some(m @ (Ldcsz::Invalid6 | Ldcsz::Invalid7)) => return bad(&m),
        },
        _ => match cx.modifier::<Memsz>(i, f)? {
            Some(Memsz::U8) => One(Width::U8),
            Some(Memsz::S8) => One(Width::S8),
            Some(Memsz::U16) => One(Width::U16),
            Some(Memsz::S16) => One(Width::S16),
            Some(Memsz::Default) | None => One(Width::B32),
            Some(Memsz::N64) => Words(2),
            Some(Memsz::N128) => Words(4),
            Some(m @ Memsz::Invalid7) => return bad(&m),
        },
    })
}

/// The shape and address of a load or store, its local extent noted. LDG's predicate
/// operands (a destination at 81, a source at 64) must be absent (`PT`, none).
fn access(cx: &mut Cx, i: &Instr, space: Space) -> Result<(Shape, Value)> {
    if i.pred(Field::Pd).is_some_and(|p| !p.is_pt()) {
        return Err(cx.unsupported(i, "load with a predicate destination"));
    }
    if !matches!(
        cx.modifier::<Ldgpred>(i, Field::PredIn)?,
        Some(Ldgpred::Default) | None
    ) {
        return Err(cx.unsupported(i, "load with a predicate source"));
    }
    let sh = shape(cx, i)?;
    if space == Space::Local {
        note_local_extent(cx, i.get(Field::Imm).unwrap_or(0), sh);
    }
    let a = address(cx, i, space)?;
    Ok((sh, a))
}

fn load(cx: &mut Cx, i: &Instr, space: Space) -> Result<()> {
    let (sh, a) = access(cx, i, space)?;
    let rd = cx.rf(i, Field::Rd);
    load_regs(cx, space, sh, a, rd);
    Ok(())
}

fn store(cx: &mut Cx, i: &Instr, space: Space) -> Result<()> {
    let (sh, a) = access(cx, i, space)?;
    // The data register: Rb, or Rc for ST_I (its Rb bits hold the 32-bit offset).
    let f = if i.has(Field::Rb) {
        Field::Rb
    } else {
        Field::Rc
    };
    let rs = cx.rf(i, f);
    store_regs(cx, space, sh, a, rs);
    Ok(())
}

/// LDC: `c[bank][Ra + offset]`, or the bindless `cx[URa][Rc + offset]` (`LDC_U`, `LDC_UZ`:
/// the handle in a uniform pair); the indexing modes other than the plain one are not
/// translated.
fn ldc(cx: &mut Cx, i: &Instr) -> Result<()> {
    match cx.modifier::<Ldcmode>(i, Field::Mode)? {
        Some(Ldcmode::Default) | None => {}
        Some(m) => return Err(cx.unsupported(i, format!("LDC addressing mode {m}"))),
    }
    let imm = i.get(Field::Imm).unwrap_or(0) as u32;
    let (bank, index) = match i.ureg(Field::URa) {
        Some(u) => (ConstBank::Bindless(u.0), Field::Rc),
        None => (
            ConstBank::Bound(i.get(Field::CbufBank).unwrap_or(0) as u8),
            Field::Ra,
        ),
    };
    let r = if i.has(index) {
        cx.r(i, index)
    } else {
        cx.c32(0)
    };
    let k = cx.c32(imm);
    let off = cx.add(r, k);
    let rd = cx.rf(i, Field::Rd);
    let sh = shape(cx, i)?;
    load_const_regs(cx, bank, off, sh, rd);
    Ok(())
}

/// What a compare-and-swap form returns.
#[derive(Clone, Copy, PartialEq)]
enum Cas {
    /// The old value (`.CAS`).
    Old,
    /// Whether it stored, 0 or 1 (`.CAST.SPIN`).
    Stored,
}

/// The compare-and-swap kind and width of the CAS forms (ATOMG_CAS, ATOM_CAS, ATOMS_CAS).
fn cas_kind(cx: &Cx, i: &Instr) -> Result<(Cas, Width)> {
    let kind = match cx.modifier::<Atomscas>(i, Field::Op)? {
        Some(Atomscas::Cas) | None => Cas::Old,
        Some(Atomscas::CastSpin) => Cas::Stored,
        Some(m @ Atomscas::Cast) => return Err(cx.unsupported(i, format!("compare kind {m}"))),
    };
    let wide = if let Some(s) = i.modifier_as::<Atomsty>(Field::Size) {
        match s {
            Atomsty::Default | Atomsty::S32 => false,
            Atomsty::N64 => true,
            m @ Atomsty::Invalid3 => return Err(cx.unsupported(i, format!("CAS size {m}"))),
        }
    } else {
        match cx.modifier::<Casty>(i, Field::Size)? {
            Some(Casty::Default | Casty::S32) | None => false,
            Some(Casty::N64) => true,
            Some(m) => return Err(cx.unsupported(i, format!("CAS size {m}"))),
        }
    };
    Ok((kind, if wide { Width::B64 } else { Width::B32 }))
}

/// The element type of a non-CAS atomic: `mods::Atomty` (global, generic, RED) or
/// `mods::Atomsty` (shared).
fn atom_type(cx: &Cx, i: &Instr) -> Result<AtomType> {
    let t = |width, signed, float| AtomType {
        width,
        signed,
        float,
    };
    if let Some(s) = i.modifier_as::<Atomsty>(Field::Size) {
        return match s {
            Atomsty::Default => Ok(t(Width::B32, false, false)),
            Atomsty::S32 => Ok(t(Width::B32, true, false)),
            Atomsty::N64 => Ok(t(Width::B64, false, false)),
            m @ Atomsty::Invalid3 => Err(cx.unsupported(i, format!("atomic size {m}"))),
        };
    }
    match cx.modifier::<Atomty>(i, Field::Size)? {
        Some(Atomty::Default) | None => Ok(t(Width::B32, false, false)),
        Some(Atomty::S32) => Ok(t(Width::B32, true, false)),
        Some(Atomty::N64) => Ok(t(Width::B64, false, false)),
        Some(Atomty::S64) => Ok(t(Width::B64, true, false)),
        Some(Atomty::F32FtzRn) => Ok(t(Width::B32, false, true)),
        Some(Atomty::F64Rn) => Ok(t(Width::B64, false, true)),
        Some(m) => Err(cx.unsupported(i, format!("atomic size {m}"))),
    }
}

/// The printed name of a non-CAS atomic's operation (`.ADD`, ...): `mods::Atomgop` (ATOMG),
/// `mods::Atomop` (ATOM, ATOMS) or `mods::Redop` (RED).
fn atom_name(cx: &Cx, i: &Instr) -> Result<&'static str> {
    if let Some(o) = i.modifier_as::<Atomgop>(Field::Op) {
        return Ok(o.name());
    }
    if let Some(o) = i.modifier_as::<Redop>(Field::Op) {
        return Ok(o.name());
    }
    Ok(cx
        .modifier::<Atomop>(i, Field::Op)?
        .map_or("", Atomop::name))
}

/// ATOMG, ATOM, RED and ATOMS in all their forms.
fn atomic(cx: &mut Cx, i: &Instr, space: Space) -> Result<()> {
    // A generic atomic's predicate destination says whether it was performed, in global
    // memory: where ptxas asks for it, it falls back to shared or local code when false.
    // Global here is outside the windows, as QSPC.G says, and the atomic runs only there.
    if let Some(pd) = i.pred(Field::Pd).filter(|p| !p.is_pt()) {
        if i.opcode() != Opcode::Atom {
            return Err(cx.unsupported(i, "atomic with a predicate destination"));
        }
        let a = address(cx, i, space)?;
        let g = in_space(cx, a, Qspcsp::G);
        cx.set_pred(pd.0, g);
        let guard = (crate::ir::Reg::pred(pd.0), false);
        return cx.guarded(None, guard, false, |_| g, |cx| atomic_body(cx, i, space));
    }
    atomic_body(cx, i, space)
}

/// [`atomic`] without the predicate destination.
fn atomic_body(cx: &mut Cx, i: &Instr, space: Space) -> Result<()> {
    let red = i.opcode() == Opcode::Red;
    let rd = if red { 255 } else { cx.rf(i, Field::Rd) };
    let rb = cx.rf(i, Field::Rb);
    if i.has(Field::Rc) {
        let (kind, w) = cas_kind(cx, i)?;
        let rc = cx.rf(i, Field::Rc);
        let a = address(cx, i, space)?;
        let (cmp, new) = if w == Width::B64 {
            (cx.reg64(rb), cx.reg64(rc))
        } else {
            (cx.reg(rb), cx.reg(rc))
        };
        let old = atomic_cas(cx, space, w, a, cmp, new);
        let out = match kind {
            Cas::Old => old,
            Cas::Stored => {
                let eq = cx.cmp(Op::IEq, old, cmp);
                if w == Width::B64 {
                    let (one, zero) = (cx.c64(1), cx.c64(0));
                    cx.sel(eq, one, zero)
                } else {
                    let (one, zero) = (cx.c32(1), cx.c32(0));
                    cx.sel(eq, one, zero)
                }
            }
        };
        if w == Width::B64 {
            cx.set_reg64(rd, out);
        } else {
            cx.set_reg(rd, out);
        }
        return Ok(());
    }
    if i.modifier_as::<Atomty>(Field::Size) == Some(Atomty::F16x2Rn) {
        return f16x2_add(cx, i, space, rd, rb);
    }
    let ty = atom_type(cx, i)?;
    let name = atom_name(cx, i)?;
    let Some(o) = atom_op_named(name, ty) else {
        return Err(cx.unsupported(i, format!("atomic op {name}")));
    };
    if ty.width == Width::B64 && matches!(o, AtomOp::Inc | AtomOp::Dec) {
        return Err(cx.unsupported(i, format!("64-bit atomic {name}")));
    }
    let a = address(cx, i, space)?;
    let v = if ty.width == Width::B64 {
        cx.reg64(rb)
    } else {
        cx.reg(rb)
    };
    // What the back ends have no atomic for, a compare-and-swap loop: 64-bit shared RMW
    // and the f64 add (the exact sum rounded to nearest: DADD's).
    let old = if ty.width == Width::B64 && (space == Space::Shared || o == AtomOp::FAdd) {
        atomic_by_cas(cx, space, Width::B64, a, |cx, old| {
            if o == AtomOp::FAdd {
                let x = cx.cast(Type::F64, old);
                let y = cx.cast(Type::F64, v);
                let s = cx.emit(Op::FAdd(Round::Rn), Type::F64, &[x, y]);
                cx.cast(Type::U64, s)
            } else {
                // The 64-bit integer operations all have a value (no INC/DEC at 64 bits).
                atom_result(cx, o, old, v).unwrap_or(old)
            }
        })
    } else {
        atomic_rmw(cx, space, o, ty.width, a, v)
    };
    if ty.width == Width::B64 {
        cx.set_reg64(rd, old);
    } else {
        cx.set_reg(rd, old);
    }
    Ok(())
}

/// `.ADD.F16x2.RN`: both halves added (each sum exact in f32, then rounded to nearest f16:
/// the single rounding, as 24 >= 2 * 11 + 2 bits), by a compare-and-swap loop.
fn f16x2_add(cx: &mut Cx, i: &Instr, space: Space, rd: u8, rb: u8) -> Result<()> {
    if atom_name(cx, i)? != ".ADD" {
        return Err(cx.unsupported(i, "f16x2 atomic other than ADD"));
    }
    let a = address(cx, i, space)?;
    let v = cx.reg(rb);
    let old = atomic_by_cas(cx, space, Width::B32, a, |cx, old| {
        let half = |cx: &mut Cx, at: u32| {
            let x = cx.bits(old, at, 16);
            let y = cx.bits(v, at, 16);
            let (x, y) = (h2f(cx, x), h2f(cx, y));
            let s = cx.emit(Op::FAdd(Round::Rn), Type::F32, &[x, y]);
            f2h_bits(cx, s)
        };
        let lo = half(cx, 0);
        let hi = half(cx, 16);
        let hi = cx.shl_c(hi, 16);
        cx.or(lo, hi)
    });
    cx.set_reg(rd, old);
    Ok(())
}

/// QSPC: whether a generic address lies in the queried space, in `Pd`: `.S` and `.L` in the
/// 16 MiB shared and local windows whose bases the CUDA driver words give
/// ([`SHARED_WINDOW`], [`LOCAL_WINDOW`]), `.G` outside both. The value written to `Rd` is
/// not known and is only accepted as RZ.
fn qspc(cx: &mut Cx, i: &Instr) -> Result<()> {
    if cx.rf(i, Field::Rd) != 255 {
        return Err(cx.unsupported(i, "QSPC with a destination register"));
    }
    let space = cx.modifier::<Qspcsp>(i, Field::Mode)?;
    if !matches!(space, Some(Qspcsp::G | Qspcsp::S | Qspcsp::L)) {
        let m = space.map_or("", Qspcsp::name);
        return Err(cx.unsupported(i, format!("QSPC space {m}")));
    }
    let a = address(cx, i, Space::Global)?;
    let v = in_space(cx, a, space.unwrap_or(Qspcsp::G));
    cx.set_p(i, Field::Pd, v);
    Ok(())
}

/// Whether the generic address `a` (U64) lies in `space`: `.S` and `.L` their windows, `.G`
/// neither.
fn in_space(cx: &mut Cx, a: Value, space: Qspcsp) -> Value {
    let hi = cx.hi(a);
    let lo = cx.lo(a);
    let z = cx.c32(0);
    let hi0 = cx.cmp(Op::IEq, hi, z);
    let win = cx.shr_c(lo, 24);
    let in_window = |cx: &mut Cx, base: u32| {
        let b = cx.c32(base >> 24);
        let eq = cx.cmp(Op::IEq, win, b);
        cx.and(hi0, eq)
    };
    match space {
        Qspcsp::S => in_window(cx, SHARED_WINDOW),
        Qspcsp::L => in_window(cx, LOCAL_WINDOW),
        _ => {
            let s = in_window(cx, SHARED_WINDOW);
            let l = in_window(cx, LOCAL_WINDOW);
            let either = cx.or(s, l);
            cx.not(either)
        }
    }
}

/// LDGSTS (`cp.async`): copies 4, 8 or 16 bytes from global `[Ra.64 (+URa) + Imm2]` to
/// shared `[Rd + Imm]`, synchronously (LDGDEPBAR and DEPBAR then have nothing to wait for).
/// With a predicate (ptxas's `ignore-src`), a false one copies zeros: the zeros are stored
/// first and the copy runs only under the predicate, so an out-of-range source is never
/// read. A memory descriptor (`desc[URn]`, a cache policy) is ignored, as in [`address`].
///
/// `.ZFILL` (PTX's `src-size` below the copy size): ptxas adds the number of bytes to fill
/// with zeros, `z`, to the (copy-size aligned) source address, so `z` is the address's low
/// bits; the first `size - z` bytes come from the aligned address and the rest are zeros
/// (`x_forms_zfill`: ptxas encodes `cp.async … 16, 5` as `+0xb`, a register size `n` as
/// `(16 - n) & 15` with the predicate `n != 0`). A word past the valid bytes is not read (its
/// load reads word 0 instead and is masked to zero).
fn ldgsts(cx: &mut Cx, i: &Instr) -> Result<()> {
    let zfill = i.flag(Field::Zfill);
    let words = match cx.modifier::<Ldgstssz>(i, Field::Size)? {
        Some(Ldgstssz::Default) | None => 1,
        Some(Ldgstssz::N64) => 2,
        Some(Ldgstssz::N128) => 4,
        Some(m) => return Err(cx.unsupported(i, format!("LDGSTS size {m}"))),
    };
    let sh = Shape::Words(words);
    let copy = |cx: &mut Cx| -> Result<()> {
        let (src, dst) = ldgsts_addresses(cx, i);
        let mut v = Vec::with_capacity(words as usize);
        if zfill {
            zfill_loads(cx, src, words, &mut v);
        } else {
            for k in 0..words {
                let a = super::super::mem::offset(cx, src, 4 * k);
                v.push(cx.emit(Op::Load(Space::Global, Width::B32), Type::U32, &[a]));
            }
        }
        for (k, x) in v.into_iter().enumerate() {
            let a = super::super::mem::offset(cx, dst, 4 * k as u32);
            cx.emit(Op::Store(Space::Shared, Width::B32), Type::Void, &[a, x]);
        }
        Ok(())
    };
    let pc = i.pred(Field::Pc).map_or(7, |p| p.0);
    let neg = i.flag(Field::NotC);
    if pc == 7 && !neg {
        return copy(cx);
    }
    let (_, dst) = ldgsts_addresses(cx, i);
    store_regs(cx, Space::Shared, sh, dst, 255);
    let guard = (crate::ir::Reg::pred(pc), neg);
    cx.guarded(None, guard, false, |cx| cx.pred(pc, neg), copy)
}

/// The `words` words of an LDGSTS.ZFILL source at `src` (zero count in the low bits), the
/// bytes past the source size zero.
fn zfill_loads(cx: &mut Cx, src: Value, words: u32, out: &mut Vec<Value>) {
    let bytes = 4 * words;
    let lo = cx.lo(src);
    let low = cx.c32(bytes - 1);
    let z = cx.and(lo, low);
    let align = cx.c64(!(bytes as u64 - 1));
    let base = cx.bin(Op::And, src, align);
    let total = cx.c32(bytes);
    // n: the valid bytes, 1..=bytes.
    let n = cx.bin(Op::ISub, total, z);
    let zero = cx.c32(0);
    let full = cx.c32(!0);
    for k in 0..words {
        let at = cx.c32(4 * k);
        let some = cx.cmp(Op::UGt, n, at);
        let a = super::super::mem::offset(cx, base, 4 * k);
        let a = cx.sel(some, a, base);
        let w = cx.emit(Op::Load(Space::Global, Width::B32), Type::U32, &[a]);
        // v = min(n - 4k, 4) valid bytes of this word (0 when n <= 4k).
        let left = cx.bin(Op::ISub, n, at);
        let left = cx.sel(some, left, zero);
        let four = cx.c32(4);
        let whole = cx.cmp(Op::UGe, left, four);
        let eight = cx.c32(8);
        let sh = cx.bin(Op::IMul, left, eight);
        let one = cx.c32(1);
        let m = cx.bin(Op::Shl, one, sh);
        let m = cx.bin(Op::ISub, m, one);
        let m = cx.sel(whole, full, m);
        out.push(cx.and(w, m));
    }
}

/// LDGSTS's source (global, U64) and destination (shared, U32) addresses.
fn ldgsts_addresses(cx: &mut Cx, i: &Instr) -> (Value, Value) {
    let ra = cx.rf(i, Field::Ra);
    let mut src = cx.reg64(ra);
    if let Some(u) = i.ureg(Field::URa).map(|r| r.0).filter(|&u| u < 63) {
        let uv = cx.ureg64(u);
        src = cx.add(src, uv);
    }
    let k = cx.c64(i.get(Field::Imm2).unwrap_or(0) as u64);
    let src = cx.add(src, k);
    let rd = cx.r(i, Field::Rd);
    let k = cx.c32(i.get(Field::Imm).unwrap_or(0) as u32);
    let dst = cx.add(rd, k);
    (src, dst)
}
