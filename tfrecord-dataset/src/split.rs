//! The unit of work: a [`Split`] (a whole file, or the records of an uncompressed TFRecord file
//! that start inside a byte range), and reading one in blocks of records.
//!
//! # Byte ranges
//!
//! A range split is read by tfrecord-core's range reader (`RecordReader::open_range`): it finds
//! the first record boundary at or after the range's start by the checksums and stops at the
//! first record starting at or after its end, so the ranges of a file hold each of its records
//! exactly once. [`crate::plan`] cuts files into ranges when a data set is sharded. Resuming
//! inside a range starts at the saved position, itself a record boundary, and keeps the end.
//! Record indices inside a range count from the range's first record; positions in checkpoints
//! are byte offsets, which stay exact either way.
//!
//! # Bad records
//!
//! Each split's reader skips damage on a budget of its own (the data set's policy
//! [`detached`](tfrecord_core::BadRecords::detached)); what it skipped is taken after each
//! record ([`SplitReader::read_block`], [`SplitReader::read_raw`]), carried with the block,
//! each report placed before the record it came before, and charged to the data set's policy
//! as the records are handed out, in stream order (the interleave). So one budget covers the
//! whole data set, and it runs out at the same record whatever the threads and however far
//! they read ahead. A checkpoint position is the frame after the last record given, which lies
//! before a damaged range that follows it: a resumed read meets that range again.

use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tfrecord_core::{Compression, Format, ReaderOptions, RecordReader, Skipped};

use crate::block::{
    BLOCK_BYTES, BLOCK_RECORDS, Block, Contents, Decoder, Items, Place, RawBlock, Start, decode,
};

use crate::error::{Error, Result};
use crate::sources::SourceFile;

/// A unit of reading work: a file, or the records of an uncompressed TFRecord file that start
/// inside a byte range.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Split {
    /// The file.
    pub path: PathBuf,
    /// `None`: the whole file. `Some(start..end)`: the records that start at or after the first
    /// record boundary at or after `start`, and before `end` (uncompressed TFRecord only).
    pub range: Option<Range<u64>>,
    /// The container format.
    pub format: Format,
    /// The stream compression.
    pub compression: Compression,
}

impl Split {
    /// Says where an error's record index counts from when this split is a byte range (from
    /// the split's first record, the first boundary at or after the range's start, found again
    /// here: errors are rare, and a split does not keep it); other errors as they are.
    pub(crate) fn label(&self, e: Error, opts: &ReaderOptions) -> Error {
        let Some(range) = &self.range else {
            return e;
        };
        match e {
            Error::Record(inner) if inner.record().is_some() && inner.record_base().is_none() => {
                let opts = opts
                    .clone()
                    .format(self.format)
                    .compression(self.compression);
                let base = RecordReader::open_range(&self.path, range.clone(), opts)
                    .ok()
                    .and_then(|r| r.record_base());
                Error::Record(match base {
                    Some(base) => inner.with_record_base(base),
                    None => inner,
                })
            }
            other => other,
        }
    }

    /// The whole of a file.
    pub fn whole(file: &SourceFile) -> Self {
        Split {
            path: file.path.clone(),
            range: None,
            format: file.format,
            compression: file.compression,
        }
    }
}

/// A split open for reading.
pub(crate) struct SplitReader {
    reader: RecordReader<File>,
    path: Arc<Path>,
    scratch: Vec<u8>,
    /// The policy skips damage: there may be reports to take after each record.
    skips: bool,
}

