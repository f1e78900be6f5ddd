//! Following the quoting of CSV text as it is read, to tell an input that ends inside a quoted
//! field (which the `csv` crate reads as if the quote were closed, every later row in one cell).

use std::io::Read;

/// Why the CSV input is invalid when it ended inside a quoted field.
pub(super) fn csv_unclosed<R>(quotes: &Quotes<R>) -> Option<String> {
    quotes.unclosed().map(|line| {
        format!(
            "invalid CSV (line {line}): a quoted field opened on line {line} is never closed, \
             so every line after it would be one cell"
        )
    })
}

/// A reader that follows the CSV quoting of what passes through it (RFC 4180, as the `csv`
/// crate reads it: a field quoted when it starts with `"`, `""` inside it a quote), to tell
/// whether the input ends inside a quoted field.
pub(super) struct Quotes<R> {
    inner: R,
    delimiter: u8,
    state: QuoteState,
    /// The line the quoted field being read started on, and the current line.
    opened: u64,
    line: u64,
    /// Whether any bytes were read yet.
    started: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum QuoteState {
    FieldStart,
    Unquoted,
    Quoted,
    /// A `"` inside a quoted field: the end of it, or the first of `""`.
    QuoteInQuoted,
}

impl<R> Quotes<R> {
    pub(super) fn new(inner: R, delimiter: u8) -> Self {
        Quotes {
            inner,
            delimiter,
            state: QuoteState::FieldStart,
            opened: 1,
            line: 1,
            started: false,
        }
    }

    fn follow(&mut self, bytes: &[u8]) {
        use QuoteState::{FieldStart, QuoteInQuoted, Quoted, Unquoted};
        // A byte-order mark before the first field is not part of it (the CSV reader drops it).
        let bytes = match (self.started, bytes) {
            (false, [0xef, 0xbb, 0xbf, rest @ ..]) => rest,
            _ => bytes,
        };
        self.started |= !bytes.is_empty();
        for &b in bytes {
            let ends_field = b == self.delimiter || b == b'\n' || b == b'\r';
            self.state = match (self.state, b) {
                (FieldStart, b'"') => {
                    self.opened = self.line;
                    Quoted
                }
                (Quoted, b'"') => QuoteInQuoted,
                (Quoted, _) => Quoted,
                (QuoteInQuoted, b'"') => Quoted,
                (_, _) if ends_field => FieldStart,
                _ => Unquoted,
            };
            if b == b'\n' {
                self.line += 1;
            }
        }
    }

    /// The line of a quoted field the input ended in, if it did.
    fn unclosed(&self) -> Option<u64> {
        (self.state == QuoteState::Quoted).then_some(self.opened)
    }
}

impl<R: Read> Read for Quotes<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.follow(&buf[..n]);
        Ok(n)
    }
}
