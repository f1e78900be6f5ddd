//! `tfrecord-import`: every recorded tensorflow-io Avro case (`fixtures/avro/`), the Avro dataset
//! design's root-reference and missing-value cases, JSON Lines / CSV mapping, and image folders.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::{Value as Json, json};
use tfrecord_core::parse::{ByteStrings, DType, Tensor, Tensors, Values};
use tfrecord_import::avro::{self, AvroFeature, AvroKind, AvroSpec, Schema, Value};

const AVRO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/avro");

fn avro_path(name: &str) -> PathBuf {
    Path::new(AVRO).join(name)
}

fn load(name: &str) -> Json {
    let text = std::fs::read_to_string(avro_path(name)).expect("case file is readable");
    serde_json::from_str(&text).expect("case file parses")
}

fn schema(name: &str) -> Schema {
    let text = std::fs::read_to_string(avro_path(name)).expect("schema is readable");
    avro::parse_schema(&text).expect("schema parses")
}

fn records(file: &str, reader: Option<&Schema>) -> Vec<Value> {
    avro::read_all(&[avro_path(file)], reader).expect("Avro file reads")
}

fn dtype(name: &str) -> DType {
    match name {
        "bool" => DType::Bool,
        "int32" => DType::Int32,
        "int64" => DType::Int64,
        "float32" => DType::Float,
        "float64" => DType::Double,
        "string" => DType::Bytes,
        other => panic!("unknown dtype {other}"),
    }
}

/// A case's default (scalar or nested list) as flat values of `d`.
fn default_values(d: DType, v: &Json) -> Values {
    fn flat<'a>(v: &'a Json, out: &mut Vec<&'a Json>) {
        match v {
            Json::Array(items) => items.iter().for_each(|i| flat(i, out)),
            other => out.push(other),
        }
    }
    let mut items = Vec::new();
    flat(v, &mut items);
    match d {
        DType::Bool => Values::Bool(items.iter().map(|x| x.as_bool().unwrap()).collect()),
        DType::Int32 => Values::Int32(
            items
                .iter()
                .map(|x| i32::try_from(x.as_i64().unwrap()).unwrap())
                .collect(),
        ),
        DType::Int64 => Values::Int64(items.iter().map(|x| x.as_i64().unwrap()).collect()),
        DType::Float => Values::Float32(items.iter().map(|x| x.as_f64().unwrap() as f32).collect()),
        DType::Double => Values::Float64(items.iter().map(|x| x.as_f64().unwrap()).collect()),
        _ => Values::Bytes(items.iter().map(|x| x.as_str().unwrap()).collect()),
    }
}

fn keys(v: &Json) -> Vec<String> {
    match v {
        Json::String(s) => vec![s.clone()],
        Json::Array(items) => items
            .iter()
            .map(|i| i.as_str().unwrap().to_string())
            .collect(),
        other => panic!("bad key list {other}"),
    }
}

fn sizes(v: &Json) -> Vec<u64> {
    match v {
        Json::Number(n) => vec![n.as_u64().unwrap()],
        Json::Array(items) => items.iter().map(|i| i.as_u64().unwrap()).collect(),
        other => panic!("bad size {other}"),
    }
}

