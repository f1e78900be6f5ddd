//! The plain-data description of a record that every front end lowers to and every consumer
//! reads: the derive's code generator, the TOML spec compiler, and the runtime parser.
//!
//! It describes the wire contract (keys, dtypes, kinds, shapes, presence), not Rust types.
//! Source locations are opaque [`Origin`] handles into the front end's own span table, and
//! equality ignores them.

/// Which record containers a record supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Dialect {
    /// `tf.train.Example` and `OFRecord` (the default): only kinds both can hold.
    #[default]
    Both,
    /// `tf.train.Example` / `tf.train.SequenceExample` only.
    Tf,
    /// `OFRecord` only: adds `double` and `int32` lists, has no sequences.
    Of,
}

impl Dialect {
    /// Whether `tf.train.Example` is supported.
    pub fn has_tf(self) -> bool {
        matches!(self, Dialect::Both | Dialect::Tf)
    }

    /// Whether `OFRecord` is supported.
    pub fn has_of(self) -> bool {
        matches!(self, Dialect::Both | Dialect::Of)
    }

    /// Parses `both`, `tf` (also `tensorflow`, `example`) or `ofrecord` (also `of`,
    /// `oneflow`).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "both" | "all" => Some(Dialect::Both),
            "tf" | "tensorflow" | "example" => Some(Dialect::Tf),
            "ofrecord" | "of" | "oneflow" => Some(Dialect::Of),
            _ => None,
        }
    }
}

/// Whether a record is an Example (one feature map) or a SequenceExample (context features and
/// feature lists).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum RecordKind {
    /// `tf.train.Example` or `OFRecord`.
    #[default]
    Example,
    /// `tf.train.SequenceExample`.
    SequenceExample,
}

/// The type of a feature's values: the one element type of the workspace, from the spec and the
/// derive to the runtime parser and the importers. Exhaustive, so that every consumer handles a
/// new type when one is added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    /// 64-bit integers (`int64_list`).
    Int64,
    /// 32-bit integers (`int64_list` in TensorFlow, `int32_list` in OFRecord).
    Int32,
    /// Booleans as 0/1 in an `int64_list`.
    Bool,
    /// 32-bit floats (`float_list`).
    Float,
    /// 64-bit floats (`double_list`, OFRecord only, or lossy `float_list`).
    Double,
    /// Raw bytes (`bytes_list`).
    Bytes,
    /// UTF-8 text in a `bytes_list`.
    String,
}

impl DType {
    /// The spec name: `int64`, `int32`, `bool`, `float`, `double`, `bytes`, `string`.
    pub fn name(self) -> &'static str {
        match self {
            DType::Int64 => "int64",
            DType::Int32 => "int32",
            DType::Bool => "bool",
            DType::Float => "float",
            DType::Double => "double",
            DType::Bytes => "bytes",
            DType::String => "string",
        }
    }

    /// Parses a spec name, the inverse of [`DType::name`].
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "int64" => DType::Int64,
            "int32" => DType::Int32,
            "bool" => DType::Bool,
            "float" => DType::Float,
            "double" => DType::Double,
            "bytes" => DType::Bytes,
            "string" => DType::String,
            _ => return None,
        })
    }

    /// Whether a default literal of this kind fits the dtype.
    pub fn accepts(self, lit: &Literal) -> bool {
        match (self, lit) {
            (_, Literal::List(items)) => items.iter().all(|l| self.accepts(l)),
            (DType::Int64 | DType::Int32, Literal::Int(_)) => true,
            (DType::Bool, Literal::Bool(_)) => true,
            (DType::Float | DType::Double, Literal::Int(_) | Literal::Float(_)) => true,
            (DType::Bytes | DType::String, Literal::Str(_)) => true,
            _ => false,
        }
    }
}

/// A default value as written.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Literal {
    /// An integer.
    Int(i128),
    /// A float.
    Float(f64),
    /// A string (for bytes and string features).
    Str(String),
    /// A boolean.
    Bool(bool),
    /// A list (for lists and fixed shapes), row-major.
    List(Vec<Literal>),
}

impl Literal {
    /// The number of scalar values: 1 for a scalar, the total for nested lists.
    pub fn count(&self) -> usize {
        match self {
            Literal::List(items) => items.iter().map(Literal::count).sum(),
            _ => 1,
        }
    }

