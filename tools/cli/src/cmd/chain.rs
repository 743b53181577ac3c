//! `dmsh chain`: the chain version V (docs/build.md, "The chain version"). V is 12 hex digits
//! of a hash of the translator's own sources (embedded when dmsh is built), the options, the
//! tool fingerprints (SPIRV-Cross's revision; `xcrun metal --version` where xcrun exists), the
//! title's profile rows that affect translation and its pairs table. `dmsh build` writes into
//! `b-<V>/` and records V in every reflection; the host loads only from the folder of the V
//! its `dmsh_chain.h` names. `--check-tools` compares the local tools with `dmsh_chain.lock`,
//! `--update-lock` rewrites the lock from them, `--header` writes `<game>/dmsh_chain.h`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;

use super::build::inputs::sha256_hex;
use super::build::write_atomic;

/// Arguments of `dmsh chain`.
#[derive(clap::Args)]
pub struct Args {
    /// The title and its split (the profile's translation rows and shader_pairs.tsv are on
    /// the chain).
    #[command(flatten)]
    pub title: super::title::TitleArgs,
    /// The iOS build's version instead of macOS's.
    #[arg(long)]
    pub ios: bool,
    /// The lock file (default: tools/dmsh_chain.lock of this source tree).
    #[arg(long)]
    pub lock: Option<PathBuf>,
    /// Check that the local tools match the lock file (exit 1 when not).
    #[arg(long, conflicts_with_all = ["update_lock", "header"])]
    pub check_tools: bool,
    /// Rewrite the lock file from the local tools.
    #[arg(long, conflicts_with = "header")]
    pub update_lock: bool,
    /// Write `<game>/dmsh_chain.h` (needs --game).
    #[arg(long)]
    pub header: bool,
}

/// What V hashes, each a digest or a fingerprint text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChainParts {
    /// The translator's sources.
    pub translator: String,
    /// The options.
    pub options: String,
    /// The tool fingerprints ([`tools_text`]).
    pub tools: String,
    /// The profile rows that affect translation.
    pub profile: String,
    /// The pairs table.
    pub pairs: String,
}

/// The chain version V of `parts`: 12 hex digits.
pub fn version(parts: &ChainParts) -> String {
    let text = format!(
        "dmsh-chain 1\ntranslator={}\noptions={}\ntools={}\nprofile={}\npairs={}\n",
        parts.translator, parts.options, parts.tools, parts.profile, parts.pairs
    );
    sha256_hex(text.as_bytes())[..12].to_string()
}

/// The local tools' fingerprints, by name: SPIRV-Cross (linked in), the SPIR-V validator's
/// version (SPIRV-Tools linked in, or the first line of `spirv-val --version`;
/// `dmsh_vk::validate`) and the first line of `xcrun metal --version` where they run.
pub fn tools() -> Vec<(String, String)> {
    let mut v = vec![("spirv-cross".to_string(), dmsh_msl::SPIRV_CROSS.to_string())];
    if let Some(val) = dmsh_vk::validate::version() {
        v.push((SPIRV_VAL.into(), val));
    }
    let xcrun = super::build::metallib::xcrun();
    if let Some(first) = dmsh_vk::validate::first_line_of(xcrun.as_str(), &["metal", "--version"]) {
        v.push(("xcrun-metal".into(), first));
    }
    v
}

/// The tool name of spirv-val, the build's `validate` step, in the fingerprints.
pub const SPIRV_VAL: &str = "spirv-val";

/// Tool fingerprints as the lock file holds them: `name<TAB>fingerprint` lines.
pub fn tools_text(tools: &[(String, String)]) -> String {
    tools.iter().map(|(n, f)| format!("{n}\t{f}\n")).collect()
}

/// The lock file's fingerprints (comments and blank lines skipped).
fn read_lock(path: &Path) -> anyhow::Result<Vec<(String, String)>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut v = Vec::new();
    for (ln, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let (n, f) = line.split_once('\t').with_context(|| {
            format!("{}:{}: not `tool<TAB>fingerprint`", path.display(), ln + 1)
        })?;
        v.push((n.to_string(), f.to_string()));
    }
    Ok(v)
}

