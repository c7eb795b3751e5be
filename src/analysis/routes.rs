//! The routes file an analysis writes (`rlctl analyze --write-routes`): every
//! template it applied, each that collapsed paths with a note saying how many
//! and one example. Writing the file is the caller's.

use super::AnalyzeRun;
use crate::discover::TemplateSet;
use crate::discover::routes_file::{Line, format};

/// The templates as a routes file.
pub fn routes_text(run: &AnalyzeRun, set: &TemplateSet) -> String {
    let notes: Vec<Option<String>> = set
        .templates()
        .iter()
        .map(|t| {
            let text = t.to_string();
            run.template_uses
                .iter()
                .find(|u| u.template == text)
                .map(|u| format!("{} paths, e.g. {}", u.distinct_paths, u.example))
        })
        .collect();
    let lines: Vec<Line<'_>> = set
        .templates()
        .iter()
        .zip(notes)
        .map(|(template, note)| Line { template, note })
        .collect();
    format(
        &[
            "Endpoint templates written by `rlctl analyze --write-routes`; read with --routes.",
            "One path template per line; the first by precedence that matches a path wins.",
        ],
        &lines,
    )
}
