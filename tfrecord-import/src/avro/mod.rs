//! Avro to tensors and to records, with the key expressions of the Avro dataset design (seed
//! `002`, as tensorflow-io's `parse_avro` shipped most of it).
//!
//! An [`AvroSpec`] is a list of [`AvroFeature`]s, each an output name, a [key
//! expression](expr) into the Avro record (its `source`), a dtype and a kind. It gives two
//! outputs:
//!
//! - **batched tensors** ([`AvroSpec::parse_batch`]): one [`Tensor`] per feature, batch
//!   dimension first, with the semantics of the seed's Tables 2 and 3;
//! - **records** ([`AvroSpec::row`]): one `tf.train.Example` (or `OFRecord`) per Avro record,
//!   whose features `tf.io.parse_example` reads back with the same spec
//!   (`tfrecord parse --spec`): fixed and var features under their name, a sparse feature as
//!   its index keys and value key.
//!
//! A spec comes from code or from a record of a TOML spec file ([`AvroSpec::from_record`]),
//! where each feature may name its key expression with `source = "..."` (else its table key is
//! the key expression).
//!
//! # Types (seed Table 1, strict)
//!
//! | Avro | dtype |
//! | --- | --- |
//! | `boolean` | `bool` |
//! | `int` (also `date`, `time-millis`) | `int32` |
//! | `long` (also `time-micros`, the timestamps) | `int64` |
//! | `float` | `float` (`float32`) |
//! | `double` | `double` (`float64`) |
//! | `string`, `bytes`, `enum` (its symbol), `fixed` (its bytes), `uuid` (its text) | `string` / `bytes` (`tf.string`) |
//! | `null` | the feature's default; without one an error |
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
//!   the array's elements row-major (the seed's "combining and reshaping").
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
//! leaves sparse indices beyond `size` unchecked, and has no `[*]` over a map (the seed's
//! `@cars[*].engine.id`). Here ranks come from the expression, those inputs give the seed's
//! results or a clear error, `[*]` takes a map's values in key order, and index keys may also be Avro `int`s
//! (as in the seed's own examples). A missing map key or array index takes the default when
//! there is one (tensorflow-io always fails).

mod eval;
pub mod expr;
mod file;

use std::path::PathBuf;

use tfrecord_core::parse::{DType, Tensor, Tensors, Values};
use tfrecord_schema::ir::{self, FeatureKind, Literal, Presence, RecordKind};

pub use apache_avro::Schema;
pub use apache_avro::types::Value;
pub use expr::{KeyExpr, Step};
pub use file::AvroFile;

use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::row::FeatureRow;
use eval::{Node, eval, type_name, unwrap_union};

/// The most elements one output tensor may have (2^26): a spec whose shape asks for more is an
/// error rather than an allocation.
const MAX_ELEMENTS: usize = 1 << 26;

/// One output of an [`AvroSpec`].
#[derive(Clone, Debug, PartialEq)]
pub struct AvroFeature {
    /// The output name: the tensor's key, and the feature key of a fixed or var feature in the
    /// records output.
    pub name: String,
    /// The key expression (see [`expr`]).
    pub source: String,
    /// The element type.
    pub dtype: DType,
    /// The layout.
    pub kind: AvroKind,
}

/// How an [`AvroFeature`] lays out its values.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum AvroKind {
    /// `FixedLenFeature(shape, dtype, default_value)`: dense `[batch] + shape`.
    FixedLen {
        /// One entry per `[*]` / filter of the source (or, with exactly one `[*]`, two or more
        /// entries, to reshape the array row-major); `None` is unknown: the batch's largest
        /// count.
        shape: Vec<Option<u64>>,
        /// A scalar, or a full tensor of `shape` (row-major), of the feature's dtype.
        default: Option<Values>,
    },
    /// A `VarLenFeature` of the rank the source gives: sparse `[batch, m1, ..., mk]`.
    VarLen {
        /// The value of a missing value (a scalar of the feature's dtype).
        default: Option<Values>,
        /// Leave missing values out instead of failing (a spec's `optional = true`).
        skip_missing: bool,
    },
    /// `SparseFeature(index_key, value_key, dtype, size, already_sorted)`.
    Sparse {
        /// One key expression per dimension (relative to the source's elements, or `@` from the
        /// root); also the feature keys of the index lists in the records output.
        index_keys: Vec<String>,
        /// The key expression of the values; also their feature key in the records output.
        value_key: String,
        /// The dense shape, one size per index key.
        size: Vec<u64>,
        /// Keep the entries in traversal order instead of sorting them.
        already_sorted: bool,
    },
}

impl AvroFeature {
    /// A `FixedLen` feature without a default.
    pub fn fixed_len(
        name: impl Into<String>,
        source: impl Into<String>,
        dtype: DType,
        shape: impl IntoIterator<Item = u64>,
    ) -> Self {
        AvroFeature {
            name: name.into(),
            source: source.into(),
            dtype,
            kind: AvroKind::FixedLen {
                shape: shape.into_iter().map(Some).collect(),
                default: None,
            },
        }
    }

    /// A `VarLen` feature without a default.
    pub fn var_len(name: impl Into<String>, source: impl Into<String>, dtype: DType) -> Self {
        AvroFeature {
            name: name.into(),
            source: source.into(),
            dtype,
            kind: AvroKind::VarLen {
                default: None,
                skip_missing: false,
            },
        }
    }

