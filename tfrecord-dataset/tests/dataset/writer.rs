//! Sharded writers: names, splits, refusing to overwrite, and reading the shards back.

use std::fs;
use std::path::{Path, PathBuf};

use tfrecord_core::{Compression, Format, OfRecord, TfExample, WriterOptions};
use tfrecord_dataset::{
    Dataset, DatasetOptions, Error, ShardNaming, ShardSplit, ShardedWriter, ShardedWriterOptions,
    Sources,
};

use super::support::{Labelled, labels};

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .expect("lists")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn write(opts: ShardedWriterOptions, n: usize) -> Vec<PathBuf> {
    let mut w = ShardedWriter::create(opts).expect("creates");
    for i in 0..n {
        w.write(format!("0:{i}").as_bytes()).expect("writes");
    }
    assert_eq!(w.records_written(), n as u64);
    w.finish().expect("finishes")
}

fn expected(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("0:{i}")).collect()
}

#[test]
fn round_robin_shards_read_back_in_order_with_an_interleave_of_their_count() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().join("train.tfrecord");
    let opts = ShardedWriterOptions::new(ShardNaming::TensorFlow(base), ShardSplit::RoundRobin(4));
    let paths = write(opts, 30);
    assert_eq!(
        names(dir.path()),
        [
            "train-00000-of-00004.tfrecord",
            "train-00001-of-00004.tfrecord",
            "train-00002-of-00004.tfrecord",
            "train-00003-of-00004.tfrecord",
        ]
    );
    assert_eq!(paths.len(), 4);
    let ds = Dataset::open([dir.path()]).expect("lists");
    let ds = ds.with_options(DatasetOptions::new().interleave(4, 1));
    assert_eq!(labels(&ds), expected(30));
}

#[test]
fn record_and_byte_splits_name_the_count_once_known() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().join("r.tfrecord.gz");
    let opts = ShardedWriterOptions::new(ShardNaming::TensorFlow(base), ShardSplit::Records(7))
        .writer(WriterOptions::new().compression(Compression::Gzip));
    write(opts, 30);
    let got = names(dir.path());
    assert_eq!(got.len(), 5);
    assert_eq!(got[4], "r-00004-of-00005.tfrecord.gz");
    let files = Sources::new().input(dir.path()).resolve().expect("lists");
    assert!(files.iter().all(|f| f.compression == Compression::Gzip));
    assert_eq!(labels(&Dataset::from_files(files)), expected(30));

    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().join("b.tfrecord");
    // "0:i" is 3 or 4 bytes, 19 or 20 framed: a new shard after every 6th record.
    let opts = ShardedWriterOptions::new(ShardNaming::TensorFlow(base), ShardSplit::Bytes(100));
    write(opts, 25);
    assert_eq!(names(dir.path()).len(), 5);
    for name in names(dir.path()) {
        assert!(name.ends_with("-of-00005.tfrecord"), "{name}");
    }
    let ds = Dataset::open([dir.path()]).expect("lists");
    assert_eq!(labels(&ds), expected(25));
}

#[test]
fn nothing_written_is_one_empty_shard() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().join("e.tfrecord");
    let opts = ShardedWriterOptions::new(ShardNaming::TensorFlow(base), ShardSplit::Bytes(10));
    write(opts, 0);
    assert_eq!(names(dir.path()), ["e-00000-of-00001.tfrecord"]);
}

#[test]
fn oneflow_parts_hold_ofrecords_of_derived_types() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("of");
    let opts = ShardedWriterOptions::new(ShardNaming::OneFlow(out.clone()), ShardSplit::Records(4))
        .format(Format::OfRecord)
        .sync(true);
    let mut w = ShardedWriter::create(opts).expect("creates");
    let values: Vec<Labelled> = (0..10)
        .map(|i| Labelled {
            file: 0,
            index: i,
            pad: vec![1; usize::try_from(i).expect("small")],
        })
        .collect();
    for v in &values {
        w.write_value::<OfRecord, _>(v).expect("writes");
    }
    let err = w
        .write_value::<TfExample, _>(&values[0])
        .expect_err("a TFRecord container");
    assert!(
        err.is_usage() && err.to_string().contains("ofrecord"),
        "{err}"
    );
    w.finish().expect("finishes");
    assert_eq!(names(&out), ["part-00000", "part-00001", "part-00002"]);
    let sources = Sources::new().format(Format::OfRecord).input(&out);
    let ds = Dataset::from_sources(&sources).expect("lists");
    let back: Vec<Labelled> = ds
        .values_in::<Labelled, OfRecord>()
        .expect("starts")
        .collect::<Result<_, _>>()
        .expect("reads");
    assert_eq!(back, values);
}

