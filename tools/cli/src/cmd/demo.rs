//! `dmsh demo`.

use std::process::ExitCode;

/// Arguments of `dmsh demo`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `dmsh demo`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("dmsh demo is not implemented yet")
}
