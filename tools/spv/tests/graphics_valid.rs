//! Every graphics shader (vertex, fragment, geometry, tessellation) of the dksh corpus, the
//! extra GLSL corpus and ../shared/corpus/external (skipped when absent) translates to SPIR-V
//! that spirv-val (Vulkan 1.2) accepts. One line per file; counts per folder. Known failures
//! are listed in docs/graphics.md and in `KNOWN` below with their cause.

mod common;

use dmsh_ir::lift::dksh;
use dmsh_ir::lift::BindingLayout;
use dmsh_spv::Options;
use std::path::Path;

/// Graphics shaders that do not translate yet, with the cause (docs/graphics.md).
const KNOWN: &[(&str, &str)] = &[];

/// Translates one DKSH graphics program under the deko3d layout; None for compute. The
/// clip / cull split comes from the GLSL source next to it (`NAME.glsl`), when there is one.
pub fn translate_file(p: &Path) -> Option<Result<Vec<u32>, String>> {
    translate_output(p).map(|r| r.map(|o| o.words))
}

/// [`translate_file`] with the reflection.
fn translate_output(p: &Path) -> Option<Result<dmsh_spv::Output, String>> {
    let bytes = std::fs::read(p).ok()?;
    let prog = match dksh::parse(&bytes) {
        Ok(x) => x,
        Err(e) => return Some(Err(e)),
    };
    if prog.stage == dmsh_ir::Stage::Compute {
        return None;
    }
    let key = p.file_name().unwrap().to_string_lossy().to_string();
    Some(
        common::deko3d_graphics_config(&prog, &key).and_then(|mut cfg| {
            if let Some(g) = cfg.gfx.as_mut() {
                if let Ok(src) = std::fs::read_to_string(p.with_extension("glsl")) {
                    g.clip_cull = common::corpus_text::clip_cull(&src);
                }
            }
            dmsh_spv::translate_graphics(&prog.code, &cfg, &Options::default())
                .map_err(|e| e.to_string())
        }),
    )
}

/// Translates the corpus file `rel` (below the repository root), checks the module with
/// spirv-val and loads it: (the translation, the module).
fn translated_valid(rel: &str) -> (dmsh_spv::Output, rspirv::dr::Module) {
    let o = translate_output(&common::root().join(rel))
        .unwrap()
        .unwrap();
    common::spirv_val(&o.words).unwrap();
    let m = rspirv::dr::load_words(&o.words).unwrap();
    (o, m)
}

/// The resources of kind `kind` in a translation's reflection.
fn resources_of<'a>(o: &'a dmsh_spv::Output, kind: &str) -> Vec<&'a dmsh_spv::Resource> {
    o.reflection
        .resources
        .iter()
        .filter(|r| r.kind == kind)
        .collect()
}

/// The instructions of every function body of `m`.
fn body_instructions(m: &rspirv::dr::Module) -> impl Iterator<Item = &rspirv::dr::Instruction> {
    m.functions
        .iter()
        .flat_map(|f| f.blocks.iter())
        .flat_map(|b| b.instructions.iter())
}

/// fs_sampler_dyn_all's four `TXQ.B` (textureSize / textureQueryLevels of `t2[i]`, `t3[j]`,
/// `ts[j]`) get the bare array index (`vIdx & 3`, `vIdx & 1`, no LDC) as the handle: uam
/// drops the array's first binding (TGSI `SAMP[ADDR[2].x+4]`), so the hardware queries
/// texture descriptor i / j. That is the `tex_dyn` array element (handle & 0xfffff). The
/// samplers loaded with `LDC c[0][R + 0x690…]` stay run-time indexed arrays at binding
/// 64 + first slot (element count = the layout's slots from there).
#[test]
fn txq_on_a_bare_index_queries_the_tex_dyn_array() {
    let (o, m) = translated_valid("tests/corpus/extra/glsl/fs_sampler_dyn_all.frag.dksh");
    let kinds: Vec<_> = o
        .reflection
        .resources
        .iter()
        .filter(|r| r.kind != "cbuf")
        .map(|r| (r.kind.as_str(), r.vk_binding(), r.count))
        .collect();
    println!("{kinds:?}");
    let t = 64 + dmsh_ir::TEX_DYN as u32;
    assert!(kinds.contains(&("tex_dyn", t, 32)), "{kinds:?}");
    // Every sampling instruction resolves to its sampler array — TXD.B's handle is Ra (R0 =
    // R19, the word at c[0][0x690 + 4i]), not Rb's gradients — so no sampler array is needed
    // for the TXQs' texture IDs.
    assert!(!kinds.iter().any(|k| k.0 == "samp_dyn"), "{kinds:?}");
    // The run-time indexed sampler arrays t2, t3, ts, tc start at slots 0, 4, 6, 8; the
    // `tex_arrays` pass sizes each by its index's range (`vIdx & 3`, `vIdx & 1`): the GLSL's
    // own sizes 4, 2, 2, 2, not the rest of deko3d's 32 texture slots.
    for (s, n) in [(0, 4), (4, 2), (6, 2), (8, 2)] {
        let b = 64 + s;
        assert!(kinds.contains(&("texture", b, n)), "binding {b}: {kinds:?}");
    }
    let queries = body_instructions(&m)
        .filter(|i| i.class.opcode == rspirv::spirv::Op::ImageQuerySizeLod)
        .count();
    assert!(queries >= 4);
}

