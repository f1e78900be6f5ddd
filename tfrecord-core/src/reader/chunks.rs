//! A record stream cut into chunks of whole frames, to check and decode on several threads.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use super::frames::{ReaderOptions, RecordReader, Source, io_error, locate};
use crate::codec::{Container, Decode};
use crate::compression::{Compression, Format};
use crate::crc::masked_crc32c;
use crate::error::{Error, ErrorKind, Result};

/// The buffer a [`Chunk::reader`] copies through: small enough to come from the heap each
/// time, large enough that typical records are lent out of it whole.
const CHUNK_READER_BUFFER: usize = 64 << 10;

/// Whole frames cut from a record stream by a [`ChunkReader`], and where they start in it.
///
/// [`reader`](Chunk::reader) reads them on any thread with every check a
/// [`RecordReader`] makes (framing, both CRCs); its errors give the file, byte offset and
/// record index in the whole stream.
#[derive(Clone, Debug)]
pub struct Chunk {
    /// The buffer; the frames are `buf[start..]`.
    buf: Vec<u8>,
    start: usize,
    offset: u64,
    first_record: u64,
    /// Whether the chunk is cut from an uncompressed file, whose size bounds every length (as
    /// `RecordReader::open` knows it), so that its reader words truncation the same way.
    bounded: bool,
    /// How many bytes of the frames, from the first, the cutter walked over frame by frame:
    /// each of those frames' lengths passed its CRC and `max_record_len` there, with these
    /// options, so that [`ChunkRecords`] checks only their payloads' CRCs.
    checked: usize,
    path: Option<Arc<Path>>,
    opts: ReaderOptions,
}

impl Chunk {
    /// The frames, as stored (after decompression).
    pub fn bytes(&self) -> &[u8] {
        self.buf.get(self.start..).unwrap_or_default()
    }

    /// The byte offset of the first frame in the (decompressed) stream.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The index of the first record in the stream.
    pub fn first_record(&self) -> u64 {
        self.first_record
    }

    /// A reader of the chunk's records.
    pub fn reader(&self) -> RecordReader<&[u8]> {
        self.reader_from(0, 0)
    }

    /// The chunk's records, lent in place: the same records and errors as
    /// [`reader`](Self::reader) gives, without copying the frames through a read buffer.
    ///
    /// ```
    /// use tfrecord_core::{ChunkReader, RecordWriter, ReaderOptions, WriterOptions};
    ///
    /// let mut writer = RecordWriter::new(Vec::new(), WriterOptions::new());
    /// writer.write(b"one")?;
    /// writer.write(b"two")?;
    /// let file = writer.finish()?;
    /// let mut chunks = ChunkReader::new(&file[..], ReaderOptions::new(), 1 << 20);
    /// let chunk = chunks.next_chunk()?.expect("a chunk");
    /// let mut records = chunk.records();
    /// assert_eq!(records.next_record()?, Some(&b"one"[..]));
    /// assert_eq!(records.next_record()?, Some(&b"two"[..]));
    /// assert_eq!(records.next_record()?, None);
    /// # Ok::<(), tfrecord_core::Error>(())
    /// ```
    pub fn records(&self) -> ChunkRecords<'_> {
        ChunkRecords {
            chunk: self,
            pos: 0,
            index: 0,
            rest: None,
            scratch: Vec::new(),
        }
    }

    /// A reader of the chunk's frames from byte `pos`, the `index`-th record of the chunk.
    fn reader_from(&self, pos: usize, index: u64) -> RecordReader<&[u8]> {
        let opts = self
            .opts
            .clone()
            .compression(Compression::None)
            .buffer_size(CHUNK_READER_BUFFER);
        let bytes = self.bytes().get(pos..).unwrap_or_default();
        let mut r = RecordReader::new(bytes, opts)
            .starting_at(self.offset + pos as u64, self.first_record + index);
        if self.bounded {
            // A chunk ends at a frame boundary or, for the last one, where the file ends.
            r.remaining = Some(bytes.len() as u64);
        }
        match &self.path {
            Some(p) => r.with_path(p.to_path_buf()),
            None => r,
        }
    }
}

/// The records of a [`Chunk`], lent out of it in place ([`Chunk::records`]).
pub struct ChunkRecords<'a> {
    chunk: &'a Chunk,
    /// Where the next frame starts in the chunk.
    pos: usize,
    /// Records lent so far.
    index: u64,
    /// From the first frame that is not a sound TFRecord frame on: a reader, which reads what
    /// follows (an OFRecord, a frame that fails a check) and words every error.
    rest: Option<RecordReader<&'a [u8]>>,
    scratch: Vec<u8>,
}

