//! Shuffling, epochs, shards and skip/take: the same seed gives the same order across runs and
//! thread counts; every record is read exactly once per epoch and per set of shards.

use std::collections::BTreeMap;
use std::fs;

use tfrecord_core::{Format, ReaderOptions};
use tfrecord_dataset::{Dataset, DatasetOptions, Error, Shuffle, SourceFile};

use super::support::{Labelled, Place, label, labels, open, write_set, write_typed_set};

const COUNTS: [usize; 9] = [40, 0, 13, 70, 5, 22, 31, 1, 18];

fn data() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    write_set(dir.path(), &COUNTS, |k| {
        let ext = if k % 3 == 1 {
            ".tfrecord.gz"
        } else {
            ".tfrecord"
        };
        format!("d{k:02}{ext}")
    });
    dir
}

fn all_labels() -> Vec<String> {
    let mut v: Vec<String> = COUNTS
        .iter()
        .enumerate()
        .flat_map(|(k, &n)| (0..n).map(move |i| label(k, i)))
        .collect();
    v.sort();
    v
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn shuffled(seed: u64) -> DatasetOptions {
    DatasetOptions::new()
        .interleave(3, 2)
        .shuffle(Shuffle::new(seed).buffer_size(25))
}

#[test]
fn the_same_seed_gives_the_same_order_across_runs_and_thread_counts() {
    let dir = data();
    let reference = labels(&open(dir.path(), shuffled(7)));
    assert_eq!(sorted(reference.clone()), all_labels());
    for threads in [1, 2, 4] {
        for _run in 0..2 {
            let got = labels(&open(dir.path(), shuffled(7).threads(threads)));
            assert_eq!(got, reference, "{threads} threads");
        }
    }
    let other = labels(&open(dir.path(), shuffled(8)));
    assert_ne!(other, reference);
    assert_eq!(sorted(other), all_labels());
    // Neither the plain order nor the plain interleave.
    assert_ne!(reference, labels(&open(dir.path(), DatasetOptions::new())));
    assert_ne!(
        reference,
        labels(&open(dir.path(), DatasetOptions::new().interleave(3, 2)))
    );
}

/// A cycle of more splits than the workers read ahead (the first 64 open ones; the caller's
/// thread reads the others when it waits for them) gives tf.data's interleave over files of a
/// few records on any thread count, one by one and in batches.
#[test]
fn a_cycle_of_hundreds_of_splits_gives_the_order_of_one_thread() {
    let dir = tempfile::tempdir().expect("tempdir");
    let counts: Vec<usize> = (0..300).map(|k| k % 5).collect();
    let small = |n: usize| i64::try_from(n).expect("small");
    write_typed_set(dir.path(), &counts);
    let opts = DatasetOptions::new().interleave(300, 1);
    // Block length 1 over a full cycle: record i of every file that has one, then record i + 1.
    let mut expected = Vec::new();
    for i in 0..4 {
        for (k, &n) in counts.iter().enumerate() {
            if i < n {
                expected.push((small(k), small(i)));
            }
        }
    }
    for threads in [1, 2, 3, 8] {
        let ds = open(dir.path(), opts.clone().threads(threads));
        let one_by_one: Vec<(i64, i64)> = ds
            .values::<Labelled>()
            .expect("starts")
            .map(|v| v.expect("reads"))
            .map(|v| (v.file, v.index))
            .collect();
        assert_eq!(one_by_one, expected, "{threads} threads");
        let batched: Vec<(i64, i64)> = ds
            .value_batches::<Labelled>(7)
            .expect("starts")
            .flat_map(|b| b.expect("reads").into_vec())
            .map(|v| (v.file, v.index))
            .collect();
        assert_eq!(batched, expected, "{threads} threads, in batches");
    }
}

#[test]
fn typed_values_decoded_on_threads_come_in_the_same_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_typed_set(dir.path(), &COUNTS);
    let read = |threads| -> Vec<Labelled> {
        open(dir.path(), shuffled(3).threads(threads))
            .values::<Labelled>()
            .expect("starts")
            .collect::<Result<_, _>>()
            .expect("reads")
    };
    let one = read(1);
    assert_eq!(one.len(), COUNTS.iter().sum::<usize>());
    assert_eq!(read(3), one);
    let mut seen: Vec<(i64, i64)> = one.iter().map(|v| (v.file, v.index)).collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), one.len());
    // Values without heap memory are decoded on the workers (and held decoded in the shuffle
    // buffer): the same records in the same order.
    let places: Vec<(i64, i64)> = one.iter().map(|v| (v.file, v.index)).collect();
    for threads in [1, 2, 3] {
        let got: Vec<(i64, i64)> = open(dir.path(), shuffled(3).threads(threads))
            .values::<Place>()
            .expect("starts")
            .map(|v| v.map(|p| (p.file, p.index)))
            .collect::<Result<_, _>>()
            .expect("reads");
        assert_eq!(got, places, "{threads} threads");
    }
}

