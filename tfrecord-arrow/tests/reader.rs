//! `ArrowReader`: a file read as batches, equal to decoding its records at once, with errors
//! located in the file.

use tfrecord_arrow::arrow_array::RecordBatchReader;
use tfrecord_arrow::arrow_array::cast::AsArray;
use tfrecord_arrow::arrow_array::types::Int64Type;
use tfrecord_arrow::{ArrowDecoder, ArrowReader};
use tfrecord_core::proto::tensorflow as tf;
use tfrecord_core::{Format, Message, ReaderOptions, RecordWriter, WriterOptions};
use tfrecord_schema::ir::{Record, Schema};

fn record() -> Record {
    let spec = "[records.R.features.id]\ndtype = \"int64\"\n\
                [records.R.features.name]\ndtype = \"string\"\noptional = true\n";
    Schema::from_toml_str(spec, "spec.toml")
        .expect("spec")
        .records
        .remove(0)
}

fn example(id: i64, name: &[u8]) -> Vec<u8> {
    let mut f = tf::Features::default();
    let kind = tf::feature::Kind::Int64List(tf::Int64List { value: vec![id] });
    f.feature
        .insert("id".into(), tf::Feature { kind: Some(kind) });
    let kind = tf::feature::Kind::BytesList(tf::BytesList {
        value: vec![name.to_vec()],
    });
    f.feature
        .insert("name".into(), tf::Feature { kind: Some(kind) });
    tf::Example { features: Some(f) }.encode_to_vec()
}

#[test]
fn batches_of_a_file_are_the_records_decoded_at_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("d.tfrecord");
    let records: Vec<Vec<u8>> = (0..2500).map(|i| example(i, b"n")).collect();
    let mut w = RecordWriter::create(&path, WriterOptions::new()).expect("create");
    for r in &records {
        w.write(r).expect("write");
    }
    w.finish().expect("finish");

    let reader = ArrowReader::open(&path, &record(), ReaderOptions::new())
        .expect("open")
        .with_batch_size(1000);
    let schema = RecordBatchReader::schema(&reader);
    let batches: Vec<_> = reader.map(|b| b.expect("batch")).collect();
    assert_eq!(
        batches.iter().map(|b| b.num_rows()).collect::<Vec<_>>(),
        vec![1000, 1000, 500]
    );
    assert!(batches.iter().all(|b| b.schema() == schema));
    let all = ArrowDecoder::new(&record(), Format::TfRecord)
        .expect("decoder")
        .decode(&records, 0)
        .expect("decode");
    let joined = arrow_select::concat::concat_batches(&schema, &batches).expect("concat");
    assert_eq!(joined, all);
    let ids = joined.column(0).as_primitive::<Int64Type>();
    assert_eq!(ids.value(2499), 2499);
}

#[test]
fn errors_name_the_file_offset_record_and_key() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bad.tfrecord");
    let mut w = RecordWriter::create(&path, WriterOptions::new()).expect("create");
    let mut offset = 0u64;
    let mut bad_offset = 0;
    for i in 0..30 {
        let r = example(i, if i == 17 { b"\xff" } else { b"ok" });
        if i == 17 {
            bad_offset = offset;
        }
        offset += 16 + r.len() as u64;
        w.write(&r).expect("write");
    }
    w.finish().expect("finish");
    let mut reader = ArrowReader::open(&path, &record(), ReaderOptions::new())
        .expect("open")
        .with_batch_size(10);
    assert_eq!(
        reader
            .next_batch()
            .expect("first batch")
            .map(|b| b.num_rows()),
        Some(10)
    );
    let err = reader
        .next_batch()
        .expect_err("the second batch holds the bad record");
    assert_eq!(err.record(), Some(17));
    assert_eq!(err.offset(), Some(bad_offset));
    assert_eq!(err.key(), Some("name"));
    assert_eq!(err.path(), Some(path.as_path()));
}

