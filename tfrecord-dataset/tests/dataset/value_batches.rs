//! ValueBatches of typed values: the same values in the same order as one by one, on any thread
//! count, whether batches are given back (their values decoded into again) or kept; a
//! checkpoint between batches resumes exactly; an error comes after the values before it.

use std::fs;

use proptest::prelude::*;
use tfrecord_core::{RecordWriter, WriterOptions};
use tfrecord_dataset::{Dataset, DatasetOptions, Error, Shuffle};

use super::support::{Labelled, open, write_typed_set};

const COUNTS: [usize; 7] = [300, 0, 41, 700, 5, 260, 1];

fn data() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    write_typed_set(dir.path(), &COUNTS);
    dir
}

fn configurations() -> Vec<(&'static str, DatasetOptions)> {
    vec![
        ("sequential", DatasetOptions::new()),
        ("interleave", DatasetOptions::new().interleave(3, 2)),
        (
            "shuffled",
            DatasetOptions::new()
                .interleave(2, 5)
                .shuffle(Shuffle::new(4).buffer_size(100)),
        ),
        (
            "epochs, skip, take",
            DatasetOptions::new()
                .shuffle(Shuffle::new(9).buffer_size(30))
                .epochs(Some(2))
                .skip(17)
                .take(1500),
        ),
        ("shard", DatasetOptions::new().shard(1, 3).skip(3)),
    ]
}

fn values(ds: &Dataset) -> Vec<Labelled> {
    ds.values::<Labelled>()
        .expect("starts")
        .collect::<Result<_, _>>()
        .expect("reads")
}

/// Every batch's values, each batch dropped (given back) before the next is read.
fn batched(ds: &Dataset, size: usize) -> Vec<Vec<Labelled>> {
    ds.value_batches::<Labelled>(size)
        .expect("starts")
        .map(|b| b.expect("reads").to_vec())
        .collect()
}

#[test]
fn batches_hold_the_values_in_order_on_any_thread_count() {
    let dir = data();
    for (name, opts) in configurations() {
        let expected = values(&open(dir.path(), opts.clone()));
        assert!(!expected.is_empty(), "{name}");
        for threads in [1, 2, 3] {
            for size in [1, 7, 256, 5000] {
                let ds = open(dir.path(), opts.clone().threads(threads));
                let batches = batched(&ds, size);
                let (last, full) = batches.split_last().expect("a batch");
                assert!(
                    full.iter().all(|b| b.len() == size) && (1..=size).contains(&last.len()),
                    "{name}, {threads} threads, size {size}: batch sizes"
                );
                let got: Vec<Labelled> = batches.into_iter().flatten().collect();
                assert!(
                    got == expected,
                    "{name}, {threads} threads, size {size}: {} values, expected {}",
                    got.len(),
                    expected.len()
                );
            }
        }
    }
}

/// Options of every kind, from drawn numbers.
fn options(
    (cycle, block, seed, buffer): (usize, usize, u64, usize),
    (epochs, skip, take, threads): (u64, u64, Option<u64>, usize),
) -> DatasetOptions {
    let mut opts = DatasetOptions::new()
        .epochs(Some(epochs))
        .skip(skip)
        .threads(threads);
    if cycle > 1 {
        opts = opts.interleave(cycle, block);
    }
    if buffer > 0 {
        opts = opts.shuffle(Shuffle::new(seed).buffer_size(buffer));
    }
    if let Some(take) = take {
        opts = opts.take(take);
    }
    opts
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Random files, orders, shuffles, epochs, skips, takes, thread counts and batch sizes:
    /// the batches hold what `values` gives, in its order.
    #[test]
    fn batches_equal_values_for_random_sets_and_options(
        counts in prop::collection::vec(0usize..400, 1..6),
        order in (1usize..4, 1usize..6, any::<u64>(), prop_oneof![Just(0usize), 1usize..300]),
        cut in (1u64..3, 0u64..50, prop::option::of(0u64..900), 1usize..4),
        size in 1usize..300,
    ) {
        let dir = tempfile::tempdir().expect("tempdir");
        write_typed_set(dir.path(), &counts);
        let ds = open(dir.path(), options(order, cut));
        let expected = values(&open(dir.path(), options(order, (cut.0, cut.1, cut.2, 1))));
        let got: Vec<Labelled> = batched(&ds, size).into_iter().flatten().collect();
        prop_assert!(got == expected, "{} values, expected {}", got.len(), expected.len());
    }
}

