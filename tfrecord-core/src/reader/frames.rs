//! The framing reader: TFRecord and OFRecord frames over plain, gzip or zlib streams, with
//! both checksums verified.

use std::fs::File;
use std::io::{self, BufRead, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::source::{Source, io_error, sniff};
use crate::compression::{Compression, Format};
use crate::crc::masked_crc32c;
use crate::error::{Error, ErrorKind, Result};

/// The default limit on one record's length: 1 GiB. Protobuf messages cannot exceed 2 GiB,
/// and a larger declared length in a real file is almost always corruption.
pub(crate) const DEFAULT_MAX_RECORD_LEN: u64 = 1 << 30;

/// The default read buffer: 1 MiB, so that reads from the OS are large and sequential.
pub(crate) const DEFAULT_BUFFER_SIZE: usize = 1 << 20;

/// Payloads up to this size are allocated at once; larger ones grow as their bytes arrive, so a
/// corrupt length never allocates more than the data actually present plus this much.
const EAGER_ALLOC: u64 = 4 << 20;

/// How to read a record stream.
#[derive(Clone, Debug)]
pub struct ReaderOptions {
    pub(super) format: Format,
    pub(super) compression: Compression,
    pub(super) verify_data_crc: bool,
    pub(super) max_record_len: u64,
    pub(super) buffer_size: usize,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            format: Format::TfRecord,
            compression: Compression::None,
            verify_data_crc: true,
            max_record_len: DEFAULT_MAX_RECORD_LEN,
            buffer_size: DEFAULT_BUFFER_SIZE,
        }
    }
}

impl ReaderOptions {
    /// TFRecord, uncompressed, both checksums verified, 1 GiB record limit, 1 MiB buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// The default options with the compression guessed from the file name
    /// (see [`Compression::from_path`]).
    pub fn for_path(path: impl AsRef<Path>) -> Self {
        Self::default().compression(Compression::from_path(path))
    }

    /// The container format.
    #[must_use]
    pub fn format(mut self, format: Format) -> Self {
        self.format = format;
        self
    }

    /// The stream compression.
    #[must_use]
    pub fn compression(mut self, compression: Compression) -> Self {
        self.compression = compression;
        self
    }

    /// Whether to verify each record's data checksum (default `true`). The length checksum is
    /// always verified: without it a corrupt length would silently lose the framing.
    #[must_use]
    pub fn verify_data_crc(mut self, verify: bool) -> Self {
        self.verify_data_crc = verify;
        self
    }

    /// The largest record length accepted; a larger declared length is an error and is never
    /// allocated.
    #[must_use]
    pub fn max_record_len(mut self, max: u64) -> Self {
        self.max_record_len = max;
        self
    }

    /// The size of the read buffer.
    #[must_use]
    pub fn buffer_size(mut self, size: usize) -> Self {
        self.buffer_size = size.max(64);
        self
    }

    /// The configured container format.
    pub fn get_format(&self) -> Format {
        self.format
    }

    /// The configured compression.
    pub fn get_compression(&self) -> Compression {
        self.compression
    }
}

/// Adds where in which stream an error happened.
pub(crate) fn locate(err: Error, path: Option<&Path>, offset: u64, record: u64) -> Error {
    let err = err.with_offset(offset).with_record(record);
    match path {
        Some(p) => err.with_path(p.to_path_buf()),
        None => err,
    }
}