    /// The scalar values, row-major (the literal itself for a scalar).
    pub fn scalars(&self) -> Vec<&Literal> {
        fn walk<'a>(lit: &'a Literal, out: &mut Vec<&'a Literal>) {
            match lit {
                Literal::List(items) => items.iter().for_each(|i| walk(i, out)),
                other => out.push(other),
            }
        }
        let mut out = Vec::new();
        walk(self, &mut out);
        out
    }

    /// The dimensions of nested lists whose rows are rectangular (every row of a level as long
    /// and as deep as the others), `[]` for a scalar; `None` for ragged ones, which TensorFlow
    /// cannot convert to a tensor.
    pub fn shape(&self) -> Option<Vec<usize>> {
        nested_shape(self, |lit| match lit {
            Literal::List(items) => Some(items),
            _ => None,
        })
    }

    /// A word for the literal's kind, for messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Literal::Int(_) => "an integer",
            Literal::Float(_) => "a float",
            Literal::Str(_) => "a string",
            Literal::Bool(_) => "a boolean",
            Literal::List(_) => "a list",
        }
    }
}

/// How a feature's values are laid out, in TensorFlow's vocabulary.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum FeatureKind {
    /// `FixedLenFeature`: exactly the product of `shape` values (1 for `[]`), row-major.
    Fixed {
        /// The dimensions; empty for a scalar.
        shape: Vec<u64>,
    },
    /// `VarLenFeature`: any number of values.
    Var {
        /// The rank the values must have, when declared (tensorflow-io's
        /// `VarLenFeatureWithRank`): the Avro importer checks it against the dimensions of the
        /// key expression; a `tf.train.Example` feature is one list, rank 1 (a feature list of a
        /// SequenceExample adds the step dimension: rank 2). `None`: whatever the data has.
        rank: Option<u64>,
    },
    /// `SparseFeature`: one int64 feature of indices per dimension and one feature of values
    /// (the field's `key` is the value key).
    Sparse {
        /// The index feature keys, one per dimension.
        index_keys: Vec<String>,
        /// The dense shape; each index must lie below its dimension's size.
        size: Vec<u64>,
        /// Whether the indices are already sorted (no sort needed when densifying).
        already_sorted: bool,
    },
    /// A feature list of a SequenceExample: one feature per step, each of `step` kind.
    Steps {
        /// The layout of each step's feature.
        step: Box<FeatureKind>,
    },
    /// `FixedLenSequenceFeature`: any number of rows, each holding the product of `shape` values
    /// (1 for `[]`), row-major; a batch pads every record to its longest.
    ///
    /// In a SequenceExample it is a feature list, one row per step. In an Example (or a
    /// context) it is one feature whose values are split into rows, as `tf.io.parse_example`
    /// reads a `FixedLenSequenceFeature`, and as TensorFlow and tensorflow-io read a
    /// `FixedLenFeature` whose first dimension is unknown (`shape = [None, 3]`, written
    /// `shape = [-1, 3]` in a spec): the two are one feature here.
    ///
    /// The field's [`Presence`] is the padding value ([`Presence::Default`], one value;
    /// [`Presence::TypeDefault`] pads with zeros or empty strings). It plays no part in decoding
    /// a single record.
    FixedSequence {
        /// The dimensions of one row; empty for one value per row. `None` is a dimension that is
        /// unknown too (tensorflow-io's `shape = [None, None]`): only the Avro importer, which
        /// reads nested arrays, can fill one; a `tf.train.Example` feature holds one flat list, so
        /// the parser and generated types need every row dimension known.
        shape: Vec<Option<u64>>,
        /// An absent feature (list) is read as zero rows instead of being an error. Always true
        /// outside a SequenceExample's feature lists, as TensorFlow requires there.
        allow_missing: bool,
    },
    /// `RaggedFeature`: the values of the `value_key` feature, split into nested rows by
    /// `partitions` (outermost first). The field's `key` is the name of the output tensor.
    ///
    /// Only the runtime parser reads ragged features; there is no derive equivalent yet.
    Ragged {
        /// The feature holding the flat values.
        value_key: String,
        /// The row partitions, outermost first; empty for a 1-D ragged row per record.
        partitions: Vec<Partition>,
        /// The integer type of the row splits the parser builds: [`DType::Int32`] or
        /// [`DType::Int64`].
        row_splits_dtype: DType,
    },
}

