//! Feature specs from a record of a TOML spec (`tfrecord_schema`'s IR): what
//! `tfrecord parse --spec` runs. Needs the `schema` feature.

use tfrecord_schema::ir::{self, FeatureKind, Field, Literal, Presence, Record, RecordKind};

use super::spec::{DType, FeatureSpec, Partition, Spec, SplitsDType};
use super::tensor::Values;
use crate::error::{Error, Result};

/// The feature specs of one record of a spec file: one [`Spec`] for a `tf.train.Example`
/// (the features of [`parse_example`](super::parse_example)), or the context and feature-list
/// specs of a `tf.train.SequenceExample`
/// ([`parse_sequence_example`](super::parse_sequence_example)).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum RecordSpec {
    /// An example record's features.
    Example(Spec),
    /// A sequence example record's specs.
    SequenceExample {
        /// The `context` table: `context_features`.
        context: Spec,
        /// The `sequence` table: `sequence_features`.
        sequence: Spec,
    },
}

impl RecordSpec {
    /// Translates a record of a spec into TensorFlow's feature configuration types, the way a
    /// `feature_description` dict would be written for the same data.
    ///
    /// Each output is named as in TensorFlow's dict: by its table key in the spec (for the
    /// derive's IR, by the feature key, or the member name for a sparse field). The mapping:
    ///
    /// | spec | feature spec |
    /// | --- | --- |
    /// | `int64`, `int32`, `bool` / `float`, `double` / `bytes`, `string` | `tf.int64` / `tf.float32` / `tf.string` |
    /// | `fixed` with `shape` and `default` | `FixedLenFeature(shape, dtype, default_value)`; without `default` the feature is required |
    /// | `fixed` with `optional = true` | `VarLenFeature(dtype)`: TensorFlow has no optional dense feature, and a sparse row is empty where the feature is absent |
    /// | `var` | `VarLenFeature(dtype)` (a `default` has no TensorFlow equivalent and is not used) |
    /// | `sparse` | `SparseFeature(index_key, value_key, dtype, size, already_sorted)` |
    /// | `sequence` (a feature list) | `FixedLenSequenceFeature(shape, dtype, allow_missing)` in `sequence_features` |
    /// | `var` in `sequence` | `VarLenFeature(dtype)` in `sequence_features` |
    /// | `ragged` | `RaggedFeature(dtype, value_key, partitions, row_splits_dtype)` |
    ///
    /// Fields generated code cannot hold in a spec (`skip`) are left out.
    ///
    /// # Errors
    /// A field without a known dtype, a `flatten` field, a default that is not a value of the
    /// dtype, or two outputs with one name; the error names the feature.
    ///
    /// # Examples
    /// ```
    /// use tfrecord_core::parse::{DType, FeatureSpec, RecordSpec};
    /// use tfrecord_schema::ir::Schema;
    ///
    /// let schema = Schema::from_toml_str(
    ///     "[records.R.features.label]\ndtype = \"int64\"\ndefault = 0\n",
    ///     "r.toml",
    /// )
    /// .expect("a valid spec");
    /// let RecordSpec::Example(spec) = RecordSpec::from_record(&schema.records[0])? else {
    ///     unreachable!()
    /// };
    /// assert_eq!(spec["label"], FeatureSpec::fixed_len_with_default(DType::Int64, [], 0));
    /// # Ok::<(), tfrecord_core::Error>(())
    /// ```
    pub fn from_record(record: &Record) -> Result<RecordSpec> {
        let mut context = Spec::new();
        let mut sequence = Spec::new();
        for f in record.fields.iter().filter(|f| !f.skip) {
            let (name, spec) = feature_spec(f)?;
            let list = record.kind == RecordKind::SequenceExample && f.kind.is_feature_list();
            let target = if list { &mut sequence } else { &mut context };
            if target.insert(name.clone(), spec).is_some() {
                return Err(Error::feature(format!(
                    "record `{}` has two outputs named {name:?}",
                    record.name
                ))
                .with_key(name));
            }
        }
        Ok(match record.kind {
            RecordKind::SequenceExample => RecordSpec::SequenceExample { context, sequence },
            _ => RecordSpec::Example(context),
        })
    }
}

