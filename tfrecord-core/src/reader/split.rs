//! Byte-range splits of one uncompressed TFRecord file: a reader of `[start, end)` reads the
//! records whose frames start in the range, so that for any split points the splits together
//! read every record of the file exactly once, in order.
//!
//! # Finding the first record
//!
//! A split that starts at byte 0 starts there. Any other split looks for the first byte `p` at
//! or after `start` where a frame starts by the boundary test: the 12 bytes at `p` are a header
//! whose length checksum (a masked CRC32C of the 8 length bytes) passes, the length is within
//! the options' `max_record_len`, the payload's data checksum passes, and the next frame lines
//! up (the bytes after the frame are the end of the file, or another header whose length
//! checksum passes). The split then reads records from `p` and stops at the first record that
//! starts at or after `end` and passes the same test; a record that starts before `end` is read
//! whole, wherever it ends. Both ends use the one test, so the record where one split stops is
//! the record where the next one starts.
//!
//! # How likely a wrong boundary is
//!
//! At a byte that is not a frame start, the length checksum passes by chance with probability
//! 2^-32 for data that looks random to CRC32C; the data checksum, 2^-32 again; the next
//! header's length checksum, 2^-32 more: about 2^-96 per wrong position, so that scanning even
//! a petabyte (2^50 positions) leaves odds of about 2^-46 of a false start. The checksums are
//! not a cryptographic defence: data crafted to pass them passes them.
//!
//! The one realistic way to pass the test at a wrong byte is a payload that itself holds
//! TFRecord frames (a record storing a TFRecord file's bytes, whole or in pieces): they pass
//! the test as the file's own frames do. A start found by the test is therefore confirmed
//! (`confirm.rs`): it is kept when the frames from it chain on, frame after frame (both
//! checksums), to the end of the file or for 8 MiB. When they break first and a record (both checksums passing, within
//! 64 MiB before the start) encloses the start, the start is looked for again after that record
//! (the split before reads the record whole); when no record encloses it, the file is damaged
//! where they break, which reading reports under the reader's
//! [`BadRecords`](crate::BadRecords) policy. What is left is embedded frames that chain on for
//! more than 8 MiB past the split's start, or a start more than 64 MiB into the record that
//! holds them, or embedded frames in a record that is itself damaged (its data checksum fails,
//! so it is not known to enclose them: a split that starts inside it reads them as records,
//! where a reader that reaches the record skips it whole); split files that hold such records
//! by file, or with an index ([`crate::index`]).
//!
//! # What cannot be split
//!
//! OFRecord frames have no checksums, so no boundary can be found from an arbitrary byte; and a
//! gzip or zlib stream can only be decoded from its start. Both are refused: split them by file.
//!
//! # Record indices
//!
//! A split cannot know how many records come before it without reading them. Its reader counts
//! records from its first one: [`RecordReader::records_read`] and the record index of its
//! errors start at 0 there, and the errors say so ([`crate::Error::record_base`]: "record 3 of
//! the split starting at byte 4096"). Byte offsets are always offsets in the file.

use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::ops::Range;
use std::path::Path;

use super::confirm::Confirm;
use super::frames::{NO_RECORD, RecordReader};
use super::options::ReaderOptions;
use super::scan::Lookahead;
use crate::compression::{Compression, Format};
use crate::error::{Error, ErrorKind, Result};

/// Split `i` of `n` equal byte ranges of a file of `len` bytes: `[len * i / n, len * (i + 1) /
/// n)`, for [`RecordReader::open_range`]. The `n` ranges cover the file exactly once; `None`
/// unless `i < n`.
///
/// ```
/// use tfrecord_core::split_range;
///
/// assert_eq!(split_range(100, 0, 3), Some(0..33));
/// assert_eq!(split_range(100, 2, 3), Some(66..100));
/// assert_eq!(split_range(100, 3, 3), None);
/// ```
pub fn split_range(len: u64, i: u64, n: u64) -> Option<Range<u64>> {
    if i >= n {
        return None;
    }
    let at = |k: u64| {
        let cut = u128::from(len) * u128::from(k) / u128::from(n);
        u64::try_from(cut).unwrap_or(len)
    };
    Some(at(i)..at(i + 1))
}

fn unsupported(path: &Path, detail: impl Into<String>) -> Error {
    Error::new(ErrorKind::Unsupported {
        detail: detail.into(),
    })
    .with_path(path)
}

