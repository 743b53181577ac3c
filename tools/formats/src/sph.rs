//! What the shader program header (SPH) says about inputs and outputs, for shader_facts.tsv.

use crate::bytes::u32le;
use crate::stage::Stage;

/// Inputs and outputs read from an SPH (Maxwell layout, 0x50 bytes).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SphIo {
    /// Generic input components: bit 4·a + c = attribute a, component c.
    pub in_generic: u128,
    /// Generic output components (vertex / tessellation / geometry), same bit layout.
    pub out_generic: u128,
    /// Pixel shaders: render-target component mask (SPH word 18).
    pub ps_targets: u32,
    /// Pixel shaders: writes depth (SPH word 19 bit 1).
    pub ps_depth: bool,
}

fn bits_u128(sph: &[u8], off: usize) -> u128 {
    let mut v = 0u128;
    for i in 0..16 {
        v |= (*sph.get(off + i).unwrap_or(&0) as u128) << (8 * i);
    }
    v
}

/// Decodes the SPH at the start of `sph` for `stage`.
pub fn io(sph: &[u8], stage: Stage) -> SphIo {
    let mut r = SphIo::default();
    match stage {
        Stage::Fragment => {
            // Pixel: 2 bits of interpolation per component, 32 attributes from +0x18.
            for a in 0..32usize {
                let byte = *sph.get(0x18 + a).unwrap_or(&0);
                for c in 0..4 {
                    if (byte >> (2 * c)) & 3 != 0 {
                        r.in_generic |= 1u128 << (4 * a + c);
                    }
                }
            }
            r.ps_targets = u32le(sph, 0x48).unwrap_or(0);
            r.ps_depth = u32le(sph, 0x4C).unwrap_or(0) & 2 != 0;
        }
        Stage::Compute => {}
        _ => {
            // VTG: 4 bits per attribute, input map from +0x18, output map from +0x36.
            r.in_generic = bits_u128(sph, 0x18);
            r.out_generic = bits_u128(sph, 0x36);
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sph(words: &[(usize, u32)]) -> Vec<u8> {
        let mut b = vec![0u8; 0x50];
        for &(w, v) in words {
            b[w * 4..w * 4 + 4].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    #[test]
    fn vertex_and_pixel_maps() {
        // uam's vs_basic_mvp: inputs 0.xyz 1.xyz 2.xy, same outputs (word 13 from bit 16).
        let v = io(
            &sph(&[(0, 0x0006_0461), (6, 0x377), (13, 0x0377_f000)]),
            Stage::Vertex,
        );
        assert_eq!((v.in_generic, v.out_generic), (0x377, 0x377));
        // uam's fs_fragdepth: 0.xy 1.xyz perspective, RT0 xyzw, depth.
        let p = io(
            &sph(&[(0, 0x0006_d462), (6, 0x2a0a), (18, 0xf), (19, 2)]),
            Stage::Fragment,
        );
        assert_eq!(p.in_generic, 0x73);
        assert_eq!((p.ps_targets, p.ps_depth), (0xf, true));
    }
}
