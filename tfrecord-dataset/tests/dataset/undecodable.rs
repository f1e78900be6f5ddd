//! Records whose frames are sound but whose bytes do not decode as the type asked for: under a
//! `skip` or `resync` policy each is skipped and reported once, and counted against the budget,
//! whatever the thread count, shuffling or batching, as the typed reader skips them; under
//! `fail` the first ends the stream.

use std::path::Path;

use tfrecord_core::{BadRecords, Encode, ReaderOptions, RecordWriter, TfExample, WriterOptions};
use tfrecord_dataset::{Dataset, DatasetOptions, Shuffle};

use super::support::Labelled;

/// Records `0..n` of file `k`, with the records at `bad` replaced by bytes that are no message.
fn write_with_bad(path: &Path, k: i64, n: i64, bad: &[i64]) {
    let mut w = RecordWriter::create(path, WriterOptions::new()).expect("creates");
    for i in 0..n {
        if bad.contains(&i) {
            w.write(&[0xff, 0xff, 0xff]).expect("writes");
        } else {
            let v = Labelled {
                file: k,
                index: i,
                pad: vec![b'p'; usize::try_from(i % 7).expect("small")],
            };
            w.write(&Encode::<TfExample>::encode_to_vec(&v))
                .expect("writes");
        }
    }
    w.finish().expect("finishes");
}

fn data() -> (tempfile::TempDir, Vec<(i64, i64)>) {
    let dir = tempfile::tempdir().expect("tempdir");
    // Records 255 and 511 end blocks of 256 records.
    let bad: [&[i64]; 3] = [&[3, 255, 511], &[], &[0, 599, 1000]];
    let mut good = Vec::new();
    for (k, bad) in bad.iter().enumerate() {
        let k64 = i64::try_from(k).expect("small");
        write_with_bad(
            &dir.path().join(format!("d-{k:05}-of-00003.tfrecord")),
            k64,
            1001,
            bad,
        );
        good.extend((0..1001).filter(|i| !bad.contains(i)).map(|i| (k64, i)));
    }
    (dir, good)
}

fn opened(dir: &Path, opts: DatasetOptions, policy: &BadRecords) -> Dataset {
    Dataset::open([dir])
        .expect("lists")
        .with_options(opts.reader(ReaderOptions::new().bad_records(policy.clone())))
}

fn ids(values: impl IntoIterator<Item = Labelled>) -> Vec<(i64, i64)> {
    values.into_iter().map(|v| (v.file, v.index)).collect()
}

/// Skipped where they are read, they leave the other records in one order on any thread count,
/// one by one or in batches, interleaved and shuffled.
#[test]
fn records_that_do_not_decode_are_skipped_and_reported_once() {
    let (dir, good) = data();
    for shuffled in [false, true] {
        let mut orders: Vec<(String, Vec<(i64, i64)>)> = Vec::new();
        for threads in [0, 1, 2, 3] {
            let mut opts = DatasetOptions::new().threads(threads).interleave(2, 2);
            if shuffled {
                opts = opts.shuffle(Shuffle::new(5).buffer_size(300));
            }
            let label = format!("{threads} threads, shuffled {shuffled}");
            // One by one.
            let policy = BadRecords::skip(6).shared_log();
            let ds = opened(dir.path(), opts.clone(), &policy);
            let values: Vec<Labelled> = ds
                .values::<Labelled>()
                .expect("starts")
                .map(|v| v.expect(&label))
                .collect();
            orders.push((label.clone(), ids(values)));
            let mut skipped: Vec<u64> = policy.take_logged().iter().map(|s| s.offset()).collect();
            skipped.sort_unstable();
            assert_eq!(skipped.len(), 6, "{label}: {skipped:?}");
            assert_eq!(policy.spent(), 6, "{label}");
            // In batches.
            let policy = BadRecords::skip(6).shared_log();
            let ds = opened(dir.path(), opts.clone(), &policy);
            let mut got = Vec::new();
            for batch in ds.value_batches::<Labelled>(100).expect("starts") {
                got.extend(ids(batch.expect(&label).into_vec()));
            }
            orders.push((format!("{label}, batches"), got));
            assert_eq!(policy.take_logged().len(), 6, "{label}, batches");
        }
        let (first, order) = &orders[0];
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, good, "{first}");
        for (label, other) in &orders[1..] {
            assert_eq!(other, order, "{label} against {first}");
        }
    }
}

#[test]
fn a_spent_budget_or_the_fail_policy_ends_the_stream_naming_the_record() {
    let (dir, _) = data();
    let policy = BadRecords::skip(5);
    let ds = opened(dir.path(), DatasetOptions::new(), &policy);
    let err = ds
        .values::<Labelled>()
        .expect("starts")
        .find_map(Result::err)
        .expect("the fourth bad record is one too many");
    let text = err.to_string();
    assert!(text.contains("d-00002-of-00003.tfrecord"), "{text}");
    assert!(text.contains("budget of 5"), "{text}");
    let ds = opened(
        dir.path(),
        DatasetOptions::new().threads(2),
        &BadRecords::fail(),
    );
    let err = ds
        .value_batches::<Labelled>(64)
        .expect("starts")
        .find_map(Result::err)
        .expect("fails");
    let text = err.to_string();
    assert!(text.contains("d-00000-of-00003.tfrecord"), "{text}");
    assert!(text.contains("record 3"), "{text}");
}

