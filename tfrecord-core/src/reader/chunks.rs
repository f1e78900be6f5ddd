//! A chunk of whole frames cut from a record stream, and the records lent out of it.

use std::path::Path;
use std::sync::Arc;

use super::frames::RecordReader;
use super::options::ReaderOptions;
use crate::codec::{Container, Decode};
use crate::compression::{Compression, Format};
use crate::crc::masked_crc32c;
use crate::error::{Result, locate};

/// The buffer a [`Chunk::reader`] copies through: small enough to come from the heap each
/// time, large enough that typical records are lent out of it whole.
const CHUNK_READER_BUFFER: usize = 64 << 10;

/// Whole frames cut from a record stream by a [`ChunkReader`](crate::ChunkReader), and where
/// they start in it.
///
/// [`reader`](Chunk::reader) reads them on any thread with every check a
/// [`RecordReader`] makes (framing, both CRCs); its errors give the file, byte offset and
/// record index in the whole stream.
#[derive(Clone, Debug)]
pub struct Chunk {
    /// The buffer; the frames are `buf[start..]`.
    pub(super) buf: Vec<u8>,
    pub(super) start: usize,
    pub(super) offset: u64,
    pub(super) first_record: u64,
    /// Whether the chunk is cut from an uncompressed file, whose size bounds every length (as
    /// `RecordReader::open` knows it), so that its reader words truncation the same way.
    pub(super) bounded: bool,
    /// How many bytes of the frames, from the first, the cutter walked over frame by frame:
    /// each of those frames' lengths passed its CRC and `max_record_len` there, with these
    /// options, so that [`ChunkRecords`] checks only their payloads' CRCs.
    pub(super) checked: usize,
    pub(super) path: Option<Arc<Path>>,
    pub(super) opts: ReaderOptions,
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

/// Keeps a given-back chunk's buffer for a later chunk, up to a few.
pub(super) fn keep_spare(spare: &mut Vec<Vec<u8>>, chunk: Chunk) {
    const MAX_SPARE: usize = 8;
    if spare.len() < MAX_SPARE {
        spare.push(chunk.buf);
    }
}
