//! Readers on files written by PyPI oead (SARC LE / BE, Yaz0), zstandard and lz4 (committed
//! outputs of tests/fixtures/make_py_fixtures.py): the shaders found through those layers are
//! exactly the ones of the raw payload (a demo-title bfsha), with the same keys.

mod support;

use std::collections::BTreeSet;

use dmsh_scan::walk::FileScan;
use dmsh_scan::Limits;

fn keys(s: &dmsh_scan::Scan) -> BTreeSet<String> {
    s.shaders.iter().map(|x| x.piece.key.clone()).collect()
}

#[test]
fn oead_zstandard_and_lz4_fixtures() {
    let root = support::repo_root();
    let fx = root.join("tools/scan/tests/fixtures");
    let l = Limits::default();
    let f = FileScan::new(&l, false, 0, "romfs0".into());
    let payload =
        std::fs::read(root.join("games/demo/romfs/Shader/Misc.Nin_NX_NVN.bfsha")).unwrap();
    let want = f.scan(&payload, "Misc.bfsha", 0);
    assert!(want.warnings.is_empty() && !want.shaders.is_empty());
    let want = keys(&want);

    let nested = f.scan(
        &std::fs::read(fx.join("oead_nested.pack.zs")).unwrap(),
        "oead_nested.pack.zs",
        0,
    );
    assert!(nested.warnings.is_empty(), "{:?}", nested.warnings);
    assert_eq!(keys(&nested), want);
    assert_eq!(
        &*nested.shaders[0].path,
        "oead_nested.pack.zs|zstd//Shader/inner.szs|yaz0//Model/Misc.bfsha"
    );
    for k in ["zstd", "yaz0", "sarc"] {
        assert!(nested.opened.contains_key(k), "{k} not opened");
    }

    let le = f.scan(
        &std::fs::read(fx.join("oead_le.sarc")).unwrap(),
        "oead_le.sarc",
        0,
    );
    assert_eq!(keys(&le), want);

    let main = f.scan_main(&std::fs::read(fx.join("lz4_main.nso")).unwrap(), "main");
    assert!(main.warnings.is_empty(), "{:?}", main.warnings);
    assert_eq!(keys(&main), want);
    println!(
        "{} shaders through oead / zstandard / lz4 layers",
        want.len()
    );
}
