//! Blocks of records as they travel from the reading threads to the interleave, and what
//! turns a record's bytes into the value handed out ([`Decoder`]).

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use tfrecord_core::{BadRecords, Container, DecodeOwned, Format, Skipped};

use crate::error::{Error, Result};
use crate::spares::Spares;

/// Where reading a split starts or resumes: the record index and the byte offset of its frame
/// (in the decompressed stream).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Start {
    pub(crate) record: u64,
    pub(crate) offset: u64,
}

/// One record read from a split: its decoded value (or the error that ends the split), its
/// index, its frame's offset and the offset after it.
pub(crate) struct Item<O> {
    pub(crate) value: Result<O>,
    pub(crate) record: u64,
    pub(crate) offset: u64,
    pub(crate) end: u64,
}

/// Where a decoded record is: its index, its frame's offset and the offset after it.
#[derive(Clone, Copy)]
pub(crate) struct Place {
    pub(crate) record: u64,
    pub(crate) offset: u64,
    pub(crate) end: u64,
}

/// Decoded records of one split: their values side by side (so that a run of them moves into a
/// batch at once), each value's place, and the error that ends the split after them.
pub(crate) struct Items<O> {
    values: Vec<O>,
    places: Vec<Place>,
    failure: Option<(Error, Start)>,
}

impl<O> Items<O> {
    /// Room for `n` records.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Items {
            values: Vec::with_capacity(n),
            places: Vec::with_capacity(n),
            failure: None,
        }
    }

    /// How many records it holds (the error not counted).
    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }

    /// Adds a record.
    pub(crate) fn push(&mut self, value: O, place: Place) {
        self.values.push(value);
        self.places.push(place);
    }

    /// Ends the records with the error that ends the split, where its next record would have
    /// been.
    pub(crate) fn fail(&mut self, err: Error, at: Start) {
        self.failure = Some((err, at));
    }
}

/// Consecutive records of one split, decoded or still raw. `last`: the split has nothing after
/// them (its end, or an error, which is the last item).
///
/// What the bad-record policy skipped travels with the records, each report placed before the
/// record it came before (decoded items: `skipped`; raw records: [`RawBlock`]'s own), and is
/// charged to the data set's budget as the records are handed out, in stream order
/// ([`Cursor::next`]): the reading threads' readers have budgets of their own
/// ([`BadRecords::detached`]), so that how far they read ahead decides nothing.
pub(crate) struct Block<O> {
    pub(crate) contents: Contents<O>,
    pub(crate) last: bool,
    /// For [`Contents::Items`]: each report and the index of the item it comes before (the
    /// number of items for what comes after the last).
    pub(crate) skipped: Vec<(usize, Skipped)>,
}

/// What a block holds.
pub(crate) enum Contents<O> {
    /// Decoded records.
    Items(Items<O>),
    /// Records to decode as they are handed out, on the thread that takes them: the value is
    /// made just before it is used, and dropped soon after.
    Raw(RawBlock),
}

impl<O> Block<O> {
    /// A block holding only an error, ending the split.
    pub(crate) fn failed(err: Error, at: Start) -> Self {
        let mut items = Items::with_capacity(0);
        items.fail(err, at);
        Block {
            contents: Contents::Items(items),
            last: true,
            skipped: Vec::new(),
        }
    }

    /// The records, one at a time.
    pub(crate) fn into_cursor(self) -> Cursor<O> {
        match self.contents {
            Contents::Items(items) => Cursor::Items(ItemCursor {
                values: items.values.into_iter(),
                places: items.places.into_iter(),
                failure: items.failure,
                skipped: self.skipped.into(),
                given: 0,
            }),
            Contents::Raw(mut raw) => Cursor::Raw(RawCursor {
                skipped: std::mem::take(&mut raw.skipped).into(),
                block: raw,
                next: 0,
                from: 0,
            }),
        }
    }
}

/// The records of a block not handed out yet.
pub(crate) enum Cursor<O> {
    /// Decoded records.
    Items(ItemCursor<O>),
    /// Raw records, decoded by [`next`](Cursor::next).
    Raw(RawCursor),
}

