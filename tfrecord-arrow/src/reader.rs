//! A record file read as Arrow: batches of records, their buffers reused, decoded into
//! RecordBatches; an Arrow `RecordBatchReader`.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use tfrecord_core::{Error, Format, ReaderOptions, RecordReader, Result};
use tfrecord_schema::ir::Record;

use crate::{ArrowDecoder, ArrowOptions};

/// Records per batch unless set: what `tf.data` pipelines and tfx_bsl's readers commonly use.
pub const DEFAULT_BATCH_SIZE: usize = 1024;

/// A batch ends early, after the record that brings its records' bytes to this (256 MiB), so
/// that a batch of large records stays bounded in memory and none of its columns holds more
/// than Arrow's 2^31 bytes or values (a value takes at least one byte of its record). A record
/// larger than this is a batch of its own.
pub const MAX_BATCH_BYTES: usize = 256 << 20;

/// Reads a TFRecord or OFRecord stream as Arrow [`RecordBatch`]es of up to
/// [`batch_size`](Self::with_batch_size) records each (the last one shorter, and any whose
/// records reach [`MAX_BATCH_BYTES`]), decoded by an [`ArrowDecoder`]. It is an Arrow
/// [`RecordBatchReader`], and an iterator of batches.
///
/// Errors name the file, the record's byte offset and index, and the feature key. Under a
/// reader [`BadRecords`](tfrecord_core::BadRecords) policy that skips, a record that does not
/// decode by the spec is skipped and reported as the typed reader skips it
/// ([`BadRecords::skip_undecodable`](tfrecord_core::BadRecords::skip_undecodable)): the batch it
/// would have been in ends before it, and the next batch starts after it.
///
/// ```no_run
/// use tfrecord_arrow::ArrowReader;
/// use tfrecord_core::ReaderOptions;
/// use tfrecord_schema::ir::Schema;
///
/// let spec = Schema::from_toml_str(&std::fs::read_to_string("train.toml")?, "train.toml")
///     .expect("a valid spec");
/// for batch in ArrowReader::open("train.tfrecord", &spec.records[0], ReaderOptions::new())? {
///     let batch = batch?;
///     println!("{} rows", batch.num_rows());
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ArrowReader<R: Read> {
    reader: RecordReader<R>,
    decoder: ArrowDecoder,
    batch_size: usize,
    /// The buffers of the current batch's records (more may be kept than are filled).
    records: Vec<Vec<u8>>,
    /// Each filled record's frame offset and index, for errors.
    origins: Vec<(Option<u64>, u64)>,
    /// How many records at the front of `records` were read and not handed out yet.
    held: usize,
    done: bool,
}

impl ArrowReader<File> {
    /// Opens a record file (TFRecord unless `options` says OFRecord; compression as
    /// `options` says: `ReaderOptions::for_path(&path)` guesses it from the name, as
    /// `Reader::open` does) to read records of `record`, with the default [`ArrowOptions`].
    /// The iterator's errors are `ArrowError::ExternalError`s around the crate's error, which
    /// names the file, offset, record and key ([`next_batch`](Self::next_batch) returns it
    /// as it is).
    ///
    /// # Errors
    /// The file cannot be opened, or `record` has no columnar layout.
    pub fn open(path: impl AsRef<Path>, record: &Record, options: ReaderOptions) -> Result<Self> {
        let format = options.get_format();
        let decoder = ArrowDecoder::new(record, format)?;
        Ok(ArrowReader::new(
            RecordReader::open(path, options)?,
            decoder,
        ))
    }
}

impl<R: Read> ArrowReader<R> {
    /// Reads `reader`'s records with `decoder` (whose format must be the reader's: the first
    /// batch is an error when it is not).
    pub fn new(reader: RecordReader<R>, decoder: ArrowDecoder) -> Self {
        ArrowReader {
            reader,
            decoder,
            batch_size: DEFAULT_BATCH_SIZE,
            records: Vec::new(),
            origins: Vec::new(),
            held: 0,
            done: false,
        }
    }

    /// Records per batch (at least 1).
    #[must_use]
    pub fn with_batch_size(mut self, n: usize) -> Self {
        self.batch_size = n.max(1);
        self
    }

