//! Translation facts keyed by shader key: the split's `shader_facts.tsv` (a header row with a
//! `key` column, what the binaries say) and manual tables (`shader_facts_manual.tsv`: the
//! component types and image formats the binaries lack). See docs/graphics.md.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context};
use dmsh_ir::lift::pipeline_state::tess;
use dmsh_ir::lift::{CompType, Gfx, GsInput, ImageFmt, StateSource};

/// What a manual row declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fact {
    /// Input location n has this component type.
    In(usize, CompType),
    /// Output location n has this component type.
    Out(usize, CompType),
    /// Texture slot n's data has this component type.
    Tex(usize, CompType),
    /// Image slot n has this format.
    Image(usize, ImageFmt),
    /// (C, K): the shader writes C clip distances, then K cull distances (`clip_cull C K`).
    ClipCull(u32, u32),
    /// Geometry: the input primitive (`gs_input PRIMITIVE`).
    GsInput(GsInput),
    /// Tess-eval: domain, spacing and output primitive, packed (`tess DOMAIN SPACING OUTPUT`).
    Tess(u32),
}

/// The facts tables given to one translation.
#[derive(Debug, Default)]
pub struct Facts {
    /// shader_facts.tsv rows: key → column → value.
    split: BTreeMap<String, BTreeMap<String, String>>,
    /// Manual rows: (key, fact).
    manual: Vec<(String, Fact)>,
}

