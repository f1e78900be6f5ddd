//! The feature spec: TensorFlow's `feature_description` vocabulary as plain data, and its
//! compilation into the per-key plan the parsers run.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::tensor::Values;
use crate::error::{Error, Result};
use crate::feature::ListKind;

/// The element type of a feature: `tf.int64`, `tf.float32` or `tf.string`, the three types a
/// `tf.train.Feature` can hold (`int64_list`, `float_list`, `bytes_list`).
///
/// Tensors built from other sources (the Avro importer of `tfrecord-import`) also use `tf.bool`,
/// `tf.int32` and `tf.float64`; feature specs of the parsers here reject those three, as
/// `tf.io.parse_example` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DType {
    /// `tf.int64`, from an `int64_list`.
    Int64,
    /// `tf.float32`, from a `float_list`.
    Float32,
    /// `tf.string` (bytes), from a `bytes_list`.
    String,
    /// `tf.bool` (not a `tf.train.Feature` type).
    Bool,
    /// `tf.int32` (not a `tf.train.Feature` type).
    Int32,
    /// `tf.float64` (not a `tf.train.Feature` type).
    Float64,
}

impl DType {
    /// TensorFlow's name for the type, as its error messages spell it: `int64`, `float`,
    /// `string`.
    pub fn name(self) -> &'static str {
        match self {
            DType::Int64 => "int64",
            DType::Float32 => "float",
            DType::String => "string",
            DType::Bool => "bool",
            DType::Int32 => "int32",
            DType::Float64 => "double",
        }
    }

    /// Whether a `tf.train.Feature` holds values of this type (`int64`, `float`, `string`):
    /// the types `tf.io.parse_example` reads.
    pub fn is_feature_type(self) -> bool {
        matches!(self, DType::Int64 | DType::Float32 | DType::String)
    }

    /// The `tf.train.Feature` list that holds values of this type (`bool` and `int32` values are
    /// stored in an `int64_list`, `float64` values in a `float_list`).
    pub fn list_kind(self) -> ListKind {
        match self {
            DType::Int64 | DType::Bool | DType::Int32 => ListKind::Int64,
            DType::Float32 | DType::Float64 => ListKind::Float,
            DType::String => ListKind::Bytes,
        }
    }

    /// The type a list kind holds, for messages.
    pub(crate) fn of_kind(kind: ListKind) -> &'static str {
        match kind {
            ListKind::Int64 | ListKind::Int32 => "int64",
            ListKind::Float => "float",
            ListKind::Double => "double",
            ListKind::Bytes => "string",
        }
    }
}

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

/// One row partition of a [`FeatureSpec::Ragged`], outermost first, exactly as
/// `tf.io.RaggedFeature`'s partition types. Every kind but `UniformRowLength` names a feature
/// (an `int64_list`) holding the partition.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Partition {
    /// `RaggedFeature.RowSplits(key)`: row boundaries, `[0, ..., nvals]`.
    RowSplits(String),
    /// `RaggedFeature.RowLengths(key)`: the length of each row.
    RowLengths(String),
    /// `RaggedFeature.RowStarts(key)`: where each row starts.
    RowStarts(String),
    /// `RaggedFeature.RowLimits(key)`: where each row ends.
    RowLimits(String),
    /// `RaggedFeature.ValueRowIds(key)`: the row of each value.
    ValueRowIds(String),
    /// `RaggedFeature.UniformRowLength(length)`: rows of a fixed length (at least 1).
    UniformRowLength(u64),
}

