//! The path trie behind discovery. Paths are fed in a canonical order (most
//! requests first, ties by path), so the result is a function of the multiset
//! of requests alone. A node is a parameter position when
//!
//! - it reaches [`CAP`] distinct literal children while paths are fed (it
//!   collapses at once, so no node ever holds more than [`CAP`] children), or
//! - once every path is in, it has at least [`MIN_CHILDREN`] literal children
//!   and at least [`RARE_SHARE`] of them are rare.
//!
//! A child is rare when it has fewer than [`FREQUENT_SHARE`] of its parent's
//! requests. When a node collapses, its rare children are merged into
//! parameter children ([`super::shape::param_key`]) and its frequent children
//! keep their names; every later segment that is not a kept name goes to a
//! parameter. After all paths are in, kept children that turned rare merge
//! too. Merging a subtree applies the same rules below it.
//!
//! Besides, once every path is in, literal children of one node with the
//! same skeleton (`app.:hash.js`: text around hash-like tokens, see
//! [`super::shape`]) merge into that parameter whatever their share when at
//! least [`SKELETON_SIBLINGS`] distinct values share the skeleton, counting
//! those the parameter already holds: cache-busted assets of a few dozen
//! builds, each visited alike, are still one endpoint. Names without a
//! hash-like token have no skeleton. A parameter's skeleton that fewer than
//! [`SKELETON_SIBLINGS`] values share then folds into the position's
//! whole-segment parameter.

use std::collections::BTreeMap;

use rustc_hash::FxHashSet;

use super::shape::{ParamKey, ValueShape, param_key, value_shape, whole_name};

/// A node collapses at once when it reaches this many distinct children.
pub const CAP: usize = 1000;
/// Fewest distinct children of a parameter position found after the pass.
pub const MIN_CHILDREN: usize = 16;
/// Share of rare children that makes a position a parameter.
pub const RARE_SHARE: f64 = 0.8;
/// A child with at least this share of its parent's requests keeps its name.
pub const FREQUENT_SHARE: f64 = 0.01;
/// Literal siblings with one skeleton that merge into it after the pass, and
/// the fewest values of a parameter position that keep their skeleton.
pub const SKELETON_SIBLINGS: usize = 8;
/// Distinct values a parameter counts exactly; more are reported as "at least".
pub const DISTINCT_CAP: usize = 1 << 16;

/// One position of the trie.
#[derive(Debug, Default)]
pub struct Node {
    /// Requests through this node, and those ending here.
    pub count: u64,
    pub terminal: u64,
    pub children: BTreeMap<String, Node>,
    pub collapsed: bool,
    pub params: BTreeMap<ParamKey, Param>,
}

/// A parameter child and what it collapsed.
#[derive(Debug, Default)]
pub struct Param {
    pub node: Node,
    /// Hashes of the distinct values (at most [`DISTINCT_CAP`]).
    values: FxHashSet<u64>,
    /// How many distinct values had each shape: id, slug, name.
    shapes: [u64; 3],
}

impl Param {
    /// Adds `count` requests of a path that reaches this parameter's node
    /// with the segment `value`, then has the segments `rest`.
    pub fn insert(&mut self, value: &str, rest: &[&str], count: u64) {
        self.add_value(value);
        self.node.insert(rest, count);
    }

    fn add_value(&mut self, value: &str) {
        if self.values.len() >= DISTINCT_CAP {
            return;
        }
        if self.values.insert(hash(value)) {
            let i = match value_shape(value) {
                ValueShape::Id => 0,
                ValueShape::Slug => 1,
                ValueShape::Name => 2,
            };
            self.shapes[i] += 1;
        }
    }

    /// The distinct values collapsed (saturating at [`DISTINCT_CAP`]).
    pub fn distinct(&self) -> u64 {
        self.values.len() as u64
    }

    /// [`Self::distinct`] with `names` added, each counted once.
    fn distinct_with(&self, names: &[String]) -> u64 {
        let new = (names.iter()).filter(|name| !self.values.contains(&hash(name)));
        self.distinct() + new.count() as u64
    }

    /// The distinct values counted, and how many of each shape.
    #[cfg(test)]
    pub(super) fn counted(&self) -> (usize, [u64; 3]) {
        (self.values.len(), self.shapes)
    }

    /// How the parameter reads in a template.
    pub fn display(&self, key: &ParamKey) -> String {
        match key {
            ParamKey::Skeleton(s) => s.clone(),
            ParamKey::Whole => whole_name(self.shapes[0], self.shapes[1], self.shapes[2]).into(),
        }
    }

    fn absorb(&mut self, other: Param) {
        for v in other.values {
            if self.values.len() >= DISTINCT_CAP {
                break;
            }
            self.values.insert(v);
        }
        for (mine, theirs) in self.shapes.iter_mut().zip(other.shapes) {
            *mine += theirs;
        }
        self.node.merge(other.node);
    }
}

