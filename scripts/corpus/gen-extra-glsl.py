#!/usr/bin/env python3
"""Regenerate the extra Maxwell graphics/compute corpus (tests/corpus/extra/glsl) from GLSL with uam.

Usage:  scripts/corpus/gen-extra-glsl.py [GLSL_DIR] [NAME.STAGE ...]

For every GLSL_DIR/NAME.STAGE.glsl (STAGE = vert frag geom tesc tese comp) it writes next to it:
  NAME.STAGE.dksh        uam's output (deko3d shader module)
  NAME.STAGE.tgsi        uam's intermediate TGSI
  NAME.STAGE.sm53.bin    the bare instructions (scheduling words included): graphics from
                         code-section entrypoint + 0x50 (after the SPH), compute from the entrypoint,
                         up to the end of the code (trailing all-zero 32-byte groups dropped)
  NAME.STAGE.sph.bin     graphics only: the 0x50-byte shader program header
  NAME.STAGE.sm53.sass   nvdisasm 11.8 listing of NAME.STAGE.sm53.bin in the TSV format of
                         tests/corpus/sass/README.md (offsets from the first instruction word)
  NAME.STAGE.meta.json   DKSH program header fields, sizes, mnemonics, uam messages
Words nvdisasm refuses (uam's SUATOM with an immediate image handle, see tests/corpus/dksh/README.md)
are listed as `UNDECODED_BY_NVDISASM` in both text columns; the rest of the file is listed by
disassembling a copy in which only those words (and their 21-bit scheduling fields) are replaced by
a NOP with a neutral scheduling field.

Tools (never committed; override with env vars):
  UAM       path of a uam 1.1.0 binary (devkitPro/uam commit 5a5afc2), built by the developer out of
            tree; the project keeps no copy and no build recipe (default /tmp/uam/build/uam)
  NVDISASM  nvdisasm 11.8 (see scripts/corpus/gen-extra.py)
"""
import collections, hashlib, json, os, re, struct, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UAM = os.environ.get('UAM', '/tmp/uam/build/uam')
NVDISASM = os.environ.get('NVDISASM', '/tmp/xc/debs/x/usr/bin/nvdisasm')
STAGES = {'vert': 'vert', 'frag': 'frag', 'geom': 'geom', 'tesc': 'tess_ctrl', 'tese': 'tess_eval', 'comp': 'comp'}
PTYPES = ['vertex', 'fragment', 'geometry', 'tess_ctrl', 'tess_eval', 'compute']
NOP = 0x50b0000000070f00
LINE_RE = re.compile(r'^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*(/\*.*\*/)?\s*$')


def run(cmd, check=True):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError('command failed: %s\n%s%s' % (' '.join(cmd), p.stdout, p.stderr))
    return p


def nvdis(code, raw=False):
    with tempfile.NamedTemporaryFile(suffix='.bin') as f:
        f.write(code)
        f.flush()
        return run([NVDISASM, '-b', 'SM53'] + (['-raw'] if raw else []) + [f.name], check=False)


def parse(out):
    res, pair = {}, {}
    for line in out.splitlines():
        m = LINE_RE.match(line)
        if m:
            txt, off = m.group(2).strip(), int(m.group(1), 16)
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


def listing(code):
    """-> (pretty, raw, pairs, undecoded offsets)"""
    bad = set()
    if nvdis(code).returncode != 0:
        # test every word alone in a bundle with a neutral control word
        for g in range(0, len(code), 32):
            for k in range(8, 32, 8):
                one = bytearray(struct.pack('<Q', 0x001f8000fc0007e0)) + struct.pack('<Q', NOP) * 3
                one[8:16] = code[g + k:g + k + 8]
                if nvdis(bytes(one)).returncode != 0:
                    bad.add(g + k)
    patched = bytearray(code)
    for off in bad:
        patched[off:off + 8] = struct.pack('<Q', NOP)
        # nvdisasm also checks the slot's scheduling field against the instruction: give the NOP
        # the neutral field of 0x007fbc03fde01fef (only this slot's 21 bits change, so the other
        # two instructions of the bundle keep their reuse flags and pairing)
        g, k = off - off % 32, (off % 32) // 8 - 1
        ctrl = struct.unpack_from('<Q', patched, g)[0]
        field = (0x007fbc03fde01fef >> (21 * k)) & 0x1fffff
        ctrl = (ctrl & ~(0x1fffff << (21 * k))) | (field << (21 * k))
        struct.pack_into('<Q', patched, g, ctrl)
    p = nvdis(bytes(patched))
    if p.returncode != 0:
        raise RuntimeError('nvdisasm failed even after masking %s: %s' % (sorted(bad), p.stderr))
    pretty, pairs = parse(p.stdout)
    rawt, _ = parse(nvdis(bytes(patched), raw=True).stdout)
    for off in bad:
        pretty[off] = rawt[off] = 'UNDECODED_BY_NVDISASM'
    return pretty, rawt, pairs, sorted(bad)


def mnemonic_of(txt):
    toks = txt.split()
    if toks and toks[0].startswith('@'):
        toks = toks[1:]
    return toks[0] if toks else ''


