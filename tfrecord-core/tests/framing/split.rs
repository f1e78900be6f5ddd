//! Byte-range splits: for any split points, the splits' records together are the file's
//! records, each once, in order.

use std::ops::Range;

use proptest::prelude::*;
use tfrecord_core::{
    BadRecords, Compression, ErrorKind, Format, ReaderOptions, RecordReader, split_range,
};

use super::common::{
    APIS, Api, Outcome, build, build_as, build_compressed, frame, read_file, read_range, records,
    write,
};

/// The ranges cut at `points` (sorted, deduplicated), the last one open-ended.
fn ranges(points: &[u64]) -> Vec<Range<u64>> {
    let mut cuts = vec![0];
    cuts.extend(points.iter().copied().filter(|&p| p > 0));
    cuts.sort_unstable();
    cuts.dedup();
    let mut out: Vec<Range<u64>> = cuts.windows(2).map(|w| w[0]..w[1]).collect();
    out.push(*cuts.last().unwrap_or(&0)..u64::MAX);
    out
}

/// Reads every range; the records of each, in order.
fn read_splits(
    path: &std::path::Path,
    points: &[u64],
    opts: &ReaderOptions,
    api: Api,
) -> Vec<Outcome> {
    ranges(points)
        .into_iter()
        .map(|r| read_range(path, r, opts.clone(), api))
        .collect()
}

/// One part of a generated payload.
#[derive(Clone, Debug)]
enum Part {
    /// Bytes as they are.
    Bytes(Vec<u8>),
    /// A whole TFRecord frame of this payload, inside the record's payload.
    Frame(Vec<u8>),
}

fn part() -> impl Strategy<Value = Part> {
    prop_oneof![
        3 => proptest::collection::vec(any::<u8>(), 0..120).prop_map(Part::Bytes),
        1 => proptest::collection::vec(any::<u8>(), 0..40).prop_map(Part::Frame),
    ]
}

/// A payload of random bytes (no embedded frames but by chance).
fn plain_payload() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..200)
}

/// A payload: empty, random bytes, or bytes holding TFRecord frames. Two embedded frames are
/// never adjacent (one byte at least between them): a run of two or more would be an embedded
/// TFRecord stream, the case the boundary test is documented not to tell apart (see
/// `an_embedded_stream_is_read_as_documented`).
fn payload() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        1 => Just(Vec::new()),
        4 => proptest::collection::vec(part(), 0..4).prop_map(|parts| {
            let mut out = Vec::new();
            let mut after_frame = false;
            for p in parts {
                match p {
                    Part::Bytes(b) => {
                        after_frame = after_frame && b.is_empty();
                        out.extend(b);
                    }
                    Part::Frame(f) => {
                        if after_frame {
                            out.push(0x5a);
                        }
                        out.extend(frame(&f));
                        after_frame = true;
                    }
                }
            }
            out
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn the_splits_together_are_the_file(
        recs in proptest::collection::vec(payload(), 0..24),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..7),
        api in prop_oneof![Just(Api::Iter), Just(Api::Into), Just(Api::Lent)],
    ) {
        let dir = tempfile::tempdir().unwrap();
        let built = build(&recs);
        let path = write(dir.path(), "data.tfrecord", &built.bytes);
        // Points anywhere in the file, and one past its end.
        let len = built.bytes.len() as u64;
        let points: Vec<u64> = cuts.iter().map(|i| i.index(len as usize + 2) as u64).collect();
        let splits = read_splits(&path, &points, &ReaderOptions::new(), api);
        let mut all = Vec::new();
        for s in &splits {
            prop_assert!(s.error.is_none(), "{:?}", s.error);
            prop_assert!(s.skipped.is_empty());
            all.extend(s.records.iter().cloned());
        }
        prop_assert_eq!(all, recs);
    }

    /// Payloads without embedded frames: a damaged record that holds TFRecord frames is the
    /// documented case a split cannot tell from damage before real records (its length is
    /// trusted by a reader that reaches it, and not by a split that starts inside it; see the
    /// `split` module's docs).
    #[test]
    fn splits_of_a_damaged_file_resync_as_the_whole_file_does(
        recs in proptest::collection::vec(plain_payload(), 1..16),
        damage in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..4), 1..4),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut bytes = build(&recs).bytes;
        for (at, how) in &damage {
            let i = at.index(bytes.len() + 1);
            match how {
                0 => {
                    if let Some(b) = bytes.get_mut(i) {
                        *b ^= 0x10;
                    }
                }
                1 => bytes.splice(i..i, [0xde, 0xad, 0xbe, 0xef, 0x01]).for_each(drop),
                2 => bytes.truncate(i),
                _ => {
                    let end = (i + 9).min(bytes.len());
                    bytes.drain(i..end);
                }
            }
        }
        let path = write(dir.path(), "damaged.tfrecord", &bytes);
        let opts = ReaderOptions::new().bad_records(BadRecords::resync(u64::MAX));
        let whole = read_file(&path, opts.clone(), Api::Lent);
        prop_assert!(whole.error.is_none(), "{:?}", whole.error);
        let len = bytes.len() as u64;
        let points: Vec<u64> = cuts.iter().map(|i| i.index(len as usize + 2) as u64).collect();
        let splits = read_splits(&path, &points, &opts, Api::Lent);
        let mut records = Vec::new();
        let mut skips = Vec::new();
        for s in &splits {
            prop_assert!(s.error.is_none(), "{:?}", s.error);
            records.extend(s.records.iter().cloned());
            skips.extend(s.skips());
        }
        prop_assert_eq!(skips, whole.skips());
        prop_assert_eq!(records, whole.records);
    }
}

