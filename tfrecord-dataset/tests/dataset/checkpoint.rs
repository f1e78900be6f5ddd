//! Checkpoints: resuming at any position gives exactly the rest of an uninterrupted read.

use std::collections::BTreeMap;

use tfrecord_dataset::{Checkpoint, Dataset, DatasetOptions, Error, Shuffle};

use super::support::{
    Labelled, Picker, Place, labels, open, text, write_labels, write_set, write_typed_set,
};

const COUNTS: [usize; 7] = [30, 0, 17, 45, 3, 26, 12];

fn data() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    write_set(dir.path(), &COUNTS, |k| {
        let ext = if k % 2 == 1 {
            ".tfrecord.gz"
        } else {
            ".tfrecord"
        };
        format!("c{k:02}{ext}")
    });
    dir
}

/// Reads `at` records, checkpoints through JSON, resumes with `threads` threads and reads the
/// rest.
fn read_resumed(ds: &Dataset, at: usize, threads: usize) -> (Vec<String>, Checkpoint) {
    let mut records = ds.records().expect("starts");
    let mut got: Vec<String> = records
        .by_ref()
        .take(at)
        .map(|r| text(&r.expect("reads")))
        .collect();
    let saved = records.checkpoint();
    drop(records);
    let json = saved.to_json();
    let restored = Checkpoint::from_json(&json).expect("parses");
    assert_eq!(restored, saved);
    let opts = ds.options().clone().threads(threads);
    let resumed = ds.clone().with_options(opts).resume(restored);
    got.extend(labels(&resumed));
    (got, saved)
}

fn configurations() -> Vec<(&'static str, DatasetOptions)> {
    let shuffle = Shuffle::new(21).buffer_size(25);
    vec![
        ("sequential", DatasetOptions::new()),
        (
            "interleave",
            DatasetOptions::new().interleave(3, 2).threads(2),
        ),
        (
            "interleave, shuffle, 2 epochs",
            DatasetOptions::new()
                .interleave(3, 2)
                .shuffle(shuffle)
                .epochs(Some(2)),
        ),
        (
            "sequential, record shuffle only",
            DatasetOptions::new().shuffle(Shuffle::new(4).buffer_size(60).files(false)),
        ),
        (
            "shard, skip, take, shuffle, 3 epochs",
            DatasetOptions::new()
                .interleave(2, 3)
                .shuffle(shuffle)
                .shard(1, 2)
                .skip(10)
                .take(100)
                .epochs(Some(3)),
        ),
    ]
}

#[test]
fn resuming_at_sampled_positions_gives_the_uninterrupted_stream() {
    let dir = data();
    let mut pick = Picker::new(0x5eed);
    for (name, opts) in configurations() {
        let ds = open(dir.path(), opts);
        let full = labels(&ds);
        assert!(full.len() > 50, "{name}: {} records", full.len());
        let mut positions = vec![0, 1, full.len() - 1, full.len()];
        positions.extend((0..12).map(|_| pick.below(full.len() + 1)));
        for at in positions {
            let threads = 1 + at % 3;
            let (got, saved) = read_resumed(&ds, at, threads);
            assert_eq!(got, full, "{name}: resumed at {at} on {threads} threads");
            assert!(saved.to_json().len() < 4096, "{name}: {}", saved.to_json());
        }
    }
}

/// Each record as the stream gives it: its bytes, file, byte offset and index.
fn placed(r: &tfrecord_dataset::Record) -> (String, String, u64, u64) {
    let file = r
        .path()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    (text(r), file.unwrap_or_default(), r.offset(), r.index())
}

