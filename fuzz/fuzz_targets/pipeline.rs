//! Fuzz target: the whole ingestion pipeline on a file (`rlctl::ingest::ingest`):
//! compression detection (plain, gzip, zstd), format detection, line splitting,
//! parallel chunk parsing and the merge. The first byte picks the format,
//! `--strict` and which paths are kept; the rest is the file. Any bytes: no
//! panic, and an `Ok` result accounts for every line and is sorted by time.

#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rlctl::ingest::{FormatChoice, KeptPaths, Settings, ingest};
use rlctl_fuzz::keys;

/// One scratch file per fuzzing process.
fn scratch() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        std::env::temp_dir().join(format!("rlctl-fuzz-pipeline-{}.log", std::process::id()))
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&config, file)) = data.split_first() else {
        return;
    };
    let format = match config % 4 {
        0 => FormatChoice::Auto,
        1 => FormatChoice::Combined,
        2 => FormatChoice::Json,
        _ => FormatChoice::log_format(
            r#"$msec $remote_addr "$request" $status $request_time "$remote_user""#,
        ),
    };
    let path = scratch();
    std::fs::write(path, file).expect("write the scratch file");
    let keys = keys();
    let settings = Settings {
        inputs: vec![path.clone()],
        format,
        json_fields: Vec::new(),
        keys,
        routes: Vec::new(),
        strict: config & 4 != 0,
        progress: None,
        paths: match (config >> 3) % 3 {
            0 => KeptPaths::None,
            1 => KeptPaths::Routed,
            _ => KeptPaths::All,
        },
        time_of: Default::default(),
    };
    let Ok(ingested) = ingest(&settings) else {
        return; // truncated compression, undetectable format, --strict: errors, not panics
    };
    let report = &ingested.report;
    let table = &ingested.table;
    assert_eq!(report.lines + report.glued, report.parsed + report.skipped);
    assert_eq!(
        report.skipped,
        report.skipped_by_reason.values().sum::<u64>()
    );
    assert_eq!(table.len() as u64, report.parsed);
    assert!(
        table.ts.windows(2).all(|w| w[0] <= w[1]),
        "events out of order"
    );
    assert_eq!(report.files.len(), 1);
    let file = &report.files[0];
    assert_eq!(
        (file.lines, file.glued, file.parsed, file.skipped),
        (report.lines, report.glued, report.parsed, report.skipped)
    );
    if settings.strict {
        assert!(
            report.skipped_by_reason.keys().all(|r| r == "blank line"),
            "--strict let a bad line through: {:?}",
            report.skipped_by_reason
        );
    }
});