/// The position in a block of decoded records.
pub(crate) struct ItemCursor<O> {
    values: std::vec::IntoIter<O>,
    places: std::vec::IntoIter<Place>,
    /// The error after the last value.
    failure: Option<(Error, Start)>,
    /// The reports not handed out, with the index of the item each comes before.
    skipped: VecDeque<(usize, Skipped)>,
    /// Items handed out.
    given: usize,
}

/// The position in a raw block.
pub(crate) struct RawCursor {
    block: RawBlock,
    /// The reports not handed out, with the index of the raw record each comes before.
    skipped: VecDeque<(usize, Skipped)>,
    next: usize,
    from: usize,
}

/// Moves the reports placed before index `upto` (and at it) to `out`.
#[inline]
fn due(skipped: &mut VecDeque<(usize, Skipped)>, upto: usize, out: &mut Vec<Skipped>) {
    if skipped.is_empty() {
        return;
    }
    while let Some((_, s)) = skipped.pop_front_if(|(at, _)| *at <= upto) {
        out.push(s);
    }
}

impl<O> Cursor<O> {
    /// Nothing at all.
    pub(crate) fn empty() -> Self {
        Cursor::Items(ItemCursor {
            values: Vec::new().into_iter(),
            places: Vec::new().into_iter(),
            failure: None,
            skipped: VecDeque::new(),
            given: 0,
        })
    }

    /// True when every record and report has been handed out.
    pub(crate) fn is_empty(&self) -> bool {
        match self {
            Cursor::Items(c) => c.values.len() == 0 && c.failure.is_none() && c.skipped.is_empty(),
            Cursor::Raw(c) => {
                c.next >= c.block.records.len() && c.block.failure.is_none() && c.skipped.is_empty()
            }
        }
    }

    /// The next record, decoding it if it is raw; a decode error ends the block. What the
    /// bad-record policy skipped before it (or, when there is no record left, after the last)
    /// is moved to `skipped`, in order, for the caller to charge before the record is used.
    #[inline(always)] // the decoded records' path: each value moved once, in its caller
    pub(crate) fn next<D: Decoder<Out = O>>(
        &mut self,
        decoder: &D,
        path: &Path,
        skipped: &mut Vec<Skipped>,
    ) -> Option<Item<O>> {
        match self {
            Cursor::Items(c) => {
                let more = c.values.len() > 0;
                if !c.skipped.is_empty() {
                    due(
                        &mut c.skipped,
                        if more { c.given } else { usize::MAX },
                        skipped,
                    );
                }
                if !more {
                    let (err, at) = c.failure.take()?;
                    return Some(Item {
                        value: Err(err),
                        record: at.record,
                        offset: at.offset,
                        end: at.offset,
                    });
                }
                c.given += 1;
                let (value, place) = (c.values.next()?, c.places.next()?);
                Some(Item {
                    value: Ok(value),
                    record: place.record,
                    offset: place.offset,
                    end: place.end,
                })
            }
            Cursor::Raw(c) => c.next(decoder, path, skipped),
        }
    }

    /// Moves the values of the next decoded records into `out`, at most `max` of them, and
    /// stops before one that a report of the bad-record policy comes before: how many moved
    /// and the place of the last. `None` when none can move so (raw records, a report due, or
    /// no value left), for [`next`](Self::next) to hand out what comes next.
    pub(crate) fn take_run(&mut self, max: usize, out: &mut Vec<O>) -> Option<(usize, Place)> {
        let Cursor::Items(c) = self else {
            return None;
        };
        let free = c
            .skipped
            .front()
            .map_or(usize::MAX, |&(at, _)| at.saturating_sub(c.given));
        let n = max.min(c.values.len()).min(free);
        if n == 0 {
            return None;
        }
        out.extend(c.values.by_ref().take(n));
        c.given += n;
        let last = c.places.nth(n - 1)?;
        Some((n, last))
    }
}

