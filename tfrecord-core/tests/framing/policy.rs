//! The bad-record policies on damaged files: which records come out, and what the report says
//! was skipped, to the byte.

use tfrecord_core::proto::tensorflow;
use tfrecord_core::{
    BadRecords, Compression, Error, ErrorKind, Format, Message, ReaderOptions, RecordReader,
    SkipReason, SkipSummary,
};

use super::common::{
    APIS, Built, Outcome, build, build_as, build_compressed, drain, read_file, records, write,
};

fn fail() -> ReaderOptions {
    ReaderOptions::new()
}

fn skip(max: u64) -> ReaderOptions {
    ReaderOptions::new().bad_records(BadRecords::skip(max))
}

fn resync(max: u64) -> ReaderOptions {
    ReaderOptions::new().bad_records(BadRecords::resync(max))
}

/// Eight records of varied sizes.
fn eight() -> (Vec<Vec<u8>>, Built) {
    let recs = records(8);
    let built = build(&recs);
    (recs, built)
}

fn frame_len(recs: &[Vec<u8>], k: usize) -> u64 {
    recs[k].len() as u64 + 16
}

/// Reads `bytes` as a file with every API; all must agree. Returns one outcome.
fn read_all_ways(bytes: &[u8], opts: &ReaderOptions) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "data.tfrecord", bytes);
    let mut first: Option<Outcome> = None;
    // A fresh budget for each read: the same counts as the original.
    let fresh = || match (
        opts.get_bad_records().resyncs(),
        opts.get_bad_records().skips(),
    ) {
        (true, _) => opts
            .clone()
            .bad_records(BadRecords::resync(opts.get_bad_records().max())),
        (false, true) => opts
            .clone()
            .bad_records(BadRecords::skip(opts.get_bad_records().max())),
        _ => opts.clone(),
    };
    for api in APIS {
        // From a file, and from a stream of unknown length through a small buffer.
        let got = read_file(&path, fresh(), api);
        let piped = drain(
            RecordReader::new(bytes, fresh().buffer_size(64)).with_path(&path),
            api,
        );
        assert_eq!(got.records, piped.records, "{api:?}: file and stream agree");
        assert_eq!(got.skip_kinds(), piped.skip_kinds(), "{api:?}");
        assert_eq!(
            got.error.as_ref().map(Error::offset),
            piped.error.as_ref().map(Error::offset),
            "{api:?}"
        );
        if let Some(f) = &first {
            assert_eq!(got.records, f.records, "{api:?} agrees with the iterator");
            assert_eq!(got.skips(), f.skips(), "{api:?}");
            assert_eq!(
                got.error.as_ref().map(Error::to_string),
                f.error.as_ref().map(Error::to_string),
                "{api:?}"
            );
        } else {
            first = Some(got);
        }
    }
    first.unwrap()
}

fn data_crc(stored: u32, computed: u32) -> SkipReason {
    SkipReason::DataChecksum { stored, computed }
}

/// The stored and computed data CRCs of record `k` after its payload changed.
fn crcs(bytes: &[u8], built: &Built, recs: &[Vec<u8>], k: usize) -> (u32, u32) {
    let start = built.offsets[k] as usize + 12;
    let payload = &bytes[start..start + recs[k].len()];
    let tail = &bytes[start + recs[k].len()..start + recs[k].len() + 4];
    let stored = u32::from_le_bytes(tail.try_into().unwrap());
    (stored, tfrecord_core::crc::masked_crc32c(payload))
}

#[test]
fn a_flipped_payload_bit_is_skipped_as_one_record() {
    let (recs, built) = eight();
    let mut bytes = built.bytes.clone();
    bytes[built.offsets[3] as usize + 12 + 2] ^= 0x40;
    let (stored, computed) = crcs(&bytes, &built, &recs, 3);

    let got = read_all_ways(&bytes, &fail());
    assert_eq!(got.records, recs[..3]);
    let err = got.error.unwrap();
    assert!(matches!(
        err.kind(),
        ErrorKind::Corrupted { what: "data", .. }
    ));
    assert_eq!(
        (err.offset(), err.record()),
        (Some(built.offsets[3]), Some(3))
    );

    for opts in [skip(1), resync(1)] {
        let got = read_all_ways(&bytes, &opts);
        assert!(got.error.is_none(), "{:?}", got.error);
        let mut want = recs.clone();
        want.remove(3);
        assert_eq!(got.records, want);
        assert_eq!(
            got.skips(),
            [(
                built.offsets[3],
                Some(frame_len(&recs, 3)),
                data_crc(stored, computed)
            )]
        );
        assert!(got.skipped[0].is_record());
        let line = got.skipped[0].to_string();
        let want = format!(
            "data.tfrecord: skipped the record at byte {}",
            built.offsets[3]
        );
        assert!(line.contains(&format!("/{want}")), "{line}");
    }
}

