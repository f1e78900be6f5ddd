//! Records to Arrow: the core's columnar batches wrapped as Arrow arrays, their value buffers
//! moved, not copied.

use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, FixedSizeListArray, Float32Array, Float64Array,
    Int32Array, Int64Array, LargeBinaryArray, LargeListArray, LargeStringArray, ListArray,
    RecordBatch, RecordBatchOptions, StringArray, StructArray,
};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, Field, SchemaRef};
use tfrecord_core::columns::{
    ByteColumn, Column, ColumnDecoder, ColumnLayout, Leaf, Level, columnar_record,
};
use tfrecord_core::parse::RecordSpec;
use tfrecord_core::{Error, Format, RecordSchema, Result};
use tfrecord_schema::ir::Record;

use crate::ArrowOptions;
use crate::schema::{ITEM, schema, sparse_fields};

/// Decodes batches of serialized records into Arrow [`RecordBatch`]es, one column per feature
/// of a spec, by the crate's type mapping.
#[derive(Clone, Debug)]
pub struct ArrowDecoder {
    columns: ColumnDecoder,
    schema: SchemaRef,
    pub(crate) format: Format,
    pub(crate) options: ArrowOptions,
}

impl ArrowDecoder {
    /// A decoder for records of `record` (a spec's record: from a TOML spec, inferred, or read
    /// off an Arrow schema) in `format`'s message, with the default [`ArrowOptions`].
    ///
    /// # Errors
    /// A record the runtime form or the columnar layout cannot hold; the error names the
    /// feature.
    pub fn new(record: &Record, format: Format) -> Result<Self> {
        Self::with_options(record, format, ArrowOptions::default())
    }

    /// A decoder for a derived record type's columns (see
    /// `tfrecord_core::columns::columnar_record`), by the same mapping as for a spec file.
    ///
    /// # Errors
    /// As [`new`](Self::new); a field with no column (a flattened struct, a user enum), named,
    /// rather than a schema without it.
    pub fn for_type<T: RecordSchema>(format: Format, options: ArrowOptions) -> Result<Self> {
        Self::with_options(&columnar_record::<T>()?, format, options)
    }

    /// As [`new`](Self::new), with options.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn with_options(record: &Record, format: Format, options: ArrowOptions) -> Result<Self> {
        let spec = RecordSpec::from_record(record)?;
        let columns = ColumnDecoder::new(&spec, format)?;
        let schema = Arc::new(schema(columns.layouts(), record, options));
        Ok(ArrowDecoder {
            columns,
            schema,
            format,
            options,
        })
    }

    /// The schema of every batch: one field per feature, the spec in its metadata.
    pub fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    /// Decodes a batch of serialized records. `first_record` is the index of `records[0]`, for
    /// error messages.
    ///
    /// # Errors
    /// As [`ColumnDecoder::decode`]; a batch too large for 32-bit offsets (more than 2 GiB of
    /// bytes or 2^31 values in one column: use [`ArrowOptions::large_lists`] or smaller batches).
    pub fn decode<R: AsRef<[u8]>>(&self, records: &[R], first_record: u64) -> Result<RecordBatch> {
        let batch = self.columns.decode(records, first_record)?;
        let arrays = batch
            .columns
            .into_iter()
            .zip(self.columns.layouts())
            .map(|(c, l)| {
                column_array(c, l, batch.rows, self.options).map_err(|e| e.with_key(l.name.clone()))
            })
            .collect::<Result<Vec<_>>>()?;
        RecordBatch::try_new_with_options(
            self.schema(),
            arrays,
            &RecordBatchOptions::new().with_row_count(Some(batch.rows)),
        )
        .map_err(arrow_error)
    }
}

/// An Arrow error as the workspace's error.
pub(crate) fn arrow_error(e: ArrowError) -> Error {
    Error::feature(format!("arrow: {e}"))
}

