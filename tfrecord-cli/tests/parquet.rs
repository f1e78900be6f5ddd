//! `tfrecord to-parquet` and `from-parquet`: the TensorFlow-recorded fixtures through Parquet and
//! back, the file's row groups and metadata, and the errors.

use std::fs::File;
use std::path::{Path, PathBuf};

use tfrecord_arrow::SPEC_METADATA_KEY;
use tfrecord_arrow::parquet::file::reader::{FileReader, SerializedFileReader};
use tfrecord_core::proto::tensorflow as tf;
use tfrecord_core::{Message, RecordWriter, WriterOptions};

mod support;
use support::{fails, ok, run, s, unsuccessful};

/// Writes `batch` to a Parquet file at `path`, as pyarrow would write a table (no spec stored
/// unless the batch's schema holds one).
fn write_parquet(path: &Path, batch: &tfrecord_arrow::arrow_array::RecordBatch) {
    let file = File::create(path).expect("create");
    let mut w = tfrecord_arrow::parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None)
        .expect("writer");
    w.write(batch).expect("write");
    w.close().expect("close");
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/conformance")
        .join(name)
        .display()
        .to_string()
}

/// `cat --json` of a file, without the features that no record gives a type (which an inferred
/// spec leaves out, with a note).
fn json_lines(file: &str, extra: &[&str]) -> Vec<serde_json::Value> {
    let mut args = vec!["cat", "--json", file];
    args.extend_from_slice(extra);
    ok(&run(&args))
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).expect("json");
            if let Some(f) = v
                .pointer_mut("/features/feature")
                .and_then(|f| f.as_object_mut())
            {
                f.retain(|_, x| x.as_object().is_some_and(|o| !o.is_empty()));
            }
            v
        })
        .collect()
}

#[test]
fn tensorflow_records_through_parquet_and_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cases: [(&str, &[&str], &[&str], &str); 3] = [
        ("examples.tfrecord", &[], &[], "tfrecord"),
        (
            "sequence.tfrecord",
            &["--sequence"],
            &["--sequence"],
            "tfrecord",
        ),
        (
            "part-00000",
            &["--input-format", "ofrecord"],
            &["--input-format", "ofrecord"],
            "ofrecord",
        ),
    ];
    for (name, to_flags, cat_flags, format) in cases {
        let input = fixture(name);
        let pq = dir.path().join(format!("{name}.parquet"));
        let back = dir.path().join(format!("{name}.back"));
        let mut args = vec!["to-parquet", &input, "-o", s(&pq)];
        args.extend_from_slice(to_flags);
        ok(&run(&args));
        ok(&run(&[
            "from-parquet",
            s(&pq),
            "-o",
            s(&back),
            "--output-format",
            format,
        ]));
        assert_eq!(
            json_lines(s(&back), cat_flags),
            json_lines(&input, cat_flags),
            "{name}"
        );
        // The file holds the spec it was written with.
        let reader = SerializedFileReader::new(File::open(&pq).expect("open")).expect("parquet");
        let kv = reader
            .metadata()
            .file_metadata()
            .key_value_metadata()
            .cloned();
        let arrow_schema = kv
            .unwrap_or_default()
            .into_iter()
            .find(|kv| kv.key == "ARROW:schema")
            .and_then(|kv| kv.value);
        assert!(
            arrow_schema.is_some(),
            "{name}: no Arrow schema in the file"
        );
    }
}

#[test]
fn row_groups_spec_and_dataset_flags() {
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("in.tfrecord");
    let mut w = RecordWriter::create(&input, WriterOptions::new()).expect("create");
    for i in 0..100i64 {
        let mut f = tf::Features::default();
        let int = |v| tf::Feature {
            kind: Some(tf::feature::Kind::Int64List(tf::Int64List { value: v })),
        };
        f.feature.insert("id".into(), int(vec![i]));
        if i % 3 == 0 {
            f.feature.insert("tags".into(), int(vec![i, i + 1]));
        }
        w.write(&tf::Example { features: Some(f) }.encode_to_vec())
            .expect("write");
    }
    w.finish().expect("finish");
    let spec = dir.path().join("s.toml");
    std::fs::write(
        &spec,
        "[records.R.features.id]\ndtype = \"int64\"\n[records.R.features.tags]\ndtype = \"int64\"\nkind = \"var\"\n",
    )
    .expect("spec");
    let pq = dir.path().join("o.parquet");
    ok(&run(&[
        "to-parquet",
        "--spec",
        s(&spec),
        s(&input),
        "-o",
        s(&pq),
        "--row-group-size",
        "10",
        "--batch-size",
        "7",
        "--shard",
        "1/2",
        "--codec",
        "zstd",
    ]));
    let reader = SerializedFileReader::new(File::open(&pq).expect("open")).expect("parquet");
    let meta = reader.metadata();
    assert_eq!(meta.file_metadata().num_rows(), 50);
    assert_eq!(meta.num_row_groups(), 5);
    let spec_kv = meta
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == SPEC_METADATA_KEY).cloned());
    assert!(
        spec_kv.is_none(),
        "the spec lives in the Arrow schema's metadata"
    );

    // An existing output needs --force.
    let again = run(&["to-parquet", "--spec", s(&spec), s(&input), "-o", s(&pq)]);
    assert!(unsuccessful(&again).contains("--force"));
    ok(&run(&[
        "to-parquet",
        "--spec",
        s(&spec),
        s(&input),
        "-o",
        s(&pq),
        "--force",
        "--limit",
        "3",
    ]));
    let back = dir.path().join("back.tfrecord");
    ok(&run(&["from-parquet", s(&pq), "-o", s(&back)]));
    let count = ok(&run(&["count", s(&back)]));
    assert_eq!(count.trim(), "3");
}

