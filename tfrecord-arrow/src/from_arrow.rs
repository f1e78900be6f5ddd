//! Arrow to records: each column of a [`RecordBatch`] read back into the core's columnar layout
//! (its rows' values, offsets and validity), which the core's encoder writes as records.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float16Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type,
    UInt16Type, UInt32Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;
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
/// narrower integers for `int32`, `Float16` for `float`; a value that is null inside a list (or
/// in a non-nullable column) is an error naming the column and row.
#[derive(Clone, Debug)]
pub struct ArrowEncoder {
    columns: ColumnEncoder,
}

impl ArrowEncoder {
    /// An encoder for records of `record` in `format`'s message.
    ///
    /// # Errors
    /// As [`ArrowDecoder::new`](crate::ArrowDecoder::new).
    pub fn new(record: &Record, format: Format) -> Result<Self> {
        let spec = RecordSpec::from_record(record)?;
        Ok(ArrowEncoder {
            columns: ColumnEncoder::new(&spec, format)?,
        })
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
        let columns = self
            .columns
            .layouts()
            .iter()
            .map(|l| {
                let array = batch.column_by_name(&l.name).ok_or_else(|| {
                    Error::feature(format!("the Arrow batch has no column `{}`", l.name))
                        .with_key(l.name.clone())
                })?;
                to_column(array, l, first_row).map_err(|e| e.with_key(l.name.clone()))
            })
            .collect::<Result<Vec<_>>>()?;
        let batch = ColumnBatch::new(batch.num_rows(), columns);
        self.columns.encode(&batch, first_row, f)
    }
}

/// An error about row `row` of a batch whose first row is `first_row`.
fn at_row(first_row: u64, row: usize, what: String) -> Error {
    Error::feature(what)
        .with_record(first_row.saturating_add(u64::try_from(row).unwrap_or(u64::MAX)))
}

