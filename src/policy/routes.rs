//! Endpoint templates in policies. A rule's `template` (`/api/orders/:id`)
//! stands for the regex of that template ([`crate::discover::Template::regex`]:
//! a `:param` segment is one non-empty segment, a `:param` inside a segment
//! one or more ASCII letters or digits); exporters and the replay see that
//! regex as the rule's route. The policy's `routes` names the routes file
//! the templates come from, relative to the policy file: `simulate` and
//! `report` then name endpoints by it (unless `--routes` names another),
//! and every `template` must be one of the file's (the same paths, parameter
//! names aside), so a policy cannot drift from the routes it was written for.
//!
//! A rule matches every path its regex matches, as a `route` rule does: a
//! rule for `/api/orders/:id` also counts `/api/orders/search`, which a
//! routes file may name as an endpoint of its own. The precedence of a routes
//! file decides endpoint names, not which rules count a request (a gateway
//! checks every rule that matches).

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use super::{Policy, PolicyError};
use crate::discover::{Template, TemplateSet, routes_file};

/// The route regex of a rule's `template`.
pub fn template_regex(text: &str) -> Result<String, String> {
    Template::parse(text)
        .map(|t| t.regex())
        .map_err(|e| format!("bad template: {e}"))
}

/// Reads the routes file `policy` names (relative to `policy_path`), and
/// checks that every rule's template is one of its templates.
pub fn load(policy: &Policy, policy_path: &Path) -> Result<Option<TemplateSet>, PolicyError> {
    let origin = policy_path.display().to_string();
    let Some(name) = &policy.routes else {
        return Ok(None);
    };
    let fail = |message: String| PolicyError::Routes {
        path: origin.clone(),
        message,
    };
    let file = resolve(policy_path, name);
    let text =
        std::fs::read_to_string(&file).map_err(|e| fail(format!("{}: {e}", file.display())))?;
    let templates =
        routes_file::parse(&text, &file.display().to_string()).map_err(|e| fail(e.to_string()))?;
    let set = TemplateSet::new(templates);
    for rule in &policy.rules {
        let Some(Ok(wanted)) = rule.template.as_deref().map(Template::parse) else {
            continue; // no template, or a bad one the rule check reports
        };
        let listed = set
            .templates()
            .iter()
            .any(|t| t.precedence(&wanted) == Ordering::Equal);
        if !listed {
            return Err(PolicyError::Rule {
                path: origin.clone(),
                rule: rule.name.clone(),
                message: format!(
                    "template {wanted} is not in the routes file {}",
                    file.display()
                ),
            });
        }
    }
    Ok(Some(set))
}

/// `name` read relative to the directory of the policy file (as it is when absolute).
fn resolve(policy_path: &Path, name: &str) -> PathBuf {
    let name = Path::new(name);
    match policy_path.parent() {
        Some(dir) if name.is_relative() => dir.join(name),
        _ => name.to_path_buf(),
    }
}

/// How a policy written to `policy_path` names `routes_path`: relative to the
/// policy's directory when the routes file is under it, else absolute.
pub fn routes_reference(policy_path: &Path, routes_path: &Path) -> String {
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let routes = absolute(routes_path);
    let dir = absolute(policy_path)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let shown = routes.strip_prefix(&dir).unwrap_or(&routes);
    shown.to_string_lossy().replace('\\', "/")
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: &str = r#"
routes = "routes.txt"

[[rule]]
name = "global"
limit = "40/1m"

[[rule]]
name = "orders"
method = "GET"
template = "/api/orders/:order"
limit = "10/1m"

[[rule]]
name = "assets"
template = "/static/app.:hash.js"
exempt = true
"#;

    fn write(dir: &Path, policy: &str, routes: &str) -> PathBuf {
        std::fs::write(dir.join("routes.txt"), routes).unwrap();
        let path = dir.join("policy.toml");
        std::fs::write(&path, policy).unwrap();
        path
    }

    #[test]
    fn templates_are_routes_and_the_file_is_read_beside_the_policy() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            POLICY,
            "/api/orders/:id\n/api/orders/search\n/static/app.:hash.js\n",
        );
        let p = Policy::load_policy(&path).unwrap();
        assert_eq!(p.routes.as_ref().unwrap().templates().len(), 3);
        let orders = &p.rules[1];
        assert!(orders.matches("GET", "/api/orders/4f9c2a1e?x=1"));
        assert!(
            orders.matches("GET", "/api/orders/search"),
            "every path its regex matches"
        );
        assert!(!orders.matches("GET", "/api/orders/1/items"));
        assert!(!orders.matches("POST", "/api/orders/1"));
        let assets = &p.exemptions[0];
        assert!(assets.matches("GET", "/static/app.206277e0.js", None));
        assert!(!assets.matches("GET", "/static/app.a-b.js", None));
        // `load` (no exemptions) checks the routes file too.
        let limits_only = POLICY
            .split("\n[[rule]]\nname = \"assets\"")
            .next()
            .unwrap();
        let path = write(dir.path(), limits_only, "/api/orders/:id\n");
        assert_eq!(Policy::load(&path).unwrap().len(), 2);
        let path = write(dir.path(), limits_only, "/api/users/:id\n");
        assert!(Policy::load(&path).is_err());
    }

    #[test]
    fn a_template_missing_from_the_file_or_a_missing_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), POLICY, "/api/orders/:id\n");
        let err = Policy::load_policy(&path).unwrap_err().to_string();
        assert!(
            err.contains("rule `assets`: template /static/app.:hash.js is not in the routes file"),
            "{err}"
        );
        std::fs::remove_file(dir.path().join("routes.txt")).unwrap();
        let err = Policy::load_policy(&path).unwrap_err().to_string();
        assert!(err.contains("routes.txt"), "{err}");
        let path = write(dir.path(), POLICY, "/ok\nbad\n");
        let err = Policy::load_policy(&path).unwrap_err().to_string();
        assert!(err.contains("routes.txt:2: "), "{err}");
    }

    #[test]
    fn a_rule_takes_a_route_or_a_template() {
        let err = |text: &str| Policy::parse(text, "p.toml").unwrap_err().to_string();
        assert!(
            err("[[rule]]\nname='a'\nlimit='1/s'\nroute='^/a'\ntemplate='/a'").contains("not both")
        );
        assert!(err("[[rule]]\nname='a'\nlimit='1/s'\ntemplate='a/:id'").contains("bad template"));
        // Without a routes file the template alone decides.
        let rules =
            Policy::parse("[[rule]]\nname='a'\nlimit='1/s'\ntemplate='/a/:id'", "p").unwrap();
        assert!(rules[0].matches("GET", "/a/x"));
    }

    #[test]
    fn written_references_are_relative_when_beside_or_under_the_policy() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert_eq!(
            routes_reference(&d.join("p.toml"), &d.join("r.txt")),
            "r.txt"
        );
        assert_eq!(
            routes_reference(&d.join("p.toml"), &d.join("sub/r.txt")),
            "sub/r.txt"
        );
        let elsewhere = routes_reference(&d.join("a/p.toml"), &d.join("r.txt"));
        assert!(Path::new(&elsewhere).is_absolute(), "{elsewhere}");
        assert_eq!(resolve(&d.join("p.toml"), "r.txt"), d.join("r.txt"));
    }
}
