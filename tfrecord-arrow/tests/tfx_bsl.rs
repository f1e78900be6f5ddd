//! Our Arrow batches against tfx_bsl's `ExamplesToRecordBatchDecoder` and
//! `SequenceExamplesToRecordBatchDecoder`, as recorded in `tests/fixtures/tfx_bsl` (see its
//! README): for every column tfx_bsl gives a type, a spec of `var` features of that type, read
//! with large lists, gives the same rows, null for null, value for value (floats bit for bit).
//!
//! The differences by design, checked here too: tfx_bsl gives a key never given a list kind a
//! column of type `null` (a spec needs a type, so such a key has no column here), puts the feature
//! lists of a SequenceExample in one struct column (here: one column per feature list), and gives
//! a step with no list set a null inner list (here: an empty step; a record's list has no place
//! for a null).

use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};
use tfrecord_arrow::arrow_array::cast::AsArray;
use tfrecord_arrow::arrow_array::types::{Float32Type, Int64Type};
use tfrecord_arrow::arrow_array::{Array, ArrayRef, RecordBatch};
use tfrecord_arrow::arrow_schema::DataType;
use tfrecord_arrow::{ArrowDecoder, ArrowOptions};
use tfrecord_core::{Format, ReaderOptions, RecordReader};
use tfrecord_schema::ir::Schema;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn load(name: &str) -> Value {
    let text = std::fs::read_to_string(fixtures().join("tfx_bsl").join(name)).expect("fixture");
    serde_json::from_str(&text).expect("json")
}

fn records(input: &str) -> Vec<Vec<u8>> {
    let path = fixtures().join("..").join("..").join(input);
    RecordReader::open(&path, ReaderOptions::new())
        .expect("open")
        .map(|r| r.expect("read").to_vec())
        .collect()
}

/// The spec dtype of a tfx_bsl value type.
fn dtype(item: &str) -> Option<&'static str> {
    match item {
        "int64" => Some("int64"),
        "float" => Some("float"),
        "large_binary" => Some("bytes"),
        _ => None,
    }
}

/// A TOML table name for any key.
fn quoted(key: &str) -> String {
    serde_json::to_string(key).expect("json string")
}

/// One cell of our batch in the fixtures' form: null, a list of values (bytes as hex, or
/// `{len, sha256}` over 4096 bytes; floats as their bit patterns), or a list of such lists.
fn cell(array: &ArrayRef, i: usize) -> Value {
    if array.is_null(i) {
        return Value::Null;
    }
    match array.data_type() {
        DataType::LargeList(_) => {
            let l = array.as_list::<i64>();
            let v = l.value(i);
            Value::Array((0..v.len()).map(|j| cell(&v, j)).collect())
        }
        DataType::Int64 => Value::from(array.as_primitive::<Int64Type>().value(i)),
        DataType::Float32 => Value::from(array.as_primitive::<Float32Type>().value(i).to_bits()),
        DataType::LargeBinary => {
            let b = array.as_binary::<i64>().value(i);
            if b.len() > 4096 {
                let digest: String = Sha256::digest(b)
                    .iter()
                    .map(|x| format!("{x:02x}"))
                    .collect();
                serde_json::json!({ "len": b.len(), "sha256": digest })
            } else {
                Value::String(b.iter().map(|x| format!("{x:02x}")).collect())
            }
        }
        other => panic!("unexpected type {other}"),
    }
}

/// The fixture's cell, floats taken from `f32_bits`, and null steps read as empty (see the
/// module docs); counts such steps in `null_steps`.
fn expected(values: &Value, bits: Option<&Value>, depth: usize, null_steps: &mut usize) -> Value {
    match (values, bits) {
        (Value::Null, _) if depth == 1 => {
            *null_steps += 1;
            Value::Array(Vec::new())
        }
        (Value::Array(v), b) => Value::Array(
            v.iter()
                .enumerate()
                .map(|(i, x)| {
                    let bit = b.and_then(|b| b.get(i));
                    expected(x, bit, depth + 1, null_steps)
                })
                .collect(),
        ),
        (_, Some(bit)) => bit.clone(),
        (v, None) => v.clone(),
    }
}

