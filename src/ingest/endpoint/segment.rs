//! Whether a path segment is an id, decided from the classes of its bytes:
//! one table gives each byte one class bit, and the bits of a segment's bytes
//! ORed together (its shape) decide every id form but the UUID's layout. A
//! path is then read one byte at a time with one table lookup and no branch
//! per kind of byte (a `match` on a byte class compiles to an indirect jump
//! per byte, which the processor mispredicts from segment to segment).

/// An ASCII digit.
const DIGIT: u16 = 1 << 0;
/// `a`-`f` and `A`-`F`.
const HEX_LETTER: u16 = 1 << 1;
/// `g`-`z` and `G`-`Z`.
const OTHER_LETTER: u16 = 1 << 2;
/// A lower-case ASCII letter (with [`HEX_LETTER`] or [`OTHER_LETTER`]).
const LOWER: u16 = 1 << 3;
/// An upper-case ASCII letter (with [`HEX_LETTER`] or [`OTHER_LETTER`]).
const UPPER: u16 = 1 << 4;
/// `-`, `_`, `=` and `~`, which base64url-like ids may hold.
const ID_PUNCT: u16 = 1 << 5;
/// `/`: a segment ends.
pub(super) const SLASH: u16 = 1 << 6;
/// `?` or `#`: the path ends.
pub(super) const END: u16 = 1 << 7;
/// Any byte no id holds, other than `/`, `?` and `#`.
pub(super) const OTHER: u16 = 1 << 8;

/// Every class an id's byte may have.
const ID_BYTE: u16 = DIGIT | HEX_LETTER | OTHER_LETTER | LOWER | UPPER | ID_PUNCT;
/// The classes of a hex digit.
const HEX: u16 = DIGIT | HEX_LETTER | LOWER | UPPER;

/// The class bits of every byte.
pub(super) const CLASSES: [u16; 256] = {
    let mut classes = [OTHER; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        classes[b] = if c.is_ascii_digit() {
            DIGIT
        } else if c.is_ascii_alphabetic() {
            let case = if c.is_ascii_lowercase() { LOWER } else { UPPER };
            let letter = if c.is_ascii_hexdigit() {
                HEX_LETTER
            } else {
                OTHER_LETTER
            };
            case | letter
        } else if matches!(c, b'-' | b'_' | b'=' | b'~') {
            ID_PUNCT
        } else if c == b'/' {
            SLASH
        } else if matches!(c, b'?' | b'#') {
            END
        } else {
            OTHER
        };
        b += 1;
    }
    classes
};

/// The class bits of `byte`.
#[inline(always)]
pub(super) fn class(byte: u8) -> u16 {
    CLASSES[usize::from(byte)]
}

/// The class bits of every byte of `segment`, ORed.
#[inline]
pub(super) fn shape(segment: &[u8]) -> u16 {
    segment.iter().fold(0, |shape, &b| shape | class(b))
}

/// Whether `segment`, whose bytes' classes OR to `shape` ([`shape`]), is an
/// id ([`super::is_id`]): all digits; a UUID; 16 or more hex digits with at
/// least one digit; 20 or more base64url characters (and `=`, `~`) with a
/// digit, a lower-case and an upper-case letter.
#[inline]
pub(super) fn is_id_shaped(segment: &[u8], shape: u16) -> bool {
    let len = segment.len();
    if shape == DIGIT {
        return true; // all digits (and not empty, which has no bits)
    }
    if len < 16 || shape & DIGIT == 0 {
        // The other shapes are longer; a UUID, hex or base64url id has a
        // digit (a UUID's groups of hex digits may not, so it is tested first).
        return len == 36 && is_uuid(segment);
    }
    (len == 36 && is_uuid(segment))
        || shape & !HEX == 0
        || (len >= 20 && shape & LOWER != 0 && shape & UPPER != 0 && shape & !ID_BYTE == 0)
}

/// `8-4-4-4-12` hex digits: every byte tested, with no early exit (the
/// place of the first wrong byte of a segment that is not a UUID, or its
/// absence, would be mispredicted).
fn is_uuid(b: &[u8]) -> bool {
    let Ok(b) = <&[u8; 36]>::try_from(b) else {
        return false;
    };
    let hex = |group: &[u8]| {
        group
            .iter()
            .fold(true, |hex, &c| hex & (class(c) & (DIGIT | HEX_LETTER) != 0))
    };
    (b[8] == b'-')
        & (b[13] == b'-')
        & (b[18] == b'-')
        & (b[23] == b'-')
        & hex(&b[..8])
        & hex(&b[9..13])
        & hex(&b[14..18])
        & hex(&b[19..23])
        & hex(&b[24..])
}