/// The case's feature specs as `AvroFeature`s (the output name is the key), and each var_len
/// feature's declared rank.
fn features(case: &Json) -> (Vec<AvroFeature>, BTreeMap<String, usize>) {
    let mut out = Vec::new();
    let mut ranks = BTreeMap::new();
    for (name, f) in case["features"].as_object().unwrap() {
        let d = dtype(f["dtype"].as_str().unwrap());
        let feature = match f["kind"].as_str().unwrap() {
            "fixed_len" => {
                let shape = f["shape"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(Json::as_u64)
                    .collect();
                let default = (!f["default"].is_null()).then(|| default_values(d, &f["default"]));
                AvroFeature {
                    name: name.clone(),
                    source: name.clone(),
                    dtype: d,
                    kind: AvroKind::FixedLen { shape, default },
                }
            }
            "var_len" => {
                let rank = f["rank"].as_u64().unwrap();
                ranks.insert(name.clone(), rank as usize);
                AvroFeature::var_len(name.clone(), name.clone(), d).with_rank(rank)
            }
            "sparse" => {
                let mut s = AvroFeature::sparse(
                    name.clone(),
                    name.clone(),
                    d,
                    keys(&f["index_key"]),
                    f["value_key"].as_str().unwrap(),
                    sizes(&f["size"]),
                );
                if f["already_sorted"].as_bool() == Some(true)
                    && let AvroKind::Sparse { already_sorted, .. } = &mut s.kind
                {
                    *already_sorted = true;
                }
                s
            }
            other => panic!("unknown kind {other}"),
        };
        out.push(feature);
    }
    (out, ranks)
}

/// One recorded element against ours.
fn same_element(expected: &Json, values: &Values, i: usize) -> bool {
    match values {
        Values::Bytes(v) => {
            let want = match expected {
                Json::String(s) => s.as_bytes().to_vec(),
                Json::Object(o) => base64::engine::general_purpose::STANDARD
                    .decode(o["base64"].as_str().unwrap())
                    .unwrap(),
                _ => return false,
            };
            v.get(i) == Some(&want[..])
        }
        Values::Bool(v) => expected.as_bool() == Some(v[i]),
        Values::Int32(v) => expected.as_i64() == Some(i64::from(v[i])),
        Values::Int64(v) => expected.as_i64() == Some(v[i]),
        Values::Float32(v) => expected.as_f64() == Some(f64::from(v[i])),
        Values::Float64(v) => expected.as_f64() == Some(v[i]),
        _ => false,
    }
}

/// Compares one of our tensors with a recorded `{"kind": "dense" | "sparse", ...}`.
fn check_tensor(what: &str, expected: &Json, got: &Tensor) {
    assert_eq!(
        dtype(expected["dtype"].as_str().unwrap()),
        got.dtype(),
        "{what}: dtype"
    );
    let (values, ok_shape) = match (expected["kind"].as_str().unwrap(), got) {
        ("dense", Tensor::Dense { shape, values }) => {
            let want: Vec<usize> = expected["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap() as usize)
                .collect();
            (values, &want == shape)
        }
        (
            "sparse",
            Tensor::Sparse {
                indices,
                values,
                dense_shape,
            },
        ) => {
            let want_shape: Vec<i64> = expected["dense_shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_i64().unwrap())
                .collect();
            let want_indices: Vec<i64> = expected["indices"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|row| row.as_array().unwrap().iter().map(|x| x.as_i64().unwrap()))
                .collect();
            assert_eq!(&want_indices, indices, "{what}: indices");
            (values, &want_shape == dense_shape)
        }
        (kind, t) => panic!("{what}: expected {kind}, got {t:?}"),
    };
    assert!(ok_shape, "{what}: shape: expected {expected}, got {got:?}");
    let want = expected["values"].as_array().unwrap();
    assert_eq!(want.len(), values.len(), "{what}: value count: {got:?}");
    for (i, w) in want.iter().enumerate() {
        assert!(
            same_element(w, values, i),
            "{what}: value {i}: expected {w}, got {values:?}"
        );
    }
}

/// The Avro dataset design's results where tensorflow-io shows a quirk: (case, batch) -> tensor per feature.
fn design_semantics(case: &str, batch: usize) -> Option<Json> {
    let streets = "friends[*].address[*].street";
    let matrix = "matrix[*][*]";
    Some(match (case, batch) {
        ("quirk_first_record_empty_outer_array_bs1", 2) => json!({streets: {
            "kind": "sparse", "dtype": "string", "indices": [], "values": [],
            "dense_shape": [1, 0, 0]}}),
        ("quirk_first_record_empty_outer_array_bs1", 3) => json!({streets: {
            "kind": "sparse", "dtype": "string",
            "indices": [[0, 0, 0], [0, 0, 1], [0, 2, 0]],
            "values": ["1 First Ave", "2 Second Ave", "3 Third Ave"], "dense_shape": [1, 3, 2]}}),
        ("quirk_first_record_empty_outer_array_bs1", 4) => json!({streets: {
            "kind": "sparse", "dtype": "string", "indices": [], "values": [],
            "dense_shape": [1, 1, 0]}}),
        ("quirk_fixedlen_unknown_dims_empty_outer_bs1", 2) => json!({matrix: {
            "kind": "dense", "dtype": "int32", "shape": [1, 0, 0], "values": []}}),
        ("quirk_fixedlen_unknown_dims_empty_outer_bs1", 3) => json!({matrix: {
            "kind": "dense", "dtype": "int32", "shape": [1, 1, 3], "values": [13, 14, 15]}}),
        ("quirk_fixedlen_unknown_dims_empty_outer_bs1", 4) => json!({matrix: {
            "kind": "dense", "dtype": "int32", "shape": [1, 2, 3],
            "values": [16, 17, 18, 19, 20, 21]}}),
        _ => return None,
    })
}

fn check_batch(what: &str, expected: &Json, got: &Tensors, ranks: &BTreeMap<String, usize>) {
    let want = expected.as_object().unwrap();
    assert_eq!(
        want.keys().collect::<Vec<_>>(),
        got.keys().collect::<Vec<_>>(),
        "{what}: outputs"
    );
    for (name, t) in got {
        check_tensor(&format!("{what}: {name}"), &want[name], t);
        if let (Some(&rank), Tensor::Sparse { dense_shape, .. }) = (ranks.get(name), t) {
            assert_eq!(dense_shape.len(), rank + 1, "{what}: {name}: rank");
        }
    }
}

/// Runs one recorded case: every batch equal to the recording; an error case fails at the
/// recorded batch with the recorded message; a tensorflow-io quirk gives the design's result.
fn run_case(file: &str) {
    let case = load(file);
    let name = case["name"].as_str().unwrap();
    let reader = avro::parse_schema(&case["reader_schema"].to_string()).unwrap();
    let values = records(case["avro_file"].as_str().unwrap(), Some(&reader));
    let (feats, ranks) = features(&case);
    let spec = AvroSpec::new(feats).unwrap_or_else(|e| panic!("{name}: {e}"));
    let bs = case["batch_size"].as_u64().unwrap() as usize;
    let expected = case["expected"]["batches"].as_array().unwrap();
    let error = &case["expected_error"];
    let category = case["category"].as_str().unwrap();
    let fail_at = error["batch_index"].as_u64().map(|b| b as usize);
    for (b, batch) in values.chunks(bs).enumerate() {
        let what = format!("{name}: batch {b}");
        let got = spec.parse_batch(batch);
        if b < expected.len() {
            let got = got.unwrap_or_else(|e| panic!("{what}: {e}"));
            check_batch(&what, &expected[b], &got, &ranks);
        } else if category == "tfio_quirk" {
            let want =
                design_semantics(name, b).unwrap_or_else(|| panic!("{what}: no design result"));
            let got = got.unwrap_or_else(|e| panic!("{what}: {e}"));
            check_batch(&what, &want, &got, &ranks);
        } else if Some(b) == fail_at {
            let e = got.expect_err(&what).to_string();
            let substring = error["substring"].as_str().unwrap();
            assert!(e.contains(substring), "{what}: {e:?} lacks {substring:?}");
            return;
        } else {
            panic!("{what}: nothing recorded");
        }
    }
    assert!(
        fail_at.is_none() || category == "tfio_quirk",
        "{name}: no error"
    );
}

#[test]
fn every_recorded_avro_case() {
    let mut names: Vec<String> = std::fs::read_dir(AVRO)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with("_bs1.json"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 20, "{names:?}");
    for n in &names {
        run_case(n);
    }
}

fn one(spec: &AvroSpec, records: &[Value]) -> Vec<Result<Tensors, String>> {
    records
        .chunks(1)
        .map(|b| spec.parse_batch(b).map_err(|e| e.to_string()))
        .collect()
}

fn strings(t: &Tensor) -> Vec<String> {
    t.values()
        .as_bytes()
        .unwrap()
        .iter()
        .map(|b| String::from_utf8(b.to_vec()).unwrap())
        .collect()
}

#[test]
fn root_reference_inside_a_filter() {
    // tensorflow-io crashes on this one; the design's meaning: friends with the person's own
    // first name.
    let key = "friends[name.first=@name.first].name.initial";
    let spec = AvroSpec::new([AvroFeature::var_len(key, key, DType::Bytes)]).unwrap();
    let got = spec.parse_batch(&records("persons.avro", None)).unwrap();
    let t = &got[key];
    let Tensor::Sparse {
        indices,
        dense_shape,
        ..
    } = t
    else {
        panic!("{t:?}")
    };
    assert_eq!(indices, &[0, 0, 3, 0]);
    assert_eq!(dense_shape, &[5, 1]);
    assert_eq!(strings(t), ["C", "V"]);
}

#[test]
fn root_references_as_sparse_index_keys() {
    // The design's `engine` SparseFeature(index_key=['@car.serial', 'id'], value_key='power'):
    // a scalar root index next to a relative one (tensorflow-io crashes).
    let spec = AvroSpec::new([AvroFeature::sparse(
        "engine",
        "car.engine",
        DType::Float,
        ["@car.serial", "id"],
        "power",
        [16, 10000],
    )])
    .unwrap();
    let got = spec.parse_batch(&records("persons.avro", None)).unwrap();
    let Tensor::Sparse {
        indices,
        values,
        dense_shape,
    } = &got["engine"]
    else {
        panic!()
    };
    assert_eq!(
        indices,
        &[0, 3, 11, 1, 7, 22, 2, 9, 31, 3, 12, 51, 4, 15, 61]
    );
    assert_eq!(
        values,
        &Values::Float32(vec![200.25, 99.5, 120.0, 180.0, 70.0])
    );
    assert_eq!(dense_shape, &[5, 16, 10000]);

    // With the design's size 12, Dave's car serial 12 is outside it: an error, not garbage.
    let spec = AvroSpec::new([AvroFeature::sparse(
        "engine",
        "car.engine",
        DType::Float,
        ["@car.serial", "id"],
        "power",
        [12, 10000],
    )])
    .unwrap();
    let e = spec
        .parse_batch(&records("persons.avro", None))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("record 3") && e.contains("outside [0, 12)"),
        "{e}"
    );

    // `tensorName`: every key from the root (an array here; a map has no `[*]`).
    let spec = AvroSpec::new([AvroFeature::sparse(
        "tensorName",
        "tensorName",
        DType::Float,
        ["@engines[*].cylinders", "@engines[*].id"],
        "@engines[*].power",
        [12, 10000],
    )])
    .unwrap();
    let root = spec.parse_batch(&records("persons.avro", None)).unwrap();
    let rel = AvroSpec::new([AvroFeature::sparse(
        "tensorName",
        "engines",
        DType::Float,
        ["cylinders", "id"],
        "power",
        [12, 10000],
    )])
    .unwrap()
    .parse_batch(&records("persons.avro", None))
    .unwrap();
    assert_eq!(root, rel);

    // The design's own `tensorName`, over the map `cars` (its values in key order; tensorflow-io
    // has no `[*]` over a map).
    let spec = AvroSpec::new([AvroFeature::sparse(
        "tensorName",
        "tensorName",
        DType::Float,
        ["@cars[*].engine.cylinders", "@cars[*].engine.id"],
        "@cars[*].engine.power",
        [16, 10000],
    )])
    .unwrap();
    let t = spec
        .parse_batch(&records("persons.avro", None)[..1])
        .unwrap();
    let Tensor::Sparse {
        indices, values, ..
    } = &t["tensorName"]
    else {
        panic!()
    };
    assert_eq!(indices, &[0, 3, 13, 0, 4, 12]);
    assert_eq!(values, &Values::Float32(vec![60.0, 75.5]));

    // A root list of another length than the values: the design's count check.
    let spec = AvroSpec::new([AvroFeature::sparse(
        "e",
        "engines",
        DType::Float,
        ["@car.serial"],
        "power",
        [100],
    )])
    .unwrap();
    let e = spec
        .parse_batch(&records("persons.avro", None))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("Number of elements in indices (1) and values (2) do not match"),
        "{e}"
    );
}

#[test]
fn sparse_over_two_array_levels() {
    // The design's friends[*].cars[*].engine with index keys [cylinders, id] (tensorflow-io
    // fails on two array levels).
    let spec = AvroSpec::new([AvroFeature::sparse(
        "engines",
        "friends[*].cars[*].engine",
        DType::Float,
        ["cylinders", "id"],
        "power",
        [16, 10000],
    )])
    .unwrap();
    let got = one(&spec, &records("persons.avro", None));
    let Tensor::Sparse {
        indices, values, ..
    } = &got[0].as_ref().unwrap()["engines"]
    else {
        panic!()
    };
    assert_eq!(indices, &[0, 3, 8, 0, 4, 7, 0, 4, 9]);
    assert_eq!(values, &Values::Float32(vec![90.0, 150.5, 120.0]));
}

#[test]
fn missing_values_are_defaults_or_clear_errors() {
    let all = records("persons.avro", None);
    // friends[0] on a record without friends (tensorflow-io crashes: index == size).
    let spec = AvroSpec::new([AvroFeature::fixed_len(
        "f0",
        "friends[0].name.first",
        DType::Bytes,
        [],
    )])
    .unwrap();
    let out = one(&spec, &all);
    assert!(out[0].is_ok() && out[1].is_ok());
    let e = out[2].as_ref().unwrap_err();
    assert!(
        e.contains("record 0")
            && e.contains("Invalid index 0. Range [0, 0).")
            && e.contains("no default"),
        "{e}"
    );
    // ... and with a default, the default (the design: missing values take the default).
    let spec =
        AvroSpec::new([
            AvroFeature::fixed_len("f0", "friends[0].name.first", DType::Bytes, [])
                .with_default("nobody"),
        ])
        .unwrap();
    let t = spec.parse_batch(&all).unwrap();
    assert_eq!(strings(&t["f0"]), ["Bob", "Carl", "nobody", "Erin", "Gina"]);

    // A map key that is absent, with a default.
    let spec =
        AvroSpec::new([
            AvroFeature::fixed_len("c", "cars['nickname'].color", DType::Bytes, [])
                .with_default("none"),
        ])
        .unwrap();
    let t = spec.parse_batch(&all).unwrap();
    assert_eq!(
        strings(&t["c"]),
        ["green", "purple", "none", "pink", "teal"]
    );

    // FixedLen with missing positions and no default (tensorflow-io crashes).
    let spec = AvroSpec::new([AvroFeature {
        name: "m".into(),
        source: "matrix[*][*]".into(),
        dtype: DType::Int32,
        kind: AvroKind::FixedLen {
            shape: vec![Some(2), Some(3)],
            default: None,
        },
    }])
    .unwrap();
    let out = one(&spec, &all);
    assert!(out[0].is_ok());
    let e = out[2].as_ref().unwrap_err();
    assert!(
        e.contains("needs 6 values per record but only 0 are present") && e.contains("no default"),
        "{e}"
    );
    // More items than the declared outer dimension (tensorflow-io crashes).
    let spec = AvroSpec::new([AvroFeature::fixed_len(
        "s",
        "friends[*].address[*].street",
        DType::Bytes,
        [1, 2],
    )
    .with_default(Values::from(vec![b"a".to_vec(), b"b".to_vec()]))])
    .unwrap();
    let e = spec.parse_batch(&all[..1]).unwrap_err().to_string();
    assert!(
        e.contains("for dimension 1 expected at most 1 elements but received 2 elements"),
        "{e}"
    );
    // The design's scalar default with a fixed shape (FixedLenSequenceFeature's meaning).
    let spec = AvroSpec::new([AvroFeature::fixed_len(
        "s",
        "friends[*].address[*].street",
        DType::Bytes,
        [3, 2],
    )
    .with_default("Park Street 35")])
    .unwrap();
    let t = spec.parse_batch(&all[..1]).unwrap();
    assert_eq!(
        strings(&t["s"]),
        [
            "35 Park Street",
            "275 California Street",
            "950 Maude Ave",
            "Park Street 35",
            "Park Street 35",
            "Park Street 35"
        ]
    );
    // A var feature over a null: the default, else an error.
    let spec = AvroSpec::new([AvroFeature::var_len("n", "nickname", DType::Bytes)]).unwrap();
    let e = spec.parse_batch(&all).unwrap_err().to_string();
    assert!(e.contains("record 1") && e.contains("null"), "{e}");
}

#[test]
fn codecs_projection_and_reshape() {
    let spec = AvroSpec::new([
        AvroFeature::fixed_len("name.first", "name.first", DType::Bytes, []),
        AvroFeature::var_len("tags", "tags[*]", DType::Bytes),
    ])
    .unwrap();
    let plain = spec.parse_batch(&records("persons.avro", None)).unwrap();
    let deflate = spec
        .parse_batch(&records("persons_deflate.avro", None))
        .unwrap();
    assert_eq!(plain, deflate);

    // Writer -> reader schema resolution: int -> long, float -> double, a new field's default.
    let projection = schema("schema_person_projection.avsc");
    let values = records("persons.avro", Some(&projection));
    let spec = AvroSpec::new([
        AvroFeature::fixed_len("age", "age", DType::Int64, []),
        AvroFeature::fixed_len("height", "height", DType::Double, []),
        AvroFeature::fixed_len("country", "country", DType::Bytes, []),
    ])
    .unwrap();
    let t = spec.parse_batch(&values).unwrap();
    assert_eq!(t["age"].values(), &Values::Int64(vec![34, 41, 29, 52, 23]));
    assert_eq!(
        t["height"].values(),
        &Values::Float64(vec![1.75, 1.5, 1.625, 1.875, 1.25])
    );
    assert_eq!(strings(&t["country"]), ["US"; 5]);
    // Without the projection, the strict types: int is not int64.
    let e = spec
        .parse_batch(&records("persons.avro", None))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("feature \"age\"") && e.contains("got type int") && e.contains("reader schema"),
        "{e}"
    );

    // One `[*]` reshaped row-major into [2, 2] (the design's "combining and reshaping").
    let spec = AvroSpec::new([
        AvroFeature::fixed_len("s", "scores[*]", DType::Float, [2, 2]).with_default(0.0f32),
    ])
    .unwrap();
    let t = spec
        .parse_batch(&records("persons.avro", None)[..1])
        .unwrap();
    assert_eq!(
        t["s"],
        Tensor::Dense {
            shape: vec![1, 2, 2],
            values: Values::Float32(vec![1.5, 2.5, 3.5, 0.0])
        }
    );
}

