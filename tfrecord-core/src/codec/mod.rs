//! Typed encoding and decoding of records: the traits `#[derive(Example)]` and
//! `#[derive(SequenceExample)]` implement, and the machinery their generated code calls.
//!
//! A derived type implements [`Encode<C>`](Encode) and [`Decode<'de, C>`](Decode) for each
//! container `C` its dialect allows: [`TfExample`] (`tensorflow.Example`), [`OfRecord`]
//! (`oneflow.OFRecord`) or [`TfSequenceExample`] (`tensorflow.SequenceExample`). The typed
//! [`Reader`](crate::Reader) and [`Writer`](crate::Writer) take such types.
//!
//! Generated encoders compute the exact length first and write protobuf wire bytes straight
//! from the fields. Generated decoders walk the wire bytes once, match feature keys as bytes,
//! skip the features they do not ask for, and decode each list straight into its field; they
//! accept every valid protobuf encoding (packed and unpacked lists, split runs, map entries in
//! either order, repeated keys with the last one winning, unknown fields).

pub mod wire;

mod container;
mod dialect;
mod elem;
pub(crate) mod field;
pub(crate) mod keys;
mod message;
mod record;
mod sparse;
mod steps;
pub(crate) mod view;

pub use container::{
    Container, Decode, DecodeOwned, Encode, OfRecord, TfExample, TfSequenceExample,
};
pub use dialect::{Dialect, Of, Tf, TfLossy};
pub use elem::{DecodeElem, EncodeElem, RawValue};
pub use field::{DecodeField, EncodeField, FieldInfo, decode_one_into};
pub use keys::{KeyTable, flat_clash, key_clash};
pub use message::FeatureBytes;
pub(crate) use record::for_each_entry;
pub use record::*;
pub use sparse::{Sparse, check_sparse, put_sparse, sparse, sparse_entries_len};
pub use steps::{DecodeSteps, EncodeSteps, Ragged};
pub(crate) use steps::{canonical_step_values, for_each_step};
pub use view::{FeatureView, one_canonical};