/// Compares one fixture column with ours; `depth0` is 0 for a column of the batch, and
/// `steps` says null steps may stand for empty ones.
fn compare(case: &str, col: &Value, ours: &ArrayRef, steps: bool, null_steps: &mut usize) {
    let name = col["name"].as_str().expect("name");
    let rows = col["values"].as_array().expect("values");
    assert_eq!(ours.len(), rows.len(), "{case}: {name}: rows");
    for (i, v) in rows.iter().enumerate() {
        let mut n = 0;
        let start = if steps { 0 } else { 2 };
        let want = expected(v, col.get("f32_bits").and_then(|b| b.get(i)), start, &mut n);
        *null_steps += n;
        assert_eq!(cell(ours, i), want, "{case}: column {name:?}, row {i}");
    }
}

fn item_type(t: &str) -> Option<&str> {
    t.strip_prefix("large_list<item: ")?.strip_suffix('>')
}

fn decode(spec: &str, format_records: &[Vec<u8>]) -> RecordBatch {
    let schema = Schema::from_toml_str(spec, "spec.toml").expect("spec");
    let options = ArrowOptions::new().with_large_lists(true);
    ArrowDecoder::with_options(&schema.records[0], Format::TfRecord, options)
        .expect("decoder")
        .decode(format_records, 0)
        .expect("decode")
}

fn batches(case: &Value, all: &[Vec<u8>]) -> Vec<(Value, Vec<Vec<u8>>)> {
    let first = usize::try_from(case["first_record"].as_u64().expect("first")).expect("usize");
    let n = usize::try_from(case["num_records"].as_u64().expect("n")).expect("usize");
    let size = usize::try_from(case["batch_size"].as_u64().expect("size")).expect("usize");
    let recs = &all[first..first + n];
    case["batches"]
        .as_array()
        .expect("batches")
        .iter()
        .zip(recs.chunks(size))
        .map(|(b, r)| (b.clone(), r.to_vec()))
        .collect()
}