impl Partition {
    /// The feature key holding the partition, `None` for `UniformRowLength`.
    pub fn key(&self) -> Option<&str> {
        match self {
            Partition::RowSplits(k)
            | Partition::RowLengths(k)
            | Partition::RowStarts(k)
            | Partition::RowLimits(k)
            | Partition::ValueRowIds(k) => Some(k),
            Partition::UniformRowLength(_) => None,
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

// ---- The compiled plan ----

/// Which parser a spec is compiled for: they accept different feature types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `parse_example`: everything but `FixedLenSequence` without `allow_missing`.
    Example,
    /// The context of `parse_sequence_example`: `FixedLen`, `VarLen`, `Ragged`.
    Context,
    /// The feature lists of `parse_sequence_example`: `VarLen`, `FixedLenSequence`, `Ragged`.
    FeatureLists,
}

/// How one feature key is read from each record (TensorFlow's dense, sparse and ragged keys).
#[derive(Clone, Debug)]
pub(crate) enum RawKind {
    /// A fixed-length dense key: exactly `stride` values per record, or the default.
    Dense {
        shape: Vec<usize>,
        stride: usize,
        /// Exactly `stride` values; `None` when the feature is required.
        default: Option<Values>,
    },
    /// A variable-length dense key (`FixedLenSequence`): rows of `stride` values.
    DenseVar {
        row_shape: Vec<usize>,
        stride: usize,
        /// One value: the padding.
        pad: Values,
        allow_missing: bool,
    },
    /// A sparse key (`VarLen`, and the keys of a `SparseFeature`).
    Sparse,
    /// A ragged key (the values and partitions of a `RaggedFeature`).
    Ragged { splits: SplitsDType },
}

impl RawKind {
    fn category(&self) -> &'static str {
        match self {
            RawKind::Dense { .. } | RawKind::DenseVar { .. } => "dense",
            RawKind::Sparse => "sparse",
            RawKind::Ragged { .. } => "ragged",
        }
    }
}

/// One feature key to read.
#[derive(Clone, Debug)]
pub(crate) struct RawKey {
    pub(crate) key: String,
    pub(crate) dtype: DType,
    pub(crate) kind: RawKind,
}

/// A partition of a ragged output, with the raw key index holding it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum PartitionPlan {
    Splits(usize),
    Lengths(usize),
    Starts(usize),
    Limits(usize),
    RowIds(usize),
    Uniform(i64),
}

/// How an output tensor is made from the raw keys.
#[derive(Clone, Debug)]
pub(crate) enum OutputPlan {
    /// The raw key's tensor as it is (`FixedLen`, `VarLen`, `FixedLenSequence`).
    Raw(usize),
    /// A `SparseFeature`.
    Sparse {
        index: Vec<usize>,
        index_names: Vec<String>,
        value: usize,
        size: Vec<i64>,
        already_sorted: bool,
    },
    /// A `RaggedFeature`.
    Ragged {
        value: usize,
        partitions: Vec<PartitionPlan>,
        splits: SplitsDType,
    },
}

/// A compiled spec: the raw keys sorted by their bytes (looked up by binary search), and the
/// outputs in name order.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub(crate) raw: Vec<RawKey>,
    pub(crate) outputs: Vec<(String, OutputPlan)>,
    /// `(length, first 8 bytes, raw index)` of every key, sorted: most lookups are settled by
    /// two integer comparisons per probe, with one byte comparison to confirm a match.
    index: Vec<(usize, u64, usize)>,
    /// What each raw key held in the last batch parsed, to size the next batch's buffers.
    pub(crate) hints: Vec<SizeHint>,
}

/// How much one raw key held per record in the last batch parsed with a plan: the next batch
/// reserves its buffers from it at once instead of growing them by doubling, which copies and
/// touches fresh memory (page faults) several times over. Only a guess: any value works, and
/// reservations are capped by the batch's size.
#[derive(Debug, Default)]
pub(crate) struct SizeHint {
    /// Values, bytes of string values, and feature-list steps per record, in 1/16ths.
    values: AtomicUsize,
    bytes: AtomicUsize,
    steps: AtomicUsize,
}

impl Clone for SizeHint {
    fn clone(&self) -> Self {
        let copy = |a: &AtomicUsize| AtomicUsize::new(a.load(Ordering::Relaxed));
        SizeHint {
            values: copy(&self.values),
            bytes: copy(&self.bytes),
            steps: copy(&self.steps),
        }
    }
}

/// What a batch of `records` records held of one key.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Held {
    pub(crate) values: usize,
    pub(crate) bytes: usize,
    pub(crate) steps: usize,
}

impl SizeHint {
    /// Remembers what a batch of `records` records held.
    pub(crate) fn learn(&self, records: usize, held: Held) {
        if records == 0 {
            return;
        }
        let per = |n: usize| n.saturating_mul(16) / records;
        self.values.store(per(held.values), Ordering::Relaxed);
        self.bytes.store(per(held.bytes), Ordering::Relaxed);
        self.steps.store(per(held.steps), Ordering::Relaxed);
    }

