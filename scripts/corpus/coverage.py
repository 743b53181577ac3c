#!/usr/bin/env python3
"""Instruction-form coverage of the project's sm53 ground-truth listings.

Usage: scripts/corpus/coverage.py [--forms] [--missing] [--markdown] [--summary] [--without-extra]
Reads tests/corpus/sass/*.sm53.sass, tests/corpus/dksh/*.sass (nvdisasm text) and
tests/corpus/extra/**/*.sass (both formats) and prints, per base mnemonic, the
listings containing it and the operand-kind forms seen.  A form is the full
mnemonic's base plus one letter per operand: R register, P predicate, C c[][]
constant, I immediate, M memory [..], S special register, T other token.
"""
import collections, glob, os, re, sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ISSUE3 = """IADD IADD3 IADD32I ISCADD IMAD IMUL XMAD LOP LOP3 LOP32I SHL SHR SHF BFE BFI FLO POPC PRMT
IMNMX ISET ISETP ICMP SEL LEA FADD FMUL FFMA FADD32I FMUL32I FFMA32I FMNMX FSET FSETP FCMP FSWZADD
MUFU RRO FCHK HADD2 HMUL2 HFMA2 HSET2 HSETP2 DADD DMUL DFMA DMNMX DSET DSETP F2F F2I I2F I2I PSET
PSETP CSET CSETP P2R R2P MOV MOV32I S2R CS2R LDC LD ST LDG STG LDL STL LDS STS ATOM ATOMS RED CCTL
MEMBAR ALD AST IPA OUT PIXLD TEX TEXS TLD TLDS TLD4 TLD4S TXQ TMML TXD SULD SUST SUATOM SURED BRA
BRX JMP JMX CAL JCAL RET SSY SYNC PBK BRK PCNT CONT PEXIT EXIT KIL BPT NOP VOTE SHFL BAR DEPBAR
VADD VMAD VSET VSETP VMNMX VABSDIFF""".split()


def split_ops(s):
    ops, depth, cur = [], 0, ''
    for ch in s:
        if ch in '[{':
            depth += 1
        elif ch in ']}':
            depth -= 1
        if ch == ',' and depth == 0:
            ops.append(cur.strip())
            cur = ''
        else:
            cur += ch
    if cur.strip():
        ops.append(cur.strip())
    return ops


def kind(op):
    o = op.lstrip('-!|~').rstrip('|')
    if re.match(r'^(R\d+|RZ)\b', o):
        return 'R'
    if re.match(r'^(P\d|PT)\b', o):
        return 'P'
    if o.startswith('c['):
        return 'C'
    if o.startswith('['):
        return 'M'
    if o.startswith('SR_') or o.startswith('SRZ'):
        return 'S'
    if re.match(r'^(0x[0-9a-f]+|\d|[+-]?INF|[+-]?QNAN|NAN)', o):
        return 'I'
    return 'T'


def parse(text):
    t = text.strip()
    toks = t.split(None, 1)
    if toks and toks[0].startswith('@'):
        t = toks[1] if len(toks) > 1 else ''
    parts = t.split(None, 1)
    full = parts[0] if parts else ''
    ops = split_ops(parts[1]) if len(parts) > 1 else []
    return full, ''.join(kind(o) for o in ops)


def listings(with_extra=True):
    """yield (path, [text]) for every sm53 listing."""
    files = sorted(glob.glob(os.path.join(ROOT, 'tests/corpus/sass/*.sm53.sass')))
    files += sorted(glob.glob(os.path.join(ROOT, 'tests/corpus/dksh/*.sass')))
    if with_extra:
        files += sorted(f for f in glob.glob(os.path.join(ROOT, 'tests/corpus/extra/**/*.sass'), recursive=True)
                        if '.sm86.' not in f)
    for f in files:
        out = []
        for line in open(f):
            if line.startswith('#') or line.startswith('//'):
                continue
            if '\t' in line and not line.startswith(' ') and not line.startswith('\t'):
                c = line.rstrip('\n').split('\t')
                if len(c) >= 3 and c[2] != '.ctrl':
                    out.append(c[2])
            else:
                m = re.match(r'^\s+/\*[0-9a-f]{4,}\*/\s+(.*?)\s*(/\*.*)?$', line)
                if m:
                    t = re.sub(r'\s+\}$', '', re.sub(r'^\{\s+', '', m.group(1).strip())).rstrip(';').strip()
                    out.append(re.sub(r'\s+\}$', '', t))
        yield os.path.relpath(f, ROOT), out


def main():
    args = set(sys.argv[1:])
    files = collections.defaultdict(set)
    forms = collections.defaultdict(lambda: collections.defaultdict(set))
    fulls = collections.defaultdict(set)
    for f, insns in listings('--without-extra' not in args):
        for t in insns:
            full, sig = parse(t)
            if not full or full == 'UNDECODED_BY_NVDISASM':
                continue
            b = full.split('.')[0]
            files[b].add(f)
            forms[b][sig].add(f)
            fulls[b].add(full)
    names = sorted(set(files) | set(ISSUE3))
    if '--summary' in args:
        nforms = sum(len(v) for v in forms.values())
        nfull = sum(len(v) for v in fulls.values())
        print('%d base mnemonics, %d printed mnemonics (with modifiers), %d (mnemonic, operand-kind) forms, '
              '%d of %d issue-3 mnemonics' % (len(files), nfull, nforms, sum(1 for m in ISSUE3 if m in files), len(ISSUE3)))
        return
    if '--missing' in args:
        print('missing from issue 3 list:', ' '.join(m for m in ISSUE3 if m not in files))
        return
    for b in names:
        short = sorted(os.path.basename(x).split('.')[0] for x in files.get(b, ()))
        line = '%-9s %3d files  forms: %s' % (b, len(files.get(b, ())), ' '.join(sorted(x or '()' for x in forms[b])) or '-')
        if '--markdown' in args:
            ex = sorted(files.get(b, ()), key=lambda x: ('extra' not in x, x))[:4]
            fs = ' '.join(sorted(x or '()' for x in forms[b])) if b in files else '**not in corpus**'
            print('| %s | %d | %s | %s |' % (b, len(files.get(b, ())), fs, ', '.join('`%s`' % os.path.basename(x) for x in ex)))
        else:
            print(line)
            if '--forms' in args:
                print('          ', ' '.join(sorted(fulls[b])))


if __name__ == '__main__':
    main()
