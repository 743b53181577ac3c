//! What the fix-up crate's execution tests share.

use dmsh_vk::render::RenderOutputs;

/// The RGBA32F texels of a draw's first target.
pub fn texels(o: &RenderOutputs) -> Vec<[f32; 4]> {
    o.targets[0]
        .data
        .chunks_exact(16)
        .map(|c| {
            std::array::from_fn(|i| f32::from_le_bytes(c[4 * i..4 * i + 4].try_into().unwrap()))
        })
        .collect()
}
