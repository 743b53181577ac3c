//! The SPH system-value maps by name: index n < 32 is bit n of the A/B word
//! (`imap_sys_ab` / `omap_sys_ab`), 32..47 is bit n − 32 of the C half-word (`*_sys_c`).
//! Names are NVIDIA's (`cla097sph.h` / `clc797sph.h`) without the `IMAP_` / `OMAP_` prefix;
//! the positions are the same in versions 3 and 4.

use super::info::SphInfo;

/// The named system values: (index, name).
pub const SYSTEM_VALUES: &[(u32, &str)] = &[
    (24, "PRIMITIVE_ID"),
    (25, "RT_ARRAY_INDEX"),
    (26, "VIEWPORT_INDEX"),
    (27, "POINT_SIZE"),
    (28, "POSITION_X"),
    (29, "POSITION_Y"),
    (30, "POSITION_Z"),
    (31, "POSITION_W"),
    (32, "CLIP_DISTANCE0"),
    (33, "CLIP_DISTANCE1"),
    (34, "CLIP_DISTANCE2"),
    (35, "CLIP_DISTANCE3"),
    (36, "CLIP_DISTANCE4"),
    (37, "CLIP_DISTANCE5"),
    (38, "CLIP_DISTANCE6"),
    (39, "CLIP_DISTANCE7"),
    (40, "POINT_SPRITE_S"),
    (41, "POINT_SPRITE_T"),
    (42, "FOG_COORDINATE"),
    (44, "TESSELLATION_EVALUATION_POINT_U"),
    (45, "TESSELLATION_EVALUATION_POINT_V"),
    (46, "INSTANCE_ID"),
    (47, "VERTEX_ID"),
];

/// The index of system value `name` (no prefix), if it is in [`SYSTEM_VALUES`].
pub fn index_of(name: &str) -> Option<u32> {
    SYSTEM_VALUES
        .iter()
        .find(|(_, n)| *n == name)
        .map(|&(i, _)| i)
}

fn bit(ab: u32, c: u16, n: u32) -> bool {
    match n {
        0..=31 => ab >> n & 1 != 0,
        32..=47 => c >> (n - 32) & 1 != 0,
        _ => false,
    }
}

impl SphInfo {
    /// Whether input system value `n` is read.
    pub fn imap_sysval(&self, n: u32) -> bool {
        bit(self.imap_sys_ab, self.imap_sys_c, n)
    }

    /// Whether output system value `n` is written (VTG).
    pub fn omap_sysval(&self, n: u32) -> bool {
        bit(self.omap_sys_ab, self.omap_sys_c, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_in_range() {
        for (k, &(i, n)) in SYSTEM_VALUES.iter().enumerate() {
            assert!(i < 48, "{n}");
            assert_eq!(index_of(n), Some(i));
            assert!(
                SYSTEM_VALUES[..k].iter().all(|&(j, _)| j < i),
                "{n} out of order"
            );
        }
    }
}