/// Resumes at `stops` in turn (each checkpoint taken by a read that was itself resumed) and
/// reads the rest: what the stream gives, records with their places.
fn read_resumed_in_turn(ds: &Dataset, stops: &[usize]) -> Vec<(String, String, u64, u64)> {
    let mut got = Vec::new();
    let mut records = ds.records().expect("starts");
    for &stop in stops {
        while got.len() < stop {
            let Some(r) = records.next() else { break };
            got.push(placed(&r.expect("reads")));
        }
        let saved = Checkpoint::from_json(&records.checkpoint().to_json()).expect("parses");
        records = ds.clone().resume(saved).records().expect("resumes");
    }
    got.extend(records.map(|r| placed(&r.expect("reads"))));
    got
}

/// A shuffle buffer read back from a checkpoint holds each record at its own place (file,
/// offset, index), so that a checkpoint taken after a resume, and errors, name the right ones.
#[test]
fn resuming_again_and_again_gives_the_uninterrupted_stream_and_places() {
    let dir = data();
    let mut pick = Picker::new(0xc4a1);
    for (name, opts) in configurations() {
        let ds = open(dir.path(), opts);
        let full: Vec<_> = ds
            .records()
            .expect("starts")
            .map(|r| placed(&r.expect("reads")))
            .collect();
        for _ in 0..4 {
            let mut stops: Vec<usize> = (0..3).map(|_| pick.below(full.len() + 1)).collect();
            stops.sort_unstable();
            let got = read_resumed_in_turn(&ds, &stops);
            assert_eq!(got, full, "{name}: resumed at {stops:?}");
        }
    }
}

/// The first `at` values of `ds`, then the rest read from a checkpoint taken there.
fn values_resumed_at<T>(ds: &Dataset, at: usize) -> Vec<T>
where
    T: tfrecord_core::DecodeOwned + Send + 'static,
{
    let mut values = ds.values::<T>().expect("starts");
    let mut got: Vec<T> = values
        .by_ref()
        .take(at)
        .collect::<Result<_, _>>()
        .expect("reads");
    let resumed = ds.clone().resume(values.checkpoint());
    drop(values);
    got.extend(
        resumed
            .values::<T>()
            .expect("resumes")
            .map(|v| v.expect("reads")),
    );
    got
}

#[test]
fn typed_values_resume_exactly() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_typed_set(dir.path(), &COUNTS);
    let opts = DatasetOptions::new()
        .interleave(4, 1)
        .shuffle(Shuffle::new(9).buffer_size(40))
        .threads(2);
    let ds = open(dir.path(), opts);
    let full: Vec<Labelled> = ds
        .values::<Labelled>()
        .expect("starts")
        .collect::<Result<_, _>>()
        .expect("reads");
    let places: Vec<Place> = full
        .iter()
        .map(|v| Place {
            file: v.file,
            index: v.index,
        })
        .collect();
    for at in [0, 7, 64, 100, full.len()] {
        assert_eq!(
            values_resumed_at::<Labelled>(&ds, at),
            full,
            "resumed at {at}"
        );
        // Values decoded on the workers, and held decoded by the shuffle buffer.
        assert_eq!(
            values_resumed_at::<Place>(&ds, at),
            places,
            "places resumed at {at}"
        );
    }
}

#[test]
fn a_non_deterministic_read_resumes_with_every_record_once() {
    let dir = data();
    let opts = DatasetOptions::new()
        .interleave(3, 1)
        .shuffle(Shuffle::new(2).buffer_size(10))
        .threads(3)
        .deterministic(false);
    let ds = open(dir.path(), opts);
    let total: usize = COUNTS.iter().sum();
    for at in [5, 50, 100] {
        let (got, _) = read_resumed(&ds, at, 2);
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for l in got {
            *counts.entry(l).or_default() += 1;
        }
        assert_eq!(counts.len(), total, "resumed at {at}");
        assert!(counts.values().all(|&n| n == 1), "resumed at {at}");
    }
}

#[test]
fn a_finished_read_resumes_to_nothing() {
    let dir = data();
    let ds = open(dir.path(), DatasetOptions::new().interleave(2, 2));
    let mut records = ds.records().expect("starts");
    assert_eq!(records.by_ref().count(), COUNTS.iter().sum::<usize>());
    let saved = records.checkpoint();
    assert!(saved.is_finished());
    assert!(labels(&ds.resume(saved)).is_empty());
}

