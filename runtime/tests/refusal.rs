//! Refusals and bad input on hand-made titles: each mismatch (folder, build record,
//! reflection schema and chain, c1 list) has its own status and message and loads nothing;
//! truncated or hostile maps, reflections and c1 lists are errors, never panics, through the
//! Rust API and the C ABI alike.

mod common;

use common::{hand_title, open, vertex_json, V};
use dmsh_runtime::abi::{DEPTH_GL, DEPTH_ZERO_TO_ONE};
use dmsh_runtime::{OpenOptions, Status, Title};

const K: &str = "00000000000000aa";
const KN: u64 = 0xaa;

#[test]
fn a_good_title_opens_and_converts() {
    let d = hand_title("good", &[(K, "vertex")], &[(K, vertex_json(V, 1))]);
    std::fs::write(d.join("c1_full.tsv"), format!("b-{V}\n{K}\n")).unwrap();
    let t = open(&d).unwrap();
    assert_eq!(t.c1(), Ok(()));
    let f = t.lookup(KN, DEPTH_GL).unwrap();
    assert_eq!(f.entry.to_str().unwrap(), "main0");
    let z = t.lookup(KN, DEPTH_ZERO_TO_ONE).unwrap();
    assert_eq!(z.entry.to_str().unwrap(), "main0_z");
    let s = f.shader.shader();
    assert_eq!(s.flags & dmsh_runtime::abi::SHADER_C1_FULL, 1);
    let b = f.shader.bindings();
    assert_eq!(b.len(), 3);
    assert_eq!((b[0].kind, b[0].size, b[0].read_count), (1, 512, 2));
    assert_eq!(
        f.shader.reads()[b[0].read_first as usize..][..2]
            .iter()
            .map(|r| (r.start, r.end))
            .collect::<Vec<_>>(),
        vec![(0, 64), (256, 272)]
    );
    assert_eq!((b[1].kind, b[1].slot, b[1].guest_offset), (3, 1, 56));
    assert_eq!((b[2].kind, b[2].metal_sampler, b[2].count), (4, 0, 1));
    assert_eq!(f.shader.inputs()[1].component_type, 2);
    println!("good title: {} bindings, {} inputs", b.len(), s.input_count);
}

fn status(r: Result<Title, dmsh_runtime::Error>) -> (Status, String) {
    let e = r.err().expect("refused");
    println!("{:?}: {e}", e.status);
    (e.status, e.to_string())
}

