//! The real engines some tests compare against, found in one place:
//! [`require`] returns where an [`Engine`] is, or `None` after recording that
//! the calling test checks nothing; when `RLCTL_REQUIRE_ENGINES` is set (as
//! `.ci/run` sets it in CI) it panics instead, so a missing engine fails CI.
//!
//! Why a report at exit: `cargo test` captures what a passing test prints, so
//! a `SKIPPED` line inside the test is invisible and the run says "64 passed"
//! while several tests checked nothing. The first skip registers a C `atexit`
//! handler, which runs after libtest has printed its `test result:` line (the
//! process's last act, outside any capture) and prints, right under it, which
//! engines were missing and which tests they left unchecked. One line per
//! skip is also printed inside the test, for `--nocapture` runs.
//!
//! `RLCTL_HIDE_ENGINES=nginx,duckdb` makes the named engines count as missing
//! (to see what a machine without them runs); `RLCTL_REALDATA=DIR` points at
//! the third-party logs when they are not in `../shared/realdata`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, Once, OnceLock};

/// Something a test needs from the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Engine {
    /// The nginx binary (`/usr/sbin/nginx` or on PATH).
    Nginx,
    /// The haproxy binary.
    Haproxy,
    /// The redis-server binary.
    Redis,
    /// Chromium, on PATH (for scripts/screenshot-html.sh).
    Chromium,
    /// The Prometheus server (Debian package `prometheus`).
    Prometheus,
    /// A way to run a command that file modes apply to: as root, `setpriv`
    /// dropping the permission overrides (returns `setpriv`); otherwise
    /// nothing is needed (returns an empty path).
    Unprivileged,
    /// The Python with the `duckdb` package; [`require`] returns that Python.
    DuckDb,
    /// The Python with `chdb` (ClickHouse in process).
    ClickHouse,
    /// The Python with `pyspark`, and a `java` to run it.
    Spark,
    /// The Python with `sqlglot` (checks the Trino and BigQuery queries).
    Sqlglot,
    /// Root and `mount`, to mount a small tmpfs (a full disk); returns `mount`.
    Tmpfs,
    /// The third-party logs of `../shared/realdata`; returns the directory.
    RealData,
    /// The Go toolchain (Debian package `golang-go`), for its `net/url`.
    Go,
}

