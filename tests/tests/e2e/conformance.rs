//! Reading the files recorded from real TensorFlow and protobuf, and comparing every record with
//! what those implementations said the records hold.

use serde_json::Value;
use tfrecord_core::proto::{oneflow, tensorflow};
use tfrecord_core::{Compression, ErrorKind, Format, Message, ReaderOptions, RecordReader};
use tfrecord_dataset::expand_path;

use crate::support::{
    check_of_feature, check_tf_feature, check_tf_features, fixture, load_json, raw_records,
    read_all, sha256, to_hex,
};

/// The `files` map of a JSON fixture: file name and compression name.
fn files(json: &Value) -> Vec<(String, String)> {
    json["files"]
        .as_object()
        .expect("files object")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().expect("compression name").to_string()))
        .collect()
}

/// Reads a whole fixture with the compression its name implies, asserting no error.
fn read_fixture(name: &str, opts: ReaderOptions) -> Vec<Vec<u8>> {
    let path = fixture(name);
    let reader = RecordReader::open(&path, opts).expect("fixture opens");
    let (records, err) = read_all(reader);
    assert!(err.is_none(), "{name}: {}", err.expect("checked"));
    records
}

#[test]
fn raw_records_read_back_exactly() {
    let json = load_json("raw_records.json");
    let expected = raw_records();
    let sizes: Vec<usize> = expected.iter().map(Vec::len).collect();
    assert_eq!(sizes, [0, 1, 14, 100_000, 17, 2743]);
    let listed = files(&json);
    assert_eq!(listed.len(), 3);
    for (name, compression) in listed {
        let path = fixture(&name);
        let guessed = Compression::from_path(&path);
        assert_eq!(
            Some(guessed),
            Compression::parse(&compression),
            "{name}: compression from the file name"
        );
        let mut reader =
            RecordReader::open(&path, ReaderOptions::new().compression(guessed)).expect("opens");
        let mut records = Vec::new();
        let mut buf = Vec::new();
        while reader.read_into(&mut buf).expect("no error") {
            records.push(buf.clone());
        }
        assert_eq!(records, expected, "{name}");
        assert_eq!(reader.records_read(), 6);
        // Offsets count the decompressed stream: 16 bytes of framing per record.
        let framed: u64 = expected.iter().map(|r| r.len() as u64 + 16).sum();
        assert_eq!(reader.offset(), framed, "{name}");
        assert_eq!(reader.path(), Some(path.as_path()));
        // A clean end stays a clean end.
        assert!(!reader.read_into(&mut buf).expect("still fine"));
        assert!(buf.is_empty());
    }
    assert_eq!(
        std::fs::metadata(fixture("raw_records.tfrecord"))
            .expect("exists")
            .len(),
        102_871
    );
}

#[test]
fn raw_records_with_odd_buffer_sizes_and_for_path() {
    let expected = raw_records();
    for name in [
        "raw_records.tfrecord",
        "raw_records.tfrecord.gz",
        "raw_records.tfrecord.zlib",
    ] {
        for size in [1, 64, 65, 1000, 4099, 100_016] {
            let opts = ReaderOptions::for_path(name).buffer_size(size);
            assert_eq!(read_fixture(name, opts), expected, "{name} buffer {size}");
        }
        // A reader over any `Read`, not a file: the remaining size is unknown.
        let bytes = std::fs::read(fixture(name)).expect("read");
        let reader = RecordReader::new(&bytes[..], ReaderOptions::for_path(name));
        let (records, err) = read_all(reader);
        assert!(err.is_none(), "{name}");
        assert_eq!(records, expected, "{name} from memory");
    }
}

#[test]
fn compressed_fixtures_without_data_crc_check() {
    let expected = raw_records();
    for name in ["raw_records.tfrecord.gz", "raw_records.tfrecord.zlib"] {
        let opts = ReaderOptions::for_path(name).verify_data_crc(false);
        assert_eq!(read_fixture(name, opts), expected, "{name}");
    }
    let opts = ReaderOptions::for_path("examples.tfrecord.gz").verify_data_crc(false);
    let gz = read_fixture("examples.tfrecord.gz", opts);
    let plain = read_fixture("examples.tfrecord", ReaderOptions::new());
    assert_eq!(gz, plain);
}

