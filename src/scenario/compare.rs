//! `--compare-logged`: simulated decisions against the decisions the log itself
//! records (nginx `$limit_req_status`, or status 429/503), as a confusion matrix.

use serde::Serialize;

use crate::events::EventTable;
use crate::text::time::format_rfc3339;

/// How many disagreeing requests are listed.
const LISTED: usize = 10;

/// Agreement between one scenario and the log.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub scenario: String,
    /// Requests whose log records a decision.
    pub compared: u64,
    /// Requests whose log records none (not compared).
    pub not_compared: u64,
    pub agree: u64,
    /// agree / compared.
    pub agreement: f64,
    pub simulated_allowed_logged_allowed: u64,
    pub simulated_allowed_logged_rejected: u64,
    pub simulated_rejected_logged_allowed: u64,
    pub simulated_rejected_logged_rejected: u64,
    /// The first requests where they differ.
    pub disagreements: Vec<Disagreement>,
}

/// One request where simulation and log differ.
#[derive(Debug, Clone, Serialize)]
pub struct Disagreement {
    pub time: String,
    pub client: String,
    pub endpoint: String,
    pub simulated_allowed: bool,
    pub logged_allowed: bool,
}

/// Compares the final decisions `allowed` of `scenario` with the logged ones.
pub fn compare(table: &EventTable, scenario: &str, allowed: &[bool]) -> Comparison {
    let mut matrix = [[0u64; 2]; 2]; // [simulated][logged], index 1 = allowed
    let mut disagreements = Vec::new();
    let mut not_compared = 0;
    for (i, &simulated) in allowed.iter().enumerate() {
        let Some(logged) = table.logged[i].admitted() else {
            not_compared += 1;
            continue;
        };
        matrix[usize::from(simulated)][usize::from(logged)] += 1;
        if simulated != logged && disagreements.len() < LISTED {
            disagreements.push(Disagreement {
                time: format_rfc3339(table.ts[i]),
                client: table.clients.name(table.client[i]).to_string(),
                endpoint: table.endpoints.name(table.endpoint[i]).to_string(),
                simulated_allowed: simulated,
                logged_allowed: logged,
            });
        }
    }
    let compared: u64 = matrix.iter().flatten().sum();
    let agree = matrix[0][0] + matrix[1][1];
    Comparison {
        scenario: scenario.to_string(),
        compared,
        not_compared,
        agree,
        agreement: if compared == 0 {
            0.0
        } else {
            agree as f64 / compared as f64
        },
        simulated_allowed_logged_allowed: matrix[1][1],
        simulated_allowed_logged_rejected: matrix[1][0],
        simulated_rejected_logged_allowed: matrix[0][1],
        simulated_rejected_logged_rejected: matrix[0][0],
        disagreements,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{Event, Logged};

    #[test]
    fn confusion_matrix_by_hand() {
        let mut t = EventTable::default();
        let c = t.clients.intern("c");
        t.endpoints.intern("GET /");
        let logged = [
            Logged::Passed,
            Logged::Rejected,
            Logged::Delayed,
            Logged::RejectedDryRun,
            Logged::Unknown,
        ];
        for (i, l) in logged.into_iter().enumerate() {
            t.push(Event {
                ts: i as i64,
                client: c,
                logged: l,
                ..Event::default()
            });
        }
        let r = compare(&t, "x", &[true, true, false, false, true]);
        assert_eq!((r.compared, r.not_compared, r.agree), (4, 1, 2));
        assert_eq!(r.simulated_allowed_logged_rejected, 1);
        assert_eq!(r.simulated_rejected_logged_allowed, 1);
        assert_eq!(r.disagreements.len(), 2);
        assert_eq!(r.agreement, 0.5);
    }
}
