//! TFRecord / `tf.train.Example` and OFRecord data as Apache Arrow: records decoded into
//! [`RecordBatch`](arrow_array::RecordBatch)es by one documented type mapping, and batches
//! written back as records; Parquet through the re-exported [`parquet`] crate.
//!
//! The spec says what each feature is, whether it came from a TOML spec file, from
//! `tfrecord infer` (`tfrecord_schema::infer`), from a derived type
//! ([`ArrowDecoder::for_type`], through `tfrecord_core::RecordSchema`) or from an Arrow schema
//! ([`record_from_schema`]); [`ArrowDecoder`] turns batches of serialized records into record
//! batches of that spec's columns, [`ArrowReader`] does it for a whole file (an Arrow
//! `RecordBatchReader`), and [`ArrowEncoder`] turns record batches back into records. The
//! values are decoded straight from the wire bytes into the column buffers
//! (`tfrecord_core::columns`), which become the Arrow arrays without another copy.
//!
//! ```
//! use tfrecord_arrow::{ArrowDecoder, ArrowEncoder};
//! use tfrecord_core::proto::tensorflow::{feature, Example, Feature, Features, Int64List};
//! use tfrecord_arrow::tfrecord_schema::ir::Schema;
//! use tfrecord_core::{Format, Message};
//!
//! let spec = Schema::from_toml_str(
//!     "[records.R.features.label]\ndtype = \"int64\"\ndefault = 0\n\
//!      [records.R.features.ids]\ndtype = \"int64\"\nkind = \"var\"\n",
//!     "r.toml",
//! )
//! .expect("a valid spec");
//! let record = &spec.records[0];
//! let example = |label: i64, ids: Vec<i64>| {
//!     let mut f = Features::default();
//!     let list = |value| Feature { kind: Some(feature::Kind::Int64List(Int64List { value })) };
//!     f.feature.insert("label".into(), list(vec![label]));
//!     f.feature.insert("ids".into(), list(ids));
//!     Example { features: Some(f) }.encode_to_vec()
//! };
//! let records = [example(1, vec![7, 8]), example(2, vec![])];
//!
//! let batch = ArrowDecoder::new(record, Format::TfRecord)?.decode(&records, 0)?;
//! assert_eq!(batch.num_rows(), 2);
//! assert_eq!(batch.schema().field(0).data_type().to_string(), "Int64");
//! assert_eq!(batch.schema().field(1).data_type().to_string(), "List(non-null Int64)");
//!
//! let mut back = Vec::new();
//! ArrowEncoder::new(record, Format::TfRecord)?.encode(&batch, 0, |r| {
//!     back.push(r.to_vec());
//!     Ok(())
//! })?;
//! assert_eq!(back, records);
//! # Ok::<(), tfrecord_core::Error>(())
//! ```
//!
//! # The type mapping
//!
//! One column per feature of the spec, named by its output name (the feature key; a sparse
//! feature's name in the spec), in spec order.
//!
//! | spec | Arrow type | an absent feature |
//! | --- | --- | --- |
//! | `int64` | `Int64` | |
//! | `float` | `Float32` (bit for bit, NaN payloads kept) | |
//! | `bytes` | `Binary` | |
//! | `string` | `Utf8` (invalid UTF-8 is an error naming the key and record) | |
//! | `int32` (OFRecord `int32_list`; an `int64_list` in a `tf.train.Example`, range-checked) | `Int32` | |
//! | `double` (OFRecord `double_list`; a `float_list` in a `tf.train.Example`) | `Float64` | |
//! | `bool` (an `int64_list` of 0 and 1) | `Boolean` | |
//! | `fixed`, `shape = []` | the value type, non-null | its `default` (a null row written back is an absent feature, which reads as the default); `optional`: null; else an error |
//! | `fixed`, `shape = [k]` | `FixedSizeList(k)` of the value type | as above |
//! | `fixed`, `shape = [a, b, ..]` | nested `FixedSizeList`s, outermost first | as above |
//! | `var` | `List` of the value type | null (a key holding an empty list: an empty list); with a `default`, a list of its values (a null written elsewhere still reads back as absent) |
//! | `sequence` / `shape = [-1, ..]` in an Example | `List` of the row type (`FixedSizeList` per dimension, or the value type for one value per row) | null |
//! | `sparse` | `List` of `Struct` with one `Int64` per index key and the value (fields named by their keys), the entries in the record's order (so that a file comes back as it was; `tfrecord parse` and a derived `Sparse` put them in index order, as `tf.io.parse_example` does, unless `already_sorted`) | null |
//! | `ragged` | one `List` per partition around a `List` of values (`[batch, (rows)..., (values)]`; written back, a `value_rowids` partition cannot end in an empty row, which row ids have no way to count, and such a row is an error) | null when the value key and every partition key are absent |
//! | SequenceExample context | as in an Example | as in an Example |
//! | SequenceExample `var` feature list | `List` of steps, each a `List` of values | null |
//! | SequenceExample `sequence` feature list | `List` of steps, each a row as above | null; without `allow_missing`: an error |
//! | SequenceExample `ragged` feature list without partitions | `List` of steps, each a `List` of values (as `var`) | null |
//! | SequenceExample `ragged` feature list with partitions | no column: the spec is refused, naming the feature (its partitions split each step's values, a nesting the columns do not hold); `tfrecord parse` reads it |
//!
//! Items of lists are non-null. [`ArrowOptions::large_lists`] gives `LargeList`,
//! `LargeBinary` and `LargeUtf8` instead (64-bit offsets, for batches over 2 GiB). Each batch's
//! schema carries the spec as TOML in its metadata ([`SPEC_METADATA_KEY`]), so that Parquet
//! files written from it come back as exactly the same records: `Arrow -> records -> Arrow` is
//! the identity for every mapped type, and `records -> Arrow -> records` gives the same
//! messages except that an absent `fixed` or `var` feature with a default comes back holding it,
//! that a feature the spec does not name has no column, so does not come back at all, that a
//! feature holding no list at all (`Feature()`) is an absent feature, a null row, so does not
//! come back either, and that a feature list's step holding no list, which reads as an empty
//! list, comes back as an empty list of the spec's type (`int64_list {}`): TensorFlow parses
//! each pair the same.
//!
//! Values are checked as the generated types check them; where the runtime parser follows
//! TensorFlow's looser rules, the columns are stricter, because an Arrow row must hold exactly
//! one record's values: a ragged partition must be valid (TensorFlow's default
//! `validate=False` does not check), a sparse feature's index and value counts must agree
//! in every record (TensorFlow checks the batch's totals), and each sparse index must lie
//! below its dimension's `size` (TensorFlow leaves that to `tf.sparse.to_dense`). The sparse
//! entries keep their order in the record (TensorFlow's `parse_example` sorts them unless
//! `already_sorted`).
//!
//! A SequenceExample may have a context feature and a feature list of the same key; as
//! columns they would share a name, which Arrow allows but readers that find columns by name
//! (Parquet's, pyarrow's, [`ArrowEncoder`]) cannot tell apart: [`duplicate_column`] finds such
//! a name, [`ArrowEncoder`] refuses a spec that has one, and `tfrecord to-parquet` asks for a
//! spec that leaves one of them out.
//!
//! ## Compared with tfx_bsl
//!
//! tfx_bsl's `ExamplesToRecordBatchDecoder` maps every feature to a `LargeList` of
//! `Int64`, `Float32` or `LargeBinary`, null where the record lacks it, with no shapes,
//! defaults or text. The same data here, with a spec that says `var` for every feature and
//! [`ArrowOptions::large_lists`], is the same column values (a `LargeBinary` where the spec says
//! `bytes`, `LargeUtf8` for `string`); with a spec that knows more, the columns say more:
//! scalars as values, fixed shapes as fixed-size lists, defaults filled in. tfx_bsl's
//! `SequenceExamplesToRecordBatchDecoder` gives a step of a feature list that is a `Feature`
//! with no list set as a null step; here it is an empty step (`[]`), as
//! `tf.io.parse_sequence_example` reads it for a `var` feature list. tfx_bsl 1.21's
//! sequence decoder also keeps only the low 32 bits of an `int64` feature list's values
//! (2^40 + 5 reads as 5); here, as in `tf.io.parse_sequence_example`, they are whole. The
//! layout differs too: tfx_bsl puts every feature list in one struct column named
//! `##SEQUENCE##` (a `LargeList` of `LargeList`s per feature list), while
//! here each feature list is a top-level column of its own, beside the context's.
//!
//! # Parquet readers
//!
//! A `fixed` feature of shape `[k]` (or more dimensions) that is `optional` is a nullable
//! `FixedSizeList` column. pyarrow before 26 cannot read a Parquet `FixedSizeList` column
//! holding a null, even one pyarrow wrote ("Expected all lists to be of size=k but index i had
//! size=0", apache/arrow#35692, fixed in Arrow 26); arrow-rs and pyarrow 26 read it. For
//! older readers, give the feature a `default` instead of `optional`: the column is then
//! non-null.
//!
//! # Arrow data from elsewhere
//!
//! [`record_from_schema`] reads the spec from the metadata when the data was written here, and
//! otherwise off the column types: a value type is a `fixed` scalar (`optional` when the
//! field is nullable), nested `FixedSizeList`s a `fixed` shape, a `List` (or `LargeList`,
//! `ListView`) of values `var`, a `List` of `FixedSizeList`s a `sequence` of rows. Integer
//! types narrower than 32 bits read as `int32`, `UInt32` as `int64`, `Float16` as `float`,
//! `Float64` as `double` (which [`ArrowEncoder`] writes into a `tf.train.Example` only when the
//! feature is marked `lossy`), views and large variants of binary and text as `bytes` and
//! `string`, and dictionary-encoded values (pandas categoricals) as their values.
//! `List<List<..>>` and `List<Struct>` are not read off their types: the ragged, sparse and
//! feature-list columns written here come back through the spec in the metadata (pyarrow's
//! `rename_columns` or `store_schema=False` drop it) or `--spec`. An
//! `arrow.fixed_shape_tensor` column is read as its storage, a `FixedSizeList` of the
//! row-major values; one with a `permutation` other than the identity (values stored in
//! another order) is an error rather than transposed data. When the metadata holds a spec,
//! columns added to the data later are read off their types as above, as features after the
//! spec's, unless a column is named after a key a feature of the spec reads (a sparse
//! feature's index or value key, a ragged feature's partitions), which is an error.
//!
//! [`ArrowEncoder`] reads these variants for any spec, and a column of the `Null` type, or a
//! list of it (pyarrow's `list<null>`, for lists that are all empty or null), as a feature of
//! the spec's dtype: empty lists, absent features. A column the spec has no feature for is
//! an error (its values would be lost), and so is a null value inside a list, which has no
//! place in a record; errors name the column and the row.

