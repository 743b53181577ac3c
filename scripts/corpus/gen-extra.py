#!/usr/bin/env python3
"""Regenerate the extra SASS corpus (tests/corpus/extra/ptx) from its .ptx files, for sm53 and sm86.

Usage:  scripts/corpus/gen-extra.py [PTX_DIR] [KERNEL ...]
        (default PTX_DIR: tests/corpus/extra/ptx; with KERNEL names only those are rebuilt)

For every PTX_DIR/K.ptx (exactly one .entry, named K) and arch A in {sm53, sm86} it writes,
next to the .ptx:
  K.A.cubin      the ELF that ptxas wrote
  K.A.bin        raw bytes of ELF section .text.K (the machine code, from offset 0)
  K.A.sass       nvdisasm listing in the TSV format of tests/corpus/sass/README.md
                 (offset, encoding, sass, sass_raw, dual; sm53: .ctrl lines, dual-issue
                 braces removed and marked in the dual column; sm86: 16-byte rows)
  K.A.meta.json  ptxas version/flags/command, sizes, registers, mnemonic counts
Then PTX_DIR/index.tsv and PTX_DIR/mnemonics.tsv (same columns as tests/corpus/sass).

Tools (never committed; override paths with env vars):
  PTXAS     ptxas 12.9 from PyPI:  pip install --no-deps --target /tmp/xc/cu nvidia-cuda-nvcc-cu12
            -> /tmp/xc/cu/nvidia/cuda_nvcc/bin/ptxas
  PTXAS118  ptxas 11.8 (only for kernels with "// @ptxas: 11.8"), same .deb as nvdisasm
  NVDISASM  nvdisasm 11.8 (last release with SM50-53 raw-binary support) from Debian bookworm
            non-free 'nvidia-cuda-toolkit' 11.8.89~11.8.0-5~deb12u1:
              echo 'deb http://deb.debian.org/debian bookworm non-free' > a non-free sources list,
              apt-get update; apt-get download nvidia-cuda-toolkit; dpkg -x nvidia-cuda-toolkit_*.deb /tmp/xc/debs/x
            -> /tmp/xc/debs/x/usr/bin/nvdisasm  (runs without extra libraries)

PTX header directives (comment lines):
  // @ptxas-flags: -O0     extra ptxas flags (default none => -O3)
  // @ptxas: 11.8          compile with PTXAS118 instead of PTXAS
  // @archs: sm53          restrict the archs (default: sm53 sm86)
Only the Python standard library is needed.
"""
import collections, json, os, re, struct, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PTXAS = os.environ.get('PTXAS', '/tmp/xc/cu/nvidia/cuda_nvcc/bin/ptxas')
PTXAS118 = os.environ.get('PTXAS118', '/tmp/xc/debs/x/usr/bin/ptxas')
NVDISASM = os.environ.get('NVDISASM', '/tmp/xc/debs/x/usr/bin/nvdisasm')
ARCHS = {'sm53': ('sm_53', 'SM53'), 'sm86': ('sm_86', 'SM86')}


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError('command failed: %s\n%s%s' % (' '.join(cmd), p.stdout, p.stderr))
    return p.stdout + p.stderr


def tool_version(tool):
    out = run([tool, '--version'])
    m = re.search(r'release ([\d.]+), (V[\d.]+)', out)
    return '%s (%s)' % (m.group(1), m.group(2)) if m else out.strip().splitlines()[-1]


