//! The soft-f64 routines (`F64Mode::Soft`) on adversarial operands, run on the Vulkan device:
//! hand-built IR compute shaders apply every f64 operation the IR has — add, multiply and
//! FMA in each rounding mode, the twelve comparisons, min / max with signed zeros,
//! saturation, negation, |x|, the four integral roundings, truncation to 32- and 64-bit
//! integers, f64 → f32 / f16 and f32 → f16 in each mode, f32 → f64, 32- and 64-bit integers
//! to f64 / f32 / f16 in each mode, division, square root, reciprocal and reciprocal square
//! root — and the f32 operations the native translation rounds through f64 (directed add /
//! multiply / FMA, the exact FMA), to thousands of operand triples: subnormal inputs and
//! results, NaNs (quiet, signaling, negative), infinities, signed zeros, the overflow and
//! underflow boundaries, exact ties, FMA cancellation, integers at 2^53 / 2^63 / 2^64, and
//! random values near each other and at the ends of the range.
//!
//! Expected values come from an exact model of IEEE 754 written for this test (`ieee.rs`:
//! arbitrary-precision integers, one rounding), which the host's own correctly rounded f64 /
//! f32 operations cross-check in round-to-nearest; division and square root come from the
//! host (x86 `divsd` / `sqrtsd`, correctly rounded). None comes from the routines themselves.

mod common;
#[path = "soft_f64/ieee.rs"]
mod ieee;

use dmsh_ir::*;
use dmsh_spv::{emit, F64Mode, FmaMode, Options};
use dmsh_vk::{Bind, BufferSpec, ComputeJob, ResourceRef};
use ieee::{Mode, F16, F32, F64, MODES};
use rand::{Rng, SeedableRng};
use std::cmp::Ordering;

const OUT: u8 = 0;
const IN: u8 = 1;
/// Invocations per workgroup.
const LS: u32 = 64;
/// Bytes of one operand triple.
const IN_BYTES: u32 = 24;

/// The IR rounding mode of a model mode.
fn rnd(m: Mode) -> Round {
    match m {
        Mode::Rn => Round::Rn,
        Mode::Rm => Round::Rm,
        Mode::Rp => Round::Rp,
        Mode::Rz => Round::Rz,
    }
}

/// A program under construction: one block, the operands loaded.
struct P {
    f: Function,
    b: BlockId,
    out: Value,
    /// The operands as f64.
    d: [Value; 3],
    /// Their bits.
    bits: [Value; 3],
}

impl P {
    fn new() -> P {
        let mut f = Function::new();
        let b = f.add_block(Some(0));
        let u = Type::U32;
        let tid = f.push(b, Op::SysVal(Sys::Tid(0)), u, &[]);
        let cta = f.push(b, Op::SysVal(Sys::Ctaid(0)), u, &[]);
        let ls = f.push(b, Op::Const(LS as u64), u, &[]);
        let base = f.push(b, Op::IMul, u, &[cta, ls]);
        let idx = f.push(b, Op::IAdd, u, &[base, tid]);
        let k = f.push(b, Op::Const(IN_BYTES as u64), u, &[]);
        let inoff = f.push(b, Op::IMul, u, &[idx, k]);
        let mut d = [Value::NONE; 3];
        let mut bits = [Value::NONE; 3];
        for i in 0..3 {
            let o = f.push(b, Op::Const(8 * i as u64), u, &[]);
            let at = f.push(b, Op::IAdd, u, &[inoff, o]);
            bits[i] = f.push(
                b,
                Op::Load(Space::Storage(IN), Width::B64),
                Type::U64,
                &[at],
            );
            d[i] = f.push(b, Op::Bitcast, Type::F64, &[bits[i]]);
        }
        P {
            f,
            b,
            out: idx,
            d,
            bits,
        }
    }

    fn op(&mut self, op: Op, t: Type, args: &[Value]) -> Value {
        self.f.push(self.b, op, t, args)
    }

    fn c(&mut self, t: Type, k: u64) -> Value {
        self.op(Op::Const(k), t, &[])
    }

    /// Word `k` of the operand `i` (0 low, 1 high).
    fn word(&mut self, i: usize, k: u32) -> Value {
        if k == 0 {
            self.op(Op::UConvert, Type::U32, &[self.bits[i]])
        } else {
            self.op(Op::Hi32, Type::U32, &[self.bits[i]])
        }
    }

