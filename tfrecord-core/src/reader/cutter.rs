//! Cutting a record stream into chunks of whole frames, in order, on one thread.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::boundary::{Frame, frame_at};
use super::chunks::{Chunk, keep_spare};
use super::options::{ReaderOptions, only_failing};
use super::source::{Source, io_error};
use crate::compression::Compression;
use crate::error::{Error, ErrorKind, Result, locate};

/// Reads a record stream (any compression, either framing) in chunks of whole frames of about
/// `chunk_size` bytes, so that one thread only reads, inflates and finds frame boundaries
/// while others check and decode the chunks ([`Chunk::reader`]). The length of each frame is
/// checked against its CRC and against the options' `max_record_len` before it is trusted;
/// a chunk that holds a frame that fails either check, or a truncated last frame, is the last
/// one, and its reader reports the error where it is.
///
/// ```
/// use tfrecord_core::{ChunkReader, RecordWriter, ReaderOptions, WriterOptions};
///
/// let mut writer = RecordWriter::new(Vec::new(), WriterOptions::new());
/// for i in 0..1000u32 {
///     writer.write(&i.to_le_bytes())?;
/// }
/// let bytes = writer.finish()?;
///
/// let mut chunks = ChunkReader::new(&bytes[..], ReaderOptions::new(), 4096);
/// let mut total = 0;
/// while let Some(chunk) = chunks.next_chunk()? {
///     // Typically sent to a worker thread.
///     let mut records = chunk.reader();
///     let mut scratch = Vec::new();
///     while let Some(record) = records.read_lent(&mut scratch)? {
///         total += record.len();
///     }
/// }
/// assert_eq!(total, 4000);
/// # Ok::<(), tfrecord_core::Error>(())
/// ```
pub struct ChunkReader<R: Read> {
    src: Source<R>,
    opts: ReaderOptions,
    path: Option<Arc<Path>>,
    chunk_size: usize,
    /// An uncompressed file: see [`Chunk`]'s `bounded`.
    bounded: bool,
    /// The bytes read past the last chunk's end: the start of a frame.
    carry: Vec<u8>,
    /// Buffers of chunks given back, reused for the next chunks.
    spare: Vec<Vec<u8>>,
    /// A read error met after whole frames: reported once they have been handed over, at
    /// the frame where the stream broke.
    broken: Option<io::Error>,
    offset: u64,
    records: u64,
    done: bool,
}

impl ChunkReader<File> {
    /// Opens a file.
    ///
    /// # Errors
    /// When the file cannot be opened; the error names it.
    pub fn open(path: impl AsRef<Path>, opts: ReaderOptions, chunk_size: usize) -> Result<Self> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|e| Error::from(e).with_path(path))?;
        // As `RecordReader::open`: only a regular file's size is known.
        let regular = file.metadata().is_ok_and(|m| m.is_file());
        let bounded = opts.compression == Compression::None && regular;
        let mut chunks = ChunkReader::new(file, opts, chunk_size).with_path(path);
        chunks.bounded = bounded;
        Ok(chunks)
    }
}

impl<R: Read> ChunkReader<R> {
    /// Reads chunks of about `chunk_size` bytes (at least one frame each) from any source.
    pub fn new(inner: R, opts: ReaderOptions, chunk_size: usize) -> Self {
        let chunk_size = chunk_size.max(1);
        // Reads of a whole chunk bypass a read buffer smaller than the chunk: an uncompressed
        // stream is then copied once, from the source into the chunk.
        let buffer = match opts.compression {
            Compression::None => opts.buffer_size.min(chunk_size / 2).max(1),
            Compression::Gzip | Compression::Zlib => opts.buffer_size,
        };
        ChunkReader {
            src: Source::new(inner, opts.compression, buffer),
            opts,
            path: None,
            chunk_size,
            bounded: false,
            carry: Vec::new(),
            spare: Vec::new(),
            broken: None,
            offset: 0,
            records: 0,
            done: false,
        }
    }

