#!/usr/bin/env python3
"""Regenerate the extra sm53 SASS corpus (tests/corpus/extra/ptx) from its .ptx files.

Usage:  scripts/corpus/gen-extra.py [PTX_DIR] [KERNEL ...]
        (default PTX_DIR: tests/corpus/extra/ptx; with KERNEL names only those are rebuilt)

For every PTX_DIR/K.ptx (exactly one .entry, named K) it writes, next to the .ptx:
  K.sm53.cubin      the ELF that ptxas wrote
  K.sm53.bin        raw bytes of ELF section .text.K (the machine code, from offset 0)
  K.sm53.sass       nvdisasm listing in the TSV format of tests/corpus/sass/README.md
                    (offset, encoding, sass, sass_raw, dual; .ctrl lines; dual-issue
                    braces removed and marked in the dual column)
  K.sm53.meta.json  ptxas version/flags/command, sizes, registers, mnemonic counts
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
Only the Python standard library is needed.
"""
import collections, json, os, re, struct, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PTXAS = os.environ.get('PTXAS', '/tmp/xc/cu/nvidia/cuda_nvcc/bin/ptxas')
PTXAS118 = os.environ.get('PTXAS118', '/tmp/xc/debs/x/usr/bin/ptxas')
NVDISASM = os.environ.get('NVDISASM', '/tmp/xc/debs/x/usr/bin/nvdisasm')
A, SM, SMN = 'sm53', 'sm_53', 'SM53'


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
    flags, ver = [], None
    for line in ptx.splitlines():
        m = re.match(r'\s*//\s*@ptxas-flags:\s*(.*)$', line)
        if m:
            flags = m.group(1).split()
        m = re.match(r'\s*//\s*@ptxas:\s*(\S+)', line)
        if m:
            ver = m.group(1)
    entries = re.findall(r'\.entry\s+([A-Za-z_$][\w$]*)', ptx)
    return flags, ver, entries


LINE_RE = re.compile(r'^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*(/\*.*\*/)?\s*$')


def disasm_text(binpath, raw):
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
    words = [int(h, 16) for h in re.findall(r'/\* (0x[0-9a-f]{16}) \*/', listing)]
    return words == [struct.unpack_from('<Q', data, i)[0] for i in range(0, len(data), 8)]


def build_one(d, K, versions):
    ptxfile = os.path.join(d, K + '.ptx')
    ptx = open(ptxfile).read()
    flags, ver, entries = parse_header(ptx)
    assert entries == [K], '%s: expected exactly one .entry named %s, got %s' % (ptxfile, K, entries)
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
    pretty, pairs = disasm_text(base + '.bin', raw=False)
    rawtxt, _ = disasm_text(base + '.bin', raw=True)
    hex_ok = hexcheck(run([NVDISASM, '-b', SMN, '-hex', base + '.bin']), code)
    lines = ['# kernel=%s arch=%s tool=nvdisasm %s cmd="nvdisasm -b %s [-raw] %s.%s.bin"' % (K, A, versions['nvdisasm'], SMN, K, A),
             '# columns: offset(hex)\tencoding(hex, little-endian int of the 8/16 bytes at offset)\tsass\tsass_raw\tdual ("{" = first / "}" = second of a dual-issued pair, sm53 only; else "-")',
             '# sm53: every 32-byte bundle starts with a 64-bit scheduling control word (sass column = ".ctrl")']
    insns = []
    for off in range(0, len(code), 8):
        enc = int.from_bytes(code[off:off + 8], 'little')
        h = '%016x' % enc
        if off % 32 == 0:
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
                instructions_excl_padding=k, control_words=len(code) // 32,
                registers=int(m.group(1)) if m else None,
                ptxas_v=[l.strip() for l in vlog.splitlines() if l.strip() and 'Compile time' not in l],
                constant_banks_nonzero_index=cbanks,
                other_text_sections=[s['name'] for s in texts if s['name'] != '.text.' + K],
                nvdisasm_hex_matches_bin=hex_ok, mnemonics=dict(sorted(mn.items())))
    json.dump(meta, open(base + '.meta.json', 'w'), indent=1)
    return (K, len(code), len(insns), mn, k, hex_ok)


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
            rows.append(build_one(d, K, versions))
        except Exception as e:
            errs += 1
            print('ERROR', K, e, file=sys.stderr)
    # index/mnemonics are rebuilt from every listing present, so partial runs keep them whole
    allrows = []
    for K in ks:
        p = os.path.join(d, '%s.%s.sass' % (K, A))
        if not os.path.exists(p):
            continue
        insns = [l.split('\t') for l in open(p) if not l.startswith('#')]
        insns = [(int(x[0], 16), x[2]) for x in insns if x[2] != '.ctrl']
        mn = collections.Counter(mnemonic_of(t) for _, t in insns)
        meta = json.load(open(os.path.join(d, '%s.%s.meta.json' % (K, A))))
        allrows.append((K, meta['text_size'], len(insns), mn, meta['instructions_excl_padding']))
    with open(os.path.join(d, 'index.tsv'), 'w') as fo:
        fo.write('kernel\tarch\tbytes\tinstructions\tinstructions_excl_padding\tdistinct_mnemonics\tmnemonics\n')
        for K, nb, ni, mn, nc in allrows:
            fo.write('%s\t%s\t%d\t%d\t%d\t%d\t%s\n' % (K, A, nb, ni, nc, len(mn), ','.join(sorted(mn))))
    tot = collections.defaultdict(collections.Counter)
    kern = collections.defaultdict(lambda: collections.defaultdict(set))
    for K, nb, ni, mn, nc in allrows:
        for m, c in mn.items():
            for lvl, key in (('full', m), ('base', m.split('.')[0])):
                tot[lvl][key] += c
                kern[lvl][key].add(K)
    with open(os.path.join(d, 'mnemonics.tsv'), 'w') as fo:
        fo.write('arch\tlevel\tmnemonic\tcount\tn_kernels\n')
        for lvl in sorted(tot):
            for m, c in sorted(tot[lvl].items()):
                fo.write('%s\t%s\t%s\t%d\t%d\n' % (A, lvl, m, c, len(kern[lvl][m])))
    bad = [r[0] for r in rows if not r[5]]
    print('%s: %d built, %d errors, hexcheck failures: %s' % (d, len(rows), errs, bad or 'none'))
    return 1 if errs or bad else 0


if __name__ == '__main__':
    sys.exit(main())
