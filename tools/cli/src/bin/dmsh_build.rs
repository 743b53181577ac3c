//! `dmsh_build`: the seed's name for `dmsh build`, with the same arguments.
//! `dmsh_build --split DIR [--game DIR] [--out DIR] [--ios] [--strict]`

#[allow(dead_code)]
#[path = "../cmd/mod.rs"]
mod cmd;

use clap::Parser;

/// Metal shading language for every shader of a split title, into b-<V>/.
#[derive(Parser)]
#[command(name = "dmsh_build", version, about)]
struct Cli {
    #[command(flatten)]
    args: cmd::build::Args,
}

fn main() -> std::process::ExitCode {
    match cmd::build::run(Cli::parse().args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("dmsh_build: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
