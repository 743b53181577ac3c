//! Whole splits: base + update lists give the union; the shader_separable cover rule;
//! outputs written atomically next to existing ones.

mod support;

use std::path::Path;

use dmsh_scan::{split, Inputs, Limits, Profile, Quiet, Summary};
use support::writers::{self as w, Wrap};
use support::{split_outputs, tsv_rows};

fn corpus(name: &str) -> support::CorpusShader {
    support::load_dksh()
        .into_iter()
        .find(|s| s.name == name)
        .unwrap()
}

/// Splits `inputs` into `dir` (the [`split_outputs`] there) under `profile`, with the default
/// limits and no progress output.
fn split_into(
    dir: &Path,
    inputs: &Inputs,
    profile: &Profile,
) -> Result<Summary, dmsh_scan::split::SplitError> {
    split(
        inputs,
        &split_outputs(dir),
        profile,
        &Limits::default(),
        &Quiet,
    )
}

#[test]
fn base_and_update_give_the_union() {
    let t = tempfile::tempdir().unwrap();
    let vs = w::build(&corpus("vs_basic_mvp.vert"), Wrap::default());
    let fs = w::build(&corpus("fs_tex2d_basic.frag"), Wrap::default());
    let fs_new = w::build(
        &corpus("fs_tex2d_basic.frag"),
        Wrap {
            salt: 0x121,
            ..Wrap::default()
        },
    );
    for (dir, f) in [("base", &fs), ("update", &fs_new)] {
        let p = t.path().join(dir).join("Shader/A.bfsha.zs");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(
            &p,
            w::zstd(&w::wrap_nw(b"FSHA", "A", &w::bnsh(&[vec![&vs, f]]))),
        )
        .unwrap();
        std::fs::write(
            t.path().join(dir).join("main"),
            w::nso(&[0; 16], &[0; 16], &[], true),
        )
        .unwrap();
    }
    let inputs = Inputs {
        romfs: vec![t.path().join("base"), t.path().join("update")],
        mains: vec![t.path().join("base/main"), t.path().join("update/main")],
    };
    let s = split_into(t.path(), &inputs, &Profile::default()).unwrap();
    assert_eq!(s.unique, 3);
    assert_eq!(s.duplicates, 1);
    let map = tsv_rows(&t.path().join("map.tsv"));
    let vrow = map.iter().find(|r| r[0] == vs.key()).unwrap();
    assert_eq!((vrow[4].as_str(), vrow[8].as_str()), ("romfs0", "2"));
    let frow = map.iter().find(|r| r[0] == fs_new.key()).unwrap();
    assert_eq!(frow[4], "romfs1");
    assert_eq!(tsv_rows(&t.path().join("pairs.tsv")).len(), 2);
}

#[test]
fn separable_titles_pair_every_vertex_shader_with_the_cover() {
    // 13 Sentinels: single-stage GLSLC outputs in main, no pairs in the files.
    let t = tempfile::tempdir().unwrap();
    let vss: Vec<_> = ["vs_basic_mvp.vert", "vs_skinning.vert"]
        .iter()
        .map(|n| w::build(&corpus(n), Wrap::default()))
        .collect();
    let fss: Vec<_> = ["fs_tex2d_basic.frag", "fs_interp_modes.frag", "fs_mrt.frag"]
        .iter()
        .map(|n| w::build(&corpus(n), Wrap::default()))
        .collect();
    let mut ro = Vec::new();
    for b in vss.iter().chain(&fss) {
        while !ro.len().is_multiple_of(0x100) {
            ro.push(0);
        }
        ro.extend(w::glslc(b, "src"));
    }
    std::fs::create_dir_all(t.path().join("romfs")).unwrap();
    std::fs::write(t.path().join("main"), w::nso(&[0; 16], &ro, &[], true)).unwrap();
    let inputs = Inputs {
        romfs: vec![t.path().join("romfs")],
        mains: vec![t.path().join("main")],
    };
    let profile = Profile::parse("shader_main_glslc = true\nshader_separable = true\n").unwrap();
    let s = split_into(t.path(), &inputs, &profile).unwrap();
    assert_eq!(s.unique, 5);
    // fs_interp_modes reads generics 0-5, a superset of the others' inputs: it alone is the cover.
    let pairs = tsv_rows(&t.path().join("pairs.tsv"));
    let want: Vec<Vec<String>> = {
        let mut v: Vec<Vec<String>> = vss.iter().map(|x| vec![x.key(), fss[1].key()]).collect();
        v.sort();
        v
    };
    assert_eq!(pairs, want);
    assert_eq!(s.cover_pairs, 2);
    // Without the switch: no pairs and no GLSLC outputs.
    let s = split_into(t.path(), &inputs, &Profile::default()).unwrap();
    assert_eq!((s.unique, s.pairs), (0, 0));
    assert_eq!(
        std::fs::read_to_string(t.path().join("pairs.tsv")).unwrap(),
        "vertex\tfragment\n"
    );
}

#[test]
fn missing_inputs_are_errors_and_temp_files_do_not_remain() {
    let t = tempfile::tempdir().unwrap();
    let inputs = Inputs {
        romfs: vec![t.path().join("nope")],
        mains: vec![],
    };
    assert!(split_into(t.path(), &inputs, &Profile::default()).is_err());
    std::fs::create_dir_all(t.path().join("r")).unwrap();
    let inputs = Inputs {
        romfs: vec![t.path().join("r")],
        mains: vec![],
    };
    split_into(t.path(), &inputs, &Profile::default()).unwrap();
    let names: Vec<String> = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names.iter().any(|n| n.starts_with(".dmsh-tmp")),
        "{names:?}"
    );
}