#[test]
fn errors_name_file_offset_record_and_key() {
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("in.tfrecord");
    let mut w = RecordWriter::create(&input, WriterOptions::new()).expect("create");
    let mut offsets = Vec::new();
    let mut at = 0u64;
    for text in [&b"ok"[..], b"fine", b"\xff\xfe"] {
        let mut f = tf::Features::default();
        f.feature.insert(
            "name".into(),
            tf::Feature {
                kind: Some(tf::feature::Kind::BytesList(tf::BytesList {
                    value: vec![text.to_vec()],
                })),
            },
        );
        let bytes = tf::Example { features: Some(f) }.encode_to_vec();
        offsets.push(at);
        at += 16 + bytes.len() as u64;
        w.write(&bytes).expect("write");
    }
    w.finish().expect("finish");
    let spec = dir.path().join("s.toml");
    std::fs::write(&spec, "[records.R.features.name]\ndtype = \"string\"\n").expect("spec");
    let pq = dir.path().join("o.parquet");
    let err = unsuccessful(&run(&[
        "to-parquet",
        "--spec",
        s(&spec),
        s(&input),
        "-o",
        s(&pq),
    ]));
    assert!(err.contains("in.tfrecord"), "{err}");
    assert!(err.contains(&offsets[2].to_string()), "{err}");
    assert!(err.contains("record 2"), "{err}");
    assert!(err.contains("name"), "{err}");
    assert!(err.contains("UTF-8"), "{err}");
    assert!(!pq.exists(), "a failed run leaves no output");

    // Standard input cannot be read twice to infer a spec.
    let err = unsuccessful(&run(&["to-parquet", "-", "-o", s(&pq)]));
    assert!(err.contains("--spec"), "{err}");
}

#[test]
fn float64_columns_need_a_choice_for_tfrecord() {
    use std::sync::Arc;
    use tfrecord_arrow::arrow_array::{ArrayRef, Float64Array, RecordBatch};
    use tfrecord_arrow::arrow_schema::{DataType, Field, Schema};

    let dir = tempfile::tempdir().expect("temp dir");
    let pq: PathBuf = dir.path().join("f.parquet");
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Float64, false)]));
    let col: ArrayRef = Arc::new(Float64Array::from(vec![0.1, 2.5]));
    let batch = RecordBatch::try_new(schema, vec![col]).expect("batch");
    write_parquet(&pq, &batch);

    let out = dir.path().join("o.tfrecord");
    let err = unsuccessful(&run(&["from-parquet", s(&pq), "-o", s(&out)]));
    assert!(
        err.contains("--allow-lossy-double") && err.contains('x'),
        "{err}"
    );
    ok(&run(&[
        "from-parquet",
        s(&pq),
        "-o",
        s(&out),
        "--allow-lossy-double",
    ]));
    let json = ok(&run(&["cat", "--json", s(&out)]));
    assert!(json.contains("0.1") && json.contains("2.5"), "{json}");
    let of = dir.path().join("o.ofrecord");
    ok(&run(&[
        "from-parquet",
        s(&pq),
        "-o",
        s(&of),
        "--output-format",
        "ofrecord",
    ]));
    let json = ok(&run(&[
        "cat",
        "--json",
        "--input-format",
        "ofrecord",
        s(&of),
    ]));
    assert!(json.contains("doubleList"), "{json}");
}

/// Records whose values an inferred spec cannot hold are refused, not dropped: a key whose
/// records disagree on its type, and records with no feature at all (Parquet has no rows
/// without columns). A key that never holds a value is only noted.
#[test]
fn what_an_inferred_spec_would_lose_is_an_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let write = |name: &str, records: &[tf::Features]| {
        let path = dir.path().join(name);
        let mut w = RecordWriter::create(&path, WriterOptions::new()).expect("create");
        for f in records {
            let e = tf::Example {
                features: Some(f.clone()),
            };
            w.write(&e.encode_to_vec()).expect("write");
        }
        w.finish().expect("finish");
        path
    };
    let feature = |kind: Option<tf::feature::Kind>| tf::Feature { kind };
    let with = |pairs: Vec<(&str, Option<tf::feature::Kind>)>| tf::Features {
        feature: pairs
            .into_iter()
            .map(|(k, v)| (k.to_string(), feature(v)))
            .collect(),
    };
    let ints = |v: Vec<i64>| Some(tf::feature::Kind::Int64List(tf::Int64List { value: v }));
    let floats = |v: Vec<f32>| Some(tf::feature::Kind::FloatList(tf::FloatList { value: v }));

    let conflict = write(
        "conflict.tfrecord",
        &[
            with(vec![("a", ints(vec![1])), ("x", ints(vec![1]))]),
            with(vec![("a", ints(vec![2])), ("x", floats(vec![2.5]))]),
        ],
    );
    let out = dir.path().join("o.parquet");
    let err = fails(&run(&["to-parquet", s(&conflict), "-o", s(&out)]));
    assert!(err.contains("\"x\"") && err.contains("disagree"), "{err}");
    // Where each type was first met, so that the record can be found among many shards.
    let name = s(&conflict);
    assert!(
        err.contains(&format!("int64_list first in {name} at byte 0 (record 0)"))
            && err.contains(&format!("float_list first in {name} at byte "))
            && err.contains("(record 1)"),
        "{err}"
    );
    assert!(!out.exists(), "no output is left");

    // An empty key holds values no column can be named for: where it was first met.
    let empty_key = write(
        "empty_key.tfrecord",
        &[
            with(vec![("a", ints(vec![1]))]),
            with(vec![("a", ints(vec![2])), ("", ints(vec![3]))]),
        ],
    );
    let err = fails(&run(&["to-parquet", s(&empty_key), "-o", s(&out)]));
    assert!(
        err.contains("a spec key cannot be empty (first in ")
            && err.contains(&format!("{} at byte ", s(&empty_key)))
            && err.contains("(record 1)"),
        "{err}"
    );
    assert!(!out.exists(), "no output is left");

    let empty = write("empty.tfrecord", &[with(vec![]), with(vec![])]);
    let err = fails(&run(&["to-parquet", s(&empty), "-o", s(&out)]));
    assert!(err.contains("no rows without columns"), "{err}");
    assert!(!out.exists(), "no output is left");
    // No records at all: a file of no rows and no columns, and a note that says so (some
    // readers refuse a file of no columns).
    let none = write("none.tfrecord", &[]);
    let o = run(&["to-parquet", s(&none), "-o", s(&out)]);
    ok(&o);
    assert!(
        support::stderr(&o).contains("no records to infer columns from, so the file has none"),
        "{}",
        support::stderr(&o)
    );
    std::fs::remove_file(&out).expect("rm");

    // A feature that never has a kind set holds nothing to lose: a note, and the file.
    let unset = write(
        "unset.tfrecord",
        &[with(vec![("a", ints(vec![1])), ("u", None)])],
    );
    let o = run(&["to-parquet", s(&unset), "-o", s(&out)]);
    ok(&o);
    assert!(support::stderr(&o).contains("note: feature \"u\""));
}

