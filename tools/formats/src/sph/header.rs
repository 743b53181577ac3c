//! The Shader Program Header (SPH) in front of graphics code: version 3 (Maxwell, 20 words,
//! 0x50 bytes) or version 4 (SM75+ / Ampere, 32 words, 0x80 bytes; words 0..19 keep the v3
//! positions, words 20..31 add the per-vertex map).

use std::fmt::Write;

/// A decoded SPH (the common words; the attribute maps are kept raw).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sph {
    /// The raw words: 20 for version 3, 32 for version 4 (words 20..31 are 0 in v3).
    pub words: [u32; 32],
}

/// Size of a version 3 SPH in bytes (Maxwell: every NVN / deko3d program).
pub const SPH_SIZE: usize = 0x50;

/// Size of a version 4 SPH in bytes (SM75+: NVN2 / NAK sm86 programs).
pub const SPH_V4_SIZE: usize = 0x80;

/// Bits `lo..lo+len` of `w`.
pub(crate) fn bits(w: u32, lo: u32, len: u32) -> u32 {
    (w >> lo) & ((1u64 << len) - 1) as u32
}

/// The common bit fields `describe` prints after the shader type, in order: (name, word,
/// low bit, width, printed in hex).
const FIELDS: &[(&str, usize, u32, u32, bool)] = &[
    ("mrt_enable", 0, 14, 1, false),
    ("kills_pixels", 0, 15, 1, false),
    ("does_global_store", 0, 16, 1, false),
    ("sass_version", 0, 17, 4, false),
    ("does_load_or_store", 0, 26, 1, false),
    ("does_fp64", 0, 27, 1, false),
    ("stream_out_mask", 0, 28, 4, true),
    ("shader_local_memory_low_size", 1, 0, 24, true),
    ("per_patch_attribute_count", 1, 24, 8, false),
    ("shader_local_memory_high_size", 2, 0, 24, true),
    ("threads_per_input_primitive", 2, 24, 8, false),
    ("shader_local_memory_crs_size", 3, 0, 24, true),
    ("output_topology", 3, 24, 4, false),
    ("max_output_vertex_count", 4, 0, 12, false),
    ("store_req_start", 4, 12, 8, true),
    ("store_req_end", 4, 24, 8, true),
];

impl Sph {
    /// Reads an SPH: 0x50 bytes, or 0x80 when the version field (word 0 bits 5..9) says 4;
    /// `None` if too short.
    pub fn parse(b: &[u8]) -> Option<Sph> {
        let word = |i: usize| {
            Some(u32::from_le_bytes(
                b.get(i * 4..i * 4 + 4)?.try_into().ok()?,
            ))
        };
        let n = if bits(word(0)?, 5, 5) == 4 {
            SPH_V4_SIZE
        } else {
            SPH_SIZE
        };
        b.get(..n)?;
        let mut words = [0u32; 32];
        for (i, w) in words.iter_mut().enumerate().take(n / 4) {
            *w = word(i)?;
        }
        Some(Sph { words })
    }

    /// The version field (word 0 bits 5..9): 3 Maxwell, 4 SM75+.
    pub fn version(&self) -> u32 {
        bits(self.words[0], 5, 5)
    }

    /// Bytes this SPH occupies in front of the code (0x80 for version 4, else 0x50).
    pub fn size(&self) -> usize {
        if self.version() == 4 {
            SPH_V4_SIZE
        } else {
            SPH_SIZE
        }
    }

    /// Whether word 0 looks like an SPH: type 1 (VTG) or 2 (PS), a known shader type that
    /// agrees with it, and a small version.
    pub fn plausible(&self) -> bool {
        let w = self.words[0];
        let t = bits(w, 0, 5);
        let st = bits(w, 10, 4);
        (t == 1 && (1..=4).contains(&st) || t == 2 && st == 5) && (1..=4).contains(&bits(w, 5, 5))
    }

    /// `sph_type`: 1 = VTG, 2 = pixel.
    pub fn sph_type(&self) -> u32 {
        bits(self.words[0], 0, 5)
    }

