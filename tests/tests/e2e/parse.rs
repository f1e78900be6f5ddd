//! `tfrecord_core::parse` against what TensorFlow 2.21 returned: every case of
//! `parse_example.json` and the `parse_sequence_example` part of `sequence.json` reproduced
//! exactly (float bits, index order, shapes, splits), the errors where TensorFlow fails, the
//! same tensors from non-canonical encodings of the same records, and the parallel parser
//! agreeing with the sequential one.

use std::collections::BTreeMap;

use serde_json::Value;
use tfrecord_core::Message;
use tfrecord_core::parse::{
    DType, ExampleParser, FeatureSpec, Partition, Spec, SplitsDType, Tensor, Values, parse_example,
    parse_sequence_example,
};
use tfrecord_core::proto::tensorflow::{Example, feature::Kind};
use tfrecord_core::{Error, ReaderOptions, RecordReader};

use crate::support::{
    fixture, hex, len_field, load_json, packed_int64, read_all, to_hex, unknown_fields,
    unpacked_f32, unpacked_int64,
};

// ---- The fixture's spec vocabulary ----

fn dtype(v: &Value) -> DType {
    match v.as_str().expect("dtype string") {
        "int64" => DType::Int64,
        "float" | "float32" => DType::Float,
        "bytes" | "string" => DType::Bytes,
        other => panic!("unknown dtype {other:?}"),
    }
}

fn shape(v: &Value) -> Vec<u64> {
    v.as_array()
        .expect("shape array")
        .iter()
        .map(|d| d.as_u64().expect("dimension"))
        .collect()
}

/// A JSON scalar or (nested) list as a flat list of values of `dt`.
fn values_of(dt: DType, v: &Value) -> Values {
    fn flat<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
        match v {
            Value::Array(items) => items.iter().for_each(|i| flat(i, out)),
            other => out.push(other),
        }
    }
    let mut items = Vec::new();
    flat(v, &mut items);
    match dt {
        DType::Int64 => Values::Int64(items.iter().map(|x| x.as_i64().expect("int")).collect()),
        DType::Float => Values::Float32(
            items
                .iter()
                .map(|x| x.as_f64().expect("number") as f32)
                .collect(),
        ),
        _ => Values::Bytes(items.iter().map(|x| x.as_str().expect("string")).collect()),
    }
}

fn strings(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a
            .iter()
            .map(|s| s.as_str().expect("key").to_string())
            .collect(),
        other => panic!("expected keys, found {other}"),
    }
}

fn feature_spec(v: &Value) -> FeatureSpec {
    let dt = dtype(&v["dtype"]);
    let default = v.get("default").filter(|d| !d.is_null());
    match v["type"].as_str().expect("type") {
        "FixedLenFeature" => FeatureSpec::FixedLen {
            dtype: dt,
            shape: shape(&v["shape"]),
            default: default.map(|d| values_of(dt, d)),
        },
        "VarLenFeature" => FeatureSpec::VarLen { dtype: dt },
        "SparseFeature" => FeatureSpec::Sparse {
            index_keys: strings(&v["index_key"]),
            value_key: v["value_key"].as_str().expect("value_key").to_string(),
            dtype: dt,
            size: match &v["size"] {
                Value::Array(a) => a.iter().map(|s| s.as_u64().expect("size")).collect(),
                s => vec![s.as_u64().expect("size")],
            },
            already_sorted: v["already_sorted"].as_bool().unwrap_or(false),
        },
        "FixedLenSequenceFeature" => FeatureSpec::FixedLenSequence {
            dtype: dt,
            shape: shape(&v["shape"]),
            allow_missing: v["allow_missing"].as_bool().unwrap_or(false),
            default: default.map(|d| values_of(dt, d)),
        },
        "RaggedFeature" => FeatureSpec::Ragged {
            dtype: dt,
            value_key: v["value_key"].as_str().map(str::to_string),
            partitions: v
                .get("partitions")
                .and_then(Value::as_array)
                .map(|ps| {
                    ps.iter()
                        .map(|p| {
                            let kind = p[0].as_str().expect("partition kind");
                            let key = || p[1].as_str().expect("partition key").to_string();
                            match kind {
                                "row_splits" => Partition::RowSplits(key()),
                                "row_lengths" => Partition::RowLengths(key()),
                                "row_starts" => Partition::RowStarts(key()),
                                "row_limits" => Partition::RowLimits(key()),
                                "value_rowids" => Partition::ValueRowIds(key()),
                                "uniform_row_length" => {
                                    Partition::UniformRowLength(p[1].as_u64().expect("length"))
                                }
                                other => panic!("unknown partition {other:?}"),
                            }
                        })
                        .collect()
                })
                .unwrap_or_default(),
            row_splits_dtype: match v["row_splits_dtype"].as_str() {
                Some("int64") => SplitsDType::Int64,
                _ => SplitsDType::Int32,
            },
        },
        other => panic!("unknown feature type {other:?}"),
    }
}

