//! The comment lines before the offset a file is followed from: a W3C or
//! CloudFront log names its columns in a `#Fields:` line at its top and
//! dates its lines with `#Date:` lines, so following one from its end needs
//! them. Only a file whose first byte is `#` is read for them.

use std::fs::File;
use std::os::unix::fs::FileExt;

use memchr::memmem;

/// Most bytes of comment lines kept: a header is a few hundred.
pub(super) const HEADER_BYTES: usize = 1 << 20;

/// Bytes read at a time.
const BLOCK: usize = 1 << 20;

/// The lines of `file` before byte `end` that start with `#`, each with its
/// newline, up to [`HEADER_BYTES`] of them; empty when the file does not
/// start with `#` or cannot be read.
pub(super) fn comment_lines(file: &File, end: u64) -> Vec<u8> {
    comment_lines_by_block(file, end, BLOCK)
}

/// [`comment_lines`], reading `block` bytes at a time.
fn comment_lines_by_block(file: &File, end: u64, block_bytes: usize) -> Vec<u8> {
    let mut first_byte = [0u8; 1];
    if end == 0 || file.read_exact_at(&mut first_byte, 0).is_err() || first_byte[0] != b'#' {
        return Vec::new();
    }
    let mut lines = Vec::new();
    let mut block = vec![0u8; block_bytes];
    // A comment line the last block ended in, without its newline yet.
    let mut open: Option<Vec<u8>> = None;
    // Whether the next block starts a line.
    let mut line_start = true;
    let mut pos = 0u64;
    while pos < end && lines.len() < HEADER_BYTES {
        let want = block_bytes.min((end - pos) as usize);
        let n = match file.read_at(&mut block[..want], pos) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let bytes = &block[..n];
        pos += n as u64;
        if let Some(mut line) = open.take() {
            match memchr::memchr(b'\n', bytes) {
                Some(e) => {
                    line.extend_from_slice(&bytes[..=e]);
                    lines.extend_from_slice(&line);
                }
                None => {
                    line.extend_from_slice(bytes);
                    open = (line.len() <= HEADER_BYTES).then_some(line);
                    continue;
                }
            }
        }
        // The comment lines that start in this block: at its start when a
        // line starts there, and after each newline followed by `#`.
        let first = (line_start && bytes[0] == b'#').then_some(0);
        let after_newlines = memmem::find_iter(bytes, b"\n#").map(|i| i + 1);
        for start in first.into_iter().chain(after_newlines) {
            match memchr::memchr(b'\n', &bytes[start..]) {
                Some(e) => lines.extend_from_slice(&bytes[start..=start + e]),
                None => open = Some(bytes[start..].to_vec()),
            }
        }
        line_start = bytes[n - 1] == b'\n';
    }
    lines.truncate(HEADER_BYTES);
    lines
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn lines_before(text: &str, end: usize) -> String {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(text.as_bytes()).unwrap();
        String::from_utf8(comment_lines(file.as_file(), end as u64)).unwrap()
    }

    #[test]
    fn the_comment_lines_before_the_offset() {
        let text = "#Version: 1.0\n#Fields: time c-ip\n00:00:01 a\n#Date: 2026-01-06\n00:00:02 b # not a comment\n#Date: 2026-01-07\n";
        let end = text.find("#Date: 2026-01-07").unwrap();
        assert_eq!(
            lines_before(text, end),
            "#Version: 1.0\n#Fields: time c-ip\n#Date: 2026-01-06\n"
        );
        assert_eq!(lines_before(text, 0), "");
        assert_eq!(
            lines_before("1.2.3.4 - -\n#x\n", 15),
            "",
            "a file not starting with #"
        );
    }

    proptest::proptest! {
        /// Read in blocks of any size, the comment lines before any offset
        /// are those a reading of the whole text line by line finds.
        #[test]
        fn any_block_size_finds_the_lines_of_a_whole_reading(
            pieces in proptest::collection::vec("(#[a-z ]{0,6}|[a-z#]{0,6})\n?", 1..12),
            block in 1usize..12,
            cut in 0usize..100,
        ) {
            let text = format!("#{}", pieces.concat());
            let end = cut.min(text.len());
            let mut file = tempfile::NamedTempFile::new().unwrap();
            file.write_all(text.as_bytes()).unwrap();
            let got = comment_lines_by_block(file.as_file(), end as u64, block);
            // Whole lines that start with `#` and end, newline included, before `end`.
            let want: String = (text[..end].split_inclusive('\n'))
                .filter(|line| line.starts_with('#') && line.ends_with('\n'))
                .collect();
            proptest::prop_assert_eq!(String::from_utf8(got).unwrap(), want);
        }
    }

    #[test]
    fn lines_across_blocks_are_whole() {
        // Comment lines that straddle the 1 MiB blocks, one starting a block.
        let filler = "x".repeat(BLOCK);
        let mut text = String::from("#Fields: time c-ip\n");
        text.push_str(&filler[..BLOCK - text.len() - 5]);
        text.push_str("\n#Date: 2026-01-05\n"); // straddles the first block's end
        text.push_str(&"y".repeat(2 * BLOCK - 1 - text.len()));
        text.push_str("\n#Date: 2026-01-06\nz\n"); // starts the third block
        assert_eq!(text.find("#Date: 2026-01-06").unwrap(), 2 * BLOCK);
        assert_eq!(
            lines_before(&text, text.len()),
            "#Fields: time c-ip\n#Date: 2026-01-05\n#Date: 2026-01-06\n"
        );
    }
}
