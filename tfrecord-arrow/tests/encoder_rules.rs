//! What `ArrowEncoder` refuses rather than lose or garble, and the list variants it reads:
//! columns the spec lacks, nulls inside lists (named by their row, deep in nested lists and
//! past the first batch), fixed-shape tensors stored transposed, sparse indices outside the
//! feature's size, two columns of one name (in the spec or in the batch), ragged rows that `value_rowids` cannot count, null
//! rows of required features, columns with no name; `ListView` read as `List`, a `List` of
//! `k` items per entry as a dimension of `k`, null rows of features with a default as absent
//! features, narrower integers as `int64`, `list<null>` as empty lists; a column of another
//! type named by its whole type.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_buffer::{NullBuffer, ScalarBuffer};
use tfrecord_arrow::arrow_array::builder::{Int64Builder, ListBuilder};
use tfrecord_arrow::arrow_array::{
    Array, ArrayRef, FixedSizeListArray, Int64Array, ListArray, ListViewArray, RecordBatch,
};
use tfrecord_arrow::arrow_schema::{DataType, Field, Schema};
use tfrecord_arrow::{
    ArrowDecoder, ArrowEncoder, SPEC_METADATA_KEY, duplicate_column, record_from_schema,
};
use tfrecord_core::Format;
use tfrecord_schema::ir::{Record, Schema as Spec};

fn record(toml: &str) -> Record {
    Spec::from_toml_str(toml, "spec.toml")
        .expect("a valid spec")
        .records
        .remove(0)
}

fn batch(fields: Vec<Field>, columns: Vec<ArrayRef>) -> RecordBatch {
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).expect("a valid batch")
}

/// The records of `batch` by the spec read off its schema, or the error.
fn encode(batch: &RecordBatch, first_row: u64) -> tfrecord_core::Result<Vec<Vec<u8>>> {
    let spec = record_from_schema(&batch.schema(), "R")?;
    let mut out = Vec::new();
    ArrowEncoder::new(&spec, Format::TfRecord)?.encode(batch, first_row, |r| {
        out.push(r.to_vec());
        Ok(())
    })?;
    Ok(out)
}

#[test]
fn a_column_the_spec_lacks_is_an_error_and_one_added_after_the_spec_is_read() {
    let spec = "[records.R.features.x]\ndtype = \"int64\"\n";
    let x = Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef;
    let extra = Arc::new(Int64Array::from(vec![7, 8])) as ArrayRef;
    let fields = vec![
        Field::new("x", DataType::Int64, false),
        Field::new("extra", DataType::Int64, false),
    ];
    let b = batch(fields.clone(), vec![x.clone(), extra.clone()]);
    let err = ArrowEncoder::new(&record(spec), Format::TfRecord)
        .unwrap()
        .encode(&b, 0, |_| Ok(()))
        .unwrap_err();
    assert_eq!(err.key(), Some("extra"));
    assert!(err.to_string().contains("would be lost"), "{err}");

    // The spec in the metadata (data written here), and a column added since: both written.
    let schema = Schema::new_with_metadata(
        fields,
        HashMap::from([(SPEC_METADATA_KEY.to_string(), spec.to_string())]),
    );
    let b = RecordBatch::try_new(Arc::new(schema), vec![x, extra]).unwrap();
    let records = encode(&b, 0).unwrap();
    let back = ArrowDecoder::new(
        &record(&format!(
            "{spec}[records.R.features.extra]\ndtype = \"int64\"\n"
        )),
        Format::TfRecord,
    )
    .unwrap()
    .decode(&records, 0)
    .unwrap();
    let extra = back.column_by_name("extra").expect("a column");
    let extra = extra.as_any().downcast_ref::<Int64Array>().expect("Int64");
    assert_eq!(extra.values(), &[7, 8]);
}

#[test]
fn a_batch_of_two_columns_of_one_name_is_refused() {
    // Arrow allows the duplicate; the feature would take the first column and lose the other.
    let spec = "[records.R.features.label]\ndtype = \"int64\"\n";
    let fields = vec![
        Field::new("label", DataType::Int64, false),
        Field::new("label", DataType::Int64, false),
    ];
    let b = batch(
        fields,
        vec![
            Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef,
            Arc::new(Int64Array::from(vec![9, 9, 9])) as ArrayRef,
        ],
    );
    let err = ArrowEncoder::new(&record(spec), Format::TfRecord)
        .unwrap()
        .encode(&b, 0, |_| Ok(()))
        .unwrap_err();
    assert_eq!(err.key(), Some("label"));
    assert!(
        err.to_string().contains("two columns named `label`"),
        "{err}"
    );
}

