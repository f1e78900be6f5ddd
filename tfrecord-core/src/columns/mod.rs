//! Columnar batches: a batch of records decoded straight from the wire bytes into one set of
//! flat buffers per feature, laid out as Apache Arrow lays out its arrays, with no allocation
//! per record.
//!
//! A [`ColumnDecoder`] is compiled once from a [`RecordSpec`] (a TOML spec's record, an
//! inferred spec, or one built in code) and the container's [`Format`]; each call to
//! [`decode`](ColumnDecoder::decode) turns a batch of serialized records into a
//! [`ColumnBatch`]: one [`Column`] per feature of the spec, in spec order, each a flat buffer
//! of values ([`Leaf`]) under zero or more levels of nesting ([`Level`]: a list with offsets, or
//! a fixed size), and a validity flag per row. These are the buffers of Arrow's primitive,
//! binary, `List` and `FixedSizeList` arrays, so that the `tfrecord-arrow` crate and the Python
//! package wrap them without copying values.
//!
//! ```
//! use tfrecord_core::columns::{ColumnDecoder, Leaf, Level};
//! use tfrecord_core::parse::RecordSpec;
//! use tfrecord_core::proto::tensorflow::{feature, Example, Feature, Features, Int64List};
//! use tfrecord_core::{Format, Message};
//! use tfrecord_schema::ir::Schema;
//!
//! let schema = Schema::from_toml_str(
//!     "[records.R.features.ids]\ndtype = \"int64\"\nkind = \"var\"\n",
//!     "r.toml",
//! )
//! .expect("a valid spec");
//! let spec = RecordSpec::from_record(&schema.records[0])?;
//! let decoder = ColumnDecoder::new(&spec, Format::TfRecord)?;
//!
//! let record = |ids: Option<Vec<i64>>| {
//!     let mut f = Features::default();
//!     if let Some(value) = ids {
//!         let list = feature::Kind::Int64List(Int64List { value });
//!         f.feature.insert("ids".into(), Feature { kind: Some(list) });
//!     }
//!     Example { features: Some(f) }.encode_to_vec()
//! };
//! let batch = decoder.decode(&[record(Some(vec![7, 8])), record(None), record(Some(vec![9]))], 0)?;
//!
//! let ids = &batch.columns[0];
//! assert_eq!(ids.levels, vec![Level::List(vec![0, 2, 2, 3])]);
//! assert_eq!(ids.leaf, Leaf::Int64(vec![7, 8, 9]));
//! assert_eq!(ids.valid, Some(vec![true, false, true])); // the second record lacks the key
//! # Ok::<(), tfrecord_core::Error>(())
//! ```
//!
//! # The layout of each kind of feature
//!
//! | spec feature | levels, outermost first | an absent feature |
//! | --- | --- | --- |
//! | fixed, `shape = []` | none: one value per row | its default; `optional`: null; else an error |
//! | fixed, `shape = [a, b, ..]` | `Fixed(a)`, `Fixed(b)`, .. | as above |
//! | var | `List` | null (a present empty list is an empty list); `required`: an error |
//! | sequence (`shape = [-1, ..]`) in an Example | `List` of rows, then `Fixed` per dimension | null |
//! | sparse | `List`, of a [`Leaf::Sparse`] (one index per dimension, and the value), the entries in the record's order (a derived [`Sparse`](crate::Sparse) value puts them in index order unless `already_sorted`) | null |
//! | ragged | one `List` per partition, then a `List` of values | null when the value key and every partition key are absent |
//! | feature list of var steps | `List` of steps, `List` of values | null; `required`: an error |
//! | feature list of ragged steps, without partitions | as var steps | null |
//! | feature list of fixed steps, or sequence | `List` of steps, then `Fixed` per dimension | null; without `allow_missing`: an error |
//!
//! A row that is null still takes its place in the fixed levels (zeros, or empty strings) and
//! none in a list, as Arrow lays out null rows. A `Feature` with no list set is an absent
//! feature (as TensorFlow reads a fixed feature, and as tfx_bsl's decoder gives it: null); a
//! step of a feature list with no list set is an empty step.
//!
//! Every value is checked as the generated types check it: `int32` within range (in a
//! `tf.train.Example`, whose lists are `int64`), `bool` 0 or 1, `string` valid UTF-8, each fixed
//! feature its exact count. Ragged partitions are checked too (TensorFlow does not check them by
//! default; an Arrow list needs valid offsets). Errors name the record index and the feature key;
//! the caller adds the file and byte offset.