fn column_array(
    c: Column,
    layout: &ColumnLayout,
    rows: usize,
    options: ArrowOptions,
) -> Result<ArrayRef> {
    let located = |e: Error| e.with_key(layout.name.clone());
    let nulls = c.valid.map(NullBuffer::from);
    let levels = c.levels.len();
    // The entries of each level (rows, then each level's children): a fixed size of 0 has no
    // values to count its entries by.
    let mut entries = Vec::with_capacity(levels);
    let mut len = rows;
    for level in &c.levels {
        entries.push(len);
        len = match level {
            Level::Fixed(n) => len.saturating_mul(*n),
            Level::List(offsets) => offsets
                .last()
                .and_then(|&e| usize::try_from(e).ok())
                .unwrap_or(0),
        };
    }
    let mut array = leaf_array(
        c.leaf,
        layout,
        options,
        if levels == 0 { nulls.clone() } else { None },
    )
    .map_err(located)?;
    for (i, level) in c.levels.into_iter().enumerate().rev() {
        let nulls = if i == 0 { nulls.clone() } else { None };
        let item = Arc::new(Field::new(ITEM, array.data_type().clone(), false));
        array = match level {
            Level::Fixed(n) => {
                let n = i32::try_from(n)
                    .map_err(|_| located(Error::feature("a fixed dimension over 2^31")))?;
                Arc::new(
                    FixedSizeListArray::try_new_with_length(item, n, array, nulls, entries[i])
                        .map_err(arrow_error)?,
                )
            }
            Level::List(offsets) if options.large_lists => Arc::new(
                LargeListArray::try_new(item, OffsetBuffer::new(offsets.into()), array, nulls)
                    .map_err(arrow_error)?,
            ),
            Level::List(offsets) => Arc::new(
                ListArray::try_new(item, narrow(&offsets).map_err(located)?, array, nulls)
                    .map_err(arrow_error)?,
            ),
        };
    }
    Ok(array)
}

/// 64-bit offsets as Arrow's 32-bit ones.
fn narrow(offsets: &[i64]) -> Result<OffsetBuffer<i32>> {
    let v = offsets
        .iter()
        .map(|&o| i32::try_from(o))
        .collect::<std::result::Result<Vec<i32>, _>>()
        .map_err(|_| {
            Error::feature(
                "the batch's column holds more than 2^31 values or bytes: use large lists or \
                 smaller batches",
            )
        })?;
    Ok(OffsetBuffer::new(ScalarBuffer::from(v)))
}

fn bytes_parts(col: ByteColumn) -> (Vec<i64>, Buffer) {
    (col.offsets, Buffer::from_vec(col.data))
}

fn leaf_array(
    leaf: Leaf,
    layout: &ColumnLayout,
    options: ArrowOptions,
    nulls: Option<NullBuffer>,
) -> Result<ArrayRef> {
    let large = options.large_lists;
    Ok(match leaf {
        Leaf::Int64(v) => Arc::new(Int64Array::new(v.into(), nulls)),
        Leaf::Int32(v) => Arc::new(Int32Array::new(v.into(), nulls)),
        Leaf::Bool(v) => Arc::new(BooleanArray::new(v.into(), nulls)),
        Leaf::Float(v) => Arc::new(Float32Array::new(v.into(), nulls)),
        Leaf::Double(v) => Arc::new(Float64Array::new(v.into(), nulls)),
        Leaf::Bytes(col) => {
            let (offsets, data) = bytes_parts(col);
            if large {
                Arc::new(
                    LargeBinaryArray::try_new(OffsetBuffer::new(offsets.into()), data, nulls)
                        .map_err(arrow_error)?,
                )
            } else {
                Arc::new(BinaryArray::try_new(narrow(&offsets)?, data, nulls).map_err(arrow_error)?)
            }
        }
        Leaf::String(col) => {
            let (offsets, data) = bytes_parts(col);
            if large {
                Arc::new(
                    LargeStringArray::try_new(OffsetBuffer::new(offsets.into()), data, nulls)
                        .map_err(arrow_error)?,
                )
            } else {
                Arc::new(StringArray::try_new(narrow(&offsets)?, data, nulls).map_err(arrow_error)?)
            }
        }
        Leaf::Sparse { indices, values } => {
            let fields = sparse_fields(layout, options);
            let mut arrays: Vec<ArrayRef> = indices
                .into_iter()
                .map(|i| Arc::new(Int64Array::new(i.into(), None)) as ArrayRef)
                .collect();
            arrays.push(leaf_array(*values, layout, options, None)?);
            Arc::new(StructArray::try_new(fields, arrays, nulls).map_err(arrow_error)?)
        }
        other => {
            return Err(Error::feature(format!(
                "a column of {:?} values has no Arrow array here",
                std::mem::discriminant(&other)
            )));
        }
    })
}