impl ChunkRecords<'_> {
    /// The next record; `Ok(None)` after the last.
    ///
    /// # Errors
    /// As [`RecordReader::read_lent`], located in the whole stream.
    pub fn next_record(&mut self) -> Result<Option<&[u8]>> {
        if self.rest.is_none() {
            if let Some(len) = self.sound_frame() {
                let start = self.pos + 12;
                self.pos = start + len + 4;
                self.index += 1;
                return Ok(self.chunk.bytes().get(start..start + len));
            }
            if self.pos == self.chunk.bytes().len() {
                // The end of the chunk's frames: an uncompressed stream has nothing after them.
                return Ok(None);
            }
            self.rest = Some(self.chunk.reader_from(self.pos, self.index));
        }
        match self.rest.as_mut() {
            Some(r) => r.read_lent(&mut self.scratch),
            None => Ok(None),
        }
    }

    /// The next record decoded as `B` from container `C` ([`TfExample`](crate::TfExample),
    /// [`OfRecord`](crate::OfRecord), ...); `Ok(None)` after the last. Where `B` borrows, it
    /// borrows the record lent by [`next_record`](Self::next_record), until the next call.
    ///
    /// ```
    /// use tfrecord_core::{ChunkReader, Example, ReaderOptions, TfExample, Writer, WriterOptions};
    ///
    /// #[derive(Example)]
    /// struct Doc<'a> {
    ///     text: &'a str,
    /// }
    ///
    /// let mut w = Writer::<Doc, TfExample, Vec<u8>>::new(Vec::new(), WriterOptions::new());
    /// w.write(&Doc { text: "in place" })?;
    /// let bytes = w.finish()?;
    ///
    /// let mut chunks = ChunkReader::new(&bytes[..], ReaderOptions::new(), 1 << 20);
    /// let chunk = chunks.next_chunk()?.expect("a chunk");
    /// let mut records = chunk.records();
    /// while let Some(doc) = records.next_decoded::<Doc, TfExample>()? {
    ///     assert_eq!(doc.text, "in place");
    /// }
    /// # Ok::<(), tfrecord_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`next_record`](Self::next_record), and decoding errors, which name the file, byte
    /// offset, record index and feature key as [`Reader`](crate::Reader) does.
    pub fn next_decoded<'b, B: Decode<'b, C>, C: Container>(&'b mut self) -> Result<Option<B>> {
        let (offset, index) = (self.offset(), self.records_read());
        let chunk = self.chunk;
        let Some(bytes) = self.next_record()? else {
            return Ok(None);
        };
        B::decode(bytes)
            .map(Some)
            .map_err(|e| locate(e, chunk.path.as_deref(), offset, index))
    }

    /// The byte offset of the next record in the (decompressed) stream, as
    /// [`RecordReader::offset`] gives it: read before [`next_record`](Self::next_record), where
    /// the record it lends starts.
    pub fn offset(&self) -> u64 {
        match &self.rest {
            Some(r) => r.offset(),
            None => self.chunk.offset + self.pos as u64,
        }
    }

    /// The index in the stream of the next record: the chunk's
    /// [`first_record`](Chunk::first_record) plus the records lent so far.
    pub fn records_read(&self) -> u64 {
        match &self.rest {
            Some(r) => r.records_read(),
            None => self.chunk.first_record + self.index,
        }
    }

    /// The payload length of the TFRecord frame at `pos` when it passes every check a
    /// [`RecordReader`] makes; `None` for anything else, left to the reader.
    #[inline]
    fn sound_frame(&self) -> Option<usize> {
        let opts = &self.chunk.opts;
        if opts.format != Format::TfRecord {
            return None;
        }
        let (header, rest) = self
            .chunk
            .bytes()
            .get(self.pos..)?
            .split_first_chunk::<12>()?;
        let (len_bytes, len_crc) = header.split_first_chunk::<8>()?;
        let declared = u64::from_le_bytes(*len_bytes);
        // A frame the cutter walked had its length checked there, with the same options.
        if self.pos >= self.chunk.checked
            && (u32::from_le_bytes(*len_crc.first_chunk::<4>()?) != masked_crc32c(len_bytes)
                || declared > opts.max_record_len)
        {
            return None;
        }
        let len = usize::try_from(declared).ok()?;
        let payload = rest.get(..len)?;
        let stored = u32::from_le_bytes(*rest.get(len..)?.first_chunk::<4>()?);
        if opts.verify_data_crc && stored != masked_crc32c(payload) {
            return None;
        }
        Some(len)
    }
}

