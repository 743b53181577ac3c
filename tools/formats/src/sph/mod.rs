//! The shader program header (SPH) of graphics programs, version 3 (Maxwell) and 4 (SM75+):
//! the raw words with their names ([`header`]), the system values by name ([`sysval`]), the typed decode every stage uses ([`info`]: `SphInfo`), and the
//! input/output masks the split writes to shader_facts.tsv ([`io`], from `SphInfo`). One
//! decoder: the scanner, the disassembler and the lifter all read the SPH through it.

pub mod header;
pub mod info;
pub mod sysval;

use crate::stage::Stage;
pub use header::{Sph, SPH_SIZE, SPH_V4_SIZE};
pub use info::{Interp, SphError, SphInfo, SphStage};

/// Inputs and outputs read from an SPH (either version).
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

/// Decodes the SPH at the start of `sph` for `stage` (all empty when it is too short).
pub fn io(sph: &[u8], stage: Stage) -> SphIo {
    let Ok(info) = SphInfo::parse(sph) else {
        return SphIo::default();
    };
    let mut r = SphIo::default();
    match stage {
        Stage::Fragment => {
            // A pixel shader reads a component when it has an interpolation mode.
            for (k, m) in info.imap_interp.iter().enumerate() {
                if *m != Interp::Unused {
                    r.in_generic |= 1u128 << k;
                }
            }
            r.ps_targets = info.omap_target;
            r.ps_depth = info.omap_depth;
        }
        Stage::Compute => {}
        _ => {
            r.in_generic = info.imap_generic;
            r.out_generic = info.omap_generic;
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