    /// `shader_type`: 1 vertex, 2 tess-control, 3 tess-eval, 4 geometry, 5 pixel.
    pub fn shader_type(&self) -> u32 {
        bits(self.words[0], 10, 4)
    }

    /// The named fields, one `name = value` per line, for listings.
    pub fn describe(&self) -> String {
        let w = &self.words;
        let mut s = String::new();
        let st = [
            "?",
            "VERTEX",
            "TESSELLATION_INIT",
            "TESSELLATION",
            "GEOMETRY",
            "PIXEL",
        ];
        let v4 = self.version() == 4;
        let mut line = |k: &str, v: String| {
            let _ = writeln!(s, "{k} = {v}");
        };
        line("sph_type", format!("{}", bits(w[0], 0, 5)));
        line("version", format!("{}", bits(w[0], 5, 5)));
        line(
            "shader_type",
            format!(
                "{} ({})",
                bits(w[0], 10, 4),
                st.get(bits(w[0], 10, 4) as usize).unwrap_or(&"?")
            ),
        );
        for &(name, word, lo, len, hex) in FIELDS {
            let v = bits(w[word], lo, len);
            line(
                name,
                if hex {
                    format!("{v:#x}")
                } else {
                    v.to_string()
                },
            );
        }
        line("imap_system_values_a_b", format!("{:#010x}", w[5]));
        if self.sph_type() == 2 {
            let imap: Vec<String> = w[6..14].iter().map(|x| format!("{x:08x}")).collect();
            line("imap_generic_vector", imap.join(" "));
            line("imap_color_and_system_values_c", format!("{:#010x}", w[14]));
            line(
                "imap_fixed_fnc_texture",
                format!("{:08x} {:08x}", w[15], w[16]),
            );
            line("imap_reserved", format!("{:#010x}", w[17]));
            line("omap_target", format!("{:#010x}", w[18]));
            line("omap_sample_mask", format!("{}", bits(w[19], 0, 1)));
            line("omap_depth", format!("{}", bits(w[19], 1, 1)));
            if v4 {
                line("imap_system_values_d", format!("{:#06x}", w[17] >> 16));
                line("does_interlock", format!("{}", bits(w[19], 2, 1)));
                line("uses_underestimate", format!("{}", bits(w[19], 3, 1)));
            }
        } else {
            let imap: Vec<String> = w[6..10].iter().map(|x| format!("{x:08x}")).collect();
            line("imap_generic_vector", imap.join(" "));
            line("imap_color_and_system_values_c", format!("{:#010x}", w[10]));
            line(
                "imap_fixed_fnc_texture",
                format!("{:08x} {:08x}", w[11], w[12] & 0xffff),
            );
            line(
                "omap_system_values_a_b",
                format!("{:#010x}", (w[12] >> 16) | (w[13] << 16)),
            );
            let omap: Vec<String> = (0..4)
                .map(|i| {
                    let lo = w[13 + i] >> 16;
                    let hi = w[14 + i] & 0xffff;
                    format!("{:08x}", lo | hi << 16)
                })
                .collect();
            line("omap_generic_vector", omap.join(" "));
            line(
                "omap_color_and_system_values_c",
                format!("{:#010x}", (w[17] >> 16) | (w[18] << 16)),
            );
            line(
                "omap_fixed_fnc_texture",
                format!(
                    "{:#010x} {:#06x}",
                    (w[18] >> 16) | (w[19] << 16),
                    w[19] >> 16
                ),
            );
            if v4 {
                line(
                    "imap_system_values_d",
                    format!("{:#04x}", w[12] >> 8 & 0xff),
                );
                line("omap_system_values_d", format!("{:#04x}", w[19] >> 24));
            }
        }
        if v4 {
            let ext: Vec<String> = w[20..].iter().map(|x| format!("{x:08x}")).collect();
            line("v4_words_20_31", ext.join(" "));
        }
        s
    }
}
