//! End-to-end cases as data: each `tests/cases/*.toml` names the arguments, the
//! input files, and what must come out, so a new log-format regression needs no
//! new Rust code.
//!
//! ```toml
//! description = "what this case proves"
//! args = ["analyze", "-q", "--format", "json", "{dir}/access.log"]
//! exit = 0                                   # default 0
//! stdout_contains = ["..."]                  # optional
//! stderr_contains = ["..."]                  # optional
//! stdout_lacks = ["..."]                     # optional: must not appear
//! stderr_lacks = ["..."]                     # optional: must not appear
//! [files]
//! "access.log" = '''...'''                   # written into {dir}
//! [json]                                     # JSON pointers into stdout → expected values
//! "/input/parsed" = 3
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::rlctl;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    description: String,
    args: Vec<String>,
    #[serde(default)]
    exit: i32,
    #[serde(default)]
    files: BTreeMap<String, String>,
    #[serde(default)]
    stdout_contains: Vec<String>,
    #[serde(default)]
    stderr_contains: Vec<String>,
    #[serde(default)]
    stdout_lacks: Vec<String>,
    #[serde(default)]
    stderr_lacks: Vec<String>,
    #[serde(default)]
    json: BTreeMap<String, toml::Value>,
}

/// An expected value, with `{dir}` in strings replaced by the case's directory.
fn to_json(value: &toml::Value, dir: &str) -> serde_json::Value {
    match value {
        toml::Value::String(s) => serde_json::Value::String(s.replace("{dir}", dir)),
        other => serde_json::to_value(other).expect("TOML values convert to JSON"),
    }
}

fn run_case(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let case: Case = toml::from_str(&text).map_err(|e| format!("bad case file: {e}"))?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    for (name, content) in &case.files {
        std::fs::write(dir.path().join(name), content).map_err(|e| e.to_string())?;
    }
    let dir_text = dir.path().display().to_string();
    let args: Vec<String> = case
        .args
        .iter()
        .map(|a| a.replace("{dir}", &dir_text))
        .collect();
    // A case that never ends (a watch whose verdict never comes) fails.
    let out = rlctl()
        .args(&args)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let context = || {
        format!(
            "{}\nargs: {args:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
            case.description
        )
    };
    if out.status.code().is_none() {
        return Err(format!(
            "killed: ran for 60 s or met a signal\n{}",
            context()
        ));
    }
    if out.status.code() != Some(case.exit) {
        return Err(format!(
            "exit {:?}, expected {}\n{}",
            out.status.code(),
            case.exit,
            context()
        ));
    }
    for needle in &case.stdout_contains {
        if !stdout.contains(needle.as_str()) {
            return Err(format!("stdout lacks {needle:?}\n{}", context()));
        }
    }
    for needle in &case.stdout_lacks {
        if stdout.contains(needle.as_str()) {
            return Err(format!("stdout has {needle:?}\n{}", context()));
        }
    }
    for needle in &case.stderr_contains {
        if !stderr.contains(needle.as_str()) {
            return Err(format!("stderr lacks {needle:?}\n{}", context()));
        }
    }
    for needle in &case.stderr_lacks {
        if stderr.contains(needle.as_str()) {
            return Err(format!("stderr has {needle:?}\n{}", context()));
        }
    }
    if !case.json.is_empty() {
        let doc: serde_json::Value = serde_json::from_str(&stdout)
            .map_err(|e| format!("stdout is not JSON: {e}\n{}", context()))?;
        for (pointer, expected) in &case.json {
            let got = doc.pointer(pointer);
            if got != Some(&to_json(expected, &dir_text)) {
                return Err(format!(
                    "{pointer} = {got:?}, expected {expected}\n{}",
                    context()
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn every_case_file_passes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    assert!(
        paths.len() >= 10,
        "expected the case files in {}",
        dir.display()
    );
    let failures: Vec<String> = paths
        .iter()
        .filter_map(|p| {
            run_case(p)
                .err()
                .map(|e| format!("--- {}: {e}", p.file_name().unwrap().to_string_lossy()))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        paths.len(),
        failures.join("\n")
    );
}
