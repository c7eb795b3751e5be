//! Who sends the traffic: the cast of clients for `--clients N`, each with an
//! address, a user (or none), a user agent, an endpoint mix and a [`Timing`].
//!
//! A client is one source address; the NAT office is one client made of many
//! [`Profile`]s (one per user) sharing its address. The cast is drawn from one
//! seeded generator in a fixed order, so a seed always gives the same cast.

use super::addresses::{Addresses, ipv4, ipv6};
use super::catalog::{
    API_AGENTS, BATCH_AGENTS, BROWSERS, COMPANIES, CRAWLERS, FIRST, LAST, RUNAWAY_AGENTS,
};
use super::rng::Rng;
use super::routes::{Route, RouteKind};
use super::traffic::Timing;

/// The role a profile plays in the traffic mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An API client or a browser with a steady Poisson rate.
    Steady,
    /// A worker that fires a burst of requests every few minutes.
    Batch,
    /// A client stuck in a retry loop for part of the run.
    Runaway,
    /// One user of the office behind a single NAT address.
    Office,
    /// A search-engine crawler.
    Crawler,
    /// A load-balancer health check at a fixed interval.
    Monitor,
    /// A vulnerability scanner (`--scanners`, see [`super::scanners`]).
    Scanner,
}

/// One stream of requests and how it presents itself in the log.
#[derive(Debug, Clone)]
pub struct Profile {
    /// Its role in the mix.
    pub kind: Kind,
    /// `$remote_addr`.
    pub addr: String,
    /// `$remote_user`, if the client authenticates.
    pub user: Option<String>,
    /// `$http_user_agent`.
    pub user_agent: &'static str,
    /// `$http_x_forwarded_for`, if the client comes through a proxy.
    pub forwarded_for: Option<String>,
    /// Browsers send a referer and fetch static assets.
    pub browser: bool,
    /// The account this client usually asks about.
    pub own_user_id: u32,
    /// Relative weights of the endpoints it calls.
    pub mix: &'static [(RouteKind, u32)],
    /// When it sends requests.
    pub timing: Timing,
}

/// Parameters of the mix, documented in the module doc of [`super`].
pub const STEADY_MEDIAN_RATE: f64 = 0.2;
pub const STEADY_SIGMA: f64 = 1.0;
pub const STEADY_MAX_RATE: f64 = 10.0;
pub const OFFICE_MEDIAN_RATE: f64 = 0.05;
pub const BATCH_PERIOD_SECS: f64 = 300.0;
pub const BATCH_BURST: (u32, u32) = (50, 200);
pub const BATCH_SPREAD_SECS: (f64, f64) = (2.0, 6.0);
pub const RUNAWAY_LOOP_RATES: [f64; 2] = [25.0, 40.0];
pub const RUNAWAY_EPISODE_FRACTION: f64 = 1.0 / 12.0;
pub const MONITOR_INTERVAL_SECS: f64 = 10.0;
/// The smallest `--clients` that holds one client of every kind.
pub const MIN_CLIENTS: u32 = 6;

const API_MIX: &[(RouteKind, u32)] = &[
    (RouteKind::User, 28),
    (RouteKind::Order, 22),
    (RouteKind::CreateOrder, 7),
    (RouteKind::Products, 12),
    (RouteKind::Search, 14),
    (RouteKind::Notifications, 10),
    (RouteKind::Login, 2),
    (RouteKind::AddToCart, 4),
    (RouteKind::Health, 1),
];
const BROWSER_MIX: &[(RouteKind, u32)] = &[
    (RouteKind::Home, 6),
    (RouteKind::Static, 40),
    (RouteKind::Favicon, 2),
    (RouteKind::ProductPage, 9),
    (RouteKind::User, 7),
    (RouteKind::Order, 8),
    (RouteKind::CreateOrder, 2),
    (RouteKind::AddToCart, 4),
    (RouteKind::Products, 8),
    (RouteKind::Search, 10),
    (RouteKind::Login, 4),
];
const CRAWLER_MIX: &[(RouteKind, u32)] = &[
    (RouteKind::ProductPage, 55),
    (RouteKind::Blog, 12),
    (RouteKind::Home, 4),
    (RouteKind::Robots, 2),
    (RouteKind::Sitemap, 2),
    (RouteKind::Search, 10),
    (RouteKind::Products, 6),
    (RouteKind::Static, 9),
];
const BATCH_MIX: &[(RouteKind, u32)] = &[(RouteKind::Order, 70), (RouteKind::User, 30)];
const MONITOR_MIX: &[(RouteKind, u32)] = &[(RouteKind::Health, 1)];