#[test]
fn a_column_added_under_a_key_a_feature_of_the_spec_reads_is_refused() {
    // A sparse feature reads `ix` and `v`, a ragged one `tok` and `tok/len`: a column added
    // under one of those names would overwrite that feature's entry in every record.
    let spec = "[records.R.features.sp]\ndtype = \"float\"\nkind = \"sparse\"\nindex_key = \"ix\"\nvalue_key = \"v\"\nsize = 10\n\
                [records.R.features.tok]\ndtype = \"int64\"\nkind = \"ragged\"\npartitions = [{ row_lengths = \"tok/len\" }]\n";
    let stored = record_from_schema(
        &Schema::new_with_metadata(
            Vec::<Field>::new(),
            HashMap::from([(SPEC_METADATA_KEY.to_string(), spec.to_string())]),
        ),
        "R",
    )
    .expect("the stored spec alone");
    assert_eq!(stored.fields.len(), 2);
    for (column, feature) in [("v", "sp"), ("ix", "sp"), ("tok/len", "tok")] {
        let schema = Schema::new_with_metadata(
            vec![Field::new(column, DataType::Float32, false)],
            HashMap::from([(SPEC_METADATA_KEY.to_string(), spec.to_string())]),
        );
        let err = record_from_schema(&schema, "R").expect_err(column);
        assert_eq!(err.key(), Some(column));
        let text = err.to_string();
        assert!(
            text.contains(&format!("feature `{feature}` reads")) && text.contains("overwrite"),
            "{text}"
        );
    }
    // A key of its own is added as a feature.
    let schema = Schema::new_with_metadata(
        vec![Field::new("other", DataType::Float32, false)],
        HashMap::from([(SPEC_METADATA_KEY.to_string(), spec.to_string())]),
    );
    let added = record_from_schema(&schema, "R").expect("an added column");
    assert_eq!(added.fields.last().map(|f| f.key.as_str()), Some("other"));
}

#[test]
fn a_column_with_no_feature_says_whether_a_spec_could_read_it() {
    let list = |t: DataType| DataType::List(Arc::new(Field::new("item", t, true)));
    let entries = DataType::Struct(
        vec![
            Field::new("i", DataType::Int64, false),
            Field::new("v", DataType::Date32, false),
        ]
        .into(),
    );
    for (t, says) in [
        (DataType::UInt64, "no feature holds UInt64 values"),
        (list(entries), "no feature holds Date32 values"),
        (list(list(DataType::Int64)), "which only a spec can say"),
    ] {
        let schema = Schema::new(vec![Field::new("c", t.clone(), false)]);
        let err = record_from_schema(&schema, "R").expect_err("no feature");
        assert_eq!(err.key(), Some("c"));
        assert!(err.to_string().contains(says), "{t}: {err}");
    }
}

#[test]
fn a_null_inside_nested_lists_names_its_row() {
    // Rows of lists of lists: row 2 holds [[1], [null]], past 1000 rows of earlier batches.
    let mut inner = ListBuilder::new(ListBuilder::new(Int64Builder::new()));
    for row in 0..4 {
        for step in 0..2 {
            if row == 2 && step == 1 {
                inner.values().values().append_null();
            } else {
                inner.values().values().append_value(row * 10 + step);
            }
            inner.values().append(true);
        }
        inner.append(true);
    }
    let nested = inner.finish();
    let b = batch(
        vec![Field::new("steps", nested.data_type().clone(), true)],
        vec![Arc::new(nested)],
    );
    let spec = record(
        "[records.R]\nkind = \"sequence_example\"\n[records.R.sequence.steps]\ndtype = \"int64\"\nkind = \"var\"\n",
    );
    let err = ArrowEncoder::new(&spec, Format::TfRecord)
        .unwrap()
        .encode(&b, 1000, |_| Ok(()))
        .unwrap_err();
    assert_eq!(
        (err.key(), err.record()),
        (Some("steps"), Some(1002)),
        "{err}"
    );
}

