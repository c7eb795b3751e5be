//! The synthetic site's endpoints: what a request looks like (method and URI)
//! and how the server answers it (status, body size, request time).
//!
//! A [`Route`] is a small `Copy` value; its URI is rendered only when a line is
//! written. Outcomes are drawn per route family from fixed tables, so every
//! client kind sees the same server.

use super::catalog::{BLOG_SLUGS, SEARCH_WORDS, STATIC_ASSETS};
use super::outcomes::{API_LIST, API_READ, API_WRITE, Family, LOGIN, PAGE, PLAIN, SCAN, STATIC};
use super::rng::Rng;
use super::{distinct, scanners};

/// HTTP methods the site receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
}

impl Method {
    /// The method as it appears in a request line.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
        }
    }
}

/// One request target, with its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Route {
    /// `GET /`
    Home,
    /// `GET /health`
    Health,
    /// `POST /login`
    Login,
    /// `GET /robots.txt`
    Robots,
    /// `GET /sitemap.xml`
    Sitemap,
    /// `GET /favicon.ico`
    Favicon,
    /// `GET /static/...`, an index into the asset list.
    Static(u8),
    /// `GET /api/users/{id}`
    User(u32),
    /// `GET /api/users/{id}/notifications`
    Notifications(u32),
    /// `GET /api/orders/{uuid}`; the order number picks the UUID.
    Order(u32),
    /// `POST /api/orders`
    CreateOrder,
    /// `POST /api/cart/items`
    AddToCart,
    /// `GET /api/products?page={n}&limit=50`
    Products(u16),
    /// `GET /api/search?q={terms}&page={n}`: word indices and page.
    Search(u8, u8, u8),
    /// `GET /products/{id}` (HTML page)
    ProductPage(u32),
    /// `GET /blog/{slug}`
    Blog(u8),
    /// One of the `--distinct-paths` pool (see [`super::distinct`]).
    Distinct(u32),
    /// A scanner's probe (see [`super::scanners`]).
    Probe(u32),
}

/// Route kinds without parameters: what a client mix weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteKind {
    Home,
    Health,
    Login,
    Robots,
    Sitemap,
    Favicon,
    Static,
    User,
    Notifications,
    Order,
    CreateOrder,
    AddToCart,
    Products,
    Search,
    ProductPage,
    Blog,
    Probe,
}

/// Numeric ids are drawn from these ranges.
const USER_IDS: u32 = 250_000;
/// Orders per account: a client mostly reads its own account's orders.
const OWN_ORDERS: u32 = 8;
const PRODUCT_IDS: u32 = 12_000;

impl Route {
    /// A route of `kind` with freshly drawn parameters; `own_user` is the
    /// client's account: half its user lookups and 70% of its order lookups
    /// are about that account.
    pub fn draw(kind: RouteKind, own_user: u32, rng: &mut Rng) -> Route {
        let user = |rng: &mut Rng| {
            if rng.chance(0.5) {
                own_user
            } else {
                1 + rng.below(u64::from(USER_IDS)) as u32
            }
        };
        match kind {
            RouteKind::Home => Route::Home,
            RouteKind::Health => Route::Health,
            RouteKind::Login => Route::Login,
            RouteKind::Robots => Route::Robots,
            RouteKind::Sitemap => Route::Sitemap,
            RouteKind::Favicon => Route::Favicon,
            RouteKind::Static => Route::Static(rng.below(STATIC_ASSETS.len() as u64) as u8),
            RouteKind::User => Route::User(user(rng)),
            RouteKind::Notifications => Route::Notifications(user(rng)),
            RouteKind::Order if rng.chance(0.7) => {
                Route::Order(own_user * OWN_ORDERS + rng.below(u64::from(OWN_ORDERS)) as u32)
            }
            RouteKind::Order => Route::Order(rng.below(u64::from(USER_IDS * OWN_ORDERS)) as u32),
            RouteKind::CreateOrder => Route::CreateOrder,
            RouteKind::AddToCart => Route::AddToCart,
            RouteKind::Products => Route::Products(1 + rng.below(40) as u16),
            RouteKind::Search => {
                let words = SEARCH_WORDS.len() as u64;
                let second = if rng.chance(0.4) {
                    1 + rng.below(words)
                } else {
                    0
                };
                let page = 1 + rng.below(3);
                Route::Search(rng.below(words) as u8, second as u8, page as u8)
            }
            RouteKind::ProductPage => {
                Route::ProductPage(1 + rng.below(u64::from(PRODUCT_IDS)) as u32)
            }
            RouteKind::Blog => Route::Blog(rng.below(BLOG_SLUGS.len() as u64) as u8),
            RouteKind::Probe => Route::Probe(scanners::draw_probe(rng)),
        }
    }

