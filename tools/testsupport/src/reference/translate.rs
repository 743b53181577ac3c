//! Our translation of a dksh corpus binary (uam's output) as a render stage, with the I/O,
//! image-format and sampler types its GLSL source declares (what a title's facts would give:
//! the binary does not carry them).

use crate::corpus_text;
use crate::reference::dksh_render;
use dmsh_ir::lift::{dksh, BindingLayout, CompType, ImageFmt};
use dmsh_spv::lower::Form;
use dmsh_spv::{F64Mode, Options};
use dmsh_vk::render::Stage;
use std::path::Path;

fn comp_type(ty: &str) -> CompType {
    if ty.starts_with("uvec") || ty == "uint" {
        CompType::Uint
    } else if ty.starts_with("ivec") || ty == "int" {
        CompType::Sint
    } else {
        CompType::Float
    }
}

/// Texture slots declared `isampler*` / `usampler*` in the GLSL.
fn sampler_types(src: &str) -> Vec<(u32, CompType)> {
    let mut v = Vec::new();
    for line in src.lines() {
        let l = line.trim();
        let Some(b) = l.find("binding") else { continue };
        let rest = &l[b + 7..];
        let num: String = rest
            .chars()
            .skip_while(|c| !c.is_ascii_digit())
            .take_while(|c| c.is_ascii_digit())
            .collect();
        let Ok(n) = num.parse::<u32>() else { continue };
        if l.contains("usampler") {
            v.push((n, CompType::Uint));
        } else if l.contains("isampler") {
            v.push((n, CompType::Sint));
        }
    }
    v
}

/// Bindings declared `samplerBuffer` / `isamplerBuffer` / `usamplerBuffer`.
fn texel_buffers(src: &str) -> Vec<u32> {
    src.lines()
        .filter(|l| l.contains("samplerBuffer") && l.trim().starts_with("layout"))
        .filter_map(|l| {
            let b = &l[l.find("binding")? + 7..];
            let num: String = b
                .chars()
                .skip_while(|c| !c.is_ascii_digit())
                .take_while(|c| c.is_ascii_digit())
                .collect();
            num.parse().ok()
        })
        .collect()
}

/// Image slots with a format qualifier: `layout(binding = N, rgba8) uniform … image2D` (the
/// facts a porter supplies: the binary does not record them).
pub fn image_formats(src: &str) -> Vec<(u32, ImageFmt)> {
    let mut v = Vec::new();
    for line in src.lines() {
        let l = line.trim();
        if !l.contains("image") || !l.starts_with("layout") {
            continue;
        }
        let Some(inner) = l.split('(').nth(1).and_then(|x| x.split(')').next()) else {
            continue;
        };
        let mut binding = None;
        let mut fmt = None;
        for part in inner.split(',') {
            let p = part.trim();
            if let Some(b) = p.strip_prefix("binding") {
                binding = b.trim_start_matches([' ', '=']).trim().parse::<u32>().ok();
            } else if let Some(f) = ImageFmt::parse(p) {
                fmt = Some(f);
            }
        }
        if let (Some(b), Some(f)) = (binding, fmt) {
            v.push((b, f));
        }
    }
    v
}

/// Translates corpus shader `name` (e.g. `vs_basic_mvp.vert`) with I/O types from its GLSL.
/// `y_transform`: give c\[1\]\[0\] (Mesa's STATE_FB_WPOS_Y_TRANSFORM.x, which uam fills with
/// 0.0) the value 1.0 a Vulkan framebuffer implies, as the corpus README suggests for
/// reference comparisons of dFdy / interpolateAtOffset.
pub fn corpus_stage(dir: &Path, name: &str, y_transform: bool) -> Result<Stage, String> {
    stage(dir, name, y_transform, true, Form::Direct, None)
}

/// Runs `f` with every translation this module makes (and those of tests that ask
/// [`f64_mode`]) translating 64-bit floating point as `mode` says (`F64Mode::Soft`: the
/// Metal build's exact integer routines, no 64-bit float type).
pub fn with_f64<T>(mode: F64Mode, f: impl FnOnce() -> T) -> T {
    let old = F64.with(|c| c.replace(mode));
    let r = f();
    F64.with(|c| c.set(old));
    r
}

/// The f64 mode translations use now (`F64Mode::Native` unless inside [`with_f64`]).
pub fn f64_mode() -> F64Mode {
    F64.with(|c| c.get())
}

/// [`corpus_stage`] in another form (a lowered geometry pipeline's pass, docs/geometry.md).
pub fn corpus_stage_form(dir: &Path, name: &str, form: Form) -> Result<Stage, String> {
    stage(dir, name, false, true, form, None)
}

