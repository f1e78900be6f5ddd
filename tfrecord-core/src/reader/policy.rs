//! What a reader does with damaged records, the damage it is handed, and the report of what
//! it skipped.

use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::error::{Error, ErrorKind};

/// What a [`RecordReader`](crate::RecordReader) does with damaged records
/// ([`ReaderOptions::bad_records`](crate::ReaderOptions::bad_records)).
///
/// - [`fail`](Self::fail), the default: the first damage is an error, and the reader ends.
/// - [`skip`](Self::skip): a record whose frame is whole and whose length checksum passes but
///   whose data checksum fails is skipped, and so is a record the caller could not decode
///   ([`RecordReader::skip_last`](crate::RecordReader::skip_last), which the typed
///   [`Reader`](crate::Reader) calls, or [`skip_undecodable`](Self::skip_undecodable) for
///   records decoded apart from their reader, as a data set's typed values are); broken
///   framing is still an error.
/// - [`resync`](Self::resync): as `skip`, and broken framing is skipped too (a length that
///   fails its checksum or the limit, garbage between records, a frame cut short): the reader
///   looks for the next byte where a frame passes the boundary test of byte-range splits (see
///   [`RecordReader::open_range`](crate::RecordReader::open_range)) and goes on from there. A
///   record whose data checksum fails is skipped alone when the bytes after it are the end of
///   the stream or a header whose length checksum passes; otherwise it is resynchronized past.
///
/// Every record or byte range skipped is reported
/// ([`RecordReader::drain_skipped`](crate::RecordReader::drain_skipped)) and counts one against
/// the budget, `max`; one more is an error
/// ([`TooManyBadRecords`](crate::ErrorKind::TooManyBadRecords)) that names it. Nothing is
/// skipped without a report.
///
/// The budget is shared: every reader given this policy, or a clone of it (through clones of
/// the options), draws on one count, so `max` bounds the skips over a whole data set read by
/// any number of readers and threads. Make a new policy for a new budget.
///
/// What cannot be resynchronized:
///
/// - **OFRecord** frames have no checksums, so a frame cannot be told from garbage: under
///   `resync`, broken framing skips the rest of the stream, reported as one byte range.
/// - **Gzip and zlib** streams cannot be decoded past damage to the compressed bytes: under
///   `resync`, a damaged compressed stream (or bytes after the end of a zlib stream) ends the
///   reader with the rest of the stream reported as one range of unknown length
///   ([`Skipped::byte_len`] is `None`), after every record before the damage. Broken framing
///   inside an intact compressed stream is resynchronized like that of an uncompressed one.
///
/// ```
/// use tfrecord_core::{BadRecords, ReaderOptions, RecordReader, RecordWriter, WriterOptions};
///
/// let mut writer = RecordWriter::new(Vec::new(), WriterOptions::new());
/// for r in [&b"one"[..], b"two", b"three"] {
///     writer.write(r)?;
/// }
/// let mut bytes = writer.finish()?;
/// bytes[12 + 3 + 4 + 12] ^= 1; // a bit of "two" flips
///
/// let opts = ReaderOptions::new().bad_records(BadRecords::skip(5));
/// let mut reader = RecordReader::new(&bytes[..], opts).with_path("data.tfrecord");
/// let records: Vec<Vec<u8>> = reader.by_ref().collect::<Result<_, _>>()?;
/// assert_eq!(records, [b"one".to_vec(), b"three".to_vec()]);
/// let skipped: Vec<_> = reader.drain_skipped().collect();
/// assert_eq!(skipped.len(), 1);
/// assert_eq!((skipped[0].offset(), skipped[0].byte_len()), (19, Some(19)));
/// assert!(skipped[0].to_string().starts_with("data.tfrecord: skipped the record at byte 19"));
/// # Ok::<(), tfrecord_core::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct BadRecords {
    mode: Mode,
    max: u64,
    /// Skips charged so far, shared by every clone; `None` when failing.
    spent: Option<Arc<AtomicU64>>,
    /// What every reader sharing the policy skipped, when asked for ([`BadRecords::shared_log`]).
    log: Option<Arc<Mutex<Vec<Skipped>>>>,
}

/// The three policies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Mode {
    #[default]
    Fail,
    Skip,
    Resync,
}

impl BadRecords {
    /// The first damaged record is an error (the default).
    pub fn fail() -> Self {
        Self::default()
    }

