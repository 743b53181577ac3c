//! SPH v4 (sm86) against the oracle in `tests/corpus/nak/*.sm86.meta.json`: every field name
//! NVIDIA's `clc797sph.h` table gives a non-zero value (`nonzero_fields_per_official_table`,
//! written by the corpus generator from NAK's header, not by this code) must be what
//! `SphInfo` decodes, and every field `SphInfo` decodes as non-zero must be in that list.
//! The sm53 metas' v3 SPHs go through the same comparison (their table is `cla097sph.h`).

use dmsh_formats::sph::{sysval, Interp, Sph, SphInfo, SphStage};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Oracle fields this decode does not model (reserved bits NAK fills).
const NOT_DECODED: &[&str] = &["RESERVED_COMMON_B"];

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/nak")
}

fn interp_code(m: Interp) -> u64 {
    match m {
        Interp::Unused => 0,
        Interp::Constant => 1,
        Interp::Perspective => 2,
        Interp::ScreenLinear => 3,
    }
}

/// Every non-zero field of `i`, by its name in NVIDIA's SPH table.
fn official_fields(i: &SphInfo) -> BTreeMap<String, u64> {
    let stage = match i.stage {
        SphStage::Vertex => 1,
        SphStage::TessControl => 2,
        SphStage::TessEval => 3,
        SphStage::Geometry => 4,
        SphStage::Fragment => 5,
    };
    let mut m = BTreeMap::new();
    let common: [(&str, u64); 19] = [
        ("SPH_TYPE", i.sph_type.into()),
        ("VERSION", i.version.into()),
        ("SHADER_TYPE", stage),
        ("MRT_ENABLE", i.mrt_enable.into()),
        ("KILLS_PIXELS", i.kills_pixels.into()),
        ("DOES_GLOBAL_STORE", i.does_global_store.into()),
        ("SASS_VERSION", i.sass_version.into()),
        ("DOES_LOAD_OR_STORE", i.does_load_or_store.into()),
        ("DOES_FP64", i.does_fp64.into()),
        ("STREAM_OUT_MASK", i.stream_out_mask.into()),
        ("SHADER_LOCAL_MEMORY_LOW_SIZE", i.local_memory_low.into()),
        (
            "PER_PATCH_ATTRIBUTE_COUNT",
            i.per_patch_attribute_count.into(),
        ),
        ("SHADER_LOCAL_MEMORY_HIGH_SIZE", i.local_memory_high.into()),
        (
            "THREADS_PER_INPUT_PRIMITIVE",
            i.threads_per_input_primitive.into(),
        ),
        ("SHADER_LOCAL_MEMORY_CRS_SIZE", i.local_memory_crs.into()),
        ("OUTPUT_TOPOLOGY", i.output_topology.into()),
        ("MAX_OUTPUT_VERTEX_COUNT", i.max_output_vertex_count.into()),
        ("STORE_REQ_START", i.store_req_start.into()),
        ("STORE_REQ_END", i.store_req_end.into()),
    ];
    for (k, v) in common {
        m.insert(k.to_string(), v);
    }
    for &(n, name) in sysval::SYSTEM_VALUES {
        m.insert(format!("IMAP_{name}"), i.imap_sysval(n).into());
        m.insert(format!("OMAP_{name}"), i.omap_sysval(n).into());
    }
    let ps = i.stage == SphStage::Fragment;
    for k in 0..128 {
        let (n, c) = (k / 4, ["X", "Y", "Z", "W"][k % 4]);
        let input = if ps {
            interp_code(i.imap_interp[k])
        } else {
            (i.imap_generic >> k & 1) as u64
        };
        m.insert(format!("GENERIC_IMAP_{c}[{n}]"), input);
        m.insert(
            format!("GENERIC_OMAP_{c}[{n}]"),
            (i.omap_generic >> k & 1) as u64,
        );
    }
    for k in 0..32 {
        let c = ["RED", "GREEN", "BLUE", "ALPHA"][k % 4];
        m.insert(
            format!("OMAP_{c}[{}]", k / 4),
            (i.omap_target >> k & 1).into(),
        );
    }
    m.insert("OMAP_SAMPLE_MASK".into(), i.omap_sample_mask.into());
    m.insert("OMAP_DEPTH".into(), i.omap_depth.into());
    m.retain(|_, v| *v != 0);
    m
}

/// The v4-only maps against the oracle's `decoded` object (keys start with the field name);
/// returns how many were compared.
fn check_v4_extras(i: &SphInfo, decoded: &serde_json::Value, p: &std::path::Path) -> usize {
    if i.version != 4 {
        return 0;
    }
    let hex = |v: &serde_json::Value| {
        u128::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
    };
    let mut n = 0;
    for (k, v) in decoded.as_object().unwrap() {
        let (got, want) = if k.starts_with("imap_system_values_d") {
            (i.imap_sys_d as u128, hex(v))
        } else if k.starts_with("omap_system_values_d") {
            (i.omap_sys_d as u128, hex(v))
        } else if k.starts_with("bit610_does_interlock") {
            (i.does_interlock as u128, v.as_u64().unwrap() as u128)
        } else if k.starts_with("bit611_uses_underestimate") {
            (i.uses_underestimate as u128, v.as_u64().unwrap() as u128)
        } else if k.starts_with("pervertex_imap") && i.stage == SphStage::Fragment {
            let w = v.as_array().unwrap().iter().map(hex);
            (
                i.imap_pervertex,
                w.enumerate().fold(0, |a, (j, x)| a | x << (32 * j)),
            )
        } else {
            continue;
        };
        assert_eq!(got, want, "{}: {k}", p.display());
        n += 1;
    }
    n
}