/// A payload holding TFRecord streams (runs of frames), nested up to twice, each whole or cut
/// (a file stored in pieces: its first bytes, or its last), between other bytes.
fn stream_payload() -> impl Strategy<Value = Vec<u8>> {
    let inner = proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..30), 0..5);
    let stream = prop_oneof![
        3 => inner.clone().prop_map(|recs| build(&recs).bytes),
        1 => proptest::collection::vec(inner, 1..3).prop_map(|outer| {
            let recs: Vec<Vec<u8>> = outer.iter().map(|r| build(r).bytes).collect();
            build(&recs).bytes
        }),
    ];
    let piece = (stream, 0u8..3, any::<prop::sample::Index>()).prop_map(|(bytes, cut, at)| {
        let at = at.index(bytes.len() + 1);
        match cut {
            0 => bytes,
            1 => bytes[..at].to_vec(),
            _ => bytes[at..].to_vec(),
        }
    });
    (
        proptest::collection::vec(any::<u8>(), 0..20),
        proptest::collection::vec((piece, proptest::collection::vec(any::<u8>(), 0..3)), 1..6),
    )
        .prop_map(|(head, pieces)| {
            let mut out = head;
            for (piece, gap) in pieces {
                out.extend(piece);
                out.extend(gap);
            }
            out
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn splits_are_not_fooled_by_streams_inside_records(
        recs in proptest::collection::vec(
            prop_oneof![2 => payload(), 1 => stream_payload()],
            0..16,
        ),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..9),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let built = build(&recs);
        let path = write(dir.path(), "streams.tfrecord", &built.bytes);
        let len = built.bytes.len() as u64;
        let points: Vec<u64> = cuts.iter().map(|i| i.index(len as usize + 2) as u64).collect();
        let splits = read_splits(&path, &points, &ReaderOptions::new(), Api::Lent);
        let mut all = Vec::new();
        for s in &splits {
            prop_assert!(s.error.is_none(), "{:?}", s.error);
            all.extend(s.records.iter().cloned());
        }
        prop_assert_eq!(all, recs);
    }
}

/// Six records of varied sizes in a file, and where each starts.
fn six(dir: &std::path::Path) -> (std::path::PathBuf, Vec<Vec<u8>>, Vec<u64>, u64) {
    let recs = records(6);
    let built = build(&recs);
    let path = write(dir, "six.tfrecord", &built.bytes);
    (path, recs, built.offsets, built.bytes.len() as u64)
}

#[test]
fn a_split_at_zero_starts_with_the_first_record() {
    let dir = tempfile::tempdir().unwrap();
    let (path, recs, offsets, _) = six(dir.path());
    for api in APIS {
        let got = read_range(&path, 0..offsets[2], ReaderOptions::new(), api);
        assert!(got.error.is_none());
        assert_eq!(got.records, recs[..2], "{api:?}");
        // Up to the first record's start: nothing starts before it.
        let got = read_range(&path, 0..1, ReaderOptions::new(), api);
        assert_eq!(got.records, recs[..1], "{api:?}");
        let got = read_range(&path, 0..0, ReaderOptions::new(), api);
        assert!(got.records.is_empty(), "{api:?}");
    }
}

