//! The `#Fields:` header of W3C and CloudFront logs: the column names it
//! gives, the separator of the lines after it, and a later header that
//! names other columns.

use super::{ColumnsParser, Separator};
use crate::ingest::IngestError;
use crate::ingest::record::SkipReason;

/// The column names of a `#Fields:` header in `head`, if there is one.
pub fn header_fields(head: &[u8]) -> Option<Vec<String>> {
    head.split(|&b| b == b'\n').find_map(|line| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let names = line.strip_prefix(b"#Fields:")?;
        let names = String::from_utf8_lossy(names);
        Some(names.split_ascii_whitespace().map(str::to_string).collect())
    })
}

/// Column names in lower case (IIS writes them as its administrator did).
pub(super) fn lower_case(names: impl Iterator<Item = impl AsRef<str>>) -> Vec<String> {
    names.map(|n| n.as_ref().to_ascii_lowercase()).collect()
}

/// The separator of the first data line of `head` (tabs if it has any).
pub fn separator_of(head: &[u8]) -> Separator {
    let data = head
        .split(|&b| b == b'\n')
        .find(|l| !l.starts_with(b"#") && !l.trim_ascii().is_empty());
    match data {
        Some(line) if line.contains(&b'\t') => Separator::Tab,
        _ => Separator::Space,
    }
}

impl ColumnsParser {
    /// A `#Fields:` header that names other columns than the parser reads:
    /// when it follows headers, read as the header of the lines after it
    /// (the date the lines so far gave carries over), else skipped as a
    /// change of columns. New columns that cannot be read are skipped with
    /// why (no time, a `field:NAME` asked for missing).
    pub(super) fn take_header(&mut self, fields: &str) -> Result<(), SkipReason> {
        if !self.follows_headers {
            return Err(SkipReason::ColumnsChanged);
        }
        let names: Vec<String> = fields
            .split_ascii_whitespace()
            .map(str::to_string)
            .collect();
        let (layout, separator, time_of) = (self.layout, self.separator, self.time_of);
        let mut next =
            match ColumnsParser::new(layout, &names, separator, &self.extra_names, time_of) {
                Ok(next) => next,
                Err(IngestError::UnknownField { .. }) => {
                    return Err(SkipReason::ColumnsWithoutKeyField);
                }
                Err(IngestError::Format(_)) => return Err(SkipReason::ColumnsWithoutTime),
                Err(_) => return Err(SkipReason::ColumnsChanged),
            };
        if let (Some(dating), Some(next_dating)) = (self.dating, &mut next.dating) {
            *next_dating = dating;
        }
        next.follows_headers = true;
        next.initial = Some(
            self.initial
                .take()
                .unwrap_or_else(|| Box::new(self.clone())),
        );
        *self = next;
        Err(SkipReason::Directive)
    }
}