/// Without a spec, to-parquet reads its inputs twice (inference, then the rows): a damaged
/// record skipped under --max-bad-records is reported once, with one summary.
#[test]
fn damage_skipped_while_inferring_is_reported_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("in.tfrecord");
    let mut w = RecordWriter::create(&path, WriterOptions::new()).expect("create");
    for i in 0..5i64 {
        let mut f = tf::Features::default();
        f.feature.insert(
            "id".into(),
            tf::Feature {
                kind: Some(tf::feature::Kind::Int64List(tf::Int64List {
                    value: vec![i],
                })),
            },
        );
        w.write(&tf::Example { features: Some(f) }.encode_to_vec())
            .expect("write");
    }
    w.finish().expect("finish");
    // Flip a byte of the third record's payload: its data checksum fails.
    let mut bytes = std::fs::read(&path).expect("read");
    let frame = bytes.len() / 5;
    bytes[2 * frame + 14] ^= 0x40;
    std::fs::write(&path, &bytes).expect("write");
    let out = dir.path().join("o.parquet");
    let o = run(&[
        "to-parquet",
        "--max-bad-records",
        "1",
        s(&path),
        "-o",
        s(&out),
    ]);
    ok(&o);
    let err = support::stderr(&o);
    // One line with `skipped` per skip (what `grep -c skipped` counts), and a summary that
    // does not say it.
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("skipped")).collect();
    assert_eq!(lines.len(), 1, "one report: {err}");
    assert!(
        err.lines()
            .last()
            .is_some_and(|l| l == "tfrecord: in all, passed over 1 damaged record(s) (31 bytes)"),
        "{err}"
    );
    let reader = SerializedFileReader::new(File::open(&out).expect("open")).expect("parquet");
    assert_eq!(reader.metadata().file_metadata().num_rows(), 4);

    // An inferred spec that would lose a key ends the command after the first pass: what it
    // skipped is still reported.
    let mut w = RecordWriter::new(Vec::new(), WriterOptions::new());
    let mut f = tf::Features::default();
    f.feature.insert(
        "id".into(),
        tf::Feature {
            kind: Some(tf::feature::Kind::FloatList(tf::FloatList {
                value: vec![0.5],
            })),
        },
    );
    w.write(&tf::Example { features: Some(f) }.encode_to_vec())
        .expect("write");
    bytes.extend(w.finish().expect("finish"));
    std::fs::write(&path, &bytes).expect("write");
    let o = run(&[
        "to-parquet",
        "--max-bad-records",
        "1",
        "--force",
        s(&path),
        "-o",
        s(&out),
    ]);
    let err = fails(&o);
    assert!(err.contains("disagree"), "{err}");
    assert!(
        err.lines()
            .any(|l| l.contains("skipped the record at byte") && l.contains("in.tfrecord")),
        "{err}"
    );
}

/// Feature lists whose steps hold one to three values, declared `ragged` (as
/// `tf.io.RaggedFeature` reads them) rather than `var`, go through Parquet and back.
#[test]
fn ragged_feature_lists_go_through_parquet() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("seq.tfrecord");
    let mut w = RecordWriter::create(&data, WriterOptions::new()).expect("create");
    for r in 0..6i64 {
        let steps = (0..r % 4)
            .map(|k| tf::Feature {
                kind: Some(tf::feature::Kind::Int64List(tf::Int64List {
                    value: (0..=k).map(|v| v * 10 + r).collect(),
                })),
            })
            .collect();
        let lists = tf::FeatureLists {
            feature_list: [("tokens".to_string(), tf::FeatureList { feature: steps })].into(),
        };
        let e = tf::SequenceExample {
            context: None,
            feature_lists: Some(lists),
        };
        w.write(&e.encode_to_vec()).expect("write");
    }
    w.finish().expect("finish");
    let inferred = ok(&run(&["infer", "--sequence", s(&data)]));
    let spec_text = inferred.replace("kind = \"var\"", "kind = \"ragged\"");
    assert_ne!(spec_text, inferred);
    let spec = dir.path().join("seq.toml");
    std::fs::write(&spec, &spec_text).expect("write spec");
    sequences_round_trip(dir.path(), &spec, &data);
}

/// A feature list that every record holds with no steps tells nothing of its type, so an
/// inferred spec leaves it out; `to-parquet` without `--spec` refuses, since the lists would
/// not reach the file (`FixedLenSequenceFeature` reads the original, not a round trip of it),
/// and with a spec naming it the empty lists go through.
#[test]
fn a_feature_list_that_never_has_a_step_is_not_dropped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("e.tfrecord");
    let mut w = RecordWriter::create(&data, WriterOptions::new()).expect("create");
    for r in 0..2i64 {
        let id = tf::Feature {
            kind: Some(tf::feature::Kind::Int64List(tf::Int64List {
                value: vec![r],
            })),
        };
        let e = tf::SequenceExample {
            context: Some(tf::Features {
                feature: [("id".to_string(), id)].into(),
            }),
            feature_lists: Some(tf::FeatureLists {
                feature_list: [("e".to_string(), tf::FeatureList::default())].into(),
            }),
        };
        w.write(&e.encode_to_vec()).expect("write");
    }
    w.finish().expect("finish");
    let pq = dir.path().join("e.parquet");
    let err = fails(&run(&["to-parquet", "--sequence", s(&data), "-o", s(&pq)]));
    assert!(
        err.contains("leaves out \"e\" (the feature list never has a step"),
        "{err}"
    );
    assert!(!pq.exists(), "no output is left");
    let spec = dir.path().join("e.toml");
    std::fs::write(
        &spec,
        "[records.E]\nkind = \"sequence_example\"\n[records.E.context.id]\ndtype = \"int64\"\n\
         [records.E.sequence.e]\ndtype = \"int64\"\n",
    )
    .expect("write spec");
    sequences_round_trip(dir.path(), &spec, &data);
}

/// The SequenceExamples of `data` through `to-parquet --spec spec` and `from-parquet` (files
/// in `dir`) come back as they were.
fn sequences_round_trip(dir: &Path, spec: &Path, data: &Path) {
    let pq = dir.join("round_trip.parquet");
    ok(&run(&[
        "to-parquet",
        "--spec",
        s(spec),
        s(data),
        "-o",
        s(&pq),
    ]));
    let back = dir.join("back.tfrecord");
    ok(&run(&["from-parquet", s(&pq), "-o", s(&back)]));
    assert_eq!(
        json_lines(s(&back), &["--sequence"]),
        json_lines(s(data), &["--sequence"])
    );
}

