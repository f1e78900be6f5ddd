//! Files through the typed `Writer` and `Reader`, in both containers, plain and gzip.

use std::borrow::Cow;

use tfrecord_core::proto::tensorflow;
use tfrecord_core::{
    Chunk, Encode, Error, Message, OfRecord, Reader, ReaderOptions, TfExample, TfSequenceExample,
    Writer, for_each_chunk,
};

use crate::support::attr_types::{Borrowed, Renamed, Seq, sample_seq};
use crate::support::model::{Model, SeqModel, feats_of_tf};
use crate::support::value_types::{Ints, sample_ints};

#[test]
fn typed_writer_and_reader_files_both_containers_and_gzip() {
    let dir = tempfile::tempdir().unwrap();
    let values: Vec<Ints> = (0..5).map(sample_ints).collect();
    for name in ["ints.tfrecord", "ints.tfrecord.gz"] {
        let path = dir.path().join(name);
        let mut w = Writer::<Ints>::create(&path).unwrap();
        for v in &values {
            w.write(v).unwrap();
        }
        w.finish().unwrap();
        let raw = std::fs::read(&path).unwrap();
        assert_eq!(
            raw.starts_with(&[0x1f, 0x8b]),
            name.ends_with(".gz"),
            "{name}"
        );
        let back: Vec<Ints> = Reader::<Ints>::open(&path)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, values, "{name}");
        // The records are plain tf.train.Examples.
        let records: Vec<Vec<u8>> =
            tfrecord_core::RecordReader::open(&path, tfrecord_core::ReaderOptions::for_path(&path))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
        for (r, v) in records.iter().zip(&values) {
            let e = tensorflow::Example::decode(&r[..]).unwrap();
            assert_eq!(feats_of_tf(&e), v.feats(false));
        }
    }
    for name in ["part-00000", "part-00000.gz"] {
        let path = dir.path().join(name);
        let mut w = Writer::<Ints, OfRecord>::create(&path).unwrap();
        for v in &values {
            w.write(v).unwrap();
        }
        w.finish().unwrap();
        let raw = std::fs::read(&path).unwrap();
        assert_eq!(
            raw.starts_with(&[0x1f, 0x8b]),
            name.ends_with(".gz"),
            "{name}"
        );
        if !name.ends_with(".gz") {
            // OFRecord framing: an i64 little-endian length, then the message.
            let first = Encode::<OfRecord>::encode_to_vec(&values[0]);
            assert_eq!(raw[..8], i64::try_from(first.len()).unwrap().to_le_bytes());
            assert_eq!(raw[8..8 + first.len()], first[..]);
        }
        let back: Vec<Ints> = Reader::<Ints, OfRecord>::open(&path)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, values, "{name}");
    }
    // SequenceExamples, and borrowed decoding from a reader.
    let path = dir.path().join("seq.tfrecord.gz");
    let seqs = vec![
        sample_seq(),
        Seq {
            id: 7,
            ..sample_seq()
        },
    ];
    let mut w = Writer::<Seq, TfSequenceExample>::create(&path).unwrap();
    for s in &seqs {
        w.write(s).unwrap();
    }
    w.finish().unwrap();
    let back: Vec<Seq> = Reader::<Seq, TfSequenceExample>::open(&path)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(back.len(), 2);
    assert_eq!(back[1].id, 7);
    assert_eq!(back[0].seq_feats(), seqs[0].seq_feats());

    let path = dir.path().join("borrowed.tfrecord");
    let b = Borrowed {
        raw: b"raw",
        text: "text",
        cow_b: Cow::Borrowed(b"cb"),
        cow_s: Cow::Borrowed("cs"),
        words: vec!["a", "b"],
        blobs: vec![Cow::Borrowed(b"x")],
        pair: ["p", "q"],
        opt: Some(b"o"),
        d: "d",
        db: b"db",
        dc: Cow::Borrowed(b"dc"),
        n: -1,
    };
    let mut w = Writer::<Borrowed<'_>>::create(&path).unwrap();
    w.write(&b).unwrap();
    w.write(&b).unwrap();
    w.finish().unwrap();
    let mut r = Reader::<Borrowed<'static>>::open(&path).unwrap();
    let mut n = 0;
    loop {
        let mut buf = Vec::new();
        let Some(rec) = r.next_borrowed::<Borrowed<'_>>(&mut buf) else {
            break;
        };
        assert_eq!(rec.unwrap(), b);
        n += 1;
    }
    assert_eq!(n, 2);
    // The same records decoded in place from the chunks two threads take.
    let each = |n: &mut usize, chunk: &Chunk| {
        let mut records = chunk.records();
        while let Some(rec) = records.next_decoded::<Borrowed<'_>, TfExample>()? {
            assert_eq!(rec, b);
            *n += 1;
        }
        Ok::<_, Error>(())
    };
    let counts = for_each_chunk(&path, ReaderOptions::new(), 2, || 0, each, Ok).unwrap();
    assert_eq!(counts.iter().sum::<usize>(), 2);

    // A decode error from a file names the file, the record and the key.
    let path = dir.path().join("bad.tfrecord");
    let mut w = Writer::<Ints>::create(&path).unwrap();
    w.write(&values[0]).unwrap();
    w.finish().unwrap();
    let mut r = Reader::<Renamed>::open(&path).unwrap();
    let e = r.next().unwrap().unwrap_err();
    assert_eq!(e.record(), Some(0));
    assert!(e.key().is_some());
    assert!(e.to_string().contains("bad.tfrecord"), "{e}");
    // Decoded from a chunk, the same error.
    let each = |(): &mut (), chunk: &Chunk| {
        let mut records = chunk.records();
        while records.next_decoded::<Renamed, TfExample>()?.is_some() {}
        Ok::<_, Error>(())
    };
    let in_chunk = for_each_chunk(&path, ReaderOptions::new(), 2, || (), each, Ok);
    assert_eq!(in_chunk.unwrap_err().to_string(), e.to_string());
}
