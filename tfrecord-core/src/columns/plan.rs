//! A [`RecordSpec`] compiled for the columnar decoder: the feature keys each record is searched
//! for, and per column how its values are read and what an absent feature gives.

use tfrecord_schema::ir::{FeatureKind, Partition, Presence, RecordKind};

use super::{ColumnLayout, LevelKind};
use crate::compression::Format;
use crate::error::{Error, Result};
use crate::parse::{DType, RecordFeature, RecordSpec, Values};

/// `n` as an `i64` offset (saturating; no buffer comes near).
pub(crate) fn to_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The feature keys of one map (an Example's features, a SequenceExample's context or feature
/// lists), each given a slot.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeyTable {
    /// Sorted by key.
    keys: Vec<(Box<[u8]>, usize)>,
}

impl KeyTable {
    /// The slot of `key`, added if new.
    fn intern(&mut self, key: &str) -> usize {
        match self
            .keys
            .binary_search_by(|(k, _)| (**k).cmp(key.as_bytes()))
        {
            Ok(i) => self.keys[i].1,
            Err(i) => {
                let slot = self.keys.len();
                self.keys.insert(i, (key.as_bytes().into(), slot));
                slot
            }
        }
    }

    /// The slot of `key`, if the spec reads it.
    #[inline]
    pub(crate) fn find(&self, key: &[u8]) -> Option<usize> {
        self.keys
            .binary_search_by(|(k, _)| (**k).cmp(key))
            .ok()
            .map(|i| self.keys[i].1)
    }

    /// Each key and its slot.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (&[u8], usize)> {
        self.keys.iter().map(|(k, s)| (&**k, *s))
    }

    /// The number of slots.
    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }
}

/// How a ragged partition's feature gives the row boundaries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PartKind {
    Splits,
    Lengths,
    Starts,
    Limits,
    RowIds,
}

/// One row partition of a ragged column.
#[derive(Clone, Debug)]
pub(crate) enum Part {
    /// Read from an `int64` feature.
    Keyed {
        slot: usize,
        key: String,
        kind: PartKind,
    },
    /// Every row holds this many entries.
    Uniform(usize),
}

/// How a column's values are read from its feature.
#[derive(Clone, Debug)]
pub(crate) enum Shape {
    /// Exactly `n` values.
    Fixed { n: usize },
    /// Any number of values.
    Var,
    /// Any number of rows of `row` values.
    Rows { row: usize },
    /// Values with one index feature per dimension: `(slot, key)`, and the dimensions' sizes
    /// (each index lies in `0..size`).
    Sparse {
        index: Vec<(usize, String)>,
        size: Vec<u64>,
    },
    /// Values split by partitions, outermost first.
    Ragged { parts: Vec<Part> },
    /// A feature list: steps of any number of values.
    StepsVar,
    /// A feature list: steps of exactly `n` values.
    StepsFixed { n: usize },
}

/// What a record without the feature gives.
#[derive(Clone, Debug)]
pub(crate) enum Absent {
    /// An error: the feature is required.
    Error,
    /// A null row.
    Null,
    /// These values (as many as the shape holds).
    Default(Values),
}

/// One column.
#[derive(Clone, Debug)]
pub(crate) struct ColPlan {
    /// The feature key, for errors.
    pub(crate) key: String,
    pub(crate) dtype: DType,
    /// The slot of the feature (the value key) in its key table.
    pub(crate) slot: usize,
    /// Whether the feature is a feature list (else in the Example or the context).
    pub(crate) list: bool,
    pub(crate) shape: Shape,
    pub(crate) absent: Absent,
    /// The most bytes the column's values of a batch may take once defaults and null rows
    /// are filled in ([`MAX_FILLED_BYTES`](crate::parse::MAX_FILLED_BYTES); lower in tests).
    pub(crate) max_filled: usize,
}

/// A compiled spec.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub(crate) format: Format,
    pub(crate) kind: RecordKind,
    /// The record's name, when records with keys the spec lacks are errors.
    pub(crate) deny_unknown: Option<String>,
    /// The keys of an Example's (OFRecord's) features or a SequenceExample's context.
    pub(crate) features: KeyTable,
    /// The keys of a SequenceExample's feature lists.
    pub(crate) lists: KeyTable,
    pub(crate) cols: Vec<ColPlan>,
    layouts: Vec<ColumnLayout>,
}

