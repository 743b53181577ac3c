#!/usr/bin/env python3
"""Synthetic operand-kind siblings of compiler-emitted sm53 instructions, listed by nvdisasm.

Usage:  scripts/corpus/gen-extra-synth.py            (writes tests/corpus/extra/synth/)

NOT compiler output.  Maxwell ALU opcodes come in operand-kind families that differ only in the
top byte of the instruction word: register (0x58-0x5f), constant bank c[][] (0x48-0x4f), 20-bit
immediate (0x30-0x3f; the low bit of the byte is bit 56 = the immediate's sign) and
register/constant-swapped "R R R c" (0x50-0x57).  For every distinct compiler-emitted instruction
in tests/corpus/{sass,dksh,extra} (one prototype per top byte and printed mnemonic) this script
moves the top byte to each sibling family, asks nvdisasm 11.8 to disassemble the result, and keeps
a word when nvdisasm accepts it, prints the same base mnemonic, and the (mnemonic, operand-kind
signature) pair appears nowhere in the compiler-made corpus.  The kept words are written as one
raw binary (with a fixed scheduling word 0x007fbc03fde01fef in front of every three, so no
dual-issue) and listed in the usual TSV format.  Use them to test a decoder/printer/encoder on
operand forms compilers rarely emit; whether the hardware accepts every one was not checked.
"""
import glob, os, re, struct, subprocess, sys, tempfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import importlib.util

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
spec = importlib.util.spec_from_file_location('coverage', os.path.join(HERE, 'coverage.py'))
cov = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cov)
NVDISASM = os.environ.get('NVDISASM', '/tmp/xc/debs/x/usr/bin/nvdisasm')
CTRL = 0x007fbc03fde01fef
LINE_RE = re.compile(r'^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*(/\*.*\*/)?\s*$')


def pack(words):
    out = b''
    for i in range(0, len(words), 3):
        grp = words[i:i + 3]
        grp += [0x50b0000000070f00] * (3 - len(grp))
        out += struct.pack('<4Q', CTRL, *grp)
    return out


