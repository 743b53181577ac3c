//! Per-title profiles (`games/<title-id>/profile.toml`): the keys the seeds name, typed.
//!
//! Every key is optional in the file; a missing key takes the default below (Super Mario
//! Odyssey's layout for the `nvn_*` binding constants, every switch off). Keys this struct
//! does not know are kept in `other` and reported, so a typo does not pass silently.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// A title's profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Profile {
    /// Title name, for people.
    pub title: String,
    /// Base game's title ID (16 hex digits), the folder name under `games/`.
    pub title_id: String,
    /// Engine / SDK notes, for people.
    pub engine: String,
    /// NVN generation of the title's shaders: 1 (Switch) or 2 (Switch 2, NVN2).
    pub nvn: u32,
    /// Bound texture handle table: byte offset in c2 of slot 0 (handle at base + 8 × slot).
    pub nvn_tex_base: u32,
    /// Number of bound texture slots.
    pub nvn_tex_slots: u32,
    /// Separate sampler table: byte offset in c2 of slot 0.
    pub nvn_samp_base: u32,
    /// Image handle table: byte offset in c2 of slot 0.
    pub nvn_img_base: u32,
    /// Separate texture table used together with the combined one (Monster Hunter Rise); 0 = none.
    pub nvn_septex_base: u32,
    /// Number of separate texture slots (replay slots 128 + n).
    pub nvn_septex_slots: u32,
    /// Read GLSLC outputs (magic 0x19866891) in `main`.
    pub shader_main_glslc: bool,
    /// Vertex and pixel shaders combine per draw: pair every vertex shader with the cover of
    /// pixel-shader inputs (seed 000, 13 Sentinels).
    pub shader_separable: bool,
    /// Unreal shaders are Oodle-compressed (the seed's host ran the game's decoder); `dmsh split`
    /// decodes them itself whatever this says, so the key only documents the title.
    pub shader_ue_decode: bool,
    /// Shaders that pick a texture slot at run time bind through arrays (Octopath Traveler 0).
    pub tex_dyn_slots: bool,
    /// Fragment shaders that sample their own render target get a snapshot first.
    pub feedback_snap: Vec<String>,
    /// Fragment shaders whose single-channel targets are read with alpha = red.
    pub alpha_from_red: Vec<String>,
    /// Hand-written facts table (path relative to the profile folder), "" = none.
    pub shader_facts_manual: String,
    /// What timestamp reports record: "" (default: submission), "segment" or "submission".
    pub gpu_timestamps: String,
    /// Evaluate conditional rendering at replay.
    pub render_cond: bool,
    /// Textures written by the CPU without a flush are detected by write protection.
    pub tex_dirty_upload: bool,
    /// Textures published with nvnMemoryPoolFlushMappedRange are re-uploaded.
    pub tex_flush_upload: bool,
    /// Present through a snapshot (non-blocking present).
    pub present_snap: bool,
    /// Keys this struct does not know.
    #[serde(flatten)]
    pub other: BTreeMap<String, toml::Value>,
}

impl Default for Profile {
    fn default() -> Self {
        Profile {
            title: String::new(),
            title_id: String::new(),
            engine: String::new(),
            nvn: 1,
            nvn_tex_base: 0x20,
            nvn_tex_slots: 32,
            nvn_samp_base: 0x568,
            nvn_img_base: 0x120,
            nvn_septex_base: 0,
            nvn_septex_slots: 0,
            shader_main_glslc: false,
            shader_separable: false,
            shader_ue_decode: false,
            tex_dyn_slots: false,
            feedback_snap: Vec::new(),
            alpha_from_red: Vec::new(),
            shader_facts_manual: String::new(),
            gpu_timestamps: String::new(),
            render_cond: false,
            tex_dirty_upload: false,
            tex_flush_upload: false,
            present_snap: false,
            other: BTreeMap::new(),
        }
    }
}

/// A profile that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// File path.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// The file is not valid TOML for a profile.
    #[error("{path}: {source}")]
    Toml {
        /// File path.
        path: String,
        /// Cause.
        source: toml::de::Error,
    },
}

impl Profile {
    /// Parses profile TOML text.
    pub fn parse(text: &str) -> Result<Profile, toml::de::Error> {
        toml::from_str(text)
    }

    /// Loads `<dir>/profile.toml` (or `dir` itself when it names a file).
    pub fn load(dir: &Path) -> Result<Profile, ProfileError> {
        let path = if dir.is_dir() {
            dir.join("profile.toml")
        } else {
            dir.to_path_buf()
        };
        let p = path.display().to_string();
        let text = std::fs::read_to_string(&path).map_err(|source| ProfileError::Io {
            path: p.clone(),
            source,
        })?;
        Profile::parse(&text).map_err(|source| ProfileError::Toml { path: p, source })
    }

    /// Keys in the file this struct does not know.
    pub fn unknown_keys(&self) -> Vec<&str> {
        self.other.keys().map(|k| k.as_str()).collect()
    }
}