    /// Skips up to `max` records whose data checksum fails or that the caller cannot decode.
    pub fn skip(max: u64) -> Self {
        Self::budget(Mode::Skip, max)
    }

    /// Skips up to `max` damaged records and byte ranges, resynchronizing after broken framing.
    pub fn resync(max: u64) -> Self {
        Self::budget(Mode::Resync, max)
    }

    fn budget(mode: Mode, max: u64) -> Self {
        BadRecords {
            mode,
            max,
            spent: Some(Arc::new(AtomicU64::new(0))),
            log: None,
        }
    }

    /// The same policy, with every reader sharing it (its clones: a data set's readers on
    /// several threads) reporting what it skips to one log, read with
    /// [`take_logged`](Self::take_logged), rather than keeping it for its own
    /// [`drain_skipped`](crate::RecordReader::drain_skipped): for a caller that does not hold
    /// the readers.
    #[must_use]
    pub fn shared_log(mut self) -> Self {
        self.log = Some(Arc::new(Mutex::new(Vec::new())));
        self
    }

    /// Whether the policy has a [`shared_log`](Self::shared_log).
    pub fn has_shared_log(&self) -> bool {
        self.log.is_some()
    }

    /// The same mode and budget, with a count of its own and no log: for a reader whose skips
    /// are charged to this policy later, in an order of the caller's choosing, with
    /// [`charge_skipped`](Self::charge_skipped). A data set's reading threads run ahead of the
    /// records handed out; their readers have detached policies, and what they skipped is
    /// charged as the records around it are handed out, so that the budget runs out at the
    /// same record whatever the threads and the reading ahead.
    #[must_use]
    pub fn detached(&self) -> Self {
        match self.mode {
            Mode::Fail => Self::fail(),
            mode => Self::budget(mode, self.max),
        }
    }

    /// Counts a skip that a reader with a [`detached`](Self::detached) policy reported against
    /// this policy's budget, and adds it to the shared log, if there is one.
    ///
    /// # Errors
    /// A [`TooManyBadRecords`](crate::ErrorKind::TooManyBadRecords) error naming the skip (its
    /// file and byte offset) once the budget is spent.
    pub fn charge_skipped(&self, skipped: &Skipped) -> Result<(), Error> {
        if !self.charge() {
            let mut err = Error::new(ErrorKind::TooManyBadRecords {
                max: self.max,
                last: skipped.what(),
            })
            .with_offset(skipped.offset());
            if let Some((record, base)) = skipped.record {
                err = err.with_record(record);
                if let Some(base) = base {
                    err = err.with_record_base(base);
                }
            }
            return Err(match skipped.path() {
                Some(p) => err.with_path(p),
                None => err,
            });
        }
        self.log(skipped);
        Ok(())
    }

    /// Takes what the readers sharing this policy skipped since the last call (in the order
    /// they reported it), when the policy has a [`shared_log`](Self::shared_log).
    pub fn take_logged(&self) -> Vec<Skipped> {
        self.log
            .as_ref()
            .map(|l| std::mem::take(&mut *l.lock().unwrap_or_else(PoisonError::into_inner)))
            .unwrap_or_default()
    }

    /// Adds a report to the shared log, if there is one.
    pub(super) fn log(&self, skipped: &Skipped) {
        if let Some(l) = &self.log {
            l.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(skipped.clone());
        }
    }

