//! Merging parsed chunks into the table, one input after another: the chunks of
//! an input come from [`pipeline`] in input order, and their chunk-local ids are
//! mapped onto the table's, so the result does not depend on the number of threads.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::chunk::{ChunkContext, ChunkResult};
use super::detect;
use super::lines::Piece;
use super::pipeline;
use super::record::LineParser;
use super::report::{FileReport, ForwardedUnknown, IngestReport};
use super::source::{self, Compression};
use super::{IngestError, Ingested, KeptPaths, Progress, Settings};
use crate::events::{EventTable, Id, Interner, KeyColumn, NO_KEY, Resolution};

/// How many skipped-line examples the report keeps: the first skipped lines.
const EXAMPLES: usize = super::chunk::EXAMPLES_PER_CHUNK;

/// Global ids for the names of a chunk-local interner, in local id order.
fn remap(local: &Interner, global: &mut Interner) -> Vec<Id> {
    global.intern_all(local)
}

pub(super) struct Merger<'s> {
    settings: &'s Settings,
    table: EventTable,
    report: IngestReport,
    subsecond: bool,
    progress: Option<&'s dyn Progress>,
    bytes_read: Arc<AtomicU64>,
}

impl<'s> Merger<'s> {
    pub(super) fn new(settings: &'s Settings) -> Self {
        let total: u64 = settings
            .inputs
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum();
        let progress = settings.progress.as_deref();
        if let Some(progress) = progress {
            progress.start(total);
        }
        Merger {
            settings,
            table: EventTable {
                extra_keys: vec![KeyColumn::default(); settings.keys.extra.len()],
                ..EventTable::default()
            },
            report: IngestReport {
                files: Vec::new(),
                lines: 0,
                glued: 0,
                parsed: 0,
                skipped: 0,
                skipped_by_reason: BTreeMap::new(),
                examples: Vec::new(),
                resolution: Resolution::Second,
                invalid_utf8_lines: 0,
                forwarded_unknown: ForwardedUnknown::default(),
            },
            subsecond: false,
            progress,
            bytes_read: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Reads one input completely.
    pub(super) fn read_input(&mut self, path: &Path) -> Result<(), IngestError> {
        let input = source::open(path, self.bytes_read.clone())?;
        let name = input.name.clone();
        if let Some(progress) = self.progress {
            progress.input(&name);
        }
        let mut file = FileReport {
            name: name.clone(),
            format: String::new(),
            compression: input.compression.name().into(),
            lines: 0,
            glued: 0,
            parsed: 0,
            skipped: 0,
        };
        let settings = self.settings;
        let ctx = ChunkContext {
            keys: &settings.keys,
            routes: &settings.routes,
            paths: settings.paths,
        };
        let compressed = input.compression != Compression::None;
        let mut format = String::new();
        let bytes_read = self.bytes_read.clone();
        let result = pipeline::run(
            input.data,
            &bytes_read,
            &ctx,
            |head| Self::choose_parser(settings, head, &name, &mut format),
            |chunk| {
                let chunk = chunk.map_err(|source| IngestError::Read {
                    file: name.clone(),
                    line: file.lines,
                    // Bytes that are not gzip after its members say so themselves.
                    hint: if compressed && source.kind() != std::io::ErrorKind::InvalidData {
                        " (is the compressed file truncated?)"
                    } else {
                        ""
                    },
                    source,
                })?;
                self.merge(chunk, &mut file)?;
                if let Some(progress) = self.progress {
                    progress.advance(self.bytes_read.load(Ordering::Relaxed));
                }
                Ok(())
            },
        );
        file.format = format;
        if file.format.is_empty() {
            file.format = "(empty input)".into();
        }
        self.report.files.push(file);
        result
    }

    fn choose_parser(
        settings: &Settings,
        batch: &[io::Result<Piece>],
        name: &str,
        format: &mut String,
    ) -> Result<Box<dyn LineParser>, IngestError> {
        let head = batch.iter().find_map(|p| match p {
            Ok(Piece::Lines { data, .. }) => Some(detect::head(data)),
            _ => None,
        });
        let chosen = detect::choose(settings, head, name)?;
        *format = chosen.description;
        Ok(chosen.parser)
    }

    fn merge(&mut self, mut chunk: ChunkResult, file: &mut FileReport) -> Result<(), IngestError> {
        chunk.renumber(file.lines);
        if let Some(line) = chunk.columns_changed {
            return Err(IngestError::ColumnsChanged {
                file: file.name.clone(),
                line,
            });
        }
        if self.settings.strict
            && let Some((line, reason)) = chunk.first_bad
        {
            return Err(IngestError::Strict {
                file: file.name.clone(),
                line,
                reason,
            });
        }
        let skipped: u64 = chunk.skipped.values().sum();
        file.lines += chunk.lines;
        file.glued += chunk.glued;
        file.parsed += chunk.parsed;
        file.skipped += skipped;
        self.report.lines += chunk.lines;
        self.report.glued += chunk.glued;
        self.report.parsed += chunk.parsed;
        self.report.skipped += skipped;
        self.report.invalid_utf8_lines += chunk.invalid_utf8;
        self.subsecond |= chunk.subsecond;
        for (reason, n) in chunk.skipped {
            *self
                .report
                .skipped_by_reason
                .entry(reason.to_string())
                .or_default() += n;
        }
        for (line, reason) in chunk.examples {
            if self.report.examples.len() < EXAMPLES {
                self.report
                    .examples
                    .push(format!("{}:{line}: {reason}", file.name));
            }
        }
        let clients = remap(&chunk.clients, &mut self.table.clients);
        let endpoints = remap(&chunk.endpoints, &mut self.table.endpoints);
        let paths = remap(&chunk.paths, &mut self.table.paths);
        let no_path = (self.settings.paths == KeptPaths::None).then(|| self.table.paths.intern(""));
        let methods = remap(&chunk.methods, &mut self.table.methods);
        let events = &chunk.events;
        let table = &mut self.table;
        table.ts.extend(events.iter().map(|e| e.ts));
        table
            .client
            .extend(events.iter().map(|e| clients[e.client as usize]));
        table
            .endpoint
            .extend(events.iter().map(|e| endpoints[e.endpoint as usize]));
        // Without paths the column stays empty: every path is the empty one.
        if no_path.is_none() {
            table
                .path
                .extend(events.iter().map(|e| paths[e.path as usize]));
        }
        table
            .method
            .extend(events.iter().map(|e| methods[e.method as usize]));
        table.status.extend(events.iter().map(|e| e.status));
        table.logged.extend(events.iter().map(|e| e.logged));
        table.protocol.extend(events.iter().map(|e| e.protocol));
        for (local, global) in chunk.extra_keys.into_iter().zip(&mut self.table.extra_keys) {
            let ids = remap(&local.names, &mut global.names);
            global.ids.extend(local.ids.iter().map(|&id| {
                if id == NO_KEY {
                    NO_KEY
                } else {
                    ids[id as usize]
                }
            }));
        }
        Ok(())
    }

    pub(super) fn finish(mut self) -> Ingested {
        if let Some(progress) = self.progress {
            progress.finish();
        }
        self.table.sort_by_time();
        if self.settings.keys.primary.text == "xff" {
            self.report.forwarded_unknown = forwarded_unknown(&self.table);
        }
        // From here on names are read by id: a table of a million distinct
        // names need not keep their lookup tables.
        let table = &mut self.table;
        for names in [&mut table.clients, &mut table.endpoints, &mut table.paths] {
            names.release_lookups();
        }
        return_freed_memory();
        self.report.resolution = if self.subsecond {
            Resolution::Millisecond
        } else {
            Resolution::Second
        };
        Ingested {
            table: self.table,
            report: self.report,
        }
    }
}

/// The events whose client is named `unknown` in any case, and those clients.
fn forwarded_unknown(table: &EventTable) -> ForwardedUnknown {
    let unknown: Vec<bool> = (table.clients.names())
        .map(|name| name.eq_ignore_ascii_case("unknown"))
        .collect();
    let spellings = unknown.iter().filter(|&&u| u).count() as u64;
    if spellings == 0 {
        return ForwardedUnknown::default();
    }
    let lines = table
        .client
        .iter()
        .filter(|&&c| unknown[c as usize])
        .count() as u64;
    ForwardedUnknown { lines, spellings }
}

/// Has glibc map blocks of 2 MiB or more on their own (so that freeing one
/// unmaps it) and trim free memory above 128 KiB at the top of a heap, for
/// the whole run. Left alone, glibc raises both thresholds as large blocks
/// are freed (up to 32 and 64 MiB): once ingestion has grown and freed the
/// table of a million names, buffers of a few megabytes stay in the heaps
/// after they are freed, about 30 MB of the peak resident memory of a log
/// with a million distinct paths (8 MB with thirty). Setting the threshold
/// turns that adjustment off (`mallopt(3)`, M_MMAP_THRESHOLD); 2 MiB rather
/// than the initial 128 KiB keeps the per-chunk buffers of the parse workers
/// in their heaps, reused from one chunk to the next. A process-wide
/// setting: the binary calls it once as it starts.
pub fn return_freed_memory_promptly() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes a tuning parameter of glibc's allocator.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 2 << 20);
    }
}

