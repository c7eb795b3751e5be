//! Extraction of a named `log_format` from an nginx configuration.
//!
//! Handles what real configs contain: comments, formats split over several lines
//! as adjacent quoted strings, single and double quotes with backslash escapes,
//! and the `escape=default|json|none` parameter. It does not follow `include`.

use super::IngestError;
use super::log_escapes::LogEscape;

/// A `log_format` directive as found in a config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedFormat {
    pub name: String,
    /// How the values are escaped (`escape=default`, `json` or `none`).
    pub escape: LogEscape,
    /// The format string: the directive's quoted pieces, concatenated.
    pub format: String,
}

/// Splits config text into directives: each a list of words (quotes removed).
fn directives(conf: &str) -> Result<Vec<Vec<String>>, String> {
    let mut out = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut chars = conf.chars().peekable();
    let mut line = 1;
    while let Some(c) = chars.next() {
        match c {
            '\n' => line += 1,
            c if c.is_whitespace() => {}
            '#' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        line += 1;
                        break;
                    }
                }
            }
            ';' | '{' | '}' => {
                if !words.is_empty() {
                    out.push(std::mem::take(&mut words));
                }
            }
            '"' | '\'' => {
                let quote = c;
                let mut word = String::new();
                loop {
                    match chars.next() {
                        None => {
                            return Err(format!(
                                "unterminated {quote}string{quote} at line {line}"
                            ));
                        }
                        Some('\\') => match chars.next() {
                            Some(e @ ('"' | '\'' | '\\')) => word.push(e),
                            Some('n') => word.push('\n'),
                            Some('t') => word.push('\t'),
                            Some(other) => {
                                word.push('\\');
                                word.push(other);
                            }
                            None => return Err(format!("unterminated string at line {line}")),
                        },
                        Some(c) if c == quote => break,
                        Some(c) => {
                            if c == '\n' {
                                line += 1;
                            }
                            word.push(c);
                        }
                    }
                }
                words.push(word);
            }
            c => {
                let mut word = String::from(c);
                while let Some(&n) = chars.peek() {
                    if n.is_whitespace() || matches!(n, ';' | '{' | '}') {
                        break;
                    }
                    word.push(n);
                    chars.next();
                }
                words.push(word);
            }
        }
    }
    Ok(out)
}

/// Every `log_format` directive in `conf`.
pub fn log_formats(conf: &str) -> Result<Vec<NamedFormat>, String> {
    directives(conf)?
        .into_iter()
        .filter(|d| d.first().map(String::as_str) == Some("log_format") && d.len() >= 3)
        .map(|d| {
            let mut rest = &d[2..];
            let mut escape = LogEscape::Default;
            if let Some(e) = rest.first().and_then(|w| w.strip_prefix("escape=")) {
                escape =
                    LogEscape::parse(e).map_err(|e| format!("log_format {}: escape={e}", d[1]))?;
                rest = &rest[1..];
            }
            Ok(NamedFormat {
                name: d[1].clone(),
                escape,
                format: rest.concat(),
            })
        })
        .collect()
}

/// The `log_format` called `name` in `conf`; nginx's built-in `combined` when not
/// redefined.
pub fn find_log_format(conf: &str, name: &str) -> Result<NamedFormat, IngestError> {
    let formats = log_formats(conf).map_err(IngestError::Format)?;
    if let Some(found) = formats.iter().find(|f| f.name == name) {
        return Ok(found.clone());
    }
    if name == "combined" {
        return Ok(NamedFormat {
            name: name.into(),
            escape: LogEscape::Default,
            format: COMBINED.into(),
        });
    }
    let known: Vec<&str> = formats.iter().map(|f| f.name.as_str()).collect();
    Err(IngestError::Format(format!(
        "no log_format named `{name}` in the nginx config (found: {})",
        if known.is_empty() {
            "none".to_string()
        } else {
            known.join(", ")
        }
    )))
}

/// nginx's predefined `combined` format.
pub const COMBINED: &str = r#"$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent""#;

#[cfg(test)]
mod tests {
    use super::*;

    const CONF: &str = r#"
user www-data;
http {
    # log_format commented 'not this';
    log_format  main  '$remote_addr - $remote_user [$time_local] "$request" '
                      '$status $body_bytes_sent "$http_referer" '
                      "\"$http_user_agent\" \"$http_x_forwarded_for\"";
    log_format json escape=json '{"time":"$time_iso8601",'
        '"remote_addr":"$remote_addr","status":$status}';
    log_format rl '$msec $remote_addr "$request" $status $limit_req_status';
    access_log /var/log/nginx/access.log main;
}
"#;

    #[test]
    fn multi_line_mixed_quotes() {
        let f = find_log_format(CONF, "main").unwrap();
        assert_eq!(
            f.format,
            r#"$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" "$http_x_forwarded_for""#
        );
        assert_eq!(f.escape, LogEscape::Default);
    }

    #[test]
    fn escape_prefix_is_read() {
        let f = find_log_format(CONF, "json").unwrap();
        assert_eq!(f.escape, LogEscape::Json);
        assert_eq!(
            f.format,
            r#"{"time":"$time_iso8601","remote_addr":"$remote_addr","status":$status}"#
        );
    }

    #[test]
    fn missing_names_list_what_exists() {
        let err = find_log_format(CONF, "nope").unwrap_err().to_string();
        assert!(err.contains("main, json, rl"), "{err}");
        assert_eq!(find_log_format("", "combined").unwrap().format, COMBINED);
        assert!(find_log_format("log_format x 'unterminated", "x").is_err());
        let unknown = find_log_format("log_format x escape=html '$msec';", "x");
        assert_eq!(
            unknown.unwrap_err().to_string(),
            "log_format x: escape=`html`: expected default, json or none"
        );
    }
}
