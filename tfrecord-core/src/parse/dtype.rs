//! Element types and row partitions: the spec IR's own [`DType`] and [`Partition`] (one model
//! of a feature from the TOML spec to the parsers and importers), and how the parsers read each
//! type from a `tf.train.Feature`.

pub use tfrecord_schema::ir::{DType, Partition};

use crate::feature::ListKind;

/// TensorFlow's name for a type, as its error messages spell it: `int64`, `float`, `string`
/// (for both `bytes` and `string`), `bool`, `int32`, `double`.
pub(crate) fn dtype_name(dtype: DType) -> &'static str {
    match dtype {
        DType::Float => "float",
        DType::Bytes | DType::String => "string",
        other => other.name(),
    }
}

/// The `tf.train.Feature` list that holds values of a type: `int64_list` for `int64`, `int32`
/// and `bool`, `float_list` for `float` and `double`, `bytes_list` for `bytes` and `string`.
pub(crate) fn list_kind(dtype: DType) -> ListKind {
    match read_dtype(dtype) {
        DType::Float => ListKind::Float,
        DType::Bytes => ListKind::Bytes,
        _ => ListKind::Int64,
    }
}

/// The type the parsers read a feature of `dtype` as, one of the three a `tf.train.Feature`
/// holds (`tf.io.parse_example`'s `int64`, `float32`, `string`).
pub(crate) fn read_dtype(dtype: DType) -> DType {
    match dtype {
        DType::Float | DType::Double => DType::Float,
        DType::Bytes | DType::String => DType::Bytes,
        _ => DType::Int64,
    }
}

/// Whether the parsers read features of this type: `int64`, `float`, `bytes` and `string`
/// (text is read as bytes, as `tf.string`), which a `tf.train.Feature` holds as they are, and
/// `int32` and `bool`, read from an `int64_list` as `int64` with each value checked against the
/// type's range. `double` is not read: a `float_list` cannot hold it.
pub(crate) fn is_read_type(dtype: DType) -> bool {
    !matches!(dtype, DType::Double)
}

/// The type a list kind holds, in TensorFlow's words, for messages.
pub(crate) fn kind_type_name(kind: ListKind) -> &'static str {
    match kind {
        ListKind::Int64 | ListKind::Int32 => "int64",
        ListKind::Float => "float",
        ListKind::Double => "double",
        ListKind::Bytes => "string",
    }
}
