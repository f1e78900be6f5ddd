//! Applying the bad-record policy: what a [`RecordReader`] does when a record's data, its
//! frame or the stream under it is broken, the hook for records the caller cannot decode, and
//! the report of what was skipped.

use std::io::{self, Read};

use super::frames::{NO_RECORD, RecordReader};
use super::policy::{Broken, Mode, SkipReason, SkipSummary, Skipped};
use super::scan::Lookahead;
use super::source::io_error;
use super::unverified::Unverified;
use crate::compression::Format;
use crate::crc::masked_crc32c;
use crate::error::{Error, ErrorKind, Result};

impl<R: Read> RecordReader<R> {
    /// The records and byte ranges skipped under the [`BadRecords`](crate::BadRecords) policy
    /// since the last call, in stream order. Each is reported once; the totals stay in
    /// [`skip_summary`](Self::skip_summary). Call it after each read to report damage as it is
    /// met (the reports are kept until drained). Under a policy with a
    /// [`shared_log`](crate::BadRecords::shared_log) the reports go to that log instead
    /// ([`take_logged`](crate::BadRecords::take_logged)), and this gives none: a caller that
    /// reads the log need not drain each reader too.
    pub fn drain_skipped(&mut self) -> impl Iterator<Item = Skipped> + '_ {
        self.damage.pending.drain(..)
    }

    /// The totals of what this reader skipped: records, byte ranges, bytes.
    pub fn skip_summary(&self) -> SkipSummary {
        self.damage.summary
    }

    /// The hook for a record the caller could not use (typically one that does not decode):
    /// under a [`BadRecords`](crate::BadRecords) policy that skips, reports the record the last
    /// read returned as skipped, with `err`'s words as the reason, and returns `Ok` so that
    /// reading goes on; the typed [`Reader`](crate::Reader) calls it for records that fail to
    /// decode.
    ///
    /// # Errors
    /// `err` itself when the policy fails (the default) or no record was just read; a
    /// [`TooManyBadRecords`](ErrorKind::TooManyBadRecords) error naming the record when the
    /// budget is spent.
    pub fn skip_last(&mut self, err: Error) -> Result<()> {
        if self.last == NO_RECORD {
            return Err(err);
        }
        let (offset, len) = (self.last, self.offset - self.last);
        if !self.opts.bad_records.skips() {
            return Err(err);
        }
        self.last = NO_RECORD;
        let reason = SkipReason::Undecodable(err.describe());
        let skipped = Skipped::new(self.path.clone(), offset, Some(len), reason);
        self.report(skipped, self.records.saturating_sub(1))
    }

    /// Deals with a frame or stream broken at a frame's start, by the policy: `Ok` when reading
    /// can go on (from the next sound frame, or to a clean end).
    #[cold]
    #[inline(never)]
    pub(super) fn recover(&mut self, broken: Broken) -> Result<()> {
        self.last = NO_RECORD;
        let Broken {
            err,
            start,
            taken,
            framing,
        } = broken;
        let stream_damage = matches!(
            err.kind(),
            ErrorKind::Compressed { .. } | ErrorKind::TrailingData
        );
        match self.opts.bad_records.mode() {
            Mode::Resync if framing => {
                let truncated = matches!(err.kind(), ErrorKind::Truncated { .. });
                self.resync(start, taken, err.describe(), truncated)
            }
            Mode::Resync if stream_damage => {
                self.done = true;
                let reason = SkipReason::Compressed(err.describe());
                let skipped = Skipped::new(self.path.clone(), start, None, reason);
                self.report(skipped, self.records)
            }
            _ => Err(self.fail(err, start)),
        }
    }

    /// Deals with a whole frame whose data checksum fails, by the policy: `Ok` when reading can
    /// go on. `frame` was just read, with `payload`.
    #[cold]
    #[inline(never)]
    pub(super) fn bad_data(
        &mut self,
        frame: &Unverified,
        payload: &[u8],
        err: Error,
    ) -> Result<()> {
        let frame_len = self.offset - frame.offset();
        self.last = NO_RECORD;
        let mode = self.opts.bad_records.mode();
        if mode != Mode::Skip {
            // Not counted as read, as in `read_lent`: the reader stands at the frame, failing
            // or resynchronizing from it.
            self.offset = frame.offset();
            self.records = frame.record();
            if let Some(r) = self.remaining.as_mut() {
                *r = r.saturating_add(frame_len);
            }
        }
        if mode == Mode::Fail {
            self.done = true;
            return Err(err);
        }
        let stored = frame.stored_crc().unwrap_or_default();
        let computed = masked_crc32c(payload);
        let reason = SkipReason::DataChecksum { stored, computed };
        let skipped = Skipped::new(self.path.clone(), frame.offset(), Some(frame_len), reason);
        if mode == Mode::Skip {
            return self.report(skipped, frame.record());
        }
        // Resync: the record alone is skipped when the next frame lines up after it.
        let len_le = (payload.len() as u64).to_le_bytes();
        let crc_le = masked_crc32c(&len_le).to_le_bytes();
        let bytes = [&len_le[..], &crc_le, payload, &stored.to_le_bytes()].concat();
        let mut look = Lookahead::new(frame.offset(), bytes);
        let after = frame.offset() + frame_len;
        // A read error here shows again at the next read, at the frame after this one.
        if look.lines_up(self.src.buf(), after).unwrap_or(true) {
            look.give_back(&mut self.src, after);
            self.offset = after;
            self.records = frame.record() + 1;
            if let Some(r) = self.remaining.as_mut() {
                *r = r.saturating_sub(frame_len);
            }
            return self.report(skipped, frame.record());
        }
        let detail = format!("{}; the bytes after it are not a frame", err.describe());
        self.resync(frame.offset(), look.into_bytes(), detail, false)
    }

    /// Skips from `start`, where the framing broke, to the next frame that passes the boundary
    /// test, or to the end of the stream, and reports the range. `taken` holds the stream's
    /// bytes from `start` that were already read; `detail` says what was wrong at `start`.
    fn resync(
        &mut self,
        start: u64,
        taken: Vec<u8>,
        detail: String,
        truncated: bool,
    ) -> Result<()> {
        let stream_end = self.remaining.map(|r| start.saturating_add(r));
        let mut look = Lookahead::new(start, taken);
        let scanned = match self.opts.format {
            Format::TfRecord => look.scan(
                self.src.buf(),
                &self.opts,
                start.saturating_add(1),
                u64::MAX,
                stream_end,
            ),
            // No checksums: nothing tells a frame from garbage.
            Format::OfRecord => Ok(None),
        };
        let next = match scanned {
            Ok(Some(at)) => Some(at),
            Ok(None) => match look.read_to_end(self.src.buf()) {
                Ok(_) => None,
                Err(e) => return self.broke_while_scanning(e, start),
            },
            Err(e) => return self.broke_while_scanning(e, start),
        };
        let path = self.path.clone();
        match next {
            Some(at) => {
                look.give_back(&mut self.src, at);
                self.offset = at;
                if let Some(r) = self.remaining.as_mut() {
                    *r = r.saturating_sub(at - start);
                }
                let reason = SkipReason::Damaged(detail);
                self.report(
                    Skipped::new(path, start, Some(at - start), reason),
                    self.records,
                )
            }
            None => {
                let end = look.end();
                self.offset = end;
                self.remaining = self.remaining.map(|_| 0);
                self.done = true;
                let reason = if truncated {
                    SkipReason::Truncated(detail)
                } else {
                    SkipReason::Damaged(detail)
                };
                self.report(
                    Skipped::new(path, start, Some(end - start), reason),
                    self.records,
                )
            }
        }
    }

    /// The stream broke while looking for a frame after damage at `start`: a damaged
    /// compressed stream ends the reader with the rest skipped; any other error is one.
    fn broke_while_scanning(&mut self, e: io::Error, start: u64) -> Result<()> {
        let err = io_error(e, self.opts.compression);
        if !matches!(err.kind(), ErrorKind::Compressed { .. }) {
            return Err(self.fail(err, start));
        }
        self.done = true;
        let reason = SkipReason::Compressed(err.describe());
        let skipped = Skipped::new(self.path.clone(), start, None, reason);
        self.report(skipped, self.records)
    }

    /// Charges a skip to the budget and reports it; past the budget, the error that ends the
    /// reader, naming the skip (`record` is the index to locate it with).
    fn report(&mut self, skipped: Skipped, record: u64) -> Result<()> {
        let skipped = skipped.at_record(record, self.record_base);
        if self.opts.bad_records.charge() {
            self.damage.summary.add(&skipped);
            // Reported once: to the policy's shared log when it has one (whose reader takes
            // them from there), else kept for `drain_skipped`.
            if self.opts.bad_records.has_shared_log() {
                self.opts.bad_records.log(&skipped);
            } else {
                self.damage.pending.push(skipped);
            }
            return Ok(());
        }
        self.done = true;
        let err = Error::new(ErrorKind::TooManyBadRecords {
            max: self.opts.bad_records.max(),
            last: skipped.what(),
        });
        Err(self.locate(err, skipped.offset(), record))
    }
}
