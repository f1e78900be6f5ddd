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

mod elem;
pub(crate) mod field;
mod record;
mod sparse;
mod steps;

pub use elem::{DecodeElem, EncodeElem, Raw};
pub use field::{
    Chunk, DecodeField, EncodeField, FeatureView, FieldError, Values, decode_feature, one_usual,
};
pub use record::*;
pub use sparse::{Sparse, put_sparse, sparse, sparse_entries_len};
pub(crate) use steps::usual_step_values;
pub use steps::{DecodeSteps, EncodeSteps, Ragged};

use crate::compression::Format;
use crate::error::Result;

/// The kind of value list a feature holds: the member of the `Feature` oneof.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ListKind {
    /// `bytes_list`.
    Bytes,
    /// `float_list`.
    Float,
    /// `double_list` (OFRecord only).
    Double,
    /// `int32_list` (OFRecord only).
    Int32,
    /// `int64_list`.
    Int64,
}

impl ListKind {
    /// The protobuf field name: `bytes_list`, `float_list`, ...
    pub fn name(self) -> &'static str {
        match self {
            ListKind::Bytes => "bytes_list",
            ListKind::Float => "float_list",
            ListKind::Double => "double_list",
            ListKind::Int32 => "int32_list",
            ListKind::Int64 => "int64_list",
        }
    }

    /// Whether list values are packed scalars (everything but bytes).
    pub fn is_packed(self) -> bool {
        !matches!(self, ListKind::Bytes)
    }
}

/// A feature vocabulary: which list kinds exist and their numbers in the `Feature` oneof.
pub trait Dialect: 'static {
    /// `tf.train.Example` or `OFRecord`, for messages.
    const NAME: &'static str;
    /// The oneof field number of a list kind, `None` when the dialect lacks the kind.
    fn tag(kind: ListKind) -> Option<u32>;
    /// The list kind of a oneof field number.
    fn kind(tag: u32) -> Option<ListKind>;
}

/// TensorFlow's `tensorflow.Feature`: bytes (1), float (2), int64 (3).
#[derive(Debug)]
pub enum Tf {}

impl Dialect for Tf {
    const NAME: &'static str = "tf.train.Example";
    #[inline]
    fn tag(kind: ListKind) -> Option<u32> {
        match kind {
            ListKind::Bytes => Some(1),
            ListKind::Float => Some(2),
            ListKind::Int64 => Some(3),
            ListKind::Double | ListKind::Int32 => None,
        }
    }
    #[inline]
    fn kind(tag: u32) -> Option<ListKind> {
        match tag {
            1 => Some(ListKind::Bytes),
            2 => Some(ListKind::Float),
            3 => Some(ListKind::Int64),
            _ => None,
        }
    }
}

/// `tf.train.Example` for fields that opted in to lossy narrowing with `#[example(lossy)]`:
/// the same feature kinds as [`Tf`], plus `f64` stored as a float.
#[derive(Debug)]
pub enum TfLossy {}

impl Dialect for TfLossy {
    const NAME: &'static str = "tf.train.Example";
    #[inline]
    fn tag(kind: ListKind) -> Option<u32> {
        Tf::tag(kind)
    }
    #[inline]
    fn kind(tag: u32) -> Option<ListKind> {
        Tf::kind(tag)
    }
}

/// OneFlow's `oneflow.Feature`: bytes (1), float (2), double (3), int32 (4), int64 (5).
#[derive(Debug)]
pub enum Of {}

impl Dialect for Of {
    const NAME: &'static str = "OFRecord";
    #[inline]
    fn tag(kind: ListKind) -> Option<u32> {
        Some(match kind {
            ListKind::Bytes => 1,
            ListKind::Float => 2,
            ListKind::Double => 3,
            ListKind::Int32 => 4,
            ListKind::Int64 => 5,
        })
    }
    #[inline]
    fn kind(tag: u32) -> Option<ListKind> {
        match tag {
            1 => Some(ListKind::Bytes),
            2 => Some(ListKind::Float),
            3 => Some(ListKind::Double),
            4 => Some(ListKind::Int32),
            5 => Some(ListKind::Int64),
            _ => None,
        }
    }
}

/// A record message type that typed values are encoded as.
pub trait Container: 'static {
    /// The feature vocabulary of the message.
    type Dialect: Dialect;
    /// The framing its files use.
    const FORMAT: Format;
    /// The protobuf message name, for error messages.
    const MESSAGE: &'static str;
}

/// `tensorflow.Example` in TFRecord files.
#[derive(Debug)]
pub enum TfExample {}

impl Container for TfExample {
    type Dialect = Tf;
    const FORMAT: Format = Format::TfRecord;
    const MESSAGE: &'static str = "tensorflow.Example";
}

/// `tensorflow.SequenceExample` in TFRecord files.
#[derive(Debug)]
pub enum TfSequenceExample {}

impl Container for TfSequenceExample {
    type Dialect = Tf;
    const FORMAT: Format = Format::TfRecord;
    const MESSAGE: &'static str = "tensorflow.SequenceExample";
}

/// `oneflow.OFRecord` in OFRecord files.
#[derive(Debug)]
pub enum OfRecord {}

impl Container for OfRecord {
    type Dialect = Of;
    const FORMAT: Format = Format::OfRecord;
    const MESSAGE: &'static str = "oneflow.OFRecord";
}

/// A typed value that encodes as one record message of container `C`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be encoded as a {C} record",
    note = "derive it with `#[derive(Example)]` (tf.train.Example and OFRecord) or \
            `#[derive(SequenceExample)]`; a `dialect` attribute limits which containers it supports"
)]
pub trait Encode<C: Container = TfExample> {
    /// The exact length of the encoded message.
    fn encoded_len(&self) -> usize;

    /// Appends the encoded message to `buf`.
    fn encode_raw(&self, buf: &mut Vec<u8>);

    /// The encoded message in a new buffer of exactly the right size.
    fn encode_to_vec(&self) -> Vec<u8> {
        let mut buf = Vec::with_capacity(self.encoded_len());
        self.encode_raw(&mut buf);
        buf
    }
}

/// A typed value that decodes from one record message of container `C`, possibly borrowing
/// from the record's bytes for `'de`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be decoded from a {C} record",
    note = "derive it with `#[derive(Example)]` (tf.train.Example and OFRecord) or \
            `#[derive(SequenceExample)]`; a `dialect` attribute limits which containers it supports"
)]
pub trait Decode<'de, C: Container = TfExample>: Sized {
    /// Decodes one serialized message.
    ///
    /// # Errors
    /// Malformed protobuf, a missing required feature, a wrong kind or count, a value out of
    /// range; the error names the feature key.
    fn decode(bytes: &'de [u8]) -> Result<Self>;
}

/// A type that decodes from container `C` without borrowing: `for<'de> Decode<'de, C>`.
pub trait DecodeOwned<C: Container = TfExample>: for<'de> Decode<'de, C> {}

impl<C: Container, T: for<'de> Decode<'de, C>> DecodeOwned<C> for T {}
