//! The Arrow type of each column, from its layout; and a spec from an Arrow schema, for data
//! that was not written from one.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, Schema};
use tfrecord_core::columns::{ColumnLayout, LevelKind};
use tfrecord_core::parse::DType;
use tfrecord_core::{Error, Result};
use tfrecord_schema::ir::{self, FeatureKind, Presence, Record, RecordKind};

use crate::ArrowOptions;

/// The schema metadata key holding the spec (TOML text, one record) a file was written from.
pub const SPEC_METADATA_KEY: &str = "tfrecord.spec";

/// What an invalid spec in the metadata is called in its error (`invalid <this>: ...`).
const METADATA_MESSAGE: &str = "`tfrecord.spec` metadata (the spec the data was written with)";

/// The name of a list's item field, as arrow-rs and pyarrow name it.
pub(crate) const ITEM: &str = "item";

/// The Arrow type of one value of `dtype`.
pub(crate) fn value_type(dtype: DType, options: ArrowOptions) -> DataType {
    match dtype {
        DType::Int64 => DataType::Int64,
        DType::Int32 => DataType::Int32,
        DType::Bool => DataType::Boolean,
        DType::Float => DataType::Float32,
        DType::Double => DataType::Float64,
        DType::Bytes if options.large_lists => DataType::LargeBinary,
        DType::Bytes => DataType::Binary,
        DType::String if options.large_lists => DataType::LargeUtf8,
        DType::String => DataType::Utf8,
    }
}

/// The struct of a sparse feature's entries: one `Int64` per index key, then the value.
pub(crate) fn sparse_fields(layout: &ColumnLayout, options: ArrowOptions) -> Fields {
    layout
        .sparse_indices
        .iter()
        .map(|k| Field::new(k, DataType::Int64, false))
        .chain(std::iter::once(Field::new(
            &layout.key,
            value_type(layout.dtype, options),
            false,
        )))
        .collect()
}

/// The Arrow type of a column: the value type (a struct for a sparse feature), wrapped in its
/// levels from the innermost out.
pub(crate) fn column_type(layout: &ColumnLayout, options: ArrowOptions) -> DataType {
    let leaf = if layout.sparse_indices.is_empty() {
        value_type(layout.dtype, options)
    } else {
        DataType::Struct(sparse_fields(layout, options))
    };
    layout.levels.iter().rev().fold(leaf, |inner, level| {
        let item = Arc::new(Field::new(ITEM, inner, false));
        match level {
            LevelKind::Fixed(n) => {
                DataType::FixedSizeList(item, i32::try_from(*n).unwrap_or(i32::MAX))
            }
            LevelKind::List if options.large_lists => DataType::LargeList(item),
            _ => DataType::List(item),
        }
    })
}

/// The first column name two fields of `schema` share (for records: a SequenceExample's context
/// feature and feature list of one key). Arrow allows it, but readers that find columns by
/// name (Parquet's, pyarrow's, [`ArrowEncoder`](crate::ArrowEncoder)) cannot tell them apart.
pub fn duplicate_column(schema: &Schema) -> Option<&str> {
    first_duplicate(schema.fields().iter().map(|f| f.name().as_str()))
}

/// The first name that comes twice.
pub(crate) fn first_duplicate<'a>(names: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let mut seen = std::collections::HashSet::new();
    names.into_iter().find(|n| !seen.insert(*n))
}

/// The Arrow schema of a spec's columns, with the spec itself in the metadata
/// ([`SPEC_METADATA_KEY`]) so that the data can be written back exactly.
pub(crate) fn schema(layouts: &[ColumnLayout], record: &Record, options: ArrowOptions) -> Schema {
    let fields: Vec<Field> = layouts
        .iter()
        .map(|l| Field::new(&l.name, column_type(l, options), l.nullable))
        .collect();
    let spec = ir::Schema {
        records: vec![spec_record(record)],
    }
    .to_toml();
    Schema::new_with_metadata(
        fields,
        HashMap::from([(SPEC_METADATA_KEY.to_string(), spec)]),
    )
}

/// `record` as a spec declares it: each feature named by its column (a derived type names its
/// fields by their Rust members, a spec by their outputs: the feature key, or a sparse
/// feature's own name), so that the spec read back from the metadata has the columns' names.
fn spec_record(record: &Record) -> Record {
    let mut record = record.clone();
    for f in &mut record.fields {
        if !matches!(f.kind, FeatureKind::Sparse { .. }) {
            f.name.clone_from(&f.key);
        }
    }
    record
}

