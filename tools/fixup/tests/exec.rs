//! Every fix-up proven by execution on the Vulkan device (lavapipe in CI), never by reading
//! text: the fixed module passes spirv-val and draws what its definition says, compared with
//! glslang's SPIR-V of GLSL that computes the definition by hand.
//!
//! - vs_depth: the translated `vs_basic_mvp` drawn through `main` and `main_z`; every pixel's
//!   depth differs exactly by the rewrite, d(main) = d(main_z) / 2 + 1/2, both as the
//!   fragment's `gl_FragCoord.z` and as the value a real D32 depth target stores.
//! - vs_pad: a fragment partner reads two locations the vertex shader never writes (a float
//!   and a uint vector); after the fix-up it draws like glslang's pair whose fragment shader
//!   uses (0, 0, 0, 1) in their place.
//! - vs_init (the translator's part of it): `vs_basic_mvp` writes only x, y, z of location 0;
//!   a partner reading w gets 1, like glslang's pair with `vec4(p.xyz, 1)`.
//! - spv_single_lane: a GLSL vertex shader with ballots, votes, shuffles, arithmetic and the
//!   subgroup built-ins runs after the rewrite (lavapipe's vertex stage has no subgroup
//!   operations) and draws like the same GLSL with the one-lane values written in.

mod common;
use common::texels;
use dmsh_fixup::{for_metal, module::Spirv, single_lane, Partners};
use dmsh_reflect::IoVar;
use dmsh_testsupport::reference::dksh_render::{self, PairCase, Side};
use dmsh_testsupport::reference::{dksh, glsl, translate::corpus_stage};
use dmsh_testsupport::spirv_val;
use dmsh_vk::render::{RenderOutputs, Stage};
use dmsh_vk::TexFormat;
use std::path::{Path, PathBuf};

/// The `vs_basic_mvp` + `fs_lighting_loops` draw of the render cases.
fn mvp_case(dir: &Path) -> PairCase {
    dksh_render::cases(dir)
        .into_iter()
        .find(|c| c.name == "vs_basic_mvp+fs_lighting_loops")
        .expect("the vs_basic_mvp case")
}

/// What the vs_basic_mvp tests start from: the corpus folder, [`mvp_case`] and our
/// translation of vs_basic_mvp; `None` (the test is skipped) without glslang or a Vulkan device.
fn mvp_setup() -> Option<(PathBuf, PairCase, Stage)> {
    if !glsl::ready_with_vulkan() {
        return None;
    }
    let dir = dksh::corpus_dir();
    let case = mvp_case(&dir);
    let v = corpus_stage(&dir, "vs_basic_mvp.vert", false).expect("translates");
    Some((dir, case, v))
}

/// Draws `case` with `vertex` and the GLSL fragment shader `fs` into one RGBA32F target
/// cleared to −1.
fn draw(dir: &Path, case: &PairCase, vertex: Stage, fs: &str) -> RenderOutputs {
    draw_with_depth(dir, case, vertex, fs, false)
}

/// [`draw`], with a D32 depth target as well when `depth` (cleared to 1, written always).
fn draw_with_depth(
    dir: &Path,
    case: &PairCase,
    vertex: Stage,
    fs: &str,
    depth: bool,
) -> RenderOutputs {
    let mut case = case.clone();
    case.fragment = Side::Helper(fs.to_string());
    case.targets = vec![TexFormat::Rgba32Float];
    case.fs = Default::default();
    let fragment = dksh_render::reference_stage(dir, &case.fragment, "fragment").expect("GLSL");
    let mut job = dksh_render::job(&case, vertex, fragment).expect("job");
    job.clear = [-1.0; 4];
    job.depth = depth;
    dmsh_vk::render::render(&job).expect("draw")
}

/// Our translation and glslang's SPIR-V of the same vertex shader may round a position
/// differently in the last bit, which moves coverage at triangle edges: at most 0.1 % of the
/// pixels may differ (the render comparison's rule), every other pixel is exactly equal.
fn assert_close(got: &[[f32; 4]], expected: &[[f32; 4]]) {
    let differ = got.iter().zip(expected).filter(|(a, b)| a != b).count();
    println!("{differ} of {} pixels differ", got.len());
    assert!(
        differ * 1000 <= got.len(),
        "{differ} of {} pixels differ",
        got.len()
    );
}

fn with_entry(mut s: Stage, entry: &str) -> Stage {
    s.reflection.entry = entry.into();
    s
}

/// A fragment shader writing its `gl_FragCoord.z`.
const FRAG_Z: &str =
    "#version 450\nlayout(location = 0) out vec4 o;\nvoid main() { o = vec4(gl_FragCoord.z); }\n";

