//! Blocks of records as they travel from the reading threads to the interleave, and what
//! turns a record's bytes into the value handed out ([`Decoder`]).

use std::marker::PhantomData;
use std::path::Path;

use tfrecord_core::{Container, DecodeOwned, Format};

use crate::error::{Error, Result};

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

/// Consecutive records of one split. `last`: the split has nothing after them (its end, or an
/// error, which is the last item).
pub(crate) struct Block<O> {
    pub(crate) items: Vec<Item<O>>,
    pub(crate) last: bool,
}

impl<O> Block<O> {
    /// A block holding only an error, ending the split.
    pub(crate) fn failed(err: Error, at: Start) -> Self {
        Block {
            items: vec![Item {
                value: Err(err),
                record: at.record,
                offset: at.offset,
                end: at.offset,
            }],
            last: true,
        }
    }
}

/// At most this many records in one block.
pub(crate) const BLOCK_RECORDS: usize = 256;
/// A block ends after the record that brings its payload bytes to this.
pub(crate) const BLOCK_BYTES: usize = 1 << 20;

/// What the reading threads turn each record's bytes into.
pub(crate) trait Decoder: Send + Sync + 'static {
    /// The decoded record.
    type Out: Send + 'static;
    /// Decoding costs enough to run apart from reading, on any thread ([`RawBlock`]); when
    /// false, records are decoded as they are read.
    const DEFERRED: bool;
    /// The container format records must have (`None`: any).
    const FORMAT: Option<Format>;
    /// Decodes one record.
    fn decode(&self, bytes: &[u8]) -> tfrecord_core::Result<Self::Out>;
}

/// Records as their bytes.
pub(crate) struct Raw;

impl Decoder for Raw {
    type Out = Vec<u8>;
    const DEFERRED: bool = false;
    const FORMAT: Option<Format> = None;
    fn decode(&self, bytes: &[u8]) -> tfrecord_core::Result<Vec<u8>> {
        Ok(bytes.to_vec())
    }
}

/// Records as values of a derived type `T` of container `C`.
pub(crate) struct Typed<T, C>(PhantomData<fn() -> (T, C)>);

impl<T, C> Typed<T, C> {
    pub(crate) fn new() -> Self {
        Typed(PhantomData)
    }
}

impl<T: DecodeOwned<C> + Send + 'static, C: Container> Decoder for Typed<T, C> {
    type Out = T;
    const DEFERRED: bool = true;
    const FORMAT: Option<Format> = Some(C::FORMAT);
    fn decode(&self, bytes: &[u8]) -> tfrecord_core::Result<T> {
        <T as tfrecord_core::Decode<'_, C>>::decode(bytes)
    }
}

/// A block of records read but not decoded yet: their payloads back to back, so that decoding
/// (the costly part) can run on another thread than reading.
pub(crate) struct RawBlock {
    data: Vec<u8>,
    /// Each record: where its payload ends in `data`, its index, offset and end offset.
    records: Vec<(usize, u64, u64, u64)>,
    /// The error that ended the split after these records, with where it happened.
    failure: Option<(Error, Start)>,
    last: bool,
}

impl RawBlock {
    /// An empty block.
    pub(crate) fn new() -> Self {
        RawBlock {
            data: Vec::new(),
            records: Vec::with_capacity(BLOCK_RECORDS),
            failure: None,
            last: false,
        }
    }

    /// Adds a record's payload.
    pub(crate) fn push(&mut self, payload: &[u8], record: u64, offset: u64, end: u64) {
        self.data.extend_from_slice(payload);
        self.records.push((self.data.len(), record, offset, end));
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

    /// Decodes every record; a decode error ends the block (and the split) there.
    pub(crate) fn decode<D: Decoder>(self, decoder: &D, path: &Path) -> Block<D::Out> {
        let mut items = Vec::with_capacity(self.records.len() + 1);
        let mut from = 0;
        for (to, record, offset, end) in self.records {
            let value = decoder.decode(&self.data[from..to]).map_err(|e| {
                Error::Record(
                    e.with_path(path.to_path_buf())
                        .with_offset(offset)
                        .with_record(record),
                )
            });
            from = to;
            let failed = value.is_err();
            items.push(Item {
                value,
                record,
                offset,
                end,
            });
            if failed {
                return Block { items, last: true };
            }
        }
        if let Some((err, at)) = self.failure {
            items.push(Item {
                value: Err(err),
                record: at.record,
                offset: at.offset,
                end: at.offset,
            });
        }
        Block {
            items,
            last: self.last,
        }
    }
}
