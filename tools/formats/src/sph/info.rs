//! The Shader Program Header as a typed structure (every stage): the common words and the
//! input/output attribute maps, decoded from a raw [`Sph`] (layout: NVIDIA's
//! "Shader-Program-Header", summarised in `tests/corpus/dksh/README.md` §3; version 4:
//! `clc797sph.h`, summarised in `tests/corpus/nak/README.md` §5). Both versions decode into
//! the same [`SphInfo`]; v4 keeps every v3 position and adds the `*_sys_d` maps and two pixel
//! flags.

use super::header::{bits, Sph, SPH_SIZE, SPH_V4_SIZE};

/// The pipeline stage an SPH declares (`shader_type`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SphStage {
    /// 1: vertex.
    Vertex,
    /// 2: tessellation control ("tessellation init").
    TessControl,
    /// 3: tessellation evaluation.
    TessEval,
    /// 4: geometry.
    Geometry,
    /// 5: pixel (fragment).
    Fragment,
}

impl SphStage {
    /// The reflection name of the stage.
    pub fn name(self) -> &'static str {
        match self {
            SphStage::Vertex => "vertex",
            SphStage::TessControl => "tess_control",
            SphStage::TessEval => "tess_eval",
            SphStage::Geometry => "geometry",
            SphStage::Fragment => "fragment",
        }
    }
}

/// How the pixel stage interpolates one input component (2 bits per component).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Interp {
    /// 0: not read.
    #[default]
    Unused,
    /// 1: constant (flat).
    Constant,
    /// 2: perspective-correct.
    Perspective,
    /// 3: screen-linear (noperspective).
    ScreenLinear,
}

/// Why an SPH is not usable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SphError {
    /// Fewer than 0x50 bytes (0x80 when word 0 says version 4).
    Short(usize),
    /// `sph_type` is neither 1 (VTG) nor 2 (pixel), or disagrees with `shader_type`.
    BadType(u32),
}

impl std::fmt::Display for SphError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SphError::Short(n) => write!(
                f,
                "SPH: {n} bytes, need {SPH_SIZE:#x} ({SPH_V4_SIZE:#x} for version 4)"
            ),
            SphError::BadType(w) => write!(
                f,
                "SPH word 0 {w:#010x}: sph_type/shader_type not a known combination"
            ),
        }
    }
}

impl std::error::Error for SphError {}

/// A decoded SPH: every field of the common words and both attribute maps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SphInfo {
    /// The stage.
    pub stage: SphStage,
    /// `sph_type`: 1 VTG, 2 pixel.
    pub sph_type: u32,
    /// SPH version.
    pub version: u32,
    /// Pixel: colour outputs go to separate targets (MRT).
    pub mrt_enable: bool,
    /// Pixel: the shader may kill (discard).
    pub kills_pixels: bool,
    /// The shader stores to global memory.
    pub does_global_store: bool,
    /// SASS version.
    pub sass_version: u32,
    /// The shader loads or stores memory.
    pub does_load_or_store: bool,
    /// The shader uses fp64.
    pub does_fp64: bool,
    /// Geometry: stream-out mask.
    pub stream_out_mask: u32,
    /// Local memory below the stack pointer, bytes.
    pub local_memory_low: u32,
    /// Local memory above, bytes.
    pub local_memory_high: u32,
    /// Call/return stack bytes.
    pub local_memory_crs: u32,
    /// Tess-control: per-patch attribute count.
    pub per_patch_attribute_count: u32,
    /// Geometry: invocations; tess-control: output patch size.
    pub threads_per_input_primitive: u32,
    /// Geometry: output topology (1 points, 6 line strip, 7 triangle strip).
    pub output_topology: u32,
    /// Geometry: maximum output vertices.
    pub max_output_vertex_count: u32,
    /// Store-request range start.
    pub store_req_start: u32,
    /// Store-request range end.
    pub store_req_end: u32,
    /// Input system values 0..31 (bit n = system value n: 4..9 tess levels, 24 primitive id,
    /// 25 layer, 26 viewport index, 27 point size, 28..31 position x..w).
    pub imap_sys_ab: u32,
    /// Input system values 32..47 (bit k = value 32+k: clip distances, point sprite, tess
    /// coord 44/45, instance id 46, vertex id 47).
    pub imap_sys_c: u16,
    /// VTG: input generic components read (bit 4n+c). Pixel: any mode other than unused.
    pub imap_generic: u128,
    /// Pixel: interpolation of generic n component c at `[4n + c]`.
    pub imap_interp: [Interp; 128],
    /// Output system values 0..31 (VTG).
    pub omap_sys_ab: u32,
    /// Output system values 32..47 (VTG).
    pub omap_sys_c: u16,
    /// VTG: output generic components written (bit 4n+c).
    pub omap_generic: u128,
    /// VTG: the viewport mask is written.
    pub omap_viewport_mask: bool,
    /// Pixel: 4-bit write mask per render target.
    pub omap_target: u32,
    /// Pixel: the sample mask is written.
    pub omap_sample_mask: bool,
    /// Pixel: depth is written.
    pub omap_depth: bool,
    /// Version 4 input system values D (VTG: 8 bits, viewport mask / barycentrics; pixel:
    /// 2 bits per value). 0 in v3.
    pub imap_sys_d: u16,
    /// Version 4, VTG: output system values D. 0 in v3.
    pub omap_sys_d: u8,
    /// Version 4, pixel: reads the interlock ticket (bit 610).
    pub does_interlock: bool,
    /// Version 4, pixel: uses inner (underestimated) coverage (bit 611).
    pub uses_underestimate: bool,
    /// Version 4, pixel: per-vertex generic input components (bits 672..799, bit 4n+c).
    pub imap_pervertex: u128,
}

