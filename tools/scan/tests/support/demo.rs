//! The demo title (games/demo): a small RomFS + main made from the real shader binaries of
//! tests/corpus, exercising every reader with nesting. `build` writes it and returns what was
//! put in, so tests can check the split finds exactly that.

use std::collections::BTreeMap;
use std::path::Path;

use super::writers::{self as w, Wrap};
use super::{ktgl, unity};
use super::{load_dksh, load_nak_sm86, load_sm86, Built, CorpusShader};

/// What the demo holds.
#[derive(Debug, Default)]
pub struct Demo {
    /// Every shader put in (duplicates included), with the file it went into.
    pub shaders: Vec<(String, Built)>,
    /// (vertex key, fragment key) pairs the containers define.
    pub pairs: Vec<(String, String)>,
    /// Files written, relative to the demo folder, sorted.
    pub files: Vec<String>,
}

struct Pool {
    by_name: BTreeMap<String, CorpusShader>,
    used: BTreeMap<String, bool>,
}

impl Pool {
    fn get(&mut self, name: &str) -> CorpusShader {
        self.used.insert(name.to_string(), true);
        self.by_name
            .get(name)
            .unwrap_or_else(|| panic!("corpus shader {name}"))
            .clone()
    }
    fn unused(&self) -> Vec<CorpusShader> {
        self.by_name
            .values()
            .filter(|s| !self.used.contains_key(&s.name))
            .cloned()
            .collect()
    }
}

fn text(name: &str, ext: &str) -> String {
    std::fs::read_to_string(
        super::repo_root()
            .join("tests/corpus/dksh")
            .join(format!("{name}.{ext}")),
    )
    .unwrap_or_default()
}

impl Demo {
    fn put(&mut self, file: &str, b: &Built) {
        self.shaders.push((file.to_string(), b.clone()));
    }
    fn pair(&mut self, v: &Built, f: &Built) {
        self.pairs.push((v.key(), f.key()));
    }
    /// A BNSH of `vars`, recording shaders and pairs (vertex with the fragment after it).
    fn bnsh(&mut self, file: &str, vars: &[Vec<&Built>]) -> Vec<u8> {
        for v in vars {
            for b in v {
                self.put(file, b);
            }
            if let (Some(vs), Some(fs)) = (
                v.iter().find(|b| b.stage == "vertex"),
                v.iter().find(|b| b.stage == "fragment"),
            ) {
                self.pair(vs, fs);
            }
        }
        w::bnsh(vars)
    }
}

fn write(root: &Path, rel: &str, bytes: &[u8], demo: &mut Demo) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, bytes).unwrap();
    demo.files.push(rel.to_string());
}

