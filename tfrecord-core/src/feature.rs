//! The vocabulary of one feature: which value list it holds ([`ListKind`]), and what can be
//! wrong with it ([`FeatureProblem`]).

use std::fmt;

/// A double as the nearest float (what a `float_list` holds), or `None` for a finite double
/// beyond the float's range (about 3.4e38), which would become infinity. Infinities and NaN
/// stay what they are (a NaN's sign and the 23 high bits of its payload kept, so that a float
/// widened by [`widen_f32`], a signalling NaN too, comes back bit for bit; a NaN whose payload
/// lies only in the low 29 bits becomes the quiet NaN of its sign); a value that
/// rounds to the largest float (such as the `3.4028235e+38` protobuf's `json_format` prints
/// for it) is that float.
///
/// ```
/// use tfrecord_core::{narrow_f64, widen_f32};
/// assert_eq!(narrow_f64(0.1), Some(0.1f32));
/// assert_eq!(narrow_f64(3.402_823_5e38), Some(f32::MAX));
/// assert_eq!(narrow_f64(f64::INFINITY), Some(f32::INFINITY));
/// assert_eq!(narrow_f64(1e300), None);
/// let signalling = f32::from_bits(0x7f80_0001);
/// assert_eq!(narrow_f64(widen_f32(signalling)).map(f32::to_bits), Some(0x7f80_0001));
/// ```
#[inline]
pub fn narrow_f64(d: f64) -> Option<f32> {
    let f = to_f32(d);
    (f.is_finite() || !d.is_finite()).then_some(f)
}

/// A float as a double: its value, or for a NaN its sign and payload (a signalling NaN stays
/// one, where the processor's conversion would make it quiet).
#[inline]
pub fn widen_f32(f: f32) -> f64 {
    if f.is_nan() {
        let bits = f.to_bits();
        let sign = u64::from(bits >> 31) << 63;
        let payload = u64::from(bits & 0x007f_ffff) << 29;
        f64::from_bits(sign | 0x7ff0_0000_0000_0000 | payload)
    } else {
        f64::from(f)
    }
}

/// A double rounded to a float (infinity past the range), a NaN as [`narrow_f64`] keeps it.
#[inline]
pub(crate) fn to_f32(d: f64) -> f32 {
    if d.is_nan() {
        let bits = d.to_bits();
        let sign = u32::from(bits >> 63 == 1) << 31;
        #[allow(clippy::cast_possible_truncation)] // 23 bits
        let payload = ((bits >> 29) & 0x007f_ffff) as u32;
        // A payload only in the bits a float has no room for: the quiet NaN of that sign.
        let payload = if payload == 0 { 0x0040_0000 } else { payload };
        f32::from_bits(sign | 0x7f80_0000 | payload)
    } else {
        #[allow(clippy::cast_possible_truncation)] // the point: rounded to the nearest float
        let f = d as f32;
        f
    }
}

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
    /// The list that holds values of `dtype` in `format`'s messages: `int64_list` for `int64`
    /// and `bool` (and `int32` in a `tf.train.Example`), `float_list` for `float` (and a lossy
    /// `double` in an Example), `bytes_list` for `bytes` and `string`; OFRecord's own
    /// `int32_list` and `double_list` for `int32` and `double`.
    pub fn holding(dtype: tfrecord_schema::ir::DType, format: crate::Format) -> ListKind {
        use tfrecord_schema::ir::DType;
        let of = format == crate::Format::OfRecord;
        match dtype {
            DType::Int64 | DType::Bool => ListKind::Int64,
            DType::Int32 if of => ListKind::Int32,
            DType::Int32 => ListKind::Int64,
            DType::Float => ListKind::Float,
            DType::Double if of => ListKind::Double,
            DType::Double => ListKind::Float,
            DType::Bytes | DType::String => ListKind::Bytes,
        }
    }

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

/// What is wrong with one feature, for callers to match on: the `problem` of an
/// [`ErrorKind::Feature`](crate::ErrorKind::Feature), whose `detail` words it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FeatureProblem {
    /// The feature holds another kind of list.
    WrongKind {
        /// The kind the field needs.
        expected: ListKind,
        /// The kind found.
        found: ListKind,
    },
    /// The feature holds the wrong number of values.
    Count {
        /// How many values the field needs.
        expected: usize,
        /// How many were found.
        found: usize,
    },
    /// The feature's values do not split into whole rows (a FixedLenSequenceFeature in an
    /// Example: any number of rows of `row` values each).
    Rows {
        /// How many values one row holds.
        row: usize,
        /// How many values were found.
        found: usize,
    },
    /// A value does not fit the field's type.
    Range {
        /// The value, in decimal.
        value: String,
        /// The Rust type.
        ty: &'static str,
    },
    /// A `bool` field holds something other than 0 or 1.
    Bool(i64),
    /// A string field holds bytes that are not UTF-8.
    Utf8,
    /// An enum field holds a name or number no variant has.
    UnknownVariant(String),
    /// A required feature is absent.
    Missing,
    /// The feature's protobuf encoding is broken.
    Malformed(&'static str),
    /// A sparse index outside the declared size.
    IndexOutOfRange {
        /// The index found.
        index: i64,
        /// The declared size of its dimension.
        size: u64,
    },
    /// A oneof member the dialect does not know.
    UnknownKind(u32),
    /// Another problem, worded in the error's detail: a feature spec the runtime parser
    /// rejects, or values that cannot form the requested tensor.
    Other,
}

impl fmt::Display for FeatureProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FeatureProblem::WrongKind { expected, found } => {
                write!(f, "expected {}, found {}", expected.name(), found.name())
            }
            FeatureProblem::Count { expected, found } => {
                let s = if *expected == 1 { "" } else { "s" };
                write!(f, "expected {expected} value{s}, found {found}")
            }
            FeatureProblem::Rows { row, found } => {
                write!(
                    f,
                    "expected a multiple of {row} values (whole rows), found {found}"
                )
            }
            FeatureProblem::Range { value, ty } => {
                write!(f, "value {value} does not fit in `{ty}`")
            }
            FeatureProblem::Bool(v) => write!(f, "expected 0 or 1 for a `bool`, found {v}"),
            FeatureProblem::Utf8 => f.write_str("expected UTF-8 text, found invalid UTF-8 bytes"),
            FeatureProblem::UnknownVariant(v) => write!(f, "no enum variant matches {v}"),
            FeatureProblem::Missing => f.write_str("required feature is missing"),
            FeatureProblem::Malformed(what) => write!(f, "malformed feature: {what}"),
            FeatureProblem::IndexOutOfRange { index, size } => {
                write!(
                    f,
                    "sparse index {index} is outside the declared size {size}"
                )
            }
            FeatureProblem::UnknownKind(tag) => {
                write!(f, "unknown feature kind (oneof field {tag})")
            }
            FeatureProblem::Other => f.write_str("invalid feature"),
        }
    }
}
