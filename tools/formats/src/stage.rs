//! Shader stages and their names in the tables.

use std::fmt;

/// A pipeline stage, named as the tables write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// Vertex shader.
    Vertex,
    /// Tessellation control (hull) shader.
    TessControl,
    /// Tessellation evaluation (domain) shader.
    TessEval,
    /// Geometry shader.
    Geometry,
    /// Fragment (pixel) shader.
    Fragment,
    /// Compute shader.
    Compute,
}

impl Stage {
    /// All stages, in BNSH stage-pointer order (vs, hs, ds, gs, ps, cs).
    pub const ALL: [Stage; 6] = [
        Stage::Vertex,
        Stage::TessControl,
        Stage::TessEval,
        Stage::Geometry,
        Stage::Fragment,
        Stage::Compute,
    ];

    /// The name in shader_map.tsv.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Vertex => "vertex",
            Stage::TessControl => "tess_control",
            Stage::TessEval => "tess_eval",
            Stage::Geometry => "geometry",
            Stage::Fragment => "fragment",
            Stage::Compute => "compute",
        }
    }

    /// The same name (the reflection's `stage`).
    pub fn name(self) -> &'static str {
        self.as_str()
    }

    /// Parses [`Stage::as_str`].
    pub fn parse(s: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// From the SPH shader type (bits 10–13 of SPH word 0): 1 vertex … 5 pixel.
    pub fn from_sph_type(t: u32) -> Option<Stage> {
        match t {
            1 => Some(Stage::Vertex),
            2 => Some(Stage::TessControl),
            3 => Some(Stage::TessEval),
            4 => Some(Stage::Geometry),
            5 => Some(Stage::Fragment),
            _ => None,
        }
    }

    /// From NVN's stage numbering (control +0x714, Unity headers): 0 vertex, 1 fragment,
    /// 2 geometry, 3 tess control, 4 tess eval, 5 compute.
    pub fn from_nvn(n: u32) -> Option<Stage> {
        match n {
            0 => Some(Stage::Vertex),
            1 => Some(Stage::Fragment),
            2 => Some(Stage::Geometry),
            3 => Some(Stage::TessControl),
            4 => Some(Stage::TessEval),
            5 => Some(Stage::Compute),
            _ => None,
        }
    }

    /// NVN's number for this stage (inverse of `from_nvn`).
    pub fn nvn(self) -> u32 {
        match self {
            Stage::Vertex => 0,
            Stage::Fragment => 1,
            Stage::Geometry => 2,
            Stage::TessControl => 3,
            Stage::TessEval => 4,
            Stage::Compute => 5,
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
