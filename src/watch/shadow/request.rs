//! The requests of a parsed chunk as the rules see them: per rule the key it
//! counts under (where the rule's method and route, read as the gateway reads
//! them, pick it and Kong's earlier routes do not take it), whether an
//! exemption matches, and what the profiles of tracked clients need.

use std::sync::Arc;

use regex::Regex;

use super::Shadow;
use crate::ingest::chunk::ChunkResult;
use crate::scenario::names::NameFilter;
use crate::simulate::gateway::NameReading;
use crate::units::Millis;
use crate::watch::exempt::key_value;

/// One request as the rules see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// Per rule: the key the request counts under, `None` where the rule does not apply.
    pub keys: Vec<Option<Box<str>>>,
    /// An exemption matches it: admitted, counted by no rule.
    pub exempt: bool,
    /// Its endpoint (shared by the chunk's requests to it) and status, for
    /// the profiles of tracked clients.
    pub endpoint: Arc<str>,
    pub status: u16,
}

impl Shadow {
    /// The requests of a parsed chunk, with their times, in line order.
    pub fn requests(&self, chunk: &ChunkResult) -> Vec<(Millis, Request)> {
        // Methods and paths are tested once per distinct name of the chunk,
        // read as the gateway reads them.
        let names = self
            .gateway
            .map_or_else(NameReading::default, |g| g.name_reading());
        let filter = |(method, route): (Option<&str>, Option<&Regex>)| {
            NameFilter::new(&chunk.methods, &chunk.paths, (method, route), names)
        };
        let filters: Vec<NameFilter> = (self.rules.iter())
            .map(|r| filter((r.rule.method.as_deref(), r.rule.route.as_ref())))
            .collect();
        let unless: Vec<Vec<NameFilter>> = (self.rules.iter())
            .map(|r| {
                (r.unless.iter())
                    .map(|(m, route)| filter((m.as_deref(), route.as_ref())))
                    .collect()
            })
            .collect();
        let exempt = self.exemptions.mask(chunk);
        let endpoints: Vec<Arc<str>> = chunk.endpoints.names().map(Arc::from).collect();
        let no_endpoint: Arc<str> = Arc::from("");
        chunk
            .events
            .iter()
            .enumerate()
            .map(|(row, event)| {
                let keys = self
                    .rules
                    .iter()
                    .enumerate()
                    .map(|(r, rule)| {
                        let (method, path) = (event.method, event.path);
                        if !filters[r].picks(method, path, event.protocol)
                            || unless[r].iter().any(|f| f.picks_names(method, path))
                        {
                            return None;
                        }
                        key_value(chunk, rule.key_column, row).map(Into::into)
                    })
                    .collect();
                let exempt = exempt.as_ref().is_some_and(|mask| mask[row]);
                let endpoint = endpoints
                    .get(event.endpoint as usize)
                    .unwrap_or(&no_endpoint)
                    .clone();
                let request = Request {
                    keys,
                    exempt,
                    endpoint,
                    status: event.status,
                };
                (event.ts, request)
            })
            .collect()
    }
}
