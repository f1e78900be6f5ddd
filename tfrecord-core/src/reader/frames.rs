//! The framing reader: TFRecord and OFRecord frames over plain, gzip or zlib streams, with
//! both checksums verified.

use std::fs::File;
use std::io::{self, BufRead, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::options::ReaderOptions;
use super::policy::{Broken, Damage};
use super::source::{Source, io_error, sniff};
use super::unverified::{NO_BASE, Unverified};
use crate::compression::{Compression, Format};
use crate::crc::masked_crc32c;
use crate::error::{Error, ErrorKind, Result, locate};

/// Payloads up to this size are allocated at once; larger ones grow as their bytes arrive, so a
/// corrupt length never allocates more than the data actually present plus this much.
const EAGER_ALLOC: u64 = 4 << 20;

/// Reads until `buf` is full or the stream ends; returns how many bytes were read.
#[inline(always)]
fn read_full(src: &mut impl BufRead, buf: &mut [u8]) -> io::Result<usize> {
    // The usual case: the read buffer already holds all of it.
    match src.fill_buf() {
        Ok(avail) => {
            if let Some(head) = avail.get(..buf.len()) {
                buf.copy_from_slice(head);
                src.consume(buf.len());
                return Ok(buf.len());
            }
        }
        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
        Err(e) => return Err(e),
    }
    read_full_slowly(src, buf)
}

/// [`read_full`] across the end of the read buffer.
#[cold]
#[inline(never)]
fn read_full_slowly(src: &mut impl BufRead, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match src.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// [`RecordReader`]'s `last` when no record was just read (one store per record, not two).
pub(super) const NO_RECORD: u64 = u64::MAX;

/// A reader of framed records.
///
/// Use it as an iterator of owned records (`Result<Vec<u8>>`), or call
/// [`read_into`](RecordReader::read_into) to reuse one buffer for every record. After an error
/// the reader is finished: the iterator yields nothing more. Damaged records are an error
/// unless the options' [`BadRecords`](crate::BadRecords) policy skips them; what it skips is
/// reported by [`drain_skipped`](Self::drain_skipped).
///
/// ```
/// use tfrecord_core::{RecordReader, RecordWriter, ReaderOptions, WriterOptions};
///
/// let mut writer = RecordWriter::new(Vec::new(), WriterOptions::new());
/// writer.write(b"hello")?;
/// writer.write(b"world")?;
/// let bytes = writer.finish()?;
///
/// let mut reader = RecordReader::new(&bytes[..], ReaderOptions::new());
/// let mut buf = Vec::new();
/// while reader.read_into(&mut buf)? {
///     println!("{} bytes", buf.len());
/// }
/// assert_eq!(reader.records_read(), 2);
/// # Ok::<(), tfrecord_core::Error>(())
/// ```
pub struct RecordReader<R: Read> {
    pub(super) src: Source<R>,
    pub(super) opts: ReaderOptions,
    pub(super) path: Option<Arc<Path>>,
    /// Bytes of the (decompressed) stream left after `offset`, when known.
    pub(super) remaining: Option<u64>,
    pub(super) offset: u64,
    pub(super) records: u64,
    pub(super) done: bool,
    /// Bytes at the front of the read buffer lent out by the last
    /// [`read_lent`](RecordReader::read_lent), consumed when the next read starts.
    pub(super) lent: usize,
    /// A split's end: the reader stops at the first frame at or after it that passes the
    /// boundary test; `u64::MAX` for a whole stream.
    pub(super) end: u64,
    /// The byte offset of the record counted as 0, when that is not the file's first (a split).
    pub(super) record_base: Option<u64>,
    /// Where the record the last read returned starts (it ends at `offset`), or `NO_RECORD`.
    pub(super) last: u64,
    /// What the bad-record policy skipped.
    pub(super) damage: Damage,
}

/// A record [`RecordReader::read_located`] lent, with where its frame was in the
/// (decompressed) stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Located<'a> {
    /// The record's bytes, valid until the next read.
    pub payload: &'a [u8],
    /// The byte offset of its frame.
    pub offset: u64,
    /// Its index among the records read (counting from the reader's first record).
    pub index: u64,
    /// The byte offset after its frame.
    pub end: u64,
}

/// Where the record [`RecordReader::advance_lent`] read is.
#[derive(Clone, Copy, Debug)]
enum Lent {
    /// At the front of the read buffer: this many payload bytes after the header.
    InPlace(usize),
    /// In the caller's scratch buffer.
    Scratch,
}

impl RecordReader<File> {
    /// Opens a file. For uncompressed files the file size bounds every declared length.
    ///
    /// # Errors
    /// When the file cannot be opened; the error names the file.
    pub fn open(path: impl AsRef<Path>, opts: ReaderOptions) -> Result<Self> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|e| Error::from(e).with_path(path))?;
        let len = file
            .metadata()
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len());
        let compressed = opts.compression != Compression::None;
        let mut reader = RecordReader::new(file, opts).with_path(path);
        if !compressed {
            reader.remaining = len;
        }
        Ok(reader)
    }

    /// Opens a file at byte `offset` of its (decompressed) stream, a record boundary saved
    /// earlier after `records` records ([`offset`](Self::offset) and
    /// [`records_read`](Self::records_read)): an uncompressed file is entered by seeking, a
    /// compressed one is decompressed from its start and the bytes before `offset` passed over
    /// unchecked ([`advance_to`](Self::advance_to)).
    ///
    /// # Errors
    /// As [`open`](RecordReader::open), and an `offset` past the end of the stream.
    pub fn open_at(
        path: impl AsRef<Path>,
        offset: u64,
        records: u64,
        opts: ReaderOptions,
    ) -> Result<Self> {
        let path = path.as_ref();
        if opts.compression != Compression::None || offset == 0 {
            let mut reader = RecordReader::open(path, opts)?;
            reader.advance_to(offset, records)?;
            return Ok(reader);
        }
        let located = |e: io::Error| Error::from(e).with_path(path);
        let mut file = File::open(path).map_err(located)?;
        let meta = file.metadata().map_err(located)?;
        if !meta.is_file() {
            // A pipe or device reads in order: read up to the offset.
            let mut reader = RecordReader::new(file, opts).with_path(path);
            reader.advance_to(offset, records)?;
            return Ok(reader);
        }
        let len = meta.len();
        if offset > len {
            let kind = ErrorKind::Truncated {
                needed: offset - len,
                found: 0,
            };
            return Err(locate(Error::new(kind), Some(path), len, records));
        }
        io::Seek::seek(&mut file, io::SeekFrom::Start(offset)).map_err(located)?;
        let mut reader = RecordReader::new(file, opts)
            .with_path(path)
            .starting_at(offset, records);
        reader.remaining = Some(len - offset);
        Ok(reader)
    }
}