/// A derived type whose feature keys are not its Rust names: the spec kept in the schema's
/// metadata names the features by key, so that the batch is encoded back to the same records.
#[test]
fn the_spec_of_a_derived_type_names_features_by_key() {
    use tfrecord_arrow::{ArrowEncoder, record_from_schema};
    use tfrecord_core::Example;

    #[derive(Example, Debug, PartialEq)]
    struct Renamed {
        id: i64,
        #[example(key = "x/name")]
        name: Option<String>,
        #[example(key = "image/encoded")]
        image: Vec<u8>,
    }
    let decoder = ArrowDecoder::for_type::<Renamed>(Format::TfRecord, Default::default())
        .expect("the type's columns");
    let values = [
        Renamed {
            id: 1,
            name: Some("a".into()),
            image: vec![1, 2],
        },
        Renamed {
            id: 2,
            name: None,
            image: vec![],
        },
    ];
    let records: Vec<Vec<u8>> = values
        .iter()
        .map(tfrecord_core::Encode::<tfrecord_core::TfExample>::encode_to_vec)
        .collect();
    let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    let batch = decoder.decode(&refs, 0).expect("decodes");
    let names: Vec<&str> = batch
        .schema_ref()
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .collect();
    assert_eq!(names, ["id", "x/name", "image/encoded"]);
    let spec = record_from_schema(&batch.schema(), "Renamed").expect("the spec in the metadata");
    let keys: Vec<&str> = spec.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(keys, ["id", "x/name", "image/encoded"]);
    let encoder = ArrowEncoder::new(&spec, Format::TfRecord).expect("an encoder from the spec");
    let mut decoded: Vec<Renamed> = Vec::new();
    encoder
        .encode(&batch, 0, |b| {
            decoded.push(tfrecord_core::Decode::<tfrecord_core::TfExample>::decode(
                b,
            )?);
            Ok(())
        })
        .expect("encodes");
    assert_eq!(decoded, values);
    // The type's own encoder writes the same records back (their map entries sorted by key).
    let mut again: Vec<Renamed> = Vec::new();
    ArrowEncoder::for_type::<Renamed>(Format::TfRecord)
        .expect("an encoder of the type")
        .encode(&batch, 0, |b| {
            again.push(tfrecord_core::Decode::<tfrecord_core::TfExample>::decode(
                b,
            )?);
            Ok(())
        })
        .expect("encodes");
    assert_eq!(again, values);
}

#[test]
fn a_decoder_of_another_format_than_the_reader_is_an_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("d.tfrecord");
    let mut w = RecordWriter::create(&path, WriterOptions::new()).expect("create");
    w.write(&example(1, b"n")).expect("write");
    w.finish().expect("finish");
    let reader = tfrecord_core::RecordReader::open(&path, ReaderOptions::new()).expect("open");
    let decoder = ArrowDecoder::new(&record(), Format::OfRecord).expect("decoder");
    let mut arrow = ArrowReader::new(reader, decoder);
    let e = arrow.next_batch().expect_err("formats differ");
    let text = e.to_string();
    assert!(
        text.contains("reads tfrecord files") && text.contains("decodes ofrecord records"),
        "{text}"
    );
    assert!(text.contains("d.tfrecord"), "{text}");
    assert!(arrow.next_batch().expect("ends").is_none());
}

/// Under a policy that skips, records that do not decode by the spec are skipped and reported,
/// and every other record is in a batch once, in order.
#[test]
fn records_that_do_not_decode_are_skipped_under_a_skipping_policy() {
    use tfrecord_arrow::arrow_array::Array;
    use tfrecord_core::BadRecords;

    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("d.tfrecord");
    // `name` is a string feature: a bytes value that is not UTF-8 does not decode.
    let bad = [0usize, 5, 6, 9, 10, 11, 24];
    let mut w = RecordWriter::create(&path, WriterOptions::new()).expect("create");
    for i in 0..25 {
        let name: &[u8] = if bad.contains(&i) { b"\xff" } else { b"ok" };
        w.write(&example(i64::try_from(i).expect("small"), name))
            .expect("write");
    }
    w.finish().expect("finish");
    for size in [1, 3, 4, 7, 100] {
        let policy = BadRecords::skip(bad.len() as u64).shared_log();
        let opts = ReaderOptions::new().bad_records(policy.clone());
        let reader = ArrowReader::open(&path, &record(), opts)
            .expect("open")
            .with_batch_size(size);
        let mut ids = Vec::new();
        for batch in reader {
            let batch = batch.expect("a batch");
            assert!(batch.num_rows() > 0 && batch.num_rows() <= size);
            let col = batch.column(0).as_primitive::<Int64Type>();
            assert_eq!(col.null_count(), 0);
            ids.extend(col.values().iter().copied());
        }
        let want: Vec<i64> = (0..25)
            .filter(|i| !bad.contains(i))
            .map(|i| i64::try_from(i).expect("small"))
            .collect();
        assert_eq!(ids, want, "batches of {size}");
        let skipped: Vec<u64> = policy.take_logged().iter().map(|s| s.offset()).collect();
        assert_eq!(skipped.len(), bad.len(), "batches of {size}: {skipped:?}");
    }
    // One record fewer in the budget: an error naming the last one.
    let opts = ReaderOptions::new().bad_records(BadRecords::skip(bad.len() as u64 - 1));
    let reader = ArrowReader::open(&path, &record(), opts).expect("open");
    let err = reader
        .into_iter()
        .find_map(Result::err)
        .expect("the budget is spent");
    assert!(err.to_string().contains("record 24"), "{err}");
}