#[test]
fn list_views_read_as_lists() {
    // Views may point anywhere in their values, out of order: rows [3, 4], [], [1], null.
    let values = Arc::new(Int64Array::from(vec![1, 2, 3, 4]));
    let item = Arc::new(Field::new("item", DataType::Int64, false));
    let offsets = ScalarBuffer::from(vec![2i32, 0, 0, 0]);
    let sizes = ScalarBuffer::from(vec![2i32, 0, 1, 0]);
    let nulls = NullBuffer::from(vec![true, true, true, false]);
    let view = ListViewArray::new(item, offsets, sizes, values, Some(nulls));
    let b = batch(
        vec![Field::new("v", view.data_type().clone(), true)],
        vec![Arc::new(view)],
    );
    let records = encode(&b, 0).unwrap();
    let spec = record("[records.R.features.v]\ndtype = \"int64\"\nkind = \"var\"\n");
    let back = ArrowDecoder::new(&spec, Format::TfRecord)
        .unwrap()
        .decode(&records, 0)
        .unwrap();
    let v = back.column(0).as_any().downcast_ref::<ListArray>().unwrap();
    let rows: Vec<Option<Vec<i64>>> = (0..4)
        .map(|i| {
            v.is_valid(i).then(|| {
                let a = v.value(i);
                a.as_any()
                    .downcast_ref::<Int64Array>()
                    .unwrap()
                    .values()
                    .to_vec()
            })
        })
        .collect();
    assert_eq!(rows, [Some(vec![3, 4]), Some(vec![]), Some(vec![1]), None]);
}

/// pyarrow's type for lists that are all empty or null, `list<null>` (a column of empty
/// lists in pandas), and a `null` column: read with a spec as empty lists and absent
/// features; a null item inside such a list is refused as any null item is.
#[test]
fn lists_of_the_null_type_are_empty_lists() {
    use tfrecord_arrow::arrow_array::NullArray;
    let item = Arc::new(Field::new("item", DataType::Null, true));
    let offsets = arrow_buffer::OffsetBuffer::new(ScalarBuffer::from(vec![0i32, 0, 0, 0]));
    let nulls = NullBuffer::from(vec![true, false, true]);
    let list = ListArray::new(
        item.clone(),
        offsets,
        Arc::new(NullArray::new(0)),
        Some(nulls),
    );
    let b = batch(
        vec![
            Field::new("v", list.data_type().clone(), true),
            Field::new("o", DataType::Null, true),
        ],
        vec![Arc::new(list), Arc::new(NullArray::new(3))],
    );
    let toml = "[records.R.features.v]\ndtype = \"int64\"\nkind = \"var\"\n\
                [records.R.features.o]\ndtype = \"float\"\noptional = true\n";
    let records = encode_by(toml, &b, 0).unwrap();
    assert_eq!(records.len(), 3);
    assert_eq!(keys(&records[0]), ["v"]);
    assert_eq!(keys(&records[1]), Vec::<String>::new());
    let back = decode_by(toml, &records);
    let v = back.column(0).as_any().downcast_ref::<ListArray>().unwrap();
    assert_eq!(
        (0..3)
            .map(|i| v.is_valid(i).then(|| v.value(i).len()))
            .collect::<Vec<_>>(),
        [Some(0), None, Some(0)]
    );

    let offsets = arrow_buffer::OffsetBuffer::new(ScalarBuffer::from(vec![0i32, 0, 1]));
    let list = ListArray::new(item, offsets, Arc::new(NullArray::new(1)), None);
    let b = batch(
        vec![Field::new("v", list.data_type().clone(), true)],
        vec![Arc::new(list)],
    );
    let e = encode_by(
        "[records.R.features.v]\ndtype = \"int64\"\nkind = \"var\"\n",
        &b,
        0,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("(record 1)") && e.contains("holds a null value inside a list"),
        "{e}"
    );
}

fn tensor_field(permutation: Option<&str>) -> Field {
    let item = Arc::new(Field::new("item", DataType::Int64, false));
    let mut meta = String::from("{\"shape\":[2,2]");
    if let Some(p) = permutation {
        meta.push_str(&format!(",\"permutation\":{p}"));
    }
    meta.push('}');
    Field::new("t", DataType::FixedSizeList(item, 4), false).with_metadata(HashMap::from([
        (
            "ARROW:extension:name".to_string(),
            "arrow.fixed_shape_tensor".to_string(),
        ),
        ("ARROW:extension:metadata".to_string(), meta),
    ]))
}

