//! The data set: files and options, read as raw records or as derived types.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use tfrecord_core::{Container, DecodeOwned, Skipped, TfExample};

use crate::block::{Raw, Typed};
use crate::checkpoint::Checkpoint;
use crate::error::{Error, Result};
use crate::options::DatasetOptions;
use crate::pipeline::Pipeline;
use crate::plan::epoch_splits;
use crate::sources::{SourceFile, Sources};
use crate::spares::Spares;
use crate::split::Split;

/// Record files and how to read them. [`records`](Self::records) reads raw records,
/// [`values`](Self::values) decodes them into a derived type; both iterators can be
/// checkpointed, and [`resume`](Self::resume) continues from a checkpoint.
#[derive(Clone, Debug)]
pub struct Dataset {
    files: Arc<[SourceFile]>,
    options: DatasetOptions,
    resume: Option<Checkpoint>,
    reuse: Reuse,
}

/// The values [`ValueBatch`]es gave back, per type: shared by every iterator of a data set and
/// of its clones, so that a new iterator (an epoch read by a new loop) decodes into the values
/// the last one gave back.
#[derive(Clone, Default)]
struct Reuse(Arc<Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>>);

impl Reuse {
    /// The values kept for `T`.
    fn spares<T: Send + 'static>(&self) -> Arc<Spares<T>> {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = kept
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Arc::new(Spares::<T>::new()));
        // The entry of `T`'s id holds a `Spares<T>`.
        Arc::clone(entry)
            .downcast::<Spares<T>>()
            .unwrap_or_else(|_| Arc::new(Spares::new()))
    }
}

impl std::fmt::Debug for Reuse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Reuse")
    }
}

impl Dataset {
    /// The TFRecord files that `inputs` (files, directories, glob patterns) stand for, as
    /// [`Sources`] lists them, with the default options.
    ///
    /// # Errors
    /// As [`Sources::resolve`].
    pub fn open<P: AsRef<Path>>(inputs: impl IntoIterator<Item = P>) -> Result<Self> {
        let sources = inputs
            .into_iter()
            .fold(Sources::new(), |s, p| s.input(p.as_ref()));
        Self::from_sources(&sources)
    }

    /// The files `sources` list.
    ///
    /// # Errors
    /// As [`Sources::resolve`].
    pub fn from_sources(sources: &Sources) -> Result<Self> {
        Ok(Self::from_files(sources.resolve()?))
    }

    /// Exactly these files, in this order.
    pub fn from_files(files: impl Into<Arc<[SourceFile]>>) -> Self {
        Dataset {
            files: files.into(),
            options: DatasetOptions::new(),
            resume: None,
            reuse: Reuse::default(),
        }
    }

    /// Sets the options. A bad-record policy that skips is given a
    /// [`shared_log`](tfrecord_core::BadRecords::shared_log) if it has none (its budget stays
    /// the one of the policy passed in), so that every skip can be taken from the iterators
    /// (`drain_skipped`).
    #[must_use]
    pub fn with_options(mut self, mut options: DatasetOptions) -> Self {
        let policy = options.reader.get_bad_records();
        if policy.skips() && !policy.has_shared_log() {
            let logged = policy.clone().shared_log();
            options.reader = options.reader.bad_records(logged);
        }
        self.options = options;
        self
    }

    /// Reads from a checkpoint instead of the start. The files and every option that decides
    /// the order must be the ones the checkpoint was taken with; threads and determinism may
    /// differ.
    #[must_use]
    pub fn resume(mut self, checkpoint: Checkpoint) -> Self {
        self.resume = Some(checkpoint);
        self
    }

    /// The files, in listing order.
    pub fn files(&self) -> &[SourceFile] {
        &self.files
    }

    /// The options.
    pub fn options(&self) -> &DatasetOptions {
        &self.options
    }

    /// The splits this worker reads in `epoch` (0 for the first), in reading order: the split
    /// order of the epoch, then this worker's shard of it.
    pub fn splits(&self, epoch: u64) -> Vec<Split> {
        epoch_splits(&self.files, &self.options, epoch)
    }