/// How many clients of each kind `--clients N` holds (steady takes the rest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cast {
    /// Steady clients (IPv4 and IPv6).
    pub steady: u32,
    /// How many of the steady clients use IPv6.
    pub ipv6: u32,
    /// Batch workers.
    pub batch: u32,
    /// Runaway clients.
    pub runaway: u32,
    /// Crawlers.
    pub crawlers: u32,
    /// Users behind the NAT office's one address.
    pub office_users: u32,
}

impl Cast {
    /// The cast for `clients` addresses (at least [`MIN_CLIENTS`]): one office,
    /// one monitor, one runaway (two from 100 clients), a batch worker per 50
    /// and a crawler per 40 clients; a twelfth of the steady clients (at least
    /// two) use IPv6; the office has 15 users plus one per 10 clients.
    pub fn for_clients(clients: u32) -> Cast {
        let runaway = if clients >= 100 { 2 } else { 1 };
        let batch = (clients / 50).max(1);
        let crawlers = (clients / 40).max(1);
        let steady = clients - 2 - runaway - batch - crawlers;
        Cast {
            steady,
            ipv6: steady.min((steady / 12).max(2)),
            batch,
            runaway,
            crawlers,
            office_users: 15 + clients / 10,
        }
    }
}

/// Draws the whole cast for `clients` addresses (at least [`MIN_CLIENTS`]).
pub fn cast(clients: u32, rng: &mut Rng) -> Vec<Profile> {
    let cast = Cast::for_clients(clients);
    let mut ips = Addresses::default();
    let mut profiles = Vec::new();
    let base = |kind, addr, user_agent, mix, timing| Profile {
        kind,
        addr,
        user: None,
        user_agent,
        forwarded_for: None,
        browser: false,
        own_user_id: 0,
        mix,
        timing,
    };

    for i in 0..cast.steady {
        let browser = rng.chance(0.4);
        let addr = if i < cast.ipv6 {
            ipv6(rng)
        } else {
            ipv4(rng, &mut ips)
        };
        let rate = rng
            .lognormal(STEADY_MEDIAN_RATE, STEADY_SIGMA)
            .min(STEADY_MAX_RATE);
        let (agent, mix) = if browser {
            (*rng.pick(&BROWSERS), BROWSER_MIX)
        } else {
            (*rng.pick(&API_AGENTS), API_MIX)
        };
        let mut p = base(Kind::Steady, addr, agent, mix, Timing::Poisson { rate });
        p.browser = browser;
        if !browser && rng.chance(0.35) {
            p.user = Some(format!("{}-{}", rng.pick(&COMPANIES), rng.between(1, 99)));
        }
        if rng.chance(0.15) {
            p.forwarded_for = Some(format!(
                "10.{}.{}.{}",
                rng.below(256),
                rng.below(256),
                1 + rng.below(254)
            ));
        }
        profiles.push(p);
    }

    // Batch workers share one cloud /24, so `--cidr4 24` groups them.
    let fleet = ipv4(rng, &mut ips);
    let fleet = fleet
        .rsplit_once('.')
        .map_or("", |(net, _)| net)
        .to_string();
    for i in 0..cast.batch {
        let timing = Timing::Bursts {
            period: BATCH_PERIOD_SECS,
            phase: rng.uniform_in(0.0, BATCH_PERIOD_SECS),
            size: BATCH_BURST,
            spread: BATCH_SPREAD_SECS,
            idle_rate: 0.002,
        };
        let addr = format!("{fleet}.{}", 10 + i);
        ips.claim(&addr);
        let mut p = base(
            Kind::Batch,
            addr,
            BATCH_AGENTS[i as usize % 2],
            BATCH_MIX,
            timing,
        );
        p.user = Some(format!(
            "svc-{}",
            ["reports", "sync", "billing", "search-index"][i as usize % 4]
        ));
        profiles.push(p);
    }

    for i in 0..cast.runaway as usize {
        let looped = if i == 0 {
            Route::Notifications(1 + rng.below(250_000) as u32)
        } else {
            Route::CreateOrder
        };
        let timing = Timing::Loop {
            base_rate: 0.1,
            loop_rate: RUNAWAY_LOOP_RATES[i],
            start: rng.uniform_in(0.15, 0.75),
            length: RUNAWAY_EPISODE_FRACTION,
            route: looped,
            throttled: 0.35,
        };
        let addr = ipv4(rng, &mut ips);
        profiles.push(base(
            Kind::Runaway,
            addr,
            RUNAWAY_AGENTS[i],
            API_MIX,
            timing,
        ));
    }

    let office = ipv4(rng, &mut ips);
    for i in 0..cast.office_users as usize {
        let rate = rng.lognormal(OFFICE_MEDIAN_RATE, 0.5);
        let agent = *rng.pick(&BROWSERS);
        let mut p = base(
            Kind::Office,
            office.clone(),
            agent,
            BROWSER_MIX,
            Timing::Poisson { rate },
        );
        p.user = Some(format!("{}.{}", FIRST[i % 24], LAST[i / 24 % 24]));
        p.browser = true;
        profiles.push(p);
    }

    for i in 0..cast.crawlers as usize {
        let rate = rng.lognormal(0.8, 0.3);
        let addr = ipv4(rng, &mut ips);
        profiles.push(base(
            Kind::Crawler,
            addr,
            CRAWLERS[i % CRAWLERS.len()],
            CRAWLER_MIX,
            Timing::Poisson { rate },
        ));
    }

    let monitor = Timing::Fixed {
        interval: MONITOR_INTERVAL_SECS,
        jitter: 0.05,
    };
    let addr = format!("10.0.{}.{}", rng.below(256), 2 + rng.below(250));
    profiles.push(base(
        Kind::Monitor,
        addr,
        "ELB-HealthChecker/2.0",
        MONITOR_MIX,
        monitor,
    ));

    for p in &mut profiles {
        p.own_user_id = 1 + rng.below(250_000) as u32;
    }
    profiles
}