/// Hands the memory freed so far back to the system. The parse workers'
/// chunk-local tables (a few megabytes a chunk when most requests are
/// distinct) are freed into each thread's malloc arena, where glibc keeps
/// them for that thread; what follows ingestion runs on other threads and
/// would count them in the peak resident memory besides its own.
fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory of glibc's arenas to the
    // system; it takes no pointer and is safe to call from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::super::key::{KeySet, KeySpec};
    use super::super::{FormatChoice, KeptPaths, Settings, ingest};

    #[test]
    fn without_paths_every_path_is_empty_and_nothing_else_changes() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        let lines = "1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] \"GET /a/1?x HTTP/1.1\" 200 1\n\
                     5.6.7.8 - - [10/Oct/2000:13:55:37 +0000] \"POST /b HTTP/1.1\" 429 1\n";
        std::io::Write::write_all(&mut file, lines.as_bytes()).unwrap();
        let settings = |paths| Settings {
            inputs: vec![file.path().to_path_buf()],
            format: FormatChoice::Auto,
            json_fields: Vec::new(),
            keys: KeySet::new(KeySpec::parse("ip", None, None).unwrap()),
            routes: Vec::new(),
            strict: false,
            progress: None,
            paths,
            time_of: Default::default(),
        };
        let with = ingest(&settings(KeptPaths::All)).unwrap().table;
        let without = ingest(&settings(KeptPaths::None)).unwrap().table;
        assert_eq!(with.paths.names().collect::<Vec<_>>(), ["/a/1", "/b"]);
        assert_eq!(without.paths.names().collect::<Vec<_>>(), [""]);
        // Without paths the column is not stored; every event reads the empty path.
        assert_eq!(with.path, vec![0, 1]);
        assert!(without.path.is_empty());
        assert_eq!((without.path_at(0), without.path_at(1)), (0, 0));
        assert_eq!(without.get(1).path, 0);
        assert_eq!(
            (
                with.ts,
                with.client,
                with.endpoint,
                with.method,
                with.status
            ),
            (
                without.ts,
                without.client,
                without.endpoint,
                without.method,
                without.status
            )
        );
    }
}
