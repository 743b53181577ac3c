//! `dmsh disasm`: Maxwell (sm50–53) or Ampere (sm86-class) machine code to nvdisasm's text,
//! one line per instruction.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use dmsh_isa::code_area::{self, Program};
use dmsh_isa::{ampere, stream};

/// Arguments of `dmsh disasm`.
#[derive(clap::Args)]
pub struct Args {
    /// Target architecture: sm53 (Tegra X1; sm50 and sm52 are aliases) or sm86 (Ampere,
    /// Switch 2; sm87 and ampere are aliases).
    #[arg(long, default_value = "sm53")]
    pub arch: String,
    /// The file is a bare instruction stream (as `nvdisasm -b SM53` / `-b SM86` reads it).
    /// The default.
    #[arg(long, conflicts_with = "code_area")]
    pub raw: bool,
    /// The file is a code area: NVN (0x30-byte header, SPH at +0x30, code at +0x80; compute
    /// code at +0x100), a uam `*.code.bin` (SPH at +0, code at +0x50; compute code at +0), or
    /// a whole DKSH file (every program); for sm86 also code with a version-4 SPH (0x80
    /// bytes) at +0, as NVN2 graphics code and the NAK corpus's `*.code.bin` hold it. The
    /// SPH's fields are printed first.
    #[arg(long)]
    pub code_area: bool,
    /// Also print each word in hex, as `nvdisasm -hex` does.
    #[arg(long)]
    pub hex: bool,
    /// Input file.
    pub file: PathBuf,
}

/// Runs `dmsh disasm`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let ampere = match args.arch.to_ascii_lowercase().as_str() {
        "sm53" | "sm_53" | "sm52" | "sm_52" | "sm50" | "sm_50" | "maxwell" => false,
        "sm86" | "sm_86" | "sm87" | "sm_87" | "ampere" => true,
        other => anyhow::bail!("unsupported --arch {other} (sm50, sm52, sm53 and sm86)"),
    };
    let word = if ampere { 16 } else { 8 };
    let bytes =
        std::fs::read(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let programs: Vec<Program> = if args.code_area {
        if code_area::is_dksh(&bytes) {
            code_area::locate_dksh(&bytes).with_context(|| format!("{}", args.file.display()))?
        } else {
            vec![code_area::locate_code_area(&bytes)]
        }
    } else {
        vec![Program {
            kind: "raw",
            sph: None,
            code_start: 0,
            code_end: bytes.len() & !7,
        }]
    };
    let mut out = String::new();
    let mut unknown = 0usize;
    for p in &programs {
        if args.code_area {
            out.push_str(&format!(
                "// {}: {} program, instructions at file offset {:#x}..{:#x}\n",
                args.file.display(),
                p.kind,
                p.code_start,
                p.code_end
            ));
            if let Some(sph) = &p.sph {
                for l in sph.describe().lines() {
                    out.push_str(&format!("//   SPH {l}\n"));
                }
            }
        }
        let end = p.code_start + (p.code_end.saturating_sub(p.code_start)) / word * word;
        let code = &bytes[p.code_start..end.max(p.code_start)];
        if ampere {
            let listing = ampere::listing(code, args.hex);
            unknown += listing.lines().filter(|l| l.contains("UNKNOWN")).count();
            out.push_str(&listing);
            continue;
        }
        let listing = stream::listing(code);
        for (line, word) in listing
            .lines()
            .zip(stream::instructions(code).map(|(o, _, _)| o))
        {
            if line.contains("UNKNOWN") {
                unknown += 1;
            }
            if args.hex {
                let w = u64::from_le_bytes(
                    code[word as usize..word as usize + 8]
                        .try_into()
                        .expect("8 bytes"),
                );
                out.push_str(&format!("{line:<80} /* {w:#018x} */\n"));
            } else {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    print!("{out}");
    if unknown > 0 {
        eprintln!("dmsh disasm: {unknown} word(s) did not decode (shown as UNKNOWN)");
    }
    Ok(ExitCode::SUCCESS)
}