mod access;
mod batches;
mod build;
mod decode;
mod encode;
mod fast;
mod partition;
mod plan;
#[cfg(test)]
mod tests;
mod values;

pub use batches::{Batches, columnar_record};

use crate::compression::Format;
use crate::error::Result;
use crate::parse::{DType, RecordSpec, Values};

pub(crate) use build::BatchBuilder;
pub(crate) use plan::Plan;

/// One level of nesting of a [`Column`], from the row down to the values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Level {
    /// A list of any length per entry of the level above: `n + 1` offsets into the level below
    /// (Arrow's `List` offsets), starting at 0.
    List(Vec<i64>),
    /// A list of exactly this many entries of the level below per entry of the level above
    /// (Arrow's `FixedSizeList`).
    Fixed(usize),
}

/// The shape of one level, without its offsets: what a column's type is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LevelKind {
    /// A variable-length list.
    List,
    /// A fixed-size list.
    Fixed(usize),
}

/// Byte strings in one buffer: value `i` is `data[offsets[i]..offsets[i + 1]]` (Arrow's binary
/// layout, with 64-bit offsets).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ByteColumn {
    /// The bytes of every value, one after the other.
    pub data: Vec<u8>,
    /// `values + 1` offsets into `data`, starting at 0.
    pub offsets: Vec<i64>,
}

impl ByteColumn {
    /// No values.
    pub fn new() -> Self {
        ByteColumn {
            data: Vec::new(),
            offsets: vec![0],
        }
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Value `i`.
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let start = usize::try_from(*self.offsets.get(i)?).ok()?;
        let end = usize::try_from(*self.offsets.get(i + 1)?).ok()?;
        self.data.get(start..end)
    }

    /// Keeps the first `n` values.
    pub fn truncate(&mut self, n: usize) {
        if n < self.len() {
            self.offsets.truncate(n + 1);
            let end = self.offsets.last().copied().unwrap_or(0);
            self.data.truncate(usize::try_from(end).unwrap_or(0));
        }
    }

    /// Appends a value.
    #[inline]
    pub fn push(&mut self, value: &[u8]) {
        if value.len() <= 16 {
            // A short value copied in a loop the compiler unrolls, not a call of `memcpy`.
            self.data.extend(value.iter().copied());
        } else {
            self.data.extend_from_slice(value);
        }
        self.offsets.push(plan::to_i64(self.data.len()));
    }
}

/// The values of a [`Column`], flat, in row-major order.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Leaf {
    /// `int64` values.
    Int64(Vec<i64>),
    /// `int32` values (OFRecord's `int32_list`, or an `int64_list` checked to fit).
    Int32(Vec<i32>),
    /// `bool` values (an `int64_list` of 0 and 1).
    Bool(Vec<bool>),
    /// `float` values, bit for bit as stored.
    Float(Vec<f32>),
    /// `double` values (OFRecord's `double_list`, or a `float_list` widened).
    Double(Vec<f64>),
    /// `bytes` values.
    Bytes(ByteColumn),
    /// `string` values, each checked to be UTF-8.
    String(ByteColumn),
    /// The entries of a sparse feature: for each entry one index per dimension and the value.
    Sparse {
        /// One buffer per dimension, each as long as `values`.
        indices: Vec<Vec<i64>>,
        /// The values.
        values: Box<Leaf>,
    },
}

impl Leaf {
    /// An empty leaf for values of `dtype`.
    pub fn empty(dtype: DType) -> Self {
        match dtype {
            DType::Int64 => Leaf::Int64(Vec::new()),
            DType::Int32 => Leaf::Int32(Vec::new()),
            DType::Bool => Leaf::Bool(Vec::new()),
            DType::Float => Leaf::Float(Vec::new()),
            DType::Double => Leaf::Double(Vec::new()),
            DType::Bytes => Leaf::Bytes(ByteColumn::new()),
            DType::String => Leaf::String(ByteColumn::new()),
        }
    }

