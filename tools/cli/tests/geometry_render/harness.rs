//! The harness of the geometry and tessellation render tests: glslang and translated
//! stages, the draws, their resources and bindings, the direct and lowered pipelines, and
//! the picture comparison.

use dmsh_fixup::lower::Pass;
use dmsh_spv::lower::Form;
use dmsh_testsupport::reference::{dksh, dksh_render, glsl, translate};
use dmsh_vk::compute::{Bind, BufferSpec, PointerPatch, ResourceRef};
use dmsh_vk::render::{
    LoweredGeometry, LoweredTessellation, MiddleStage, RenderJob, Stage, Tessellation, Topology,
    VertexAttribute, VertexBuffer,
};
use dmsh_vk::TexFormat;
/// A glslang stage from GLSL text, with the deko3d binding shifts (uniform block n → cbuf
/// bank 2 + n, what uam's binaries use).
pub(crate) fn glslang(src: &str, stage: &str, refl: &str) -> Stage {
    let spirv = glsl::compile_source(src, stage, glsl::DEKO3D_SHIFTS)
        .unwrap_or_else(|e| panic!("glslang {stage}: {e}"));
    let reflection = glsl::reflect_shifted(&spirv, refl);
    Stage { spirv, reflection }
}

/// glslang's SPIR-V of corpus shader `name` (`stage`: glslang's name, `refl`: ours).
pub(crate) fn reference(name: &str, stage: &str, refl: &str) -> Stage {
    let dir = dksh::corpus_dir();
    let src = dksh_render::corpus_glsl(&dir, name).expect("corpus GLSL");
    glslang(&src, stage, refl)
}

/// One middle stage's data: its uniform blocks (GLSL binding n = `ubos[n]`) and textures
/// (GLSL binding n = `textures[n]`).
#[derive(Default, Clone)]
pub(crate) struct Data {
    pub(crate) ubos: Vec<Vec<u8>>,
    pub(crate) textures: Vec<dmsh_vk::TextureSpec>,
    /// Storage buffers (GLSL binding n = `sbufs[n]`), named `sbuf<n>` in the job.
    pub(crate) sbufs: Vec<Vec<u8>>,
    /// NAK's layout: the stage's banks are NVK's (`nvk` below), not deko3d's.
    pub(crate) nvk: Option<Nvk>,
    /// NAK's layout: the bank holding set 1's texture handles (texture `n` is the handle word
    /// at 4n, ID n + 1 as the NAK harness gives them: NAK treats 0 as the null descriptor).
    pub(crate) handles: Option<u32>,
}

/// How a NAK binary reaches its one uniform block: sm86 graphics bind it as bank c\[1\];
/// sm53 reads its descriptor {u64 address, u32 size} from descriptor set 0 in memory, whose
/// address is the root table's `sets[0]` at c\[0\]\[0x128\] (../shared/corpus/nak/README.md
/// §4.5).
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Nvk {
    Bank,
    Memory,
}

