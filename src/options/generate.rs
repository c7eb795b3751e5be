//! Settings of `rlctl generate`: the generator's configuration and where the
//! log goes.

use std::path::PathBuf;

use crate::cli::GenerateArgs;
use crate::generate::{self, Config, Format, GenerateError, Length, Shapes};

/// Validated settings of `rlctl generate`.
#[derive(Debug, Clone)]
pub struct GenerateSettings {
    pub config: Config,
    /// Where to write (`None` = stdout; gzip when the name ends in `.gz`).
    pub output: Option<PathBuf>,
}

/// The library configuration for the flags of `rlctl generate`.
pub fn generate_settings(args: &GenerateArgs) -> Result<GenerateSettings, GenerateError> {
    Ok(GenerateSettings {
        config: Config {
            clients: args.clients,
            length: match args.lines {
                Some(n) => Length::Lines(n),
                None => Length::Duration(args.duration),
            },
            seed: args.seed,
            start: generate::clock::parse_start(&args.start)?,
            format: Format::parse(&args.format)?,
            time_offset: args.time_offset.parse()?,
            shapes: Shapes {
                distinct_paths: args.distinct_paths,
                scanners: args.scanners,
                shuffle: args.shuffle,
                logged_at_end: args.logged_at_end,
                servers: args.servers,
            },
        },
        output: args.output.clone(),
    })
}
