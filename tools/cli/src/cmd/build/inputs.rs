//! What a key's outputs depend on, as digests (docs/build.md, "The cache"): the shader's
//! bytes, the options, the tools, the translator's own sources, the profile rows that affect
//! translation, the key's facts rows and its partners. Their combination is the key's cache
//! entry ([`InputDigests::cache_key`]); `_b_build.json` records each one, so `dmsh report
//! --since` can say which input of a key changed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::cmd::chain::{self, ChainParts};
use crate::cmd::title::MapRow;

/// Hex of the sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The digests of one key's inputs, as `_b_build.json` records them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct InputDigests {
    /// The key, its stage and generation and its control section and code area (`pkg/`).
    pub shader: String,
    /// The build options (FMA mode, platform, MSL version).
    pub options: String,
    /// The tool fingerprints (SPIRV-Cross's revision; xcrun's version when present).
    pub tools: String,
    /// The translator's own sources (embedded when dmsh is built).
    pub translator: String,
    /// The profile rows that affect translation ([`is_translation_row`]).
    pub profile: String,
    /// The key's rows of shader_facts.tsv (with its header) and of the manual facts.
    pub facts: String,
    /// The key's partners in shader_pairs.tsv, each with the digest of its facts rows.
    pub partners: String,
}

impl InputDigests {
    /// Each input by name, in a fixed order.
    pub fn fields(&self) -> [(&'static str, &str); 7] {
        [
            ("shader", &self.shader),
            ("options", &self.options),
            ("tools", &self.tools),
            ("translator", &self.translator),
            ("profile", &self.profile),
            ("facts", &self.facts),
            ("partners", &self.partners),
        ]
    }

    /// The inputs' names, in the order of [`InputDigests::fields`].
    pub fn names() -> [&'static str; 7] {
        Self::default().fields().map(|(n, _)| n)
    }

    /// The key's cache entry: a digest of all of its inputs.
    pub fn cache_key(&self) -> String {
        let mut text = String::from("dmsh-build-cache 1\n");
        for (name, d) in self.fields() {
            text.push_str(&format!("{name}={d}\n"));
        }
        sha256_hex(text.as_bytes())
    }
}

/// Whether a profile.toml row affects translation: the `nvn_*` binding layout, the
/// `shader_*` rows (the manual facts path among them) and `tex_dyn_slots` (the seed's rule).
pub fn is_translation_row(name: &str) -> bool {
    name.starts_with("nvn") || name.starts_with("shader_") || name == "tex_dyn_slots"
}

/// The digest of a profile's translation rows, one `name = value` line each, sorted by
/// name; `none` without a title folder.
fn profile_digest(game: Option<&Path>) -> anyhow::Result<String> {
    let Some(g) = game else {
        return Ok("none".into());
    };
    let path = g.join("profile.toml");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let table: toml::Table = text
        .parse()
        .with_context(|| format!("parsing {}", path.display()))?;
    let rows: BTreeMap<&String, String> = table
        .iter()
        .filter(|(k, _)| is_translation_row(k))
        .map(|(k, v)| (k, v.to_string()))
        .collect();
    let text: String = rows.iter().map(|(k, v)| format!("{k} = {v}\n")).collect();
    Ok(sha256_hex(text.as_bytes()))
}

/// The lines of the split's facts table per key (each prefixed by the header) and of the
/// manual facts per key (comments stripped, columns single-spaced), by key.
fn facts_rows(
    split: Option<&Path>,
    manual: Option<&Path>,
) -> anyhow::Result<BTreeMap<String, String>> {
    let mut rows: BTreeMap<String, String> = BTreeMap::new();
    if let Some(path) = split
        .map(|s| s.join("shader_facts.tsv"))
        .filter(|p| p.is_file())
    {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let mut lines = text.lines();
        let header = lines.next().unwrap_or("");
        for line in lines.filter(|l| !l.trim().is_empty()) {
            let key = line.split('\t').next().unwrap_or("");
            rows.entry(key.to_string())
                .or_insert_with(|| format!("{header}\n"))
                .push_str(&format!("{line}\n"));
        }
    }
    if let Some(m) = manual {
        let text =
            std::fs::read_to_string(m).with_context(|| format!("reading {}", m.display()))?;
        for line in text.lines() {
            let cols: Vec<&str> = line
                .split('#')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .collect();
            if let Some(key) = cols.first() {
                rows.entry(key.to_string())
                    .or_default()
                    .push_str(&format!("manual {}\n", cols.join(" ")));
            }
        }
    }
    Ok(rows)
}

/// shader_pairs.tsv's partners per key (both directions) and the table's digest (`none`
/// when the split has no table).
fn pairs(split: &Path) -> anyhow::Result<(BTreeMap<String, BTreeSet<String>>, String)> {
    let path = split.join("shader_pairs.tsv");
    let mut partners: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    if !path.is_file() {
        return Ok((partners, "none".into()));
    }
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    for line in text.lines().skip(1) {
        let mut c = line.split('\t');
        if let (Some(v), Some(f)) = (c.next(), c.next()) {
            partners
                .entry(v.to_string())
                .or_default()
                .insert(f.to_string());
            partners
                .entry(f.to_string())
                .or_default()
                .insert(v.to_string());
        }
    }
    Ok((partners, sha256_hex(text.as_bytes())))
}

/// What every key of one build shares, read once, and the per-key tables.
pub struct TitleInputs {
    /// The translator's sources.
    pub translator: String,
    /// The options' digest.
    pub options: String,
    /// The tool fingerprints, `name<TAB>fingerprint` each (docs/build.md, `dmsh chain`).
    pub tools: Vec<(String, String)>,
    /// The profile rows' digest.
    pub profile: String,
    /// The pairs table's digest.
    pub pairs_table: String,
    facts: BTreeMap<String, String>,
    partners: BTreeMap<String, BTreeSet<String>>,
}

impl TitleInputs {
    /// Reads the split's facts and pairs tables (none without a split), the title's profile
    /// and manual facts (`game`), and fingerprints the tools.
    pub fn load(
        split: Option<&Path>,
        game: Option<&Path>,
        manual: Option<&Path>,
        opts: &dmsh_msl::MslOptions,
    ) -> anyhow::Result<Self> {
        let (partners, pairs_table) = match split {
            Some(s) => pairs(s)?,
            None => (BTreeMap::new(), "none".into()),
        };
        Ok(TitleInputs {
            translator: env!("DMSH_SOURCES_SHA256").to_string(),
            options: sha256_hex(options_text(opts).as_bytes()),
            tools: chain::tools(),
            profile: profile_digest(game)?,
            pairs_table,
            facts: facts_rows(split, manual)?,
            partners,
        })
    }

