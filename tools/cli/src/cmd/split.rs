//! `dmsh split`.

use std::process::ExitCode;

/// Arguments of `dmsh split`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `dmsh split`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("dmsh split is not implemented yet")
}
