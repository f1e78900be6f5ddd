//! TensorFlow TFRecord / `tf.train.Example` and OneFlow OFRecord, in Rust.
//!
//! This crate holds the parts every other piece stands on:
//!
//! - **Framing** ([`RecordReader`], [`RecordWriter`]): TFRecord
//!   (`u64 LE length | masked CRC32C of the length | data | masked CRC32C of the data`, both
//!   checksums verified by default, CRC32C in hardware) and OneFlow's OFRecord
//!   (`i64 LE length | data`).
//! - **Parts of files and damaged files**: byte-range splits of a file
//!   ([`RecordReader::open_range`], [`split_range`]) that together read every record once; a
//!   policy for damaged records ([`BadRecords`]: fail, skip, or resynchronize after broken
//!   framing, within a budget) that reports everything it skips ([`Skipped`]); and index files
//!   ([`index`]) in the `offset size` text format of DALI and the PyPI `tfrecord` package.
//! - **Compression** ([`Compression`]): GZIP and ZLIB over the whole stream, as TensorFlow's
//!   `TFRecordOptions` does it.
//! - **Protobuf types** ([`proto`]): `tensorflow.Example`, `tensorflow.SequenceExample` and
//!   `oneflow.OFRecord`, generated with prost; decoding accepts every valid protobuf encoding.
//!   [`proto::bytes_keys`] holds the same messages with their feature keys as bytes, for the
//!   records TensorFlow writes and reads whose keys are not UTF-8 (which prost refuses).
//! - **JSON** ([`json`]): the canonical proto3 JSON mapping of those messages, as protobuf's own
//!   `json_format` writes and reads it.
//! - **Text** ([`text`]): the protobuf text format, as `text_format.MessageToString` writes it.
//! - **Conversion** ([`convert`]) between `tf.train.Example` and `OFRecord`.
//! - **Parsing into tensors** ([`parse`]): batches of records to dense, sparse and ragged
//!   tensors, exactly as `tf.io.parse_example` and `tf.io.parse_sequence_example` return them.
//!
//! # Deriving records
//!
//! `#[derive(Example)]` on a struct generates [`Encode`] and [`Decode`] for
//! `tf.train.Example` ([`TfExample`]) and `OFRecord` ([`OfRecord`]); `#[derive(SequenceExample)]`
//! generates them for `tf.train.SequenceExample` ([`TfSequenceExample`]). The typed [`Reader`]
//! and [`Writer`] take such types. Each field is one feature:
//!
//! | Rust field | `tf.train.Example` feature | `OFRecord` feature |
//! | --- | --- | --- |
//! | `i64`, `i32`, `i16`, `i8`, `u32`, `u16`, `u8`, `bool` | `int64_list` of 1 (narrow types range-checked on decode; `bool` is 0/1) | `i32` in `int32_list`, others `int64_list` |
//! | `u64` | `int64_list` of 1, bit-preserving (`u64::MAX` is stored as -1) | same |
//! | `f32` | `float_list` of 1 | `float_list` |
//! | `f64` | a compile error, unless the field has `#[example(lossy)]` (stored as the nearest `f32`) | `double_list` |
//! | `String` (UTF-8 checked on decode), `Vec<u8>`, `bytes::Bytes` | `bytes_list` of 1 | `bytes_list` |
//! | `Vec<T>` of a value above (`Vec<String>`, `Vec<Vec<u8>>`, ...; not `Vec<u8>`, which is bytes) | a list of any length (`VarLenFeature`); absent is an empty `Vec`, as `tf.io.parse_example` reads it (with `#[example(required)]`: an error) | same |
//! | `[T; N]` | exactly N values (count checked) | same |
//! | `Vec<T>` with `#[example(shape = [a, b])]` | exactly a*b values, row-major (`FixedLenFeature` with a shape) | same |
//! | `Vec<T>` with `#[example(shape = [-1, a])]` | any number of rows of a values, flat and row-major; absent is empty (`FixedLenSequenceFeature([a], allow_missing=True)` in `parse_example`, tensorflow-io's `FixedLenFeature([None, a])`) | same |
//! | `Option<T>` | absent is `None`; `None` is not written (`Option<Vec<T>>` tells an absent list from an empty one) | same |
//! | with `#[example(default = 5)]` or `#[example(default)]` | absent takes the literal (`FixedLenFeature`'s `default_value`) or `Default::default()` | same |
//! | [`Sparse<T>`](Sparse) with `#[example(sparse(index = "idx", value = "val", size = [N]))]` | an `int64_list` of indices per index key and a list of values (`tf.io.SparseFeature`); indices checked against `size` | same |
//! | a unit-only `enum` deriving `Example` | `bytes_list` of the variant name, or `int64_list` of the discriminant with `#[example(repr = "int64")]` | same |
//! | a struct deriving `Example`, with `#[example(flatten)]` | its features inline, keyed `field/inner` (the TFDS convention) | same |
//! | `&'a [u8]`, `&'a str`, `Cow<'a, [u8]>`, `Cow<'a, str>` | `bytes_list` of 1, decoded without copying from the record buffer | same |
//!
//! In a `SequenceExample`, a field marked `#[example(sequence)]` of type `Vec<S>` is a feature
//! list with one feature per step, each step of type `S` as above (`Vec<i64>` for one value
//! per step, `Vec<Vec<i64>>` for a list per step); [`Ragged<T>`](Ragged) holds a list per step
//! flat, as `tf.RaggedTensor` does (the same wire bytes as `Vec<Vec<T>>`, without one
//! allocation per step); other fields are context features. An absent feature list of lists
//! (`Vec<Vec<T>>`, `Ragged<T>`: `VarLenFeature` in `sequence_features`) has zero steps, unless
//! the field is `required`; an absent list of fixed steps (`FixedLenSequenceFeature`) is an
//! error, unless the field has `default` (`allow_missing`) or is an `Option`.
//!
//! Every scalar, `[T; N]` and `Vec<T>` with `shape` is required: absent is an error naming the
//! key and the field (`bad feature "label": required feature is missing (field
//! `Mnist::label`)`), unless the field is an `Option` or has a `default`. A feature present
//! with no list set (`tf.train.Feature()`) is absent, as `tf.io.parse_example` reads it.
//!
//! Attributes, all written `#[example(...)]`:
//!
//! | where | attribute | meaning |
//! | --- | --- | --- |
//! | struct | `rename_all = "camelCase"` | derive keys from field names (`lowercase`, `UPPERCASE`, `PascalCase`, `camelCase`, `snake_case`, `SCREAMING_SNAKE_CASE`, `kebab-case`, `SCREAMING-KEBAB-CASE`) |
//! | struct | `dialect = "tf"`, `"ofrecord"`, `"both"` | which containers the type supports (default both) |
//! | struct | `deny_unknown_keys` | decoding fails on a feature the type does not read |
//! | struct, enum | `crate = "path"` | where `tfrecord_core` is, for re-exports |
//! | struct | `schema = "specs/mnist.toml"`, `record = "Mnist"` | check the struct against a record of a TOML spec at compile time (path relative to the crate root; record defaults to the struct's name): a missing or extra feature, or one read with another dtype, kind, shape, presence or default, is a compile error at the field; editing the spec rebuilds the crate |
//! | enum | `repr = "int64"` | store the discriminant instead of the name |
//! | variant | `rename = "name"` | the stored name |
//! | field | `key = "image/encoded"` | the feature key (default: the field name) |
//! | field | `skip` | not a feature; `Default::default()` on decode |
//! | field | `default`, `default = literal` | the value of an absent feature |
//! | field | `required` | an absent variable-length list (`Vec<T>`, or a feature list of them) is an error instead of empty |
//! | field | `shape = [a, b]` | fixed value count for a `Vec` (or documents an array's shape); `[-1, a]`: whole rows of a values, any number of them |
//! | field | `flatten` | inline a nested derived struct's features under `key/` (a key that another field writes too is a compile error, as between plain fields) |
//! | field | `lossy` | allow an `f64` in `tf.train.Example`, stored as a float |
//! | field | `sparse(index = "i" or ["i", "j"], value = "v", size = [..], already_sorted)` | a [`Sparse`] field: index keys, value key (default: the field's key) and dense shape; entries in index order as `tf.io.parse_example` gives them, or in the record's order with `already_sorted` |
//! | field | `sequence` | a feature list of a `SequenceExample` |
//!
//! Decoding accepts every valid protobuf encoding (packed and unpacked lists, split runs,
//! repeated keys with the last one winning, unknown fields) and reads it as protobuf does; on
//! the few non-canonical encodings where TensorFlow's fast parser departs from protobuf (a
//! packed list split into runs, a `Feature` holding two lists, a map entry without a value),
//! its results differ from `tf.io.parse_example`'s, as [`parse`] lists. No writer produces
//! those encodings. It skips features the type does not read. Errors name the feature key, the field, and expected versus found:
//! `bad feature "label": expected int64_list, found float_list (field `Mnist::label`)`.
//!
//! # Records without a type
//!
//! ```
//! use tfrecord_core::proto::tensorflow::{feature, Example, Feature, Features, Int64List};
//! use tfrecord_core::{Compression, Message, RecordReader, RecordWriter, ReaderOptions, WriterOptions};
//!
//! let mut features = Features::default();
//! features.feature.insert(
//!     "label".to_string(),
//!     Feature { kind: Some(feature::Kind::Int64List(Int64List { value: vec![7] })) },
//! );
//! let example = Example { features: Some(features) };
//!
//! let opts = WriterOptions::new().compression(Compression::Gzip);
//! let mut writer = RecordWriter::new(Vec::new(), opts);
//! writer.write(&example.encode_to_vec())?;
//! let file = writer.finish()?;
//!
//! let reader = RecordReader::new(&file[..], ReaderOptions::new().compression(Compression::Gzip));
//! for record in reader {
//!     let decoded = Example::decode(&record?[..]).expect("valid Example");
//!     assert_eq!(decoded, example);
//! }
//! # Ok::<(), tfrecord_core::Error>(())
//! ```