#[test]
fn epochs_are_each_a_new_permutation_of_every_record() {
    let dir = data();
    let total = all_labels().len();
    let opts = shuffled(11).epochs(Some(3)).threads(2);
    let got = labels(&open(dir.path(), opts));
    assert_eq!(got.len(), 3 * total);
    let epochs: Vec<&[String]> = got.chunks(total).collect();
    for epoch in &epochs {
        assert_eq!(sorted(epoch.to_vec()), all_labels());
    }
    assert_ne!(epochs[0], epochs[1]);
    assert_ne!(epochs[1], epochs[2]);
    // Unshuffled epochs repeat the order.
    let plain = labels(&open(dir.path(), DatasetOptions::new().epochs(Some(2))));
    assert_eq!(plain[..total], plain[total..]);
}

#[test]
fn endless_epochs_end_on_an_empty_epoch_and_take_bounds_them() {
    let dir = data();
    let forever = shuffled(1).epochs(None).take(1000);
    assert_eq!(labels(&open(dir.path(), forever)).len(), 1000);
    let empty = tempfile::tempdir().expect("tempdir");
    write_set(empty.path(), &[0, 0], |k| format!("e{k}.tfrecord"));
    let got = labels(&open(empty.path(), DatasetOptions::new().epochs(None)));
    assert!(got.is_empty());
}

#[test]
fn shards_together_hold_every_record_exactly_once() {
    let dir = data();
    let bases = [
        (DatasetOptions::new(), 1),
        (shuffled(5), 1),
        (shuffled(5).epochs(Some(2)), 2),
    ];
    for count in [1, 2, 4, 9, 12] {
        for (base, epochs) in &bases {
            let mut all = Vec::new();
            let mut empty_shards = 0;
            for index in 0..count {
                let got = labels(&open(
                    dir.path(),
                    base.clone().shard(index, count).threads(2),
                ));
                empty_shards += usize::from(got.is_empty());
                all.extend(got);
            }
            let mut expected: Vec<String> = Vec::new();
            for _ in 0..*epochs {
                expected.extend(all_labels());
            }
            assert_eq!(sorted(all), sorted(expected), "{count} shards");
            // With more workers than files, the uncompressed files are cut into byte ranges:
            // fewer workers are empty than file-level shards would leave.
            if count > COUNTS.len() {
                assert!(
                    empty_shards < count - COUNTS.len(),
                    "{count} shards: {empty_shards} empty"
                );
            }
        }
    }
}

/// Workers that each shuffle with a seed of their own (as training jobs often seed by worker
/// rank) still read every record exactly once between them, in every epoch: the shards are
/// dealt before the order is drawn.
#[test]
fn shards_with_a_seed_each_hold_every_record_exactly_once() {
    let dir = data();
    for count in [2, 4, 9, 12] {
        let mut all = Vec::new();
        for index in 0..count {
            let seed = 1000 + index as u64 * 7919;
            let opts = shuffled(seed).epochs(Some(2)).shard(index, count);
            all.extend(labels(&open(dir.path(), opts)));
        }
        let mut expected = all_labels();
        expected.extend(all_labels());
        assert_eq!(sorted(all), sorted(expected), "{count} shards");
    }
}