#[test]
fn a_flipped_header_bit_fails_or_is_resynchronized_past() {
    let (recs, built) = eight();
    // In the length, then in the length's checksum.
    for at in [3, 9] {
        let mut bytes = built.bytes.clone();
        bytes[built.offsets[2] as usize + at] ^= 0x01;
        for opts in [fail(), skip(5)] {
            let got = read_all_ways(&bytes, &opts);
            assert_eq!(got.records, recs[..2]);
            let err = got.error.unwrap();
            assert!(
                matches!(err.kind(), ErrorKind::Corrupted { what: "length", .. }),
                "{err}"
            );
            assert_eq!(
                (err.offset(), err.record()),
                (Some(built.offsets[2]), Some(2))
            );
            assert!(got.skipped.is_empty());
        }
        let got = read_all_ways(&bytes, &resync(5));
        assert!(got.error.is_none(), "{:?}", got.error);
        let mut want = recs.clone();
        want.remove(2);
        assert_eq!(got.records, want);
        let skips = got.skips();
        assert_eq!(skips.len(), 1);
        assert_eq!(
            (skips[0].0, skips[0].1),
            (built.offsets[2], Some(frame_len(&recs, 2)))
        );
        match &skips[0].2 {
            SkipReason::Damaged(d) => assert!(d.contains("length checksum mismatch"), "{d}"),
            other => panic!("{other:?}"),
        }
        assert!(!got.skipped[0].is_record());
    }
}

#[test]
fn garbage_between_records_is_one_skipped_range() {
    let (recs, built) = eight();
    let at = built.offsets[5] as usize;
    let garbage = [0x13u8, 0x37, 0, 0, 0, 0, 0, 0, 0xff, 0xee, 0xdd, 0xcc, 0xbb];
    let mut bytes = built.bytes.clone();
    bytes.splice(at..at, garbage);
    let got = read_all_ways(&bytes, &fail());
    assert_eq!(got.records, recs[..5]);
    assert_eq!(got.error.unwrap().offset(), Some(at as u64));
    let got = read_all_ways(&bytes, &resync(1));
    assert_eq!(got.records, recs);
    let skips = got.skips();
    assert_eq!(
        (skips[0].0, skips[0].1),
        (at as u64, Some(garbage.len() as u64))
    );
    assert_eq!(skips.len(), 1);
    let line = got.skipped[0].to_string();
    assert!(
        line.contains(&format!("skipped 13 bytes at byte {at}")),
        "{line}"
    );
    // Garbage before the first record, and after the last.
    let mut bytes = garbage.to_vec();
    bytes.extend(&built.bytes);
    bytes.extend(&garbage[..5]);
    let got = read_all_ways(&bytes, &resync(2));
    assert_eq!(got.records, recs);
    let end = built.bytes.len() as u64 + 13;
    let skips = got.skips();
    assert_eq!((skips[0].0, skips[0].1), (0, Some(13)));
    assert!(matches!(&skips[0].2, SkipReason::Damaged(d) if d.contains("not a TFRecord file")));
    assert_eq!((skips[1].0, skips[1].1), (end, Some(5)));
    assert!(
        matches!(&skips[1].2, SkipReason::Truncated(_)),
        "{:?}",
        skips[1].2
    );
}