/// A `shader_facts.tsv` number: decimal or 0x hex.
fn num(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// A clip / cull split with C + K ≤ 8 (the hardware's eight distance slots).
fn split_ok(c: u64, k: u64) -> Option<Fact> {
    (c + k <= 8).then_some(Fact::ClipCull(c as u32, k as u32))
}

/// One manual row's fact (the columns after the key).
fn manual_fact(cols: &[&str]) -> anyhow::Result<Fact> {
    let want = match cols.get(1).copied() {
        Some("gs_input") => 3,
        Some("tess") => 5,
        Some(_) => 4,
        None => bail!("expected a kind after the key"),
    };
    if cols.len() != want {
        bail!(
            "expected {want} columns for {} (key kind …), found {}",
            cols[1],
            cols.len()
        );
    }
    let bad = || anyhow::anyhow!("bad type or index");
    let idx = || cols[2].parse::<usize>().map_err(|_| bad());
    let ct = || CompType::parse(cols[3]).ok_or_else(bad);
    Ok(match cols[1] {
        "in" if idx()? < 32 => Fact::In(idx()?, ct()?),
        "out" if idx()? < 32 => Fact::Out(idx()?, ct()?),
        "tex" if idx()? < 32 => Fact::Tex(idx()?, ct()?),
        "image" if idx()? < 8 => Fact::Image(idx()?, ImageFmt::parse(cols[3]).ok_or_else(bad)?),
        "clip_cull" => {
            let k: u64 = cols[3].parse().map_err(|_| bad())?;
            split_ok(idx()? as u64, k).ok_or_else(bad)?
        }
        "gs_input" => Fact::GsInput(gs_input(cols[2])?),
        "tess" => Fact::Tess(tess::parse(cols[2], cols[3], cols[4]).ok_or_else(|| {
            anyhow::anyhow!(
                "tess {} {} {}: expected DOMAIN ({}) SPACING ({}) OUTPUT ({})",
                cols[2],
                cols[3],
                cols[4],
                tess::DOMAINS.join("|"),
                tess::SPACINGS.join("|"),
                tess::OUTPUTS.join("|")
            )
        })?),
        "in" | "out" | "tex" | "image" => return Err(bad()),
        k => bail!("unknown kind {k}"),
    })
}

/// A geometry input primitive by name, with the names in the error.
pub fn gs_input(s: &str) -> anyhow::Result<GsInput> {
    GsInput::parse(s).ok_or_else(|| {
        let names: Vec<&str> = GsInput::ALL.iter().map(|p| p.name()).collect();
        anyhow::anyhow!(
            "input primitive {s:?}: expected one of {}",
            names.join(", ")
        )
    })
}

/// Tessellation parameters `DOMAIN,SPACING,OUTPUT`, with the names in the error.
pub fn tess_list(s: &str) -> anyhow::Result<u32> {
    tess::parse_list(s).ok_or_else(|| {
        anyhow::anyhow!(
            "tess {s:?}: expected DOMAIN,SPACING,OUTPUT with DOMAIN {}, SPACING {}, OUTPUT {}",
            tess::DOMAINS.join("|"),
            tess::SPACINGS.join("|"),
            tess::OUTPUTS.join("|")
        )
    })
}

impl Facts {
    /// Reads one table; the kind is told by its first line (`key<TAB>…`: the split's table,
    /// else the manual format).
    pub fn load(&mut self, path: &Path) -> anyhow::Result<()> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading facts {}", path.display()))?;
        self.add(&text)
            .with_context(|| format!("facts {}", path.display()))
    }

    /// Adds the rows of a table's text.
    pub fn add(&mut self, text: &str) -> anyhow::Result<()> {
        let first = text.lines().next().unwrap_or("");
        if first.split('\t').next() == Some("key") {
            self.add_split(text)
        } else {
            self.add_manual(text)
        }
    }

    fn add_split(&mut self, text: &str) -> anyhow::Result<()> {
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
        for (ln, line) in lines.enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let cols: Vec<&str> = line.split('\t').collect();
            if cols.len() != header.len() {
                bail!(
                    "line {}: {} columns, the header has {}",
                    ln + 2,
                    cols.len(),
                    header.len()
                );
            }
            let row: BTreeMap<String, String> = header
                .iter()
                .zip(&cols)
                .map(|(h, c)| (h.to_string(), c.to_string()))
                .collect();
            self.split.insert(cols[0].to_string(), row);
        }
        Ok(())
    }

    /// The manual format, whitespace-separated, `#` comments, one fact per line:
    /// `KEY in|out|tex|image N TYPE`, `KEY clip_cull C K`, `KEY gs_input PRIMITIVE`,
    /// `KEY tess DOMAIN SPACING OUTPUT`.
    fn add_manual(&mut self, text: &str) -> anyhow::Result<()> {
        for (ln, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let cols: Vec<&str> = line.split_whitespace().collect();
            let fact = manual_fact(&cols).with_context(|| format!("line {}: {line:?}", ln + 1))?;
            self.manual.push((cols[0].to_string(), fact));
        }
        Ok(())
    }

    /// The split table's row for a key.
    pub fn row(&self, key: &str) -> Option<&BTreeMap<String, String>> {
        self.split.get(key)
    }

    /// A numeric column of the split table's row for a key.
    pub fn num(&self, key: &str, col: &str) -> Option<u64> {
        num(self.row(key)?.get(col)?)
    }

    /// Compute: the thread-group size the split table gives (all zero: variable).
    pub fn threads(&self, key: &str) -> Option<[u32; 3]> {
        Some([
            self.num(key, "threads_x")? as u32,
            self.num(key, "threads_y")? as u32,
            self.num(key, "threads_z")? as u32,
        ])
    }

    /// Whether any table has a row for the key.
    pub fn knows(&self, key: &str) -> bool {
        self.split.contains_key(key) || self.manual.iter().any(|(k, _)| k == key)
    }

    /// Applies the manual rows of `key` to a graphics configuration; returns how many applied.
    pub fn apply_gfx(&self, key: &str, g: &mut Gfx) -> usize {
        let mut n = 0;
        for (_, f) in self.manual.iter().filter(|(k, _)| k == key) {
            match *f {
                Fact::In(i, t) => g.inputs[i] = t,
                Fact::Out(i, t) => g.outputs[i] = t,
                Fact::Tex(i, t) => g.textures[i] = t,
                Fact::Image(i, f) => g.images[i] = f,
                Fact::ClipCull(c, k) => g.clip_cull = Some((c, k)),
                Fact::GsInput(p) => g.gs_input = Some(p),
                Fact::Tess(t) => {
                    g.tess_param = t;
                    g.tess_source = StateSource::Given;
                }
            }
            n += 1;
        }
        n
    }

    /// Pipeline state from the split table's optional columns `gs_input` (a primitive name)
    /// and `tess` (`DOMAIN,SPACING,OUTPUT`), applied before the manual rows (which win).
    pub fn apply_split_state(&self, key: &str, g: &mut Gfx) -> anyhow::Result<()> {
        let Some(row) = self.row(key) else {
            return Ok(());
        };
        let ctx = || format!("shader_facts.tsv: key {key}");
        if let Some(p) = row.get("gs_input").filter(|v| !v.is_empty() && *v != "-") {
            g.gs_input = Some(gs_input(p).with_context(ctx)?);
        }
        if let Some(t) = row.get("tess").filter(|v| !v.is_empty() && *v != "-") {
            g.tess_param = tess_list(t).with_context(ctx)?;
            g.tess_source = StateSource::Given;
        }
        Ok(())
    }

    /// The clip / cull distance split of `key`: a manual `clip_cull C K` row, else the split
    /// table's optional `clip_distances` and `cull_distances` columns (both present); None
    /// when no table says. A value outside C + K ≤ 8 is an error naming the key.
    pub fn clip_cull(&self, key: &str) -> anyhow::Result<Option<(u32, u32)>> {
        let manual = self.manual.iter().rev().find_map(|(k, f)| match f {
            Fact::ClipCull(c, n) if k == key => Some((*c, *n)),
            _ => None,
        });
        if manual.is_some() {
            return Ok(manual);
        }
        let Some(row) = self.row(key) else {
            return Ok(None);
        };
        let (Some(c), Some(k)) = (row.get("clip_distances"), row.get("cull_distances")) else {
            return Ok(None);
        };
        match (num(c), num(k)) {
            (Some(c), Some(k)) => match split_ok(c, k) {
                Some(Fact::ClipCull(c, k)) => Ok(Some((c, k))),
                _ => bail!(
                    "shader_facts.tsv: key {key}: clip_distances {c} + cull_distances {k} > 8"
                ),
            },
            _ => bail!("shader_facts.tsv: key {key}: clip_distances / cull_distances not numbers"),
        }
    }

    /// Checks the split table's row against the translation asked for: the stage must agree
    /// and the code's generation must be the instruction set's (`nvn1` Maxwell, `nvn2`
    /// Ampere).
    pub fn check(&self, key: &str, stage: &str, arch: dmsh_ir::lift::Arch) -> anyhow::Result<()> {
        let Some(row) = self.row(key) else {
            return Ok(());
        };
        if let Some(s) = row.get("stage") {
            if s != stage {
                bail!("shader_facts.tsv: key {key} is a {s} shader, not {stage}");
            }
        }
        if let Some(gen) = row.get("gen") {
            let want = match arch {
                dmsh_ir::lift::Arch::Maxwell => "nvn1",
                dmsh_ir::lift::Arch::Ampere => "nvn2",
            };
            if gen != want {
                bail!(
                    "shader_facts.tsv: key {key} is {gen} code ({} translates {want}; give --arch)",
                    arch.name()
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPLIT: &str = "key\tstage\tgen\tlayout\tcontrol_len\tcode_len\tc1_offset\tc1_size\tregs\tthreads_x\tthreads_y\tthreads_z\tshared_bytes\tin_generic\tout_generic\tps_targets\tps_depth\n\
        512986ac7073a672\tcompute\tnvn1\tcompute_header\t0x880\t0x200\t0x1e0\t0x0\t8\t0\t0\t0\t0\t00000000000000000000000000000000\t00000000000000000000000000000000\t0x0\t0\n\
        0123456789abcdef\tcompute\tnvn1\tcompute_header\t0x880\t0x200\t0x1e0\t0x0\t8\t64\t2\t1\t0x100\t00000000000000000000000000000000\t00000000000000000000000000000000\t0x0\t0\n";

    #[test]
    fn split_table_by_key() {
        let mut f = Facts::default();
        f.add(SPLIT).unwrap();
        assert_eq!(f.threads("512986ac7073a672"), Some([0, 0, 0]), "variable");
        assert_eq!(f.threads("ffffffffffffffff"), None);
        assert_eq!(f.threads("0123456789abcdef"), Some([64, 2, 1]));
        assert_eq!(f.num("0123456789abcdef", "shared_bytes"), Some(0x100));
        assert!(f.knows("0123456789abcdef") && !f.knows("ffffffffffffffff"));
        assert!(f.add("key\tstage\nabc\n").is_err(), "short row");
    }

    #[test]
    fn manual_rows_apply_to_their_key() {
        let mut f = Facts::default();
        f.add("# BC4 encoder\n8e2cc2671cae6020 out 0 u\n8e2cc2671cae6020 image 1 r32ui # x\nother in 0 i\n")
            .unwrap();
        let sph = dmsh_isa::sph_info::SphInfo::parse(&{
            let mut w = [0u32; 20];
            w[0] = 0x0006_5462;
            w[18] = 0xf;
            w.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()
        })
        .unwrap();
        let layout = dmsh_ir::lift::BindingLayout::nvn(dmsh_ir::Stage::Fragment, 0x20);
        let mut g = Gfx::new(sph, layout, "k");
        assert_eq!(f.apply_gfx("8e2cc2671cae6020", &mut g), 2);
        assert_eq!(g.outputs[0], CompType::Uint);
        assert_eq!(g.images[1], ImageFmt::R32ui);
        assert_eq!(g.inputs[0], CompType::Float);
        assert!(f.add("k in 32 f\n").is_err(), "location out of range");
        assert!(f.add("k tex 0 q\n").is_err(), "bad type");
        assert!(f.add("k in 0\n").is_err(), "3 columns");
    }

    #[test]
    fn pipeline_state_rows() {
        let sph = dmsh_isa::sph_info::SphInfo::parse(&{
            let mut w = [0u32; 20];
            w[0] = 0x0006_5462;
            w.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()
        })
        .unwrap();
        let layout = dmsh_ir::lift::BindingLayout::nvn(dmsh_ir::Stage::Geometry, 0x20);
        let mut f = Facts::default();
        f.add("key\tstage\tgs_input\ttess\naaaa\tgeometry\tlines\t-\nbbbb\ttess_eval\t-\tquads,equal,cw\n")
            .unwrap();
        f.add("aaaa gs_input triangles_adjacency\ncccc tess isolines fractional_even points\n")
            .unwrap();
        let mut g = Gfx::new(sph.clone(), layout.clone(), "k");
        f.apply_split_state("aaaa", &mut g).unwrap();
        assert_eq!(g.gs_input, Some(GsInput::Lines));
        assert_eq!(f.apply_gfx("aaaa", &mut g), 1, "the manual row wins");
        assert_eq!(g.gs_input, Some(GsInput::TrianglesAdjacency));
        let mut g = Gfx::new(sph.clone(), layout.clone(), "k");
        f.apply_split_state("bbbb", &mut g).unwrap();
        assert_eq!((g.tess_param, g.tess_source), (0x302, StateSource::Given));
        let mut g = Gfx::new(sph, layout, "k");
        assert_eq!(g.tess_source, StateSource::Guessed);
        f.apply_gfx("cccc", &mut g);
        assert_eq!((g.tess_param, g.tess_source), (0x020, StateSource::Given));
        assert!(f.add("k gs_input hexagons\n").is_err());
        assert!(f.add("k gs_input\n").is_err(), "2 columns");
        assert!(f.add("k tess quads equal\n").is_err(), "4 columns");
        let e = f.add("k tess quads odd cw\n").unwrap_err();
        assert!(format!("{e:#}").contains("fractional_odd"), "{e:#}");
        let mut bad = Facts::default();
        bad.add("key\tgs_input\nzz\tcircles\n").unwrap();
        let e = bad.apply_split_state("zz", &mut g).unwrap_err();
        assert!(format!("{e:#}").contains("key zz"), "{e:#}");
    }

    #[test]
    fn clip_cull_from_either_table() {
        let mut f = Facts::default();
        // Old split tables (no distance columns) still parse and say nothing.
        f.add(SPLIT).unwrap();
        assert_eq!(f.clip_cull("0123456789abcdef").unwrap(), None);
        // New optional columns.
        f.add(
            "key\tstage\tclip_distances\tcull_distances\naaaa\tvertex\t4\t1\nbbbb\tvertex\t6\t3\n",
        )
        .unwrap();
        assert_eq!(f.clip_cull("aaaa").unwrap(), Some((4, 1)));
        let e = f.clip_cull("bbbb").unwrap_err().to_string();
        assert!(e.contains("bbbb") && e.contains("> 8"), "{e}");
        // A manual row wins over the split table.
        f.add("aaaa clip_cull 2 2 # vs_clipdist variant\n").unwrap();
        assert_eq!(f.clip_cull("aaaa").unwrap(), Some((2, 2)));
        assert!(f.add("k clip_cull 5 4\n").is_err(), "C + K > 8");
        assert!(f.add("k clip_cull 1 x\n").is_err(), "not a number");
        let sph = dmsh_isa::sph_info::SphInfo::parse(&{
            let mut w = [0u32; 20];
            w[0] = 0x0006_0461;
            w.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()
        })
        .unwrap();
        let layout = dmsh_ir::lift::BindingLayout::deko3d(dmsh_ir::Stage::Vertex);
        let mut g = Gfx::new(sph, layout, "aaaa");
        assert_eq!(f.apply_gfx("aaaa", &mut g), 1);
        assert_eq!(g.clip_cull, Some((2, 2)));
    }
}
