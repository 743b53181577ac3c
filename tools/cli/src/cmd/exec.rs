//! `dmsh exec`.

use std::process::ExitCode;

/// Arguments of `dmsh exec`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `dmsh exec`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("dmsh exec is not implemented yet")
}
