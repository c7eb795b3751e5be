use super::*;
use crate::events::{Event, EventTable};
use crate::recommend::recommend_scopes;
use crate::recommend::windows::TableWindows;
use crate::stats::{StatsSettings, analyze};

/// A small deterministic generator (splitmix64), so every scenario is fixed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1].
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// A discrete Pareto draw: floor(scale / U^(1/alpha)).
    fn pareto(&mut self, scale: f64, alpha: f64) -> u64 {
        (scale / self.unit().powf(1.0 / alpha)).floor() as u64
    }
}

/// One client: its name, and per window of one minute its count on `endpoint`.
struct Client {
    name: String,
    endpoint: &'static str,
    counts: Vec<u64>,
}

fn client(name: String, counts: Vec<u64>) -> Client {
    Client {
        name,
        endpoint: "GET /x",
        counts,
    }
}

/// The event table of `clients` (interned in the order given), each window's
/// requests spread evenly over its minute.
fn table_of(clients: &[Client]) -> EventTable {
    let mut t = EventTable::default();
    for c in clients {
        let id = t.clients.intern(&c.name);
        let e = t.endpoints.intern(c.endpoint);
        for (w, &n) in c.counts.iter().enumerate() {
            for k in 0..n {
                t.push(Event {
                    ts: w as i64 * 60_000 + (k * 60_000 / n) as i64,
                    client: id,
                    endpoint: e,
                    status: 200,
                    ..Event::default()
                });
            }
        }
    }
    t.sort_by_time();
    t
}

fn settings() -> StatsSettings {
    StatsSettings {
        window: "1m".parse().unwrap(),
        top: 5,
        exclude: vec![],
        keep_counts: false,
    }
}

/// The overall recommendation of `clients` on `choice`.
fn overall(clients: &[Client], choice: BaselineChoice) -> Recommendation {
    let t = table_of(clients);
    let a = analyze(&t, &settings());
    recommend_scopes(&t, &a, choice, 4.0, 10).0.unwrap()
}

use crate::recommend::Recommendation;

fn separated_names(r: &Recommendation) -> Vec<&str> {
    let mut names: Vec<&str> = r
        .baseline
        .separated
        .iter()
        .map(|s| s.client.as_str())
        .collect();
    names.sort_unstable();
    names
}

/// `n` clients whose windows are all drawn from one Pareto tail (alpha 1:
/// p99.9 is about ten times p99), each active in about 70% of 60 windows.
fn homogeneous(n: usize, seed: u64) -> Vec<Client> {
    homogeneous_tail(n, seed, 1.0)
}

/// [`homogeneous`] with the tail's index `alpha`.
fn homogeneous_tail(n: usize, seed: u64, alpha: f64) -> Vec<Client> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|i| {
            let counts = (0..60)
                .map(|_| {
                    if rng.unit() < 0.3 {
                        0
                    } else {
                        rng.pareto(2.0, alpha).min(5000)
                    }
                })
                .collect();
            client(format!("h{i:03}"), counts)
        })
        .collect()
}

/// `n` steady clients: each has its own rate from 5 to 60 a minute and
/// varies by up to half of it from window to window.
fn steady(n: usize, seed: u64) -> Vec<Client> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|i| {
            let rate = 5 + rng.next() % 56;
            let counts = (0..60)
                .map(|_| rate / 2 + rng.next() % (rate + 1))
                .collect();
            client(format!("s{i:03}"), counts)
        })
        .collect()
}

#[test]
fn homogeneous_heavy_tail_separates_nobody_and_equals_the_literal_figures() {
    for seed in 1..=4 {
        let clients = homogeneous(200, seed);
        let robust = overall(&clients, BaselineChoice::Robust);
        let all = overall(&clients, BaselineChoice::All);
        // The tail is steep, so the rule did run...
        assert!(
            all.basis_p999 > TAIL_RATIO * all.baseline.p99,
            "seed {seed}"
        );
        assert_eq!(robust.baseline.rule, BaselineRule::Robust);
        // ...and found no population of its own.
        assert_eq!(robust.baseline.separated_count, 0, "seed {seed}");
        assert_eq!(
            (robust.limit, robust.burst, robust.flagged_count),
            (all.limit, all.burst, all.flagged_count)
        );
        assert_eq!(all.baseline.choice, BaselineChoice::All);
    }
}