    /// Stores the 32-bit `v` at output word `k` of this invocation (`n` words each).
    fn st32(&mut self, n: u32, k: u32, v: Value) {
        let u = Type::U32;
        let nb = self.c(u, 4 * n as u64);
        let base = self.op(Op::IMul, u, &[self.out, nb]);
        let kb = self.c(u, 4 * k as u64);
        let at = self.op(Op::IAdd, u, &[base, kb]);
        self.op(
            Op::Store(Space::Storage(OUT), Width::B32),
            Type::Void,
            &[at, v],
        );
    }

    /// Stores the 64-bit `v` (U64 or F64) at output words `k`, `k + 1`.
    fn st64(&mut self, n: u32, k: u32, v: Value) {
        let v = if self.f.ty(v) == Type::F64 {
            self.op(Op::Bitcast, Type::U64, &[v])
        } else {
            v
        };
        let lo = self.op(Op::UConvert, Type::U32, &[v]);
        let hi = self.op(Op::Hi32, Type::U32, &[v]);
        self.st32(n, k, lo);
        self.st32(n, k + 1, hi);
    }

    /// Stores a float result (f64: two words; f32 / f16: its bits in one word).
    fn st_float(&mut self, n: u32, k: u32, v: Value) {
        match self.f.ty(v) {
            Type::F64 => self.st64(n, k, v),
            _ => {
                let b = self.op(Op::Bitcast, Type::U32, &[v]);
                self.st32(n, k, b);
            }
        }
    }

    fn shader(mut self) -> Shader {
        self.f.blocks[0].term = Terminator::Exit;
        Shader {
            func: self.f,
            stage: Stage::Compute,
            local_size: [LS, 1, 1],
            shared_bytes: 0,
            local_bytes: 0,
            banks: Vec::new(),
            abi: "deko3d",
            guest_insts: 0,
            gfx: None,
        }
    }
}

/// One test shader: its name, output words per invocation, IR and expected words.
struct Kind {
    name: &'static str,
    words: u32,
    build: fn() -> Shader,
    expect: fn(&[u64; 3]) -> Vec<Option<u32>>,
}

fn split(v: u64) -> [Option<u32>; 2] {
    [Some(v as u32), Some((v >> 32) as u32)]
}

// ---- f64 add, multiply, FMA in every mode ----

fn arith64() -> Shader {
    let mut p = P::new();
    let [a, b, c] = p.d;
    for (i, &m) in MODES.iter().enumerate() {
        let s = p.op(Op::FAdd(rnd(m)), Type::F64, &[a, b]);
        p.st_float(24, 2 * i as u32, s);
        let x = p.op(Op::FMul(rnd(m)), Type::F64, &[a, b]);
        p.st_float(24, 8 + 2 * i as u32, x);
        let y = p.op(Op::FFma(rnd(m)), Type::F64, &[a, b, c]);
        p.st_float(24, 16 + 2 * i as u32, y);
    }
    p.shader()
}

fn arith64_expect(v: &[u64; 3]) -> Vec<Option<u32>> {
    let [a, b, c] = *v;
    let mut out = Vec::new();
    for m in MODES {
        out.extend(split(ieee::add(F64, a, b, m)));
    }
    for m in MODES {
        out.extend(split(ieee::mul(F64, a, b, m)));
    }
    for m in MODES {
        out.extend(split(ieee::fma(F64, a, b, c, m)));
    }
    out
}

// ---- f32 add, multiply, FMA in every mode (the low words as f32) ----

fn arith32() -> Shader {
    let mut p = P::new();
    let mut x = [Value::NONE; 3];
    for (i, xi) in x.iter_mut().enumerate() {
        let w = p.word(i, 0);
        *xi = p.op(Op::Bitcast, Type::F32, &[w]);
    }
    for (i, &m) in MODES.iter().enumerate() {
        let s = p.op(Op::FAdd(rnd(m)), Type::F32, &[x[0], x[1]]);
        p.st_float(12, i as u32, s);
        let y = p.op(Op::FMul(rnd(m)), Type::F32, &[x[0], x[1]]);
        p.st_float(12, 4 + i as u32, y);
        let z = p.op(Op::FFma(rnd(m)), Type::F32, &[x[0], x[1], x[2]]);
        p.st_float(12, 8 + i as u32, z);
    }
    p.shader()
}

