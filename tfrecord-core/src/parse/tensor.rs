//! Output tensors: flat row-major buffers with their shapes, and their JSON form.

use std::collections::BTreeMap;

use serde_json::Value;

use super::dtype::DType;
use super::strings::ByteStrings;

/// A flat buffer of tensor elements, row-major.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Values {
    /// `tf.int64` elements.
    Int64(Vec<i64>),
    /// `tf.float32` elements, bit for bit as stored (NaN payloads included).
    Float32(Vec<f32>),
    /// `tf.string` elements: arbitrary bytes, all in one buffer.
    Bytes(ByteStrings),
    /// `tf.bool` elements (only in tensors built from other sources than `tf.train.Example`,
    /// such as Avro).
    Bool(Vec<bool>),
    /// `tf.int32` elements (only in tensors built from other sources than `tf.train.Example`).
    Int32(Vec<i32>),
    /// `tf.float64` elements (only in tensors built from other sources than
    /// `tf.train.Example`).
    Float64(Vec<f64>),
}

impl Values {
    /// An empty buffer of `dtype`.
    pub fn empty(dtype: DType) -> Self {
        match dtype {
            DType::Int64 => Values::Int64(Vec::new()),
            DType::Float => Values::Float32(Vec::new()),
            DType::Bytes | DType::String => Values::Bytes(ByteStrings::new()),
            DType::Bool => Values::Bool(Vec::new()),
            DType::Int32 => Values::Int32(Vec::new()),
            DType::Double => Values::Float64(Vec::new()),
        }
    }

    /// `n` zeros (or empty strings) of `dtype`.
    pub fn zeros(dtype: DType, n: usize) -> Self {
        match dtype {
            DType::Int64 => Values::Int64(vec![0; n]),
            DType::Float => Values::Float32(vec![0.0; n]),
            DType::Bytes | DType::String => {
                Values::Bytes(std::iter::repeat_n(&[][..], n).collect())
            }
            DType::Bool => Values::Bool(vec![false; n]),
            DType::Int32 => Values::Int32(vec![0; n]),
            DType::Double => Values::Float64(vec![0.0; n]),
        }
    }