/// `v` after the Metal fix-ups (vs_depth only, spirv-val clean): entry points main and main_z.
fn depth_fixed(v: &Stage) -> Stage {
    let mut refl = v.reflection.clone();
    let words = for_metal(&v.spirv, &mut refl, &Partners::default()).expect("fix-ups");
    assert_eq!(refl.fixups, ["vs_depth"]);
    spirv_val(&words).expect("spirv-val");
    Stage {
        spirv: words,
        reflection: refl,
    }
}

/// Every (pixel, depth through `main`, depth through `main_z`) of the pixels both drew obeys
/// d(main) = d(main_z) / 2 + 1/2 (to 2e-7), and there are enough of them.
fn assert_gl_rewrite(what: &str, pixels: impl Iterator<Item = (usize, f32, f32)>) {
    let (mut both, mut bad) = (0, Vec::new());
    for (k, gl, z) in pixels {
        both += 1;
        if (gl - (z / 2.0 + 0.5)).abs() > 2e-7 {
            bad.push((k, gl, z));
        }
    }
    println!("vs_depth ({what}): {both} pixels drawn by both entry points");
    assert!(both > 1000, "too few pixels to compare: {both}");
    assert!(
        bad.is_empty(),
        "{} pixels differ, e.g. {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
}

/// vs_depth, seen twice: as the fragments' `gl_FragCoord.z` in a colour target and as the
/// values a real D32 depth target stores, `main` gives `main_z`'s depth mapped by
/// z' = z/2 + 1/2; `main_z` stores what its fragments see and is the shader as translated.
#[test]
fn vs_depth_entry_points_differ_exactly_by_the_gl_rewrite() {
    let Some((dir, case, v)) = mvp_setup() else {
        return;
    };
    let stage = depth_fixed(&v);
    let run = |entry: &str| {
        let o = draw_with_depth(&dir, &case, with_entry(stage.clone(), entry), FRAG_Z, true);
        let depth = o.depth.clone().expect("a depth target");
        (texels(&o), depth)
    };
    let (gl_colour, gl) = run("main");
    let (z_colour, z) = run("main_z");
    let plain = texels(&draw(&dir, &case, v, FRAG_Z));
    assert_eq!(z_colour, plain, "main_z is the shader as translated");
    assert_eq!(gl.len(), gl_colour.len());
    let (mut colour, mut stored) = (Vec::new(), Vec::new());
    for k in 0..gl.len() {
        let (g, zc) = (gl_colour[k][0], z_colour[k][0]);
        if g == -1.0 || zc == -1.0 {
            // Not drawn: the cleared depth.
            if g == -1.0 {
                assert_eq!(gl[k], 1.0, "pixel {k}");
            }
            continue;
        }
        assert_eq!(z[k], zc, "pixel {k}: stored depth = gl_FragCoord.z");
        colour.push((k, g, zc));
        stored.push((k, gl[k], z[k]));
    }
    assert_gl_rewrite("gl_FragCoord.z", colour.into_iter());
    assert_gl_rewrite("depth target", stored.into_iter());
}

#[test]
fn vs_pad_gives_unwritten_partner_inputs_the_default() {
    let Some((dir, case, v)) = mvp_setup() else {
        return;
    };
    let written: Vec<u32> = v.reflection.outputs.iter().map(|o| o.location).collect();
    assert!(
        !written.contains(&5) && !written.contains(&6),
        "{written:?}"
    );
    let io = |location, t: &str| IoVar {
        location,
        component_type: t.into(),
        ..Default::default()
    };
    let partners = Partners {
        inputs: vec![io(0, "float"), io(5, "float"), io(6, "uint")],
    };
    let mut refl = v.reflection.clone();
    let words = for_metal(&v.spirv, &mut refl, &partners).expect("fix-ups");
    assert_eq!(refl.fixups, ["vs_pad", "vs_depth"]);
    assert!(refl
        .outputs
        .iter()
        .any(|o| o.location == 6 && o.component_type == "uint"));
    spirv_val(&words).expect("spirv-val");
    let ours = "#version 450\nlayout(location = 0) in vec3 p;\n\
        layout(location = 5) in vec4 a;\nlayout(location = 6) flat in uvec4 b;\n\
        layout(location = 0) out vec4 o;\n\
        void main() { o = vec4(p.x * 0.0 + 0.5, 0.0, 0.0, 0.0) + a + vec4(b) * 0.25; }\n";
    let want = "#version 450\nlayout(location = 0) in vec3 p;\nlayout(location = 0) out vec4 o;\n\
        void main() { o = vec4(p.x * 0.0 + 0.5, 0.0, 0.0, 0.0) + vec4(0, 0, 0, 1) + vec4(uvec4(0, 0, 0, 1)) * 0.25; }\n";
    let fixed = Stage {
        spirv: words,
        reflection: refl,
    };
    let got = texels(&draw(&dir, &case, with_entry(fixed, "main_z"), ours));
    let reference = dksh_render::reference_stage(&dir, &case.vertex, "vertex").expect("GLSL");
    let expected = texels(&draw(&dir, &case, reference, want));
    let drawn = expected.iter().filter(|t| t[0] != -1.0).count();
    assert!(drawn > 1000, "{drawn} pixels drawn");
    assert!(expected.iter().any(|t| t[3] == 1.25));
    assert_close(&got, &expected);
}

#[test]
fn unwritten_components_of_a_written_output_read_as_one() {
    let Some((dir, case, v)) = mvp_setup() else {
        return;
    };
    // vWorldPos is a vec3 at location 0: the SPH declares x, y, z; w is never written.
    let ours = "#version 450\nlayout(location = 0) in vec4 p;\nlayout(location = 0) out vec4 o;\n\
        void main() { o = vec4(p.w); }\n";
    let want = "#version 450\nlayout(location = 0) in vec3 p;\nlayout(location = 0) out vec4 o;\n\
        void main() { o = vec4(vec4(p, 1.0).w); }\n";
    let got = texels(&draw(&dir, &case, v, ours));
    let reference = dksh_render::reference_stage(&dir, &case.vertex, "vertex").expect("GLSL");
    let expected = texels(&draw(&dir, &case, reference, want));
    assert!(expected.iter().filter(|t| t[0] == 1.0).count() > 1000);
    assert_close(&got, &expected);
}

/// A vertex shader with subgroup operations: a full-screen triangle whose colour mixes their
/// results. `SUBGROUP` is replaced by the GLSL under test, or by the one-lane values.
const SINGLE_LANE_VS: &str = r#"#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_vote : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require
layout(location = 0) out vec4 c;
void main() {
    int i = gl_VertexIndex;
    vec2 p = vec2(float((i << 1) & 2), float(i & 2)) * 2.0 - 1.0;
    bool big = i > 0;
SUBGROUP
    c = vec4(float(n) + float(lsb + 1) * 0.5, s + e * 3.0 + float(x) * 0.125,
             float(sz) + float(id) * 7.0 + (el ? 0.25 : 0.0),
             (all_ ? 1.0 : 0.0) + (any_ ? 0.5 : 0.0) + (eq ? 0.125 : 0.0) + float(mask.x));
    gl_Position = vec4(POSITION, 0.0, 1.0);
}
"#;

const SUBGROUP_CALLS: &str = r#"
    uvec4 b = subgroupBallot(big);
    uint n = subgroupBallotBitCount(b) + subgroupBallotExclusiveBitCount(b) * 5u;
    int lsb = int(subgroupBallotFindLSB(b));
    float s = subgroupAdd(float(i) + 1.0) + subgroupInclusiveMul(2.0);
    float e = subgroupExclusiveAdd(1.0) + min(subgroupExclusiveMin(4.0), 8.0);
    uint x = subgroupShuffleXor(uint(i), 1u) + subgroupMax(uint(i));
    uint sz = gl_SubgroupSize;
    uint id = gl_SubgroupInvocationID;
    bool el = subgroupElect();
    bool all_ = subgroupAll(big);
    bool any_ = subgroupAny(big);
    bool eq = subgroupAllEqual(i);
    uvec4 mask = gl_SubgroupEqMask;
"#;

/// The same values for a subgroup of one lane, written by hand from the definitions.
const ONE_LANE_VALUES: &str = r#"
    uvec4 b = uvec4(big ? 1u : 0u, 0u, 0u, 0u);
    uint n = bitCount(b.x & 1u) + 0u * 5u;
    int lsb = (b.x & 1u) != 0u ? 0 : -1;
    float s = (float(i) + 1.0) + 2.0;
    float e = 0.0 + min(uintBitsToFloat(0x7f800000u), 8.0);
    uint x = uint(i) + uint(i);
    uint sz = 1u;
    uint id = 0u;
    bool el = true;
    bool all_ = big;
    bool any_ = big;
    bool eq = true;
    uvec4 mask = uvec4(1u, 0u, 0u, 0u);
"#;

#[test]
fn spv_single_lane_runs_subgroup_vertex_shaders() {
    if !glsl::ready_with_vulkan() {
        return;
    }
    let dir = dksh::corpus_dir();
    let vs = |body: &str, position: &str| {
        let src = SINGLE_LANE_VS
            .replace("SUBGROUP", body)
            .replace("POSITION", position);
        let words = glsl::compile_source(&src, "vert", &[]).expect("glslang");
        let reflection = glsl::reflect_shifted(&words, "vertex");
        Stage {
            spirv: words,
            reflection,
        }
    };
    let mut sg = vs(
        SUBGROUP_CALLS,
        "subgroupShuffle(p.x, 0u), subgroupBroadcastFirst(p.y)",
    );
    let mut sp = Spirv::parse(&sg.spirv).unwrap();
    let n = single_lane::run(&mut sp).expect("rewrites");
    assert_eq!((n.operations, n.builtins), (16, 3), "{n:?}");
    sg.spirv = sp.assemble();
    spirv_val(&sg.spirv).expect("spirv-val");
    let dis = String::from_utf8_lossy(
        &std::process::Command::new("spirv-dis")
            .arg("-")
            .stdin_bytes(&sg.spirv)
            .stdout,
    )
    .to_string();
    assert!(!dis.contains("GroupNonUniform"), "{dis}");
    let fs = "#version 450\nlayout(location = 0) in vec4 c;\nlayout(location = 0) out vec4 o;\nvoid main() { o = c; }\n";
    let mut case = mvp_case(&dir);
    case.vertex_buffers.clear();
    case.attributes.clear();
    case.vertex_count = 3;
    case.instance_count = 1;
    case.vs = Default::default();
    let got = texels(&draw(&dir, &case, sg, fs));
    let expected = texels(&draw(&dir, &case, vs(ONE_LANE_VALUES, "p.x, p.y"), fs));
    assert!(
        expected.iter().all(|t| t[0] != -1.0),
        "the triangle covers the target"
    );
    assert_eq!(got, expected);
}

/// `Command` with bytes on stdin, collected.
trait StdinBytes {
    fn stdin_bytes(&mut self, words: &[u32]) -> std::process::Output;
}

impl StdinBytes for std::process::Command {
    fn stdin_bytes(&mut self, words: &[u32]) -> std::process::Output {
        use std::io::Write;
        let mut c = self
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("spirv-dis");
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        c.stdin.take().unwrap().write_all(&bytes).unwrap();
        c.wait_with_output().unwrap()
    }
}

#[test]
fn int_inputs_draw_with_integer_vertex_formats() {
    if !glsl::ready_with_vulkan() {
        return;
    }
    let dir = dksh::corpus_dir();
    // ivec2 at 1, uint at 2, uvec4 at 3 (integer vertex formats); vec4 at 0, float at 5.
    let case = dksh_render::cases(&dir)
        .into_iter()
        .find(|c| c.vertex == Side::Corpus("vs_multi_attr_int.vert".into()))
        .expect("the vs_multi_attr_int case");
    let v = dmsh_testsupport::reference::translate::corpus_stage_untyped_inputs(
        &dir,
        "vs_multi_attr_int.vert",
    )
    .expect("translates");
    assert!(v
        .reflection
        .inputs
        .iter()
        .all(|i| i.component_type == "float"));
    let mut refl = v.reflection.clone();
    let words = for_metal(&v.spirv, &mut refl, &Partners::default()).expect("fix-ups");
    spirv_val(&words).expect("spirv-val");
    assert_eq!(refl.fixups, ["int_inputs", "vs_depth"]);
    let types: Vec<(u32, &str)> = refl
        .inputs
        .iter()
        .map(|i| (i.location, i.component_type.as_str()))
        .collect();
    assert_eq!(
        types,
        [
            (0, "float"),
            (1, "sint"),
            (2, "uint"),
            (3, "uint"),
            (5, "float")
        ],
        "the GLSL's types, found from the uses alone"
    );
    let types: Vec<(u32, String)> = types.iter().map(|t| (t.0, t.1.to_string())).collect();
    let types: Vec<(u32, &str)> = types.iter().map(|t| (t.0, t.1.as_str())).collect();
    let fixed = Stage {
        spirv: words,
        reflection: refl,
    };
    let r = dksh_render::check_translation(&dir, &case, Some(with_entry(fixed, "main_z")), None)
        .expect("draws");
    println!("int_inputs: {:?}", r.targets);
    assert!(r.ok(0.999), "{r:?}");
    // The declared types agree with the integer vertex formats the draw binds, which is what
    // Metal requires (lavapipe, unlike Metal, would also pass the raw bits to a float input,
    // so the untyped module drawing right there proves nothing).
    for a in &case.attributes {
        let f = format!("{:?}", a.format);
        let want = if f.ends_with("SINT") {
            "sint"
        } else if f.ends_with("UINT") {
            "uint"
        } else {
            "float"
        };
        assert_eq!(
            types.iter().find(|t| t.0 == a.location).map(|t| t.1),
            Some(want),
            "{f}"
        );
    }
}
