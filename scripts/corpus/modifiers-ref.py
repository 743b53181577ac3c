#!/usr/bin/env python3
"""Expected outputs of the operand-modifier kernels in tests/corpus/modifiers, computed from the
PTX ISA semantics of each kernel's PTX source, independently of dmsh's translation.

The arithmetic (exact rationals, IEEE rounding with an explicit mode, PTX's float->int
saturation, .sat clamping) is the sass corpus's own CPU model, ../shared/tools/sass/common.py
(override with REF_COMMON=DIR); this script only says what each kernel computes. Writes
K.io.json next to each K.ptx in the sass-corpus-io/1 format.

Usage: scripts/corpus/modifiers-ref.py [DIR] [KERNEL ...]   (DIR default: tests/corpus/modifiers)
"""
import os, sys
from fractions import Fraction

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.environ.get('REF_COMMON', os.path.join(ROOT, '..', 'shared', 'tools', 'sass')))
import common
from common import (M32, M64, clamp, dec, elementwise, f2i, f_add, f_rint, f_sat, inf, rng, rnd,
                    s32, s64, sext, split64, words, write_io)

D = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, 'tests', 'corpus', 'modifiers')
D_DIR = D
ONLY = set(sys.argv[2:])
N = 128
REFS = {}

# Every kernel here has the elementwise signature (.u64 p_out, .u64 p_in, .u32 p_n); the extra
# corpus's meta.json carries no parameter table, so the layout is given here.
common.load_params = lambda setdir, kernel: [
    dict(ordinal=0, offset=0, size=8), dict(ordinal=1, offset=8, size=8),
    dict(ordinal=2, offset=16, size=4)]


def ref(fn):
    REFS[fn.__name__] = fn
    return fn


def fcvt(bits, src, dst, mode='rn'):
    """cvt.<mode>.<dst>.<src> of a finite or infinite value (callers keep NaN out)."""
    k, v, s = dec(bits, src)
    assert k != 'nan', 'NaN input'
    if k == 'inf':
        return inf(s, dst)
    return rnd(v, dst, mode, zero_sign=s)


def ftz32(bits):
    """.ftz on an f32 source: subnormals become zero of the same sign."""
    return bits & 0x80000000 if (bits >> 23) & 0xFF == 0 else bits


def icvt(x, dst, mode='rn'):
    """cvt.<mode>.<dst>.<int> of the integer x."""
    return rnd(Fraction(x), dst, mode)


def rand_f16(r):
    """f16 bits without NaN: random exponents, with zeros, infinities, subnormals and ties."""
    c = r.random()
    if c < 0.15:
        return r.choice([0x0000, 0x8000, 0x7C00, 0xFC00, 0x3C00, 0xBC00, 0x3800, 0xB800, 0x3E00,
                         0x4100, 0x4300, 0xC100, 0x0001, 0x83FF, 0x7BFF, 0xFBFF, 0x3BFF, 0x3C01])
    if c < 0.3:  # subnormal
        return r.getrandbits(10) | (r.getrandbits(1) << 15)
    e = r.randrange(1, 31)
    return (r.getrandbits(1) << 15) | (e << 10) | r.getrandbits(10)


def rand_f32(r):
    """f32 bits without NaN, concentrated where f16 conversions round, overflow or go subnormal."""
    c = r.random()
    if c < 0.15:
        return r.choice([0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x477FE000, 0x477FF000,
                         0x477FEFFF, 0xC77FF000, 0x47800000, 0x33800000, 0x33000000, 0xB3000000,
                         0x33C00000, 0x00000001, 0x807FFFFF, 0x3F800000, 0x3F000000, 0x3F7FF000])
    if c < 0.25:  # f32 subnormal (for .ftz)
        return r.getrandbits(23) | (r.getrandbits(1) << 31)
    e = r.randrange(127 - 28, 127 + 18)
    return (r.getrandbits(1) << 31) | (e << 23) | r.getrandbits(23)


