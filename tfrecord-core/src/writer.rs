//! Writing records: TFRecord and OFRecord framing over plain, gzip or zlib streams.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use flate2::write::{GzEncoder, ZlibEncoder};

use crate::compression::{Compression, Format};
use crate::crc::masked_crc32c;
use crate::error::{Error, Result};

/// The default write buffer: 1 MiB.
pub(crate) const DEFAULT_WRITE_BUFFER: usize = 1 << 20;

/// How to write a record stream.
#[derive(Clone, Debug)]
pub struct WriterOptions {
    format: Format,
    compression: Compression,
    level: u32,
    buffer_size: usize,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            format: Format::TfRecord,
            compression: Compression::None,
            level: 6,
            buffer_size: DEFAULT_WRITE_BUFFER,
        }
    }
}

impl WriterOptions {
    /// TFRecord, uncompressed, 1 MiB buffer; compression level 6 (zlib's default, which is what
    /// TensorFlow's `TFRecordOptions` uses when no level is given).
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

    /// The compression level, 0 (store) to 9 (smallest); values above 9 are taken as 9.
    #[must_use]
    pub fn level(mut self, level: u32) -> Self {
        self.level = level.min(9);
        self
    }

    /// The size of the write buffer.
    #[must_use]
    pub fn buffer_size(mut self, size: usize) -> Self {
        self.buffer_size = size.max(64);
        self
    }

    /// The stream compression set.
    pub fn get_compression(&self) -> Compression {
        self.compression
    }
}

enum Sink<W: Write> {
    Plain(BufWriter<W>),
    Gzip(BufWriter<GzEncoder<W>>),
    Zlib(BufWriter<ZlibEncoder<W>>),
}

fn into_inner<W: Write>(w: BufWriter<W>) -> io::Result<W> {
    w.into_inner().map_err(io::IntoInnerError::into_error)
}

/// A buffered writer of framed records.
///
/// Call [`finish`](RecordWriter::finish) at the end: it writes the compression trailer, flushes
/// and returns the first error, if any. Dropping an unfinished writer still flushes and finishes
/// the stream, but can only ignore errors.
pub struct RecordWriter<W: Write> {
    sink: Option<Sink<W>>,
    format: Format,
    path: Option<PathBuf>,
    records: u64,
    offset: u64,
}

impl RecordWriter<File> {
    /// Creates (or truncates) a file.
    ///
    /// # Errors
    /// When the file cannot be created; the error names the file.
    pub fn create(path: impl AsRef<Path>, opts: WriterOptions) -> Result<Self> {
        let path = path.as_ref();
        let file = File::create(path).map_err(|e| Error::from(e).with_path(path))?;
        Ok(RecordWriter::new(file, opts).with_path(path))
    }
}

impl<W: Write> RecordWriter<W> {
    /// Writes records to any byte sink.
    pub fn new(inner: W, opts: WriterOptions) -> Self {
        let level = flate2::Compression::new(opts.level);
        let size = opts.buffer_size;
        let sink = match opts.compression {
            Compression::None => Sink::Plain(BufWriter::with_capacity(size, inner)),
            Compression::Gzip => {
                Sink::Gzip(BufWriter::with_capacity(size, GzEncoder::new(inner, level)))
            }
            Compression::Zlib => Sink::Zlib(BufWriter::with_capacity(
                size,
                ZlibEncoder::new(inner, level),
            )),
        };
        RecordWriter {
            sink: Some(sink),
            format: opts.format,
            path: None,
            records: 0,
            offset: 0,
        }
    }

    /// Names the sink in error messages.
    #[must_use]
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// How many records have been written.
    pub fn records_written(&self) -> u64 {
        self.records
    }

    fn err(&self, e: io::Error) -> Error {
        let err = Error::from(e)
            .with_offset(self.offset)
            .with_record(self.records);
        match &self.path {
            Some(p) => err.with_path(p.clone()),
            None => err,
        }
    }

    fn out(&mut self) -> io::Result<&mut dyn Write> {
        match self.sink.as_mut() {
            Some(Sink::Plain(w)) => Ok(w),
            Some(Sink::Gzip(w)) => Ok(w),
            Some(Sink::Zlib(w)) => Ok(w),
            None => Err(io::Error::other("the writer is already finished")),
        }
    }

    /// Writes one record: its frame header, the bytes, and (TFRecord) the data checksum.
    ///
    /// # Errors
    /// I/O errors, naming the file, offset and record index.
    pub fn write(&mut self, data: &[u8]) -> Result<()> {
        let format = self.format;
        let res = (|| -> io::Result<()> {
            let out = self.out()?;
            let len = data.len() as u64;
            match format {
                Format::TfRecord => {
                    let len_bytes = len.to_le_bytes();
                    let mut header = [0u8; 12];
                    header[..8].copy_from_slice(&len_bytes);
                    header[8..].copy_from_slice(&masked_crc32c(&len_bytes).to_le_bytes());
                    out.write_all(&header)?;
                    out.write_all(data)?;
                    out.write_all(&masked_crc32c(data).to_le_bytes())?;
                }
                Format::OfRecord => {
                    let declared = i64::try_from(len).map_err(io::Error::other)?;
                    out.write_all(&declared.to_le_bytes())?;
                    out.write_all(data)?;
                }
            }
            Ok(())
        })();
        res.map_err(|e| self.err(e))?;
        let overhead = if format == Format::TfRecord { 16 } else { 8 };
        self.offset += data.len() as u64 + overhead;
        self.records += 1;
        Ok(())
    }

    /// Flushes buffered records to the underlying writer (for compressed streams, a sync flush
    /// that ends on a byte boundary; the stream stays open).
    ///
    /// # Errors
    /// I/O errors, naming the file.
    pub fn flush(&mut self) -> Result<()> {
        let res = self.out().and_then(|w| w.flush());
        res.map_err(|e| self.err(e))
    }

    /// Writes everything still buffered, ends the compressed stream, and returns the
    /// underlying writer.
    ///
    /// # Errors
    /// I/O errors, naming the file.
    pub fn finish(mut self) -> Result<W> {
        let res = Self::close(self.sink.take());
        res.map_err(|e| self.err(e))
    }

    fn close(sink: Option<Sink<W>>) -> io::Result<W> {
        match sink {
            Some(Sink::Plain(w)) => {
                let mut w = into_inner(w)?;
                w.flush()?;
                Ok(w)
            }
            Some(Sink::Gzip(w)) => {
                let mut w = into_inner(w)?.finish()?;
                w.flush()?;
                Ok(w)
            }
            Some(Sink::Zlib(w)) => {
                let mut w = into_inner(w)?.finish()?;
                w.flush()?;
                Ok(w)
            }
            None => Err(io::Error::other("the writer is already finished")),
        }
    }
}

impl<W: Write> Drop for RecordWriter<W> {
    fn drop(&mut self) {
        if self.sink.is_some() {
            // Best effort: `finish` is the way to see errors.
            let _ = Self::close(self.sink.take());
        }
    }
}
