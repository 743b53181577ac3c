//! `dmsh translate`.

use std::process::ExitCode;

/// Arguments of `dmsh translate`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `dmsh translate`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("dmsh translate is not implemented yet")
}
