//! Following the quoting of CSV text as it is read, to tell an input that ends inside a quoted
//! field (which the `csv` crate reads as if the quote were closed, every later row in one cell);
//! and its lines, to give the line a record starts on (the `csv` crate's own count, and the
//! byte offsets it gives, are off after blank lines and `\r\n` line ends).

use std::collections::VecDeque;
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
    /// The line the quoted field being read started on.
    opened: u64,
    /// Whether any bytes were read yet.
    started: bool,
    /// The first byte of each line that is not empty, and the line (1-based), for those not
    /// forgotten; a line ends with `\n`, `\r\n` or a `\r` alone, as Python's universal
    /// newlines read them.
    starts: VecDeque<(u64, u64)>,
    /// The line of the next byte, and whether it starts that line.
    next_line: u64,
    at_line_start: bool,
    /// How many bytes were read, and whether the last was a `\r`.
    seen: u64,
    after_cr: bool,
    /// Where the record being read starts (the last one forgotten before), to bound its size.
    record_start: u64,
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
            started: false,
            starts: VecDeque::new(),
            next_line: 1,
            at_line_start: true,
            seen: 0,
            after_cr: false,
            record_start: 0,
        }
    }

    /// The 1-based line of a record the `csv` crate places at byte `byte`: the first line
    /// that is not empty at or after it (the crate's offset of a record may lie in the line
    /// ends and blank lines before it). `byte` must not come before one passed to
    /// [`forget_before`](Self::forget_before).
    pub(super) fn line_at(&self, byte: u64) -> u64 {
        let i = self.starts.partition_point(|&(start, _)| start < byte);
        self.starts.get(i).map_or(self.next_line, |&(_, line)| line)
    }

    /// Forgets the lines before `byte`: no record before it will be asked for.
    pub(super) fn forget_before(&mut self, byte: u64) {
        self.record_start = self.record_start.max(byte);
        while self.starts.front().is_some_and(|&(start, _)| start < byte) {
            self.starts.pop_front();
        }
    }

    /// Notes byte `b`, at offset `at`, in the count of lines.
    fn count_line(&mut self, at: u64, b: u8) {
        if self.after_cr && b != b'\n' {
            // A `\r` alone ended a line.
            self.next_line += 1;
            self.at_line_start = true;
        }
        self.after_cr = b == b'\r';
        match b {
            b'\n' => {
                self.next_line += 1;
                self.at_line_start = true;
            }
            b'\r' => {}
            _ if self.at_line_start => {
                self.starts.push_back((at, self.next_line));
                self.at_line_start = false;
            }
            _ => {}
        }
    }

    fn follow(&mut self, bytes: &[u8]) {
        use QuoteState::{FieldStart, QuoteInQuoted, Quoted, Unquoted};
        // A byte-order mark before the first field is not part of it (the CSV reader drops it,
        // and counts its bytes).
        let skip = match (self.started, bytes) {
            (false, [0xef, 0xbb, 0xbf, ..]) => 3,
            _ => 0,
        };
        self.started |= !bytes.is_empty();
        for (i, &b) in bytes.iter().enumerate() {
            self.count_line(self.seen + i as u64, b);
            if i < skip {
                continue;
            }
            let ends_field = b == self.delimiter || b == b'\n' || b == b'\r';
            self.state = match (self.state, b) {
                (FieldStart, b'"') => {
                    self.opened = self.next_line;
                    Quoted
                }
                (Quoted, b'"') => QuoteInQuoted,
                (Quoted, _) => Quoted,
                (QuoteInQuoted, b'"') => Quoted,
                (_, _) if ends_field => FieldStart,
                _ => Unquoted,
            };
        }
        self.seen += bytes.len() as u64;
    }

    /// The line of a quoted field the input ended in, if it did.
    fn unclosed(&self) -> Option<u64> {
        (self.state == QuoteState::Quoted).then_some(self.opened)
    }
}

impl<R: Read> Read for Quotes<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        // The CSV reader holds a record whole: one longer than the bound (a file of no line
        // ends, an unclosed quote over gigabytes) is an error rather than memory without bound.
        if self.seen - self.record_start > super::input::MAX_LINE {
            return Err(std::io::Error::other(format!(
                "a record longer than {} MiB, the most a CSV record may hold",
                super::input::MAX_LINE >> 20
            )));
        }
        let n = self.inner.read(buf)?;
        self.follow(&buf[..n]);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_end_as_python_reads_them() {
        let text = b"a,b\r\n1,2\r\n\r\n3,x\n\n4\r5\r\n";
        let mut q = Quotes::new(&text[..], b',');
        let mut sink = Vec::new();
        q.read_to_end(&mut sink).unwrap();
        let at = |s: &str| {
            text.windows(s.len())
                .position(|w| w == s.as_bytes())
                .unwrap() as u64
        };
        let line = |s: &str| q.line_at(at(s));
        assert_eq!(
            [line("a,b"), line("1,2"), line("3,x"), line("4"), line("5")],
            [1, 2, 4, 6, 7]
        );
        // From the line ends before a record, as the `csv` crate may place it.
        assert_eq!(q.line_at(at("3,x") - 3), 4);
        q.forget_before(at("3,x"));
        assert_eq!(q.line_at(at("3,x")), 4);
    }
}