    /// Raw records, with where each came from.
    ///
    /// # Errors
    /// Invalid options ([`Error::Options`](crate::Error::Options)); a checkpoint of another
    /// data set, or whose buffered records cannot be read again.
    pub fn records(&self) -> Result<Records> {
        Ok(Records {
            inner: Pipeline::new(
                Arc::clone(&self.files),
                self.options.clone(),
                Raw,
                self.resume.as_ref(),
            )?,
        })
    }

    /// Records decoded as `T` from `tensorflow.Example`s (see [`values_in`](Self::values_in)
    /// for other containers), one value at a time for the caller to keep. With several
    /// [`threads`](DatasetOptions::threads) the workers read and check the records, and each
    /// value is decoded on the caller's thread as it is handed out;
    /// [`value_batches`](Self::value_batches) decodes on every thread. Under a bad-record
    /// policy that skips ([`BadRecords::skip`](tfrecord_core::BadRecords::skip)), every record
    /// is decoded as it is read (on the workers), so that a record that does not decode leaves
    /// the stream at the same point on any thread count and in batches alike.
    ///
    /// # Errors
    /// As [`records`](Self::records), and a file listed with another format than TFRecord.
    pub fn values<T>(&self) -> Result<Values<T, TfExample>>
    where
        T: DecodeOwned<TfExample> + Send + 'static,
    {
        self.values_in::<T, TfExample>()
    }

    /// Records decoded as `T` from container `C` (`TfExample`, `TfSequenceExample`,
    /// `OfRecord`); every file must be listed with `C`'s format.
    ///
    /// # Errors
    /// As [`values`](Self::values).
    pub fn values_in<T, C>(&self) -> Result<Values<T, C>>
    where
        T: DecodeOwned<C> + Send + 'static,
        C: Container,
    {
        Ok(Values {
            inner: Pipeline::new(
                Arc::clone(&self.files),
                self.options.clone(),
                Typed::new(self.options.reader.get_bad_records()),
                self.resume.as_ref(),
            )?,
        })
    }

    /// Records decoded as `T` from `tensorflow.Example`s, `size` at a time (the last batch of
    /// the stream may hold fewer), in the order [`values`](Self::values) gives them (see
    /// [`value_batches_in`](Self::value_batches_in) for other containers).
    ///
    /// Behind a shuffle buffer, batches decode records as they enter the buffer, on the
    /// reading threads (tf.data's `map(parse).shuffle(n)`), where `values` decodes each as it
    /// leaves (`shuffle(n).map(parse)`): the same values in the same order, except that a
    /// record whose bytes are intact but do not decode as `T` ends the stream as it enters the
    /// buffer, so fewer values come before the error. Under a bad-record policy that skips
    /// ([`BadRecords::skip`](tfrecord_core::BadRecords::skip)), such records are skipped and
    /// reported instead, as they are read (before the interleave and the buffer), in `values`
    /// and in batches alike: the values and their order are the same.
    ///
    /// A [`ValueBatch`] that is dropped gives its values back (to this data set and its clones,
    /// for this and later iterators), and later records are decoded into
    /// them ([`Decode::decode_into`](tfrecord_core::Decode::decode_into)), keeping their
    /// `String` and `Vec` buffers: once the first batches are back, reading allocates nothing
    /// per record, and with several [`threads`](DatasetOptions::threads) the values are
    /// decoded on all of them (nothing is allocated on one thread and freed on another).
    /// [`ValueBatch::into_vec`] keeps the values instead.
    ///
    /// # Errors
    /// As [`values`](Self::values), and a `size` of 0.
    pub fn value_batches<T>(&self, size: usize) -> Result<ValueBatches<T, TfExample>>
    where
        T: DecodeOwned<TfExample> + Send + 'static,
    {
        self.value_batches_in::<T, TfExample>(size)
    }

