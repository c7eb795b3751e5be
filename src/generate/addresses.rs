//! Client addresses for the generated cast: distinct IPv4 addresses, each in
//! a /24 of its own while those last, and documentation-prefix IPv6 ones.

use rustc_hash::FxHashSet;

use super::catalog::FIRST_OCTETS;
use super::rng::Rng;

/// The IPv4 addresses drawn so far. Each client gets a /24 of its own while
/// fewer than [`OWN_NETS`] are taken (every cast up to about a million
/// clients); beyond that, addresses stay distinct but may share a /24, so any
/// `--clients` can be drawn (the prefixes hold 24 x 2^24 addresses).
#[derive(Debug, Default)]
pub(super) struct Addresses {
    nets: FxHashSet<u32>,
    addrs: FxHashSet<u32>,
    own_nets: usize,
}

impl Addresses {
    /// Marks an address chosen elsewhere as taken, so no later draw repeats it.
    pub(super) fn claim(&mut self, addr: &str) {
        if let Ok(ip) = addr.parse::<std::net::Ipv4Addr>() {
            self.addrs.insert(u32::from(ip));
        }
    }
}

/// How many /24 networks are handed out one per client (3/4 of the 24 x 2^16
/// /24s of [`FIRST_OCTETS`](super::catalog::FIRST_OCTETS), so that drawing a free one stays cheap).
const OWN_NETS: usize = 24 * (1 << 16) * 3 / 4;

pub(super) fn ipv4(rng: &mut Rng, used: &mut Addresses) -> String {
    let own_nets = if used.own_nets == 0 {
        OWN_NETS
    } else {
        used.own_nets
    };
    loop {
        let a = *rng.pick(&FIRST_OCTETS);
        let rest = rng.below(1 << 24) as u32;
        let ip = (u32::from(a) << 24) | rest;
        let last = ip & 0xFF;
        if last == 0 || last == 255 {
            continue;
        }
        let fresh = if used.nets.len() < own_nets {
            used.nets.insert(ip >> 8)
        } else {
            !used.addrs.contains(&ip)
        };
        if fresh {
            used.addrs.insert(ip);
            let [a, b, c, d] = ip.to_be_bytes();
            return format!("{a}.{b}.{c}.{d}");
        }
    }
}

/// An address in `2001:db8::/32`, written as servers log it (RFC 5952: a
/// zero group is compressed with the zeros after it).
pub(super) fn ipv6(rng: &mut Rng) -> String {
    let group = |rng: &mut Rng| rng.below(0x1_0000) as u16;
    let (a, b) = (group(rng), group(rng));
    let last = 1 + rng.below(0xFFFF) as u16;
    std::net::Ipv6Addr::new(0x2001, 0xdb8, a, b, 0, 0, 0, last).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_addresses_are_written_canonically() {
        // Found while canonicalising keys: `2001:db8:7d55:0::6da3` was written
        // for a zero group, where servers write `2001:db8:7d55::6da3`.
        let mut rng = Rng::new(7);
        for _ in 0..200_000 {
            let text = ipv6(&mut rng);
            let parsed: std::net::Ipv6Addr = text.parse().unwrap();
            assert_eq!(parsed.to_string(), text);
        }
    }

    #[test]
    fn addresses_stay_distinct_once_the_own_networks_run_out() {
        let mut used = Addresses {
            own_nets: 100,
            ..Addresses::default()
        };
        let mut rng = Rng::new(4);
        let addrs: FxHashSet<String> = (0..5_000).map(|_| ipv4(&mut rng, &mut used)).collect();
        assert_eq!(addrs.len(), 5_000);
        assert_eq!(used.nets.len(), 100);
        let nets: FxHashSet<&str> = addrs
            .iter()
            .map(|a| a.rsplit_once('.').unwrap().0)
            .collect();
        assert!(nets.len() < 5_000, "some /24s are shared");
    }
}
