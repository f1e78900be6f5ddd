//! Importers into TFRecord / OFRecord files: Avro, JSON Lines and CSV records, and folders of
//! images. The `tfrecord` command's `from-avro`, `from-records` and `from-images` subcommands
//! are thin shells over this crate.
//!
//! - [`avro`]: Avro object container files (every codec the `apache-avro` crate reads, with
//!   writer to reader schema resolution) mapped to features by tensorflow-io's Avro key
//!   expressions (`name.first`, `friends[*].address[*].street`, `cars['nickname'].color`,
//!   `friends[gender='unknown']`, `@name.first`, `multi:int`, ...), either as batched tensors
//!   with `tf.io.parse_example`'s feature semantics, or as one `tf.train.Example` per Avro
//!   record.
//! - [`records`]: JSON Lines and CSV records, one `tf.train.Example` each, with TensorFlow's
//!   record writer type mapping (floats to `float_list`, integers to `int64_list`, strings to
//!   `bytes_list`; booleans to 0 / 1), nested objects flattened to `a/b` keys, and an optional
//!   spec forcing dtypes.
//! - [`images`]: one record per image file of a folder, with the encoded bytes, the size and
//!   channel count from the header, and the label from the sub-folder name; shuffled with a
//!   seed, optionally sharded.
//!
//! Image headers (PNG, JPEG, GIF, BMP, WebP) are read by a few dozen lines of code per format
//! in [`images::read_header`] rather than by a crate: `imagesize`, the header-only crate made for
//! this, gives width and height but not the channel count the records store as `depth`, and
//! decoding pixels with an image crate to learn it is what this importer avoids.
//!
//! Every importer produces [`FeatureRow`]s (feature key to values) that encode as a
//! `tf.train.Example` or an `OFRecord`.
//!
//! ```
//! use tfrecord_import::avro::{self, AvroFeature, AvroSpec};
//! use tfrecord_core::parse::{DType, Tensor};
//!
//! # fn main() -> Result<(), tfrecord_import::Error> {
//! # let dir = tempfile::tempdir().map_err(tfrecord_import::Error::from)?;
//! # let path = dir.path().join("p.avro");
//! # {
//! #     let schema = avro::parse_schema(r#"{"type": "record", "name": "p", "fields": [
//! #         {"name": "name", "type": {"type": "record", "name": "n", "fields": [{"name": "first", "type": "string"}]}},
//! #         {"name": "tags", "type": {"type": "array", "items": "string"}}]}"#)?;
//! #     let mut w = tfrecord_import::apache_avro::Writer::new(&schema, Vec::new()).unwrap();
//! #     for (first, tags) in [("Ada", vec!["x", "y"]), ("Bo", vec![])] {
//! #         let mut r = tfrecord_import::apache_avro::types::Record::new(&schema).unwrap();
//! #         r.put("name", tfrecord_import::apache_avro::types::Value::Record(vec![("first".into(), first.into())]));
//! #         r.put("tags", tfrecord_import::apache_avro::types::Value::Array(tags.into_iter().map(Into::into).collect()));
//! #         w.append_value(r).unwrap();
//! #     }
//! #     std::fs::write(&path, w.into_inner().unwrap()).unwrap();
//! # }
//! let spec = AvroSpec::new([
//!     AvroFeature::fixed_len("first", "name.first", DType::String, []),
//!     AvroFeature::var_len("tags", "tags[*]", DType::String),
//! ])?;
//! let records = avro::read_all(&[path], None)?;
//! let tensors = spec.parse_batch(&records)?;
//! assert_eq!(tensors["first"], Tensor::Dense { shape: vec![2], values: vec![b"Ada".to_vec(), b"Bo".to_vec()].into() });
//! let Tensor::Sparse { dense_shape, .. } = &tensors["tags"] else { unreachable!() };
//! assert_eq!(dense_shape, &[2, 2]);
//! # Ok(())
//! # }
//! ```
//!
//! Errors ([`Error`]) name the input file, the record index and the feature or field. No input
//! makes the importers panic, and no length read from an input sizes an allocation before it
//! is checked against the input's size.

pub mod avro;
mod error;
pub mod images;
mod progress;
pub mod records;
pub mod row;

use std::path::Path;

/// Whether the input `path` is `-`, standard input, and the name its errors give it: `<stdin>`
/// for `-`, as every reader of the workspace names standard input.
pub(crate) fn input_name(path: &Path) -> (bool, &Path) {
    if path.as_os_str() == "-" {
        (true, Path::new(tfrecord_core::STDIN_NAME))
    } else {
        (false, path)
    }
}

/// The Avro crate this one reads with (to write Avro files, or to build values and schemas).
pub use apache_avro;
pub use error::{Error, Result};
pub use row::FeatureRow;
