//! Why a key stopped where it did, and how far it got: the one classification of build
//! failures (from the step and message `_b_build.json` records) that the report uses.

use serde::Serialize;

use crate::cmd::build::record::KeyRecord;

/// How far a key got along the chain, in chain order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// In the shader map.
    Found,
    /// Every reachable instruction decoded.
    Decoded,
    /// Translated to SPIR-V with its reflection.
    Translated,
    /// SPIRV-Cross wrote MSL.
    Msl,
    /// The MSL agrees with the reflection (`dmsh_msl::check_bindings`).
    Validated,
    /// Compiled to a metallib (`xcrun metal`).
    Metallib,
}

/// What the levels mean, for the report's readers.
pub const LEVELS_NOTE: &str = "Validation is the build's binding check: the MSL's arguments \
and locations agree with the reflection (dmsh_msl::check_bindings); it comes after MSL. \
Before MSL every module passed spirv-val (where it is installed; a refused one is not \
counted as translated). \
A metallib is counted when the build wrote one (xcrun metal).";

/// Every level, with its label, in chain order.
pub const LEVELS: [(Level, &str); 6] = [
    (Level::Found, "found"),
    (Level::Decoded, "decoded"),
    (Level::Translated, "translated"),
    (Level::Msl, "reached MSL"),
    (Level::Validated, "passed validation"),
    (Level::Metallib, "reached metallib"),
];

/// Why a key did not build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// Code of a generation that is decoded but not translated yet (NVN2, Ampere).
    UnsupportedGeneration,
    /// A reachable word no instruction form matches.
    UnknownEncoding,
    /// An input module could not be read (a capture build's file truncated or not SPIR-V).
    Unreadable,
    /// An instruction (or form) the translator has no semantics for.
    UnimplementedInstruction,
    /// A texture or image handle whose slot could not be decoded.
    UnresolvedBinding,
    /// Any other translation error (facts, control section, files).
    TranslationError,
    /// spirv-val refused the module (after the fix-ups): a translator or fix-up defect.
    InvalidSpirv,
    /// A Metal fix-up (dmsh-fixup) could not rewrite the module.
    FixUp,
    /// The module declares a 64-bit float type, which Metal does not have (the build's soft
    /// f64 leaves none in translated shaders: a guard, and a Vulkan module's own doubles).
    NoDoubles,
    /// A geometry or tessellation stage, which Metal cannot run directly.
    StageNotInMetal,
    /// SPIRV-Cross refused the module.
    SpirvCross,
    /// The reflection could not be given to SPIRV-Cross.
    ReflectionError,
    /// The MSL disagrees with the reflection (e.g. two arguments at one index).
    BindingMismatch,
    /// Apple's Metal compiler refused the MSL.
    Metal,
    /// An output could not be written.
    Write,
}

impl Cause {
    /// A failed key's cause, from its status, step and message.
    pub fn of(status: &str, step: &str, message: &str) -> Cause {
        match (status, step) {
            ("unsupported", _) => Cause::UnsupportedGeneration,
            (_, "translate") if message.contains("undecodable instruction") => {
                Cause::UnknownEncoding
            }
            (_, "decode") => Cause::UnknownEncoding,
            (_, "read") => Cause::Unreadable,
            (_, "translate") if message.contains("unresolvable handle") => Cause::UnresolvedBinding,
            (_, "translate") if is_instruction_error(message) => Cause::UnimplementedInstruction,
            (_, "translate") => Cause::TranslationError,
            (_, "validate") => Cause::InvalidSpirv,
            (_, "fix-up") => Cause::FixUp,
            (_, "f64") => Cause::NoDoubles,
            (_, "msl") if message.starts_with("SPIRV-Cross") => Cause::SpirvCross,
            (_, "msl") if message.starts_with("reflection") => Cause::ReflectionError,
            (_, "msl") => Cause::StageNotInMetal,
            (_, "bindings") => Cause::BindingMismatch,
            (_, "metallib") => Cause::Metal,
            _ => Cause::Write,
        }
    }

    /// The snake-case name (as in report.json).
    pub fn name(self) -> &'static str {
        match self {
            Cause::UnsupportedGeneration => "unsupported_generation",
            Cause::UnknownEncoding => "unknown_encoding",
            Cause::Unreadable => "unreadable",
            Cause::UnimplementedInstruction => "unimplemented_instruction",
            Cause::UnresolvedBinding => "unresolved_binding",
            Cause::TranslationError => "translation_error",
            Cause::InvalidSpirv => "invalid_spirv",
            Cause::FixUp => "fix_up",
            Cause::NoDoubles => "no_doubles",
            Cause::StageNotInMetal => "stage_not_in_metal",
            Cause::SpirvCross => "spirv_cross",
            Cause::ReflectionError => "reflection_error",
            Cause::BindingMismatch => "binding_mismatch",
            Cause::Metal => "metal",
            Cause::Write => "write",
        }
    }

    /// A label for people.
    pub fn label(self) -> &'static str {
        match self {
            Cause::UnsupportedGeneration => "not translated yet (NVN2 / Ampere)",
            Cause::UnknownEncoding => "unknown encoding",
            Cause::Unreadable => "unreadable input (truncated, not SPIR-V)",
            Cause::UnimplementedInstruction => "unimplemented instruction",
            Cause::UnresolvedBinding => "unresolved binding",
            Cause::TranslationError => "other translation error",
            Cause::InvalidSpirv => "invalid SPIR-V (spirv-val)",
            Cause::FixUp => "Metal fix-up error",
            Cause::NoDoubles => "64-bit floating point (Metal has none)",
            Cause::StageNotInMetal => "stage Metal cannot run directly",
            Cause::SpirvCross => "SPIRV-Cross error",
            Cause::ReflectionError => "reflection error",
            Cause::BindingMismatch => "MSL disagrees with the reflection",
            Cause::Metal => "Metal error",
            Cause::Write => "write error",
        }
    }

    /// The last level a key failing this way reached.
    pub fn reached(self) -> Level {
        match self {
            Cause::UnknownEncoding | Cause::Unreadable => Level::Found,
            // NVN2 keys are decoded by the build (`<key>.sass`), not translated yet.
            Cause::UnsupportedGeneration
            | Cause::UnimplementedInstruction
            | Cause::UnresolvedBinding
            | Cause::TranslationError
            | Cause::InvalidSpirv => Level::Decoded,
            Cause::FixUp
            | Cause::NoDoubles
            | Cause::StageNotInMetal
            | Cause::SpirvCross
            | Cause::ReflectionError => Level::Translated,
            Cause::BindingMismatch => Level::Msl,
            Cause::Metal => Level::Validated,
            // A write error can come at any step; count it as translated only.
            Cause::Write => Level::Translated,
        }
    }
}

