//! Which files paths, directories and patterns stand for.

use std::fs;
use std::path::{Path, PathBuf};

use tfrecord_core::{Compression, Format, RecordWriter, WriterOptions};
use tfrecord_dataset::{Dataset, Error, Sources, expand_path};

use super::support::{labels, write_labels};

fn names(files: &[PathBuf]) -> Vec<String> {
    files
        .iter()
        .map(|p| {
            p.file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

fn touch(dir: &Path, names: &[&str]) {
    for name in names {
        fs::write(dir.join(name), b"").expect("writes");
    }
}

#[test]
fn a_directory_of_shards_lists_them_sorted_and_skips_what_is_not_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    touch(
        dir.path(),
        &[
            "train-00002-of-00003.tfrecord",
            "train-00000-of-00003.tfrecord",
            "train-00001-of-00003.tfrecord",
            "extra.tfrecord.gz",
            "_SUCCESS",
            ".train-00003-of-00003.tfrecord.tmp-1-0",
            "train-00000-of-00003.tfrecord.crc",
            "train-00000-of-00003.tfrecord.idx",
            "dataset_info.json",
            "README",
        ],
    );
    fs::create_dir(dir.path().join("nested.tfrecord")).expect("mkdir");
    let files = expand_path(dir.path()).expect("lists");
    assert_eq!(
        names(&files),
        [
            "extra.tfrecord.gz",
            "train-00000-of-00003.tfrecord",
            "train-00001-of-00003.tfrecord",
            "train-00002-of-00003.tfrecord",
        ]
    );
    let resolved = Sources::new().input(dir.path()).resolve().expect("lists");
    assert_eq!(resolved[0].compression, Compression::Gzip);
    assert_eq!(resolved[1].compression, Compression::None);
    assert!(resolved.iter().all(|f| f.format == Format::TfRecord));
}

#[test]
fn record_names_in_any_case_are_listed_and_other_files_are_said_to_be_left_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    touch(
        dir.path(),
        &[
            "val.tfrecord",
            "train.record",
            "test.records.gz",
            "X.TFRecord",
            "Y.TFRECORD.GZ",
            "train.bin",
            "dataset_info.json",
            "_SUCCESS",
            ".hidden",
            "val.tfrecord.idx",
        ],
    );
    let (files, left_out) = Sources::new()
        .input(dir.path())
        .resolve_with_left_out()
        .expect("lists");
    let paths: Vec<PathBuf> = files.iter().map(|f| f.path.clone()).collect();
    assert_eq!(
        names(&paths),
        [
            "X.TFRecord",
            "Y.TFRECORD.GZ",
            "test.records.gz",
            "train.record",
            "val.tfrecord"
        ]
    );
    let compressions: Vec<Compression> = files.iter().map(|f| f.compression).collect();
    assert_eq!(
        compressions,
        [
            Compression::None,
            Compression::Gzip,
            Compression::Gzip,
            Compression::None,
            Compression::None
        ]
    );
    // Named for the caller to report; what is never data is not.
    assert_eq!(names(&left_out), ["dataset_info.json", "train.bin"]);
    // `resolve` gives the same files.
    let resolved = Sources::new().input(dir.path()).resolve().expect("lists");
    assert_eq!(resolved, files);
}

#[test]
fn a_directory_with_part_files_stands_for_them_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    touch(
        dir.path(),
        &[
            "part-00001",
            "part-00000",
            "_SUCCESS",
            "part-00000.crc",
            "notes.txt",
        ],
    );
    let files = expand_path(dir.path()).expect("lists");
    assert_eq!(names(&files), ["part-00000", "part-00001"]);
}

