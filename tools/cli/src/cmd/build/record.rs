//! `_b_build.json`: the chain version, the counts and one record per key, in key order: its
//! outcome (built, or the failing step and its message), the digest of each of its inputs
//! and of each of its outputs. Written by `dmsh build`, read by `dmsh report`.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::inputs::InputDigests;

/// One key's record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct KeyRecord {
    /// The shader key.
    pub key: String,
    /// Its stage.
    pub stage: String,
    /// `built`, `failed` or `unsupported`.
    pub status: String,
    /// The failing step (`translate`, `msl`, `bindings`, `write`); absent when built.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub step: String,
    /// What failed; absent when built.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The key's cache entry (the digest of all of its inputs).
    pub cache_key: String,
    /// Each input's digest.
    pub inputs: InputDigests,
    /// Each output file (in `b-<V>/`) with the sha256 of its bytes as the cache stores them
    /// (a reflection without its chain version, so outputs compare across versions).
    pub outputs: BTreeMap<String, String>,
}

impl KeyRecord {
    /// This record with a cache entry's outcome and outputs.
    pub fn with(mut self, e: super::cache::Entry) -> Self {
        self.status = e.status;
        self.step = e.step;
        self.message = e.message;
        self.outputs = e.files;
        self
    }
}

/// The whole `_b_build.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct BuildRecord {
    /// The chain version V.
    pub chain: String,
    /// The MSL version.
    pub msl: String,
    /// The converter (SPIRV-Cross).
    pub converter: String,
    /// Keys built.
    pub built: usize,
    /// Keys failed.
    pub failed: usize,
    /// Keys not translatable yet (NVN2).
    pub unsupported: usize,
    /// One record per key, in key order.
    pub shaders: Vec<KeyRecord>,
}

impl BuildRecord {
    /// The record of a build of chain `v` with these key records (sorted here).
    pub fn new(v: &str, mut shaders: Vec<KeyRecord>) -> Self {
        shaders.sort_by(|a, b| a.key.cmp(&b.key));
        let count = |s: &str| shaders.iter().filter(|o| o.status == s).count();
        BuildRecord {
            chain: v.to_string(),
            msl: format!("{}.{}", dmsh_msl::MSL_VERSION.0, dmsh_msl::MSL_VERSION.1),
            converter: dmsh_msl::SPIRV_CROSS.to_string(),
            built: count("built"),
            failed: count("failed"),
            unsupported: count("unsupported"),
            shaders,
        }
    }

    /// The JSON text (pretty, one trailing newline).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("serialises") + "\n"
    }

    /// Reads a `b-<V>/_b_build.json`.
    pub fn read(path: &Path) -> anyhow::Result<Self> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_carry_their_step_and_builds_do_not() {
        let o = |key: &str, status: &str, step: &str, msg: &str| KeyRecord {
            key: key.into(),
            stage: "vertex".into(),
            status: status.into(),
            step: step.into(),
            message: msg.into(),
            ..Default::default()
        };
        let r = BuildRecord::new(
            "0123456789ab",
            vec![
                o("bb", "failed", "msl", "no geometry stage"),
                o("aa", "built", "", ""),
            ],
        );
        let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(
            (v["built"].as_u64(), v["failed"].as_u64()),
            (Some(1), Some(1))
        );
        assert_eq!(v["shaders"][1]["step"], "msl");
        assert!(v["shaders"][0].get("step").is_none());
        let back: BuildRecord = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(back, r);
    }
}
