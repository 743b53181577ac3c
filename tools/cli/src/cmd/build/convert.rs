//! Converting one key: translate (native FMA: Metal's `fma` is fused) → SPIR-V → the fix-ups
//! (dmsh-fixup: spv_single_lane, int_inputs, vs_pad with the partners' inputs, vs_depth) → MSL through
//! SPIRV-Cross (dmsh-msl) → `<key>_b.metal` and `<key>_b.json` (the reflection, with the chain
//! version and the Metal entry points), checked against the reflection. The build runs it in
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
    /// The failing step (`translate`, `fix-up`, `validate`, `f64`, `msl`, `bindings`, `metallib`, `write`), empty
    /// when built.
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
    /// The split folder.
    pub split: &'a Path,
    /// The title's manual facts, if any.
    pub manual: Option<&'a Path>,
    /// The MSL options.
    pub opts: &'a dmsh_msl::MslOptions,
    /// The chain version.
    pub v: &'a str,
    /// `xcrun metal`, where it exists.
    pub metal: Option<&'a super::metallib::MetalCompiler>,
    /// Whether spirv-val checks each module after the fix-ups (where it is installed).
    pub validate: bool,
}

/// Builds one key into `dir`; `partners`: the inputs its fragment partners read (vs_pad).
pub fn build_key(
    set: &Setting,
    r: &MapRow,
    dir: &Path,
    partners: &dmsh_fixup::Partners,
) -> Outcome {
    let Setting {
        split,
        manual,
        opts,
        v,
        metal,
        validate,
    } = *set;
    let fail = |step: &'static str, message: String| Outcome {
        key: r.key.clone(),
        stage: r.stage.clone(),
        status: "failed",
        step,
        message: message.replace(['\t', '\n'], " "),
    };
    if r.gen != "nvn1" {
        return Outcome {
            status: "unsupported",
            step: "translate",
            ..fail(
                "translate",
                format!("{} (Ampere) code is not translated yet", r.gen),
            )
        };
    }
    let spv = dir.join(format!(".{}.spv", r.key));
    if let Err(e) = translate_key(split, r, &spv, manual, "native") {
        return fail("translate", format!("{e:#}"));
    }
    let words: Vec<u32> = match std::fs::read(&spv) {
        Ok(b) => b
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        Err(e) => return fail("translate", e.to_string()),
    };
    let json = spv.with_extension("json");
    let refl = std::fs::read_to_string(&json)
        .map_err(|e| e.to_string())
        .and_then(|t| dmsh_reflect::Reflection::from_json(&t).map_err(|e| e.to_string()));
    let _ = std::fs::remove_file(&spv);
    let _ = std::fs::remove_file(&json);
    let mut refl = match refl {
        Ok(r) => r,
        Err(e) => return fail("translate", e),
    };
    let words = match dmsh_fixup::for_metal(&words, &mut refl, partners) {
        Ok(w) => w,
        Err(e) => return fail("fix-up", e.to_string()),
    };
    if validate {
        if let Err(e) = dmsh_vk::spirv_val(&words) {
            return fail("validate", e);
        }
    }
    if dmsh_msl::limits::uses_f64(&words) {
        return fail(
            "f64",
            "the shader computes in 64-bit floating point (DADD / DMUL / DFMA / DSETP / DMNMX \
             / F2F.F64, …), which Metal does not have; an exact lowering to 32-bit integer \
             arithmetic is not built yet"
                .into(),
        );
    }
    let msl = match dmsh_msl::to_msl(&words, &refl, opts) {
        Ok(m) => m,
        Err(e) => return fail("msl", e.to_string()),
    };
    refl.metal_entry_z = msl
        .entry_points
        .iter()
        .find(|e| e.name != dmsh_msl::ENTRY_POINT)
        .map(|e| e.name.clone());
    let bad = dmsh_msl::check_bindings(&msl.source, &refl);
    if !bad.is_empty() {
        return fail("bindings", bad.join("; "));
    }
    refl.chain = Some(v.to_string());
    refl.metal_entry_points = msl.entry_points.iter().map(|e| e.name.clone()).collect();
    let base = dir.join(format!("{}_b", r.key));
    let written = write_atomic(&base.with_extension("metal"), msl.source.as_bytes())
        .and_then(|_| write_atomic(&base.with_extension("json"), refl.to_json().as_bytes()));
    if let (Ok(()), Some(m)) = (&written, metal) {
        if let Err(e) = m.compile(
            &base.with_extension("metal"),
            &base.with_extension("metallib"),
        ) {
            for ext in ["metal", "json", "metallib"] {
                let _ = std::fs::remove_file(base.with_extension(ext));
            }
            return fail("metallib", e);
        }
    }
    match written {
        Ok(()) => Outcome {
            key: r.key.clone(),
            stage: r.stage.clone(),
            status: "built",
            step: "",
            message: String::new(),
        },
        Err(e) => fail("write", format!("{e:#}")),
    }
}