    /// A `Sparse` feature, sorted.
    pub fn sparse(
        name: impl Into<String>,
        source: impl Into<String>,
        dtype: DType,
        index_keys: impl IntoIterator<Item = impl Into<String>>,
        value_key: impl Into<String>,
        size: impl IntoIterator<Item = u64>,
    ) -> Self {
        AvroFeature {
            name: name.into(),
            source: source.into(),
            dtype,
            kind: AvroKind::Sparse {
                index_keys: index_keys.into_iter().map(Into::into).collect(),
                value_key: value_key.into(),
                size: size.into_iter().collect(),
                already_sorted: false,
            },
        }
    }

    /// The same feature with a default (for `FixedLen` and `VarLen`; ignored otherwise).
    #[must_use]
    pub fn with_default(mut self, value: impl Into<Values>) -> Self {
        match &mut self.kind {
            AvroKind::FixedLen { default, .. } | AvroKind::VarLen { default, .. } => {
                *default = Some(value.into());
            }
            AvroKind::Sparse { .. } => {}
        }
        self
    }
}

/// A sparse feature's index or value key.
#[derive(Clone, Debug)]
struct SparseKey {
    /// The key as written (the feature key in the records output).
    name: String,
    /// Relative to each element (`None`) or from the root.
    root: Option<KeyExpr>,
    relative: Option<KeyExpr>,
}

#[derive(Clone, Debug)]
enum Plan {
    Fixed {
        shape: Vec<Option<u64>>,
        default: Option<Values>,
        reshape: bool,
    },
    Var {
        default: Option<Values>,
        skip: bool,
    },
    Sparse {
        index: Vec<SparseKey>,
        value: SparseKey,
        size: Vec<u64>,
        sorted: bool,
    },
}

#[derive(Clone, Debug)]
struct Compiled {
    name: String,
    dtype: DType,
    expr: KeyExpr,
    dims: usize,
    plan: Plan,
}

/// A checked list of [`AvroFeature`]s: Avro records to batched tensors or to records.
#[derive(Clone, Debug)]
pub struct AvroSpec {
    features: Vec<Compiled>,
}

fn dims_str(batch: usize, dims: &[usize]) -> String {
    let mut parts = vec![batch.to_string()];
    parts.extend(dims.iter().map(ToString::to_string));
    format!("[{}]", parts.join(","))
}

impl AvroSpec {
    /// Checks the features.
    ///
    /// # Errors
    /// No features, an empty or repeated name, a key expression that does not parse, a shape
    /// whose rank does not match the expression's dimensions, a default of another dtype or
    /// size, a sparse feature whose `size` does not have one entry per index key.
    pub fn new(features: impl IntoIterator<Item = AvroFeature>) -> Result<Self> {
        let mut out: Vec<Compiled> = Vec::new();
        for f in features {
            let located = |e: Error| e.with_feature(f.name.clone());
            if f.name.is_empty() {
                return Err(Error::new("a feature name cannot be empty"));
            }
            if out.iter().any(|c| c.name == f.name) {
                return Err(located(Error::new("the feature is declared twice")));
            }
            let expr = KeyExpr::parse(&f.source).map_err(located)?;
            let dims = expr.dims();
            let check_default = |d: &Values, what: &str| -> Result<()> {
                if d.dtype() != f.dtype {
                    return Err(located(Error::new(format!(
                        "the default holds {} values but the feature's dtype is {}",
                        dtype_name(d.dtype()),
                        dtype_name(f.dtype)
                    ))));
                }
                if d.is_empty() {
                    return Err(located(Error::new(format!("the {what} default is empty"))));
                }
                Ok(())
            };
            let plan = match f.kind {
                AvroKind::FixedLen { shape, default } => {
                    let rank = shape.len();
                    let known: Option<Vec<u64>> = shape.iter().copied().collect();
                    let reshape = dims == 1 && rank >= 2;
                    if reshape && known.is_none() {
                        return Err(located(Error::new(
                            "a shape that reshapes the elements of an array must have no \
                             unknown dimensions",
                        )));
                    }
                    if !reshape && rank != dims {
                        let hint = if dims == 0 {
                            " (add `[*]` to take the elements of an array)"
                        } else {
                            ""
                        };
                        return Err(located(Error::new(format!(
                            "the shape {shape:?} has {rank} dimensions but the key expression \
                             `{}` has {dims} (one per `[*]` or filter){hint}",
                            f.source
                        ))));
                    }
                    if let Some(k) = &known {
                        let n = k.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
                        if n.is_none_or(|n| n > MAX_ELEMENTS as u64) {
                            return Err(located(Error::new(format!(
                                "the shape {k:?} has too many elements"
                            ))));
                        }
                    }
                    if let Some(d) = &default {
                        check_default(d, "")?;
                        if d.len() > 1 {
                            let want = known
                                .as_ref()
                                .and_then(|k| k.iter().try_fold(1u64, |a, &x| a.checked_mul(x)));
                            if want != Some(d.len() as u64) {
                                return Err(located(Error::new(format!(
                                    "the default has {} values; a tensor default must fill the \
                                     whole shape {shape:?} (or give one scalar)",
                                    d.len()
                                ))));
                            }
                        }
                    }
                    Plan::Fixed {
                        shape,
                        default,
                        reshape,
                    }
                }
                AvroKind::VarLen {
                    default,
                    skip_missing,
                } => {
                    if let Some(d) = &default {
                        check_default(d, "")?;
                        if d.len() != 1 {
                            return Err(located(Error::new(
                                "the default of a var feature must be one scalar",
                            )));
                        }
                    }
                    Plan::Var {
                        default,
                        skip: skip_missing,
                    }
                }
                AvroKind::Sparse {
                    index_keys,
                    value_key,
                    size,
                    already_sorted,
                } => {
                    if index_keys.is_empty() {
                        return Err(located(Error::new("a sparse feature needs an index key")));
                    }
                    if size.len() != index_keys.len() {
                        return Err(located(Error::new(format!(
                            "`size` has {} dimensions but there are {} index keys",
                            size.len(),
                            index_keys.len()
                        ))));
                    }
                    if size.iter().any(|&s| i64::try_from(s).is_err()) {
                        return Err(located(Error::new("a `size` is too large")));
                    }
                    let key = |k: &str| -> Result<SparseKey> {
                        let e = KeyExpr::parse(k).map_err(located)?;
                        Ok(if e.root {
                            SparseKey {
                                name: k.to_string(),
                                root: Some(e),
                                relative: None,
                            }
                        } else {
                            SparseKey {
                                name: k.to_string(),
                                root: None,
                                relative: Some(e),
                            }
                        })
                    };
                    Plan::Sparse {
                        index: index_keys.iter().map(|k| key(k)).collect::<Result<_>>()?,
                        value: key(&value_key)?,
                        size,
                        sorted: already_sorted,
                    }
                }
            };
            out.push(Compiled {
                name: f.name,
                dtype: f.dtype,
                expr,
                dims,
                plan,
            });
        }
        if out.is_empty() {
            return Err(Error::new("the spec has no features"));
        }
        Ok(AvroSpec { features: out })
    }