fn arith32_expect(v: &[u64; 3]) -> Vec<Option<u32>> {
    let [a, b, c] = v.map(|x| x & 0xffff_ffff);
    let mut out = Vec::new();
    for m in MODES {
        out.push(Some(ieee::add(F32, a, b, m) as u32));
    }
    for m in MODES {
        out.push(Some(ieee::mul(F32, a, b, m) as u32));
    }
    for m in MODES {
        out.push(Some(ieee::fma(F32, a, b, c, m) as u32));
    }
    out
}

// ---- comparisons, min / max, saturation, sign, integral rounding, f64 → integer ----

const PREDS: [Op; 12] = [
    Op::FOEq,
    Op::FONe,
    Op::FOLt,
    Op::FOLe,
    Op::FOGt,
    Op::FOGe,
    Op::FUEq,
    Op::FUNe,
    Op::FULt,
    Op::FULe,
    Op::FUGt,
    Op::FUGe,
];

fn misc64() -> Shader {
    let mut p = P::new();
    let [a, b, _] = p.d;
    let u = Type::U32;
    let mut mask = p.c(u, 0);
    let zero = p.c(u, 0);
    let bit = |p: &mut P, k: u32, c: Value, mask: &mut Value| {
        let one = p.c(u, 1 << k);
        let v = p.op(Op::Select, u, &[c, one, zero]);
        *mask = p.op(Op::Or, u, &[*mask, v]);
    };
    for (k, &op) in PREDS.iter().enumerate() {
        let c = p.op(op, Type::Bool, &[a, b]);
        bit(&mut p, k as u32, c, &mut mask);
    }
    let c = p.op(Op::IsNan, Type::Bool, &[a]);
    bit(&mut p, 12, c, &mut mask);
    let c = p.op(Op::IsInf, Type::Bool, &[a]);
    bit(&mut p, 13, c, &mut mask);
    p.st32(26, 0, mask);
    let f = Type::F64;
    let r = [
        p.op(Op::FMinMaxZ(true), f, &[a, b]),
        p.op(Op::FMinMaxZ(false), f, &[a, b]),
        p.op(Op::FSat, f, &[a]),
        p.op(Op::FNeg, f, &[a]),
        p.op(Op::FAbs, f, &[a]),
        p.op(Op::FFloor, f, &[a]),
        p.op(Op::FCeil, f, &[a]),
        p.op(Op::FTrunc, f, &[a]),
        p.op(Op::FRoundEven, f, &[a]),
    ];
    for (k, &v) in r.iter().enumerate() {
        p.st_float(26, 2 + 2 * k as u32, v);
    }
    let t = r[7];
    let s64 = p.op(Op::FToS, Type::U64, &[t]);
    p.st64(26, 20, s64);
    let u64v = p.op(Op::FToU, Type::U64, &[t]);
    p.st64(26, 22, u64v);
    let s32 = p.op(Op::FToS, u, &[t]);
    p.st32(26, 24, s32);
    let u32v = p.op(Op::FToU, u, &[t]);
    p.st32(26, 25, u32v);
    p.shader()
}