    /// The guess for a batch of `records` records of `bytes` bytes in all: what the last
    /// batch held per record, plus a sixteenth, and never more than the batch's bytes (every
    /// value, string byte or step takes at least one byte of input).
    pub(crate) fn guess(&self, records: usize, bytes: usize) -> Held {
        let scale = |a: &AtomicUsize| {
            let n = a.load(Ordering::Relaxed).saturating_mul(records) / 16;
            n.saturating_add(n / 16).min(bytes)
        };
        Held {
            values: scale(&self.values),
            bytes: scale(&self.bytes),
            steps: scale(&self.steps),
        }
    }
}

#[cold]
fn spec_error(name: &str, detail: impl std::fmt::Display) -> Error {
    Error::feature(format!("invalid feature spec: {detail}")).with_key(name)
}

fn dims(name: &str, shape: &[u64]) -> Result<(Vec<usize>, usize)> {
    let mut out = Vec::with_capacity(shape.len());
    let mut stride: usize = 1;
    for &d in shape {
        let d = usize::try_from(d)
            .ok()
            .filter(|d| i64::try_from(*d).is_ok())
            .ok_or_else(|| spec_error(name, format!("shape dimension {d} is too large")))?;
        stride = stride
            .checked_mul(d)
            .ok_or_else(|| spec_error(name, "shape has too many elements"))?;
        out.push(d);
    }
    Ok((out, stride))
}

/// A shape as TensorFlow prints it: `[2,3]`, `[]`, `[?,2]`.
pub(crate) fn shape_string(prefix_unknown: bool, shape: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::with_capacity(shape.len() + 1);
    if prefix_unknown {
        parts.push("?".into());
    }
    parts.extend(shape.iter().map(ToString::to_string));
    format!("[{}]", parts.join(","))
}

/// `values` converted to `dtype` as `tf.convert_to_tensor` would: integers become floats,
/// anything else must already have the type.
fn convert_default(name: &str, dtype: DType, values: &Values) -> Result<Values> {
    match (dtype, values) {
        (DType::Int64, Values::Int64(v)) => Ok(Values::Int64(v.clone())),
        (DType::Float32, Values::Float32(v)) => Ok(Values::Float32(v.clone())),
        (DType::Float32, Values::Int64(v)) => Ok(Values::Float32(
            v.iter().map(|&x| x as f32).collect::<Vec<f32>>(),
        )),
        (DType::String, Values::Bytes(v)) => Ok(Values::Bytes(v.clone())),
        (dtype, v) => Err(spec_error(
            name,
            format!(
                "default value of type {} does not convert to {}",
                v.dtype().name(),
                dtype.name()
            ),
        )),
    }
}

struct Builder {
    raw: BTreeMap<String, RawKey>,
}

impl Builder {
    fn add(&mut self, name: &str, key: &str, dtype: DType, kind: RawKind) -> Result<()> {
        if key.is_empty() {
            return Err(spec_error(name, "a feature key may not be empty"));
        }
        if !dtype.is_feature_type() {
            return Err(spec_error(
                name,
                format!(
                    "dtype {} is not supported: a tf.train.Example feature holds int64, float or \
                     string values",
                    dtype.name()
                ),
            ));
        }
        match self.raw.get(key) {
            None => {
                self.raw.insert(
                    key.to_string(),
                    RawKey {
                        key: key.to_string(),
                        dtype,
                        kind,
                    },
                );
                Ok(())
            }
            Some(old) => match (&old.kind, &kind) {
                (RawKind::Sparse, RawKind::Sparse) if old.dtype == dtype => Ok(()),
                (RawKind::Ragged { splits: a }, RawKind::Ragged { splits: b })
                    if old.dtype == dtype && a == b =>
                {
                    Ok(())
                }
                (RawKind::Sparse, RawKind::Sparse)
                | (RawKind::Ragged { .. }, RawKind::Ragged { .. })
                    if old.dtype != dtype =>
                {
                    Err(spec_error(
                        name,
                        format!(
                            "conflicting type {} vs {} for feature {key:?}",
                            old.dtype.name(),
                            dtype.name()
                        ),
                    ))
                }
                (RawKind::Ragged { .. }, RawKind::Ragged { .. }) => Err(spec_error(
                    name,
                    format!("conflicting partition type for feature {key:?}"),
                )),
                (a, b) => Err(spec_error(
                    name,
                    format!(
                        "feature {key:?} is used both as a {} and a {} key; {} and {} keys must not intersect",
                        a.category(),
                        b.category(),
                        a.category(),
                        b.category()
                    ),
                )),
            },
        }
    }