#[test]
fn a_split_at_the_end_of_the_file_is_empty() {
    let dir = tempfile::tempdir().unwrap();
    let (path, recs, offsets, len) = six(dir.path());
    for api in APIS {
        for range in [len..u64::MAX, len..len + 10, len + 5..len + 10, len..len] {
            let got = read_range(&path, range.clone(), ReaderOptions::new(), api);
            assert!(got.error.is_none() && got.records.is_empty(), "{range:?}");
        }
        // The split before it reads to the end.
        let got = read_range(&path, offsets[4]..len, ReaderOptions::new(), api);
        assert_eq!(got.records, recs[4..], "{api:?}");
        let got = read_range(&path, offsets[4] + 1..len, ReaderOptions::new(), api);
        assert_eq!(got.records, recs[5..], "{api:?}");
    }
}

#[test]
fn a_split_point_inside_a_header_gives_that_record_to_the_split_before() {
    let dir = tempfile::tempdir().unwrap();
    let (path, recs, offsets, _) = six(dir.path());
    for api in APIS {
        for inside in [1, 5, 8, 11] {
            let cut = offsets[3] + inside;
            let before = read_range(&path, offsets[1]..cut, ReaderOptions::new(), api);
            let after = read_range(&path, cut..u64::MAX, ReaderOptions::new(), api);
            assert_eq!(before.records, recs[1..4], "{api:?} +{inside}");
            assert_eq!(after.records, recs[4..], "{api:?} +{inside}");
        }
    }
}

#[test]
fn a_split_point_at_a_boundary_starts_the_record_there() {
    let dir = tempfile::tempdir().unwrap();
    let (path, recs, offsets, _) = six(dir.path());
    for api in APIS {
        for k in 1..6 {
            let before = read_range(&path, 0..offsets[k], ReaderOptions::new(), api);
            let after = read_range(&path, offsets[k]..u64::MAX, ReaderOptions::new(), api);
            assert_eq!(before.records, recs[..k], "{api:?} at record {k}");
            assert_eq!(after.records, recs[k..], "{api:?} at record {k}");
        }
        // A range holding one boundary only: that record, read whole past the range's end.
        let got = read_range(&path, offsets[2]..offsets[2] + 1, ReaderOptions::new(), api);
        assert_eq!(got.records, recs[2..3]);
        // A range inside one record: no record starts in it.
        let got = read_range(&path, offsets[2] + 1..offsets[3], ReaderOptions::new(), api);
        assert!(got.records.is_empty());
    }
}

#[test]
fn split_range_covers_the_file_once() {
    for len in [0u64, 1, 7, 100, 1 << 40, u64::MAX] {
        for n in [1u64, 2, 3, 7, 1000] {
            let parts: Vec<_> = (0..n).map(|i| split_range(len, i, n).unwrap()).collect();
            assert_eq!(parts[0].start, 0);
            assert_eq!(parts[parts.len() - 1].end, len);
            for w in parts.windows(2) {
                assert_eq!(w[0].end, w[1].start);
            }
        }
        assert_eq!(split_range(len, 3, 3), None);
        assert_eq!(split_range(len, 0, 0), None);
    }
}

#[test]
fn open_split_reads_each_record_once_over_the_splits() {
    let dir = tempfile::tempdir().unwrap();
    let recs = records(40);
    let path = write(dir.path(), "forty.tfrecord", &build(&recs).bytes);
    for n in [1, 2, 3, 5, 40, 200] {
        let mut all = Vec::new();
        let mut counted = 0;
        for i in 0..n {
            let mut r = RecordReader::open_split(&path, i, n, ReaderOptions::new()).unwrap();
            for rec in r.by_ref() {
                all.push(rec.unwrap());
            }
            counted += r.records_read();
        }
        assert_eq!(all, recs, "{n} splits");
        assert_eq!(counted, 40);
    }
    let err = RecordReader::open_split(&path, 2, 2, ReaderOptions::new()).expect_err("refused");
    assert!(matches!(err.kind(), ErrorKind::Unsupported { .. }));
    assert!(err.to_string().contains("no split 2 of 2"), "{err}");
}

