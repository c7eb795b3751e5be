//! A per-chunk cache from a request (method, target, and the virtual host
//! when a `--route` rule is limited to one) to its endpoint, path and method
//! ids, so that a target seen before in the chunk is neither normalised nor
//! interned again. Keyed by [`target_key`] (the target without its query
//! string), so `/search?q=a` and `/search?q=b` share one entry. Without
//! `--route` rules, a target whose last segment is an id is keyed by the
//! target before that segment instead ([`id_tail_prefix`]): its endpoint is
//! the prefix's segments normalised and `:id`, so `/users/1` and `/users/2`
//! share one entry too, and a log of mostly distinct ids is normalised once
//! per prefix. Memory is bounded by the chunk the cache serves: it is
//! dropped with it.

use std::borrow::Cow;
use std::hash::Hasher;

use hashbrown::HashTable;
use rustc_hash::FxHasher;

use super::KeptPaths;
use super::endpoint::{
    RouteRule, endpoint_of_text, id_tail_prefix, lossy, refused_after_path, replayed_path,
    strip_origin, target_key, without_query,
};
use crate::events::{Id, Interner};

/// What one request resolves to, as ids of the chunk's interners.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestIds {
    pub endpoint: Id,
    pub path: Id,
    pub method: Id,
    /// The endpoint had bytes that are not UTF-8 (shown as U+FFFD).
    pub invalid_utf8: bool,
}

/// The interners a request's names go to (`paths: None`: paths are not kept,
/// every path id is 0).
pub struct RequestInterners<'a> {
    pub endpoints: &'a mut Interner,
    pub paths: Option<&'a mut Interner>,
    /// Which paths are kept (path id 0 for the rest, where not all are).
    pub kept: KeptPaths,
    pub methods: &'a mut Interner,
}

impl RequestInterners<'_> {
    /// The same interners, borrowed for a shorter while.
    fn reborrow(&mut self) -> RequestInterners<'_> {
        RequestInterners {
            endpoints: self.endpoints,
            paths: self.paths.as_deref_mut(),
            kept: self.kept,
            methods: self.methods,
        }
    }
}

/// One cached request: its key bytes in `RequestCache::bytes` and its ids.
#[derive(Debug)]
struct Entry {
    start: usize,
    method_len: usize,
    host_len: usize,
    target_len: usize,
    /// The key is a prefix, standing for that prefix, `/` and an id.
    id_tail: bool,
    /// The line logged no method (the method key is then empty).
    no_method: bool,
    ids: RequestIds,
}

/// The cache; one per chunk.
#[derive(Debug, Default)]
pub struct RequestCache {
    table: HashTable<u32>,
    entries: Vec<Entry>,
    /// Method, host and target key of every entry, one after another.
    bytes: Vec<u8>,
    /// What resolving a request reuses.
    scratch: Scratch,
}

/// Buffers and the last method, reused from one resolved request to the next.
#[derive(Debug, Default)]
pub struct Scratch {
    /// The endpoint name.
    endpoint_name: String,
    /// The method last interned and its id: requests of a chunk mostly share
    /// one or two methods.
    last_method: Vec<u8>,
    last_method_id: Option<Id>,
}

impl Scratch {
    /// The id of `method` in `methods`, interned as `intern_lossy` does.
    fn method_id(&mut self, method: &[u8], methods: &mut Interner) -> Id {
        match self.last_method_id {
            Some(id) if self.last_method == method => id,
            _ => {
                let id = methods.intern_lossy(method);
                self.last_method.clear();
                self.last_method.extend_from_slice(method);
                self.last_method_id = Some(id);
                id
            }
        }
    }
}

impl Entry {
    /// Whether this entry's key is `method` (`None`: no method logged),
    /// `host`, `target` and `id_tail` (lengths first, then the target, which
    /// differs most often).
    fn is(
        &self,
        bytes: &[u8],
        method: Option<&[u8]>,
        host: &[u8],
        target: &[u8],
        id_tail: bool,
    ) -> bool {
        let (no_method, method) = (method.is_none(), method.unwrap_or_default());
        if self.id_tail != id_tail
            || self.no_method != no_method
            || self.target_len != target.len()
            || self.method_len != method.len()
            || self.host_len != host.len()
        {
            return false;
        }
        let (m, h, t) = self.key(bytes);
        t == target && m == method && (host.is_empty() || h == host)
    }

