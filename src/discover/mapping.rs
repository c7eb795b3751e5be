//! Mapping a table's endpoints onto templates: each distinct path is matched
//! once, the endpoints are renamed (`METHOD template`) and the templates that
//! collapsed more than one path are tallied for the report.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::paths::{NO_PATH, Paths, method_and_path};
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
    let (map, names) = rename(&table.endpoints, paths, &template, &texts);
    let uses = template_uses(tallies, &texts);
    Mapping { map, names, uses }
}

/// What an endpoint is renamed to: its method and template, or its own name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum NewName<'n> {
    Template(&'n str, u32),
    Own(Id),
}

/// Endpoints renamed a range at a time (in tests, a few, so that the tests'
/// endpoints span many ranges).
const RENAME_RANGE: usize = if cfg!(test) { 7 } else { 1 << 14 };

/// Per endpoint of `endpoints`, its id among the new names (`METHOD template`,
/// or its own name when no template matched its path), and the new names,
/// numbered in the order the endpoints first give them: what renaming one
/// endpoint after another gives.
///
/// Ranges of endpoints are read on every core, each listing the new names it
/// gives first; only those are then interned, range after range, and every
/// endpoint's place in its range's list becomes the name's id.
fn rename<'n>(
    endpoints: &'n Interner,
    paths: &Paths,
    template: &[u32],
    texts: &[String],
) -> (Vec<Id>, Interner) {
    let new_name = |e: usize| -> NewName<'n> {
        let t = match paths.owner[e] {
            NO_PATH => NO_TEMPLATE,
            owner => template[owner as usize],
        };
        if t == NO_TEMPLATE {
            return NewName::Own(e as Id);
        }
        // A name with a path is `METHOD /path` or `/path` (see `Paths`).
        let (method, _) = method_and_path(endpoints.name(e as Id)).unwrap_or_default();
        NewName::Template(method, t)
    };
    let mut map: Vec<Id> = vec![0; endpoints.len()];
    let firsts: Vec<Vec<NewName<'n>>> = map
        .par_chunks_mut(RENAME_RANGE)
        .enumerate()
        .map(|(range, out)| {
            let mut firsts = Vec::new();
            let mut seen: FxHashMap<NewName, Id> = FxHashMap::default();
            for (i, slot) in out.iter_mut().enumerate() {
                let name = new_name(range * RENAME_RANGE + i);
                let mut first = || {
                    firsts.push(name);
                    (firsts.len() - 1) as Id
                };
                // An endpoint's own name is one no other endpoint has.
                *slot = match name {
                    NewName::Own(_) => first(),
                    NewName::Template(..) => *seen.entry(name).or_insert_with(first),
                };
            }
            firsts
        })
        .collect();
    let mut names = Interner::default();
    let mut renamed: FxHashMap<NewName<'n>, Id> = FxHashMap::default();
    let ids: Vec<Vec<Id>> = firsts
        .iter()
        .map(|firsts| {
            let id_of = |&name: &NewName<'n>| match name {
                NewName::Own(e) => names.intern(endpoints.name(e)),
                NewName::Template(method, t) => *renamed.entry(name).or_insert_with(|| {
                    let template = &texts[t as usize];
                    match method {
                        "" => names.intern(template),
                        method => names.intern(&format!("{method} {template}")),
                    }
                }),
            };
            firsts.iter().map(id_of).collect()
        })
        .collect();
    map.par_chunks_mut(RENAME_RANGE)
        .zip(&ids)
        .for_each(|(out, ids)| out.iter_mut().for_each(|slot| *slot = ids[*slot as usize]));
    (map, names)
}

/// No template matched the path.
const NO_TEMPLATE: u32 = u32::MAX;

/// A candidate example: whether the path is as logged (no `:`, which only a
/// template the shape rules wrote has), its requests, and the path.
type Example<'p> = (bool, u64, &'p str);

/// Per template while paths are counted: requests, distinct paths, and the
/// example so far.
type TemplateTally<'p> = (u64, u64, Option<Example<'p>>);

/// The templates that collapsed more than one path, or renamed the one path
/// they took (`/:id/status` of `/v1/status`, when a scanner's names made the
/// first segment a parameter), from their tallies, most requests first (ties
/// by template).
fn template_uses(per: Vec<TemplateTally>, texts: &[String]) -> Vec<TemplateUse> {
    let renames =
        |text: &str, example: &Option<Example>| example.is_some_and(|(_, _, path)| path != text);
    let mut out: Vec<TemplateUse> = per
        .into_iter()
        .zip(texts)
        .filter(|((_, distinct, example), text)| *distinct > 1 || renames(text, example))
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