#[test]
fn record_indices_and_errors_count_from_the_split_start() {
    let dir = tempfile::tempdir().unwrap();
    let recs = records(6);
    let built = build(&recs);
    let mut bytes = built.bytes.clone();
    // A bit of record 4's payload flips.
    let bad = built.offsets[4];
    bytes[bad as usize + 12] ^= 4;
    let path = write(dir.path(), "bad.tfrecord", &bytes);
    let start = built.offsets[2] + 3;
    let mut r = RecordReader::open_range(&path, start..u64::MAX, ReaderOptions::new()).unwrap();
    assert_eq!(r.record_base(), Some(built.offsets[3]));
    assert_eq!(r.offset(), built.offsets[3]);
    assert_eq!(r.next().unwrap().unwrap(), recs[3]);
    assert_eq!(r.records_read(), 1);
    let err = r.next().unwrap().unwrap_err();
    assert_eq!(err.offset(), Some(bad));
    assert_eq!(err.record(), Some(1));
    assert_eq!(err.record_base(), Some(built.offsets[3]));
    let want = format!(
        "at byte {bad} (record 1 of the split starting at byte {})",
        built.offsets[3]
    );
    assert!(err.to_string().contains(&want), "{err}");
    assert!(err.to_string().contains("bad.tfrecord"), "{err}");
    // From the start of the file, the index is the file's.
    let mut r = RecordReader::open_range(&path, 0..u64::MAX, ReaderOptions::new()).unwrap();
    let err = r.find_map(Result::err).unwrap();
    assert_eq!((err.record(), err.record_base()), (Some(4), None));
}

#[test]
fn ofrecord_and_compressed_files_are_split_by_file_only() {
    let dir = tempfile::tempdir().unwrap();
    let recs = records(4);
    let of = write(
        dir.path(),
        "part-00000",
        &build_as(&recs, Format::OfRecord).bytes,
    );
    let opts = ReaderOptions::new().format(Format::OfRecord);
    let err = RecordReader::open_range(&of, 0..10, opts).expect_err("refused");
    assert!(matches!(err.kind(), ErrorKind::Unsupported { .. }));
    let msg = err.to_string();
    assert!(
        msg.contains("part-00000") && msg.contains("OFRecord") && msg.contains("checksums"),
        "{msg}"
    );
    for (c, name) in [(Compression::Gzip, "gzip"), (Compression::Zlib, "zlib")] {
        let path = write(
            dir.path(),
            &format!("d.{name}"),
            &build_compressed(&recs, c),
        );
        let err = RecordReader::open_range(&path, 5..10, ReaderOptions::new().compression(c))
            .expect_err("refused");
        let msg = err.to_string();
        assert!(
            msg.contains(&format!("d.{name}"))
                && msg.contains(name)
                && msg.contains("split by file"),
            "{msg}"
        );
    }
}

#[test]
fn a_split_starting_inside_a_record_that_holds_a_stream_starts_after_it() {
    // Record 1's payload is a whole TFRecord stream of three records (a file stored as bytes),
    // after a few bytes of its own.
    let inner: Vec<Vec<u8>> = vec![b"in-a".to_vec(), b"in-bb".to_vec(), b"in-ccc".to_vec()];
    let mut stored = b"head".to_vec();
    stored.extend(build(&inner).bytes);
    let recs = vec![b"zero".to_vec(), stored, b"two".to_vec(), b"three".to_vec()];
    let built = build(&recs);
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "nested.tfrecord", &built.bytes);
    // A split point inside record 1, before the embedded stream: the split before reads
    // record 1 whole, and the next one starts at record 2, not at the embedded frames (whose
    // chain breaks where the stream ends, inside record 1).
    for opts in [
        ReaderOptions::new(),
        ReaderOptions::new().bad_records(BadRecords::resync(10)),
    ] {
        for cut in [
            built.offsets[1] + 13,
            built.offsets[1] + 30,
            built.offsets[2] - 5,
        ] {
            let first = read_range(&path, 0..cut, opts.clone(), Api::Lent);
            assert_eq!(first.records, recs[..2], "cut {cut}");
            let second = read_range(&path, cut..u64::MAX, opts.clone(), Api::Lent);
            assert!(second.error.is_none(), "cut {cut}: {:?}", second.error);
            assert!(second.skips().is_empty(), "cut {cut}");
            assert_eq!(second.records, recs[2..], "cut {cut}");
        }
    }
    // Every split count gives every record once.
    for n in 1..40 {
        let points: Vec<u64> = (1..n).map(|i| built.bytes.len() as u64 * i / n).collect();
        let splits = read_splits(&path, &points, &ReaderOptions::new(), Api::Lent);
        let all: Vec<Vec<u8>> = splits.iter().flat_map(|s| s.records.clone()).collect();
        assert_eq!(all, recs, "{n} splits");
    }
    // The whole file, read in order, is not fooled.
    let whole = read_file(&path, ReaderOptions::new(), Api::Lent);
    assert_eq!(whole.records, recs);
}