#[test]
fn examples_decode_to_the_recorded_features() {
    let json = load_json("examples.json");
    let expected = json["examples"].as_array().expect("examples array");
    assert_eq!(expected.len(), 42);
    let listed = files(&json);
    assert_eq!(listed.len(), 2);
    for (name, compression) in listed {
        assert_eq!(
            Compression::parse(&compression),
            Some(Compression::from_path(&name))
        );
        let records = read_fixture(&name, ReaderOptions::for_path(&name));
        assert_eq!(records.len(), expected.len(), "{name}");
        for (i, (record, want)) in records.iter().zip(expected).enumerate() {
            let example = tensorflow::Example::decode(&record[..])
                .unwrap_or_else(|e| panic!("{name} record {i}: {e}"));
            check_tf_features(
                example.features.as_ref(),
                want,
                &format!("{name} record {i}"),
            );
        }
        // The last record is empty: an Example with no features message at all.
        let last = records.last().expect("records");
        assert!(last.is_empty());
        assert_eq!(
            tensorflow::Example::decode(&last[..]).expect("decodes"),
            tensorflow::Example { features: None }
        );
        assert!(expected[41].as_object().expect("object").is_empty());
    }
}

/// The special cases of `examples.tfrecord`, asserted directly as well, so that the generic
/// comparison above cannot silently pass on them.
#[test]
fn examples_special_values() {
    use tensorflow::feature::Kind;
    let records = read_fixture("examples.tfrecord", ReaderOptions::new());
    let examples: Vec<tensorflow::Example> = records
        .iter()
        .map(|r| tensorflow::Example::decode(&r[..]).expect("decodes"))
        .collect();
    let feature = |i: usize, key: &str| -> &tensorflow::Feature {
        &examples[i].features.as_ref().expect("features").feature[key]
    };

    let Some(Kind::FloatList(special_f)) = &feature(40, "special_f").kind else {
        panic!("special_f is a float list");
    };
    let bits: Vec<u32> = special_f.value.iter().map(|f| f.to_bits()).collect();
    assert_eq!(
        bits,
        [
            0,
            0x8000_0000,
            1.5f32.to_bits(),
            (-3.25f32).to_bits(),
            0x7fc0_0000,
            f32::INFINITY.to_bits(),
            f32::NEG_INFINITY.to_bits(),
            f32::MAX.to_bits(),
            1,
        ]
    );
    assert!(special_f.value[1].is_sign_negative() && special_f.value[1] == 0.0);
    assert!(special_f.value[4].is_nan());

    let Some(Kind::Int64List(special_i)) = &feature(40, "special_i").kind else {
        panic!("special_i is an int64 list");
    };
    assert_eq!(
        special_i.value,
        [
            0,
            1,
            -1,
            i64::MAX,
            i64::MIN,
            300,
            -300,
            2_147_483_648,
            -2_147_483_649
        ]
    );

    let Some(Kind::BytesList(big)) = &feature(40, "big_bytes").kind else {
        panic!("big_bytes is a bytes list");
    };
    assert_eq!(big.value.len(), 1);
    assert_eq!(big.value[0].len(), 1 << 20);
    assert_eq!(
        to_hex(&sha256(&big.value[0])),
        "057f5402351b9b6a9a74e97109de6fb3658cc36f404ad7ad1e8436ebd2300d8d"
    );

    let Some(Kind::BytesList(many)) = &feature(40, "many_bytes").kind else {
        panic!("many_bytes is a bytes list");
    };
    assert!(many.value.len() > 100);
    assert!(many.value.iter().any(Vec::is_empty));
    assert_eq!(many.value[2], [0x6c, 0xf2]);

    // Features whose kind is not set, and empty lists of each kind.
    let unset: Vec<usize> = (0..examples.len())
        .filter(|&i| {
            examples[i]
                .features
                .as_ref()
                .and_then(|f| f.feature.get("unset_kind"))
                .is_some_and(|f| f.kind.is_none())
        })
        .collect();
    assert_eq!(unset, [3, 10, 17, 24, 31, 38]);
    assert_eq!(
        feature(2, "empty_bytes").kind,
        Some(Kind::BytesList(tensorflow::BytesList { value: vec![] }))
    );
    assert_eq!(
        feature(2, "empty_floats").kind,
        Some(Kind::FloatList(tensorflow::FloatList { value: vec![] }))
    );
    assert_eq!(
        feature(2, "empty_ints").kind,
        Some(Kind::Int64List(tensorflow::Int64List { value: vec![] }))
    );
    let Some(Kind::BytesList(unicode)) = &feature(0, "ünïcode/ключ").kind else {
        panic!("the non-ASCII key holds bytes");
    };
    assert_eq!(unicode.value, [("värde ✓".as_bytes()).to_vec()]);
    assert_eq!(examples[41], tensorflow::Example::default());
}