#[test]
fn a_checkpoint_of_other_options_or_files_is_refused() {
    let dir = data();
    let ds = open(dir.path(), DatasetOptions::new().shuffle(Shuffle::new(1)));
    let mut records = ds.records().expect("starts");
    records.next();
    let saved = records.checkpoint();
    for other in [
        DatasetOptions::new().shuffle(Shuffle::new(2)),
        DatasetOptions::new(),
        DatasetOptions::new().shuffle(Shuffle::new(1)).take(5),
    ] {
        let err = open(dir.path(), other)
            .resume(saved.clone())
            .records()
            .err();
        assert!(matches!(err, Some(Error::Checkpoint(_))), "{err:?}");
    }
    let fewer = tempfile::tempdir().expect("tempdir");
    write_set(fewer.path(), &COUNTS[..3], |k| format!("c{k:02}.tfrecord"));
    let ds = open(fewer.path(), DatasetOptions::new().shuffle(Shuffle::new(1)));
    assert!(ds.resume(saved).records().is_err());
    let err = Checkpoint::from_json("{\"version\": 1}").expect_err("not a checkpoint");
    assert!(
        err.to_string().contains("not a data set checkpoint"),
        "{err}"
    );
}

/// A file that changed size since the checkpoint (grown, shrunk, rewritten) would move the
/// byte ranges and positions the checkpoint holds: resuming is refused. One changed in place,
/// at the same size, is read as it is now, and damage where the checkpoint resumes is an error
/// naming the file and byte.
#[test]
fn a_file_changed_since_the_checkpoint_is_an_error() {
    for name in ["one.tfrecord", "one.tfrecord.gz"] {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(name);
        write_labels(&path, 0, 20);
        let ds = open(dir.path(), DatasetOptions::new());
        let mut records = ds.records().expect("starts");
        assert_eq!(records.by_ref().take(12).count(), 12);
        let saved = records.checkpoint();
        drop(records);
        // Longer labels: record 12 is no longer where it was.
        write_labels(&path, 1000, 20);
        let err = ds.clone().resume(saved.clone()).records().err();
        assert!(
            matches!(&err, Some(Error::Checkpoint(m)) if m.contains("sizes")),
            "{err:?}"
        );
        // The same spelled another way is the same file.
        let dotted = open(&dir.path().join("."), DatasetOptions::new());
        write_labels(&path, 0, 20);
        assert!(dotted.resume(saved.clone()).records().is_ok(), "{name}");
        if name.ends_with(".gz") {
            continue;
        }
        // The same size, with a broken length where reading resumes.
        let mut bytes = std::fs::read(&path).expect("reads");
        let at = offset_of(&bytes, 12);
        bytes[at + 8] ^= 0xff;
        std::fs::write(&path, &bytes).expect("writes");
        let err = ds
            .resume(saved)
            .records()
            .expect("starts")
            .find_map(Result::err)
            .expect("an error");
        let msg = err.to_string();
        assert!(msg.contains(name), "{msg}");
        assert!(msg.contains(&format!("byte {at}")), "{msg}");
    }
}

/// Where record `k` of an uncompressed TFRecord file starts.
fn offset_of(bytes: &[u8], k: usize) -> usize {
    let mut at = 0;
    for _ in 0..k {
        let len = u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        at += 16 + usize::try_from(len).expect("fits");
    }
    at
}

/// A checkpoint whose numbers were edited to their largest values resumes without a panic: to
/// an end, or an error.
#[test]
fn an_edited_checkpoint_does_not_panic() {
    let dir = data();
    for opts in [
        DatasetOptions::new().shuffle(Shuffle::new(3).buffer_size(10)),
        DatasetOptions::new().interleave(3, 2).threads(2).take(40),
    ] {
        resume_edited(&open(dir.path(), opts));
    }
}