#[test]
fn examples_match_tfx_bsl() {
    let mut checked = 0;
    for file in ["examples.json", "extra_examples.json"] {
        let fixture = load(file);
        let all = records(fixture["input"].as_str().expect("input"));
        for case in fixture["cases"].as_array().expect("cases") {
            let name = format!("{file}: {}", case["name"].as_str().unwrap_or("?"));
            if case.get("batches").is_none() {
                continue; // an error case (extra_errors.json holds those)
            }
            for (batch, recs) in batches(case, &all) {
                let cols: Vec<&Value> = batch["columns"]
                    .as_array()
                    .expect("columns")
                    .iter()
                    .filter(|c| c["type"] != "null")
                    .collect();
                let mut spec = String::from("[records.R]\n");
                for c in &cols {
                    let t = item_type(c["type"].as_str().expect("type")).and_then(dtype);
                    let t = t.unwrap_or_else(|| panic!("{name}: type {}", c["type"]));
                    let key = quoted(c["name"].as_str().expect("name"));
                    spec.push_str(&format!(
                        "[records.R.features.{key}]\ndtype = \"{t}\"\nkind = \"var\"\n"
                    ));
                }
                if cols.is_empty() {
                    continue;
                }
                let ours = decode(&spec, &recs);
                for c in cols {
                    let col = ours
                        .column_by_name(c["name"].as_str().expect("name"))
                        .expect("our column");
                    compare(&name, c, col, false, &mut 0);
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 40, "only {checked} columns compared");
}

#[test]
fn sequence_examples_match_tfx_bsl() {
    let mut checked = 0;
    let mut null_steps = 0;
    for file in ["sequence.json", "extra_sequence.json"] {
        let fixture = load(file);
        let all = records(fixture["input"].as_str().expect("input"));
        for case in fixture["cases"].as_array().expect("cases") {
            let name = format!("{file}: {}", case["name"].as_str().unwrap_or("?"));
            if case.get("batches").is_none() {
                continue;
            }
            let seq = case["sequence_feature_column_name"]
                .as_str()
                .unwrap_or("##SEQUENCE##");
            for (batch, recs) in batches(case, &all) {
                let mut spec = String::from("[records.R]\nkind = \"sequence_example\"\n");
                let mut context = Vec::new();
                let mut lists: Vec<(String, Value)> = Vec::new();
                for c in batch["columns"].as_array().expect("columns") {
                    let cname = c["name"].as_str().expect("name");
                    let ty = c["type"].as_str().expect("type");
                    if cname == seq {
                        // One struct column: split it into one column per feature list.
                        let rows = c["values"].as_array().expect("rows");
                        let bits = c.get("f32_bits").and_then(Value::as_array);
                        let inner = ty.strip_prefix("struct<").and_then(|t| t.strip_suffix('>'));
                        for field in split_fields(inner.expect("struct")) {
                            let (fname, fty) = field.split_once(": ").expect("field");
                            let Some(t) = item_type(fty).and_then(item_type).and_then(dtype) else {
                                continue; // no typed step anywhere: no column here
                            };
                            // A context feature may have the same key: another Rust field name.
                            let (key, field) = (quoted(fname), lists.len());
                            spec.push_str(&format!(
                                "[records.R.sequence.{key}]\ndtype = \"{t}\"\nkind = \"var\"\n\
                                 field = \"list_{field}\"\n"
                            ));
                            let values: Vec<Value> =
                                rows.iter().map(|r| r[fname].clone()).collect();
                            let mut col = serde_json::json!({ "name": fname, "values": values });
                            if let Some(bits) = bits {
                                let b: Vec<Value> = bits.iter().map(|r| r[fname].clone()).collect();
                                col["f32_bits"] = Value::Array(b);
                            }
                            lists.push((fname.to_string(), col));
                        }
                    } else if let Some(t) = item_type(ty).and_then(dtype) {
                        let key = quoted(cname);
                        spec.push_str(&format!(
                            "[records.R.context.{key}]\ndtype = \"{t}\"\nkind = \"var\"\n"
                        ));
                        context.push(c.clone());
                    }
                }
                if context.is_empty() && lists.is_empty() {
                    continue;
                }
                let ours = decode(&spec, &recs);
                for c in &context {
                    let col = column(&ours, c["name"].as_str().expect("name"), 1);
                    compare(&name, c, col, false, &mut null_steps);
                    checked += 1;
                }
                for (fname, c) in &lists {
                    let col = column(&ours, fname, 2);
                    compare(&name, c, col, true, &mut null_steps);
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 10, "only {checked} columns compared");
    // The recorded data has steps with no list set; they are the one difference.
    assert!(
        null_steps > 0,
        "no null step met: the check of that difference did not run"
    );
}

/// Our column `name` with `depth` list levels: a context feature and a feature list may share a
/// key, and so a column name.
fn column<'a>(batch: &'a RecordBatch, name: &str, depth: usize) -> &'a ArrayRef {
    let levels = |mut t: &DataType| {
        let mut n = 0;
        while let DataType::LargeList(f) = t {
            n += 1;
            t = f.data_type();
        }
        n
    };
    let i = batch
        .schema()
        .fields()
        .iter()
        .position(|f| f.name() == name && levels(f.data_type()) == depth)
        .unwrap_or_else(|| panic!("no column {name:?} of depth {depth}"));
    batch.column(i)
}

/// The fields of a struct type's text, split at top-level commas.
fn split_fields(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, ch) in s.char_indices() {
        match ch {
            '<' => depth += 1,
            '>' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(s[start..].trim());
    out
}