fn dtype(f: &Field) -> Result<DType> {
    match f.dtype {
        Some(ir::DType::Int64 | ir::DType::Int32 | ir::DType::Bool) => Ok(DType::Int64),
        Some(ir::DType::Float | ir::DType::Double) => Ok(DType::Float32),
        Some(ir::DType::Bytes | ir::DType::String) => Ok(DType::String),
        _ => Err(Error::feature(format!(
            "field `{}` has no dtype a feature spec can use",
            f.member
        ))
        .with_key(f.key.clone())),
    }
}

/// The values of a default literal, row-major, as `dtype`.
fn values(f: &Field, dtype: DType, lit: &Literal) -> Result<Values> {
    let mut flat = Vec::new();
    flatten(lit, &mut flat);
    let bad = |what: &str| {
        Error::feature(format!("the default of `{}` {what}", f.name)).with_key(f.key.clone())
    };
    Ok(match dtype {
        DType::Int64 => Values::Int64(
            flat.iter()
                .map(|l| match l {
                    Literal::Int(v) => i64::try_from(*v).map_err(|_| bad("does not fit in int64")),
                    Literal::Bool(b) => Ok(i64::from(*b)),
                    _ => Err(bad("is not an integer")),
                })
                .collect::<Result<_>>()?,
        ),
        DType::Float32 => Values::Float32(
            flat.iter()
                .map(|l| match l {
                    #[allow(clippy::cast_precision_loss)]
                    Literal::Int(v) => Ok(*v as f32),
                    #[allow(clippy::cast_possible_truncation)]
                    Literal::Float(x) => Ok(*x as f32),
                    _ => Err(bad("is not a number")),
                })
                .collect::<Result<_>>()?,
        ),
        DType::String => Values::Bytes(
            flat.iter()
                .map(|l| match l {
                    Literal::Str(s) => Ok(s.as_bytes()),
                    _ => Err(bad("is not a string")),
                })
                .collect::<Result<_>>()?,
        ),
        // `dtype()` above never picks a type a `tf.train.Feature` cannot hold.
        _ => return Err(bad("has a type a tf.train.Feature cannot hold")),
    })
}

fn flatten<'a>(lit: &'a Literal, out: &mut Vec<&'a Literal>) {
    match lit {
        Literal::List(items) => items.iter().for_each(|i| flatten(i, out)),
        other => out.push(other),
    }
}

fn partitions(parts: &[ir::Partition]) -> Vec<Partition> {
    parts
        .iter()
        .map(|p| match p {
            ir::Partition::RowSplits(k) => Partition::RowSplits(k.clone()),
            ir::Partition::RowLengths(k) => Partition::RowLengths(k.clone()),
            ir::Partition::RowStarts(k) => Partition::RowStarts(k.clone()),
            ir::Partition::RowLimits(k) => Partition::RowLimits(k.clone()),
            ir::Partition::ValueRowIds(k) => Partition::ValueRowIds(k.clone()),
            ir::Partition::UniformRowLength(n) => Partition::UniformRowLength(*n),
            // `ir::Partition` is non-exhaustive; a new kind would need its own translation.
            #[allow(unreachable_patterns)]
            _ => Partition::UniformRowLength(0),
        })
        .collect()
}

fn ragged(f: &Field, dt: DType, kind: &FeatureKind) -> Option<FeatureSpec> {
    let FeatureKind::Ragged {
        value_key,
        partitions: parts,
        row_splits_dtype,
    } = kind
    else {
        return None;
    };
    Some(FeatureSpec::Ragged {
        dtype: dt,
        value_key: (*value_key != f.key).then(|| value_key.clone()),
        partitions: partitions(parts),
        row_splits_dtype: if *row_splits_dtype == ir::DType::Int64 {
            SplitsDType::Int64
        } else {
            SplitsDType::Int32
        },
    })
}