/// A budget that runs out inside a batch ends the batches after the values `values` gives before
/// its error, and with the same error: the records after a skip are not moved into the batch
/// ahead of its charge.
#[test]
fn a_budget_spent_inside_a_batch_ends_it_where_values_end() {
    let (dir, _) = data();
    for threads in [1, 2] {
        for opts in [
            DatasetOptions::new(),
            DatasetOptions::new().interleave(2, 300),
        ] {
            let opts = opts.threads(threads);
            let label = format!("{threads} threads, {opts:?}");
            let ds = opened(dir.path(), opts.clone(), &BadRecords::skip(4));
            let mut expected = Vec::new();
            let mut expected_err = None;
            for v in ds.values::<Labelled>().expect("starts") {
                match v {
                    Ok(v) => expected.push((v.file, v.index)),
                    Err(e) => {
                        expected_err = Some(e.to_string());
                        break;
                    }
                }
            }
            let ds = opened(dir.path(), opts, &BadRecords::skip(4));
            let mut got = Vec::new();
            let mut err = None;
            for batch in ds.value_batches::<Labelled>(700).expect("starts") {
                match batch {
                    Ok(b) => got.extend(ids(b.into_vec())),
                    Err(e) => {
                        err = Some(e.to_string());
                        break;
                    }
                }
            }
            assert!(
                expected_err.is_some(),
                "{label}: the fifth bad record fails"
            );
            assert_eq!(err, expected_err, "{label}");
            assert_eq!(got.len(), expected.len(), "{label}");
            assert!(got == expected, "{label}");
        }
    }
}

/// A record read right after ones whose checksums fail (skipped inside the reader) carries its
/// own byte offset and index, as the index file gives them, on any thread count; a checkpoint
/// taken after it resumes at the record after it.
#[test]
fn records_after_skipped_damage_carry_their_own_position() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("d.tfrecord");
    write_with_bad(&path, 0, 40, &[]);
    let index = tfrecord_core::index::Index::build(&path, ReaderOptions::new()).expect("indexes");
    let frames: Vec<(u64, u64)> = index.entries().iter().map(|e| (e.offset, e.size)).collect();
    // Flip a payload byte of records 5, 6 and 20: their data checksums fail.
    let mut bytes = std::fs::read(&path).expect("reads");
    for r in [5, 6, 20] {
        let at = usize::try_from(frames[r].0).expect("small") + 12;
        bytes[at] ^= 0x01;
    }
    std::fs::write(&path, &bytes).expect("writes");
    for threads in [1, 2] {
        let policy = BadRecords::skip(3);
        let ds = opened(dir.path(), DatasetOptions::new().threads(threads), &policy);
        let mut records = ds.records().expect("starts");
        let mut seen = Vec::new();
        let mut resumed_after_7 = None;
        while let Some(rec) = records.next() {
            let rec = rec.expect("within the budget");
            let i = usize::try_from(rec.index()).expect("small");
            assert_eq!(rec.offset(), frames[i].0, "{threads} threads: record {i}");
            if i == 7 {
                resumed_after_7 = Some(records.checkpoint());
            }
            seen.push(i);
        }
        let want: Vec<usize> = (0..40).filter(|i| ![5, 6, 20].contains(i)).collect();
        assert_eq!(seen, want, "{threads} threads");
        let rest = opened(
            dir.path(),
            DatasetOptions::new().threads(threads),
            &BadRecords::skip(3),
        )
        .resume(resumed_after_7.expect("record 7 read"))
        .records()
        .expect("resumes")
        .map(|r| usize::try_from(r.expect("reads").index()).expect("small"))
        .collect::<Vec<_>>();
        assert_eq!(rest, want[6..], "{threads} threads: resumed after record 7");
    }
}

/// In a byte-range split the record index of an error counts from the split's first record,
/// and the error says where that is, on every path a record is decoded on (on the workers, or
/// as it leaves a shuffle buffer).
#[test]
fn an_error_in_a_byte_range_split_says_where_its_indices_count_from() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("one.tfrecord");
    write_with_bad(&file, 0, 100, &[90]);
    let first = tfrecord_core::RecordReader::open_split(&file, 2, 3, ReaderOptions::new())
        .expect("opens")
        .record_base()
        .expect("a byte-range split");
    let shuffled = DatasetOptions::new()
        .shard(2, 3)
        .shuffle(Shuffle::new(1).buffer_size(10));
    for opts in [DatasetOptions::new().shard(2, 3), shuffled] {
        for threads in [1, 2] {
            let ds = Dataset::open([&file])
                .expect("lists")
                .with_options(opts.clone().threads(threads));
            let one_by_one = ds
                .values::<Labelled>()
                .expect("starts")
                .find_map(Result::err);
            let batched = ds
                .value_batches::<Labelled>(16)
                .expect("starts")
                .find_map(Result::err);
            for err in [one_by_one, batched] {
                let err = err.expect("record 90 does not decode");
                let tfrecord_dataset::Error::Record(e) = &err else {
                    panic!("a record error: {err}");
                };
                assert_eq!(e.record_base(), Some(first), "{err}");
                let at = format!("of the split starting at byte {first}");
                assert!(err.to_string().contains(&at), "{err}");
            }
        }
    }
}
