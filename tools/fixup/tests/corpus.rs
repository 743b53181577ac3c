//! Every vertex and tessellation-evaluation shader of the dksh corpus (uam binaries, our
//! translation) through the fix-ups the Metal build applies: the result passes spirv-val,
//! has the two entry points, and keeps every output the translation wrote.

use dmsh_fixup::{for_metal, Partners};
use dmsh_reflect::IoVar;
use dmsh_testsupport::reference::{dksh, translate::corpus_stage};
use dmsh_testsupport::spirv_val;

#[test]
fn corpus_vertex_shaders_pass_spirv_val_after_the_fixups() {
    let dir = dksh::corpus_dir();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("corpus")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".dksh").map(str::to_string))
        .filter(|n| n.ends_with(".vert") || n.ends_with(".tese"))
        .collect();
    names.sort();
    assert!(names.len() >= 10, "{names:?}");
    // A partner reading a location no corpus shader writes, so vs_pad always adds one.
    let partners = Partners {
        inputs: vec![IoVar {
            location: 30,
            component_type: "float".into(),
            ..Default::default()
        }],
    };
    let mut failed = Vec::new();
    for n in &names {
        let st = match corpus_stage(&dir, n, false) {
            Ok(s) => s,
            Err(e) => {
                failed.push(format!("{n}: translation: {e}"));
                continue;
            }
        };
        let mut refl = st.reflection.clone();
        let before = refl.outputs.len();
        let words = match for_metal(&st.spirv, &mut refl, &partners) {
            Ok(w) => w,
            Err(e) => {
                failed.push(format!("{n}: {e}"));
                continue;
            }
        };
        if let Err(e) = spirv_val(&words) {
            failed.push(format!("{n}: spirv-val: {e}"));
        }
        if refl.stage == "vertex" {
            assert_eq!(refl.fixups, ["vs_pad", "vs_depth"], "{n}");
            assert_eq!(refl.outputs.len(), before + 1, "{n}");
            let m = rspirv::dr::load_words(&words).unwrap();
            assert_eq!(m.entry_points.len(), 2, "{n}");
        }
        println!("{n}: {:?}", refl.fixups);
    }
    assert!(failed.is_empty(), "{failed:#?}");
}