impl Engine {
    /// The name used in notices and in `RLCTL_HIDE_ENGINES`.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Nginx => "nginx",
            Engine::Haproxy => "haproxy",
            Engine::Redis => "redis-server",
            Engine::Chromium => "chromium",
            Engine::Prometheus => "prometheus",
            Engine::Unprivileged => "setpriv",
            Engine::DuckDb => "duckdb",
            Engine::ClickHouse => "chdb",
            Engine::Spark => "pyspark",
            Engine::Sqlglot => "sqlglot",
            Engine::Tmpfs => "tmpfs",
            Engine::RealData => "realdata",
            Engine::Go => "go",
        }
    }

    /// How to get it.
    fn hint(self) -> &'static str {
        match self {
            Engine::Nginx
            | Engine::Haproxy
            | Engine::Redis
            | Engine::Chromium
            | Engine::Prometheus => "apt-get install it, or run `bash .ci/run` as root",
            Engine::Go => "apt-get install golang-go, or run `bash .ci/run` as root",
            Engine::DuckDb | Engine::ClickHouse | Engine::Spark | Engine::Sqlglot => {
                "`bash .ci/run` installs the Python engines in ~/.cache/rlctl-venv; or set RLCTL_PYTHON"
            }
            Engine::Tmpfs => "run the tests as root, where mount -t tmpfs is allowed",
            Engine::Unprivileged => "install util-linux (setpriv), or run the tests as a user",
            Engine::RealData => {
                "the third-party logs live beside the clone in ../shared/realdata (or set RLCTL_REALDATA)"
            }
        }
    }

    /// Where it is, or why it is missing.
    fn locate(self) -> Result<PathBuf, String> {
        let hidden = std::env::var("RLCTL_HIDE_ENGINES").unwrap_or_default();
        if hidden.split(',').any(|h| h.trim() == self.name()) {
            return Err("hidden by RLCTL_HIDE_ENGINES".into());
        }
        let not_installed = || format!("{} is not installed", self.name());
        match self {
            Engine::Nginx => binary(&["/usr/sbin/nginx"], &["nginx"]).ok_or_else(not_installed),
            Engine::Haproxy => {
                binary(&["/usr/sbin/haproxy"], &["haproxy"]).ok_or_else(not_installed)
            }
            Engine::Redis => {
                binary(&["/usr/bin/redis-server"], &["redis-server"]).ok_or_else(not_installed)
            }
            Engine::Chromium => {
                binary(&[], &["chromium", "chromium-browser"]).ok_or_else(not_installed)
            }
            Engine::Prometheus => {
                binary(&["/usr/bin/prometheus"], &["prometheus"]).ok_or_else(not_installed)
            }
            Engine::Go => {
                binary(&["/usr/bin/go", "/usr/lib/go/bin/go"], &["go"]).ok_or_else(not_installed)
            }
            Engine::Unprivileged if !is_root() => Ok(PathBuf::new()),
            Engine::Unprivileged => binary(&["/usr/bin/setpriv"], &["setpriv"]).ok_or_else(|| {
                "setpriv (to drop root's permission overrides) is not installed".into()
            }),
            Engine::DuckDb => python_with("duckdb"),
            Engine::ClickHouse => python_with("chdb"),
            Engine::Sqlglot => python_with("sqlglot"),
            Engine::Spark => {
                let python = python_with("pyspark")?;
                let java = Command::new("java").arg("-version").output();
                match java {
                    Ok(out) if out.status.success() => Ok(python),
                    _ => Err("java (which pyspark needs) is not installed".into()),
                }
            }
            Engine::Tmpfs => {
                if !is_root() {
                    return Err("mounting a tmpfs needs root".into());
                }
                binary(&["/usr/bin/mount", "/bin/mount"], &["mount"])
                    .ok_or_else(|| "mount is not installed".into())
            }
            Engine::RealData => {
                let dir = match std::env::var_os("RLCTL_REALDATA") {
                    Some(dir) => PathBuf::from(dir),
                    None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/realdata"),
                };
                if dir.is_dir() {
                    Ok(dir)
                } else {
                    Err(format!("{} is absent", dir.display()))
                }
            }
        }
    }
}

/// Where `engine` is, or `None` when it is missing: the calling test then
/// returns at once, and the skip is reported under the test summary. Panics
/// instead when `RLCTL_REQUIRE_ENGINES` is set.
pub fn require(engine: Engine) -> Option<PathBuf> {
    static FOUND: OnceLock<Mutex<HashMap<Engine, Result<PathBuf, String>>>> = OnceLock::new();
    let found = FOUND.get_or_init(Default::default);
    let located = {
        let mut cache = found.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .entry(engine)
            .or_insert_with(|| engine.locate())
            .clone()
    };
    match located {
        Ok(path) => Some(path),
        Err(why) => {
            skip(engine, &why);
            None
        }
    }
}

/// A third-party log of `../shared/realdata`, or `None` (see [`require`]).
pub fn realdata(name: &str) -> Option<PathBuf> {
    let path = require(Engine::RealData)?.join(name);
    if path.exists() {
        return Some(path);
    }
    skip(Engine::RealData, &format!("{} is absent", path.display()));
    None
}

