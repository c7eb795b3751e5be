//! The path templates of a routes file (`rlctl sql --routes FILE`) in SQL, so
//! that the engine names endpoints as `rlctl analyze --routes FILE` does
//! ([`crate::discover::template`] defines the matching):
//!
//! - templates match the normalised path (ids already `:id`), as the local
//!   run maps endpoint names, never the path as logged;
//! - they are tried in precedence order, the first match wins: the WHEN arms
//!   of one CASE, each the template's regex (a `:param` segment is `[^/]+`, a
//!   `:param` inside a segment `[A-Za-z0-9]+`, the rest literal; anchored
//!   with `^` and `\z`);
//! - a template with a pattern segment (`app.:hash.js`) also takes a path that
//!   is its own text, as [`crate::discover::TemplateSet::find`] does;
//! - an endpoint that a `--route` rule's NAME spells (`GET /api/x`) keeps its
//!   name, as the local run leaves routed names alone.
//!
//! Literal characters are escaped with a backslash before punctuation, which
//! Java (Spark, Trino) and RE2 (DuckDB, ClickHouse, BigQuery) both read as the
//! character itself.

use super::dialect::SqlDialect;
use crate::discover::Template;

/// `path` (a normalised path) mapped onto the first template that matches
/// it, else left as it is; `path` itself when there is no template.
pub fn templated(d: &dyn SqlDialect, path: &str, templates: &[Template]) -> String {
    if templates.is_empty() {
        return path.to_string();
    }
    let mut arms = String::new();
    for t in templates {
        let text = d.string(&t.to_string());
        let matches = d.matches(path, &t.anchored_regex(r"\z"));
        let test = if t.has_patterns() {
            format!("{path} = {text} OR {matches}")
        } else {
            matches
        };
        arms.push_str(&format!("\n        WHEN {test} THEN {text}"));
    }
    format!("CASE{arms}\n        ELSE {path}\n      END")
}

/// The `--route` names that spell an endpoint (`GET /api/x`): the local run
/// leaves endpoints so named as they are.
pub fn routed_endpoints<'a>(names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = names
        .filter(|n| crate::discover::method_and_path(n).is_some())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::sql::duckdb::DuckDb;

    fn t(s: &str) -> Template {
        Template::parse(s).unwrap()
    }

    #[test]
    fn arms_follow_precedence_and_patterns_take_their_own_text() {
        let set = crate::discover::TemplateSet::new(vec![
            t("/s/:file"),
            t("/s/app.:hash.js"),
            t("/a+b/:id"),
        ]);
        let sql = templated(&DuckDb, "norm_path", set.templates());
        let app = sql.find("'/s/app.:hash.js'").unwrap();
        let file = sql.find("'/s/:file'").unwrap();
        assert!(app < file, "{sql}");
        assert!(sql.contains(r"regexp_matches(norm_path, '^/a\+b/[^/]+\z') THEN '/a+b/:id'"));
        assert!(sql.contains(
            r"norm_path = '/s/app.:hash.js' OR regexp_matches(norm_path, '^/s/app\.[A-Za-z0-9]+\.js\z')"
        ));
        assert!(sql.trim_end().ends_with("ELSE norm_path\n      END"));
        assert_eq!(templated(&DuckDb, "p", &[]), "p");
    }

    #[test]
    fn only_names_that_spell_an_endpoint_are_kept() {
        let names = ["search", "GET /a/:id", "GET /a/:id", "get /x", "POST /"];
        assert_eq!(
            routed_endpoints(names.into_iter()),
            vec!["GET /a/:id", "POST /"]
        );
    }
}