#[test]
fn folders_of_another_version_are_refused() {
    // b-<V> missing, another version's folder there.
    let d = hand_title("folder", &[(K, "vertex")], &[]);
    std::fs::rename(d.join(format!("b-{V}")), d.join("b-ffffffffffff")).unwrap();
    let (s, m) = status(open(&d));
    assert_eq!(s, Status::FolderVersion);
    assert!(m.contains("only b-ffffffffffff"), "{m}");
    // No build at all.
    std::fs::remove_dir_all(d.join("b-ffffffffffff")).unwrap();
    assert_eq!(status(open(&d)).0, Status::FolderMissing);
    // b-<V> whose build record names another chain.
    let d = hand_title("record", &[(K, "vertex")], &[]);
    std::fs::write(
        d.join(format!("b-{V}/_b_build.json")),
        r#"{"chain": "ffffffffffff"}"#,
    )
    .unwrap();
    let (s, m) = status(open(&d));
    assert_eq!(s, Status::FolderVersion);
    assert!(m.contains("records chain ffffffffffff"), "{m}");
    // A truncated build record.
    std::fs::write(d.join(format!("b-{V}/_b_build.json")), r#"{"chain": "01"#).unwrap();
    assert_eq!(status(open(&d)).0, Status::FolderVersion);
}

#[test]
fn without_a_map_the_keys_come_from_the_build_record() {
    let d = hand_title("nomap", &[], &[(K, vertex_json(V, 1))]);
    let rec = d.join(format!("b-{V}/_b_build.json"));
    let o = || OpenOptions {
        shader_map: None,
        library_dir: d.clone(),
        chain: Some(V.into()),
        ..Default::default()
    };
    // Keys with a stage; a file the build could not read (stage unknown) has none.
    std::fs::write(
        &rec,
        format!(
            r#"{{"chain": "{V}", "shaders": [
                {{"key": "00000000000000ff", "stage": "fragment", "status": "failed"}},
                {{"key": "{K}", "stage": "vertex", "status": "built"}},
                {{"key": "00000000000000ee", "stage": "unknown", "status": "failed"}}]}}"#
        ),
    )
    .unwrap();
    let t = Title::open(&o()).unwrap();
    assert_eq!(t.keys(), [KN, 0xff]);
    assert!(t.c1().is_ok(), "no map, no c1 list: none is needed");
    assert!(t.lookup(KN, DEPTH_GL).is_ok());
    let e = t.lookup(0xff, DEPTH_GL).unwrap_err();
    assert_eq!(e.status, Status::NotBuilt, "{e}");
    assert_eq!(
        t.lookup(0xee, DEPTH_GL).unwrap_err().status,
        Status::UnknownKey
    );
    // A bad key, a bad stage, a key twice, no record at all: the map's status, naming it.
    for (shaders, text) in [
        (r#"[{"key": "FF", "stage": "vertex"}]"#, "key \"FF\""),
        (
            r#"[{"key": "00000000000000ff", "stage": "pixel"}]"#,
            "unknown stage \"pixel\"",
        ),
        (
            r#"[{"key": "00000000000000ff", "stage": "vertex"},
                {"key": "00000000000000ff", "stage": "vertex"}]"#,
            "recorded twice",
        ),
    ] {
        std::fs::write(&rec, format!(r#"{{"chain": "{V}", "shaders": {shaders}}}"#)).unwrap();
        let (s, m) = status(Title::open(&o()));
        assert_eq!(s, Status::Map, "{m}");
        assert!(m.contains("_b_build.json") && m.contains(text), "{m}");
    }
    std::fs::remove_file(&rec).unwrap();
    let (s, m) = status(Title::open(&o()));
    assert_eq!(s, Status::Map);
    assert!(m.contains("no build record, and no shader map"), "{m}");
}

#[test]
fn no_or_bad_chain_version_is_refused() {
    let d = hand_title("chain", &[(K, "vertex")], &[]);
    let o = |chain: Option<&str>| OpenOptions {
        shader_map: Some(d.join("shader_map.tsv")),
        library_dir: d.clone(),
        chain: chain.map(str::to_string),
        ..Default::default()
    };
    assert_eq!(status(Title::open(&o(Some("0123")))).0, Status::Chain);
    if dmsh_runtime::chain::COMPILED.is_none() {
        assert_eq!(status(Title::open(&o(None))).0, Status::Chain);
    }
}

#[test]
fn reflections_of_another_version_are_not_loaded() {
    let k2 = "00000000000000bb";
    let k3 = "00000000000000cc";
    let k4 = "00000000000000dd";
    let d = hand_title(
        "refl",
        &[
            (K, "vertex"),
            (k2, "vertex"),
            (k3, "vertex"),
            (k4, "fragment"),
        ],
        &[
            (K, vertex_json("ffffffffffff", 1)),
            (k2, vertex_json(V, 2)),
            (
                k3,
                vertex_json(V, 1).replace(&format!("\"chain\": \"{V}\","), ""),
            ),
        ],
    );
    let t = open(&d).unwrap();
    for (key, want, text) in [
        (KN, Status::ReflectionChain, "built by chain ffffffffffff"),
        (0xbb, Status::ReflectionSchema, "schema version 2"),
        (0xcc, Status::ReflectionChain, "records no chain version"),
        (0xdd, Status::NotBuilt, "not built"),
        (0xee, Status::UnknownKey, "not in the shader map"),
    ] {
        for _ in 0..2 {
            let e = t.lookup(key, DEPTH_GL).unwrap_err();
            println!("{key:016x}: {:?}: {e}", e.status);
            assert_eq!(e.status, want);
            assert!(e.to_string().contains(text), "{e}");
        }
    }
}

#[test]
fn c1_lists_of_another_version_missing_or_bad_make_every_shader_full() {
    let d = hand_title("c1", &[(K, "vertex")], &[(K, vertex_json(V, 1))]);
    let c1 = d.join("c1_full.tsv");
    for (text, want) in [
        (None, Status::C1Missing),
        (Some("b-ffffffffffff\n".to_string()), Status::C1Version),
        (Some(format!("b-{V}\nnot-a-key\n")), Status::C1Bad),
        (Some(String::new()), Status::C1Bad),
        (Some("\u{0}\u{ff}garbage".to_string()), Status::C1Bad),
    ] {
        let _ = std::fs::remove_file(&c1);
        if let Some(t) = &text {
            std::fs::write(&c1, t).unwrap();
        }
        let t = open(&d).unwrap();
        let e = t.c1().unwrap_err();
        println!("{text:?}: {:?}: {e}", e.status);
        assert_eq!(e.status, want);
        assert!(e.to_string().contains("own 64 KiB c1 buffer"), "{e}");
        let s = t.lookup(KN, DEPTH_GL).unwrap();
        assert_eq!(
            s.shader.shader().flags & dmsh_runtime::abi::SHADER_C1_FULL,
            1
        );
    }
    // An up-to-date list without the key: not full.
    std::fs::write(&c1, format!("b-{V}\n00000000000000bb\n")).unwrap();
    let t = open(&d).unwrap();
    assert_eq!(t.c1(), Ok(()));
    let s = t.lookup(KN, DEPTH_GL).unwrap();
    assert_eq!(
        s.shader.shader().flags & dmsh_runtime::abi::SHADER_C1_FULL,
        0
    );
}

/// Every prefix of a good file, and some hostile ones, as `name` (`shader_map.tsv` or the
/// reflection): an error or a success, never a panic.
#[test]
fn truncated_and_hostile_maps_and_reflections_are_errors() {
    let good_map = format!("key\tstage\tgen\n{K}\tvertex\tnvn1\n");
    let good_json = vertex_json(V, 1);
    let d = hand_title("hostile", &[(K, "vertex")], &[(K, good_json.clone())]);
    let map = d.join("shader_map.tsv");
    let json = d.join(format!("b-{V}/{K}_b.json"));
    let mut map_errors = 0;
    for n in 0..good_map.len() {
        std::fs::write(&map, &good_map[..n]).unwrap();
        if let Err(e) = open(&d) {
            assert_eq!(e.status, Status::Map, "{e}");
            map_errors += 1;
        }
    }
    for bad in [
        "key\tstage\n\u{ff}\tvertex\n".as_bytes(),
        b"\xff\xfe\x00\x01",
        b"key\tstage\n00000000000000aa\tvertex\t\t\t\n00000000000000aa\tfragment\n",
    ] {
        std::fs::write(&map, bad).unwrap();
        let e = open(&d).err().expect("refused");
        println!("hostile map: {e}");
        assert_eq!(e.status, Status::Map);
    }
    std::fs::write(&map, &good_map).unwrap();
    let mut refl_errors = 0;
    for n in 0..good_json.len() {
        std::fs::write(&json, &good_json[..n]).unwrap();
        let t = open(&d).unwrap();
        if let Err(e) = t.lookup(KN, DEPTH_GL) {
            assert_eq!(e.status, Status::Reflection, "{n}: {e}");
            refl_errors += 1;
        }
    }
    let deep = "[".repeat(100_000);
    for bad in [
        deep.as_str(),
        r#"{"version": 1, "chain": "0123456789ab", "stage": "vertex"}"#,
        r#"{"version": 1, "chain": "0123456789ab", "stage": "fragment", "metal_entry_points": ["main0"]}"#,
        r#"{"version": 1, "chain": "0123456789ab", "stage": "vertex", "metal_entry_points": ["main0"], "resources": [{"kind": "mystery"}]}"#,
        r#"{"version": 1, "chain": "0123456789ab", "stage": "vertex", "metal_entry_points": ["main0"], "resources": [{"kind": "cbuf", "reads": [[9, 2]]}]}"#,
        r#"{"version": 1, "chain": "0123456789ab", "stage": "vertex", "metal_entry_points": ["main0"], "inputs": [{"location": 0, "component_type": "half"}]}"#,
        r#"{"version": 1, "chain": "0123456789ab", "stage": "vertex", "metal_entry_points": ["main0"], "metal_entry_z": "other"}"#,
        r#"{"version": 1, "chain": "0123456789ab", "stage": "vertex", "metal_entry_points": ["main\u0000"]}"#,
        r#"{"version": 1, "chain": "0123456789ab", "stage": "vertex", "metal_entry_points": ["main0"], "local_size": [1, 2, 99999999999]}"#,
    ] {
        std::fs::write(&json, bad).unwrap();
        let t = open(&d).unwrap();
        let e = t.lookup(KN, DEPTH_GL).expect_err("refused");
        println!("hostile reflection: {e}");
        assert_eq!(e.status, Status::Reflection, "{e}");
    }
    println!(
        "{map_errors} of {} map prefixes and {refl_errors} of {} reflection prefixes refused",
        good_map.len(),
        good_json.len()
    );
    // Only the header alone (an empty map) is a complete file.
    assert_eq!(map_errors, good_map.len() - 1);
    assert_eq!(refl_errors, good_json.len());
}

/// The C ABI's answers to bad arguments and bad files: a status and a message, no panic.
#[test]
fn the_c_abi_reports_bad_input_with_a_status_and_a_message() {
    use dmsh_runtime::abi::OpenParams;
    use dmsh_runtime::ffi::*;
    use std::ffi::{CStr, CString};
    use std::ptr::{null, null_mut};

    let last = || {
        // SAFETY: dmsh_last_error returns a NUL-terminated string.
        unsafe { CStr::from_ptr(dmsh_last_error()) }
            .to_string_lossy()
            .into_owned()
    };
    let d = hand_title("cabi", &[(K, "vertex")], &[(K, vertex_json(V, 1))]);
    let map = CString::new(d.join("shader_map.tsv").to_str().unwrap()).unwrap();
    let lib = CString::new(d.to_str().unwrap()).unwrap();
    let v = CString::new(V).unwrap();
    let params = |chain: *const std::ffi::c_char| OpenParams {
        size: std::mem::size_of::<OpenParams>() as u32,
        flags: 0,
        shader_map: map.as_ptr(),
        library_dir: lib.as_ptr(),
        c1_list: null(),
        chain,
        pso_manifest: null(),
        pso_user: null(),
    };
    let mut t: *mut DmshTitle = null_mut();
    // SAFETY (all calls below): the pointers are live or NULL, as each case says.
    unsafe {
        assert_eq!(dmsh_open(null(), &mut t), Status::Argument);
        assert!(last().contains("params is NULL"), "{}", last());
        let mut p = params(v.as_ptr());
        p.size = 8;
        assert_eq!(dmsh_open(&p, &mut t), Status::Argument);
        assert!(last().contains("DmshOpenParams.size 8"), "{}", last());
        // No map: the build record's keys (this hand-made record lists none).
        let mut p = params(v.as_ptr());
        p.shader_map = null();
        assert_eq!(dmsh_open(&p, &mut t), Status::Ok, "{}", last());
        assert_eq!(dmsh_title_key_count(t), 0);
        dmsh_close(t);
        t = null_mut();
        p.library_dir = null();
        assert_eq!(dmsh_open(&p, &mut t), Status::Argument);
        assert!(last().contains("library_dir is NULL"), "{}", last());
        let bad = CString::new("0123").unwrap();
        assert_eq!(dmsh_open(&params(bad.as_ptr()), &mut t), Status::Chain);
        assert!(t.is_null() && last().contains("not 12"), "{}", last());
        let not_utf8 = CString::new(vec![0xffu8, 0xfe]).unwrap();
        assert_eq!(
            dmsh_open(&params(not_utf8.as_ptr()), &mut t),
            Status::Argument
        );
        // A hostile map.
        std::fs::write(d.join("shader_map.tsv"), b"key\tstage\n\xff\n").unwrap();
        assert_eq!(dmsh_open(&params(v.as_ptr()), &mut t), Status::Map);
        assert!(last().contains("not UTF-8"), "{}", last());
        std::fs::write(
            d.join("shader_map.tsv"),
            format!("key\tstage\n{K}\tvertex\n"),
        )
        .unwrap();
        // A hostile reflection: the lookup fails, twice alike, with the recorded message.
        std::fs::write(
            d.join(format!("b-{V}/{K}_b.json")),
            "{\"version\": 1, \"stage\": [",
        )
        .unwrap();
        assert_eq!(dmsh_open(&params(v.as_ptr()), &mut t), Status::Ok);
        let (mut s, mut e) = (null(), null());
        for _ in 0..2 {
            assert_eq!(dmsh_lookup(t, KN, 0, &mut s, &mut e), Status::Reflection);
            assert!(s.is_null() && e.is_null());
            assert!(last().contains(&format!("{K}_b.json")), "{}", last());
        }
        assert_eq!(dmsh_lookup(t, KN, 2, &mut s, &mut e), Status::Argument);
        assert_eq!(dmsh_lookup(t, 1, 0, &mut s, &mut e), Status::UnknownKey);
        assert_eq!(last(), "the key is not in the shader map");
        assert_eq!(dmsh_lookup(t, KN, 0, null_mut(), &mut e), Status::Argument);
        let mut msg = null();
        assert_eq!(dmsh_title_c1_status(t, &mut msg), Status::C1Missing);
        assert!(CStr::from_ptr(msg).to_string_lossy().contains("no c1 list"));
        assert_eq!(CStr::from_ptr(dmsh_title_chain(t)).to_str().unwrap(), V);
        assert_eq!(
            (
                dmsh_title_key_count(t),
                dmsh_title_key_at(t, 0),
                dmsh_title_key_at(t, 1)
            ),
            (1, KN, 0)
        );
        dmsh_close(t);
        dmsh_close(null_mut());
        assert_eq!(dmsh_title_key_count(null()), 0);
        // Keys: a control section that is not one, a short code area.
        let mut k = 0u64;
        let junk = [0u8; 64];
        assert_eq!(
            dmsh_shader_key(junk.as_ptr(), junk.len(), junk.as_ptr(), 0, &mut k),
            Status::Key
        );
        assert!(last().contains("no control magic"), "{}", last());
        assert_eq!(
            dmsh_shader_key(null(), 0, junk.as_ptr(), 0, &mut k),
            Status::Argument
        );
        let hex = CString::new("XYZ").unwrap();
        assert_eq!(dmsh_key_parse(hex.as_ptr(), &mut k), Status::Argument);
    }
}

/// The runtime links the shared formats and the schema, never the translation chain.
#[test]
fn the_runtime_depends_on_formats_and_reflect_only() {
    let toml = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).unwrap();
    let deps = toml.split("[dependencies]").nth(1).unwrap();
    let deps = deps.split("\n[").next().unwrap();
    let names: Vec<&str> = deps
        .lines()
        .filter_map(|l| l.split(['=', '.']).next())
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect();
    assert_eq!(
        names,
        ["dmsh-formats", "dmsh-reflect", "serde", "serde_json"]
    );
}