#[test]
fn a_fixed_shape_tensor_is_read_row_major_and_a_permuted_one_refused() {
    let storage = || {
        let item = Arc::new(Field::new("item", DataType::Int64, false));
        let values = Arc::new(Int64Array::from(vec![1, 2, 3, 4])) as ArrayRef;
        Arc::new(FixedSizeListArray::new(item, 4, values, None)) as ArrayRef
    };
    for permutation in [None, Some("[0,1]")] {
        let b = batch(vec![tensor_field(permutation)], vec![storage()]);
        let records = encode(&b, 0).unwrap();
        assert_eq!(records.len(), 1, "{permutation:?}");
    }
    // The canonical type's key is `permutation`, as pyarrow writes it.
    let b = batch(vec![tensor_field(Some("[1,0]"))], vec![storage()]);
    let err = encode(&b, 0).unwrap_err();
    assert_eq!(err.key(), Some("t"));
    assert!(err.to_string().contains("permutation [1,0]"), "{err}");
}

#[test]
fn sparse_indices_outside_the_size_are_errors_both_ways() {
    let spec = record(
        "[records.R.features.sp]\ndtype = \"float\"\nkind = \"sparse\"\nindex_key = \"ix\"\nvalue_key = \"v\"\nsize = 10\n",
    );
    use tfrecord_core::Message;
    use tfrecord_core::proto::tensorflow::{
        Example, Feature, Features, FloatList, Int64List, feature,
    };
    let example = |ix: Vec<i64>| {
        let mut f = Features::default();
        f.feature.insert(
            "ix".into(),
            Feature {
                kind: Some(feature::Kind::Int64List(Int64List { value: ix })),
            },
        );
        f.feature.insert(
            "v".into(),
            Feature {
                kind: Some(feature::Kind::FloatList(FloatList { value: vec![1.0] })),
            },
        );
        Example { features: Some(f) }.encode_to_vec()
    };
    let decoder = ArrowDecoder::new(&spec, Format::TfRecord).unwrap();
    let good = decoder
        .decode(&[example(vec![1]), example(vec![9])], 0)
        .unwrap();
    for bad in [10, -1] {
        let err = decoder
            .decode(&[example(vec![0]), example(vec![bad])], 5)
            .unwrap_err();
        assert_eq!((err.key(), err.record()), (Some("ix"), Some(6)), "{err}");
        assert!(err.to_string().contains("expected 0 to 9"), "{err}");
    }
    // Arrow rows with an index past the size are not written as records either.
    let encoder = ArrowEncoder::new(&spec, Format::TfRecord).unwrap();
    assert!(encoder.encode(&good, 0, |_| Ok(())).is_ok());
    let smaller = record(
        "[records.R.features.sp]\ndtype = \"float\"\nkind = \"sparse\"\nindex_key = \"ix\"\nvalue_key = \"v\"\nsize = 5\n",
    );
    let err = ArrowEncoder::new(&smaller, Format::TfRecord)
        .unwrap()
        .encode(&good, 7, |_| Ok(()))
        .unwrap_err();
    assert_eq!((err.key(), err.record()), (Some("ix"), Some(8)), "{err}");
    assert!(err.to_string().contains("expected 0 to 4"), "{err}");
}

#[test]
fn a_context_feature_and_feature_list_of_one_key_share_no_column_name() {
    let spec = |lists: &str| {
        record(&format!(
            "[records.R]\nkind = \"sequence_example\"\n[records.R.context.x]\ndtype = \"int64\"\n\
             [records.R.sequence.{lists}]\ndtype = \"int64\"\nkind = \"var\"\nfield = \"x_2\"\n"
        ))
    };
    let apart = spec("y");
    let decoder = ArrowDecoder::new(&apart, Format::TfRecord).unwrap();
    assert_eq!(duplicate_column(&decoder.schema()), None);
    assert!(ArrowEncoder::new(&apart, Format::TfRecord).is_ok());
    // One key for both (TensorFlow allows it): Arrow holds two columns of one name, the
    // encoder (which finds columns by name) refuses the spec.
    let same = spec("x");
    let decoder = ArrowDecoder::new(&same, Format::TfRecord).unwrap();
    assert_eq!(duplicate_column(&decoder.schema()), Some("x"));
    let err = ArrowEncoder::new(&same, Format::TfRecord).unwrap_err();
    assert_eq!(err.key(), Some("x"));
}

