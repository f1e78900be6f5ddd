//! A feature spec compiled into the per-key plan the parsers run: which feature keys to read
//! and how, and how each output tensor is made from them.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::dtype::{DType, Partition, dtype_name, is_read_type, read_dtype};
use super::spec::{FeatureSpec, Spec, SplitsDType};
use super::tensor::Values;
use crate::error::{Error, Result};

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
    /// The outputs declared `int32` or `bool` (read as `int64`), whose values are checked
    /// against their type's range: output name and declared type.
    pub(crate) narrow: Vec<(String, DType)>,
    /// `(length, first 8 bytes, raw index)` of every key, sorted: most lookups are settled by
    /// two integer comparisons per probe, with one byte comparison to confirm a match.
    index: Vec<(usize, u64, usize)>,
    /// What each raw key held in the last batch parsed, to size the next batch's buffers.
    pub(crate) hints: Vec<SizeHint>,
    /// The most bytes a raw key's values of a batch may take once defaults are filled in
    /// ([`MAX_FILLED_BYTES`](super::MAX_FILLED_BYTES); lower in tests).
    pub(crate) max_filled: usize,
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

/// What a batch of records held of one key: its values, the bytes of its string values, and
/// its feature-list steps.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BatchHeld {
    pub(crate) values: usize,
    pub(crate) bytes: usize,
    pub(crate) steps: usize,
}

impl SizeHint {
    /// Remembers what a batch of `records` records held.
    pub(crate) fn learn(&self, records: usize, held: BatchHeld) {
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
    pub(crate) fn guess(&self, records: usize, bytes: usize) -> BatchHeld {
        let scale = |a: &AtomicUsize| {
            let n = a.load(Ordering::Relaxed).saturating_mul(records) / 16;
            n.saturating_add(n / 16).min(bytes)
        };
        BatchHeld {
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
        (DType::Int64 | DType::Int32 | DType::Bool, Values::Int64(v)) => {
            Ok(Values::Int64(v.clone()))
        }
        (DType::Int32, Values::Int32(v)) => {
            Ok(Values::Int64(v.iter().map(|&x| i64::from(x)).collect()))
        }
        (DType::Bool, Values::Bool(v)) => {
            Ok(Values::Int64(v.iter().map(|&b| i64::from(b)).collect()))
        }
        (DType::Float, Values::Float32(v)) => Ok(Values::Float32(v.clone())),
        (DType::Float, Values::Int64(v)) => Ok(Values::Float32(
            v.iter().map(|&x| x as f32).collect::<Vec<f32>>(),
        )),
        (DType::Bytes | DType::String, Values::Bytes(v)) => Ok(Values::Bytes(v.clone())),
        (dtype, v) => Err(spec_error(
            name,
            format!(
                "default value of type {} does not convert to {}",
                dtype_name(v.dtype()),
                dtype_name(dtype)
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
        if !is_read_type(dtype) {
            return Err(spec_error(
                name,
                format!(
                    "dtype {} is not supported: a tf.train.Example feature holds int64, float or \
                     string values",
                    dtype_name(dtype)
                ),
            ));
        }
        let dtype = read_dtype(dtype);
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
                            dtype_name(old.dtype),
                            dtype_name(dtype)
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

    /// Where each key will be in the plan's keys: BTreeMap order is the final vector order.
    fn positions(&self) -> HashMap<&str, usize> {
        self.raw
            .keys()
            .enumerate()
            .map(|(i, k)| (k.as_str(), i))
            .collect()
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
        // Every key was added above, so each is found.
        let positions = b.positions();
        let index = |key: &str| positions.get(key).copied().unwrap_or(usize::MAX);
        let mut outputs = Vec::with_capacity(spec.len());
        let narrow = spec
            .iter()
            .filter(|(_, f)| matches!(f.dtype(), DType::Int32 | DType::Bool))
            .map(|(name, f)| (name.clone(), f.dtype()))
            .collect();
        for (name, feature) in spec {
            let plan = match feature {
                FeatureSpec::FixedLen { .. }
                | FeatureSpec::VarLen { .. }
                | FeatureSpec::FixedLenSequence { .. } => OutputPlan::Raw(index(name)),
                FeatureSpec::Sparse {
                    index_keys,
                    value_key,
                    size,
                    already_sorted,
                    ..
                } => OutputPlan::Sparse {
                    index: index_keys.iter().map(|k| index(k)).collect(),
                    index_names: index_keys.clone(),
                    value: index(value_key),
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
                    let value = index(value_key.as_deref().unwrap_or(name));
                    let partitions = partitions
                        .iter()
                        .map(|p| match p {
                            Partition::RowSplits(k) => PartitionPlan::Splits(index(k)),
                            Partition::RowLengths(k) => PartitionPlan::Lengths(index(k)),
                            Partition::RowStarts(k) => PartitionPlan::Starts(index(k)),
                            Partition::RowLimits(k) => PartitionPlan::Limits(index(k)),
                            Partition::ValueRowIds(k) => PartitionPlan::RowIds(index(k)),
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
            .map(|(i, r)| {
                (
                    r.key.len(),
                    crate::codec::key_prefix_word(r.key.as_bytes()),
                    i,
                )
            })
            .collect();
        index.sort_unstable();
        Ok(Plan {
            hints: vec![SizeHint::default(); raw.len()],
            raw,
            outputs,
            narrow,
            index,
            max_filled: super::MAX_FILLED_BYTES,
        })
    }

    /// The raw key with these bytes: a binary search on (length, first 8 bytes as the integer
    /// the derived decoders also dispatch on), then the bytes.
    #[inline]
    pub(crate) fn lookup(&self, key: &[u8]) -> Option<usize> {
        let probe = (key.len(), crate::codec::key_prefix_word(key));
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
                    let mut d = convert_default(name, *dtype, d)?;
                    // One value fills the whole shape. TensorFlow 2.21 refuses this
                    // (`FixedLenFeature([3], default_value=0)` fails to reshape); the spec
                    // format accepts it, and so does this API, with the one meaning it can have.
                    if d.len() == 1 && stride > 1 {
                        // Each record lacking the feature holds the whole default: past the
                        // bound on a key's filled values, not even one record could.
                        let filled = stride
                            .saturating_mul(8)
                            .saturating_add(stride.saturating_mul(d.string_bytes()));
                        if filled > super::MAX_FILLED_BYTES {
                            return Err(spec_error(
                                name,
                                format!(
                                    "the default fills shape {} with {stride} values, more than \
                                     the {} MiB a key's values may take once defaults are filled \
                                     in",
                                    shape_string(false, &shape),
                                    super::MAX_FILLED_BYTES >> 20
                                ),
                            ));
                        }
                        d = d.repeat(stride);
                    }
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
                // Zero in the type the values are read in (`int32` and `bool` as int64,
                // checked afterwards), as `convert_default` gives a default.
                (_, None) => match dtype {
                    DType::Int32 | DType::Bool => Values::zeros(DType::Int64, 1),
                    d => Values::zeros(*d, 1),
                },
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