#[test]
fn existing_outputs_are_refused_unless_overwrite_which_replaces_the_whole_set() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().join("o.tfrecord");
    let naming = ShardNaming::TensorFlow(base);
    write(
        ShardedWriterOptions::new(naming.clone(), ShardSplit::RoundRobin(3)),
        9,
    );
    fs::write(dir.path().join("other.tfrecord"), b"").expect("writes");
    let before = names(dir.path());
    let err = ShardedWriter::create(ShardedWriterOptions::new(
        naming.clone(),
        ShardSplit::RoundRobin(2),
    ))
    .err()
    .expect("exists");
    assert!(
        matches!(err, Error::Exists(ref p) if p.ends_with("o-00000-of-00003.tfrecord")),
        "{err}"
    );
    assert_eq!(names(dir.path()), before);

    let opts = ShardedWriterOptions::new(naming, ShardSplit::RoundRobin(2)).overwrite(true);
    write(opts, 4);
    assert_eq!(
        names(dir.path()),
        [
            "o-00000-of-00002.tfrecord",
            "o-00001-of-00002.tfrecord",
            "other.tfrecord"
        ]
    );
}

/// A set overwritten by one of the same shard count whose renames stop part-way (here: the
/// third shard's file is gone) puts everything back: the older set whole under its names, no
/// shard of the new one, never the new shards beside the old ones under one name.
#[test]
fn renames_that_stop_part_way_put_the_older_set_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let naming = ShardNaming::TensorFlow(dir.path().join("o.tfrecord"));
    write(
        ShardedWriterOptions::new(naming.clone(), ShardSplit::RoundRobin(4)),
        8,
    );
    let before: Vec<Vec<u8>> = names(dir.path())
        .iter()
        .map(|n| fs::read(dir.path().join(n)).expect("reads"))
        .collect();
    let opts = ShardedWriterOptions::new(naming, ShardSplit::RoundRobin(4)).overwrite(true);
    let mut w = ShardedWriter::create(opts).expect("creates");
    for i in 0..12u8 {
        w.write(&[i]).expect("writes");
    }
    let third = names(dir.path())
        .into_iter()
        .find(|n| n.starts_with(".o-00002.tfrecord.tmp-"))
        .expect("the third shard's temporary file");
    fs::remove_file(dir.path().join(third)).expect("removes");
    let err = w.finish().expect_err("the third rename fails");
    assert!(
        err.to_string()
            .contains("no shard of the new set is left in place, and the older set is as it was"),
        "{err}"
    );
    let set: Vec<String> = (0..4)
        .map(|i| format!("o-0000{i}-of-00004.tfrecord"))
        .collect();
    assert_eq!(names(dir.path()), set);
    let after: Vec<Vec<u8>> = names(dir.path())
        .iter()
        .map(|n| fs::read(dir.path().join(n)).expect("reads"))
        .collect();
    assert_eq!(after, before, "the older set, byte for byte");
}

/// A file of the older set that cannot be moved aside (here a directory named as one of its
/// shards) stops the replacement before anything changed.
#[test]
fn an_older_set_that_cannot_be_moved_aside_stays_as_it_was() {
    let dir = tempfile::tempdir().expect("tempdir");
    let naming = ShardNaming::TensorFlow(dir.path().join("o.tfrecord"));
    write(
        ShardedWriterOptions::new(naming.clone(), ShardSplit::RoundRobin(3)),
        6,
    );
    fs::remove_file(dir.path().join("o-00001-of-00003.tfrecord")).expect("removes");
    fs::create_dir(dir.path().join("o-00001-of-00003.tfrecord")).expect("mkdir");
    let before = names(dir.path());
    let opts = ShardedWriterOptions::new(naming, ShardSplit::RoundRobin(2)).overwrite(true);
    let mut w = ShardedWriter::create(opts).expect("creates");
    for i in 0..4u8 {
        w.write(&[i]).expect("writes");
    }
    let err = w.finish().expect_err("the directory is not a shard");
    assert!(
        err.to_string().contains("o-00001-of-00003.tfrecord")
            && err.to_string().contains("it is left as it was"),
        "{err}"
    );
    assert_eq!(names(dir.path()), before);
}

