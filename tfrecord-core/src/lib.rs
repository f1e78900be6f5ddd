//! TensorFlow TFRecord / `tf.train.Example` and OneFlow OFRecord, in Rust.
//!
//! This crate holds the parts every other piece stands on:
//!
//! - **Framing** ([`RecordReader`], [`RecordWriter`]): TFRecord
//!   (`u64 LE length | masked CRC32C of the length | data | masked CRC32C of the data`, both
//!   checksums verified by default, CRC32C in hardware) and OneFlow's OFRecord
//!   (`i64 LE length | data`).
//! - **Compression** ([`Compression`]): GZIP and ZLIB over the whole stream, as TensorFlow's
//!   `TFRecordOptions` does it.
//! - **Protobuf types** ([`proto`]): `tensorflow.Example`, `tensorflow.SequenceExample` and
//!   `oneflow.OFRecord`, generated with prost; decoding accepts every valid protobuf encoding.
//! - **JSON** ([`json`]): the canonical proto3 JSON mapping of those messages, as protobuf's own
//!   `json_format` writes and reads it.
//! - **Text** ([`text`]): the protobuf text format, as Python's `print(example)` shows it.
//! - **Conversion** ([`convert`]) between `tf.train.Example` and `OFRecord`.
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

pub mod compression;
pub mod convert;
pub mod crc;
pub mod error;
pub mod json;
pub mod proto;
pub mod reader;
pub mod text;
pub mod writer;

pub use compression::{Compression, Format};
pub use error::{Error, ErrorKind, Result};
pub use prost::Message;
pub use reader::{ReaderOptions, RecordReader, expand_path};
pub use writer::{RecordWriter, WriterOptions};
pub mod codec;
mod typed;

pub use codec::{Decode, DecodeOwned, Encode, OfRecord, TfExample, TfSequenceExample};
pub use typed::{Reader, Writer};

#[cfg(feature = "derive")]
pub use tfrecord_derive::{Example, SequenceExample};

/// What generated code calls. Not a public API: it changes without notice.
#[doc(hidden)]
pub mod __private {
    pub use crate::codec::field::{list_body_len, put_list_body};
    pub use crate::codec::wire;
    pub use crate::codec::{
        Chunk, Container, Decode, DecodeElem, DecodeField, DecodeFields, Dialect, Encode,
        EncodeElem, EncodeField, EncodeFields, FeatureView, FieldError, FieldInfo, FieldTable,
        ListKind, Msg, Of, OfRecord, Raw, Tf, TfExample, TfLossy, TfSequenceExample, check_len,
        decode_record, entry_len, example_len, field, join_prefix, missing, present,
        put_context_header, put_entry, put_example_header, put_lists_header, put_steps_entry,
        scan_features, scan_sequence, sequence_len, steps, steps_entry_len, unknown_key,
    };
    pub use crate::error::{Error, Result};
    pub use ::core::option::Option::{self, None, Some};
    pub use ::core::result::Result::{Err, Ok};
    pub use ::std::vec::Vec;
}
