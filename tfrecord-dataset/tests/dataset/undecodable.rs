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

#[test]
fn records_that_do_not_decode_are_skipped_and_reported_once() {
    let (dir, good) = data();
    for threads in [0, 1, 2, 3] {
        for shuffled in [false, true] {
            let mut opts = DatasetOptions::new().threads(threads);
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
            let mut got = ids(values);
            if shuffled {
                got.sort_unstable();
            }
            assert_eq!(got, good, "{label}");
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
            if shuffled {
                got.sort_unstable();
            }
            assert_eq!(got, good, "{label}, batches");
            assert_eq!(policy.take_logged().len(), 6, "{label}, batches");
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