    /// The spec of one record of a TOML spec (see [`tfrecord_schema::ir::Schema::from_toml_str`]):
    /// each feature's key expression is its `source`, else its name; `fixed` features are
    /// `FixedLen` (with `optional = true`, a `VarLen` that skips missing values), `var`
    /// features `VarLen`, `sparse` features `Sparse`. Dtypes: `int64`, `int32`, `bool`,
    /// `float` (`float32`), `double` (`float64`), `bytes` and `string` (both `tf.string`, not
    /// checked for UTF-8).
    ///
    /// # Errors
    /// A `sequence_example` record, a `sequence` or `ragged` feature, a default that does not
    /// fit the dtype, and what [`AvroSpec::new`] rejects; the error names the feature.
    pub fn from_record(record: &ir::Record) -> Result<Self> {
        if record.kind != RecordKind::Example {
            return Err(Error::new(format!(
                "record `{}` is a sequence example; the Avro importer writes examples",
                record.name
            )));
        }
        let mut features = Vec::new();
        for f in record.fields.iter().filter(|f| !f.skip) {
            let located = |e: Error| e.with_feature(f.name.clone());
            let dtype = match f.dtype {
                Some(ir::DType::Int64) => DType::Int64,
                Some(ir::DType::Int32) => DType::Int32,
                Some(ir::DType::Bool) => DType::Bool,
                Some(ir::DType::Float) => DType::Float32,
                Some(ir::DType::Double) => DType::Float64,
                Some(ir::DType::Bytes | ir::DType::String) => DType::String,
                _ => return Err(located(Error::new("the feature has no dtype"))),
            };
            let source = f.source.clone().unwrap_or_else(|| f.name.clone());
            let default = |lit: &Literal| literal_values(lit, dtype).map_err(located);
            let kind = match (&f.kind, &f.presence) {
                (FeatureKind::Fixed { .. }, Presence::Optional) => AvroKind::VarLen {
                    default: None,
                    skip_missing: true,
                },
                (FeatureKind::Fixed { shape }, presence) => AvroKind::FixedLen {
                    shape: shape.iter().copied().map(Some).collect(),
                    default: match presence {
                        Presence::Default(l) => Some(default(l)?),
                        Presence::TypeDefault => Some(Values::zeros(dtype, 1)),
                        _ => None,
                    },
                },
                (FeatureKind::Var, presence) => AvroKind::VarLen {
                    default: match presence {
                        Presence::Default(l) => Some(default(l)?),
                        _ => None,
                    },
                    skip_missing: *presence == Presence::Optional,
                },
                (
                    FeatureKind::Sparse {
                        index_keys,
                        size,
                        already_sorted,
                    },
                    _,
                ) => AvroKind::Sparse {
                    index_keys: index_keys.clone(),
                    value_key: f.key.clone(),
                    size: size.clone(),
                    already_sorted: *already_sorted,
                },
                (k, _) => {
                    return Err(located(Error::new(format!(
                        "a `{}` feature cannot be imported from Avro (use fixed, var or sparse)",
                        k.name()
                    ))));
                }
            };
            features.push(AvroFeature {
                name: f.name.clone(),
                source,
                dtype,
                kind,
            });
        }
        AvroSpec::new(features)
    }