    /// Skips a whole, intact record that the caller could not decode, for a caller that
    /// decodes records apart from their reader (as
    /// [`RecordReader::skip_last`](crate::RecordReader::skip_last) does for a reader's last
    /// record): the record whose frame starts at `offset` and is `frame_len` bytes long, the
    /// `record`-th of its file (or split), in the file at `path`. Under `skip` or `resync` it
    /// counts one against the budget and goes to the shared log, and the report is returned;
    /// `err`, the decoder's error (located at the record), is returned under `fail`, and a
    /// [`TooManyBadRecords`](crate::ErrorKind::TooManyBadRecords) error naming the record once the
    /// budget is spent.
    ///
    /// ```
    /// use tfrecord_core::{BadRecords, Error};
    ///
    /// let policy = BadRecords::skip(1).shared_log();
    /// let bad = || Error::feature("not an Example");
    /// let path = std::path::Path::new("data.tfrecord");
    /// let skipped = policy.skip_undecodable(Some(path), 40, 30, 2, bad())?;
    /// assert_eq!((skipped.offset(), skipped.byte_len()), (40, Some(30)));
    /// assert_eq!(policy.take_logged(), [skipped]);
    /// let over = policy.skip_undecodable(Some(path), 70, 30, 3, bad()).unwrap_err();
    /// assert!(over.to_string().contains("the budget of 1"), "{over}");
    /// assert!(BadRecords::fail().skip_undecodable(None, 0, 16, 0, bad()).is_err());
    /// # Ok::<(), tfrecord_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// `err` under `fail`; `TooManyBadRecords` when the budget is spent.
    pub fn skip_undecodable(
        &self,
        path: Option<&Path>,
        offset: u64,
        frame_len: u64,
        record: u64,
        err: Error,
    ) -> Result<Skipped, Error> {
        let located = |e: Error| {
            let e = e.with_offset(offset).with_record(record);
            match path {
                Some(p) => e.with_path(p),
                None => e,
            }
        };
        if !self.skips() {
            return Err(located(err));
        }
        let reason = SkipReason::Undecodable(err.describe());
        let skipped = Skipped::new(path.map(Arc::from), offset, Some(frame_len), reason)
            .at_record(record, None);
        if !self.charge() {
            return Err(located(Error::new(ErrorKind::TooManyBadRecords {
                max: self.max,
                last: skipped.what(),
            })));
        }
        self.log(&skipped);
        Ok(skipped)
    }

    /// Whether any damage is skipped (`skip` or `resync`).
    pub fn skips(&self) -> bool {
        self.mode != Mode::Fail
    }

    /// Whether broken framing is resynchronized past (`resync`).
    pub fn resyncs(&self) -> bool {
        self.mode == Mode::Resync
    }

    /// The budget: how many records and byte ranges may be skipped (0 when failing).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// How many records and byte ranges the readers sharing this policy have skipped.
    pub fn spent(&self) -> u64 {
        self.spent.as_ref().map_or(0, |s| s.load(Ordering::Relaxed))
    }

    pub(super) fn mode(&self) -> Mode {
        self.mode
    }

    /// Takes one skip from the budget; `false` when it is spent.
    pub(super) fn charge(&self) -> bool {
        let Some(spent) = &self.spent else {
            return false;
        };
        spent
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < self.max).then_some(n + 1)
            })
            .is_ok()
    }
}

/// Why a record or byte range was skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkipReason {
    /// One whole record whose length checksum passes and whose data checksum does not.
    DataChecksum {
        /// The checksum stored in the frame.
        stored: u32,
        /// The checksum of the payload read.
        computed: u32,
    },
    /// One whole, intact record that the caller could not decode: the decoder's words.
    Undecodable(String),
    /// Bytes that are not sound frames, up to the next frame that passes the boundary test or
    /// to the end of the stream: what was wrong where they start.
    Damaged(String),
    /// The stream ends inside a frame: what was missing.
    Truncated(String),
    /// The gzip or zlib stream is damaged, or bytes follow the end of a zlib stream: nothing
    /// after this point can be read.
    Compressed(String),
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::DataChecksum { stored, computed } => write!(
                f,
                "data checksum mismatch (stored {stored:#010x}, computed {computed:#010x})"
            ),
            SkipReason::Undecodable(detail)
            | SkipReason::Damaged(detail)
            | SkipReason::Truncated(detail)
            | SkipReason::Compressed(detail) => f.write_str(detail),
        }
    }
}

/// One record or byte range a reader skipped under its [`BadRecords`] policy: the file, where
/// it starts in the (decompressed) stream, how long it is, and why.
///
/// Its `Display` form is one line, as the `tfrecord` command prints it:
/// `data.tfrecord: skipped the record at byte 1024 (80 bytes): data checksum mismatch (...)`.
///
/// Two reports are equal when they name the same bytes for the same reason: the record index
/// a reader counted ([`record`](Self::record)) is not compared, as readers of one file count
/// from different places (a byte-range split from its first record).
#[derive(Clone, Debug)]
pub struct Skipped {
    path: Option<Arc<Path>>,
    offset: u64,
    len: Option<u64>,
    reason: SkipReason,
    /// The index of the record skipped (for a byte range, of the record after it), and where
    /// the reader counts from when not from the file's start.
    record: Option<(u64, Option<u64>)>,
}

impl PartialEq for Skipped {
    fn eq(&self, other: &Self) -> bool {
        (&self.path, self.offset, self.len, &self.reason)
            == (&other.path, other.offset, other.len, &other.reason)
    }
}

