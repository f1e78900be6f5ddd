//! The spec: [`AvroFeature`]s (an output name, a key expression, a dtype and a layout),
//! checked and compiled into an [`AvroSpec`], from code or from a record of a TOML spec file.

use tfrecord_core::parse::{DType, RecordSpec, Values};
use tfrecord_schema::ir::{self, FeatureKind, Presence, RecordKind};

use super::expr::KeyExpr;
use crate::error::{Error, Result};

/// The most elements one output tensor may have (2^26): a spec whose shape asks for more is an
/// error rather than an allocation.
pub(super) const MAX_ELEMENTS: usize = 1 << 26;

/// One output of an [`AvroSpec`].
#[derive(Clone, Debug, PartialEq)]
pub struct AvroFeature {
    /// The output name: the tensor's key, and the feature key of a fixed or var feature in the
    /// records output.
    pub name: String,
    /// The key expression (see [`expr`](super::expr)).
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
        /// The declared rank (tensorflow-io's `VarLenFeatureWithRank(dtype, rank)`, a spec's
        /// `rank = N`): it must equal the key expression's dimensions (one per `[*]` or
        /// filter). `None`: the expression's.
        rank: Option<u64>,
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
                rank: None,
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

    /// The same `VarLen` feature with a declared rank (tensorflow-io's
    /// `VarLenFeatureWithRank`), checked against the key expression by [`AvroSpec::new`];
    /// ignored for other kinds.
    #[must_use]
    pub fn with_rank(mut self, declared: u64) -> Self {
        if let AvroKind::VarLen { rank, .. } = &mut self.kind {
            *rank = Some(declared);
        }
        self
    }
}

/// A sparse feature's index or value key: exactly one of `root` and `relative` is set.
#[derive(Clone, Debug)]
pub(super) struct SparseKey {
    /// The key as written (the feature key in the records output).
    pub(super) name: String,
    /// The key's expression when it starts at the record's root (`@`).
    pub(super) root: Option<KeyExpr>,
    /// The key's expression when it is read from each element the feature's source names.
    pub(super) relative: Option<KeyExpr>,
}

/// An [`AvroKind`] once checked against its key expression.
#[derive(Clone, Debug)]
pub(super) enum CompiledKind {
    /// A `FixedLen` feature.
    Fixed {
        /// As [`AvroKind::FixedLen`]'s.
        shape: Vec<Option<u64>>,
        /// As [`AvroKind::FixedLen`]'s.
        default: Option<Values>,
        /// The source has exactly one `[*]` and the shape two or more dimensions: the array's
        /// elements fill the shape row-major.
        reshape: bool,
    },
    /// A `VarLen` feature.
    Var {
        /// As [`AvroKind::VarLen`]'s.
        default: Option<Values>,
        /// As [`AvroKind::VarLen`]'s.
        skip_missing: bool,
    },
    /// A `Sparse` feature, its keys parsed.
    Sparse {
        /// One per dimension of `size`.
        index_keys: Vec<SparseKey>,
        /// Where the values come from.
        value_key: SparseKey,
        /// The dense shape, batch dimension excluded.
        size: Vec<u64>,
        /// Keep the entries in traversal order instead of sorting them.
        already_sorted: bool,
    },
}

/// An [`AvroFeature`] checked, with its key expression parsed.
#[derive(Clone, Debug)]
pub(super) struct CompiledFeature {
    /// The output name.
    pub(super) name: String,
    /// The element type.
    pub(super) dtype: DType,
    /// The parsed `source`.
    pub(super) expr: KeyExpr,
    /// The dimensions the key expression adds: one per `[*]` or filter.
    pub(super) expr_dims: usize,
    /// The layout.
    pub(super) kind: CompiledKind,
}

/// A checked list of [`AvroFeature`]s: Avro records to batched tensors or to records.
#[derive(Clone, Debug)]
pub struct AvroSpec {
    pub(super) features: Vec<CompiledFeature>,
}

impl AvroSpec {
    /// The var features whose key expression has more than one dimension (several `[*]` or
    /// filters), with that count: [`row`](Self::row) writes their values as one flat list per
    /// record, in traversal order, so the records read back without the nesting the batched
    /// tensors keep.
    pub fn flattened(&self) -> impl Iterator<Item = (&str, usize)> {
        self.features
            .iter()
            .filter(|f| matches!(f.kind, CompiledKind::Var { .. }) && f.expr_dims > 1)
            .map(|f| (f.name.as_str(), f.expr_dims))
    }