/// A shard count far beyond the records: a file is cut into at most one range per 256 bytes,
/// so the plan stays small, and the shards together still hold every record once.
#[test]
fn a_huge_shard_count_reads_every_record_once_without_a_huge_plan() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_set(dir.path(), &[300], |_| "big.tfrecord".to_string());
    let size = fs::metadata(dir.path().join("big.tfrecord"))
        .expect("written")
        .len();
    let ranges = usize::try_from(size.div_ceil(256)).expect("small");
    let count = 1_000_000_000;
    let mut all = Vec::new();
    for index in (0..ranges + 2).chain([count / 2, count - 1]) {
        let got = labels(&open(dir.path(), DatasetOptions::new().shard(index, count)));
        if index >= ranges {
            assert!(got.is_empty(), "worker {index} of {ranges} ranges");
        }
        all.extend(got);
    }
    let expected: Vec<String> = (0..300).map(|i| label(0, i)).collect();
    assert_eq!(all, expected);
}

#[test]
fn skip_and_take_cut_the_shuffled_stream() {
    let dir = data();
    let full = labels(&open(dir.path(), shuffled(2).epochs(Some(2))));
    for (skip, take) in [(0, 5), (17, 40), (150, 1000), (1000, 3), (0, 0)] {
        let opts = shuffled(2).epochs(Some(2)).skip(skip).take(take).threads(2);
        let got = labels(&open(dir.path(), opts));
        let lo = usize::try_from(skip).expect("small").min(full.len());
        let hi = (lo + usize::try_from(take).expect("small")).min(full.len());
        assert_eq!(got, full[lo..hi], "skip {skip} take {take}");
    }
}

#[test]
fn a_damaged_record_stops_the_stream_with_an_error_naming_it_on_any_thread_count() {
    let dir = tempfile::tempdir().expect("tempdir");
    let paths = write_set(dir.path(), &[5, 5, 5], |k| format!("x{k}.tfrecord"));
    let mut bytes = fs::read(&paths[1]).expect("reads");
    // The payload of record 2 ("1:2") starts at 2 * 19 + 12.
    bytes[2 * 19 + 12] ^= 0x40;
    fs::write(&paths[1], bytes).expect("writes");
    for threads in [1, 2] {
        let opts = DatasetOptions::new().interleave(3, 1).threads(threads);
        let mut records = open(dir.path(), opts).records().expect("starts");
        let mut before = Vec::new();
        let err = loop {
            match records.next().expect("an error before the end") {
                Ok(r) => before.push(super::support::text(&r)),
                Err(e) => break e,
            }
        };
        assert_eq!(before, ["0:0", "1:0", "2:0", "0:1", "1:1", "2:1", "0:2"]);
        let Error::Record(inner) = &err else {
            panic!("{err:?}")
        };
        assert_eq!(inner.path(), Some(paths[1].as_path()));
        assert_eq!((inner.offset(), inner.record()), (Some(38), Some(2)));
        assert!(records.next().is_none(), "nothing after an error");
    }
}

#[test]
fn options_out_of_range_and_formats_that_do_not_fit_are_errors() {
    let dir = data();
    let ds = open(dir.path(), DatasetOptions::new().shard(3, 3));
    let err = ds.records().err().expect("shard 3/3");
    assert!(err.is_usage(), "{err:?}");
    assert!(err.to_string().contains("3/3"), "{err}");
    let ds = open(dir.path(), DatasetOptions::new().interleave(0, 1));
    assert!(ds.records().err().expect("cycle 0").is_usage());
    // More threads than any machine: an error at once, not threads spawned until the system
    // refuses.
    for threads in [tfrecord_dataset::MAX_THREADS + 1, usize::MAX] {
        let ds = open(dir.path(), DatasetOptions::new().threads(threads));
        let err = ds.values::<Labelled>().err().expect("too many threads");
        assert!(
            err.is_usage() && err.to_string().contains("threads: at most"),
            "{err}"
        );
    }
    let mut file = SourceFile::new(dir.path().join("d00.tfrecord"));
    file.format = Format::OfRecord;
    let err = Dataset::from_files(vec![file])
        .values::<Labelled>()
        .err()
        .expect("format");
    assert!(err.to_string().contains("ofrecord"), "{err}");
}