/// A tessellation control shader in `form` with the tessellation parameters of evaluation
/// shader `eval` (its DKSH header's), as a title's facts give a control shader its partner's
/// domain (the control kernel writes Metal's factor layout for it, docs/tessellation.md).
pub fn corpus_control_stage(
    dir: &Path,
    name: &str,
    eval: &str,
    form: Form,
) -> Result<Stage, String> {
    let bytes = std::fs::read(dir.join(format!("{eval}.dksh"))).map_err(|e| e.to_string())?;
    let tess = dksh::parse(&bytes)?.tess_param;
    stage(dir, name, false, true, form, tess)
}

/// A geometry shader in `form` with input primitive `prim` (pipeline state a title's facts
/// give; the binary does not carry it).
pub fn corpus_geometry_stage(
    dir: &Path,
    name: &str,
    prim: dmsh_ir::lift::GsInput,
    form: Form,
) -> Result<Stage, String> {
    GS_INPUT.with(|c| c.set(Some(prim)));
    let r = stage(dir, name, false, true, form, None);
    GS_INPUT.with(|c| c.set(None));
    r
}

thread_local! {
    /// The f64 mode of the translations ([`with_f64`]).
    static F64: std::cell::Cell<F64Mode> = const { std::cell::Cell::new(F64Mode::Native) };
    /// The input primitive [`corpus_geometry_stage`] gives the next translation.
    static GS_INPUT: std::cell::Cell<Option<dmsh_ir::lift::GsInput>> = const { std::cell::Cell::new(None) };
}

/// [`corpus_stage`] without the input types of the GLSL: every input is `float`, as the
/// translator declares it when a title's facts say nothing (what `int_inputs` starts from).
pub fn corpus_stage_untyped_inputs(dir: &Path, name: &str) -> Result<Stage, String> {
    stage(dir, name, false, false, Form::Direct, None)
}

/// Applies what a stage's GLSL declares and the binary does not record to its graphics
/// configuration: input types (when `typed_inputs`) and output types per location, image
/// formats and integer sampler types at the slots `image_slot` / `tex_slot` give for a GLSL
/// binding (the identity under deko3d), and the clip / cull split.
pub fn glsl_facts(
    g: &mut dmsh_ir::lift::Gfx,
    src: &str,
    typed_inputs: bool,
    tex_slot: &dyn Fn(u32) -> Option<u32>,
    image_slot: &dyn Fn(u32) -> Option<u32>,
) {
    for v in dksh_render::interface(src, "in")
        .into_iter()
        .filter(|_| typed_inputs)
    {
        if let Some(t) = g.inputs.get_mut(v.location as usize) {
            *t = comp_type(&v.ty);
        }
    }
    for v in dksh_render::interface(src, "out") {
        if let Some(t) = g.outputs.get_mut(v.location as usize) {
            *t = comp_type(&v.ty);
        }
    }
    for (n, fmt) in image_formats(src) {
        if let Some(x) = image_slot(n).and_then(|s| g.images.get_mut(s as usize)) {
            *x = fmt;
        }
    }
    for (n, t) in sampler_types(src) {
        if let Some(x) = tex_slot(n).and_then(|s| g.textures.get_mut(s as usize)) {
            *x = t;
        }
    }
    for n in texel_buffers(src) {
        if let Some(s) = tex_slot(n).filter(|&s| s < 32) {
            g.texel_buffers |= 1 << s;
        }
    }
    g.clip_cull = corpus_text::clip_cull(src);
}

fn stage(
    dir: &Path,
    name: &str,
    y_transform: bool,
    typed_inputs: bool,
    form: Form,
    tess: Option<u32>,
) -> Result<Stage, String> {
    let bytes = std::fs::read(dir.join(format!("{name}.dksh"))).map_err(|e| e.to_string())?;
    let mut prog = dksh::parse(&bytes)?;
    if y_transform {
        if let Some(w) = prog.cbuf1.first_mut() {
            *w = 1.0f32.to_bits();
        }
    }
    let mut cfg = dksh::graphics_config(
        prog.stage,
        &prog.code,
        &prog.cbuf1,
        BindingLayout::deko3d(prog.stage),
        name,
    )?;
    let src = dksh_render::corpus_glsl(dir, name).map_err(|e| e.to_string())?;
    if let Some(g) = cfg.gfx.as_mut() {
        g.early_fragment_tests = prog.early_fragment_tests;
        // The evaluation shader's DKSH header gives the domain, spacing and winding (a
        // control shader: its partner's, when given).
        if let Some(t) = prog.tess_param.or(tess) {
            g.tess_from_container(t);
        }
        if let Some(p) = GS_INPUT.with(|c| c.get()) {
            g.gs_input = Some(p);
        }
        glsl_facts(g, &src, typed_inputs, &|b| Some(b), &|b| Some(b));
    }
    let opts = Options {
        form,
        f64: f64_mode(),
        ..Default::default()
    };
    let out = dmsh_spv::translate_graphics(&prog.code, &cfg, &opts).map_err(|e| e.to_string())?;
    // One reflection type (dmsh-reflect): the translator's record is what the runner binds.
    let reflection = out.reflection.clone();
    Ok(Stage {
        spirv: out.words,
        reflection,
    })
}