/// The spec of Arrow data: the one in the schema's metadata when it has one (data this crate
/// wrote), else one read off the column types (see the crate docs, "Arrow data from elsewhere").
/// Columns added after the data was written (not in the metadata's spec) are read off their
/// types too, as features after the spec's.
///
/// # Errors
/// Metadata that is not a valid spec, a column type with no feature (a map, a union, a
/// nested struct, a list of lists of lists, a decimal, ...), or an added column named after a
/// key that a feature of the spec reads (a sparse feature's index or value key, a ragged
/// feature's value or partition key), named in the error.
pub fn record_from_schema(schema: &Schema, name: &str) -> Result<Record> {
    let mut record = match schema.metadata().get(SPEC_METADATA_KEY) {
        Some(text) => {
            // Not a feature's error: the spec the data says it was written with.
            let invalid = |detail: String| Error::decode(METADATA_MESSAGE, detail);
            let parsed = ir::Schema::from_toml_str(text, SPEC_METADATA_KEY)
                .map_err(|d| invalid(d.to_string()))?;
            parsed
                .records
                .into_iter()
                .next()
                .ok_or_else(|| invalid("it holds no record".into()))?
        }
        None => Record {
            name: name.to_string(),
            kind: RecordKind::Example,
            dialect: ir::Dialect::default(),
            deny_unknown_keys: false,
            fields: Vec::new(),
            doc: Vec::new(),
            origin: ir::Origin::default(),
        },
    };
    let known: Vec<String> = record.fields.iter().map(|f| f.name.clone()).collect();
    // The keys the spec's features read in the features map (a sparse feature's index and
    // value keys, a ragged feature's value and partition keys): an added column written under
    // one of them would overwrite that feature's entry in every record.
    let mut read: HashMap<String, (String, &'static str)> = HashMap::new();
    for f in record
        .fields
        .iter()
        .filter(|f| !f.skip && !f.kind.is_feature_list(record.kind))
    {
        for key in f.kind.keys(&f.key) {
            read.entry(key.to_owned())
                .or_insert_with(|| (f.name.clone(), f.kind.name()));
        }
    }
    for field in schema.fields().iter().filter(|f| !known.contains(f.name())) {
        if field.name().is_empty() {
            return Err(Error::feature(
                "a column has an empty name, and a feature key cannot be empty (rename the \
                 column)",
            ));
        }
        if let Some((feature, kind)) = read.get(field.name()) {
            return Err(Error::feature(format!(
                "column `{}` is not in the schema's `{SPEC_METADATA_KEY}` spec, and its name is \
                 a key that the spec's {kind} feature `{feature}` reads: written as a feature of \
                 its own, it would overwrite that feature's values in every record (rename the \
                 column)",
                field.name()
            ))
            .with_key(field.name().clone()));
        }
        let (dtype, kind) = feature_of(field.data_type()).ok_or_else(|| {
            let why = match unmapped_value(field.data_type()) {
                Some(t) => format!(
                    "no feature holds {t} values (cast the column to a type of the mapping)"
                ),
                None => "a nested list or a list of structs is a ragged or sparse feature or a \
                         feature list, which only a spec can say"
                    .to_owned(),
            };
            Error::feature(format!(
                "column `{}` of Arrow type {} has no TFRecord feature: {why}",
                field.name(),
                field.data_type()
            ))
            .with_key(field.name().clone())
        })?;
        let fixed = matches!(kind, FeatureKind::Fixed { .. });
        record.fields.push(ir::Field {
            name: field.name().clone(),
            member: tfrecord_schema::symbol::field_name(field.name())
                .unwrap_or_else(|| "feature".into()),
            key: field.name().clone(),
            source: None,
            dtype: Some(dtype),
            kind,
            presence: if fixed && field.is_nullable() {
                Presence::Optional
            } else if fixed {
                Presence::Required
            } else {
                Presence::TypeDefault
            },
            skip: false,
            flatten: false,
            lossy: false,
            doc: Vec::new(),
            origin: ir::Origin::default(),
        });
    }
    Ok(record)
}

/// The first type inside column type `t` that no feature holds (a value type, or a struct
/// outside a list): `None` when every value inside it is of a feature's dtype, in lists or in
/// structs inside lists (a sparse feature's entries).
fn unmapped_value(t: &DataType) -> Option<&DataType> {
    fn inside(t: &DataType, in_list: bool) -> Option<&DataType> {
        match t {
            DataType::List(f)
            | DataType::LargeList(f)
            | DataType::ListView(f)
            | DataType::LargeListView(f)
            | DataType::FixedSizeList(f, _) => inside(f.data_type(), true),
            DataType::Struct(fields) if in_list => {
                fields.iter().find_map(|f| inside(f.data_type(), true))
            }
            t if dtype_of(t).is_some() => None,
            t => Some(t),
        }
    }
    inside(t, false)
}

/// The element type of an Arrow value type.
fn dtype_of(t: &DataType) -> Option<DType> {
    Some(match t {
        DataType::Int64 => DType::Int64,
        DataType::Int32 | DataType::Int16 | DataType::Int8 | DataType::UInt16 | DataType::UInt8 => {
            DType::Int32
        }
        DataType::UInt32 => DType::Int64,
        DataType::Boolean => DType::Bool,
        DataType::Float32 | DataType::Float16 => DType::Float,
        DataType::Float64 => DType::Double,
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => DType::Bytes,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => DType::String,
        // Dictionary-encoded values (pandas categoricals) are read as their values.
        DataType::Dictionary(_, values) => return dtype_of(values),
        _ => return None,
    })
}

/// The feature of a column type read off Arrow data: a value is a scalar, nested fixed-size
/// lists a fixed shape, a list of values `var`, a list of fixed-size lists a `sequence` of rows.
fn feature_of(t: &DataType) -> Option<(DType, FeatureKind)> {
    if let Some(d) = dtype_of(t) {
        return Some((d, FeatureKind::Fixed { shape: Vec::new() }));
    }
    let mut shape = Vec::new();
    let mut inner = t;
    let mut list = false;
    if let DataType::List(f)
    | DataType::LargeList(f)
    | DataType::ListView(f)
    | DataType::LargeListView(f) = inner
    {
        list = true;
        inner = f.data_type();
    }
    while let DataType::FixedSizeList(f, n) = inner {
        shape.push(u64::try_from(*n).ok()?);
        inner = f.data_type();
    }
    let dtype = dtype_of(inner)?;
    Some(match (list, shape.is_empty()) {
        (false, _) => (dtype, FeatureKind::Fixed { shape }),
        (true, true) => (dtype, FeatureKind::Var { rank: None }),
        (true, false) => (
            dtype,
            FeatureKind::FixedSequence {
                shape: shape.into_iter().map(Some).collect(),
                allow_missing: true,
            },
        ),
    })
}
