//! The figures of `rlctl analyze` on the shapes real traffic brings (many
//! distinct paths, many clients, scanners) do not depend on the order of the
//! lines (shuffled within minutes, written as requests end, ten servers' logs
//! concatenated, parts given as separate inputs in reverse order), on the
//! chunks the input is parsed in, or on the number of threads.

use std::path::{Path, PathBuf};

use crate::support::{json_of_success, rlctl, success};

/// Writes `rlctl generate` output for `flags` to `dir/name` (40,000 lines:
/// about 6 MB, so two 4 MiB chunks are parsed in parallel).
fn generate(dir: &Path, name: &str, flags: &[&str]) -> PathBuf {
    let path = dir.join(name);
    success(
        rlctl()
            .args(["generate", "--lines", "40000", "--seed", "3", "-o"])
            .arg(&path)
            .args(flags),
    );
    path
}

/// The analysis figures (everything but the description of the inputs).
fn figures(inputs: &[PathBuf], threads: &str) -> serde_json::Value {
    let mut json = json_of_success(
        rlctl()
            .env("RAYON_NUM_THREADS", threads)
            .args(["analyze", "-q", "--format", "json", "--endpoints", "15"])
            .args(inputs),
    );
    let input = json.as_object_mut().unwrap().remove("input").unwrap();
    assert_eq!(input["lines"], 40_000, "{input}");
    json
}

fn assert_order_free(dir: &Path, shape: &[&'static str]) {
    let with = |more: &[&'static str]| [shape, more].concat();
    let sorted = generate(dir, "sorted.log", shape);
    let shuffled = generate(dir, "shuffled.log", &with(&["--shuffle"]));
    let servers = generate(dir, "servers.log", &with(&["--servers", "10"]));
    let both = generate(dir, "both.log", &with(&["--servers", "3", "--shuffle"]));
    let at_end = generate(dir, "at-end.log", &with(&["--logged-at-end"]));
    let text = std::fs::read_to_string(&sorted).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut parts = Vec::new();
    for (i, part) in lines.chunks(lines.len() / 3 + 1).enumerate().rev() {
        let path = dir.join(format!("part{i}.log"));
        std::fs::write(&path, part.join("\n") + "\n").unwrap();
        parts.push(path);
    }

    let expected = figures(std::slice::from_ref(&sorted), "1");
    assert!(
        expected["endpoints"].as_array().unwrap().len() == 15,
        "{shape:?}"
    );
    let inputs: [(&str, Vec<PathBuf>); 6] = [
        ("sorted", vec![sorted]),
        ("shuffled", vec![shuffled]),
        ("logged at end", vec![at_end]),
        ("servers", vec![servers]),
        ("servers shuffled", vec![both]),
        ("parts in reverse order", parts),
    ];
    for (name, files) in &inputs {
        let threads = if *name == "sorted" { "3" } else { "2" };
        assert!(
            figures(files, threads) == expected,
            "{shape:?}: {name} with {threads} threads differs from the sorted log with 1"
        );
    }
}

#[test]
fn figures_on_many_distinct_paths_do_not_depend_on_order_chunks_or_threads() {
    let dir = tempfile::tempdir().unwrap();
    assert_order_free(
        dir.path(),
        &[
            "--clients",
            "300",
            "--distinct-paths",
            "8000",
            "--scanners",
            "2",
        ],
    );
}

#[test]
fn figures_on_many_clients_do_not_depend_on_order_chunks_or_threads() {
    let dir = tempfile::tempdir().unwrap();
    assert_order_free(dir.path(), &["--clients", "20000"]);
}