impl RawCursor {
    /// As [`Cursor::next`], decoding each record as it is handed out.
    fn next<D: Decoder>(
        &mut self,
        decoder: &D,
        path: &Path,
        skipped: &mut Vec<Skipped>,
    ) -> Option<Item<D::Out>> {
        let c = self;
        while let Some(&(to, record, offset, end)) = c.block.records.get(c.next) {
            due(&mut c.skipped, c.next, skipped);
            let bytes = &c.block.data[c.from..to];
            let value = decode_or_skip(decoder, bytes, path, record, offset, end - offset);
            c.next += 1;
            c.from = to;
            let value = match value {
                Ok(Decoded::Value(v)) => Ok(v),
                Ok(Decoded::Skipped(s)) => {
                    skipped.push(s);
                    continue;
                }
                Err(e) => {
                    c.next = c.block.records.len();
                    c.block.failure = None;
                    c.skipped.clear();
                    Err(e)
                }
            };
            return Some(Item {
                value,
                record,
                offset,
                end,
            });
        }
        due(&mut c.skipped, usize::MAX, skipped);
        let (err, at) = c.block.failure.take()?;
        Some(Item {
            value: Err(err),
            record: at.record,
            offset: at.offset,
            end: at.offset,
        })
    }
}

/// A record decoded, or skipped because it does not decode.
pub(crate) enum Decoded<O> {
    /// Its value.
    Value(O),
    /// The report of its skip, for the caller to charge ([`BadRecords::charge_skipped`]).
    Skipped(Skipped),
}

/// Decodes one record (its frame `frame_len` bytes long); its report when it does not decode
/// and the decoder's bad-record policy skips it ([`Decoder::undecodable`]).
pub(crate) fn decode_or_skip<D: Decoder>(
    decoder: &D,
    bytes: &[u8],
    path: &Path,
    record: u64,
    offset: u64,
    frame_len: u64,
) -> Result<Decoded<D::Out>> {
    match decoder.decode(bytes) {
        Ok(v) => Ok(Decoded::Value(v)),
        Err(e) => decoder
            .undecodable(e, path, record, offset, frame_len)
            .map(Decoded::Skipped),
    }
}

/// Decodes one record, locating an error at the record.
pub(crate) fn decode<D: Decoder>(
    decoder: &D,
    bytes: &[u8],
    path: &Path,
    record: u64,
    offset: u64,
) -> Result<D::Out> {
    decoder
        .decode(bytes)
        .map_err(|e| Error::at_record(e, path, record, offset))
}

/// At most this many records in one block.
pub(crate) const BLOCK_RECORDS: usize = 256;
/// A block ends after the record that brings its payload bytes to this.
pub(crate) const BLOCK_BYTES: usize = 1 << 20;

/// What the reading threads turn each record's bytes into.
pub(crate) trait Decoder: Send + Sync + 'static {
    /// The decoded record.
    type Out: Send + 'static;
    /// Decoding costs enough to run apart from reading ([`RawBlock`]): on one thread, each
    /// record is decoded as it is handed out; when false, records are decoded as they are
    /// read.
    const DEFERRED: bool;
    /// With several threads, the workers decode (in parallel); when false they only read, and
    /// the caller's thread decodes each record as it hands it out (for copies of the bytes,
    /// which cost less than handing an allocation from one thread to another).
    const ON_WORKERS: bool;
    /// The container format records must have (`None`: any).
    const FORMAT: Option<Format>;
    /// Decodes one record.
    fn decode(&self, bytes: &[u8]) -> tfrecord_core::Result<Self::Out>;

    /// Decodes one record into `value`, reusing what it holds where it can.
    fn decode_into(&self, value: &mut Self::Out, bytes: &[u8]) -> tfrecord_core::Result<()> {
        *value = self.decode(bytes)?;
        Ok(())
    }

    /// A record that did not decode (`err`), whose frame starts at `offset` and is `frame_len`
    /// bytes long: the report of its skip when the bad-record policy skips it (to be charged
    /// to the budget where the record would have been handed out), else the error that ends
    /// its split. The default fails, locating `err` at the record.
    ///
    /// # Errors
    /// The error that ends the split.
    fn undecodable(
        &self,
        err: tfrecord_core::Error,
        path: &Path,
        record: u64,
        offset: u64,
        frame_len: u64,
    ) -> Result<Skipped> {
        let _ = frame_len;
        Err(Error::at_record(err, path, record, offset))
    }

    /// Moves up to `n` values of records already handed out into `into`, for the next records
    /// to be decoded into (the default keeps none).
    fn spares(&self, n: usize, into: &mut Vec<Self::Out>) {
        let _ = (n, into);
    }

    /// Whether the decoder decodes into values given back ([`spares`](Self::spares)), which
    /// is done best a block at a time, in the block's own places.
    fn reuses(&self) -> bool {
        false
    }

    /// Whether records are decoded on the caller's thread as they leave (behind a shuffle
    /// buffer when `buffered`, and on `threads` threads), rather than as they are read.
    fn late(&self, threads: usize, buffered: bool) -> bool {
        // Values decoded on a worker and freed on the caller's thread make the allocator's
        // arenas contend (glibc: several times slower on two threads than on one): with
        // worker threads, they read and check the records' bytes, and the caller decodes each
        // as it leaves, as it does behind a shuffle buffer.
        Self::DEFERRED && (threads > 1 || buffered)
    }
}

