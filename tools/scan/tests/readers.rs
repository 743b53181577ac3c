//! Readers on files written by independent writers (sarc, yaz0, zstd, lz4_flex crates), keys
//! against sha256 computed here, and the control / code checks that must refuse bad code.

mod support;

use dmsh_scan::containers::{nso, sarc, yaz0, zstd};
use dmsh_scan::shader::{extract, Spot};
use dmsh_scan::walk::FileScan;
use dmsh_scan::Limits;
use rand::{Rng, SeedableRng};
use support::writers::{self as w, Wrap};

fn corpus(name: &str) -> support::CorpusShader {
    support::load_dksh()
        .into_iter()
        .find(|s| s.name == name)
        .unwrap()
}

fn spot_of(b: &support::Built, buf: &[u8], ctl: usize, code: usize) -> Spot {
    Spot {
        ctl,
        ctl_end: ctl + b.control.len(),
        ctl_size: None,
        code,
        code_end: buf.len(),
        claimed: None,
        allow_bare: true,
    }
}

fn concat(b: &support::Built) -> (Vec<u8>, usize) {
    let mut v = b.control.clone();
    let code = v.len();
    v.extend_from_slice(&b.code);
    (v, code)
}

#[test]
fn every_corpus_shader_keys_as_sha256_says() {
    for s in support::load_dksh() {
        for wr in [
            Wrap::default(),
            Wrap {
                ctl_len: 0x850,
                ..Wrap::default()
            },
            Wrap {
                ctl_len: 0x848,
                bare_compute: true,
                salt: 3,
            },
        ] {
            let b = w::build(&s, wr);
            let (buf, code) = concat(&b);
            let r = extract(&buf, spot_of(&b, &buf, 0, code));
            if wr.bare_compute && s.stage == "compute" && s.threads == [0; 3] {
                // Headerless code with no thread group (variable group size): nothing says
                // compute, so it is refused.
                assert!(r.is_err(), "{}", b.name);
                continue;
            }
            let p = r.unwrap_or_else(|e| panic!("{}: {e}", b.name));
            assert_eq!(p.key, b.key(), "{}", b.name);
            assert_eq!(p.stage.as_str(), s.stage, "{}", b.name);
            println!("{} {} {}", b.name, p.key, p.stage);
        }
    }
}

#[test]
fn short_control_hashes_only_its_own_length() {
    let s = corpus("vs_basic_mvp.vert");
    let b = w::build(
        &s,
        Wrap {
            ctl_len: 0x850,
            ..Wrap::default()
        },
    );
    // The container keeps other data after the 0x850 bytes: it must not change the key.
    let mut buf = b.control.clone();
    buf.extend_from_slice(&[0xAB; 0x30]);
    let code = buf.len();
    buf.extend_from_slice(&b.code);
    let p = extract(
        &buf,
        Spot {
            ctl_end: code,
            ..spot_of(&b, &buf, 0, code)
        },
    )
    .unwrap();
    assert_eq!(p.key, b.key());
}

#[test]
fn nvn2_key_ignores_control_plus_0x30() {
    let sm86 = support::load_sm86();
    let a = w::build_nvn2("k", "compute", &[], &sm86[0].1, 0xD8, [32, 1, 1]);
    let b = w::build_nvn2("k", "compute", &[], &sm86[0].1, 0, [32, 1, 1]);
    assert_ne!(a.control, b.control);
    let (ba, ca) = concat(&a);
    let (bb, cb) = concat(&b);
    let pa = extract(
        &ba,
        Spot {
            claimed: Some(dmsh_scan::Stage::Compute),
            ..spot_of(&a, &ba, 0, ca)
        },
    )
    .unwrap();
    let pb = extract(
        &bb,
        Spot {
            claimed: Some(dmsh_scan::Stage::Compute),
            ctl_size: Some(0xD8),
            ..spot_of(&b, &bb, 0, cb)
        },
    )
    .unwrap();
    assert_eq!(pa.key, pb.key);
    assert_eq!(pa.key, a.key());
}

