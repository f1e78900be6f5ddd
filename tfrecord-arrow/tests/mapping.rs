//! The type mapping as documented, Arrow data from elsewhere (the variants arrow-rs and pyarrow
//! write), and the errors that name the column, key and record.

use std::sync::Arc;

use tfrecord_arrow::arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int64Builder, LargeListBuilder, ListBuilder, StringBuilder,
};
use tfrecord_arrow::arrow_array::{
    Array, ArrayRef, BinaryArray, Float32Array, Int64Array, RecordBatch, StringViewArray,
};
use tfrecord_arrow::arrow_schema::{DataType, Field, Schema};
use tfrecord_arrow::{ArrowDecoder, ArrowEncoder, SPEC_METADATA_KEY, record_from_schema};
use tfrecord_core::proto::tensorflow as tf;
use tfrecord_core::{Format, Message};
use tfrecord_schema::ir::{Record, Schema as Spec};

fn record(toml: &str) -> Record {
    Spec::from_toml_str(toml, "spec.toml")
        .unwrap()
        .records
        .remove(0)
}

fn example(features: Vec<(&str, tf::feature::Kind)>) -> Vec<u8> {
    let feature = features
        .into_iter()
        .map(|(k, v)| (k.to_string(), tf::Feature { kind: Some(v) }))
        .collect();
    tf::Example {
        features: Some(tf::Features { feature }),
    }
    .encode_to_vec()
}

fn ints(v: &[i64]) -> tf::feature::Kind {
    tf::feature::Kind::Int64List(tf::Int64List { value: v.to_vec() })
}

fn bytes(v: &[&[u8]]) -> tf::feature::Kind {
    tf::feature::Kind::BytesList(tf::BytesList {
        value: v.iter().map(|b| b.to_vec()).collect(),
    })
}

const EVERY_KIND: &str = r#"
[records.R.features.label]
dtype = "int64"
default = -1
[records.R.features.maybe]
dtype = "float"
optional = true
[records.R.features.image]
dtype = "bytes"
shape = [2, 3]
[records.R.features.ids]
dtype = "int64"
kind = "var"
[records.R.features.name]
dtype = "string"
[records.R.features.points]
dtype = "float"
shape = [-1, 2]
[records.R.features.boxes]
dtype = "float"
kind = "sparse"
index_key = ["box/row", "box/col"]
value_key = "box/score"
size = [4, 4]
[records.R.features.tokens]
dtype = "int64"
kind = "ragged"
partitions = [{ row_lengths = "tokens/len" }]
"#;

#[test]
fn every_kind_has_its_documented_type() {
    let decoder = ArrowDecoder::new(&record(EVERY_KIND), Format::TfRecord).unwrap();
    let schema = decoder.schema();
    let ty = |name: &str| {
        schema
            .field_with_name(name)
            .unwrap()
            .data_type()
            .to_string()
    };
    let nullable = |name: &str| schema.field_with_name(name).unwrap().is_nullable();
    assert_eq!(ty("label"), "Int64");
    assert!(!nullable("label"));
    assert_eq!(ty("maybe"), "Float32");
    assert!(nullable("maybe"));
    assert_eq!(
        ty("image"),
        "FixedSizeList(2 x non-null FixedSizeList(3 x non-null Binary))"
    );
    assert_eq!(ty("ids"), "List(non-null Int64)");
    assert!(nullable("ids"));
    assert_eq!(ty("name"), "Utf8");
    assert_eq!(
        ty("points"),
        "List(non-null FixedSizeList(2 x non-null Float32))"
    );
    assert_eq!(
        ty("boxes"),
        r#"List(non-null Struct("box/row": non-null Int64, "box/col": non-null Int64, "box/score": non-null Float32))"#
    );
    assert_eq!(ty("tokens"), "List(non-null List(non-null Int64))");
    assert!(schema.metadata().contains_key(SPEC_METADATA_KEY));
}