fn misc64_expect(v: &[u64; 3]) -> Vec<Option<u32>> {
    let [a, b, _] = *v;
    let nan = |x: u64| matches!(ieee::decode(F64, x), ieee::Val::Nan(_));
    let zero = |x: u64| x & !(1 << 63) == 0;
    let ord = ieee::compare(a, b);
    let preds = [
        ord == Some(Ordering::Equal),
        ord.is_some() && ord != Some(Ordering::Equal),
        ord == Some(Ordering::Less),
        matches!(ord, Some(Ordering::Less | Ordering::Equal)),
        ord == Some(Ordering::Greater),
        matches!(ord, Some(Ordering::Greater | Ordering::Equal)),
        ord.is_none() || ord == Some(Ordering::Equal),
        ord != Some(Ordering::Equal),
        ord.is_none() || ord == Some(Ordering::Less),
        ord != Some(Ordering::Greater),
        ord.is_none() || ord == Some(Ordering::Greater),
        ord != Some(Ordering::Less),
    ];
    let mut mask = 0u32;
    for (k, &x) in preds.iter().enumerate() {
        mask |= (x as u32) << k;
    }
    mask |= (nan(a) as u32) << 12;
    mask |= (matches!(ieee::decode(F64, a), ieee::Val::Inf(_)) as u32) << 13;
    let mut out = vec![Some(mask), None];
    // FMNMX / DMNMX: a NaN loses to a number (two NaNs: a), −0 < +0.
    let minmax = |min: bool| -> u64 {
        if nan(b) {
            return a;
        }
        if nan(a) {
            return b;
        }
        if zero(a) && zero(b) {
            return if min { a | b } else { a & b };
        }
        match ieee::compare(a, b) {
            Some(Ordering::Less) => {
                if min {
                    a
                } else {
                    b
                }
            }
            Some(Ordering::Greater) => {
                if min {
                    b
                } else {
                    a
                }
            }
            _ => b,
        }
    };
    // Saturation: NaN → +0, clamp to [+0, 1].
    let sat = if nan(a) || a >> 63 == 1 {
        0
    } else if ieee::compare(a, 1f64.to_bits()) != Some(Ordering::Less) {
        1f64.to_bits()
    } else {
        a
    };
    for r in [
        minmax(true),
        minmax(false),
        sat,
        a ^ 1 << 63,
        a & !(1 << 63),
        ieee::rint(a, Mode::Rm),
        ieee::rint(a, Mode::Rp),
        ieee::rint(a, Mode::Rz),
        ieee::rint(a, Mode::Rn),
    ] {
        out.extend(split(r));
    }
    // Truncation to integers, where the value is in the destination's range.
    let t = ieee::trunc_int(a);
    let in_range = |lo: i128, hi: i128| t.filter(|&x| x >= lo && x < hi);
    let w64 = |x: Option<i128>| match x {
        Some(x) => split(x as u64),
        None => [None, None],
    };
    out.extend(w64(in_range(-(1 << 63), 1 << 63)));
    out.extend(w64(in_range(0, 1 << 64)));
    out.push(in_range(-(1 << 31), 1 << 31).map(|x| x as u32));
    out.push(in_range(0, 1 << 32).map(|x| x as u32));
    out
}

// ---- conversions ----

fn conv() -> Shader {
    let mut p = P::new();
    let n = 54;
    let a = p.d[0];
    let abits = p.bits[0];
    let lo = p.word(0, 0);
    let lof = p.op(Op::Bitcast, Type::F32, &[lo]);
    for (i, &m) in MODES.iter().enumerate() {
        let i = i as u32;
        let r = rnd(m);
        let x = p.op(Op::FConvert(r), Type::F32, &[a]);
        p.st_float(n, i, x);
        let h = p.op(Op::FConvert(r), Type::F16, &[a]);
        p.st_float(n, 4 + i, h);
        let h = p.op(Op::FConvert(r), Type::F16, &[lof]);
        p.st_float(n, 10 + i, h);
        let x = p.op(Op::UToF(r), Type::F64, &[abits]);
        p.st_float(n, 14 + 2 * i, x);
        let x = p.op(Op::SToF(r), Type::F64, &[abits]);
        p.st_float(n, 22 + 2 * i, x);
        let x = p.op(Op::UToF(r), Type::F32, &[abits]);
        p.st_float(n, 30 + i, x);
        let x = p.op(Op::SToF(r), Type::F32, &[abits]);
        p.st_float(n, 34 + i, x);
    }
    let w = p.op(Op::FConvert(Round::Rn), Type::F64, &[lof]);
    p.st_float(n, 8, w);
    let x = p.op(Op::UToF(Round::Rn), Type::F64, &[lo]);
    p.st_float(n, 38, x);
    let x = p.op(Op::SToF(Round::Rn), Type::F64, &[lo]);
    p.st_float(n, 40, x);
    for (i, m) in [Mode::Rm, Mode::Rp, Mode::Rz].into_iter().enumerate() {
        let x = p.op(Op::UToF(rnd(m)), Type::F32, &[lo]);
        p.st_float(n, 42 + i as u32, x);
        let x = p.op(Op::SToF(rnd(m)), Type::F32, &[lo]);
        p.st_float(n, 45 + i as u32, x);
        let x = p.op(Op::UToF(rnd(m)), Type::F16, &[abits]);
        p.st_float(n, 48 + i as u32, x);
        let x = p.op(Op::SToF(rnd(m)), Type::F16, &[lo]);
        p.st_float(n, 51 + i as u32, x);
    }
    p.shader()
}

