//! Converting one key: translate (native FMA: Metal's `fma` is fused; soft f64: Metal has no
//! `double`, docs/ir.md "Soft f64") → SPIR-V → the fix-ups
//! (dmsh-fixup: spv_single_lane, int_inputs, vs_pad with the partners' inputs, vs_depth) →
//! spirv-val → no f64 (a guard: soft f64 leaves no 64-bit float type) → MSL through
//! SPIRV-Cross (dmsh-msl) → `<key>_b.metal` and `<key>_b.json` (the reflection, with the chain
//! version and the Metal entry points), checked against the reflection. A Vulkan module of a
//! capture folder (`build_module`) skips the translation and gets `fix_strides`, its
//! reflection from the module, the dual-source variant `<key>_d` where it applies, and the
//! SPIR-V-level lowering (`dmsh_fixup::lower`) of geometry and tessellation stages. The build runs it in
//! a staging folder of its own per key and takes every file it leaves there as the key's
//! outputs (the cache, `super::cache`, stores them).

use std::path::Path;

use anyhow::Context;

use crate::cmd::title::{translate_key, MapRow};

/// One key's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The shader key.
    pub key: String,
    /// Its stage name.
    pub stage: String,
    /// `built`, `failed` or `unsupported`.
    pub status: &'static str,
    /// The failing step (`read`, `translate`, `fix-up`, `validate`, `f64`, `msl`, `bindings`,
    /// `metallib`, `write`), empty when built.
    pub step: &'static str,
    /// What failed, on one line; empty when built.
    pub message: String,
}

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = path.with_extension("tmp~");
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))
}

/// What every key of a build converts with.
pub struct Setting<'a> {
    /// The MSL options.
    pub opts: &'a dmsh_msl::MslOptions,
    /// The chain version.
    pub v: &'a str,
    /// `xcrun metal`, where it exists.
    pub metal: Option<&'a super::metallib::MetalCompiler>,
    /// Whether spirv-val checks each module after the fix-ups (where it is installed).
    pub validate: bool,
}

