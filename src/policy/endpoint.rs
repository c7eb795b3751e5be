//! The rules `analyze --write-policy` makes of endpoints: the method and
//! route that select an endpoint, its rule name, and whether it is a static
//! file (which rarely wants a limit of its own).

/// The method (none for a path alone, from a log without methods) and route
/// regex that select an endpoint named like `GET /api/users/:id`,
/// `GET /static/app.:hash.js` or `/api/users/:id` (its path read as a
/// template: see [`crate::discover::template`]).
pub fn endpoint_match(endpoint: &str) -> Option<(Option<String>, String)> {
    let (method, path) = crate::discover::method_and_path(endpoint)?;
    let template = crate::discover::Template::parse(path).ok()?;
    let method = (!method.is_empty()).then(|| method.to_string());
    Some((method, template.regex()))
}

/// File extensions of static assets (scripts, styles, images, fonts).
const STATIC_EXTENSIONS: [&str; 16] = [
    "js", "mjs", "css", "map", "png", "jpg", "jpeg", "gif", "svg", "webp", "avif", "ico", "woff",
    "woff2", "ttf", "txt",
];

/// Whether an endpoint (`GET /static/app.js`) names a static file.
pub fn is_static_asset(endpoint: &str) -> bool {
    let last = endpoint.rsplit('/').next().unwrap_or_default();
    last.rsplit_once('.')
        .is_some_and(|(_, ext)| STATIC_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()))
}

/// A rule name made of an endpoint's letters and digits (`GET /api/users/:id` → `get-api-users-id`).
pub fn rule_name(endpoint: &str) -> String {
    let mut name = String::new();
    for c in endpoint.chars() {
        if c.is_ascii_alphanumeric() {
            name.push(c.to_ascii_lowercase());
        } else if !name.ends_with('-') && !name.is_empty() {
            name.push('-');
        }
    }
    let name = name.trim_end_matches('-');
    match (endpoint == "/" || endpoint.ends_with(" /"), name.is_empty()) {
        (true, true) => "root".to_string(),
        (true, false) => format!("{name}-root"),
        (false, _) => name.to_string(),
    }
}