    /// The method, host and target key of this entry.
    fn key<'b>(&self, bytes: &'b [u8]) -> (&'b [u8], &'b [u8], &'b [u8]) {
        let method_end = self.start + self.method_len;
        let host_end = method_end + self.host_len;
        (
            &bytes[self.start..method_end],
            &bytes[method_end..host_end],
            &bytes[host_end..host_end + self.target_len],
        )
    }
}

/// The hash of a request's cache key: the method's first 8 bytes as one
/// word and its length with the flags in another (methods are short), the
/// host only when there is one, then the target. Keys that share a hash are
/// told apart by [`Entry::is`].
fn hash_request(method: Option<&[u8]>, host: &[u8], target: &[u8], id_tail: bool) -> u64 {
    let (no_method, method) = (method.is_none(), method.unwrap_or_default());
    let mut hasher = FxHasher::default();
    let mut word = [0u8; 8];
    let n = method.len().min(8);
    word[..n].copy_from_slice(&method[..n]);
    hasher.write_u64(u64::from_le_bytes(word));
    hasher.write_usize(method.len() << 2 | usize::from(no_method) << 1 | usize::from(id_tail));
    if !host.is_empty() {
        hasher.write(host);
        hasher.write_usize(host.len());
    }
    hasher.write(target);
    hasher.finish()
}

impl RequestCache {
    /// A cache with room for about `requests` distinct requests.
    pub fn with_capacity(requests: usize) -> Self {
        RequestCache {
            table: HashTable::with_capacity(requests),
            entries: Vec::with_capacity(requests),
            bytes: Vec::with_capacity(requests * 32),
            scratch: Scratch::default(),
        }
    }

    /// The ids of `method` + `target` (for virtual `host`, empty unless a
    /// route is limited to a host), from the cache or resolved and interned;
    /// `method: None` when the line logs none.
    pub fn ids(
        &mut self,
        method: Option<&[u8]>,
        host: &[u8],
        target: &[u8],
        routes: &[RouteRule],
        mut names: RequestInterners<'_>,
    ) -> RequestIds {
        let whole = target;
        let target = target_key(whole);
        // A target whose path a replay keeps with its query is not cached
        // (an absolute-form target is its own key, with nothing after it).
        if names.kept.keeps_queries() && refused_after_path(whole.split_at(target.len())) {
            return resolve(method, host, whole, routes, names, &mut self.scratch);
        }
        // Rules match whole paths: with any, every target is its own key.
        let prefix = if routes.is_empty() {
            id_tail_prefix(target)
        } else {
            None
        };
        let (key, id_tail) = prefix.map_or((target, false), |p| (p, true));
        let hash = hash_request(method, host, key, id_tail);
        let RequestCache {
            table,
            entries,
            bytes,
            scratch,
        } = self;
        let found = table.find(hash, |&i| {
            entries[i as usize].is(bytes, method, host, key, id_tail)
        });
        let mut ids = match found {
            Some(&i) => entries[i as usize].ids,
            None => {
                let ids = resolve(method, host, target, routes, names.reborrow(), scratch);
                let index =
                    u32::try_from(entries.len()).expect("fewer than 4 billion requests per chunk");
                entries.push(Entry {
                    start: bytes.len(),
                    method_len: method.map_or(0, <[u8]>::len),
                    host_len: host.len(),
                    target_len: key.len(),
                    id_tail,
                    no_method: method.is_none(),
                    ids,
                });
                bytes.extend_from_slice(method.unwrap_or_default());
                bytes.extend_from_slice(host);
                bytes.extend_from_slice(key);
                table.insert_unique(hash, index, |&i| {
                    let entry = &entries[i as usize];
                    let (m, h, t) = entry.key(bytes);
                    hash_request((!entry.no_method).then_some(m), h, t, entry.id_tail)
                });
                return ids;
            }
        };
        // An entry for a prefix holds the first such target's path: each
        // target has its own (the target is its path: it has no query).
        if id_tail
            && names.kept != KeptPaths::Routed
            && let Some(paths) = names.paths
        {
            ids.path = match names.kept.keeps(target, || false) {
                true => paths.intern_lossy(target),
                false => 0,
            };
        }
        ids
    }
}