/// `from-parquet` takes a directory of Parquet files (Spark's and pyarrow's datasets, with
/// `_SUCCESS` beside them) and glob patterns, in name order; one with no Parquet file is an
/// error.
#[test]
fn from_parquet_reads_directories_and_globs_in_name_order() {
    let dir = tempfile::tempdir().expect("temp dir");
    let parts = dir.path().join("table");
    std::fs::create_dir(&parts).expect("mkdir");
    let examples = fixture("examples.tfrecord");
    let half = |extra: &[&str], name: &str| {
        let out = parts.join(name);
        let mut args = vec!["to-parquet", examples.as_str(), "-o", s(&out)];
        args.extend_from_slice(extra);
        ok(&run(&args));
    };
    // Written out of order: the second half under the name that sorts first.
    half(&["--skip", "21"], "part-00001.parquet");
    half(&["--limit", "21"], "part-00000.parquet");
    std::fs::write(parts.join("_SUCCESS"), b"").expect("marker");
    let whole = json_lines(&examples, &[]);
    // `table/*` matches `_SUCCESS` too, which is not data.
    for input in [
        s(&parts).to_string(),
        format!("{}/part-*.parquet", parts.display()),
        format!("{}/*", parts.display()),
    ] {
        let back = dir.path().join("back.tfrecord");
        ok(&run(&["from-parquet", &input, "-o", s(&back), "--force"]));
        assert_eq!(json_lines(s(&back), &[]), whole, "{input}");
    }
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    let err = fails(&run(&["from-parquet", s(&empty), "-o", "-"]));
    assert!(err.contains("no Parquet file"), "{err}");

    // A partitioned table keeps rows in subdirectories: refused, not read in part. Hidden and
    // `_` directories (Spark's `_temporary`) are not data.
    std::fs::create_dir(parts.join("_temporary")).expect("mkdir");
    std::fs::create_dir(parts.join(".cache")).expect("mkdir");
    let back = dir.path().join("back.tfrecord");
    ok(&run(&[
        "from-parquet",
        s(&parts),
        "-o",
        s(&back),
        "--force",
    ]));
    std::fs::create_dir(parts.join("year=2020")).expect("mkdir");
    let err = fails(&run(&[
        "from-parquet",
        s(&parts),
        "-o",
        s(&back),
        "--force",
    ]));
    assert!(err.contains("a directory inside (year=2020)"), "{err}");
    let pattern = format!("{}/*", parts.display());
    let err = fails(&run(&["from-parquet", &pattern, "-o", s(&back), "--force"]));
    assert!(err.contains("matches a directory"), "{err}");
}

