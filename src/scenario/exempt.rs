//! Exemptions in a replay: which events a policy's exempt rules match. An
//! exempt event is one no rule applies to, so it is admitted and changes no
//! limiter's state (the replay's rule for events outside every rule).

use std::sync::Arc;

use rayon::prelude::*;

use super::names::{NameFilter, names_of, picked_alike};
use super::plan::{KeyRef, key_ref};
use super::selection::{key_ids, key_names};
use crate::events::{EventTable, NO_KEY};
use crate::ingest::key::{KeyReading, KeySet, same_ignoring_case};
use crate::policy::Exemption;
use crate::simulate::gateway::{Gateway, NameReading};

/// How each exemption compares clients as a product reading keys
/// `reading`'s way (`None`: as the policy, see [`Exemption::compared_on`]):
/// the key column's text, the client and whether case is ignored, `None`
/// for an exemption without a client, which compares no key.
fn compared(
    exemptions: &[Exemption],
    keys: &KeySet,
    reading: Option<KeyReading>,
) -> Vec<Option<Compared>> {
    let ignore_case = reading.is_some_and(|r| r.exempt_ignores_case);
    (exemptions.iter())
        .map(|e| match e.key_and_client(keys, reading) {
            (key, Some(client)) => Some((key, client, ignore_case)),
            (_, None) => None,
        })
        .collect()
}

/// How an exemption's client is compared: the key column's text, the
/// client, and whether case is ignored ([`KeyReading::exempt_ignores_case`]).
type Compared = (String, String, bool);

/// Per event, whether an exemption matches it, each comparing clients as
/// `ways` says (from [`compared`]) and methods and paths as `names` reads
/// them; `None` without exemptions. The column each client is compared on
/// must be among `keys` (the ingestion's key set, see
/// [`crate::policy::exempt::add_key_columns`]).
fn exempt_mask(
    table: &EventTable,
    exemptions: &[Exemption],
    (ways, names): (&[Option<Compared>], NameReading),
    keys: &KeySet,
) -> Option<Arc<[bool]>> {
    if exemptions.is_empty() {
        return None;
    }
    let mut mask = vec![false; table.len()];
    for (e, way) in exemptions.iter().zip(ways) {
        let filter = NameFilter::new(
            &table.methods,
            &table.paths,
            (e.method.as_deref(), e.route.as_ref()),
            names,
        );
        // The key column and the client's id in it; a client that never
        // appears matches nothing.
        let client = match way {
            Some(compared) => match clients_in_column(table, keys, compared) {
                Some(found) => Some(found),
                None => continue,
            },
            None => None,
        };
        mask.par_iter_mut().enumerate().for_each(|(i, exempt)| {
            let matched = filter.picks(table.method[i], table.path_at(i), table.protocol[i])
                && (client.as_ref())
                    .is_none_or(|(ids, wanted)| ids[i] != NO_KEY && wanted.contains(&ids[i]));
            *exempt |= matched;
        });
    }
    Some(mask.into())
}

/// The ids of the key column an exemption's client is compared on (one
/// [`add_key_columns`] added) and the ids among them that are the client
/// (those equal to it ignoring case, where case is ignored); `None`
/// when no request has it.
///
/// [`add_key_columns`]: crate::policy::exempt::add_key_columns
fn clients_in_column<'t>(
    table: &'t EventTable,
    keys: &KeySet,
    (key_text, client, ignore_case): &Compared,
) -> Option<(&'t [u32], Vec<u32>)> {
    let found = keys.by_text(key_text).map(|_| key_ref(keys, key_text));
    let key: KeyRef =
        found.expect("the column an exemption is compared on was ingested (add_key_columns)");
    let names = key_names(table, key);
    let ids: Vec<u32> = match ignore_case {
        false => names.get(client).into_iter().collect(),
        true => (0..names.len() as u32)
            .filter(|&id| same_ignoring_case(names.name(id), client))
            .collect(),
    };
    (!ids.is_empty()).then(|| (key_ids(table, key), ids))
}

/// The exemptions naming a client that no request has, as the policy reads
/// keys (`reading`: `None`) or as a product reading keys that way does:
/// they exempt nothing there (a typo, a name that is no client, or a client
/// that product spells otherwise). The column each client is compared on
/// must have been ingested (see [`clients_in_column`]).
fn unmatched_clients<'e>(
    table: &EventTable,
    exemptions: &'e [Exemption],
    keys: &KeySet,
    reading: Option<KeyReading>,
) -> Vec<&'e Exemption> {
    let ways = compared(exemptions, keys, reading);
    (exemptions.iter().zip(ways))
        .filter(|(_, way)| {
            (way.as_ref())
                .is_some_and(|compared| clients_in_column(table, keys, compared).is_none())
        })
        .map(|(e, _)| e)
        .collect()
}

