//! Which rate-limiting plugin Kong runs on which request, for the rules
//! `rlctl export --target kong` writes: one plan, followed by the exporter
//! and by the replay of Kong (`rlctl simulate --gateway kong`, `export
//! --check`), so that the replay decides as the exported configuration does.
//!
//! Kong runs one instance of a plugin per request, the most specific one: the
//! plugin of the route the request took, else the global one (plugin
//! precedence). And it holds one global instance of a plugin: a plugin's cache
//! key is its name, route, service and consumer
//! (`kong/db/schema/entities/plugins.lua`), so a second global
//! `rate-limiting` is a uniqueness violation. Hence:
//! - the rules for every request keyed like the first of them become the one
//!   global plugin, with the smallest limits of them all; a rule for every
//!   request keyed otherwise cannot be global, and counts only where it
//!   merges into a route's plugin;
//! - a rule with a route or a method becomes a route whose plugin takes the
//!   smallest limits of the rule and of every rule keyed alike that applies
//!   to all of the route's requests (for every request, or for its method);
//!   no other rule limits the requests that take that route;
//! - where several rules' routes match a request, Kong takes the one of
//!   highest priority (`get_priority` in `kong/router/transform.lua`): more
//!   match fields first (a method and a path before a path alone), then, for
//!   regex paths, `regex_priority`. The exporter writes every rule's path as
//!   a regex and sets `regex_priority` ([`Plan::regex_priority`]) so that a
//!   rule with a route and a method comes before one with a method alone, and
//!   otherwise the rule listed first comes first: [`Plan::routes`] is in
//!   that order.

/// What the plan needs of a rule: how its plugin counts (`K`, the key), and
/// which requests it is for (its method, and its route's regex).
#[derive(Debug, Clone)]
pub struct RuleSide<K> {
    pub key: K,
    pub method: Option<String>,
    pub route: Option<String>,
}

impl<K: PartialEq> RuleSide<K> {
    fn is_global(&self) -> bool {
        self.method.is_none() && self.route.is_none()
    }

    /// Whether this rule applies to every request `other`'s route takes:
    /// it is for every request, or for its method, or has its very method
    /// and route.
    fn covers(&self, other: &RuleSide<K>) -> bool {
        (self.route.is_none() || self.route == other.route)
            && (self.method.is_none() || self.method == other.method)
    }
}

/// One rate-limiting plugin of the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plugin {
    /// The rule whose route carries it (`None`: the global plugin).
    pub route_of: Option<usize>,
    /// The rules whose smallest limits it takes, its own (or for the global
    /// plugin the first) first.
    pub merged: Vec<usize>,
}

/// The plugins of a policy's rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The plugin for requests no rule's route takes.
    pub global: Option<Plugin>,
    /// The rules' routes and their plugins, in Kong's order of precedence:
    /// a request takes the first whose method and path match it.
    pub routes: Vec<Plugin>,
    /// The rules for every request keyed otherwise than the global plugin.
    pub not_global: Vec<usize>,
}

impl Plan {
    /// The plan of `rules` (a policy's, in its order).
    pub fn of<K: PartialEq>(rules: &[RuleSide<K>]) -> Plan {
        let globals: Vec<usize> = (0..rules.len()).filter(|&i| rules[i].is_global()).collect();
        let (global, not_global): (Vec<usize>, Vec<usize>) = match globals.first() {
            Some(&first) => (globals.iter()).partition(|&&i| rules[i].key == rules[first].key),
            None => (Vec::new(), Vec::new()),
        };
        let global = (!global.is_empty()).then_some(Plugin {
            route_of: None,
            merged: global,
        });
        // Route and method, then method alone, then route alone; each in the
        // policy's order (a stable sort).
        let mut routed: Vec<usize> = (0..rules.len())
            .filter(|&i| !rules[i].is_global())
            .collect();
        routed.sort_by_key(|&i| match (&rules[i].method, &rules[i].route) {
            (Some(_), Some(_)) => 0,
            (Some(_), None) => 1,
            (None, _) => 2,
        });
        let mut routes: Vec<Plugin> = Vec::new();
        for i in routed {
            // A rule with the very method and route of an earlier one keyed
            // alike is merged into that one's plugin, not a route of its own.
            let rule = &rules[i];
            let same = |p: &Plugin| {
                let owner = &rules[p.merged[0]];
                owner.key == rule.key && owner.method == rule.method && owner.route == rule.route
            };
            if routes.iter().any(same) {
                continue;
            }
            let merged = std::iter::once(i)
                .chain(
                    (0..rules.len())
                        .filter(|&j| j != i && rules[j].key == rule.key && rules[j].covers(rule)),
                )
                .collect();
            routes.push(Plugin {
                route_of: Some(i),
                merged,
            });
        }
        Plan {
            global,
            routes,
            not_global,
        }
    }

    /// The `regex_priority` of the route of rule `rule`: from the number of
    /// routes for the first down to 1 for the last, so that Kong takes them
    /// in [`Plan::routes`]' order where their number of match fields ties.
    pub fn regex_priority(&self, rule: usize) -> u64 {
        let rank = (self.routes.iter())
            .position(|p| p.route_of == Some(rule))
            .expect("a routed rule has a route");
        (self.routes.len() - rank) as u64
    }

