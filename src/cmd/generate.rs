//! `rlctl generate`: takes the generator's configuration from the options
//! layer and writes the synthetic log to stdout or a file (gzip when the name
//! ends in `.gz`).

use std::io;
use std::path::Path;

use anyhow::Context;
use flate2::Compression;
use flate2::write::GzEncoder;

use crate::Outcome;
use crate::cli::GenerateArgs;
use crate::generate::Generator;
use crate::options;
use crate::text::atomic::AtomicFile;

/// Runs `rlctl generate`.
pub fn run(args: GenerateArgs) -> anyhow::Result<Outcome> {
    let settings = options::generate_settings(&args)?;
    let generator = Generator::new(&settings.config)?;
    match &settings.output {
        None => {
            let mut out = io::stdout().lock();
            generator.write_to(&mut out)?;
        }
        Some(path) => write_file(&generator, path)
            .with_context(|| format!("cannot write {}", path.display()))?,
    }
    Ok(Outcome::Success)
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