#[test]
fn a_truncated_tail_is_a_skipped_range_to_the_end() {
    let (recs, built) = eight();
    let last = built.offsets[7];
    // Inside the header, inside the payload, inside the footer.
    for cut in [last + 5, last + 12 + 1, last + frame_len(&recs, 7) - 2] {
        let bytes = &built.bytes[..cut as usize];
        for opts in [fail(), skip(3)] {
            let got = read_all_ways(bytes, &opts);
            assert_eq!(got.records, recs[..7]);
            let err = got.error.unwrap();
            assert!(matches!(err.kind(), ErrorKind::Truncated { .. }), "{err}");
            assert_eq!(err.offset(), Some(last));
        }
        let got = read_all_ways(bytes, &resync(1));
        assert!(got.error.is_none());
        assert_eq!(got.records, recs[..7]);
        let skips = got.skips();
        assert_eq!(
            (skips[0].0, skips[0].1),
            (last, Some(cut - last)),
            "cut at {cut}"
        );
        assert!(matches!(&skips[0].2, SkipReason::Truncated(d) if d.contains("truncated")));
        let line = got.skipped[0].to_string();
        let want = format!(
            "/data.tfrecord: skipped {} bytes at byte {last}: {}",
            cut - last,
            skips[0].2
        );
        assert!(line.ends_with(&want), "{line}");
    }
}

#[test]
fn a_bad_record_followed_by_garbage_is_resynchronized_from_its_start() {
    // Record 3's data is damaged and garbage follows it: under resync the record cannot be
    // told from garbage, so the range from its start to record 4 is skipped as one.
    let (recs, built) = eight();
    let mut bytes = built.bytes.clone();
    bytes[built.offsets[3] as usize + 12] ^= 1;
    let at = built.offsets[4] as usize;
    bytes.splice(at..at, [7u8; 6]);
    let got = read_all_ways(&bytes, &resync(9));
    let mut want = recs.clone();
    want.remove(3);
    assert_eq!(got.records, want);
    let skips = got.skips();
    assert_eq!(skips.len(), 1);
    assert_eq!(
        (skips[0].0, skips[0].1),
        (built.offsets[3], Some(frame_len(&recs, 3) + 6))
    );
    assert!(
        matches!(&skips[0].2, SkipReason::Damaged(d) if d.contains("data checksum mismatch") && d.contains("not a frame"))
    );
    // Skip (no resync) skips the record, then fails at the garbage.
    let got = read_all_ways(&bytes, &skip(9));
    assert_eq!(got.records, recs[..3]);
    assert_eq!(got.skips().len(), 1);
    assert_eq!(got.error.unwrap().offset(), Some(built.offsets[4]));
}

#[test]
fn past_the_budget_the_error_names_the_damage() {
    let (recs, built) = eight();
    let mut bytes = built.bytes.clone();
    for k in [1, 4, 6] {
        bytes[built.offsets[k] as usize + 12 + 1] ^= 0x80;
    }
    let got = read_all_ways(&bytes, &skip(2));
    assert_eq!(
        got.records,
        [&recs[0], &recs[2], &recs[3], &recs[5]].map(|r| r.clone())
    );
    assert_eq!(got.skipped.len(), 2);
    let err = got.error.unwrap();
    assert!(
        matches!(err.kind(), ErrorKind::TooManyBadRecords { max: 2, .. }),
        "{err}"
    );
    assert_eq!(
        (err.offset(), err.record()),
        (Some(built.offsets[6]), Some(6))
    );
    let msg = err.to_string();
    let want = format!(
        "data.tfrecord: too many bad records at byte {} (record 6): the budget of 2",
        built.offsets[6]
    );
    assert!(msg.contains(&format!("/{want}")), "{msg}");
    assert!(
        msg.contains(&format!(
            "the record ({} bytes): data checksum mismatch",
            frame_len(&recs, 6)
        )),
        "{msg}"
    );
    // No budget: the first damage is the error.
    let got = read_all_ways(&bytes, &skip(0));
    assert_eq!(got.records, recs[..1]);
    assert!(matches!(
        got.error.unwrap().kind(),
        ErrorKind::TooManyBadRecords { max: 0, .. }
    ));
}

#[test]
fn one_budget_is_shared_by_the_readers_of_its_clones() {
    let (recs, built) = eight();
    let mut bytes = built.bytes.clone();
    bytes[built.offsets[2] as usize + 13] ^= 2;
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.tfrecord", &bytes);
    let b = write(dir.path(), "b.tfrecord", &bytes);
    let opts = skip(1);
    let first = read_file(&a, opts.clone(), super::common::Api::Into);
    assert!(first.error.is_none());
    assert_eq!(first.records.len(), 7);
    let second = read_file(&b, opts.clone(), super::common::Api::Into);
    let err = second.error.unwrap();
    assert!(matches!(
        err.kind(),
        ErrorKind::TooManyBadRecords { max: 1, .. }
    ));
    assert_eq!(err.path(), Some(b.as_path()));
    assert_eq!(opts.get_bad_records().spent(), 1);
    assert_eq!(second.records, recs[..2]);
}

