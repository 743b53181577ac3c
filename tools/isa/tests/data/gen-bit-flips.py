#!/usr/bin/env python3
"""Single-bit flips of one word per instruction form, listed by nvdisasm 12.4 (-b SM53).

Usage (from the repository root; tools are never committed):

    cargo run --release -p dmsh-isa --example form_samples -- tests/corpus > /tmp/forms.txt
    NVDISASM=/path/to/nvdisasm tools/isa/tests/data/gen-bit-flips.py /tmp/forms.txt

    # zero_padding.sm53.sass: a ptxas kernel followed by two all-zero 32-byte groups
    NVDISASM=... tools/isa/tests/data/gen-bit-flips.py --padding tests/corpus/sass/shared_transpose.sm53.bin

nvdisasm 12.4 ships with PyPI `triton==3.1.0` (triton/backends/nvidia/bin/nvdisasm).

NOT compiler output.  For every form of the table the script takes one word (the first one
of that form in tests/corpus listings, else the form's fixed bits with guard PT) and flips, one
at a time, every bit that is not a named operand or modifier (the fixed bits and the form's
`Reserved` bits), plus the word with all its `Reserved` bits flipped and three random subsets
of them.  Each word keeps its own scheduling field with yield and reuse cleared (no dual
issue, no texture-phase marker, no .reuse).  nvdisasm decides:

* `ignored_bits.sm53.sass`: the base words and every variant nvdisasm prints exactly as the
  base (bits it ignores), for bases nvdisasm does not call reserved (`INVALID...`, `???`).  The corpus test requires 100 % on it: every such bit must be a field
  (`Reserved`) so that the word decodes, prints as nvdisasm prints it and re-encodes exactly.
* `bit_flips.sm53.synth.tsv`: every other variant nvdisasm prints (different text): reported,
  not failed on (reserved values, other opcodes, operands the table does not model).

Variants nvdisasm rejects are dropped.  Both files use the corpus TSV format
(offset, encoding, sass, sass_raw, dual; `.ctrl` rows every 32 bytes).
"""
import os, random, re, struct, subprocess, sys, tempfile

NVDISASM = os.environ.get('NVDISASM', 'nvdisasm')
HERE = os.path.dirname(os.path.abspath(__file__))
NOP = 0x50b0000000070f00
NEUTRAL = 0x0007e1  # stall 1, no barriers, no wait, no reuse
LINE = re.compile(r'^\s*/\*([0-9a-f]{4,})\*/\s*(.*?)\s*(/\* 0x[0-9a-f]{16} \*/)?\s*$')
ERR = re.compile(r'(.*) at address 0x([0-9a-fA-F]+)')


def clean(t):
    """nvdisasm's text with blanks collapsed and the trailing ';' removed."""
    return ' '.join(t.strip().rstrip(';').split())


def norm(t):
    """For comparison: also without braces (DEPBAR's scoreboard set)."""
    return clean(t.replace('{', ' ').replace('}', ' '))


def pack(items):
    """(word, sched) list -> bytes with a scheduling word in front of every three; the byte
    offset of each item."""
    data, offs = [], []
    for g in range(0, len(items), 3):
        grp = list(items[g:g + 3])
        grp += [(NOP, NEUTRAL)] * (3 - len(grp))
        data.append(grp[0][1] | grp[1][1] << 21 | grp[2][1] << 42)
        for w, _ in grp:
            offs.append(len(data) * 8)
            data.append(w)
    return b''.join(struct.pack('<Q', x) for x in data), offs[:len(items)]


def nvdisasm(blob, raw=False):
    with tempfile.NamedTemporaryFile(suffix='.bin') as f:
        f.write(blob)
        f.flush()
        args = [NVDISASM, '-b', 'SM53', '-hex'] + (['-raw'] if raw else []) + [f.name]
        r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        return None, [int(a, 16) for _, a in ERR.findall(r.stderr)] or [-1]
    texts = {}
    for l in r.stdout.splitlines():
        m = LINE.match(l)
        if m:
            texts[int(m.group(1), 16)] = m.group(2)
    return texts, []


def texts_of(items):
    """nvdisasm's text of every item (None where rejected), each at its place in one stream."""
    items = list(items)
    out = [None] * len(items)
    live = list(range(len(items)))
    while live:
        blob, offs = pack([items[k] for k in live])
        texts, bad = nvdisasm(blob)
        if texts is not None:
            for k, o in zip(live, offs):
                out[k] = texts.get(o)
            return out
        at = {o: k for k, o in zip(live, offs)}
        drop = {at[a] for a in bad if a in at}
        if not drop:  # no usable address: one at a time
            for k in live:
                out[k] = texts_of([items[k]])[0] if len(live) > 1 else None
            return out
        live = [k for k in live if k not in drop]
    return out