/// A flatter tail (alpha 1.7: p99.9 about 3.9 × p99, and 5.8 × p95) is steep
/// at p95 only: the step at p95 runs, and separates nobody either.
#[test]
fn homogeneous_tail_steep_at_p95_only_separates_nobody() {
    for seed in 1..=4 {
        let clients = homogeneous_tail(200, seed, 1.7);
        let robust = overall(&clients, BaselineChoice::Robust);
        let all = overall(&clients, BaselineChoice::All);
        let q = &all.baseline;
        assert!(q.p999 <= TAIL_RATIO * q.p99, "seed {seed}: {q:?}");
        let literal = all_quantiles(&clients);
        assert_eq!(
            steep_tail(&literal).map(|(basis, _)| basis),
            Some(TailBasis::P95),
            "seed {seed}"
        );
        assert_eq!(robust.baseline.separated_count, 0, "seed {seed}");
        assert_eq!(
            (robust.limit, robust.burst, robust.flagged_count),
            (all.limit, all.burst, all.flagged_count)
        );
    }
}

/// The per-window quantiles of every sample of `clients`.
fn all_quantiles(clients: &[Client]) -> Quantiles {
    let t = table_of(clients);
    analyze(&t, &settings()).overall.per_window
}

/// Populations apart holding more than 1% of the samples: two batch jobs busy
/// in every window (120 of 3720 samples) and two runaway loops. Their windows
/// are p99 itself and p99.9 is within 5 × p99, so the step at p99 alone
/// separated nobody and the limit (4 × 900) stopped none of them; the tail is
/// steep at p95.
#[test]
fn populations_above_one_percent_of_the_samples_are_separated_at_p95() {
    let mut clients = steady(60, 5);
    for name in ["batch0", "batch1"] {
        clients.push(client(name.into(), vec![600; 60]));
    }
    for (name, start) in [("runaway0", 10), ("runaway1", 40)] {
        let counts = (0..60)
            .map(|w| {
                if (start..start + 5).contains(&w) {
                    900
                } else {
                    10
                }
            })
            .collect();
        clients.push(client(name.into(), counts));
    }
    let all = overall(&clients, BaselineChoice::All);
    assert_eq!((all.basis_p999, all.baseline.p99), (900, 600));
    assert_eq!(all.flagged_count, 0);
    let r = overall(&clients, BaselineChoice::Robust);
    assert_eq!(
        separated_names(&r),
        vec!["batch0", "batch1", "runaway0", "runaway1"]
    );
    let mut flagged: Vec<&str> = r.flagged.iter().map(|f| f.client.as_str()).collect();
    flagged.sort_unstable();
    assert_eq!(flagged, separated_names(&r));
    // The steady clients peak at 1.5 x 60 = 90 a minute; the basis is theirs.
    assert!(r.basis_p999 <= 90, "{}", r.basis_p999);
    let first = &r.baseline.separated[0];
    assert!(
        first.explanation.contains(" windows above 5 x p95 "),
        "{}",
        first.explanation
    );
}

/// The evidence for runs of three: the first rule tried ("leave out every
/// client with a window above 5 × p99") separates a good share of honest
/// clients of the same homogeneous traffic.
#[test]
fn any_window_above_the_threshold_would_separate_honest_clients() {
    for seed in 1..=4 {
        let clients = homogeneous(200, seed);
        let t = table_of(&clients);
        let a = analyze(&t, &settings());
        let input = [ScopeInput {
            per_window: &a.overall.distributions.per_window,
            peaks: &a.overall.peaks,
        }];
        let mut loader = TableWindows {
            table: &t,
            window: a.window,
            scopes: vec![None],
        };
        let one = baselines_with(BaselineChoice::Robust, &input, 1, &mut loader);
        let three = baselines_with(BaselineChoice::Robust, &input, 3, &mut loader);
        eprintln!(
            "seed {seed}: any window above T separates {} of 200 clients, runs of three {}",
            one[0].separated.len(),
            three[0].separated.len()
        );
        assert!(
            one[0].separated.len() >= 10,
            "seed {seed}: {}",
            one[0].separated.len()
        );
        assert!(three[0].separated.is_empty());
    }
}

/// 200 steady clients and four runaways: 10 a minute, then 900 a minute for
/// 5 to 15 minutes in a row.
fn with_runaways() -> Vec<Client> {
    let mut clients = steady(200, 7);
    for (i, (start, minutes)) in [(3, 5), (20, 15), (40, 8), (50, 10)]
        .into_iter()
        .enumerate()
    {
        let counts = (0..60)
            .map(|w| {
                if (start..start + minutes).contains(&w) {
                    900
                } else {
                    10
                }
            })
            .collect();
        clients.push(client(format!("runaway{i}"), counts));
    }
    clients
}

