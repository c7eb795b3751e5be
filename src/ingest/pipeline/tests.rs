use super::*;
use crate::ingest::combined::CombinedParser;
use crate::ingest::record::SkipReason;

/// Every chunk size and thread count gives each event the same endpoint
/// and path, on targets that share request-cache entries within a chunk
/// (ids after a common prefix, queries, nested ids) and on distinct ones.
#[test]
fn endpoints_and_paths_do_not_depend_on_chunks_or_threads() {
    let targets = [
        "/api/users/{n}",
        "/api/users/{n}?page=2",
        "/api/orders/{n}/items/{n}",
        "/blog/post-{n}",
        "/static/app.{n}.js",
        "/api/users",
        "/v/{n}abcdefghijklmnopqrstuv",
    ];
    let mut text = String::new();
    for i in 0..400 {
        let target = targets[i % targets.len()].replace("{n}", &(i * 7 % 23).to_string());
        let method = ["GET", "POST"][i % 3 % 2];
        text.push_str(&format!(
            "10.0.0.{} - - [10/Oct/2000:13:55:36 +0000] \"{method} {target} HTTP/1.1\" 200 1\n",
            i % 5
        ));
    }
    let mut seen = Vec::new();
    for chunk_bytes in [256, 1000, 1 << 20] {
        for threads in [1, 2] {
            let mut named = Vec::new();
            let data = Data::Stream(Box::new(io::Cursor::new(text.clone().into_bytes())));
            let parser = Box::new(CombinedParser::new(&[]).unwrap());
            chunks_on_threads(data, chunk_bytes, threads, parser, |chunk| {
                named.extend(chunk.events.iter().map(|e| {
                    (
                        chunk.endpoints.name(e.endpoint).to_string(),
                        chunk.paths.name(e.path).to_string(),
                    )
                }));
            });
            seen.push(named);
        }
    }
    assert_eq!(seen[0].len(), 400);
    assert_eq!(
        seen[0][2],
        (
            "GET /api/orders/:id/items/:id".to_string(),
            "/api/orders/14/items/14".to_string()
        )
    );
    assert!(seen.iter().all(|named| *named == seen[0]));
}

/// Every chunk size, thread count and source (stream or mapped file) gives
/// the same counts and the same line numbers.
#[test]
fn line_numbers_run_across_chunks_and_threads() {
    let good = "1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] \"GET /a HTTP/1.1\" 200 1";
    let mut text = String::new();
    for i in 1..=300 {
        match i % 37 {
            0 => text.push_str("bad line"),
            5 => text.push_str(&"x".repeat(700)), // longer than the smallest chunks
            _ => text.push_str(good),
        }
        text.push('\n');
    }
    let mut seen = Vec::new();
    let mut file = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut file, text.as_bytes()).unwrap();
    // SAFETY: a private temporary file nothing else writes.
    let map = Arc::new(unsafe { memmap2::Mmap::map(file.as_file()) }.unwrap());
    for chunk_bytes in [256, 1000, 1 << 20] {
        for source in 0..4 {
            let (threads, mapped) = (1 + 2 * (source % 2), source >= 2);
            let data = if mapped {
                Data::Mapped(map.clone())
            } else {
                Data::Stream(Box::new(io::Cursor::new(text.clone().into_bytes())))
            };
            let (mut lines, mut parsed, mut skipped) = (0, 0, Vec::new());
            let parser = Box::new(CombinedParser::new(&[]).unwrap());
            chunks_on_threads(data, chunk_bytes, threads, parser, |mut chunk| {
                chunk.renumber(lines);
                lines += chunk.lines;
                parsed += chunk.parsed;
                skipped.extend(chunk.examples);
            });
            seen.push((lines, parsed, skipped));
        }
    }
    let bad: Vec<u64> = (1..=300).filter(|i| matches!(i % 37, 0 | 5)).collect();
    for (i, (lines, parsed, skipped)) in seen.iter().enumerate() {
        assert_eq!((*lines, *parsed), (300, 300 - bad.len() as u64));
        let numbers: Vec<u64> = skipped.iter().map(|s| s.0).collect();
        // At most EXAMPLES_PER_CHUNK examples per chunk are kept: one chunk
        // keeps the first of them.
        let per_chunk = crate::ingest::chunk::EXAMPLES_PER_CHUNK;
        let expected = if i < 8 { &bad[..] } else { &bad[..per_chunk] };
        assert_eq!(numbers, expected, "chunk size #{}", i / 4);
        let too_long = skipped
            .iter()
            .filter(|s| s.1 == SkipReason::TooLong)
            .count();
        assert_eq!(too_long, if i < 4 { bad.len() / 2 } else { 0 });
    }
}