#[test]
fn a_directory_without_record_files_is_an_error_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    touch(dir.path(), &["_SUCCESS", "notes.txt", ".hidden.tfrecord"]);
    let err = expand_path(dir.path()).expect_err("no record files");
    assert!(matches!(err, Error::NoFiles { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains(&*dir.path().to_string_lossy()), "{msg}");
    assert!(msg.contains("1 other file left out: notes.txt;"), "{msg}");
}

#[test]
fn an_incomplete_shard_set_names_the_missing_shard() {
    let dir = tempfile::tempdir().expect("tempdir");
    touch(
        dir.path(),
        &[
            "t-00000-of-00004.gz",
            "t-00001-of-00004.gz",
            "t-00003-of-00004.gz",
        ],
    );
    let err = expand_path(dir.path()).expect_err("incomplete");
    match &err {
        Error::MissingShards {
            missing,
            expected,
            found,
        } => {
            assert_eq!(*missing, dir.path().join("t-00002-of-00004.gz"));
            assert_eq!((*expected, *found), (4, 3));
        }
        other => panic!("{other:?}"),
    }
    let files = Sources::new()
        .allow_missing_shards(true)
        .input(dir.path())
        .resolve()
        .expect("allowed");
    assert_eq!(files.len(), 3);
}

/// A set whose shards do not share a suffix: the shard "missing" under one suffix is there
/// under the other, and the error names that file rather than a path that does not exist.
#[test]
fn a_shard_under_another_suffix_is_named_as_the_file_that_is_there() {
    let dir = tempfile::tempdir().expect("tempdir");
    touch(
        dir.path(),
        &[
            "train-00000-of-00002.tfrecord",
            "train-00001-of-00002.tfrecord.gz",
        ],
    );
    let err = expand_path(dir.path()).expect_err("mixed suffixes");
    match &err {
        Error::MixedSuffixes {
            set,
            index,
            count,
            other,
        } => {
            assert_eq!(*set, dir.path().join("train-*-of-00002.tfrecord"));
            assert_eq!((*index, *count), (1, 2));
            assert_eq!(*other, dir.path().join("train-00001-of-00002.tfrecord.gz"));
            assert!(other.exists());
        }
        other => panic!("{other:?}"),
    }
    let text = err.to_string();
    assert!(
        text.contains("shard 1 of 2 of `")
            && text.contains("train-*-of-00002.tfrecord` is missing")
            && text.contains("train-00001-of-00002.tfrecord.gz` has another suffix"),
        "{text}"
    );
}

/// Two complete sets of one name with different shard counts are two versions of the data:
/// read as one directory they would be mixed, so the listing names both instead. Sets of other
/// names beside them are fine, and a pattern reads one set.
/// One set written twice, plain and compressed, would be read twice: an error naming both,
/// as for two shard counts.
#[test]
fn one_set_under_two_suffixes_is_an_error_naming_both() {
    let dir = tempfile::tempdir().expect("tempdir");
    touch(
        dir.path(),
        &[
            "train-00000-of-00002.tfrecord",
            "train-00001-of-00002.tfrecord",
            "train-00000-of-00002.tfrecord.gz",
            "train-00001-of-00002.tfrecord.gz",
        ],
    );
    match expand_path(dir.path()).expect_err("one set twice") {
        Error::ShardSets { first, second } => {
            assert_eq!(first, dir.path().join("train-*-of-00002.tfrecord"));
            assert_eq!(second, dir.path().join("train-*-of-00002.tfrecord.gz"));
        }
        other => panic!("{other:?}"),
    }
    let gz = expand_path(dir.path().join("*.gz")).expect("a pattern reads one");
    assert_eq!(gz.len(), 2);
}

/// `part-*` files beside other record files: neither kind is left out silently.
#[test]
fn part_files_beside_other_record_files_are_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    touch(
        dir.path(),
        &[
            "part-00000",
            "train-00000-of-00001.tfrecord",
            "big.tfrecord",
            "_SUCCESS",
        ],
    );
    let err = expand_path(dir.path()).expect_err("two kinds");
    match &err {
        Error::MixedKinds {
            dir: d,
            part,
            record,
        } => {
            assert_eq!(d, dir.path());
            assert_eq!(*part, dir.path().join("part-00000"));
            assert_eq!(*record, dir.path().join("big.tfrecord"));
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("part-*"), "{err}");
    assert_eq!(
        expand_path(dir.path().join("part-*")).expect("parts").len(),
        1
    );
    assert_eq!(
        expand_path(dir.path().join("*.tfrecord"))
            .expect("records")
            .len(),
        2
    );
    // Spark's and OneFlow's own files beside the parts are not record files.
    let spark = tempfile::tempdir().expect("tempdir");
    touch(
        spark.path(),
        &["part-00000", "part-00001", "_SUCCESS", ".part-00000.crc"],
    );
    assert_eq!(expand_path(spark.path()).expect("parts").len(), 2);
}

#[test]
fn two_shard_sets_of_one_name_are_an_error_naming_both() {
    let dir = tempfile::tempdir().expect("tempdir");
    touch(
        dir.path(),
        &[
            "train-00000-of-00002.tfrecord",
            "train-00001-of-00002.tfrecord",
            "train-00000-of-00003.tfrecord",
            "train-00001-of-00003.tfrecord",
            "train-00002-of-00003.tfrecord",
            "test-00000-of-00001.tfrecord",
        ],
    );
    let err = expand_path(dir.path()).expect_err("two sets");
    match &err {
        Error::ShardSets { first, second } => {
            assert_eq!(*first, dir.path().join("train-*-of-00002.tfrecord"));
            assert_eq!(*second, dir.path().join("train-*-of-00003.tfrecord"));
        }
        other => panic!("{other:?}"),
    }
    let text = err.to_string();
    assert!(
        text.contains("train-*-of-00002.tfrecord") && text.contains("train-*-of-00003.tfrecord"),
        "{text}"
    );
    let one = expand_path(dir.path().join("train-*-of-00003.tfrecord")).expect("one set");
    assert_eq!(one.len(), 3);
    fs::remove_file(dir.path().join("train-00000-of-00003.tfrecord")).expect("removes");
    fs::remove_file(dir.path().join("train-00001-of-00003.tfrecord")).expect("removes");
    fs::remove_file(dir.path().join("train-00002-of-00003.tfrecord")).expect("removes");
    assert_eq!(
        expand_path(dir.path()).expect("one set of each name").len(),
        3
    );
}

#[test]
fn a_glob_lists_its_matches_sorted_and_skips_what_is_not_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    touch(
        dir.path(),
        &[
            "b.tfrecord",
            "a.tfrecord",
            ".c.tfrecord",
            "a.tfrecord.crc",
            "d.json",
        ],
    );
    let sub = dir.path().join("sub");
    fs::create_dir(&sub).expect("mkdir");
    touch(&sub, &["s-0-of-1.tfrecord"]);
    let files = expand_path(dir.path().join("*.tfrecord*")).expect("matches");
    assert_eq!(names(&files), ["a.tfrecord", "b.tfrecord"]);
    // A matched directory stands for its record files.
    let files = expand_path(dir.path().join("s*")).expect("matches");
    assert_eq!(names(&files), ["s-0-of-1.tfrecord"]);
}