#[test]
fn a_toml_spec_drives_tensors_and_records() {
    let text = r#"
[records.Person.features.first]
source = "name.first"
dtype = "string"
[records.Person.features.friends]
source = "friends[*].name.first"
dtype = "string"
kind = "var"
[records.Person.features.nick]
source = "nickname"
dtype = "string"
default = "n/a"
[records.Person.features.multi_int]
source = "multi:int"
dtype = "int32"
default = 0
[records.Person.features.weight]
dtype = "double"
lossy = true
[records.Person.features.engines]
dtype = "float"
kind = "sparse"
index_key = "id"
value_key = "power"
size = 10000
"#;
    let schema = tfrecord_schema::ir::Schema::from_toml_str(text, "person.toml").unwrap();
    let spec = AvroSpec::from_record(&schema.records[0]).unwrap();
    let all = records("persons.avro", None);
    let t = spec.parse_batch(&all).unwrap();
    assert_eq!(
        strings(&t["first"]),
        ["Alice", "Bob", "Carol", "Dave", "Eve"]
    );
    assert_eq!(strings(&t["nick"]), ["Al", "n/a", "Caz", "D", "n/a"]);
    assert_eq!(t["multi_int"].values(), &Values::Int32(vec![7, 0, 0, 3, 0]));
    assert_eq!(t["weight"].dtype(), DType::Double);

    let row = spec.row(&all[0]).unwrap();
    let f = &row.features;
    assert_eq!(
        f.keys().collect::<Vec<_>>(),
        [
            "first",
            "friends",
            "id",
            "multi_int",
            "nick",
            "power",
            "weight"
        ]
    );
    assert_eq!(f["id"], Values::Int64(vec![1, 3]));
    assert_eq!(f["power"], Values::Float32(vec![10.5, 30.25]));
    // The records parse back with the same spec to the tensors of the Avro batch (dtypes
    // widened to what tf.train.Example holds).
    let rows: Vec<Vec<u8>> = all
        .iter()
        .map(|r| {
            spec.row(r)
                .unwrap()
                .encode(tfrecord_core::Format::TfRecord)
                .unwrap()
        })
        .collect();
    let parse_spec = tfrecord_core::parse::RecordSpec::from_record(&schema.records[0])
        .unwrap()
        .example_spec()
        .unwrap();
    let parsed = tfrecord_core::parse::parse_example(&parse_spec, &rows).unwrap();
    assert_eq!(parsed["first"], t["first"]);
    assert_eq!(parsed["friends"], t["friends"]);
    assert_eq!(parsed["engines"], t["engines"]);
    assert_eq!(
        parsed["multi_int"].values(),
        &Values::Int64(vec![7, 0, 0, 3, 0])
    );
}