    /// The elements repeated `n` times over (`[a, b]` twice is `[a, b, a, b]`): how one default
    /// value fills a whole fixed shape.
    pub fn repeat(&self, n: usize) -> Self {
        match self {
            Values::Int64(v) => Values::Int64(v.repeat(n)),
            Values::Float32(v) => Values::Float32(v.repeat(n)),
            Values::Bytes(v) => Values::Bytes((0..n).flat_map(|_| v.iter()).collect()),
            Values::Bool(v) => Values::Bool(v.repeat(n)),
            Values::Int32(v) => Values::Int32(v.repeat(n)),
            Values::Float64(v) => Values::Float64(v.repeat(n)),
        }
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        match self {
            Values::Int64(_) => DType::Int64,
            Values::Float32(_) => DType::Float,
            Values::Bytes(_) => DType::Bytes,
            Values::Bool(_) => DType::Bool,
            Values::Int32(_) => DType::Int32,
            Values::Float64(_) => DType::Double,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            Values::Int64(v) => v.len(),
            Values::Float32(v) => v.len(),
            Values::Bytes(v) => v.len(),
            Values::Bool(v) => v.len(),
            Values::Int32(v) => v.len(),
            Values::Float64(v) => v.len(),
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements if they are `int64`.
    pub fn as_i64(&self) -> Option<&[i64]> {
        match self {
            Values::Int64(v) => Some(v),
            _ => None,
        }
    }

    /// The elements if they are `float32`.
    pub fn as_f32(&self) -> Option<&[f32]> {
        match self {
            Values::Float32(v) => Some(v),
            _ => None,
        }
    }

    /// The elements if they are strings.
    pub fn as_bytes(&self) -> Option<&ByteStrings> {
        match self {
            Values::Bytes(v) => Some(v),
            _ => None,
        }
    }

    /// The elements if they are `bool`.
    pub fn as_bool(&self) -> Option<&[bool]> {
        match self {
            Values::Bool(v) => Some(v),
            _ => None,
        }
    }

    /// The elements if they are `int32`.
    pub fn as_i32(&self) -> Option<&[i32]> {
        match self {
            Values::Int32(v) => Some(v),
            _ => None,
        }
    }

    /// The elements if they are `float64`.
    pub fn as_f64(&self) -> Option<&[f64]> {
        match self {
            Values::Float64(v) => Some(v),
            _ => None,
        }
    }

    /// The elements as JSON: numbers, floats as numbers or `"NaN"` / `"Infinity"` /
    /// `"-Infinity"`, bytes as standard base64, booleans as `true` / `false` (the form
    /// `Values` serializes to).
    pub fn to_json(&self) -> Vec<Value> {
        match serde_json::to_value(self) {
            Ok(Value::Array(items)) => items,
            _ => Vec::new(), // not reached: the elements are numbers, strings and booleans
        }
    }

    // ---- crate-internal buffer operations (the variants always agree; see callers) ----

    /// Appends `n` copies of element `i` of `src` (same type).
    pub(crate) fn push_repeat(&mut self, src: &Values, i: usize, n: usize) {
        debug_assert_eq!(self.dtype(), src.dtype(), "values of one type");
        match (self, src) {
            (Values::Int64(d), Values::Int64(s)) => {
                if let Some(&x) = s.get(i) {
                    d.extend(std::iter::repeat_n(x, n));
                }
            }
            (Values::Float32(d), Values::Float32(s)) => {
                if let Some(&x) = s.get(i) {
                    d.extend(std::iter::repeat_n(x, n));
                }
            }
            (Values::Bytes(d), Values::Bytes(s)) => {
                if let Some(x) = s.get(i) {
                    d.extend(std::iter::repeat_n(x, n));
                }
            }
            (Values::Bool(d), Values::Bool(s)) => {
                if let Some(&x) = s.get(i) {
                    d.extend(std::iter::repeat_n(x, n));
                }
            }
            (Values::Int32(d), Values::Int32(s)) => {
                if let Some(&x) = s.get(i) {
                    d.extend(std::iter::repeat_n(x, n));
                }
            }
            (Values::Float64(d), Values::Float64(s)) => {
                if let Some(&x) = s.get(i) {
                    d.extend(std::iter::repeat_n(x, n));
                }
            }
            _ => {}
        }
    }

    /// Appends all of `src` (same type).
    /// Whether `src` may be appended by [`extend_from`](Self::extend_from) as a default
    /// filled in: the memory the elements would then take (8 bytes each, and a string's bytes)
    /// stays within `max` ([`MAX_FILLED_BYTES`](super::MAX_FILLED_BYTES) but in tests), and room for them could be
    /// reserved. A record's own values are bounded by its bytes; a default is not, as every
    /// record lacking the feature holds it.
    pub(crate) fn may_fill(&mut self, src: &Values, max: usize) -> bool {
        let after = (self.len() + src.len())
            .saturating_mul(8)
            .saturating_add(self.string_bytes() + src.string_bytes());
        let room = match (&mut *self, src) {
            (Values::Bytes(d), Values::Bytes(s)) => d.try_reserve(s.len(), s.data().len()),
            (d, s) => d.try_reserve(s.len()),
        };
        after <= max && room.is_ok()
    }

    pub(crate) fn extend_from(&mut self, src: &Values) {
        match (self, src) {
            (Values::Int64(d), Values::Int64(s)) => d.extend_from_slice(s),
            (Values::Float32(d), Values::Float32(s)) => d.extend_from_slice(s),
            (Values::Bytes(d), Values::Bytes(s)) => d.extend_range(s, 0, s.len()),
            (Values::Bool(d), Values::Bool(s)) => d.extend_from_slice(s),
            (Values::Int32(d), Values::Int32(s)) => d.extend_from_slice(s),
            (Values::Float64(d), Values::Float64(s)) => d.extend_from_slice(s),
            _ => {}
        }
    }

    /// Moves all of `src` to the end (same type).
    pub(crate) fn append(&mut self, src: Values) {
        match (self, src) {
            (Values::Int64(d), Values::Int64(mut s)) => d.append(&mut s),
            (Values::Float32(d), Values::Float32(mut s)) => d.append(&mut s),
            (Values::Bytes(d), Values::Bytes(s)) => {
                if d.is_empty() {
                    *d = s;
                } else {
                    d.extend_range(&s, 0, s.len());
                }
            }
            (Values::Bool(d), Values::Bool(mut s)) => d.append(&mut s),
            (Values::Int32(d), Values::Int32(mut s)) => d.append(&mut s),
            (Values::Float64(d), Values::Float64(mut s)) => d.append(&mut s),
            _ => {}
        }
    }

    /// Appends elements `a..b` of `src` (same type; as many of them as there are).
    pub(crate) fn extend_range(&mut self, src: &Values, a: usize, b: usize) {
        fn range<T: Copy>(d: &mut Vec<T>, s: &[T], a: usize, b: usize) {
            d.extend_from_slice(s.get(a..b.min(s.len())).unwrap_or_default());
        }
        match (self, src) {
            (Values::Int64(d), Values::Int64(s)) => range(d, s, a, b),
            (Values::Float32(d), Values::Float32(s)) => range(d, s, a, b),
            (Values::Bytes(d), Values::Bytes(s)) => d.extend_range(s, a, b),
            (Values::Bool(d), Values::Bool(s)) => range(d, s, a, b),
            (Values::Int32(d), Values::Int32(s)) => range(d, s, a, b),
            (Values::Float64(d), Values::Float64(s)) => range(d, s, a, b),
            _ => {}
        }
    }

    /// Reserves room for `n` more elements and, for strings, `bytes` more bytes, as far as
    /// possible (a reservation that fails is skipped: the buffer grows as it fills).
    pub(crate) fn reserve_hint(&mut self, n: usize, bytes: usize) {
        let _ = match self {
            Values::Int64(v) => v.try_reserve(n),
            Values::Float32(v) => v.try_reserve(n),
            Values::Bytes(v) => v.try_reserve(n, bytes),
            Values::Bool(v) => v.try_reserve(n),
            Values::Int32(v) => v.try_reserve(n),
            Values::Float64(v) => v.try_reserve(n),
        };
    }

    /// The bytes of the string elements (0 for other types).
    pub(crate) fn string_bytes(&self) -> usize {
        match self {
            Values::Bytes(v) => v.data().len(),
            _ => 0,
        }
    }

    /// Keeps the first `n` elements.
    pub(crate) fn truncate(&mut self, n: usize) {
        match self {
            Values::Int64(v) => v.truncate(n),
            Values::Float32(v) => v.truncate(n),
            Values::Bytes(v) => v.truncate(n),
            Values::Bool(v) => v.truncate(n),
            Values::Int32(v) => v.truncate(n),
            Values::Float64(v) => v.truncate(n),
        }
    }

    /// Reserves room for `n` more elements, failing instead of aborting when that is
    /// impossible.
    pub(crate) fn try_reserve(
        &mut self,
        n: usize,
    ) -> Result<(), std::collections::TryReserveError> {
        match self {
            Values::Int64(v) => v.try_reserve(n),
            Values::Float32(v) => v.try_reserve(n),
            Values::Bytes(v) => v.try_reserve(n, 0),
            Values::Bool(v) => v.try_reserve(n),
            Values::Int32(v) => v.try_reserve(n),
            Values::Float64(v) => v.try_reserve(n),
        }
    }

    /// The elements in the order of `perm` (indices into `self`).
    pub(crate) fn permuted(self, perm: &[usize]) -> Values {
        match self {
            Values::Int64(v) => {
                Values::Int64(perm.iter().filter_map(|&i| v.get(i).copied()).collect())
            }
            Values::Float32(v) => {
                Values::Float32(perm.iter().filter_map(|&i| v.get(i).copied()).collect())
            }
            Values::Bytes(v) => {
                Values::Bytes(perm.iter().map(|&i| v.get(i).unwrap_or_default()).collect())
            }
            Values::Bool(v) => {
                Values::Bool(perm.iter().filter_map(|&i| v.get(i).copied()).collect())
            }
            Values::Int32(v) => {
                Values::Int32(perm.iter().filter_map(|&i| v.get(i).copied()).collect())
            }
            Values::Float64(v) => {
                Values::Float64(perm.iter().filter_map(|&i| v.get(i).copied()).collect())
            }
        }
    }
}

impl From<Vec<i64>> for Values {
    fn from(v: Vec<i64>) -> Self {
        Values::Int64(v)
    }
}

impl From<Vec<f32>> for Values {
    fn from(v: Vec<f32>) -> Self {
        Values::Float32(v)
    }
}

impl From<Vec<Vec<u8>>> for Values {
    fn from(v: Vec<Vec<u8>>) -> Self {
        Values::Bytes(v.into())
    }
}

impl From<ByteStrings> for Values {
    fn from(v: ByteStrings) -> Self {
        Values::Bytes(v)
    }
}

impl From<Vec<bool>> for Values {
    fn from(v: Vec<bool>) -> Self {
        Values::Bool(v)
    }
}

impl From<Vec<i32>> for Values {
    fn from(v: Vec<i32>) -> Self {
        Values::Int32(v)
    }
}

impl From<Vec<f64>> for Values {
    fn from(v: Vec<f64>) -> Self {
        Values::Float64(v)
    }
}

impl From<i64> for Values {
    fn from(v: i64) -> Self {
        Values::Int64(vec![v])
    }
}

impl From<f32> for Values {
    fn from(v: f32) -> Self {
        Values::Float32(vec![v])
    }
}

impl From<&[u8]> for Values {
    fn from(v: &[u8]) -> Self {
        Values::Bytes(std::iter::once(v).collect())
    }
}

impl From<&str> for Values {
    fn from(v: &str) -> Self {
        Values::Bytes(std::iter::once(v).collect())
    }
}

/// One parsed tensor, as `tf.io.parse_example` returns it: a `tf.Tensor`, a
/// `tf.SparseTensor` or a `tf.RaggedTensor`. The batch dimension comes first.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Tensor {
    /// A dense tensor: `values` holds `shape.iter().product()` elements, row-major (ready for
    /// `ndarray::Array::from_shape_vec(shape, values)`).
    Dense {
        /// The dimensions.
        shape: Vec<usize>,
        /// The elements, row-major.
        values: Values,
    },
    /// A sparse tensor (COO). `indices` is the `[nnz, rank]` index matrix, flat and row-major:
    /// entry `i` is at `indices[i * rank..(i + 1) * rank]`, with `rank = dense_shape.len()`
    /// (see [`Tensor::sparse_index`]). Entries are in TensorFlow's order.
    Sparse {
        /// The index matrix `[nnz, rank]`, row-major.
        indices: Vec<i64>,
        /// The `nnz` values.
        values: Values,
        /// The dense shape (its length is the rank).
        dense_shape: Vec<i64>,
    },
    /// A ragged tensor: `flat_values` split by `nested_row_splits`, outermost first (the first
    /// has `batch + 1` entries). A trailing `UniformRowLength` partition, which TensorFlow
    /// keeps as an inner dense dimension of `flat_values`, appears here as a uniform row-splits
    /// level `[0, n, 2n, ...]`, so `flat_values` is always flat.
    Ragged {
        /// The values, flat.
        flat_values: Values,
        /// The row splits of each ragged dimension, outermost first.
        nested_row_splits: Vec<Vec<i64>>,
    },
}

impl Tensor {
    /// The values buffer (the flat values of a ragged tensor).
    pub fn values(&self) -> &Values {
        match self {
            Tensor::Dense { values, .. } | Tensor::Sparse { values, .. } => values,
            Tensor::Ragged { flat_values, .. } => flat_values,
        }
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.values().dtype()
    }