/// Adds `data` to the job's buffers and textures and binds `refl`'s resources to it: cbuf
/// 2 + n = uniform block n (deko3d), texture n = sampler binding n; a driver bank (cbuf 0)
/// gets zeros (the harness sets no driver words for these shaders).
pub(crate) fn binds(
    refl: &dmsh_vk::reflection::Reflection,
    data: &Data,
    buffers: &mut Vec<BufferSpec>,
    textures: &mut Vec<dmsh_vk::TextureSpec>,
    pointers: &mut Vec<PointerPatch>,
) -> Vec<Bind> {
    let (b0, t0) = (buffers.len(), textures.len());
    for (k, b) in data.ubos.iter().enumerate() {
        buffers.push(BufferSpec {
            name: format!("ubo{k}"),
            size: b.len() as u64,
            init: b.clone(),
        });
    }
    textures.extend(data.textures.iter().cloned());
    let zeros = |buffers: &mut Vec<BufferSpec>, n: u32| {
        buffers.push(BufferSpec {
            name: format!("zeros{n}"),
            size: 0x1000,
            init: Vec::new(),
        });
        buffers.len() - 1
    };
    let mut v = Vec::new();
    for r in &refl.resources {
        let n = r.index();
        if r.kind == dmsh_reflect::LOWERED_BUFFER {
            // The harness makes the buffers between a lowered pipeline's passes.
            continue;
        }
        let (resource, buffer) = match (r.kind.as_str(), data.nvk) {
            ("cbuf", Some(Nvk::Bank)) if n == 1 => (ResourceRef::Cbuf(1), b0),
            ("cbuf", Some(Nvk::Memory)) if n == 0 => {
                // The root table, and set 0 holding the uniform block's descriptor.
                let (root, set) = (buffers.len(), buffers.len() + 1);
                let size = data.ubos[0].len() as u32;
                let mut set_bytes = vec![0u8; 16];
                set_bytes[8..12].copy_from_slice(&size.to_le_bytes());
                let mut root_bytes = vec![0u8; 0x800];
                root_bytes[0x130..0x134].copy_from_slice(&16u32.to_le_bytes());
                for (name, init) in [("root", root_bytes), ("set0", set_bytes)] {
                    buffers.push(BufferSpec {
                        name: name.into(),
                        size: init.len() as u64,
                        init,
                    });
                }
                for (buffer, offset, target) in [(root, 0x128, set), (set, 0, b0)] {
                    pointers.push(PointerPatch {
                        buffer,
                        offset,
                        target,
                        add: 0,
                        encoding: Default::default(),
                    });
                }
                (ResourceRef::Cbuf(0), root)
            }
            ("cbuf", Some(_)) if Some(n) == data.handles => {
                let words: Vec<u8> = (0..data.textures.len() as u32)
                    .flat_map(|k| ((k + 1) | (k + 1) << 20).to_le_bytes())
                    .collect();
                buffers.push(BufferSpec {
                    name: format!("handles{n}"),
                    size: 0x100,
                    init: words,
                });
                (ResourceRef::Cbuf(n), buffers.len() - 1)
            }
            ("texture", Some(_)) => (ResourceRef::Texture(n), t0 + n as usize),
            ("cbuf", None) if n >= 2 && ((n - 2) as usize) < data.ubos.len() => {
                (ResourceRef::Cbuf(n), b0 + (n - 2) as usize)
            }
            ("cbuf", _) => (ResourceRef::Cbuf(n), zeros(buffers, n)),
            ("texture", None) => (ResourceRef::Texture(n), t0 + n as usize),
            ("sbuf", None) if (n as usize) < data.sbufs.len() => {
                let b = &data.sbufs[n as usize];
                buffers.push(BufferSpec {
                    name: format!("sbuf{n}"),
                    size: b.len() as u64,
                    init: b.clone(),
                });
                (ResourceRef::Sbuf(n), buffers.len() - 1)
            }
            (k, _) => panic!("resource {k} {n} has no input in this test"),
        };
        v.push(Bind { resource, buffer });
    }
    v
}

/// Floats as little-endian bytes.
/// The vertex shader of the gs_passthrough_tri draws (its vWorldPos input).
pub(crate) const PASSTHROUGH_VS: &str = "#version 460
layout(location = 0) in vec4 aPos;
layout(location = 0) out vec3 vWorldPos;
void main() { gl_Position = aPos; vWorldPos = aPos.xyz * vec3(2.0, 3.0, 5.0) + aPos.yzx; }
";

/// The fragment shader of the gs_passthrough_tri draws (its gNormal and gBary outputs).
pub(crate) const PASSTHROUGH_FS: &str = "#version 460
layout(location = 0) in vec3 gNormal;
layout(location = 1) in vec3 gBary;
layout(location = 0) out vec4 o;
void main() { o = vec4(gNormal * 0.25 + 0.5, 1.0) + vec4(gBary * 0.25, 0.0); }
";

pub(crate) fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// One draw: glslang's vertex and fragment shaders around the stages under test.
pub(crate) struct Draw {
    pub(crate) vertex: Stage,
    pub(crate) fragment: Stage,
    pub(crate) vertices: Vec<f32>,
    pub(crate) floats_per_vertex: u32,
    pub(crate) topology: Topology,
    pub(crate) layers: u32,
    pub(crate) viewports: Vec<[f32; 4]>,
    /// The vertex shader's uniform blocks.
    pub(crate) vertex_ubos: Vec<Vec<u8>>,
    /// 32-bit indices (empty: not indexed).
    pub(crate) indices: Vec<u32>,
    /// Instances.
    pub(crate) instances: u32,
    /// Primitive restart (index 0xFFFFFFFF).
    pub(crate) restart: bool,
}