/// One row partition of a [`FeatureKind::Ragged`] feature, as TensorFlow's
/// `tf.io.RaggedFeature` partitions name them. All but [`Partition::UniformRowLength`] read an
/// int64 feature with the given key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Partition {
    /// `RowSplits`: `nrows + 1` offsets, starting at 0.
    RowSplits(String),
    /// `RowLengths`: the length of each row.
    RowLengths(String),
    /// `RowStarts`: the start offset of each row.
    RowStarts(String),
    /// `RowLimits`: the end offset of each row.
    RowLimits(String),
    /// `ValueRowIds`: the row of each value, non-decreasing.
    ValueRowIds(String),
    /// `UniformRowLength`: every row has this many values (no feature is read).
    UniformRowLength(u64),
}

impl Partition {
    /// The spec name: `row_splits`, `row_lengths`, `row_starts`, `row_limits`,
    /// `value_rowids`, `uniform_row_length`.
    pub fn name(&self) -> &'static str {
        match self {
            Partition::RowSplits(_) => "row_splits",
            Partition::RowLengths(_) => "row_lengths",
            Partition::RowStarts(_) => "row_starts",
            Partition::RowLimits(_) => "row_limits",
            Partition::ValueRowIds(_) => "value_rowids",
            Partition::UniformRowLength(_) => "uniform_row_length",
        }
    }

    /// The feature key the partition reads, if it reads one.
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

impl FeatureKind {
    /// Every feature key a field with this kind reads, given its own key.
    pub fn keys<'a>(&'a self, key: &'a str) -> Vec<&'a str> {
        match self {
            FeatureKind::Sparse { index_keys, .. } => index_keys
                .iter()
                .map(String::as_str)
                .chain(std::iter::once(key))
                .collect(),
            FeatureKind::Ragged {
                value_key,
                partitions,
                ..
            } => std::iter::once(value_key.as_str())
                .chain(partitions.iter().filter_map(Partition::key))
                .collect(),
            FeatureKind::Steps { step } => step.keys(key),
            FeatureKind::Fixed { .. }
            | FeatureKind::Var { .. }
            | FeatureKind::FixedSequence { .. } => {
                vec![key]
            }
        }
    }

    /// Whether the feature is a feature list of a SequenceExample (it lives in the
    /// `feature_lists` map rather than in the context features), in a record of `record` kind.
    /// In an Example, a [`FixedSequence`](FeatureKind::FixedSequence) is an ordinary feature.
    pub fn is_feature_list(&self, record: RecordKind) -> bool {
        match self {
            FeatureKind::Steps { .. } => true,
            FeatureKind::FixedSequence { .. } => record == RecordKind::SequenceExample,
            _ => false,
        }
    }

    /// The spec name of the kind: `fixed`, `var`, `sparse`, `sequence`, `ragged`; a feature
    /// list of steps is named by its step kind.
    pub fn name(&self) -> &'static str {
        match self {
            FeatureKind::Fixed { .. } => "fixed",
            FeatureKind::Var { .. } => "var",
            FeatureKind::Sparse { .. } => "sparse",
            FeatureKind::Steps { step } => step.name(),
            FeatureKind::FixedSequence { .. } => "sequence",
            FeatureKind::Ragged { .. } => "ragged",
        }
    }

    /// The fixed value count, if the kind has one.
    pub fn fixed_count(&self) -> Option<u64> {
        match self {
            FeatureKind::Fixed { shape } => shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d)),
            _ => None,
        }
    }
}

/// A shape as a spec writes it, unknown dimensions as `-1`: `[-1, 3]`.
pub fn shape_text(shape: &[Option<u64>]) -> String {
    let dims: Vec<String> = shape
        .iter()
        .map(|d| d.map_or_else(|| "-1".to_string(), |d| d.to_string()))
        .collect();
    format!("[{}]", dims.join(", "))
}

/// What happens when a feature is absent.
///
/// A variable-length list ([`FeatureKind::Var`], and a feature list of such steps) is
/// [`TypeDefault`](Presence::TypeDefault) unless said otherwise, as TensorFlow's
/// `VarLenFeature` reads an absent key as no values: a spec's `var` feature, and a derive's
/// `Vec<T>` without `#[example(required)]`.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Presence {
    /// Absent is an error (for a variable-length list: the derive's `#[example(required)]`).
    #[default]
    Required,
    /// Absent is `None`.
    Optional,
    /// Absent takes this value.
    Default(Literal),
    /// Absent takes the type's `Default` value: no values for a variable-length list, zero
    /// steps for a feature list.
    TypeDefault,
}

