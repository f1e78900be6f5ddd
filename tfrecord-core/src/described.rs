//! The spec of a derived record type at run time.

/// A record type that knows its spec: what `#[derive(Example)]` and
/// `#[derive(SequenceExample)]` lowered the struct to, in the one spec model a TOML spec file
/// and `tfrecord infer` give too (`tfrecord_schema::ir::Record`). The runtime consumers read a
/// derived type through it: [`ColumnDecoder::for_type`](crate::columns::ColumnDecoder::for_type)
/// and [`Reader::batches`](crate::Reader::batches) decode its records into columns, the
/// `tfrecord-arrow` crate into Arrow batches, by the same mapping as for a spec file.
///
/// Derived, never written by hand. Fields the spec model cannot hold are in the spec as the
/// derive saw them: a `flatten` field (whose features belong to another type) and a field of a
/// user enum (whose type the derive cannot know) have no column.
///
/// ```
/// use tfrecord_core::{Example, RecordSchema};
///
/// #[derive(Example)]
/// struct Mnist {
///     #[example(key = "image/encoded")]
///     image: Vec<u8>,
///     label: i64,
/// }
///
/// let record = Mnist::record_schema();
/// assert_eq!(record.fields[0].key, "image/encoded");
/// assert_eq!(record.fields[1].key, "label");
/// ```
pub trait RecordSchema {
    /// The record's spec.
    fn record_schema() -> tfrecord_schema::ir::Record;
}