    /// The index of sparse entry `i`: `rank` numbers. `None` for other tensors or out of range.
    pub fn sparse_index(&self, i: usize) -> Option<&[i64]> {
        match self {
            Tensor::Sparse {
                indices,
                dense_shape,
                ..
            } => {
                let rank = dense_shape.len();
                indices.get(i.checked_mul(rank)?..i.checked_add(1)?.checked_mul(rank)?)
            }
            _ => None,
        }
    }

    /// The tensor as JSON (the form `tfrecord parse` prints):
    /// `{"dense": {"shape", "values"}}`, `{"sparse": {"indices", "values", "dense_shape"}}` or
    /// `{"ragged": {"flat_values", "nested_row_splits"}}`, with int64 values as numbers, floats
    /// as numbers (the shortest decimal that reads back as the same `f32`) or `"NaN"`,
    /// `"Infinity"`, `"-Infinity"`, and bytes as standard base64 (and, for tensors of the
    /// non-`Feature` types, int32 as numbers, float64 as the shortest decimal of the `f64`,
    /// bools as `true` / `false`).
    ///
    /// `Tensor` serializes to this form (`serde_json::to_writer` writes it without building
    /// the `Value`).
    pub fn to_json(&self) -> Value {
        // Not `Null` in practice: every key is a string and every element representable.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// Output name to tensor: what one batch parses into.
pub type Tensors = BTreeMap<String, Tensor>;

/// A map of output name to tensor as one JSON object of [`Tensor::to_json`] forms: what
/// `tfrecord parse` prints for one batch.
pub fn tensors_to_json(tensors: &BTreeMap<String, Tensor>) -> Value {
    Value::Object(
        tensors
            .iter()
            .map(|(k, t)| (k.clone(), t.to_json()))
            .collect(),
    )
}