    /// Records decoded as `T` from container `C`, `size` at a time, as
    /// [`value_batches`](Self::value_batches) does.
    ///
    /// # Errors
    /// As [`value_batches`](Self::value_batches).
    pub fn value_batches_in<T, C>(&self, size: usize) -> Result<ValueBatches<T, C>>
    where
        T: DecodeOwned<C> + Send + 'static,
        C: Container,
    {
        if size == 0 {
            return Err(Error::Options(
                "value_batches(0): a batch size must be at least 1".to_owned(),
            ));
        }
        let spares = self.reuse.spares::<T>();
        Ok(ValueBatches {
            inner: Pipeline::new(
                Arc::clone(&self.files),
                self.options.clone(),
                Typed::reusing(Arc::clone(&spares), self.options.reader.get_bad_records()),
                self.resume.as_ref(),
            )?,
            spares,
            size,
            error: None,
        })
    }
}

/// A raw record and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    bytes: Vec<u8>,
    path: Arc<Path>,
    offset: u64,
    index: u64,
    split_start: Option<u64>,
}

impl Record {
    /// The record's bytes (the serialized message).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The record's bytes, owned.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// The file it was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The byte offset of its frame in the (decompressed) file.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Its index in its split: in the file (0 for the file's first record) when the split is
    /// a whole file, and counted from the split's first record when the file is split by byte
    /// range (a split cannot know how many records come before it without reading them).
    /// [`offset`](Self::offset) names a record in its file in every case.
    pub fn index(&self) -> u64 {
        self.index
    }

    /// Where the byte range of its split starts, when the file is split by byte range: its
    /// [`index`](Self::index) then counts from the split's first record, the first record
    /// boundary at or after this offset
    /// ([`RecordReader::open_range`](tfrecord_core::RecordReader::open_range) finds it, and
    /// its [`record_base`](tfrecord_core::RecordReader::record_base) says where it is).
    /// `None` when the split is the whole file.
    pub fn split_start(&self) -> Option<u64> {
        self.split_start
    }
}

/// The raw records of a [`Dataset`]; after an error it yields nothing more.
pub struct Records {
    inner: Pipeline<Raw>,
}

impl Records {
    /// The position after the last record given; [`Dataset::resume`] continues from it.
    pub fn checkpoint(&self) -> Checkpoint {
        self.inner.checkpoint()
    }

    /// The records and byte ranges the bad-record policy skipped since the last call, each
    /// once, with its file, byte offset, length and reason. The reading threads run ahead of
    /// what is handed out, so a report can come before the records that precede it in the
    /// stream are given. Reports go to the policy's shared log, which the data set's iterators
    /// (and [`BadRecords::take_logged`](tfrecord_core::BadRecords::take_logged) on the policy
    /// passed in, when it had one) take from: each report is taken once.
    pub fn drain_skipped(&mut self) -> Vec<Skipped> {
        self.inner.skipped()
    }
}

impl Iterator for Records {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Result<Record>> {
        let held = match self.inner.next()? {
            Ok(held) => held,
            Err(e) => return Some(Err(e)),
        };
        // The run that gave the record is still the current one.
        let path = self
            .inner
            .path(held.split)
            .unwrap_or_else(|| Arc::from(Path::new("")));
        Some(Ok(Record {
            bytes: held.value,
            path,
            offset: held.at.offset,
            index: held.at.record,
            split_start: self.inner.split_start(held.split),
        }))
    }
}

/// The records of a [`Dataset`] decoded as `T` from container `C`; after an error it yields
/// nothing more. Decode errors name the file, byte offset, record index and feature key.
pub struct Values<T, C = TfExample>
where
    T: DecodeOwned<C> + Send + 'static,
    C: Container,
{
    inner: Pipeline<Typed<T, C>>,
}

