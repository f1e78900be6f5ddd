//! The one runtime form of a record's features, converted from the spec IR in one place
//! ([`RecordSpec::from_record`]): what the runtime parser, the Avro and JSON / CSV importers
//! read, each taking the view it needs from it.

use tfrecord_schema::ir::{FeatureKind, Field, Literal, Presence, Record, RecordKind};

use super::dtype::{DType, read_dtype};
use super::spec::{FeatureSpec, Spec, SplitsDType};
use super::tensor::Values;
use crate::error::{Error, Result};

/// The features of one record of a spec file, in spec order, ready for run time: names
/// checked unique, each with its element type and its default as typed values.
///
/// The parsers take TensorFlow's view of it ([`example_spec`](RecordSpec::example_spec),
/// [`sequence_specs`](RecordSpec::sequence_specs)); the importers of `tfrecord-import` read
/// the features themselves (their `source`, kind and presence).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RecordSpec {
    /// The record's name in the spec.
    pub name: String,
    /// A `tf.train.Example` (or `OFRecord`) or a `tf.train.SequenceExample`.
    pub kind: RecordKind,
    /// Whether records with keys the spec does not name are rejected.
    pub deny_unknown_keys: bool,
    /// The features, in spec order (fields the spec marks `skip` left out).
    pub features: Vec<RecordFeature>,
}

/// One feature of a [`RecordSpec`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RecordFeature {
    /// The output name: the feature's table key in the spec, as the key of TensorFlow's
    /// `features` dict.
    pub name: String,
    /// The feature key in records: the value key of a sparse feature, the output name of a
    /// ragged one (whose keys are in its kind).
    pub key: String,
    /// Where an importer takes the values from (an Avro key expression, a JSON / CSV field
    /// path), when the spec sets one.
    pub source: Option<String>,
    /// The element type, as declared.
    pub dtype: DType,
    /// The layout.
    pub kind: FeatureKind,
    /// What absence means, as written.
    pub presence: Presence,
    /// The value of an absent feature as values of [`dtype`](RecordFeature::dtype),
    /// row-major: the spec's `default`, or for a type default zeros (empty strings), one per
    /// value of a fixed shape and one otherwise. `None` when absence has no value.
    pub default: Option<Values>,
}

impl RecordSpec {
    /// The runtime form of a record of a spec (see `tfrecord_schema::ir::Schema`): the one
    /// place a spec record is turned into what the parsers and importers run.
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
    /// let spec = RecordSpec::from_record(&schema.records[0])?.example_spec()?;
    /// assert_eq!(spec["label"], FeatureSpec::fixed_len_with_default(DType::Int64, [], 0));
    /// # Ok::<(), tfrecord_core::Error>(())
    /// ```
    pub fn from_record(record: &Record) -> Result<RecordSpec> {
        let mut features: Vec<RecordFeature> = Vec::new();
        // Outputs taken so far (and whether each is a feature list of a SequenceExample): a
        // set, as a record may have many thousands of features.
        let mut outputs: std::collections::HashSet<(String, bool)> =
            std::collections::HashSet::new();
        for f in record.fields.iter().filter(|f| !f.skip) {
            let feature = RecordFeature::from_field(f)?;
            let list =
                record.kind == RecordKind::SequenceExample && f.kind.is_feature_list(record.kind);
            let output = feature.output_name();
            let clash = !outputs.insert((output.to_string(), list));
            if clash {
                return Err(Error::feature(format!(
                    "record `{}` has two outputs named {output:?}",
                    record.name
                ))
                .with_key(output));
            }
            features.push(feature);
        }
        Ok(RecordSpec {
            name: record.name.clone(),
            kind: record.kind,
            deny_unknown_keys: record.deny_unknown_keys,
            features,
        })
    }