#[test]
fn avro_errors_are_located() {
    // A truncated file: an error naming the file, never a panic.
    let bytes = std::fs::read(avro_path("persons.avro")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for cut in [3, 40, 400, bytes.len() - 20] {
        let p = dir.path().join(format!("cut{cut}.avro"));
        std::fs::write(&p, &bytes[..cut]).unwrap();
        let e = avro::read_all(std::slice::from_ref(&p), None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(&p.display().to_string()), "{e}");
    }
    let spec =
        AvroSpec::new([AvroFeature::fixed_len("x", "name.frist", DType::Bytes, [])]).unwrap();
    let mut seen = Vec::new();
    let opts = avro::ReadOptions {
        batch_size: Some(2),
        ..avro::ReadOptions::default()
    };
    let e = avro::read_tensors(&[avro_path("persons.avro")], &spec, &opts, |t| {
        seen.push(t);
        Ok(())
    })
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("persons.avro: record 0: feature \"x\": Unable to find name 'frist'."),
        "{e}"
    );
    // Specs that cannot work are rejected before reading.
    for (f, what) in [
        (
            AvroFeature::fixed_len("x", "friends[*].name.first", DType::Bytes, []),
            "has 0 dimensions but the key expression",
        ),
        (
            AvroFeature::fixed_len("x", "name.first", DType::Bytes, [2]),
            "add `[*]`",
        ),
        (
            AvroFeature::fixed_len("x", "a[", DType::Bytes, []),
            "invalid key expression",
        ),
        (
            AvroFeature::fixed_len("x", "a", DType::Bytes, []).with_default(1i64),
            "default holds int64 values",
        ),
        (
            AvroFeature::sparse("x", "e", DType::Float, ["a", "b"], "v", [3]),
            "`size` has 1 dimensions but there are 2 index keys",
        ),
    ] {
        let e = AvroSpec::new([f]).unwrap_err().to_string();
        assert!(e.contains(what), "{e}");
    }
}

