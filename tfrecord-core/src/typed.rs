//! Typed readers and writers: records as derived Rust types.

use std::fs::File;
use std::io::{Read, Write};
use std::marker::PhantomData;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use crate::codec::{Container, Decode, DecodeOwned, Encode, TfExample};
use crate::error::{Error, Result, locate};
use crate::reader::{ReaderOptions, RecordReader};
use crate::writer::{RecordWriter, WriterOptions};

/// Reads records of container `C` (by default `tensorflow.Example` in TFRecord files) as
/// values of `T`.
///
/// ```no_run
/// # use tfrecord_core::{Reader, Example};
/// #[derive(Example, Debug)]
/// struct Mnist {
///     #[example(key = "image/encoded")]
///     image: Vec<u8>,
///     label: i64,
/// }
///
/// for rec in Reader::<Mnist>::open("mnist.tfrecord")? {
///     let rec = rec?;
///     println!("{} bytes, label {}", rec.image.len(), rec.label);
/// }
/// # Ok::<(), tfrecord_core::Error>(())
/// ```
///
/// Under a [`BadRecords`](crate::BadRecords) policy that skips damage, the iterator also skips
/// records that fail to decode, reporting them through [`records`](Self::records)
/// ([`RecordReader::drain_skipped`]); [`next_lent`](Self::next_lent) and
/// [`next_borrowed`](Self::next_borrowed) return decode errors, which the caller can hand to
/// [`RecordReader::skip_last`] to skip them the same way.
pub struct Reader<T, C: Container = TfExample, R: Read = File> {
    inner: RecordReader<R>,
    /// Where records that are not lent out of the read buffer are copied.
    buf: Vec<u8>,
    /// The reader's name for error messages, kept apart so that it can be read while a record
    /// is lent out.
    path: Option<Arc<Path>>,
    _marker: PhantomData<fn() -> (T, C)>,
}

/// The record reader under it (the file, the position, the records read).
impl<T, C: Container, R: Read> std::fmt::Debug for Reader<T, C, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader")
            .field("records", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<T, C: Container> Reader<T, C, File> {
    /// Opens a file, with the compression guessed from its name and the framing of `C`.
    ///
    /// # Errors
    /// When the file cannot be opened.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let opts = ReaderOptions::for_path(path.as_ref()).format(C::FORMAT);
        Self::open_with(path, opts)
    }

    /// Opens a file with explicit options (the format is always `C`'s).
    ///
    /// # Errors
    /// When the file cannot be opened.
    pub fn open_with(path: impl AsRef<Path>, opts: ReaderOptions) -> Result<Self> {
        let inner = RecordReader::open(path, opts.format(C::FORMAT))?;
        Ok(Self::from_records(inner))
    }

    /// Opens the byte range `range` of an uncompressed TFRecord file, as
    /// [`RecordReader::open_range`] does (the format is always `C`'s).
    ///
    /// # Errors
    /// As [`RecordReader::open_range`].
    pub fn open_range(
        path: impl AsRef<Path>,
        range: Range<u64>,
        opts: ReaderOptions,
    ) -> Result<Self> {
        let inner = RecordReader::open_range(path, range, opts.format(C::FORMAT))?;
        Ok(Self::from_records(inner))
    }
}

impl<T, C: Container, R: Read> Reader<T, C, R> {
    /// Reads from any byte source (the format is always `C`'s).
    pub fn new(inner: R, opts: ReaderOptions) -> Self {
        Self::from_records(RecordReader::new(inner, opts.format(C::FORMAT)))
    }

    fn from_records(inner: RecordReader<R>) -> Self {
        Reader {
            path: inner.shared_path(),
            inner,
            buf: Vec::new(),
            _marker: PhantomData,
        }
    }

    /// The underlying record reader.
    pub fn records(&mut self) -> &mut RecordReader<R> {
        &mut self.inner
    }

    /// Reads the next record into `buf` and decodes a value that may borrow from it (for
    /// types with `&'a [u8]`, `&'a str` or `Cow` fields). `None` at the end.
    ///
    /// # Errors
    /// Framing and decoding errors, naming the file, offset, record and key.
    pub fn next_borrowed<'b, B: Decode<'b, C>>(
        &mut self,
        buf: &'b mut Vec<u8>,
    ) -> Option<Result<B>> {
        match self.inner.read_into(buf) {
            Ok(true) => Some(B::decode(buf).map_err(|e| self.locate_last(e))),
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        }
    }