/// Writes the demo title under `root` (`romfs/`, `exefs/main`).
pub fn build(root: &Path) -> Demo {
    let mut pool = Pool {
        by_name: load_dksh()
            .into_iter()
            .map(|s| (s.name.clone(), s))
            .collect(),
        used: BTreeMap::new(),
    };
    let mut d = Demo::default();
    let std = Wrap::default();
    let b = |pool: &mut Pool, n: &str, wr: Wrap| w::build(&pool.get(n), wr);

    // 1. zstd → bfsha → BNSH: four variations, tessellation and geometry included, and a
    //    fifth that repeats the first (a duplicate the split merges).
    {
        let f = "romfs/Shader/Demo.Nin_NX_NVN.bfsha.zs";
        let vs = b(&mut pool, "vs_basic_mvp.vert", std);
        let fs = b(&mut pool, "fs_tex2d_basic.frag", std);
        let vs2 = b(&mut pool, "vs_skinning.vert", std);
        let fs2 = b(&mut pool, "fs_lighting_loops.frag", std);
        let vs3 = b(&mut pool, "vs_clipdist.vert", std);
        let tc = b(&mut pool, "tcs_triangle.tesc", std);
        let te = b(&mut pool, "tes_triangle.tese", std);
        let gs = b(&mut pool, "gs_passthrough_tri.geom", std);
        let fs3 = b(&mut pool, "fs_mrt.frag", std);
        let cs = b(&mut pool, "cs_matmul_tiled.comp", std);
        let bn = d.bnsh(
            f,
            &[
                vec![&vs, &fs],
                vec![&vs2, &fs2],
                vec![&vs3, &tc, &te, &gs, &fs3],
                vec![&cs],
                vec![&vs, &fs],
            ],
        );
        write(root, f, &w::zstd(&w::wrap_nw(b"FSHA", "Demo", &bn)), &mut d);
    }
    // 2. zstd → SARC → Yaz0 → SARC → bfsha → BNSH, and → SARC (blarc) → BNSH.
    {
        let f = "romfs/Pack/Deep.pack.zs";
        let vs = b(&mut pool, "vs_displace_tex.vert", std);
        let fs = b(&mut pool, "fs_shadow.frag", std);
        let vs2 = b(&mut pool, "vs_fullscreen_const.vert", std);
        let fs2 = b(&mut pool, "fs_gather.frag", std);
        let bfsha = w::wrap_nw(
            b"FSHA",
            "Deep",
            &d.bnsh(f, &[vec![&vs, &fs], vec![&vs2, &fs2]]),
        );
        let vs3 = b(&mut pool, "vs_pointsize_ids.vert", std);
        let fs3 = b(&mut pool, "fs_discard_alpha.frag", std);
        let ui = d.bnsh(f, &[vec![&vs3, &fs3]]);
        let blarc = w::sarc(&[
            ("blyt/Menu.bflyt", b"FLYT demo layout".to_vec()),
            ("shader/Menu.bnsh", ui),
        ]);
        let inner = w::sarc(&[("Model/Deep.bfsha", bfsha), ("Layout/Menu.blarc", blarc)]);
        let outer = w::sarc(&[
            ("Shader/Inner.szs", w::yaz0(&inner)),
            ("readme.txt", b"demo pack\n".to_vec()),
        ]);
        write(root, f, &w::zstd_stream(&outer), &mut d);
    }
    // 3. An effect (VFXB) with an SDK 10 BNSH: 0x850-byte controls, headerless compute.
    {
        let f = "romfs/Effect/Sparks.esetb";
        let sdk10 = Wrap {
            ctl_len: 0x850,
            ..std
        };
        let bare = Wrap {
            ctl_len: 0x850,
            bare_compute: true,
            salt: 0,
        };
        let vs = b(&mut pool, "vs_layer_viewport.vert", sdk10);
        let fs = b(&mut pool, "fs_pointcoord_layer.frag", sdk10);
        let cs = b(&mut pool, "cs_ssbo_saxpy.comp", bare);
        let cs2 = b(&mut pool, "cs_shared_reduce.comp", bare);
        let bn = d.bnsh(f, &[vec![&vs, &fs], vec![&cs], vec![&cs2]]);
        write(root, f, &w::wrap_nw(b"VFXB", "Sparks", &bn), &mut d);
    }
    // 4. Yaz0 → SARC → agl BAHS (a shared control section; version 9 with 0x848 controls).
    {
        let f = "romfs/SystemData/AglResource.szs";
        let bahs_file = |d: &mut Demo,
                         version: u32,
                         progs: Vec<Vec<Built>>,
                         shared: Option<(Built, Vec<u8>)>| {
            let mut controls = Vec::new();
            let mut recs: Vec<(usize, Vec<u8>)> = Vec::new();
            for p in &progs {
                for s in p {
                    d.put(f, s);
                    controls.push(s.control.clone());
                    recs.push((controls.len() - 1, s.code.clone()));
                }
                if let (Some(v), Some(x)) = (
                    p.iter().find(|s| s.stage == "vertex"),
                    p.iter().find(|s| s.stage == "fragment"),
                ) {
                    d.pair(v, x);
                }
            }
            if let Some((s, code2)) = shared {
                // Two programs share one control section: same control, different code.
                d.put(f, &s);
                let s2 = Built {
                    code: code2.clone(),
                    name: format!("{}+shared", s.name),
                    ..s.clone()
                };
                d.put(f, &s2);
                controls.push(s.control.clone());
                recs.push((controls.len() - 1, s.code.clone()));
                recs.push((controls.len() - 1, code2));
            }
            let r: Vec<(usize, &[u8])> = recs.iter().map(|(c, k)| (*c, k.as_slice())).collect();
            w::bahs(version, &controls, &r)
        };
        let p1 = vec![
            b(&mut pool, "vs_multi_attr_int.vert", std),
            b(&mut pool, "fs_int_outputs.frag", std),
        ];
        let p2 = vec![
            b(&mut pool, "vs_ssbo_drawparams.vert", std),
            b(&mut pool, "fs_ssbo_atomic.frag", std),
        ];
        let p3 = vec![b(&mut pool, "cs_atomics.comp", std)];
        // Shared control: fs_lod_grad's control with its own code and with fs_tex_array_cube's
        // code cut to the same length (both real uam code; the control's length fields hold).
        let lod = b(&mut pool, "fs_lod_grad.frag", std);
        let cube = w::build(&pool.get("fs_tex_array_cube.frag"), std);
        let mut code2 = cube.code.clone();
        code2.resize(lod.code.len(), 0);
        let common = bahs_file(&mut d, 8, vec![p1, p2, p3], Some((lod, code2)));
        let v9 = Wrap {
            ctl_len: 0x848,
            ..std
        };
        let q1 = vec![
            b(&mut pool, "vs_image_fp64.vert", v9),
            b(&mut pool, "fs_sample_shading.frag", v9),
        ];
        let q2 = vec![b(&mut pool, "cs_local_array.comp", v9)];
        let nine = bahs_file(&mut d, 9, vec![q1, q2], None);
        let arc = w::sarc(&[("agl_common.sharcb", common), ("agl_v9.sharcb", nine)]);
        write(root, f, &w::yaz0(&arc), &mut d);
    }
    // 5. NVN2 (Switch 2): zstd → SARC → NDSR pack, and → zstd → BNSH with 0xD8 controls.
    {
        let f = "romfs/Lib/agl/agl_resource.Nin_Ounce_NVN2.release.sarc.zs";
        // Graphics: NAK's sm86 programs (SPH version 4, 0x80 bytes, then the code) of
        // uniform-buffer-only shaders; compute: ptxas' sm86 kernels.
        let sm86 = load_sm86();
        let k = |i: usize| sm86[i % sm86.len()].1.clone();
        let nak = |name: &str, stage: &'static str, own: u32| {
            let p = load_nak_sm86(name);
            w::build_nvn2(name, stage, &p[..0x80], &p[0x80..], own, [0; 3])
        };
        let nv = nak("vs_basic_mvp.vert", "vertex", 0);
        let nf = nak("fs_lighting_loops.frag", "fragment", 0);
        let nc = w::build_nvn2(&sm86[2].0, "compute", &[], &k(2), 0, [64, 1, 1]);
        let nc2 = w::build_nvn2(&sm86[3].0, "compute", &[], &k(3), 0, [128, 1, 1]);
        for s in [&nv, &nf, &nc, &nc2] {
            d.put(f, s);
        }
        d.pair(&nv, &nf);
        let pack = w::ndsr(&[&nv, &nf, &nc, &nc2]);
        let bv = nak("vs_clipdist.vert", "vertex", 0xD8);
        let bf = nak("fs_fragdepth.frag", "fragment", 0xD8);
        let bn = d.bnsh(f, &[vec![&bv, &bf]]);
        let arc = w::sarc(&[
            ("agl_ndsr.pck", pack),
            (
                "Shader/Upscale.Nin_Ounce_NVN2.bfsha.zs",
                w::zstd(&w::wrap_nw(b"FSHA", "Up", &bn)),
            ),
        ]);
        write(root, f, &w::zstd(&arc), &mut d);
    }
    // 6. MSHD: NV asm text after 0x880 control bytes, an option table, SASS text after code.
    {
        let f = "romfs/system/shd/Demo.bshdat";
        let dread = Wrap {
            ctl_len: 0x8C0,
            ..std
        };
        let vs = b(
            &mut pool,
            "vs_multi_attr_int.vert",
            Wrap { salt: 7, ..dread },
        );
        let fs = b(&mut pool, "fs_switch_bitops.frag", dread);
        let vs2 = b(&mut pool, "vs_skinning.vert", dread);
        let fs2 = b(&mut pool, "fs_interp_modes.frag", dread);
        let sass = |n: &str| text(n, "sass");
        let file = w::mshd(&[
            (&vs, false, &sass("vs_multi_attr_int.vert")),
            (&fs, true, &sass("fs_switch_bitops.frag")),
            (&vs2, false, &sass("vs_skinning.vert")),
            (&fs2, true, &sass("fs_interp_modes.frag")),
        ]);
        for s in [&vs, &fs, &vs2, &fs2] {
            d.put(f, s);
        }
        d.pair(&vs, &fs);
        d.pair(&vs2, &fs2);
        write(root, f, &file, &mut d);
    }
    // 7. Unity: a UnityFS bundle (LZ4 blocks) written by UnityPy, the committed fixture
    //    tools/scan/tests/fixtures/unity/shader_2020_3_lz4.unityfs: one Shader object whose
    //    programs hold corpus shaders already in the demo (same bytes, so only copies grow).
    //    Its type trees name Unity's common strings: the table is in main's .rodata (12).
    {
        let f = "romfs/Data/StreamingAssets/aa/Switch/shaders_2020_3.bundle";
        let tag = "shader_2020_3";
        let progs = unity::SHADERS.iter().find(|(t, _)| *t == tag).unwrap().1;
        for p in progs {
            let built: Vec<Built> = p.iter().map(|n| b(&mut pool, n, std)).collect();
            for s in &built {
                d.put(f, s);
            }
            let stage = |st: &str| built.iter().find(|s| s.stage == st).unwrap();
            d.pair(stage("vertex"), stage("fragment"));
        }
        let bundle = std::fs::read(unity::fixtures().join(format!("{tag}_lz4.unityfs"))).unwrap();
        write(root, f, &bundle, &mut d);
    }
    // 8. KTGL, GLSLC outputs in packages (no pairs: the demo profile's shader_separable is
    //    false). Age of Calamity: an RDB data file of IDRK records, one holding a
    //    zlib-chunked (flate2) G2S package, one of another type.
    {
        let f = "romfs/asset/system.rdb.bin0";
        let g2s: Vec<Built> = [
            "vs_displace_tex.vert",
            "fs_shadow.frag",
            "cs_matmul_tiled.comp",
        ]
        .iter()
        .map(|n| b(&mut pool, n, std))
        .collect();
        for s in &g2s {
            d.put(f, s);
        }
        let pkg = ktgl::package(b"_S2G3000", &g2s.iter().collect::<Vec<_>>());
        let bin0 = ktgl::records(&[
            ktgl::zlib_record(0x0DE3_0001, 0x7BCD_279F, &pkg, 0x1000, false),
            ktgl::zlib_record(
                0x0DE3_0002,
                0x1234_5678,
                b"G1TG0060 demo texture",
                0x1000,
                false,
            ),
        ]);
        write(root, f, &bin0, &mut d);
    }
    //    Three Houses: a loose patch SPKG stored as a KTGL "gz" table (0x4000-byte chunks).
    {
        let f = "romfs/patch1/nx/shader/demo.spkg";
        let spkg: Vec<Built> = ["vs_fullscreen_const.vert", "fs_gather.frag"]
            .iter()
            .map(|n| b(&mut pool, n, std))
            .collect();
        for s in &spkg {
            d.put(f, s);
        }
        let pkg = ktgl::package(b"SPKG", &spkg.iter().collect::<Vec<_>>());
        write(root, f, &ktgl::gz_table(&pkg, 0x4000), &mut d);
    }
    // 9. The other engines' files, built from shaders already in the demo (same corpus
    //    shader and Wrap, so only copies grow).
    //    9a. RE Engine: a KPKA PAK of SDF definitions (raw deflate by flate2, zstd), and an
    //    entry that is no SDF (never inflated past its first bytes); a definition's vertex
    //    and pixel stages pair (a pair the demo has already).
    {
        use super::re_engine::{pak, sdf, PakEntry, Store};
        let f = "romfs/natives/NSW/re_chunk_000.pak";
        let [vs, fs, cs] = [
            "vs_basic_mvp.vert",
            "fs_tex2d_basic.frag",
            "cs_matmul_tiled.comp",
        ]
        .map(|n| b(&mut pool, n, std));
        for s in [&vs, &fs, &cs] {
            d.put(f, s);
        }
        d.pair(&vs, &fs);
        let entries = [
            PakEntry {
                hash: 0x0DE3_5DF0_0000_0001,
                data: sdf(&[vec![&vs, &fs]]),
                store: Store::Deflate(6),
            },
            PakEntry {
                hash: 0x0DE3_5DF0_0000_0002,
                data: sdf(&[vec![&cs]]),
                store: Store::Zstd,
            },
            PakEntry {
                hash: 0x0DE3_7E87_0000_0003,
                data: b"TEX\0 demo texture, not a shader definition".to_vec(),
                store: Store::Deflate(6),
            },
        ];
        write(root, f, &pak(&entries), &mut d);
    }
    //    9b. Unreal: a v11 pak holding a shader code archive whose shaders are LSLG records
    //    in Oodle streams (stored blocks: no open Mermaid encoder exists), and a member that
    //    is no archive. No pairs: vertex and pixel shaders combine per draw (the title's
    //    shader_separable; the demo profile's is false).
    {
        use super::ue::{archive, lslg_record, oodle_entry, pak_v11, Store};
        let f = "romfs/Octopath/Content/Paks/pakchunk0-Switch.pak";
        let [vs, fs] = ["vs_skinning.vert", "fs_lighting_loops.frag"].map(|n| b(&mut pool, n, std));
        for s in [&vs, &fs] {
            d.put(f, s);
        }
        let entries = [(&vs, "MainVS", 24), (&fs, "MainPS", 29)].map(|(s, entry, tail)| {
            let source = format!("/Engine/Private/Demo.usf:{entry}");
            oodle_entry(&lslg_record(s, &source, tail), s.stage)
        });
        let shaders = archive(&entries, &[vec![0, 1]]);
        let pak = pak_v11(&[
            (
                "Octopath/Content/ShaderArchive-Global-SF_GLSL_SWITCH_MOBILE-SP_GLSL_SWITCH_MOBILE.ushaderbytecode",
                shaders,
                Store::Plain,
            ),
            ("Octopath/Content/Movies/Opening.mp4", vec![7; 300], Store::Plain),
        ]);
        write(root, f, &pak, &mut d);
    }
    // 10. Files that hold no shader or are damaged: the scan warns and goes on.
    {
        let mut junk = Vec::new();
        let mut x = 0x1234_5678u32;
        for _ in 0..4096 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            junk.push(x as u8);
        }
        write(root, "romfs/Movie/noise.bin", &junk, &mut d);
        let full = w::zstd(&w::sarc(&[("a.bin", junk.clone())]));
        write(
            root,
            "romfs/Bad/truncated.pack.zs",
            &full[..full.len() / 2],
            &mut d,
        );
        let mut lying = w::sarc(&[("b.bin", junk[..256].to_vec())]);
        let n = lying.len();
        lying[0x20 + 0xC..0x20 + 0x10].copy_from_slice(&(n as u32 * 4).to_le_bytes());
        write(root, "romfs/Bad/lying.sarc", &lying, &mut d);
    }
    // 11. Whatever corpus shader is still unused goes into one more bfsha, one per variation.
    let rest: Vec<Built> = pool
        .unused()
        .into_iter()
        .filter(|s| !MAIN_ONLY.contains(&s.name.as_str()))
        .map(|s| w::build(&s, std))
        .collect();
    {
        let f = "romfs/Shader/Misc.Nin_NX_NVN.bfsha";
        let vars: Vec<Vec<&Built>> = rest.iter().map(|s| vec![s]).collect();
        let bn = d.bnsh(f, &vars);
        write(root, f, &w::wrap_nw(b"FSHA", "Misc", &bn), &mut d);
    }
    // 12. main: an NSO whose .rodata holds a BNSH and GLSLC outputs, referenced from a
    //     {pointer, size, 0} table in .data, then Unity's common string table (for 7).
    {
        let f = "exefs/main";
        let mut text_seg = Vec::new();
        for (_, code) in load_sm86().iter().take(6) {
            text_seg.extend_from_slice(code);
        }
        let mut rodata = b"demo main rodata\0".to_vec();
        rodata.resize(0x100, 0);
        let gs = b(&mut pool, "gs_expand_points.geom", std);
        let vs = b(
            &mut pool,
            "vs_fullscreen_const.vert",
            Wrap { salt: 1, ..std },
        );
        let fs = b(&mut pool, "fs_texelfetch_size.frag", std);
        let bn = d.bnsh(f, &[vec![&vs, &gs, &fs]]);
        rodata.extend_from_slice(&bn);
        let mut outputs = Vec::new();
        let g1 = b(&mut pool, "vs_pointsize_ids.vert", Wrap { salt: 2, ..std });
        let g2 = b(&mut pool, "fs_frontfacing_deriv.frag", std);
        let g3 = b(
            &mut pool,
            "cs_texture_sample.comp",
            Wrap {
                bare_compute: true,
                ..std
            },
        );
        let g4 = b(&mut pool, "cs_variable_group.comp", std);
        for (g, n) in [
            (&g1, "vs_pointsize_ids.vert"),
            (&g2, "fs_frontfacing_deriv.frag"),
            (&g3, "cs_texture_sample.comp"),
            (&g4, "cs_variable_group.comp"),
        ] {
            while !rodata.len().is_multiple_of(0x100) {
                rodata.push(0);
            }
            let dbg = format!("{}\n{}", text(n, "sass"), text(n, "glsl"));
            let out = w::glslc(g, &dbg);
            outputs.push((rodata.len(), out.len()));
            rodata.extend_from_slice(&out);
            d.put(f, g);
        }
        // The bytes of UnityPy's stand-in main (code around the table), found by the
        // unity_strings main-image reader at `AABB\0AnimationClip\0`.
        while !rodata.len().is_multiple_of(0x100) {
            rodata.push(0);
        }
        rodata.extend(std::fs::read(unity::fixtures().join("main_common_strings.bin")).unwrap());
        let ro_base = (text_seg.len() + 0xFFF) & !0xFFF;
        let mut data = Vec::new();
        for (off, len) in outputs {
            data.extend_from_slice(&((ro_base + off) as u64).to_le_bytes());
            data.extend_from_slice(&(len as u64).to_le_bytes());
            data.extend_from_slice(&0u64.to_le_bytes());
        }
        write(root, f, &w::nso(&text_seg, &rodata, &data, true), &mut d);
    }
    d.files.sort();
    d
}

/// Corpus shaders kept for main.
const MAIN_ONLY: [&str; 5] = [
    "cs_texture_sample.comp",
    "gs_expand_points.geom",
    "fs_texelfetch_size.frag",
    "fs_frontfacing_deriv.frag",
    "cs_variable_group.comp",
];