/// Reads until `buf` is full or the stream ends; returns how many bytes were read.
#[inline]
fn read_full(src: &mut dyn BufRead, buf: &mut [u8]) -> io::Result<usize> {
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

/// A record read by [`RecordReader::read_unverified`] whose data checksum is still to be
/// checked: where it came from, and the checksum its frame stores.
#[derive(Clone, Debug)]
pub struct Unverified {
    stored_crc: Option<u32>,
    offset: u64,
    record: u64,
    path: Option<Arc<Path>>,
}

impl Unverified {
    /// Checks the record's payload against the masked CRC32C its frame stores (OFRecord frames
    /// store none: always `Ok`).
    ///
    /// # Errors
    /// A mismatch, naming the file, the frame's byte offset and the record index, as
    /// [`RecordReader::read_into`] reports it.
    #[inline]
    pub fn verify(&self, payload: &[u8]) -> Result<()> {
        let Some(stored) = self.stored_crc else {
            return Ok(());
        };
        let computed = masked_crc32c(payload);
        if stored == computed {
            return Ok(());
        }
        let err = Error::new(ErrorKind::Corrupted {
            what: "data",
            stored,
            computed,
        });
        Err(locate(err, self.path.as_deref(), self.offset, self.record))
    }

    /// The record's index in its file (0 for the first).
    pub fn record(&self) -> u64 {
        self.record
    }

    /// The byte offset of the record's frame in the (decompressed) stream.
    pub fn offset(&self) -> u64 {
        self.offset
    }
}

/// A reader of framed records.
///
/// Use it as an iterator of owned records (`Result<Vec<u8>>`), or call
/// [`read_into`](RecordReader::read_into) to reuse one buffer for every record. After an error
/// the reader is finished: the iterator yields nothing more.
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

    /// The name given with [`with_path`](Self::with_path) or [`open`](RecordReader::open).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The name given with [`with_path`](Self::with_path), shared.
    pub(crate) fn shared_path(&self) -> Option<Arc<Path>> {
        self.path.clone()
    }

    /// How many records have been read so far.
    pub fn records_read(&self) -> u64 {
        self.records
    }

    /// The byte offset of the next record in the (decompressed) stream.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    fn fail(&mut self, err: Error, frame_start: u64) -> Error {
        self.done = true;
        locate(err, self.path.as_deref(), frame_start, self.records)
    }

    fn io_fail(&mut self, e: io::Error, frame_start: u64) -> Error {
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
    /// record index.
    pub fn read_into(&mut self, buf: &mut Vec<u8>) -> Result<bool> {
        let Some(frame) = self.read_unverified(buf)? else {
            return Ok(false);
        };
        if self.opts.verify_data_crc
            && let Err(e) = frame.verify(buf)
        {
            // A record that fails its check is not counted as read, as in `read_lent`.
            let frame_len = self.offset - frame.offset;
            self.offset = frame.offset;
            self.records = frame.record;
            if let Some(r) = self.remaining.as_mut() {
                *r = r.saturating_add(frame_len);
            }
            self.done = true;
            return Err(e);
        }
        Ok(true)
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
    /// As [`read_into`](Self::read_into), except data checksum mismatches.
    pub fn read_unverified(&mut self, buf: &mut Vec<u8>) -> Result<Option<Unverified>> {
        self.release();
        buf.clear();
        if self.done {
            return Ok(None);
        }
        let start = self.offset;
        let header_len = match self.opts.format {
            Format::TfRecord => 12,
            Format::OfRecord => 8,
        };
        let mut header = [0u8; 12];
        let got = match read_full(self.src.buf(), &mut header[..header_len]) {
            Ok(n) => n,
            Err(e) => return Err(self.io_fail(e, start)),
        };
        if got == 0 {
            self.done = true;
            return match self.src.trailing_data() {
                Ok(false) => Ok(None),
                Ok(true) => Err(self.fail(Error::new(ErrorKind::TrailingData), start)),
                Err(e) => Err(self.io_fail(e, start)),
            };
        }
        if got < header_len {
            let err = Error::new(ErrorKind::Truncated {
                needed: header_len as u64,
                found: got as u64,
            });
            return Err(self.fail(err, start));
        }
        let mut len_bytes = [0u8; 8];
        len_bytes.copy_from_slice(&header[..8]);
        let len = match self.opts.format {
            Format::TfRecord => {
                let stored = u32::from_le_bytes([header[8], header[9], header[10], header[11]]);
                let computed = masked_crc32c(&len_bytes);
                if stored != computed {
                    let kind = if self.records == 0 {
                        ErrorKind::NotTfRecord {
                            hint: sniff(&header),
                        }
                    } else {
                        ErrorKind::Corrupted {
                            what: "length",
                            stored,
                            computed,
                        }
                    };
                    return Err(self.fail(Error::new(kind), start));
                }
                u64::from_le_bytes(len_bytes)
            }
            Format::OfRecord => {
                let declared = i64::from_le_bytes(len_bytes);
                match u64::try_from(declared) {
                    Ok(len) => len,
                    Err(_) => {
                        let err = Error::new(ErrorKind::NegativeLength { declared });
                        return Err(self.fail(err, start));
                    }
                }
            }
        };
        if len > self.opts.max_record_len {
            let err = Error::new(ErrorKind::LengthTooLarge {
                declared: len,
                limit: self.opts.max_record_len,
                bound: "limit",
            });
            return Err(self.fail(err, start));
        }
        let footer_len: u64 = if self.opts.format == Format::TfRecord {
            4
        } else {
            0
        };
        if let Some(remaining) = self.remaining {
            let left = remaining.saturating_sub(header_len as u64);
            if len.saturating_add(footer_len) > left {
                let err = Error::new(ErrorKind::Truncated {
                    needed: len.saturating_add(footer_len),
                    found: left,
                });
                return Err(self.fail(err, start));
            }
        }
        // Bounded above by max_record_len, which the caller chose to allow in memory.
        let Ok(len_usize) = usize::try_from(len) else {
            let err = Error::new(ErrorKind::LengthTooLarge {
                declared: len,
                limit: usize::MAX as u64,
                bound: "address space",
            });
            return Err(self.fail(err, start));
        };
        if let Err(e) = self.read_payload(buf, len_usize) {
            return Err(match e {
                Payload::Io(e) => self.io_fail(e, start),
                Payload::Short { needed, found } => {
                    self.fail(Error::new(ErrorKind::Truncated { needed, found }), start)
                }
            });
        }
        let mut stored_crc = None;
        if self.opts.format == Format::TfRecord {
            let mut footer = [0u8; 4];
            match read_full(self.src.buf(), &mut footer) {
                Ok(4) => {}
                Ok(n) => {
                    let err = Error::new(ErrorKind::Truncated {
                        needed: 4,
                        found: n as u64,
                    });
                    return Err(self.fail(err, start));
                }
                Err(e) => return Err(self.io_fail(e, start)),
            }
            stored_crc = Some(u32::from_le_bytes(footer));
        }
        let frame = header_len as u64 + len + footer_len;
        self.offset += frame;
        if let Some(r) = self.remaining.as_mut() {
            *r = r.saturating_sub(frame);
        }
        let frame = Unverified {
            stored_crc,
            offset: start,
            record: self.records,
            path: self.path.clone(),
        };
        self.records += 1;
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
        self.release();
        let len = match (self.done, self.opts.format) {
            (false, Format::TfRecord) => self.buffered_frame()?,
            _ => None,
        };
        let Some(len) = len else {
            return Ok(self.read_into(scratch)?.then_some(&scratch[..]));
        };
        self.lent = 12 + len + 4;
        // The frame checked by `buffered_frame` is still at the front of the read buffer:
        // `fill_buf` hands it out again without reading.
        let locate = |e: Error| {
            let start = self.offset - self.lent as u64;
            locate(e, self.path.as_deref(), start, self.records - 1)
        };
        let avail = self.src.buf().fill_buf().map_err(|e| locate(e.into()))?;
        let found = avail.len() as u64;
        avail.get(12..12 + len).map(Some).ok_or_else(|| {
            locate(Error::new(ErrorKind::Truncated {
                needed: 16 + len as u64,
                found,
            }))
        })
    }

    /// When the read buffer holds the whole next TFRecord frame and it is sound, checks its
    /// data CRC (as configured), counts it as read and returns its payload length; the frame is
    /// consumed by the next read. `None` leaves everything else, including every error but a
    /// data CRC mismatch, to [`read_into`](Self::read_into).
    fn buffered_frame(&mut self) -> Result<Option<usize>> {
        let start = self.offset;
        let verify = self.opts.verify_data_crc;
        let max = self.opts.max_record_len;
        // A source error is reported here: a decoder may not repeat it when asked again.
        let avail = match self.src.buf().fill_buf() {
            Ok(avail) => avail,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(None),
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
        self.records += 1;
        Ok(Some(len))
    }

    /// Consumes the frame [`read_lent`](Self::read_lent) lent out.
    #[inline]
    fn release(&mut self) {
        if self.lent > 0 {
            self.src.buf().consume(std::mem::take(&mut self.lent));
        }
    }

    fn read_payload(&mut self, buf: &mut Vec<u8>, len: usize) -> Result<(), Payload> {
        // Only up to EAGER_ALLOC is reserved ahead: past it, an untrusted length is backed by
        // bytes that exist, as the buffer grows with what the source delivers.
        let eager = usize::try_from(EAGER_ALLOC).unwrap_or(usize::MAX);
        buf.reserve(len.min(eager));
        let src = self.src.buf();
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
