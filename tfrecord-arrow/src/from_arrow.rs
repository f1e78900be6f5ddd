//! Arrow to records: each column of a [`RecordBatch`] read back into the core's columnar layout
//! (its rows' values, offsets and validity), which the core's encoder writes as records.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float16Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type,
    UInt16Type, UInt32Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field};
use tfrecord_core::columns::{
    ByteColumn, Column, ColumnBatch, ColumnEncoder, ColumnLayout, Leaf, Level, LevelKind,
};
use tfrecord_core::parse::{DType, RecordSpec};
use tfrecord_core::{Error, Format, Result};
use tfrecord_schema::ir::Record;

/// Writes the rows of Arrow [`RecordBatch`]es as serialized records of a spec: the inverse of
/// [`ArrowDecoder`](crate::ArrowDecoder), so that `Arrow -> records -> Arrow` gives the batch
/// back for every mapped type.
///
/// Columns are found by name. Besides the types the mapping produces, it reads the usual
/// variants of each: `LargeList` for `List`, `LargeBinary` and views for binary and text,
/// narrower integers for `int64` and `int32`, `Float16` for `float`, and a `List` whose entries
/// each hold `k` items for a dimension of `k` (`FixedSizeList`). A value that is null inside a
/// list is an error naming the column and row; so is a null row of a feature that is required
/// (a null row of a feature with a default is written as an absent feature).
#[derive(Clone, Debug)]
pub struct ArrowEncoder {
    columns: ColumnEncoder,
}

impl ArrowEncoder {
    /// An encoder for a derived record type's columns (see
    /// `tfrecord_core::columns::columnar_record`): the inverse of
    /// [`ArrowDecoder::for_type`](crate::ArrowDecoder::for_type), writing the batches it
    /// decodes back as the same records.
    ///
    /// # Errors
    /// As [`new`](Self::new); a field with no column (a flattened struct, a user enum), named.
    pub fn for_type<T: tfrecord_core::RecordSchema>(format: Format) -> Result<Self> {
        Self::new(&tfrecord_core::columns::columnar_record::<T>()?, format)
    }

    /// An encoder for records of `record` in `format`'s message.
    ///
    /// # Errors
    /// As [`ArrowDecoder::new`](crate::ArrowDecoder::new); and for a `tf.train.Example`, a
    /// `double` feature (a `Float64` column read with [`record_from_schema`](crate::record_from_schema))
    /// that is not marked [`lossy`](tfrecord_schema::ir::Field::lossy): an Example holds
    /// floats, so its values would be rounded (OFRecord keeps doubles).
    pub fn new(record: &Record, format: Format) -> Result<Self> {
        if format != Format::OfRecord
            && let Some(f) = record.unmarked_double()
        {
            return Err(Error::feature(format!(
                "`{}` holds float64 values, which a tf.train.Example stores as float: mark the \
                 feature `lossy` to round them, or write OFRecord",
                f.name
            ))
            .with_key(f.key.clone()));
        }
        let spec = RecordSpec::from_record(record)?;
        let columns = ColumnEncoder::new(&spec, format)?;
        if let Some(name) =
            crate::schema::first_duplicate(columns.layouts().iter().map(|l| l.name.as_str()))
        {
            return Err(Error::feature(format!(
                "a context feature and a feature list of the spec are both columns named `{name}`, \
                 and columns are found by name: the records cannot be told apart"
            ))
            .with_key(name.to_string()));
        }
        Ok(ArrowEncoder { columns })
    }

    /// Serializes each row of `batch`, calling `f` with each record's bytes. `first_row` is the
    /// index of the batch's first row, for error messages.
    ///
    /// # Errors
    /// A column missing or of a type the feature cannot take, a null where the spec has no
    /// room for one, and what [`ColumnEncoder::encode`] rejects; or an error from `f`.
    pub fn encode(
        &self,
        batch: &RecordBatch,
        first_row: u64,
        f: impl FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        let layouts = self.columns.layouts();
        let schema = batch.schema();
        // Arrow allows two columns of one name; a feature takes one of them, and the other's
        // values would be lost.
        if let Some(name) = crate::duplicate_column(&schema) {
            return Err(Error::feature(format!(
                "the Arrow batch has two columns named `{name}`, and a feature takes one: the \
                 other's values would be lost: rename or drop one of them"
            ))
            .with_key(name.to_string()));
        }
        let columns = layouts
            .iter()
            .map(|l| {
                let (i, field) = schema.column_with_name(&l.name).ok_or_else(|| {
                    Error::feature(format!("the Arrow batch has no column `{}`", l.name))
                        .with_key(l.name.clone())
                })?;
                no_permutation(field, l)?;
                let array = undictionary(batch.column(i))?;
                to_column(&array, l, first_row).map_err(|e| e.with_key(l.name.clone()))
            })
            .collect::<Result<Vec<_>>>()?;
        if let Some(extra) = schema
            .fields()
            .iter()
            .find(|f| !layouts.iter().any(|l| &l.name == f.name()))
        {
            return Err(Error::feature(format!(
                "column `{}` is not a feature of the spec, and its values would be lost: add \
                 it to the spec, or drop the column",
                extra.name()
            ))
            .with_key(extra.name().clone()));
        }
        let batch = ColumnBatch::new(batch.num_rows(), columns);
        self.columns.encode(&batch, first_row, f)
    }
}

