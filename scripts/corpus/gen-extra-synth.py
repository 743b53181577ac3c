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
dual-issue) and listed in the usual TSV format, in files named *.synth.tsv (not *.sass) so that
corpus tests opt in to them explicitly.
With --bits it instead flips every single bit of every prototype and keeps, at most CAP per
mnemonic, the words nvdisasm prints in a shape (register numbers and numbers abstracted) seen in
no compiler-made listing: single_bit_flips.sm53.synth.tsv.  Those include opcodes no compiler
here emits (CSET, VSETP, PEXIT, JMP, LONGJMP, IDE, ...) and reserved-bit combinations; they are
nvdisasm's text for those bits, not proof that the hardware runs them.  Use them to test a decoder/printer/encoder on
operand forms compilers rarely emit; whether the hardware accepts every one was not checked.
"""
import collections, glob, os, re, struct, subprocess, sys, tempfile
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


def unpair(t):
    """nvdisasm text without a dual-issue '{ ' / ' }' (DEPBAR's '{1}' set is kept) and ';'."""
    t = t.strip()
    t = re.sub(r'^\{\s+', '', t)
    t = re.sub(r'\s+\}$', '', t)
    return re.sub(r'\s+', ' ', t.rstrip(';').rstrip())


def pack(words):
    out = b''
    for i in range(0, len(words), 3):
        grp = words[i:i + 3]
        grp += [0x50b0000000070f00] * (3 - len(grp))
        out += struct.pack('<4Q', CTRL, *grp)
    return out


def dis_many(words, chunk=3000):
    """disassemble a list; words nvdisasm rejects come back as None (nvdisasm names their addresses)."""
    out = []
    for c0 in range(0, len(words), chunk):
        ws = list(words[c0:c0 + chunk])
        bad = set()
        while True:
            with tempfile.NamedTemporaryFile(suffix='.bin') as f:
                f.write(pack(ws))
                f.flush()
                p = subprocess.run([NVDISASM, '-b', 'SM53', f.name], capture_output=True, text=True)
            if p.returncode == 0:
                break
            addrs = [int(a, 16) for a in re.findall(r'at address (0x[0-9a-f]+)', p.stderr)]
            idx = [(a // 32) * 3 + (a % 32) // 8 - 1 for a in addrs if a % 32]
            if not idx or all(i in bad for i in idx):
                raise RuntimeError('nvdisasm failed: ' + p.stderr[:500])
            for i in idx:
                bad.add(i)
                ws[i] = 0x50b0000000070f00
        res = {}
        for line in p.stdout.splitlines():
            m = LINE_RE.match(line)
            if m:
                off = int(m.group(1), 16)
                i = (off // 32) * 3 + (off % 32) // 8 - 1
                res[i] = unpair(m.group(2))
        out += [None if i in bad else res.get(i) for i in range(len(ws))]
    return out


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


def shape(t):
    """instruction text with register numbers, immediates and addresses abstracted."""
    t = re.sub(r'\bR(\d+|Z)\b', 'R', t)
    t = re.sub(r'\b(P[0-6]|PT)\b', 'P', t)
    t = re.sub(r'-?0x[0-9a-f]+|\b\d+(\.\d+)?(e[+-]?\d+)?\b', 'I', t)
    return t


def main():
    bits = '--bits' in sys.argv
    seen_shapes = set()
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
                m = re.match(r'^\s+/\*[0-9a-f]{4,}\*/\s+(.*?)\s*/\* (0x[0-9a-f]{16}) \*/', line)
                if m:
                    encs.append((int(m.group(2), 16), unpair(m.group(1))))
        for enc, t in encs:
            full, sig = cov.parse(t)
            seen_forms.add((full.split('.')[0], sig))
            seen_shapes.add(shape(t))
            key = (enc >> 56, full)
            protos.setdefault(key, (enc, t))
    cands = []
    for (top, full), (enc, _) in sorted(protos.items()):
        if bits:
            for b in range(64):
                cands.append((enc ^ (1 << b), full))
        else:
            for t in siblings(top):
                cands.append(((enc & ((1 << 56) - 1)) | (t << 56), full))
    if bits:
        return main_bits(cands, protos, seen_shapes)
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
    write_set(keep, 'operand_forms', 'operand-kind siblings (register / c[][] / immediate / swapped) of compiler-emitted '
              'instructions whose (mnemonic, operand kinds) form appears in no compiler-made listing; made by scripts/corpus/gen-extra-synth.py')
    print('%d prototypes, %d candidates, %d accepted by nvdisasm, %d new forms kept' %
          (len(protos), len(cands), sum(1 for t in texts if t), len(keep)))


def write_set(keep, name, comment):
    outdir = os.path.join(ROOT, 'tests/corpus/extra/synth')
    os.makedirs(outdir, exist_ok=True)
    code = pack(keep)
    open(os.path.join(outdir, name + '.sm53.bin'), 'wb').write(code)
    txt = dis_many(keep)
    with tempfile.NamedTemporaryFile(suffix='.bin') as f:
        f.write(code)
        f.flush()
        rawo = subprocess.run([NVDISASM, '-b', 'SM53', '-raw', f.name], capture_output=True, text=True, check=True).stdout
    raw = {}
    for line in rawo.splitlines():
        m = LINE_RE.match(line)
        if m:
            raw[int(m.group(1), 16)] = unpair(m.group(2))
    lines = ['# SYNTHETIC (not compiler output): ' + comment,
             '# listed by nvdisasm 11.8: nvdisasm -b SM53 [-raw] %s.sm53.bin; columns as in tests/corpus/sass/README.md' % name,
             '# every 32-byte bundle starts with the fixed scheduling word 0x007fbc03fde01fef (sass column = ".ctrl")']
    for off in range(0, len(code), 8):
        enc = int.from_bytes(code[off:off + 8], 'little')
        if off % 32 == 0:
            lines.append('0x%04x\t%016x\t.ctrl\t.ctrl\t-' % (off, enc))
        else:
            i = (off // 32) * 3 + (off % 32) // 8 - 1
            t = txt[i] if i < len(txt) and txt[i] else 'NOP'
            lines.append('0x%04x\t%016x\t%s\t%s\t-' % (off, enc, t, raw.get(off, t)))
    open(os.path.join(outdir, name + '.sm53.synth.tsv'), 'w').write('\n'.join(lines) + '\n')


def main_bits(cands, protos, seen_shapes):
    texts = dis_many([c[0] for c in cands])
    base_text = {full: t for (top, full), (enc, t) in protos.items()}
    keep, shapes, per = [], set(), collections.Counter()
    for (enc, pfull), t in zip(cands, texts):
        if not t:
            continue
        sh = shape(t)
        b = cov.parse(t)[0].split('.')[0]
        if sh in seen_shapes or sh in shapes or per[b] >= CAP:
            continue
        shapes.add(sh)
        per[b] += 1
        keep.append(enc)
    write_set(keep, 'single_bit_flips', 'single-bit flips of compiler-emitted instructions whose text nvdisasm prints in a shape '
              '(registers/numbers abstracted) seen nowhere else, at most %d per mnemonic; made by scripts/corpus/gen-extra-synth.py --bits' % CAP)
    print('%d prototypes, %d candidates, %d accepted by nvdisasm, %d new shapes kept, mnemonics: %d' %
          (len(protos), len(cands), sum(1 for t in texts if t), len(keep), len(per)))


CAP = 12

if __name__ == '__main__':
    main()
