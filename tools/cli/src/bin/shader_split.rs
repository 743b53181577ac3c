//! `shader_split`: the seed's name for `dmsh split`, with the same arguments.
//! `shader_split <RomFS>[,…] <main>[,…] <pkg dir> <map out> <facts out> [<pairs out>] [--profile DIR]`

#[path = "../cmd/split.rs"]
mod split;

use clap::Parser;

/// Find every shader in a title's RomFS and main; write the split tables.
#[derive(Parser)]
#[command(name = "shader_split", version, about)]
struct Cli {
    #[command(flatten)]
    args: split::Args,
}

fn main() -> std::process::ExitCode {
    match split::run(Cli::parse().args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("shader_split: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