/// A sparse feature's struct is read by field name, whatever the order of its fields (as
/// pyarrow writes a struct from a dict, in the dict's order); fields of other names are an
/// error, never taken by position.
#[test]
fn sparse_struct_fields_are_read_by_name() {
    use tfrecord_arrow::arrow_array::StructArray;
    use tfrecord_core::Message;
    use tfrecord_core::proto::tensorflow::{Example, feature};
    let spec = record(
        "[records.R.features.sp]\ndtype = \"int64\"\nkind = \"sparse\"\nindex_key = [\"row\", \"col\"]\nvalue_key = \"v\"\nsize = [5, 5]\n",
    );
    let sparse = |names: [&str; 3]| {
        // Entries (row 1, col 4, value 42) and (row 3, col 0, value 7), in the order `names`
        // gives the fields.
        let column = |name: &str| -> ArrayRef {
            Arc::new(Int64Array::from(match name {
                "row" => vec![1, 3],
                "col" => vec![4, 0],
                _ => vec![42, 7],
            }))
        };
        let fields: Vec<(Arc<Field>, ArrayRef)> = names
            .iter()
            .map(|n| (Arc::new(Field::new(*n, DataType::Int64, false)), column(n)))
            .collect();
        let entries = StructArray::from(fields);
        let item = Field::new("item", entries.data_type().clone(), false);
        let list = ListArray::new(
            Arc::new(item.clone()),
            arrow_buffer::OffsetBuffer::new(ScalarBuffer::from(vec![0i32, 2])),
            Arc::new(entries),
            None,
        );
        let field = Field::new("sp", DataType::List(Arc::new(item)), true);
        batch(vec![field], vec![Arc::new(list)])
    };
    let ints = |bytes: &[u8], key: &str| -> Vec<i64> {
        let ex = Example::decode(bytes).expect("an Example");
        match ex.features.unwrap().feature[key].kind.clone() {
            Some(feature::Kind::Int64List(l)) => l.value,
            other => panic!("{key}: {other:?}"),
        }
    };
    let encoder = ArrowEncoder::new(&spec, Format::TfRecord).unwrap();
    for names in [
        ["row", "col", "v"],
        ["v", "col", "row"],
        ["col", "v", "row"],
    ] {
        let mut out = Vec::new();
        encoder
            .encode(&sparse(names), 0, |r| {
                out.push(r.to_vec());
                Ok(())
            })
            .unwrap();
        assert_eq!(ints(&out[0], "row"), [1, 3], "{names:?}");
        assert_eq!(ints(&out[0], "col"), [4, 0], "{names:?}");
        assert_eq!(ints(&out[0], "v"), [42, 7], "{names:?}");
    }
    let err = encoder
        .encode(&sparse(["row", "col", "value"]), 0, |_| Ok(()))
        .unwrap_err();
    assert_eq!(err.key(), Some("sp"), "{err}");
    assert!(
        err.to_string()
            .contains("no field `v` (expected the fields"),
        "{err}"
    );
}

/// A lossy `double` is rounded to the nearest float; a finite value beyond the float's range
/// (which would become infinity) is an error naming the column and the row.
#[test]
fn a_lossy_double_beyond_the_float_range_is_an_error() {
    use tfrecord_arrow::arrow_array::Float64Array;
    let spec = record("[records.R.features.x]\ndtype = \"double\"\nlossy = true\n");
    let encoder = ArrowEncoder::new(&spec, Format::TfRecord).unwrap();
    let column = |v: Vec<f64>| {
        let field = Field::new("x", DataType::Float64, false);
        batch(
            vec![field],
            vec![Arc::new(Float64Array::from(v)) as ArrayRef],
        )
    };
    let fits = column(vec![f64::INFINITY, f64::NAN, 3.402_823_5e38]);
    assert!(encoder.encode(&fits, 0, |_| Ok(())).is_ok());
    let err = encoder
        .encode(&column(vec![1.5, -1e300]), 10, |_| Ok(()))
        .unwrap_err();
    assert_eq!((err.key(), err.record()), (Some("x"), Some(11)), "{err}");
    assert!(err.to_string().contains("-1e300 is beyond"), "{err}");
}