impl std::fmt::Debug for ChunkRecords<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Once a reader reads the rest, it keeps the position.
        f.debug_struct("ChunkRecords")
            .field("in_place_to_offset", &(self.chunk.offset + self.pos as u64))
            .field("in_place_records", &self.index)
            .field("reading_the_rest", &self.rest.is_some())
            .finish_non_exhaustive()
    }
}

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
    pub fn next_chunk(&mut self) -> Result<Option<Chunk>> {
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

/// Keeps a given-back chunk's buffer for a later chunk, up to a few.
fn keep_spare(spare: &mut Vec<Vec<u8>>, chunk: Chunk) {
    const MAX_SPARE: usize = 8;
    if spare.len() < MAX_SPARE {
        spare.push(chunk.buf);
    }
}

/// The framing of `opts`' format: header and footer bytes around each payload.
fn framing(opts: &ReaderOptions) -> (usize, usize) {
    match opts.format {
        Format::TfRecord => (12, 4),
        Format::OfRecord => (8, 0),
    }
}

/// What starts at the front of `data`: a frame's length is trusted only once it passes its
/// CRC (TFRecord) and the options' `max_record_len`.
fn frame_at(opts: &ReaderOptions, data: &[u8]) -> Frame {
    let (header, footer) = framing(opts);
    let Some(head) = data.get(..header) else {
        return Frame::Partial(header);
    };
    let mut len_bytes = [0u8; 8];
    len_bytes.copy_from_slice(&head[..8]);
    if opts.format == Format::TfRecord {
        let stored = u32::from_le_bytes([head[8], head[9], head[10], head[11]]);
        if stored != masked_crc32c(&len_bytes) {
            return Frame::Bad;
        }
    }
    let len = u64::from_le_bytes(len_bytes);
    // An OFRecord length is signed: a negative one is above every limit here.
    if len > opts.max_record_len {
        return Frame::Bad;
    }
    match usize::try_from(len)
        .ok()
        .and_then(|l| l.checked_add(header + footer))
    {
        Some(total) if total <= data.len() => Frame::Whole(total),
        Some(total) => Frame::Partial(total),
        None => Frame::Bad,
    }
}

/// The frame at the front of some bytes.
enum Frame {
    /// A whole frame of this many bytes, its length checked.
    Whole(usize),
    /// A frame that needs this many bytes, more than there are.
    Partial(usize),
    /// A length that fails its CRC or the limit.
    Bad,
}

/// An uncompressed record file cut into chunks of whole frames by several threads at once:
/// the chunks [`ChunkReader::open`] gives, with their offsets and record indices, but each
/// thread copies its own chunk out of the file ([`next_chunk`](Self::next_chunk) takes
/// `&self`), so that reading the file is spread over the threads as well as checking and
/// decoding it.
///
/// The file is divided into cells of `chunk_size` bytes, taken by the calling threads in turn;
/// a chunk holds the frames that start in its cell. A thread reads its cell while others read
/// theirs; then it waits only for the thread of the cell before it to say where the first
/// frame of its cell starts (a walk over the frames' headers), walks its own, and passes on.
///
/// ```
/// use std::sync::Mutex;
/// use tfrecord_core::{RecordWriter, ReaderOptions, SharedChunks, WriterOptions};
///
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("data.tfrecord");
/// let mut writer = RecordWriter::create(&path, WriterOptions::new())?;
/// for i in 0..1000u32 {
///     writer.write(&i.to_le_bytes())?;
/// }
/// writer.finish()?;
///
/// let chunks = SharedChunks::open(&path, ReaderOptions::new(), 4096)?;
/// let sums = Mutex::new(Vec::new());
/// std::thread::scope(|s| {
///     for _ in 0..2 {
///         s.spawn(|| -> tfrecord_core::Result<()> {
///             while let Some(chunk) = chunks.next_chunk()? {
///                 let mut records = chunk.records();
///                 let mut n = 0u64;
///                 while let Some(r) = records.next_record()? {
///                     n += u64::from(u32::from_le_bytes(r.try_into().unwrap()));
///                 }
///                 sums.lock().unwrap().push(n);
///             }
///             Ok(())
///         });
///     }
/// });
/// assert_eq!(sums.into_inner().unwrap().iter().sum::<u64>(), 999 * 1000 / 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct SharedChunks {
    file: File,
    path: Arc<Path>,
    opts: ReaderOptions,
    size: u64,
    chunk_size: u64,
    /// The next cell to hand out.
    next_cell: AtomicU64,
    /// Set once no chunk follows, so that threads stop reading cells nobody needs.
    ended: AtomicBool,
    /// Where the frames of the next cell to cut start.
    link: Mutex<Link>,
    turn: Condvar,
    /// Buffers of chunks given back.
    spare: Mutex<Vec<Vec<u8>>>,
}