// ---- JSON Lines and CSV ----

use tfrecord_import::FeatureRow;
use tfrecord_import::images::{self, ImageFormat, ImageOptions};
use tfrecord_import::records::{self, RecordFormat, RecordOptions, RecordSpec};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/data");

fn import(
    path: &Path,
    opts: &RecordOptions,
) -> (tfrecord_import::Result<Vec<FeatureRow>>, Vec<String>) {
    let mut rows = Vec::new();
    let mut warnings = Vec::new();
    let r = records::import_records(
        path,
        opts,
        |w| warnings.push(w.to_string()),
        |row| {
            rows.push(row);
            Ok(())
        },
    );
    (r.map(|_| rows), warnings)
}

fn f32s(v: &[f32]) -> Values {
    Values::Float32(v.to_vec())
}

fn text(s: &[&str]) -> Values {
    Values::Bytes(s.iter().collect())
}

#[test]
fn bundled_json_lines_and_csv_map_by_the_table() {
    let (rows, w) = import(
        &Path::new(DATA).join("records.jsonl"),
        &RecordOptions::default(),
    );
    let rows = rows.unwrap();
    assert!(w.is_empty());
    assert_eq!(rows.len(), 3);
    let r0 = &rows[0].features;
    assert_eq!(
        r0.keys().collect::<Vec<_>>(),
        [
            "active", "id", "matrix", "name", "pos/x", "pos/y", "score", "tags"
        ]
    );
    assert_eq!(r0["id"], Values::Int64(vec![1]));
    assert_eq!(r0["active"], Values::Int64(vec![1]));
    assert_eq!(r0["score"], f32s(&[0.5]));
    assert_eq!(r0["pos/y"], f32s(&[-2.0]));
    assert_eq!(r0["matrix"], Values::Int64(vec![1, 2, 3, 4]));
    assert_eq!(r0["tags"], text(&["a", "b"]));
    // An integer in a field that holds floats elsewhere is a float; an empty list keeps the
    // field's kind; null is no feature.
    assert_eq!(rows[1].features["score"], f32s(&[1.0]));
    assert_eq!(rows[1].features["tags"], Values::Bytes(ByteStrings::new()));
    assert!(!rows[2].features.contains_key("score"));

    let (rows, _) = import(
        &Path::new(DATA).join("records.csv"),
        &RecordOptions::default(),
    );
    let rows = rows.unwrap();
    assert_eq!(rows[0].features["city"], text(&["Paris, France"]));
    assert_eq!(rows[1].features["score"], f32s(&[1.0]));
    assert_eq!(rows[1].features["active"], Values::Int64(vec![0]));
    assert!(!rows[2].features.contains_key("score"));

    // The bundled spec forces dtypes: `id` becomes `label`, a missing score its default.
    let text_spec = std::fs::read_to_string(Path::new(DATA).join("records.toml")).unwrap();
    let schema = tfrecord_schema::ir::Schema::from_toml_str(&text_spec, "records.toml").unwrap();
    let opts = RecordOptions {
        spec: Some(RecordSpec::from_record(&schema.records[0]).unwrap()),
        format: Some(RecordFormat::Csv),
        ..RecordOptions::default()
    };
    let (rows, _) = import(&Path::new(DATA).join("records.csv"), &opts);
    let rows = rows.unwrap();
    assert_eq!(rows[2].features["label"], Values::Int64(vec![3]));
    assert_eq!(rows[2].features["score"], f32s(&[0.0]));
    assert_eq!(rows[0].features["active"], Values::Bool(vec![true]));
    assert!(!rows[0].features.contains_key("id"));
}