#[test]
fn kept_batches_hold_their_values() {
    let dir = data();
    let ds = open(
        dir.path(),
        DatasetOptions::new().interleave(3, 1).threads(2),
    );
    let kept: Vec<Vec<Labelled>> = ds
        .value_batches::<Labelled>(64)
        .expect("starts")
        .map(|b| b.expect("reads").into_vec())
        .collect();
    let got: Vec<Labelled> = kept.into_iter().flatten().collect();
    assert!(got == values(&ds), "{} values", got.len());
}

#[test]
fn a_checkpoint_between_batches_resumes_exactly() {
    let dir = data();
    let opts = DatasetOptions::new()
        .interleave(4, 3)
        .shuffle(Shuffle::new(5).buffer_size(50))
        .threads(2);
    let ds = open(dir.path(), opts);
    let full = values(&ds);
    for taken in [0, 1, 3, 20] {
        let mut batches = ds.value_batches::<Labelled>(50).expect("starts");
        let mut got: Vec<Labelled> = Vec::new();
        for b in batches.by_ref().take(taken) {
            got.extend_from_slice(&b.expect("reads"));
        }
        let resumed = ds.clone().resume(batches.checkpoint());
        drop(batches);
        got.extend(values(&resumed));
        assert!(got == full, "resumed after {taken} batches");
    }
}

/// Flips a payload byte of record `index` of shard `shard`; returns its path and frame offset.
fn damage(dir: &std::path::Path, shard: usize, index: usize) -> (std::path::PathBuf, u64) {
    let damaged = dir.join(format!("train-{shard:05}-of-00007.tfrecord"));
    let at = Dataset::open([&damaged])
        .expect("lists")
        .records()
        .expect("starts")
        .nth(index)
        .expect("a record")
        .expect("reads")
        .offset();
    let mut bytes = fs::read(&damaged).expect("reads");
    // A byte of the record's payload: its data checksum no longer matches.
    bytes[usize::try_from(at).expect("small") + 14] ^= 0x20;
    fs::write(&damaged, bytes).expect("writes");
    (damaged, at)
}

#[test]
fn an_error_comes_after_the_batch_of_the_values_before_it() {
    // Early (before any batch is given back) and late (decoding into values given back).
    for (shard, index, before_it) in [(0, 3, 3), (3, 400, 300 + 41 + 400)] {
        let dir = data();
        let (damaged, at) = damage(dir.path(), shard, index);
        for threads in [1, 2] {
            let ds = open(dir.path(), DatasetOptions::new().threads(threads));
            let mut one_by_one = ds.values::<Labelled>().expect("starts");
            let before: Vec<Labelled> = one_by_one.by_ref().map_while(Result::ok).collect();
            assert_eq!(before.len(), before_it);
            assert!(one_by_one.next().is_none());

            let mut batches = ds.value_batches::<Labelled>(128).expect("starts");
            let mut got: Vec<Labelled> = Vec::new();
            let err = loop {
                match batches.next().expect("an error before the end") {
                    Ok(b) => got.extend_from_slice(&b),
                    Err(e) => break e,
                }
            };
            assert!(got == before, "{threads} threads: {} values", got.len());
            let Error::Record(inner) = &err else {
                panic!("{err:?}")
            };
            assert_eq!(inner.path(), Some(damaged.as_path()));
            let index = u64::try_from(index).expect("small");
            assert_eq!((inner.offset(), inner.record()), (Some(at), Some(index)));
            assert!(batches.next().is_none(), "nothing after an error");
        }
    }
}