/// Files whose columns of one name would be stored in different lists are refused, naming the
/// column and both files, rather than written as records no one spec reads (as pyarrow's data
/// sets refuse them); columns of one list kind (int32 and int64) go together.
#[test]
fn from_parquet_refuses_files_that_disagree_on_a_column() {
    use std::sync::Arc;
    use tfrecord_arrow::arrow_array::{
        ArrayRef, Float32Array, Int32Array, Int64Array, RecordBatch,
    };
    use tfrecord_arrow::arrow_schema::{DataType, Field, Schema};

    let dir = tempfile::tempdir().expect("temp dir");
    let write_as = |name: &str, column: &str, dtype: DataType, col: ArrayRef| {
        let pq = dir.path().join(name);
        let schema = Arc::new(Schema::new(vec![Field::new(column, dtype, false)]));
        let batch = RecordBatch::try_new(schema, vec![col]).expect("batch");
        write_parquet(&pq, &batch);
        pq
    };
    let write = |name: &str, dtype: DataType, col: ArrayRef| write_as(name, "x", dtype, col);
    let ints = write(
        "a.parquet",
        DataType::Int64,
        Arc::new(Int64Array::from(vec![1, 2])),
    );
    let small = write(
        "b.parquet",
        DataType::Int32,
        Arc::new(Int32Array::from(vec![3])),
    );
    let floats = write(
        "c.parquet",
        DataType::Float32,
        Arc::new(Float32Array::from(vec![3.5])),
    );

    let out = dir.path().join("o.tfrecord");
    let err = unsuccessful(&run(&["from-parquet", s(&ints), s(&floats), "-o", s(&out)]));
    assert!(err.contains("c.parquet: bad feature \"x\""), "{err}");
    assert!(
        err.contains("column `x` writes feature \"x\" as float_list, where column `x` of"),
        "{err}"
    );
    assert!(err.contains("a.parquet writes it as int64_list"), "{err}");
    assert!(!out.exists(), "no output under the final name");

    // Every file is checked against every earlier one, not only the first, and before any
    // row is written (nothing reaches standard output).
    let other = write_as(
        "0.parquet",
        "y",
        DataType::Int64,
        Arc::new(Int64Array::from(vec![0])),
    );
    let o = run(&["from-parquet", s(&other), s(&ints), s(&floats), "-o", "-"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty(), "{} bytes written", o.stdout.len());
    // A sparse feature's index key is an int64 list: a float column of that name disagrees.
    let sparse = dir.path().join("sparse.toml");
    std::fs::write(
        &sparse,
        "[records.R.features.sp]\ndtype = \"float\"\nkind = \"sparse\"\nindex_key = \"x\"\n\
         value_key = \"v\"\nsize = 4\n",
    )
    .expect("spec");
    let records = dir.path().join("sp.tfrecord");
    let mut w = RecordWriter::create(&records, WriterOptions::new()).expect("create");
    let mut f = tf::Features::default();
    let index = tf::feature::Kind::Int64List(tf::Int64List { value: vec![1] });
    let value = tf::feature::Kind::FloatList(tf::FloatList { value: vec![0.5] });
    f.feature
        .insert("x".into(), tf::Feature { kind: Some(index) });
    f.feature
        .insert("v".into(), tf::Feature { kind: Some(value) });
    w.write(&tf::Example { features: Some(f) }.encode_to_vec())
        .expect("write");
    w.finish().expect("finish");
    let sp = dir.path().join("sp.parquet");
    ok(&run(&[
        "to-parquet",
        "--spec",
        s(&sparse),
        s(&records),
        "-o",
        s(&sp),
    ]));
    let err = unsuccessful(&run(&["from-parquet", s(&sp), s(&floats), "-o", s(&out)]));
    assert!(
        err.contains("column `x` writes feature \"x\" as float_list, where column `sp` of"),
        "{err}"
    );

    ok(&run(&["from-parquet", s(&ints), s(&small), "-o", s(&out)]));
    let json = ok(&run(&["cat", "--json", s(&out)]));
    assert_eq!(json.matches("int64List").count(), 3, "{json}");
}

/// A column whose type maps to no feature, in a file without the spec `to-parquet` stores
/// (tools that rename columns drop it), is named, with the way out.
#[test]
fn a_column_with_no_feature_names_the_missing_spec() {
    use std::sync::Arc;
    use tfrecord_arrow::arrow_array::{ArrayRef, RecordBatch, StructArray};
    use tfrecord_arrow::arrow_schema::{DataType, Field, Fields, Schema};

    let dir = tempfile::tempdir().expect("temp dir");
    let pq = dir.path().join("s.parquet");
    let inner = Fields::from(vec![Field::new("a", DataType::Int64, false)]);
    let col: ArrayRef = Arc::new(StructArray::new(
        inner.clone(),
        vec![Arc::new(tfrecord_arrow::arrow_array::Int64Array::from(vec![1])) as ArrayRef],
        None,
    ));
    let schema = Arc::new(Schema::new(vec![Field::new(
        "st",
        DataType::Struct(inner),
        false,
    )]));
    let batch = RecordBatch::try_new(schema, vec![col]).expect("batch");
    write_parquet(&pq, &batch);
    let err = unsuccessful(&run(&[
        "from-parquet",
        s(&pq),
        "-o",
        s(&dir.path().join("o")),
    ]));
    assert!(
        err.contains("bad feature \"st\": column `st` of Arrow type"),
        "{err}"
    );
    assert!(err.contains("no feature holds Struct"), "{err}");
    assert!(err.contains("no `tfrecord.spec` metadata"), "{err}");
}

/// A file whose columns were selected after `to-parquet` wrote it keeps the stored spec but
/// not every column it describes: the error says so, with the way out.
#[test]
fn a_stored_spec_naming_a_column_the_file_lacks_says_so() {
    use std::sync::Arc;
    use tfrecord_arrow::arrow_array::{ArrayRef, Int64Array, RecordBatch};
    use tfrecord_arrow::arrow_schema::{DataType, Field, Schema};

    let dir = tempfile::tempdir().expect("temp dir");
    let pq = dir.path().join("selected.parquet");
    let spec =
        "[records.R.features.a]\ndtype = \"int64\"\n[records.R.features.b]\ndtype = \"int64\"\n";
    let schema = Arc::new(Schema::new_with_metadata(
        vec![Field::new("a", DataType::Int64, false)],
        [("tfrecord.spec".to_string(), spec.to_string())].into(),
    ));
    let col: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
    let batch = RecordBatch::try_new(schema, vec![col]).expect("batch");
    write_parquet(&pq, &batch);
    let out = dir.path().join("o.tfrecord");
    let err = unsuccessful(&run(&["from-parquet", s(&pq), "-o", s(&out)]));
    assert!(
        err.contains("metadata has the feature `b`, but the file has no column `b`")
            && err.contains("--spec"),
        "{err}"
    );
    assert!(!out.exists(), "nothing written");
}

/// Outputs in directories that do not exist yet: both directions make them, as `convert` does.
#[test]
fn outputs_in_missing_directories_are_written() {
    let dir = tempfile::tempdir().expect("temp dir");
    let input = fixture("examples.tfrecord");
    let pq = dir.path().join("a").join("b").join("x.parquet");
    ok(&run(&["to-parquet", &input, "-o", s(&pq)]));
    let back = dir.path().join("c").join("d").join("x.tfrecord");
    ok(&run(&["from-parquet", s(&pq), "-o", s(&back)]));
    let n = ok(&run(&["count", s(&back)]));
    let m = ok(&run(&["count", &input]));
    assert_eq!(n, m.replace(&input, s(&back)));
}

/// `-o -` writes the Parquet file to standard output, byte for byte the file `-o FILE`
/// writes (a Parquet file is written front to back).
#[test]
fn to_parquet_writes_standard_output() {
    let dir = tempfile::tempdir().expect("temp dir");
    let input = fixture("examples.tfrecord");
    let pq = dir.path().join("x.parquet");
    ok(&run(&["to-parquet", &input, "-o", s(&pq)]));
    let piped = run(&["to-parquet", &input, "-o", "-"]);
    assert!(piped.status.success(), "{}", support::stderr(&piped));
    assert_eq!(piped.stdout, std::fs::read(&pq).expect("reads"));
    let back = dir.path().join("x.tfrecord");
    let from_stdout = dir.path().join("stdout.parquet");
    std::fs::write(&from_stdout, &piped.stdout).expect("writes");
    ok(&run(&["from-parquet", s(&from_stdout), "-o", s(&back)]));
    assert_eq!(json_lines(s(&back), &[]), json_lines(&input, &[]));
}

#[test]
fn an_example_spec_does_not_drop_feature_lists() {
    let dir = tempfile::tempdir().expect("temp dir");
    let input = fixture("sequence.tfrecord");
    // The context's features as an Example's: TensorFlow's parse_example would read them and
    // pass over the feature lists; a conversion refuses, naming the record and the fix.
    let spec = dir.path().join("ctx.toml");
    std::fs::write(
        &spec,
        "[records.Ctx.features.id]\ndtype = \"int64\"\n[records.Ctx.features.lang]\ndtype = \"string\"\n",
    )
    .expect("spec");
    let pq = dir.path().join("o.parquet");
    let err = fails(&run(&[
        "to-parquet",
        "--spec",
        s(&spec),
        &input,
        "-o",
        s(&pq),
    ]));
    assert!(err.contains("sequence.tfrecord"), "{err}");
    assert!(err.contains("record 0"), "{err}");
    assert!(err.contains("feature_lists"), "{err}");
    assert!(err.contains("sequence_example"), "{err}");
    assert!(!pq.exists(), "a failed run leaves no output");
    // `--sequence` with that spec is a contradiction, not a flag to ignore.
    let o = run(&[
        "to-parquet",
        "--spec",
        s(&spec),
        "--sequence",
        &input,
        "-o",
        s(&pq),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", support::stderr(&o));
    assert!(support::stderr(&o).contains("`Ctx`"));
    // Under a policy that skips, each such record is reported, never dropped silently.
    let o = run(&[
        "to-parquet",
        "--spec",
        s(&spec),
        "--max-bad-records",
        "100",
        &input,
        "-o",
        s(&pq),
    ]);
    let err = support::stderr(&o);
    assert_eq!(err.matches("skipped").count(), 12, "{err}");
}

/// With --force a command works in place (its input read whole before the output replaces
/// it); from-json, which writes over its output unasked, refuses an output that is an input.
#[test]
fn an_output_that_is_an_input() {
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("in.tfrecord");
    std::fs::copy(fixture("examples.tfrecord"), &input).expect("copy");
    let before = std::fs::read(&input).expect("read");
    // By another spelling of the same path.
    let same = dir.path().join(".").join("in.tfrecord");
    let o = run(&["from-json", s(&input), "-o", s(&same)]);
    assert_eq!(o.status.code(), Some(2), "{}", support::stderr(&o));
    assert!(
        support::stderr(&o).contains("the output is also an input"),
        "{}",
        support::stderr(&o)
    );
    assert_eq!(std::fs::read(&input).expect("read"), before);
    // In place, asked for: the records through Parquet and back into the same file.
    let pq = dir.path().join("x.parquet");
    ok(&run(&["to-parquet", s(&input), "-o", s(&pq)]));
    ok(&run(&["to-parquet", s(&input), "-o", s(&same), "--force"]));
    assert_eq!(&std::fs::read(&input).expect("read")[..4], b"PAR1");
    ok(&run(&[
        "from-parquet",
        s(&input),
        "-o",
        s(&same),
        "--force",
    ]));
    let back = ok(&run(&["cat", "--json", s(&input)]));
    let want = ok(&run(&["cat", "--json", &fixture("examples.tfrecord")]));
    assert_eq!(back.lines().count(), want.lines().count());

    // Parquet is read from its footer: standard input is refused by name.
    let o = run(&["from-parquet", "-", "-o", s(&dir.path().join("y.tfrecord"))]);
    assert_eq!(o.status.code(), Some(2), "{}", support::stderr(&o));
    assert!(support::stderr(&o).contains("standard input"));
}

#[test]
fn damaged_parquet_and_bad_metadata_are_named_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pq = dir.path().join("x.parquet");
    ok(&run(&[
        "to-parquet",
        &fixture("examples.tfrecord"),
        "-o",
        s(&pq),
        "--codec",
        "snappy",
    ]));
    // Every byte of the first data pages flipped: the codec or the page reader fails.
    let mut bytes = std::fs::read(&pq).expect("read");
    let half = bytes.len() / 2;
    for b in &mut bytes[4..half] {
        *b = !*b;
    }
    let bad = dir.path().join("bad.parquet");
    std::fs::write(&bad, &bytes).expect("write");
    let err = fails(&run(&[
        "from-parquet",
        s(&bad),
        "-o",
        s(&dir.path().join("b.tfrecord")),
    ]));
    assert!(err.contains("bad.parquet"), "{err}");
    assert!(err.contains("row 0"), "{err}");
    assert!(!err.contains("Parquet: Parquet"), "{err}");

    // A spec in the metadata that is not a spec is the file's error, not a feature's.
    let schema =
        tfrecord_arrow::arrow_schema::Schema::new(vec![tfrecord_arrow::arrow_schema::Field::new(
            "id",
            tfrecord_arrow::arrow_schema::DataType::Int64,
            false,
        )])
        .with_metadata([(SPEC_METADATA_KEY.to_string(), "[records.R.x".to_string())].into());
    let batch = tfrecord_arrow::arrow_array::RecordBatch::try_new(
        std::sync::Arc::new(schema),
        vec![std::sync::Arc::new(
            tfrecord_arrow::arrow_array::Int64Array::from(vec![1]),
        )],
    )
    .expect("batch");
    let meta = dir.path().join("meta.parquet");
    write_parquet(&meta, &batch);
    let err = fails(&run(&[
        "from-parquet",
        s(&meta),
        "-o",
        s(&dir.path().join("m.tfrecord")),
    ]));
    assert!(err.contains("meta.parquet"), "{err}");
    assert!(err.contains("invalid `tfrecord.spec` metadata"), "{err}");
    assert!(!err.contains("bad feature"), "{err}");
}

/// `from-parquet`'s row flags: `--shard I/N` cuts the rows of all inputs into N runs that
/// together hold every row once, `--skip` and `--limit` apply after it, and `--shards` writes
/// TensorFlow-named shards.
#[test]
fn from_parquet_shards_skips_and_limits_rows() {
    let dir = tempfile::tempdir().expect("temp dir");
    // Two Parquet files of 37 and 26 rows, in row groups of 5: ids 0..63 in order.
    let mut first = 0i64;
    for (name, n) in [("a.parquet", 37i64), ("b.parquet", 26)] {
        let ids =
            tfrecord_arrow::arrow_array::Int64Array::from((first..first + n).collect::<Vec<_>>());
        first += n;
        let schema = tfrecord_arrow::arrow_schema::Schema::new(vec![
            tfrecord_arrow::arrow_schema::Field::new(
                "id",
                tfrecord_arrow::arrow_schema::DataType::Int64,
                false,
            ),
        ]);
        let batch = tfrecord_arrow::arrow_array::RecordBatch::try_new(
            std::sync::Arc::new(schema),
            vec![std::sync::Arc::new(ids)],
        )
        .expect("batch");
        let file = File::create(dir.path().join(name)).expect("create");
        let props = tfrecord_arrow::parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(5))
            .build();
        let mut w =
            tfrecord_arrow::parquet::arrow::ArrowWriter::try_new(file, batch.schema(), Some(props))
                .expect("writer");
        w.write(&batch).expect("write");
        w.close().expect("close");
    }
    let ids = |path: &Path| -> Vec<i64> {
        ok(&run(&["cat", "--json", s(path)]))
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).expect("json");
                v.pointer("/features/feature/id/int64List/value/0")
                    .and_then(|x| x.as_str().and_then(|t| t.parse().ok()).or(x.as_i64()))
                    .expect("an id")
            })
            .collect()
    };
    let pattern = dir.path().join("*.parquet");
    for n in [1, 2, 3, 7, 64, 100] {
        let mut all = Vec::new();
        for i in 0..n {
            let out = dir.path().join(format!("s{i}of{n}.tfrecord"));
            let shard = format!("{i}/{n}");
            ok(&run(&[
                "from-parquet",
                s(&pattern),
                "--shard",
                &shard,
                "-o",
                s(&out),
            ]));
            let got = ids(&out);
            // Each shard a run of rows, nearly as long as the others.
            assert!(got.windows(2).all(|w| w[1] == w[0] + 1), "{shard}: {got:?}");
            assert!(got.len().abs_diff(63 / n) <= 1, "{shard}: {}", got.len());
            all.extend(got);
        }
        assert_eq!(all, (0..63).collect::<Vec<_>>(), "{n} shards");
    }
    // --skip and --limit after the shard: rows 21..42 of 63 are shard 1/3.
    let out = dir.path().join("part.tfrecord");
    ok(&run(&[
        "from-parquet",
        s(&pattern),
        "--shard",
        "1/3",
        "--skip",
        "15",
        "--limit",
        "4",
        "-o",
        s(&out),
    ]));
    assert_eq!(ids(&out), [36, 37, 38, 39]);
    // Sharded output: three TensorFlow-named shards holding every row once.
    let out = dir.path().join("all.tfrecord");
    ok(&run(&[
        "from-parquet",
        s(&pattern),
        "--shards",
        "3",
        "-o",
        s(&out),
    ]));
    let mut all = Vec::new();
    for i in 0..3 {
        all.extend(ids(&dir
            .path()
            .join(format!("all-{i:05}-of-00003.tfrecord"))));
    }
    all.sort_unstable();
    assert_eq!(all, (0..63).collect::<Vec<_>>());
    assert!(!out.exists());
}