/// A handle to where something was written, in the front end's own span table.
#[derive(Clone, Copy, Debug, Default, Eq)]
pub struct Origin(pub u32);

impl PartialEq for Origin {
    /// Origins never make two IR values differ.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// One feature of a record (or one flattened member).
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// The feature's name: its table key in a spec (the output name, as the key of
    /// TensorFlow's `features` dict), or the Rust member name for the derive. It differs from
    /// [`key`](Field::key) only for a [sparse](FeatureKind::Sparse) feature, whose `key` is
    /// its value key.
    pub name: String,
    /// The Rust field name.
    pub member: String,
    /// The feature key (for a flattened member: the key prefix without the `/`; for a
    /// [sparse](FeatureKind::Sparse) field: the value key; for a [ragged](FeatureKind::Ragged)
    /// field: the name of the output, as the key of TensorFlow's `features` dict).
    pub key: String,
    /// Where an importer takes the values from, when they do not come from records: the spec's
    /// `source` setting, such as an Avro key expression (`friends[*].name.first`) or a field
    /// path of JSON / CSV records (`a/b`). `None`: the feature's [`name`](Field::name).
    pub source: Option<String>,
    /// The value type, when the front end knows it (`None` for a type only the compiler can
    /// check, such as a user enum).
    pub dtype: Option<DType>,
    /// The layout.
    pub kind: FeatureKind,
    /// What absence means.
    pub presence: Presence,
    /// Not a feature: left out of encoding, `Default` on decoding.
    pub skip: bool,
    /// A nested record whose features are inlined with keys `key/inner`.
    pub flatten: bool,
    /// An `f64` stored in `tf.train.Example` as a float, opted in by the user.
    pub lossy: bool,
    /// Documentation lines.
    pub doc: Vec<String>,
    /// Where the field was written.
    pub origin: Origin,
}

/// One record type.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The Rust type name.
    pub name: String,
    /// Example or SequenceExample.
    pub kind: RecordKind,
    /// Supported containers.
    pub dialect: Dialect,
    /// Reject records with keys the type does not read.
    pub deny_unknown_keys: bool,
    /// Context features (for an Example: all features).
    pub fields: Vec<Field>,
    /// Documentation lines.
    pub doc: Vec<String>,
    /// Where the record was written.
    pub origin: Origin,
}

impl Record {
    /// The first feature of dtype `double` not marked `lossy`: a `tf.train.Example` holds
    /// floats, so writing one would round its values (an OFRecord keeps doubles).
    pub fn unmarked_double(&self) -> Option<&Field> {
        self.fields
            .iter()
            .find(|f| !f.skip && !f.lossy && f.dtype == Some(DType::Double))
    }
}

/// A collection of records, as one spec file holds them.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Schema {
    /// The records, in the order written.
    pub records: Vec<Record>,
}

/// Whether the finite double `x` is beyond the float's range: it would round to infinity as
/// a `float` (a value that rounds to the largest float, such as `3.4028235e38`, is not).
#[must_use]
#[cfg(feature = "toml")]
pub(crate) fn beyond_f32(x: f64) -> bool {
    #[allow(clippy::cast_possible_truncation)] // the point: rounded to the nearest float
    let f = x as f32;
    x.is_finite() && !f.is_finite()
}

/// The dimensions of a value made of nested lists (`items` gives a value's list, `None` for a
/// scalar) whose rows are rectangular: every row of a level as long and as deep as the others.
/// `[]` for a scalar; `None` for ragged lists. A spec literal's [`Literal::shape`], and the
/// importers' check of a JSON list, are this.
pub fn nested_shape<T>(value: &T, items: fn(&T) -> Option<&[T]>) -> Option<Vec<usize>> {
    let Some(items_of) = items(value) else {
        return Some(Vec::new());
    };
    let mut inner: Option<Vec<usize>> = None;
    for item in items_of {
        let s = nested_shape(item, items)?;
        match &inner {
            Some(first) if *first != s => return None,
            Some(_) => {}
            None => inner = Some(s),
        }
    }
    let mut dims = vec![items_of.len()];
    dims.extend(inner.unwrap_or_default());
    Some(dims)
}