    fn index(&self, key: &str) -> usize {
        // Keys are added before they are looked up; BTreeMap order is the final vector order.
        self.raw.keys().position(|k| k == key).unwrap_or(usize::MAX)
    }
}

impl Plan {
    /// Checks `spec` as TensorFlow's `_ParseOpParams` does and lays out the keys to read.
    pub(crate) fn compile(spec: &Spec, mode: Mode) -> Result<Plan> {
        let mut b = Builder {
            raw: BTreeMap::new(),
        };
        for (name, feature) in spec {
            compile_one(&mut b, name, feature, mode)?;
        }
        let mut outputs = Vec::with_capacity(spec.len());
        for (name, feature) in spec {
            let plan = match feature {
                FeatureSpec::FixedLen { .. }
                | FeatureSpec::VarLen { .. }
                | FeatureSpec::FixedLenSequence { .. } => OutputPlan::Raw(b.index(name)),
                FeatureSpec::Sparse {
                    index_keys,
                    value_key,
                    size,
                    already_sorted,
                    ..
                } => OutputPlan::Sparse {
                    index: index_keys.iter().map(|k| b.index(k)).collect(),
                    index_names: index_keys.clone(),
                    value: b.index(value_key),
                    size: size
                        .iter()
                        .map(|&s| i64::try_from(s).unwrap_or(i64::MAX))
                        .collect(),
                    already_sorted: *already_sorted,
                },
                FeatureSpec::Ragged {
                    value_key,
                    partitions,
                    row_splits_dtype,
                    ..
                } => {
                    let value = b.index(value_key.as_deref().unwrap_or(name));
                    let partitions = partitions
                        .iter()
                        .map(|p| match p {
                            Partition::RowSplits(k) => PartitionPlan::Splits(b.index(k)),
                            Partition::RowLengths(k) => PartitionPlan::Lengths(b.index(k)),
                            Partition::RowStarts(k) => PartitionPlan::Starts(b.index(k)),
                            Partition::RowLimits(k) => PartitionPlan::Limits(b.index(k)),
                            Partition::ValueRowIds(k) => PartitionPlan::RowIds(b.index(k)),
                            Partition::UniformRowLength(n) => {
                                PartitionPlan::Uniform(i64::try_from(*n).unwrap_or(i64::MAX))
                            }
                        })
                        .collect();
                    OutputPlan::Ragged {
                        value,
                        partitions,
                        splits: *row_splits_dtype,
                    }
                }
            };
            outputs.push((name.clone(), plan));
        }
        let raw: Vec<RawKey> = b.raw.into_values().collect();
        let mut index: Vec<(usize, u64, usize)> = raw
            .iter()
            .enumerate()
            .map(|(i, r)| (r.key.len(), crate::codec::key_word(r.key.as_bytes()), i))
            .collect();
        index.sort_unstable();
        Ok(Plan {
            hints: vec![SizeHint::default(); raw.len()],
            raw,
            outputs,
            index,
        })
    }

    /// The raw key with these bytes: a binary search on (length, first 8 bytes as the integer
    /// the derived decoders also dispatch on), then the bytes.
    #[inline]
    pub(crate) fn lookup(&self, key: &[u8]) -> Option<usize> {
        let probe = (key.len(), crate::codec::key_word(key));
        let start = self.index.partition_point(|&(l, w, _)| (l, w) < probe);
        self.index
            .get(start..)?
            .iter()
            .take_while(|&&(l, w, _)| (l, w) == probe)
            .map(|&(_, _, i)| i)
            .find(|&i| self.raw.get(i).is_some_and(|r| r.key.as_bytes() == key))
    }
}