    /// The output names, in spec order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.features.iter().map(|f| f.name.as_str())
    }

    /// Parses a batch of Avro records (each a record [`Value`], as [`AvroFile`] yields them)
    /// into one tensor per feature, batch dimension first.
    ///
    /// # Errors
    /// A key expression that does not fit the data (an unknown field, the wrong container), a
    /// value of another type than the dtype, a missing value without a default, more elements
    /// than the shape holds, index and value lists of different lengths, an index outside
    /// `size`. The error names the feature and the record's index within the batch.
    pub fn parse_batch(&self, records: &[Value]) -> Result<Tensors> {
        let mut out = Tensors::new();
        for f in &self.features {
            let t = f
                .tensor(records)
                .map_err(|e| e.with_feature(f.name.clone()))?;
            out.insert(f.name.clone(), t);
        }
        Ok(out)
    }

    /// The features of one Avro record as an output record: a fixed feature's values
    /// row-major (defaults filled in), a var feature's values in traversal order (left out
    /// when it has none), a sparse feature's index lists under the index keys and its values
    /// under the value key (sorted unless `already_sorted`).
    ///
    /// # Errors
    /// As [`parse_batch`](Self::parse_batch) for a batch of this one record.
    pub fn row(&self, record: &Value) -> Result<FeatureRow> {
        let mut row = FeatureRow::new();
        let one = std::slice::from_ref(record);
        for f in &self.features {
            let located = |e: Error| e.with_feature(f.name.clone());
            let t = f.tensor(one).map_err(located)?;
            match (t, &f.plan) {
                (Tensor::Dense { values, .. }, _) => row.insert(f.name.clone(), values),
                (Tensor::Sparse { values, .. }, Plan::Var { .. }) if !values.is_empty() => {
                    row.insert(f.name.clone(), values);
                }
                (
                    Tensor::Sparse {
                        indices,
                        values,
                        dense_shape,
                    },
                    Plan::Sparse { index, value, .. },
                ) => {
                    let rank = dense_shape.len();
                    for (j, key) in index.iter().enumerate() {
                        let column: Vec<i64> = indices
                            .chunks(rank.max(1))
                            .filter_map(|row| row.get(j + 1).copied())
                            .collect();
                        if row.features.contains_key(&key.name) {
                            return Err(located(Error::new(format!(
                                "the index key `{}` is also another feature's key",
                                key.name
                            ))));
                        }
                        row.insert(key.name.clone(), column);
                    }
                    row.insert(value.name.clone(), values);
                }
                _ => {}
            }
        }
        Ok(row)
    }
}

/// The dtype's name in the seed's vocabulary (`float32`, `float64`, ...).
pub(crate) fn dtype_name(d: DType) -> &'static str {
    match d {
        DType::Int64 => "int64",
        DType::Float32 => "float32",
        DType::String => "string",
        DType::Bool => "bool",
        DType::Int32 => "int32",
        DType::Float64 => "float64",
        _ => "?",
    }
}

/// The Avro types a dtype takes, for messages.
fn avro_types(d: DType) -> &'static str {
    match d {
        DType::Bool => "boolean",
        DType::Int32 => "int",
        DType::Int64 => "long",
        DType::Float32 => "float",
        DType::Float64 => "double",
        DType::String => "string, bytes, enum or fixed",
        _ => "?",
    }
}

/// A spec default literal as values of `dtype`.
fn literal_values(lit: &Literal, dtype: DType) -> Result<Values> {
    fn flat<'a>(l: &'a Literal, out: &mut Vec<&'a Literal>) {
        match l {
            Literal::List(items) => items.iter().for_each(|i| flat(i, out)),
            other => out.push(other),
        }
    }
    let mut items = Vec::new();
    flat(lit, &mut items);
    let bad = |l: &Literal| {
        Error::new(format!(
            "the default holds {}, which is not a {} value",
            l.kind_name(),
            dtype_name(dtype)
        ))
    };
    let mut out = Values::empty(dtype);
    for l in items {
        match (&mut out, l) {
            (Values::Int64(v), Literal::Int(n)) => {
                v.push(i64::try_from(*n).map_err(|_| bad(l))?);
            }
            (Values::Int32(v), Literal::Int(n)) => {
                v.push(i32::try_from(*n).map_err(|_| bad(l))?);
            }
            (Values::Bool(v), Literal::Bool(b)) => v.push(*b),
            #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
            (Values::Float32(v), Literal::Float(x)) => v.push(*x as f32),
            #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
            (Values::Float32(v), Literal::Int(n)) => v.push(*n as f32),
            (Values::Float64(v), Literal::Float(x)) => v.push(*x),
            #[allow(clippy::cast_precision_loss)]
            (Values::Float64(v), Literal::Int(n)) => v.push(*n as f64),
            (Values::Bytes(v), Literal::Str(s)) => v.push(s),
            _ => return Err(bad(l)),
        }
    }
    Ok(out)
}