impl RecordReader<File> {
    /// Opens the byte range `range` of an uncompressed TFRecord file: the reader reads the
    /// records whose frames start in the range (the first from the first byte at or after
    /// `range.start` where a frame passes the boundary test, unless the range starts at 0),
    /// reading the last one whole wherever it ends. For any split points the ranges' readers
    /// together read every record of the file exactly once, in order.
    ///
    /// A wrong start passes the test with odds of about 2^-96 per byte for random data. The
    /// frames of a TFRecord stream embedded in a record's payload pass it too: a start is kept
    /// only when the frames from it chain on to the end of the file or for 8 MiB, or when no
    /// record encloses it; else the split starts after the record that encloses it (see the
    /// module documentation `reader/split.rs`).
    /// [`records_read`](Self::records_read) and the record indices of errors count from the
    /// range's first record ([`Error::record_base`]); byte offsets are the file's.
    ///
    /// ```
    /// use tfrecord_core::{ReaderOptions, RecordReader, RecordWriter, WriterOptions, split_range};
    ///
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("data.tfrecord");
    /// let mut writer = RecordWriter::create(&path, WriterOptions::new())?;
    /// for i in 0..100u32 {
    ///     writer.write(&i.to_le_bytes())?;
    /// }
    /// writer.finish()?;
    ///
    /// let len = std::fs::metadata(&path)?.len();
    /// let mut all = Vec::new();
    /// for i in 0..7 {
    ///     let range = split_range(len, i, 7).expect("i < 7");
    ///     for record in RecordReader::open_range(&path, range, ReaderOptions::new())? {
    ///         all.push(u32::from_le_bytes(record?.try_into().unwrap()));
    ///     }
    /// }
    /// assert_eq!(all, (0..100).collect::<Vec<_>>());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// A range that ends before it starts (an empty one, `n..n`, reads nothing); OFRecord and
    /// compressed files (split those by file), what is not a regular file, a file that cannot
    /// be opened, and I/O errors while looking for the first record; each names the file.
    pub fn open_range(
        path: impl AsRef<Path>,
        range: Range<u64>,
        opts: ReaderOptions,
    ) -> Result<Self> {
        let path = path.as_ref();
        if range.start > range.end {
            // Empty ranges (`n..n`) are fine; one that ends before it starts is a mistake.
            return Err(unsupported(
                path,
                format!(
                    "the byte range {}..{} ends before it starts",
                    range.start, range.end
                ),
            ));
        }
        if opts.format == Format::OfRecord {
            return Err(unsupported(
                path,
                "cannot split OFRecord files by byte range: OFRecord frames have no checksums, \
                 so a record boundary cannot be found from an arbitrary byte; split by file",
            ));
        }
        if opts.compression != Compression::None {
            return Err(unsupported(
                path,
                format!(
                    "cannot split {} files by byte range: a compressed stream can only be \
                     decoded from its start; split by file",
                    opts.compression.name()
                ),
            ));
        }
        let located = |e: std::io::Error| Error::from(e).with_path(path);
        let mut file = File::open(path).map_err(located)?;
        let meta = file.metadata().map_err(located)?;
        if !meta.is_file() {
            return Err(unsupported(
                path,
                "cannot split by byte range what is not a regular file (a pipe or device reads \
                 in order)",
            ));
        }
        let size = meta.len();
        let start = range.start.min(size);
        if start > 0 {
            file.seek(SeekFrom::Start(start)).map_err(located)?;
        }
        let mut reader = RecordReader::new(file, opts)
            .with_path(path)
            .starting_at(start, 0);
        reader.remaining = Some(size - start);
        reader.end = range.end;
        // An empty range holds no record's start, and no damage of its own to report (what
        // lies at its start belongs to the range that goes on from there).
        if start >= range.end {
            reader.done = true;
            return Ok(reader);
        }
        if start == 0 {
            return Ok(reader);
        }
        let mut look = Lookahead::new(start, Vec::new());
        let first = look
            .scan(reader.src.buf(), &reader.opts, start, range.end, Some(size))
            .map_err(|e| Error::from(e).with_path(path).with_offset(start))?;
        let Some(at) = first else {
            reader.done = true; // no record starts in the range
            return Ok(reader);
        };
        // A record whose payload holds a TFRecord stream may enclose `at` (`confirm.rs`).
        let confirmed = Confirm::open(path, &reader.opts, size)
            .and_then(|mut c| c.start(at))
            .map_err(|e| Error::from(e).with_path(path).with_offset(at))?;
        match confirmed {
            first if first == at => {
                look.give_back(&mut reader.src, at);
            }
            first if first < range.end => {
                let mut file = File::open(path).map_err(located)?;
                file.seek(SeekFrom::Start(first)).map_err(located)?;
                let opts = reader.opts.clone();
                reader = RecordReader::new(file, opts).with_path(path);
                reader.end = range.end;
            }
            _ => {
                reader.done = true; // the range holds no record's start
                return Ok(reader);
            }
        }
        reader.offset = confirmed;
        reader.remaining = Some(size - confirmed);
        reader.record_base = Some(confirmed);
        Ok(reader)
    }

    /// Opens split `i` of `n` equal byte ranges of an uncompressed TFRecord file
    /// ([`split_range`] of its size, then [`open_range`](Self::open_range)): for `i` in `0..n`
    /// the splits read every record once. Shard `i` of `n` over several files is split `i` of
    /// `n` of each.
    ///
    /// # Errors
    /// As [`open_range`](Self::open_range), and `i >= n`.
    pub fn open_split(path: impl AsRef<Path>, i: u64, n: u64, opts: ReaderOptions) -> Result<Self> {
        let path = path.as_ref();
        let size = std::fs::metadata(path)
            .map_err(|e| Error::from(e).with_path(path))?
            .len();
        let Some(range) = split_range(size, i, n) else {
            return Err(unsupported(
                path,
                format!("there is no split {i} of {n}: the index must be less than the count"),
            ));
        };
        Self::open_range(path, range, opts)
    }
}

impl<R: std::io::Read> RecordReader<R> {
    /// At or past a split's end: whether the frame at the reader's offset passes the boundary
    /// test, which ends the split (the next split starts there). Else the reader reads on: the
    /// bytes there belong to no later split.
    #[cold]
    pub(super) fn ends_split(&mut self) -> Result<bool> {
        let at = self.offset;
        let stream_end = self.remaining.map(|r| at.saturating_add(r));
        let mut look = Lookahead::new(at, Vec::new());
        let found = look.frame_at(self.src.buf(), &self.opts, at, stream_end);
        look.give_back(&mut self.src, at);
        match found {
            Ok(Some(_)) => {
                self.done = true;
                self.last = NO_RECORD;
                Ok(true)
            }
            Ok(None) => Ok(false),
            Err(e) => Err(self.io_fail(e, at)),
        }
    }
}