fn spec_of(v: &Value) -> Spec {
    v.as_object()
        .expect("spec object")
        .iter()
        .map(|(k, f)| (k.clone(), feature_spec(f)))
        .collect()
}

// ---- Comparing with the recorded outputs ----

/// Checks `values` against a recorded list: int64 numbers, floats by their `f32` bits, bytes
/// as hex.
fn check_values(actual: &Values, expected: &Value, what: &str) {
    let expected = expected.as_array().expect("values array");
    assert_eq!(actual.len(), expected.len(), "{what}: value count");
    match actual {
        Values::Int64(v) => {
            let want: Vec<i64> = expected.iter().map(|x| x.as_i64().expect("int")).collect();
            assert_eq!(v, &want, "{what}");
        }
        Values::Float32(v) => {
            for (i, (a, e)) in v.iter().zip(expected).enumerate() {
                let want = match e {
                    Value::String(s) => match s.as_str() {
                        "NaN" | "nan" => f32::NAN,
                        "Infinity" | "inf" => f32::INFINITY,
                        "-Infinity" | "-inf" => f32::NEG_INFINITY,
                        other => panic!("float string {other:?}"),
                    },
                    n => n.as_f64().expect("number") as f32,
                };
                if want.is_nan() {
                    assert!(a.is_nan(), "{what}[{i}]: expected NaN, found {a}");
                } else {
                    assert_eq!(a.to_bits(), want.to_bits(), "{what}[{i}]: {a} vs {want}");
                }
            }
        }
        Values::Bytes(v) => {
            let got: Vec<String> = v.iter().map(to_hex).collect();
            let want: Vec<&str> = expected.iter().map(|x| x.as_str().expect("hex")).collect();
            assert_eq!(got, want, "{what}");
        }
        _ => panic!("{what}: unexpected values type"),
    }
}

fn i64s(v: &Value) -> Vec<i64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_i64().expect("int"))
        .collect()
}