#[test]
fn a_glob_that_matches_nothing_or_does_not_parse_is_an_error_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    touch(dir.path(), &["_SUCCESS"]);
    let pattern = dir.path().join("*.tfrecord");
    let err = expand_path(&pattern).expect_err("no match");
    assert!(matches!(err, Error::NoFiles { .. }), "{err:?}");
    assert!(err.to_string().contains(&*pattern.to_string_lossy()));
    let err = expand_path(dir.path().join("[z-a*")).expect_err("bad pattern");
    assert!(matches!(err, Error::Pattern { .. }), "{err:?}");
}

#[test]
fn a_missing_file_is_an_error_naming_it_and_a_file_is_itself() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("absent.tfrecord");
    let err = expand_path(&missing).expect_err("missing");
    assert!(err.to_string().contains("absent.tfrecord"), "{err}");
    touch(dir.path(), &["_odd_name"]);
    let odd = dir.path().join("_odd_name");
    assert_eq!(expand_path(&odd).expect("a file"), [odd]);
}

/// A symbolic link named as data that points at nothing is an error naming it, in a directory
/// and through a glob; links to files count as the files, and a broken link with another name
/// is passed over like any other non-data file.
#[cfg(unix)]
#[test]
fn a_broken_link_named_as_data_is_an_error_not_a_missing_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    touch(dir.path(), &["a.tfrecord"]);
    std::os::unix::fs::symlink(dir.path().join("a.tfrecord"), dir.path().join("c.tfrecord"))
        .expect("symlink");
    std::os::unix::fs::symlink("/nonexistent/notes", dir.path().join("notes.txt")).expect("link");
    assert_eq!(
        names(&expand_path(dir.path()).expect("lists")),
        ["a.tfrecord", "c.tfrecord"]
    );

    std::os::unix::fs::symlink("/nonexistent/b.tfrecord", dir.path().join("b.tfrecord"))
        .expect("symlink");
    for input in [dir.path().to_path_buf(), dir.path().join("*")] {
        let err = expand_path(&input).expect_err("a broken link");
        let text = err.to_string();
        assert!(
            text.contains("b.tfrecord") && text.contains("symbolic link"),
            "{text}"
        );
    }
}

#[test]
fn inputs_keep_their_order_and_each_has_its_format_and_compression() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_labels(&dir.path().join("b.tfrecord.gz"), 1, 2);
    write_labels(&dir.path().join("a.tfrecord"), 0, 3);
    let of = dir.path().join("of");
    fs::create_dir(&of).expect("mkdir");
    let opts = WriterOptions::new().format(Format::OfRecord);
    let mut w = RecordWriter::create(of.join("part-00000"), opts).expect("creates");
    w.write(b"2:0").expect("writes");
    w.finish().expect("finishes");

    let sources = Sources::new()
        .input(dir.path().join("*.gz"))
        .input(dir.path().join("a.tfrecord"))
        .format(Format::OfRecord)
        .input(&of);
    let files = sources.resolve().expect("lists");
    let formats: Vec<_> = files.iter().map(|f| (f.format, f.compression)).collect();
    assert_eq!(
        formats,
        [
            (Format::TfRecord, Compression::Gzip),
            (Format::TfRecord, Compression::None),
            (Format::OfRecord, Compression::None),
        ]
    );
    let ds = Dataset::from_sources(&sources).expect("lists");
    assert_eq!(labels(&ds), ["1:0", "1:1", "0:0", "0:1", "0:2", "2:0"]);
}