/// The file, the position and the count of records read (not the buffered bytes).
impl<R: Read> std::fmt::Debug for RecordReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordReader")
            .field("path", &self.path)
            .field("offset", &self.offset)
            .field("records_read", &self.records)
            .field("format", &self.opts.format)
            .field("compression", &self.opts.compression)
            .finish_non_exhaustive()
    }
}

impl<R: Read> RecordReader<R> {
    /// Reads records from any byte source.
    pub fn new(inner: R, opts: ReaderOptions) -> Self {
        RecordReader {
            src: Source::new(inner, opts.compression, opts.buffer_size),
            opts,
            path: None,
            remaining: None,
            offset: 0,
            records: 0,
            done: false,
            lent: 0,
            end: u64::MAX,
            record_base: None,
            last: NO_RECORD,
            damage: Damage::default(),
        }
    }

    /// Names the source in error messages.
    #[must_use]
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = Some(Arc::from(path.into()));
        self
    }

    /// Counts the stream as starting at byte `offset` of a larger one, at record index
    /// `records`: errors and [`offset`](Self::offset) then give positions in the larger stream
    /// (see [`Chunk::reader`](crate::Chunk::reader)).
    #[must_use]
    pub fn starting_at(mut self, offset: u64, records: u64) -> Self {
        self.offset = offset;
        self.records = records;
        self
    }

    /// Stops where a byte-range reader whose range ends at `end` stops
    /// ([`open_range`](RecordReader::open_range)): at the first frame starting at or after
    /// `end` that passes the boundary test (a TFRecord test: OFRecord files are not split by
    /// byte range). With [`open_at`](RecordReader::open_at), this resumes a range's reader at a
    /// position it saved; its record indices then count on from the `records` given, and its
    /// errors do not say where the range's first record is ([`Error::record_base`]).
    #[must_use]
    pub fn ending_at(mut self, end: u64) -> Self {
        self.end = end;
        self
    }

    /// Moves forward to byte `offset` of the (decompressed) stream without reading the frames
    /// on the way, and counts `records` records read there: for returning to a position saved
    /// earlier ([`offset`](Self::offset) and [`records_read`](Self::records_read) after a
    /// record), which is a record boundary. The bytes passed over are not checked: no checksum
    /// and no [`BadRecords`](crate::BadRecords) policy sees them, so damage before the position
    /// is neither met again nor reported twice.
    ///
    /// # Errors
    /// An `offset` behind the reader's, a stream that ends before it (the error names the
    /// offset reached), and I/O errors.
    pub fn advance_to(&mut self, offset: u64, records: u64) -> Result<()> {
        self.release();
        if self.done && offset > self.offset {
            let kind = ErrorKind::Truncated {
                needed: offset - self.offset,
                found: 0,
            };
            return Err(self.locate(Error::new(kind), self.offset, self.records));
        }
        if offset < self.offset {
            return Err(self.locate(
                Error::new(ErrorKind::Unsupported {
                    detail: format!(
                        "cannot move back to byte {offset} from byte {}: a reader only moves \
                         forward",
                        self.offset
                    ),
                }),
                self.offset,
                self.records,
            ));
        }
        while self.offset < offset {
            let at = self.offset;
            let avail = match self.src.fill_buf() {
                Ok(avail) => avail.len(),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.io_fail(e, at)),
            };
            if avail == 0 {
                // As after any error, the reader is finished.
                self.done = true;
                let kind = ErrorKind::Truncated {
                    needed: offset - at,
                    found: 0,
                };
                return Err(self.locate(Error::new(kind), at, self.records));
            }
            let n = usize::try_from(offset - at).map_or(avail, |left| left.min(avail));
            self.src.consume(n);
            self.offset += n as u64;
            if let Some(r) = self.remaining.as_mut() {
                *r = r.saturating_sub(n as u64);
            }
        }
        self.records = records;
        self.last = NO_RECORD;
        Ok(())
    }

    /// The options the reader reads with.
    pub fn options(&self) -> &ReaderOptions {
        &self.opts
    }

    /// The name given with [`with_path`](Self::with_path) or [`open`](RecordReader::open).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The name given with [`with_path`](Self::with_path), shared.
    pub(crate) fn shared_path(&self) -> Option<Arc<Path>> {
        self.path.clone()
    }

    /// How many records have been read so far, counting records skipped whole by the
    /// [`BadRecords`](crate::BadRecords) policy (byte ranges skipped count none, whatever they
    /// held). A reader of a byte range ([`open_range`](RecordReader::open_range)) counts from
    /// its first record.
    pub fn records_read(&self) -> u64 {
        self.records
    }

    /// The byte offset of the next record in the (decompressed) stream.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The byte offset of the record the last read returned (`None` before the first, at the
    /// end, and after [`skip_last`](Self::skip_last)); its index is
    /// [`records_read`](Self::records_read) minus one.
    pub fn last_offset(&self) -> Option<u64> {
        (self.last != NO_RECORD).then_some(self.last)
    }

    /// Where the record index counts from when not from the file's start: see
    /// [`Error::record_base`].
    pub fn record_base(&self) -> Option<u64> {
        self.record_base
    }

    /// Adds the reader's file and record base to an error at `offset`, record `record`.
    pub(crate) fn locate(&self, err: Error, offset: u64, record: u64) -> Error {
        let err = locate(err, self.path.as_deref(), offset, record);
        match self.record_base {
            Some(base) => err.with_record_base(base),
            None => err,
        }
    }

    pub(super) fn fail(&mut self, err: Error, frame_start: u64) -> Error {
        self.done = true;
        self.last = NO_RECORD;
        self.locate(err, frame_start, self.records)
    }

    pub(super) fn io_fail(&mut self, e: io::Error, frame_start: u64) -> Error {
        let err = io_error(e, self.opts.compression);
        self.fail(err, frame_start)
    }

    /// Reads the next record into `buf` (cleared first), reusing its allocation.
    ///
    /// Returns `Ok(false)` at a clean end of stream, which is only at a record boundary.
    ///
    /// # Errors
    /// Truncated frames, checksum mismatches, lengths over the limit, a first frame that is not
    /// TFRecord at all, and I/O errors; each names the file, the frame's byte offset and the
    /// record index. Under a [`BadRecords`](crate::BadRecords) policy that skips, damage within
    /// the budget is skipped and reported instead, and damage past it is an error.
    pub fn read_into(&mut self, buf: &mut Vec<u8>) -> Result<bool> {
        // The usual case: the whole frame is in the read buffer, and sound.
        if let Some(len) = self.lend_buffered()? {
            buf.clear();
            let payload = self.src.fill_buf().map(|b| b.get(12..12 + len));
            if let Ok(Some(payload)) = payload {
                buf.extend_from_slice(payload);
                self.src.consume(16 + len);
                return Ok(true);
            }
            // Unreachable: the frame checked is still at the front of the read buffer. Were it
            // not, it is read again, frame by frame.
            let frame = 16 + len as u64;
            self.offset -= frame;
            self.records -= 1;
            self.remaining = self.remaining.map(|r| r + frame);
            self.last = NO_RECORD;
        }
        self.read_into_slowly(buf)
    }

    /// [`read_into`](Self::read_into) frame by frame through the read buffer: records larger
    /// than what it holds, OFRecord, splits' ends, and damage.
    #[inline(never)]
    fn read_into_slowly(&mut self, buf: &mut Vec<u8>) -> Result<bool> {
        loop {
            let Some(frame) = self.read_unverified(buf)? else {
                return Ok(false);
            };
            if !self.opts.verify_data_crc {
                return Ok(true);
            }
            match frame.verify(buf) {
                Ok(()) => return Ok(true),
                Err(e) => self.bad_data(&frame, buf, e)?,
            }
        }
    }

    /// Reads the next record into `buf` (cleared first) like [`read_into`](Self::read_into),
    /// checking the framing and the length's checksum but leaving the data checksum to the
    /// caller: [`Unverified::verify`] checks it, on any thread. A pipeline that reads on one
    /// thread and decodes on others moves the CRC32C of every payload off the reading thread
    /// this way. `Ok(None)` at a clean end of stream.
    ///
    /// ```
    /// use tfrecord_core::{RecordReader, RecordWriter, ReaderOptions, WriterOptions};
    ///
    /// let mut writer = RecordWriter::new(Vec::new(), WriterOptions::new());
    /// writer.write(b"hello")?;
    /// let mut bytes = writer.finish()?;
    ///
    /// let mut reader = RecordReader::new(&bytes[..], ReaderOptions::new());
    /// let mut buf = Vec::new();
    /// let frame = reader.read_unverified(&mut buf)?.expect("one record");
    /// frame.verify(&buf)?; // on any thread
    /// assert!(frame.verify(b"hellO").is_err());
    /// # Ok::<(), tfrecord_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`read_into`](Self::read_into), except data checksum mismatches, which are the
    /// caller's to handle (a policy that skips can be applied with
    /// [`skip_last`](Self::skip_last) before the next read).
    pub fn read_unverified(&mut self, buf: &mut Vec<u8>) -> Result<Option<Unverified>> {
        self.release();
        loop {
            buf.clear();
            if self.done {
                return Ok(None);
            }
            if self.offset >= self.end && self.ends_split()? {
                return Ok(None);
            }
            match self.next_frame(buf) {
                Ok(frame) => return Ok(frame),
                Err(broken) => self.recover(*broken)?,
            }
        }
    }

    /// Reads the frame at `offset`: `Err` with what the reader took from the stream when the
    /// frame or the stream is broken, for the policy to deal with.
    #[inline(always)]
    fn next_frame(&mut self, buf: &mut Vec<u8>) -> Result<Option<Unverified>, Box<Broken>> {
        let start = self.offset;
        let compression = self.opts.compression;
        let stream = |e: io::Error| Broken::stream(io_error(e, compression), start);
        let header_len = match self.opts.format {
            Format::TfRecord => 12,
            Format::OfRecord => 8,
        };
        let mut header = [0u8; 12];
        let got = read_full(&mut self.src, &mut header[..header_len]).map_err(stream)?;
        if got == 0 {
            self.done = true;
            self.last = NO_RECORD;
            return match self.src.trailing_data() {
                Ok(false) => Ok(None),
                Ok(true) => Err(Broken::stream(Error::new(ErrorKind::TrailingData), start)),
                Err(e) => Err(stream(e)),
            };
        }
        let broken =
            |kind: ErrorKind, taken: &[&[u8]]| Broken::frame(Error::new(kind), start, taken);
        if got < header_len {
            let kind = ErrorKind::Truncated {
                needed: header_len as u64,
                found: got as u64,
            };
            return Err(broken(kind, &[&header[..got]]));
        }
        let header = &header[..header_len];
        let mut len_bytes = [0u8; 8];
        len_bytes.copy_from_slice(&header[..8]);
        let len = match self.opts.format {
            Format::TfRecord => {
                let stored = u32::from_le_bytes([header[8], header[9], header[10], header[11]]);
                let computed = masked_crc32c(&len_bytes);
                if stored != computed {
                    let kind = if self.records == 0 && self.record_base.is_none() {
                        ErrorKind::NotTfRecord {
                            hint: sniff(header),
                        }
                    } else {
                        ErrorKind::Corrupted {
                            what: "length",
                            stored,
                            computed,
                        }
                    };
                    return Err(broken(kind, &[header]));
                }
                u64::from_le_bytes(len_bytes)
            }
            Format::OfRecord => {
                let declared = i64::from_le_bytes(len_bytes);
                match u64::try_from(declared) {
                    Ok(len) => len,
                    Err(_) => {
                        return Err(broken(ErrorKind::NegativeLength { declared }, &[header]));
                    }
                }
            }
        };
        if len > self.opts.max_record_len {
            let kind = ErrorKind::LengthTooLarge {
                declared: len,
                limit: self.opts.max_record_len,
                bound: "limit",
            };
            return Err(broken(kind, &[header]));
        }
        let footer_len: u64 = if self.opts.format == Format::TfRecord {
            4
        } else {
            0
        };
        if let Some(remaining) = self.remaining {
            let left = remaining.saturating_sub(header_len as u64);
            if len.saturating_add(footer_len) > left {
                let kind = ErrorKind::Truncated {
                    needed: len.saturating_add(footer_len),
                    found: left,
                };
                return Err(broken(kind, &[header]));
            }
        }
        // Bounded above by max_record_len, which the caller chose to allow in memory.
        let Ok(len_usize) = usize::try_from(len) else {
            let kind = ErrorKind::LengthTooLarge {
                declared: len,
                limit: usize::MAX as u64,
                bound: "address space",
            };
            return Err(broken(kind, &[header]));
        };
        // A cut frame is measured from its header on, the same whether the stream's length is
        // known (above) or not: the payload and the footer expected, the bytes found of them.
        if let Err(e) = self.read_payload(buf, len_usize) {
            return Err(match e {
                Payload::Io(e) => stream(e),
                Payload::Short { needed, found } => broken(
                    ErrorKind::Truncated {
                        needed: needed.saturating_add(footer_len),
                        found,
                    },
                    &[header, buf],
                ),
            });
        }
        let mut stored_crc = None;
        if self.opts.format == Format::TfRecord {
            let mut footer = [0u8; 4];
            let n = read_full(&mut self.src, &mut footer).map_err(stream)?;
            if n < 4 {
                let kind = ErrorKind::Truncated {
                    needed: len.saturating_add(footer_len),
                    found: len.saturating_add(n as u64),
                };
                return Err(broken(kind, &[header, buf, &footer[..n]]));
            }
            stored_crc = Some(u32::from_le_bytes(footer));
        }
        let frame = header_len as u64 + len + footer_len;
        self.offset += frame;
        if let Some(r) = self.remaining.as_mut() {
            *r = r.saturating_sub(frame);
        }
        self.last = start;
        let frame = Unverified {
            stored_crc,
            offset: start,
            record: self.records,
            record_base: self.record_base.unwrap_or(NO_BASE),
            path: self.path.clone(),
        };
        self.records = self.records.saturating_add(1);
        Ok(Some(frame))
    }

    /// Reads the next record and lends it straight out of the read buffer when the whole
    /// frame is buffered (the usual case for records smaller than the buffer), or copies it
    /// into `scratch` otherwise. Checks as [`read_into`](Self::read_into) does; `Ok(None)` at a
    /// clean end of stream. The record stays valid until the next read.
    ///
    /// ```
    /// use tfrecord_core::{RecordReader, RecordWriter, ReaderOptions, WriterOptions};
    ///
    /// let mut writer = RecordWriter::new(Vec::new(), WriterOptions::new());
    /// writer.write(b"hello")?;
    /// writer.write(b"world")?;
    /// let bytes = writer.finish()?;
    ///
    /// let mut reader = RecordReader::new(&bytes[..], ReaderOptions::new());
    /// let mut scratch = Vec::new();
    /// let mut total = 0;
    /// while let Some(record) = reader.read_lent(&mut scratch)? {
    ///     total += record.len();
    /// }
    /// assert_eq!(total, 10);
    /// # Ok::<(), tfrecord_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`read_into`](Self::read_into).
    pub fn read_lent<'a>(&'a mut self, scratch: &'a mut Vec<u8>) -> Result<Option<&'a [u8]>> {
        Ok(self.read_located(scratch)?.map(|record| record.payload))
    }

    /// As [`read_lent`](Self::read_lent), with where the record was: its frame's byte offset,
    /// its index, and the offset after it (what [`last_offset`](Self::last_offset),
    /// [`records_read`](Self::records_read) and [`offset`](Self::offset) say after the read,
    /// which cannot be asked while the record is lent). Records and byte ranges the bad-record
    /// policy skipped before it are already counted.
    ///
    /// ```
    /// use tfrecord_core::{RecordReader, RecordWriter, ReaderOptions, WriterOptions};
    ///
    /// let mut writer = RecordWriter::new(Vec::new(), WriterOptions::new());
    /// writer.write(b"hello")?;
    /// writer.write(b"world")?;
    /// let bytes = writer.finish()?;
    ///
    /// let mut reader = RecordReader::new(&bytes[..], ReaderOptions::new());
    /// let mut scratch = Vec::new();
    /// reader.read_located(&mut scratch)?;
    /// let second = reader.read_located(&mut scratch)?.expect("two records");
    /// assert_eq!((second.payload, second.index), (&b"world"[..], 1));
    /// assert_eq!((second.offset, second.end), (21, 42)); // frames of 12 + 5 + 4 bytes
    /// # Ok::<(), tfrecord_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`read_into`](Self::read_into).
    #[inline]
    pub fn read_located<'a>(&'a mut self, scratch: &'a mut Vec<u8>) -> Result<Option<Located<'a>>> {
        let Some(how) = self.advance_lent(scratch)? else {
            return Ok(None);
        };
        let (offset, index, end) = (self.last, self.records.saturating_sub(1), self.offset);
        let payload = self.lent_record(how, scratch)?;
        Ok(Some(Located {
            payload,
            offset,
            index,
            end,
        }))
    }

    /// The reading half of [`read_located`](Self::read_located): reads the next record, and
    /// says where it is for [`lent_record`](Self::lent_record) to lend it. Apart, the two let
    /// it look at the reader (where the record was) between them.
    #[inline]
    fn advance_lent(&mut self, scratch: &mut Vec<u8>) -> Result<Option<Lent>> {
        if let Some(len) = self.lend_buffered()? {
            self.lent = 12 + len + 4;
            return Ok(Some(Lent::InPlace(len)));
        }
        Ok(self.read_into(scratch)?.then_some(Lent::Scratch))
    }

    /// Releases the frame lent last, then checks the next one where it lies in the read buffer
    /// ([`buffered_frame`](Self::buffered_frame)).
    #[inline(always)]
    fn lend_buffered(&mut self) -> Result<Option<usize>> {
        self.release();
        if !self.done && self.offset < self.end && self.opts.format == Format::TfRecord {
            return self.buffered_frame();
        }
        Ok(None)
    }

    /// The record [`advance_lent`](Self::advance_lent) read.
    #[inline]
    fn lent_record<'a>(&'a mut self, how: Lent, scratch: &'a [u8]) -> Result<&'a [u8]> {
        let Lent::InPlace(len) = how else {
            return Ok(scratch);
        };
        // The frame checked by `buffered_frame` is still at the front of the read buffer:
        // `fill_buf` hands it out again without reading.
        let start = self.offset - self.lent as u64;
        let record = self.records - 1;
        let (path, base) = (self.path.as_deref(), self.record_base);
        let locate = |e: Error| {
            let e = locate(e, path, start, record);
            match base {
                Some(b) => e.with_record_base(b),
                None => e,
            }
        };
        let avail = self.src.fill_buf().map_err(|e| locate(e.into()))?;
        let found = avail.len() as u64;
        avail.get(12..12 + len).ok_or_else(|| {
            locate(Error::new(ErrorKind::Truncated {
                needed: 16 + len as u64,
                found,
            }))
        })
    }

    /// When the read buffer holds the whole next TFRecord frame and it is sound, checks its
    /// data CRC (as configured), counts it as read and returns its payload length; the frame is
    /// consumed by the next read. `None` leaves everything else, including every error but a
    /// data CRC mismatch, to [`read_into`](Self::read_into) (and the mismatch too when the
    /// policy skips damage).
    #[inline(always)]
    fn buffered_frame(&mut self) -> Result<Option<usize>> {
        let start = self.offset;
        let verify = self.opts.verify_data_crc;
        let max = self.opts.max_record_len;
        // A source error is reported here: a decoder may not repeat it when asked again (the
        // inflater does: a policy that resynchronizes meets it again in `read_into`).
        let avail = match self.src.fill_buf() {
            Ok(avail) => avail,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(None),
            Err(_)
                if self.opts.bad_records.resyncs()
                    && self.opts.compression != Compression::None =>
            {
                return Ok(None);
            }
            Err(e) => return Err(self.io_fail(e, start)),
        };
        let Some((header, rest)) = avail.split_first_chunk::<12>() else {
            return Ok(None);
        };
        let (len_bytes, len_crc) = header.split_at(8);
        if u32::from_le_bytes([len_crc[0], len_crc[1], len_crc[2], len_crc[3]])
            != masked_crc32c(len_bytes)
        {
            return Ok(None);
        }
        let declared = u64::from_le_bytes(*header.first_chunk::<8>().unwrap_or(&[0; 8]));
        let Ok(len) = usize::try_from(declared) else {
            return Ok(None);
        };
        if declared > max || rest.len() < len.saturating_add(4) {
            return Ok(None);
        }
        let (payload, rest) = rest.split_at(len);
        let stored = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
        let computed = if verify {
            masked_crc32c(payload)
        } else {
            stored
        };
        if stored != computed {
            if self.opts.bad_records.skips() {
                return Ok(None);
            }
            let kind = ErrorKind::Corrupted {
                what: "data",
                stored,
                computed,
            };
            return Err(self.fail(Error::new(kind), start));
        }
        let frame = 12 + declared + 4;
        self.offset += frame;
        if let Some(r) = self.remaining.as_mut() {
            *r = r.saturating_sub(frame);
        }
        self.last = start;
        self.records = self.records.saturating_add(1);
        Ok(Some(len))
    }

    /// Consumes the frame [`read_lent`](Self::read_lent) lent out.
    #[inline]
    fn release(&mut self) {
        if self.lent > 0 {
            self.src.consume(std::mem::take(&mut self.lent));
        }
        if let Source::Replay(_) = self.src {
            self.src.settle();
        }
    }

    fn read_payload(&mut self, buf: &mut Vec<u8>, len: usize) -> Result<(), Payload> {
        // Only up to EAGER_ALLOC is reserved ahead: past it, an untrusted length is backed by
        // bytes that exist, as the buffer grows with what the source delivers.
        let eager = usize::try_from(EAGER_ALLOC).unwrap_or(usize::MAX);
        buf.reserve(len.min(eager));
        let src = &mut self.src;
        // Copied straight out of the read buffer: no zero-filling, no intermediate `read`.
        while buf.len() < len {
            let avail = match src.fill_buf() {
                Ok(a) => a,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Payload::Io(e)),
            };
            if avail.is_empty() {
                return Err(Payload::Short {
                    needed: len as u64,
                    found: buf.len() as u64,
                });
            }
            let take = avail.len().min(len - buf.len());
            buf.extend_from_slice(&avail[..take]);
            src.consume(take);
        }
        Ok(())
    }
}

/// Why a payload could not be read.
enum Payload {
    Io(io::Error),
    Short { needed: u64, found: u64 },
}

impl<R: Read> Iterator for RecordReader<R> {
    type Item = Result<Vec<u8>>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut buf = Vec::new();
        match self.read_into(&mut buf) {
            Ok(true) => Some(Ok(buf)),
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

impl<R: Read> std::iter::FusedIterator for RecordReader<R> {}