    /// The rule whose route Kong takes, before rule `rule`'s own, for every
    /// request `rule`'s route matches, so that Kong never takes `rule`'s: an
    /// earlier route for any method or for `rule`'s, whose path matches
    /// every path `rule`'s does ([`path_covers`]: certain, or not said).
    pub fn taken_first<K>(&self, rules: &[RuleSide<K>], rule: usize) -> Option<usize> {
        let inner = &rules[rule];
        (self.routes.iter())
            .map_while(|p| p.route_of.filter(|&j| j != rule))
            .find(|&j| {
                let outer = &rules[j];
                (outer.method.is_none() || outer.method == inner.method)
                    && path_covers(outer.route.as_deref(), inner.route.as_deref())
            })
    }

    /// The rules that apply to every request of `plugin`'s route, or for the
    /// global plugin to every request no route takes, that it does not
    /// enforce: keyed otherwise than it.
    pub fn left_out<K: PartialEq>(&self, plugin: &Plugin, rules: &[RuleSide<K>]) -> Vec<usize> {
        let owner = plugin.merged[0];
        (0..rules.len())
            .filter(|&j| {
                let other = &rules[j];
                let applies = match plugin.route_of {
                    None => other.is_global(),
                    Some(i) => other.covers(&rules[i]),
                };
                applies && !plugin.merged.contains(&j) && other.key != rules[owner].key
            })
            .collect()
    }
}

mod cover;

pub use cover::path_covers;

#[cfg(test)]
mod tests {
    use super::*;

    fn side(key: &'static str, method: Option<&str>, routed: bool) -> RuleSide<&'static str> {
        RuleSide {
            key,
            method: method.map(str::to_string),
            route: routed.then(|| format!("^/{key}")),
        }
    }

    #[test]
    fn one_global_plugin_takes_the_rules_keyed_like_the_first() {
        let rules = [
            side("ip", None, false),
            side("key", None, false),
            side("ip", None, false),
        ];
        let plan = Plan::of(&rules);
        assert_eq!(
            plan.global,
            Some(Plugin {
                route_of: None,
                merged: vec![0, 2]
            })
        );
        assert_eq!(plan.not_global, vec![1]);
        assert!(plan.routes.is_empty());
        assert_eq!(
            plan.left_out(plan.global.as_ref().unwrap(), &rules),
            vec![1]
        );
    }

    #[test]
    fn routes_come_in_kongs_order_and_merge_the_rules_keyed_alike() {
        let rules = [
            side("ip", Some("POST"), false), // 0: method alone
            side("key", None, true),         // 1: route alone
            side("ip", None, false),         // 2: every request
            side("ip", Some("GET"), true),   // 3: route and method
            side("ip", Some("GET"), false),  // 4: method alone
            side("key", None, false),        // 5: every request, keyed otherwise
        ];
        let plan = Plan::of(&rules);
        let order: Vec<usize> = plan.routes.iter().map(|p| p.route_of.unwrap()).collect();
        assert_eq!(order, vec![3, 0, 4, 1]);
        assert_eq!((plan.regex_priority(3), plan.regex_priority(1)), (4, 1));
        let merged: Vec<&[usize]> = plan.routes.iter().map(|p| &p.merged[..]).collect();
        // GET route: itself, every-request ip, GET ip; the route keyed by
        // `key` takes the every-request rule keyed alike (5).
        assert_eq!(merged, vec![&[3, 2, 4][..], &[0, 2], &[4, 2], &[1, 5]]);
        assert_eq!(plan.global.as_ref().unwrap().merged, vec![2]);
        assert_eq!(plan.not_global, vec![5]);
        // Rule 1's route leaves out the every-request ip rule; rule 3's the
        // every-request rule keyed otherwise.
        assert_eq!(plan.left_out(&plan.routes[3], &rules), vec![2]);
        assert_eq!(plan.left_out(&plan.routes[0], &rules), vec![5]);
    }

    #[test]
    fn a_route_is_taken_first_by_an_earlier_one_that_matches_all_it_does() {
        let rule = |method: Option<&str>, route: &str| RuleSide {
            key: "ip",
            method: method.map(str::to_string),
            route: Some(route.to_string()),
        };
        let rules = [
            rule(None, "^/api/"),
            rule(None, "^/api/search$"),
            rule(Some("GET"), "^/api/v1"),
            rule(None, "^/apix"),
            rule(None, "^/other"),
        ];
        let plan = Plan::of(&rules);
        // The GET route comes first, and is hidden by none; `^/api/` takes
        // all of `^/api/search$`'s requests; `^/apix` and `^/other` are not
        // within `^/api/`.
        let taken: Vec<Option<usize>> = (0..5).map(|i| plan.taken_first(&rules, i)).collect();
        assert_eq!(taken, vec![None, Some(0), None, None, None]);
        // A method alone is taken after a route with a method and before a
        // route alone, and takes only its method's requests.
        let rules = [
            RuleSide {
                key: "ip",
                method: Some("GET".to_string()),
                route: None,
            },
            rule(Some("GET"), "^/b"),
            rule(None, "^/b"),
        ];
        let plan = Plan::of(&rules);
        let taken: Vec<Option<usize>> = (0..3).map(|i| plan.taken_first(&rules, i)).collect();
        assert_eq!(taken, vec![None, None, None]);
    }

    #[test]
    fn rules_with_one_method_and_route_share_its_route() {
        let same = |key| RuleSide {
            key,
            method: None,
            route: Some("^/api".to_string()),
        };
        let rules = [same("ip"), same("ip"), same("key")];
        let plan = Plan::of(&rules);
        // The second is merged into the first's route; the third, keyed
        // otherwise, has a route Kong never takes, and is named as left out.
        let merged: Vec<&[usize]> = plan.routes.iter().map(|p| &p.merged[..]).collect();
        assert_eq!(merged, vec![&[0, 1][..], &[2]]);
        assert_eq!(plan.left_out(&plan.routes[0], &rules), vec![2]);
    }
}