/// Checks a tensor against its recorded form (`{"dense"|"sparse"|"ragged": ...}`).
fn check_tensor(actual: &Tensor, expected: &Value, what: &str) {
    match actual {
        Tensor::Dense { shape, values } => {
            let e = &expected["dense"];
            assert!(
                e.is_object(),
                "{what}: expected {expected}, found a dense tensor"
            );
            let want: Vec<usize> = e["shape"]
                .as_array()
                .expect("shape")
                .iter()
                .map(|d| usize::try_from(d.as_u64().expect("dim")).expect("fits"))
                .collect();
            assert_eq!(shape, &want, "{what}: shape");
            check_values(values, &e["values"], what);
        }
        Tensor::Sparse {
            indices,
            values,
            dense_shape,
        } => {
            let e = &expected["sparse"];
            assert!(
                e.is_object(),
                "{what}: expected {expected}, found a sparse tensor"
            );
            assert_eq!(dense_shape, &i64s(&e["dense_shape"]), "{what}: dense_shape");
            let want: Vec<i64> = e["indices"]
                .as_array()
                .expect("indices")
                .iter()
                .flat_map(i64s)
                .collect();
            assert_eq!(indices, &want, "{what}: indices");
            for i in 0..values.len() {
                assert_eq!(
                    actual.sparse_index(i),
                    Some(&want[i * dense_shape.len()..(i + 1) * dense_shape.len()]),
                    "{what}: sparse_index({i})"
                );
            }
            check_values(values, &e["values"], what);
        }
        Tensor::Ragged {
            flat_values,
            nested_row_splits,
        } => {
            let e = &expected["ragged"];
            assert!(
                e.is_object(),
                "{what}: expected {expected}, found a ragged tensor"
            );
            let want: Vec<Vec<i64>> = e["nested_row_splits"]
                .as_array()
                .expect("splits")
                .iter()
                .map(i64s)
                .collect();
            assert_eq!(nested_row_splits, &want, "{what}: nested_row_splits");
            check_values(flat_values, &e["flat_values"], what);
        }
        _ => panic!("{what}: unexpected tensor kind"),
    }
    check_json(&actual.to_json(), expected, what);
}

