//! **Crawler**: a well-known crawler's user agent. Crawlers want a rule of
//! their own (verify them by reverse DNS; a user agent is easy to fake).
//!
//! Threshold: at least [`MIN_SHARE`] of the client's requests carry a user
//! agent containing one of [`CRAWLERS`] (case-insensitive).
//!
//! Each token is the name the crawler gives itself in its user agent. The
//! operator's own page naming the token was found for these (checked in
//! November 2026):
//!
//! | token | operator page |
//! | --- | --- |
//! | googlebot | developers.google.com/search/docs/crawling-indexing/overview-google-crawlers |
//! | bingbot | www.bing.com/webmasters/help/which-crawlers-does-bing-use-8c184ec0 |
//! | applebot | support.apple.com/en-us/HT204683 |
//! | yandexbot | yandex.com/support/webmaster/en/robot-workings/user-agent |
//! | ahrefsbot | ahrefs.com/robot |
//! | ccbot | commoncrawl.org/faq |
//! | petalbot | aspiegel.com/petalbot |
//! | mj12bot | mj12bot.com |
//!
//! For the other tokens no operator page was confirmed, so none is cited:
//! they are the names in the user agents these crawlers send (DuckDuckBot,
//! Baiduspider, SemrushBot, facebookexternalhit, Twitterbot, LinkedInBot,
//! GPTBot, ClaudeBot, Amazonbot, DotBot, Bytespider, Yahoo! Slurp), as
//! third-party crawler directories list them.

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