#[test]
fn sequence_examples_decode_to_the_recorded_features() {
    let json = load_json("sequence.json");
    assert_eq!(
        files(&json),
        [("sequence.tfrecord".to_string(), "none".to_string())]
    );
    let expected = json["sequence_examples"].as_array().expect("array");
    let records = read_fixture("sequence.tfrecord", ReaderOptions::new());
    assert_eq!(records.len(), 12);
    assert_eq!(records.len(), expected.len());
    for (i, (record, want)) in records.iter().zip(expected).enumerate() {
        let what = format!("sequence record {i}");
        let seq = tensorflow::SequenceExample::decode(&record[..]).expect("decodes");
        check_tf_features(seq.context.as_ref(), &want["context"], &what);
        let lists = seq.feature_lists.expect("feature_lists present");
        let want_lists = want["feature_lists"].as_object().expect("object");
        let keys: Vec<&String> = lists.feature_list.keys().collect();
        let want_keys: Vec<&String> = want_lists.keys().collect();
        assert_eq!(keys, want_keys, "{what}");
        for (key, list) in &lists.feature_list {
            let want_list = want_lists[key].as_array().expect("array");
            assert_eq!(list.feature.len(), want_list.len(), "{what} {key}");
            for (j, (feature, want_feature)) in list.feature.iter().zip(want_list).enumerate() {
                check_tf_feature(feature, want_feature, &format!("{what} {key}[{j}]"));
            }
        }
    }
    // Record 0 has both feature lists present but empty.
    let first = tensorflow::SequenceExample::decode(&records[0][..]).expect("decodes");
    let lists = first.feature_lists.expect("present");
    assert_eq!(lists.feature_list.len(), 2);
    assert!(lists.feature_list.values().all(|l| l.feature.is_empty()));
}

#[test]
fn ofrecords_decode_to_the_recorded_features() {
    let json = load_json("ofrecord.json");
    assert_eq!(
        files(&json),
        [("part-00000".to_string(), "ofrecord".to_string())]
    );
    let expected = json["records"].as_array().expect("array");
    let opts = ReaderOptions::new().format(Format::parse("ofrecord").expect("format"));
    let records = read_fixture("part-00000", opts);
    assert_eq!(records.len(), 10);
    assert_eq!(records.len(), expected.len());
    for (i, (record, want)) in records.iter().zip(expected).enumerate() {
        let what = format!("part-00000 record {i}");
        let rec = oneflow::OfRecord::decode(&record[..]).expect("decodes");
        let want = want.as_object().expect("object");
        let keys: Vec<&String> = rec.feature.keys().collect();
        let want_keys: Vec<&String> = want.keys().collect();
        assert_eq!(keys, want_keys, "{what}");
        for (key, feature) in &rec.feature {
            check_of_feature(feature, &want[key], &format!("{what}[{key:?}]"));
        }
    }
    // A few values directly: pi as a double, and the int32 list of record 0.
    use oneflow::feature::Kind;
    let rec = oneflow::OfRecord::decode(&records[0][..]).expect("decodes");
    let Some(Kind::DoubleList(prec)) = &rec.feature["prec"].kind else {
        panic!("prec is a double list");
    };
    assert_eq!(prec.value[1].to_bits(), std::f64::consts::PI.to_bits());
    let Some(Kind::Int32List(ids)) = &rec.feature["ids32"].kind else {
        panic!("ids32 is an int32 list");
    };
    assert_eq!(ids.value, [-692_075_608, 1_579_616_060, -170_104_465]);
}

#[test]
fn ofrecord_directory_lists_its_parts() {
    // The fixtures hold TFRecord files beside OneFlow's part: which kind the directory stands
    // for cannot be told, and a pattern says.
    let err = expand_path(crate::support::FIXTURES).expect_err("two kinds");
    assert!(
        matches!(err, tfrecord_dataset::Error::MixedKinds { .. }),
        "{err}"
    );
    let parts = expand_path(format!("{}/part-*", crate::support::FIXTURES)).expect("lists");
    assert_eq!(parts, [fixture("part-00000")]);
    assert_eq!(
        expand_path(fixture("part-00000")).expect("a file"),
        [fixture("part-00000")]
    );
}

#[test]
fn wrong_format_or_compression_for_a_fixture_is_an_error_naming_it() {
    // OFRecord framing read as TFRecord: the first length checksum cannot match.
    let path = fixture("part-00000");
    let (records, err) = read_all(RecordReader::open(&path, ReaderOptions::new()).expect("opens"));
    assert!(records.is_empty());
    let err = err.expect("an error");
    assert!(matches!(err.kind(), ErrorKind::NotTfRecord { .. }), "{err}");
    assert!(err.to_string().contains("part-00000"), "{err}");

    // A plain TFRecord read as gzip or zlib.
    for compression in [Compression::Gzip, Compression::Zlib] {
        let path = fixture("raw_records.tfrecord");
        let opts = ReaderOptions::new().compression(compression);
        let (records, err) = read_all(RecordReader::open(&path, opts).expect("opens"));
        assert!(records.is_empty());
        let err = err.expect("an error");
        assert!(matches!(err.kind(), ErrorKind::Compressed { .. }), "{err}");
        assert!(err.to_string().contains("corrupted"), "{err}");
        assert_eq!(err.path(), Some(path.as_path()));
        assert!(err.to_string().contains("raw_records.tfrecord"), "{err}");
    }
}