    /// The request method.
    pub fn method(self) -> Method {
        match self {
            Route::Login | Route::CreateOrder | Route::AddToCart => Method::Post,
            _ => Method::Get,
        }
    }

    /// Appends the request URI (path and query) to `out`; returns the length of
    /// the path part, so `$uri` and `$args` can be cut from it.
    pub fn write_uri(self, out: &mut Vec<u8>) -> usize {
        let begin = out.len();
        let mut path_end = None;
        match self {
            Route::Home => out.push(b'/'),
            Route::Health => out.extend_from_slice(b"/health"),
            Route::Login => out.extend_from_slice(b"/login"),
            Route::Robots => out.extend_from_slice(b"/robots.txt"),
            Route::Sitemap => out.extend_from_slice(b"/sitemap.xml"),
            Route::Favicon => out.extend_from_slice(b"/favicon.ico"),
            Route::Static(i) => out.extend_from_slice(STATIC_ASSETS[usize::from(i)].0.as_bytes()),
            Route::User(id) => {
                out.extend_from_slice(b"/api/users/");
                push_u64(out, u64::from(id));
            }
            Route::Notifications(id) => {
                out.extend_from_slice(b"/api/users/");
                push_u64(out, u64::from(id));
                out.extend_from_slice(b"/notifications");
            }
            Route::Order(n) => {
                out.extend_from_slice(b"/api/orders/");
                push_uuid(out, n);
            }
            Route::CreateOrder => out.extend_from_slice(b"/api/orders"),
            Route::AddToCart => out.extend_from_slice(b"/api/cart/items"),
            Route::Products(page) => {
                out.extend_from_slice(b"/api/products");
                path_end = Some(out.len() - begin);
                out.extend_from_slice(b"?page=");
                push_u64(out, u64::from(page));
                out.extend_from_slice(b"&limit=50");
            }
            Route::Search(first, second, page) => {
                out.extend_from_slice(b"/api/search");
                path_end = Some(out.len() - begin);
                out.extend_from_slice(b"?q=");
                out.extend_from_slice(SEARCH_WORDS[usize::from(first)].as_bytes());
                if second > 0 {
                    out.push(b'+');
                    out.extend_from_slice(SEARCH_WORDS[usize::from(second) - 1].as_bytes());
                }
                out.extend_from_slice(b"&page=");
                push_u64(out, u64::from(page));
            }
            Route::ProductPage(id) => {
                out.extend_from_slice(b"/products/");
                push_u64(out, u64::from(id));
            }
            Route::Blog(i) => {
                out.extend_from_slice(b"/blog/");
                out.extend_from_slice(BLOG_SLUGS[usize::from(i)].as_bytes());
            }
            Route::Distinct(i) => distinct::write_path(i, out),
            Route::Probe(p) => scanners::write_probe(p, out),
        }
        path_end.unwrap_or(out.len() - begin)
    }

    /// Draws the server's answer: `(status, body bytes, request time in ms)`.
    pub fn outcome(self, rng: &mut Rng) -> (u16, u32, u32) {
        let family = self.family();
        let status = family.statuses[rng.weighted(family.weights)];
        let mut ms = rng.lognormal(family.median_ms, family.sigma);
        let bytes = match (status, self) {
            (304, _) => 0,
            (200, Route::Static(i)) => STATIC_ASSETS[usize::from(i)].1,
            (200 | 201, _) => rng.lognormal(family.median_bytes, 0.5) as u32 + 2,
            (301, _) => 162,
            (500, _) => {
                ms *= 8.0;
                177
            }
            _ => 38 + rng.below(40) as u32,
        };
        (status, bytes, ms.min(30_000.0) as u32)
    }