/// A column with dictionary-encoded values (pandas categoricals, pyarrow's
/// `dictionary_encode`), at the top or inside lists, as the plain arrays of its values; any
/// other column as it is.
fn undictionary(array: &ArrayRef) -> Result<ArrayRef> {
    let error = crate::to_arrow::arrow_error;
    if let Some(dict) = array.as_any_dictionary_opt() {
        // A null key takes a null value.
        return arrow_select::take::take(dict.values().as_ref(), dict.keys(), None).map_err(error);
    }
    // A list of any kind holding dictionaries: its child with them replaced, under a field of
    // the child's new type, the offsets, sizes and nulls kept as they are. Any other column
    // is taken as it is, at no cost.
    let field = match array.data_type() {
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _)
            if holds_dictionary(f.data_type()) =>
        {
            f
        }
        _ => return Ok(Arc::clone(array)),
    };
    let data = array.to_data();
    let Some(child) = data.child_data().first() else {
        return Ok(Arc::clone(array));
    };
    let plain = undictionary(&arrow_array::make_array(child.clone()))?;
    let field = Arc::new(
        field
            .as_ref()
            .clone()
            .with_data_type(plain.data_type().clone()),
    );
    let data_type = match array.data_type() {
        DataType::LargeList(_) => DataType::LargeList(field),
        DataType::ListView(_) => DataType::ListView(field),
        DataType::LargeListView(_) => DataType::LargeListView(field),
        DataType::FixedSizeList(_, n) => DataType::FixedSizeList(field, *n),
        _ => DataType::List(field),
    };
    let data = data
        .into_builder()
        .data_type(data_type)
        .child_data(vec![plain.to_data()])
        .build()
        .map_err(error)?;
    Ok(arrow_array::make_array(data))
}

/// Whether values of type `t`, or of the lists it nests, are dictionary-encoded.
fn holds_dictionary(t: &DataType) -> bool {
    match t {
        DataType::Dictionary(..) => true,
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _) => holds_dictionary(f.data_type()),
        _ => false,
    }
}

/// An error about row `row` of a batch whose first row is `first_row`.
fn at_row(first_row: u64, row: usize, what: String) -> Error {
    Error::feature(what)
        .with_record(first_row.saturating_add(u64::try_from(row).unwrap_or(u64::MAX)))
}

/// The extension name of Arrow's canonical fixed-shape tensor type.
const FIXED_SHAPE_TENSOR: &str = "arrow.fixed_shape_tensor";

/// An error for an `arrow.fixed_shape_tensor` column whose values are stored in another order
/// than row-major (a `permutation` other than `0, 1, ..` in its metadata, as the canonical
/// extension types define it): read as its storage, its values would come out transposed.
/// Without one, the storage holds the row-major values a record holds.
fn no_permutation(field: &Field, layout: &ColumnLayout) -> Result<()> {
    if field.extension_type_name() != Some(FIXED_SHAPE_TENSOR) {
        return Ok(());
    }
    let permutation = field
        .extension_type_metadata()
        .and_then(|m| serde_json::from_str::<serde_json::Value>(m).ok())
        .and_then(|m| m.get("permutation").cloned())
        .filter(|p| !p.is_null());
    let Some(permutation) = permutation else {
        return Ok(());
    };
    let identity = permutation.as_array().is_some_and(|p| {
        p.iter()
            .enumerate()
            .all(|(i, d)| d.as_u64() == u64::try_from(i).ok())
    });
    if identity {
        return Ok(());
    }
    Err(Error::feature(format!(
        "column `{}` is an {FIXED_SHAPE_TENSOR} with permutation {permutation}: its storage is \
         not in row-major order, and is not read (make the tensor row-major first, e.g. with \
         numpy's ascontiguousarray)",
        layout.name
    ))
    .with_key(layout.name.clone()))
}

