//! What the runtime's integration tests share: the demo title split and built by the `dmsh`
//! binary (`cargo build --release -p dmsh-cli`), and small hand-made titles.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The demo title, split and built: `split/` holds shader_map.tsv, pkg/ and `b-<V>/`.
pub struct Demo {
    /// The split folder (also the library folder: `dmsh demo` builds into it).
    pub split: PathBuf,
    /// The chain version of its `b-<V>/`.
    pub chain: String,
}

impl Demo {
    /// `split/shader_map.tsv`.
    pub fn map(&self) -> PathBuf {
        self.split.join("shader_map.tsv")
    }

    /// `split/b-<V>`.
    pub fn b_dir(&self) -> PathBuf {
        self.split.join(format!("b-{}", self.chain))
    }

    /// The map's keys, as split wrote them.
    pub fn keys(&self) -> Vec<String> {
        let map = std::fs::read_to_string(self.map()).unwrap();
        let mut k: Vec<String> = map
            .lines()
            .skip(1)
            .map(|l| l.split('\t').next().unwrap().to_string())
            .collect();
        k.sort();
        k.dedup();
        k
    }
}

/// The `dmsh` binary: `$DMSH_BIN`, else `dmsh` in this test's target folder.
pub fn dmsh_bin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("DMSH_BIN") {
        return Some(p.into());
    }
    let exe = std::env::current_exe().ok()?;
    let p = exe.parent()?.parent()?.join("dmsh");
    p.is_file().then_some(p)
}

/// The demo title, split and built once per test binary; `None` (with a message) when the
/// `dmsh` binary is not built.
pub fn demo() -> Option<&'static Demo> {
    static D: OnceLock<Option<Demo>> = OnceLock::new();
    D.get_or_init(|| {
        let Some(bin) = dmsh_bin() else {
            println!(
                "SKIP: no dmsh binary next to this test (build it: cargo build --release -p \
                 dmsh-cli, or set DMSH_BIN)"
            );
            return None;
        };
        let exe = std::env::current_exe().unwrap();
        let name = exe.file_name().unwrap().to_string_lossy().into_owned();
        let split = std::env::temp_dir().join(format!("dmsh-rt-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&split);
        let o = Command::new(&bin)
            .args(["demo", "--out"])
            .arg(&split)
            .arg("--title")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../games/demo"))
            .output()
            .expect("dmsh runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let chain = std::fs::read_dir(&split)
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .find_map(|n| n.strip_prefix("b-").map(str::to_string))
            .expect("dmsh demo writes a b-<V> folder");
        Some(Demo { split, chain })
    })
    .as_ref()
}

/// The chain version of the hand-made titles.
pub const V: &str = "0123456789ab";

/// A hand-made title in a fresh folder: `shader_map.tsv` with `rows` (key, stage),
/// `b-<V>/` with `_b_build.json` and `<key>_b.json` for each of `jsons`.
pub fn hand_title(name: &str, rows: &[(&str, &str)], jsons: &[(&str, String)]) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dmsh-rt-hand-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    let b = d.join(format!("b-{V}"));
    std::fs::create_dir_all(&b).unwrap();
    let mut map = String::from("key\tstage\tgen\n");
    for (k, s) in rows {
        map.push_str(&format!("{k}\t{s}\tnvn1\n"));
    }
    std::fs::write(d.join("shader_map.tsv"), map).unwrap();
    std::fs::write(b.join("_b_build.json"), format!("{{\"chain\": \"{V}\"}}")).unwrap();
    for (k, j) in jsons {
        std::fs::write(b.join(format!("{k}_b.json")), j).unwrap();
    }
    d
}

/// A small vertex shader's build record for chain `chain` and schema `version`.
pub fn vertex_json(chain: &str, version: u32) -> String {
    format!(
        r#"{{"version": {version}, "stage": "vertex", "chain": "{chain}",
  "metal_entry_points": ["main0", "main0_z"], "metal_entry_z": "main0_z",
  "metal": {{"buffers": 2, "textures": 1, "samplers": 1, "fits": true}}, "metal_direct": true,
  "resources": [
    {{"kind": "cbuf", "bank": 0, "guest_offset": 0, "size": 512, "binding": 0, "metal_index": 0,
      "reads": [[0, 64], [256, 272]], "reads_dynamic": true}},
    {{"kind": "sbuf_ubo", "bank": 1, "guest_offset": 56, "ubo": 1, "offset": 56,
      "binding": 17486, "metal_index": 1}},
    {{"kind": "texture", "bank": 2, "binding": 66, "metal_index": 0, "metal_sampler": 0}}
  ],
  "inputs": [{{"location": 0, "component_type": "float"}}, {{"location": 3, "component_type": "uint"}}],
  "outputs": [{{"location": 0, "component_type": "float"}}]}}"#
    )
}

/// Opens `dir` (map, `b-<V>` beneath it) with chain `V`.
pub fn open(dir: &Path) -> Result<dmsh_runtime::Title, dmsh_runtime::Error> {
    dmsh_runtime::Title::open(&dmsh_runtime::OpenOptions {
        shader_map: dir.join("shader_map.tsv"),
        library_dir: dir.to_path_buf(),
        chain: Some(V.into()),
        ..Default::default()
    })
}