/// Every split count gives every record of `recs` once, for a file of them.
fn every_split_count_reads_each_once(recs: &[Vec<u8>], name: &str) {
    let built = build(recs);
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), name, &built.bytes);
    for n in 1..60 {
        let points: Vec<u64> = (1..n).map(|i| built.bytes.len() as u64 * i / n).collect();
        let splits = read_splits(&path, &points, &ReaderOptions::new(), Api::Lent);
        for s in &splits {
            assert!(s.error.is_none(), "{name}, {n} splits: {:?}", s.error);
        }
        let all: Vec<Vec<u8>> = splits.iter().flat_map(|s| s.records.clone()).collect();
        assert_eq!(all, recs, "{name}, {n} splits");
    }
}

#[test]
fn a_split_starting_inside_a_piece_of_a_stored_file_starts_after_its_record() {
    // A TFRecord file of ten 40-byte records stored in two records, cut inside a frame.
    let inner: Vec<Vec<u8>> = (0..10u8).map(|i| vec![i; 24]).collect();
    let file = build(&inner).bytes;
    let mut recs = vec![b"zero".to_vec(), file[..150].to_vec(), file[150..].to_vec()];
    recs.extend((0..20u8).map(|i| vec![b'r', i]));
    every_split_count_reads_each_once(&recs, "pieces.tfrecord");
}

#[test]
fn a_split_starting_inside_a_record_of_many_streams_starts_after_it() {
    let inner: Vec<Vec<u8>> = vec![b"a".to_vec(), b"bb".to_vec(), b"ccc".to_vec()];
    let mut stored = Vec::new();
    for _ in 0..6 {
        stored.push(0xee);
        stored.extend(build(&inner).bytes);
    }
    let mut recs = vec![b"zero".to_vec(), stored];
    recs.extend((0..10u8).map(|i| vec![b'r', i]));
    every_split_count_reads_each_once(&recs, "streams.tfrecord");
}

#[test]
fn damage_after_a_record_that_holds_a_stream_is_skipped_once() {
    // Record 1 holds a stream; record 2's header is damaged.
    let inner: Vec<Vec<u8>> = vec![b"in-a".to_vec(), b"in-bb".to_vec(), b"in-ccc".to_vec()];
    let mut stored = b"head".to_vec();
    stored.extend(build(&inner).bytes);
    let mut recs = vec![b"zero".to_vec(), stored, b"two".to_vec()];
    recs.extend((0..10u8).map(|i| vec![b'r', i]));
    let built = build(&recs);
    let mut bytes = built.bytes.clone();
    bytes[usize::try_from(built.offsets[2]).unwrap() + 9] ^= 0x40;
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "damaged.tfrecord", &bytes);
    let opts = ReaderOptions::new().bad_records(BadRecords::resync(10));
    let whole = read_file(&path, opts.clone(), Api::Lent);
    assert!(whole.error.is_none(), "{:?}", whole.error);
    assert_eq!(whole.skips().len(), 1);
    for cut in built.offsets[1] + 1..built.offsets[2] + 1 {
        // A budget of its own for each read (clones of a policy share one).
        let opts = ReaderOptions::new().bad_records(BadRecords::resync(10));
        let splits = read_splits(&path, &[cut], &opts, Api::Lent);
        let records: Vec<Vec<u8>> = splits.iter().flat_map(|s| s.records.clone()).collect();
        let skips: Vec<_> = splits.iter().flat_map(|s| s.skips()).collect();
        assert_eq!(records, whole.records, "cut {cut}");
        assert_eq!(skips, whole.skips(), "cut {cut}");
    }
}