    /// Reads the next record and decodes a value that may borrow from it, lending the record
    /// straight out of the read buffer when it lies whole inside it
    /// ([`RecordReader::read_lent`]): no copy at all for types with `&'a [u8]`, `&'a str` or
    /// `Cow` fields. The value borrows the reader until the next read. `None` at the end.
    ///
    /// ```
    /// use tfrecord_core::{Example, Reader, ReaderOptions, TfExample, Writer, WriterOptions};
    ///
    /// #[derive(Example)]
    /// struct Doc<'a> {
    ///     text: &'a str,
    /// }
    ///
    /// let mut w = Writer::<Doc, TfExample, Vec<u8>>::new(Vec::new(), WriterOptions::new());
    /// w.write(&Doc { text: "zero copy" })?;
    /// let bytes = w.finish()?;
    ///
    /// let mut r = Reader::<(), TfExample, &[u8]>::new(&bytes[..], ReaderOptions::new());
    /// while let Some(doc) = r.next_lent::<Doc>() {
    ///     assert_eq!(doc?.text, "zero copy");
    /// }
    /// # Ok::<(), tfrecord_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// Framing and decoding errors, naming the file, offset, record and key.
    pub fn next_lent<'b, B: Decode<'b, C>>(&'b mut self) -> Option<Result<B>> {
        let base = self.inner.record_base();
        let path = self.path.as_deref();
        let record = match self.inner.read_located(&mut self.buf) {
            Ok(Some(record)) => record,
            Ok(None) => return None,
            Err(e) => return Some(Err(e)),
        };
        Some(B::decode(record.payload).map_err(|e| {
            let e = locate(e, path, record.offset, record.index);
            match base {
                Some(base) => e.with_record_base(base),
                None => e,
            }
        }))
    }

    /// Locates a decode error at the record the last read returned.
    fn locate_last(&self, e: Error) -> Error {
        let index = self.inner.records_read().saturating_sub(1);
        match self.inner.last_offset() {
            Some(offset) => self.inner.locate(e, offset, index),
            None => e,
        }
    }
}

impl<T: DecodeOwned<C>, C: Container, R: Read> Reader<T, C, R> {
    /// Reads the next record into `value`, reusing the buffers it holds: the value the
    /// iterator would return, without allocating again the `String`, `Vec<u8>` and `Vec`
    /// fields (and the steps of `Vec<Vec<_>>` feature lists) that already have room
    /// ([`Decode::decode_into`]). `Ok(false)` at the end, with `value` untouched.
    ///
    /// Records that fail to decode are skipped as by the iterator; on an error `value` holds
    /// some valid value of its type.
    ///
    /// ```
    /// use tfrecord_core::{Example, Reader, ReaderOptions, TfExample, Writer, WriterOptions};
    ///
    /// #[derive(Example, Default)]
    /// struct Doc {
    ///     text: String,
    ///     ids: Vec<i64>,
    /// }
    ///
    /// let mut w = Writer::<Doc, TfExample, Vec<u8>>::new(Vec::new(), WriterOptions::new());
    /// w.write(&Doc { text: "one".into(), ids: vec![1, 2] })?;
    /// w.write(&Doc { text: "two".into(), ids: vec![3] })?;
    /// let bytes = w.finish()?;
    ///
    /// let mut r = Reader::<Doc, TfExample, &[u8]>::new(&bytes[..], ReaderOptions::new());
    /// let mut doc = Doc::default();
    /// while r.read_into(&mut doc)? {
    ///     println!("{}: {:?}", doc.text, doc.ids);
    /// }
    /// # Ok::<(), tfrecord_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// Framing and decoding errors, naming the file, offset, record and key.
    pub fn read_into(&mut self, value: &mut T) -> Result<bool> {
        loop {
            let Some(bytes) = self.inner.read_lent(&mut self.buf)? else {
                return Ok(false);
            };
            match <T as Decode<'_, C>>::decode_into(value, bytes) {
                Ok(()) => return Ok(true),
                // Skipped under a policy that skips damage; else the error, located.
                Err(e) => self.inner.skip_last(e).map_err(|e| self.locate_last(e))?,
            }
        }
    }

    /// Reads up to `n` records into `batch`, decoding into the values already in it
    /// ([`read_into`](Self::read_into)) and pushing new ones past its length, then truncating
    /// it to the records read; returns their number, 0 at the end. Handed the same `Vec`
    /// again, the next call reuses the values and their buffers, so that a loop over batches
    /// allocates only while the values grow:
    ///
    /// ```no_run
    /// # use tfrecord_core::{Example, Reader};
    /// #[derive(Example)]
    /// struct Mnist {
    ///     #[example(key = "image/encoded")]
    ///     image: Vec<u8>,
    ///     label: i64,
    /// }
    ///
    /// let mut reader = Reader::<Mnist>::open("mnist.tfrecord")?;
    /// let mut batch = Vec::new();
    /// while reader.read_batch(&mut batch, 1024)? > 0 {
    ///     println!("{} records, first label {}", batch.len(), batch[0].label);
    /// }
    /// # Ok::<(), tfrecord_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`read_into`](Self::read_into); `batch` then holds valid values, of which those
    /// before the failing record are the records read.
    pub fn read_batch(&mut self, batch: &mut Vec<T>, n: usize) -> Result<usize> {
        let mut filled = 0;
        while filled < n {
            let more = match batch.get_mut(filled) {
                Some(value) => self.read_into(value)?,
                None => match self.next() {
                    Some(value) => {
                        batch.push(value?);
                        true
                    }
                    None => false,
                },
            };
            if !more {
                break;
            }
            filled += 1;
        }
        batch.truncate(filled);
        Ok(filled)
    }
}

