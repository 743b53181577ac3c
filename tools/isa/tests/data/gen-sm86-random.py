#!/usr/bin/env python3
"""Random operand and modifier bits for every Ampere form, listed by nvdisasm 13.5 (-b SM86).

Usage (from the repository root; tools are never committed):

    cargo run --release -p dmsh-isa --example ampere_forms > /tmp/forms86.txt
    NVDISASM=/path/to/nvdisasm tools/isa/tests/data/gen-sm86-random.py /tmp/forms86.txt FAMILY...

FAMILY: a file of tools/isa/src/ampere/ (int, uniform, float, mem, tex, ctrl); one output per
family, `random_fields.FAMILY.sm86.synth.tsv`, for the forms that file defines.

nvdisasm 13.5: PyPI `nvidia-cuda-nvdisasm` (nvidia/cu13/bin/nvdisasm).

NOT compiler output.  For every form of the table, SAMPLES words: the form's fixed bits with
every other bit random (the guard, the operands, the modifiers, the `Reserved` bits), the
scheduling field cleared to stall 1 (no barriers, no reuse).  Each form's words come from an RNG seeded
with its name, so they change only when the form does.  nvdisasm lists each word it accepts; the
words it rejects (it stops at the first one, naming its address) are dropped and counted in
the header.  Output: the corpus TSV format (offset, encoding,
sass, sass_raw, dual).  A seeded RNG makes the output depend only on the table and the tool.
"""
import os, random, re, subprocess, sys, tempfile

NVDISASM = os.environ.get('NVDISASM', 'nvdisasm')
HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = int(os.environ.get('SAMPLES', '8'))
CTRL = ((1 << 23) - 1) << 105
# Stall 1, no write or read barrier (7): nvdisasm 13.5 rejects a write barrier on an
# instruction without a destination (every store, RED, MEMBAR, CCTL, AST, ...).
NEUTRAL = 0x1 << 105 | 0x7 << 110 | 0x7 << 113
NOP = 0x918 | 7 << 12
LINE = re.compile(r'^\s*/\*([0-9a-f]{4,})\*/\s*(.*?)\s*;?\s*$')
ERR = re.compile(r'at address 0x([0-9a-fA-F]+)')


def version():
    out = subprocess.run([NVDISASM, '--version'], capture_output=True, text=True).stdout
    return out.strip().splitlines()[-1]


def listing(words):
    """nvdisasm's text per word (None where it rejects the word)."""
    words = list(words)
    bad = set()
    while True:
        with tempfile.NamedTemporaryFile(suffix='.bin', delete=False) as f:
            for i, w in enumerate(words):
                f.write((NOP if i in bad else w).to_bytes(16, 'little'))
            name = f.name
        r = subprocess.run([NVDISASM, '-b', 'SM86', '-raw', name], capture_output=True, text=True)
        os.unlink(name)
        if r.returncode == 0:
            break
        m = ERR.search(r.stderr)
        if not m:
            raise SystemExit('nvdisasm failed without an address: ' + r.stderr)
        a = int(m.group(1), 16) // 16
        if a in bad or a >= len(words):
            raise SystemExit('nvdisasm keeps failing at %#x' % (a * 16))
        bad.add(a)
    texts = {}
    for l in r.stdout.splitlines():
        m = LINE.match(l)
        if m:
            texts[int(m.group(1), 16) // 16] = m.group(2).rstrip(' ;').strip()
    return [None if i in bad else texts.get(i) for i in range(len(words))]


def family_forms(family):
    """The form names a family file defines."""
    path = os.path.join(HERE, '..', '..', 'src', 'ampere', family + '.tbl')
    names = set()
    for l in open(path):
        m = re.match(r'([A-Z0-9_]+)\s+0x[0-9a-fA-F]+\s', l)
        if m:
            names.add(m.group(1))
    return names


def main():
    for family in sys.argv[2:]:
        generate(family)


def generate(family):
    names = family_forms(family)
    forms = [l.split() for l in open(sys.argv[1]) if l.strip() and l.split()[0] in names]
    words = []
    for name, mask, value in forms:
        mask, value = int(mask, 16), int(value, 16)
        rng = random.Random('sm86:' + name)
        for _ in range(SAMPLES):
            r = rng.getrandbits(128)
            w = value | (r & ~mask & ~CTRL) | NEUTRAL
            words.append(w)
    texts = []
    for k in range(0, len(words), 128):
        texts += listing(words[k:k + 128])
    # Offsets as nvdisasm saw them (each batch of 128 starts at 0): branch targets print
    # relative to them.
    kept = [((i % 128) * 16, w, t) for i, (w, t) in enumerate(zip(words, texts)) if t is not None]
    out = os.path.join(HERE, 'random_fields.%s.sm86.synth.tsv' % family)
    with open(out, 'w') as f:
        f.write('# SYNTHETIC (not compiler output): the fixed bits of every form of tools/isa/src/ampere/%s.tbl '
                'with random other bits (scheduling: stall 1, no barriers); made by tools/isa/tests/data/gen-sm86-random.py\n' % family)
        f.write('# listed by nvdisasm %s: nvdisasm -b SM86 -raw; %d of %d words accepted '
                '(the rest rejected by nvdisasm, dropped)\n' % (version(), len(kept), len(words)))
        f.write('# columns: offset(hex)\tencoding(hex)\tsass\tsass_raw\tdual\n')
        for off, w, t in kept:
            f.write('0x%04x\t%032x\t%s\t%s\t-\n' % (off, w, t, t))
    print('%s: %d of %d words' % (out, len(kept), len(words)))


main()
