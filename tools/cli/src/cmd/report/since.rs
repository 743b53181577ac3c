//! What changed between two builds of a title: the keys whose outputs differ (outputs
//! compare without the chain version, `_b_build.json`'s `outputs`), and for each which of its
//! inputs changed (`inputs`: shader, options, tools, translator, profile, facts, partners).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::cmd::build::inputs::InputDigests;
use crate::cmd::build::record::{BuildRecord, KeyRecord};

/// One key whose outputs differ.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Change {
    /// The key.
    pub key: String,
    /// Its stage.
    pub stage: String,
    /// `changed`, `new` (only in this build) or `gone` (only in the earlier one).
    pub kind: String,
    /// The status before and now (`built`, `failed`, …; empty where absent).
    pub before: String,
    /// The status now.
    pub now: String,
    /// The inputs whose digests differ.
    pub inputs: Vec<String>,
}

/// The comparison.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Since {
    /// The earlier build's chain version.
    pub from: String,
    /// This build's chain version.
    pub to: String,
    /// Keys whose outputs or status differ.
    pub changed: Vec<Change>,
    /// Keys with the same outputs and status.
    pub unchanged: usize,
    /// Per input, the keys in both builds whose digest of it differs (outputs changed or not).
    pub inputs_changed: Vec<super::Count>,
}

/// The inputs of `a` and `b` whose digests differ.
fn changed_inputs(a: &KeyRecord, b: &KeyRecord) -> Vec<String> {
    a.inputs
        .fields()
        .iter()
        .zip(b.inputs.fields())
        .filter(|((_, x), (_, y))| x != y)
        .map(|((n, _), _)| n.to_string())
        .collect()
}

/// Compares an earlier build with this one.
pub fn since(before: &BuildRecord, now: &BuildRecord) -> Since {
    let old: BTreeMap<&str, &KeyRecord> =
        before.shaders.iter().map(|r| (r.key.as_str(), r)).collect();
    let new: BTreeMap<&str, &KeyRecord> = now.shaders.iter().map(|r| (r.key.as_str(), r)).collect();
    let mut keys: Vec<&str> = old.keys().chain(new.keys()).copied().collect();
    keys.sort();
    keys.dedup();
    let mut changed = Vec::new();
    let mut unchanged = 0;
    let mut inputs_changed: BTreeMap<String, usize> = BTreeMap::new();
    for (k, a) in &old {
        if let Some(b) = new.get(k) {
            for name in changed_inputs(a, b) {
                *inputs_changed.entry(name).or_default() += 1;
            }
        }
    }
    for k in keys {
        let change = |kind: &str, r: &KeyRecord, before: &str, now: &str, inputs| Change {
            key: k.to_string(),
            stage: r.stage.clone(),
            kind: kind.into(),
            before: before.into(),
            now: now.into(),
            inputs,
        };
        match (old.get(k), new.get(k)) {
            (Some(a), Some(b)) if a.status == b.status && a.outputs == b.outputs => unchanged += 1,
            (Some(a), Some(b)) => changed.push(change(
                "changed",
                b,
                &a.status,
                &b.status,
                changed_inputs(a, b),
            )),
            (None, Some(b)) => changed.push(change("new", b, "", &b.status, vec!["shader".into()])),
            (Some(a), None) => {
                changed.push(change("gone", a, &a.status, "", vec!["shader".into()]))
            }
            (None, None) => {}
        }
    }
    Since {
        from: before.chain.clone(),
        to: now.chain.clone(),
        changed,
        unchanged,
        inputs_changed: InputDigests::names()
            .iter()
            .filter_map(|name| {
                inputs_changed.get(*name).map(|&count| super::Count {
                    name: name.to_string(),
                    count,
                })
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(key: &str, facts: &str, out: &str) -> KeyRecord {
        let mut r = KeyRecord {
            key: key.into(),
            stage: "fragment".into(),
            status: "built".into(),
            ..Default::default()
        };
        r.inputs.facts = facts.into();
        r.outputs.insert(format!("{key}_b.metal"), out.into());
        r
    }

    #[test]
    fn lists_changed_outputs_with_their_inputs() {
        let a = BuildRecord::new(
            "aaaaaaaaaaaa",
            vec![
                rec("k1", "f", "1"),
                rec("k2", "f", "2"),
                rec("k3", "f", "3"),
            ],
        );
        let mut k2 = rec("k2", "g", "2b");
        k2.inputs.translator = "t2".into();
        // k3: an input changed but the outputs did not: unchanged.
        let b = BuildRecord::new(
            "bbbbbbbbbbbb",
            vec![
                rec("k1", "f", "1"),
                k2,
                rec("k3", "h", "3"),
                rec("k4", "f", "4"),
            ],
        );
        let s = since(&a, &b);
        assert_eq!(s.unchanged, 2);
        let counts: Vec<(&str, usize)> = s
            .inputs_changed
            .iter()
            .map(|c| (c.name.as_str(), c.count))
            .collect();
        assert_eq!(counts, [("translator", 1), ("facts", 2)]);
        assert_eq!(s.changed.len(), 2);
        assert_eq!(
            (s.changed[0].key.as_str(), s.changed[0].kind.as_str()),
            ("k2", "changed")
        );
        assert_eq!(s.changed[0].inputs, ["translator", "facts"]);
        assert_eq!(
            (s.changed[1].key.as_str(), s.changed[1].kind.as_str()),
            ("k4", "new")
        );
    }
}