/// A lossy `double` read from a float list and written back keeps every float's bits, NaN
/// payloads and signalling NaNs too (the processor's conversions make a signalling NaN quiet).
#[test]
fn a_lossy_double_round_trips_every_nan_bit_for_bit() {
    use tfrecord_arrow::arrow_array::Float64Array;
    use tfrecord_core::Message;
    use tfrecord_core::proto::tensorflow::{Example, Feature, Features, FloatList, feature::Kind};
    let bits = [
        0x7f80_0001_u32,
        0xff80_0003,
        0x7fc0_0001,
        0xffc0_0000,
        0x8000_0000,
        1,
    ];
    let example = Example {
        features: Some(Features {
            feature: [(
                "x".to_string(),
                Feature {
                    kind: Some(Kind::FloatList(FloatList {
                        value: bits.iter().map(|&b| f32::from_bits(b)).collect(),
                    })),
                },
            )]
            .into(),
        }),
    };
    let toml = "[records.R.features.x]\ndtype = \"double\"\nkind = \"var\"\nlossy = true\n";
    let batch = decode_by(toml, &[example.encode_to_vec()]);
    let list = batch
        .column(0)
        .as_any()
        .downcast_ref::<ListArray>()
        .unwrap();
    let values = list.value(0);
    let doubles = values.as_any().downcast_ref::<Float64Array>().unwrap();
    // The signalling NaN is still one as a double: its payload in the high bits, quiet bit 0.
    assert_eq!(doubles.value(0).to_bits(), 0x7ff0_0000_2000_0000);
    let back = encode_by(toml, &batch, 0).unwrap();
    let again = Example::decode(&back[0][..]).unwrap();
    let Some(Kind::FloatList(l)) = &again.features.unwrap().feature["x"].kind else {
        panic!("a float list")
    };
    assert_eq!(
        l.value.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
        bits
    );
}

/// A `Float64` column has no exact place in a `tf.train.Example` (float lists): the encoder
/// refuses it unless the feature is marked `lossy`, and OFRecord keeps the doubles.
#[test]
fn float64_columns_are_rounded_into_an_example_only_when_marked_lossy() {
    use tfrecord_arrow::arrow_array::Float64Array;
    let x = Arc::new(Float64Array::from(vec![0.1, 2.5])) as ArrayRef;
    let b = batch(vec![Field::new("x", DataType::Float64, false)], vec![x]);
    let err = encode(&b, 0).unwrap_err();
    assert_eq!(err.key(), Some("x"));
    assert!(
        err.to_string().contains("mark the feature `lossy`"),
        "{err}"
    );

    // A spec that says `float` for it names the way to round.
    let err = encode_by("[records.R.features]\nx = { dtype = \"float\" }\n", &b, 0).unwrap_err();
    assert!(err.to_string().contains("`lossy = true`"), "{err}");

    let mut spec = record_from_schema(&b.schema(), "R").expect("a spec");
    assert!(ArrowEncoder::new(&spec, Format::OfRecord).is_ok());
    spec.fields[0].lossy = true;
    let mut out = Vec::new();
    ArrowEncoder::new(&spec, Format::TfRecord)
        .expect("lossy: rounded")
        .encode(&b, 0, |r| {
            out.push(r.to_vec());
            Ok(())
        })
        .expect("encodes");
    assert_eq!(out.len(), 2);
}

/// The records of `batch` by the spec `toml`, or the error.
fn encode_by(
    toml: &str,
    batch: &RecordBatch,
    first_row: u64,
) -> tfrecord_core::Result<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    ArrowEncoder::new(&record(toml), Format::TfRecord)?.encode(batch, first_row, |r| {
        out.push(r.to_vec());
        Ok(())
    })?;
    Ok(out)
}

/// The batch `records` decode to by the spec `toml`.
fn decode_by(toml: &str, records: &[Vec<u8>]) -> RecordBatch {
    ArrowDecoder::new(&record(toml), Format::TfRecord)
        .expect("a decoder")
        .decode(records, 0)
        .expect("decodes")
}