def main():
    random.seed(53)
    forms = [l.split() for l in open(sys.argv[1]) if l.strip()]
    probes = []  # (form, word, sched, is_base)
    for name, val, mask, res, guard, target, w, s in forms:
        val, mask, res, w, s = (int(x, 16) for x in (val, mask, res, w, s))
        if w == 0 and val != 0:
            w, s = val | (0x70000 if guard == '1' else 0), NEUTRAL
        s &= ~(1 << 4 | 0xf << 17)
        s |= 0 if s & 0xf else 1
        flip = mask | res
        words = [w] + [w ^ 1 << b for b in range(64) if flip >> b & 1]
        if res:
            words.append(w ^ res)
            for _ in range(3):
                words.append(w ^ sum(1 << b for b in range(64) if res >> b & 1 and random.random() < 0.5))
        seen = set()
        for k, x in enumerate(words):
            if x not in seen:
                seen.add(x)
                probes.append((name, x, s, k == 0, target == '1'))
    # Classify: targets are relative, so forms with one are listed word by word at 0x8.
    text = {}
    batch = [(p[1], p[2]) for p in probes if not p[4]]
    for i in range(0, len(batch), 300):
        for it, t in zip(batch[i:i + 300], texts_of(batch[i:i + 300])):
            text[it] = t
    for p in probes:
        if p[4]:
            text[(p[1], p[2])] = texts_of([(p[1], p[2])])[0]
    base = {p[0]: text[(p[1], p[2])] for p in probes if p[3]}
    same, other = [], []
    for name, w, s, is_base, _ in probes:
        t, b = text[(w, s)], base.get(name)
        if t is None or b is None:
            continue
        # A base nvdisasm itself calls reserved (`INVALID...`, `???`) proves nothing: report.
        strict = 'INVALID' not in b and '???' not in b
        (same if strict and norm(t) == norm(b) else other).append((w, s))
    write(os.path.join(HERE, 'ignored_bits.sm53.sass'), same,
          'base words and variants nvdisasm prints exactly as the base (ignored bits): must be 100 %')
    write(os.path.join(HERE, 'bit_flips.sm53.synth.tsv'), other,
          'variants nvdisasm prints differently from the base: reported, not failed on')


def write(path, items, what):
    items = list(dict.fromkeys(items))
    while True:  # drop words nvdisasm rejects in this stream, until it lists all
        blob, offs = pack(items)
        hexd, bad = nvdisasm(blob)
        rawd, bad2 = nvdisasm(blob, raw=True)
        if hexd is not None and rawd is not None:
            break
        at = {o: k for k, o in enumerate(offs)}
        drop = {at[a] for a in bad + bad2 if a in at}
        if not drop:
            sys.exit(f'{path}: nvdisasm error without a usable address')
        items = [it for k, it in enumerate(items) if k not in drop]
    write_tsv(path, blob, hexd, rawd, [
        f'SYNTHETIC (not compiler output): single-bit flips of one word per instruction form, {what}; '
        'made by tools/isa/tests/data/gen-bit-flips.py',
        'every 32-byte bundle starts with a scheduling word (sass column = ".ctrl"); yield and reuse '
        'are clear (no dual issue)'])
    print(f'{path}: {len(items)} words')


def write_tsv(path, blob, hexd, rawd, notes):
    with open(path, 'w') as f:
        for n in notes:
            f.write(f'# {n}\n')
        f.write('# listed by nvdisasm 12.4 (V12.4.99): nvdisasm -b SM53 -hex [-raw]; columns: '
                'offset(hex)\tencoding(hex)\tsass\tsass_raw\tdual\n')
        n = len(blob) // 8
        for i in range(n):
            w = struct.unpack_from('<Q', blob, i * 8)[0]
            o = i * 8
            if o % 32 == 0:
                f.write(f'0x{o:04x}\t{w:016x}\t.ctrl\t.ctrl\t-\n')
            else:
                f.write(f'0x{o:04x}\t{w:016x}\t{clean(hexd.get(o, ""))}\t{clean(rawd.get(o, ""))}\t-\n')


def padding(binpath):
    """The kernel's code followed by two all-zero 32-byte groups, as NVN code areas carry them
    after the final self-branch."""
    blob = open(binpath, 'rb').read() + bytes(64)
    hexd, bad = nvdisasm(blob)
    rawd, bad2 = nvdisasm(blob, raw=True)
    if hexd is None or rawd is None:
        sys.exit(f'nvdisasm rejects {binpath} at {bad + bad2}')
    if any('{' in t or '}' in t for t in hexd.values()):
        sys.exit('pick a kernel without dual-issue pairs')
    path = os.path.join(HERE, 'zero_padding.sm53.sass')
    write_tsv(path, blob, hexd, rawd, [
        f'{os.path.basename(binpath)} (ptxas, tests/corpus/sass) followed by 64 zero bytes: the '
        'all-zero padding NVN code areas carry after the final self-branch; made by '
        'tools/isa/tests/data/gen-bit-flips.py --padding'])
    print(f'{path}: {len(blob) // 8} slots')


if __name__ == '__main__':
    if sys.argv[1:2] == ['--padding']:
        padding(sys.argv[2])
    else:
        main()