    /// What the chain version hashes.
    pub fn chain_parts(&self) -> ChainParts {
        ChainParts {
            translator: self.translator.clone(),
            options: self.options.clone(),
            tools: chain::tools_text(&self.tools),
            profile: self.profile.clone(),
            pairs: self.pairs_table.clone(),
        }
    }

    /// The keys shader_pairs.tsv pairs with `key` (a vertex shader's fragment shaders).
    pub fn partners_of(&self, key: &str) -> impl Iterator<Item = &String> {
        self.partners.get(key).into_iter().flatten()
    }

    fn facts_digest(&self, key: &str) -> String {
        sha256_hex(self.facts.get(key).map_or("", |s| s.as_str()).as_bytes())
    }

    /// One key's input digests; its control section and code area are read from `split/pkg`.
    pub fn digests(&self, split: &Path, r: &MapRow) -> InputDigests {
        let pkg = split.join("pkg");
        let mut shader = format!("{}\t{}\t{}\n", r.key, r.stage, r.gen).into_bytes();
        for ext in ["control", "code"] {
            match std::fs::read(pkg.join(format!("{}.{ext}", r.key))) {
                Ok(b) => {
                    shader.extend(format!("{ext} {}\n", b.len()).as_bytes());
                    shader.extend(b);
                }
                // The conversion reports the missing file; the digest only has to differ.
                Err(_) => shader.extend(format!("{ext} missing\n").as_bytes()),
            }
        }
        self.with_shader(&r.key, &shader)
    }