/// How the entries of one level's array lead to the entries of the next: for mapping an entry
/// deep in a column back to the row it belongs to.
enum Up {
    /// Each entry's range of child entries.
    List(Vec<(usize, usize)>),
    /// Each entry holds `n` child entries.
    Fixed(usize),
}

/// The row of entry `i` of the array below `ups` (the levels above it, outermost first).
fn row_of(ups: &[Up], mut i: usize) -> usize {
    for up in ups.iter().rev() {
        i = match up {
            Up::Fixed(n) => i / (*n).max(1),
            Up::List(bounds) => bounds
                .iter()
                .position(|&(a, b)| a <= i && i < b)
                .unwrap_or(0),
        };
    }
    i
}

/// The array index of the `k`-th value the runs keep.
fn kept_index(runs: &[Run], mut k: usize) -> usize {
    for &(a, b, _) in runs {
        if k < b - a {
            return a + k;
        }
        k -= b - a;
    }
    0
}

/// The rows of one column in the columnar layout.
fn to_column(array: &ArrayRef, layout: &ColumnLayout, first_row: u64) -> Result<Column> {
    let rows = array.len();
    let valid: Option<Vec<bool>> = array
        .logical_nulls()
        .filter(|n| n.null_count() > 0)
        .map(|n| n.iter().collect());
    // A null row is an absent feature: one that may be absent, or that reads as its default.
    if let Some(v) = &valid
        && !layout.nullable
        && !layout.has_default
        && let Some(row) = v.iter().position(|ok| !ok)
    {
        return Err(at_row(
            first_row,
            row,
            format!(
                "column `{}` is null, and the feature is required (it has no default and is \
                 not optional)",
                layout.name
            ),
        ));
    }
    let mut runs: Vec<Run> = match &valid {
        None => vec![(0, rows, false)],
        Some(v) => v
            .iter()
            .enumerate()
            .map(|(i, ok)| (i, i + 1, !ok))
            .collect(),
    };
    let mut current: ArrayRef = array.clone();
    let mut levels = Vec::with_capacity(layout.levels.len());
    let mut ups: Vec<Up> = Vec::with_capacity(layout.levels.len());
    let at = Place {
        layout,
        first_row,
        column: array.data_type(),
    };
    for (depth, kind) in layout.levels.iter().enumerate() {
        let (level, next_runs, child) = match kind {
            LevelKind::Fixed(n) => {
                if let Some(fixed) = fixed_from_list(&current, *n, &runs, &ups, &at)? {
                    current = fixed;
                }
                let list = current
                    .as_fixed_size_list_opt()
                    .ok_or_else(|| type_error(&at, &current))?;
                if usize::try_from(list.value_length()).ok() != Some(*n) {
                    return Err(type_error(&at, &current));
                }
                if depth > 0 {
                    at.no_nulls(&current, &runs, &ups)?;
                }
                let runs = runs
                    .iter()
                    .map(|&(a, b, null)| (a * n, b * n, null))
                    .collect();
                ups.push(Up::Fixed(*n));
                (Level::Fixed(*n), runs, list.values().clone())
            }
            LevelKind::List => {
                let (bounds, child) =
                    list_bounds(&current).ok_or_else(|| type_error(&at, &current))?;
                if depth > 0 {
                    at.no_nulls(&current, &runs, &ups)?;
                }
                let mut out = Vec::with_capacity(rows + 1);
                out.push(0i64);
                let mut next: Vec<Run> = Vec::new();
                let mut total = 0i64;
                for &(a, b, null) in &runs {
                    for &(s, t) in &bounds[a..b] {
                        if !null && t > s {
                            total += i64::try_from(t - s).unwrap_or(i64::MAX);
                            match next.last_mut() {
                                Some(last) if last.1 == s => last.1 = t,
                                _ => next.push((s, t, false)),
                            }
                        }
                        out.push(total);
                    }
                }
                ups.push(Up::List(bounds));
                (Level::List(out), next, child)
            }
        };
        levels.push(level);
        runs = next_runs;
        current = child;
    }
    let top_level_nulls = layout.levels.is_empty();
    if !top_level_nulls {
        at.no_nulls(&current, &runs, &ups)?;
    }
    let leaf = if layout.sparse_indices.is_empty() {
        leaf_values(&current, layout.dtype, &runs, &at, &ups)?
    } else {
        let s = current
            .as_struct_opt()
            .ok_or_else(|| type_error(&at, &current))?;
        let dims = layout.sparse_indices.len();
        if s.num_columns() != dims + 1 {
            return Err(type_error(&at, &current));
        }
        // The struct's fields by name (the index keys and the value key), in whatever order
        // the file has them: by position, a struct written in another order would swap them.
        let field = |name: &str| {
            s.column_by_name(name).ok_or_else(|| {
                Error::feature(format!(
                    "column `{}`: the sparse feature's struct has no field `{name}` (expected \
                     the fields {}, found {})",
                    layout.name,
                    layout
                        .sparse_indices
                        .iter()
                        .chain(std::iter::once(&layout.key))
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    s.column_names()
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
                .with_key(layout.name.clone())
            })
        };
        let mut indices = Vec::with_capacity(dims);
        for key in &layout.sparse_indices {
            let col = field(key)?;
            at.no_nulls(col, &runs, &ups)?;
            match leaf_values(col, DType::Int64, &runs, &at, &ups)? {
                Leaf::Int64(v) => indices.push(v),
                _ => return Err(type_error(&at, col)),
            }
        }
        let values = field(&layout.key)?;
        at.no_nulls(values, &runs, &ups)?;
        Leaf::Sparse {
            indices,
            values: Box::new(leaf_values(values, layout.dtype, &runs, &at, &ups)?),
        }
    };
    Ok(Column::new(layout.name.clone(), valid, levels, leaf))
}

/// A `List` or `LargeList` where the spec has a dimension of `n`, as a `FixedSizeList` (writers
/// without Arrow's schema, such as Spark, DuckDB or pyarrow with `store_schema=False`, store
/// fixed-size lists so): every entry the rows keep must hold `n` items; null rows take `n`
/// null placeholders, as in a `FixedSizeList`. `None` for any other type.
fn fixed_from_list(
    array: &ArrayRef,
    n: usize,
    runs: &[Run],
    ups: &[Up],
    at: &Place<'_>,
) -> Result<Option<ArrayRef>> {
    if !matches!(
        array.data_type(),
        DataType::List(_) | DataType::LargeList(_)
    ) {
        return Ok(None);
    }
    let layout = at.layout;
    let (bounds, child) = list_bounds(array).ok_or_else(|| type_error(at, array))?;
    for &(a, b, _) in runs.iter().filter(|r| !r.2) {
        if let Some(i) = (a..b).find(|&i| bounds[i].1 - bounds[i].0 != n) {
            return Err(at.error(
                ups,
                i,
                format!(
                    "column `{}` is a list where the feature has {n} items per entry, and one \
                     holds {}",
                    layout.name,
                    bounds[i].1 - bounds[i].0
                ),
            ));
        }
    }
    let size = i32::try_from(n).map_err(|_| type_error(at, array))?;
    // The items of each entry in turn, `n` nulls for a null entry (or one that no kept row
    // holds, whatever its length).
    let mut kept = vec![false; bounds.len()];
    for &(a, b, _) in runs.iter().filter(|r| !r.2) {
        kept[a..b].fill(true);
    }
    let mut take = arrow_array::builder::UInt64Builder::with_capacity(bounds.len() * n);
    for (i, &(s, e)) in bounds.iter().enumerate() {
        if kept[i] && !array.is_null(i) {
            take.extend((s..e).map(|j| u64::try_from(j).ok()));
        } else {
            take.append_nulls(n);
        }
    }
    let error = crate::to_arrow::arrow_error;
    let items = arrow_select::take::take(child.as_ref(), &take.finish(), None).map_err(error)?;
    let item = Arc::new(Field::new_list_field(child.data_type().clone(), true));
    let fixed = arrow_array::FixedSizeListArray::try_new(item, size, items, array.logical_nulls())
        .map_err(error)?;
    Ok(Some(Arc::new(fixed)))
}

/// The column at `at` does not have the feature's type: `found` is the array of it (the column,
/// or what is inside its lists) that does not fit.
fn type_error(at: &Place<'_>, found: &ArrayRef) -> Error {
    let layout = at.layout;
    let hint = if layout.dtype == DType::Float && found.data_type() == &DataType::Float64 {
        " (its values would be rounded to float: declare the feature `double` with \
         `lossy = true` to round them)"
    } else {
        ""
    };
    Error::feature(format!(
        "column `{}`: expected Arrow type {} for this feature (or a variant of it), found \
         {}{hint}",
        layout.name,
        crate::schema::column_type(layout, crate::ArrowOptions::default()),
        at.column
    ))
    .with_key(layout.name.clone())
}

/// Entries `[a, b)` of an array that the rows keep, and whether they belong to a null row (whose
/// values are placeholders: a null row keeps its place in fixed levels, and none in a list).
type Run = (usize, usize, bool);

/// Each entry's range of child entries, and the child array, of a list array (`List`,
/// `LargeList` or their views); `None` for another type.
fn list_bounds(array: &ArrayRef) -> Option<(Vec<(usize, usize)>, ArrayRef)> {
    let to = |o: i64| usize::try_from(o).unwrap_or(0);
    Some(match array.data_type() {
        DataType::List(_) => {
            let l = array.as_list::<i32>();
            let o = l.value_offsets();
            let b = o
                .windows(2)
                .map(|w| (to(w[0].into()), to(w[1].into())))
                .collect();
            (b, l.values().clone())
        }
        DataType::LargeList(_) => {
            let l = array.as_list::<i64>();
            let b = l.value_offsets().windows(2).map(|w| (to(w[0]), to(w[1])));
            (b.collect(), l.values().clone())
        }
        DataType::ListView(_) => {
            let l = array.as_list_view::<i32>();
            let b = l.offsets().iter().zip(l.sizes().iter());
            let b = b.map(|(&o, &n)| (to(o.into()), to(o.into()) + to(n.into())));
            (b.collect(), l.values().clone())
        }
        DataType::LargeListView(_) => {
            let l = array.as_list_view::<i64>();
            let b = l.offsets().iter().zip(l.sizes().iter());
            (
                b.map(|(&o, &n)| (to(o), to(o) + to(n))).collect(),
                l.values().clone(),
            )
        }
        _ => return None,
    })
}

/// The column being read, for errors naming its key and the row.
struct Place<'a> {
    layout: &'a ColumnLayout,
    first_row: u64,
    /// The column's type, for errors about it.
    column: &'a DataType,
}

impl Place<'_> {
    /// An error about entry `i` of the array below `ups`.
    fn error(&self, ups: &[Up], i: usize, what: String) -> Error {
        at_row(self.first_row, row_of(ups, i), what).with_key(self.layout.name.clone())
    }

    /// An error when an entry inside the kept runs is null: only whole rows may be null.
    fn no_nulls(&self, array: &ArrayRef, runs: &[Run], ups: &[Up]) -> Result<()> {
        let Some(nulls) = array.logical_nulls().filter(|n| n.null_count() > 0) else {
            return Ok(());
        };
        for &(a, b, _) in runs.iter().filter(|r| !r.2) {
            if let Some(i) = (a..b).find(|&i| nulls.is_null(i)) {
                return Err(self.error(
                    ups,
                    i,
                    format!(
                        "column `{}` holds a null value inside a list; a record's list has no \
                         place for one",
                        self.layout.name
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The values of the runs of a value array, as a leaf of `dtype`.
fn leaf_values(
    array: &ArrayRef,
    dtype: DType,
    runs: &[Run],
    at: &Place<'_>,
    ups: &[Up],
) -> Result<Leaf> {
    let layout = at.layout;
    let bad = || type_error(at, array);
    if array.data_type() == &DataType::Null {
        // pyarrow's type for lists that are all empty or null (`list<null>`). Every value of a
        // `Null` array is null, and nulls inside a list were refused before: the runs here
        // are the placeholders of null rows, filled as zeros of the feature's dtype.
        let n = runs.iter().map(|r| r.1 - r.0).sum();
        return Ok(zeros(dtype, n));
    }
    macro_rules! prim {
        ($t:ty, $variant:ident, $conv:expr) => {{
            let a = array.as_primitive_opt::<$t>().ok_or_else(bad)?;
            let values = a.values();
            let mut out = Vec::with_capacity(runs.iter().map(|r| r.1 - r.0).sum());
            for &(s, e, _) in runs {
                out.extend(values[s..e].iter().map($conv));
            }
            Leaf::$variant(out)
        }};
    }
    Ok(match (dtype, array.data_type()) {
        (DType::Int64, DataType::Int64) => prim!(Int64Type, Int64, |v| *v),
        (DType::Int64, DataType::UInt32) => prim!(UInt32Type, Int64, |v| i64::from(*v)),
        (DType::Int64, DataType::Int32) => prim!(Int32Type, Int64, |v| i64::from(*v)),
        (DType::Int64, DataType::UInt16) => prim!(UInt16Type, Int64, |v| i64::from(*v)),
        (DType::Int64, DataType::Int16) => prim!(Int16Type, Int64, |v| i64::from(*v)),
        (DType::Int64, DataType::UInt8) => prim!(UInt8Type, Int64, |v| i64::from(*v)),
        (DType::Int64, DataType::Int8) => prim!(Int8Type, Int64, |v| i64::from(*v)),
        (DType::Int32, DataType::Int32) => prim!(Int32Type, Int32, |v| *v),
        (DType::Int32, DataType::Int16) => prim!(Int16Type, Int32, |v| i32::from(*v)),
        (DType::Int32, DataType::Int8) => prim!(Int8Type, Int32, |v| i32::from(*v)),
        (DType::Int32, DataType::UInt16) => prim!(UInt16Type, Int32, |v| i32::from(*v)),
        (DType::Int32, DataType::UInt8) => prim!(UInt8Type, Int32, |v| i32::from(*v)),
        (DType::Float, DataType::Float32) => prim!(Float32Type, Float, |v| *v),
        (DType::Float, DataType::Float16) => prim!(Float16Type, Float, |v| v.to_f32()),
        (DType::Double, DataType::Float64) => prim!(Float64Type, Double, |v| *v),
        (DType::Double, DataType::Float32) => {
            prim!(Float32Type, Double, |v| tfrecord_core::widen_f32(*v))
        }
        (DType::Bool, DataType::Boolean) => {
            let a = array.as_boolean();
            let mut out = Vec::new();
            for &(s, e, _) in runs {
                out.extend((s..e).map(|i| a.value(i)));
            }
            Leaf::Bool(out)
        }
        (DType::Bytes | DType::String, t) => {
            let mut col = ByteColumn::new();
            match t {
                DataType::Binary => {
                    let a = array.as_binary::<i32>();
                    push_runs(&mut col, runs, |i| a.value(i));
                }
                DataType::LargeBinary => {
                    let a = array.as_binary::<i64>();
                    push_runs(&mut col, runs, |i| a.value(i));
                }
                DataType::BinaryView => {
                    let a = array.as_binary_view();
                    push_runs(&mut col, runs, |i| a.value(i));
                }
                DataType::FixedSizeBinary(_) => {
                    let a = array.as_fixed_size_binary();
                    push_runs(&mut col, runs, |i| a.value(i));
                }
                DataType::Utf8 => {
                    let a = array.as_string::<i32>();
                    push_runs(&mut col, runs, |i| a.value(i).as_bytes());
                }
                DataType::LargeUtf8 => {
                    let a = array.as_string::<i64>();
                    push_runs(&mut col, runs, |i| a.value(i).as_bytes());
                }
                DataType::Utf8View => {
                    let a = array.as_string_view();
                    push_runs(&mut col, runs, |i| a.value(i).as_bytes());
                }
                _ => return Err(bad()),
            }
            let text = matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View);
            if dtype == DType::String
                && !text
                && let Some(i) = (0..col.len())
                    .find(|&i| col.get(i).is_some_and(|b| std::str::from_utf8(b).is_err()))
            {
                return Err(at.error(
                    ups,
                    kept_index(runs, i),
                    format!(
                        "column `{}` holds bytes that are not UTF-8, and the feature is `string`",
                        layout.name
                    ),
                ));
            }
            if dtype == DType::String {
                Leaf::String(col)
            } else {
                Leaf::Bytes(col)
            }
        }
        _ => return Err(bad()),
    })
}

/// `n` zero values (empty strings) of `dtype`.
fn zeros(dtype: DType, n: usize) -> Leaf {
    match dtype {
        DType::Int64 => Leaf::Int64(vec![0; n]),
        DType::Int32 => Leaf::Int32(vec![0; n]),
        DType::Bool => Leaf::Bool(vec![false; n]),
        DType::Float => Leaf::Float(vec![0.0; n]),
        DType::Double => Leaf::Double(vec![0.0; n]),
        DType::Bytes | DType::String => {
            let mut col = ByteColumn::new();
            (0..n).for_each(|_| col.push(&[]));
            if dtype == DType::String {
                Leaf::String(col)
            } else {
                Leaf::Bytes(col)
            }
        }
    }
}

/// Appends the byte values of the runs.
fn push_runs<'a>(col: &mut ByteColumn, runs: &[Run], get: impl Fn(usize) -> &'a [u8]) {
    for &(s, e, _) in runs {
        for i in s..e {
            col.push(get(i));
        }
    }
}