impl Draw {
    /// A draw of one layer and one viewport, the vertex shader without uniforms.
    pub(crate) fn new(
        vertex: Stage,
        fragment: Stage,
        vertices: Vec<f32>,
        floats_per_vertex: u32,
        topology: Topology,
    ) -> Draw {
        Draw {
            vertex,
            fragment,
            vertices,
            floats_per_vertex,
            topology,
            layers: 1,
            viewports: Vec::new(),
            vertex_ubos: Vec::new(),
            indices: Vec::new(),
            instances: 1,
            restart: false,
        }
    }
}

/// The stages under test: a geometry stage, or tessellation control + evaluation (built
/// once per draw and moved into it: the variants' sizes do not matter).
#[allow(clippy::large_enum_variant)]
pub(crate) enum Middle {
    Geometry(Stage, Data),
    /// A lowered geometry pipeline: the capture vertex shader, the kernel (with its data) and
    /// the draw's vertex shader.
    Lowered(Stage, Stage, Data, Stage),
    /// A lowered tessellation pipeline: the capture vertex shader, the control kernel and the
    /// evaluation shader's draw form (with their data), control points per patch.
    LoweredTess(Stage, Stage, Data, Stage, Data, u32),
    Tessellation(Stage, Data, Stage, Data, u32),
}

pub(crate) fn run(d: &Draw, middle: Middle) -> Vec<dmsh_vk::Image> {
    run_outputs(d, middle).0.targets
}

/// Draws `d` with `middle`: every output, and the job's buffer names in order.
pub(crate) fn run_outputs(
    d: &Draw,
    middle: Middle,
) -> (dmsh_vk::render::RenderOutputs, Vec<String>) {
    let (mut buffers, mut textures, mut pointers) = (Vec::new(), Vec::new(), Vec::new());
    let vdata = Data {
        ubos: d.vertex_ubos.clone(),
        ..Data::default()
    };
    let vertex_binds = match &middle {
        Middle::Lowered(capture, ..) | Middle::LoweredTess(capture, ..) => &capture.reflection,
        _ => &d.vertex.reflection,
    };
    let vertex_binds = binds(
        &vertex_binds.clone(),
        &vdata,
        &mut buffers,
        &mut textures,
        &mut pointers,
    );
    let mut stage = |st: Stage, data: &Data| {
        let binds = binds(
            &st.reflection,
            data,
            &mut buffers,
            &mut textures,
            &mut pointers,
        );
        MiddleStage { stage: st, binds }
    };
    let mut fragment = d.fragment.clone();
    let mut lowered_geometry = None;
    let mut lowered_tessellation = None;
    let (geometry, tessellation) = match middle {
        Middle::Geometry(g, data) => (Some(stage(g, &data)), None),
        Middle::LoweredTess(capture, c, cd, e, ed, patch_points) => {
            let control = stage(c, &cd);
            let eval = stage(e, &ed);
            lowered_tessellation = Some(LoweredTessellation {
                capture,
                control,
                eval,
                patch_points,
            });
            (None, None)
        }
        Middle::Lowered(capture, kernel, data, draw) => {
            let kernel = stage(kernel, &data);
            if let Some((spirv, reflection)) =
                dmsh_fixup::primitive_id::variant(&fragment.spirv, &fragment.reflection)
                    .expect("primitive_id variant")
            {
                fragment = Stage { spirv, reflection };
            }
            lowered_geometry = Some(LoweredGeometry {
                capture,
                kernel,
                draw,
            });
            (None, None)
        }
        Middle::Tessellation(c, cd, e, ed, patch_points) => {
            let control = stage(c, &cd);
            let eval = stage(e, &ed);
            let t = Tessellation {
                control,
                eval,
                patch_points,
            };
            (None, Some(t))
        }
    };
    let attributes = (0..d.floats_per_vertex / 4)
        .map(|k| VertexAttribute {
            location: k,
            binding: 0,
            format: dmsh_vk::render::attribute_format("rgba32f").unwrap(),
            offset: 16 * k,
        })
        .collect();
    let job = RenderJob {
        vertex_binds,
        vertex: d.vertex.clone(),
        fragment,
        lowered_geometry,
        lowered_tessellation,
        width: 64,
        height: 64,
        targets: vec![TexFormat::Rgba8Unorm],
        layers: d.layers,
        viewports: d.viewports.clone(),
        vertex_buffers: vec![VertexBuffer {
            data: f32s(&d.vertices),
            stride: 4 * d.floats_per_vertex,
            per_instance: false,
        }],
        attributes,
        vertex_count: d.vertices.len() as u32 / d.floats_per_vertex,
        indices: d.indices.clone(),
        instance_count: d.instances,
        primitive_restart: d.restart,
        topology: d.topology,
        buffers,
        textures,
        pointers,
        geometry,
        tessellation,
        ..Default::default()
    };
    let names = job.buffers.iter().map(|b| b.name.clone()).collect();
    let out = dmsh_vk::render::render(&job).unwrap_or_else(|e| panic!("render: {e}"));
    (out, names)
}