    /// The input digests of a capture folder's Vulkan module: its key, stage and bytes (no
    /// facts or partners).
    pub fn module_digests(&self, key: &str, stage: &str, bytes: &[u8]) -> InputDigests {
        let mut shader = format!("{key}\t{stage}\tspirv\n").into_bytes();
        shader.extend(bytes);
        self.with_shader(key, &shader)
    }

    /// Key `key`'s digests with `shader` the bytes of its shader input.
    fn with_shader(&self, key: &str, shader: &[u8]) -> InputDigests {
        let partners: String = self
            .partners
            .get(key)
            .into_iter()
            .flatten()
            .map(|p| format!("{p} {}\n", self.facts_digest(p)))
            .collect();
        InputDigests {
            shader: sha256_hex(shader),
            options: self.options.clone(),
            tools: sha256_hex(chain::tools_text(&self.tools).as_bytes()),
            translator: self.translator.clone(),
            profile: self.profile.clone(),
            facts: self.facts_digest(key),
            partners: sha256_hex(partners.as_bytes()),
        }
    }
}

/// The options as the digests see them: the FMA and f64 modes, the platform and the MSL
/// version.
pub fn options_text(opts: &dmsh_msl::MslOptions) -> String {
    format!(
        "fma=native\nf64=soft\nplatform={}\nmsl={}.{}\n",
        opts.platform.name(),
        dmsh_msl::MSL_VERSION.0,
        dmsh_msl::MSL_VERSION.1
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_input_moves_the_cache_key() {
        let base = InputDigests {
            shader: "s".into(),
            options: "o".into(),
            tools: "t".into(),
            translator: "x".into(),
            profile: "p".into(),
            facts: "f".into(),
            partners: "q".into(),
        };
        assert_eq!(base.cache_key(), base.clone().cache_key());
        for i in 0..7 {
            let mut d = base.clone();
            let field = match i {
                0 => &mut d.shader,
                1 => &mut d.options,
                2 => &mut d.tools,
                3 => &mut d.translator,
                4 => &mut d.profile,
                5 => &mut d.facts,
                _ => &mut d.partners,
            };
            field.push('!');
            assert_ne!(d.cache_key(), base.cache_key(), "field {i}");
        }
    }

    #[test]
    fn partners_carry_their_facts() {
        let d = std::env::temp_dir().join(format!("dmsh-inputs-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("shader_pairs.tsv"), "vertex\tfragment\naa\tbb\n").unwrap();
        std::fs::write(
            d.join("shader_facts.tsv"),
            "key\tstage\naa\tvertex\nbb\tfragment\ncc\tcompute\n",
        )
        .unwrap();
        let opts = dmsh_msl::MslOptions::default();
        let row = |k: &str| MapRow {
            key: k.into(),
            stage: "vertex".into(),
            gen: "nvn1".into(),
            container: "bnsh".into(),
        };
        let t1 = TitleInputs::load(Some(&d), None, None, &opts).unwrap();
        std::fs::write(
            d.join("shader_facts.tsv"),
            "key\tstage\naa\tvertex\nbb\tfragment2\ncc\tcompute\n",
        )
        .unwrap();
        let t2 = TitleInputs::load(Some(&d), None, None, &opts).unwrap();
        let (a1, a2) = (t1.digests(&d, &row("aa")), t2.digests(&d, &row("aa")));
        assert_eq!(a1.facts, a2.facts);
        assert_ne!(a1.partners, a2.partners, "a partner's facts row changed");
        let (b1, b2) = (t1.digests(&d, &row("bb")), t2.digests(&d, &row("bb")));
        assert_ne!(b1.facts, b2.facts);
        assert_eq!(t1.digests(&d, &row("cc")), t2.digests(&d, &row("cc")));
        let _ = std::fs::remove_dir_all(&d);
    }
}