impl Eq for Skipped {}

impl Skipped {
    pub(super) fn new(
        path: Option<Arc<Path>>,
        offset: u64,
        len: Option<u64>,
        reason: SkipReason,
    ) -> Self {
        Skipped {
            path,
            offset,
            len,
            reason,
            record: None,
        }
    }

    /// The report with the index its reader counted for the record (`base`: the byte offset
    /// of the record it numbers 0, when not the file's start).
    pub(super) fn at_record(mut self, record: u64, base: Option<u64>) -> Self {
        self.record = Some((record, base));
        self
    }

    /// The index of the skipped record in its file, as its reader counted it (for a byte
    /// range, of the record after it); in a byte-range split, from the split's first record,
    /// as [`Error::record`] counts. `None` when not known.
    pub fn record(&self) -> Option<u64> {
        self.record.map(|(r, _)| r)
    }

    /// The file, when the reader was given its name.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The byte offset where the skipped bytes start, in the (decompressed) stream.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// How many bytes were skipped: the whole frame for a record; `None` for the rest of a
    /// compressed stream that cannot be decoded past its damage.
    pub fn byte_len(&self) -> Option<u64> {
        self.len
    }

    /// Why.
    pub fn reason(&self) -> &SkipReason {
        &self.reason
    }

    /// Whether one whole record was skipped (else a byte range that is not one record).
    pub fn is_record(&self) -> bool {
        matches!(
            self.reason,
            SkipReason::DataChecksum { .. } | SkipReason::Undecodable(_)
        )
    }

    /// What was skipped and why, without the file and offset: `the record (80 bytes): ...`.
    pub(super) fn what(&self) -> String {
        let reason = &self.reason;
        match (self.is_record(), self.len) {
            (true, Some(n)) => format!("the record ({n} bytes): {reason}"),
            (true, None) => format!("the record: {reason}"),
            (false, Some(n)) => format!("{n} bytes: {reason}"),
            (false, None) => format!("the rest of the stream: {reason}"),
        }
    }
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(path) = &self.path {
            write!(f, "{}: ", path.display())?;
        }
        let (o, reason) = (self.offset, &self.reason);
        match (self.is_record(), self.len) {
            (true, Some(n)) => write!(f, "skipped the record at byte {o} ({n} bytes): {reason}"),
            (true, None) => write!(f, "skipped the record at byte {o}: {reason}"),
            (false, Some(n)) => write!(f, "skipped {n} bytes at byte {o}: {reason}"),
            (false, None) => write!(f, "skipped the rest of the stream from byte {o}: {reason}"),
        }
    }
}

/// The totals of what a reader skipped
/// ([`RecordReader::skip_summary`](crate::RecordReader::skip_summary)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkipSummary {
    /// Whole records skipped.
    pub records: u64,
    /// Byte ranges skipped that are not one record.
    pub ranges: u64,
    /// Bytes skipped, over the records and ranges whose length is known.
    pub bytes: u64,
}

impl SkipSummary {
    /// Counts one more skip.
    pub(super) fn add(&mut self, skipped: &Skipped) {
        if skipped.is_record() {
            self.records += 1;
        } else {
            self.ranges += 1;
        }
        self.bytes += skipped.len.unwrap_or(0);
    }
}

/// What a reader skipped: the reports not yet drained, and the totals.
#[derive(Debug, Default)]
pub(super) struct Damage {
    pub(super) pending: Vec<Skipped>,
    pub(super) summary: SkipSummary,
}

/// A frame, or the stream, broken where a frame starts: the error (not yet located), and the
/// stream's bytes from `start` that the reader took before it saw the damage, to look at again.
pub(super) struct Broken {
    pub(super) err: Error,
    pub(super) start: u64,
    pub(super) taken: Vec<u8>,
    /// The framing is broken (else the stream itself: I/O, decompression, trailing bytes).
    pub(super) framing: bool,
}

impl Broken {
    /// Broken framing at `start`, after taking the `taken` slices from the stream.
    pub(super) fn frame(err: Error, start: u64, taken: &[&[u8]]) -> Box<Self> {
        Box::new(Broken {
            err,
            start,
            taken: taken.concat(),
            framing: true,
        })
    }

    /// A stream that broke (or ended badly) at `start`.
    pub(super) fn stream(err: Error, start: u64) -> Box<Self> {
        Box::new(Broken {
            err,
            start,
            taken: Vec::new(),
            framing: false,
        })
    }
}