/// The share of bytes within 1 of each other, and the largest difference.
pub(crate) fn close(a: &[u8], b: &[u8]) -> (f64, u8) {
    let near = a
        .iter()
        .zip(b)
        .filter(|(x, y)| x.abs_diff(**y) <= 1)
        .count();
    let max = a
        .iter()
        .zip(b)
        .map(|(x, y)| x.abs_diff(*y))
        .max()
        .unwrap_or(0);
    (near as f64 / a.len().max(1) as f64, max)
}

/// Our translation of corpus shader `name`.
pub(crate) fn ours(name: &str) -> Stage {
    translate::corpus_stage(&dksh::corpus_dir(), name, false)
        .unwrap_or_else(|e| panic!("{name}: translation: {e}"))
}

/// Our translation of NAK's binary of corpus shader `name` for `sm` (tests/corpus/nak: the
/// SPH and the code; NVK's layout with the bank `tex_bank` holding set 1's texture handles,
/// the tessellation domain, spacing and output from meta.json, as NVK programs them), output
/// types from the GLSL.
pub(crate) fn ours_in(name: &str, form: Form) -> Stage {
    translate::corpus_stage_form(&dksh::corpus_dir(), name, form)
        .unwrap_or_else(|e| panic!("{name}: translation ({form:?}): {e}"))
}

/// glslang's module `words` treated as a capture folder's (docs/build.md, "Vulkan modules"):
/// `fix_strides`, then lowered into `pass` at the SPIR-V level (`dmsh_fixup::lower`). The
/// reflection's banks are the DEKO3D_SHIFTS ranges' slots, as [`glslang`]'s (uniform block n
/// at binding 2 + n is cbuf bank 2 + n, sampler n at binding 64 + n texture n).
pub(crate) fn captured(words: &[u32], pass: Pass) -> Stage {
    let (w, _) = dmsh_fixup::vulkan::prepare(words).expect("fix_strides");
    let (spirv, mut reflection) =
        dmsh_fixup::lower::lower(&w, pass).unwrap_or_else(|e| panic!("{pass:?}: {e}"));
    dmsh_vk::spirv_val(&spirv).unwrap_or_else(|e| panic!("{pass:?}: spirv-val: {e}"));
    for r in &mut reflection.resources {
        let b = r.binding.unwrap_or(0);
        match r.kind.as_str() {
            "sbuf" => r.bank = b - 32,
            "texture" => r.bank = b - 64,
            "sampler" => r.bank = b - 96,
            _ => {}
        }
    }
    Stage { spirv, reflection }
}

/// The captured pipeline of a vertex and geometry module (capture form, kernel, draw).
pub(crate) fn captured_geometry(vertex: &[u32], geometry: &[u32], data: Data) -> Middle {
    Middle::Lowered(
        captured(vertex, Pass::VertexCapture),
        captured(geometry, Pass::GeometryKernel),
        data,
        captured(geometry, Pass::GeometryDraw),
    )
}