fn conv_expect(v: &[u64; 3]) -> Vec<Option<u32>> {
    let a = v[0];
    let lo = a & 0xffff_ffff;
    let mut out = vec![None; 54];
    let mut put = |k: usize, x: u64, wide: bool| {
        out[k] = Some(x as u32);
        if wide {
            out[k + 1] = Some((x >> 32) as u32);
        }
    };
    for (i, &m) in MODES.iter().enumerate() {
        put(i, ieee::convert(F64, F32, a, m), false);
        put(4 + i, ieee::convert(F64, F16, a, m), false);
        put(10 + i, ieee::convert(F32, F16, lo, m), false);

        put(14 + 2 * i, ieee::from_int(F64, a as i128, m), true);
        put(22 + 2 * i, ieee::from_int(F64, a as i64 as i128, m), true);
        put(30 + i, ieee::from_int(F32, a as i128, m), false);
        put(34 + i, ieee::from_int(F32, a as i64 as i128, m), false);
    }
    put(8, ieee::convert(F32, F64, lo, Mode::Rn), true);

    put(38, ieee::from_int(F64, lo as i128, Mode::Rn), true);
    put(
        40,
        ieee::from_int(F64, lo as u32 as i32 as i128, Mode::Rn),
        true,
    );
    for (i, m) in [Mode::Rm, Mode::Rp, Mode::Rz].into_iter().enumerate() {
        put(42 + i, ieee::from_int(F32, lo as i128, m), false);
        put(
            45 + i,
            ieee::from_int(F32, lo as u32 as i32 as i128, m),
            false,
        );
        put(48 + i, ieee::from_int(F16, a as i128, m), false);
        put(
            51 + i,
            ieee::from_int(F16, lo as u32 as i32 as i128, m),
            false,
        );
    }
    if matches!(ieee::decode(F32, lo), ieee::Val::Nan(_)) {
        // f32 → f16 to nearest stays the native conversion: its NaN payload is the device's
        // (lavapipe: the default NaN), not a soft routine's.
        out[10] = None;
    }
    out
}

// ---- division and square root (round to nearest) ----

fn divsqrt() -> Shader {
    let mut p = P::new();
    let [a, b, _] = p.d;
    let f = Type::F64;
    let r = [
        p.op(Op::FDiv, f, &[a, b]),
        p.op(Op::FSqrt, f, &[a]),
        p.op(Op::FRcp, f, &[a]),
        p.op(Op::FRsqrt, f, &[a]),
    ];
    for (k, &v) in r.iter().enumerate() {
        p.st_float(8, 2 * k as u32, v);
    }
    p.shader()
}

fn divsqrt_expect(v: &[u64; 3]) -> Vec<Option<u32>> {
    let (a, b) = (f64::from_bits(v[0]), f64::from_bits(v[1]));
    let host = |x: f64| std::hint::black_box(x).to_bits();
    let mut out = Vec::new();
    for r in [
        host(a / b),
        host(a.sqrt()),
        host(1.0 / a),
        host(1.0 / a.sqrt()),
    ] {
        out.extend(split(r));
    }
    out
}

const KINDS: &[Kind] = &[
    Kind {
        name: "f64 add/mul/fma",
        words: 24,
        build: arith64,
        expect: arith64_expect,
    },
    Kind {
        name: "f32 add/mul/fma",
        words: 12,
        build: arith32,
        expect: arith32_expect,
    },
    Kind {
        name: "f64 compare/minmax/sat/rint/f2i",
        words: 26,
        build: misc64,
        expect: misc64_expect,
    },
    Kind {
        name: "conversions",
        words: 54,
        build: conv,
        expect: conv_expect,
    },
    Kind {
        name: "f64 div/sqrt",
        words: 8,
        build: divsqrt,
        expect: divsqrt_expect,
    },
];

// ---- operands ----