#[test]
fn unmappable_records_are_errors_or_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.jsonl");
    std::fs::write(
        &p,
        "{\"ok\": 1, \"objs\": [{\"a\": 1}]}\n{\"ok\": 2, \"n\": 1}\n{\"ok\": 3, \"n\": \"x\"}\nnot json\n",
    )
    .unwrap();
    let (r, _) = import(&p, &RecordOptions::default());
    let e = r.unwrap_err().to_string();
    assert!(
        e.contains("bad.jsonl: record 2: field \"n\": holds strings here"),
        "{e}"
    );
    let opts = RecordOptions {
        skip_unmappable: true,
        ..RecordOptions::default()
    };
    let (rows, w) = import(&p, &opts);
    let rows = rows.unwrap();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r.features.keys().eq(["ok"])));
    assert_eq!(w.len(), 3, "{w:?}");
    assert!(w[0].contains("field \"n\""), "{w:?}");
    assert!(
        w[1].contains("record 0: field \"objs\": a list of objects"),
        "{w:?}"
    );
    assert!(w[2].contains("record 3: invalid JSON"), "{w:?}");
}

// ---- Images ----

/// What `tf.io.decode_image(data, expand_animations=False)` returned for each fixture
/// (TensorFlow 2.21): (height, width, channels).
const DECODED: [(&str, ImageFormat, u32, u32, u32); 14] = [
    ("alpha.webp", ImageFormat::Webp, 7, 13, 4),
    ("anim.gif", ImageFormat::Gif, 6, 11, 3),
    ("gray.jpg", ImageFormat::Jpeg, 5, 7, 1),
    ("gray.png", ImageFormat::Png, 3, 9, 1),
    ("lossless.webp", ImageFormat::Webp, 7, 13, 3),
    ("lossy.webp", ImageFormat::Webp, 7, 13, 3),
    ("palette.png", ImageFormat::Png, 3, 9, 3),
    ("palette_trns.png", ImageFormat::Png, 3, 9, 4),
    ("progressive.jpg", ImageFormat::Jpeg, 4, 6, 3),
    ("rgb.bmp", ImageFormat::Bmp, 8, 5, 3),
    ("rgb.jpg", ImageFormat::Jpeg, 5, 7, 3),
    ("rgb.png", ImageFormat::Png, 3, 9, 3),
    ("rgba.bmp", ImageFormat::Bmp, 8, 5, 4),
    ("rgba.png", ImageFormat::Png, 3, 9, 4),
];

const IMAGES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/images");

#[test]
fn image_headers_agree_with_tensorflow() {
    for (name, format, h, w, d) in DECODED {
        let bytes = std::fs::read(Path::new(IMAGES).join(name)).unwrap();
        let info = images::read_header(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            (info.format, info.height, info.width, info.depth),
            (format, h, w, d),
            "{name}"
        );
        for n in 0..bytes.len().min(64) {
            let _ = images::read_header(&bytes[..n]);
        }
    }
    // A flat folder: images without labels, in name order.
    let folder = images::scan(Path::new(IMAGES)).unwrap();
    assert!(folder.classes.is_empty());
    assert_eq!(folder.images.len(), DECODED.len());
    assert!(folder.images.iter().all(|i| i.label.is_none()));
    assert_eq!(folder.images[0].name, "alpha.webp");
    // The fixtures' README is not an image: left out, and listed.
    let others: Vec<_> = folder
        .others
        .iter()
        .map(|p| p.file_name().unwrap())
        .collect();
    assert_eq!(others, ["README.md"]);
}

