//! The Vulkan modules' fix-ups proven by execution on the Vulkan device (lavapipe in CI),
//! against glslang's SPIR-V of hand-written GLSL:
//!
//! - fix_strides: glslang's module of a fragment shader reading arrays (and an array of
//!   structs) from a uniform and a storage block is made Vulkan-style (seed 000, Super Mario
//!   Galaxy) by moving every `ArrayStride` onto the struct member, with two members of
//!   different strides sharing one array type; spirv-val and SPIRV-Cross refuse it, the fix-up
//!   makes it valid, and it draws exactly like glslang's original.
//! - dual_source: the `_d` variant of a shader writing locations 0 and 1, drawn with SRC1
//!   blend factors, equals glslang's SPIR-V of the same GLSL written with
//!   `layout(location = 0, index = 1)`.

mod common;
use common::texels;
use dmsh_fixup::module::Spirv;
use dmsh_fixup::{dual_source, strides, vulkan};
use dmsh_testsupport::reference::{glsl, vulkan_style};
use dmsh_testsupport::spirv_val;
use dmsh_vk::render::{RenderJob, RenderOutputs, Stage};
use dmsh_vk::{Bind, BufferSpec, ResourceRef, TexFormat};

/// A full-screen triangle.
const VS: &str = "#version 450\nvoid main() {\n    int i = gl_VertexIndex;\n    \
    vec2 p = vec2(float((i << 1) & 2), float(i & 2)) * 2.0 - 1.0;\n    \
    gl_Position = vec4(p, 0.0, 1.0);\n}\n";

/// Arrays in a uniform block (std140: stride 16) and a storage block (std430: stride 4, and an
/// array of structs of stride 32), indexed by the pixel; the two `float[3]` are also loaded
/// whole (OpCopyLogical into a function array), so the member that gets fix_strides' clone is
/// read through a pointer to the clone.
const FS_ARRAYS: &str = r#"#version 450
struct Item { vec4 c; float w; };
layout(std140, binding = 0) uniform U { vec4 a[4]; float f[3]; } u;
layout(std430, binding = 0) readonly buffer S { float g[3]; Item items[2]; } s;
layout(location = 0) out vec4 o;
void main() {
    int i = int(gl_FragCoord.x) & 3;
    int j = int(gl_FragCoord.y) % 3;
    float ff[3] = u.f;
    float gg[3] = s.g;
    o = u.a[i] * u.f[j] + vec4(s.g[j]) + s.items[i & 1].c * s.items[(i >> 1) & 1].w
        + vec4(ff[(j + 1) % 3] - gg[(j + 2) % 3]);
}
"#;

const SIZE: u32 = 16;