/// The exemptions that exempt nothing for want of a request with their
/// client (see [`unmatched`]).
#[derive(Debug, Default)]
pub struct Unmatched<'e> {
    /// As the policy reads keys.
    pub by_policy: Vec<&'e Exemption>,
    /// As some gateways read them, each with those gateways (but not by the
    /// policy): their replays and configurations exempt nothing by it.
    pub by_gateways: Vec<(&'e Exemption, Vec<Gateway>)>,
}

/// The exemptions naming a client that no request has, as the policy reads
/// keys and as each of `gateways` does. An address prefix (`--cidr4/6`) is
/// one the gateways miss: all but the Redis script key on whole addresses.
pub fn unmatched<'e>(
    table: &EventTable,
    exemptions: &'e [Exemption],
    keys: &KeySet,
    gateways: &[Gateway],
) -> Unmatched<'e> {
    let by_policy = unmatched_clients(table, exemptions, keys, None);
    // Each distinct reading's unmatched exemptions, worked out once.
    let mut read: Vec<(KeyReading, Vec<&'e Exemption>)> = Vec::new();
    let mut by_gateways: Vec<(&'e Exemption, Vec<Gateway>)> = Vec::new();
    for &gateway in gateways {
        let reading = gateway.key_reading();
        let place = match read.iter().position(|(r, _)| *r == reading) {
            Some(place) => place,
            None => {
                read.push((
                    reading,
                    unmatched_clients(table, exemptions, keys, Some(reading)),
                ));
                read.len() - 1
            }
        };
        let only_here =
            (read[place].1.iter()).filter(|&&e| !by_policy.iter().any(|&p| std::ptr::eq(p, e)));
        for &e in only_here {
            match by_gateways.iter_mut().find(|(f, _)| std::ptr::eq(*f, e)) {
                Some((_, named)) => named.push(gateway),
                None => by_gateways.push((e, vec![gateway])),
            }
        }
    }
    Unmatched {
        by_policy,
        by_gateways,
    }
}

/// The exemption masks of a replay: the policy's and each product
/// reading's (`--gateway`), one per distinct way of comparing the clients
/// and reading methods and paths.
#[derive(Debug, Clone, Default)]
pub struct ExemptMasks {
    /// The distinct masks, the policy's first.
    masks: Vec<Option<Arc<[bool]>>>,
    /// Each product reading's.
    readings: Vec<Read>,
}

/// A product reading among the masks.
#[derive(Debug, Clone)]
struct Read {
    reading: (KeyReading, NameReading),
    /// Its mask's place among the masks.
    place: usize,
    /// Whether it compares every client, and picks every method and path,
    /// as the policy does.
    alike: (bool, bool),
}

impl ExemptMasks {
    /// The masks of `exemptions` as the policy and each of `readings` read
    /// their keys, methods and paths; readings that give the same mask share
    /// it.
    pub fn new(
        table: &EventTable,
        exemptions: &[Exemption],
        keys: &KeySet,
        readings: &[(KeyReading, NameReading)],
    ) -> Self {
        let policy = (compared(exemptions, keys, None), NameReading::default());
        let mut masks = vec![exempt_mask(table, exemptions, (&policy.0, policy.1), keys)];
        // Each way of matching worked out, with its mask's place.
        let mut ways = vec![(policy, 0)];
        let mut entries = Vec::new();
        let table_names = names_of(table);
        for &(reading, names) in readings {
            let way = (compared(exemptions, keys, Some(reading)), names);
            let names_alike = (exemptions.iter()).all(|e| {
                let wanted = (e.method.as_deref(), e.route.as_ref());
                picked_alike(table_names, wanted, names)
            });
            let alike = (way.0 == ways[0].0.0, names_alike);
            let place = match ways.iter().find(|(w, _)| *w == way) {
                Some(&(_, place)) => place,
                None => {
                    let mask = exempt_mask(table, exemptions, (&way.0, names), keys);
                    let place = masks.iter().position(|m| *m == mask).unwrap_or_else(|| {
                        masks.push(mask);
                        masks.len() - 1
                    });
                    ways.push((way, place));
                    place
                }
            };
            entries.push(Read {
                reading: (reading, names),
                place,
                alike,
            });
        }
        ExemptMasks {
            masks,
            readings: entries,
        }
    }

    /// The entry of a product reading keys `reading`'s way and names
    /// `names`' way.
    fn read(&self, reading: KeyReading, names: NameReading) -> Option<&Read> {
        (self.readings.iter()).find(|r| r.reading == (reading, names))
    }

    /// Whether the exemptions, read `reading`'s and `names`' way, compare
    /// every client as the policy does, and pick every method and path as
    /// it does (both, for a reading not among the masks').
    pub fn read_alike(&self, reading: KeyReading, names: NameReading) -> (bool, bool) {
        self.read(reading, names).map_or((true, true), |r| r.alike)
    }

    /// The mask of scenarios read `reading`'s way (`None`: the policy's),
    /// methods and paths `names`' way, and its place among the masks:
    /// scenarios with one place share it.
    pub fn of(
        &self,
        reading: Option<KeyReading>,
        names: NameReading,
    ) -> (usize, Option<&Arc<[bool]>>) {
        let place = match reading {
            None => 0,
            Some(r) => {
                let found = self.read(r, names);
                debug_assert!(
                    found.is_some() || self.masks.is_empty(),
                    "no exemption mask for {r:?}"
                );
                found.map_or(0, |r| r.place)
            }
        };
        (place, self.masks.get(place).and_then(Option::as_ref))
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::ingest::key::{ForwardedReading::*, KeySpec};
    use crate::ingest::{FormatChoice, KeptPaths, Settings, ingest};
    use crate::policy::Policy;
    use crate::policy::exempt::add_key_columns;

    /// The masks of `policy`'s exemptions over `log` (`$remote_addr` then
    /// X-Forwarded-For), as the policy and each of `readings` read keys.
    fn masks(policy: &str, log: &str, readings: &[KeyReading]) -> ExemptMasks {
        let checked = Policy::parse_policy(policy, "p.toml").unwrap();
        let mut keys = KeySet::new(KeySpec::parse("ip", None, None).unwrap());
        add_key_columns(&mut keys, &checked.rules, &checked.exemptions, readings);
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(log.as_bytes()).unwrap();
        let settings = Settings {
            inputs: vec![file.path().to_path_buf()],
            format: FormatChoice::log_format(
                "$remote_addr \"$http_x_forwarded_for\" \"$request\" $msec",
            ),
            json_fields: Vec::new(),
            keys: keys.clone(),
            routes: Vec::new(),
            strict: true,
            progress: None,
            paths: KeptPaths::All,
            time_of: crate::ingest::arrival::TimeOf::Arrival,
        };
        let table = ingest(&settings).unwrap().table;
        let readings: Vec<_> = readings
            .iter()
            .map(|&r| (r, NameReading::default()))
            .collect();
        ExemptMasks::new(&table, &checked.exemptions, &keys, &readings)
    }

    const LOG: &str = "10.0.0.1 \"2001:DB8::1\" \"GET /a HTTP/1.1\" 1767571200.000\n\
                       10.0.0.1 \"unknown\" \"GET /health HTTP/1.1\" 1767571200.100\n";

    #[test]
    fn readings_that_compare_clients_alike_share_the_policys_mask() {
        let policy = "[[rule]]\nname='g'\nlimit='1/1m'\n\
                      [[rule]]\nname='m'\nkey='xff'\nclient='2001:db8::1'\nexempt=true\n\
                      [[rule]]\nname='h'\nroute='^/health$'\nexempt=true\n";
        let [nginx, haproxy, envoy, traefik] =
            [TokenAsWritten, AddressElseConnection, AsLogged, AsLogged].map(KeyReading::addresses);
        let masks = masks(policy, LOG, &[nginx, haproxy, envoy, traefik]);
        let of = |r| masks.of(r, NameReading::default()).0;
        // Envoy and Traefik read xff as the policy does: its mask, one pass.
        assert_eq!((of(None), of(Some(envoy)), of(Some(traefik))), (0, 0, 0));
        // nginx compares the token as written: `2001:DB8::1` is not exempt.
        assert_eq!(of(Some(nginx)), 1);
        let mask = |r| masks.of(r, NameReading::default()).1.unwrap().to_vec();
        assert_eq!(mask(None), [true, true]);
        assert_eq!(mask(Some(nginx)), [false, true]);
        // HAProxy compares addresses on a column of its own, which exempts
        // the same events: the policy's mask.
        assert_eq!(of(Some(haproxy)), 0);
        assert_eq!(mask(Some(haproxy)), [true, true]);
    }

    #[test]
    fn exemptions_by_route_alone_compare_no_key() {
        let policy = "[[rule]]\nname='g'\nkey='xff'\nlimit='1/1m'\n\
                      [[rule]]\nname='h'\nkey='xff'\nroute='^/health$'\nexempt=true\n";
        let readings = [TokenAsWritten, AddressElseConnection].map(KeyReading::addresses);
        let masks = masks(policy, LOG, &readings);
        for r in readings {
            assert_eq!(masks.of(Some(r), NameReading::default()).0, 0, "{r:?}");
        }
    }
}