/// One field's output name and feature spec.
fn feature_spec(f: &Field) -> Result<(String, FeatureSpec)> {
    if f.flatten {
        return Err(Error::feature(format!(
            "field `{}` is `flatten`: its features belong to another record",
            f.member
        ))
        .with_key(f.key.clone()));
    }
    let dt = dtype(f)?;
    let fixed_default = |count: u64| -> Result<Option<Values>> {
        match &f.presence {
            Presence::Default(lit) => values(f, dt, lit).map(Some),
            Presence::TypeDefault => Ok(Some(Values::zeros(
                dt,
                usize::try_from(count).unwrap_or(usize::MAX),
            ))),
            _ => Ok(None),
        }
    };
    let unsupported = || {
        Error::feature(format!(
            "the `{}` feature `{}` has no feature spec",
            f.kind.name(),
            f.name
        ))
        .with_key(f.key.clone())
    };
    let spec = match &f.kind {
        FeatureKind::Fixed { .. } if f.presence == Presence::Optional => {
            FeatureSpec::VarLen { dtype: dt }
        }
        FeatureKind::Fixed { shape } => {
            let count = f.kind.fixed_count().ok_or_else(unsupported)?;
            FeatureSpec::FixedLen {
                dtype: dt,
                shape: shape.clone(),
                default: fixed_default(count)?,
            }
        }
        FeatureKind::Var => FeatureSpec::VarLen { dtype: dt },
        FeatureKind::Sparse {
            index_keys,
            size,
            already_sorted,
        } => {
            return Ok((
                f.name.clone(),
                FeatureSpec::Sparse {
                    index_keys: index_keys.clone(),
                    value_key: f.key.clone(),
                    dtype: dt,
                    size: size.clone(),
                    already_sorted: *already_sorted,
                },
            ));
        }
        FeatureKind::FixedSequence {
            shape,
            allow_missing,
        } => FeatureSpec::FixedLenSequence {
            dtype: dt,
            shape: shape.clone(),
            allow_missing: *allow_missing,
            default: match &f.presence {
                Presence::Default(lit) => Some(values(f, dt, lit)?),
                _ => None,
            },
        },
        FeatureKind::Steps { step } => match &**step {
            FeatureKind::Var => FeatureSpec::VarLen { dtype: dt },
            FeatureKind::Fixed { shape } => FeatureSpec::FixedLenSequence {
                dtype: dt,
                shape: shape.clone(),
                allow_missing: f.presence != Presence::Required,
                default: None,
            },
            k @ FeatureKind::Ragged { .. } => ragged(f, dt, k).ok_or_else(unsupported)?,
            _ => return Err(unsupported()),
        },
        k @ FeatureKind::Ragged { .. } => ragged(f, dt, k).ok_or_else(unsupported)?,
        #[allow(unreachable_patterns)]
        _ => return Err(unsupported()),
    };
    Ok((f.key.clone(), spec))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tfrecord_schema::ir::{Dialect, Origin};

    fn field(name: &str, dtype: ir::DType, kind: FeatureKind, presence: Presence) -> Field {
        Field {
            name: name.into(),
            member: name.into(),
            key: name.into(),
            source: None,
            dtype: Some(dtype),
            kind,
            presence,
            skip: false,
            flatten: false,
            lossy: false,
            doc: vec![],
            origin: Origin(0),
        }
    }

    fn record(kind: RecordKind, fields: Vec<Field>) -> Record {
        Record {
            name: "R".into(),
            kind,
            dialect: Dialect::Both,
            deny_unknown_keys: false,
            fields,
            doc: vec![],
            origin: Origin(0),
        }
    }

    #[test]
    fn every_kind_translates() {
        let mut sparse = field(
            "cells",
            ir::DType::String,
            FeatureKind::Sparse {
                index_keys: vec!["r".into(), "c".into()],
                size: vec![3, 4],
                already_sorted: true,
            },
            Presence::Required,
        );
        sparse.key = "cells/v".into();
        let r = record(
            RecordKind::Example,
            vec![
                field(
                    "x",
                    ir::DType::Float,
                    FeatureKind::Fixed { shape: vec![2] },
                    Presence::Default(Literal::List(vec![Literal::Int(1), Literal::Float(0.5)])),
                ),
                field(
                    "b",
                    ir::DType::Bool,
                    FeatureKind::Fixed { shape: vec![] },
                    Presence::TypeDefault,
                ),
                field(
                    "o",
                    ir::DType::Int32,
                    FeatureKind::Fixed { shape: vec![] },
                    Presence::Optional,
                ),
                sparse,
                field(
                    "rag",
                    ir::DType::Double,
                    FeatureKind::Ragged {
                        value_key: "vals".into(),
                        partitions: vec![ir::Partition::UniformRowLength(2)],
                        row_splits_dtype: ir::DType::Int64,
                    },
                    Presence::Required,
                ),
            ],
        );
        let RecordSpec::Example(spec) = RecordSpec::from_record(&r).unwrap() else {
            panic!("an example")
        };
        assert_eq!(
            spec["x"],
            FeatureSpec::fixed_len_with_default(DType::Float32, [2], vec![1.0f32, 0.5])
        );
        assert_eq!(
            spec["b"],
            FeatureSpec::fixed_len_with_default(DType::Int64, [], 0)
        );
        assert_eq!(spec["o"], FeatureSpec::var_len(DType::Int64));
        assert_eq!(
            spec["cells"],
            FeatureSpec::Sparse {
                index_keys: vec!["r".into(), "c".into()],
                value_key: "cells/v".into(),
                dtype: DType::String,
                size: vec![3, 4],
                already_sorted: true
            }
        );
        assert_eq!(
            spec["rag"],
            FeatureSpec::Ragged {
                dtype: DType::Float32,
                value_key: Some("vals".into()),
                partitions: vec![Partition::UniformRowLength(2)],
                row_splits_dtype: SplitsDType::Int64
            }
        );
    }

    #[test]
    fn sequence_examples_split_context_and_lists() {
        let r = record(
            RecordKind::SequenceExample,
            vec![
                field(
                    "id",
                    ir::DType::Int64,
                    FeatureKind::Fixed { shape: vec![] },
                    Presence::Required,
                ),
                field(
                    "frames",
                    ir::DType::Float,
                    FeatureKind::FixedSequence {
                        shape: vec![3],
                        allow_missing: true,
                    },
                    Presence::TypeDefault,
                ),
                field(
                    "tokens",
                    ir::DType::Int64,
                    FeatureKind::Steps {
                        step: Box::new(FeatureKind::Var),
                    },
                    Presence::TypeDefault,
                ),
            ],
        );
        let RecordSpec::SequenceExample { context, sequence } =
            RecordSpec::from_record(&r).unwrap()
        else {
            panic!("a sequence example")
        };
        assert_eq!(context["id"], FeatureSpec::fixed_len(DType::Int64, []));
        assert_eq!(
            sequence["frames"],
            FeatureSpec::fixed_len_sequence(DType::Float32, [3], true)
        );
        assert_eq!(sequence["tokens"], FeatureSpec::var_len(DType::Int64));
    }

    #[test]
    fn bad_defaults_and_duplicates_are_errors() {
        let r = record(
            RecordKind::Example,
            vec![field(
                "x",
                ir::DType::Int64,
                FeatureKind::Fixed { shape: vec![] },
                Presence::Default(Literal::Int(i128::MAX)),
            )],
        );
        let e = RecordSpec::from_record(&r).unwrap_err();
        assert!(e.to_string().contains("does not fit in int64"), "{e}");
        let mut twin = field(
            "x",
            ir::DType::Int64,
            FeatureKind::Sparse {
                index_keys: vec!["i".into()],
                size: vec![2],
                already_sorted: false,
            },
            Presence::Required,
        );
        twin.key = "v".into();
        let r = record(
            RecordKind::Example,
            vec![
                field(
                    "x",
                    ir::DType::Int64,
                    FeatureKind::Var,
                    Presence::TypeDefault,
                ),
                twin,
            ],
        );
        let e = RecordSpec::from_record(&r).unwrap_err();
        assert!(e.to_string().contains("two outputs named"), "{e}");
    }
}