    /// The number of values (of entries, for a sparse leaf).
    pub fn len(&self) -> usize {
        match self {
            Leaf::Int64(v) => v.len(),
            Leaf::Int32(v) => v.len(),
            Leaf::Bool(v) => v.len(),
            Leaf::Float(v) => v.len(),
            Leaf::Double(v) => v.len(),
            Leaf::Bytes(v) | Leaf::String(v) => v.len(),
            Leaf::Sparse { values, .. } => values.len(),
        }
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `values` more values, holding `bytes` bytes of strings, may be filled in for a
    /// record lacking its feature (a default, or a null row's zeros): the column then takes at
    /// most `max` bytes (8 a value, and the strings' bytes), and room for them could be
    /// reserved. A record's own values are bounded by its bytes; a fill is not, as every
    /// record lacking the feature takes it.
    pub(crate) fn may_fill(&mut self, values: usize, bytes: usize, max: usize) -> bool {
        let after = (self.len().saturating_add(values))
            .saturating_mul(8)
            .saturating_add(self.string_bytes().saturating_add(bytes));
        if after > max {
            return false;
        }
        match self {
            Leaf::Int64(v) => v.try_reserve(values).is_ok(),
            Leaf::Int32(v) => v.try_reserve(values).is_ok(),
            Leaf::Bool(v) => v.try_reserve(values).is_ok(),
            Leaf::Float(v) => v.try_reserve(values).is_ok(),
            Leaf::Double(v) => v.try_reserve(values).is_ok(),
            Leaf::Bytes(c) | Leaf::String(c) => {
                c.offsets.try_reserve(values).is_ok() && c.data.try_reserve(bytes).is_ok()
            }
            Leaf::Sparse { .. } => true,
        }
    }

    /// Appends a default's values (checked at compile time to be of the leaf's type).
    pub(crate) fn push_values(&mut self, v: &Values) -> bool {
        match (self, v) {
            (Leaf::Int64(out), Values::Int64(d)) => out.extend_from_slice(d),
            (Leaf::Int32(out), Values::Int32(d)) => out.extend_from_slice(d),
            (Leaf::Bool(out), Values::Bool(d)) => out.extend_from_slice(d),
            (Leaf::Float(out), Values::Float32(d)) => out.extend_from_slice(d),
            (Leaf::Double(out), Values::Float64(d)) => out.extend_from_slice(d),
            (Leaf::Double(out), Values::Float32(d)) => {
                out.extend(d.iter().map(|x| crate::feature::widen_f32(*x)));
            }
            (Leaf::Bytes(out) | Leaf::String(out), Values::Bytes(d)) => {
                d.iter().for_each(|b| out.push(b));
            }
            _ => return false,
        }
        true
    }

    /// Keeps the first `n` values (a sparse leaf: unchanged).
    pub(crate) fn truncate(&mut self, n: usize) {
        match self {
            Leaf::Int64(v) => v.truncate(n),
            Leaf::Int32(v) => v.truncate(n),
            Leaf::Bool(v) => v.truncate(n),
            Leaf::Float(v) => v.truncate(n),
            Leaf::Double(v) => v.truncate(n),
            Leaf::Bytes(c) | Leaf::String(c) => c.truncate(n),
            Leaf::Sparse { indices, values } => {
                for dim in indices {
                    dim.truncate(n);
                }
                values.truncate(n);
            }
        }
    }

    /// Reserves room for `values` more values (and `bytes` more bytes of strings).
    pub(crate) fn reserve(&mut self, values: usize, bytes: usize) {
        match self {
            Leaf::Int64(v) => v.reserve(values),
            Leaf::Int32(v) => v.reserve(values),
            Leaf::Bool(v) => v.reserve(values),
            Leaf::Float(v) => v.reserve(values),
            Leaf::Double(v) => v.reserve(values),
            Leaf::Bytes(c) | Leaf::String(c) => {
                c.offsets.reserve(values);
                c.data.reserve(bytes);
            }
            Leaf::Sparse { .. } => {}
        }
    }

    /// The bytes of its string values (0 for other types).
    pub(crate) fn string_bytes(&self) -> usize {
        match self {
            Leaf::Bytes(c) | Leaf::String(c) => c.data.len(),
            _ => 0,
        }
    }

    /// Appends `n` zeros (empty strings): the place a null row takes in fixed levels.
    pub(crate) fn push_zeros(&mut self, n: usize) {
        match self {
            Leaf::Int64(v) => v.resize(v.len() + n, 0),
            Leaf::Int32(v) => v.resize(v.len() + n, 0),
            Leaf::Bool(v) => v.resize(v.len() + n, false),
            Leaf::Float(v) => v.resize(v.len() + n, 0.0),
            Leaf::Double(v) => v.resize(v.len() + n, 0.0),
            Leaf::Bytes(c) | Leaf::String(c) => {
                let end = c.offsets.last().copied().unwrap_or(0);
                c.offsets.resize(c.offsets.len() + n, end);
            }
            Leaf::Sparse { .. } => {}
        }
    }
}

/// What a column holds, known from the spec alone: its name, element type, nesting and
/// whether a row may be null. The same for every batch.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ColumnLayout {
    /// The column's name: the feature's output name, as the key of TensorFlow's `features`
    /// dict (the feature key; a sparse feature's name in the spec).
    pub name: String,
    /// The feature key in records (a sparse feature's value key, a ragged one's value key).
    pub key: String,
    /// The element type.
    pub dtype: DType,
    /// The levels, outermost first.
    pub levels: Vec<LevelKind>,
    /// For a sparse feature, the index feature keys, one per dimension (the leaf is a
    /// [`Leaf::Sparse`]); empty otherwise.
    pub sparse_indices: Vec<String>,
    /// Whether a row may be null (a feature that may be absent and has no default).
    pub nullable: bool,
    /// Whether an absent feature reads as the spec's default. A null row of such a column,
    /// written back as records, is an absent feature (read again, the default).
    pub has_default: bool,
    /// Whether the column is a feature list of a `tf.train.SequenceExample` (else a feature of
    /// an Example, an OFRecord or a SequenceExample's context).
    pub feature_list: bool,
}

