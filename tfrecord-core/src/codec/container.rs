//! The record messages typed values are encoded as (`tensorflow.Example`,
//! `tensorflow.SequenceExample`, `oneflow.OFRecord`), and the [`Encode`] / [`Decode`] traits
//! derived types implement for them.

use super::dialect::{Dialect, Of, Tf};
use crate::compression::Format;
use crate::error::Result;

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

    /// Checks that the value fits the layout its type declares (a fixed `shape`'s count of
    /// values, whole rows of a `[-1, ..]` shape, a sparse field's index lists: one per index
    /// key, one index per value, each inside the declared size), as decoding checks it: the writers call it
    /// before encoding, so that a record that TensorFlow's parser and this crate's readers
    /// would refuse is not written. The default accepts every value.
    ///
    /// # Errors
    /// A field whose values do not fit, naming it.
    fn check(&self) -> Result<()> {
        Ok(())
    }

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

    /// Decodes one serialized message into `self`, giving `self` the value
    /// [`decode`](Self::decode) would return while reusing the buffers it holds (the
    /// derived decoders keep the allocations of `String`, `Vec<u8>` and `Vec` fields, and of
    /// the steps of `Vec<Vec<_>>` feature lists, when the record is in the layout every
    /// writer produces). The default decodes a new value and moves it in.
    ///
    /// On an error `self` holds some valid value of the type, not necessarily the old one.
    ///
    /// # Errors
    /// As [`decode`](Self::decode).
    #[inline]
    fn decode_into(&mut self, bytes: &'de [u8]) -> Result<()> {
        *self = Self::decode(bytes)?;
        Ok(())
    }
}

/// A type that decodes from container `C` without borrowing: `for<'de> Decode<'de, C>`.
pub trait DecodeOwned<C: Container = TfExample>: for<'de> Decode<'de, C> {}

impl<C: Container, T: for<'de> Decode<'de, C>> DecodeOwned<C> for T {}
