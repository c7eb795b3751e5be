//! `rlctl generate`: turns the flags into a [`generate::Config`] and writes the
//! synthetic log to stdout or a file (gzip when the name ends in `.gz`).

use std::io;
use std::path::Path;

use anyhow::Context;
use flate2::Compression;
use flate2::write::GzEncoder;

use crate::Outcome;
use crate::cli::GenerateArgs;
use crate::generate::{self, Config, Format, Generator, Length, Shapes};
use crate::output::AtomicFile;

/// Runs `rlctl generate`.
pub fn run(args: GenerateArgs) -> anyhow::Result<Outcome> {
    let config = config(&args)?;
    let generator = Generator::new(&config)?;
    match &args.output {
        None => {
            let mut out = io::stdout().lock();
            generator.write_to(&mut out)?;
        }
        Some(path) => write_file(&generator, path)
            .with_context(|| format!("cannot write {}", path.display()))?,
    }
    Ok(Outcome::Success)
}

/// The library configuration for these flags.
pub fn config(args: &GenerateArgs) -> anyhow::Result<Config> {
    Ok(Config {
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
            servers: args.servers,
        },
    })
}

/// Writes through a temporary file and a rename, so a failed write (a full
/// disk) never leaves a truncated log in place of a good one.
fn write_file(generator: &Generator, path: &Path) -> io::Result<()> {
    let mut file = AtomicFile::create(path)?;
    let gzip = path.extension().is_some_and(|ext| ext == "gz");
    if gzip {
        let mut encoder = GzEncoder::new(&mut file, Compression::default());
        generator.write_to(&mut encoder)?;
        encoder.finish()?;
    } else {
        generator.write_to(&mut file)?;
    }
    file.commit()
}