/// Appends the value `v` to `out`, whose variant is the feature's dtype.
fn push_leaf(out: &mut Values, v: &Value) -> Result<()> {
    match (&mut *out, v) {
        (Values::Bool(o), Value::Boolean(b)) => o.push(*b),
        (Values::Int32(o), Value::Int(x) | Value::Date(x) | Value::TimeMillis(x)) => o.push(*x),
        (
            Values::Int64(o),
            Value::Long(x)
            | Value::TimeMicros(x)
            | Value::TimestampMillis(x)
            | Value::TimestampMicros(x)
            | Value::TimestampNanos(x)
            | Value::LocalTimestampMillis(x)
            | Value::LocalTimestampMicros(x)
            | Value::LocalTimestampNanos(x),
        ) => o.push(*x),
        (Values::Float32(o), Value::Float(x)) => o.push(*x),
        (Values::Float64(o), Value::Double(x)) => o.push(*x),
        (Values::Bytes(o), Value::String(s) | Value::Enum(_, s)) => o.push(s),
        (Values::Bytes(o), Value::Bytes(b) | Value::Fixed(_, b)) => o.push(b),
        (Values::Bytes(o), Value::Uuid(u)) => o.push(u.to_string()),
        (out, v) => {
            let d = out.dtype();
            let hint = match (d, v) {
                (DType::Int64, Value::Int(_)) => {
                    "; read the file with a reader schema in which the field is a `long` to \
                     promote it"
                }
                (DType::Float64, Value::Float(_) | Value::Int(_) | Value::Long(_)) => {
                    "; read the file with a reader schema in which the field is a `double` to \
                     promote it"
                }
                (_, Value::Array(_)) => "; add `[*]` to the key expression to take its elements",
                _ => "",
            };
            return Err(Error::new(format!(
                "Expected types: '{}' but got type {} (dtype {} takes Avro {} values only{hint})",
                avro_types(d),
                type_name(v),
                dtype_name(d),
                avro_types(d)
            )));
        }
    }
    Ok(())
}

/// Appends element `i` of `src` (or its only element) to `out` (same variant).
fn push_from(out: &mut Values, src: &Values, i: usize) {
    let i = if src.len() == 1 { 0 } else { i };
    match (out, src) {
        (Values::Int64(o), Values::Int64(s)) => o.extend(s.get(i)),
        (Values::Int32(o), Values::Int32(s)) => o.extend(s.get(i)),
        (Values::Bool(o), Values::Bool(s)) => o.extend(s.get(i)),
        (Values::Float32(o), Values::Float32(s)) => o.extend(s.get(i)),
        (Values::Float64(o), Values::Float64(s)) => o.extend(s.get(i)),
        (Values::Bytes(o), Values::Bytes(s)) => o.extend(s.get(i)),
        _ => {}
    }
}

/// The largest list length at each of the `k` levels of the trees.
fn max_counts(trees: &[Node<'_>], k: usize) -> Vec<usize> {
    fn visit(n: &Node<'_>, depth: usize, m: &mut [usize]) {
        if let Node::List(items) = n {
            if let Some(x) = m.get_mut(depth) {
                *x = (*x).max(items.len());
            }
            for it in items {
                visit(it, depth + 1, m);
            }
        }
    }
    let mut m = vec![0; k];
    for t in trees {
        visit(t, 0, &mut m);
    }
    m
}

fn checked_product(dims: &[usize]) -> Result<usize> {
    dims.iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&n| n <= MAX_ELEMENTS)
        .ok_or_else(|| Error::new(format!("the output shape {dims:?} has too many elements")))
}

