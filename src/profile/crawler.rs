//! **Crawler**: a well-known crawler's user agent. Crawlers want a rule of
//! their own (verify them by reverse DNS; a user agent is easy to fake).
//!
//! Threshold: at least [`MIN_SHARE`] of the client's requests carry a user
//! agent containing one of [`CRAWLERS`] (case-insensitive). The list holds the
//! tokens the operators document for their crawlers (Google: "Googlebot",
//! developers.google.com/search/docs/crawling-indexing/overview-google-crawlers;
//! Bing: "bingbot", bing.com/webmasters/help/which-crawlers-does-bing-use;
//! and the same for the others).

use super::{Finding, Kind, Profile, Subject};

/// Share of requests with a crawler's user agent.
pub const MIN_SHARE: f64 = 0.5;

/// Tokens of well-known crawlers' user agents.
pub const CRAWLERS: &[&str] = &[
    "googlebot",
    "bingbot",
    "slurp",
    "duckduckbot",
    "baiduspider",
    "yandexbot",
    "applebot",
    "facebookexternalhit",
    "twitterbot",
    "linkedinbot",
    "ahrefsbot",
    "semrushbot",
    "mj12bot",
    "dotbot",
    "petalbot",
    "gptbot",
    "claudebot",
    "ccbot",
    "bytespider",
    "amazonbot",
];

/// Whether a user agent names a well-known crawler.
pub fn is_crawler(agent: &str) -> bool {
    let lower = agent.to_ascii_lowercase();
    CRAWLERS.iter().any(|c| lower.contains(c))
}

/// See the module documentation.
pub struct Crawler;

impl Profile for Crawler {
    fn among_all(&self) -> bool {
        true
    }

    fn detect(&self, s: &Subject<'_>) -> Option<Finding> {
        let f = s.facts;
        let agent = f.crawler_agent?;
        let share = f.crawler_requests as f64 / f.requests.max(1) as f64;
        if share < MIN_SHARE {
            return None;
        }
        Some(Finding {
            kind: Kind::Crawler,
            evidence: format!(
                "user agent `{}` on {:.0}% of {} requests",
                s.agent(agent),
                share * 100.0,
                f.requests
            ),
            suggestion:
                "a search-engine crawler: verify it by reverse DNS, then give it a rule of its own"
                    .into(),
        })
    }
}
