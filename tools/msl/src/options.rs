//! The pinned MSL target: language version, platform and every SPIRV-Cross option we set
//! (docs/build.md explains each choice).

use spirv_cross2::compile::msl::{CompilerOptions, MetalPlatform, MslVersion};

/// The Metal Shading Language version every library is written for: 3.1 (macOS 14, iOS 17).
/// From 3.1 on SPIRV-Cross uses Metal's native texture atomics; below it, it emulates image
/// atomics with a second `device atomic_uint*` argument per image, which breaks the rule that
/// each reflection resource is one Metal argument (the seeds' MSL 2.3 libraries hit exactly that).
pub const MSL_VERSION: (u32, u32) = (3, 1);

/// The name of every entry point the MSL declares (one shader per `.metal` file).
pub const ENTRY_POINT: &str = "main0";

/// The converter, for the chain version: the spirv-cross2 crate and the SPIRV-Cross commit it
/// vendors (docs/build.md).
pub const SPIRV_CROSS: &str = "spirv-cross2 0.7.2, SPIRV-Cross aa217ae";

/// The Apple GPU families the libraries are for, oldest first, and every later one: Apple7
/// (A14, M1) on, the `Metal3` family — every M-series Mac and the iPhones the seeds run on
/// (A16, A20 Pro).
pub const GPU_FAMILIES: &[&str] = &["Apple7", "Apple8", "Apple9"];

/// The Metal platform a library is written for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Platform {
    /// macOS on Apple silicon.
    #[default]
    MacOs,
    /// iOS / iPadOS.
    Ios,
}

impl Platform {
    /// The platform's name in reports and file names (`macos`, `ios`).
    pub fn name(self) -> &'static str {
        match self {
            Platform::MacOs => "macos",
            Platform::Ios => "ios",
        }
    }
}

/// What may vary between builds; everything else is pinned by the constants of this module.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MslOptions {
    /// The Metal platform.
    pub platform: Platform,
}

/// The SPIRV-Cross MSL options for `opts`. Options not set here keep SPIRV-Cross's
/// defaults, which docs/build.md lists with the reason they are right for us.
pub(crate) fn compiler_options(opts: &MslOptions) -> CompilerOptions {
    let mut o = CompilerOptions::default();
    o.version = MslVersion::new(MSL_VERSION.0, MSL_VERSION.1, 0);
    o.platform = match opts.platform {
        Platform::MacOs => MetalPlatform::MacOS,
        Platform::Ios => MetalPlatform::iOS,
    };
    // Plain argument tables: the reflection's metal_index is the [[buffer/texture/sampler(n)]].
    o.argument_buffers = false;
    // Every (set, binding) is given an explicit index; the SPIR-V binding numbers encode guest
    // slots (64 + n, 0x4000 | …) and must never become Metal indices.
    o.enable_decoration_binding = false;
    // NoContraction operations already become spvFAdd/spvFMul per operation; making all float
    // math "invariant" would only slow the rest down. Position invariance is `[[invariant]]`
    // plus `-fpreserve-invariance` at the metallib step.
    o.invariant_fp_math = false;
    // Texel buffers as Metal texture_buffer (MSL 2.1+), not 2D textures of a fixed width.
    o.texture_buffer_native = true;
    // 1D textures as 2D (height 1): Metal's texture1d has no mipmaps, no LOD and no gradients.
    o.texture_1d_as_2d = true;
    // Apple GPUs ignore one partial derivative of cube-map gradients; SPIRV-Cross corrects it.
    o.agx_manual_cube_grad_fixup = true;
    // iOS: SIMD-group functions (Apple7+ has them) instead of quad-group ones, so 32-lane warp
    // operations keep 32 lanes; base vertex / instance (drawIndexed with base) are supported.
    o.ios_use_simdgroup_functions = opts.platform == Platform::Ios;
    o.ios_support_base_vertex_instance = opts.platform == Platform::Ios;
    // Kept explicit although they are SPIRV-Cross's defaults: the contract depends on them.
    o.swizzle_texture_samples = false;
    o.pad_fragment_output_components = false;
    o.enable_base_index_zero = false;
    o.force_native_arrays = false;
    o.readwrite_texture_fences = true;
    o.common.flip_vertex_y = false;
    o.common.fixup_clipspace = false;
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinned_choices_reach_spirv_cross() {
        let o = compiler_options(&MslOptions::default());
        assert_eq!(o.version, MslVersion::new(3, 1, 0));
        assert!(matches!(o.platform, MetalPlatform::MacOS));
        assert!(!o.argument_buffers && !o.enable_decoration_binding && !o.invariant_fp_math);
        assert!(!o.ios_use_simdgroup_functions);
        let i = compiler_options(&MslOptions {
            platform: Platform::Ios,
        });
        assert!(matches!(i.platform, MetalPlatform::iOS));
        assert!(i.ios_use_simdgroup_functions && i.ios_support_base_vertex_instance);
    }
}