fn to_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Compiled {
    fn trees<'v>(&self, records: &'v [Value]) -> Result<Vec<Node<'v>>> {
        records
            .iter()
            .enumerate()
            .map(|(r, rec)| eval(&self.expr, rec, rec).map_err(|e| e.with_record(r as u64)))
            .collect()
    }

    fn tensor(&self, records: &[Value]) -> Result<Tensor> {
        match &self.plan {
            Plan::Fixed {
                shape,
                default,
                reshape,
            } => self.fixed(records, shape, default.as_ref(), *reshape),
            Plan::Var { default, skip } => self.var(records, default.as_ref(), *skip),
            Plan::Sparse {
                index,
                value,
                size,
                sorted,
            } => self.sparse(records, index, value, size, *sorted),
        }
    }

    fn fixed(
        &self,
        records: &[Value],
        shape: &[Option<u64>],
        default: Option<&Values>,
        reshape: bool,
    ) -> Result<Tensor> {
        let trees = self.trees(records)?;
        let batch = trees.len();
        let counts = max_counts(&trees, self.dims);
        let dims: Vec<usize> = if reshape {
            shape
                .iter()
                .map(|d| usize::try_from(d.unwrap_or(0)).unwrap_or(usize::MAX))
                .collect()
        } else {
            shape
                .iter()
                .zip(&counts)
                .map(|(d, &m)| d.map_or(m, |d| usize::try_from(d).unwrap_or(usize::MAX)))
                .collect()
        };
        let per = checked_product(&dims)?;
        let total = per
            .checked_mul(batch)
            .filter(|&n| n <= MAX_ELEMENTS)
            .ok_or_else(|| Error::new("the output has too many elements"))?;
        // Row-major strides of the per-record block.
        let mut strides = vec![1usize; dims.len()];
        for j in (0..dims.len().saturating_sub(1)).rev() {
            strides[j] = strides[j + 1].saturating_mul(dims[j + 1]);
        }
        let shape_text = dims_str(batch, &dims);
        let _ = total;
        let mut out = Values::empty(self.dtype);
        let mut slots: Vec<Option<&Value>> = Vec::new();
        for (r, tree) in trees.iter().enumerate() {
            let located = |e: Error| e.with_record(r as u64);
            slots.clear();
            slots.resize(per, None);
            let mut reason: Option<String> = None;
            if reshape {
                match tree {
                    Node::List(items) => {
                        if items.len() > per {
                            return Err(located(Error::new(format!(
                                "Per shape {shape_text} expected at most {per} elements but \
                                 received {} elements",
                                items.len()
                            ))));
                        }
                        for (i, it) in items.iter().enumerate() {
                            match it {
                                Node::Value(v) => {
                                    if let Some(slot) = slots.get_mut(i) {
                                        *slot = Some(v);
                                    }
                                }
                                Node::Hole(h) => {
                                    reason.get_or_insert_with(|| h.clone());
                                }
                                Node::List(_) => {}
                            }
                        }
                    }
                    Node::Hole(h) => reason = Some(h.clone()),
                    Node::Value(v) => {
                        if let Some(slot) = slots.first_mut() {
                            *slot = Some(v);
                        }
                    }
                }
            } else {
                place(
                    tree,
                    0,
                    0,
                    &dims,
                    &strides,
                    &mut slots,
                    &mut reason,
                    &shape_text,
                )
                .map_err(located)?;
            }
            for (i, slot) in slots.iter().enumerate() {
                match (slot, default) {
                    (Some(v), _) => push_leaf(&mut out, v).map_err(located)?,
                    (None, Some(d)) => push_from(&mut out, d, i),
                    (None, None) => {
                        let present = slots.iter().filter(|s| s.is_some()).count();
                        let why = match reason {
                            Some(h) if h == "the value is null" => format!(
                                "the value is null and the feature has no default (For key \
                                 '{}' expected scalar default but got tensor with shape [0])",
                                self.expr
                            ),
                            Some(h) => format!("{h} (the feature has no default)"),
                            None => format!(
                                "the shape {shape_text} needs {per} values per record but only \
                                 {present} are present, and the feature has no default"
                            ),
                        };
                        return Err(located(Error::new(why)));
                    }
                }
            }
        }
        let mut out_shape = vec![batch];
        out_shape.extend(&dims);
        Ok(Tensor::Dense {
            shape: out_shape,
            values: out,
        })
    }

    fn var(&self, records: &[Value], default: Option<&Values>, skip: bool) -> Result<Tensor> {
        let trees = self.trees(records)?;
        let k = self.dims;
        let mut indices: Vec<i64> = Vec::new();
        let mut values = Values::empty(self.dtype);
        let mut path: Vec<i64> = Vec::new();
        for (r, tree) in trees.iter().enumerate() {
            let located = |e: Error| e.with_record(r as u64);
            path.clear();
            path.push(to_i64(r));
            if k == 0 {
                path.push(0);
            }
            emit(
                tree,
                k,
                0,
                &mut path,
                &mut indices,
                &mut values,
                default,
                skip,
            )
            .map_err(located)?;
        }
        let mut dense_shape = vec![to_i64(trees.len())];
        if k == 0 {
            dense_shape.push(i64::from(!values.is_empty()));
        } else {
            dense_shape.extend(max_counts(&trees, k).into_iter().map(to_i64));
        }
        Ok(Tensor::Sparse {
            indices,
            values,
            dense_shape,
        })
    }

    fn sparse(
        &self,
        records: &[Value],
        index: &[SparseKey],
        value: &SparseKey,
        size: &[u64],
        already_sorted: bool,
    ) -> Result<Tensor> {
        let rank = size.len() + 1;
        let mut entries: Vec<(Vec<i64>, usize)> = Vec::new();
        let mut values = Values::empty(self.dtype);
        for (r, rec) in records.iter().enumerate() {
            let located = |e: Error| e.with_record(r as u64);
            // The elements the relative keys are read from (the source is not read when every
            // key starts at the root: it is then only the output name).
            let mut items: Vec<&Value> = Vec::new();
            if index.iter().chain([value]).any(|k| k.relative.is_some()) {
                let source = eval(&self.expr, rec, rec).map_err(located)?;
                collect_items(&source, &mut items);
            }
            let mut elements: Vec<&Value> = Vec::new();
            for it in items {
                match it {
                    Value::Array(a) => elements.extend(a.iter().map(unwrap_union)),
                    other => elements.push(other),
                }
            }
            let read = |key: &SparseKey| -> Result<Vec<&Value>> {
                let mut out = Vec::new();
                let missing = |h: String| Error::new(format!("the key `{}`: {h}", key.name));
                if let Some(e) = &key.root {
                    flatten_values(&eval(e, rec, rec)?, &mut out).map_err(missing)?;
                } else if let Some(e) = &key.relative {
                    for el in &elements {
                        flatten_values(&eval(e, el, rec)?, &mut out).map_err(missing)?;
                    }
                }
                Ok(out)
            };
            let vals = read(value).map_err(located)?;
            let mut idx_lists = Vec::with_capacity(index.len());
            for key in index {
                let list = read(key).map_err(located)?;
                if list.len() != vals.len() {
                    return Err(located(Error::new(format!(
                        "Number of elements in indices ({}) and values ({}) do not match \
                         (index key `{}`, value key `{}`)",
                        list.len(),
                        vals.len(),
                        key.name,
                        value.name
                    ))));
                }
                idx_lists.push(list);
            }
            for (i, v) in vals.iter().enumerate() {
                let mut idx = Vec::with_capacity(rank);
                idx.push(to_i64(r));
                for (j, list) in idx_lists.iter().enumerate() {
                    let n = match list.get(i) {
                        Some(Value::Long(n)) => *n,
                        Some(Value::Int(n)) => i64::from(*n),
                        Some(other) => {
                            return Err(located(Error::new(format!(
                                "Expected types: 'long' but got type {} (the index key `{}` \
                                 must hold Avro long or int values)",
                                type_name(other),
                                index[j].name
                            ))));
                        }
                        None => 0,
                    };
                    let limit = size.get(j).copied().unwrap_or(0);
                    if u64::try_from(n).map_or(true, |n| n >= limit) {
                        return Err(located(Error::new(format!(
                            "the index {n} of index key `{}` is outside [0, {limit}) (its size)",
                            index[j].name
                        ))));
                    }
                    idx.push(n);
                }
                push_leaf(&mut values, v)
                    .map_err(|e| located(Error::new(format!("value key `{}`: {e}", value.name))))?;
                entries.push((idx, entries.len()));
            }
        }
        if !already_sorted {
            entries.sort_by(|a, b| a.0.cmp(&b.0));
        }
        let perm: Vec<usize> = entries.iter().map(|e| e.1).collect();
        let values = permute(values, &perm);
        let indices: Vec<i64> = entries.into_iter().flat_map(|e| e.0).collect();
        let mut dense_shape = vec![to_i64(records.len())];
        dense_shape.extend(size.iter().map(|&s| i64::try_from(s).unwrap_or(i64::MAX)));
        Ok(Tensor::Sparse {
            indices,
            values,
            dense_shape,
        })
    }
}

