//! `dmsh disasm`.

use std::process::ExitCode;

/// Arguments of `dmsh disasm`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `dmsh disasm`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("dmsh disasm is not implemented yet")
}