/// Class and image names are stored as text: a name that is not UTF-8 is an error naming it,
/// not a name changed (two classes `k\xff` and `k\xfe` once both became `k\u{fffd}`, label 0).
#[cfg(unix)]
#[test]
fn names_that_are_not_utf8_are_refused() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    let png = std::fs::read(Path::new(IMAGES).join("gray.png")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for class in [&b"k\xff"[..], b"k\xfe"] {
        let class = dir.path().join(OsStr::from_bytes(class));
        std::fs::create_dir(&class).unwrap();
        std::fs::write(class.join("n.png"), &png).unwrap();
    }
    let e = images::scan(dir.path()).unwrap_err().to_string();
    assert!(
        e.contains("k\u{fffd}") && e.contains("not valid UTF-8"),
        "{e}"
    );

    // An image's name too; a file that is not an image may have any name.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(OsStr::from_bytes(b"notes\xff.txt")), b"x").unwrap();
    std::fs::write(dir.path().join("ok.png"), &png).unwrap();
    let folder = images::scan(dir.path()).unwrap();
    assert_eq!(folder.images.len(), 1);
    assert_eq!(folder.others.len(), 1);
    std::fs::write(dir.path().join(OsStr::from_bytes(b"a\xff.png")), &png).unwrap();
    let e = images::scan(dir.path()).unwrap_err().to_string();
    assert!(e.contains("image's name is not valid UTF-8"), "{e}");

    // A folder inside a class whose name is never stored (no image below it) may have any
    // name; with an image below it, whose path is stored, the folder is named.
    let dir = tempfile::tempdir().unwrap();
    let class = dir.path().join("cls");
    let deeper = class.join(OsStr::from_bytes(b"sub\xfe")).join("deeper");
    std::fs::create_dir_all(&deeper).unwrap();
    std::fs::write(class.join("ok.png"), &png).unwrap();
    assert_eq!(images::scan(dir.path()).unwrap().images.len(), 1);
    std::fs::write(deeper.join("ok.png"), &png).unwrap();
    let e = images::scan(dir.path()).unwrap_err().to_string();
    assert!(
        e.contains("folder's name is not valid UTF-8") && e.contains("sub"),
        "{e}"
    );
}

/// Whether the importer takes an image file: its header reads and it is not cut short.
fn importable(bytes: &[u8]) -> Result<images::ImageInfo, String> {
    let info = images::read_header(bytes)?;
    images::check_complete(bytes, &info)?;
    Ok(info)
}

#[test]
fn truncated_images_are_refused_as_tensorflow_refuses_them() {
    // Every fixture is whole; TensorFlow 2.21 refused every shorter prefix of every one but
    // the GIF (it decodes a GIF without its trailer byte), and so does the importer.
    for (name, format, ..) in DECODED {
        let bytes = std::fs::read(Path::new(IMAGES).join(name)).unwrap();
        importable(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        if format == ImageFormat::Gif {
            continue;
        }
        for n in 0..bytes.len() {
            assert!(importable(&bytes[..n]).is_err(), "{name} cut to {n} bytes");
        }
    }

    // A folder of good images and one cut in the middle of its body: the import stops with an
    // error naming the file and saying it is truncated, and writes nothing.
    let dir = tempfile::tempdir().unwrap();
    // (file, bytes kept, message): rgb.jpg's scan data is bytes 623..665, that of
    // progressive.jpg's eighth scan 483..488, rgba.png's IDAT chunk is bytes 33..82,
    // palette.png's 69..107.
    let in_scan = "truncated JPEG: the file ends inside its scan data";
    let in_idat = "truncated PNG: the file ends inside its IDAT chunk";
    for (cut, keep, what) in [
        ("rgb.jpg", 650, in_scan),
        ("progressive.jpg", 486, in_scan),
        ("rgba.png", 60, in_idat),
        ("palette.png", 90, in_idat),
    ] {
        let folder = dir.path().join(cut.replace('.', "_"));
        std::fs::create_dir_all(&folder).unwrap();
        for (name, ..) in DECODED {
            let mut bytes = std::fs::read(Path::new(IMAGES).join(name)).unwrap();
            if name == cut {
                bytes.truncate(keep);
            }
            std::fs::write(folder.join(name), bytes).unwrap();
        }
        let out = dir.path().join("out.tfrecord");
        let e = images::write_images(&folder, &out, &ImageOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&folder.join(cut).display().to_string()) && e.contains(what),
            "{e}"
        );
        assert!(!out.exists());

        // Without it, the good files import.
        std::fs::remove_file(folder.join(cut)).unwrap();
        let summary = images::write_images(&folder, &out, &ImageOptions::default()).unwrap();
        assert_eq!(summary.records(), DECODED.len() as u64 - 1);
        std::fs::remove_file(&out).unwrap();
    }

    // Bytes after the end marker are kept as they are: TensorFlow decodes such a file.
    let mut jpeg = std::fs::read(Path::new(IMAGES).join("rgb.jpg")).unwrap();
    jpeg.extend(b"trailing bytes");
    assert_eq!(importable(&jpeg).unwrap().depth, 3);
}

fn read_examples(path: &Path) -> Vec<tfrecord_core::proto::tensorflow::Example> {
    use tfrecord_core::Message;
    tfrecord_core::RecordReader::open(path, tfrecord_core::ReaderOptions::new())
        .unwrap()
        .map(|r| tfrecord_core::proto::tensorflow::Example::decode(&r.unwrap()[..]).unwrap())
        .collect()
}

fn feature_bytes(e: &tfrecord_core::proto::tensorflow::Example, key: &str) -> Vec<u8> {
    use tfrecord_core::proto::tensorflow::feature::Kind;
    match &e.features.as_ref().unwrap().feature[key].kind {
        Some(Kind::BytesList(l)) => l.value[0].clone(),
        other => panic!("{key}: {other:?}"),
    }
}

fn feature_int(e: &tfrecord_core::proto::tensorflow::Example, key: &str) -> i64 {
    use tfrecord_core::proto::tensorflow::feature::Kind;
    match &e.features.as_ref().unwrap().feature[key].kind {
        Some(Kind::Int64List(l)) => l.value[0],
        other => panic!("{key}: {other:?}"),
    }
}

