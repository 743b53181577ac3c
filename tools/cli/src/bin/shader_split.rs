//! `shader_split`: the seed's name for `dmsh split`, with the same arguments.

fn main() -> std::process::ExitCode {
    eprintln!("shader_split: not implemented yet");
    std::process::ExitCode::FAILURE
}
