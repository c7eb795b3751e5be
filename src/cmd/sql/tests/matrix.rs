//! Every combination of the optional columns and modes (`--method`,
//! `--route`, `--status`, `--endpoint`, `--path`, `--combined`,
//! `--sample-keys`) in every dialect: each query is well formed as far as its
//! CASE expressions go (no `CASE ELSE`, no `CASE END`, every CASE closed). The
//! queries' results are checked on real engines in tests/cli/scale/matrix.rs.

use super::*;

/// The words of `sql`: runs of letters, digits and `_`.
fn words(sql: &str) -> Vec<&str> {
    sql.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect()
}

/// Panics unless every CASE in `sql` has a WHEN arm and is closed by an END.
fn assert_well_formed_cases(sql: &str, what: &str) {
    let words = words(sql);
    let mut open = 0usize;
    for (i, pair) in words.windows(2).enumerate() {
        if pair[0].eq_ignore_ascii_case("CASE") {
            assert!(
                pair[1].eq_ignore_ascii_case("WHEN"),
                "{what}: `CASE {}` (word {i}) in\n{sql}",
                pair[1]
            );
        }
    }
    for w in &words {
        if w.eq_ignore_ascii_case("CASE") {
            open += 1;
        } else if w.eq_ignore_ascii_case("END") {
            assert!(open > 0, "{what}: END without CASE in\n{sql}");
            open -= 1;
        }
    }
    assert_eq!(open, 0, "{what}: a CASE is never closed in\n{sql}");
}

/// Every set of the optional flags (each on or off), as `rlctl sql` arguments
/// after `--dialect D --table events --time ts_ms --client client`.
fn flag_sets() -> Vec<Vec<&'static str>> {
    let options: [&[&'static str]; 7] = [
        &["--path", "path"],
        &["--method", "method"],
        &["--route", "^/api/search=search"],
        &["--status", "status"],
        &["--endpoint", "endpoint"],
        &["--combined"],
        &["--sample-keys", "5%"],
    ];
    (0..1u32 << options.len())
        .map(|bits| {
            options
                .iter()
                .enumerate()
                .filter(|(i, _)| bits & (1 << i) != 0)
                .flat_map(|(_, flags)| flags.iter().copied())
                .collect()
        })
        .collect()
}

#[test]
fn every_combination_of_optional_columns_gives_well_formed_cases() {
    let mut checked = 0;
    for dialect in DIALECTS {
        for flags in flag_sets() {
            let has = |flag: &str| flags.contains(&flag);
            if !has("--path") && !has("--endpoint") || has("--combined") && has("--sample-keys") {
                continue; // clap requires one of the first two, rejects the last two together
            }
            let mut argv = vec!["--dialect", dialect];
            argv.extend(&flags);
            let what = format!("{dialect} {}", flags.join(" "));
            let result = queries(&args(&argv));
            if has("--endpoint") && has("--route") {
                assert!(result.is_err(), "{what}: --route with --endpoint");
                continue;
            }
            let (qs, rate) = result.unwrap_or_else(|e| panic!("{what}: {e}"));
            let expected = if has("--sample-keys") {
                vec!["sample"]
            } else if has("--combined") {
                vec!["combined"]
            } else {
                RESULT_TABLES.iter().map(|t| t.0).collect()
            };
            let names: Vec<&str> = qs.iter().map(|q| q.name.as_str()).collect();
            assert_eq!(names, expected, "{what}");
            assert_eq!(rate.is_some(), has("--sample-keys"), "{what}");
            for q in &qs {
                assert_well_formed_cases(&q.sql, &format!("{what}: {}", q.name));
                // Each flag shows in the query, so the matrix covers what it claims.
                let prelude = q.sql.split("\nev AS (").nth(1).unwrap();
                let routed = prelude.contains("'search'");
                assert_eq!(routed, has("--route"), "{what}: {}", q.name);
                let checks_method = prelude.contains("(invalid request)");
                assert_eq!(
                    checks_method,
                    has("--method") && !has("--endpoint"),
                    "{what}: {}",
                    q.name
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 400, "{checked} queries checked");
}

#[test]
fn paths_alone_are_the_normalised_path_without_a_case_around_it() {
    // The reported command: no --method, no --route.
    let (qs, _) = queries(&args(&["--dialect", "duckdb", "--path", "path"])).unwrap();
    let ev = qs[0].sql.split("\nev AS (").nth(1).unwrap();
    let endpoint = ev
        .split(" AS endpoint,")
        .next()
        .unwrap()
        .trim_start()
        .trim_start_matches("SELECT ts_ms, client, method, path, status,")
        .trim();
    assert!(
        endpoint.starts_with("CASE WHEN route_path = '' THEN '/' ELSE array_to_string("),
        "{endpoint}"
    );
    assert!(!qs[0].sql.contains("ELSE ELSE"));
}

#[test]
fn the_word_check_catches_an_armless_case() {
    let caught =
        |sql: &'static str| std::panic::catch_unwind(|| assert_well_formed_cases(sql, "t"));
    assert!(caught("SELECT CASE ELSE 1 END").is_err());
    assert!(caught("SELECT CASE\n      ELSE x END").is_err());
    assert!(caught("SELECT CASE WHEN a THEN 1 ELSE 2").is_err());
    assert!(caught("SELECT CASE WHEN a THEN 1 ELSE 2 END").is_ok());
}

#[test]
fn the_combined_query_pads_with_nulls_each_engine_accepts() {
    let (qs, _) = queries(&args(&[
        "--dialect",
        "clickhouse",
        "--path",
        "p",
        "--combined",
    ]))
    .unwrap();
    let sql = &qs[0].sql;
    assert!(
        sql.contains("CAST(NULL AS Nullable(Int64)) AS peak_window"),
        "{sql}"
    );
    assert!(!sql.contains("CAST(NULL AS Int64)"), "{sql}");
    let (qs, _) = queries(&args(&["--dialect", "spark", "--path", "p", "--combined"])).unwrap();
    assert!(qs[0].sql.contains("CAST(NULL AS BIGINT) AS peak_window"));
}