mod codec;
pub mod columns;
mod compression;
pub mod convert;
pub mod crc;
mod described;
mod error;
mod feature;
pub mod index;
pub mod json;
pub mod parse;
pub mod proto;
mod reader;
pub mod text;
mod typed;
mod writer;

pub use codec::{
    Container, Decode, DecodeOwned, Encode, OfRecord, Ragged, Sparse, TfExample, TfSequenceExample,
};
pub use compression::{Compression, Format};
pub use described::RecordSchema;
pub use error::{Error, ErrorKind, Result, STDIN_NAME};
pub use feature::{FeatureProblem, ListKind, narrow_f64, widen_f32};
pub use prost::Message;
pub use reader::{
    BadRecords, Chunk, ChunkReader, ChunkRecords, Located, ReaderOptions, RecordReader,
    SharedChunks, SkipReason, SkipSummary, Skipped, Unverified, for_each_chunk, split_range,
};
pub use typed::{Reader, Writer};
pub use writer::{RecordWriter, WriterOptions};

#[cfg(feature = "derive")]
pub use tfrecord_derive::{Example, SequenceExample};

/// What generated code calls. Not a public API: it changes without notice.
#[doc(hidden)]
pub mod __private {
    pub use crate::codec::field::{list_body_len, put_list_body};
    pub use crate::codec::wire;
    pub use crate::codec::{
        Container, Decode, DecodeElem, DecodeField, DecodeFields, DecodeSteps, Dialect, Encode,
        EncodeElem, EncodeField, EncodeFields, EncodeSteps, FeatureBytes, FeatureView, FieldInfo,
        FieldTable, KeyTable, Of, OfRecord, RawValue, Tf, TfExample, TfLossy, TfSequenceExample,
        check_len, check_rows, check_sparse, decode_one_into, decode_record, entry_len,
        example_len, field, flat_clash, join_prefix, key_clash, key_prefix_word, kindful, missing,
        one_canonical, present, present_into, put_context_header, put_entry, put_example_header,
        put_lists_header, put_sparse, put_steps_entry, scan_features, scan_sequence, sequence_len,
        sparse, sparse_entries_len, steps, steps_entry_len, steps_into, unknown_key,
        walk_canonical,
    };
    pub use crate::described::RecordSchema;
    pub use crate::error::{Error, Result};
    pub use crate::feature::{FeatureProblem, ListKind};
    pub use ::core::option::Option::{self, None, Some};
    pub use ::core::result::Result::{Err, Ok};
    pub use ::std::boxed::Box;
    pub use ::std::string::ToString;
    pub use ::std::vec;
    pub use ::std::vec::Vec;
    pub use tfrecord_schema::ir;
}

/// The cores the machine gives the process ([`std::thread::available_parallelism`]), asked
/// once: the answer reads the process's cgroup files, at a cost that a call per file or per
/// batch would pay over and over.
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES
        .get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get))
}

/// The workspace README's examples, compiled and run as doctests.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