/// Records as their bytes.
pub(crate) struct Raw;

impl Decoder for Raw {
    type Out = Vec<u8>;
    const DEFERRED: bool = false;
    const ON_WORKERS: bool = false;
    const FORMAT: Option<Format> = None;
    fn decode(&self, bytes: &[u8]) -> tfrecord_core::Result<Vec<u8>> {
        // Room for the next power of two, so that a buffer reused for a longer record is
        // rarely grown again.
        let room = bytes.len().next_power_of_two();
        let mut buf = SPARE
            .with(|spare| spare.borrow_mut().pop())
            .unwrap_or_else(|| Vec::with_capacity(room));
        if buf.capacity() < bytes.len() {
            buf.reserve_exact(room);
        }
        buf.extend_from_slice(bytes);
        Ok(buf)
    }
}

/// Most buffers kept for reuse on one thread: a block's worth.
const SPARE_BUFFERS: usize = BLOCK_RECORDS;
/// Larger buffers are not kept (so that at most 4 MiB stay with a thread).
const SPARE_CAPACITY: usize = 16 << 10;

thread_local! {
    /// Record buffers done with on this thread, for [`Raw`] to fill again: a buffer of bytes
    /// that was just decoded is in the cache, and reusing it saves an allocation and a free.
    static SPARE: std::cell::RefCell<Vec<Vec<u8>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Keeps a record buffer this thread is done with for [`Raw`] to reuse.
pub(crate) fn recycle(mut buf: Vec<u8>) {
    if buf.capacity() > SPARE_CAPACITY {
        return;
    }
    buf.clear();
    SPARE.with(|spare| {
        let mut spare = spare.borrow_mut();
        if spare.len() < SPARE_BUFFERS {
            spare.push(buf);
        }
    });
}

/// Records as values of a derived type `T` of container `C`, decoded into the values of
/// earlier records when they come back ([`Spares`]).
/// A record that does not decode is skipped when `bad` skips damage, and its report charged
/// where it would have been handed out: `bad` here only makes the reports (a budget of its
/// own, without limit).
pub(crate) struct Typed<T, C> {
    spares: Option<Arc<Spares<T>>>,
    bad: BadRecords,
    container: PhantomData<fn() -> C>,
}

impl<T, C> Typed<T, C> {
    /// Each record into a new value.
    pub(crate) fn new(bad: &BadRecords) -> Self {
        Typed {
            spares: None,
            bad: reporting(bad),
            container: PhantomData,
        }
    }

    /// Into the values `spares` keeps, when it has some.
    pub(crate) fn reusing(spares: Arc<Spares<T>>, bad: &BadRecords) -> Self {
        Typed {
            spares: Some(spares),
            bad: reporting(bad),
            container: PhantomData,
        }
    }
}

/// A policy that skips records that do not decode when `bad` does, without limit: it only
/// makes the reports, which are charged to `bad` in stream order.
fn reporting(bad: &BadRecords) -> BadRecords {
    if bad.skips() {
        BadRecords::skip(u64::MAX)
    } else {
        BadRecords::fail()
    }
}

impl<T: DecodeOwned<C> + Send + 'static, C: Container> Decoder for Typed<T, C> {
    type Out = T;
    const DEFERRED: bool = true;
    const ON_WORKERS: bool = true;
    const FORMAT: Option<Format> = Some(C::FORMAT);
    fn decode(&self, bytes: &[u8]) -> tfrecord_core::Result<T> {
        <T as tfrecord_core::Decode<'_, C>>::decode(bytes)
    }

    fn decode_into(&self, value: &mut T, bytes: &[u8]) -> tfrecord_core::Result<()> {
        <T as tfrecord_core::Decode<'_, C>>::decode_into(value, bytes)
    }

    fn undecodable(
        &self,
        err: tfrecord_core::Error,
        path: &Path,
        record: u64,
        offset: u64,
        frame_len: u64,
    ) -> Result<Skipped> {
        self.bad
            .skip_undecodable(Some(path), offset, frame_len, record, err)
            .map_err(Error::Record)
    }

    fn spares(&self, n: usize, into: &mut Vec<T>) {
        if let Some(spares) = &self.spares {
            spares.take(n, into);
        }
    }

    fn reuses(&self) -> bool {
        self.spares.is_some()
    }

    fn late(&self, threads: usize, buffered: bool) -> bool {
        // Values that come back are decoded into on whichever thread decodes, a block at a
        // time in the block's places: nothing is allocated on one thread and freed on another,
        // so the workers decode, and a shuffle buffer holds the values (measured faster than
        // holding bytes and decoding each as it leaves). Under a policy that skips records
        // that do not decode, every record is decoded as it is read: a skipped record then
        // leaves the stream before the interleave and the shuffle buffer, as it does on one
        // thread and in batches, so the order is one whatever the threads and the batching.
        // A value that owns no heap memory (no drop glue: numbers and arrays of them) costs
        // the allocator nothing on any thread, and is smaller than its record's bytes, so the
        // workers decode it and a shuffle buffer holds it.
        self.spares.is_none()
            && !self.bad.skips()
            && std::mem::needs_drop::<T>()
            && (threads > 1 || buffered)
    }
}

