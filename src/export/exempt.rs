//! Exemptions in exports: what every exporter shares about them (checking an
//! exemption's method, route and client, describing it), so that no export
//! silently limits a request the policy exempts.

use super::ExportError;
use crate::policy::Exemption;

/// The exemption's method in upper case, refused when it is not a method name.
pub fn method(e: &Exemption) -> Result<Option<String>, ExportError> {
    let Some(m) = &e.method else {
        return Ok(None);
    };
    let valid = !m.is_empty()
        && m.len() <= 32
        && m.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !valid {
        return Err(ExportError::Rule {
            rule: e.name.clone(),
            message: format!("method {m:?} is not an HTTP method name"),
        });
    }
    Ok(Some(m.to_ascii_uppercase()))
}

/// The exemption's route regex, refused with control characters (as rules' are).
pub fn route(e: &Exemption) -> Result<Option<&str>, ExportError> {
    super::route_text(&e.name, e.route.as_ref())
}

/// The exemption's client, refused when it holds a control character or a
/// line break (no request attribute a gateway matches does, and several
/// configuration formats cannot quote them).
pub fn client(e: &Exemption) -> Result<Option<&str>, ExportError> {
    let Some(c) = e.client.as_deref() else {
        return Ok(None);
    };
    if c.chars()
        .any(|ch| ch.is_control() || matches!(ch, '\u{2028}' | '\u{2029}'))
    {
        return Err(ExportError::Rule {
            rule: e.name.clone(),
            message:
                "the client holds a control character or line break, which no gateway can match"
                    .into(),
        });
    }
    Ok(Some(c))
}

/// The exemption's client as one value per part of its key of `parts` parts
/// (a key of several parts joins its values with `+`); `target` names the
/// product that needs them apart.
pub fn client_values<'a>(
    e: &Exemption,
    client: &'a str,
    parts: usize,
    target: &'static str,
) -> Result<Vec<&'a str>, ExportError> {
    let values: Vec<&str> = if parts == 1 {
        vec![client]
    } else {
        client.split('+').collect()
    };
    if values.len() != parts {
        return Err(ExportError::Unsupported {
            target,
            rule: e.name.clone(),
            message: format!(
                "client {client:?} does not split into one value per part of key {} (parts joined by +)",
                e.key.text
            ),
        });
    }
    Ok(values)
}

/// One line saying what an exemption covers (for a comment).
pub fn describe(e: &Exemption) -> String {
    let mut what = Vec::new();
    if let Some(m) = &e.method {
        what.push(format!("method {m}"));
    }
    if let Some(r) = &e.route {
        what.push(format!("paths matching {}", r.as_str()));
    }
    if let Some(c) = &e.client {
        what.push(format!("client {c} (key {})", e.key.text));
    }
    format!("exempt `{}`: {}, never limited", e.name, what.join(", "))
}
