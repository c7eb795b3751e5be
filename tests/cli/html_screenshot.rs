//! The HTML report in a real browser: a report with one chart of each kind, a
//! long table and hostile log text is rendered through the library and
//! photographed by `scripts/screenshot-html.sh` in headless Chromium, at a
//! desktop and a phone width. The test proves the page renders to a non-trivial
//! picture; whether it *looks* right is the manual check the script describes
//! (set `RLCTL_SCREENSHOT_DIR` to keep the report and the PNGs). Without
//! chromium the test checks nothing, which `cargo test` reports under its
//! summary (a failure when `RLCTL_REQUIRE_ENGINES` is set).

use std::path::{Path, PathBuf};
use std::process::Command;

use rlctl::output::document::{Axis, Bar, Bin, Chart, ChartKind, Document, Series, Table};
use rlctl::output::html;

use crate::support::{Engine, require};

/// A PNG of the page at either width is at least this large: a blank or
/// error page compresses to a few kilobytes.
const MIN_PNG_BYTES: u64 = 40_000;

/// A deterministic pseudo-random sequence in `0..1`.
fn noise(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// One hour of traffic at 1 s resolution, with a burst, as a report would show it.
fn sample_document() -> Document {
    let start = 1_700_000_000.0;
    let mut rand = noise(7);
    let rps: Vec<(f64, f64)> = (0..3600)
        .map(|s| {
            let t = s as f64;
            let wave = 120.0 + 40.0 * (t / 600.0).sin();
            let burst = if (1500..1620).contains(&s) {
                180.0
            } else {
                0.0
            };
            (start + t, wave + burst + 25.0 * rand())
        })
        .collect();
    let mut doc = Document::new("rlctl report: access.log <script>alert(1)</script>");
    doc.facts(vec![
        ("log", "/var/log/nginx/access.log".to_string()),
        ("requests", "486,213".to_string()),
        ("clients", "1,942".to_string()),
        ("span", "2023-11-14 22:13:20 to 23:13:19 UTC".to_string()),
    ]);
    doc.warning("3 clients make 41% of the requests above p99.9: a limit at p99.9 would still let them through (see the client table)");
    doc.heading("Traffic over time");
    doc.chart(
        Chart::new(
            "Requests per second",
            Axis::time(),
            Axis::linear("requests/s"),
            ChartKind::Lines(vec![Series {
                name: "all clients".into(),
                points: rps,
            }]),
        )
        .hline("api rule: 300/s", 300.0)
        .hline("login rule: 250/s", 250.0),
    );
    doc.paragraph("The burst at 22:38 lasted two minutes and came from one client.");
    doc.heading("Per-client rates");
    let bins: Vec<Bin> = (0..40)
        .map(|i| {
            let lo = 10f64.powf(-1.0 + i as f64 * 0.1);
            let centre = 16.0 - i as f64;
            Bin {
                start: lo,
                end: lo * 10f64.powf(0.1),
                count: (900.0 * (-centre * centre / 40.0).exp()) as u64 + u64::from(i > 34),
            }
        })
        .collect();
    doc.chart(
        Chart::new(
            "Distribution of per-client peak rates",
            Axis::log("requests per client per minute"),
            Axis::log("clients"),
            ChartKind::Histogram(bins),
        )
        .vline("p99 = 180/min", 180.0)
        .vline("p99.9 = 640/min", 640.0)
        .vline("limit 600/1m", 600.0),
    );
    doc.heading("Rejected requests by algorithm");
    let algorithms = ["fixed window", "sliding log", "token bucket", "gcra"];
    let rejected = algorithms
        .iter()
        .enumerate()
        .map(|(k, name)| Series {
            name: (*name).into(),
            points: (0..60)
                .map(|m| {
                    let burst = if (25..27).contains(&m) {
                        900.0 / (k + 1) as f64
                    } else {
                        0.0
                    };
                    (
                        start + 60.0 * m as f64,
                        burst + 8.0 * (k as f64 + 1.0) * rand(),
                    )
                })
                .collect(),
        })
        .collect();
    doc.chart(Chart::new(
        "Rejected requests per minute",
        Axis::time(),
        Axis::linear("rejected/min"),
        ChartKind::Lines(rejected),
    ));
    doc.heading("Endpoints");
    let endpoints = [
        ("/api/v1/search", 182_331.0),
        ("/login", 91_004.0),
        ("/static/app.js", 64_220.0),
        ("/api/v1/items/{id}", 51_876.0),
        ("/<script>alert(\"x\")</script>&amp;", 4_120.0),
        (
            "/very/long/path/segment/that/goes/on/and/on/for/a/while/index.html",
            1_200.0,
        ),
    ];
    doc.chart(
        Chart::new(
            "Requests per endpoint",
            Axis::linear("requests"),
            Axis::linear("endpoint"),
            ChartKind::Bars(
                endpoints
                    .iter()
                    .map(|(l, v)| Bar {
                        label: (*l).into(),
                        value: *v,
                    })
                    .collect(),
            ),
        )
        .vline("alert at 150k", 150_000.0),
    );
    let mut table = Table::new(&["client", "user agent", "requests>", "p99 req/min>"]);
    for i in 0..12 {
        table.row(vec![
            format!("203.0.113.{i}"),
            if i == 3 {
                "Mozilla/5.0 \x1b[2J<img src=https://evil.example/x.png>&quot;".to_string()
            } else {
                format!("curl/8.{i}.0 (x86_64-pc-linux-gnu) libcurl/8.{i}.0 OpenSSL/3.0.11 zlib/1.2.13 brotli/1.0.9 zstd/1.5.4 libidn2/2.3.3")
            },
            format!("{}", 12_000 - i * 731),
            format!("{}", 640 - i * 37),
        ]);
    }
    doc.table(table);
    doc
}

#[test]
fn html_report_renders_in_chromium_at_desktop_and_phone_widths() {
    if require(Engine::Chromium).is_none() {
        return;
    }
    let temp = tempfile::tempdir().unwrap();
    let dir =
        std::env::var_os("RLCTL_SCREENSHOT_DIR").map_or(temp.path().to_path_buf(), PathBuf::from);
    std::fs::create_dir_all(&dir).unwrap();
    let report = dir.join("report.html");
    std::fs::write(&report, html::render(&sample_document())).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/screenshot-html.sh");
    let output = Command::new("bash")
        .arg(&script)
        .arg(&report)
        .arg(dir.join("report"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    for name in ["report-wide.png", "report-narrow.png"] {
        let png = dir.join(name);
        let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("{}: {e}", png.display()));
        assert!(
            bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
            "{name} is not a PNG"
        );
        assert!(
            bytes.len() as u64 > MIN_PNG_BYTES,
            "{name} is only {} bytes: a blank page?",
            bytes.len()
        );
    }
}