#[cfg(test)]
mod tests {
    use rustc_hash::FxHashSet;

    use super::*;

    #[test]
    fn every_kind_is_cast_and_addresses_add_up() {
        for clients in [MIN_CLIENTS, 20, 200, 300] {
            let profiles = cast(clients, &mut Rng::new(42));
            let addrs: FxHashSet<&str> = profiles.iter().map(|p| p.addr.as_str()).collect();
            assert_eq!(addrs.len(), clients as usize, "{clients} clients");
            for kind in [
                Kind::Steady,
                Kind::Batch,
                Kind::Runaway,
                Kind::Office,
                Kind::Crawler,
                Kind::Monitor,
            ] {
                assert!(
                    profiles.iter().any(|p| p.kind == kind),
                    "{kind:?} missing at {clients}"
                );
            }
            assert!(
                profiles.iter().any(|p| p.addr.contains(':')),
                "no IPv6 at {clients}"
            );
        }
    }

    #[test]
    fn office_users_share_one_address_with_distinct_names() {
        let profiles = cast(200, &mut Rng::new(1));
        let office: Vec<&Profile> = profiles.iter().filter(|p| p.kind == Kind::Office).collect();
        assert_eq!(office.len(), 35);
        assert!(office.iter().all(|p| p.addr == office[0].addr));
        let names: FxHashSet<&str> = office.iter().filter_map(|p| p.user.as_deref()).collect();
        assert_eq!(names.len(), office.len());
    }

    #[test]
    fn crawlers_say_bot() {
        let profiles = cast(300, &mut Rng::new(9));
        for p in profiles.iter().filter(|p| p.kind == Kind::Crawler) {
            assert!(
                p.user_agent.to_ascii_lowercase().contains("bot"),
                "{}",
                p.user_agent
            );
        }
    }
}