    /// TensorFlow's feature specs of an example record: the `features` of
    /// [`parse_example`](super::parse_example), keyed by output name.
    ///
    /// # Errors
    /// The record is a sequence example, or a feature has no feature spec (see
    /// [`RecordFeature::feature_spec`]).
    pub fn example_spec(&self) -> Result<Spec> {
        if self.kind == RecordKind::SequenceExample {
            return Err(Error::feature(format!(
                "record `{}` is a sequence example: it has context and sequence specs",
                self.name
            )));
        }
        self.features
            .iter()
            .map(|f| Ok((f.output_name().to_string(), f.feature_spec()?)))
            .collect()
    }

    /// TensorFlow's `context_features` and `sequence_features` of a sequence example record
    /// ([`parse_sequence_example`](super::parse_sequence_example)); for an example record,
    /// its features as the context and no sequence features.
    ///
    /// # Errors
    /// A feature has no feature spec (see [`RecordFeature::feature_spec`]).
    pub fn sequence_specs(&self) -> Result<(Spec, Spec)> {
        let mut context = Spec::new();
        let mut sequence = Spec::new();
        for f in &self.features {
            let list = f.kind.is_feature_list(self.kind);
            let target = if list { &mut sequence } else { &mut context };
            target.insert(f.output_name().to_string(), f.feature_spec()?);
        }
        Ok((context, sequence))
    }
}

impl RecordFeature {
    fn from_field(f: &Field) -> Result<RecordFeature> {
        let located = |e: Error| e.with_key(f.key.clone());
        if f.flatten {
            return Err(located(Error::feature(format!(
                "field `{}` is `flatten`: its features belong to another record",
                f.member
            ))));
        }
        let Some(dtype) = f.dtype else {
            return Err(located(Error::feature(format!(
                "field `{}` has no dtype a feature spec can use",
                f.member
            ))));
        };
        let default = match &f.presence {
            Presence::Default(lit) => {
                let v = values(dtype, lit).map_err(|what| {
                    located(Error::feature(format!(
                        "the default of `{}` {what}",
                        f.name
                    )))
                })?;
                // One value fills a whole fixed shape (`default = 0` with `shape = [3]`).
                Some(match f.kind.fixed_count() {
                    Some(n) if v.len() == 1 && n > 1 => {
                        v.repeat(usize::try_from(n).unwrap_or(usize::MAX))
                    }
                    _ => v,
                })
            }
            Presence::TypeDefault => {
                let count = match &f.kind {
                    FeatureKind::Fixed { .. } => f.kind.fixed_count().unwrap_or(1),
                    _ => 1,
                };
                Some(Values::zeros(
                    dtype,
                    usize::try_from(count).unwrap_or(usize::MAX),
                ))
            }
            Presence::Required | Presence::Optional => None,
        };
        Ok(RecordFeature {
            name: f.name.clone(),
            key: f.key.clone(),
            source: f.source.clone(),
            dtype,
            kind: f.kind.clone(),
            presence: f.presence.clone(),
            default,
        })
    }

    /// A declared rank of a `var` feature against the one the parser gives it: 1 for a feature
    /// (one list per record), 2 for a feature list (a list per step).
    fn check_rank(&self, declared: Option<u64>, parsed: u64) -> Result<()> {
        match declared {
            Some(r) if r != parsed => Err(Error::feature(format!(
                "`{}` declares rank {r}, but a `var` {} has rank {parsed} ({})",
                self.name,
                if parsed == 1 {
                    "feature"
                } else {
                    "feature list"
                },
                if parsed == 1 {
                    "one list per record"
                } else {
                    "one list per step"
                }
            ))
            .with_key(self.key.clone())),
            _ => Ok(()),
        }
    }

    /// The name of the output tensor in TensorFlow's `features` dict: the output name of a
    /// sparse feature, the feature key otherwise.
    pub fn output_name(&self) -> &str {
        match self.kind {
            FeatureKind::Sparse { .. } => &self.name,
            _ => &self.key,
        }
    }

