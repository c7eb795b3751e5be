//! The generator's fixed vocabularies: user agents, names, companies, public
//! address prefixes, static assets, search words, blog slugs and referers.
//! Pure data; changing any of it changes every generated log (and the fixtures).

/// `(path, body bytes)`: an asset always has the same size.
pub const STATIC_ASSETS: [(&str, u32); 12] = [
    ("/static/js/app.3f9c2a71.js", 248_913),
    ("/static/js/vendor.91be04d2.js", 612_004),
    ("/static/css/main.c81f0e55.css", 48_207),
    ("/static/img/logo.svg", 6_412),
    ("/static/img/hero-1600.webp", 184_330),
    ("/static/img/icons/cart.svg", 1_204),
    ("/static/img/icons/user.svg", 988),
    ("/static/fonts/inter-var.woff2", 98_112),
    ("/static/img/products/thumb-sprite.webp", 352_876),
    ("/static/js/checkout.77a1d3e9.js", 88_540),
    ("/static/css/print.css", 3_114),
    ("/static/manifest.json", 612),
];

/// Words of `GET /api/search?q=`.
pub const SEARCH_WORDS: [&str; 24] = [
    "shoes", "red", "jacket", "wool", "running", "kids", "sale", "laptop", "bag", "leather",
    "coffee", "grinder", "desk", "lamp", "usb-c", "cable", "winter", "boots", "gift", "card",
    "organic", "tea", "yoga", "mat",
];

/// Slugs of `GET /blog/{slug}`.
pub const BLOG_SLUGS: [&str; 8] = [
    "spring-collection-2026",
    "how-we-ship-in-24h",
    "care-guide-wool",
    "sustainability-report",
    "size-guide",
    "gift-ideas-under-50",
    "behind-the-scenes-warehouse",
    "returns-made-easy",
];

/// Browser user agents (steady browsers and office users).
pub const BROWSERS: [&str; 6] = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.2 Safari/605.1.15",
    "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.2 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
];
/// User agents of API clients.
pub const API_AGENTS: [&str; 8] = [
    "python-requests/2.32.3",
    "curl/8.5.0",
    "Go-http-client/1.1",
    "okhttp/4.12.0",
    "axios/1.7.9",
    "Java/17.0.13",
    "shop-ios/5.12.1 (iPhone; iOS 18.2)",
    "shop-android/5.12.0 (Pixel 8; Android 14)",
];
/// Crawler user agents; each contains `bot`.
pub const CRAWLERS: [&str; 6] = [
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
    "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)",
    "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)",
    "DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)",
    "Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)",
];
/// User agents of batch workers.
pub const BATCH_AGENTS: [&str; 2] = [
    "report-exporter/1.4.2 python-requests/2.32.3",
    "airflow-sync/2.10.4 (+ops@example.com)",
];
/// User agents of runaway clients (an old app build, a sync job).
pub const RUNAWAY_AGENTS: [&str; 2] = [
    "shop-android/5.11.0 (Pixel 6; Android 13)",
    "inventory-sync/0.9.1 Go-http-client/1.1",
];
/// Company names in API users (`acme-17`).
pub const COMPANIES: [&str; 12] = [
    "acme",
    "globex",
    "initech",
    "umbrella",
    "hooli",
    "stark",
    "wayne",
    "wonka",
    "tyrell",
    "cyberdyne",
    "soylent",
    "oscorp",
];
/// First names of office users.
pub const FIRST: [&str; 24] = [
    "anna", "ben", "carla", "dev", "elif", "farid", "greta", "hugo", "ines", "jonas", "kemal",
    "lena", "marco", "nina", "omar", "priya", "quentin", "rosa", "sven", "tara", "umut", "vera",
    "wei", "yusuf",
];
/// Last names of office users.
pub const LAST: [&str; 24] = [
    "smith",
    "mueller",
    "rossi",
    "dubois",
    "kowalski",
    "silva",
    "novak",
    "jensen",
    "garcia",
    "kim",
    "nguyen",
    "okafor",
    "ivanova",
    "haddad",
    "tanaka",
    "berg",
    "costa",
    "weber",
    "moreau",
    "lindqvist",
    "popescu",
    "horvat",
    "yilmaz",
    "walsh",
];
/// Common first octets of public IPv4 space (no private, reserved or multicast).
pub const FIRST_OCTETS: [u8; 24] = [
    23, 31, 37, 45, 51, 62, 66, 77, 81, 84, 86, 89, 91, 93, 95, 109, 141, 151, 176, 178, 185, 188,
    193, 212,
];

/// Referers sent by browsers.
pub const REFERERS: [&str; 6] = [
    "https://shop.example.com/",
    "https://shop.example.com/products",
    "https://shop.example.com/account/orders",
    "https://shop.example.com/search",
    "https://www.google.com/",
    "https://www.bing.com/",
];