#[test]
fn runaways_are_separated_and_flagged_and_no_steady_client_is() {
    let clients = with_runaways();
    let all = overall(&clients, BaselineChoice::All);
    let r = overall(&clients, BaselineChoice::Robust);
    // Literally, the runaways make the p99.9: 38 of 12240 samples are 900, so
    // the 13 top ranks are runaway windows and the limit stops none of them.
    assert_eq!(all.basis_p999, 900);
    assert_eq!(all.flagged_count, 0);
    assert_eq!(
        separated_names(&r),
        vec!["runaway0", "runaway1", "runaway2", "runaway3"]
    );
    assert!(r.baseline.separated.iter().all(|s| s.flagged));
    let mut flagged: Vec<&str> = r.flagged.iter().map(|f| f.client.as_str()).collect();
    flagged.sort_unstable();
    assert_eq!(flagged, separated_names(&r));
    // The steady clients peak at 1.5 x 60 = 90 a minute; the basis is theirs.
    assert!(r.basis_p999 <= 90 && r.basis_p999 >= 60, "{}", r.basis_p999);
    let longest = &r.baseline.separated[0];
    assert_eq!(longest.peak_window, 900);
    assert!(
        longest.explanation.starts_with("peak 900/1m; "),
        "{}",
        longest.explanation
    );
    assert!(
        r.warnings.iter().all(|w| !w.contains("steep")),
        "{:?}",
        r.warnings
    );
}

#[test]
fn a_legitimate_heavy_batch_client_is_a_population_of_its_own() {
    let mut clients = steady(200, 11);
    clients.push(client("batch".into(), vec![600; 60]));
    let all = overall(&clients, BaselineChoice::All);
    let r = overall(&clients, BaselineChoice::Robust);
    // 60 of 12060 samples are the batch job's: literally it sets the p99.9.
    assert_eq!((all.basis_p999, all.flagged_count), (600, 0));
    assert_eq!(separated_names(&r), vec!["batch"]);
    let batch = &r.baseline.separated[0];
    assert_eq!((batch.windows_above, batch.longest_run), (60, 60));
    assert!(batch.flagged);
    assert_eq!(r.flagged_count, 1);
    assert!(r.limit < 600);
}

#[test]
fn fewer_than_twenty_clients_keep_the_literal_definition() {
    let mut clients = steady(15, 3);
    clients.push(client("runaway".into(), vec![900; 10]));
    let all = overall(&clients, BaselineChoice::All);
    let r = overall(&clients, BaselineChoice::Robust);
    assert_eq!(r.baseline.rule, BaselineRule::FewClients);
    assert!(
        r.baseline
            .note
            .as_deref()
            .unwrap()
            .contains("fewer than 20 clients")
    );
    assert_eq!((r.limit, r.basis_p999), (all.limit, all.basis_p999));
    assert_eq!(r.baseline.separated_count, 0);
}

#[test]
fn each_endpoint_gets_its_own_baseline() {
    let mut clients = steady(100, 5);
    for c in &mut clients[50..] {
        c.endpoint = "POST /orders";
    }
    clients.push(Client {
        name: "loop".into(),
        endpoint: "POST /orders",
        counts: (0..60)
            .map(|w| if (10..20).contains(&w) { 500 } else { 5 })
            .collect(),
    });
    let t = table_of(&clients);
    let a = analyze(&t, &settings());
    let (_, endpoints) = recommend_scopes(&t, &a, BaselineChoice::Robust, 4.0, 10);
    let (_, orders) = endpoints.iter().find(|(e, _)| e == "POST /orders").unwrap();
    assert_eq!(separated_names(orders), vec!["loop"]);
    assert!(orders.limit < 500 && orders.flagged[0].client == "loop");
    let (_, x) = endpoints.iter().find(|(e, _)| e == "GET /x").unwrap();
    assert_eq!(x.baseline.separated_count, 0);
}

#[test]
fn input_order_and_threads_change_nothing() {
    let clients = with_runaways();
    let reversed: Vec<Client> = clients
        .iter()
        .rev()
        .map(|c| client(c.name.clone(), c.counts.clone()))
        .collect();
    let figures = |clients: &[Client], threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let r = pool.install(|| overall(clients, BaselineChoice::Robust));
        let names: Vec<String> = r
            .baseline
            .separated
            .iter()
            .map(|s| s.client.clone())
            .collect();
        (r.limit, r.burst, r.basis_p999, names)
    };
    let first = figures(&clients, 1);
    assert_eq!(first, figures(&reversed, 1));
    assert_eq!(first, figures(&clients, 3));
}

#[test]
fn runs_count_only_consecutive_windows_above() {
    let w = [(1, 10), (2, 11), (3, 3), (4, 12), (6, 13), (7, 14), (8, 15)];
    assert_eq!(runs_above(&w, 9), (6, 3));
    assert_eq!(runs_above(&w, 20), (0, 0));
    assert_eq!(runs_above(&[], 0), (0, 0));
}