/// The keys of a serialized `tf.train.Example`, sorted.
fn keys(record: &[u8]) -> Vec<String> {
    use tfrecord_core::Message;
    let example = tfrecord_core::proto::tensorflow::Example::decode(record).expect("an Example");
    let mut keys: Vec<String> = example
        .features
        .unwrap_or_default()
        .feature
        .into_keys()
        .collect();
    keys.sort();
    keys
}

/// TensorFlow counts the rows of a `value_rowids` partition as the last id + 1
/// (`RaggedTensor.from_value_rowids` without `nrows`): a row ending in empty rows cannot be
/// written so, and is refused rather than read back shorter; empty rows before the last are
/// kept.
#[test]
fn ragged_rows_that_value_rowids_cannot_count_are_refused() {
    let spec = "[records.R.features.x]\ndtype = \"int64\"\nkind = \"ragged\"\npartitions = [{ value_rowids = \"x/r\" }]\n";
    // Rows [[1], []] and [[], [2]]: the first ends in an empty row.
    let rows = |first: &[&[i64]], second: &[&[i64]]| {
        let mut b = ListBuilder::new(ListBuilder::new(Int64Builder::new()));
        for row in [first, second] {
            for sub in row {
                b.values().values().append_slice(sub);
                b.values().append(true);
            }
            b.append(true);
        }
        let a = b.finish();
        batch(
            vec![Field::new("x", a.data_type().clone(), true)],
            vec![Arc::new(a)],
        )
    };
    let err = encode_by(spec, &rows(&[&[1], &[]], &[&[], &[2]]), 40).unwrap_err();
    assert_eq!((err.key(), err.record()), (Some("x/r"), Some(40)), "{err}");
    assert!(err.to_string().contains("the last is empty"), "{err}");
    let err = encode_by(spec, &rows(&[&[1]], &[&[2], &[]]), 40).unwrap_err();
    assert_eq!(err.record(), Some(41), "{err}");

    // Leading empty rows have ids (the first id says how many come before it).
    let good = rows(&[&[], &[1]], &[&[], &[], &[2, 3]]);
    let records = encode_by(spec, &good, 0).expect("encodes");
    let back = decode_by(spec, &records);
    assert_eq!(nested(back.column(0)), nested(good.column(0)));
    assert_eq!(nested(back.column(0))[1], [vec![], vec![], vec![2, 3]]);
}

/// The values of a `List<List<Int64>>` column.
fn nested(a: &ArrayRef) -> Vec<Vec<Vec<i64>>> {
    let rows = a.as_any().downcast_ref::<ListArray>().expect("a list");
    rows.iter()
        .map(|row| {
            let row = row.expect("no null rows");
            let subs = row.as_any().downcast_ref::<ListArray>().expect("a list");
            subs.iter()
                .map(|sub| {
                    let sub = sub.expect("no null rows");
                    let v = sub.as_any().downcast_ref::<Int64Array>().expect("int64");
                    v.values().to_vec()
                })
                .collect()
        })
        .collect()
}

/// A null row is an absent feature: one with a default reads back as the default (as
/// TensorFlow's `FixedLenFeature(default_value=...)` reads an absent key), a required one
/// has no way to be absent.
#[test]
fn a_null_row_is_an_absent_feature_unless_the_feature_is_required() {
    let with_default =
        "[records.R.features]\nf = { dtype = \"int64\", default = 7 }\ng = { dtype = \"int64\" }\n";
    let f = Arc::new(Int64Array::from(vec![Some(1), None, Some(3)])) as ArrayRef;
    let g = Arc::new(Int64Array::from(vec![4, 5, 6])) as ArrayRef;
    let b = batch(
        vec![
            Field::new("f", DataType::Int64, true),
            Field::new("g", DataType::Int64, false),
        ],
        vec![f.clone(), g],
    );
    let records = encode_by(with_default, &b, 0).expect("a null row with a default");
    assert_eq!(keys(&records[1]), ["g"]);
    assert_eq!(keys(&records[0]), ["f", "g"]);
    let back = decode_by(with_default, &records);
    assert_eq!(
        back.column(0).as_ref(),
        &Int64Array::from(vec![1, 7, 3]) as &dyn Array
    );

    let required = "[records.R.features]\nf = { dtype = \"int64\" }\ng = { dtype = \"int64\" }\n";
    let err = encode_by(required, &b, 10).unwrap_err();
    assert_eq!((err.key(), err.record()), (Some("f"), Some(11)), "{err}");
    assert!(err.to_string().contains("is required"), "{err}");
}