#[test]
fn reader_options_reach_every_split() {
    let dir = data();
    let strict = DatasetOptions::new().reader(ReaderOptions::new().max_record_len(3));
    let err = open(dir.path(), strict)
        .records()
        .expect("starts")
        .find_map(Result::err)
        .expect("a record over 3 bytes");
    assert!(err.to_string().contains("larger than the limit"), "{err}");
}

#[test]
fn the_non_deterministic_mode_reads_every_record_once() {
    let dir = data();
    let opts = shuffled(4).threads(3).deterministic(false).epochs(Some(2));
    let got = labels(&open(dir.path(), opts));
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for l in got {
        *counts.entry(l).or_default() += 1;
    }
    assert!(counts.values().all(|&n| n == 2));
    assert_eq!(counts.len(), all_labels().len());
}

#[test]
fn iterators_move_to_other_threads() {
    fn sendable<T: Send>(_: &T) {}
    let dir = data();
    let ds = open(dir.path(), shuffled(1).threads(2));
    let records = ds.records().expect("starts");
    sendable(&records);
    let values = ds.values::<Labelled>();
    sendable(&values);
    let n = std::thread::spawn(move || records.count())
        .join()
        .expect("joins");
    assert_eq!(n, all_labels().len());
}

/// One uncompressed file over more workers than files: it is cut into byte ranges, every
/// worker gets records, together they hold each record once, and a read checkpointed inside a
/// range resumes where it stopped.
#[test]
fn one_file_is_shared_by_every_worker_through_byte_ranges() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_set(dir.path(), &[500], |_| "big.tfrecord".to_string());
    let expected: Vec<String> = (0..500).map(|i| label(0, i)).collect();
    for count in [2, 3, 7] {
        for base in [DatasetOptions::new(), shuffled(3)] {
            let mut all = Vec::new();
            for index in 0..count {
                let ds = open(dir.path(), base.clone().shard(index, count).threads(2));
                let got = labels(&ds);
                assert!(!got.is_empty(), "worker {index} of {count} has no records");
                // A checkpoint in the middle of this worker's range resumes exactly.
                let at = got.len() / 2;
                let mut records = ds.records().expect("starts");
                let head: Vec<String> = records
                    .by_ref()
                    .take(at)
                    .map(|r| super::support::text(&r.expect("reads")))
                    .collect();
                let saved = records.checkpoint();
                drop(records);
                let mut resumed = head;
                resumed.extend(labels(&ds.clone().resume(saved)));
                assert_eq!(resumed, got, "worker {index} of {count}, resumed at {at}");
                all.extend(got);
            }
            assert_eq!(sorted(all), sorted(expected.clone()), "{count} workers");
        }
    }
}

#[test]
fn a_cycle_longer_than_the_splits_and_limits_up_to_u64_max_read_everything() {
    let dir = data();
    let sequential = labels(&open(dir.path(), DatasetOptions::new()));
    for cycle in [COUNTS.len(), 1 << 40, usize::MAX] {
        let opts = DatasetOptions::new().interleave(cycle, 1);
        let wide = labels(&open(dir.path(), opts.clone().threads(2)));
        assert_eq!(wide, labels(&open(dir.path(), opts)), "cycle {cycle}");
        assert_eq!(sorted(wide), sorted(sequential.clone()), "cycle {cycle}");
    }
    let unlimited = open(dir.path(), DatasetOptions::new().take(u64::MAX));
    assert_eq!(labels(&unlimited), sequential);
    let repeated = open(
        dir.path(),
        DatasetOptions::new().epochs(Some(u64::MAX)).take(300),
    );
    assert_eq!(labels(&repeated).len(), 300);
    // A checkpoint of `take(u64::MAX)` is not one of "no limit": resuming it there is refused.
    let mut records = open(dir.path(), DatasetOptions::new().take(u64::MAX))
        .records()
        .expect("starts");
    records.next().expect("a record").expect("reads");
    let checkpoint = records.checkpoint();
    let resumed = open(dir.path(), DatasetOptions::new()).resume(checkpoint);
    assert!(resumed.records().is_err(), "options differ");
}
