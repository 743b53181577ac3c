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

/// mimalloc: translation makes many small IR and SPIR-V buffers per shader, and glibc's
/// malloc took a tenth of its time (the translate bench uses the same allocator).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    match cmd::build::run(Cli::parse().args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("dmsh_build: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