fn bytes_le(s: &Sph, off: usize, n: usize) -> u128 {
    let mut v = 0u128;
    for i in 0..n {
        let b = off + i;
        let byte = (s.words[b / 4] >> (8 * (b % 4))) & 0xff;
        v |= (byte as u128) << (8 * i);
    }
    v
}

impl SphInfo {
    /// Decodes an SPH from its first 0x50 bytes (0x80 for version 4).
    pub fn parse(b: &[u8]) -> Result<SphInfo, SphError> {
        let s = Sph::parse(b).ok_or(SphError::Short(b.len()))?;
        SphInfo::from_sph(&s)
    }

    /// Decodes the typed fields of a raw SPH.
    pub fn from_sph(s: &Sph) -> Result<SphInfo, SphError> {
        let w = &s.words;
        let sph_type = bits(w[0], 0, 5);
        let stage = match (sph_type, bits(w[0], 10, 4)) {
            (1, 1) => SphStage::Vertex,
            (1, 2) => SphStage::TessControl,
            (1, 3) => SphStage::TessEval,
            (1, 4) => SphStage::Geometry,
            (2, 5) => SphStage::Fragment,
            _ => return Err(SphError::BadType(w[0])),
        };
        let v4 = bits(w[0], 5, 5) == 4;
        // Version 4 reserves the v3 fields does_load_or_store, does_fp64 and the CRS size.
        let v3_only = |x: u32| if v4 { 0 } else { x };
        let mut info = SphInfo {
            stage,
            sph_type,
            version: bits(w[0], 5, 5),
            mrt_enable: bits(w[0], 14, 1) != 0,
            kills_pixels: bits(w[0], 15, 1) != 0,
            does_global_store: bits(w[0], 16, 1) != 0,
            sass_version: bits(w[0], 17, 4),
            does_load_or_store: v3_only(bits(w[0], 26, 1)) != 0,
            does_fp64: v3_only(bits(w[0], 27, 1)) != 0,
            stream_out_mask: bits(w[0], 28, 4),
            local_memory_low: bits(w[1], 0, 24),
            per_patch_attribute_count: bits(w[1], 24, 8),
            local_memory_high: bits(w[2], 0, 24),
            threads_per_input_primitive: bits(w[2], 24, 8),
            local_memory_crs: v3_only(bits(w[3], 0, 24)),
            output_topology: bits(w[3], 24, 4),
            max_output_vertex_count: bits(w[4], 0, 12),
            store_req_start: bits(w[4], 12, 8),
            store_req_end: bits(w[4], 24, 8),
            imap_sys_ab: w[5],
            imap_sys_c: 0,
            imap_generic: 0,
            imap_interp: [Interp::Unused; 128],
            omap_sys_ab: 0,
            omap_sys_c: 0,
            omap_generic: 0,
            omap_viewport_mask: false,
            omap_target: 0,
            omap_sample_mask: false,
            omap_depth: false,
            imap_sys_d: 0,
            omap_sys_d: 0,
            does_interlock: false,
            uses_underestimate: false,
            imap_pervertex: 0,
        };
        if stage == SphStage::Fragment {
            for k in 0..128usize {
                let byte = 0x18 + k / 4;
                let v = (bytes_le(s, byte, 1) >> (2 * (k % 4))) & 3;
                let m = match v {
                    1 => Interp::Constant,
                    2 => Interp::Perspective,
                    3 => Interp::ScreenLinear,
                    _ => Interp::Unused,
                };
                info.imap_interp[k] = m;
                if m != Interp::Unused {
                    info.imap_generic |= 1u128 << k;
                }
            }
            info.imap_sys_c = bytes_le(s, 0x3a, 2) as u16;
            info.omap_target = w[18];
            info.omap_sample_mask = bits(w[19], 0, 1) != 0;
            info.omap_depth = bits(w[19], 1, 1) != 0;
            if v4 {
                info.imap_sys_d = bytes_le(s, 0x46, 2) as u16;
                info.does_interlock = bits(w[19], 2, 1) != 0;
                info.uses_underestimate = bits(w[19], 3, 1) != 0;
                info.imap_pervertex = bytes_le(s, 0x54, 16);
            }
        } else {
            info.imap_generic = bytes_le(s, 0x18, 16);
            info.imap_sys_c = bytes_le(s, 0x2a, 2) as u16;
            info.omap_sys_ab = bytes_le(s, 0x32, 4) as u32;
            info.omap_generic = bytes_le(s, 0x36, 16);
            info.omap_sys_c = bytes_le(s, 0x48, 2) as u16;
            info.omap_viewport_mask = bytes_le(s, 0x4f, 1) & 1 != 0;
            if v4 {
                info.imap_sys_d = bytes_le(s, 0x31, 1) as u16;
                info.omap_sys_d = bytes_le(s, 0x4f, 1) as u8;
            }
        }
        Ok(info)
    }