/// vs_clipdist writes 4 clip distances and 1 cull distance (uam marks all 8 slots): with the
/// split from its GLSL slot 4 is `CullDistance[0]`, and the SPIR-V validates.
#[test]
fn cull_distances_are_cull_distance_builtins() {
    let (_, m) = translated_valid("tests/corpus/dksh/vs_clipdist.vert.dksh");
    let builtins: Vec<String> = m
        .annotations
        .iter()
        .filter(|i| i.class.opcode == rspirv::spirv::Op::Decorate)
        .filter_map(|i| match i.operands.get(2) {
            Some(rspirv::dr::Operand::BuiltIn(b)) => Some(format!("{b:?}")),
            _ => None,
        })
        .collect();
    assert!(
        builtins.contains(&"CullDistance".to_string()),
        "{builtins:?}"
    );
    assert!(
        builtins.contains(&"ClipDistance".to_string()),
        "{builtins:?}"
    );
    let caps: Vec<_> = m
        .capabilities
        .iter()
        .map(|i| format!("{:?}", i.operands[0]))
        .collect();
    assert!(caps.iter().any(|c| c.contains("CullDistance")), "{caps:?}");
}

/// fs_interp_modes' interpolateAtOffset (IPA.OFFSET, 4 reads of vPlain.xy) becomes
/// GLSL.std.450 InterpolateAtOffset (78) with the packed S.12 offset scaled by 1/4096.
#[test]
fn ipa_offset_is_interpolate_at_offset() {
    let (_, m) = translated_valid("tests/corpus/dksh/fs_interp_modes.frag.dksh");
    let at_offset = body_instructions(&m)
        .filter(|i| i.class.opcode == rspirv::spirv::Op::ExtInst)
        .filter(|i| {
            matches!(
                i.operands.get(1),
                Some(rspirv::dr::Operand::LiteralExtInstInteger(78))
            )
        })
        .count();
    assert_eq!(at_offset, 4);
    let scale = m.types_global_values.iter().any(|i| {
        i.class.opcode == rspirv::spirv::Op::Constant
            && matches!(i.operands.first(), Some(rspirv::dr::Operand::LiteralBit32(b)) if *b == (1.0f32 / 4096.0).to_bits())
    });
    assert!(scale, "no 1/4096 constant");
}

#[test]
fn graphics_shaders_validate() {
    let dirs = common::graphics_corpus_dirs();
    let mut bad_total = 0;
    let mut unexpected: Vec<String> = Vec::new();
    for d in &dirs {
        let mut files = Vec::new();
        common::dksh_files(d, &mut files);
        if files.is_empty() {
            println!("{}: absent, skipped", d.display());
            continue;
        }
        let (mut ok, mut n) = (0, 0);
        for f in &files {
            let Some(r) = translate_file(f) else { continue };
            n += 1;
            let name = f.strip_prefix(d).unwrap_or(f).display().to_string();
            match r.and_then(|w| common::spirv_val(&w)) {
                Ok(()) => {
                    ok += 1;
                    println!("ok   {name}");
                }
                Err(e) => {
                    let first: String = e.lines().take(3).collect::<Vec<_>>().join(" | ");
                    let base = f.file_name().unwrap().to_string_lossy().to_string();
                    match KNOWN.iter().find(|k| k.0 == base) {
                        Some(k) => println!("FAIL {name} (known: {}): {first}", k.1),
                        None => {
                            println!("FAIL {name}: {first}");
                            unexpected.push(name.clone());
                        }
                    }
                }
            }
        }
        println!("{}: {ok}/{n} graphics shaders pass spirv-val", d.display());
        bad_total += n - ok;
    }
    println!("failures: {bad_total} ({} unexpected)", unexpected.len());
    assert!(unexpected.is_empty(), "unexpected failures: {unexpected:?}");
}