def elf_sections(data):
    assert data[:4] == b'\x7fELF' and data[4] == 2, 'not ELF64'
    shoff = struct.unpack_from('<Q', data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', data, 0x3a)
    secs = []
    for i in range(shnum):
        name, typ, flags, addr, off, size, link, info, align, entsize = \
            struct.unpack_from('<IIQQQQIIQQ', data, shoff + i * shentsize)
        secs.append(dict(name_off=name, type=typ, off=off, size=size))
    so = secs[shstrndx]['off']
    for s in secs:
        n0 = so + s['name_off']
        s['name'] = data[n0:data.index(b'\0', n0)].decode()
        s['data'] = data[s['off']:s['off'] + s['size']] if s['type'] != 8 else b''
    return secs


def parse_header(ptx):
    flags, ver, archs = [], None, ['sm53', 'sm86']
    for line in ptx.splitlines():
        m = re.match(r'\s*//\s*@ptxas-flags:\s*(.*)$', line)
        if m:
            flags = m.group(1).split()
        m = re.match(r'\s*//\s*@ptxas:\s*(\S+)', line)
        if m:
            ver = m.group(1)
        m = re.match(r'\s*//\s*@archs:\s*(.*)$', line)
        if m:
            archs = m.group(1).split()
    entries = re.findall(r'\.entry\s+([A-Za-z_$][\w$]*)', ptx)
    return flags, ver, archs, entries


LINE_RE = re.compile(r'^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*(/\*.*\*/)?\s*$')


def disasm_text(binpath, raw, SMN):
    cmd = [NVDISASM, '-b', SMN] + (['-raw'] if raw else []) + [binpath]
    out = run(cmd)
    res, pair = {}, {}
    for line in out.splitlines():
        m = LINE_RE.match(line)
        if m:
            txt = m.group(2).strip()
            off = int(m.group(1), 16)
            if re.match(r'\{\s', txt):  # pair start '{ INSN' (not DEPBAR's '{1}' set)
                pair[off] = '{'
                txt = txt[1:].strip()
            if re.search(r'\s\}$', txt):  # pair end 'INSN }'
                pair[off] = '}'
                txt = txt[:-1].strip()
            if txt.endswith(';'):
                txt = txt[:-1].rstrip()
            res[off] = re.sub(r'\s+', ' ', txt)
    return res, pair


def mnemonic_of(txt):
    toks = txt.strip().split()
    if toks and toks[0].startswith('@'):
        toks = toks[1:]
    return toks[0] if toks else ''


def hexcheck(listing, data):
    # nvdisasm -hex prints 64-bit words (sm86: two per instruction, low half first)
    words = [int(h, 16) for h in re.findall(r'/\* (0x[0-9a-f]{16}) \*/', listing)]
    return words == [struct.unpack_from('<Q', data, i)[0] for i in range(0, len(data), 8)]


def build_one(d, K, versions):
    ptxfile = os.path.join(d, K + '.ptx')
    ptx = open(ptxfile).read()
    flags, ver, archs, entries = parse_header(ptx)
    assert entries == [K], '%s: expected exactly one .entry named %s, got %s' % (ptxfile, K, entries)
    return [build_arch(d, K, versions, ptxfile, flags, ver, A) for A in archs]


def build_arch(d, K, versions, ptxfile, flags, ver, A):
    SM, SMN = ARCHS[A]
    step = 8 if A == 'sm53' else 16
    ptxas = PTXAS118 if ver == '11.8' else PTXAS
    base = os.path.join(d, '%s.%s' % (K, A))
    vlog = run([ptxas, '-arch=' + SM, '-v'] + flags + ['-o', base + '.cubin', ptxfile])
    data = open(base + '.cubin', 'rb').read()
    secs = elf_sections(data)
    texts = [s for s in secs if s['name'].startswith('.text.')]
    code = b''.join(s['data'] for s in texts if s['name'] == '.text.' + K)
    assert code, [s['name'] for s in texts]
    cbanks = {}
    for s in secs:
        m = re.match(r'\.nv\.constant(\d+)\.', s['name'])
        if m and m.group(1) != '0':
            cbanks['c%s' % m.group(1)] = s['data'].hex()
    open(base + '.bin', 'wb').write(code)
    pretty, pairs = disasm_text(base + '.bin', False, SMN)
    rawtxt, _ = disasm_text(base + '.bin', True, SMN)
    hex_ok = hexcheck(run([NVDISASM, '-b', SMN, '-hex', base + '.bin']), code)
    lines = ['# kernel=%s arch=%s tool=nvdisasm %s cmd="nvdisasm -b %s [-raw] %s.%s.bin"' % (K, A, versions['nvdisasm'], SMN, K, A),
             '# columns: offset(hex)\tencoding(hex, little-endian int of the 8/16 bytes at offset)\tsass\tsass_raw\tdual ("{" = first / "}" = second of a dual-issued pair, sm53 only; else "-")',
             ('# sm53: every 32-byte bundle starts with a 64-bit scheduling control word (sass column = ".ctrl")' if A == 'sm53' else
              '# sm86: 128-bit instructions; encoding = bits 127..0 (scheduling/control bits live in the top bits)')]
    insns = []
    for off in range(0, len(code), step):
        enc = int.from_bytes(code[off:off + step], 'little')
        h = '%0*x' % (step * 2, enc)
        if A == 'sm53' and off % 32 == 0:
            lines.append('0x%04x\t%s\t.ctrl\t.ctrl\t-' % (off, h))
            continue
        t = pretty.get(off, '??')
        r = rawtxt.get(off, t)
        lines.append('0x%04x\t%s\t%s\t%s\t%s' % (off, h, t, r, pairs.get(off, '-')))
        insns.append((off, t))
    open(base + '.sass', 'w').write('\n'.join(lines) + '\n')
    m = re.search(r'Used (\d+) registers', vlog)
    mn = collections.Counter(mnemonic_of(t) for _, t in insns)
    k = len(insns)
    while k and insns[k - 1][1] == 'NOP':
        k -= 1
    if k and re.fullmatch(r'BRA (0x[0-9a-f]+)', insns[k - 1][1]) and int(insns[k - 1][1].split()[1], 16) == insns[k - 1][0]:
        k -= 1
    pv = versions['ptxas118' if ver == '11.8' else 'ptxas']
    meta = dict(kernel=K, arch=A, sm=SM, ptxas_version=pv, ptxas_flags=flags,
                ptxas_cmd='ptxas -arch=%s -v %s-o %s.%s.cubin %s.ptx' % (SM, ''.join(f + ' ' for f in flags), K, A, K),
                text_section='.text.' + K, text_size=len(code), instruction_slots=len(insns),
                instructions_excl_padding=k, control_words=len(code) // 32 if A == 'sm53' else 0,
                registers=int(m.group(1)) if m else None,
                ptxas_v=[l.strip() for l in vlog.splitlines() if l.strip() and 'Compile time' not in l],
                constant_banks_nonzero_index=cbanks,
                other_text_sections=[s['name'] for s in texts if s['name'] != '.text.' + K],
                nvdisasm_hex_matches_bin=hex_ok, mnemonics=dict(sorted(mn.items())))
    json.dump(meta, open(base + '.meta.json', 'w'), indent=1)
    return (K, A, len(code), len(insns), mn, k, hex_ok)


def main():
    args = sys.argv[1:]
    d = os.path.join(ROOT, 'tests/corpus/extra/ptx')
    if args and os.path.isdir(args[0]):
        d = args.pop(0)
    only = set(args)
    versions = dict(ptxas=tool_version(PTXAS), nvdisasm=tool_version(NVDISASM))
    versions['ptxas118'] = tool_version(PTXAS118) if os.path.exists(PTXAS118) else None
    ks = sorted(f[:-4] for f in os.listdir(d) if f.endswith('.ptx'))
    rows, errs = [], 0
    for K in ks:
        if only and K not in only:
            continue
        try:
            rows += build_one(d, K, versions)
        except Exception as e:
            errs += 1
            print('ERROR', K, e, file=sys.stderr)
    # index/mnemonics are rebuilt from every listing present, so partial runs keep them whole
    allrows = []
    for K in ks:
        for A in ARCHS:
            p = os.path.join(d, '%s.%s.sass' % (K, A))
            if not os.path.exists(p):
                continue
            insns = [l.split('\t') for l in open(p) if not l.startswith('#')]
            insns = [(int(x[0], 16), x[2]) for x in insns if x[2] != '.ctrl']
            mn = collections.Counter(mnemonic_of(t) for _, t in insns)
            meta = json.load(open(os.path.join(d, '%s.%s.meta.json' % (K, A))))
            allrows.append((K, A, meta['text_size'], len(insns), mn, meta['instructions_excl_padding']))
    with open(os.path.join(d, 'index.tsv'), 'w') as fo:
        fo.write('kernel\tarch\tbytes\tinstructions\tinstructions_excl_padding\tdistinct_mnemonics\tmnemonics\n')
        for K, A, nb, ni, mn, nc in allrows:
            fo.write('%s\t%s\t%d\t%d\t%d\t%d\t%s\n' % (K, A, nb, ni, nc, len(mn), ','.join(sorted(mn))))
    tot = collections.defaultdict(collections.Counter)
    kern = collections.defaultdict(lambda: collections.defaultdict(set))
    for K, A, nb, ni, mn, nc in allrows:
        for m, c in mn.items():
            for lvl, key in (('full', m), ('base', m.split('.')[0])):
                tot[(A, lvl)][key] += c
                kern[(A, lvl)][key].add(K)
    with open(os.path.join(d, 'mnemonics.tsv'), 'w') as fo:
        fo.write('arch\tlevel\tmnemonic\tcount\tn_kernels\n')
        for (A, lvl) in sorted(tot):
            for m, c in sorted(tot[(A, lvl)].items()):
                fo.write('%s\t%s\t%s\t%d\t%d\n' % (A, lvl, m, c, len(kern[(A, lvl)][m])))
    bad = ['%s.%s' % (r[0], r[1]) for r in rows if not r[6]]
    print('%s: %d built, %d errors, hexcheck failures: %s' % (d, len(rows), errs, bad or 'none'))
    return 1 if errs or bad else 0


if __name__ == '__main__':
    sys.exit(main())