#[test]
fn values_land_where_the_mapping_says() {
    let decoder = ArrowDecoder::new(&record(EVERY_KIND), Format::TfRecord).unwrap();
    let full = example(vec![
        ("label", ints(&[7])),
        ("image", bytes(&[b"a", b"b", b"c", b"d", b"e", b"f"])),
        ("ids", ints(&[1, 2, 3])),
        ("name", bytes(&["é".as_bytes()])),
        (
            "points",
            tf::feature::Kind::FloatList(tf::FloatList {
                value: vec![1.0, 2.0, 3.0, 4.0],
            }),
        ),
        ("box/row", ints(&[0, 3])),
        ("box/col", ints(&[1, 2])),
        (
            "box/score",
            tf::feature::Kind::FloatList(tf::FloatList {
                value: vec![0.5, 0.25],
            }),
        ),
        ("tokens", ints(&[4, 5, 6])),
        ("tokens/len", ints(&[2, 0, 1])),
    ]);
    let sparse = example(vec![
        ("image", bytes(&[&b""[..]; 6])),
        ("name", bytes(&[b"x"])),
        ("ids", ints(&[])),
    ]);
    let batch = decoder.decode(&[full, sparse], 0).unwrap();
    let col = |n: &str| batch.column_by_name(n).unwrap().clone();
    let label = col("label");
    let label = label.as_any().downcast_ref::<Int64Array>().unwrap();
    assert_eq!(label.values().to_vec(), vec![7, -1]); // the default fills the absent one
    let maybe = col("maybe");
    assert_eq!(maybe.null_count(), 2);
    let ids = col("ids");
    assert!(ids.is_valid(0) && ids.is_valid(1)); // present, the second with an empty list
    let tokens = col("tokens");
    assert!(tokens.is_valid(0) && tokens.is_null(1)); // absent ragged features are null
    let tokens = tokens
        .as_any()
        .downcast_ref::<tfrecord_arrow::arrow_array::ListArray>()
        .unwrap();
    let rows = tokens.value(0);
    let rows = rows
        .as_any()
        .downcast_ref::<tfrecord_arrow::arrow_array::ListArray>()
        .unwrap();
    assert_eq!(rows.value_offsets(), &[0, 2, 2, 3]);
    let boxes = col("boxes");
    assert!(boxes.is_valid(0) && boxes.is_null(1));
}

#[test]
fn arrow_data_from_elsewhere_reads_by_its_types() {
    // What pyarrow writes for a table of Python lists: nullable items, large lists, views.
    let mut ids = ListBuilder::new(Int64Builder::new());
    ids.values().append_value(1);
    ids.values().append_value(2);
    ids.append(true);
    ids.append(false); // a null row
    let ids = ids.finish();
    let mut big = LargeListBuilder::new(Float64Builder::new());
    big.values().append_value(0.5);
    big.append(true);
    big.values().append_value(1.5);
    big.append(true);
    let big = big.finish();
    let mut name = StringBuilder::new();
    name.append_value("a");
    name.append_null();
    let name = name.finish();
    let mut flag = BooleanBuilder::new();
    flag.append_value(true);
    flag.append_value(false);
    let flag = flag.finish();
    let view = StringViewArray::from(vec!["long enough to leave the view's inline bytes", "v"]);
    let bin = BinaryArray::from_vec(vec![&b"\xff\x00"[..], &b""[..]]);
    let fields = vec![
        Field::new("ids", ids.data_type().clone(), true),
        Field::new("big", big.data_type().clone(), false),
        Field::new("name", DataType::Utf8, true),
        Field::new("flag", DataType::Boolean, false),
        Field::new("view", DataType::Utf8View, false),
        Field::new("bin", DataType::Binary, false),
    ];
    let columns: Vec<ArrayRef> = vec![
        Arc::new(ids),
        Arc::new(big),
        Arc::new(name),
        Arc::new(flag),
        Arc::new(view),
        Arc::new(bin),
    ];
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap();
    let spec = record_from_schema(&batch.schema(), "Foreign").unwrap();
    let encoder = ArrowEncoder::new(&spec, Format::OfRecord).unwrap();
    let mut records = Vec::new();
    encoder
        .encode(&batch, 0, |r| {
            records.push(r.to_vec());
            Ok(())
        })
        .unwrap();
    let decoded: Vec<_> = records
        .iter()
        .map(|r| tfrecord_core::proto::oneflow::OfRecord::decode(&r[..]).unwrap())
        .collect();
    use tfrecord_core::proto::oneflow::feature::Kind as K;
    let kind = |i: usize, k: &str| decoded[i].feature.get(k).and_then(|f| f.kind.clone());
    assert_eq!(
        kind(0, "ids"),
        Some(K::Int64List(tfrecord_core::proto::oneflow::Int64List {
            value: vec![1, 2]
        }))
    );
    assert_eq!(kind(1, "ids"), None); // the null row leaves the key out
    assert_eq!(
        kind(1, "big"),
        Some(K::DoubleList(tfrecord_core::proto::oneflow::DoubleList {
            value: vec![1.5]
        }))
    );
    assert_eq!(kind(1, "name"), None);
    assert_eq!(
        kind(0, "flag"),
        Some(K::Int64List(tfrecord_core::proto::oneflow::Int64List {
            value: vec![1]
        }))
    );
    assert_eq!(
        kind(0, "view"),
        Some(K::BytesList(tfrecord_core::proto::oneflow::BytesList {
            value: vec![b"long enough to leave the view's inline bytes".to_vec()]
        }))
    );
    assert_eq!(
        kind(0, "bin"),
        Some(K::BytesList(tfrecord_core::proto::oneflow::BytesList {
            value: vec![b"\xff\x00".to_vec()]
        }))
    );
}