impl<T, C> Values<T, C>
where
    T: DecodeOwned<C> + Send + 'static,
    C: Container,
{
    /// The position after the last value given; [`Dataset::resume`] continues from it.
    pub fn checkpoint(&self) -> Checkpoint {
        self.inner.checkpoint()
    }

    /// The records and byte ranges the bad-record policy skipped since the last call, each
    /// once, with its file, byte offset, length and reason. The reading threads run ahead of
    /// what is handed out, so a report can come before the records that precede it in the
    /// stream are given. Reports go to the policy's shared log, which the data set's iterators
    /// (and [`BadRecords::take_logged`](tfrecord_core::BadRecords::take_logged) on the policy
    /// passed in, when it had one) take from: each report is taken once.
    pub fn drain_skipped(&mut self) -> Vec<Skipped> {
        self.inner.skipped()
    }
}

impl<T, C> Iterator for Values<T, C>
where
    T: DecodeOwned<C> + Send + 'static,
    C: Container,
{
    type Item = Result<T>;

    fn next(&mut self) -> Option<Result<T>> {
        Some(self.inner.next()?.map(|l| l.value))
    }
}

/// The records of a [`Dataset`] decoded as `T` from container `C`, in [`ValueBatch`]es of a fixed
/// size (the last may be smaller). An error comes after the batch of the values before it, and
/// ends the stream. Decode errors name the file, byte offset, record index and feature key.
pub struct ValueBatches<T, C = TfExample>
where
    T: DecodeOwned<C> + Send + 'static,
    C: Container,
{
    inner: Pipeline<Typed<T, C>>,
    spares: Arc<Spares<T>>,
    size: usize,
    /// The error that came after the values of the last batch given.
    error: Option<Error>,
}

impl<T, C> ValueBatches<T, C>
where
    T: DecodeOwned<C> + Send + 'static,
    C: Container,
{
    /// The position after the last batch given; [`Dataset::resume`] continues from it (with
    /// batches or values alike).
    pub fn checkpoint(&self) -> Checkpoint {
        self.inner.checkpoint()
    }

    /// The records and byte ranges the bad-record policy skipped since the last call, each
    /// once, with its file, byte offset, length and reason. The reading threads run ahead of
    /// what is handed out, so a report can come before the records that precede it in the
    /// stream are given. Reports go to the policy's shared log, which the data set's iterators
    /// (and [`BadRecords::take_logged`](tfrecord_core::BadRecords::take_logged) on the policy
    /// passed in, when it had one) take from: each report is taken once.
    pub fn drain_skipped(&mut self) -> Vec<Skipped> {
        self.inner.skipped()
    }
}

impl<T, C> Iterator for ValueBatches<T, C>
where
    T: DecodeOwned<C> + Send + 'static,
    C: Container,
{
    type Item = Result<ValueBatch<T>>;

    fn next(&mut self) -> Option<Result<ValueBatch<T>>> {
        if let Some(e) = self.error.take() {
            return Some(Err(e));
        }
        let mut values = self.spares.vector(self.size);
        let res = self.inner.fill(&mut values, self.size);
        if values.is_empty() {
            self.spares.give(values);
            return res.err().map(Err);
        }
        self.error = res.err();
        Some(Ok(ValueBatch {
            values,
            spares: Arc::clone(&self.spares),
        }))
    }
}

/// Consecutive values of a [`ValueBatches`] stream: a slice of `T` (through `Deref`). Dropped, it
/// gives the values back for later records to be decoded into; [`into_vec`](Self::into_vec)
/// keeps them.
pub struct ValueBatch<T> {
    values: Vec<T>,
    spares: Arc<Spares<T>>,
}

impl<T> ValueBatch<T> {
    /// The values, kept (they are not given back for reuse).
    pub fn into_vec(mut self) -> Vec<T> {
        std::mem::take(&mut self.values)
    }
}

impl<T> std::ops::Deref for ValueBatch<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.values
    }
}

impl<T> std::ops::DerefMut for ValueBatch<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.values
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for ValueBatch<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.values).finish()
    }
}

impl<T> Drop for ValueBatch<T> {
    fn drop(&mut self) {
        if self.values.capacity() > 0 {
            self.spares.give(std::mem::take(&mut self.values));
        }
    }
}
