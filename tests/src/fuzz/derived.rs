//! Derived decoders: `#[derive(Example)]` and `#[derive(SequenceExample)]` types with many
//! field kinds (integers of every width, floats, strings, bytes borrowed and owned, lists,
//! arrays, shapes, optional and defaulted values, enums by name and by number, a flattened
//! struct, a sparse feature, feature lists and a ragged list).
//!
//! The input is one serialized message, decoded as [`Mixed`] from a `tf.train.Example` and from
//! an `OFRecord`, and as [`Clip`] from a `tf.train.SequenceExample`. Whatever decodes must
//! encode to bytes that decode to an equal value encoding to the same bytes. Values are
//! compared by their `Debug` text, which spells a float exactly and every NaN alike.

use std::borrow::Cow;

use tfrecord_core::{
    Decode, Encode, Example, OfRecord, Ragged, SequenceExample, Sparse, TfExample,
    TfSequenceExample,
};

use super::heap::{self, Bound};

/// The heap bound of one decode and round trip over `n` input bytes: 64 bytes per byte (a
/// one-byte value of a list becomes an 8-byte element or a 24-byte `String`, kept twice, and
/// the re-encoding), plus 64 KiB.
pub const DERIVED_BOUND: Bound = Bound {
    per_byte: 64,
    fixed: 64 << 10,
};

/// A colour, stored by its name.
#[derive(Example, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Color {
    /// `red`.
    #[example(rename = "red")]
    Red,
    /// `Green`.
    Green,
}

/// A level, stored as its discriminant.
#[derive(Example, Clone, Copy, Debug, PartialEq, Eq)]
#[example(repr = "int64")]
pub enum Level {
    /// 1.
    Low = 1,
    /// 7.
    High = 7,
}

/// Features flattened into [`Mixed`] under `inner/`.
#[derive(Example, Clone, Debug, PartialEq)]
pub struct Inner {
    /// An optional integer.
    pub x: Option<i64>,
    /// Strings.
    #[example(default)]
    pub tags: Vec<String>,
}

/// A `tf.train.Example` / `OFRecord` type with one field of each kind. Only `id` is required,
/// so that most records with an `id` decode.
#[derive(Example, Clone, Debug, PartialEq)]
pub struct Mixed<'a> {
    /// A required integer.
    pub id: i64,
    /// Narrow integers, range-checked.
    pub small: Option<i8>,
    /// `u16`.
    pub word: Option<u16>,
    /// `u64`, bit-preserving.
    pub big: Option<u64>,
    /// `bool`, 0 or 1.
    pub flag: Option<bool>,
    /// With a default.
    #[example(default = 5)]
    pub count: u32,
    /// A float.
    pub score: Option<f32>,
    /// A double, stored as a float in `tf.train.Example`.
    #[example(lossy)]
    pub ratio: Option<f64>,
    /// A string.
    pub name: Option<String>,
    /// Bytes borrowed from the record, under a key with a slash.
    #[example(key = "image/encoded")]
    pub image: Option<&'a [u8]>,
    /// A string borrowed from the record, with a default.
    #[example(default = "none")]
    pub note: Cow<'a, str>,
    /// A list of strings.
    #[example(default)]
    pub words: Vec<String>,
    /// A list of `i32`.
    #[example(default)]
    pub ints: Vec<i32>,
    /// A list of floats.
    #[example(default)]
    pub floats: Vec<f32>,
    /// Exactly two values.
    pub pair: Option<[i64; 2]>,
    /// Exactly 2 x 2 values, row-major, when present.
    #[example(shape = [2, 2])]
    pub grid: Option<Vec<u16>>,
    /// An enum by name.
    pub color: Option<Color>,
    /// An enum by number.
    pub level: Option<Level>,
    /// Features under `inner/`.
    #[example(flatten)]
    pub inner: Inner,
    /// A sparse feature: indices under `sp_idx`, values under `sp_val`.
    #[example(sparse(index = "sp_idx", value = "sp_val", size = [16]))]
    pub sp: Sparse<f32>,
    /// Not a feature.
    #[example(skip)]
    pub scratch: u8,
}

/// A `tf.train.SequenceExample` type: context features and feature lists.
#[derive(SequenceExample, Clone, Debug, PartialEq)]
pub struct Clip {
    /// A required context integer.
    pub id: i64,
    /// An optional context string.
    pub title: Option<String>,
    /// A context value with a default.
    #[example(default = 3)]
    pub version: u16,
    /// One integer per step.
    #[example(sequence, default)]
    pub frames: Vec<i64>,
    /// A list of strings per step.
    #[example(sequence, default)]
    pub words: Vec<Vec<String>>,
    /// Two floats per step.
    #[example(sequence)]
    pub points: Option<Vec<[f32; 2]>>,
    /// A ragged list of integers per step.
    #[example(sequence, default)]
    pub tokens: Ragged<i64>,
    /// Bytes per step.
    #[example(sequence, key = "frames/data", default)]
    pub data: Vec<Vec<u8>>,
}

/// Decodes `$data` as `$ty` from container `$c`; when it decodes, encodes it, decodes that,
/// and checks the two values and the two encodings are the same. (A macro: the second decode
/// borrows the re-encoding, which lives shorter than the input.)
macro_rules! round_trip {
    ($ty:ty, $c:ty, $data:expr, $what:expr) => {{
        let what: &str = $what;
        if let Ok(first) = <$ty as Decode<'_, $c>>::decode($data) {
            let bytes = <$ty as Encode<$c>>::encode_to_vec(&first);
            assert_eq!(
                bytes.len(),
                <$ty as Encode<$c>>::encoded_len(&first),
                "{what}: encoded_len"
            );
            let again = match <$ty as Decode<'_, $c>>::decode(&bytes) {
                Ok(v) => v,
                Err(e) => panic!("{what}: its own encoding does not decode: {e}\n{first:?}"),
            };
            assert_eq!(
                format!("{again:?}"),
                format!("{first:?}"),
                "{what}: decode, encode, decode changed the value"
            );
            assert!(
                <$ty as Encode<$c>>::encode_to_vec(&again) == bytes,
                "{what}: the value encodes to other bytes the second time"
            );
        }
    }};
}

/// The derived decoders agree with their own encodings on `data` (see the [module](self)
/// docs).
///
/// # Panics
/// When a round trip changes a value, a decoder panics, or the heap grows past
/// [`DERIVED_BOUND`].
pub fn derived(data: &[u8]) {
    heap::within("derived", data.len(), DERIVED_BOUND, || {
        round_trip!(Mixed<'_>, TfExample, data, "Mixed from tf.train.Example");
        round_trip!(Mixed<'_>, OfRecord, data, "Mixed from OFRecord");
        round_trip!(
            Clip,
            TfSequenceExample,
            data,
            "Clip from tf.train.SequenceExample"
        );
    });
}