@ref
def m_cvt_f16():
    """Every F2F/F2I/I2F form with a 16-bit float side that ptxas emits for the kernel."""
    H, F = 'f16', 'f32'

    def k(i, w):
        w0, f = w
        h0, h1 = w0 & 0xFFFF, w0 >> 16
        pack = lambda lo, hi: (lo & 0xFFFF) | (hi & 0xFFFF) << 16
        o = [pack(h0 & 0x7FFF, h1 ^ 0x8000),
             pack(f_rint(h0, H, 'rni'), f_rint(h1, H, 'rzi')),
             pack(f_rint(h0, H, 'rmi'), f_rint(h1, H, 'rpi')),
             pack(f_sat(h0, H), f_sat(h1, H)),
             fcvt(h1, H, F),
             f_sat(fcvt(h0, H, F), F),
             fcvt(h1, H, F) & 0x7FFFFFFF,
             fcvt(h0, H, F) ^ 0x80000000,
             pack(fcvt(f, F, H, 'rn'), fcvt(f, F, H, 'rz')),
             pack(fcvt(f, F, H, 'rm'), fcvt(f, F, H, 'rp')),
             pack(f_sat(fcvt(f, F, H, 'rn'), H), fcvt(ftz32(f), F, H, 'rn')),
             pack(fcvt(f & 0x7FFFFFFF, F, H), fcvt(f ^ 0x80000000, F, H)),
             f2i(h0, H, 'rni', -2**31, 2**31 - 1),
             f2i(h1, H, 'rzi', 0, M32),
             pack(icvt(s32(f), H, 'rn'), icvt(f & 0xFFFF, H, 'rz'))]
        o += split64(fcvt(h1, H, 'f64'))
        # mul.rn.f64 by 1 + 2^-30 (0d3FF0000000400000), then to f16 with rn and rz.
        kf, vf, sf = dec(f, F)
        if kf == 'inf':
            d3 = inf(sf, 'f64')
        else:
            d3 = rnd(vf * (1 + Fraction(1, 2**30)), 'f64', 'rn', zero_sign=sf)
        o.append(pack(fcvt(d3, 'f64', H, 'rn'), fcvt(d3, 'f64', H, 'rz')))
        o.append(f_sat(fcvt(h1 ^ 0x8000, H, F), F))
        r19 = f_rint(h0 | 0x8000, H, 'rni')
        o.append(pack(r19, r19))
        return o

    r = rng(901)
    ins = [[rand_f16(r) | rand_f16(r) << 16, rand_f32(r)] for _ in range(N)]
    elementwise(D, 'm_cvt_f16', ins, k, 20,
                notes='no NaN inputs (f16 and f32 NaN payloads through conversions are not '
                      'specified by PTX); includes signed zeros, infinities, f16/f32 subnormals, '
                      'ties and f16 overflow; expected values from scripts/corpus/modifiers-ref.py')


@ref
def m_cvt_sel():
    """I2F / I2I reading the upper half (.H1) or a byte (.B1-.B3) of a register."""
    def k(i, w):
        a, b = w
        ua_hi, sb_hi, sb_lo = a >> 16, sext(b >> 16, 16), sext(b, 16)
        o = [icvt(ua_hi, 'f32'), icvt(sb_hi, 'f32'), ua_hi, sb_hi & M32,
             icvt((a >> 8) & 0xFF, 'f32'), icvt((a >> 16) & 0xFF, 'f32'),
             icvt(sext(b >> 24, 8), 'f32'), sext(b >> 8, 8) & M32, a >> 24,
             clamp(sb_hi, -128, 127) & M32, clamp(ua_hi, 0, 255),
             icvt(ua_hi, 'f16', 'rn') | icvt(sb_hi, 'f16', 'rz') << 16]
        o += split64(icvt(sb_hi, 'f64'))
        o += [icvt(sb_lo, 'f32', 'rm'), clamp(sb_hi, 0, 65535)]
        return o

    def g(r):
        if r.random() < 0.3:
            return r.choice([0, 0xFFFFFFFF, 0x80008000, 0x7FFF7FFF, 0x00FF00FF, 0xFF00FF00,
                             0x80FF7F01, 0x12345678, 0xFFFF0000, 0x0000FFFF, 0x7F807F80])
        return r.getrandbits(32)

    r = rng(902)
    ins = [[g(r), g(r)] for _ in range(N)]
    elementwise(D, 'm_cvt_sel', ins, k, 16,
                notes='narrow signed results are sign-extended, unsigned zero-extended to 32 bits; '
                      'expected values from scripts/corpus/modifiers-ref.py')


@ref
def m_atom_s64():
    """Signed 64-bit min/max atomics and reductions: final values and (own slots) old values."""
    r = rng(903)
    special = [0, 1, M64, 1 << 63, (1 << 63) - 1, 0xFFFFFFFF, 0x100000000, 0xFFFFFFFF00000000,
               0x80000000, 0x7FFFFFFF]
    vs = [r.choice(special) if r.random() < 0.25 else r.getrandbits(64) for _ in range(N)]
    init = [r.getrandbits(64) if k % 3 else r.choice(special) for k in range(32 + 2 * N)]
    out = list(init) + [0] * (2 * N)
    for i, v in enumerate(vs):
        w = (s64(v) >> 17) & M64 ^ v
        for base, pick in ((0, min), (8, max)):
            out[base + i % 8] = pick(s64(out[base + i % 8]), s64(v)) & M64
        for base, pick in ((16, min), (24, max)):
            out[base + i % 8] = pick(s64(out[base + i % 8]), s64(w)) & M64
        for base, keep, pick in ((32, 32 + 2 * N, min), (32 + N, 32 + 3 * N, max)):
            out[keep + i] = out[base + i]
            out[base + i] = pick(s64(out[base + i]), s64(v)) & M64
    fmt = '<Q'
    write_io(D, 'm_atom_s64', (2, 1, 1), (64, 1, 1),
             [('p_out', 'buffer', 'out'), ('p_in', 'buffer', 'in'), ('p_n', 'u32', N)],
             {'in': words(vs, fmt), 'out': words(init + [0] * (2 * N), fmt)},
             {'out': words(out, fmt)},
             notes='final values of the shared slots are order independent; every own slot has '
                   'one thread; expected values from scripts/corpus/modifiers-ref.py')