/// Resolves a request without the cache: normalises the endpoint and interns
/// the endpoint, the path without its query, and the method.
pub fn resolve(
    method: Option<&[u8]>,
    host: &[u8],
    target: &[u8],
    routes: &[RouteRule],
    names: RequestInterners<'_>,
    scratch: &mut Scratch,
) -> RequestIds {
    let target = lossy(target);
    let host = if host.is_empty() {
        Cow::Borrowed("")
    } else {
        lossy(host)
    };
    let method_id = scratch.method_id(method.unwrap_or_default(), names.methods);
    let endpoint_name = &mut scratch.endpoint_name;
    endpoint_of_text(method, &host, &target, routes, endpoint_name);
    let routed = || routes.iter().any(|r| r.name == *endpoint_name);
    let path = match names.paths {
        Some(paths) => {
            // An absolute-form target's path, as every product reads it;
            // for a replay, with a query that a product would refuse.
            let path = match names.kept.keeps_queries() {
                true => replayed_path(&target),
                false => without_query(strip_origin(&target)),
            };
            match names.kept.keeps(path.as_bytes(), routed) {
                true => paths.intern(path),
                false => 0,
            }
        }
        None => 0,
    };
    RequestIds {
        endpoint: names.endpoints.intern(endpoint_name),
        path,
        method: method_id,
        invalid_utf8: !endpoint_name.is_ascii() && endpoint_name.contains('\u{fffd}'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_share_an_entry_and_ids_match_the_uncached_path() {
        let (mut e, mut p, mut m) = Default::default();
        let mut cache = RequestCache::default();
        let mut ids = |method: Option<&[u8]>, target: &[u8]| {
            cache.ids(
                method,
                b"",
                target,
                &[],
                RequestInterners {
                    endpoints: &mut e,
                    paths: Some(&mut p),
                    kept: KeptPaths::All,
                    methods: &mut m,
                },
            )
        };
        let a = ids(Some(b"GET"), b"/users/1?x=1");
        let b = ids(Some(b"GET"), b"/users/2?x=2");
        let c = ids(Some(b"GET"), b"/users/1#top");
        let d = ids(Some(b"POST"), b"/users/1");
        let bad = ids(Some(b"GET"), b"/\xff/x");
        // No method logged, and an empty one logged: two more keys.
        let none = ids(None, b"/users/3");
        assert_eq!(ids(None, b"/users/4").endpoint, none.endpoint);
        let empty = ids(Some(b""), b"/users/3");
        assert_eq!((none.endpoint, empty.endpoint), (3, 4));
        assert_eq!((a.endpoint, a.path), (b.endpoint, 0));
        // Every path is kept, as for a replay: a fragment stays with its path.
        assert_eq!((b.path, p.name(c.path)), (1, "/users/1#top"));
        assert_eq!((d.endpoint, d.path, d.method), (1, 0, 1));
        assert!(bad.invalid_utf8 && !a.invalid_utf8);
        // `/users/1` and `/users/2` share the entry of `/users` + an id.
        assert_eq!(cache.entries.len(), 5);
        assert!(cache.entries[0].id_tail && !cache.entries[2].id_tail);
        assert_eq!(
            e.names().collect::<Vec<_>>(),
            [
                "GET /users/:id",
                "POST /users/:id",
                "GET /\u{fffd}/x",
                "/users/:id",
                "(invalid request)"
            ]
        );
        assert_eq!(p.name(bad.path), "/\u{fffd}/x");
    }
}