/// A feature list's error names the step, as TensorFlow's names its index; and inference
/// names the steps where a list's kinds disagree.
#[test]
fn feature_list_errors_name_the_step() {
    let dir = tempfile::tempdir().expect("temp dir");
    let step = |kind| tf::Feature { kind: Some(kind) };
    let floats = |v: Vec<f32>| step(tf::feature::Kind::FloatList(tf::FloatList { value: v }));
    let ints = |v: Vec<i64>| step(tf::feature::Kind::Int64List(tf::Int64List { value: v }));
    let write = |name: &str, steps: Vec<tf::Feature>| {
        let path = dir.path().join(name);
        let mut lists = tf::FeatureLists::default();
        lists
            .feature_list
            .insert("w".into(), tf::FeatureList { feature: steps });
        let rec = tf::SequenceExample {
            context: None,
            feature_lists: Some(lists),
        };
        let mut w = RecordWriter::create(&path, WriterOptions::new()).expect("create");
        w.write(&rec.encode_to_vec()).expect("write");
        w.finish().expect("finish");
        path
    };
    let short = write("short.tfrecord", vec![floats(vec![1.0]), floats(vec![])]);
    let spec = dir.path().join("s.toml");
    std::fs::write(
        &spec,
        "[records.S]\nkind = \"sequence_example\"\n[records.S.sequence.w]\ndtype = \"float\"\nshape = [1]\n",
    )
    .expect("spec");
    let pq = dir.path().join("o.parquet");
    let err = fails(&run(&[
        "to-parquet",
        "--spec",
        s(&spec),
        s(&short),
        "-o",
        s(&pq),
    ]));
    assert!(err.contains("\"w\""), "{err}");
    assert!(err.contains("step 1: expected 1 value, found 0"), "{err}");

    let mixed = write("mixed.tfrecord", vec![ints(vec![1]), floats(vec![2.0])]);
    let err = unsuccessful(&run(&["to-parquet", "--sequence", s(&mixed), "-o", s(&pq)]));
    assert!(err.contains("(record 0), step 0"), "{err}");
    assert!(err.contains("(record 0), step 1"), "{err}");
}