/// A vertex program: SPH (vertex, version 3) + one scheduling word + `ALD R0, a[addr]` + EXIT.
fn tiny_vertex(sph_word0: u32, addr: u64) -> Vec<u8> {
    let mut w = [0u32; 20];
    w[0] = sph_word0;
    let mut code: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
    let ald = 0xefd8_0000_0000_0000u64 | (addr << 20) | (0xff << 8) | (0xff << 39);
    for q in [
        0x001f_8000_fc00_07e0u64,
        ald,
        0xe300_0000_0007_000f,
        0xe240_0fff_ff87_000f,
    ] {
        code.extend_from_slice(&q.to_le_bytes());
    }
    code
}

#[test]
fn bad_header_and_attribute_are_clear_errors() {
    let try_it = |code: &[u8]| {
        let cfg = dksh::graphics_config(
            dmsh_ir::Stage::Vertex,
            code,
            &[],
            BindingLayout::deko3d(dmsh_ir::Stage::Vertex),
            "tiny",
        )?;
        dmsh_spv::translate_graphics(code, &cfg, &Options::default())
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    assert!(try_it(&tiny_vertex(0x0006_0461, 0x80)).is_ok());
    let e = try_it(&tiny_vertex(0x0006_0461, 0x300)).unwrap_err();
    println!("{e}");
    assert!(
        e.contains("tiny") && e.contains("0x8") && e.contains("a[0x300]"),
        "{e}"
    );
    let e = try_it(&tiny_vertex(0x0006_0461, 0x3f8)).unwrap_err();
    assert!(e.contains("outside the known attribute space"), "{e}");
    let e = try_it(&tiny_vertex(0x0000_001f, 0x80)).unwrap_err();
    println!("{e}");
    assert!(
        e.contains("tiny") && e.contains("offset 0x0") && e.contains("sph_type"),
        "{e}"
    );
    let e = try_it(&tiny_vertex(0x0006_0461, 0x80)[..0x40]).unwrap_err();
    assert!(
        e.contains("tiny") && e.contains("offset 0x0") && e.contains("need 0x50"),
        "{e}"
    );
    // A fragment SPH given as a vertex stage.
    let cfg = dksh::graphics_config(
        dmsh_ir::Stage::Vertex,
        &tiny_vertex(0x0006_0461, 0x80),
        &[],
        BindingLayout::deko3d(dmsh_ir::Stage::Vertex),
        "tiny",
    )
    .unwrap();
    let e =
        dmsh_spv::translate_graphics(&tiny_vertex(0x0006_5462, 0x80), &cfg, &Options::default())
            .unwrap_err()
            .to_string();
    assert!(e.contains("the SPH says fragment"), "{e}");
}

/// Mutated graphics programs (1–3 flipped bits in instruction words of every corpus graphics
/// shader, deterministic) never panic the lifter or the emitter: they translate or fail with
/// an error.
#[test]
fn mutated_graphics_programs_do_not_panic() {
    let root = common::root();
    let mut files = Vec::new();
    common::dksh_files(&root.join("tests/corpus/dksh"), &mut files);
    common::dksh_files(&root.join("tests/corpus/extra/glsl"), &mut files);
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut ok, mut err, mut n) = (0, 0, 0);
    for f in &files {
        let Ok(bytes) = std::fs::read(f) else {
            continue;
        };
        let Ok(prog) = dksh::parse(&bytes) else {
            continue;
        };
        if prog.stage == dmsh_ir::Stage::Compute {
            continue;
        }
        let words = (prog.code.len() - 0x50) / 8;
        for _ in 0..40 {
            let mut code = prog.code.clone();
            for _ in 0..1 + next() % 3 {
                let w = (next() as usize) % words.max(1);
                let bit = next() % 64;
                let off = 0x50 + 8 * w + (bit / 8) as usize;
                if off < code.len() {
                    code[off] ^= 1 << (bit % 8);
                }
            }
            n += 1;
            let r = std::panic::catch_unwind(|| {
                let cfg = dksh::graphics_config(
                    prog.stage,
                    &code,
                    &prog.cbuf1,
                    BindingLayout::deko3d(prog.stage),
                    "mutant",
                )?;
                dmsh_spv::translate_graphics(&code, &cfg, &Options::default())
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            });
            match r {
                Ok(Ok(())) => ok += 1,
                Ok(Err(_)) => err += 1,
                Err(_) => panic!("panic on a mutation of {}", f.display()),
            }
        }
    }
    println!("{n} mutated graphics programs: {ok} translated, {err} clear errors, 0 panics");
    assert!(n > 0);
}