/// `values` in the order `perm`.
fn permute(values: Values, perm: &[usize]) -> Values {
    fn pick<T: Clone>(v: &[T], perm: &[usize]) -> Vec<T> {
        perm.iter().filter_map(|&i| v.get(i).cloned()).collect()
    }
    match &values {
        Values::Int64(v) => Values::Int64(pick(v, perm)),
        Values::Int32(v) => Values::Int32(pick(v, perm)),
        Values::Bool(v) => Values::Bool(pick(v, perm)),
        Values::Float32(v) => Values::Float32(pick(v, perm)),
        Values::Float64(v) => Values::Float64(pick(v, perm)),
        Values::Bytes(v) => Values::Bytes(perm.iter().filter_map(|&i| v.get(i)).collect()),
        _ => values,
    }
}

/// The values of a tree in traversal order; a missing value is an error (its reason).
fn flatten_values<'v>(n: &Node<'v>, out: &mut Vec<&'v Value>) -> Result<(), String> {
    match n {
        Node::Value(v) => out.push(v),
        Node::Hole(h) => return Err(h.clone()),
        Node::List(items) => {
            for it in items {
                flatten_values(it, out)?;
            }
        }
    }
    Ok(())
}

/// The values of a tree in traversal order, missing ones left out.
fn collect_items<'v>(n: &Node<'v>, out: &mut Vec<&'v Value>) {
    match n {
        Node::Value(v) => out.push(v),
        Node::Hole(_) => {}
        Node::List(items) => items.iter().for_each(|i| collect_items(i, out)),
    }
}

/// Puts the values of `node` (at `depth`, block offset `offset`) into `slots`.
#[allow(clippy::too_many_arguments)]
fn place<'v>(
    node: &Node<'v>,
    depth: usize,
    offset: usize,
    dims: &[usize],
    strides: &[usize],
    slots: &mut [Option<&'v Value>],
    reason: &mut Option<String>,
    shape_text: &str,
) -> Result<()> {
    match node {
        Node::Value(v) => {
            if let Some(s) = slots.get_mut(offset) {
                *s = Some(v);
            }
        }
        Node::Hole(h) => {
            reason.get_or_insert_with(|| h.clone());
        }
        Node::List(items) => {
            let (Some(&d), Some(&stride)) = (dims.get(depth), strides.get(depth)) else {
                return Ok(());
            };
            if items.len() > d {
                return Err(Error::new(format!(
                    "Per shape {shape_text} for dimension {} expected at most {d} elements but \
                     received {} elements",
                    depth + 1,
                    items.len()
                )));
            }
            for (i, it) in items.iter().enumerate() {
                place(
                    it,
                    depth + 1,
                    offset + i * stride,
                    dims,
                    strides,
                    slots,
                    reason,
                    shape_text,
                )?;
            }
        }
    }
    Ok(())
}