/// The buffers of raw blocks done with, for new blocks to fill again: a block is usually
/// filled on one thread and emptied on another, and a buffer of that size freed on the other
/// thread goes back to the allocator's arena of the first (glibc: trimmed, and faulted in again
/// on the next block). At most [`KEPT_BLOCK_BUFFERS`] buffers of at most
/// [`KEPT_BLOCK_CAPACITY`] bytes are kept (4 MiB in all, for the life of the process).
static BLOCK_BUFFERS: Mutex<Vec<BlockBuffers>> = Mutex::new(Vec::new());

type BlockBuffers = (Vec<u8>, Vec<(usize, u64, u64, u64)>);

/// Most block buffers kept: about as many as blocks in flight on two threads.
const KEPT_BLOCK_BUFFERS: usize = 16;
/// Larger block buffers are not kept (blocks of larger records cost one allocation over more
/// bytes).
const KEPT_BLOCK_CAPACITY: usize = 256 << 10;

impl Drop for RawBlock {
    fn drop(&mut self) {
        if self.data.capacity() > KEPT_BLOCK_CAPACITY || self.data.capacity() == 0 {
            return;
        }
        let mut data = std::mem::take(&mut self.data);
        let mut records = std::mem::take(&mut self.records);
        data.clear();
        records.clear();
        let mut kept = BLOCK_BUFFERS.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() < KEPT_BLOCK_BUFFERS {
            kept.push((data, records));
        }
    }
}

/// A block of records read but not decoded yet: their payloads back to back, so that decoding
/// (the costly part) can run on another thread than reading, or just before each is used.
pub(crate) struct RawBlock {
    data: Vec<u8>,
    /// Each record: where its payload ends in `data`, its index, offset and end offset.
    records: Vec<(usize, u64, u64, u64)>,
    /// The error that ended the split after these records, with where it happened.
    failure: Option<(Error, Start)>,
    last: bool,
    /// What the bad-record policy skipped, each with the index of the record it comes before.
    pub(crate) skipped: Vec<(usize, Skipped)>,
}