/// tools/dmsh_chain.lock of the checkout in the current directory, else of the tree this
/// binary was built from.
fn default_lock() -> PathBuf {
    let here = Path::new("tools/dmsh_chain.lock");
    if Path::new("tools/cli/Cargo.toml").is_file() {
        return here.to_path_buf();
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../dmsh_chain.lock")
}

/// The header the host is compiled with: V as `DMSH_CHAIN_VERSION`.
pub fn header_text(v: &str) -> String {
    format!(
        "/* Written by `dmsh chain --header`: the chain version the host loads (b-<V>/). */\n\
         #pragma once\n#define DMSH_CHAIN_VERSION \"{v}\"\n"
    )
}

/// Runs `dmsh chain`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let opts = super::build::msl_options(args.ios);
    let title = args.title.inputs(args.title.split.as_deref(), &opts)?;
    let v = version(&title.chain_parts());
    let lock = args.lock.clone().unwrap_or_else(default_lock);
    if args.check_tools {
        let locked = read_lock(&lock)?;
        if locked == title.tools {
            println!("chain: the local tools match {}", lock.display());
            return Ok(ExitCode::SUCCESS);
        }
        println!("chain: the local tools differ from {}:", lock.display());
        println!("  lock:\n{}", indent(&tools_text(&locked)));
        println!("  local:\n{}", indent(&tools_text(&title.tools)));
        println!("  run `dmsh chain --update-lock` to register the local tools");
        return Ok(ExitCode::FAILURE);
    }
    if args.update_lock {
        let text = format!(
            "# dmsh chain: the tools the chain version was taken with (`dmsh chain --update-lock`).\n{}",
            tools_text(&title.tools)
        );
        write_atomic(&lock, text.as_bytes())?;
        println!("chain: wrote {}", lock.display());
    }
    if args.header {
        let game = args
            .title
            .game
            .as_deref()
            .context("--header needs --game DIR (the header goes into the title's folder)")?;
        let path = game.join("dmsh_chain.h");
        write_atomic(&path, header_text(&v).as_bytes())?;
        println!("chain: wrote {}", path.display());
    }
    println!("{v}");
    Ok(ExitCode::SUCCESS)
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> ChainParts {
        ChainParts {
            translator: "t".into(),
            options: "o".into(),
            tools: "spirv-cross\tx\n".into(),
            profile: "p".into(),
            pairs: "q".into(),
        }
    }

    #[test]
    fn version_is_12_hex_digits_and_stable() {
        let v = version(&base());
        assert_eq!(v.len(), 12);
        assert!(v.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(v, version(&base()));
    }

    /// One case per input on the chain: changing it alone changes V.
    #[test]
    fn version_follows_every_input() {
        type Edit = fn(&mut ChainParts);
        let edits: [(&str, Edit); 5] = [
            ("translator", |p| p.translator.push('!')),
            ("options", |p| p.options.push('!')),
            ("tools", |p| {
                p.tools
                    .push_str("xcrun-metal\tApple metal version 32023.404\n")
            }),
            ("profile", |p| p.profile.push('!')),
            ("pairs", |p| p.pairs.push('!')),
        ];
        for (input, edit) in edits {
            let mut p = base();
            edit(&mut p);
            assert_ne!(version(&p), version(&base()), "{input}");
        }
    }

    #[test]
    fn the_lock_reads_back_what_it_writes() {
        let d = std::env::temp_dir().join(format!("dmsh-chain-lock-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("dmsh_chain.lock");
        let t = vec![("spirv-cross".to_string(), "a b".to_string())];
        std::fs::write(&p, format!("# comment\n{}", tools_text(&t))).unwrap();
        assert_eq!(read_lock(&p).unwrap(), t);
        std::fs::write(&p, "no tab here\n").unwrap();
        let e = read_lock(&p).unwrap_err().to_string();
        assert!(e.contains("dmsh_chain.lock:1"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }
}
