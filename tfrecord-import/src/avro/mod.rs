//! Avro to tensors and to records, with key expressions: the path syntax into an Avro record of
//! tensorflow-io's Avro dataset ([`tfio.experimental.columnar.parse_avro`][parse_avro]), with
//! the semantics its design gives them where the shipped implementation crashes or differs (see
//! "Where tensorflow-io differs" below).
//!
//! [parse_avro]: https://www.tensorflow.org/io/api_docs/python/tfio/experimental/columnar/parse_avro
//!
//! An [`AvroSpec`] is a list of [`AvroFeature`]s, each an output name, a [key
//! expression](expr) into the Avro record (its `source`), a dtype and a kind. It gives two
//! outputs:
//!
//! - **batched tensors** ([`AvroSpec::parse_batch`]): one
//!   [`Tensor`](tfrecord_core::parse::Tensor) per feature, batch dimension first, with
//!   `tf.io.parse_example`'s feature semantics: a `FixedLen` feature is a dense tensor, a
//!   `VarLen` or `Sparse` feature a sparse one, each `[*]` or filter adds a dimension (see
//!   "Shapes");
//! - **records** ([`AvroSpec::row`]): one `tf.train.Example` (or `OFRecord`) per Avro record,
//!   whose features `tf.io.parse_example` reads back with the same spec
//!   (`tfrecord parse --spec`): fixed and var features under their name, a sparse feature as
//!   its index keys and value key.
//!
//! A spec comes from code or from a record of a TOML spec file ([`AvroSpec::from_record`]),
//! where each feature may name its key expression with `source = "..."` (else its table key is
//! the key expression).
//!
//! # Types (Avro types to TensorFlow dtypes, strict)
//!
//! | Avro | dtype |
//! | --- | --- |
//! | `boolean` | `bool` |
//! | `int` (also `date`, `time-millis`) | `int32` |
//! | `long` (also `time-micros`, the timestamps) | `int64` |
//! | `float` | `float` (`float32`) |
//! | `double` | `double` (`float64`) |
//! | `string`, `bytes`, `enum` (its symbol), `fixed` (its bytes), `uuid` (its text), `decimal` (its unscaled two's-complement big-endian bytes), `duration` (its 12 bytes) | `string` / `bytes` (`tf.string`) |
//! | `null` | the feature's default; without one an error (a null array or map under `[*]` or a filter: no elements) |
//!
//! Nothing else converts: an `int` read as `int64` is an error naming both types. Promotion
//! is what Avro's schema resolution does: read the file with a reader schema in which the field
//! is a `long` ([`AvroFile::open`]). A union is its active branch; `key:type` selects a branch.
//!
//! # Shapes
//!
//! Each `[*]` or filter adds a dimension; the batch dimension comes first. Within a batch,
//! dimension `j` of the data is the largest element count at that array level.
//!
//! - **`FixedLen(shape, default)`**: `shape` has one entry per `[*]` / filter (`[]` for none);
//!   an unknown entry (`None`, only from code) takes the batch's largest count. The output is
//!   dense `[batch] + shape`; values sit at their positions, and every position without a
//!   value takes the default (a scalar, or a tensor of the full `shape` whose element at the
//!   same position is used). Without a default a missing value is an error naming the reason
//!   (a null, an absent map key, an index past the end, too few elements). More elements than
//!   a dimension holds are an error. With exactly one `[*]`, a shape of another rank reshapes
//!   the array's elements row-major (a non-nested array combined into a multi-dimensional
//!   tensor).
//! - **`VarLen`**: sparse, indices `[batch, i1, ..., ik]` (positions within each level,
//!   filters numbered from 0 in order), dense shape `[batch, m1, ..., mk]`. A key without `[*]`
//!   gives one value per record at `[batch, 0]`. A missing value takes the (scalar) default,
//!   or is skipped when the feature is optional, else it is an error.
//! - **`Sparse(index_keys, value_key, size)`**: the index and value keys are read relative to
//!   the elements the feature's source names (`source[*].key`; `source.key` when the source is
//!   a record), or from the root when they start with `@`; all lists must have the same
//!   length. Indices `[batch, idx0, idx1, ...]` (Avro `long` or `int`), checked against
//!   `size`, sorted unless `already_sorted`; dense shape `[batch] + size`.
//!
//! # Where tensorflow-io differs
//!
//! tensorflow-io 0.37 takes an output's rank from the first record of a batch (an empty
//! outer array there drops dimensions), crashes on `@` inside filters, on scalar `@` index keys,
//! on `friends[N]` with `N` equal to the array length and on missing values without a default,
//! leaves sparse indices beyond `size` unchecked, reads sparse index keys as Avro `long` only,
//! and has no `[*]` over a map (such as `@cars[*].engine.id` over a map of cars). Here ranks
//! come from the expression, those inputs give the results the rules above define or a clear
//! error, `[*]` takes a map's values in key order, and index keys may also be Avro `int`s. A
//! missing map key or array index takes the default when there is one (tensorflow-io always
//! fails).

mod aliases;
mod eval;
pub mod expr;
mod file;
mod inflate;
mod read;
mod spec;
mod tensors;
mod walk;

pub use apache_avro::Schema;
pub use apache_avro::types::Value;
pub use expr::{KeyExpr, Step};
pub use file::AvroFile;
pub use read::{ReadOptions, parse_schema, read_all, read_rows, read_tensors};
pub use spec::{AvroFeature, AvroKind, AvroSpec};
