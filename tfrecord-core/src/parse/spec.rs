//! The feature spec: TensorFlow's `feature_description` vocabulary as plain data.

use std::collections::BTreeMap;

use super::dtype::{DType, Partition};
use super::tensor::Values;

/// The integer type of a ragged tensor's row partitions (`RaggedFeature.row_splits_dtype`).
/// Values are always returned as `i64`; with [`SplitsDType::Int32`] they are computed in 32-bit
/// arithmetic first (wrapping, as TensorFlow's cast does), so they are what TensorFlow returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SplitsDType {
    /// `tf.int32`, TensorFlow's default for `RaggedFeature`.
    #[default]
    Int32,
    /// `tf.int64`.
    Int64,
}

impl SplitsDType {
    /// Narrows `v` to this type the way TensorFlow's cast does (keeping the low bits).
    #[inline]
    pub(crate) fn fit(self, v: i64) -> i64 {
        match self {
            SplitsDType::Int32 => i64::from(v as i32),
            SplitsDType::Int64 => v,
        }
    }
}

/// How to parse one output tensor: TensorFlow's feature configuration types.
///
/// In a [`Spec`] the map key is the output name; for `FixedLen`, `VarLen` and
/// `FixedLenSequence` it is also the feature key, as in TensorFlow.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum FeatureSpec {
    /// `tf.io.FixedLenFeature(shape, dtype, default_value)`: a dense tensor of `shape` per
    /// record (`[batch] + shape` for a batch). Every record must hold exactly `prod(shape)`
    /// values, or be missing the feature when `default` is set. `default` holds `prod(shape)`
    /// values, row-major (an `Int64` default is accepted for a `Float32` feature, as TensorFlow
    /// converts Python integers); an empty default means "no default", as in TensorFlow.
    FixedLen {
        /// The element type.
        dtype: DType,
        /// The shape of one record's value (`[]` for a scalar).
        shape: Vec<u64>,
        /// The value of a record without the feature.
        default: Option<Values>,
    },
    /// `tf.io.VarLenFeature(dtype)`: a sparse tensor `[batch, max_len]` of each record's list.
    VarLen {
        /// The element type.
        dtype: DType,
    },
    /// `tf.io.SparseFeature(index_key, value_key, dtype, size, already_sorted)`: a sparse tensor
    /// of shape `[batch] + size` whose values come from `value_key` and whose indices come from
    /// the `index_keys` features (one per dimension of `size`).
    Sparse {
        /// One `int64_list` feature per dimension, holding each value's index.
        index_keys: Vec<String>,
        /// The feature holding the values.
        value_key: String,
        /// The element type of the values.
        dtype: DType,
        /// The dense shape, without the batch dimension; as long as `index_keys`.
        size: Vec<u64>,
        /// When false (TensorFlow's default) the entries are sorted by index, as
        /// `tf.sparse.reorder` does; when true they stay in record order.
        already_sorted: bool,
    },
    /// `tf.io.FixedLenSequenceFeature(shape, dtype, allow_missing, default_value)`.
    ///
    /// In [`parse_example`](super::parse_example) the feature's values are split into rows of
    /// `shape` and padded to the longest record with `default` (one value; zero or `""` when
    /// unset): `[batch, max_rows] + shape`. TensorFlow requires `allow_missing` there.
    ///
    /// In the feature lists of [`parse_sequence_example`](super::parse_sequence_example) each
    /// step is one row of `shape`, padded with zeros / `""` to the longest sequence; a missing
    /// feature list is an error unless `allow_missing`. TensorFlow rejects a `default` there.
    FixedLenSequence {
        /// The element type.
        dtype: DType,
        /// The shape of one row (`[]` for one value per row); it must hold at least one value.
        shape: Vec<u64>,
        /// Whether a record may lack the feature.
        allow_missing: bool,
        /// The padding value (one value), `parse_example` only.
        default: Option<Values>,
    },
    /// `tf.io.RaggedFeature(dtype, value_key, partitions, row_splits_dtype)`: a ragged tensor
    /// `[batch, (rows)..., (values)]` of the values of `value_key` (the output name when
    /// `None`), split by `partitions` (outermost first). As TensorFlow's default
    /// (`validate=False`), the partitions are not checked against the values.
    Ragged {
        /// The element type.
        dtype: DType,
        /// The feature holding the values; `None` means the output name.
        value_key: Option<String>,
        /// The row partitions, outermost first.
        partitions: Vec<Partition>,
        /// The integer type of the partitions.
        row_splits_dtype: SplitsDType,
    },
}

impl FeatureSpec {
    /// The element type of the values.
    pub fn dtype(&self) -> DType {
        match self {
            FeatureSpec::FixedLen { dtype, .. }
            | FeatureSpec::VarLen { dtype }
            | FeatureSpec::Sparse { dtype, .. }
            | FeatureSpec::FixedLenSequence { dtype, .. }
            | FeatureSpec::Ragged { dtype, .. } => *dtype,
        }
    }

    /// `FixedLenFeature(shape, dtype)` without a default: the feature is required.
    pub fn fixed_len(dtype: DType, shape: impl Into<Vec<u64>>) -> Self {
        FeatureSpec::FixedLen {
            dtype,
            shape: shape.into(),
            default: None,
        }
    }

    /// `FixedLenFeature(shape, dtype, default_value)`.
    pub fn fixed_len_with_default(
        dtype: DType,
        shape: impl Into<Vec<u64>>,
        default: impl Into<Values>,
    ) -> Self {
        FeatureSpec::FixedLen {
            dtype,
            shape: shape.into(),
            default: Some(default.into()),
        }
    }

    /// `VarLenFeature(dtype)`.
    pub fn var_len(dtype: DType) -> Self {
        FeatureSpec::VarLen { dtype }
    }

    /// `SparseFeature(index_key, value_key, dtype, size)` with one index key, sorted.
    pub fn sparse(
        index_key: impl Into<String>,
        value_key: impl Into<String>,
        dtype: DType,
        size: u64,
    ) -> Self {
        FeatureSpec::Sparse {
            index_keys: vec![index_key.into()],
            value_key: value_key.into(),
            dtype,
            size: vec![size],
            already_sorted: false,
        }
    }

    /// `FixedLenSequenceFeature(shape, dtype, allow_missing)` without a default.
    pub fn fixed_len_sequence(
        dtype: DType,
        shape: impl Into<Vec<u64>>,
        allow_missing: bool,
    ) -> Self {
        FeatureSpec::FixedLenSequence {
            dtype,
            shape: shape.into(),
            allow_missing,
            default: None,
        }
    }

    /// `RaggedFeature(dtype)`: the output name's values, one ragged row per record.
    pub fn ragged(dtype: DType) -> Self {
        FeatureSpec::Ragged {
            dtype,
            value_key: None,
            partitions: Vec::new(),
            row_splits_dtype: SplitsDType::default(),
        }
    }

    /// `RaggedFeature(dtype, value_key, partitions)` with TensorFlow's default `int32` splits.
    pub fn ragged_with(
        dtype: DType,
        value_key: impl Into<String>,
        partitions: impl Into<Vec<Partition>>,
    ) -> Self {
        FeatureSpec::Ragged {
            dtype,
            value_key: Some(value_key.into()),
            partitions: partitions.into(),
            row_splits_dtype: SplitsDType::default(),
        }
    }
}

/// A feature description: output name to how to parse it, as the dict passed to
/// `tf.io.parse_example`.
pub type Spec = BTreeMap<String, FeatureSpec>;