#[test]
fn compute_code_with_bad_padding_or_misaligned_start_is_refused() {
    let s = corpus("cs_ssbo_saxpy.comp");
    let b = w::build(&s, Wrap::default());
    let (buf, code) = concat(&b);
    assert!(extract(&buf, spot_of(&b, &buf, 0, code)).is_ok());
    // Non-zero padding between 0x30 and 0x100.
    let mut bad = buf.clone();
    bad[code + 0x80] = 1;
    assert!(extract(&bad, spot_of(&b, &bad, 0, code)).is_err());
    // Instructions shifted by 0x10 (the Mario bug): the first word is no longer a group start.
    let mut shifted = buf.clone();
    let n = shifted.len();
    shifted.copy_within(code + 0x100..n - 0x10, code + 0x110);
    shifted[code + 0x100..code + 0x110].fill(0);
    assert!(extract(&shifted, spot_of(&b, &shifted, 0, code)).is_err());
    // Headerless code shifted by 8 bytes: EXIT lands in a scheduling slot or the start is wrong.
    let bare = w::build(
        &s,
        Wrap {
            bare_compute: true,
            ..Wrap::default()
        },
    );
    let (mut bb, bc) = concat(&bare);
    assert!(extract(&bb, spot_of(&bare, &bb, 0, bc)).is_ok());
    let n = bb.len();
    bb.copy_within(bc..n - 8, bc + 8);
    bb[bc..bc + 8].fill(0);
    assert!(extract(&bb, spot_of(&bare, &bb, 0, bc)).is_err());
}

#[test]
fn control_length_rules() {
    let s = corpus("fs_tex2d_basic.frag");
    for (len, ok) in [
        (0x880, true),
        (0x850, true),
        (0x848, true),
        (0x760, true),
        (0x75C, false),
        (0x86A, false),
    ] {
        let mut b = w::build(&s, Wrap::default());
        b.control[0x20..0x24].copy_from_slice(&(len as u32).to_le_bytes());
        let (buf, code) = concat(&b);
        assert_eq!(
            extract(&buf, spot_of(&b, &buf, 0, code)).is_ok(),
            ok,
            "length {len:#x}"
        );
    }
}

#[test]
fn sarc_written_by_the_sarc_crate_both_byte_orders() {
    let files: Vec<(String, Vec<u8>)> = (0..20)
        .map(|i| (format!("dir{}/file{i}.bin", i % 3), vec![i as u8; i * 37]))
        .collect();
    let refs: Vec<(&str, Vec<u8>)> = files.iter().map(|(n, d)| (n.as_str(), d.clone())).collect();
    for e in [::sarc::Endian::Little, ::sarc::Endian::Big] {
        let arc = w::sarc_endian(&refs, e);
        let mut got: Vec<(String, Vec<u8>)> = sarc::members(&arc)
            .unwrap()
            .into_iter()
            .map(|m| (m.name, arc[m.range].to_vec()))
            .collect();
        got.sort();
        let mut want = files.clone();
        want.sort();
        assert_eq!(got, want);
    }
}

#[test]
fn yaz0_written_by_the_yaz0_crate() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    for n in [0usize, 1, 17, 4096, 100_000] {
        let mut data: Vec<u8> = (0..n).map(|_| rng.gen_range(0..4u8)).collect();
        data.extend(std::iter::repeat_n(7u8, n / 3));
        let z = w::yaz0(&data);
        assert!(z.starts_with(yaz0::MAGIC));
        assert_eq!(yaz0::decode(&z, 1 << 30).unwrap(), data, "{n} bytes");
    }
}

#[test]
fn zstd_one_shot_streamed_and_concatenated() {
    let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    assert_eq!(zstd::decode(&w::zstd(&data), 1 << 30).unwrap(), data);
    assert_eq!(zstd::decode(&w::zstd_stream(&data), 1 << 30).unwrap(), data);
    let mut two = w::zstd(&data[..1000]);
    two.extend(w::zstd_stream(&data[1000..]));
    assert_eq!(zstd::decode(&two, 1 << 30).unwrap(), data);
}