impl SplitReader {
    /// Opens a split at `start` (a record boundary: the beginning, or a position saved in a
    /// checkpoint). A saved position is returned to without reading the records before it
    /// ([`RecordReader::open_at`]): an uncompressed file is entered by seeking, a compressed one
    /// decompressed up to it unchecked, so damage before it is neither met again nor reported
    /// twice; inside a byte range no boundary is looked for again, and the range's end is kept.
    ///
    /// # Errors
    /// A byte-range split of a compressed or OFRecord file; a file that cannot be opened; a
    /// `start` past the end of the file (the file changed since the position was saved).
    pub(crate) fn open(split: &Split, opts: &ReaderOptions, start: Start) -> Result<Self> {
        let path: Arc<Path> = Arc::from(split.path.as_path());
        let skips = opts.get_bad_records().skips();
        // The reader skips on a budget of its own; what it skipped travels with the blocks and
        // is charged to the data set's policy as the records are handed out.
        let opts = opts
            .clone()
            .format(split.format)
            .compression(split.compression)
            .bad_records(opts.get_bad_records().detached());
        let resume = start != Start::default();
        let reader = match (&split.range, resume) {
            // tfrecord-core's range reader: from the first record boundary at or after the
            // start to the first record starting at or after the end. Records count from the
            // split's first one.
            (Some(range), false) => RecordReader::open_range(&*path, range.clone(), opts)?,
            (range, true) => {
                let reader = RecordReader::open_at(&*path, start.offset, start.record, opts)
                    .map_err(|e| not_there(&path, start, e))?;
                match range {
                    Some(range) => reader.ending_at(range.end),
                    None => reader,
                }
            }
            (None, false) => RecordReader::open(&*path, opts)?,
        };
        Ok(SplitReader {
            skips,
            reader,
            path,
            scratch: Vec::new(),
        })
    }

    /// Moves forward to `start` without reading the records on the way (see
    /// [`RecordReader::advance_to`]).
    fn advance_to(&mut self, start: Start) -> Result<()> {
        self.reader
            .advance_to(start.offset, start.record)
            .map_err(|e| not_there(&self.path, start, e))
    }

    /// Where the next record is.
    pub(crate) fn position(&self) -> Start {
        Start {
            record: self.reader.records_read(),
            offset: self.reader.offset(),
        }
    }

    /// Reads the next block: up to [`BLOCK_RECORDS`] records or [`BLOCK_BYTES`] of payload.
    pub(crate) fn read_block<D: Decoder>(&mut self, decoder: &D) -> Block<D::Out> {
        let mut items = Items::with_capacity(BLOCK_RECORDS);
        let mut skipped = Vec::new();
        let mut bytes = 0usize;
        loop {
            let before = self.position();
            let read = match self.reader.read_lent(&mut self.scratch) {
                Ok(Some(payload)) => {
                    bytes += payload.len();
                    Some(Ok(decoder.decode(payload)))
                }
                Ok(None) => None,
                Err(e) => Some(Err(e)),
            };
            // What the reader skipped on the way comes before this record (or the end).
            if self.skips {
                let here = items.len();
                skipped.extend(self.reader.drain_skipped().map(|s| (here, s)));
            }
            let Some(read) = read else {
                return block(items, true, skipped);
            };
            // The record read, past any the bad-record policy skipped on the way; an error is
            // where reading stopped.
            let Start { record, offset } = match read {
                Ok(_) => returned_at(&self.reader),
                Err(_) => before,
            };
            let end = self.reader.offset();
            let failure = match read {
                Ok(Ok(value)) => {
                    let place = Place {
                        record,
                        offset,
                        end,
                    };
                    items.push(value, place);
                    None
                }
                Ok(Err(e)) => {
                    match decoder.undecodable(e, &self.path, record, offset, end - offset) {
                        // Charged where the record would have been handed out.
                        Ok(report) => {
                            skipped.push((items.len(), report));
                            continue;
                        }
                        Err(err) => Some(err),
                    }
                }
                Err(e) => Some(Error::Record(e)),
            };
            if let Some(err) = failure {
                items.fail(err, Start { record, offset });
                return block(items, true, skipped);
            }
            if items.len() >= BLOCK_RECORDS || bytes >= BLOCK_BYTES {
                return block(items, false, skipped);
            }
        }
    }