    fn family(self) -> &'static Family {
        match self {
            Route::Static(_) | Route::Favicon => &STATIC,
            Route::User(_) | Route::Notifications(_) | Route::Order(_) => &API_READ,
            Route::Products(_) | Route::Search(..) => &API_LIST,
            Route::CreateOrder | Route::AddToCart => &API_WRITE,
            Route::Login => &LOGIN,
            Route::Health | Route::Robots | Route::Sitemap => &PLAIN,
            Route::Home | Route::ProductPage(_) | Route::Blog(_) => &PAGE,
            Route::Distinct(i) => match distinct::Shape::of(i) {
                distinct::Shape::Asset => &STATIC,
                distinct::Shape::HexId => &API_READ,
                distinct::Shape::Base62 | distinct::Shape::Slug => &PAGE,
            },
            Route::Probe(_) => &SCAN,
        }
    }
}

/// Appends the decimal digits of `n`.
pub fn push_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// Appends the version-4-shaped UUID of order number `n` (a pure function of `n`).
fn push_uuid(out: &mut Vec<u8>, n: u32) {
    let mut state = u64::from(n) ^ 0x6F72_6465_7273_2121;
    let hi = super::rng::splitmix64(&mut state);
    let lo = super::rng::splitmix64(&mut state);
    let hi = (hi & !0xF000) | 0x4000;
    let lo = (lo & !(0b11 << 62)) | (0b10 << 62);
    let bits = (u128::from(hi) << 64) | u128::from(lo);
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for nibble in (0..32).rev() {
        if matches!(nibble, 23 | 19 | 15 | 11) {
            out.push(b'-');
        }
        out.push(HEX[((bits >> (nibble * 4)) & 0xF) as usize]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uri(route: Route) -> (String, usize) {
        let mut out = b"prefix".to_vec();
        let path_len = route.write_uri(&mut out);
        (String::from_utf8(out[6..].to_vec()).unwrap(), path_len)
    }

    #[test]
    fn uris_render_with_their_path_length() {
        assert_eq!(uri(Route::User(42)), ("/api/users/42".into(), 13));
        assert_eq!(
            uri(Route::Search(0, 2, 3)),
            ("/api/search?q=shoes+red&page=3".into(), 11)
        );
        assert_eq!(
            uri(Route::Products(7)),
            ("/api/products?page=7&limit=50".into(), 13)
        );
        assert_eq!(uri(Route::Home), ("/".into(), 1));
        assert_eq!(Route::CreateOrder.method(), Method::Post);
        assert_eq!(Route::Order(1).method(), Method::Get);
    }

    #[test]
    fn order_uuids_are_stable_and_well_formed() {
        let (a, _) = uri(Route::Order(12));
        assert_eq!(a, uri(Route::Order(12)).0);
        assert_ne!(a, uri(Route::Order(13)).0);
        let id = a.strip_prefix("/api/orders/").unwrap();
        let groups: Vec<usize> = id.split('-').map(str::len).collect();
        assert_eq!(groups, [8, 4, 4, 4, 12]);
        assert_eq!(&id[14..15], "4");
        assert!("89ab".contains(&id[19..20]));
    }

    #[test]
    fn outcomes_follow_their_family() {
        let mut rng = Rng::new(5);
        for _ in 0..2_000 {
            let (status, bytes, _) = Route::Static(0).outcome(&mut rng);
            match status {
                200 => assert_eq!(bytes, STATIC_ASSETS[0].1),
                304 => assert_eq!(bytes, 0),
                404 | 500 => {}
                other => panic!("static answered {other}"),
            }
            let (status, _, _) = Route::CreateOrder.outcome(&mut rng);
            assert!([201, 400, 409, 500].contains(&status));
        }
    }

    #[test]
    fn integers_render_in_decimal() {
        let mut out = Vec::new();
        for n in [0, 7, 10, 1_767_571_200, u64::MAX] {
            out.clear();
            push_u64(&mut out, n);
            assert_eq!(out, n.to_string().as_bytes());
        }
    }
}