/// What the thread of one cell passes to the thread of the next.
#[derive(Clone, Copy, Debug)]
struct Link {
    /// The cell whose chunk is cut next.
    cell: u64,
    /// Where its first frame starts: at or after the cell's start.
    start: u64,
    /// Records before that frame.
    records: u64,
    /// No chunk follows: the end of the file, an error, or a chunk that ends in one.
    ended: bool,
}

/// What [`SharedChunks::walk`] found in a cell.
struct Walk {
    /// Where the chunk ends in the cell's bytes.
    cut: usize,
    /// Where the whole frames walked over end: `cut`, unless a frame that fails a check or a
    /// truncated one follows them.
    walked: usize,
    /// The whole frames walked over.
    frames: u64,
    /// Whether the chunk is the last one.
    ended: bool,
}

impl Walk {
    /// The last chunk: everything read, the frame at `walked` (one that fails a check, or a
    /// truncated one) included; the chunk's reader reports it.
    fn last(data: &[u8], walked: usize, frames: u64) -> Walk {
        Walk {
            cut: data.len(),
            walked,
            frames,
            ended: true,
        }
    }
}

/// Passes the link on when dropped: every cell taken passes it on exactly once, whatever
/// happens to the thread that took it (an early return ends the chain).
struct Turn<'a> {
    chunks: &'a SharedChunks,
    next: Link,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        if self.next.ended {
            self.chunks.ended.store(true, Ordering::Relaxed);
        }
        // Nothing panics while holding the lock: a poisoned one still holds the last link.
        let mut link = self
            .chunks
            .link
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *link = self.next;
        self.chunks.turn.notify_all();
    }
}

impl SharedChunks {
    /// Opens an uncompressed record file, to be cut into chunks of about `chunk_size` bytes.
    ///
    /// # Errors
    /// When the file cannot be opened, for what is not a regular file (a pipe reads in order),
    /// and for compressed files (a compressed stream inflates in order): cut those with
    /// [`ChunkReader`].
    pub fn open(path: impl AsRef<Path>, opts: ReaderOptions, chunk_size: usize) -> Result<Self> {
        let path = path.as_ref();
        let located = |e: Error| e.with_path(path.to_path_buf());
        if opts.compression != Compression::None {
            return Err(located(Error::from(io::Error::new(
                io::ErrorKind::InvalidInput,
                "SharedChunks reads uncompressed files; a compressed stream inflates in order \
                 (cut it with ChunkReader)",
            ))));
        }
        let file = File::open(path).map_err(|e| located(e.into()))?;
        let meta = file.metadata().map_err(|e| located(e.into()))?;
        if !meta.is_file() {
            // A pipe or a device has no size to cut into cells, nor positions to read at.
            return Err(located(Error::from(io::Error::new(
                io::ErrorKind::InvalidInput,
                "SharedChunks reads regular files; a pipe or device reads in order \
                 (cut it with ChunkReader)",
            ))));
        }
        let size = meta.len();
        Ok(SharedChunks {
            file,
            path: Arc::from(path),
            opts,
            size,
            chunk_size: u64::try_from(chunk_size.max(1)).unwrap_or(u64::MAX),
            next_cell: AtomicU64::new(0),
            ended: AtomicBool::new(false),
            link: Mutex::new(Link {
                cell: 0,
                start: 0,
                records: 0,
                ended: false,
            }),
            turn: Condvar::new(),
            spare: Mutex::new(Vec::new()),
        })
    }

    /// Takes back a chunk that has been read, to reuse its buffer for a later chunk.
    pub fn give_back(&self, chunk: Chunk) {
        if let Ok(mut spare) = self.spare.lock() {
            keep_spare(&mut spare, chunk);
        }
    }