def build_one(d, name, ver):
    stem, stage = name.rsplit('.', 1)
    src = os.path.join(d, name + '.glsl')
    base = os.path.join(d, name)
    p = run([UAM, '-s', STAGES[stage], '-o', base + '.dksh', '-t', base + '.tgsi', src], check=False)
    if p.returncode != 0:
        raise RuntimeError('uam failed for %s:\n%s%s' % (src, p.stdout, p.stderr))
    msgs = [l for l in (p.stdout + p.stderr).splitlines() if l.strip()]
    dk = open(base + '.dksh', 'rb').read()
    magic, hsz, control_sz, code_sz, prog_off, nprog = struct.unpack_from('<6I', dk, 0)
    assert magic == 0x48534B44 and nprog == 1, name
    ptype, entry, gprs, cb1_off, cb1_sz, scratch = struct.unpack_from('<6I', dk, prog_off)
    code_sec = dk[control_sz:control_sz + code_sz]
    graphics = ptype != 5
    start = entry + (0x50 if graphics else 0)
    end = cb1_off if cb1_sz else len(code_sec)
    code = code_sec[start:end]
    code = code[:len(code) - len(code) % 32]
    while len(code) >= 32 and not any(code[-32:]):
        code = code[:-32]
    if graphics:
        open(base + '.sph.bin', 'wb').write(code_sec[entry:entry + 0x50])
    open(base + '.sm53.bin', 'wb').write(code)
    pretty, rawt, pairs, bad = listing(code)
    lines = ['# shader=%s stage=%s tool=uam 1.1.0 (devkitPro/uam 5a5afc2) + nvdisasm %s cmd="nvdisasm -b SM53 [-raw] %s.sm53.bin"' % (name, stage, ver, name),
             '# columns: offset(hex)\tencoding(hex, little-endian int of the 8 bytes at offset)\tsass\tsass_raw\tdual ("{" = first / "}" = second of a dual-issued pair; else "-")',
             '# every 32-byte bundle starts with a 64-bit scheduling control word (sass column = ".ctrl"); offsets count from the first instruction word'
             + ('' if not bad else '; UNDECODED_BY_NVDISASM = word nvdisasm 11.8 rejects (listed from a copy with those words replaced by NOP)')]
    insns = []
    for off in range(0, len(code), 8):
        enc = int.from_bytes(code[off:off + 8], 'little')
        if off % 32 == 0:
            lines.append('0x%04x\t%016x\t.ctrl\t.ctrl\t-' % (off, enc))
            continue
        t = pretty.get(off, '??')
        lines.append('0x%04x\t%016x\t%s\t%s\t%s' % (off, enc, t, rawt.get(off, t), pairs.get(off, '-')))
        insns.append(t)
    open(base + '.sm53.sass', 'w').write('\n'.join(lines) + '\n')
    mn = collections.Counter(mnemonic_of(t) for t in insns)
    meta = dict(shader=name, stage=stage, program_type=PTYPES[ptype], num_gprs=gprs, entrypoint=entry,
                code_section_size=code_sz, instructions_offset_in_code_section=start, instruction_bytes=len(code),
                constbuf1_off=cb1_off, constbuf1_sz=cb1_sz, per_warp_scratch_sz=scratch,
                stage_specific_words=list(struct.unpack_from('<9I', dk, prog_off + 24)),
                undecoded_by_nvdisasm=['0x%04x' % o for o in bad], uam_messages=msgs,
                sha256={k: hashlib.sha256(open(base + k, 'rb').read()).hexdigest() for k in ('.glsl', '.dksh', '.sm53.bin')},
                mnemonics=dict(sorted(mn.items())))
    json.dump(meta, open(base + '.meta.json', 'w'), indent=1)
    return name, stage, gprs, len(code), mn


def main():
    args = sys.argv[1:]
    d = os.path.join(ROOT, 'tests/corpus/extra/glsl')
    if args and os.path.isdir(args[0]):
        d = args.pop(0)
    only = set(args)
    out = run([NVDISASM, '--version']).stdout
    m = re.search(r'release ([\d.]+), (V[\d.]+)', out)
    ver = '%s (%s)' % (m.group(1), m.group(2))
    errs = 0
    for f in sorted(os.listdir(d)):
        if not f.endswith('.glsl'):
            continue
        name = f[:-5]
        if only and name not in only:
            continue
        try:
            build_one(d, name, ver)
        except Exception as e:
            errs += 1
            print('ERROR', name, e, file=sys.stderr)
    rows = []
    for f in sorted(os.listdir(d)):
        if f.endswith('.meta.json'):
            m = json.load(open(os.path.join(d, f)))
            rows.append('%s\t%s\t%d\t%d\t%s' % (m['shader'], m['stage'], m['num_gprs'], m['instruction_bytes'], ' '.join(sorted(m['mnemonics']))))
    with open(os.path.join(d, 'INDEX.tsv'), 'w') as fo:
        fo.write('name\tstage\tnum_gprs\tinstruction_bytes\tmnemonics\n' + ''.join(r + '\n' for r in rows))
    print('%s: %d shaders listed, %d errors' % (d, len(rows), errs))
    return 1 if errs else 0


if __name__ == '__main__':
    sys.exit(main())