#[test]
fn errors_name_the_column_key_and_record() {
    // A null inside a list.
    let mut ids = ListBuilder::new(Int64Builder::new());
    ids.values().append_value(1);
    ids.append(true);
    ids.values().append_null();
    ids.append(true);
    let ids = ids.finish();
    let schema = Schema::new(vec![Field::new("ids", ids.data_type().clone(), true)]);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(ids) as ArrayRef]).unwrap();
    let spec = record_from_schema(&batch.schema(), "R").unwrap();
    let err = ArrowEncoder::new(&spec, Format::TfRecord)
        .unwrap()
        .encode(&batch, 0, |_| Ok(()))
        .unwrap_err();
    assert_eq!(err.key(), Some("ids"));
    assert!(
        err.to_string().contains("null value inside a list"),
        "{err}"
    );

    // A column of another type than the spec says, and a missing column.
    let spec = record("[records.R.features.x]\ndtype = \"int64\"\n");
    let floats = Float32Array::from(vec![1.0f32]);
    let schema = Schema::new(vec![Field::new("x", DataType::Float32, false)]);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(floats) as ArrayRef]).unwrap();
    let err = ArrowEncoder::new(&spec, Format::TfRecord)
        .unwrap()
        .encode(&batch, 0, |_| Ok(()))
        .unwrap_err();
    assert_eq!(err.key(), Some("x"));
    assert!(err.to_string().contains("found Float32"), "{err}");
    let spec = record("[records.R.features.y]\ndtype = \"int64\"\n");
    let err = ArrowEncoder::new(&spec, Format::TfRecord)
        .unwrap()
        .encode(&batch, 0, |_| Ok(()))
        .unwrap_err();
    assert!(err.to_string().contains("no column `y`"), "{err}");

    // Records: a string feature that is not UTF-8, and a required feature absent.
    let decoder = ArrowDecoder::new(
        &record("[records.R.features.s]\ndtype = \"string\"\n"),
        Format::TfRecord,
    )
    .unwrap();
    let good = example(vec![("s", bytes(&[b"ok"]))]);
    let bad = example(vec![("s", bytes(&[b"\xff"]))]);
    let err = decoder.decode(&[good.clone(), bad], 40).unwrap_err();
    assert_eq!((err.key(), err.record()), (Some("s"), Some(41)));
    assert!(err.to_string().contains("UTF-8"), "{err}");
    let err = decoder.decode(&[good, example(vec![])], 0).unwrap_err();
    assert_eq!((err.key(), err.record()), (Some("s"), Some(1)));
    assert!(err.to_string().contains("missing"), "{err}");
}

#[test]
fn a_nullable_column_read_back_keeps_its_spec() {
    let decoder = ArrowDecoder::new(&record(EVERY_KIND), Format::TfRecord).unwrap();
    let spec = record_from_schema(&decoder.schema(), "Ignored").unwrap();
    assert_eq!(spec, record(EVERY_KIND));
}