/// Interesting f64 values: both signs of zeros, subnormals, the normal boundary, 1 and its
/// neighbours, ties, integers at the precision limits, the largest finite value, ∞, NaNs.
fn specials() -> Vec<u64> {
    let mut v: Vec<u64> = vec![
        0,
        1,                     // smallest subnormal
        2,                     // 2 · smallest
        3,                     // 3 · smallest
        0x000f_ffff_ffff_ffff, // largest subnormal
        0x0008_0000_0000_0000, // half the smallest normal
        0x0010_0000_0000_0000, // smallest normal
        0x0010_0000_0000_0001,
        0x001f_ffff_ffff_ffff,
        0x3fe0_0000_0000_0000, // 0.5
        0x3fe0_0000_0000_0001,
        0x3fef_ffff_ffff_ffff, // 1 − ulp/2
        0x3ff0_0000_0000_0000, // 1
        0x3ff0_0000_0000_0001, // 1 + ulp
        0x3ff8_0000_0000_0000, // 1.5
        0x4000_0000_0000_0000, // 2
        0x4008_0000_0000_0000, // 3
        0x3fd5_5555_5555_5555, // 1/3
        0x4330_0000_0000_0000, // 2^52
        0x4330_0000_0000_0001, // 2^52 + 1
        0x4340_0000_0000_0000, // 2^53
        0x4340_0000_0000_0001, // 2^53 + 2
        0x43e0_0000_0000_0000, // 2^63
        0x43f0_0000_0000_0000, // 2^64
        0x41e0_0000_0000_0000, // 2^31
        0x41f0_0000_0000_0000, // 2^32
        0x3ca0_0000_0000_0000, // 2^-53
        0x3c90_0000_0000_0000, // 2^-54
        0x7fe0_0000_0000_0000, // 2^1023
        0x7fef_ffff_ffff_ffff, // largest finite
        0x7fef_ffff_ffff_fffe,
        0x7ff0_0000_0000_0000, // ∞
        0x7ff8_0000_0000_0000, // quiet NaN
        0x7ff0_0000_0000_0001, // signaling NaN
        0x7ff4_0000_dead_beef, // signaling NaN with a payload
        0xfff8_0000_0000_1234, // negative quiet NaN
        0x4005_bf0a_8b14_5769, // e
        0x400921fb54442d18,    // π
        0x3e80_0000_0000_0000, // 2^-23
        0x3810_0000_0000_0000, // f32's smallest normal
        0x36a0_0000_0000_0000, // f32's smallest subnormal
        0x47ef_ffff_e000_0000, // f32's largest finite
        0x47ef_ffff_f000_0000, // f32's largest finite + half an ulp
        0x40ef_fe00_0000_0000, // f16's largest finite (65504)
        0x3f10_0000_0000_0000, // f16's smallest normal 2^-14
        0x3e70_0000_0000_0000, // f16's smallest subnormal 2^-24
    ];
    let neg: Vec<u64> = v.iter().map(|x| x ^ 1 << 63).collect();
    v.extend(neg);
    v
}

/// Interesting f32 values (for the low words).
fn specials32() -> Vec<u32> {
    let mut v: Vec<u32> = vec![
        0,
        1,
        2,
        0x007f_ffff,
        0x0080_0000,
        0x0080_0001,
        0x3f00_0000,
        0x3f7f_ffff,
        0x3f80_0000,
        0x3f80_0001,
        0x3fc0_0000,
        0x4000_0000,
        0x3eaa_aaab,
        0x4b00_0000,
        0x4b80_0000,
        0x7f00_0000,
        0x7f7f_ffff,
        0x7f80_0000,
        0x7fc0_0000,
        0x7f80_0001,
        0x7fa0_beef,
        0x3380_0000,
        0x3300_0000,
        0x477f_e000,
        0x477f_f000,
        0x3880_0000,
        0x3380_0001,
        0x4f00_0000,
        0x5f80_0000,
    ];
    let neg: Vec<u32> = v.iter().map(|x| x ^ 1 << 31).collect();
    v.extend(neg);
    v
}

/// A random f64 with an exponent drawn near `e` (biased) and a significand with random, few,
/// or all bits set.
fn random_near(rng: &mut rand::rngs::StdRng, e: i64) -> u64 {
    let e = (e + rng.gen_range(-3..=3)).clamp(0, 0x7fe) as u64;
    let f = match rng.gen_range(0..4) {
        0 => rng.gen::<u64>() & ((1 << 52) - 1),
        1 => 1u64 << rng.gen_range(0..52),
        2 => ((1u64 << 52) - 1) ^ (1u64 << rng.gen_range(0..52)),
        _ => rng.gen::<u64>() & ((1 << 52) - 1) & !((1u64 << rng.gen_range(0..52)) - 1),
    };
    let s = (rng.gen::<bool>() as u64) << 63;
    s | e << 52 | f
}