/// Spark, DuckDB and pyarrow without the Arrow schema store a fixed-size list as a `List`: it
/// reads for a dimension of `k` when every row holds `k` items (a null row is absent).
#[test]
fn a_list_of_k_items_per_row_reads_as_a_dimension_of_k() {
    let spec = "[records.R.features]\nv = { dtype = \"int64\", shape = [2], optional = true }\n";
    let list = |rows: Vec<Option<Vec<Option<i64>>>>| {
        let a = ListArray::from_iter_primitive::<tfrecord_arrow::arrow_array::types::Int64Type, _, _>(
            rows,
        );
        batch(
            vec![Field::new("v", a.data_type().clone(), true)],
            vec![Arc::new(a)],
        )
    };
    let b = list(vec![
        Some(vec![Some(1), Some(2)]),
        None,
        Some(vec![Some(3), Some(4)]),
    ]);
    let records = encode_by(spec, &b, 0).expect("two items per row");
    assert_eq!(keys(&records[1]), Vec::<String>::new());
    let back = decode_by(spec, &records);
    let fixed = back
        .column(0)
        .as_any()
        .downcast_ref::<FixedSizeListArray>()
        .expect("fixed");
    assert_eq!(fixed.null_count(), 1);
    assert_eq!(
        fixed
            .values()
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap()
            .values()[..],
        [1, 2, 0, 0, 3, 4]
    );

    let short = list(vec![Some(vec![Some(1), Some(2)]), Some(vec![Some(3)])]);
    let err = encode_by(spec, &short, 20).unwrap_err();
    assert_eq!((err.key(), err.record()), (Some("v"), Some(21)), "{err}");
    assert!(err.to_string().contains("one holds 1"), "{err}");
}

#[test]
fn narrower_integers_read_as_int64_and_a_nameless_column_is_refused() {
    use tfrecord_arrow::arrow_array::{Int8Array, UInt16Array};
    let spec = "[records.R.features]\na = { dtype = \"int64\" }\nb = { dtype = \"int64\" }\n";
    let b = batch(
        vec![
            Field::new("a", DataType::Int8, false),
            Field::new("b", DataType::UInt16, false),
        ],
        vec![
            Arc::new(Int8Array::from(vec![-128, 127])),
            Arc::new(UInt16Array::from(vec![0, 65535])),
        ],
    );
    let records = encode_by(spec, &b, 0).expect("narrower integers");
    let back = decode_by(spec, &records);
    assert_eq!(
        back.column(0).as_ref(),
        &Int64Array::from(vec![-128, 127]) as &dyn Array
    );
    assert_eq!(
        back.column(1).as_ref(),
        &Int64Array::from(vec![0, 65535]) as &dyn Array
    );

    let nameless = batch(
        vec![Field::new("", DataType::Int64, false)],
        vec![Arc::new(Int64Array::from(vec![1]))],
    );
    let err = encode(&nameless, 0).unwrap_err();
    assert!(err.to_string().contains("empty name"), "{err}");
}

/// A column of another type than the feature's is named with its whole type: a list of floats
/// and a plain integer column against an `int64` var feature say which they are.
#[test]
fn a_column_of_another_type_is_named_by_its_whole_type() {
    use tfrecord_arrow::arrow_array::builder::Float32Builder;
    let spec = "[records.R.features]\nx = { dtype = \"int64\", kind = \"var\" }\n";
    let mut floats = ListBuilder::new(Float32Builder::new());
    floats.values().append_value(1.0);
    floats.append(true);
    let floats = Arc::new(floats.finish()) as ArrayRef;
    let float_type = floats.data_type().clone();
    let b = batch(
        vec![Field::new("x", float_type.clone(), true)],
        vec![floats],
    );
    let err = encode_by(spec, &b, 0).unwrap_err();
    assert_eq!(err.key(), Some("x"));
    assert!(
        err.to_string().contains(&format!("found {float_type}")),
        "{err}"
    );

    let ints = Arc::new(Int64Array::from(vec![5])) as ArrayRef;
    let b = batch(vec![Field::new("x", DataType::Int64, false)], vec![ints]);
    let err = encode_by(spec, &b, 0).unwrap_err();
    assert!(err.to_string().ends_with("found Int64"), "{err}");
}