/// A fragment program: SPH (one RGBA target) + `LDC R0, c[2][t]; LDC R1, c[b][s]` (bank 0xff:
/// `MOV32I R1, s`) `;
/// LOP.OR R0, R0, R1; TEX.B R4, R2, R0, 2D; MOV R0, R4; EXIT`.
fn nvn_fragment(tex: (u64, u64), smp: (u64, u64), or: bool) -> Vec<u8> {
    let mut w = [0u32; 20];
    w[0] = 0x0006_5462;
    w[18] = 0xf;
    let mut code: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
    let g = 7u64 << 16;
    let ldc = |rd: u64, bank: u64, off: u64| {
        0xef90_0000_0000_0000 | 4 << 48 | bank << 36 | off << 20 | 0xff << 8 | rd | g
    };
    let lop = if or {
        0x5c40_0000_0000_0000 | 1 << 41 | 1 << 20 | 7 << 48 | g
    } else {
        0x5c98_0780_0007_0000 // MOV R0, R0
    };
    for q in [
        0x001f_8000_fc00_07e0u64,
        ldc(0, tex.0, tex.1),
        if smp.0 == 0xff {
            // MOV32I R1, smp.1: a constant sampler ID in the high 12 bits.
            0x0100_0000_0007_f001 | smp.1 << 20
        } else {
            ldc(1, smp.0, smp.1)
        },
        lop,
        0x001f_8000_fc00_07e0,
        0xdeb8_0000_0000_0000 | 4 | 2 << 8 | 1 << 29 | 0xf << 31 | g,
        0x5c98_0780_0047_0000,
        0xe300_0000_0007_000f,
    ] {
        code.extend_from_slice(&q.to_le_bytes());
    }
    code
}

#[test]
fn nvn_bindless_handles_resolve_through_the_profile() {
    let st = dmsh_ir::Stage::Fragment;
    let mut layout = BindingLayout::nvn(st, 0x20);
    layout.septex_base = Some(0x168);
    let run = |code: &[u8]| {
        let cfg = dksh::graphics_config(st, code, &[], layout.clone(), "nvn-test").unwrap();
        dmsh_spv::translate_graphics(code, &cfg, &Options::default())
    };
    // Combined table slot 1 (c[2][0x28]) ORed with separate sampler 1 (c[2][0x570]).
    let o = run(&nvn_fragment((2, 0x28), (2, 0x570), true)).unwrap();
    common::spirv_val(&o.words).unwrap();
    let t = resources_of(&o, "texture");
    assert_eq!((t.len(), t[0].bank, t[0].vk_binding()), (1, 1, 65));
    // A separate texture (c[2][0x170] = septex slot 1 → 129) with a separate sampler.
    let o = run(&nvn_fragment((2, 0x170), (2, 0x568), true)).unwrap();
    common::spirv_val(&o.words).unwrap();
    assert!(resources_of(&o, "texture").iter().any(|r| r.bank == 129));
    // A handle read from uniform buffer 4 (c[7][0xa8]): tex_ubo.
    let o = run(&nvn_fragment((7, 0xa8), (2, 0x568), false)).unwrap();
    common::spirv_val(&o.words).unwrap();
    let r = resources_of(&o, "tex_ubo")[0];
    assert_eq!((r.bank, r.guest_offset), (7, 0xa8));
    // Its sampler ID (the word's high 12 bits) is the samp_ubo half of the same binding.
    let s = resources_of(&o, "samp_ubo")[0];
    assert_eq!(
        (s.bank, s.guest_offset, s.vk_binding()),
        (7, 0xa8, r.vk_binding()),
        "samp_ubo"
    );
    // A handle the profile cannot explain: a clear error with key and offset.
    let e = run(&nvn_fragment((2, 0x24), (2, 0x568), true))
        .unwrap_err()
        .to_string();
    println!("{e}");
    assert!(
        e.contains("nvn-test") && e.contains("0x28") && e.contains("unresolvable"),
        "{e}"
    );
}