def dis(words, raw=False):
    with tempfile.NamedTemporaryFile(suffix='.bin') as f:
        f.write(pack(words))
        f.flush()
        p = subprocess.run([NVDISASM, '-b', 'SM53'] + (['-raw'] if raw else []) + [f.name], capture_output=True, text=True)
    if p.returncode != 0:
        return None
    res = {}
    for line in p.stdout.splitlines():
        m = LINE_RE.match(line)
        if m:
            off = int(m.group(1), 16)
            idx = (off // 32) * 3 + (off % 32) // 8 - 1
            t = m.group(2).strip().strip('{}').strip()
            res[idx] = re.sub(r'\s+', ' ', t.rstrip(';').rstrip())
    return [res.get(i) for i in range(len(words))]


def dis_many(words):
    """disassemble a list, isolating words nvdisasm rejects (-> None)."""
    if not words:
        return []
    r = dis(words)
    if r is not None:
        return r
    if len(words) == 1:
        return [None]
    h = (len(words) // 2) // 3 * 3 or 1
    return dis_many(words[:h]) + dis_many(words[h:])


def siblings(top):
    if 0x58 <= top <= 0x5f:
        reg = top
    elif 0x48 <= top <= 0x4f:
        reg = top + 0x10
    elif 0x30 <= top <= 0x3f:
        reg = 0x58 + (top - 0x30) // 2
    elif 0x50 <= top <= 0x57:
        reg = top + 8
    else:
        return []
    imm = 0x30 + 2 * (reg - 0x58)
    return [t for t in (reg, reg - 0x10, imm, imm + 1, reg - 8) if t != top]


def main():
    seen_forms = set()
    protos = {}
    for f, insns in cov.listings():
        if '/synth/' in f:
            continue
        encs = []
        # re-read encodings (TSV files have them; dksh text files carry them in /* 0x... */)
        for line in open(os.path.join(ROOT, f)):
            if line.startswith('#') or line.startswith('//'):
                continue
            c = line.rstrip('\n').split('\t')
            if len(c) >= 3 and re.fullmatch(r'[0-9a-f]{16}', c[1] or ''):
                if c[2] != '.ctrl':
                    encs.append((int(c[1], 16), c[2]))
            else:
                m = re.match(r'^\s+/\*[0-9a-f]{4,}\*/\s+\{?\s*(.*?)\s*;?\s*\}?\s*;?\s*/\* (0x[0-9a-f]{16}) \*/', line)
                if m:
                    encs.append((int(m.group(2), 16), m.group(1).rstrip(' ;}')))
        for enc, t in encs:
            full, sig = cov.parse(t)
            seen_forms.add((full.split('.')[0], sig))
            key = (enc >> 56, full)
            protos.setdefault(key, enc)
    cands = []
    for (top, full), enc in sorted(protos.items()):
        for t in siblings(top):
            cands.append(((enc & ((1 << 56) - 1)) | (t << 56), full))
    texts = dis_many([c[0] for c in cands])
    keep, forms = [], set()
    for (enc, pfull), t in zip(cands, texts):
        if not t:
            continue
        full, sig = cov.parse(t)
        b, pb = full.split('.')[0], pfull.split('.')[0]
        if b != pb or (b, sig) in seen_forms or (full, sig) in forms:
            continue
        forms.add((full, sig))
        keep.append(enc)
    outdir = os.path.join(ROOT, 'tests/corpus/extra/synth')
    os.makedirs(outdir, exist_ok=True)
    code = pack(keep)
    open(os.path.join(outdir, 'operand_forms.sm53.bin'), 'wb').write(code)
    with tempfile.NamedTemporaryFile(suffix='.bin') as f:
        f.write(code)
        f.flush()
        pretty = subprocess.run([NVDISASM, '-b', 'SM53', f.name], capture_output=True, text=True, check=True).stdout
        rawo = subprocess.run([NVDISASM, '-b', 'SM53', '-raw', f.name], capture_output=True, text=True, check=True).stdout
    def parse(out):
        res, pair = {}, {}
        for line in out.splitlines():
            m = LINE_RE.match(line)
            if m:
                t, off = m.group(2).strip(), int(m.group(1), 16)
                if t.startswith('{'):
                    pair[off] = '{'; t = t[1:].strip()
                if t.endswith('}'):
                    pair[off] = '}'; t = t[:-1].strip()
                res[off] = re.sub(r'\s+', ' ', t.rstrip(';').rstrip())
        return res, pair
    p, pairs = parse(pretty)
    r, _ = parse(rawo)
    lines = ['# SYNTHETIC (not compiler output): operand-kind siblings of compiler-emitted instructions, made by scripts/corpus/gen-extra-synth.py',
             '# listed by nvdisasm 11.8: nvdisasm -b SM53 [-raw] operand_forms.sm53.bin; columns as in tests/corpus/sass/README.md',
             '# every 32-byte bundle starts with the fixed scheduling word 0x007fbc03fde01fef (sass column = ".ctrl")']
    for off in range(0, len(code), 8):
        enc = int.from_bytes(code[off:off + 8], 'little')
        if off % 32 == 0:
            lines.append('0x%04x\t%016x\t.ctrl\t.ctrl\t-' % (off, enc))
        else:
            lines.append('0x%04x\t%016x\t%s\t%s\t%s' % (off, enc, p.get(off, '??'), r.get(off, p.get(off, '??')), pairs.get(off, '-')))
    open(os.path.join(outdir, 'operand_forms.sm53.sass'), 'w').write('\n'.join(lines) + '\n')
    print('%d prototypes, %d candidates, %d accepted by nvdisasm, %d new forms kept' %
          (len(protos), len(cands), sum(1 for t in texts if t), len(keep)))


if __name__ == '__main__':
    main()