def atom_op(op, old, x, bits, b=None):
    """PTX atom/red `op` on an unsigned `bits`-wide old value with operand x (inc/dec: bound b)."""
    m = (1 << bits) - 1
    sx = (lambda v: v - (1 << bits) if v >> (bits - 1) else v)
    if op == 'add':
        return (old + x) & m
    if op == 'min.u':
        return min(old, x)
    if op == 'max.u':
        return max(old, x)
    if op == 'min.s':
        return min(sx(old), sx(x)) & m
    if op == 'max.s':
        return max(sx(old), sx(x)) & m
    if op == 'inc':
        return 0 if old >= b else old + 1
    if op == 'dec':
        return b if old == 0 or old > b else old - 1
    if op == 'and':
        return old & x
    if op == 'or':
        return old | x
    if op == 'xor':
        return old ^ x
    if op == 'exch':
        return x
    raise ValueError(op)


def ftz(bits):
    return bits & 0x80000000 if (bits >> 23) & 0xFF == 0 else bits


def fadd_ftz(a, b):
    """atom.add.f32: round to nearest even, subnormal inputs and results flushed."""
    return ftz(f_add(ftz(a), ftz(b), 'f32'))


@ref
def m_atom_forms():
    """Every global (ATOM, RED) and shared (ATOMS) atomic form, laid out as m_atom_forms.ptx."""
    n = N
    OPS32 = ['add', 'add', 'min.u', 'min.s', 'max.u', 'max.s', 'inc', 'dec', 'and', 'or', 'xor',
             'exch']
    OPS64 = ['add', 'min.u', 'max.u', 'and', 'or', 'xor', 'exch']
    RED32 = OPS32[:-1]
    RED64 = OPS64[:-1]
    r = rng(904)
    special = [0, 1, 36, 37, 38, M32, 0x80000000, 0x7FFFFFFF]

    def u32(p=0.3):
        return r.choice(special) if r.random() < p else r.getrandbits(32)

    def finite_f32():
        return (r.getrandbits(1) << 31) | (r.randrange(0, 255) << 23) | r.getrandbits(23)

    ins = []
    for g in range(n):
        # a0 is also the f32 operand: finite (NaN payloads are not specified), with extremes.
        a0 = finite_f32() if g % 5 else r.choice([0, 1, 36, 37, 0x80000000, 0x7F7FFFFF,
                                                  0xFF7FFFFF, 0x00000001, 0x807FFFFF])
        ins.append([a0, u32(), u32(), u32()])
    wlen = 45504 // 4
    init = [0] * wlen
    out = [0] * wlen

    def put64(word, v):
        out[word], out[word + 1] = v & M32, v >> 32

    off = 0
    for k in range(len(OPS32) + 1):  # 12 integer ops, then add.f32
        for g in range(n):
            init[off // 4 + g] = finite_f32() if k == len(OPS32) else u32()
        off += 8 * n
    off += 8 * n  # cas.b32
    for g in range(n):
        init[(off - 8 * n) // 4 + g] = ins[g][1] if g % 3 == 0 else u32()
    for k in range(len(OPS64) + 1):
        for g in range(n):
            w = (off + 16 * n * k) // 4 + 2 * g
            v = (ins[g][3] << 32 | ins[g][2]) if (k == len(OPS64) and g % 3 == 0) else (u32() | u32() << 32)
            init[w], init[w + 1] = v & M32, v >> 32
    off += 16 * n * (len(OPS64) + 1)
    red_start = off
    for w in range(red_start // 4, 31488 // 4):
        init[w] = u32(0.5)
    fslots = (red_start + 32 * len(RED32)) // 4  # red.add.f32: small integers, exact sums
    for w in range(fslots, fslots + 8):
        init[w] = struct_f32(float(r.randrange(1000)))
    out[:] = init[:]
    # Global, one thread a slot: slot and old value.
    off = 0
    for k, op in enumerate(OPS32 + ['fadd']):
        for g in range(n):
            v, w = ins[g][0], ins[g][1]
            old = init[off // 4 + g]
            if op == 'fadd':
                new = fadd_ftz(old, v)
            else:
                new = atom_op(op, old, w if op in ('inc', 'dec') else v, 32, b=w)
            out[off // 4 + g] = new
            out[off // 4 + n + g] = old
        off += 8 * n
    for g in range(n):  # cas.b32: compare w, new v
        old = init[off // 4 + g]
        out[off // 4 + g] = ins[g][0] if old == ins[g][1] else old
        out[off // 4 + n + g] = old
    off += 8 * n
    for k, op in enumerate(OPS64 + ['cas']):
        for g in range(n):
            V = ins[g][1] << 32 | ins[g][0]
            W = ins[g][3] << 32 | ins[g][2]
            w0 = off // 4 + 2 * g
            old = init[w0] | init[w0 + 1] << 32
            new = (V if old == W else old) if op == 'cas' else atom_op(op, old, V, 64)
            put64(w0, new)
            put64(w0 + 2 * n, old)
        off += 16 * n
    # Global reductions on slot g % 8.
    for op in RED32:
        for g in range(n):
            wd = off // 4 + g % 8
            out[wd] = atom_op(op, out[wd], 37 if op in ('inc', 'dec') else ins[g][0], 32, b=37)
        off += 32
    for g in range(n):  # red.add.f32 of small integers: exact in any order
        wd = off // 4 + g % 8
        out[wd] = fadd_ftz(out[wd], struct_f32(float(ins[g][1] & 255)))
    off += 32
    for op in RED64:
        for g in range(n):
            wd = off // 4 + 2 * (g % 8)
            old = out[wd] | out[wd + 1] << 32
            put64(wd, atom_op(op, old, ins[g][1] << 32 | ins[g][0], 64))
        off += 64
    assert off == 31488, off
    # Shared memory: per block, own slots (initialised to a2) and reductions on slot tid % 8
    # (initialised by threads 0-7 to their a3), then the whole array copied out per block.
    SH = 920
    sh_out = 38144 // 4
    for blk in range(2):
        sh = [0] * SH
        for t in range(64):
            g = blk * 64 + t
            for k in range(13):
                sh[64 * k + t] = ins[g][2]
        for j in range(len(RED32)):
            for t in range(8):
                sh[832 + 8 * j + t] = ins[blk * 64 + t][3]
        for t in range(64):
            g = blk * 64 + t
            v, w = ins[g][0], ins[g][1]
            for k, op in enumerate(OPS32):
                old = sh[64 * k + t]
                sh[64 * k + t] = atom_op(op, old, w if op in ('inc', 'dec') else v, 32, b=w)
                out[31488 // 4 + n * k + g] = old
            old = sh[64 * 12 + t]
            sh[64 * 12 + t] = v if old == w else old
            out[31488 // 4 + n * 12 + g] = old
        for t in range(64):
            v = ins[blk * 64 + t][0]
            for j, op in enumerate(RED32):
                s = 832 + 8 * j + t % 8
                sh[s] = atom_op(op, sh[s], 37 if op in ('inc', 'dec') else v, 32, b=37)
        out[sh_out + SH * blk: sh_out + SH * (blk + 1)] = sh
    write_io(D, 'm_atom_forms', (2, 1, 1), (64, 1, 1),
             [('p_out', 'buffer', 'out'), ('p_in', 'buffer', 'in'), ('p_n', 'u32', n)],
             {'in': words([w for ws in ins for w in ws]), 'out': words(init)},
             {'out': words(out)},
             notes='one thread per own slot (exact old values); reductions on 8 shared slots use '
                   'order-independent operations (inc/dec with one bound, f32 adds of small '
                   'integers); expected values from scripts/corpus/modifiers-ref.py')


@ref
def m_cvt_forms():
    """Conversion forms of m_cvt_forms.ptx (F2I, I2F, I2I, F2F), including parameter operands."""
    from common import f32b
    P_F, P_I, P_U = 2999999744.0, -77777, 3000000000
    pf = f32b(P_F)
    F, D, H = 'f32', 'f64', 'f16'

    def k(g, w):
        a0, a1, a2, a3 = w
        d1 = a3 << 32 | a2
        k1, v1, s1 = dec(a1, F)
        if k1 == 'inf':
            d2 = inf(s1, D)
        else:
            d2 = rnd(v1 * (1 + Fraction(1, 2**30)), D, 'rn', zero_sign=s1)
        o = [None] * 50
        o[0] = f2i(a0, F, 'rmi', -2**15, 2**15 - 1) & 0xFFFF
        o[1] = f2i(a0, F, 'rpi', 0, 0xFFFF)
        o[2:4] = split64(f2i(a0, F, 'rni', -2**63, 2**63 - 1) & M64)
        o[4] = f2i(d1, D, 'rni', 0, M32)
        o[5] = f2i(d1, D, 'rzi', -2**31, 2**31 - 1) & M32
        o[6:8] = split64(f2i(pf, F, 'rzi', 0, M64))
        o[8] = f2i(pf, F, 'rzi', -2**31, 2**31 - 1) & M32
        o[9] = f2i(pf, F, 'rni', 0, M32)
        o[10:12] = split64(f2i(pf, F, 'rni', -2**63, 2**63 - 1) & M64)
        o[12] = f2i(a2 & 0xFFFF, H, 'rzi', -2**31, 2**31 - 1) & M32
        o[13] = icvt(a2 & 0xFFFF, H, 'rn')
        o[14] = icvt(sext(a2 >> 8, 8), F)
        o[15] = icvt(sext(a2 >> 16, 8), F)
        o[16] = icvt(sext(a2 >> 24, 8), F)
        o[17] = icvt(a3 & 0xFFFF, F, 'rp')
        o[18] = icvt(a3, F, 'rz')
        o[19] = icvt(P_U, F, 'rz')
        o[20] = icvt(P_I, F, 'rn')
        o[21:23] = split64(icvt(s32(a2), D))
        o[23:25] = split64(icvt(s64(d1), D, 'rm'))
        o[25:27] = split64(icvt(a3, D, 'rp'))
        o[27:29] = split64(icvt(d1, D, 'rz'))
        o[29:31] = split64(icvt(P_I, D))
        o[31] = clamp(s32(a2), -2**15, 2**15 - 1) & 0xFFFF
        o[32] = clamp(P_I, -128, 127) & 0xFF
        o[33] = clamp(s32(a2), 0, M32)
        o[34] = clamp(a3, 0, 2**31 - 1)
        o[35] = clamp(P_U, 0, 2**15 - 1)
        o[36] = clamp(P_I, 0, M32)
        o[37] = clamp(P_U, 0, 2**31 - 1)
        o[38] = f_sat(f_rint(a1, F, 'rpi'), F)
        o[39] = f_rint(pf, F, 'rni')
        o[40] = f_rint(ftz32(a1), F, 'rni')
        o[41] = f_rint(ftz32(a1), F, 'rzi')
        o[42:44] = split64(f_rint(d2, D, 'rpi'))
        o[44:46] = split64(f_rint(d2, D, 'rzi'))
        o[46:48] = split64(fcvt(pf, F, D))
        o[48] = fcvt(pf, F, H)
        o[49] = ftz32(fcvt(d2, D, F))
        return o

    r = rng(905)

    def a0(g):
        if g % 7 == 0:
            return r.choice([0x7FC00000, 0xFFC00001, 0x7F800000, 0xFF800000, 0x80000000,
                             0x46FFFE00, 0x47000000, 0xC7000100, 0x5F000000, 0xDF000001])
        return (r.getrandbits(1) << 31) | (r.randrange(100, 200) << 23) | r.getrandbits(23)

    ins = [[a0(g), rand_f32(r), r.getrandbits(32), r.getrandbits(32)] for g in range(N)]
    for g in range(0, N, 9):  # NaN, infinities and huge values as f64 for F2I.*.F64
        ins[g][3] = r.choice([0x7FF80000, 0xFFF00000, 0x7FF00000, 0x41F00000, 0xC1E00000])
    words_out = [0] * (50 * N)
    for g, w in enumerate(ins):
        for j, v in enumerate(k(g, w)):
            words_out[50 * g + j] = v & M32
    common.load_params = lambda setdir, kernel: [
        dict(ordinal=0, offset=0, size=8), dict(ordinal=1, offset=8, size=8),
        dict(ordinal=2, offset=16, size=4), dict(ordinal=3, offset=20, size=4),
        dict(ordinal=4, offset=24, size=4), dict(ordinal=5, offset=28, size=4)]
    write_io(D_DIR, 'm_cvt_forms', (2, 1, 1), (64, 1, 1),
             [('p_out', 'buffer', 'out'), ('p_in', 'buffer', 'in'), ('p_n', 'u32', N),
              ('p_f', 'f32', P_F), ('p_i', 's32', P_I), ('p_u', 'u32', P_U)],
             {'in': words([x for ws in ins for x in ws]), 'out': words([0] * (50 * N))},
             {'out': words(words_out)},
             notes='a0 includes NaN, infinities and out-of-range values (PTX cvt to integer '
                   'saturates, NaN gives 0); 16/8-bit results are narrow stores into zeroed '
                   'words; expected values from scripts/corpus/modifiers-ref.py')


# m_setp_forms's tests, in output order: (compare, type, a, b, boolean op or None). Operands:
# a0, a1 (u32 words), A = a1:a0, B = a3:a2 (64-bit), x0 = a2, x1 = a3 (f32), pf/pi/pu (the
# parameters), |x0|, or a literal. tests/corpus/modifiers/m_setp_forms.ptx is written from this
# list (per test a setp + selp + st, and again a setp guarding a store).
SETP_TESTS = [
    ('eq', 's32', 'a0', 'a1', None), ('ne', 's32', 'a0', 'a1', None),
    ('lt', 's32', 'a0', 'a1', None), ('le', 's32', 'a0', 'a1', None),
    ('gt', 's32', 'a0', 'a1', None), ('ge', 's32', 'a0', 'a1', None),
    ('eq', 'u32', 'a0', 'a1', None), ('ne', 'u32', 'a0', 'a1', None),
    ('lt', 'u32', 'a0', 'a1', None), ('le', 'u32', 'a0', 'a1', None),
    ('gt', 'u32', 'a0', 'a1', None), ('ge', 'u32', 'a0', 'a1', None),
    ('lt', 's32', 'a0', '-5', None), ('eq', 's32', 'a0', '17', None),
    ('ge', 'u32', 'a0', '1000', None), ('lt', 'u32', 'a0', 'pu', None),
    ('ge', 's32', 'a0', 'pi', None), ('ne', 'u32', 'a0', 'pu', None),
    ('eq', 's64', 'A', 'B', None), ('ne', 's64', 'A', 'B', None),
    ('lt', 's64', 'A', 'B', None), ('le', 's64', 'A', 'B', None),
    ('gt', 's64', 'A', 'B', None), ('ge', 's64', 'A', 'B', None),
    ('eq', 'u64', 'A', 'B', None), ('ne', 'u64', 'A', 'B', None),
    ('lt', 'u64', 'A', 'B', None), ('le', 'u64', 'A', 'B', None),
    ('gt', 'u64', 'A', 'B', None), ('ge', 'u64', 'A', 'B', None),
    ('lt', 's64', 'A', '0', None), ('gt', 'u64', 'A', '4294967296', None),
    ('lt', 'and.s32', 'a0', 'a1', ('', 'q')), ('ge', 'or.u32', 'a0', 'a1', ('', '!q')),
    ('ne', 'xor.s32', 'a0', 'a1', ('', 'q')), ('lt', 'and.u64', 'A', 'B', ('', '!q')),
    ('eq', 'f32', 'x0', 'x1', None), ('ne', 'f32', 'x0', 'x1', None),
    ('lt', 'f32', 'x0', 'x1', None), ('le', 'f32', 'x0', 'x1', None),
    ('gt', 'f32', 'x0', 'x1', None), ('ge', 'f32', 'x0', 'x1', None),
    ('equ', 'f32', 'x0', 'x1', None), ('neu', 'f32', 'x0', 'x1', None),
    ('ltu', 'f32', 'x0', 'x1', None), ('leu', 'f32', 'x0', 'x1', None),
    ('gtu', 'f32', 'x0', 'x1', None), ('geu', 'f32', 'x0', 'x1', None),
    ('num', 'f32', 'x0', 'x1', None), ('nan', 'f32', 'x0', 'x1', None),
    ('eq', 'ftz.f32', 'x0', 'x1', None), ('ne', 'ftz.f32', 'x0', 'x1', None),
    ('lt', 'ftz.f32', 'x0', 'x1', None), ('ge', 'ftz.f32', 'x0', 'x1', None),
    ('gtu', 'ftz.f32', 'x0', 'x1', None), ('le', 'ftz.f32', 'x0', 'pf', None),
    ('gt', 'f32', '|x0|', '0f3FC00000', None), ('lt', 'f32', 'x0', '0fC0200000', None),
    ('geu', 'f32', 'x0', 'pf', None), ('neu', 'f32', 'x0', 'pf', None),
    ('gt', 'or.f32', 'x0', 'x1', ('', 'q')), ('ge', 'xor.f32', 'x0', 'x1', ('', '!q')),
    ('lt', 'and.f32', 'x0', 'pf', ('', '!q')), ('gtu', 'and.ftz.f32', '|x0|', 'pf', ('', 'q')),
]


def setp_value(cmp, ty, a, b, q):
    """PTX setp (and its boolean combination with q) on the operand values."""
    parts = ty.split('.')
    bop = parts[0] if parts[0] in ('and', 'or', 'xor') else None
    parts = [x for x in parts if x not in ('and', 'or', 'xor')]
    base = parts[-1]
    ftz_ = 'ftz' in parts
    if base == 'f32':
        if ftz_:
            a, b = ftz32(a), ftz32(b)
        ka, va, _ = dec(a, 'f32')
        kb, vb, _ = dec(b, 'f32')
        nan = ka == 'nan' or kb == 'nan'
        def key(k, v, bits):
            return float('inf') * (-1 if bits >> 31 else 1) if k == 'inf' else v
        x, y = (None, None) if nan else (key(ka, va, a), key(kb, vb, b))
        if cmp in ('num', 'nan'):
            r = (not nan) if cmp == 'num' else nan
        else:
            unordered = cmp.endswith('u') and cmp != 'nu'
            c = cmp[:-1] if unordered else cmp
            if nan:
                r = unordered
            else:
                r = {'eq': x == y, 'ne': x != y, 'lt': x < y, 'le': x <= y, 'gt': x > y,
                     'ge': x >= y}[c]
    else:
        bits = int(base[1:])
        if base[0] == 's':
            sx = lambda v: v - (1 << bits) if v >> (bits - 1) & 1 else v
            a, b = sx(a), sx(b)
        r = {'eq': a == b, 'ne': a != b, 'lt': a < b, 'le': a <= b, 'gt': a > b,
             'ge': a >= b}[cmp]
    if bop == 'and':
        r = r and q
    elif bop == 'or':
        r = r or q
    elif bop == 'xor':
        r = r != q
    return int(r)


@ref
def m_setp_forms():
    """ISETP / FSETP forms: SETP_TESTS on random and edge-case operands."""
    from common import f32b
    P_F, P_I, P_U = -2.5, -77777, 3000000000
    r = rng(906)
    sp = [0x00000000, 0x80000000, 0x7FC00000, 0xFFC00001, 0x7F800000, 0xFF800000, 0x00000001,
          0x807FFFFF, 0x3FC00000, 0xBFC00000, 0xC0200000, 0xC0200001, 0x3F800000]
    ints = [0, 1, 17, 1000, 999, M32, 0x80000000, 0x7FFFFFFF, (-5) & M32, (-6) & M32, P_U,
            P_U - 1, P_I & M32]

    def w(pool):
        return r.choice(pool) if r.random() < 0.4 else r.getrandbits(32)

    ins = []
    for g in range(N):
        a0, a1 = w(ints), w(ints)
        a2, a3 = w(sp), w(sp)
        if g % 5 == 0:
            a1 = a0  # equal pairs
        if g % 6 == 0:
            a3 = a2
        if g % 11 == 0:
            a2, a3 = a0, a1  # equal 64-bit pairs
        ins.append([a0, a1, a2, a3])
    val = {'pf': f32b(P_F), 'pi': P_I & M32, 'pu': P_U}

    def k(g, ws):
        a0, a1, a2, a3 = ws
        env = dict(val, a0=a0, a1=a1, A=a1 << 32 | a0, B=a3 << 32 | a2, x0=a2, x1=a3)
        env['|x0|'] = a2 & 0x7FFFFFFF
        q = a2 & 1 == 1
        out = []
        for cmp, ty, a, b, bop in SETP_TESTS:
            def opv(o):
                if o in env:
                    return env[o]
                if o.startswith('0f'):
                    return int(o[2:], 16)
                return int(o) & (M64 if '64' in ty else M32)
            qq = (not q) if bop and bop[1] == '!q' else q
            out.append(setp_value(cmp, ty, opv(a), opv(b), qq))
        return out

    common.load_params = lambda setdir, kernel: [
        dict(ordinal=0, offset=0, size=8), dict(ordinal=1, offset=8, size=8),
        dict(ordinal=2, offset=16, size=4), dict(ordinal=3, offset=20, size=4),
        dict(ordinal=4, offset=24, size=4), dict(ordinal=5, offset=28, size=4)]
    nt = len(SETP_TESTS)
    outw = []
    for g, ws in enumerate(ins):
        v = k(g, ws)
        outw += v + v  # setp + selp, then the same tests guarding stores
    write_io(D_DIR, 'm_setp_forms', (2, 1, 1), (64, 1, 1),
             [('p_out', 'buffer', 'out'), ('p_in', 'buffer', 'in'), ('p_n', 'u32', N),
              ('p_f', 'f32', P_F), ('p_i', 's32', P_I), ('p_u', 'u32', P_U)],
             {'in': words([x for ws in ins for x in ws]), 'out': words([0] * (2 * nt * N))},
             {'out': words(outw)},
             notes='float operands include NaNs, infinities, signed zeros and subnormals (.ftz); '
                   'expected values from scripts/corpus/modifiers-ref.py')


@ref
def m_float_forms():
    """f32 / f64 arithmetic forms of m_float_forms.ptx: rounding modes, .sat, .ftz, |x|, -x,
    immediates and parameter operands."""
    from common import f32b, f64b, f_mul, f_fma, f_sub
    P_F, P_D = 0.7853981852531433, -2.718281828459045
    pf, pd = f32b(P_F), f64b(P_D)
    F, D = 'f32', 'f64'
    abs32 = lambda b: b & 0x7FFFFFFF
    neg32 = lambda b: b ^ 0x80000000
    neg64 = lambda b: b ^ (1 << 63)

    def fz(fn):  # an .ftz operation: subnormal inputs and result flushed
        return lambda *a: ftz32(fn(*[ftz32(x) for x in a]))

    def k(g, w):
        x, y, z, w3 = w
        X, Y = y << 32 | x, w3 << 32 | z
        add = lambda a, b, m='rn': f_add(a, b, F, m)
        mul = lambda a, b, m='rn': f_mul(a, b, F, m)
        fma = lambda a, b, c, m='rn': f_fma(a, b, c, F, m)
        o = [fz(lambda a, b: add(a, b, 'rz'))(x, y),
             fz(lambda a, b: add(a, b, 'rz'))(x, pf),
             add(x, f32b(0.1), 'rm'),
             f_sat(add(x, pf, 'rp'), F),
             f_sat(add(x, pf), F),
             f_sat(fz(lambda a, b: f_sub(a, b, F))(x, y), F),
             f_sat(fz(lambda a, b: f_sub(a, b, F))(x, pf), F),
             add(x, abs32(y)),
             add(x, abs32(pf)),
             f_sub(x, pf, F),
             ftz32(add(neg32(abs32(ftz32(x))), 0)),
             mul(x, pf),
             fz(lambda a, b: mul(a, b, 'rz'))(x, y),
             fz(lambda a, b: mul(a, b, 'rz'))(x, pf),
             f_sat(fz(mul)(x, f32b(1.5)), F),
             f_sat(mul(x, f32b(-1.5), 'rm'), F),
             mul(x, pf, 'rp'),
             fma(x, 0xC0490FDB, z),
             fma(x, pf, z),
             fma(x, neg32(pf), z),
             fz(lambda a, b, c: fma(a, b, c, 'rz'))(x, y, z),
             fz(lambda a, b, c: fma(a, b, c, 'rz'))(x, y, pf),
             f_sat(fz(fma)(x, y, z), F),
             f_sat(fz(fma)(x, pf, z), F),
             f_sat(fma(x, f32b(3.0), z, 'rm'), F),
             fma(x, y, pf, 'rp'),
             fma(x, pf, 0)]
        o += split64(f_add(neg64(X), Y, D))
        o += split64(f_add(X, pd, D))
        o += split64(f_add(X, f64b(0.1), D, 'rm'))
        o += split64(f_add(X, pd, D, 'rp'))
        o += split64(f_add(X, pd, D, 'rz'))
        o += split64(f_mul(X, pd, D, 'rp'))
        o += split64(f_mul(X, 0x400921FB54442D18, D, 'rz'))
        o += split64(f_fma(X, Y, pd, D, 'rz'))
        o += split64(f_fma(X, f64b(3.0), Y, D, 'rm'))
        return o

    r = rng(907)

    def f32v():
        c = r.random()
        if c < 0.15:
            return r.choice([0, 0x80000000, 0x3F800000, 0xBF800000, 0x3F000000, 0x00000001,
                             0x80400000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F7FFFFF, 0x3F800001])
        if c < 0.25:
            return r.getrandbits(23) | r.getrandbits(1) << 31
        return (r.getrandbits(1) << 31) | (r.randrange(100, 160) << 23) | r.getrandbits(23)

    def hi_word():
        # The high words of X and Y: normal f64 of exponent 2^-479 .. 2^1026 (products may
        # overflow, never underflow; see the notes).
        return (r.getrandbits(1) << 31) | (r.randrange(68, 241) << 23) | r.getrandbits(23)

    ins = [[f32v(), hi_word(), f32v(), hi_word()] for _ in range(N)]
    common.load_params = lambda setdir, kernel: [
        dict(ordinal=0, offset=0, size=8), dict(ordinal=1, offset=8, size=8),
        dict(ordinal=2, offset=16, size=4), dict(ordinal=3, offset=20, size=4),
        dict(ordinal=4, offset=24, size=8)]
    outw = []
    for g, ws in enumerate(ins):
        v = k(g, ws)
        assert len(v) == 45
        outw += [x & M32 for x in v]
    write_io(D_DIR, 'm_float_forms', (2, 1, 1), (64, 1, 1),
             [('p_out', 'buffer', 'out'), ('p_in', 'buffer', 'in'), ('p_n', 'u32', N),
              ('p_f', 'f32', P_F), ('p_d', 'f64', P_D)],
             {'in': words([x for ws in ins for x in ws]), 'out': words([0] * (45 * N))},
             {'out': words(outw)},
             notes='finite inputs with zeros, subnormals (.ftz) and values around 1 (.sat); f64 '
                   'operands X, Y are normal with exponents -479..1026 (products overflow, never '
                   'underflow: f64 directed rounding of underflowing products and of subnormal '
                   'operands is not covered, see tests/corpus/modifiers/README.md); expected '
                   'values from scripts/corpus/modifiers-ref.py')


@ref
def m_int_sel():
    """Integer adds and multiplies reading 16-bit halves (m_int_sel.ptx)."""
    def k(g, w):
        a, b, c, d = w
        o = [(a >> 16) + b + c, (b & 0xFFFF) + a + d, (c >> 16) + (d & 0xFFFF) + a,
             a - (d >> 16) - b]
        o += split64(((b << 32 | a) + (d << 32 | c) + (a >> 16)) & M64)
        o += [(a >> 16) * (c >> 16), (b >> 16) * d, (a >> 16) * b + c,
              (s32(b) >> 16) * s32(c), (a * (c >> 16)) >> 32,
              ((((d >> 16) + (c >> 16)) << 16) + c)]
        return [x & M32 for x in o]

    r = rng(908)
    sp = [0, 1, 0xFFFF, 0x10000, 0xFFFF0000, M32, 0x80000000, 0x7FFFFFFF, 0x8000, 0x7FFF8000]
    ins = [[r.choice(sp) if r.random() < 0.3 else r.getrandbits(32) for _ in range(4)]
           for _ in range(N)]
    elementwise(D, 'm_int_sel', ins, k, 12,
                notes='expected values from scripts/corpus/modifiers-ref.py')


def struct_f32(x):
    import struct
    return struct.unpack('<I', struct.pack('<f', x))[0]


if __name__ == '__main__':
    for name, fn in REFS.items():
        if not ONLY or name in ONLY:
            fn()
            print('wrote', os.path.join(D, name + '.io.json'))