/// Compares every graphics meta of architecture `sm`; returns (shaders, fields checked).
fn check(sm: &str, version: u32, size: usize) -> (usize, usize) {
    let (mut shaders, mut fields) = (0, 0);
    let mut paths: Vec<_> = std::fs::read_dir(corpus())
        .expect("tests/corpus/nak")
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(&format!(".{sm}.meta.json")))
        .collect();
    paths.sort();
    for p in paths {
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let Some(sph) = meta.get("sph").filter(|s| !s.is_null()) else {
            continue;
        };
        assert_eq!(sph["version"], version, "{}", p.display());
        let bytes: Vec<u8> = sph["words"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|w| {
                let w = u32::from_str_radix(w.as_str().unwrap().trim_start_matches("0x"), 16);
                w.unwrap().to_le_bytes()
            })
            .collect();
        assert_eq!(bytes.len(), size, "{}", p.display());
        let raw = Sph::parse(&bytes).expect("parses");
        assert_eq!(raw.size(), size);
        let info = SphInfo::from_sph(&raw).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let mut want: BTreeMap<String, u64> = BTreeMap::new();
        for (k, v) in sph["nonzero_fields_per_official_table"]
            .as_object()
            .unwrap()
        {
            if !NOT_DECODED.contains(&k.as_str()) {
                want.insert(k.clone(), v.as_u64().unwrap());
            }
        }
        let got = official_fields(&info);
        assert_eq!(got, want, "{}", p.display());
        fields += check_v4_extras(&info, &sph["decoded"], &p);
        shaders += 1;
        fields += want.len();
        // The code-layout view agrees: the code starts right after the SPH.
        let layout = &meta["code_bin_layout"];
        let off = layout["instructions_offset"]
            .as_u64()
            .expect("instructions_offset");
        assert_eq!(off as usize, raw.size(), "{}", p.display());
        // The code-area locator finds the same SPH and code start in the code.bin.
        let bin = std::fs::read(p.to_string_lossy().replace(".meta.json", ".code.bin")).unwrap();
        let prog = dmsh_formats::code_area::locate_code_area(&bin);
        assert_eq!(prog.sph.as_ref(), Some(&raw), "{}", p.display());
        assert_eq!(prog.code_start as u64, off, "{}", p.display());
    }
    println!("{sm}: {shaders} graphics SPHs, {fields} oracle fields matched (non-zero table fields, v4 maps)");
    (shaders, fields)
}

#[test]
fn sm86_sph_v4_matches_official_table() {
    let (shaders, fields) = check("sm86", 4, 0x80);
    assert!(
        shaders >= 30 && fields > 500,
        "{shaders} shaders, {fields} fields"
    );
}

#[test]
fn sm53_sph_v3_matches_official_table() {
    let (shaders, _) = check("sm53", 3, 0x50);
    assert!(shaders >= 30, "{shaders} shaders");
}

#[test]
fn truncated_or_random_headers_are_errors_not_panics() {
    // A v4 word 0 with fewer than 0x80 bytes is short.
    let mut b = vec![0u8; 0x80];
    b[..4].copy_from_slice(&0x0002_5482u32.to_le_bytes());
    for n in 0..0x80 {
        assert!(SphInfo::parse(&b[..n]).is_err(), "{n} bytes");
    }
    assert!(SphInfo::parse(&b).is_ok());
    // Seeded random 0x80-byte headers: decoded or refused, never a panic.
    let mut x: u64 = 0x5eed_0004;
    let (mut ok, mut bad) = (0, 0);
    for _ in 0..20_000 {
        for byte in b.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *byte = x as u8;
        }
        if x.is_multiple_of(3) {
            // Often a valid word 0, so the map decode runs on random maps too.
            b[..4].copy_from_slice(
                &[0x0002_5482u32, 0x0002_0481, 0x1002_1081][(x % 9 / 3) as usize].to_le_bytes(),
            );
        }
        let n = (x >> 8) as usize % 0x81;
        match SphInfo::parse(&b[..n]) {
            Ok(i) => {
                ok += 1;
                let _ = (
                    i.input_generics(),
                    i.targets_written(),
                    i.clip_distances_out(),
                );
                let _ = Sph::parse(&b[..n]).unwrap().describe();
            }
            Err(e) => {
                bad += 1;
                assert!(!e.to_string().is_empty());
            }
        }
    }
    println!("random SPHs: {ok} decoded, {bad} refused");
    assert!(ok > 0 && bad > 0);
}
