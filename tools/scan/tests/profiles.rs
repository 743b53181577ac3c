//! Every games/*/profile.toml parses into the typed profile with no unknown keys.

mod support;

use dmsh_scan::Profile;

#[test]
fn every_profile_parses() {
    let games = support::repo_root().join("games");
    let mut n = 0;
    for e in std::fs::read_dir(&games).unwrap() {
        let dir = e.unwrap().path();
        if !dir.join("profile.toml").is_file() {
            continue;
        }
        let p = Profile::load(&dir).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            p.unknown_keys().is_empty(),
            "{}: unknown keys {:?}",
            dir.display(),
            p.unknown_keys()
        );
        assert!(!p.title.is_empty(), "{}: no title", dir.display());
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        if p.title_id.len() == 16 {
            assert_eq!(p.title_id, name, "folder name is the title ID");
        }
        println!(
            "{name}: {} nvn{} tex {:#x}/{}",
            p.title, p.nvn, p.nvn_tex_base, p.nvn_tex_slots
        );
        n += 1;
    }
    assert!(n >= 19, "{n} profiles");
}

#[test]
fn defaults_are_marios_layout() {
    let p = Profile::parse("").unwrap();
    assert_eq!(
        (
            p.nvn_tex_base,
            p.nvn_tex_slots,
            p.nvn_img_base,
            p.nvn_samp_base
        ),
        (0x20, 32, 0x120, 0x568)
    );
    assert!(!p.shader_main_glslc && !p.shader_separable);
    let q = Profile::parse("nvn_tex_base = 0x168\nbogus = 1\n").unwrap();
    assert_eq!(q.nvn_tex_base, 0x168);
    assert_eq!(q.unknown_keys(), ["bogus"]);
}
