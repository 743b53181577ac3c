//! The Unity fixtures (tests/fixtures/unity, written by UnityPy through
//! make_unity_fixtures.py): which corpus shaders each holds, for tests/unity.rs and the demo.

/// The fixtures' directory.
pub fn fixtures() -> std::path::PathBuf {
    super::repo_root().join("tools/scan/tests/fixtures/unity")
}

/// The corpus shaders the fixtures hold, by fixture (see make_unity_fixtures.py): programs,
/// each built with `Wrap::default()`, its vertex stage paired with its fragment stage.
pub const SHADERS: &[(&str, &[&[&str]])] = &[
    (
        "shader_2020_3",
        &[
            &["vs_basic_mvp.vert", "fs_tex2d_basic.frag"],
            &[
                "vs_skinning.vert",
                "gs_passthrough_tri.geom",
                "fs_lighting_loops.frag",
            ],
        ],
    ),
    (
        "shader_2022_3",
        &[
            &["vs_fullscreen_const.vert", "fs_mrt.frag"],
            &["vs_clipdist.vert", "fs_shadow.frag"],
        ],
    ),
    (
        "player_2020_3",
        &[
            &["vs_pointsize_ids.vert", "fs_discard_alpha.frag"],
            &["vs_multi_attr_int.vert", "fs_interp_modes.frag"],
        ],
    ),
    (
        "hostile_2020_3",
        &[
            &["vs_clipdist.vert", "fs_fragdepth.frag"],
            &["vs_ssbo_drawparams.vert", "fs_frontfacing_deriv.frag"],
            &["vs_image_fp64.vert", "fs_lod_grad.frag"],
            &["vs_basic_mvp.vert", "fs_pointcoord_layer.frag"],
            &["vs_skinning.vert", "fs_sample_shading.frag"],
        ],
    ),
    (
        "player_2022_3",
        &[
            &["vs_displace_tex.vert", "fs_gather.frag"],
            &["vs_layer_viewport.vert", "fs_int_outputs.frag"],
        ],
    ),
];