#[test]
fn the_summary_counts_records_ranges_and_bytes() {
    let (recs, built) = eight();
    let mut bytes = built.bytes.clone();
    bytes[built.offsets[1] as usize + 12] ^= 1; // record 1's data
    bytes[built.offsets[5] as usize] ^= 1; // record 5's length
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "d.tfrecord", &bytes);
    let mut r = RecordReader::open(&path, resync(10)).unwrap();
    let n = r.by_ref().map(Result::unwrap).count();
    assert_eq!(n, 6);
    let mut summary = SkipSummary::default();
    summary.records = 1;
    summary.ranges = 1;
    summary.bytes = frame_len(&recs, 1) + frame_len(&recs, 5);
    assert_eq!(r.skip_summary(), summary);
    // Record indices count the record skipped whole, not the range.
    assert_eq!(r.records_read(), 7);
    assert_eq!(r.drain_skipped().count(), 2);
    assert_eq!(r.drain_skipped().count(), 0);
}

/// Under a policy with a shared log, each skip is reported there once and the reader keeps no
/// copy of its own: a reader that is never drained holds nothing per skip, however many
/// damaged records it passes.
#[test]
fn a_shared_log_takes_the_reports_and_the_reader_keeps_none() {
    let (_, built) = eight();
    let mut bytes = built.bytes.clone();
    for k in [1, 3, 6] {
        bytes[built.offsets[k] as usize + 12] ^= 1; // record k's data
    }
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "d.tfrecord", &bytes);
    let policy = BadRecords::skip(10).shared_log();
    let opts = ReaderOptions::new().bad_records(policy.clone());
    let mut r = RecordReader::open(&path, opts).unwrap();
    assert_eq!(r.by_ref().map(Result::unwrap).count(), 5);
    assert_eq!(r.drain_skipped().count(), 0);
    let logged: Vec<u64> = policy.take_logged().iter().map(|s| s.offset()).collect();
    assert_eq!(logged, [1, 3, 6].map(|k| built.offsets[k]));
    assert_eq!(r.skip_summary().records, 3);
}

#[test]
fn a_damaged_compressed_stream_ends_with_the_rest_skipped() {
    let recs = records(300);
    for c in [Compression::Gzip, Compression::Zlib] {
        let z = build_compressed(&recs, c);
        // Cut short: the records before the cut, then the rest of the stream as one range.
        let cut = &z[..z.len() * 2 / 3];
        let failed = read_all_ways(cut, &fail().compression(c));
        let err = failed.error.expect("a cut stream is an error by default");
        assert!(matches!(err.kind(), ErrorKind::Compressed { .. }), "{err}");
        assert!(failed.records.len() < 300);
        assert_eq!(failed.records, recs[..failed.records.len()]);
        let got = read_all_ways(cut, &resync(1).compression(c));
        assert!(got.error.is_none(), "{:?}", got.error);
        assert_eq!(got.records, failed.records);
        let skips = got.skips();
        assert_eq!(skips.len(), 1);
        assert_eq!((skips[0].0, skips[0].1), (err.offset().unwrap(), None));
        assert!(matches!(&skips[0].2, SkipReason::Compressed(_)));
        let line = got.skipped[0].to_string();
        assert!(
            line.contains("skipped the rest of the stream from byte"),
            "{line}"
        );
        // Skip does not recover a stream.
        let got = read_all_ways(cut, &skip(5).compression(c));
        let again = got.error.expect("an error");
        assert!(
            matches!(again.kind(), ErrorKind::Compressed { .. }),
            "{again}"
        );
        assert_eq!(again.offset(), err.offset());

        // A flipped byte: the inflater may put out wrong bytes before it notices (at the
        // latest at the stream's checksum), so records may fail their checks first; in the
        // end the rest of the stream is skipped, and every skip is reported.
        let mut flipped = z.clone();
        flipped[z.len() / 2] ^= 0x55;
        let failed = read_all_ways(&flipped, &fail().compression(c));
        let got = read_all_ways(&flipped, &resync(u64::MAX).compression(c));
        assert!(got.error.is_none(), "{:?}", got.error);
        assert!(got.records.starts_with(&failed.records));
        let last = got.skips().pop().expect("the damage is reported");
        assert_eq!(last.1, None);
        assert!(matches!(last.2, SkipReason::Compressed(_)), "{last:?}");

        // Bytes after a zlib stream's end.
        if c == Compression::Zlib {
            let mut trailing = z.clone();
            trailing.extend_from_slice(b"junk");
            let got = read_all_ways(&trailing, &resync(1).compression(c));
            assert_eq!(got.records, recs);
            let end: u64 = recs.iter().map(|r| r.len() as u64 + 16).sum();
            assert_eq!(got.skips()[0].0, end);
            assert_eq!(got.skips()[0].1, None);
        }
    }
}