mod from_arrow;
mod reader;
mod schema;
mod to_arrow;

pub use from_arrow::ArrowEncoder;
pub use reader::{ArrowReader, DEFAULT_BATCH_SIZE, MAX_BATCH_BYTES};
pub use schema::{SPEC_METADATA_KEY, duplicate_column, record_from_schema};
pub use to_arrow::ArrowDecoder;

/// Re-exported: the Arrow and Parquet crates this one is built on, at their versions.
pub use {arrow_array, arrow_schema, parquet};

/// Re-exported: the spec crate, whose [`ir::Record`](tfrecord_schema::ir::Record) the decoder
/// and encoder are made from (`tfrecord_schema::ir::Schema::from_toml_str` reads a spec file),
/// with only its TOML front end (no code generator): no dependency of its own is needed.
pub use tfrecord_schema;

/// How records map to Arrow types where there is a choice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ArrowOptions {
    /// `LargeList`, `LargeBinary` and `LargeUtf8` (64-bit offsets) instead of `List`, `Binary`
    /// and `Utf8`: for batches holding more than 2 GiB of bytes or 2^31 values in a column.
    pub large_lists: bool,
}

impl ArrowOptions {
    /// The default options: 32-bit offsets.
    pub fn new() -> Self {
        ArrowOptions::default()
    }

    /// With [`large_lists`](Self::large_lists) set.
    #[must_use]
    pub fn with_large_lists(mut self, large: bool) -> Self {
        self.large_lists = large;
        self
    }
}