/// A vertex shader in capture form written in GLSL (docs/geometry.md): `decls` and `body`
/// compute `vec4 pos` and the vec4 varyings `outs` (location, expression), stored as vertex
/// record words (generic n at 4n, the position at 128).
pub(crate) fn capture_glsl(decls: &str, body: &str, outs: &[(u32, &str)]) -> Stage {
    let mut src = format!(
        "#version 460\n{decls}\n\
         layout(std430, set = 0, binding = 240) buffer Records {{ uint w[]; }};\n\
         void main() {{\n uint b = uint(gl_VertexIndex) * 144u;\n{body}\n\
         for (int c = 0; c < 4; c++) w[b + 128u + uint(c)] = floatBitsToUint(pos[c]);\n"
    );
    for (loc, e) in outs {
        src += &format!(
            " {{ vec4 x = {e}; for (int c = 0; c < 4; c++) w[b + {}u + uint(c)] = floatBitsToUint(x[c]); }}\n",
            4 * loc
        );
    }
    src += "}\n";
    let spirv = glsl::compile_source(&src, "vert", &[]).unwrap_or_else(|e| panic!("capture: {e}"));
    let reflection = dmsh_reflect::Reflection {
        stage: "vertex".into(),
        entry: "main".into(),
        resources: vec![dmsh_reflect::Resource {
            kind: dmsh_reflect::LOWERED_BUFFER.into(),
            bank: 0,
            binding: Some(240),
            ..Default::default()
        }],
        lowering: Some(dmsh_reflect::Lowering {
            pass: Pass::VertexCapture,
            record_bytes: 4 * dmsh_spv::lower::RECORD_WORDS,
            ..Default::default()
        }),
        metal_direct: true,
        ..Default::default()
    };
    Stage { spirv, reflection }
}

pub(crate) fn ours_nak(name: &str, sm: &str, stage: dmsh_ir::Stage, tex_bank: Option<u8>) -> Stage {
    ours_nak_in(name, sm, stage, tex_bank, Form::Direct)
}

pub(crate) fn ours_nak_in(
    name: &str,
    sm: &str,
    stage: dmsh_ir::Stage,
    tex_bank: Option<u8>,
    form: Form,
) -> Stage {
    use dmsh_ir::lift::{dksh as lift_dksh, pipeline_state, Arch, BindingLayout};
    let dir = support_root().join("tests/corpus/nak");
    let code = std::fs::read(dir.join(format!("{name}.{sm}.code.bin"))).expect("NAK code.bin");
    let meta: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join(format!("{name}.{sm}.meta.json"))).expect("meta"),
    )
    .expect("meta.json");
    let layout = BindingLayout::nvk(tex_bank.unwrap_or(u8::MAX), u8::MAX);
    let key = format!("{name}.{sm}");
    let mut cfg = lift_dksh::graphics_config(stage, &code, &[], layout, &key)
        .unwrap_or_else(|e| panic!("{key}: {e}"));
    if sm == "sm86" {
        cfg.arch = Arch::Ampere;
    }
    cfg.embedded_banks.clear();
    let src = dksh_render::corpus_glsl(&dksh::corpus_dir(), name).expect("corpus GLSL");
    if let Some(g) = cfg.gfx.as_mut() {
        let t = &meta["stage_info"]["tessellation"];
        let [d, sp, o] =
            [&t["domain"], &t["spacing"], &t["prims"]].map(|v| v.as_str().unwrap_or(""));
        if let Some(p) = pipeline_state::tess::parse(d, sp, o) {
            g.tess_from_container(p);
        }
        translate::glsl_facts(g, &src, true, &|b| Some(b), &|b| Some(b));
        // The input primitive is pipeline state NAK's binary does not carry: the GLSL's
        // `layout(points) in`, as a title's facts row would give it.
        if stage == dmsh_ir::Stage::Geometry {
            let prim = [
                "points",
                "lines_adjacency",
                "lines",
                "triangles_adjacency",
                "triangles",
            ]
            .into_iter()
            .find(|p| src.contains(&format!("layout({p}")));
            g.gs_input = prim.and_then(pipeline_state::GsInput::parse);
        }
    }
    let opts = dmsh_spv::Options {
        form,
        f64: translate::f64_mode(),
        ..Default::default()
    };
    let out = dmsh_spv::translate_graphics(&code, &cfg, &opts)
        .unwrap_or_else(|e| panic!("{key}: translation: {e}"));
    Stage {
        spirv: out.words,
        reflection: out.reflection,
    }
}