#[test]
fn framing_damage_inside_an_intact_compressed_stream_is_resynchronized() {
    let (recs, built) = eight();
    let mut plain = built.bytes.clone();
    plain[built.offsets[4] as usize + 2] ^= 8;
    // The damaged bytes compressed as they are.
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut enc, &plain).unwrap();
    let gz = enc.finish().unwrap();
    let got = read_all_ways(&gz, &resync(1).compression(Compression::Gzip));
    let mut want = recs.clone();
    want.remove(4);
    assert_eq!(got.records, want);
    assert_eq!(got.skips()[0].0, built.offsets[4]);
    assert_eq!(got.skips()[0].1, Some(frame_len(&recs, 4)));
}

#[test]
fn ofrecord_damage_skips_the_rest_of_the_stream() {
    let recs = records(5);
    let built = build_as(&recs, Format::OfRecord);
    let cut = built.offsets[3] as usize + 5;
    let bytes = &built.bytes[..cut];
    let opts = resync(1).format(Format::OfRecord);
    let got = read_all_ways(bytes, &opts);
    assert_eq!(got.records, recs[..3]);
    let skips = got.skips();
    assert_eq!((skips[0].0, skips[0].1), (built.offsets[3], Some(5)));
    assert!(matches!(&skips[0].2, SkipReason::Truncated(_)));
}

#[test]
fn the_chunked_readers_refuse_a_policy_that_skips() {
    let (_, built) = eight();
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "c.tfrecord", &built.bytes);
    let err = tfrecord_core::SharedChunks::open(&path, skip(1), 1024).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Unsupported { .. }), "{err}");
    let mut chunks = tfrecord_core::ChunkReader::open(&path, resync(1), 1024).unwrap();
    let err = chunks.next_chunk().unwrap_err();
    assert!(err.to_string().contains("RecordReader"), "{err}");
    let err: Error =
        tfrecord_core::for_each_chunk(&path, skip(1), 2, || (), |(), _| Ok(()), Ok).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Unsupported { .. }));
}

/// A derived record type, to check the typed reader's decode hook.
#[derive(tfrecord_core::Example, Debug, PartialEq)]
struct Labelled {
    label: i64,
}

/// The bytes of a `Labelled` record, built with the protobuf types.
fn labelled(label: i64) -> Vec<u8> {
    let mut features = tensorflow::Features::default();
    features.feature.insert(
        "label".into(),
        tensorflow::Feature {
            kind: Some(tensorflow::feature::Kind::Int64List(
                tensorflow::Int64List { value: vec![label] },
            )),
        },
    );
    tensorflow::Example {
        features: Some(features),
    }
    .encode_to_vec()
}