/// Standard base64 with padding, for comparing the JSON form.
fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(A[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Checks the contract's JSON form against the recorded tensor: same structure, int64 as
/// numbers, floats as numbers reading back to the same bits, bytes as base64.
fn check_json(actual: &Value, expected: &Value, what: &str) {
    let (kind, e) = expected
        .as_object()
        .and_then(|o| o.iter().next())
        .expect("tensor kind");
    let a = &actual[kind];
    let keys: Vec<&String> = a.as_object().expect("json object").keys().collect();
    let mut want_keys: Vec<&String> = e.as_object().expect("object").keys().collect();
    want_keys.sort();
    assert_eq!(keys, want_keys, "{what}: JSON keys");
    for (k, ev) in e.as_object().expect("object") {
        let av = &a[k];
        if k == "values" || k == "flat_values" {
            let (av, ev) = (av.as_array().expect("array"), ev.as_array().expect("array"));
            assert_eq!(av.len(), ev.len(), "{what}: JSON {k} count");
            for (x, y) in av.iter().zip(ev) {
                match y {
                    Value::String(h) => assert_eq!(x.as_str(), Some(base64(&hex(h)).as_str())),
                    Value::Number(n) if n.is_f64() => {
                        let want = n.as_f64().expect("f64") as f32;
                        let got = x.as_f64().expect("float as a JSON number") as f32;
                        assert_eq!(got.to_bits(), want.to_bits(), "{what}: JSON {k}");
                        // The shortest form that reads back: never more than 9 digits.
                        let digits = x.to_string().chars().filter(char::is_ascii_digit).count();
                        assert!(digits <= 10, "{what}: {x} is not the short form");
                    }
                    other => assert_eq!(x, other, "{what}: JSON {k}"),
                }
            }
        } else {
            assert_eq!(av, ev, "{what}: JSON {k}");
        }
    }
}

/// Checks a parsing error against TensorFlow's recorded message: same key, same record index
/// (TensorFlow's `Index:`, the first record otherwise), and the same complaint.
fn check_error(err: &Error, message: &str, what: &str) {
    let shown = err.to_string();
    let lower = shown.to_lowercase();
    let field = |name: &str, stop: &[char]| -> Option<String> {
        let at = message.find(name)? + name.len();
        let rest = &message[at..];
        let end = rest.find(stop).unwrap_or(rest.len());
        Some(rest[..end].to_string())
    };
    let key = field("Key: ", &[',']).or_else(|| field("Feature: ", &[' ', ',']));
    assert_eq!(err.key(), key.as_deref(), "{what}: key in {shown:?}");
    let index = field("Index: ", &['.', ' '])
        .map(|i| i.parse::<u64>().expect("index"))
        .unwrap_or(0);
    assert_eq!(err.record(), Some(index), "{what}: record in {shown:?}");
    if let Some(types) = field("Data types don't match. ", &['[']) {
        assert!(
            lower.contains("data types don't match"),
            "{what}: {shown:?}"
        );
        // "Data type: int64 but expected type: float"
        let found = types.split_whitespace().nth(2).expect("found type");
        let expected = types.split_whitespace().last().expect("expected type");
        assert!(
            lower.contains(&format!("expected {expected}")),
            "{what}: {shown:?}"
        );
        assert!(
            lower.contains(&format!("found {found}")),
            "{what}: {shown:?}"
        );
    } else if message.contains("is required but could not be found") {
        let dt = field("(data type: ", &[')']).expect("data type");
        assert!(
            lower.contains("is required but could not be found"),
            "{what}: {shown:?}"
        );
        assert!(
            lower.contains(&format!("data type: {dt}")),
            "{what}: {shown:?}"
        );
    } else if let Some(size) = field("Values size: ", &[' ']) {
        let ty = field("Number of ", &[' ']).expect("value type");
        let out_shape = field("output shape: ", &[' ']).expect("shape");
        assert!(
            lower.contains(&format!("number of {ty} values != expected")),
            "{what}: {shown:?}"
        );
        assert!(
            lower.contains(&format!("found {size}")),
            "{what}: {shown:?}"
        );
        assert!(lower.contains(&out_shape), "{what}: {shown:?}");
    } else {
        panic!("{what}: no check for TensorFlow's message {message:?}");
    }
}

fn records_of(case: &Value) -> Vec<Vec<u8>> {
    case["records_hex"]
        .as_array()
        .expect("records_hex")
        .iter()
        .map(|h| hex(h.as_str().expect("hex")))
        .collect()
}

fn check_outputs(out: &BTreeMap<String, Tensor>, expected: &Value, what: &str) {
    let expected = expected.as_object().expect("outputs object");
    let names: Vec<&String> = out.keys().collect();
    let mut want: Vec<&String> = expected.keys().collect();
    want.sort();
    assert_eq!(names, want, "{what}: output names");
    for (name, e) in expected {
        check_tensor(&out[name], e, &format!("{what}[{name}]"));
    }
}

#[test]
fn parse_example_reproduces_every_recorded_case() {
    let json = load_json("parse_example.json");
    let cases = json["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 12);
    for case in cases {
        let name = case["name"].as_str().expect("name");
        let what = format!("{name} ({})", case["note"].as_str().unwrap_or(""));
        let spec = spec_of(&case["spec"]);
        let records = records_of(case);
        let result = parse_example(&spec, &records);
        if let Some(outputs) = case.get("outputs") {
            let out = result.unwrap_or_else(|e| panic!("{what}: {e}"));
            check_outputs(&out, outputs, &what);
        } else {
            let message = case["message"].as_str().expect("error message");
            let err = result.expect_err(&what);
            check_error(&err, message, &what);
        }
    }
}

#[test]
fn parse_sequence_example_reproduces_the_recorded_batch() {
    let json = load_json("sequence.json");
    let case = &json["parse_sequence_example"];
    let reader = RecordReader::open(fixture("sequence.tfrecord"), ReaderOptions::new())
        .expect("fixture opens");
    let (records, err) = read_all(reader);
    assert!(err.is_none());
    assert_eq!(records.len(), 12);
    let (context, lists, lengths) = parse_sequence_example(
        &spec_of(&case["context_spec"]),
        &spec_of(&case["sequence_spec"]),
        &records,
    )
    .expect("parses");
    check_outputs(&context, &case["context"], "context");
    check_outputs(&lists, &case["sequence"], "sequence");
    let expected = case["lengths"].as_object().expect("lengths");
    assert_eq!(lengths.len(), expected.len(), "lengths keys");
    for (key, want) in expected {
        let Tensor::Dense { shape, values } = &lengths[key] else {
            panic!("lengths[{key}] is not dense");
        };
        assert_eq!(shape, &[records.len()], "lengths[{key}] shape");
        assert_eq!(values.as_i64(), Some(&i64s(want)[..]), "lengths[{key}]");
    }
}

// ---- The same records, encoded differently ----

/// Re-encodes an Example the way no canonical encoder would: entries in reverse order with the
/// value before the key, int64 lists as two list messages (one packed, one unpacked) that must be
/// merged, unpacked floats, and unknown fields in every message.
fn odd_encoding(record: &[u8]) -> Vec<u8> {
    let example = Example::decode(record).expect("valid Example");
    let features = example.features.expect("features");
    let mut entries = Vec::new();
    for (key, feature) in features.feature.iter().rev() {
        let body = match &feature.kind {
            Some(Kind::Int64List(l)) => {
                let (a, b) = l.value.split_at(l.value.len() / 2);
                // Half packed, half unpacked, in two list messages the parser must merge.
                [
                    len_field(3, &[packed_int64(1, a), unknown_fields()].concat()),
                    len_field(3, &unpacked_int64(1, b)),
                ]
                .concat()
            }
            Some(Kind::FloatList(l)) => len_field(2, &unpacked_f32(1, &l.value)),
            Some(Kind::BytesList(l)) => len_field(
                1,
                &l.value
                    .iter()
                    .flat_map(|v| len_field(1, v))
                    .collect::<Vec<u8>>(),
            ),
            None => Vec::new(),
        };
        let entry = [
            len_field(2, &[body, unknown_fields()].concat()),
            unknown_fields(),
            len_field(1, key.as_bytes()),
        ]
        .concat();
        entries.push(len_field(1, &entry));
    }
    [unknown_fields(), len_field(1, &entries.concat())].concat()
}

#[test]
fn non_canonical_encodings_parse_to_the_same_tensors() {
    let json = load_json("parse_example.json");
    for case in json["cases"].as_array().expect("cases") {
        let spec = spec_of(&case["spec"]);
        let records = records_of(case);
        let odd: Vec<Vec<u8>> = records.iter().map(|r| odd_encoding(r)).collect();
        assert_ne!(odd, records);
        let name = case["name"].as_str().expect("name");
        match (parse_example(&spec, &records), parse_example(&spec, &odd)) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{name}"),
            (Err(a), Err(b)) => {
                assert_eq!(a.key(), b.key(), "{name}");
                assert_eq!(a.record(), b.record(), "{name}");
            }
            (a, b) => panic!("{name}: {a:?} vs {b:?}"),
        }
    }
}

#[test]
fn parallel_parsing_gives_the_same_results() {
    let json = load_json("parse_example.json");
    for case in json["cases"].as_array().expect("cases") {
        let name = case["name"].as_str().expect("name");
        let parser = ExampleParser::new(&spec_of(&case["spec"])).expect("valid spec");
        let records = records_of(case);
        // 1000 records, so that the batch is split over threads.
        let batch: Vec<&[u8]> = (0..1000).map(|i| &records[i % records.len()][..]).collect();
        let seq = parser.parse(&batch);
        for threads in [0, 2, 3, 7] {
            match (&seq, parser.parse_parallel(&batch, threads)) {
                (Ok(a), Ok(b)) => assert_eq!(a, &b, "{name}, {threads} threads"),
                (Err(a), Err(b)) => {
                    assert_eq!(a.to_string(), b.to_string(), "{name}, {threads} threads");
                }
                (a, b) => panic!("{name}: {a:?} vs {b:?}"),
            }
        }
    }
    // An error late in the batch is reported with its record index either way.
    let case = &json["cases"][0];
    let parser = ExampleParser::new(&spec_of(&case["spec"])).expect("valid spec");
    let records = records_of(case);
    let mut batch: Vec<Vec<u8>> = (0..900).map(|i| records[i % 4].clone()).collect();
    batch[777] = vec![0x0a, 0x05, 0x01];
    let a = parser.parse(&batch).expect_err("malformed record");
    let b = parser
        .parse_parallel(&batch, 4)
        .expect_err("malformed record");
    assert_eq!(a.record(), Some(777));
    assert_eq!(a.to_string(), b.to_string());
}