impl<T: DecodeOwned<C>, C: Container, R: Read> Iterator for Reader<T, C, R> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Result<T>> {
        loop {
            // An owned value copies what it keeps out of the lent record, which is released
            // at the next read.
            let bytes = match self.inner.read_lent(&mut self.buf) {
                Ok(Some(bytes)) => bytes,
                Ok(None) => return None,
                Err(e) => return Some(Err(e)),
            };
            match T::decode(bytes) {
                Ok(value) => return Some(Ok(value)),
                // Skipped under a policy that skips damage; else the error, located.
                Err(e) => match self.inner.skip_last(e) {
                    Ok(()) => {}
                    Err(e) => return Some(Err(self.locate_last(e))),
                },
            }
        }
    }
}

/// Writes values of `T` as records of container `C` (by default `tensorflow.Example` in
/// TFRecord files).
///
/// ```no_run
/// # use tfrecord_core::{Writer, Example};
/// #[derive(Example)]
/// struct Mnist {
///     #[example(key = "image/encoded")]
///     image: Vec<u8>,
///     label: i64,
/// }
///
/// let mut writer = Writer::<Mnist>::create("mnist.tfrecord")?;
/// writer.write(&Mnist { image: vec![0; 784], label: 7 })?;
/// writer.finish()?;
/// # Ok::<(), tfrecord_core::Error>(())
/// ```
pub struct Writer<T, C: Container = TfExample, W: Write = File> {
    inner: RecordWriter<W>,
    buf: Vec<u8>,
    _marker: PhantomData<fn(&T, C)>,
}

// The `Encode<C>` bounds are on the methods rather than the impl blocks so that using a type
// that cannot be encoded as `C` reports the trait's own message ("`T` cannot be encoded as a
// TfExample record") instead of "the method exists but its trait bounds were not satisfied".
impl<T, C: Container> Writer<T, C, File> {
    /// Creates a file, with the compression guessed from its name and the framing of `C`.
    ///
    /// # Errors
    /// When the file cannot be created.
    pub fn create(path: impl AsRef<Path>) -> Result<Self>
    where
        T: Encode<C>,
    {
        let opts = WriterOptions::for_path(path.as_ref());
        Self::create_with(path, opts)
    }

    /// Creates a file with explicit options (the format is always `C`'s).
    ///
    /// # Errors
    /// When the file cannot be created.
    pub fn create_with(path: impl AsRef<Path>, opts: WriterOptions) -> Result<Self>
    where
        T: Encode<C>,
    {
        let inner = RecordWriter::create(path, opts.format(C::FORMAT))?;
        Ok(Writer {
            inner,
            buf: Vec::new(),
            _marker: PhantomData,
        })
    }
}

impl<T, C: Container, W: Write> Writer<T, C, W> {
    /// Writes to any byte sink (the format is always `C`'s).
    pub fn new(inner: W, opts: WriterOptions) -> Self
    where
        T: Encode<C>,
    {
        Writer {
            inner: RecordWriter::new(inner, opts.format(C::FORMAT)),
            buf: Vec::new(),
            _marker: PhantomData,
        }
    }

    /// Encodes and writes one value.
    ///
    /// # Errors
    /// A value that does not fit the layout its type declares ([`Encode::check`]: nothing is
    /// written); I/O errors.
    pub fn write(&mut self, value: &T) -> Result<()>
    where
        T: Encode<C>,
    {
        value.check()?;
        // The buffer is reused, so after the first records it needs no reserve; computing
        // `encoded_len` here would be one more pass over every value.
        self.buf.clear();
        value.encode_raw(&mut self.buf);
        self.inner.write(&self.buf)
    }

    /// Flushes buffered records.
    ///
    /// # Errors
    /// I/O errors.
    pub fn flush(&mut self) -> Result<()> {
        self.inner.flush()
    }

    /// Finishes the stream and returns the underlying writer.
    ///
    /// # Errors
    /// I/O errors.
    pub fn finish(self) -> Result<W> {
        self.inner.finish()
    }
}