/// Files an earlier run moved aside and left (killed while it replaced a set) go when a set of
/// that name is replaced again; hidden files of other names stay.
#[test]
fn files_left_aside_by_a_killed_run_go_with_the_next_replacement() {
    let dir = tempfile::tempdir().expect("tempdir");
    let naming = ShardNaming::TensorFlow(dir.path().join("o.tfrecord"));
    write(
        ShardedWriterOptions::new(naming.clone(), ShardSplit::RoundRobin(2)),
        4,
    );
    fs::write(
        dir.path().join(".o-00001-of-00003.tfrecord.old-999-1"),
        b"x",
    )
    .expect("writes");
    fs::write(dir.path().join(".other.tfrecord.old-999-0"), b"x").expect("writes");
    write(
        ShardedWriterOptions::new(naming, ShardSplit::RoundRobin(2)).overwrite(true),
        4,
    );
    assert_eq!(
        names(dir.path()),
        [
            ".other.tfrecord.old-999-0",
            "o-00000-of-00002.tfrecord",
            "o-00001-of-00002.tfrecord"
        ]
    );
}

#[test]
fn an_unfinished_writer_leaves_nothing_behind() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().join("u.tfrecord");
    let opts = ShardedWriterOptions::new(ShardNaming::TensorFlow(base), ShardSplit::Records(2));
    let mut w = ShardedWriter::create(opts).expect("creates");
    for i in 0..7u8 {
        w.write(&[i]).expect("writes");
    }
    assert_eq!(names(dir.path()).len(), 4, "temporary files while writing");
    assert!(names(dir.path()).iter().all(|n| n.starts_with('.')));
    let err = Dataset::open([dir.path()]).expect_err("no finished shard");
    assert!(matches!(err, Error::NoFiles { .. }), "{err:?}");
    drop(w);
    assert!(names(dir.path()).is_empty());
}

/// A prefix that names a directory would put the shards beside it (`DIR-00000-of-00002`):
/// a usage error that says to name a file inside it, and nothing is written.
#[test]
fn a_directory_as_the_name_prefix_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    fs::create_dir(&out).expect("mkdir");
    let slash = PathBuf::from(format!("{}/", dir.path().join("new").display()));
    for prefix in [out.clone(), slash] {
        let naming = ShardNaming::TensorFlow(prefix.clone());
        let opts = ShardedWriterOptions::new(naming, ShardSplit::RoundRobin(2));
        let err = ShardedWriter::create(opts).err().expect("refused");
        assert!(err.is_usage(), "{prefix:?}: {err}");
        assert!(err.to_string().contains("train.tfrecord"), "{err}");
    }
    assert_eq!(names(dir.path()), ["out"]);
    assert!(names(&out).is_empty());
}

#[test]
fn zero_shards_or_sizes_are_usage_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    for split in [
        ShardSplit::RoundRobin(0),
        ShardSplit::Records(0),
        ShardSplit::Bytes(0),
    ] {
        let naming = ShardNaming::TensorFlow(dir.path().join("z.tfrecord"));
        let err = ShardedWriter::create(ShardedWriterOptions::new(naming, split)).err();
        assert!(err.is_some_and(|e| e.is_usage()));
    }
}