fn hash(value: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    value.hash(&mut h);
    h.finish()
}

impl Node {
    /// Adds `count` requests of the path made of `segments`.
    pub fn insert(&mut self, segments: &[&str], count: u64) {
        self.count += count;
        let Some((first, rest)) = segments.split_first() else {
            self.terminal += count;
            return;
        };
        if let Some(child) = self.children.get_mut(*first) {
            child.insert(rest, count);
        } else if self.collapsed {
            self.params
                .entry(param_key(first))
                .or_default()
                .insert(first, rest, count);
        } else {
            let mut child = Node::default();
            child.insert(rest, count);
            self.children.insert((*first).to_string(), child);
            if self.children.len() >= CAP {
                self.collapse();
            }
        }
    }

    /// Makes this node a parameter position: rare children merge into
    /// parameters (what [`Self::insert`] does when the node reaches [`CAP`]
    /// children).
    pub fn collapse(&mut self) {
        self.collapsed = true;
        let floor = FREQUENT_SHARE * self.count as f64;
        let names: Vec<String> = self
            .children
            .iter()
            .filter(|(_, c)| (c.count as f64) < floor)
            .map(|(n, _)| n.clone())
            .collect();
        for name in names {
            let child = self.children.remove(&name).expect("listed above");
            let param = self.params.entry(param_key(&name)).or_default();
            param.add_value(&name);
            param.node.merge(child);
        }
    }

    /// Adds the requests and the subtree of `other` (same position, same rules).
    fn merge(&mut self, other: Node) {
        self.count += other.count;
        self.terminal += other.terminal;
        for (name, child) in other.children {
            if let Some(mine) = self.children.get_mut(&name) {
                mine.merge(child);
            } else if self.collapsed {
                let param = self.params.entry(param_key(&name)).or_default();
                param.add_value(&name);
                param.node.merge(child);
            } else {
                self.children.insert(name, child);
                if self.children.len() >= CAP {
                    self.collapse();
                }
            }
        }
        if other.collapsed && !self.collapsed {
            self.collapse();
        }
        for (key, param) in other.params {
            self.params.entry(key).or_default().absorb(param);
        }
    }

    /// Merges literal children that share a skeleton into that skeleton's
    /// parameter where at least [`SKELETON_SIBLINGS`] distinct values share
    /// it: the children, and the values the parameter already holds (rare
    /// children merged into it when the node collapsed).
    fn merge_skeletons(&mut self) {
        let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for name in self.children.keys() {
            if let ParamKey::Skeleton(s) = param_key(name) {
                groups.entry(s).or_default().push(name.clone());
            }
        }
        for (skeleton, names) in groups {
            let sharing = (self.params.get(&ParamKey::Skeleton(skeleton.clone())))
                .map_or(names.len() as u64, |param| param.distinct_with(&names));
            if sharing < SKELETON_SIBLINGS as u64 {
                continue;
            }
            for name in names {
                let child = self.children.remove(&name).expect("grouped above");
                let param = self
                    .params
                    .entry(ParamKey::Skeleton(skeleton.clone()))
                    .or_default();
                param.add_value(&name);
                param.node.merge(child);
            }
        }
    }

    /// Folds each skeleton parameter with fewer than [`SKELETON_SIBLINGS`]
    /// distinct values into the whole-segment parameter: at a parameter
    /// position (`/blog/:slug`), a few values that happen to hold a hash-like
    /// token (`keynav-on-xinerama2.html`) are values of the position like
    /// the others, not a template of their own.
    fn fold_thin_skeletons(&mut self) {
        let thin: Vec<ParamKey> = (self.params.iter())
            .filter(|(key, param)| {
                matches!(key, ParamKey::Skeleton(_)) && param.distinct() < SKELETON_SIBLINGS as u64
            })
            .map(|(key, _)| key.clone())
            .collect();
        for key in thin {
            let param = self.params.remove(&key).expect("listed above");
            self.params
                .entry(ParamKey::Whole)
                .or_default()
                .absorb(param);
        }
    }

    /// Applies the end-of-pass rule to this node and, after, to every node below.
    pub fn finish(&mut self) {
        let floor = FREQUENT_SHARE * self.count as f64;
        let rare = self
            .children
            .values()
            .filter(|c| (c.count as f64) < floor)
            .count();
        let many = self.children.len() >= MIN_CHILDREN;
        if self.collapsed || (many && rare as f64 >= RARE_SHARE * self.children.len() as f64) {
            self.collapse();
        }
        self.merge_skeletons();
        self.fold_thin_skeletons();
        for child in self.children.values_mut() {
            child.finish();
        }
        for param in self.params.values_mut() {
            param.node.finish();
        }
    }
}