impl RawBlock {
    /// An empty block.
    pub(crate) fn new() -> Self {
        let kept = BLOCK_BUFFERS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let (data, records) = kept.unwrap_or_else(|| {
            (
                Vec::with_capacity(64 << 10),
                Vec::with_capacity(BLOCK_RECORDS),
            )
        });
        RawBlock {
            data,
            records,
            failure: None,
            last: false,
            skipped: Vec::new(),
        }
    }

    /// Adds a record's payload, placed by [`place_last`](Self::place_last).
    pub(crate) fn push(&mut self, payload: &[u8]) {
        self.data.extend_from_slice(payload);
        self.records.push((self.data.len(), 0, 0, 0));
    }

    /// Places the record added last: its index, frame offset and the offset after it.
    pub(crate) fn place_last(&mut self, record: u64, offset: u64, end: u64) {
        if let Some(last) = self.records.last_mut() {
            (last.1, last.2, last.3) = (record, offset, end);
        }
    }

    /// How many records and payload bytes it holds.
    pub(crate) fn size(&self) -> (usize, usize) {
        (self.records.len(), self.data.len())
    }

    /// True when the split ends with this block.
    pub(crate) fn is_last(&self) -> bool {
        self.last
    }

    /// Ends the split after these records: at its end (`None`) or with an error.
    pub(crate) fn end(&mut self, failure: Option<(Error, Start)>) {
        self.failure = failure;
        self.last = true;
    }

    /// The block as the interleave gets it: decoded at once when the decoder decodes into
    /// values given back ([`Decoder::reuses`]: a block at a time, in place), else raw, each
    /// record decoded as it is handed out (just before it is used).
    pub(crate) fn hand_out<D: Decoder>(self, decoder: &D, path: &Path) -> Block<D::Out> {
        if decoder.reuses() {
            return self.decode(decoder, path);
        }
        let last = self.last;
        Block {
            contents: Contents::Raw(self),
            last,
            skipped: Vec::new(),
        }
    }

    /// Decodes every record; a decode error ends the block (and the split) there.
    pub(crate) fn decode<D: Decoder>(mut self, decoder: &D, path: &Path) -> Block<D::Out> {
        let n = self.records.len();
        let mut items = Items::with_capacity(n);
        // The values given back are moved into their places first and decoded into there.
        decoder.spares(n, &mut items.values);
        let mut from = 0;
        // The place the next record decodes into: records skipped under the bad-record policy
        // leave theirs to the next one.
        let mut k = 0;
        // The reports, placed before the items of the records they came before.
        let mut raw_skipped = std::mem::take(&mut self.skipped).into_iter().peekable();
        let mut skipped = Vec::new();
        for (r, &(to, record, offset, end)) in self.records.iter().enumerate() {
            while let Some((_, s)) = raw_skipped.next_if(|(at, _)| *at <= r) {
                skipped.push((k, s));
            }
            let bytes = &self.data[from..to];
            from = to;
            let res = match items.values.get_mut(k) {
                Some(v) => decoder.decode_into(v, bytes),
                None => decoder.decode(bytes).map(|v| items.values.push(v)),
            };
            if let Err(e) = res {
                match decoder.undecodable(e, path, record, offset, end - offset) {
                    Ok(report) => {
                        skipped.push((k, report));
                        continue;
                    }
                    Err(err) => {
                        items.values.truncate(k);
                        items.fail(err, Start { record, offset });
                        return Block {
                            contents: Contents::Items(items),
                            last: true,
                            skipped,
                        };
                    }
                }
            }
            items.places.push(Place {
                record,
                offset,
                end,
            });
            k += 1;
        }
        // Values given back that no record took.
        items.values.truncate(k);
        skipped.extend(raw_skipped.map(|(_, s)| (k, s)));
        if let Some((err, at)) = self.failure.take() {
            items.fail(err, at);
        }
        Block {
            contents: Contents::Items(items),
            last: self.last,
            skipped,
        }
    }
}
