//! `dmsh`: the one command-line entry to the toolchain. Each subcommand lives in
//! its own module under `cmd/`; this file only parses arguments and dispatches.

mod cmd;

use clap::{Parser, Subcommand};

/// dmsh: Nintendo Switch shaders to SPIR-V and Metal.
#[derive(Parser)]
#[command(name = "dmsh", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Find every shader in a title's RomFS and main; write the split tables.
    Split(cmd::split::Args),
    /// Run the whole chain that exists so far on the bundled demo title.
    Demo(cmd::demo::Args),
    /// Metal shading language for every shader of a split title, into b-<V>/.
    Build(cmd::build::Args),
    /// c1_full.tsv: the built shaders whose run-time c1 index is not proven bounded.
    C1Guard(cmd::c1_guard::Args),
    /// The chain version V; check or register the tools; write the host's header.
    Chain(cmd::chain::Args),
    /// A title's coverage as JSON, Markdown and one self-contained HTML page.
    Report(cmd::report::Args),
    /// Disassemble Maxwell machine code as NVIDIA's nvdisasm prints it.
    Disasm(cmd::disasm::Args),
    /// Translate one shader to SPIR-V plus reflection JSON.
    Translate(Box<cmd::translate::Args>),
    /// Run a translated compute shader on a Vulkan device as a job file says.
    Exec(cmd::exec::Args),
    /// Draw a vertex + fragment pair into an offscreen image as a job file says.
    Render(cmd::render::Args),
}

/// mimalloc: translation makes many small IR and SPIR-V buffers per shader, and glibc's
/// malloc took a tenth of its time (the translate bench uses the same allocator).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Split(a) => cmd::split::run(a),
        Command::Demo(a) => cmd::demo::run(a),
        Command::Build(a) => cmd::build::run(a),
        Command::C1Guard(a) => cmd::c1_guard::run(a),
        Command::Chain(a) => cmd::chain::run(a),
        Command::Report(a) => cmd::report::run(a),
        Command::Disasm(a) => cmd::disasm::run(a),
        Command::Translate(a) => cmd::translate::run(*a),
        Command::Exec(a) => cmd::exec::run(a),
        Command::Render(a) => cmd::render::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("dmsh: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