#[test]
fn the_typed_reader_skips_records_that_do_not_decode() {
    let good = labelled;
    // Record 2 is intact as a frame but not an Example; record 3 lacks the label.
    let recs = vec![
        good(0),
        good(1),
        vec![0xff, 0xff, 0xff],
        tensorflow::Example::default().encode_to_vec(),
        good(4),
    ];
    let built = build(&recs);
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "typed.tfrecord", &built.bytes);

    let mut reader = tfrecord_core::Reader::<Labelled>::open(&path).unwrap();
    // By default each is an error (located at its record), and reading goes on.
    let got: Vec<_> = reader.by_ref().collect();
    assert_eq!(got.len(), 5);
    for k in [2, 3] {
        let err = got[k].as_ref().unwrap_err();
        assert_eq!(
            (err.offset(), err.record()),
            (Some(built.offsets[k]), Some(k as u64))
        );
    }
    assert_eq!(reader.records().drain_skipped().count(), 0);

    let opts = ReaderOptions::new().bad_records(BadRecords::skip(5));
    let mut reader = tfrecord_core::Reader::<Labelled>::open_with(&path, opts).unwrap();
    let labels: Vec<i64> = reader.by_ref().map(|r| r.unwrap().label).collect();
    assert_eq!(labels, [0, 1, 4]);
    let skipped: Vec<_> = reader.records().drain_skipped().collect();
    assert_eq!(skipped.len(), 2);
    for (s, k) in skipped.iter().zip([2, 3]) {
        assert_eq!(s.offset(), built.offsets[k]);
        assert_eq!(s.byte_len(), Some(recs[k].len() as u64 + 16));
        assert!(matches!(s.reason(), SkipReason::Undecodable(_)));
        assert!(s.is_record());
    }
    assert!(skipped[1].to_string().contains("label"), "{}", skipped[1]);

    // The borrowed reads return the error; the hook skips it.
    let opts = ReaderOptions::new().bad_records(BadRecords::skip(5));
    let mut reader =
        tfrecord_core::Reader::<(), tfrecord_core::TfExample>::open_with(&path, opts).unwrap();
    let mut labels = Vec::new();
    while let Some(r) = reader.next_lent::<Labelled>() {
        match r {
            Ok(v) => labels.push(v.label),
            Err(e) => {
                assert!(e.offset().is_some());
                reader.records().skip_last(e).unwrap();
            }
        }
    }
    assert_eq!(labels, [0, 1, 4]);
    assert_eq!(reader.records().skip_summary().records, 2);
}

#[test]
fn columnar_batches_skip_records_that_do_not_decode_as_the_iterator_does() {
    let good = labelled;
    // Record 1's data checksum fails; record 2 is not an Example; record 3 lacks the label.
    let recs = vec![
        good(0),
        good(1),
        vec![0xff, 0xff, 0xff],
        tensorflow::Example::default().encode_to_vec(),
        good(4),
        good(5),
    ];
    let mut built = build(&recs);
    built.bytes[usize::try_from(built.offsets[1]).unwrap() + 12] ^= 0x40;
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "batches.tfrecord", &built.bytes);
    // Every record that decodes, in batches filled past the ones skipped, each skip reported.
    let opts = ReaderOptions::new().bad_records(BadRecords::skip(5));
    let reader = tfrecord_core::Reader::<Labelled>::open_with(&path, opts).unwrap();
    let mut batches = reader.batches(2).unwrap();
    let labels: Vec<Vec<i64>> = batches
        .by_ref()
        .map(|b| match &b.unwrap().columns[0].leaf {
            tfrecord_core::columns::Leaf::Int64(v) => v.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(labels, [vec![0, 4], vec![5]]);
    let skipped: Vec<_> = batches.records().drain_skipped().collect();
    let at: Vec<u64> = skipped.iter().map(|s| s.offset()).collect();
    assert_eq!(at, built.offsets[1..4]);

    // The budget spent at record 3: the error names it, counting the records skipped before.
    let opts = ReaderOptions::new().bad_records(BadRecords::skip(2));
    let reader = tfrecord_core::Reader::<Labelled>::open_with(&path, opts).unwrap();
    let err = reader.batches(4).unwrap().find_map(Result::err).unwrap();
    assert!(
        matches!(err.kind(), ErrorKind::TooManyBadRecords { .. }),
        "{err}"
    );
    assert_eq!(
        (err.offset(), err.record()),
        (Some(built.offsets[3]), Some(3)),
        "{err}"
    );

    // Without a policy that skips, the first record that does not decode ends the read, named.
    let mut built = build(&recs);
    built
        .bytes
        .truncate(usize::try_from(built.offsets[4]).unwrap());
    let path = write(dir.path(), "plain.tfrecord", &built.bytes);
    let reader = tfrecord_core::Reader::<Labelled>::open(&path).unwrap();
    let got: Vec<_> = reader.batches(4).unwrap().collect();
    assert_eq!(got.len(), 1);
    let err = got[0].as_ref().unwrap_err();
    assert_eq!(
        (err.offset(), err.record()),
        (Some(built.offsets[2]), Some(2)),
        "{err}"
    );
}