    /// The feature in TensorFlow's feature configuration types, the way a
    /// `feature_description` dict would be written for the same data:
    ///
    /// | spec | feature spec |
    /// | --- | --- |
    /// | `int64` / `float`, `double` / `bytes`, `string` | `tf.int64` / `tf.float32` / `tf.string` |
    /// | `int32`, `bool` | `int32`, `bool` (read from an `int64_list` as `int64`, each value checked against the type, as the derived types check it) |
    /// | `fixed` with `shape` and `default` | `FixedLenFeature(shape, dtype, default_value)`; without `default` the feature is required; one default value fills the whole shape |
    /// | `sequence` in an example, or `fixed` with `shape = [-1, ...]` | `FixedLenSequenceFeature(shape, dtype, allow_missing=True, default_value)`: rows padded to the batch's longest record |
    /// | `fixed` with `optional = true` | `VarLenFeature(dtype)`: TensorFlow has no optional dense feature, and a sparse row is empty where the feature is absent |
    /// | `var` | `VarLenFeature(dtype)` (a `default` has no TensorFlow equivalent and is not used; a declared `rank` must be 1) |
    /// | `sparse` | `SparseFeature(index_key, value_key, dtype, size, already_sorted)` |
    /// | `sequence` (a feature list) | `FixedLenSequenceFeature(shape, dtype, allow_missing)` in `sequence_features` |
    /// | `var` in `sequence` | `VarLenFeature(dtype)` in `sequence_features` (a declared `rank` must be 2) |
    /// | `ragged` | `RaggedFeature(dtype, value_key, partitions, row_splits_dtype)` |
    ///
    /// # Errors
    /// A kind with no TensorFlow equivalent (a feature list of sparse steps), a fixed shape
    /// whose size overflows, rows with an unknown dimension besides the first, or a declared
    /// rank the parser does not give the feature.
    pub fn feature_spec(&self) -> Result<FeatureSpec> {
        // `double` is read as `float` and text as `tf.string`; `int32` and `bool` keep their
        // type, so the parsers check each value against it.
        let dtype = match self.dtype {
            DType::Int32 | DType::Bool => self.dtype,
            other => read_dtype(other),
        };
        let default = || self.default.as_ref().map(read_values);
        let unsupported = || {
            Error::feature(format!(
                "the `{}` feature `{}` has no feature spec",
                self.kind.name(),
                self.name
            ))
            .with_key(self.key.clone())
        };
        let ragged = |kind: &FeatureKind| -> Option<FeatureSpec> {
            let FeatureKind::Ragged {
                value_key,
                partitions,
                row_splits_dtype,
            } = kind
            else {
                return None;
            };
            Some(FeatureSpec::Ragged {
                dtype,
                value_key: (*value_key != self.key).then(|| value_key.clone()),
                partitions: partitions.clone(),
                row_splits_dtype: if *row_splits_dtype == DType::Int64 {
                    SplitsDType::Int64
                } else {
                    SplitsDType::Int32
                },
            })
        };
        Ok(match &self.kind {
            FeatureKind::Fixed { .. } if self.presence == Presence::Optional => {
                FeatureSpec::VarLen { dtype }
            }
            FeatureKind::Fixed { shape } => {
                self.kind.fixed_count().ok_or_else(unsupported)?;
                FeatureSpec::FixedLen {
                    dtype,
                    shape: shape.clone(),
                    default: default(),
                }
            }
            FeatureKind::Var { rank } => {
                self.check_rank(*rank, 1)?;
                FeatureSpec::VarLen { dtype }
            }
            FeatureKind::Sparse {
                index_keys,
                size,
                already_sorted,
            } => FeatureSpec::Sparse {
                index_keys: index_keys.clone(),
                value_key: self.key.clone(),
                dtype,
                size: size.clone(),
                already_sorted: *already_sorted,
            },
            FeatureKind::FixedSequence {
                shape,
                allow_missing,
            } => FeatureSpec::FixedLenSequence {
                dtype,
                shape: shape
                    .iter()
                    .copied()
                    .collect::<Option<Vec<u64>>>()
                    .ok_or_else(|| {
                        Error::feature(format!(
                        "`{}` has rows of shape {}: a `tf.train.Example` feature holds one flat \
                         list, so only its first dimension can be unknown (-1)",
                        self.name,
                        tfrecord_schema::ir::shape_text(shape)
                    ))
                    .with_key(self.key.clone())
                    })?,
                allow_missing: *allow_missing,
                default: match &self.presence {
                    Presence::Default(_) => default(),
                    _ => None,
                },
            },
            FeatureKind::Steps { step } => match &**step {
                FeatureKind::Var { rank } => {
                    self.check_rank(*rank, 2)?;
                    FeatureSpec::VarLen { dtype }
                }
                FeatureKind::Fixed { shape } => FeatureSpec::FixedLenSequence {
                    dtype,
                    shape: shape.clone(),
                    allow_missing: self.presence != Presence::Required,
                    default: None,
                },
                k @ FeatureKind::Ragged { .. } => ragged(k).ok_or_else(unsupported)?,
                _ => return Err(unsupported()),
            },
            k @ FeatureKind::Ragged { .. } => ragged(k).ok_or_else(unsupported)?,
            #[allow(unreachable_patterns)]
            _ => return Err(unsupported()),
        })
    }
}