impl Plan {
    pub(crate) fn compile(spec: &RecordSpec, format: Format) -> Result<Self> {
        if format == Format::OfRecord && spec.kind == RecordKind::SequenceExample {
            return Err(Error::feature(format!(
                "record `{}` is a SequenceExample, which OFRecord cannot hold",
                spec.name
            )));
        }
        let mut plan = Plan {
            format,
            kind: spec.kind,
            deny_unknown: spec.deny_unknown_keys.then(|| spec.name.clone()),
            features: KeyTable::default(),
            lists: KeyTable::default(),
            cols: Vec::with_capacity(spec.features.len()),
            layouts: Vec::with_capacity(spec.features.len()),
        };
        for f in &spec.features {
            let (col, layout) = plan.column(f, spec.kind)?;
            plan.cols.push(col);
            plan.layouts.push(layout);
        }
        Ok(plan)
    }

    pub(crate) fn layouts(&self) -> &[ColumnLayout] {
        &self.layouts
    }

    fn column(&mut self, f: &RecordFeature, record: RecordKind) -> Result<(ColPlan, ColumnLayout)> {
        let list = f.kind.is_feature_list(record);
        let unsupported = |why: &str| {
            Error::feature(format!(
                "feature `{}` has no columnar layout: {why}",
                f.name
            ))
            .with_key(f.key.clone())
        };
        let dims = |shape: &[u64]| -> Result<Vec<usize>> {
            shape
                .iter()
                .map(|&d| usize::try_from(d).map_err(|_| unsupported("a dimension is too large")))
                .collect()
        };
        let known = |shape: &[Option<u64>]| -> Result<Vec<u64>> {
            shape
                .iter()
                .map(|d| d.ok_or_else(|| unsupported("a row dimension is unknown")))
                .collect()
        };
        let var_steps = |absent| {
            (
                Shape::StepsVar,
                vec![LevelKind::List, LevelKind::List],
                absent,
                Vec::new(),
            )
        };
        let fixed_levels = |dims: &[usize]| {
            dims.iter()
                .map(|&d| LevelKind::Fixed(d))
                .collect::<Vec<_>>()
        };
        let required = f.presence == Presence::Required;
        let or_null = if required {
            Absent::Error
        } else {
            Absent::Null
        };
        let table = if list {
            &mut self.lists
        } else {
            &mut self.features
        };
        let (shape, levels, absent, sparse_indices): (Shape, Vec<LevelKind>, Absent, Vec<String>) =
            match &f.kind {
                FeatureKind::Fixed { shape } => {
                    let dims = dims(shape)?;
                    let n = dims.iter().product();
                    let absent = match (&f.default, &f.presence) {
                        (_, Presence::Optional) => Absent::Null,
                        (Some(v), _) => Absent::Default(fit_default(f, v, n)?),
                        (None, _) => Absent::Error,
                    };
                    (Shape::Fixed { n }, fixed_levels(&dims), absent, Vec::new())
                }
                FeatureKind::Var { .. } => {
                    // A `default` fills an absent var feature's row, as the derived types fill
                    // their field.
                    let absent = match (&f.default, &f.presence) {
                        (Some(v), Presence::Default(_)) => {
                            Absent::Default(fit_default(f, v, v.len())?)
                        }
                        (_, Presence::Optional) => Absent::Null,
                        _ => or_null,
                    };
                    (Shape::Var, vec![LevelKind::List], absent, Vec::new())
                }
                FeatureKind::Sparse {
                    index_keys, size, ..
                } => {
                    let index = index_keys
                        .iter()
                        .map(|k| (table.intern(k), k.clone()))
                        .collect();
                    // As TensorFlow: an absent sparse feature has no entries, never an error.
                    (
                        Shape::Sparse {
                            index,
                            size: size.clone(),
                        },
                        vec![LevelKind::List],
                        Absent::Null,
                        index_keys.clone(),
                    )
                }
                FeatureKind::FixedSequence {
                    shape,
                    allow_missing,
                } => {
                    let dims = dims(&known(shape)?)?;
                    let row = dims.iter().product::<usize>();
                    if row == 0 {
                        return Err(unsupported("a row holds no values"));
                    }
                    let levels = std::iter::once(LevelKind::List)
                        .chain(fixed_levels(&dims))
                        .collect();
                    let absent = if *allow_missing || !list {
                        Absent::Null
                    } else {
                        Absent::Error
                    };
                    let shape = if list {
                        Shape::StepsFixed { n: row }
                    } else {
                        Shape::Rows { row }
                    };
                    (shape, levels, absent, Vec::new())
                }
                FeatureKind::Steps { step } => match &**step {
                    // A ragged feature list without partitions is a list of steps of values,
                    // as TensorFlow's `RaggedFeature` reads it: the layout of var steps.
                    FeatureKind::Var { .. } => var_steps(or_null),
                    // Absent, it is null, as a ragged feature is.
                    FeatureKind::Ragged { partitions, .. } if partitions.is_empty() => {
                        var_steps(Absent::Null)
                    }
                    FeatureKind::Fixed { shape } => {
                        let dims = dims(shape)?;
                        let levels = std::iter::once(LevelKind::List)
                            .chain(fixed_levels(&dims))
                            .collect();
                        let n = dims.iter().product();
                        (Shape::StepsFixed { n }, levels, or_null, Vec::new())
                    }
                    other => {
                        return Err(unsupported(&format!(
                            "a feature list of `{}` steps",
                            other.name()
                        )));
                    }
                },
                FeatureKind::Ragged { partitions, .. } => {
                    let parts = partitions
                        .iter()
                        .map(|p| part(table, p).ok_or_else(|| unsupported("a partition of 0")))
                        .collect::<Result<Vec<_>>>()?;
                    let levels = vec![LevelKind::List; parts.len() + 1];
                    (Shape::Ragged { parts }, levels, Absent::Null, Vec::new())
                }
                other => {
                    return Err(unsupported(&format!("a `{}` feature", other.name())));
                }
            };
        let value_key = match &f.kind {
            FeatureKind::Ragged { value_key, .. } => value_key.clone(),
            FeatureKind::Steps { step } => match &**step {
                FeatureKind::Ragged { value_key, .. } => value_key.clone(),
                _ => f.key.clone(),
            },
            _ => f.key.clone(),
        };
        let slot = table.intern(&value_key);
        let layout = ColumnLayout {
            name: f.output_name().to_string(),
            key: value_key.clone(),
            dtype: f.dtype,
            levels,
            sparse_indices,
            // A var feature's default fills what records lack, yet a null in Arrow data
            // (written before defaults filled var rows, or elsewhere) is still an absent
            // feature, so such a column stays nullable.
            nullable: match (&shape, &absent) {
                (Shape::Var, Absent::Default(_)) => true,
                (_, absent) => !matches!(absent, Absent::Error | Absent::Default(_)),
            },
            has_default: matches!(absent, Absent::Default(_)),
            feature_list: list,
        };
        let col = ColPlan {
            key: value_key,
            dtype: f.dtype,
            slot,
            list,
            shape,
            absent,
            max_filled: crate::parse::MAX_FILLED_BYTES,
        };
        Ok((col, layout))
    }
}