fn stage(src: &str, st: &str, name: &str) -> Stage {
    let spirv = glsl::compile_source(src, st, glsl::DEKO3D_SHIFTS).expect("glslang");
    let reflection = glsl::reflect_shifted(&spirv, name);
    Stage { spirv, reflection }
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Draws the full-screen triangle with `fragment` into one RGBA32F target.
fn draw(fragment: Stage, buffers: Vec<BufferSpec>, binds: Vec<Bind>, dual: bool) -> RenderOutputs {
    let job = RenderJob {
        vertex: stage(VS, "vert", "vertex"),
        fragment,
        width: SIZE,
        height: SIZE,
        targets: vec![TexFormat::Rgba32Float],
        clear: [0.5, 0.25, 1.0, 0.125],
        dual_source: dual,
        vertex_count: 3,
        buffers,
        fragment_binds: binds,
        ..Default::default()
    };
    dmsh_vk::render(&job).expect("draw")
}

#[test]
fn fix_strides_makes_member_strides_draw_like_glslang() {
    if !glsl::ready_with_vulkan() {
        return;
    }
    let original = stage(FS_ARRAYS, "frag", "fragment");
    spirv_val(&original.spirv).expect("glslang's module is valid");
    let (bad, moved) = vulkan_style::member_strides(&original.spirv, true);
    assert_eq!(moved, 4, "a, f, g and items");
    let e = spirv_val(&bad).expect_err("spirv-val refuses member ArrayStride");
    println!("spirv-val on the Vulkan-style module: {e}");
    let bad_refl = vulkan::reflection(&Spirv::parse(&bad).unwrap()).expect("reflects");
    let e = dmsh_msl::to_msl(&bad, &bad_refl, &Default::default())
        .expect_err("SPIRV-Cross refuses member ArrayStride");
    println!("SPIRV-Cross on the Vulkan-style module: {e}");
    assert!(e.to_string().contains("ArrayStride"), "{e}");

    let mut sp = Spirv::parse(&original.spirv).unwrap();
    let nothing = strides::run(&mut sp).expect("fix_strides");
    assert_eq!(
        nothing,
        strides::Strides::default(),
        "glslang's module needs nothing"
    );
    let round_trip = Spirv::parse(&original.spirv).unwrap().assemble();
    assert_eq!(sp.assemble(), round_trip, "and changes nothing");

    let mut sp = Spirv::parse(&bad).unwrap();
    let done = strides::run(&mut sp).expect("fix_strides");
    assert_eq!(
        done,
        strides::Strides {
            moved: 4,
            cloned: 1
        }
    );
    let fixed = sp.assemble();
    spirv_val(&fixed).expect("spirv-val accepts the fixed module");
    let (prepared, refl) = vulkan::prepare(&bad).expect("prepare");
    let mut unnamed = Spirv::parse(&fixed).unwrap();
    vulkan::unname_functions(&mut unnamed);
    assert_eq!(
        prepared,
        unnamed.assemble(),
        "fix_strides, function names dropped"
    );
    assert_eq!(refl.fixups, ["fix_strides"]);
    let sizes: Vec<(String, Option<u64>)> = refl
        .resources
        .iter()
        .map(|r| (r.kind.clone(), r.size))
        .collect();
    assert_eq!(
        sizes,
        [("cbuf".into(), Some(112)), ("sbuf".into(), Some(80))],
        "std140 U: 4 × 16 + 3 × 16; std430 S: 16 + 2 × 32"
    );
    dmsh_msl::to_msl(&fixed, &refl, &Default::default()).expect("SPIRV-Cross takes it");

    let u: Vec<f32> = (0..16)
        .map(|k| k as f32 * 0.25 - 1.0)
        .chain([0.5, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, -1.5, 0.0, 0.0, 0.0])
        .collect();
    let s: Vec<f32> = [
        0.125, 4.0, -2.0, 0.0, // g, padding
        1.0, 2.0, 3.0, 4.0, 0.5, 0.0, 0.0, 0.0, // items[0]
        -1.0, 0.25, 8.0, 2.0, 3.0, 0.0, 0.0, 0.0, // items[1]
    ]
    .to_vec();
    let buffers = vec![
        BufferSpec {
            name: "U".into(),
            size: 112,
            init: f32s(&u),
        },
        BufferSpec {
            name: "S".into(),
            size: 80,
            init: f32s(&s),
        },
    ];
    let binds = vec![
        Bind {
            resource: ResourceRef::Cbuf(2),
            buffer: 0,
        },
        Bind {
            resource: ResourceRef::Sbuf(0),
            buffer: 1,
        },
    ];
    let expected = texels(&draw(
        original.clone(),
        buffers.clone(),
        binds.clone(),
        false,
    ));
    let fixed_stage = Stage {
        spirv: fixed,
        reflection: original.reflection.clone(),
    };
    let got = texels(&draw(fixed_stage, buffers, binds, false));
    let distinct: std::collections::BTreeSet<[u32; 4]> =
        expected.iter().map(|t| t.map(f32::to_bits)).collect();
    println!(
        "fix_strides: {} pixels, {} distinct colours",
        got.len(),
        distinct.len()
    );
    assert!(distinct.len() >= 8, "every array element is read");
    assert_eq!(got, expected);
}

/// Writes source 0 and source 1; `OUTPUTS` declares them.
const FS_DUAL: &str = r#"#version 450
OUTPUTS
void main() {
    vec2 p = gl_FragCoord.xy / 16.0;
    c0 = vec4(p, 0.5, 0.75);
    c1 = vec4(0.25, p.y, p.x, 0.5);
}
"#;

#[test]
fn the_dual_source_variant_blends_like_index_one() {
    if !glsl::ready_with_vulkan() {
        return;
    }
    let dual = |outputs: &str| {
        let src = FS_DUAL.replace("OUTPUTS", outputs);
        glsl::compile_source(&src, "frag", &[]).expect("glslang")
    };
    let plain = dual("layout(location = 0) out vec4 c0;\nlayout(location = 1) out vec4 c1;");
    let by_hand = dual(
        "layout(location = 0, index = 0) out vec4 c0;\nlayout(location = 0, index = 1) out vec4 c1;",
    );
    let refl = vulkan::reflection(&Spirv::parse(&plain).unwrap()).unwrap();
    let (words, vrefl) = dual_source::variant(&plain, &refl)
        .unwrap()
        .expect("locations 0 and 1: a variant");
    spirv_val(&words).expect("spirv-val");
    let outs: Vec<(u32, u32)> = vrefl
        .outputs
        .iter()
        .map(|o| (o.location, o.index))
        .collect();
    assert_eq!(outs, [(0, 0), (0, 1)]);
    assert_eq!(vrefl.fixups, ["dual_source"]);
    let hand_refl = vulkan::reflection(&Spirv::parse(&by_hand).unwrap()).unwrap();
    assert_eq!(
        vrefl.outputs, hand_refl.outputs,
        "the reflection of the GLSL by hand"
    );
    assert!(
        dual_source::variant(&by_hand, &hand_refl)
            .unwrap()
            .is_none(),
        "an Index decoration already: no variant"
    );
    let msl = dmsh_msl::to_msl(&words, &vrefl, &Default::default()).expect("MSL");
    assert!(
        msl.source.contains("[[color(0), index(1)]]"),
        "{}",
        msl.source
    );
    assert_eq!(
        dmsh_msl::check_bindings(&msl.source, &vrefl),
        Vec::<String>::new()
    );

    let fs = |spirv: Vec<u32>| Stage {
        reflection: glsl::reflect_shifted(&spirv, "fragment"),
        spirv,
    };
    let got = texels(&draw(fs(words), vec![], vec![], true));
    let expected = texels(&draw(fs(by_hand.clone()), vec![], vec![], true));
    let unblended = texels(&draw(fs(by_hand), vec![], vec![], false));
    assert!(
        got.iter().zip(&unblended).all(|(a, b)| a != b),
        "source 1 and the destination change every pixel"
    );
    // One pixel by the blend equation: c0 × c1 + clear × (1 − c1).
    let (x, y) = (3.5f32 / 16.0, 5.5f32 / 16.0);
    let (c0, c1, d) = (
        [x, y, 0.5, 0.75],
        [0.25, y, x, 0.5],
        [0.5, 0.25, 1.0, 0.125],
    );
    let want: [f32; 4] = std::array::from_fn(|k| c0[k] * c1[k] + d[k] * (1.0 - c1[k]));
    let px = got[(5 * SIZE + 3) as usize];
    assert!(
        px.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-6),
        "{px:?} {want:?}"
    );
    assert_eq!(got, expected);
}