/// The values of a default literal, row-major, as values of `dtype`; the error says why not.
fn values(dtype: DType, lit: &Literal) -> std::result::Result<Values, String> {
    let bad = |l: &Literal| {
        format!(
            "holds {}, which is not a {} value",
            l.kind_name(),
            dtype.name()
        )
    };
    let range = |ty: &str| format!("does not fit in {ty}");
    let mut out = Values::empty(dtype);
    for l in lit.scalars() {
        match (&mut out, l) {
            (Values::Int64(v), Literal::Int(n)) => {
                v.push(i64::try_from(*n).map_err(|_| range("int64"))?);
            }
            (Values::Int32(v), Literal::Int(n)) => {
                v.push(i32::try_from(*n).map_err(|_| range("int32"))?);
            }
            (Values::Bool(v), Literal::Bool(b)) => v.push(*b),
            (Values::Float32(v), Literal::Float(x)) => {
                v.push(crate::feature::narrow_f64(*x).ok_or_else(|| range("float"))?);
            }
            #[allow(clippy::cast_precision_loss)]
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

/// `values` as the type the parsers read them as ([`read_dtype`]): `int32` and `bool` as
/// `int64`, `double` as `float`.
fn read_values(values: &Values) -> Values {
    match values {
        Values::Int32(v) => Values::Int64(v.iter().map(|&x| i64::from(x)).collect()),
        Values::Bool(v) => Values::Int64(v.iter().map(|&b| i64::from(b)).collect()),
        Values::Float64(v) => {
            Values::Float32(v.iter().map(|&x| crate::feature::to_f32(x)).collect())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Partition;
    use tfrecord_schema::ir;
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
        let spec = RecordSpec::from_record(&r).unwrap().example_spec().unwrap();
        assert_eq!(
            spec["x"],
            FeatureSpec::fixed_len_with_default(DType::Float, [2], vec![1.0f32, 0.5])
        );
        // `int32` and `bool` keep their type for the parsers' range check (values as int64).
        assert_eq!(
            spec["b"],
            FeatureSpec::fixed_len_with_default(DType::Bool, [], 0)
        );
        assert_eq!(spec["o"], FeatureSpec::var_len(DType::Int32));
        assert_eq!(
            spec["cells"],
            FeatureSpec::Sparse {
                index_keys: vec!["r".into(), "c".into()],
                value_key: "cells/v".into(),
                dtype: DType::Bytes,
                size: vec![3, 4],
                already_sorted: true
            }
        );
        assert_eq!(
            spec["rag"],
            FeatureSpec::Ragged {
                dtype: DType::Float,
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
                        shape: vec![Some(3)],
                        allow_missing: true,
                    },
                    Presence::TypeDefault,
                ),
                field(
                    "tokens",
                    ir::DType::Int64,
                    FeatureKind::Steps {
                        step: Box::new(FeatureKind::Var { rank: None }),
                    },
                    Presence::TypeDefault,
                ),
            ],
        );
        let (context, sequence) = RecordSpec::from_record(&r)
            .unwrap()
            .sequence_specs()
            .unwrap();
        assert_eq!(context["id"], FeatureSpec::fixed_len(DType::Int64, []));
        assert_eq!(
            sequence["frames"],
            FeatureSpec::fixed_len_sequence(DType::Float, [3], true)
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
                    FeatureKind::Var { rank: None },
                    Presence::TypeDefault,
                ),
                twin,
            ],
        );
        let e = RecordSpec::from_record(&r).unwrap_err();
        assert!(e.to_string().contains("two outputs named"), "{e}");
    }

    /// The spec's rows, unknown dimensions, broadcast defaults and ranks, through the parser.
    #[test]
    fn rows_unknown_dims_defaults_and_ranks_reach_the_parser() {
        use crate::Message;
        use crate::parse::{Tensor, parse_example};
        use crate::proto::tensorflow::{Example, Feature, Features, FloatList, feature};
        let src = r#"
[records.Ex.features.points]
dtype = "float"
shape = [-1, 2]
default = -1.0
[records.Ex.features.boxes]
dtype = "float"
kind = "sequence"
shape = [2]
[records.Ex.features.ones]
dtype = "int64"
shape = [3]
default = 1
[records.Ex.features.tags]
dtype = "string"
kind = "var"
rank = 1
"#;
        let schema = ir::Schema::from_toml_str(src, "t.toml").unwrap();
        let spec = RecordSpec::from_record(&schema.records[0])
            .unwrap()
            .example_spec()
            .unwrap();
        let rows = FeatureSpec::FixedLenSequence {
            dtype: DType::Float,
            shape: vec![2],
            allow_missing: true,
            default: Some(Values::Float32(vec![-1.0])),
        };
        assert_eq!(spec["points"], rows);
        assert_eq!(
            spec["boxes"],
            FeatureSpec::FixedLenSequence {
                dtype: DType::Float,
                shape: vec![2],
                allow_missing: true,
                default: None,
            }
        );
        assert_eq!(
            spec["ones"],
            FeatureSpec::fixed_len_with_default(DType::Int64, [3], vec![1i64, 1, 1])
        );

        let record = |points: Option<Vec<f32>>| {
            let mut f = Features::default();
            if let Some(v) = points {
                let list = feature::Kind::FloatList(FloatList { value: v });
                f.feature
                    .insert("points".into(), Feature { kind: Some(list) });
            }
            Example { features: Some(f) }.encode_to_vec()
        };
        let mut one = crate::parse::Spec::new();
        one.insert("points".to_string(), rows);
        one.insert(
            "ones".to_string(),
            FeatureSpec::fixed_len_with_default(DType::Int64, [3], 1i64),
        );
        let out = parse_example(
            &one,
            &[record(Some(vec![1.0, 2.0, 3.0, 4.0])), record(None)],
        )
        .unwrap();
        // Two rows and zero rows, padded with the default to the longest record.
        assert_eq!(
            out["points"],
            Tensor::Dense {
                shape: vec![2, 2, 2],
                values: Values::Float32(vec![1.0, 2.0, 3.0, 4.0, -1.0, -1.0, -1.0, -1.0])
            }
        );
        // One value fills the whole shape.
        assert_eq!(
            out["ones"],
            Tensor::Dense {
                shape: vec![2, 3],
                values: Values::Int64(vec![1; 6])
            }
        );
        let e = parse_example(&one, &[record(Some(vec![1.0, 2.0, 3.0]))]).unwrap_err();
        assert_eq!(e.key(), Some("points"), "{e}");

        // What the parser cannot read: nested unknown dimensions, another rank.
        for (src, expected) in [
            (
                "[records.Ex.features.n]\ndtype = \"int64\"\nshape = [-1, -1]\n",
                "only its first dimension can be unknown",
            ),
            (
                "[records.Ex.features.v]\ndtype = \"int64\"\nkind = \"var\"\nrank = 2\n",
                "declares rank 2, but a `var` feature has rank 1",
            ),
        ] {
            let schema = ir::Schema::from_toml_str(src, "t.toml").unwrap();
            let e = RecordSpec::from_record(&schema.records[0])
                .unwrap()
                .example_spec()
                .unwrap_err();
            assert!(e.to_string().contains(expected), "{e}");
        }
    }
}
