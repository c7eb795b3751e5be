//! The `rlctl` binary: parse the command line, run the library, map the outcome
//! to an exit code (0 ok, 1 a gate failed, 2 usage or input error).

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    rlctl::ingest::return_freed_memory_promptly();
    let cli = rlctl::cli::Cli::parse();
    match rlctl::run(cli) {
        Ok(outcome) => outcome.exit_code(),
        Err(err) if rlctl::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!(
                "rlctl: error: {}",
                rlctl::text::escape::terminal(&rlctl::error_message(&err))
            );
            ExitCode::from(2)
        }
    }
}