/// The operand triples: every pair of specials (the addend cycling through them), f32
/// specials in the low words, cancelling and tying FMAs, integers, and random values.
fn operands() -> Vec<[u64; 3]> {
    let s = specials();
    let mut v = Vec::new();
    for (i, &a) in s.iter().enumerate() {
        for (j, &b) in s.iter().enumerate() {
            v.push([a, b, s[(i * 7 + j * 3) % s.len()]]);
        }
    }
    let s32 = specials32();
    for (i, &a) in s32.iter().enumerate() {
        for (j, &b) in s32.iter().enumerate() {
            let c = s32[(i * 5 + j) % s32.len()];
            // High words: f64 values, so that the f64 kinds see these too.
            let hi = s[(i + j) % s.len()] & 0xffff_ffff_0000_0000;
            v.push([hi | a as u64, hi | b as u64, c as u64]);
        }
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x050f_7f64);
    let ints = [
        0u64,
        1,
        u64::MAX,
        1 << 63,
        (1 << 63) - 1,
        (1 << 53) + 1,
        ((1 << 53) + 1) << 9,
        (1 << 24) + 1,
        0xffff_ffff,
        0x8000_0000,
        0x8000_0001,
        0x7fff_ffff,
        0x0100_0001,
        (1 << 54) + 2,
        (1 << 54) + 6,
    ];
    for &x in &ints {
        for &y in &ints {
            v.push([x, y ^ x.rotate_left(17), !y]);
            v.push([x.wrapping_neg(), y, x]);
        }
    }
    for _ in 0..6000 {
        let kind = rng.gen_range(0..8);
        let t = match kind {
            // Any exponent, operands near each other (cancellation, ties).
            0 | 1 => {
                let e = rng.gen_range(0..0x7ff);
                [
                    random_near(&mut rng, e),
                    random_near(&mut rng, e),
                    random_near(&mut rng, e),
                ]
            }
            // Products near overflow (2) or underflow (3): biased exponents summing to the
            // product's plus the bias.
            2 | 3 => {
                let t: i64 = if kind == 2 {
                    rng.gen_range(1950..2100)
                } else {
                    rng.gen_range(-70..40)
                };
                let sum = t + 1023;
                let ea = rng.gen_range((sum - 2046).max(0)..=sum.min(2046));
                let eb = sum - ea;
                let ec = if kind == 2 {
                    t.min(2046)
                } else {
                    rng.gen_range(0..60)
                };
                [
                    random_near(&mut rng, ea),
                    random_near(&mut rng, eb),
                    random_near(&mut rng, ec),
                ]
            }
            // FMA with the addend cancelling the product.
            4 => {
                let e = rng.gen_range(200..1800);
                let a = random_near(&mut rng, e);
                let b = random_near(&mut rng, 2046 - e);
                let p = f64::from_bits(a) * f64::from_bits(b);
                let c = (-p).to_bits();
                let c = match rng.gen_range(0..3) {
                    0 => c,
                    1 => c.wrapping_add(1),
                    _ => c.wrapping_sub(1),
                };
                [a, b, c]
            }
            // A sum that ties: a + b where b is half an ulp of a (or just around it).
            5 => {
                let e = rng.gen_range(60..2000);
                let a = random_near(&mut rng, e) & !(0x7ff << 52) | (e as u64) << 52;
                let half = (e as u64 - 53) << 52 | (rng.gen::<u64>() & 3);
                let half = half | (a & 1 << 63) ^ ((rng.gen::<bool>() as u64) << 63);
                [a, half, random_near(&mut rng, e)]
            }
            // Random bits.
            6 => [rng.gen(), rng.gen(), rng.gen()],
            // Subnormal operands.
            _ => {
                let sub = |r: &mut rand::rngs::StdRng| {
                    (r.gen::<u64>() & ((1 << 52) - 1)) >> r.gen_range(0..52)
                        | (r.gen::<bool>() as u64) << 63
                };
                let a = sub(&mut rng);
                let b = if rng.gen() {
                    sub(&mut rng)
                } else {
                    let e = rng.gen_range(1000..1100);
                    random_near(&mut rng, e)
                };
                [a, b, sub(&mut rng)]
            }
        };
        v.push(t);
    }
    v
}

/// Whether `words` declares a 64-bit float type (`OpTypeFloat 64`).
fn declares_f64(words: &[u32]) -> bool {
    let mut i = 5;
    while i < words.len() {
        let (n, op) = ((words[i] >> 16) as usize, words[i] & 0xffff);
        if op == 22 && words.get(i + 2) == Some(&64) {
            return true;
        }
        i += n.max(1);
    }
    false
}

