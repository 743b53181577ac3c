#!/usr/bin/env python3
"""Expected outputs of video-instruction kernels for chosen inputs, computed from the PTX ISA's
pseudo-code of the video instructions (PTX ISA §9.7.18 scalar and SIMD video instructions),
independently of dmsh's translation. Writes, in the sass-corpus-io/1 format:

* tests/corpus/video/video_ops.io.json  (tests/corpus/sass/video_ops: p_out, p_in, p_n)
* tests/corpus/video/x_vset_imm.io.json (tests/corpus/extra/ptx/x_vset_imm: in place on p_out)
* tests/corpus/video/x_video_imm.io.json (tests/corpus/extra/ptx/x_video_imm: in place on p_out)

Usage: scripts/corpus/video-ref.py [OUT_DIR]
"""
import base64, json, os, random, struct, sys

M32 = 0xFFFFFFFF
N = 128


def s32(x):
    x &= M32
    return x - (1 << 32) if x >> 31 else x


def sext(x, bits):
    x &= (1 << bits) - 1
    return x - (1 << bits) if x >> (bits - 1) else x


def part(x, sel, signed):
    """partSelectSignExtend: sel = 'b0'..'b3', 'h0', 'h1' or None (word)."""
    if sel is None:
        off, n = 0, 32
    elif sel[0] == 'b':
        off, n = 8 * int(sel[1]), 8
    else:
        off, n = 16 * int(sel[1]), 16
    v = (x >> off) & ((1 << n) - 1)
    return sext(v, n) if signed else v


def sat(v, signed, bits=32):
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    return max(lo, min(hi, v))


def lanes(x, n):
    w = 32 // n
    return [(x >> (w * k)) & ((1 << w) - 1) for k in range(n)]


def join(vs):
    w = 32 // len(vs)
    r = 0
    for k, v in enumerate(vs):
        r |= (v & ((1 << w) - 1)) << (w * k)
    return r


def kernel(a, b, c):
    o = []
    # vadd.s32.s32.s32 d, a, b
    o.append(s32(a) + s32(b))
    # vsub.u32.u32.s32.sat d, a.b1, b.h0
    o.append(sat(part(a, 'b1', False) - part(b, 'h0', True), False))
    # vabsdiff.u32.u32.u32.add d, a.b0, b.b2, c
    o.append(abs(part(a, 'b0', False) - part(b, 'b2', False)) + c)
    # vmin.s32.s32.s32.max d, a, b, c  (secondary max in the destination's signedness)
    o.append(max(min(s32(a), s32(b)), s32(c)))
    # vmax.u32.u32.u32 d, a.h1, b.h1
    o.append(max(part(a, 'h1', False), part(b, 'h1', False)))
    # vshl.u32.u32.u32.clamp d, a, b: tb > 32 -> 32
    tb = min(b, 32)
    o.append(a << tb)
    # vshr.s32.s32.u32.wrap d, a, b: tb & 0x1f, signed shift fills with the sign
    o.append(s32(a) >> (b & 31))
    # vmad.s32.s32.s32 d, a.h0, b.h0, c: signed product plus sign-extended c
    o.append(part(a, 'h0', True) * part(b, 'h0', True) + s32(c))
    # vset.s32.u32.lt d, a, b
    o.append(1 if s32(a) < b else 0)
    # vadd2.s32.s32.s32 d, a, b, c: per half, no saturation, mask .h10 (c not used)
    o.append(join([sext(x, 16) + sext(y, 16) for x, y in zip(lanes(a, 2), lanes(b, 2))]))
    # vsub4.u32.u32.u32.sat d, a, b, c: per byte, clamped to 0..255
    o.append(join([sat(x - y, False, 8) for x, y in zip(lanes(a, 4), lanes(b, 4))]))
    # vavrg4.u32.u32.u32 d, a, b, c: per byte (x + y + 1) >> 1
    o.append(join([(x + y + 1) >> 1 for x, y in zip(lanes(a, 4), lanes(b, 4))]))
    # vabsdiff2.u32.u32.u32.add d, a, b, c: sum of the per-half |x - y|, plus c
    o.append(sum(abs(x - y) for x, y in zip(lanes(a, 2), lanes(b, 2))) + c)
    # vmax4.s32.s32.s32 d, a, b, c: per byte signed maximum
    o.append(join([max(sext(x, 8), sext(y, 8)) for x, y in zip(lanes(a, 4), lanes(b, 4))]))
    return [v & M32 for v in o]


def inputs():
    r = random.Random(53)
    edge = [0, 1, 2, 31, 32, 33, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFF,
            0x80000000, 0xFFFFFFFF, 0xFFFFFFFE, 0x80008080, 0x7F7F7F7F, 0x01FF80FE]
    ins = []
    for i in range(N):
        ins.append([r.choice(edge) if r.random() < 0.4 else r.getrandbits(32) for _ in range(3)])
    return ins


def b64(ws):
    return base64.b64encode(struct.pack('<%dI' % len(ws), *ws)).decode()


def vset_imm(a, b, c, d):
    """x_vset_imm: four vset with constant operands (5, 0x1234), in place."""
    r10 = 1 if part(a, 'h1', False) < 0x1234 else 0                      # vset.u32.u32.lt
    r11 = (1 if part(b, 'b2', True) != 5 else 0) + r10                   # vset.s32.s32.ne.add
    r12 = min(1 if part(c, 'b3', False) >= 0x1234 else 0, r11)           # vset.u32.s32.ge.min
    t = 1 if d == 5 else 0                                               # vset.u32.u32.eq
    r13 = (r12 & ~0xFF00) | (t << 8)                                     # ... %r13.b1 merged into c = %r12
    return [v & M32 for v in (r10, r11, r12, r13)]