/// Rewrites shard `shard` with a record that is framed and checksummed correctly but is not
/// a `Labelled` (a truncated message) inserted before record `index`; returns its path.
fn insert_undecodable(dir: &std::path::Path, shard: usize, index: usize) -> std::path::PathBuf {
    let path = dir.join(format!("train-{shard:05}-of-00007.tfrecord"));
    let records: Vec<Vec<u8>> = Dataset::open([&path])
        .expect("lists")
        .records()
        .expect("starts")
        .map(|r| r.expect("reads").into_bytes())
        .collect();
    let mut w = RecordWriter::create(&path, WriterOptions::new()).expect("creates");
    for (i, record) in records.iter().enumerate() {
        if i == index {
            w.write(b"\x0a\x05ab").expect("writes");
        }
        w.write(record).expect("writes");
    }
    w.finish().expect("finishes");
    path
}

/// The values before the first error, the error, and whether anything followed it.
fn until_error(
    mut batches: impl Iterator<Item = Result<Vec<Labelled>, Error>>,
) -> (Vec<Labelled>, Error, bool) {
    let mut got = Vec::new();
    loop {
        match batches.next().expect("an error before the end") {
            Ok(b) => got.extend(b),
            Err(e) => return (got, e, batches.next().is_some()),
        }
    }
}

#[test]
fn a_record_that_does_not_decode_ends_batches_as_it_ends_values() {
    let dir = data();
    let bad = insert_undecodable(dir.path(), 3, 500);
    let plain = DatasetOptions::new().interleave(2, 5);
    let shuffled = plain.clone().shuffle(Shuffle::new(4).buffer_size(100));
    for threads in [1, 2] {
        for (name, opts) in [("plain", &plain), ("shuffled", &shuffled)] {
            let ds = open(dir.path(), opts.clone().threads(threads));
            let one_by_one = ds
                .values::<Labelled>()
                .expect("starts")
                .map(|v| v.map(|v| vec![v]));
            let (expected, expected_err, more) = until_error(one_by_one);
            assert!(!more, "nothing after an error");
            let batches = ds
                .value_batches::<Labelled>(64)
                .expect("starts")
                .map(|b| b.map(|b| b.to_vec()));
            let (got, err, more) = until_error(batches);
            assert!(!more, "{name}, {threads} threads: nothing after an error");
            // Behind a shuffle buffer the batches decode as records enter it: the error comes
            // when the bad record enters, after a prefix of what `values` gives.
            if name == "plain" {
                assert!(
                    got == expected,
                    "{name}, {threads} threads: {} values",
                    got.len()
                );
            } else {
                assert!(
                    got.len() < expected.len() && expected.starts_with(&got),
                    "{name}, {threads} threads: {} values, {} one by one",
                    got.len(),
                    expected.len()
                );
            }
            for e in [&err, &expected_err] {
                let Error::Record(inner) = e else {
                    panic!("{e:?}")
                };
                assert_eq!(inner.path(), Some(bad.as_path()), "{name}: {e}");
                assert_eq!(inner.record(), Some(500), "{name}: {e}");
            }
        }
    }
}

#[test]
fn a_batch_of_any_size_holds_what_there_is() {
    let dir = data();
    let ds = open(dir.path(), DatasetOptions::new().threads(2));
    let batches = batched(&ds, usize::MAX);
    assert_eq!(batches.len(), 1);
    assert!(batches[0] == values(&ds));
}

#[test]
fn a_batch_size_of_zero_is_a_usage_error() {
    let dir = data();
    let err = open(dir.path(), DatasetOptions::new())
        .value_batches::<Labelled>(0)
        .err()
        .expect("size 0");
    assert!(err.is_usage(), "{err:?}");
}