#[test]
fn nso_with_lz4_segments_from_lz4_flex() {
    let text: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 13) as u8).collect();
    let ro = b"BNSH-free rodata".repeat(100);
    let data = vec![1u8; 300];
    for compress in [true, false] {
        let f = w::nso(&text, &ro, &data, compress);
        let (img, warn) = nso::flat_image(&f, 1 << 30).unwrap();
        assert!(warn.is_empty());
        assert_eq!(&img[..text.len()], &text[..]);
        let ro_at = (text.len() + 0xFFF) & !0xFFF;
        assert_eq!(&img[ro_at..ro_at + ro.len()], &ro[..]);
        let d_at = (ro_at + ro.len() + 0xFFF) & !0xFFF;
        assert_eq!(&img[d_at..d_at + 300], &data[..]);
    }
}

#[test]
fn bnsh_inside_main_and_glslc_only_with_the_profile_switch() {
    let vs = w::build(&corpus("vs_basic_mvp.vert"), Wrap::default());
    let fs = w::build(&corpus("fs_tex2d_basic.frag"), Wrap::default());
    let mut ro = vec![0u8; 0x100];
    ro.extend(w::bnsh(&[vec![&vs, &fs]]));
    while !ro.len().is_multiple_of(0x100) {
        ro.push(0);
    }
    let g = w::build(
        &corpus("cs_atomics.comp"),
        Wrap {
            salt: 9,
            ..Wrap::default()
        },
    );
    ro.extend(w::glslc(&g, "debug"));
    let main = w::nso(&[0u8; 64], &ro, &[], true);
    let limits = Limits::default();
    for (glslc, n) in [(false, 2), (true, 3)] {
        let s = FileScan::new(&limits, glslc, 0, "main0".into()).scan_main(&main, "main");
        assert_eq!(s.shaders.len(), n);
        assert!(s.warnings.is_empty());
    }
}

#[test]
fn nro_and_elf_mains() {
    let vs = w::build(&corpus("vs_skinning.vert"), Wrap::default());
    let bn = w::bnsh(&[vec![&vs]]);
    // NRO: NRO0 at +0x10, size at +0x18, the file is the image.
    let mut nro = vec![0u8; 0x80];
    nro[0x10..0x14].copy_from_slice(b"NRO0");
    nro.extend_from_slice(&bn);
    let n = nro.len() as u32;
    nro[0x18..0x1C].copy_from_slice(&n.to_le_bytes());
    // ELF64: one PT_LOAD at vaddr 0x1000 holding the BNSH at file offset 0x1000.
    let mut elf = vec![0u8; 0x1000];
    elf[0..4].copy_from_slice(b"\x7fELF");
    elf[4] = 2;
    elf[5] = 1;
    elf[0x20..0x28].copy_from_slice(&0x40u64.to_le_bytes());
    elf[0x36..0x38].copy_from_slice(&0x38u16.to_le_bytes());
    elf[0x38..0x3A].copy_from_slice(&1u16.to_le_bytes());
    let ph = 0x40;
    elf[ph..ph + 4].copy_from_slice(&1u32.to_le_bytes());
    elf[ph + 8..ph + 0x10].copy_from_slice(&0x1000u64.to_le_bytes());
    elf[ph + 0x10..ph + 0x18].copy_from_slice(&0x1000u64.to_le_bytes());
    elf[ph + 0x20..ph + 0x28].copy_from_slice(&(bn.len() as u64).to_le_bytes());
    elf[ph + 0x28..ph + 0x30].copy_from_slice(&(bn.len() as u64 + 0x100).to_le_bytes());
    elf.extend_from_slice(&bn);
    let limits = Limits::default();
    for (f, layer) in [(nro, "main|nro"), (elf, "main|elf")] {
        let s = FileScan::new(&limits, false, 0, "main0".into()).scan_main(&f, "main");
        assert_eq!(s.shaders.len(), 1, "{layer}");
        assert_eq!(s.shaders[0].piece.key, vs.key());
        assert_eq!(&*s.shaders[0].path, layer);
    }
}