/// A lifting error names the offset and the mnemonic: `offset 0x…: MNEMONIC: why`.
fn is_instruction_error(message: &str) -> bool {
    message
        .split("offset 0x")
        .nth(1)
        .is_some_and(|rest| rest.split(": ").count() >= 3)
}

/// How far a key got, and why it stopped (none when built).
pub fn classify(r: &KeyRecord) -> (Level, Option<Cause>) {
    if r.status == "built" {
        let lib = r.outputs.keys().any(|n| n.ends_with(".metallib"));
        return (
            if lib {
                Level::Metallib
            } else {
                Level::Validated
            },
            None,
        );
    }
    let c = Cause::of(&r.status, &r.step, &r.message);
    (c.reached(), Some(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(status: &str, step: &str, message: &str) -> KeyRecord {
        KeyRecord {
            status: status.into(),
            step: step.into(),
            message: message.into(),
            ..Default::default()
        }
    }

    #[test]
    fn causes_come_from_step_and_message() {
        let cases = [
            (
                rec(
                    "unsupported",
                    "translate",
                    "nvn2 (Ampere) code is not translated yet; all 40 instructions decode",
                ),
                Cause::UnsupportedGeneration,
                Level::Decoded,
            ),
            (
                rec(
                    "failed",
                    "read",
                    "capture/random.spv: offset 0x0: not SPIR-V",
                ),
                Cause::Unreadable,
                Level::Found,
            ),
            (
                rec(
                    "failed",
                    "translate",
                    "translating k.code: offset 0x90: undecodable instruction 0x0123456789abcdef",
                ),
                Cause::UnknownEncoding,
                Level::Found,
            ),
            (
                rec(
                    "failed",
                    "decode",
                    "k.code: 1 of 9 instructions do not decode; first: unknown encoding \
                     0x000fc20000000000000000000000ffff at offset 0x30 (listing: k.sass)",
                ),
                Cause::UnknownEncoding,
                Level::Found,
            ),
            (
                rec(
                    "failed",
                    "translate",
                    "offset 0x40: TEX: shader aa: unresolvable handle: read from a register",
                ),
                Cause::UnresolvedBinding,
                Level::Decoded,
            ),
            (
                rec(
                    "failed",
                    "translate",
                    "offset 0x40: VOTE.ANY: not implemented",
                ),
                Cause::UnimplementedInstruction,
                Level::Decoded,
            ),
            (
                rec("failed", "translate", "reading facts x.tsv: line 3"),
                Cause::TranslationError,
                Level::Decoded,
            ),
            (
                rec(
                    "failed",
                    "validate",
                    "error: line 12: ID 5 has not been defined",
                ),
                Cause::InvalidSpirv,
                Level::Decoded,
            ),
            (
                rec(
                    "failed",
                    "f64",
                    "the shader computes in 64-bit floating point",
                ),
                Cause::NoDoubles,
                Level::Translated,
            ),
            (
                rec("failed", "fix-up", "vs_depth: no Position output"),
                Cause::FixUp,
                Level::Translated,
            ),
            (
                rec(
                    "failed",
                    "msl",
                    "geometry shader: Metal has no geometry stage",
                ),
                Cause::StageNotInMetal,
                Level::Translated,
            ),
            (
                rec(
                    "failed",
                    "msl",
                    "SPIRV-Cross (compile): MSL currently does not support 64-bit atomics",
                ),
                Cause::SpirvCross,
                Level::Translated,
            ),
            (
                rec(
                    "failed",
                    "bindings",
                    "_104 [[texture(0)]] overlaps _80 at index 0",
                ),
                Cause::BindingMismatch,
                Level::Msl,
            ),
            (
                rec("failed", "metallib", "error: use of undeclared identifier"),
                Cause::Metal,
                Level::Validated,
            ),
        ];
        for (r, cause, level) in cases {
            assert_eq!(classify(&r), (level, Some(cause)), "{}", r.message);
        }
        let mut built = rec("built", "", "");
        assert_eq!(classify(&built), (Level::Validated, None));
        built.outputs.insert("k_b.metallib".into(), "00".into());
        assert_eq!(classify(&built), (Level::Metallib, None));
    }
}
