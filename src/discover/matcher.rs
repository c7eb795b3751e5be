//! The index behind [`super::TemplateSet::find`]: templates arranged segment
//! by segment, so that a path is matched in time that follows its segments,
//! not the number of templates (discovery maps a million distinct paths).
//!
//! At each position the children are tried in precedence order (the literal
//! equal to the segment, then patterns by rank, then the whole parameter),
//! depth first; the first template reached is the least in precedence order
//! among those matching, the one a scan of the sorted templates finds first.

use rustc_hash::FxHashMap;

use super::template::{Part, Segment, Template, match_parts, parts};

/// One position of the index.
#[derive(Debug, Clone, Default)]
pub(super) struct MatchNode {
    /// The template (its position in the sorted set) that ends here.
    end: Option<usize>,
    literals: FxHashMap<String, MatchNode>,
    /// Pattern segments in precedence order, with their parts.
    patterns: Vec<(Segment, Vec<Part>, MatchNode)>,
    whole: Option<Box<MatchNode>>,
}

impl MatchNode {
    /// The index of `templates`, given in precedence order.
    pub(super) fn build(templates: &[Template]) -> MatchNode {
        let mut root = MatchNode::default();
        for (i, t) in templates.iter().enumerate() {
            let mut node = &mut root;
            for segment in &t.segments {
                node = node.child(segment);
            }
            node.end.get_or_insert(i);
        }
        root.sort();
        root
    }

    fn child(&mut self, segment: &Segment) -> &mut MatchNode {
        match segment {
            Segment::Literal(text) => self.literals.entry(text.clone()).or_default(),
            Segment::Whole(_) => self.whole.get_or_insert_with(Default::default),
            Segment::Pattern(text) => {
                let at = match self.patterns.iter().position(|(s, _, _)| s == segment) {
                    Some(at) => at,
                    None => {
                        self.patterns
                            .push((segment.clone(), parts(text), MatchNode::default()));
                        self.patterns.len() - 1
                    }
                };
                &mut self.patterns[at].2
            }
        }
    }

    /// Puts every node's patterns in precedence order.
    fn sort(&mut self) {
        self.patterns.sort_by(|a, b| a.0.rank().cmp(&b.0.rank()));
        for child in self.literals.values_mut() {
            child.sort();
        }
        for (_, _, child) in &mut self.patterns {
            child.sort();
        }
        if let Some(child) = &mut self.whole {
            child.sort();
        }
    }

    /// The first template (in precedence order) matching `path`.
    pub(super) fn find(&self, path: &str) -> Option<usize> {
        self.walk(path.strip_prefix('/')?)
    }

    /// The first template matching the segments of `rest` (text after a `/`).
    fn walk(&self, rest: &str) -> Option<usize> {
        // Segments are short: a plain scan finds their end sooner than memchr.
        let (segment, tail) = match rest.bytes().position(|b| b == b'/') {
            Some(slash) => (&rest[..slash], Some(&rest[slash + 1..])),
            None => (rest, None),
        };
        let next = |child: &MatchNode| match tail {
            Some(tail) => child.walk(tail),
            None => child.end,
        };
        if let Some(found) = self.literals.get(segment).and_then(next) {
            return Some(found);
        }
        for (_, parts, child) in &self.patterns {
            if match_parts(parts, segment)
                && let Some(found) = next(child)
            {
                return Some(found);
            }
        }
        match &self.whole {
            Some(child) if !segment.is_empty() => next(child),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::TemplateSet;
    use super::*;

    /// The first template in precedence order that matches: the definition.
    fn scan<'t>(set: &'t TemplateSet, path: &str) -> Option<&'t Template> {
        set.templates().iter().find(|t| t.matches(path))
    }

    #[test]
    fn backtracks_past_a_literal_that_leads_nowhere() {
        let set = TemplateSet::new(
            ["/a/b/c", "/:x/b/d", "/a/:id/d", "/a/b.:hash", "/:id"]
                .iter()
                .map(|t| Template::parse(t).unwrap())
                .collect(),
        );
        let found = |p: &str| set.find(p).map(|t| t.to_string());
        assert_eq!(found("/a/b/c").as_deref(), Some("/a/b/c"));
        assert_eq!(found("/a/b/d").as_deref(), Some("/a/:id/d"));
        assert_eq!(found("/z/b/d").as_deref(), Some("/:x/b/d"));
        assert_eq!(found("/a/b.1f").as_deref(), Some("/a/b.:hash"));
        assert_eq!(found("/a").as_deref(), Some("/:id"));
        assert_eq!(found("/a/b"), None);
        assert_eq!(found("a/b/c"), None);
        assert_eq!(found("/"), None);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// The index finds what a scan of the sorted templates finds.
        #[test]
        fn index_finds_what_a_scan_finds(
            templates in proptest::collection::vec(
                proptest::collection::vec("(:id|:slug|a|b|ab|a\\.:h\\.js|:h\\.js|x:h|)", 1..4),
                1..12,
            ),
            paths in proptest::collection::vec(
                proptest::collection::vec("(a|b|ab|a\\.1f\\.js|f\\.js|x9|x|9|)", 1..4),
                1..20,
            ),
        ) {
            let set = TemplateSet::new(
                templates
                    .iter()
                    .map(|s| Template::parse(&format!("/{}", s.join("/"))).unwrap())
                    .collect(),
            );
            for p in &paths {
                let path = format!("/{}", p.join("/"));
                proptest::prop_assert_eq!(
                    set.find(&path).map(|t| t.to_string()),
                    scan(&set, &path).map(|t| t.to_string()),
                    "{}", path
                );
            }
        }
    }
}