    /// Generic vectors with any input component (bit n = generic n).
    pub fn input_generics(&self) -> u32 {
        vec_mask(self.imap_generic)
    }

    /// Generic vectors with any output component (bit n = generic n).
    pub fn output_generics(&self) -> u32 {
        vec_mask(self.omap_generic)
    }

    /// Pixel: the interpolation of generic `n` (its first read component's mode).
    pub fn interp_of(&self, n: usize) -> Interp {
        (0..4)
            .map(|c| self.imap_interp[(4 * n + c) % 128])
            .find(|&m| m != Interp::Unused)
            .unwrap_or_default()
    }

    /// Number of clip/cull distance slots written (VTG outputs), from system values 32..39.
    pub fn clip_distances_out(&self) -> u32 {
        16 - (self.omap_sys_c & 0xff).leading_zeros().min(16)
    }

    /// Pixel: the written colour targets, in order (bit t of the result = target t written).
    pub fn targets_written(&self) -> u32 {
        (0..8)
            .filter(|t| (self.omap_target >> (4 * t)) & 0xf != 0)
            .fold(0, |m, t| m | 1 << t)
    }
}

fn vec_mask(bits: u128) -> u32 {
    (0..32)
        .filter(|n| (bits >> (4 * n)) & 0xf != 0)
        .fold(0, |m, n| m | 1 << n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sph(words: &[u32]) -> Vec<u8> {
        let mut w = [0u32; 20];
        w[..words.len()].copy_from_slice(words);
        w.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn vertex_maps() {
        // vs_multi_attr_int.vert's header.
        let mut w = [0u32; 20];
        w[0] = 0x00060461;
        w[4] = 0x000ff000;
        w[6] = 0x0010f13f;
        w[13] = 0xf331f000;
        let i = SphInfo::parse(&sph(&w)).unwrap();
        assert_eq!(i.stage, SphStage::Vertex);
        assert_eq!(i.version, 3);
        assert_eq!(i.input_generics(), 0b101111);
        assert_eq!(i.omap_sys_ab >> 28, 0xf);
        assert_eq!(i.output_generics(), 0b1111);
        assert_eq!(i.store_req_start, 0xff);
    }

    #[test]
    fn pixel_maps_and_errors() {
        let mut w = [0u32; 20];
        w[0] = 0x00065462;
        w[6] = 0b10_01; // generic 0: x constant, y perspective
        w[18] = 0xf;
        w[19] = 2;
        let i = SphInfo::parse(&sph(&w)).unwrap();
        assert_eq!(i.stage, SphStage::Fragment);
        assert_eq!(i.imap_interp[0], Interp::Constant);
        assert_eq!(i.imap_interp[1], Interp::Perspective);
        assert_eq!(i.interp_of(0), Interp::Constant);
        assert_eq!(i.targets_written(), 1);
        assert!(i.omap_depth && !i.omap_sample_mask);
        assert!(matches!(
            SphInfo::parse(&sph(&[0x1f])),
            Err(SphError::BadType(_))
        ));
        assert!(matches!(SphInfo::parse(&[0; 8]), Err(SphError::Short(8))));
    }
}