/// One feature of a [`ColumnBatch`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Column {
    /// The column's name, as [`ColumnLayout::name`].
    pub name: String,
    /// Whether each row holds a value; `None` when every row does.
    pub valid: Option<Vec<bool>>,
    /// The levels of nesting, outermost first, as [`ColumnLayout::levels`] says.
    pub levels: Vec<Level>,
    /// The values.
    pub leaf: Leaf,
}

impl Column {
    /// A column of these parts (for [`ColumnEncoder::encode`], which checks them).
    pub fn new(name: String, valid: Option<Vec<bool>>, levels: Vec<Level>, leaf: Leaf) -> Self {
        Column {
            name,
            valid,
            levels,
            leaf,
        }
    }
}

/// A batch of records as columns: one [`Column`] per feature of the spec, in spec order (as
/// [`ColumnDecoder::layouts`]), each with `rows` rows.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ColumnBatch {
    /// The number of records.
    pub rows: usize,
    /// The columns.
    pub columns: Vec<Column>,
}

impl ColumnBatch {
    /// A batch of `rows` rows in these columns (for [`ColumnEncoder::encode`], which checks
    /// them).
    pub fn new(rows: usize, columns: Vec<Column>) -> Self {
        ColumnBatch { rows, columns }
    }
}

/// Decodes batches of serialized records of one spec into [`ColumnBatch`]es.
#[derive(Clone, Debug)]
pub struct ColumnDecoder {
    plan: Plan,
    /// The plan of the fast path, when it takes the spec.
    fast: Option<fast::FastPlan>,
    /// What each column held per record in the last batch.
    hints: build::Hints,
}