#[test]
fn even_shards_hold_consecutive_records_and_exactly_the_declared_total() {
    for (total, sizes) in [(10u64, vec![2u64, 3, 2, 3]), (2, vec![0, 1, 0, 1])] {
        let dir = tempfile::tempdir().expect("tempdir");
        let naming = ShardNaming::TensorFlow(dir.path().join("v.tfrecord"));
        let split = ShardSplit::Even { shards: 4, total };
        let paths = write(ShardedWriterOptions::new(naming, split), total as usize);
        let got: Vec<u64> = paths
            .iter()
            .map(|p| {
                Dataset::open([p])
                    .expect("a file")
                    .records()
                    .expect("starts")
                    .count() as u64
            })
            .collect();
        assert_eq!(got, sizes, "{total} records");
        let ds = Dataset::open([dir.path()]).expect("lists");
        assert_eq!(labels(&ds), expected(total as usize));
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let naming = ShardNaming::TensorFlow(dir.path().join("v.tfrecord"));
    let split = ShardSplit::Even {
        shards: 2,
        total: 3,
    };
    let mut w =
        ShardedWriter::create(ShardedWriterOptions::new(naming.clone(), split)).expect("creates");
    for _ in 0..3 {
        w.write(b"x").expect("writes");
    }
    assert!(w.write(b"x").expect_err("a fourth record").is_usage());
    drop(w);
    let mut w = ShardedWriter::create(ShardedWriterOptions::new(naming, split)).expect("creates");
    w.write(b"x").expect("writes");
    let err = w.finish().expect_err("two records short");
    assert!(err.to_string().contains("declared for 3"), "{err}");
    assert!(names(dir.path()).is_empty());
}

/// With `overwrite`, the files of other sets of the output's name are removed after the
/// renames, and `finish_report` says which (for a caller to tell its user); files of the new
/// set's own names are replaced, not reported.
#[test]
fn finish_report_names_the_files_of_other_sets_it_removes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let naming = ShardNaming::TensorFlow(dir.path().join("t.tfrecord"));
    write(
        ShardedWriterOptions::new(naming.clone(), ShardSplit::RoundRobin(2)),
        4,
    );
    fs::write(dir.path().join("t-00009-of-00012.tfrecord"), b"").expect("writes");
    fs::write(dir.path().join("u-00000-of-00002.tfrecord"), b"").expect("writes");
    assert_eq!(naming.existing().expect("lists").len(), 3);
    let opts = ShardedWriterOptions::new(naming.clone(), ShardSplit::RoundRobin(1)).overwrite(true);
    let mut w = ShardedWriter::create(opts).expect("creates");
    w.write(b"x").expect("writes");
    let done = w.finish_report().expect("finishes");
    assert_eq!(done.paths, [dir.path().join("t-00000-of-00001.tfrecord")]);
    let removed: Vec<String> = done
        .removed
        .iter()
        .map(|p| p.file_name().expect("name").to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        removed,
        [
            "t-00000-of-00002.tfrecord",
            "t-00001-of-00002.tfrecord",
            "t-00009-of-00012.tfrecord"
        ]
    );
    assert!(done.removed.iter().all(|p| !p.exists()));
    assert_eq!(
        names(dir.path()),
        ["t-00000-of-00001.tfrecord", "u-00000-of-00002.tfrecord"]
    );
    // Writing the same set again replaces its one file: nothing to report.
    let opts = ShardedWriterOptions::new(naming, ShardSplit::RoundRobin(1)).overwrite(true);
    let w = ShardedWriter::create(opts).expect("creates");
    assert!(w.finish_report().expect("finishes").removed.is_empty());
}

#[test]
fn a_missing_directory_is_made_for_either_naming() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().join("new").join("deeper").join("train.tfrecord");
    let paths = write(
        ShardedWriterOptions::new(ShardNaming::TensorFlow(base), ShardSplit::RoundRobin(2)),
        3,
    );
    assert_eq!(
        names(&dir.path().join("new").join("deeper")),
        [
            "train-00000-of-00002.tfrecord",
            "train-00001-of-00002.tfrecord"
        ]
    );
    assert_eq!(paths.len(), 2);
}

/// A TensorFlow name with a compression suffix is written so compressed (readers take the
/// compression from the name); options that say otherwise are a usage error.
#[test]
fn a_compression_suffix_of_the_name_compresses_the_shards() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().join("train.tfrecord.gz");
    let opts = ShardedWriterOptions::new(
        ShardNaming::TensorFlow(base.clone()),
        ShardSplit::RoundRobin(2),
    );
    let paths = write(opts, 5);
    for p in &paths {
        let head = fs::read(p).expect("reads");
        assert_eq!(&head[..2], &[0x1f, 0x8b], "{} is gzip", p.display());
    }
    let got: Vec<String> = Dataset::open([dir.path()])
        .expect("lists")
        .with_options(DatasetOptions::new().interleave(2, 1))
        .records()
        .expect("starts")
        .map(|r| String::from_utf8(r.expect("reads").into_bytes()).expect("text"))
        .collect();
    assert_eq!(got, expected(5));

    let other = tempfile::tempdir().expect("tempdir");
    for compression in [Compression::None, Compression::Zlib] {
        let opts = ShardedWriterOptions::new(
            ShardNaming::TensorFlow(other.path().join("train.tfrecord.gz")),
            ShardSplit::RoundRobin(2),
        )
        .writer(WriterOptions::new().compression(compression));
        let err = ShardedWriter::create(opts).err().expect("refused");
        assert!(
            matches!(&err, Error::Options(m) if m.contains("gzip")),
            "{err}"
        );
    }
    // A plain name may hold compressed shards (TensorFlow's readers are told, not guessing).
    let opts = ShardedWriterOptions::new(
        ShardNaming::TensorFlow(other.path().join("train.tfrecord")),
        ShardSplit::RoundRobin(2),
    )
    .writer(WriterOptions::new().compression(Compression::Gzip));
    assert!(ShardedWriter::create(opts).is_ok());
}