def video_imm(a, b, c, d):
    """x_video_imm (see its .ptx), in place: word 0 conditionally, word 1."""
    r10 = (a + 5) & M32                                                  # vadd.u32.u32.u32
    r11 = (abs(part(b, 'b1', True) - 0x1234) + r10) & M32                # vabsdiff.s32.s32.s32.add
    r12 = min(r11, 5)                                                    # vmin.u32.u32.u32
    p1 = a < b                                                           # vset.u32.u32.lt != 0
    p2 = not (part(c, 'b1', True) >= part(d, 'b2', True))                # vset.s32.s32.ge == 0
    w0 = r12 if (p1 and p2) else a
    r15 = (a << 7) & M32                                                 # vshl.u32.u32.u32.wrap
    r16 = (r15 * 5 + 0x1234) & M32                                       # vmad.u32.u32.u32
    r17 = 1 if c > 5 else 0                                              # vset.u32.u32.gt
    r18 = (1 if part(d, 'b1', True) <= 0x1234 else 0) + r17              # vset.s32.s32.le.add
    r19 = a >> 9                                                         # vshr.u32.u32.u32.clamp
    r20 = ((part(b, 'h1', True) >> 5) + r19) & M32                       # vshr.s32.s32.u32.wrap.add
    r21 = max(s32(c), 0x1234)                                            # vmax.s32.s32.s32
    r22 = max(d - 5, 0)                                                  # vsub.u32.u32.u32.sat
    w1 = (r16 + r18 + r20 + r21 + r22) & M32
    return [w0, w1, c, d]


def in_place(name, fn, params, seed):
    r = random.Random(seed)
    edge = [0, 1, 5, 0x1234, 0x1235, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF,
            0x80000000, 0xFFFFFFFF, 0x12341234, 0x05050505, 0x80808080]
    ins = [[r.choice(edge) if r.random() < 0.5 else r.getrandbits(32) for _ in range(4)]
           for _ in range(N)]
    exp = [w for t in ins for w in fn(*t)]
    ps = [{'name': 'p_out', 'ordinal': 0, 'offset': 0, 'size': 8, 'kind': 'buffer', 'buffer': 'out'}]
    if params > 1:
        ps.append({'name': 'p_in', 'ordinal': 1, 'offset': 8, 'size': 8, 'kind': 'buffer',
                   'buffer': 'in'})
    bufs = {'out': {'size': 16 * N, 'init_b64': b64([w for t in ins for w in t])}}
    if params > 1:
        bufs['in'] = {'size': 16, 'init_b64': b64([0] * 4)}
    return {
        'format': 'sass-corpus-io/1',
        'kernel': name,
        'grid': [1, 1, 1],
        'block': [N, 1, 1],
        'dynamic_shared_bytes': 0,
        'params': ps,
        'param_buffer_hex_without_pointers': '00' * (8 * params),
        'buffers': bufs,
        'expected': {'out': {'size': 16 * N, 'b64': b64(exp)}},
        'compare': {'out': 'bitexact'},
        'notes': 'expected values from the PTX ISA pseudo-code of the video instructions '
                 '(scripts/corpus/video-ref.py), not from dmsh; thread i works in place on words '
                 '4i..4i+3 (the kernel indexes by tid.x only, so one block of 128)',
    }


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'corpus', 'video')
    ins = inputs()
    exp = [w for a, b, c in ins for w in kernel(a, b, c)]
    io = {
        'format': 'sass-corpus-io/1',
        'kernel': 'video_ops',
        'grid': [2, 1, 1],
        'block': [64, 1, 1],
        'dynamic_shared_bytes': 0,
        'params': [
            {'name': 'p_out', 'ordinal': 0, 'offset': 0, 'size': 8, 'kind': 'buffer', 'buffer': 'out'},
            {'name': 'p_in', 'ordinal': 1, 'offset': 8, 'size': 8, 'kind': 'buffer', 'buffer': 'in'},
            {'name': 'p_n', 'ordinal': 2, 'offset': 16, 'size': 4, 'kind': 'u32', 'value': N,
             'hex': struct.pack('<I', N).hex()},
        ],
        'param_buffer_hex_without_pointers': '00' * 16 + struct.pack('<I', N).hex(),
        'buffers': {
            'in': {'size': 12 * N, 'init_b64': b64([w for t in ins for w in t])},
            'out': {'size': 56 * N, 'init_b64': b64([0] * (14 * N))},
        },
        'expected': {'out': {'size': 56 * N, 'b64': b64(exp)}},
        'compare': {'out': 'bitexact'},
        'notes': 'expected values from the PTX ISA pseudo-code of the video instructions '
                 '(scripts/corpus/video-ref.py), not from dmsh',
    }
    files = {
        'video_ops': io,
        'x_vset_imm': in_place('x_vset_imm', vset_imm, 1, 54),
        'x_video_imm': in_place('x_video_imm', video_imm, 2, 55),
    }
    for name, j in files.items():
        with open(os.path.join(out_dir, name + '.io.json'), 'w') as f:
            json.dump(j, f, indent=1)
            f.write('\n')


if __name__ == '__main__':
    main()