/// The rows of one column in the columnar layout.
fn to_column(array: &ArrayRef, layout: &ColumnLayout, first_row: u64) -> Result<Column> {
    let rows = array.len();
    let valid: Option<Vec<bool>> = array
        .logical_nulls()
        .filter(|n| n.null_count() > 0)
        .map(|n| n.iter().collect());
    if let Some(v) = &valid
        && !layout.nullable
        && let Some(row) = v.iter().position(|ok| !ok)
    {
        return Err(at_row(
            first_row,
            row,
            format!(
                "column `{}` is null, and the feature has no value for absence",
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
    for (depth, kind) in layout.levels.iter().enumerate() {
        let (level, next_runs, child) = match kind {
            LevelKind::Fixed(n) => {
                let list = current
                    .as_fixed_size_list_opt()
                    .ok_or_else(|| type_error(layout, &current))?;
                if usize::try_from(list.value_length()).ok() != Some(*n) {
                    return Err(type_error(layout, &current));
                }
                if depth > 0 {
                    no_nulls(&current, &runs, layout)?;
                }
                let runs = runs
                    .iter()
                    .map(|&(a, b, null)| (a * n, b * n, null))
                    .collect();
                (Level::Fixed(*n), runs, list.values().clone())
            }
            LevelKind::List => {
                let (offsets, child): (Vec<i64>, ArrayRef) = match current.data_type() {
                    DataType::List(_) => {
                        let l = current.as_list::<i32>();
                        (
                            l.value_offsets().iter().map(|&o| i64::from(o)).collect(),
                            l.values().clone(),
                        )
                    }
                    DataType::LargeList(_) => {
                        let l = current.as_list::<i64>();
                        (l.value_offsets().to_vec(), l.values().clone())
                    }
                    _ => return Err(type_error(layout, &current)),
                };
                if depth > 0 {
                    no_nulls(&current, &runs, layout)?;
                }
                let mut out = Vec::with_capacity(rows + 1);
                out.push(0i64);
                let mut next: Vec<Run> = Vec::new();
                let mut total = 0i64;
                for &(a, b, null) in &runs {
                    for e in a..b {
                        let (s, t) = (offsets[e], offsets[e + 1]);
                        if !null && t > s {
                            total += t - s;
                            let (s, t) = (
                                usize::try_from(s).unwrap_or(0),
                                usize::try_from(t).unwrap_or(0),
                            );
                            match next.last_mut() {
                                Some(last) if last.1 == s => last.1 = t,
                                _ => next.push((s, t, false)),
                            }
                        }
                        out.push(total);
                    }
                }
                (Level::List(out), next, child)
            }
        };
        levels.push(level);
        runs = next_runs;
        current = child;
    }
    let top_level_nulls = layout.levels.is_empty();
    if !top_level_nulls {
        no_nulls(&current, &runs, layout)?;
    }
    let leaf = if layout.sparse_indices.is_empty() {
        leaf_values(&current, layout.dtype, &runs, layout)?
    } else {
        let s = current
            .as_struct_opt()
            .ok_or_else(|| type_error(layout, &current))?;
        let dims = layout.sparse_indices.len();
        if s.num_columns() != dims + 1 {
            return Err(type_error(layout, &current));
        }
        let mut indices = Vec::with_capacity(dims);
        for d in 0..dims {
            let col = s.column(d);
            no_nulls(col, &runs, layout)?;
            match leaf_values(col, DType::Int64, &runs, layout)? {
                Leaf::Int64(v) => indices.push(v),
                _ => return Err(type_error(layout, col)),
            }
        }
        let values = s.column(dims);
        no_nulls(values, &runs, layout)?;
        Leaf::Sparse {
            indices,
            values: Box::new(leaf_values(values, layout.dtype, &runs, layout)?),
        }
    };
    Ok(Column::new(layout.name.clone(), valid, levels, leaf))
}

fn type_error(layout: &ColumnLayout, found: &ArrayRef) -> Error {
    Error::feature(format!(
        "column `{}`: expected Arrow type {} for this feature (or a variant of it), found {}",
        layout.name,
        crate::schema::column_type(layout, crate::ArrowOptions::default()),
        found.data_type()
    ))
    .with_key(layout.name.clone())
}

/// Entries `[a, b)` of an array that the rows keep, and whether they belong to a null row (whose
/// values are placeholders: a null row keeps its place in fixed levels, and none in a list).
type Run = (usize, usize, bool);

/// An error when an entry inside the kept runs is null: only whole rows may be null.
fn no_nulls(array: &ArrayRef, runs: &[Run], layout: &ColumnLayout) -> Result<()> {
    let Some(nulls) = array.logical_nulls().filter(|n| n.null_count() > 0) else {
        return Ok(());
    };
    for &(a, b, _) in runs.iter().filter(|r| !r.2) {
        if let Some(i) = (a..b).find(|&i| nulls.is_null(i)) {
            return Err(Error::feature(format!(
                "column `{}` holds a null value inside a list (entry {i}); a record's list has no place for one",
                layout.name
            ))
            .with_key(layout.name.clone()));
        }
    }
    Ok(())
}

/// The values of the runs of a value array, as a leaf of `dtype`.
fn leaf_values(
    array: &ArrayRef,
    dtype: DType,
    runs: &[Run],
    layout: &ColumnLayout,
) -> Result<Leaf> {
    let bad = || type_error(layout, array);
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
        (DType::Int32, DataType::Int32) => prim!(Int32Type, Int32, |v| *v),
        (DType::Int32, DataType::Int16) => prim!(Int16Type, Int32, |v| i32::from(*v)),
        (DType::Int32, DataType::Int8) => prim!(Int8Type, Int32, |v| i32::from(*v)),
        (DType::Int32, DataType::UInt16) => prim!(UInt16Type, Int32, |v| i32::from(*v)),
        (DType::Int32, DataType::UInt8) => prim!(UInt8Type, Int32, |v| i32::from(*v)),
        (DType::Float, DataType::Float32) => prim!(Float32Type, Float, |v| *v),
        (DType::Float, DataType::Float16) => prim!(Float16Type, Float, |v| v.to_f32()),
        (DType::Double, DataType::Float64) => prim!(Float64Type, Double, |v| *v),
        (DType::Double, DataType::Float32) => prim!(Float32Type, Double, |v| f64::from(*v)),
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
                return Err(Error::feature(format!(
                    "column `{}`: value {i} is not UTF-8, and the feature is `string`",
                    layout.name
                ))
                .with_key(layout.name.clone()));
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

/// Appends the byte values of the runs.
fn push_runs<'a>(col: &mut ByteColumn, runs: &[Run], get: impl Fn(usize) -> &'a [u8]) {
    for &(s, e, _) in runs {
        for i in s..e {
            col.push(get(i));
        }
    }
}