/// A failure: the step and what failed.
pub type Failed = (&'static str, String);

impl Outcome {
    /// `built`, or `failed` at a step.
    fn of(key: &str, stage: &str, r: Result<(), Failed>) -> Outcome {
        let (status, step, message) = match r {
            Ok(()) => ("built", "", String::new()),
            Err((step, m)) => ("failed", step, m.replace(['\t', '\n'], " ")),
        };
        Outcome {
            key: key.to_string(),
            stage: stage.to_string(),
            status,
            step,
            message,
        }
    }
}

/// Builds one key of a split into `dir`; `partners`: the inputs its fragment partners read
/// (vs_pad); `lowered`: the title has geometry or tessellation control shaders, so a vertex
/// shader also gets its capture form `<key>_g` and a fragment shader reading
/// gl_PrimitiveID its variant `<key>_q` (docs/geometry.md). A geometry shader's `<key>_b` is
/// its kernel, `<key>_p` its draw's vertex function; a tessellation control shader's `<key>_b`
/// its kernel, an evaluation shader's its post-tessellation vertex function
/// (docs/tessellation.md).
pub fn build_key(
    set: &Setting,
    split: &Path,
    manual: Option<&Path>,
    r: &MapRow,
    dir: &Path,
    partners: &dmsh_fixup::Partners,
    lowered: bool,
) -> Outcome {
    if r.gen == "nvn2" {
        // NVN2 (Ampere): the listing `<key>.sass` first (an unknown encoding fails the key
        // at step `decode`, naming key, offset and word), then the same chain as Switch 1.
        if let Err(e) = super::nvn2::decode_key(split, &r.key, &r.stage, dir) {
            return Outcome::of(&r.key, &r.stage, Err(e));
        }
    } else if r.gen != "nvn1" {
        return Outcome {
            status: "unsupported",
            ..Outcome::of(
                &r.key,
                &r.stage,
                Err(("translate", format!("{} code is not translated", r.gen))),
            )
        };
    }
    // Stages Metal does not have are built lowered (docs/geometry.md, docs/tessellation.md).
    let main_form = match r.stage.as_str() {
        "geometry" => "geometry_kernel",
        "tess_control" => "tess_control_kernel",
        "tess_eval" => "tess_eval_post",
        _ => "direct",
    };
    let built = translate(split, manual, r, dir, main_form).and_then(|(words, mut refl)| {
        let words = dmsh_fixup::for_metal(&words, &mut refl, partners)
            .map_err(|e| ("fix-up", e.to_string()))?;
        if lowered && r.stage == "fragment" {
            let v = dmsh_fixup::primitive_id::variant(&words, &refl)
                .map_err(|e| ("fix-up", format!("primitive_id: {e}")))?;
            if let Some((w, rf)) = v {
                let q = dmsh_fixup::primitive_id::SUFFIX;
                emit(set, &w, rf, &dir.join(format!("{}{q}", r.key)))
                    .map_err(|(step, e)| (step, format!("variant {q}: {e}")))?;
            }
        }
        emit(set, &words, refl, &dir.join(format!("{}_b", r.key)))
    });
    // The other passes of a lowered geometry pipeline.
    let variant = |form: &str, suffix: &str| -> Result<(), Failed> {
        let (words, mut refl) = translate(split, manual, r, dir, form)?;
        let words = dmsh_fixup::for_metal(&words, &mut refl, &Default::default())
            .map_err(|e| ("fix-up", e.to_string()))?;
        emit(set, &words, refl, &dir.join(format!("{}{suffix}", r.key)))
            .map_err(|(step, e)| (step, format!("{form} form: {e}")))
    };
    let built = built.and_then(|()| match r.stage.as_str() {
        "geometry" => variant("geometry_draw", "_p"),
        "vertex" if lowered => variant("vertex_capture", "_g"),
        _ => Ok(()),
    });
    Outcome::of(&r.key, &r.stage, built)
}

/// Translates key `r` (native FMA, soft f64) in `form` (`--form`) in `dir`: its SPIR-V words and
/// reflection.
fn translate(
    split: &Path,
    manual: Option<&Path>,
    r: &MapRow,
    dir: &Path,
    form: &str,
) -> Result<(Vec<u32>, dmsh_reflect::Reflection), Failed> {
    let fail = |m: String| ("translate", m);
    let spv = dir.join(format!(".{}.{form}.spv", r.key));
    translate_key(split, r, &spv, manual, "native", "soft", form)
        .map_err(|e| fail(format!("{e:#}")))?;
    let words = std::fs::read(&spv).map_err(|e| fail(e.to_string()));
    let json = spv.with_extension("json");
    let refl = std::fs::read_to_string(&json)
        .map_err(|e| e.to_string())
        .and_then(|t| dmsh_reflect::Reflection::from_json(&t).map_err(|e| e.to_string()));
    let _ = std::fs::remove_file(&spv);
    let _ = std::fs::remove_file(&json);
    let words = dmsh_vk::spirv_words(&words?).map_err(|e| fail(e.to_string()))?;
    Ok((words, refl.map_err(fail)?))
}

/// Builds one Vulkan module of a capture folder into `dir` (docs/build.md, "Vulkan
/// modules"): `fix_strides` and its reflection (`dmsh_fixup::vulkan::prepare`), the Metal
/// fix-ups, `<key>_b.*`, and for a fragment shader with a plain location-1 output the
/// dual-source variant `<key>_d.*`. Geometry and tessellation modules are lowered at the
/// SPIR-V level (`dmsh_fixup::lower`; docs/geometry.md, docs/tessellation.md): a geometry
/// module's `<key>_b` is its kernel and `<key>_p` its draw's vertex function, a control
/// module's `<key>_b` its kernel, an evaluation module's its post-tessellation vertex
/// function. With `lowered` (the folder has geometry or tessellation control modules) a
/// vertex module also gets its capture form `<key>_g` and a fragment module reading
/// gl_PrimitiveID its variant `<key>_q`.
pub fn build_module(
    set: &Setting,
    key: &str,
    stage: &str,
    words: &[u32],
    dir: &Path,
    lowered: bool,
) -> Outcome {
    use dmsh_fixup::lower::Pass;
    let built = (|| {
        let (words, refl) =
            dmsh_fixup::vulkan::prepare(words).map_err(|e| ("fix-up", e.to_string()))?;
        // One pass of a lowered pipeline into `<key><suffix>`.
        let pass = |p: Pass, suffix: &str| -> Result<(), Failed> {
            let fail = |e: String| ("fix-up", format!("{}: {e}", p.name()));
            let (w, mut r) =
                dmsh_fixup::lower::lower(&words, p).map_err(|e| fail(e.to_string()))?;
            r.fixups = refl.fixups.clone();
            let w = dmsh_fixup::for_metal(&w, &mut r, &Default::default())
                .map_err(|e| fail(e.to_string()))?;
            emit(set, &w, r, &dir.join(format!("{key}{suffix}")))
                .map_err(|(step, e)| (step, format!("{} form: {e}", p.name())))
        };
        match stage {
            "geometry" => {
                pass(Pass::GeometryKernel, "_b")?;
                return pass(Pass::GeometryDraw, "_p");
            }
            "tess_control" => return pass(Pass::TessControlKernel, "_b"),
            "tess_eval" => return pass(Pass::TessEvalPost, "_b"),
            _ => {}
        }
        let mut refl = refl.clone();
        let words = dmsh_fixup::for_metal(&words, &mut refl, &Default::default())
            .map_err(|e| ("fix-up", e.to_string()))?;
        let variant = dmsh_fixup::dual_source::variant(&words, &refl)
            .map_err(|e| ("fix-up", format!("dual_source: {e}")))?;
        if lowered && stage == "fragment" {
            let v = dmsh_fixup::primitive_id::variant(&words, &refl)
                .map_err(|e| ("fix-up", format!("primitive_id: {e}")))?;
            if let Some((w, rf)) = v {
                let q = dmsh_fixup::primitive_id::SUFFIX;
                emit(set, &w, rf, &dir.join(format!("{key}{q}")))
                    .map_err(|(step, e)| (step, format!("variant {q}: {e}")))?;
            }
        }
        emit(set, &words, refl, &dir.join(format!("{key}_b")))?;
        if let Some((words, refl)) = variant {
            let d = dmsh_fixup::dual_source::SUFFIX;
            emit(set, &words, refl, &dir.join(format!("{key}{d}")))
                .map_err(|(step, e)| (step, format!("variant {d}: {e}")))?;
        }
        if lowered && stage == "vertex" {
            pass(Pass::VertexCapture, "_g")?;
        }
        Ok(())
    })();
    Outcome::of(key, stage, built)
}

/// Why a module that declares a 64-bit float type is not built. Translated shaders use soft
/// f64 and declare none, so this guards the Vulkan modules of capture folders (their own
/// doubles are not lowered) and any translation path that would leave one.
const NO_DOUBLES: &str = "the module declares a 64-bit float type, which Metal does not have \
(translated shaders use soft f64 and have none; a Vulkan module's own doubles are not lowered)";

/// The Metal library of fixed-up `words` with reflection `refl`: spirv-val (where installed),
/// no f64 (Metal has none), MSL through SPIRV-Cross (dmsh-msl), checked against the reflection, written to `<base>.metal` and `<base>.json`
/// (the reflection with the chain version and the Metal entry points), and compiled to
/// `<base>.metallib` where `xcrun metal` exists.
fn emit(
    set: &Setting,
    words: &[u32],
    mut refl: dmsh_reflect::Reflection,
    base: &Path,
) -> Result<(), Failed> {
    if set.validate {
        dmsh_vk::spirv_val(words).map_err(|e| ("validate", e))?;
    }
    if dmsh_msl::limits::uses_f64(words) {
        return Err(("f64", NO_DOUBLES.into()));
    }
    let msl = dmsh_msl::to_msl(words, &refl, set.opts).map_err(|e| ("msl", e.to_string()))?;
    refl.metal_entry_z = msl
        .entry_points
        .iter()
        .find(|e| e.name != dmsh_msl::ENTRY_POINT)
        .map(|e| e.name.clone());
    let bad = dmsh_msl::check_bindings(&msl.source, &refl);
    if !bad.is_empty() {
        return Err(("bindings", bad.join("; ")));
    }
    refl.chain = Some(set.v.to_string());
    refl.metal_entry_points = msl.entry_points.iter().map(|e| e.name.clone()).collect();
    write_atomic(&base.with_extension("metal"), msl.source.as_bytes())
        .and_then(|_| write_atomic(&base.with_extension("json"), refl.to_json().as_bytes()))
        .map_err(|e| ("write", format!("{e:#}")))?;
    if let Some(m) = set.metal {
        if let Err(e) = m.compile(
            &base.with_extension("metal"),
            &base.with_extension("metallib"),
        ) {
            for ext in ["metal", "json", "metallib"] {
                let _ = std::fs::remove_file(base.with_extension(ext));
            }
            return Err(("metallib", e));
        }
    }
    Ok(())
}