/// Records that the current test checks nothing because `engine` is missing
/// (`why`), or panics when `RLCTL_REQUIRE_ENGINES` is set, unless it is the
/// third-party logs: those are not installed by anything, and a test on them
/// is skipped wherever they are absent. For a test that finds out late (a
/// tmpfs that does not mount); others call [`require`].
pub fn skip(engine: Engine, why: &str) {
    let test = std::thread::current()
        .name()
        .filter(|name| *name != "main")
        .unwrap_or("a test")
        .to_owned();
    let name = engine.name();
    let hint = engine.hint();
    if std::env::var_os("RLCTL_REQUIRE_ENGINES").is_some() && engine != Engine::RealData {
        panic!("{test} needs {name}: {why}; RLCTL_REQUIRE_ENGINES is set, so that fails ({hint})");
    }
    println!("SKIPPED {test}: needs {name}: {why} ({hint})");
    SKIPS.lock().unwrap_or_else(|e| e.into_inner()).push(Skip {
        engine,
        why: why.to_owned(),
        test,
    });
    static REGISTER: Once = Once::new();
    // SAFETY: atexit is the C library's; the handler never unwinds (see below).
    REGISTER.call_once(|| unsafe {
        atexit(report_skips);
    });
}

struct Skip {
    engine: Engine,
    why: String,
    test: String,
}

static SKIPS: Mutex<Vec<Skip>> = Mutex::new(Vec::new());

unsafe extern "C" {
    fn atexit(callback: extern "C" fn()) -> std::ffi::c_int;
}

/// Prints the skips under libtest's summary. Runs at process exit, after the
/// test threads are done; it must not panic (it runs inside C code).
extern "C" fn report_skips() {
    use std::collections::{BTreeMap, BTreeSet};
    use std::fmt::Write as _;
    let Ok(skips) = SKIPS.lock() else { return };
    let mut by_engine: BTreeMap<Engine, (&str, BTreeSet<&str>)> = BTreeMap::new();
    for skip in skips.iter() {
        let entry = by_engine
            .entry(skip.engine)
            .or_insert((&skip.why, BTreeSet::new()));
        entry.1.insert(&skip.test);
    }
    let tests: BTreeSet<&str> = skips.iter().map(|s| s.test.as_str()).collect();
    if tests.is_empty() {
        return;
    }
    let mut out = format!(
        "\nSKIPPED: {} test(s) above passed without checking anything, because these are missing:\n",
        tests.len()
    );
    for (engine, (why, tests)) in by_engine {
        let tests: Vec<&str> = tests.into_iter().collect();
        let _ = writeln!(
            out,
            "  {}: {why} ({})\n    unchecked: {}",
            engine.name(),
            engine.hint(),
            tests.join(", ")
        );
    }
    out.push_str(
        "  Set RLCTL_REQUIRE_ENGINES=1 to make a missing engine fail the run (CI does).\n\n",
    );
    let _ = std::io::Write::write_all(&mut std::io::stderr(), out.as_bytes());
}

/// The first of `paths` that is a file, else the first of `names` on PATH.
fn binary(paths: &[&str], names: &[&str]) -> Option<PathBuf> {
    let on_path: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect())
        .unwrap_or_default();
    let candidates = paths.iter().map(PathBuf::from).chain(
        on_path
            .iter()
            .flat_map(|dir| names.iter().map(move |name| dir.join(name))),
    );
    candidates.into_iter().find(|p| p.is_file())
}

/// The Python of the tests: `$RLCTL_PYTHON`, else the venv `.ci/run` makes,
/// else `python3`.
pub fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("RLCTL_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".cache/rlctl-venv/bin/python"))
        .filter(|p| p.is_file());
    venv.unwrap_or_else(|| PathBuf::from("python3"))
}

/// [`python`] when it can import `module`.
fn python_with(module: &str) -> Result<PathBuf, String> {
    let py = python();
    let imported = Command::new(&py)
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if imported {
        Ok(py)
    } else {
        Err(format!(
            "{} cannot import the Python package {module}",
            py.display()
        ))
    }
}

/// Whether this process runs as root (effective uid 0, from /proc).
fn is_root() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        == Some("0")
}