    /// Checks the features.
    ///
    /// # Errors
    /// No features, an empty or repeated name, a key expression that does not parse, a shape
    /// whose rank does not match the expression's dimensions, a default of another dtype or
    /// size, a sparse feature whose `size` does not have one entry per index key.
    pub fn new(features: impl IntoIterator<Item = AvroFeature>) -> Result<Self> {
        let mut out: Vec<CompiledFeature> = Vec::new();
        for mut f in features {
            // Text and bytes are one `tf.string` here: Avro strings are not checked for UTF-8.
            if f.dtype == DType::String {
                f.dtype = DType::Bytes;
            }
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
            let kind = match f.kind {
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
                    CompiledKind::Fixed {
                        shape,
                        default,
                        reshape,
                    }
                }
                AvroKind::VarLen {
                    default,
                    skip_missing,
                    rank,
                } => {
                    if let Some(r) = rank
                        && r != dims as u64
                    {
                        return Err(located(Error::new(format!(
                            "the feature declares rank {r}, but the key expression `{}` has {dims} \
                             dimension{} (one per `[*]` or filter)",
                            f.source,
                            if dims == 1 { "" } else { "s" }
                        ))));
                    }
                    if let Some(d) = &default {
                        check_default(d, "")?;
                        if d.len() != 1 {
                            return Err(located(Error::new(
                                "the default of a var feature must be one scalar",
                            )));
                        }
                    }
                    CompiledKind::Var {
                        default,
                        skip_missing,
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
                    CompiledKind::Sparse {
                        index_keys: index_keys.iter().map(|k| key(k)).collect::<Result<_>>()?,
                        value_key: key(&value_key)?,
                        size,
                        already_sorted,
                    }
                }
            };
            out.push(CompiledFeature {
                name: f.name,
                dtype: f.dtype,
                expr,
                expr_dims: dims,
                kind,
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
        AvroSpec::from_spec(&RecordSpec::from_record(record)?)
    }

    /// The spec of a record's runtime form ([`RecordSpec`], the one form every consumer of a
    /// TOML spec reads), with the mapping of [`from_record`](AvroSpec::from_record).
    ///
    /// # Errors
    /// As [`from_record`](AvroSpec::from_record).
    pub fn from_spec(spec: &RecordSpec) -> Result<Self> {
        if spec.kind != RecordKind::Example {
            return Err(Error::new(format!(
                "record `{}` is a sequence example; the Avro importer writes examples",
                spec.name
            )));
        }
        let mut features = Vec::new();
        for f in &spec.features {
            let kind = match (&f.kind, &f.presence) {
                (FeatureKind::Fixed { .. }, Presence::Optional) => AvroKind::VarLen {
                    default: None,
                    skip_missing: true,
                    rank: None,
                },
                (FeatureKind::Fixed { shape }, _) => AvroKind::FixedLen {
                    shape: shape.iter().copied().map(Some).collect(),
                    default: f.default.clone(),
                },
                (FeatureKind::Var { rank }, presence) => AvroKind::VarLen {
                    default: match presence {
                        Presence::Default(_) => f.default.clone(),
                        _ => None,
                    },
                    skip_missing: *presence == Presence::Optional,
                    rank: *rank,
                },
                // tensorflow-io's `FixedLenFeature([None, ...])`: the unknown dimensions pad to
                // the batch's largest, with the default (one value) or zeros.
                (FeatureKind::FixedSequence { shape, .. }, _) => AvroKind::FixedLen {
                    shape: std::iter::once(None).chain(shape.iter().copied()).collect(),
                    default: f.default.clone(),
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
                    return Err(Error::new(format!(
                        "a `{}` feature cannot be imported from Avro (use fixed, var or sparse)",
                        k.name()
                    ))
                    .with_feature(f.name.clone()));
                }
            };
            features.push(AvroFeature {
                name: f.name.clone(),
                source: f.source.clone().unwrap_or_else(|| f.name.clone()),
                dtype: f.dtype,
                kind,
            });
        }
        AvroSpec::new(features)
    }

    /// The output names, in spec order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.features.iter().map(|f| f.name.as_str())
    }
}

/// The dtype's name as TensorFlow spells it (`float32`, `float64`, ...), for messages.
pub(super) fn dtype_name(d: DType) -> &'static str {
    match d {
        DType::Int64 => "int64",
        DType::Float => "float32",
        DType::Bytes | DType::String => "string",
        DType::Bool => "bool",
        DType::Int32 => "int32",
        DType::Double => "float64",
    }
}