/// A batch of rows that fails to read is read again in smaller ones: the error names the row
/// of the damaged page, not the first row of a batch of 8192 (and a batch too large for
/// Arrow's 32-bit offsets is read the same way, in batches that fit).
#[test]
fn a_damaged_page_is_named_by_its_first_row() {
    use tfrecord_arrow::parquet::file::properties::{EnabledStatistics, WriterProperties};
    use tfrecord_arrow::parquet::file::serialized_reader::ReadOptionsBuilder;
    let dir = tempfile::tempdir().expect("temp dir");
    let pq = dir.path().join("ids.parquet");
    let ids = tfrecord_arrow::arrow_array::Int64Array::from_iter_values(0..20_000);
    let batch = tfrecord_arrow::arrow_array::RecordBatch::try_from_iter([(
        "id",
        std::sync::Arc::new(ids) as tfrecord_arrow::arrow_array::ArrayRef,
    )])
    .expect("batch");
    // Pages of 1000 rows, plain values, with an offset index saying where each starts.
    let props = WriterProperties::builder()
        .set_write_batch_size(1000)
        .set_data_page_row_count_limit(1000)
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::Page)
        .build();
    let file = File::create(&pq).expect("create");
    let mut w =
        tfrecord_arrow::parquet::arrow::ArrowWriter::try_new(file, batch.schema(), Some(props))
            .expect("writer");
    w.write(&batch).expect("write");
    w.close().expect("close");

    let options = ReadOptionsBuilder::new().with_page_index().build();
    let reader = SerializedFileReader::new_with_options(File::open(&pq).expect("open"), options)
        .expect("reader");
    let pages = reader.metadata().offset_index().expect("an offset index")[0][0]
        .page_locations()
        .clone();
    let page = pages
        .iter()
        .find(|p| p.first_row_index == 13_000)
        .expect("a page starting at row 13000");
    // The page's header overwritten: its page cannot be read.
    let mut bytes = std::fs::read(&pq).expect("read");
    let at = usize::try_from(page.offset).expect("offset");
    bytes[at..at + 16].fill(0xff);
    std::fs::write(&pq, &bytes).expect("write");

    let err = fails(&run(&[
        "from-parquet",
        s(&pq),
        "-o",
        s(&dir.path().join("ids.tfrecord")),
    ]));
    assert!(err.contains("ids.parquet"), "{err}");
    assert!(err.contains("(reading row 13000 of the file)"), "{err}");
    assert!(!dir.path().join("ids.tfrecord").exists());
}

/// An inferred spec holds at most `--max-features` keys (10,000 by default): a record past it
/// is an error naming it, in `infer` and in `to-parquet`; and a file of more than 1,000 columns
/// is written without dictionaries (Parquet's writer sets one up for each column, at about
/// 70 KiB each, before any value).
#[test]
fn wide_records_are_bounded() {
    let dir = tempfile::tempdir().expect("temp dir");
    let write = |name: &str, keys: usize, records: usize| {
        let path = dir.path().join(name);
        let mut w = RecordWriter::create(&path, WriterOptions::new()).expect("create");
        for r in 0..records {
            let feature = (0..keys)
                .map(|k| {
                    let v = i64::try_from(r * keys + k).expect("small");
                    let kind = tf::feature::Kind::Int64List(tf::Int64List { value: vec![v] });
                    (format!("k{k:05}"), tf::Feature { kind: Some(kind) })
                })
                .collect();
            let e = tf::Example {
                features: Some(tf::Features { feature }),
            };
            w.write(&e.encode_to_vec()).expect("write");
        }
        w.finish().expect("finish");
        path
    };
    let narrow = write("narrow.tfrecord", 12, 3);
    let out = dir.path().join("o.parquet");
    for cmd in [&["infer"][..], &["to-parquet", "-o", s(&out)]] {
        let err = fails(&run(&[cmd, &["--max-features", "11", s(&narrow)]].concat()));
        assert!(
            err.contains("more than 11 distinct feature keys (12 by this record)")
                && err.contains("at byte 0 (record 0)")
                && err.contains("--max-features"),
            "{cmd:?}: {err}"
        );
    }
    assert!(!out.exists(), "no output is left");
    ok(&run(&[
        "to-parquet",
        "--max-features",
        "12",
        s(&narrow),
        "-o",
        s(&out),
    ]));

    // Dictionary encoding up to 1,000 columns, plain beyond.
    let uses_dictionary = |path: &Path| {
        let reader = SerializedFileReader::new(File::open(path).expect("open")).expect("read");
        let meta = reader.metadata().row_group(0).column(0).clone();
        meta.dictionary_page_offset().is_some()
    };
    for (keys, dictionary) in [(1_000, true), (1_001, false)] {
        let wide = write(&format!("wide{keys}.tfrecord"), keys, 2);
        let out = dir.path().join(format!("wide{keys}.parquet"));
        ok(&run(&["to-parquet", s(&wide), "-o", s(&out)]));
        assert_eq!(uses_dictionary(&out), dictionary, "{keys} columns");
        let rows = SerializedFileReader::new(File::open(&out).expect("open"))
            .expect("read")
            .metadata()
            .file_metadata()
            .num_rows();
        assert_eq!(rows, 2);
    }
}