fn compile_one(b: &mut Builder, name: &str, feature: &FeatureSpec, mode: Mode) -> Result<()> {
    let unsupported = |what: &str| {
        let place = match mode {
            Mode::Example => "parse_example",
            Mode::Context => "the context features of parse_sequence_example",
            Mode::FeatureLists => "the feature lists of parse_sequence_example",
        };
        Err(spec_error(
            name,
            format!("{what} is not supported in {place}"),
        ))
    };
    match feature {
        FeatureSpec::FixedLen {
            dtype,
            shape,
            default,
        } => {
            if mode == Mode::FeatureLists {
                return unsupported("FixedLenFeature (use FixedLenSequenceFeature)");
            }
            let (shape, stride) = dims(name, shape)?;
            let default = match default {
                None => None,
                // An empty default for a scalar is not reshaped by TensorFlow: it means "no
                // default".
                Some(d) if d.is_empty() && shape.is_empty() => None,
                Some(d) => {
                    let d = convert_default(name, *dtype, d)?;
                    if d.len() != stride {
                        return Err(spec_error(
                            name,
                            format!(
                                "default value has {} elements but shape {} needs {stride}",
                                d.len(),
                                shape_string(false, &shape)
                            ),
                        ));
                    }
                    // An empty default is no default, as in TensorFlow.
                    (stride > 0).then_some(d)
                }
            };
            b.add(
                name,
                name,
                *dtype,
                RawKind::Dense {
                    shape,
                    stride,
                    default,
                },
            )
        }
        FeatureSpec::VarLen { dtype } => b.add(name, name, *dtype, RawKind::Sparse),
        FeatureSpec::Sparse {
            index_keys,
            value_key,
            dtype,
            size,
            ..
        } => {
            if mode != Mode::Example {
                return unsupported("SparseFeature");
            }
            if index_keys.is_empty() {
                return Err(spec_error(name, "missing index_key for SparseFeature"));
            }
            if value_key.is_empty() {
                return Err(spec_error(name, "missing value_key for SparseFeature"));
            }
            if size.len() != index_keys.len() {
                return Err(spec_error(
                    name,
                    format!(
                        "SparseFeature has {} index keys but {} sizes",
                        index_keys.len(),
                        size.len()
                    ),
                ));
            }
            if let Some(s) = size.iter().find(|&&s| i64::try_from(s).is_err()) {
                return Err(spec_error(name, format!("size {s} is too large")));
            }
            let mut sorted: Vec<&String> = index_keys.iter().collect();
            sorted.sort();
            for k in sorted {
                b.add(name, k, DType::Int64, RawKind::Sparse)?;
            }
            b.add(name, value_key, *dtype, RawKind::Sparse)
        }
        FeatureSpec::FixedLenSequence {
            dtype,
            shape,
            allow_missing,
            default,
        } => {
            if mode == Mode::Context {
                return unsupported("FixedLenSequenceFeature");
            }
            if mode == Mode::Example && !allow_missing {
                return Err(spec_error(
                    name,
                    "Unsupported: FixedLenSequenceFeature requires allow_missing to be True",
                ));
            }
            let (row_shape, stride) = dims(name, shape)?;
            if stride == 0 {
                return Err(spec_error(
                    name,
                    format!(
                        "FixedLenSequenceFeature shape {} holds no values",
                        shape_string(false, &row_shape)
                    ),
                ));
            }
            let pad = match (mode, default) {
                (Mode::FeatureLists, Some(_)) => {
                    return Err(spec_error(
                        name,
                        "a FixedLenSequenceFeature of a feature list may not have a default value (TensorFlow pads with zeros)",
                    ));
                }
                (_, Some(d)) => {
                    let d = convert_default(name, *dtype, d)?;
                    if d.len() != 1 {
                        return Err(spec_error(
                            name,
                            format!(
                                "the padding value of a FixedLenSequenceFeature is one value, found {}",
                                d.len()
                            ),
                        ));
                    }
                    d
                }
                (_, None) => Values::zeros(*dtype, 1),
            };
            b.add(
                name,
                name,
                *dtype,
                RawKind::DenseVar {
                    row_shape,
                    stride,
                    pad,
                    allow_missing: *allow_missing,
                },
            )
        }
        FeatureSpec::Ragged {
            dtype,
            value_key,
            partitions,
            row_splits_dtype,
        } => {
            let splits = *row_splits_dtype;
            let value_key = value_key.as_deref().unwrap_or(name);
            b.add(name, value_key, *dtype, RawKind::Ragged { splits })?;
            for p in partitions {
                match p {
                    Partition::UniformRowLength(n) => {
                        let max = match splits {
                            SplitsDType::Int32 => i32::MAX.unsigned_abs().into(),
                            SplitsDType::Int64 => i64::MAX.unsigned_abs(),
                        };
                        if *n == 0 || *n > max {
                            return Err(spec_error(
                                name,
                                format!("uniform row length {n} is out of range (1..={max})"),
                            ));
                        }
                    }
                    other => {
                        let key = other.key().unwrap_or_default();
                        b.add(name, key, DType::Int64, RawKind::Ragged { splits })?;
                    }
                }
            }
            Ok(())
        }
    }
}