    /// Reads the next block without decoding it, for decoding on another thread: up to
    /// [`BLOCK_RECORDS`] records or [`BLOCK_BYTES`] of payload, checksums checked as the
    /// reader options say.
    pub(crate) fn read_raw(&mut self) -> RawBlock {
        let mut block = RawBlock::new();
        loop {
            let (record, offset) = (self.reader.records_read(), self.reader.offset());
            let read = self.reader.read_lent(&mut self.scratch);
            // What the reader skipped on the way comes before this record (or the end).
            let here = block.size().0;
            let ended = match read {
                Ok(Some(payload)) => {
                    block.push(payload);
                    // Where the record read is, past any the bad-record policy skipped on the
                    // way, and where it ends.
                    let at = returned_at(&self.reader);
                    block.place_last(at.record, at.offset, self.reader.offset());
                    None
                }
                Ok(None) => Some(None),
                Err(e) => Some(Some((Error::Record(e), Start { record, offset }))),
            };
            if self.skips {
                block
                    .skipped
                    .extend(self.reader.drain_skipped().map(|s| (here, s)));
            }
            if let Some(failure) = ended {
                block.end(failure);
                return block;
            }
            let (records, bytes) = block.size();
            if records >= BLOCK_RECORDS || bytes >= BLOCK_BYTES {
                return block;
            }
        }
    }

    /// Reads the next record only (re-reading a checkpoint's shuffle buffer).
    fn read_one<D: Decoder>(&mut self, decoder: &D) -> Result<D::Out> {
        let at = self.position();
        match self.reader.read_lent(&mut self.scratch)? {
            Some(payload) => decode(decoder, payload, &self.path, at.record, at.offset),
            None => Err(moved(&self.path, at, at.offset)),
        }
    }
}

/// Re-reads the records of one split at the given positions (any order), returning each with
/// its tag. Forward gaps are read through; an uncompressed file is re-entered by seeking when a
/// gap is large or the position is behind.
///
/// # Errors
/// As [`SplitReader::open`], and reading or decoding errors of the records asked for.
pub(crate) fn read_positions<D: Decoder, K>(
    split: &Split,
    opts: &ReaderOptions,
    decoder: &D,
    mut wanted: Vec<(Start, K)>,
) -> Result<Vec<(D::Out, K)>> {
    /// An uncompressed file is re-entered by seeking past a gap larger than this.
    const READ_THROUGH: u64 = 4 << 20;
    wanted.sort_by_key(|(start, _)| start.offset);
    let seekable = split.compression == Compression::None;
    let mut out = Vec::with_capacity(wanted.len());
    let mut reader: Option<SplitReader> = None;
    for (start, tag) in wanted {
        let usable = reader.as_ref().is_some_and(|r| {
            let here = r.position();
            here.offset <= start.offset && (!seekable || start.offset - here.offset <= READ_THROUGH)
        });
        let r = match reader.as_mut() {
            Some(r) if usable => {
                r.advance_to(start)?;
                r
            }
            _ => reader.insert(SplitReader::open(split, opts, start)?),
        };
        out.push((r.read_one(decoder)?, tag));
    }
    Ok(out)
}

/// Where the record `reader`'s last read returned is: its index and frame offset (after the
/// records and byte ranges the bad-record policy skipped before it).
fn returned_at(reader: &RecordReader<File>) -> Start {
    Start {
        record: reader.records_read().saturating_sub(1),
        offset: reader.last_offset().unwrap_or_else(|| reader.offset()),
    }
}

fn block<O>(items: Items<O>, last: bool, skipped: Vec<(usize, Skipped)>) -> Block<O> {
    Block {
        contents: Contents::Items(items),
        last,
        skipped,
    }
}

/// An error returning to saved position `start`: a stream that ends before it means that the
/// file changed since.
fn not_there(path: &Path, start: Start, e: tfrecord_core::Error) -> Error {
    match e.kind() {
        tfrecord_core::ErrorKind::Truncated { .. } => {
            moved(path, start, e.offset().unwrap_or(start.offset))
        }
        _ => Error::Record(e),
    }
}

/// A saved position that the file no longer has.
fn moved(path: &Path, want: Start, found: u64) -> Error {
    Error::Checkpoint(format!(
        "{}: expected record {} at byte {}, found byte {found} (the file changed since the \
         position was saved)",
        path.display(),
        want.record,
        want.offset
    ))
}