/// A fixed shape with a dimension of 0 (`FixedLenFeature([2, 0])` parses a record with an empty
/// list, as TensorFlow does) is a `FixedSizeList` of size 0 with one entry per row, and encodes
/// back to the empty list.
#[test]
fn a_fixed_dimension_of_zero_keeps_its_rows() {
    for (shape, dims) in [
        ("[0]", vec![0]),
        ("[2, 0]", vec![2, 0]),
        ("[0, 2]", vec![0, 2]),
    ] {
        let spec = record(&format!(
            "[records.R.features.z]\ndtype = \"int64\"\nshape = {shape}\n\
             [records.R.features.a]\ndtype = \"int64\"\n"
        ));
        let records: Vec<Vec<u8>> = (0..3)
            .map(|i| example(vec![("z", ints(&[])), ("a", ints(&[i]))]))
            .collect();
        let batch = ArrowDecoder::new(&spec, Format::TfRecord)
            .unwrap()
            .decode(&records, 0)
            .unwrap_or_else(|e| panic!("{shape}: {e}"));
        assert_eq!(batch.num_rows(), 3, "{shape}");
        let mut ty = batch.schema().field(0).data_type().clone();
        for d in dims {
            let DataType::FixedSizeList(item, n) = ty else {
                panic!("{shape}: {ty}");
            };
            assert_eq!(n, d, "{shape}");
            ty = item.data_type().clone();
        }
        let mut back = Vec::new();
        ArrowEncoder::new(&spec, Format::TfRecord)
            .unwrap()
            .encode(&batch, 0, |r| {
                back.push(r.to_vec());
                Ok(())
            })
            .unwrap();
        let parsed = |b: &[u8]| tf::Example::decode(b).unwrap();
        let got: Vec<tf::Example> = back.iter().map(|b| parsed(b)).collect();
        let want: Vec<tf::Example> = records.iter().map(|b| parsed(b)).collect();
        assert_eq!(got, want, "{shape}");
    }
}

/// Dictionary-encoded columns (pandas categoricals; pyarrow's `dictionary_encode`), at the top
/// or inside a list, are read as their values, nulls kept.
#[test]
fn dictionary_columns_read_as_their_values() {
    use tfrecord_arrow::arrow_array::types::Int32Type;
    use tfrecord_arrow::arrow_array::{DictionaryArray, ListArray};
    let top: DictionaryArray<Int32Type> = vec![Some("a"), Some("b"), Some("a"), None]
        .into_iter()
        .collect();
    let inner: DictionaryArray<Int32Type> = vec!["p", "q", "p"].into_iter().collect();
    let item = Arc::new(Field::new("item", inner.data_type().clone(), false));
    let nested = ListArray::new(
        Arc::clone(&item),
        arrow_buffer::OffsetBuffer::new(vec![0i32, 1, 3, 3, 3].into()),
        Arc::new(inner),
        Some(vec![true, true, true, false].into()),
    );
    let schema = Schema::new(vec![
        Field::new("c", top.data_type().clone(), true),
        Field::new("l", DataType::List(item), true),
    ]);
    let batch =
        RecordBatch::try_new(Arc::new(schema), vec![Arc::new(top), Arc::new(nested)]).unwrap();
    let spec = record_from_schema(&batch.schema(), "R").unwrap();
    let mut records = Vec::new();
    ArrowEncoder::new(&spec, Format::TfRecord)
        .unwrap()
        .encode(&batch, 0, |r| {
            records.push(tf::Example::decode(r).unwrap());
            Ok(())
        })
        .unwrap();
    let feature = |r: &tf::Example, key: &str| {
        r.features
            .as_ref()
            .and_then(|f| f.feature.get(key).cloned())
    };
    let strings = |v: &[&str]| {
        Some(tf::Feature {
            kind: Some(tf::feature::Kind::BytesList(tf::BytesList {
                value: v.iter().map(|s| s.as_bytes().to_vec()).collect(),
            })),
        })
    };
    assert_eq!(feature(&records[0], "c"), strings(&["a"]));
    assert_eq!(feature(&records[1], "l"), strings(&["q", "p"]));
    assert_eq!(feature(&records[2], "l"), strings(&[]));
    assert_eq!(
        feature(&records[3], "c"),
        None,
        "a null is an absent feature"
    );
    assert_eq!(feature(&records[3], "l"), None);
}