/// The model's round-to-nearest add / multiply / FMA against the host's (correctly rounded
/// f64 and f32 arithmetic) where no NaN is involved: the model is checked before it judges.
#[test]
fn the_model_agrees_with_the_host() {
    let mut n = 0;
    for t in operands() {
        let [a, b, c] = t.map(f64::from_bits);
        if a.is_nan() || b.is_nan() || c.is_nan() {
            continue;
        }
        let h = |x: f64| std::hint::black_box(x).to_bits();
        let same =
            |m: u64, h: u64| m == h || (f64::from_bits(m).is_nan() && f64::from_bits(h).is_nan());
        assert!(
            same(ieee::add(F64, t[0], t[1], Mode::Rn), h(a + b)),
            "{t:x?} add"
        );
        assert!(
            same(ieee::mul(F64, t[0], t[1], Mode::Rn), h(a * b)),
            "{t:x?} mul"
        );
        assert!(
            same(
                ieee::fma(F64, t[0], t[1], t[2], Mode::Rn),
                h(a.mul_add(b, c))
            ),
            "{t:x?} fma"
        );
        let [x, y, z] = t.map(|v| f32::from_bits(v as u32));
        if !(x.is_nan() || y.is_nan() || z.is_nan()) {
            let h = |x: f32| std::hint::black_box(x).to_bits() as u64;
            let same = |m: u64, h: u64| {
                m == h || (f32::from_bits(m as u32).is_nan() && f32::from_bits(h as u32).is_nan())
            };
            let w = t.map(|v| v & 0xffff_ffff);
            assert!(same(ieee::add(F32, w[0], w[1], Mode::Rn), h(x + y)));
            assert!(same(ieee::mul(F32, w[0], w[1], Mode::Rn), h(x * y)));
            assert!(same(
                ieee::fma(F32, w[0], w[1], w[2], Mode::Rn),
                h(x.mul_add(y, z))
            ));
            assert!(same(ieee::convert(F64, F32, t[0], Mode::Rn), h(a as f32)));
        }
        n += 1;
    }
    println!("model = host on {n} triples");
}

#[test]
fn soft_f64_routines_match_the_exact_model() {
    let ops = operands();
    let n = ops.len().div_ceil(LS as usize) * LS as usize;
    let mut input = Vec::with_capacity(n * 24);
    for i in 0..n {
        for w in ops[i % ops.len()] {
            input.extend_from_slice(&w.to_le_bytes());
        }
    }
    let opts = Options {
        fma: FmaMode::Exact,
        f64: F64Mode::Soft,
        ..Options::default()
    };
    let device = dmsh_vk::shared().is_ok();
    let mut failed = Vec::new();
    for k in KINDS {
        let out = emit(&(k.build)(), &opts).expect("emits");
        common::spirv_val(&out.words).expect("spirv-val");
        assert!(!declares_f64(&out.words), "{}: an f64 type", k.name);
        if !device {
            println!(
                "{}: {} words, run skipped: no Vulkan device",
                k.name,
                out.words.len()
            );
            continue;
        }
        let spec = |name: &str, size: usize, init: Vec<u8>| BufferSpec {
            name: name.into(),
            size: size as u64,
            init,
        };
        let job = ComputeJob {
            spirv: out.words.clone(),
            reflection: dmsh_vk::Reflection::from_json(&out.reflection.to_json())
                .expect("reflection"),
            buffers: vec![
                spec("out", n * 4 * k.words as usize, Vec::new()),
                spec("in", input.len(), input.clone()),
            ],
            binds: vec![
                Bind {
                    resource: ResourceRef::Sbuf(OUT as u32),
                    buffer: 0,
                },
                Bind {
                    resource: ResourceRef::Sbuf(IN as u32),
                    buffer: 1,
                },
            ],
            pointers: Vec::new(),
            grid: [n as u32 / LS, 1, 1],
            textures: Vec::new(),
        };
        let got = dmsh_vk::run_compute(&job).expect("run").u32s(0);
        let (mut checked, mut bad) = (0, 0);
        for (i, t) in ops.iter().enumerate() {
            let want = (k.expect)(t);
            let have = &got[i * k.words as usize..(i + 1) * k.words as usize];
            for (slot, (w, &h)) in want.iter().zip(have).enumerate() {
                let Some(w) = *w else { continue };
                checked += 1;
                if w != h {
                    bad += 1;
                    if bad <= 12 {
                        println!(
                            "  {} slot {slot}: operands {:016x} {:016x} {:016x}: want {w:08x}, got {h:08x}",
                            k.name, t[0], t[1], t[2]
                        );
                    }
                }
            }
        }
        println!(
            "{}: {} words of SPIR-V; {checked} results, {bad} differ",
            k.name,
            out.words.len()
        );
        if bad > 0 {
            failed.push(k.name);
        }
    }
    assert!(failed.is_empty(), "mismatches in {failed:?}");
}
