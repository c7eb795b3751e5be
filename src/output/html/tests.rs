use super::*;
use crate::output::document::{Axis, Bar, Bin, ChartKind, Series};

const HOSTILE: &str = "<script>alert(\"x\")</script> & 'q' \x1b[2J http://evil.example/a.js";

/// A document with hostile text in every place text can go.
fn hostile_document() -> Document {
    let mut doc = Document::new(HOSTILE);
    doc.heading(HOSTILE);
    doc.heading("second");
    doc.paragraph(HOSTILE);
    doc.warning(HOSTILE);
    doc.facts(vec![("client", HOSTILE.to_string())]);
    let mut t = Table::new(&[HOSTILE, "n>"]);
    t.row(vec![HOSTILE.to_string(), "1".into()]);
    doc.table(t);
    let series = vec![Series {
        name: HOSTILE.into(),
        points: vec![(0.0, 1.0), (1.0, 2.0)],
    }];
    let lines = Chart::new(
        HOSTILE,
        Axis::linear(HOSTILE),
        Axis::linear(HOSTILE),
        ChartKind::Lines(series),
    )
    .hline(HOSTILE, 1.5)
    .vline(HOSTILE, 0.5);
    doc.chart(lines);
    let bars = vec![Bar {
        label: HOSTILE.into(),
        value: 3.0,
    }];
    doc.chart(Chart::new(
        HOSTILE,
        Axis::linear("n"),
        Axis::linear("path"),
        ChartKind::Bars(bars),
    ));
    doc
}

/// Every `&` starts one of the entities the escapers write.
fn ampersands_are_entities(html: &str) -> bool {
    html.match_indices('&').all(|(i, _)| {
        [
            "&lt;", "&gt;", "&amp;", "&quot;", "&#39;", "&apos;", "&#xfffd;",
        ]
        .iter()
        .any(|e| html[i..].starts_with(e))
    })
}

#[test]
fn hostile_text_is_escaped_everywhere() {
    let html = render(&hostile_document());
    assert!(!html.contains("<script"), "{html}");
    assert!(!html.contains('\x1b'));
    assert!(!html.contains("alert(\"x\")"));
    assert!(!html.contains("'q'"));
    assert!(ampersands_are_entities(&html));
    // The title, the heading, the paragraph... each shows the text, escaped.
    assert!(html.matches("&lt;script&gt;alert(&quot;x&quot;)").count() >= 8);
}

#[test]
fn nothing_is_loaded_from_anywhere() {
    let html = render(&hostile_document());
    for tag in [
        "<script",
        "<link",
        "<img",
        "<iframe",
        "<object",
        "<embed",
        "@import",
        "url(",
        " src=",
        "xlink:href",
    ] {
        assert!(!html.contains(tag), "{tag}");
    }
    // Links only point inside the page.
    assert!(
        html.match_indices("href=\"")
            .all(|(i, _)| html[i + 6..].starts_with('#'))
    );
    // The only web addresses are the hostile text (whole or cut), shown as text.
    let shown = regex::Regex::new(r"http://evil[.a-z/]*").unwrap();
    let without_text = shown.replace_all(&html, "");
    assert!(!without_text.contains("http://") && !without_text.contains("https://"));
    assert!(html.contains("content=\"default-src 'none'; style-src 'unsafe-inline'\""));
}

#[test]
fn rendering_is_deterministic() {
    let doc = hostile_document();
    assert_eq!(render(&doc), render(&doc));
    assert!(render(&doc).contains(&format!(
        "<meta name=\"generator\" content=\"rlctl {}\">",
        env!("CARGO_PKG_VERSION")
    )));
}

#[test]
fn contents_link_to_numbered_headings_and_csv_tables_stay_out() {
    let mut doc = Document::new("Report");
    doc.heading("One");
    doc.heading("Two");
    let mut csv = Table::new(&["hidden column"]).csv_only();
    csv.row(vec!["hidden cell".into()]);
    doc.table(csv);
    let html = render(&doc);
    assert!(html.contains("<li><a href=\"#section-2\">Two</a></li>"));
    assert!(html.contains("<h2 id=\"section-2\">Two</h2>"));
    assert!(!html.contains("hidden"));
    let mut single = Document::new("Report");
    single.heading("Only");
    assert!(!render(&single).contains("class=\"toc\""));
}

/// One chart of each kind, small enough to read in a snapshot.
fn small_report() -> Document {
    let mut doc = Document::new("Small report");
    doc.heading("Traffic");
    let series = vec![
        Series {
            name: "api".into(),
            points: vec![
                (1_700_000_000.0, 3.0),
                (1_700_000_600.0, 9.0),
                (1_700_001_200.0, 4.0),
            ],
        },
        Series {
            name: "login".into(),
            points: vec![
                (1_700_000_000.0, 1.0),
                (1_700_000_600.0, 2.0),
                (1_700_001_200.0, 1.5),
            ],
        },
    ];
    doc.chart(
        Chart::new(
            "Requests per second",
            Axis::time(),
            Axis::linear("req/s"),
            ChartKind::Lines(series),
        )
        .hline("api limit 10/s", 10.0),
    );
    doc.heading("Clients");
    let bins = vec![
        Bin {
            start: 1.0,
            end: 10.0,
            count: 40,
        },
        Bin {
            start: 10.0,
            end: 100.0,
            count: 7,
        },
        Bin {
            start: 100.0,
            end: 1000.0,
            count: 1,
        },
    ];
    doc.chart(
        Chart::new(
            "Per-client rates",
            Axis::log("req/min"),
            Axis::linear("clients"),
            ChartKind::Histogram(bins),
        )
        .vline("p99 = 120", 120.0)
        .vline("limit 600/1m", 600.0),
    );
    let bars = vec![
        Bar {
            label: "/api".into(),
            value: 1200.0,
        },
        Bar {
            label: "/login".into(),
            value: 300.0,
        },
    ];
    doc.chart(Chart::new(
        "Per endpoint",
        Axis::linear("requests"),
        Axis::linear("endpoint"),
        ChartKind::Bars(bars),
    ));
    doc
}

#[test]
fn small_report_snapshot() {
    let html = render(&small_report()).replace(env!("CARGO_PKG_VERSION"), "VERSION");
    insta::assert_snapshot!(html);
}
