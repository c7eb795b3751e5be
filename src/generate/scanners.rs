//! Vulnerability scanners for `--scanners N`: addresses that probe well-known
//! weak spots (`/.env`, `/wp-login.php`...) and random script names, and are
//! answered mostly 404. They are added to the `--clients` cast (their
//! addresses are new ones), each a Poisson stream over the whole run.
//!
//! | parameter | value |
//! |---|---|
//! | rate | lognormal, median 2 req/s, sigma 0.5 |
//! | paths | 40%: one of [`PROBES`]; 60%: `/{dir}/{6 base36}.{ext}` or, one in seven, `/{6 base36}.{ext}` (a word list tried at the top, as directory busters do), drawn from 2^31 names, so nearly every one is new |
//! | answers | 404 85%, 403 8%, 400 3%, 200 4% |
//! | user agent | one of [`SCANNER_AGENTS`] |

use rustc_hash::FxHashSet;

use super::profiles::{Kind, Profile};
use super::rng::Rng;
use super::routes::RouteKind;
use super::traffic::Timing;

/// Well-known probe targets.
pub const PROBES: [&str; 24] = [
    "/.env",
    "/.git/config",
    "/wp-login.php",
    "/wp-admin/setup-config.php",
    "/xmlrpc.php",
    "/phpmyadmin/index.php",
    "/admin/config.php",
    "/actuator/env",
    "/server-status",
    "/.aws/credentials",
    "/config.json",
    "/backup.zip",
    "/db.sql",
    "/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php",
    "/cgi-bin/luci",
    "/boaform/admin/formLogin",
    "/HNAP1/",
    "/solr/admin/info/system",
    "/owa/auth/logon.aspx",
    "/remote/login",
    "/console/",
    "/.DS_Store",
    "/api/v1/pods",
    "/geoserver/web/",
];

/// Directories and extensions of random probe names (`""`: at the top).
const DIRS: [&str; 7] = [
    "admin",
    "wp-content",
    "uploads",
    "cgi-bin",
    "backup",
    "old",
    "",
];
const EXTS: [&str; 4] = ["php", "asp", "bak", "jsp"];

/// User agents of scanners.
pub const SCANNER_AGENTS: [&str; 4] = [
    "Mozilla/5.0 zgrab/0.x",
    "Nuclei - Open-source project (github.com/projectdiscovery/nuclei)",
    "sqlmap/1.8.2#stable (https://sqlmap.org)",
    "Mozilla/5.0 (compatible; Nmap Scripting Engine; https://nmap.org/book/nse.html)",
];

/// Probe values below this are indices into [`PROBES`]; the rest name random files.
const LISTED: u32 = PROBES.len() as u32;

const SCANNER_MIX: &[(RouteKind, u32)] = &[(RouteKind::Probe, 1)];

/// A probe target: a listed path (40%) or a random file name.
pub fn draw_probe(rng: &mut Rng) -> u32 {
    if rng.chance(0.4) {
        rng.below(u64::from(LISTED)) as u32
    } else {
        LISTED + rng.below(1 << 31) as u32
    }
}

/// Appends the path of probe `p`.
pub fn write_probe(p: u32, out: &mut Vec<u8>) {
    if p < LISTED {
        out.extend_from_slice(PROBES[p as usize].as_bytes());
        return;
    }
    let k = p - LISTED;
    let dir = DIRS[(k % DIRS.len() as u32) as usize];
    out.push(b'/');
    if !dir.is_empty() {
        out.extend_from_slice(dir.as_bytes());
        out.push(b'/');
    }
    // Six base-36 digits of k / 7 (below 36^6), so distinct k give distinct names.
    let mut name = k / DIRS.len() as u32;
    let mut digits = [0u8; 6];
    for d in digits.iter_mut().rev() {
        *d = b"0123456789abcdefghijklmnopqrstuvwxyz"[(name % 36) as usize];
        name /= 36;
    }
    out.extend_from_slice(&digits);
    out.push(b'.');
    out.extend_from_slice(EXTS[(k % EXTS.len() as u32) as usize].as_bytes());
}

/// `count` scanner profiles on addresses not in `taken`.
pub fn scanners(count: u32, rng: &mut Rng, taken: &FxHashSet<&str>) -> Vec<Profile> {
    let mut mine = FxHashSet::default();
    (0..count)
        .map(|i| {
            let addr = loop {
                // Hosting ranges scanners typically come from.
                let a = [45u8, 80, 167, 185, 193, 194][rng.below(6) as usize];
                let addr = format!(
                    "{a}.{}.{}.{}",
                    rng.below(256),
                    rng.below(256),
                    1 + rng.below(254)
                );
                if !taken.contains(addr.as_str()) && mine.insert(addr.clone()) {
                    break addr;
                }
            };
            Profile {
                kind: Kind::Scanner,
                addr,
                user: None,
                user_agent: SCANNER_AGENTS[i as usize % SCANNER_AGENTS.len()],
                forwarded_for: None,
                browser: false,
                own_user_id: 0,
                mix: SCANNER_MIX,
                timing: Timing::Poisson {
                    rate: rng.lognormal(2.0, 0.5),
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(p: u32) -> String {
        let mut out = Vec::new();
        write_probe(p, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn probes_render_listed_and_random_names() {
        assert_eq!(probe(0), "/.env");
        assert_eq!(probe(LISTED), "/admin/000000.php");
        assert_eq!(probe(LISTED + 1), "/wp-content/000000.asp");
        assert_eq!(probe(LISTED + 6), "/000000.bak", "a name at the top");
        assert_eq!(probe(LISTED + 7), "/admin/000001.jsp");
        let names: FxHashSet<String> = (LISTED..LISTED + 100_000).map(probe).collect();
        assert_eq!(names.len(), 100_000);
    }

    #[test]
    fn scanners_get_fresh_addresses() {
        let taken: FxHashSet<&str> = FxHashSet::default();
        let cast = scanners(50, &mut Rng::new(3), &taken);
        let addrs: FxHashSet<&str> = cast.iter().map(|p| p.addr.as_str()).collect();
        assert_eq!(addrs.len(), 50);
        let taken: FxHashSet<&str> = addrs.clone();
        let more = scanners(50, &mut Rng::new(3), &taken);
        assert!(more.iter().all(|p| !taken.contains(p.addr.as_str())));
    }
}