    /// Names the source in error messages.
    #[must_use]
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = Some(Arc::from(path.into()));
        self
    }

    fn fail(&mut self, err: Error) -> Error {
        self.done = true;
        locate(err, self.path.as_deref(), self.offset, self.records)
    }

    fn io_fail(&mut self, e: io::Error) -> Error {
        let err = io_error(e, self.opts.compression);
        self.fail(err)
    }

    /// Appends up to `n` more bytes of the stream to `data`; `false` at its end, or when the
    /// stream broke (the error is kept in `broken`).
    fn fill(&mut self, data: &mut Vec<u8>, n: usize) -> bool {
        let before = data.len();
        let n = u64::try_from(n).unwrap_or(u64::MAX);
        match self.src.buf().take(n).read_to_end(data) {
            Ok(_) => data.len() > before,
            Err(e) => {
                self.broken = Some(e);
                false
            }
        }
    }

    /// Takes back a chunk that has been read, to reuse its buffer: a pipeline that returns
    /// chunks to the reading thread allocates nothing per chunk, and no thread frees memory
    /// another allocated.
    pub fn give_back(&mut self, chunk: Chunk) {
        keep_spare(&mut self.spare, chunk);
    }

    /// The next chunk; `Ok(None)` at the end of the stream.
    ///
    /// # Errors
    /// I/O and decompression errors (after the chunk of the whole frames before them), and
    /// bytes after the end of a zlib stream; framing errors are left to the chunk's reader.
    /// Options whose [`BadRecords`](crate::BadRecords) policy skips damage are refused.
    pub fn next_chunk(&mut self) -> Result<Option<Chunk>> {
        if let Err(e) = only_failing(&self.opts, "ChunkReader") {
            return Err(self.fail(e));
        }
        if let Some(e) = self.broken.take() {
            return Err(self.io_fail(e));
        }
        if self.done {
            return Ok(None);
        }
        let mut data = self.spare.pop().unwrap_or_default();
        data.clear();
        data.reserve(self.chunk_size.max(self.carry.len()));
        data.extend_from_slice(&self.carry);
        self.carry.clear();
        let mut at_end = false;
        if data.len() < self.chunk_size {
            let want = self.chunk_size - data.len();
            at_end = !self.fill(&mut data, want);
        }
        let (mut cut, mut frames) = (0usize, 0u64);
        // Where the whole frames walked over end (`cut` may end past a frame that fails a check).
        let mut checked = 0usize;
        loop {
            match frame_at(&self.opts, &data[cut..]) {
                Frame::Whole(len) => {
                    cut += len;
                    checked = cut;
                    frames += 1;
                }
                // The first frame is larger than what was read: read up to its end.
                Frame::Partial(need) if cut == 0 && !at_end => {
                    let missing = need.saturating_sub(data.len());
                    at_end = !self.fill(&mut data, missing);
                }
                Frame::Partial(_) => break,
                Frame::Bad => {
                    // Handed over as it is: the chunk's reader reports the frame, which comes
                    // before any read error met after it.
                    cut = data.len();
                    self.done = true;
                    self.broken = None;
                    break;
                }
            }
        }
        if at_end && cut < data.len() && self.broken.is_none() {
            // A truncated last frame, or garbage: its reader reports it.
            cut = data.len();
            self.done = true;
        }
        if let Some(tail) = data.get(cut..) {
            self.carry.extend_from_slice(tail);
        }
        data.truncate(cut);
        if data.is_empty() {
            if let Some(e) = self.broken.take() {
                return Err(self.io_fail(e));
            }
            self.done = true;
            return match self.src.trailing_data() {
                Ok(false) => Ok(None),
                Ok(true) => Err(self.fail(Error::new(ErrorKind::TrailingData))),
                Err(e) => Err(self.io_fail(e)),
            };
        }
        let chunk = Chunk {
            buf: data,
            start: 0,
            offset: self.offset,
            first_record: self.records,
            bounded: self.bounded,
            checked,
            path: self.path.clone(),
            opts: self.opts.clone(),
        };
        self.offset += cut as u64;
        self.records += frames;
        Ok(Some(chunk))
    }
}