    /// The next chunk of whole frames, from any thread; `Ok(None)` once the frames end. The
    /// chunks come in file order to one thread; threads sharing the reader each get some of
    /// them ([`Chunk::offset`] and [`Chunk::first_record`] say where each belongs).
    ///
    /// # Errors
    /// I/O errors, located at the cell being read; framing errors are left to the chunk's
    /// reader, as with [`ChunkReader`].
    pub fn next_chunk(&self) -> Result<Option<Chunk>> {
        loop {
            if self.ended.load(Ordering::Relaxed) {
                return Ok(None);
            }
            let cell = self.next_cell.fetch_add(1, Ordering::Relaxed);
            let cell_start = cell.saturating_mul(self.chunk_size);
            let cell_end = cell_start.saturating_add(self.chunk_size).min(self.size);
            // The cell's bytes, read before its turn: the copy needs nothing from other cells.
            let mut data = self
                .spare
                .lock()
                .ok()
                .and_then(|mut s| s.pop())
                .unwrap_or_default();
            let read = self.read_to(&mut data, 0, cell_start, cell_end);
            let link = self.wait_turn(cell);
            let mut turn = Turn {
                chunks: self,
                next: Link {
                    cell: cell + 1,
                    ended: true,
                    ..link
                },
            };
            if link.ended {
                return Ok(None);
            }
            read.map_err(|e| self.fail(e, cell_start, link.records))?;
            if link.start >= self.size {
                return Ok(None); // the end of the file
            }
            if link.start >= cell_end {
                // A frame from an earlier cell spans this one: no frame starts in it.
                turn.next.ended = false;
                drop(turn);
                continue;
            }
            let first = usize::try_from(link.start - cell_start).unwrap_or(usize::MAX);
            let Walk {
                cut,
                walked,
                frames,
                ended,
            } = self.walk(&mut data, cell_start, cell_end, first, link.records)?;
            let end = cell_start + cut as u64;
            turn.next = Link {
                cell: cell + 1,
                start: end,
                records: link.records + frames,
                ended: ended || end >= self.size,
            };
            drop(turn);
            // The frames are `data[first..cut]`: the bytes before are the end of the frame
            // that the previous cell's chunk holds, left in place rather than moved out.
            data.truncate(cut);
            return Ok(Some(Chunk {
                buf: data,
                start: first,
                offset: link.start,
                first_record: link.records,
                bounded: true,
                checked: walked - first,
                path: Some(Arc::clone(&self.path)),
                opts: self.opts.clone(),
            }));
        }
    }

    /// Walks the frames that start in the cell from `data[first..]` (`data` holds the file
    /// from `cell_start`; `records` frames come before the first), reading on past the cell for
    /// the last one. A frame that fails a check, or a truncated last frame, ends the chunk and
    /// the file's chunks, as with [`ChunkReader`], and the chunk's reader reports it.
    fn walk(
        &self,
        data: &mut Vec<u8>,
        cell_start: u64,
        cell_end: u64,
        first: usize,
        records: u64,
    ) -> Result<Walk> {
        let (mut cut, mut frames) = (first, 0u64);
        while cell_start + (cut as u64) < cell_end {
            match frame_at(&self.opts, data.get(cut..).unwrap_or_default()) {
                Frame::Whole(len) => {
                    cut += len;
                    frames += 1;
                }
                Frame::Partial(need) => {
                    let have = cell_start + data.len() as u64;
                    let want = (cell_start + (cut + need) as u64).min(self.size);
                    // Located at the frame being read, as a reader in order would.
                    self.read_to(data, data.len(), have, want)
                        .map_err(|e| self.fail(e, cell_start + cut as u64, records + frames))?;
                    if want == self.size && data.len() < cut + need {
                        return Ok(Walk::last(data, cut, frames)); // truncated at the end
                    }
                }
                Frame::Bad => return Ok(Walk::last(data, cut, frames)),
            }
        }
        Ok(Walk {
            cut,
            walked: cut,
            frames,
            ended: false,
        })
    }

    /// Makes `data[at..]` the file's bytes `from..to`. A reused buffer's old bytes are read
    /// over in place; only bytes past its old length are zeroed before the read.
    fn read_to(&self, data: &mut Vec<u8>, at: usize, from: u64, to: u64) -> io::Result<()> {
        let n = usize::try_from(to.saturating_sub(from))
            .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
        let end = at.saturating_add(n);
        if data.len() < end {
            data.resize(end, 0);
        } else {
            data.truncate(end);
        }
        read_exact_at(&self.file, &mut data[at..], from)
    }

    /// Waits until the link reaches `cell`. Nothing panics while holding the lock (see
    /// [`Turn`]), so a poisoned lock still holds the last link passed on; the caller must pass
    /// it on, or the threads of later cells would wait forever.
    fn wait_turn(&self, cell: u64) -> Link {
        let mut link = self.link.lock().unwrap_or_else(PoisonError::into_inner);
        while link.cell < cell {
            link = self.turn.wait(link).unwrap_or_else(PoisonError::into_inner);
        }
        *link
    }

    fn fail(&self, e: io::Error, offset: u64, record: u64) -> Error {
        locate(Error::from(e), Some(&self.path), offset, record)
    }
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(file, buf, offset) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