#[test]
fn flowers_folder_labels_shuffle_and_shards() {
    let flowers = Path::new(DATA).join("flowers");
    let folder = images::scan(&flowers).unwrap();
    assert_eq!(folder.classes, ["daisy", "roses", "tulips"]);
    assert_eq!(folder.images.len(), 8);
    assert_eq!(
        folder.images[3].label,
        Some((1, "roses".to_string())),
        "{:?}",
        folder.images[3]
    );
    // Shuffling is a function of the seed.
    let order = |seed| {
        images::ordered(&folder, true, seed)
            .iter()
            .map(|e| e.name.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(order(7), order(7));
    assert_ne!(order(7), order(8));
    let sorted: Vec<_> = images::ordered(&folder, false, 7)
        .iter()
        .map(|e| e.name.clone())
        .collect();
    let mut shuffled = order(7);
    shuffled.sort();
    assert_eq!(shuffled, sorted);

    let dir = tempfile::tempdir().unwrap();
    let opts = ImageOptions {
        shards: 3,
        seed: 7,
        ..ImageOptions::default()
    };
    let out = dir.path().join("flowers.tfrecord");
    let summary = images::write_images(&flowers, &out, &opts).unwrap();
    let names: Vec<String> = summary
        .files
        .iter()
        .map(|(p, _)| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "flowers-00000-of-00003.tfrecord",
            "flowers-00001-of-00003.tfrecord",
            "flowers-00002-of-00003.tfrecord"
        ]
    );
    assert_eq!(
        summary.files.iter().map(|f| f.1).collect::<Vec<_>>(),
        [2, 3, 3]
    );
    let mut written = Vec::new();
    for (path, _) in &summary.files {
        for e in read_examples(path) {
            let name = String::from_utf8(feature_bytes(&e, "image/filename")).unwrap();
            let on_disk = std::fs::read(flowers.join(&name)).unwrap();
            assert_eq!(feature_bytes(&e, "image/encoded"), on_disk, "{name}");
            let class = name.split('/').next().unwrap();
            assert_eq!(feature_bytes(&e, "label/text"), class.as_bytes());
            let index = folder.classes.iter().position(|c| c == class).unwrap();
            assert_eq!(feature_int(&e, "label"), i64::try_from(index).unwrap());
            let info = images::read_header(&on_disk).unwrap();
            assert_eq!(feature_int(&e, "height"), i64::from(info.height));
            assert_eq!(feature_int(&e, "depth"), i64::from(info.depth));
            assert_eq!(
                feature_bytes(&e, "image/format"),
                info.format.name().as_bytes()
            );
            written.push(name);
        }
    }
    assert_eq!(
        written,
        order(7),
        "shards hold the shuffled order, in sequence"
    );
    // No temporary files left behind.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 3, "{left:?}");

    // OFRecord part files.
    let of = dir.path().join("of");
    let opts = ImageOptions {
        shards: 2,
        format: tfrecord_core::Format::OfRecord,
        ..ImageOptions::default()
    };
    let summary = images::write_images(&flowers, &of, &opts).unwrap();
    assert_eq!(
        summary
            .files
            .iter()
            .map(|f| f.0.clone())
            .collect::<Vec<_>>(),
        [of.join("part-00000"), of.join("part-00001")]
    );

    // A broken image is an error naming it.
    let bad = dir.path().join("bad");
    std::fs::create_dir_all(bad.join("cls")).unwrap();
    std::fs::write(bad.join("cls/x.png"), b"not a png").unwrap();
    let e = images::write_images(
        &bad,
        &dir.path().join("b.tfrecord"),
        &ImageOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("x.png") && e.contains("unknown signature"),
        "{e}"
    );
    assert!(!dir.path().join("b.tfrecord").exists());
}

/// The spec format says what the recorded tensorflow-io cases say with `FixedLenFeature([None,
/// None])` and `VarLenFeatureWithRank`: `shape = [-1, -1]` and `rank = N` give the importer the
/// same features as the API, so the same tensors, batch by batch; a rank the key expression
/// does not have is an error naming the feature.
#[test]
fn toml_unknown_dims_and_ranks_match_the_recorded_cases() {
    for (file, table) in [
        (
            "quirk_fixedlen_unknown_dims_empty_outer_bs1.json",
            "dtype = \"int32\"\nshape = [-1, -1]\ndefault = -1\n",
        ),
        (
            "t2_friends_address_street_varlen_bs1.json",
            "dtype = \"bytes\"\nkind = \"var\"\nrank = 2\n",
        ),
    ] {
        let case = load(file);
        let (api, _) = features(&case);
        let source = api[0].source.clone();
        let text = format!("[records.R.features.\"{source}\"]\n{table}");
        let schema = tfrecord_schema::ir::Schema::from_toml_str(&text, "r.toml").unwrap();
        let from_toml = AvroSpec::from_record(&schema.records[0]).unwrap();
        let from_api = AvroSpec::new(api).unwrap();
        let all = records(case["avro_file"].as_str().unwrap(), None);
        for batch in [1, 2, all.len()] {
            for chunk in all.chunks(batch) {
                let want = from_api.parse_batch(chunk).map_err(|e| e.to_string());
                let got = from_toml.parse_batch(chunk).map_err(|e| e.to_string());
                assert_eq!(got, want, "{file}, batch of {batch}");
            }
        }
    }
    let text = "[records.R.features.\"friends[*].address[*].street\"]\n\
                dtype = \"bytes\"\nkind = \"var\"\nrank = 1\n";
    let schema = tfrecord_schema::ir::Schema::from_toml_str(text, "r.toml").unwrap();
    let e = AvroSpec::from_record(&schema.records[0])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("friends[*].address[*].street") && e.contains("declares rank 1"),
        "{e}"
    );
}
