//! Mapping a table's endpoints onto templates: each distinct path is matched
//! once, the endpoints are renamed (`METHOD template`) and the templates that
//! collapsed more than one path are tallied for the report.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::paths::{NO_PATH, Paths};
use super::{TemplateSet, TemplateUse};
use crate::events::{EventTable, Id, Interner};

/// The endpoint names a table's endpoints map to, and the template uses.
pub(super) struct Mapping {
    /// Per endpoint id, its id among `names`.
    map: Vec<Id>,
    names: Interner,
    uses: Vec<TemplateUse>,
}

impl Mapping {
    /// Renames the table's endpoints; returns the template uses.
    pub(super) fn rewrite(self, table: &mut EventTable) -> Vec<TemplateUse> {
        table
            .endpoint
            .par_iter_mut()
            .for_each(|e| *e = self.map[*e as usize]);
        table.endpoints = self.names;
        self.uses
    }
}

pub(super) fn mapping(table: &EventTable, paths: &Paths, templates: &TemplateSet) -> Mapping {
    let texts: Vec<String> = templates
        .templates()
        .iter()
        .map(|t| t.to_string())
        .collect();
    // Per endpoint standing for a path: its template, matched once; the
    // templates' uses are tallied in the same pass, while the path is at hand
    // (in ranges whose tallies then add up: the better example of two is the
    // same whichever range saw it first).
    let mut template = vec![NO_TEMPLATE; paths.owner.len()];
    let tallies = template
        .par_iter_mut()
        .enumerate()
        .with_min_len(1 << 14)
        .fold(
            || vec![(0, 0, None); texts.len()],
            |mut per: Vec<TemplateTally>, (e, t)| {
                let e = e as Id;
                if paths.is_owner(e) {
                    let path = paths.owner_path(e);
                    if let Some(found) = templates.find_index(path) {
                        *t = found as u32;
                        let requests = u64::from(paths.requests[e as usize]);
                        let example = (!path.contains(':'), requests, path);
                        add_to_tally(&mut per[found], (requests, 1, Some(example)));
                    }
                }
                per
            },
        )
        .reduce(
            || vec![(0, 0, None); texts.len()],
            |mut a, b| {
                for (slot, other) in a.iter_mut().zip(b) {
                    add_to_tally(slot, other);
                }
                a
            },
        );
    let mut names = Interner::default();
    let mut renamed: FxHashMap<(&str, u32), Id> = FxHashMap::default();
    let mut map: Vec<Id> = Vec::with_capacity(paths.owner.len());
    for (e, name) in table.endpoints.names().enumerate() {
        let owner = paths.owner[e];
        let t = if owner == NO_PATH {
            NO_TEMPLATE
        } else {
            template[owner as usize]
        };
        let id = if t == NO_TEMPLATE {
            names.intern(name)
        } else {
            // A name with a path is `METHOD /path` (see `Paths`).
            let method = &name[..name.bytes().position(|b| b == b' ').unwrap_or(0)];
            *renamed
                .entry((method, t))
                .or_insert_with(|| names.intern(&format!("{method} {}", texts[t as usize])))
        };
        map.push(id);
    }
    let uses = template_uses(tallies, &texts);
    Mapping { map, names, uses }
}

/// No template matched the path.
const NO_TEMPLATE: u32 = u32::MAX;

/// A candidate example: whether the path is as logged (no `:`, which only a
/// template the shape rules wrote has), its requests, and the path.
type Example<'p> = (bool, u64, &'p str);

/// Per template while paths are counted: requests, distinct paths, and the
/// example so far.
type TemplateTally<'p> = (u64, u64, Option<Example<'p>>);

/// The templates that collapsed more than one path, from their tallies,
/// most requests first (ties by template).
fn template_uses(per: Vec<TemplateTally>, texts: &[String]) -> Vec<TemplateUse> {
    let mut out: Vec<TemplateUse> = per
        .into_iter()
        .zip(texts)
        .filter(|((_, distinct, _), _)| *distinct > 1)
        .map(|((requests, distinct, example), text)| TemplateUse {
            template: text.clone(),
            requests,
            distinct_paths: distinct,
            example: example.map(|(_, _, p)| p.to_string()).unwrap_or_default(),
        })
        .collect();
    out.sort_by(|a, b| {
        b.requests
            .cmp(&a.requests)
            .then_with(|| a.template.cmp(&b.template))
    });
    out
}

/// Adds `other`'s requests and distinct paths to `slot`, keeping the better example.
fn add_to_tally<'p>(slot: &mut TemplateTally<'p>, other: TemplateTally<'p>) {
    slot.0 += other.0;
    slot.1 += other.1;
    if let Some(candidate) = other.2
        && slot.2.is_none_or(|best| better_example(candidate, best))
    {
        slot.2 = Some(candidate);
    }
}

/// Whether `a` makes a better example than `b`: a path as logged before one
/// the shape rules already turned into a template, then more requests, then
/// the first by text.
fn better_example(a: Example, b: Example) -> bool {
    (a.0, a.1).cmp(&(b.0, b.1)).then(b.2.cmp(a.2)).is_gt()
}
