//! How the synthetic site answers each family of routes: a few statuses with
//! fixed weights, and log-normal request times and body sizes.

/// How one family of routes is answered.
pub(super) struct Family {
    pub(super) statuses: [u16; 4],
    /// Relative weights of `statuses`, per ten thousand.
    pub(super) weights: [u32; 4],
    pub(super) median_ms: f64,
    pub(super) sigma: f64,
    pub(super) median_bytes: f64,
}

pub(super) const STATIC: Family = Family {
    statuses: [200, 304, 404, 500],
    weights: [7_800, 2_000, 195, 5],
    median_ms: 1.5,
    sigma: 0.5,
    median_bytes: 20_000.0,
};
pub(super) const API_READ: Family = Family {
    statuses: [200, 404, 500, 304],
    weights: [9_440, 450, 50, 60],
    median_ms: 14.0,
    sigma: 0.6,
    median_bytes: 850.0,
};
pub(super) const API_LIST: Family = Family {
    statuses: [200, 400, 500, 304],
    weights: [9_900, 40, 40, 20],
    median_ms: 65.0,
    sigma: 0.7,
    median_bytes: 4_200.0,
};
pub(super) const API_WRITE: Family = Family {
    statuses: [201, 400, 409, 500],
    weights: [9_300, 500, 100, 100],
    median_ms: 45.0,
    sigma: 0.5,
    median_bytes: 620.0,
};
pub(super) const LOGIN: Family = Family {
    statuses: [200, 401, 429, 500],
    weights: [8_290, 1_700, 0, 10],
    median_ms: 120.0,
    sigma: 0.3,
    median_bytes: 310.0,
};
pub(super) const PLAIN: Family = Family {
    statuses: [200, 200, 200, 500],
    weights: [9_995, 0, 0, 5],
    median_ms: 1.0,
    sigma: 0.3,
    median_bytes: 180.0,
};
pub(super) const PAGE: Family = Family {
    statuses: [200, 304, 404, 301],
    weights: [9_290, 200, 450, 60],
    median_ms: 30.0,
    sigma: 0.5,
    median_bytes: 24_000.0,
};

pub(super) const SCAN: Family = Family {
    statuses: [404, 403, 400, 200],
    weights: [8_500, 800, 300, 400],
    median_ms: 3.0,
    sigma: 0.5,
    median_bytes: 1_200.0,
};
