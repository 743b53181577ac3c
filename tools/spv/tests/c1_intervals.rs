//! The interval rule of `dmsh c1-guard` (dmsh-ir `interval`, `const_reads::c1_check`) on real
//! code: every sm53 kernel of the sass corpus and every DKSH program of the dksh and extra
//! GLSL corpora is lifted and run through the passes; each `LoadConst` whose offset is
//! computed at run time is counted, with whether interval arithmetic bounds it inside its
//! bank (an embedded bank: seed 001's span, its data rounded up to 256 bytes plus 256; a bound
//! one: its size). One line per shader with such reads; the hand-checked cases (from the GLSL
//! sources and nvdisasm's listings) are asserted.

mod common;

use dmsh_ir::const_reads::{c1_span, C1};
use dmsh_ir::{BankSource, Op, Shader};
use std::collections::BTreeMap;

/// (bank, run-time-offset reads, of them proven inside the bank, the largest end) per bank.
fn dynamic_reads(sh: &Shader) -> BTreeMap<u8, (usize, usize, u64)> {
    let iv = dmsh_ir::interval::intervals(&sh.func);
    let f = &sh.func;
    // The ranges computed for the offsets alone (what `const_reads` asks for) are the same.
    let offsets: Vec<dmsh_ir::Value> = f
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .map(|&v| f.inst(v))
        .filter(|i| matches!(i.op, Op::LoadConst(_)) && f.const_of(i.args[0]).is_none())
        .map(|i| i.args[0])
        .collect();
    let part = dmsh_ir::interval::intervals_of(f, offsets.iter().copied());
    for &o in &offsets {
        assert_eq!(
            part.range(o),
            iv.range(o),
            "{o} alone and in the whole function"
        );
    }
    let mut out: BTreeMap<u8, (usize, usize, u64)> = BTreeMap::new();
    for &v in f.blocks.iter().flat_map(|b| &b.insts) {
        let i = f.inst(v);
        let Op::LoadConst(bank) = i.op else { continue };
        if f.const_of(i.args[0]).is_some() {
            continue;
        }
        let limit = match sh.banks.iter().find(|b| b.bank == bank).map(|b| &b.source) {
            Some(BankSource::Buffer { guest_offset, size }) => *guest_offset as u64 + *size as u64,
            Some(BankSource::Embedded(w)) => c1_span(4 * w.len() as u64),
            None => c1_span(0),
        };
        let r = iv.range(i.args[0]);
        let end = (r.hi / 4 + 1) * 4;
        if end <= limit {
            println!("  c[{bank}] offset in [{:#x}, {:#x}]", r.lo, r.hi);
        }
        let e = out.entry(bank).or_default();
        e.0 += 1;
        e.1 += (end <= limit) as usize;
        e.2 = e.2.max(end);
    }
    out
}

/// Every lifted corpus shader: (name, shader after the passes).
fn corpus() -> Vec<(String, Shader)> {
    let opts = dmsh_spv::Options::default();
    let mut v = Vec::new();
    for (name, path) in common::sass_kernels() {
        let c = dmsh_cubin::read(&path).expect("cubin");
        let Ok(k) = c.kernel(&name) else { continue };
        let ls = common::io_block(&name).unwrap_or([1, 1, 1]);
        if let Ok(sh) = dmsh_ir::lift::lift(&k.code, &common::cuda_config(k, ls)) {
            v.push((format!("sass/{name}"), sh));
        }
    }
    for p in common::graphics_corpus_files() {
        let Ok(prog) = dmsh_ir::lift::dksh::parse(&std::fs::read(&p).unwrap()) else {
            continue;
        };
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let sh = if prog.stage == dmsh_ir::Stage::Compute {
            let cfg = common::deko3d_config(prog.local_size, prog.shared_bytes, 0);
            dmsh_ir::lift::lift(&prog.code, &cfg).map_err(|e| e.to_string())
        } else {
            common::deko3d_graphics_config(&prog, &name).and_then(|cfg| {
                dmsh_ir::lift::lift_graphics(&prog.code, &cfg).map_err(|e| e.to_string())
            })
        };
        if let Ok(sh) = sh {
            v.push((name, sh));
        }
    }
    v.into_iter()
        .filter_map(|(n, sh)| Some((n, dmsh_spv::pipeline::passes(sh, &opts).ok()?)))
        .collect()
}

#[test]
fn run_time_constant_offsets_in_the_corpus() {
    let (mut shaders, mut reads, mut proven) = (0, 0, 0);
    let mut got: BTreeMap<(String, u8), (usize, usize, u64)> = BTreeMap::new();
    for (name, sh) in corpus() {
        shaders += 1;
        for (bank, (n, p, end)) in dynamic_reads(&sh) {
            println!("{name} c[{bank}]: {n} run-time offsets, {p} proven, end {end:#x}");
            reads += n;
            proven += p;
            got.insert((name.clone(), bank), (n, p, end));
        }
        // The reflection's verdict is the same rule.
        let r = dmsh_ir::const_reads::const_reads(&sh.func);
        if let Some(c) = dmsh_ir::const_reads::c1_check(&sh, &r) {
            let mine = got.get(&(name.clone(), C1));
            assert_eq!(
                c.status == dmsh_ir::const_reads::C1Status::Proven,
                mine.is_some_and(|m| m.0 == m.1),
                "{name}"
            );
        }
    }
    println!("{shaders} shaders: {reads} run-time constant offsets, {proven} proven in bounds");
    let at = |n: &str, b: u8| got.get(&(n.to_string(), b)).copied();
    // gl_VertexID << 4 (SHL R1, R0, 0x4 on ALD a[0x2fc]): the vertex ID is unbounded, so
    // none of the four c1 reads of kPos / kUV is proven.
    assert_eq!(
        at("vs_fullscreen_const.vert.dksh", 1).map(|x| (x.0, x.1)),
        Some((4, 0))
    );
    // int i = vIdx & 3, j = vIdx & 1 (LOP.AND R8, R0, 0x3 / LOP.AND R4, R0, 0x1): the two
    // driver-segment reads left after the handles pass, c[0x0][(i << 2) + 0x690] and
    // c[0x0][(j << 2) + 0x6a0], are in [0x690, 0x69c] and [0x6a0, 0x6a4]: proven.
    assert_eq!(at("fs_sampler_dyn_all.frag.dksh", 0), Some((2, 2, 0x6a8)));
    // Bone indices from a vertex attribute: none of the 64 c[0x4] reads is bounded.
    assert_eq!(
        at("vs_skinning.vert.dksh", 4).map(|x| (x.0, x.1)),
        Some((64, 0))
    );
    assert!(shaders >= 40, "{shaders} shaders lifted");
}