/// Appends the entries of a var feature's tree: `path` holds the batch index (and the levels
/// above `depth`).
#[allow(clippy::too_many_arguments)]
fn emit(
    node: &Node<'_>,
    k: usize,
    depth: usize,
    path: &mut Vec<i64>,
    indices: &mut Vec<i64>,
    values: &mut Values,
    default: Option<&Values>,
    skip: bool,
) -> Result<()> {
    match node {
        Node::Value(v) => {
            push_leaf(values, v)?;
            indices.extend_from_slice(path);
        }
        Node::Hole(h) => {
            if skip {
                return Ok(());
            }
            match default {
                // A missing value at the innermost level takes the default; above it there are
                // no positions to fill.
                Some(d) if depth >= k => {
                    push_from(values, d, 0);
                    indices.extend_from_slice(path);
                }
                Some(_) => {}
                None => {
                    return Err(Error::new(if h == "the value is null" {
                        "the value is null and the feature has no default".to_string()
                    } else {
                        format!("{h} (the feature has no default)")
                    }));
                }
            }
        }
        Node::List(items) => {
            for (i, it) in items.iter().enumerate() {
                path.push(to_i64(i));
                emit(it, k, depth + 1, path, indices, values, default, skip)?;
                path.pop();
            }
        }
    }
    Ok(())
}

/// How [`read_tensors`] and [`read_rows`] read Avro files.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadOptions<'s> {
    /// Resolve every record to this schema [default: each file's writer schema].
    pub reader_schema: Option<&'s Schema>,
    /// Records per batch for [`read_tensors`]; the last batch may be shorter [default: all
    /// records in one batch].
    pub batch_size: Option<usize>,
    /// Show a progress bar over the input bytes on standard error (only when it is a terminal).
    pub progress: bool,
}

/// Calls `f` with each record of each file, its file index and its record index in the file.
fn for_each_record(
    inputs: &[PathBuf],
    opts: &ReadOptions<'_>,
    mut f: impl FnMut(Value, usize, u64) -> Result<()>,
) -> Result<u64> {
    let total = inputs
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum::<u64>();
    let progress = Progress::new(opts.progress, Some(total), "records");
    let mut done = 0u64;
    let mut count = 0u64;
    for (fi, path) in inputs.iter().enumerate() {
        let mut file = AvroFile::open(path, opts.reader_schema)?;
        let mut ri = 0u64;
        while let Some(v) = file.next() {
            f(v?, fi, ri)?;
            ri += 1;
            count += 1;
            progress.set(done + file.bytes_read());
        }
        done += file.bytes_read();
    }
    progress.finish();
    Ok(count)
}

/// Reads Avro files and calls `sink` with the tensors of each batch of `opts.batch_size`
/// records (consecutive records over all files in order). Returns the number of records read.
///
/// # Errors
/// What [`AvroFile::open`] and [`AvroSpec::parse_batch`] report, located at the file and the
/// record index in it, and the errors of `sink`.
pub fn read_tensors(
    inputs: &[PathBuf],
    spec: &AvroSpec,
    opts: &ReadOptions<'_>,
    mut sink: impl FnMut(Tensors) -> Result<()>,
) -> Result<u64> {
    let size = opts.batch_size.unwrap_or(usize::MAX).max(1);
    let mut batch: Vec<Value> = Vec::new();
    let mut origins: Vec<(usize, u64)> = Vec::new();
    let flush = |batch: &mut Vec<Value>,
                 origins: &mut Vec<(usize, u64)>,
                 sink: &mut dyn FnMut(Tensors) -> Result<()>|
     -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let t = spec.parse_batch(batch).map_err(|e| {
            e.map_record(|r| {
                let (file, index) = usize::try_from(r)
                    .ok()
                    .and_then(|r| origins.get(r))
                    .copied()
                    .unwrap_or((0, r));
                (inputs.get(file).cloned(), index)
            })
        })?;
        batch.clear();
        origins.clear();
        sink(t)
    };
    let count = for_each_record(inputs, opts, |v, fi, ri| {
        batch.push(v);
        origins.push((fi, ri));
        if batch.len() >= size {
            flush(&mut batch, &mut origins, &mut sink)?;
        }
        Ok(())
    })?;
    flush(&mut batch, &mut origins, &mut sink)?;
    Ok(count)
}

/// Reads Avro files and calls `sink` with one output record per Avro record, in order. Returns
/// the number of records.
///
/// # Errors
/// As [`read_tensors`], for [`AvroSpec::row`].
pub fn read_rows(
    inputs: &[PathBuf],
    spec: &AvroSpec,
    opts: &ReadOptions<'_>,
    mut sink: impl FnMut(FeatureRow) -> Result<()>,
) -> Result<u64> {
    for_each_record(inputs, opts, |v, fi, ri| {
        let path = inputs.get(fi).cloned().unwrap_or_default();
        let row = spec
            .row(&v)
            .map_err(|e| e.map_record(|_| (Some(path.clone()), ri)).with_path(&path))?;
        sink(row)
    })
}

/// The records of Avro files in memory, in order (for small files and tests).
///
/// # Errors
/// As [`AvroFile::open`] and its iterator.
pub fn read_all(inputs: &[PathBuf], reader_schema: Option<&Schema>) -> Result<Vec<Value>> {
    let mut out = Vec::new();
    for path in inputs {
        for v in AvroFile::open(path, reader_schema)? {
            out.push(v?);
        }
    }
    Ok(out)
}

/// Reads an Avro schema (`.avsc` JSON).
///
/// # Errors
/// Invalid JSON or an invalid schema.
pub fn parse_schema(json: &str) -> Result<Schema> {
    Schema::parse_str(json).map_err(|e| Error::new(format!("invalid Avro schema: {e}")))
}