/// An empty range holds no record and reports no damage, even where the damage is at its
/// start: the damage at byte 0 belongs to the range that goes on from there, reported once and
/// charged once.
#[test]
fn an_empty_range_at_damage_reports_nothing() {
    let recs = records(6);
    let mut bytes = build(&recs).bytes;
    bytes[8] ^= 0x01; // the first length checksum
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "damaged.tfrecord", &bytes);
    for api in APIS {
        let policy = BadRecords::resync(1);
        let opts = ReaderOptions::new().bad_records(policy.clone());
        for range in [0..0, 0..0] {
            let got = read_range(&path, range, opts.clone(), api);
            assert!(got.error.is_none(), "{api:?}: {:?}", got.error);
            assert!(got.records.is_empty() && got.skips().is_empty(), "{api:?}");
        }
        let got = read_range(&path, 0..u64::MAX, opts.clone(), api);
        assert!(got.error.is_none(), "{api:?}: {:?}", got.error);
        assert_eq!(got.skips().len(), 1, "{api:?}");
        assert_eq!(got.records, recs[1..], "{api:?}");
        assert_eq!(policy.spent(), 1, "{api:?}");
    }
}

/// A range that ends before it starts is an error naming the file; an empty one reads nothing.
#[test]
fn a_reversed_range_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "r.tfrecord", &build(&records(6)).bytes);
    #[allow(clippy::reversed_empty_ranges)] // the mistake under test
    let reversed = 10..5;
    let err = RecordReader::open_range(&path, reversed, ReaderOptions::new()).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Unsupported { .. }), "{err}");
    assert!(err.to_string().contains("10..5"), "{err}");
    assert_eq!(err.path(), Some(path.as_path()));
    let mut empty = RecordReader::open_range(&path, 7..7, ReaderOptions::new()).unwrap();
    assert!(empty.next().is_none());
}

/// A reader returns to a saved position without reading what lies before it: by seeking in an
/// uncompressed file (inside a byte range, keeping its end), by decompressing up to it in a
/// gzip one; damage before the position is not met. It moves only forward, and a position past
/// the end of the stream is an error.
#[test]
fn a_saved_position_is_returned_to_without_reading_what_lies_before_it() {
    use tfrecord_core::{BadRecords, Compression};
    let dir = tempfile::tempdir().expect("tempdir");
    let recs = super::common::records(12);
    let mut built = super::common::build(&recs);
    // Record 2's payload is damaged: a read from the start meets it, a resumed one does not.
    let damaged = usize::try_from(built.offsets[2]).expect("small") + 12;
    built.bytes[damaged] ^= 0x01;
    let plain = dir.path().join("r.tfrecord");
    std::fs::write(&plain, &built.bytes).expect("writes");
    // The same damaged frames, compressed as they are.
    let gz_path = dir.path().join("r.tfrecord.gz");
    std::fs::write(&gz_path, flate2_gzip(&built.bytes)).expect("writes");
    let fail = ReaderOptions::new().bad_records(BadRecords::fail());
    for (path, opts) in [
        (&plain, fail.clone()),
        (&gz_path, fail.clone().compression(Compression::Gzip)),
    ] {
        let mut r = RecordReader::open_at(path, built.offsets[5], 5, opts).expect("opens");
        let rest: Vec<Vec<u8>> = r.by_ref().map(|x| x.expect("intact")).collect();
        assert_eq!(rest, recs[5..], "{}", path.display());
        assert_eq!(r.records_read(), 12);
    }
    // Inside a byte range: the range's end is kept.
    let end = built.offsets[8] - 3;
    let r = RecordReader::open_at(&plain, built.offsets[5], 5, fail.clone())
        .expect("opens")
        .ending_at(end);
    let rest: Vec<Vec<u8>> = r.map(|x| x.expect("intact")).collect();
    assert_eq!(rest, recs[5..8]);
    // Forward only, and not past the end.
    let mut r = RecordReader::open(&plain, fail.clone()).expect("opens");
    r.advance_to(built.offsets[4], 4).expect("forward");
    assert_eq!(r.next().transpose().expect("intact"), Some(recs[4].clone()));
    assert!(r.advance_to(built.offsets[1], 1).is_err(), "backward");
    let len = built.bytes.len() as u64;
    let Err(err) = RecordReader::open_at(&plain, len + 1, 12, fail) else {
        panic!("past the end opens");
    };
    assert!(err.to_string().contains("r.tfrecord"), "{err}");
}

/// `bytes` gzip-compressed, as they are.
fn flate2_gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(bytes).expect("in memory");
    gz.finish().expect("in memory")
}
