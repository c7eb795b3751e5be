use super::*;

fn pieces(input: &[u8], chunk: usize) -> Vec<Piece> {
    Splitter::with_chunk_size(input, chunk)
        .map(Result::unwrap)
        .collect()
}

#[test]
fn splits_at_line_ends_across_chunks() {
    let got = pieces(b"a\nbb\nccc\nd", 6);
    assert_eq!(
        got,
        vec![
            Piece::Lines {
                data: b"a\nbb\n".to_vec().into()
            },
            // the read that reaches the end takes the rest, final line without newline included
            Piece::Lines {
                data: b"ccc\nd".to_vec().into()
            },
        ]
    );
}

#[test]
fn overlong_lines_are_dropped_not_buffered() {
    let mut input = b"ok\n".to_vec();
    input.extend(std::iter::repeat_n(b'x', 50));
    input.extend(b"\nafter\n");
    let got = pieces(&input, 8);
    assert_eq!(
        got[0],
        Piece::Lines {
            data: b"ok\n".to_vec().into()
        }
    );
    assert_eq!(got[1], Piece::TooLong { len: 50 });
    assert_eq!(
        got[2],
        Piece::Lines {
            data: b"after\n".to_vec().into()
        }
    );
}

#[test]
fn empty_input_yields_nothing_and_trailing_newline_adds_no_line() {
    assert!(pieces(b"", 8).is_empty());
    assert_eq!(
        pieces(b"a\n", 8),
        vec![Piece::Lines {
            data: b"a\n".to_vec().into()
        }]
    );
}

#[test]
fn the_line_after_an_overlong_one_survives_the_end_of_input() {
    let mut input = vec![b'z'; 20];
    input.extend(b"\nlast");
    let got = pieces(&input, 8);
    assert_eq!(
        got,
        vec![
            Piece::TooLong { len: 20 },
            Piece::Lines {
                data: b"last".to_vec().into()
            }
        ]
    );
}

#[test]
fn recycled_buffers_give_the_same_pieces() {
    let mut input = Vec::new();
    for i in 0..200 {
        input.extend(format!("line {i} {}\n", "x".repeat(i % 13)).as_bytes());
    }
    input.extend(std::iter::repeat_n(b'y', 40));
    input.extend(b"\nend");
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let rx = std::sync::Mutex::new(rx);
    let recycled = Splitter::with_chunk_size(&input[..], 32).with_buffers(Box::new(move || {
        Some(rx.lock().unwrap().try_recv().unwrap_or_default())
    }));
    let mut got = Vec::new();
    for piece in recycled {
        let piece = piece.unwrap();
        if let Piece::Lines { data, .. } = &piece {
            let mut reused = data.to_vec();
            reused.fill(b'!'); // stale bytes must never show through
            tx.send(reused).unwrap();
        }
        got.push(piece);
    }
    assert_eq!(got, pieces(&input, 32));
}

/// The lines a splitter yields, a too-long line as `None` with its length.
fn lines_of(pieces: impl Iterator<Item = io::Result<Piece>>) -> Vec<(Option<Vec<u8>>, u64)> {
    let mut lines = Vec::new();
    for piece in pieces {
        match piece.unwrap() {
            Piece::Lines { data } => {
                let body = data.strip_suffix(b"\n").unwrap_or(&data);
                lines.extend(body.split(|&b| b == b'\n').map(|l| (Some(l.to_vec()), 0)));
            }
            Piece::TooLong { len } => lines.push((None, len)),
        }
    }
    lines
}

proptest::proptest! {
    #[test]
    fn a_mapped_file_splits_into_the_same_lines(
        lengths in proptest::collection::vec(0usize..40, 0..30),
        final_newline: bool,
        chunk in 8usize..64,
        bom: bool,
    ) {
        let mut input = Vec::new();
        for (i, n) in lengths.iter().enumerate() {
            input.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, *n));
            input.push(b'\n');
        }
        if !final_newline {
            input.pop();
        }
        // A byte order mark before the first line is no part of it.
        let expected = lines_of(Splitter::with_chunk_size(&input[..], chunk));
        if bom {
            input.splice(0..0, *b"\xef\xbb\xbf");
        }
        let mut file = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut file, &input).unwrap();
        if input.is_empty() {
            return Ok(()); // an empty file cannot be mapped; it is read
        }
        // SAFETY: a private temporary file nothing else writes.
        let map = Arc::new(unsafe { Mmap::map(file.as_file()) }.unwrap());
        proptest::prop_assert_eq!(&lines_of(MapSplitter::new(map, chunk)), &expected);
        proptest::prop_assert_eq!(&lines_of(Splitter::with_chunk_size(&input[..], chunk)), &expected);
    }
}

#[test]
fn a_consumer_that_goes_away_stops_the_splitter() {
    let mut splitter =
        Splitter::with_chunk_size(&b"a\nb\nc\nd\n"[..], 4).with_buffers(Box::new(|| None));
    assert!(splitter.next().is_none());
    assert!(splitter.next().is_none());
}

#[test]
fn overlong_last_line_without_newline() {
    let input = vec![b'y'; 30];
    assert_eq!(pieces(&input, 8), vec![Piece::TooLong { len: 30 }]);
}

/// Reads its bytes, then fails.
struct FailsAfter<'a>(&'a [u8]);

impl io::Read for FailsAfter<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.0.is_empty() {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "cut short"));
        }
        let n = buf.len().min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

#[test]
fn whole_lines_read_before_an_error_come_before_it() {
    // Found by review: a truncated gzip's decoded lines were dropped with
    // the error, which then said "after line 0".
    let got: Vec<io::Result<Piece>> =
        Splitter::with_chunk_size(FailsAfter(b"a\nbb\ncc"), 64).collect();
    assert_eq!(got.len(), 2);
    assert_eq!(
        got[0].as_ref().unwrap(),
        &Piece::Lines {
            data: b"a\nbb\n".to_vec().into()
        }
    );
    assert_eq!(
        got[1].as_ref().unwrap_err().kind(),
        io::ErrorKind::UnexpectedEof
    );
    // No whole line before the error: the error alone.
    let got: Vec<io::Result<Piece>> = Splitter::with_chunk_size(FailsAfter(b"abc"), 64).collect();
    assert_eq!(got.len(), 1);
    assert!(got[0].is_err());
}