#[test]
fn nvn_tex_dyn_slots_bind_arrays() {
    let st = dmsh_ir::Stage::Fragment;
    let mut layout = BindingLayout::nvn(st, 0x168);
    layout.tex_count = 128;
    // c[2][0x164] is no table word: without tex_dyn_slots an error, with it the arrays.
    let code = nvn_fragment((2, 0x164), (2, 0x568), true);
    let run = |layout: &BindingLayout| {
        let cfg = dksh::graphics_config(st, &code, &[], layout.clone(), "dyn-test").unwrap();
        dmsh_spv::translate_graphics(&code, &cfg, &Options::default())
    };
    let e = run(&layout).unwrap_err().to_string();
    assert!(e.contains("unresolvable"), "{e}");
    layout.tex_dyn = true;
    let o = run(&layout).unwrap();
    common::spirv_val(&o.words).unwrap();
    let kinds: Vec<_> = o
        .reflection
        .resources
        .iter()
        .filter(|r| r.count > 0)
        .map(|r| (r.kind.as_str(), r.vk_binding(), r.count))
        .collect();
    let t = 64 + dmsh_ir::TEX_DYN as u32;
    assert_eq!(
        kinds,
        [("tex_dyn", t, 32), ("samp_dyn", t + 32, 32)],
        "{:?}",
        o.reflection.resources
    );
    let json = o.reflection.to_json();
    assert!(json.contains("\"count\": 32") && json.contains("\"kind\": \"samp_dyn\""));
    println!("tex_dyn: {} words, {kinds:?}", o.words.len());
}

#[test]
fn nvn_sampler_sources_samp_id_and_samp_ubo() {
    let st = dmsh_ir::Stage::Fragment;
    let layout = BindingLayout::nvn(st, 0x20);
    let run = |code: &[u8]| {
        let cfg = dksh::graphics_config(st, code, &[], layout.clone(), "samp-test").unwrap();
        dmsh_spv::translate_graphics(code, &cfg, &Options::default())
    };
    fn kinds(o: &dmsh_spv::Output) -> Vec<(&str, u32, u32, u32)> {
        o.reflection
            .resources
            .iter()
            .filter(|r| r.kind != "cbuf")
            .map(|r| (r.kind.as_str(), r.bank, r.guest_offset, r.vk_binding()))
            .collect::<Vec<_>>()
    }
    // A uniform-buffer texture word (c[7][0xa8]) ORed with the constant sampler ID 0x304
    // (MH Rise's fp_t_cb65541_…): tex_ubo + samp_id, one combined binding.
    let o = run(&nvn_fragment((7, 0xa8), (0xff, 0x3041_0000), true)).unwrap();
    common::spirv_val(&o.words).unwrap();
    let b = 64 + (0x8000 | 4 << 11 | 0x2a);
    assert_eq!(
        kinds(&o),
        [("tex_ubo", 7, 0xa8, b), ("samp_id", 0x304, 0, b)],
        "ubo | const"
    );
    // A table texture (slot 1) ORed with a sampler word of uniform buffer 1 (c[4][0x10]).
    let o = run(&nvn_fragment((2, 0x28), (4, 0x10), true)).unwrap();
    common::spirv_val(&o.words).unwrap();
    assert_eq!(
        kinds(&o),
        [("texture", 1, 0, 65), ("samp_ubo", 4, 0x10, 65)],
        "table | ubo sampler"
    );
    // A table texture with a separate-sampler table word (c[2][0x570] = sampler 1): its own
    // sampler descriptor (binding 96 + 1); the texture is a separate image.
    let o = run(&nvn_fragment((2, 0x28), (2, 0x570), true)).unwrap();
    common::spirv_val(&o.words).unwrap();
    assert_eq!(kinds(&o), [("texture", 1, 0, 65), ("sampler", 1, 0, 97)]);
    assert!(o
        .reflection
        .resources
        .iter()
        .any(|r| r.kind == "texture" && r.separate));
    let json = o.reflection.to_json();
    assert!(json.contains("\"separate\": true") && json.contains("\"kind\": \"sampler\""));
    println!("samp_id / samp_ubo: ok");
}