/// The repository's root.
pub(crate) fn support_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Draws `d` with corpus geometry shader `name` lowered both ways — translated (after
/// `capture`, the draw's vertex shader in capture form) and captured from glslang's modules —
/// and compares each with `want` (labelled `what, lowered` / `what, captured, lowered`).
pub(crate) fn compare_lowerings(
    d: &Draw,
    data: impl Fn() -> Data,
    capture: &Stage,
    name: &str,
    what: &str,
    want: &[dmsh_vk::Image],
) {
    let kernel = ours_in(name, Form::Lowered(Pass::GeometryKernel));
    let draw = ours_in(name, Form::Lowered(Pass::GeometryDraw));
    let got = run(d, Middle::Lowered(capture.clone(), kernel, data(), draw));
    compare(&format!("{what}, lowered"), want, &got);
    let gs = reference(name, "geom", "geometry").spirv;
    let got = run(d, captured_geometry(&d.vertex.spirv, &gs, data()));
    compare(&format!("{what}, captured, lowered"), want, &got);
}

/// Checks the two pictures agree and are not blank.
pub(crate) fn compare(what: &str, want: &[dmsh_vk::Image], got: &[dmsh_vk::Image]) {
    let clear = want[0]
        .data
        .chunks(4)
        .filter(|p| p[..3] == [0, 0, 0])
        .count();
    let covered = want[0].data.len() / 4 - clear;
    let (share, max) = close(&want[0].data, &got[0].data);
    if let Some(dir) = std::env::var_os("DMSH_GEO_DUMP") {
        // Both pictures as PNGs, to look at a difference.
        let dir = std::path::PathBuf::from(dir);
        std::fs::create_dir_all(&dir).unwrap();
        let base = what.replace([' ', '/', '(', ')', '+'], "_");
        for (tag, img) in [("want", &want[0]), ("got", &got[0])] {
            std::fs::write(dir.join(format!("{base}.{tag}.png")), img.to_png().unwrap()).unwrap();
        }
    }
    println!(
        "{what}: {covered} of {} pixels drawn; {:.4} % within 1/255 (max diff {max})",
        want[0].data.len() / 4,
        share * 100.0
    );
    assert!(covered > 100, "{what}: the reference draws almost nothing");
    assert!(
        share >= 0.999,
        "{what}: {:.4} % within 1/255",
        share * 100.0
    );
}

pub(crate) fn ready() -> bool {
    if dmsh_vk::shared().is_err() || !glsl::available() {
        println!("skipped: no Vulkan device or no glslangValidator");
        return false;
    }
    true
}

/// The extra GLSL corpus (tests/corpus/extra/glsl: uam binaries of GLSL written for forms the
/// dksh set lacks).
pub(crate) fn extra_dir() -> std::path::PathBuf {
    support_root().join("tests/corpus/extra/glsl")
}

pub(crate) fn extra_reference(name: &str, stage: &str, refl: &str) -> Stage {
    let src = dksh_render::corpus_glsl(&extra_dir(), name).expect("extra GLSL");
    glslang(&src, stage, refl)
}

pub(crate) fn extra_ours(name: &str, form: Form) -> Stage {
    translate::corpus_stage_form(&extra_dir(), name, form)
        .unwrap_or_else(|e| panic!("{name}: translation ({form:?}): {e}"))
}

/// [`PASSTHROUGH_VS`] in capture form (its output as generic vector 0, w = 1): the vertex
/// pass most lowered-geometry checks draw with.
pub(crate) fn passthrough_capture() -> Stage {
    capture_glsl(
        "layout(location = 0) in vec4 aPos;",
        "vec4 pos = aPos; vec4 v = vec4(aPos.xyz * vec3(2.0, 3.0, 5.0) + aPos.yzx, 1.0);",
        &[(0, "v")],
    )
}