/// A checkpoint's JSON form with its seal made again (FNV-1a of the form with the seal 0), as
/// if it had been taken so: `None` for text that is not a checkpoint.
fn reseal(json: &str) -> Option<Checkpoint> {
    let text = Checkpoint::from_json(json).ok()?.to_json();
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    let old = format!("\"seal\":{}", value["seal"].as_u64()?);
    let unsealed = text.replace(&old, "\"seal\":0");
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in unsealed.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    Checkpoint::from_json(&text.replace(&old, &format!("\"seal\":{h}"))).ok()
}

/// A checkpoint edited and sealed again so that its positions contradict each other is refused
/// as one, on any thread count: a split open in two slots of the interleave, a shuffle buffer
/// holding more records than its size, or one record twice.
#[test]
fn a_resealed_checkpoint_of_contradicting_positions_is_refused() {
    let dir = data();
    let opts = DatasetOptions::new()
        .interleave(3, 2)
        .shuffle(Shuffle::new(4).buffer_size(10));
    let ds = open(dir.path(), opts);
    let mut records = ds.records().expect("starts");
    for r in records.by_ref().take(20) {
        r.expect("reads");
    }
    let json = records.checkpoint().to_json();
    drop(records);
    let value: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let mut same_split = value.clone();
    let slots = same_split["interleave"]["slots"]
        .as_array_mut()
        .expect("slots");
    let first = slots
        .iter()
        .find(|s| !s.is_null())
        .cloned()
        .expect("an open slot");
    for slot in slots.iter_mut() {
        *slot = first.clone();
    }
    let mut over = value.clone();
    let buffered = over["shuffle"]["records"].as_array_mut().expect("buffer");
    let copy = buffered.clone();
    for _ in 0..3 {
        buffered.extend(copy.iter().cloned());
    }
    let mut twice = value.clone();
    let buffered = twice["shuffle"]["records"].as_array_mut().expect("buffer");
    buffered[1] = buffered[0].clone();
    for (edit, expected) in [
        (same_split, "open in two slots"),
        (over, "more than its size of 10"),
        (twice, "in the shuffle buffer twice"),
    ] {
        let saved = reseal(&edit.to_string()).expect("a checkpoint");
        for threads in [1, 3] {
            let resumed = ds
                .clone()
                .with_options(ds.options().clone().threads(threads))
                .resume(saved.clone());
            let err = resumed.records().map(drop).expect_err(expected);
            assert!(matches!(err, Error::Checkpoint(_)), "{err:?}");
            assert!(err.to_string().contains(expected), "{err}");
        }
    }
}