/// pandas writes an unnamed index as a column `__index_level_0__` and lists it in the file's
/// `pandas` metadata; `pd.read_parquet` gives it back as the index, not as data. It is left
/// out of the records, with a note, with or without a spec; a column of that name that the
/// metadata does not list is data.
#[test]
fn a_pandas_index_column_is_not_a_feature() {
    use std::collections::HashMap;
    use std::sync::Arc;
    use tfrecord_arrow::arrow_array::{ArrayRef, Int64Array, RecordBatch};
    use tfrecord_arrow::arrow_schema::{DataType, Field, Schema};

    let dir = tempfile::tempdir().expect("temp dir");
    let file = |name: &str, listed: bool| {
        let pandas = if listed {
            r#"{"index_columns": ["__index_level_0__"], "column_indexes": [], "columns": []}"#
        } else {
            r#"{"index_columns": [], "column_indexes": [], "columns": []}"#
        };
        let metadata = HashMap::from([("pandas".to_string(), pandas.to_string())]);
        let schema = Schema::new(vec![
            Field::new("a", DataType::Int64, false),
            Field::new("__index_level_0__", DataType::Int64, false),
        ])
        .with_metadata(metadata);
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(vec![1, 2, 3])),
            Arc::new(Int64Array::from(vec![10, 20, 30])),
        ];
        let batch = RecordBatch::try_new(Arc::new(schema), columns).expect("batch");
        let path = dir.path().join(name);
        write_parquet(&path, &batch);
        path
    };
    let indexed = file("indexed.parquet", true);
    let out = dir.path().join("o.tfrecord");
    let o = run(&["from-parquet", s(&indexed), "-o", s(&out)]);
    ok(&o);
    assert!(
        support::stderr(&o).contains("column `__index_level_0__` is the pandas index"),
        "{}",
        support::stderr(&o)
    );
    let lines = json_lines(s(&out), &[]);
    assert_eq!(lines.len(), 3);
    for (line, want) in lines.iter().zip([1, 2, 3]) {
        let features = &line["features"]["feature"];
        assert_eq!(features.as_object().map(|o| o.len()), Some(1), "{line}");
        assert_eq!(features["a"]["int64List"]["value"][0], want.to_string());
    }
    let spec = dir.path().join("a.toml");
    std::fs::write(&spec, "[records.R.features.a]\ndtype = \"int64\"\n").expect("write spec");
    let out2 = dir.path().join("o2.tfrecord");
    ok(&run(&[
        "from-parquet",
        "--spec",
        s(&spec),
        s(&indexed),
        "-o",
        s(&out2),
    ]));
    assert_eq!(json_lines(s(&out2), &[]), lines);
    // Not listed as the index: a column like any other.
    let plain = file("plain.parquet", false);
    let out3 = dir.path().join("o3.tfrecord");
    ok(&run(&["from-parquet", s(&plain), "-o", s(&out3)]));
    let lines = json_lines(s(&out3), &[]);
    assert_eq!(
        lines[0]["features"]["feature"]["__index_level_0__"]["int64List"]["value"][0],
        "10"
    );
}

/// Files read out of a partitioned table's directories (`k=x/`) lose the partition's value,
/// which only the directory's name holds: a note says so.
#[test]
fn files_in_partition_directories_are_noted() {
    use std::sync::Arc;
    use tfrecord_arrow::arrow_array::{ArrayRef, Int64Array, RecordBatch};
    use tfrecord_arrow::arrow_schema::{DataType, Field, Schema};

    let dir = tempfile::tempdir().expect("temp dir");
    for part in ["k=x", "k=y"] {
        std::fs::create_dir(dir.path().join(part)).expect("mkdir");
        let schema = Schema::new(vec![Field::new("a", DataType::Int64, false)]);
        let column: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
        let batch = RecordBatch::try_new(Arc::new(schema), vec![column]).expect("batch");
        write_parquet(&dir.path().join(part).join("part-0.parquet"), &batch);
    }
    let out = dir.path().join("o.tfrecord");
    let pattern = format!("{}/*/*.parquet", s(dir.path()));
    let o = run(&["from-parquet", &pattern, "-o", s(&out)]);
    ok(&o);
    let err = support::stderr(&o);
    assert!(
        err.contains("partition directories (k=...)") && err.contains("do not hold `k`"),
        "{err}"
    );
    assert_eq!(json_lines(s(&out), &[]).len(), 4);
    // The directory itself is refused, saying why.
    let err = fails(&run(&[
        "from-parquet",
        s(dir.path()),
        "-o",
        s(&out),
        "--force",
    ]));
    assert!(err.contains("partitioned tables are not read"), "{err}");
}

/// Without `--spec`, to-parquet reads its inputs twice: a FIFO, which cannot be read twice, is
/// refused as standard input is (it once waited for a writer for ever).
#[cfg(unix)]
#[test]
fn to_parquet_without_a_spec_refuses_a_fifo() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("in.tfrecord");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        return; // no mkfifo here: nothing to check
    }
    let out = dir.path().join("o.parquet");
    let o = run(&["to-parquet", s(&fifo), "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(2), "{}", support::stderr(&o));
    assert!(
        support::stderr(&o).contains("cannot give twice (it is not a file): pass --spec"),
        "{}",
        support::stderr(&o)
    );
}
