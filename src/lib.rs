//! rlctl turns web access logs into rate limits people can trust.
//!
//! The library is what the binary, the tests and the benchmarks call:
//! [`ingest`] reads logs into an [`events::EventTable`], [`stats`] measures it,
//! [`recommend`] proposes limits, [`simulate`] replays traffic through limiters,
//! [`analysis`], [`scenario`] and [`report`] are the workflows the commands
//! share, [`render`] turns their results into documents, [`output`] renders
//! those, and [`text`] holds the escaping, atomic writes and dates everything
//! uses.
//!
//! The command line sits on top: [`cli`] declares the flags, [`options`] checks
//! them into settings, and each subcommand lives in [`cmd`]. No library module
//! imports those three, and no command imports another.

pub mod analysis;
pub mod cli;
pub mod cmd;
pub mod discover;
pub mod events;
pub mod export;
pub mod frames;
pub mod generate;
pub mod ingest;
pub mod options;
pub mod output;
pub mod policy;
pub mod profile;
pub mod recommend;
pub mod render;
pub mod report;
pub mod scenario;
pub mod simulate;
pub mod stats;
pub mod text;
pub mod units;
pub mod watch;

use std::process::ExitCode;

/// How a successful run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything ran and every gate (if any) passed: exit 0.
    Success,
    /// A CI gate failed: exit 1.
    GateFailed,
}

impl Outcome {
    /// The process exit code for this outcome.
    pub fn exit_code(self) -> ExitCode {
        match self {
            Outcome::Success => ExitCode::SUCCESS,
            Outcome::GateFailed => ExitCode::from(1),
        }
    }
}

/// Runs one parsed command line.
pub fn run(cli: cli::Cli) -> anyhow::Result<Outcome> {
    match cli.command {
        cli::Command::Analyze(args) => cmd::analyze::run(*args),
        cli::Command::Simulate(args) => cmd::simulate::run(*args),
        cli::Command::Report(args) => cmd::report::run(*args),
        cli::Command::Generate(args) => cmd::generate::run(args),
        cli::Command::Export(args) => cmd::export::run(args),
        cli::Command::Convert(args) => cmd::convert::run(*args),
        cli::Command::Sql(args) => cmd::sql::run(*args),
        cli::Command::Watch(args) => cmd::watch::run(*args),
    }
}

/// True when the error chain ends in a closed pipe (`rlctl analyze big.log | head`).
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The error chain as one line, each cause once: library errors already end
/// with their source (`cannot open x.log: No such file or directory`), so a
/// cause whose text the message already ends with is not repeated.
pub fn error_message(err: &anyhow::Error) -> String {
    let mut message = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if message.ends_with(&text) {
            continue;
        }
        if !message.is_empty() {
            message.push_str(": ");
        }
        message.push_str(&text);
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_name_each_cause_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        let err = anyhow::Error::new(ingest::IngestError::Open {
            file: "x.log".into(),
            source: io,
        })
        .context("reading the logs");
        assert_eq!(
            error_message(&err),
            "reading the logs: cannot open x.log: No such file"
        );
        let plain = anyhow::anyhow!("one").context("two");
        assert_eq!(error_message(&plain), "two: one");
    }
}