fn resume_edited(ds: &Dataset) {
    let mut records = ds.records().expect("starts");
    records.next().expect("a record").expect("reads");
    let json = records.checkpoint().to_json();
    drop(records);
    let value: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let mut edits = Vec::new();
    // Every number in the checkpoint, one at a time, at u64::MAX.
    fn numbers(v: &serde_json::Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        match v {
            serde_json::Value::Number(_) => out.push(path.clone()),
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    path.push(k.clone());
                    numbers(v, path, out);
                    path.pop();
                }
            }
            serde_json::Value::Array(a) => {
                for (i, v) in a.iter().enumerate() {
                    path.push(i.to_string());
                    numbers(v, path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    numbers(&value, &mut Vec::new(), &mut edits);
    assert!(edits.len() > 3, "{json}");
    for edit in edits {
        let mut v = value.clone();
        let mut at = &mut v;
        for k in &edit {
            at = match at {
                serde_json::Value::Object(m) => m.get_mut(k).expect("key"),
                serde_json::Value::Array(a) => &mut a[k.parse::<usize>().expect("index")],
                _ => unreachable!("a path to a number"),
            };
        }
        *at = serde_json::Value::from(u64::MAX);
        // As edited, the seal refuses it; sealed again, the positions are checked.
        if let Ok(saved) = Checkpoint::from_json(&v.to_string()) {
            let err = ds.clone().resume(saved).records().map(drop).unwrap_err();
            assert!(err.to_string().contains("seal"), "{edit:?}: {err}");
        }
        let Some(saved) = reseal(&v.to_string()) else {
            continue;
        };
        if let Ok(records) = ds.clone().resume(saved).records() {
            for r in records.take(1000) {
                if r.is_err() {
                    break;
                }
            }
        }
    }
}

/// Files with damage of every kind: garbage between records, a payload whose data checksum
/// fails, a length whose checksum fails, and a damaged payload inside a gzip stream.
fn damaged() -> tempfile::TempDir {
    use tfrecord_core::{ReaderOptions, index::Index};
    let dir = tempfile::tempdir().expect("tempdir");
    let frames = |path: &std::path::Path| -> Vec<usize> {
        let index = Index::build(path, ReaderOptions::new()).expect("indexes");
        let at = |e: &tfrecord_core::index::IndexEntry| usize::try_from(e.offset).expect("small");
        index.entries().iter().map(at).collect()
    };
    let damage = |name: &str, k: usize, edit: &dyn Fn(&mut Vec<u8>, &[usize])| {
        let plain = dir.path().join("plain.tfrecord");
        write_labels(&plain, k, 20);
        let at = frames(&plain);
        let mut bytes = std::fs::read(&plain).expect("reads");
        std::fs::remove_file(&plain).expect("removes");
        edit(&mut bytes, &at);
        let path = dir.path().join(name);
        if name.ends_with(".gz") {
            use std::io::Write;
            let file = std::fs::File::create(&path).expect("creates");
            let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
            gz.write_all(&bytes).expect("compresses");
            gz.finish().expect("finishes");
        } else {
            std::fs::write(&path, &bytes).expect("writes");
        }
    };
    damage("d0-garbage.tfrecord", 0, &|b, at| {
        b.splice(at[9]..at[9], [0x5a; 37]);
    });
    damage("d1-payload.tfrecord", 1, &|b, at| b[at[4] + 12] ^= 0x01);
    damage("d2-length.tfrecord", 2, &|b, at| b[at[12]] ^= 0x40);
    damage("d3-payload.tfrecord.gz", 3, &|b, at| b[at[6] + 12] ^= 0x01);
    dir
}

/// Each record with its place, and the offsets of what was skipped, in order.
type Read = (Vec<(String, String, u64, u64)>, Vec<(String, u64)>);

fn read_over_damage(ds: &Dataset, policy: &tfrecord_core::BadRecords, stop: Option<usize>) -> Read {
    let skipped = |policy: &tfrecord_core::BadRecords| -> Vec<(String, u64)> {
        policy
            .take_logged()
            .iter()
            .map(|s| {
                let file = s
                    .path()
                    .and_then(|p| p.file_name())
                    .map(|n| n.to_string_lossy());
                (file.unwrap_or_default().into_owned(), s.offset())
            })
            .collect()
    };
    let mut records = ds.records().expect("starts");
    let mut got = Vec::new();
    for r in records.by_ref().take(stop.unwrap_or(usize::MAX)) {
        got.push(placed(&r.expect("within the budget")));
    }
    if stop.is_some() {
        let saved = Checkpoint::from_json(&records.checkpoint().to_json()).expect("parses");
        drop(records);
        records = ds.clone().resume(saved).records().expect("resumes");
        got.extend(records.map(|r| placed(&r.expect("within the budget"))));
    }
    (got, skipped(policy))
}

/// Resuming anywhere over damaged files gives the records an uninterrupted read gives, with
/// their places, and reports each skipped record or range once: a saved position is returned
/// to without reading (or judging) what lies before it, inside a byte-range split too.
#[test]
fn resuming_over_damage_gives_the_uninterrupted_stream_and_reports_each_skip_once() {
    use tfrecord_core::{BadRecords, ReaderOptions};
    let dir = damaged();
    let configurations = [
        ("sequential", DatasetOptions::new()),
        ("byte-range shard 0 of 8", DatasetOptions::new().shard(0, 8)),
        ("byte-range shard 5 of 8", DatasetOptions::new().shard(5, 8)),
        (
            "shuffle buffer",
            DatasetOptions::new().shuffle(Shuffle::new(3).buffer_size(10)),
        ),
        (
            "interleave, 2 threads",
            DatasetOptions::new().interleave(2, 1).threads(2),
        ),
    ];
    let mut met = 0;
    for (name, opts) in configurations {
        for resyncs in [true, false] {
            let run = |stop| {
                // A new budget for each read (clones of a policy share theirs).
                let policy = if resyncs {
                    BadRecords::resync(100)
                } else {
                    BadRecords::skip(100)
                }
                .shared_log();
                let reader = ReaderOptions::new().bad_records(policy.clone());
                // Skipping alone passes over damaged payloads; broken framing needs resync.
                let files = if resyncs {
                    vec![dir.path().to_path_buf()]
                } else {
                    ["d1-payload.tfrecord", "d3-payload.tfrecord.gz"]
                        .map(|n| dir.path().join(n))
                        .to_vec()
                };
                let ds = Dataset::open(files)
                    .expect("lists")
                    .with_options(opts.clone().reader(reader));
                read_over_damage(&ds, &policy, stop)
            };
            let whole = run(None);
            met += usize::from(!whole.1.is_empty());
            for stop in 0..=whole.0.len() {
                let (records, log) = run(Some(stop));
                assert_eq!(records, whole.0, "{name}: resumed after {stop} records");
                // Damage is logged as it is read, and reading runs ahead of the records handed
                // out (`DatasetOptions::reader`): damage past the saved position may be met
                // again by the resumed read, but nothing before it is.
                let mut once = log.clone();
                let mut seen = std::collections::HashSet::new();
                once.retain(|d| seen.insert(d.clone()));
                // Threads log in the order they read.
                let sorted = |mut v: Vec<(String, u64)>| {
                    v.sort();
                    v
                };
                assert_eq!(
                    sorted(once.clone()),
                    sorted(whole.1.clone()),
                    "{name}: resumed after {stop} records"
                );
                if name == "sequential" {
                    // One file at a time: only the file of the next record is read again.
                    let next = whole.0.get(stop).map(|r| r.1.clone());
                    let repeated = log.len() - once.len();
                    let again = log.iter().filter(|d| Some(&d.0) == next.as_ref()).count()
                        - once.iter().filter(|d| Some(&d.0) == next.as_ref()).count();
                    assert_eq!(repeated, again, "{name}: resumed after {stop}: {log:?}");
                }
            }
        }
    }
    // Every read met damage but shards that hold none.
    assert!(met >= 8, "damage met by {met} reads of 10");
}

/// A policy given without a shared log still reports every skip: the iterators' `drain_skipped`
/// gives each once (the same reports that the files read one by one give), on one thread and
/// two.
#[test]
fn skips_are_drained_from_the_iterators_whatever_the_policy_was_given() {
    use tfrecord_core::{BadRecords, ReaderOptions, RecordReader};
    let dir = damaged();
    let mut want: Vec<(String, u64)> = Vec::new();
    for name in [
        "d0-garbage.tfrecord",
        "d1-payload.tfrecord",
        "d2-length.tfrecord",
        "d3-payload.tfrecord.gz",
    ] {
        let path = dir.path().join(name);
        let opts = ReaderOptions::for_path(&path).bad_records(BadRecords::resync(10));
        let mut reader = RecordReader::open(&path, opts).expect("opens");
        assert!(reader.by_ref().all(|r| r.is_ok()));
        want.extend(
            reader
                .drain_skipped()
                .map(|s| (name.to_owned(), s.offset())),
        );
    }
    want.sort();
    assert_eq!(want.len(), 4, "{want:?}");
    let named = |v: Vec<tfrecord_core::Skipped>| -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = v
            .iter()
            .map(|s| {
                let name = s.path().and_then(|p| p.file_name()).expect("a file");
                (name.to_string_lossy().into_owned(), s.offset())
            })
            .collect();
        v.sort();
        v
    };
    for threads in [1, 2] {
        let policy = BadRecords::resync(10);
        let opts = DatasetOptions::new()
            .threads(threads)
            .reader(ReaderOptions::new().bad_records(policy.clone()));
        let ds = open(dir.path(), opts);
        let mut records = ds.records().expect("starts");
        assert_eq!(records.by_ref().filter(Result::is_ok).count(), 80 - 3);
        assert_eq!(named(records.drain_skipped()), want, "{threads} threads");
        assert!(records.drain_skipped().is_empty(), "each report once");
        assert_eq!(policy.spent(), 4, "the budget of the policy passed in");
    }
}

/// What a read over damage gives: the labels handed out, the error that ended it, the reports
/// taken, and the budget spent.
type Run = (Vec<String>, Option<String>, usize, u64);

fn read_on_budget(dir: &std::path::Path, order: &DatasetOptions, threads: usize, max: u64) -> Run {
    use tfrecord_core::{BadRecords, ReaderOptions};
    let policy = BadRecords::resync(max);
    let opts = order
        .clone()
        .threads(threads)
        .reader(ReaderOptions::new().bad_records(policy.clone()));
    let mut records = open(dir, opts).records().expect("starts");
    let mut got = Vec::new();
    let mut err = None;
    for r in records.by_ref() {
        match r {
            Ok(r) => got.push(text(&r)),
            Err(e) => {
                err = Some(e.to_string());
                break;
            }
        }
    }
    (got, err, records.drain_skipped().len(), policy.spent())
}

/// The budget is charged in the order the records are handed out, not the order the reading
/// threads meet the damage: a read that runs out of it stops at the same record, with the same
/// error, whatever the threads and however far the blocks read ahead. In file order the
/// error names the damage one past the budget, after every record before it.
#[test]
fn the_budget_runs_out_at_the_same_record_whatever_the_threads() {
    let dir = damaged();
    // Per file, in order: its records before its damage, and after it.
    let files = [
        ("d0-garbage.tfrecord", 9, 11),
        ("d1-payload.tfrecord", 4, 15),
        ("d2-length.tfrecord", 12, 7),
        ("d3-payload.tfrecord.gz", 6, 13),
    ];
    for max in 0..4u64 {
        let (got, err, reports, spent) = read_on_budget(dir.path(), &DatasetOptions::new(), 1, max);
        let k = usize::try_from(max).expect("small");
        let before: usize = files[..k].iter().map(|(_, a, b)| a + b).sum::<usize>() + files[k].1;
        assert_eq!(got.len(), before, "budget {max}");
        let err = err.expect("over the budget");
        assert!(
            err.contains(files[k].0) && err.contains("budget"),
            "budget {max}: {err}"
        );
        // The damage's record index, as its file's reader counted it.
        assert!(
            err.contains(&format!("(record {})", files[k].1)),
            "budget {max}: {err}"
        );
        assert_eq!((reports, spent), (k, max), "budget {max}");
        for order in [
            DatasetOptions::new(),
            DatasetOptions::new().interleave(2, 1),
            DatasetOptions::new().interleave(3, 2),
        ] {
            let one = read_on_budget(dir.path(), &order, 1, max);
            for threads in [2, 3] {
                for _ in 0..3 {
                    let run = read_on_budget(dir.path(), &order, threads, max);
                    assert_eq!(run, one, "budget {max}, {threads} threads, {order:?}");
                }
            }
        }
    }
}