/// A derived field with no column (a user enum, a flattened struct) is an error naming it, not
/// a schema without it: its values would be missing from every batch.
#[test]
fn a_derived_field_with_no_column_is_an_error_naming_it() {
    use tfrecord_core::{Example, Reader};

    #[derive(Example, Debug, PartialEq, Clone, Copy)]
    enum Color {
        Red,
    }
    #[derive(Example, Debug, PartialEq)]
    struct Colored {
        id: i64,
        color: Color,
    }
    #[derive(Example, Debug, PartialEq)]
    struct Inner {
        a: i64,
    }
    #[derive(Example, Debug, PartialEq)]
    struct Outer {
        id: i64,
        #[example(flatten)]
        inner: Inner,
        #[example(skip)]
        cache: i64,
    }
    let err = ArrowDecoder::for_type::<Colored>(Format::TfRecord, Default::default())
        .expect_err("no column for an enum");
    assert_eq!(err.key(), Some("color"), "{err}");
    assert!(err.to_string().contains("Colored::color"), "{err}");
    let err = ArrowDecoder::for_type::<Outer>(Format::TfRecord, Default::default())
        .expect_err("no column for a flattened struct");
    assert!(err.to_string().contains("Outer::inner") && err.to_string().contains("flattened"));

    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("colored.tfrecord");
    let mut w = tfrecord_core::Writer::<Colored>::create(&path).expect("creates");
    w.write(&Colored {
        id: 1,
        color: Color::Red,
    })
    .expect("writes");
    w.finish().expect("finishes");
    let reader = Reader::<Colored>::open(&path).expect("opens");
    assert!(reader.batches(8).is_err());
    // As values, every field is read.
    let values: Vec<Colored> = Reader::<Colored>::open(&path)
        .expect("opens")
        .collect::<Result<_, _>>()
        .expect("reads");
    assert_eq!(
        values,
        [Colored {
            id: 1,
            color: Color::Red
        }]
    );
}

/// Records skipped whole by the policy (a damaged frame) do not shift the record index an
/// error names, nor move a record into another's row.
#[test]
fn errors_after_a_skipped_frame_name_the_right_record() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("d.tfrecord");
    let records: Vec<Vec<u8>> = (0..6)
        .map(|i| {
            if i == 3 {
                example(i, b"\xff")
            } else {
                example(i, b"n")
            }
        })
        .collect();
    let mut w = RecordWriter::create(&path, WriterOptions::new()).expect("create");
    let mut offsets = Vec::new();
    let mut at = 0u64;
    for r in &records {
        offsets.push(at);
        at += r.len() as u64 + 16;
        w.write(r).expect("write");
    }
    w.finish().expect("finish");
    // Record 1's data checksum fails: skipped whole, under a budget of one.
    let mut bytes = std::fs::read(&path).expect("read");
    bytes[usize::try_from(offsets[1]).expect("small") + 12] ^= 0x40;
    std::fs::write(&path, &bytes).expect("write");
    let opts = || ReaderOptions::new().bad_records(tfrecord_core::BadRecords::skip(1));
    let mut reader = ArrowReader::open(&path, &record(), opts()).expect("open");
    let mut ids: Vec<i64> = Vec::new();
    let err = loop {
        match reader.next_batch() {
            Ok(Some(b)) => ids.extend(b.column(0).as_primitive::<Int64Type>().values().iter()),
            Ok(None) => panic!("the budget is spent at record 3"),
            Err(e) => break e,
        }
    };
    assert_eq!(ids, [0, 2]);
    assert_eq!(
        (err.offset(), err.record()),
        (Some(offsets[3]), Some(3)),
        "{err}"
    );
    // With room in the budget, every other record, each in its own row.
    let opts = ReaderOptions::new().bad_records(tfrecord_core::BadRecords::skip(2));
    let reader = ArrowReader::open(&path, &record(), opts).expect("open");
    let ids: Vec<i64> = reader
        .map(|b| b.expect("batch"))
        .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
        .collect();
    assert_eq!(ids, [0, 2, 4, 5]);
}

/// A batch of large records ends once they reach `MAX_BATCH_BYTES`, before its record count:
/// memory stays bounded, and no column holds more than Arrow's 2^31 bytes.
#[test]
fn a_batch_of_large_records_ends_at_max_batch_bytes() {
    let big = vec![b'a'; tfrecord_arrow::MAX_BATCH_BYTES / 5];
    let mut file = Vec::new();
    let mut w = RecordWriter::new(&mut file, WriterOptions::new());
    for i in 0..7 {
        w.write(&example(i, &big)).expect("write");
    }
    w.finish().expect("finish");
    let reader = tfrecord_core::RecordReader::new(file.as_slice(), ReaderOptions::new());
    let decoder = ArrowDecoder::new(&record(), Format::TfRecord).expect("decoder");
    let rows: Vec<usize> = ArrowReader::new(reader, decoder)
        .map(|b| b.expect("batch").num_rows())
        .collect();
    // Each record is a fifth of the bound and its headers: the fifth brings the batch past it.
    assert_eq!(rows, vec![5, 2]);
}