impl ColumnDecoder {
    /// Compiles `spec` for records in `format`'s message (`tf.train.Example` or
    /// `tf.train.SequenceExample` for TFRecord, `oneflow.OFRecord` for OFRecord).
    ///
    /// # Errors
    /// A spec the columnar layout cannot hold (a SequenceExample spec for OFRecord), or a
    /// default of the wrong type; the error names the feature.
    pub fn new(spec: &RecordSpec, format: Format) -> Result<Self> {
        let plan = Plan::compile(spec, format)?;
        Ok(ColumnDecoder {
            fast: fast::FastPlan::compile(&plan),
            hints: build::Hints::new(plan.cols.len()),
            plan,
        })
    }

    /// The columns every batch has, in order.
    pub fn layouts(&self) -> &[ColumnLayout] {
        self.plan.layouts()
    }

    /// Decodes a batch. `first_record` is the index of `records[0]` in its file or data set,
    /// for error messages.
    ///
    /// # Errors
    /// Malformed protobuf, a required feature absent, a list of another kind, a wrong count, a
    /// value out of range or not UTF-8, an invalid ragged partition, an unknown key where the
    /// spec denies them; the error names the record index and the feature key.
    pub fn decode<R: AsRef<[u8]>>(&self, records: &[R], first_record: u64) -> Result<ColumnBatch> {
        let mut batch = self.start(records.len());
        for (j, record) in records.iter().enumerate() {
            let index = first_record.saturating_add(u64::try_from(j).unwrap_or(u64::MAX));
            batch.push(record.as_ref(), index)?;
        }
        Ok(batch.finish())
    }

    /// A batch of about `rows` records, decoded as they are pushed (so that a reader can lend
    /// each record out of its read buffer).
    pub(crate) fn start(&self, rows: usize) -> BatchBuilder<'_> {
        BatchBuilder::new(&self.plan, self.fast.as_ref(), &self.hints, rows)
    }
}

/// Writes the rows of [`ColumnBatch`]es of one spec as serialized records: the inverse of
/// [`ColumnDecoder`], so that decoding what it writes gives the batch back.
///
/// A null row leaves the feature out of its record; a list (or a fixed feature) is written
/// whole, even when empty; the map entries are sorted by key. Each value is written in the
/// list kind of its type in the container (see the [module](self) docs): `double` becomes a
/// `float_list` in a `tf.train.Example` (rounded, as the spec's type says), `int32` an
/// `int64_list`.
#[derive(Clone, Debug)]
pub struct ColumnEncoder {
    plan: Plan,
    entries: (Vec<encode::Entry>, Vec<encode::Entry>),
}

impl ColumnEncoder {
    /// Compiles `spec` for records in `format`'s message.
    ///
    /// # Errors
    /// As [`ColumnDecoder::new`].
    pub fn new(spec: &RecordSpec, format: Format) -> Result<Self> {
        let plan = Plan::compile(spec, format)?;
        let entries = encode::entries(&plan);
        Ok(ColumnEncoder { plan, entries })
    }

    /// The columns every batch must have, in order.
    pub fn layouts(&self) -> &[ColumnLayout] {
        self.plan.layouts()
    }

    /// Serializes each row of `batch` in order, calling `f` with each record's bytes.
    /// `first_row` is the index of the batch's first row, for error messages.
    ///
    /// # Errors
    /// A batch whose columns do not have the layouts (their number, nesting, offsets, value
    /// type), a ragged row whose length breaks a uniform row length, or an error from `f`.
    pub fn encode(
        &self,
        batch: &ColumnBatch,
        first_row: u64,
        mut f: impl FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        encode::check_batch(&self.plan, batch)?;
        let mut out = Vec::new();
        let mut scratch = Vec::new();
        for r in 0..batch.rows {
            let index = first_row.saturating_add(u64::try_from(r).unwrap_or(u64::MAX));
            encode::encode_row(&self.plan, &self.entries, batch, r, &mut out, &mut scratch)
                .map_err(|e| e.with_record(index))?;
            f(&out).map_err(|e| {
                if e.record().is_none() {
                    e.with_record(index)
                } else {
                    e
                }
            })?;
        }
        Ok(())
    }
}