/// A ragged partition, its key given a slot; `None` for a uniform length of 0.
fn part(table: &mut KeyTable, p: &Partition) -> Option<Part> {
    let keyed = |table: &mut KeyTable, key: &String, kind| Part::Keyed {
        slot: table.intern(key),
        key: key.clone(),
        kind,
    };
    Some(match p {
        Partition::RowSplits(k) => keyed(table, k, PartKind::Splits),
        Partition::RowLengths(k) => keyed(table, k, PartKind::Lengths),
        Partition::RowStarts(k) => keyed(table, k, PartKind::Starts),
        Partition::RowLimits(k) => keyed(table, k, PartKind::Limits),
        Partition::ValueRowIds(k) => keyed(table, k, PartKind::RowIds),
        Partition::UniformRowLength(n) => {
            let n = usize::try_from(*n).ok().filter(|n| *n > 0)?;
            Part::Uniform(n)
        }
    })
}

/// A fixed feature's default as exactly `n` values: one value fills the shape.
fn fit_default(f: &RecordFeature, v: &Values, n: usize) -> Result<Values> {
    if !super::Leaf::empty(f.dtype).push_values(v) {
        return Err(Error::feature(format!(
            "feature `{}`: the default is not of its type {}",
            f.name,
            f.dtype.name()
        ))
        .with_key(f.key.clone()));
    }
    match v.len() {
        len if len == n => Ok(v.clone()),
        1 => Ok(v.repeat(n)),
        len => Err(Error::feature(format!(
            "feature `{}`: the default has {len} values, the shape holds {n}",
            f.name
        ))
        .with_key(f.key.clone())),
    }
}
