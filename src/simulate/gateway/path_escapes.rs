//! Percent-escapes in request paths, as the products that decode some of
//! them read them (Kong's router, Traefik's entry point, nginx's `$uri`).

/// The value of hex digit `b`.
pub(super) fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// The byte an escape at the start of `bytes` stands for.
pub(super) fn escape_at(bytes: &[u8]) -> Option<u8> {
    match bytes {
        [b'%', hi, lo, ..] => Some(hex(*hi)? << 4 | hex(*lo)?),
        _ => None,
    }
}

/// `raw` with the escapes of the bytes `decode` picks decoded, and the
/// others written with upper-case digits; a `%` without two hex digits after
/// it stays.
pub(super) fn recoded(raw: &[u8], decode: impl Fn(u8) -> bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match escape_at(&raw[i..]) {
            Some(byte) if decode(byte) => out.push(byte),
            Some(_) => out.extend(raw[i..i + 3].iter().map(u8::to_ascii_uppercase)),
            None => {
                out.push(raw[i]);
                i += 1;
                continue;
            }
        }
        i += 3;
    }
    out
}