    /// The schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        self.decoder.schema()
    }

    /// The next batch, `None` at the end of the stream.
    ///
    /// # Errors
    /// Framing, checksum and decoding errors, naming the file, byte offset, record index and
    /// feature key.
    pub fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        if self.done && self.held == 0 {
            return Ok(None);
        }
        let read = self.reader.options().get_format();
        if read != self.decoder.format {
            self.done = true;
            let e = Error::feature(format!(
                "the reader reads {} files but the Arrow decoder decodes {} records: make both \
                 with the same format",
                read.name(),
                self.decoder.format.name()
            ));
            return Err(match self.reader.path() {
                Some(path) => e.with_path(path),
                None => e,
            });
        }
        loop {
            // Records carried over from the last call come first (and only their origins: a
            // read that failed in the last call may have left more).
            let mut n = self.held;
            self.origins.truncate(n);
            self.held = 0;
            let mut bytes: usize = self.records[..n].iter().map(Vec::len).sum();
            while n < self.batch_size && bytes < MAX_BATCH_BYTES && !self.done {
                if n == self.records.len() {
                    self.records.push(Vec::new());
                }
                if !self.reader.read_into(&mut self.records[n])? {
                    self.done = true;
                    break;
                }
                let index = self.reader.records_read().saturating_sub(1);
                self.origins.push((self.reader.last_offset(), index));
                bytes = bytes.saturating_add(self.records[n].len());
                n += 1;
            }
            if n == 0 {
                return Ok(None);
            }
            // Decodes `lo..hi` of the records read; a record that does not decode is skipped
            // under a policy that skips (when it is the first of the window: the records before
            // it are handed out first), or ends the stream.
            let (mut lo, mut hi) = (0, n);
            while lo < hi {
                let first = self.origins[lo].1;
                let err = match self.decoder.decode(&self.records[lo..hi], first) {
                    Ok(batch) => {
                        self.carry(hi, n);
                        return Ok(Some(batch));
                    }
                    Err(e) => self.locate(e, first),
                };
                let at = err
                    .record()
                    .and_then(|i| usize::try_from(i.checked_sub(first)?).ok())
                    .map(|i| lo + i)
                    .filter(|&j| j < hi);
                let policy = self.reader.options().get_bad_records();
                let Some(j) = at.filter(|_| policy.skips()) else {
                    self.done = true;
                    return Err(err);
                };
                if j > lo {
                    hi = j;
                    continue;
                }
                let (offset, index) = self.origins[j];
                let frame = self.records[j].len() as u64 + self.decoder.format.frame_overhead();
                let skipped = policy.skip_undecodable(
                    self.reader.path(),
                    offset.unwrap_or(0),
                    frame,
                    index,
                    err,
                );
                if let Err(e) = skipped {
                    self.done = true;
                    return Err(e);
                }
                lo += 1;
            }
            // Every record of the window was skipped: read on.
            self.carry(hi, n);
        }
    }

    /// Keeps records `from..n` (read, not handed out) for the next batch, at the front.
    fn carry(&mut self, from: usize, n: usize) {
        self.records[..n].rotate_left(from);
        self.origins.drain(..from);
        self.held = n - from;
    }

    /// Adds the file and the record's byte offset to a batch error (whose record index counts
    /// from `first`, the batch's first record).
    fn locate(&self, mut e: Error, first: u64) -> Error {
        let origin = e
            .record()
            .and_then(|i| usize::try_from(i.checked_sub(first)?).ok())
            .and_then(|i| self.origins.get(i));
        if let Some(&(Some(offset), _)) = origin {
            e = e.with_offset(offset);
        }
        match self.reader.path() {
            Some(path) => e.with_path(path),
            None => e,
        }
    }
}

impl<R: Read> std::fmt::Debug for ArrowReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArrowReader")
            .field("path", &self.reader.path())
            .field("batch_size", &self.batch_size)
            .field("records_read", &self.reader.records_read())
            .finish_non_exhaustive()
    }
}

impl<R: Read> Iterator for ArrowReader<R> {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_batch() {
            Ok(Some(b)) => Some(Ok(b)),
            Ok(None) => None,
            Err(e) => {
                self.done = true;
                self.held = 0;
                Some(Err(ArrowError::ExternalError(Box::new(e))))
            }
        }
    }
}

impl<R: Read> RecordBatchReader for ArrowReader<R> {
    fn schema(&self) -> SchemaRef {
        self.decoder.schema()
    }
}

impl ArrowDecoder {
    /// The container this decoder reads.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The options it maps with.
    pub fn options(&self) -> ArrowOptions {
        self.options
    }
}
